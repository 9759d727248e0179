/* test_util.c — units of the util layer: UTF-8 decoding edge cases, the
 * terminal escaper, JSON escaping of unsafe code points, widths, buffers,
 * number formatting and option parsing, edit distance, .env rules and
 * run ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

static void test_utf8_decode(void **state) {
  (void)state;
  uint32_t cp;
  assert_int_equal(tt_utf8_decode((const unsigned char *)"A", 1, &cp), 1);
  assert_int_equal(cp, 'A');
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xC3\xA9", 2, &cp), 2);
  assert_int_equal(cp, 0xE9);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xF0\x9F\x98\x80", 4, &cp), 4);
  assert_int_equal(cp, 0x1F600);
  /* overlong, surrogate, above U+10FFFF, cut short, stray continuation */
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xC0\xAF", 2, &cp), 0);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xE0\x80\xAF", 3, &cp), 0);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xED\xA0\x80", 3, &cp), 0);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xF4\x90\x80\x80", 4, &cp), 0);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\xE2\x82", 2, &cp), 0);
  assert_int_equal(tt_utf8_decode((const unsigned char *)"\x80", 1, &cp), 0);
  size_t bad = 99;
  assert_true(tt_utf8_valid("caf\xC3\xA9", 5, &bad));
  assert_false(tt_utf8_valid("caf\xC3", 4, &bad));
  assert_int_equal(bad, 3);
  assert_int_equal(tt_utf8_count("a\xC3\xA9\xFF", 4), 3);
  assert_int_equal(tt_utf8_prefix("a\xC3\xA9z", 4, 2), 3);
}

static void test_utf8_sanitize_and_encode(void **state) {
  (void)state;
  tt_buf b = TT_BUF_INIT;
  tt_utf8_sanitize(&b, "a\xFF" "b", 3);
  assert_string_equal(tt_buf_cstr(&b), "a\xEF\xBF\xBD" "b");
  tt_buf_reset(&b);
  tt_utf8_encode(&b, 0x10FFFF);
  tt_utf8_encode(&b, 0x20AC);
  assert_memory_equal(b.data, "\xF4\x8F\xBF\xBF\xE2\x82\xAC", 7);
  tt_buf_free(&b);
}

static char *escaped(const char *s, size_t n, size_t max_chars, size_t *width) {
  tt_buf b = TT_BUF_INIT;
  tt_escape_opts o = {.max_chars = max_chars};
  size_t w = tt_escape_terminal(&b, s, n, &o);
  if (width) *width = w;
  return tt_buf_detach(&b);
}

static void test_escape_terminal(void **state) {
  (void)state;
  size_t w;
  char *s = escaped("a\nb\tc\rd\x1B[2J", 11, 0, &w);
  assert_string_equal(s, "a\\nb\\tc\\rd\\x1B[2J");
  assert_int_equal(w, strlen(s));
  free(s);
  s = escaped("x\0y", 3, 0, NULL);
  assert_string_equal(s, "x\\0y");
  free(s);
  s = escaped("\xC2\x9B" "31m", 5, 0, NULL); /* C1 CSI */
  assert_string_equal(s, "<U+009B>31m");
  free(s);
  s = escaped("Ig\xE2\x80\x8Bnore", 9, 0, NULL); /* zero-width space */
  assert_string_equal(s, "Ig<U+200B>nore");
  free(s);
  s = escaped("\xE2\x80\xAE" "abc", 6, 0, NULL); /* right-to-left override */
  assert_string_equal(s, "<U+202E>abc");
  free(s);
  s = escaped("bad\xFF", 4, 0, NULL);
  assert_string_equal(s, "bad\\xFF");
  free(s);
  /* one variation selector after a base character stays; the rest show */
  s = escaped("\xE2\x9D\xA4\xEF\xB8\x8F\xEF\xB8\x81", 9, 0, NULL);
  assert_string_equal(s, "\xE2\x9D\xA4\xEF\xB8\x8F<U+FE01>");
  free(s);
  /* a zero-width joiner inside an emoji sequence stays */
  s = escaped("\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x92\xBB", 11, 0, NULL);
  assert_string_equal(s, "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x92\xBB");
  free(s);
  s = escaped("abcdefghij", 10, 4, &w);
  assert_string_equal(s, "abcd…[10 chars]");
  assert_int_equal(w, 4 + 1 + strlen("[10 chars]"));
  free(s);
  /* marks wrap each escape */
  tt_buf b = TT_BUF_INIT;
  tt_escape_opts o = {.mark_on = "<", .mark_off = ">"};
  tt_escape_terminal(&b, "a\tb", 3, &o);
  assert_string_equal(tt_buf_cstr(&b), "a<\\t>b");
  tt_buf_free(&b);
}

static void test_display_width(void **state) {
  (void)state;
  assert_int_equal(tt_display_width("abc", 3), 3);
  assert_int_equal(tt_display_width("\xE6\x97\xA5\xE6\x9C\xAC", 6), 4); /* 日本 */
  assert_int_equal(tt_display_width("e\xCC\x81", 3), 1);                 /* e + combining acute */
}

static void test_json_escape_unsafe(void **state) {
  (void)state;
  json_t *v = json_pack("[s, s, s]", "\xE2\x80\xAE" "abc", "caf\xC3\xA9", "\x7F\xC2\x85");
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, v, JSON_COMPACT);
  assert_string_equal(tt_buf_cstr(&b), "[\"\\u202eabc\",\"caf\xC3\xA9\",\"\\u007f\\u0085\"]");
  json_t *back = json_loads(tt_buf_cstr(&b), 0, NULL);
  assert_true(json_equal(v, back));
  json_decref(back);
  json_decref(v);
  /* non-BMP tag character: surrogate pair */
  tt_buf_reset(&b);
  v = json_string("\xF3\xA0\x80\x81");
  tt_json_dump(&b, v, 0);
  assert_string_equal(tt_buf_cstr(&b), "\"\\udb40\\udc01\"");
  json_decref(v);
  /* strings from invalid bytes */
  v = tt_json_stringn("a\xFF", 2);
  assert_string_equal(json_string_value(v), "a\xEF\xBF\xBD");
  json_decref(v);
  v = tt_json_stringn("a\0b", 3);
  assert_int_equal(json_string_length(v), 3);
  json_decref(v);
  tt_buf_free(&b);
}

static void test_buf_and_strings(void **state) {
  (void)state;
  tt_buf b = TT_BUF_INIT;
  assert_string_equal(tt_buf_cstr(&b), "");
  for (int i = 0; i < 10000; i++) tt_buf_putc(&b, 'x');
  assert_int_equal(b.len, 10000);
  tt_buf_reset(&b);
  tt_buf_put_grouped(&b, 1234567);
  tt_buf_putc(&b, ' ');
  tt_buf_put_grouped(&b, -1000);
  tt_buf_putc(&b, ' ');
  tt_buf_put_grouped(&b, 999);
  assert_string_equal(tt_buf_cstr(&b), "1,234,567 -1,000 999");
  tt_buf_reset(&b);
  tt_buf_put_sql_ident(&b, "a\"b");
  tt_buf_put_sql_string(&b, "it's");
  assert_string_equal(tt_buf_cstr(&b), "\"a\"\"b\"'it''s'");
  char *d = tt_buf_detach(&b);
  assert_null(b.data);
  free(d);
  long n;
  double x;
  assert_true(tt_parse_long("42", 1, 100, &n));
  assert_int_equal(n, 42);
  assert_false(tt_parse_long("42x", 1, 100, &n));
  assert_false(tt_parse_long("0", 1, 100, &n));
  assert_false(tt_parse_long("", 1, 100, &n));
  assert_false(tt_parse_long(" 5", 1, 100, &n));
  assert_true(tt_parse_double("0.5", 0, 10, &x));
  assert_false(tt_parse_double("nan", 0, 10, &x));
  assert_true(tt_streq_nocase("Track", "tRACK"));
  assert_false(tt_streq_nocase("Track", "Tracks"));
  assert_true(tt_has_suffix_nocase("chart.PNG", ".png"));
  assert_false(tt_has_suffix_nocase("png", ".png"));
  assert_false(tt_has_suffix_nocase("chart.png.txt", ".png"));
}

static void test_edit_distance(void **state) {
  (void)state;
  assert_int_equal(tt_edit_distance("Name", "Name", 3), 0);
  assert_int_equal(tt_edit_distance("name", "NAME", 3), 0);
  assert_int_equal(tt_edit_distance("Nmae", "Name", 3), 1); /* a swap is one edit */
  assert_int_equal(tt_edit_distance("Nme", "Name", 3), 1);
  assert_int_equal(tt_edit_distance("Milisecond", "Milliseconds", 3), 2);
  assert_int_equal(tt_edit_distance("abcdef", "badcfe", 5), 3);
  assert_int_equal(tt_edit_distance("Quasar", "Name", 2), 3); /* max+1 past the limit */
  assert_int_equal(tt_edit_distance("", "abc", 5), 3);
}

/* The value of key in a .env text (NULL when unset or empty). */
static char *dotenv_value(const char *text, const char *key) {
  tt_dotenv *d = tt_dotenv_parse(text);
  const char *v = tt_config_get(d, key);
  char *copy = v ? tt_xstrdup(v) : NULL;
  tt_dotenv_free(d);
  return copy;
}

static void expect_dotenv(const char *text, const char *key, const char *want) {
  char *got = dotenv_value(text, key);
  if (!want) {
    if (got) fprintf(stderr, "%s: %s is '%s', wanted unset\n", text, key, got);
    assert_null(got);
    return;
  }
  if (!got || strcmp(got, want) != 0) {
    fprintf(stderr, "%s: %s is '%s', wanted '%s'\n", text, key, got ? got : "(unset)", want);
    fail();
  }
  free(got);
}

static void test_dotenv_rules(void **state) {
  (void)state;
  expect_dotenv("TT_T_A=plain\n", "TT_T_A", "plain");
  expect_dotenv("TT_T_A=\"a b\"\n", "TT_T_A", "a b");
  expect_dotenv("TT_T_A='x'\n", "TT_T_A", "x");
  expect_dotenv("TT_T_A='no \\n escapes'\n", "TT_T_A", "no \\n escapes");
  expect_dotenv("TT_T_A=\"line\\nnext \\\"q\\\" \\\\ \\x\"\n", "TT_T_A", "line\nnext \"q\" \\ \\x");
  expect_dotenv("TT_T_A=value # comment\n", "TT_T_A", "value");
  expect_dotenv("TT_T_A=value\t# comment\n", "TT_T_A", "value");
  expect_dotenv("TT_T_A=a#b\n", "TT_T_A", "a#b");
  expect_dotenv("TT_T_A=\"a # not a comment\" # a comment\n", "TT_T_A", "a # not a comment");
  expect_dotenv("TT_T_A='#kept' # dropped\n", "TT_T_A", "#kept");
  expect_dotenv("export TT_T_A=exported\n", "TT_T_A", "exported");
  expect_dotenv("  export\tTT_T_A = spaced  \r\n", "TT_T_A", "spaced");
  expect_dotenv("TT_T_A=\"two\nlines\"\nTT_T_B=after\n", "TT_T_A", "two\nlines");
  expect_dotenv("TT_T_A=\"two\nlines\"\nTT_T_B=after\n", "TT_T_B", "after");
  expect_dotenv("TT_T_A=\"unclosed\nTT_T_B=b\n", "TT_T_A", "\"unclosed");
  expect_dotenv("TT_T_A=\"unclosed\nTT_T_B=b\n", "TT_T_B", "b");
  expect_dotenv("# TT_T_A=commented\n", "TT_T_A", NULL);
  expect_dotenv("TT_T_A=\n", "TT_T_A", NULL);
  expect_dotenv("TT_T_A=\"\"\n", "TT_T_A", NULL);
  expect_dotenv("TT_T_A=first\nTT_T_A=second\n", "TT_T_A", "second");
  expect_dotenv("not an assignment\nTT_T_A=1", "TT_T_A", "1");
  /* the process environment wins */
  setenv("TT_T_ENV", "from env", 1);
  expect_dotenv("TT_T_ENV=from file\n", "TT_T_ENV", "from env");
  unsetenv("TT_T_ENV");
}

/* CLOCK_REALTIME in whole milliseconds, as a run id counts them. */
static long long realtime_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

static void test_run_ids_sort_by_time(void **state) {
  (void)state;
  char *prev = tt_new_run_id();
  assert_int_equal(strlen(prev), 22);
  for (int i = 0; i < 20; i++) {
    /* the clock's next millisecond (what the id encodes): watched, not slept for */
    long long ms0 = realtime_ms();
    while (realtime_ms() <= ms0) {}
    char *id = tt_new_run_id();
    if (strcmp(prev, id) >= 0) {
      fprintf(stderr, "run id %s sorts before the earlier %s\n", id, prev);
      fail();
    }
    free(prev);
    prev = id;
  }
  free(prev);
}

static void test_arena(void **state) {
  (void)state;
  tt_arena *a = tt_arena_new();
  for (int i = 0; i < 1000; i++) {
    char *s = tt_arena_strdup(a, "hello");
    assert_string_equal(s, "hello");
  }
  char *big = tt_arena_alloc(a, 1 << 20); /* bigger than a block */
  memset(big, 1, 1 << 20);
  char *after = tt_arena_memdup(a, "x\0y", 3);
  assert_memory_equal(after, "x\0y", 4);
  tt_arena_free(a);
}

/* FNV-1a: the published test vectors, and a hash continued piece by piece
 * equals the hash of the whole. */
static void test_fnv1a(void **state) {
  (void)state;
  assert_true(tt_fnv1a64(TT_FNV1A64_INIT, "", 0) == 0xcbf29ce484222325ULL);
  assert_true(tt_fnv1a64(TT_FNV1A64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
  assert_true(tt_fnv1a64(TT_FNV1A64_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
  assert_true(tt_fnv1a32(TT_FNV1A32_INIT, "a", 1) == 0xe40c292cu);
  assert_true(tt_fnv1a32(TT_FNV1A32_INIT, "foobar", 6) == 0xbf9cf968u);
  assert_true(tt_fnv1a64(tt_fnv1a64(TT_FNV1A64_INIT, "foo", 3), "bar", 3) ==
              tt_fnv1a64(TT_FNV1A64_INIT, "foobar", 6));
}

static bool loopback(const char *h) { return tt_host_is_loopback(h, strlen(h)); }

static void test_host_is_loopback(void **state) {
  (void)state;
  assert_true(loopback("localhost"));
  assert_true(loopback("LocalHost"));
  assert_true(loopback("127.0.0.1"));
  assert_true(loopback("127.1.2.254"));
  assert_true(loopback("::1"));
  assert_true(loopback("[::1]"));
  assert_false(loopback(""));
  assert_false(loopback("0.0.0.0"));
  assert_false(loopback("127.0.0.1.evil.example"));
  assert_false(loopback("127.evil.example"));
  assert_false(loopback("127.0.0"));
  assert_false(loopback("127.0.0.1234"));
  assert_false(loopback("localhost.example"));
  assert_false(loopback("example.com"));
  assert_true(tt_host_is_loopback("localhost:8080", 9)); /* n bytes only */
}

static void (*g_strlen_fn)(void);
static void (*g_missing_fn)(void);

/* The loader: a library that is there (libc), one that is not, and a
 * symbol the library lacks. */
static void test_dl_load(void **state) {
  (void)state;
  char why[200];
  static const char *const libc[] = {"libc.so.6", NULL};
  tt_dl_sym ok[] = {{"strlen", &g_strlen_fn}};
  assert_int_equal(tt_dl_load(libc, "", ok, 1, why, sizeof why), TT_DL_OK);
  assert_non_null(g_strlen_fn);
  static const char *const none[] = {"libtabletalk-no-such.so.9", "libtabletalk-no-such.so", NULL};
  assert_int_equal(tt_dl_load(none, NULL, ok, 1, why, sizeof why), TT_DL_NO_LIBRARY);
  assert_non_null(strstr(why, "libtabletalk-no-such"));
  tt_dl_sym missing[] = {{"strlen", &g_strlen_fn}, {"no_such_function", &g_missing_fn}};
  assert_int_equal(tt_dl_load(libc, "tt_", missing, 2, why, sizeof why), TT_DL_NO_SYMBOL);
  assert_string_equal(why, "tt_strlen");
  assert_null(g_missing_fn);
}

/* ---- numbers without printf ------------------------------------------- */

/* A 64-bit generator with a fixed seed (splitmix64): the same values on
 * every run. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static size_t g_real_checked;

static void check_real(double v) {
  char want[64], got[TT_FMT_REAL_MAX];
  snprintf(want, sizeof want, "%.15g", v);
  size_t n = tt_fmt_real15(got, v);
  if (strcmp(want, got) != 0 || n != strlen(want))
    fail_msg("%.17g (bits %a): printf wrote %s, tt_fmt_real15 %s", v, v, want, got);
  g_real_checked++;
}

static double from_bits(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* Reals as exports write them: byte for byte what printf's %.15g writes,
 * over random bit patterns, random values of every binary exponent, decimal
 * fractions (prices, ratios), integers, exact ties at the 16th digit and the
 * neighbours of every power of ten. */
static void test_real_text_matches_printf(void **state) {
  (void)state;
  uint64_t rng = 20261204;
  for (int i = 0; i < 300000; i++) check_real(from_bits(next_random(&rng))); /* any double */
  for (int i = 0; i < 600000; i++) { /* every exponent of the fast path and around it */
    uint64_t r = next_random(&rng);
    int e = (int)(r % 100) - 30; /* 2^-30 .. 2^69 */
    uint64_t bits = (uint64_t)(e + 1023) << 52 | (next_random(&rng) & ((1ULL << 52) - 1));
    check_real(from_bits(bits | (r >> 63) << 63));
  }
  for (int i = 0; i < 300000; i++) { /* decimal fractions k / 10^j */
    uint64_t r = next_random(&rng);
    int64_t k = (int64_t)(r % 2000000001ULL) - 1000000000;
    check_real((double)k / pow(10, (double)(next_random(&rng) % 12)));
    check_real((double)k / 7.0);
  }
  for (int64_t k = -2000; k <= 2000; k++) { /* integers and halves */
    check_real((double)k);
    check_real((double)k + 0.5);
    check_real((double)k * 0.01);
  }
  /* exact ties at the 16th significant digit: half to even, both ways */
  for (uint64_t n = 1000000000000000ULL; n < 1000000000000000ULL + 200; n++) check_real((double)n);
  for (uint64_t n = 9007199254740000ULL; n < 9007199254740993ULL; n += 7) check_real((double)n);
  for (int k = 0; k < 64; k++) {
    check_real(ldexp(1.0, k));
    check_real(ldexp(1.0, k) - 1);
    check_real(-ldexp(1.0, -k));
  }
  for (int p = -30; p <= 30; p++) { /* powers of ten and their neighbours */
    double v = pow(10, p);
    double lo = v, hi = v;
    for (int k = 0; k < 40; k++) {
      check_real(lo);
      check_real(hi);
      check_real(lo * 0.999999999999999);
      check_real(hi * 1.00000000000001);
      lo = nextafter(lo, 0);
      hi = nextafter(hi, INFINITY);
    }
  }
  const double special[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.5, 123456789012345.6,
                            999999999999999.4, 999999999999999.5, 99999999999999.95, 0.000099999999999999995,
                            0.0001, 0.00001, 1e15, 1e16, 1e-5, 1.5e300, DBL_MAX, DBL_MIN, DBL_TRUE_MIN,
                            4.9e-324, 2.5e-310, INFINITY, -INFINITY, 18446744073709551615.0,
                            9223372036854775807.0, 1.1920928955078125e-07, 1.1920928955078124e-07};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
    check_real(special[i]);
    check_real(-special[i]);
  }
  assert_true(g_real_checked > 1500000);
}

static void check_int(int64_t v) {
  char want[32], got[TT_FMT_INT_MAX];
  snprintf(want, sizeof want, "%lld", (long long)v);
  size_t n = tt_fmt_int(got, v);
  assert_string_equal(got, want);
  assert_int_equal(n, strlen(want));
}

static void test_int_text_matches_printf(void **state) {
  (void)state;
  const int64_t edge[] = {0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, INT64_MAX, INT64_MIN,
                          INT64_MAX - 1, INT64_MIN + 1, 4294967295LL, -4294967296LL};
  for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) check_int(edge[i]);
  int64_t p = 1;
  for (int k = 0; k < 19; k++) {
    check_int(p);
    check_int(p - 1);
    check_int(-p);
    check_int(-p + 1);
    if (k < 18) p *= 10;
  }
  uint64_t rng = 7;
  for (int i = 0; i < 200000; i++) {
    uint64_t r = next_random(&rng);
    check_int((int64_t)r);
    check_int((int64_t)(r >> (r % 64)));
  }
}

/* Numbers read back from a server's text: the fast paths give strtoll's
 * and strtod's very values (bit for bit), and refuse what they cannot read
 * exactly, which the caller then hands to strtod. */
static size_t g_parsed_fast;

static void check_parse_real(const char *s) {
  double want = strtod(s, NULL), got = 12345.0;
  if (!tt_parse_real_plain(s, strlen(s), &got)) return;
  if (memcmp(&want, &got, sizeof want) != 0)
    fail_msg("%s: strtod read %a, tt_parse_real_plain %a", s, want, got);
  g_parsed_fast++;
}

static void test_number_text_reads_back(void **state) {
  (void)state;
  int64_t i;
  double d;
  const char *ints[] = {"0", "-1", "42", "9223372036854775807", "-9223372036854775808", "-0",
                        "1000000"};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    assert_true(tt_parse_int(ints[k], strlen(ints[k]), &i));
    assert_int_equal(i, strtoll(ints[k], NULL, 10));
  }
  const char *not_ints[] = {"", "-", "+1", " 1", "1x", "9223372036854775808",
                            "-9223372036854775809", "12345678901234567890"};
  for (size_t k = 0; k < sizeof not_ints / sizeof not_ints[0]; k++)
    assert_false(tt_parse_int(not_ints[k], strlen(not_ints[k]), &i));
  const char *not_plain[] = {"", "-", ".", "1e5", "NaN", "Infinity", "-Infinity", "1.2.3",
                             "1234567890123456", "0.1234567890123456", " 1", "+1"};
  for (size_t k = 0; k < sizeof not_plain / sizeof not_plain[0]; k++)
    assert_false(tt_parse_real_plain(not_plain[k], strlen(not_plain[k]), &d));
  assert_true(tt_parse_real_plain("-0", 2, &d));
  assert_true(d == 0 && signbit(d));
  assert_true(tt_parse_real_plain("000123.4500", 11, &d));
  assert_true(d == 123.45);
  uint64_t rng = 99;
  char t[64];
  for (int k = 0; k < 300000; k++) { /* what a server writes: shortest forms and %.15g */
    int e = (int)(next_random(&rng) % 40) - 20;
    double v = (double)((int64_t)(next_random(&rng) % 2000000000000001ULL) - 1000000000000000LL) *
        pow(10, e);
    snprintf(t, sizeof t, "%.15g", v);
    check_parse_real(t);
    snprintf(t, sizeof t, "%.17g", v);
    check_parse_real(t);
    snprintf(t, sizeof t, "%.*f", (int)(next_random(&rng) % 20), v / 1e6);
    check_parse_real(t);
  }
  assert_true(g_parsed_fast > 300000);
}

/* ---- JSON written without values, against jansson ------------------------ */

static void check_json_string(const char *s, size_t n) {
  tt_buf want = TT_BUF_INIT, got = TT_BUF_INIT;
  json_t *j = tt_json_stringn(s, n);
  tt_json_dump_jansson(&want, j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
  json_decref(j);
  tt_json_put_string(&got, s, n);
  if (want.len != got.len || memcmp(want.data, got.data, want.len) != 0)
    fail_msg("string of %zu bytes: jansson wrote %s, tt_json_put_string %s", n, want.data, got.data);
  tt_buf_free(&want);
  tt_buf_free(&got);
}

/* Exports write JSON strings straight into the output: the same bytes as
 * jansson's dump followed by the unsafe-character pass, for every byte,
 * every escape, every unsafe code point and random mixtures of them with
 * invalid UTF-8. */
static void test_json_strings_match_jansson(void **state) {
  (void)state;
  for (int c = 0; c < 256; c++) { /* each byte alone and inside text */
    char one[1] = {(char)c}, mid[5] = {'a', 'b', (char)c, 'c', 'd'};
    check_json_string(one, 1);
    check_json_string(mid, 5);
  }
  check_json_string("", 0);
  for (uint32_t cp = 0x80; cp < 0x30000; cp += (cp < 0x3000 ? 1 : cp < 0x20000 ? 7 : 61)) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    tt_buf b = TT_BUF_INIT;
    tt_buf_puts(&b, "x");
    tt_utf8_encode(&b, cp);
    tt_buf_puts(&b, "y");
    check_json_string(b.data, b.len);
    tt_buf_free(&b);
  }
  /* random mixtures: ASCII, escapes, accents, unsafe code points, emoji, bad bytes */
  static const char *const pieces[] = {"a", "Zürich", "\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f",
                                       "\xc2\x85", "\xe2\x80\x8b", "\xe2\x80\xae", "\xef\xbb\xbf",
                                       "\xf0\x9f\x98\x80", "\xf3\xa0\x80\x81", "\xff", "\xc0\xaf",
                                       "\xed\xa0\x80", "\xe2\x82", " ", "/", "日本"};
  uint64_t rng = 99;
  for (int i = 0; i < 20000; i++) {
    tt_buf b = TT_BUF_INIT;
    int len = (int)(next_random(&rng) % 12);
    for (int k = 0; k < len; k++)
      tt_buf_puts(&b, pieces[next_random(&rng) % (sizeof pieces / sizeof pieces[0])]);
    check_json_string(b.data ? b.data : "", b.len);
    tt_buf_free(&b);
  }
}

static void check_json_real(double v) {
  tt_buf want = TT_BUF_INIT, got = TT_BUF_INIT;
  json_t *j = json_real(v);
  tt_json_dump_jansson(&want, j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
  json_decref(j);
  tt_json_put_real(&got, v);
  if (strcmp(tt_buf_cstr(&want), tt_buf_cstr(&got)) != 0)
    fail_msg("%.17g: jansson wrote %s, tt_json_put_real %s", v, want.data, got.data);
  tt_buf_free(&want);
  tt_buf_free(&got);
}

static void test_json_reals_match_jansson(void **state) {
  (void)state;
  uint64_t rng = 5;
  for (int i = 0; i < 100000; i++) {
    double v = from_bits(next_random(&rng));
    if (isfinite(v)) check_json_real(v);
    uint64_t r = next_random(&rng);
    check_json_real((double)(int64_t)(r % 2000001) / pow(10, (double)(r % 25)) * ((r >> 63) ? -1 : 1));
  }
  const double special[] = {0.0, -0.0, 1.0, 1e15, 1e16, 1e-5, 1e-4, 1.5e300, 1e100, 1e-100, 123.0,
                            1e21, 2.5e-310, DBL_MAX, DBL_TRUE_MIN, 0.1 + 0.2, 100000.0, 1e-7};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
    check_json_real(special[i]);
    check_json_real(-special[i]);
  }
}

/* A random tree of every kind of value: nested arrays and objects, keys
 * and strings of the pieces above (escapes, unsafe code points), integers
 * at the edges, reals of every magnitude. */
static json_t *random_json(uint64_t *rng, int depth) {
  static const char *const pieces[] = {"a", "Zürich", "\"", "\\", "\n", "\x01", "\x7f",
                                       "\xc2\x85", "\xe2\x80\xae", "\xf0\x9f\x98\x80", "/", "日本",
                                       "key", ""};
  uint64_t r = next_random(rng);
  switch (depth > 4 ? r % 6 : r % 8) {
  case 0: return json_null();
  case 1: return json_boolean(r & 8);
  case 2: {
    static const json_int_t edges[] = {0, -1, 1, INT64_MAX, INT64_MIN, 1297, -1000000007};
    return json_integer((r >> 8) & 1 ? (json_int_t)(r >> 9) - (json_int_t)(1ULL << 53)
                                     : edges[(r >> 9) % 7]);
  }
  case 3: {
    double v = from_bits(next_random(rng));
    return json_real(isfinite(v) ? v : (double)(r % 1000) / 7.0);
  }
  case 4:
  case 5: {
    tt_buf b = TT_BUF_INIT;
    for (uint64_t k = 0; k < (r >> 8) % 6; k++)
      tt_buf_puts(&b, pieces[next_random(rng) % (sizeof pieces / sizeof pieces[0])]);
    json_t *v = tt_json_stringn(b.data ? b.data : "", b.len);
    tt_buf_free(&b);
    return v;
  }
  case 6: {
    json_t *a = json_array();
    for (uint64_t k = 0; k < (r >> 8) % 5; k++) json_array_append_new(a, random_json(rng, depth + 1));
    return a;
  }
  default: {
    json_t *o = json_object();
    for (uint64_t k = 0; k < (r >> 8) % 5; k++) {
      char key[64];
      snprintf(key, sizeof key, "%s%u", pieces[next_random(rng) % (sizeof pieces / sizeof pieces[0])],
               (unsigned)(next_random(rng) % 50));
      json_object_set_new(o, key, random_json(rng, depth + 1));
    }
    return o;
  }
  }
}

/* tt_json_dump writes the compact form itself: byte for byte what jansson's
 * dump and the unsafe pass give, for random trees (and through jansson for
 * every other form). */
static void test_json_dump_matches_jansson(void **state) {
  (void)state;
  uint64_t rng = 17;
  const size_t forms[] = {JSON_COMPACT | JSON_REAL_PRECISION(15),
                          JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15), JSON_COMPACT,
                          JSON_INDENT(2), 0};
  for (int i = 0; i < 20000; i++) {
    json_t *j = random_json(&rng, 0);
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
      tt_buf want = TT_BUF_INIT, got = TT_BUF_INIT;
      tt_json_dump_jansson(&want, j, forms[f]);
      tt_json_dump(&got, j, forms[f]);
      if (strcmp(tt_buf_cstr(&want), tt_buf_cstr(&got)) != 0)
        fail_msg("flags %zx: jansson wrote %s, tt_json_dump %s", forms[f], want.data, got.data);
      tt_buf_free(&want);
      tt_buf_free(&got);
    }
    json_decref(j);
  }
  /* a tree nested deeper than the writer goes: jansson's text all the same */
  json_t *deep = json_array(), *at = deep;
  for (int i = 0; i < 600; i++) {
    json_t *inner = json_array();
    json_array_append_new(at, inner);
    at = inner;
  }
  tt_buf want = TT_BUF_INIT, got = TT_BUF_INIT;
  tt_json_dump_jansson(&want, deep, JSON_COMPACT | JSON_REAL_PRECISION(15));
  tt_json_dump(&got, deep, JSON_COMPACT | JSON_REAL_PRECISION(15));
  assert_string_equal(tt_buf_cstr(&want), tt_buf_cstr(&got));
  json_decref(deep);
  tt_buf_free(&want);
  tt_buf_free(&got);
}

int main(void) {
  setlocale(LC_CTYPE, "C.UTF-8");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_decode),
      cmocka_unit_test(test_utf8_sanitize_and_encode),
      cmocka_unit_test(test_escape_terminal),
      cmocka_unit_test(test_display_width),
      cmocka_unit_test(test_json_escape_unsafe),
      cmocka_unit_test(test_buf_and_strings),
      cmocka_unit_test(test_real_text_matches_printf),
      cmocka_unit_test(test_number_text_reads_back),
      cmocka_unit_test(test_int_text_matches_printf),
      cmocka_unit_test(test_json_strings_match_jansson),
      cmocka_unit_test(test_json_reals_match_jansson),
      cmocka_unit_test(test_json_dump_matches_jansson),
      cmocka_unit_test(test_arena),
      cmocka_unit_test(test_edit_distance),
      cmocka_unit_test(test_dotenv_rules),
      cmocka_unit_test(test_run_ids_sort_by_time),
      cmocka_unit_test(test_fnv1a),
      cmocka_unit_test(test_host_is_loopback),
      cmocka_unit_test(test_dl_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
