-- Cells that exercise every export path: control, invisible and bidi
-- characters, invalid UTF-8, quotes, separators, blobs, NULL, integer
-- limits and reals of every magnitude (tests/integration/export_golden.py).
SELECT 'plain' AS label, 'a,b' AS text, 1 AS int, 1.5 AS real, NULL AS empty, x'' AS blob
UNION ALL SELECT 'quotes', 'say "hi"', -1, -0.0, NULL, x'00ff'
UNION ALL SELECT 'spaces', ' lead and trail ', 0, 0.0, NULL, x'0a0bff'
UNION ALL SELECT 'separators', 'tab	in, new
line and \ backslash' || char(13) || 'cr', 9223372036854775807, 1e15, NULL, x'5c22'
UNION ALL SELECT 'c0 controls', char(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31), -9223372036854775808, 1e16, NULL, NULL
UNION ALL SELECT 'del and c1', char(127,128,133,150,159,160), 10, 123456789012345.6, NULL, NULL
UNION ALL SELECT 'invisible', char(0x200B,0x200D,0x2028,0x2029,0x202E,0x2066,0xFEFF,0xAD,0x34F,0x61C,0x180E), 100, 0.1 + 0.2, NULL, NULL
UNION ALL SELECT 'emoji', char(0x1F600,0x1F469,0x200D,0x1F4BB,0x2764,0xFE0F,0xFE0E,0xE0001,0xE0041,0x1D173), 1000, 1e-5, NULL, NULL
UNION ALL SELECT 'wide', '日本語 Zürich São Paulo Ωμέγα', 123456789, 1.5e300, NULL, NULL
UNION ALL SELECT 'invalid utf-8', CAST(x'ff80c0afeda080f4908080e282' AS TEXT), -123456789, 4.9e-324, NULL, NULL
UNION ALL SELECT 'nul inside', CAST(x'610062' AS TEXT), 2147483648, 1e999, NULL, NULL
UNION ALL SELECT 'looks like numbers', '00123', -2147483649, -1e999, NULL, NULL
UNION ALL SELECT 'empty', '', 7, 2.5e-310, NULL, NULL
UNION ALL SELECT 'markup', '<b>|pipe|</b> `code` *star* [x](y)', 42, 1e-300, NULL, NULL
UNION ALL SELECT 'json-ish', '{"a":[1,2]} /slash/ \u0041', 43, 1e100, NULL, NULL
UNION ALL
SELECT * FROM (
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
  SELECT 'n' || i, CASE i % 3 WHEN 0 THEN 'row ' || i WHEN 1 THEN NULL ELSE printf('%d,%d', i, -i) END,
         (i * 2654435761) % 4294967311 - 2147483648,
         CASE i % 16
           WHEN 0 THEN i / 7.0 WHEN 1 THEN -i / 3.0 WHEN 2 THEN i * 0.01 WHEN 3 THEN i * 1e-7
           WHEN 4 THEN i * 1e13 WHEN 5 THEN i * 123456789.123 WHEN 6 THEN 1.0 / i WHEN 7 THEN pow(10, i % 40 - 20)
           WHEN 8 THEN pow(2, i % 120 - 60) WHEN 9 THEN i + 0.5 WHEN 10 THEN 999999999999999.0 + i
           WHEN 11 THEN pow(10, i % 30) * 0.999999999999999 WHEN 12 THEN sqrt(i) * 1e-4
           WHEN 13 THEN -pow(i, 7) / 3.0 WHEN 14 THEN exp(i % 50 - 25) ELSE i * 1.0 END,
         CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1.25 END,
         CASE WHEN i % 9 = 0 THEN zeroblob(i % 4) WHEN i % 9 = 1 THEN x'deadbeef' ELSE NULL END
  FROM n)
