#!/bin/sh
# make_big_csv.sh — writes a CSV file of about SIZE_MB megabytes (default
# 1024) for measuring how long tabletalk takes to load a large CSV file and
# how much memory it holds: an integer id, quoted text with commas and
# accented letters, a date, an integer, a real and a leading-zero code.
# Usage: bench/csv/make_big_csv.sh OUT.csv [SIZE_MB]
set -eu
out=${1:?usage: make_big_csv.sh OUT.csv [SIZE_MB]}
mb=${2:-1024}
# one row is about 80 bytes
rows=$((mb * 1024 * 1024 / 80))
awk -v rows="$rows" 'BEGIN {
  srand(42)
  split("José Peña|Zoë Müller|Ana Muñoz|Li Wei|Ünal Yıldız|Chloé Durand|Bob Smith|Mary Jones", names, "|")
  split("Zürich, CH|Málaga, ES|Köln, DE|Paris, FR|Boston, US|Łódź, PL", cities, "|")
  print "id,name,city,day,qty,amount,code,note"
  for (i = 1; i <= rows; i++) {
    n = names[int(rand() * 8) + 1]; c = cities[int(rand() * 6) + 1]
    printf "%d,%s,\"%s\",2024-%02d-%02d,%d,%.2f,%05d,\"said \"\"ok\"\" at %d\"\n",
      i, n, c, int(rand() * 12) + 1, int(rand() * 28) + 1, int(rand() * 100),
      rand() * 10000, int(rand() * 99999), i % 1000
  }
}' > "$out"
