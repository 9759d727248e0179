#!/usr/bin/env bash
# pg_cli.sh BIN — tabletalk sql and schema on a PostgreSQL URI, against the
# server whose URI the pg_server fixture writes to $TT_PG_URI_FILE (chinook
# loaded): a count, JSON of the same shape as SQLite's, a write refused
# (exit 3) with the data unchanged, the time limit (exit 4), a million rows
# cut at --max-rows in bounded memory, the schema with keys and row
# estimates, and no password in any message or in the process title. Exit
# 77 (skipped) without a server URI.
set -u
BIN=$1
. "$(dirname "$0")/../support/pg_test.sh"
export NO_COLOR=1

out=$("$BIN" sql --format csv "$URI" 'SELECT count(*) FROM "Track"') || bad "count failed"
[ "$(printf '%s\n' "$out" | tail -n1 | tr -d "\r")" = 3503 ] || bad "count of Track: $out"

# --format json: the same keys, in the same order, as for a SQLite file
pg_keys=$("$BIN" sql --format json "$URI" 'SELECT "Name" FROM "Track" ORDER BY "TrackId" LIMIT 2' |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(list(d) if isinstance(d,dict) else type(d).__name__, d if not isinstance(d,dict) else d.get("rows", d))')
lite_keys=$("$BIN" sql --format json "${TT_CHINOOK}" 'SELECT "Name" FROM "Track" ORDER BY "TrackId" LIMIT 2' |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(list(d) if isinstance(d,dict) else type(d).__name__, d if not isinstance(d,dict) else d.get("rows", d))')
[ "$pg_keys" = "$lite_keys" ] || bad "json differs: pg $pg_keys / sqlite $lite_keys"

# a write is refused (exit 3) and changes nothing
"$BIN" sql "$URI" 'DELETE FROM "Track"' >"$work/out" 2>"$work/err"
rc=$?
[ $rc = 3 ] || bad "DELETE: exit $rc, want 3 ($(cat "$work/err"))"
grep -q "not allowed" "$work/err" || bad "DELETE: no refusal message: $(cat "$work/err")"
out=$("$BIN" sql --format csv "$URI" 'SELECT count(*) FROM "Track"')
[ "$(printf '%s\n' "$out" | tail -n1 | tr -d "\r")" = 3503 ] || bad "Track changed after the refused DELETE: $out"

# the time limit: exit 4 within a second or two
start=$(date +%s%N)
"$BIN" sql --timeout 1 "$URI" 'SELECT count(*) FROM generate_series(1, 2000000000)' >/dev/null 2>"$work/err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 4 ] || bad "slow query: exit $rc, want 4 ($(cat "$work/err"))"
[ $ms -lt 4000 ] || bad "slow query stopped after $ms ms, want about 1000"

# a million rows cut at --max-rows: 10 rows, and memory bounded
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f %M -o "$work/rss" "$BIN" sql --max-rows 10 "$URI" \
    'SELECT g FROM generate_series(1, 1000000) g' >"$work/out" 2>"$work/err" || bad "max-rows run failed"
  rss=$(tail -n1 "$work/rss")
  # the sanitizer build's quarantine keeps freed rows for a while: no cap there
  [ "${TT_SANITIZED:-0}" = 1 ] || [ "$rss" -lt 65536 ] || bad "1,000,000 rows with --max-rows 10 used $rss KiB"
else
  "$BIN" sql --max-rows 10 "$URI" 'SELECT g FROM generate_series(1, 1000000) g' >"$work/out" 2>"$work/err" ||
    bad "max-rows run failed"
fi
grep -q "more rows exist" "$work/out" || bad "no cut announced: $(tail -n2 "$work/out")"
[ "$(grep -cE '^ +[0-9]+$' "$work/out")" = 10 ] || bad "not 10 rows: $(cat "$work/out")"

# the schema: 11 tables, keys, row estimates
"$BIN" schema "$URI" >"$work/schema" 2>"$work/err" || bad "schema failed: $(cat "$work/err")"
[ "$(grep -c '^# Table' "$work/schema")" = 11 ] || bad "schema: not 11 tables"
grep -q '^# Table: Track (~3503 rows)' "$work/schema" || bad "schema: no row estimate for Track"
grep -q 'TrackId: integer, primary key' "$work/schema" || bad "schema: no primary key"
grep -q 'references Album.AlbumId' "$work/schema" || bad "schema: no foreign key"
kind=$("$BIN" schema "$URI" --json | python3 -c 'import json,sys; print({t["name"]: t["row_count_kind"] for t in json.load(sys.stdin)["tables"]}["Track"])')
[ "$kind" = estimate ] || bad "schema --json: Track's row_count_kind is '$kind', want estimate (reltuples)"

# no password in a failed connection's message
case $URI in
  *\?*) badpw="$URI&dbname=tt_no_such_db&password=Sw0rdFish" ;;
  *) badpw="$URI?dbname=tt_no_such_db&password=Sw0rdFish" ;;
esac
"$BIN" sql "$badpw" 'SELECT 1' >"$work/out" 2>"$work/err"
rc=$?
[ $rc != 0 ] || bad "a missing database connected"
grep -q Sw0rdFish "$work/out" "$work/err" && bad "the password is in the message: $(cat "$work/err")"
grep -q "cannot connect" "$work/err" || bad "no connection error: $(cat "$work/err")"

# no password in the process title (ps, /proc/PID/cmdline) while a query runs
case $URI in *\?*) titleuri="$URI&password=Sw0rdFish" ;; *) titleuri="$URI?password=Sw0rdFish" ;; esac
# (the query runs until killed below: no time limit for a loaded machine to reach)
"$BIN" sql --timeout 3600 "$titleuri" 'SELECT count(*) FROM generate_series(1, 3000000000)' >/dev/null 2>&1 &
title_pid=$!
# the server shows the query once it runs (nothing announces it): a bounded
# poll of pg_stat_activity, whose bound is a failure timeout only
for _ in $(seq 3000); do
  [ "$(psql -X -At -d "$URI" -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%3000000000%' AND pid <> pg_backend_pid()")" = 1 ] && break
  sleep 0.1
done
title=$(tr '\0' ' ' <"/proc/$title_pid/cmdline" 2>/dev/null)
case $title in
  *password=\*\*\**) ;;
  *) bad "process title not read or not redacted: $title" ;;
esac
case $title in *Sw0rdFish*) bad "the password is in the process title: $title" ;; esac
# the server would go on counting for minutes after its client is gone:
# end that backend too, and wait for its end (the timeout argument), so no
# session is left for the tests after this one
kill "$title_pid" 2>/dev/null
wait "$title_pid" 2>/dev/null
psql -X -At -d "$URI" -c "SELECT pg_terminate_backend(pid, 300000) FROM pg_stat_activity WHERE query LIKE '%3000000000%' AND pid <> pg_backend_pid()" >/dev/null

# serve-mcp: the dialect in its descriptions, run_sql on the server, no password
mcp_in='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_sql","arguments":{"sql":"SELECT count(*) FROM \"Track\""}}}'
case $URI in *\?*) pwuri="$URI&password=Sw0rdFish" ;; *) pwuri="$URI?password=Sw0rdFish" ;; esac
printf '%s\n' "$mcp_in" | timeout 60 "$BIN" serve-mcp "$pwuri" --state-dir "$work/mcp" \
  >"$work/mcp.out" 2>"$work/mcp.err"
grep -q 'PostgreSQL dialect' "$work/mcp.out" || bad "serve-mcp: no PostgreSQL dialect: $(head -c 400 "$work/mcp.out") $(cat "$work/mcp.err")"
grep -q '\[\[3503\]\]' "$work/mcp.out" || bad "serve-mcp: run_sql did not count 3503 tracks"
grep -rq Sw0rdFish "$work/mcp.out" "$work/mcp.err" "$work/mcp" && bad "serve-mcp: the password is shown"

# password login as the read-only role of docs/guide/postgresql.md (LOGIN + pg_read_all_data):
# SCRAM-SHA-256 and md5, in the URI, by PGPASSWORD with --db-url, and a
# wrong password: a clear error (exit 1) that never shows the password
for f in "${TT_PG_READER_URI_FILE:-}" "${TT_PG_MD5_URI_FILE:-}"; do
  [ -n "$f" ] && [ -f "$f" ] || { bad "no password-role URI in '$f' (the fixture writes it)"; continue; }
  ruri=$(cat "$f")
  pw=${ruri#postgresql://*:}; pw=${pw%%@*}
  out=$("$BIN" sql --format csv "$ruri" 'SELECT count(*) FROM "Album"' 2>&1) || bad "login by $f failed: $out"
  [ "$(printf '%s\n' "$out" | tail -n1 | tr -d "\r")" = 347 ] || bad "count as the password role: $out"
  # the role can read and nothing more, and the guard refuses first anyway
  "$BIN" sql "$ruri" 'UPDATE "Album" SET "Title" = 1' >/dev/null 2>"$work/err"
  rc=$?
  [ $rc = 3 ] || bad "UPDATE as the read-only role: exit $rc, want 3"
  grep -q "$pw" "$work/err" && bad "the refusal shows the password"
  nopw=${ruri/:$pw@/@}
  out=$(PGPASSWORD=$pw "$BIN" sql --format csv --db-url "$nopw" 'SELECT count(*) FROM "Artist"' 2>&1) ||
    bad "PGPASSWORD with --db-url failed: $out"
  [ "$(printf '%s\n' "$out" | tail -n1 | tr -d "\r")" = 275 ] || bad "count with PGPASSWORD: $out"
  "$BIN" sql "${ruri/:$pw@/:Not-$pw@}" 'SELECT 1' >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc = 1 ] || bad "wrong password: exit $rc, want 1"
  grep -q 'password authentication failed' "$work/err" || bad "wrong password: $(cat "$work/err")"
  grep -q "$pw" "$work/err" "$work/out" && bad "the wrong password's error shows a password"
  grep -q ':\*\*\*@' "$work/err" || bad "the error names the URI without its password: $(cat "$work/err")"
done

exit $fail
