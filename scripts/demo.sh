#!/usr/bin/env bash
# demo.sh BINARY — the README's main-job command: shows what tabletalk sees
# of the sample database and answers a question with a guarded query.
set -euo pipefail
bin=$1
db="$(cd "$(dirname "$0")/.." && pwd)/data/chinook.sqlite"
echo "\$ tabletalk schema data/chinook.sqlite Genre Track"
"$bin" schema "$db" Genre Track
echo
echo "\$ tabletalk sql data/chinook.sqlite \"SELECT g.Name AS genre, count(*) AS tracks ...\""
"$bin" sql "$db" "SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.GenreId ORDER BY tracks DESC LIMIT 3"
echo
echo "\$ tabletalk sql data/chinook.sqlite \"DELETE FROM Track\""
"$bin" sql "$db" "DELETE FROM Track" || echo "(exit $? — refused; the file is unchanged)"
