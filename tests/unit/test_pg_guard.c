/* test_pg_guard.c — the PostgreSQL parse-level guard (src/db/pg/pg_guard.c):
 * every case of tests/fixtures/pg_guard_corpus.tsv gets its expected
 * outcome (ok, refused with the expected reason code, or a syntax or limit
 * error), plus the messages users read, the configured allow-list, input
 * that is not NUL-terminated, the length and nesting limits, and many
 * threads checking at once; the names a query has the server resolve
 * (what the catalog check of pg_trust.c is given), schemas trusted with
 * --trust-functions, and the catalog check's SQL and refusal words. No
 * server is needed: this is the layer before one (test_pg_server and
 * tests/agent/pg_hostile.test.mjs run the check on a server). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pg/pg_guard.h"
#include "db/pg/pg_trust.h"
#include "db/pg/pq_api.h"
#include "testutil.h"

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR "."
#endif

static bool check(const char *sql, tt_error *err) {
  return tt_pg_guard_check(sql, strlen(sql), NULL, err);
}

/* What the guard said, in the corpus's words. */
static void outcome(bool ok, const tt_error *err, char *buf, size_t n) {
  if (ok) snprintf(buf, n, "ok");
  else if (err->kind == TT_ERR_REFUSED)
    snprintf(buf, n, "refused:%s", tt_db_refusal_name(err->reason));
  else snprintf(buf, n, "error:%s", tt_errkind_name(err->kind));
}

static void test_corpus(void **state) {
  (void)state;
  size_t n;
  tu_row *rows = tu_corpus_load(TT_SOURCE_DIR "/tests/fixtures/pg_guard_corpus.tsv", 1u << 2, &n);
  size_t cases = 0, failures = 0, refused = 0, allowed = 0;
  for (size_t i = 0; i < n; i++) {
    tu_row *r = &rows[i];
    if (r->nfields == 0 || r->field[0][0] == '#' || strcmp(r->field[0], "id") == 0) continue;
    assert_int_equal(r->nfields, 5);
    cases++;
    tt_error err;
    memset(&err, 0x55, sizeof err); /* the guard must fill it in */
    bool ok = tt_pg_guard_check(r->field[2], r->len[2], NULL, &err);
    char got[64];
    outcome(ok, &err, got, sizeof got);
    if (strcmp(got, r->field[3]) != 0) {
      failures++;
      fprintf(stderr, "%s (%s): expected %s, got %s: %s\n  sql: %.200s\n", r->field[0],
              r->field[1], r->field[3], got, ok ? "" : err.message, r->field[2]);
      continue;
    }
    if (ok) {
      allowed++;
      assert_int_equal(err.kind, TT_OK);
      assert_int_equal(err.reason, TT_REFUSE_NONE);
    } else {
      refused++;
      /* every refusal says something a user can act on */
      assert_true(strlen(err.message) > 20);
      assert_true(err.kind == TT_ERR_REFUSED || err.reason == TT_REFUSE_NONE);
    }
  }
  fprintf(stderr, "pg guard corpus: %zu cases, %zu allowed, %zu refused or failed, %zu wrong\n",
          cases, allowed, refused, failures);
  assert_true(cases >= 250);
  assert_int_equal(failures, 0);
  tu_corpus_free(rows, n);
}

static void expect_message(const char *sql, tt_db_refusal reason, const char *message) {
  tt_error err;
  assert_false(check(sql, &err));
  assert_int_equal(err.kind, TT_ERR_REFUSED);
  assert_int_equal(err.reason, reason);
  if (!strstr(err.message, message)) fail_msg("%s\n  message: %s\n  wanted: %s", sql, err.message, message);
}

static void test_messages(void **state) {
  (void)state;
  expect_message("DELETE FROM \"Track\" WHERE 1 = 1", TT_REFUSE_WRITE,
                 "writes are not allowed: DELETE on \"Track\"");
  expect_message("INSERT INTO public.\"Genre\" VALUES (1)", TT_REFUSE_WRITE,
                 "writes are not allowed: INSERT into \"public\".\"Genre\"");
  expect_message("WITH x AS (UPDATE \"Album\" SET \"Title\" = '' RETURNING 1) SELECT * FROM x",
                 TT_REFUSE_WRITE, "UPDATE on \"Album\" (a data-modifying WITH query)");
  expect_message("SELECT pg_read_file('/etc/passwd')", TT_REFUSE_FUNCTION,
                 "pg_read_file is not allowed: it reads files on the server");
  expect_message("SELECT pg_catalog.pg_sleep(5)", TT_REFUSE_FUNCTION, "pg_sleep is not allowed");
  expect_message("SELECT * FROM \"Track\" FOR UPDATE", TT_REFUSE_OTHER,
                 "SELECT ... FOR UPDATE takes row locks: remove the FOR UPDATE clause");
  expect_message("SELECT * FROM \"Track\" FOR NO KEY UPDATE", TT_REFUSE_OTHER,
                 "FOR NO KEY UPDATE takes row locks");
  expect_message("SELECT 1 INTO x", TT_REFUSE_WRITE, "SELECT ... INTO creates the table \"x\"");
  expect_message("DROP TABLE \"Track\"", TT_REFUSE_SCHEMA,
                 "schema changes are not allowed: DROP TABLE");
  expect_message("CREATE INDEX i ON t(x)", TT_REFUSE_SCHEMA, "CREATE INDEX");
  expect_message("CREATE TABLE t AS SELECT 1", TT_REFUSE_SCHEMA, "CREATE TABLE AS");
  expect_message("PREPARE TRANSACTION 'x'", TT_REFUSE_TRANSACTION,
                 "transaction control is not allowed (PREPARE TRANSACTION)");
  expect_message("SET statement_timeout = 0", TT_REFUSE_OTHER, "SET is not allowed");
  expect_message("RESET ALL", TT_REFUSE_OTHER, "RESET is not allowed");
  expect_message("SHOW work_mem", TT_REFUSE_OTHER, "current_setting('name')");
  expect_message("COPY t TO PROGRAM 'id'", TT_REFUSE_OTHER, "runs a program on the server");
  expect_message("SELECT evil()", TT_REFUSE_FUNCTION,
                 "evil is not allowed: it is not on tabletalk's list of read-only functions");
  expect_message("SELECT public.lower('x')", TT_REFUSE_FUNCTION,
                 "public.lower is not allowed: only built-in (pg_catalog) functions");
  expect_message("SELECT 1; SELECT 2; SELECT 3", TT_REFUSE_MULTIPLE, "this text holds 3");
  expect_message("-- nothing", TT_REFUSE_EMPTY, "no SQL statement");
  expect_message("EXPLAIN ANALYZE SELECT 1", TT_REFUSE_EXPLAIN, "send the SELECT itself");
  expect_message("SELECT 'caf\xC3'", TT_REFUSE_TEXT, "not valid UTF-8");

  tt_error err;
  assert_false(check("SELEC 1", &err));
  assert_int_equal(err.kind, TT_ERR_SQL);
  assert_int_equal(err.reason, TT_REFUSE_NONE);
  assert_non_null(strstr(err.message, "syntax error at or near \"SELEC\" (at character 1)"));
  /* without an error struct it still answers */
  assert_false(tt_pg_guard_check("DELETE FROM t", 13, NULL, NULL));
  assert_true(tt_pg_guard_check("SELECT 1", 8, NULL, NULL));
}

static void test_configured_functions(void **state) {
  (void)state;
  const char *const names[] = {"myschema.score", "similarity", "pg_sleep", "public.pg_read_file"};
  tt_pg_guard_opts o = {.allow_functions = names, .nallow_functions = 4};
  tt_error err;
  const char *sql = "SELECT myschema.score(\"Name\"), similarity(\"Name\", 'x') FROM \"Track\"";
  assert_false(tt_pg_guard_check(sql, strlen(sql), NULL, &err));
  assert_int_equal(err.reason, TT_REFUSE_FUNCTION);
  assert_true(tt_pg_guard_check(sql, strlen(sql), &o, &err));
  /* the qualified entry allows only that schema's function */
  sql = "SELECT score(1)";
  assert_false(tt_pg_guard_check(sql, strlen(sql), &o, &err));
  sql = "SELECT otherschema.score(1)";
  assert_false(tt_pg_guard_check(sql, strlen(sql), &o, &err));
  /* explicitly denied names stay denied, qualified or not */
  sql = "SELECT pg_sleep(1)";
  assert_false(tt_pg_guard_check(sql, strlen(sql), &o, &err));
  assert_non_null(strstr(err.message, "it only waits"));
  sql = "SELECT public.pg_read_file('x')";
  assert_false(tt_pg_guard_check(sql, strlen(sql), &o, &err));
  assert_non_null(strstr(err.message, "reads files"));
}

static void test_text_not_terminated(void **state) {
  (void)state;
  tt_error err;
  const char buf[] = "SELECT 1; DROP TABLE \"Track\"";
  assert_true(tt_pg_guard_check(buf, 8, NULL, &err));  /* "SELECT 1" */
  assert_false(tt_pg_guard_check(buf, sizeof buf - 1, NULL, &err));
  assert_int_equal(err.reason, TT_REFUSE_MULTIPLE);
  /* a NUL inside the given length is refused, not a place to stop */
  const char nul[] = "SELECT 1\0; DROP TABLE x";
  assert_false(tt_pg_guard_check(nul, sizeof nul - 1, NULL, &err));
  assert_int_equal(err.reason, TT_REFUSE_TEXT);
}

static void test_limits(void **state) {
  (void)state;
  tt_error err;
  /* over the length limit */
  size_t n = 100001;
  char *big = malloc(n + 1);
  memcpy(big, "SELECT 1", 8);
  memset(big + 8, ' ', n - 8);
  big[n] = '\0';
  assert_false(tt_pg_guard_check(big, n, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  assert_non_null(strstr(err.message, "over the limit"));
  free(big);
  /* a long flat IN list is fine */
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "SELECT * FROM \"Track\" WHERE \"TrackId\" IN (0");
  for (int i = 1; i < 5000; i++) tt_buf_printf(&b, ",%d", i);
  tt_buf_puts(&b, ")");
  assert_true(tt_pg_guard_check(b.data, b.len, NULL, &err));
  /* deep nesting: an error, never a crash */
  b.len = 0;
  tt_buf_puts(&b, "SELECT 1");
  for (int i = 0; i < 20000; i++) tt_buf_puts(&b, "+1");
  assert_false(tt_pg_guard_check(b.data, b.len, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  assert_non_null(strstr(err.message, "nested too deeply"));
  b.len = 0;
  tt_buf_puts(&b, "SELECT ");
  for (int i = 0; i < 20000; i++) tt_buf_puts(&b, "(");
  tt_buf_puts(&b, "1");
  for (int i = 0; i < 20000; i++) tt_buf_puts(&b, ")");
  assert_false(tt_pg_guard_check(b.data, b.len, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  /* ... while ordinary depth passes */
  b.len = 0;
  tt_buf_puts(&b, "SELECT 1");
  for (int i = 0; i < 100; i++) tt_buf_puts(&b, " + \"Milliseconds\"");
  tt_buf_puts(&b, " FROM \"Track\"");
  assert_true(tt_pg_guard_check(b.data, b.len, NULL, &err));
  tt_buf_free(&b);
}

static void *check_many(void *arg) {
  long bad = 0;
  (void)arg;
  for (int i = 0; i < 300; i++) {
    tt_error err;
    if (!check("SELECT \"Name\", count(*) FROM \"Track\" GROUP BY 1", &err)) bad++;
    if (check("SELECT pg_sleep(1)", &err) || err.reason != TT_REFUSE_FUNCTION) bad++;
    if (check("SELECT 1; DELETE FROM t", &err) || err.reason != TT_REFUSE_MULTIPLE) bad++;
  }
  return (void *)bad;
}

static void test_threads(void **state) {
  (void)state;
  pthread_t t[8];
  for (int i = 0; i < 8; i++) assert_int_equal(pthread_create(&t[i], NULL, check_many, NULL), 0);
  for (int i = 0; i < 8; i++) {
    void *bad;
    pthread_join(t[i], &bad);
    assert_int_equal((long)bad, 0);
  }
}

/* Whether refs holds kind/schema/name/nargs. */
static bool has_ref(const tt_pg_refs *r, char kind, const char *schema, const char *name, int nargs) {
  for (size_t i = 0; i < r->n; i++) {
    const tt_pg_ref *x = &r->v[i];
    if (x->kind == kind && x->nargs == nargs && strcmp(x->name, name) == 0 &&
        ((!schema && !x->schema) || (schema && x->schema && strcmp(schema, x->schema) == 0)))
      return true;
  }
  return false;
}

static void test_refs(void **state) {
  (void)state;
  tt_pg_refs r = {0};
  tt_error err;
  const char *sql =
      "SELECT lower(a.\"Name\"), a.pwn, (a).f2, count(*), pg_catalog.upper('x'), 1::mood, "
      "CAST(2 AS public.dpos), x BETWEEN 1 AND 2, y NOT BETWEEN 3 AND 4, z LIKE 'a%', "
      "CASE a.k WHEN 1 THEN 2 END, q IN (SELECT 1), percentile_cont(0.5) WITHIN GROUP (ORDER BY 1) "
      "FROM \"Artist\" a JOIN s.v b USING (id) WHERE a.id = 1 AND c @> d";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &r, &err));
  assert_true(has_ref(&r, 'f', NULL, "lower", 1));
  assert_true(has_ref(&r, 'f', NULL, "count", 0));
  assert_true(has_ref(&r, 'f', "pg_catalog", "upper", 1)); /* only pg_catalog's can be chosen */
  assert_true(has_ref(&r, 'f', NULL, "percentile_cont", -1));
  assert_true(has_ref(&r, 'c', NULL, "Name", 1));
  assert_true(has_ref(&r, 'c', NULL, "pwn", 1));
  assert_true(has_ref(&r, 'c', NULL, "f2", 1));
  assert_true(has_ref(&r, 't', NULL, "mood", -1));
  assert_true(has_ref(&r, 't', "public", "dpos", -1));
  assert_true(has_ref(&r, 't', "pg_catalog", "int4", -1) == false); /* 1::mood names no int4 */
  assert_true(has_ref(&r, 'o', NULL, ">=", -1));
  assert_true(has_ref(&r, 'o', NULL, "<=", -1));
  assert_true(has_ref(&r, 'o', NULL, "<", -1));
  assert_true(has_ref(&r, 'o', NULL, ">", -1));
  assert_true(has_ref(&r, 'o', NULL, "~~", -1));
  assert_true(has_ref(&r, 'o', NULL, "=", -1)); /* CASE x WHEN, IN (SELECT), USING, a.id = 1 */
  assert_true(has_ref(&r, 'o', NULL, "@>", -1));
  assert_true(has_ref(&r, 'r', NULL, "Artist", -1));
  assert_true(has_ref(&r, 'r', "s", "v", -1));
  /* each once */
  size_t eq = 0;
  for (size_t i = 0; i < r.n; i++) eq += r.v[i].kind == 'o' && strcmp(r.v[i].name, "=") == 0;
  assert_int_equal(eq, 1);
  tt_pg_refs_free(&r);
  assert_int_equal(r.n, 0);
  /* a refused query still hands back what it collected, to be freed */
  sql = "SELECT lower(x) FROM t; DELETE FROM t";
  assert_false(tt_pg_guard_collect(sql, strlen(sql), NULL, &r, &err));
  tt_pg_refs_free(&r);
  /* the names to look up are bounded (the parse alone is not) */
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "SELECT a.c0");
  for (int i = 1; i <= 4100; i++) tt_buf_printf(&b, ", a.c%d", i);
  tt_buf_puts(&b, " FROM t a");
  assert_true(tt_pg_guard_check(b.data, b.len, NULL, &err));
  assert_false(tt_pg_guard_collect(b.data, b.len, NULL, &r, &err));
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  assert_non_null(strstr(err.message, "names more than 4096"));
  assert_true(r.n <= 4096);
  tt_pg_refs_free(&r);
  tt_buf_free(&b);
}

static void test_trusted_schemas(void **state) {
  (void)state;
  const char *const trust[] = {"app"};
  tt_pg_guard_opts o = {.trust_schemas = trust, .ntrust_schemas = 1};
  tt_pg_refs r = {0};
  tt_error err;
  /* a trusted schema's qualified call and OPERATOR() pass, for the catalog to check */
  const char *sql = "SELECT app.score(x) FROM t WHERE x OPERATOR(app.===) 1";
  assert_false(tt_pg_guard_check(sql, strlen(sql), NULL, &err));
  assert_non_null(strstr(err.message, "--trust-functions app"));
  assert_true(tt_pg_guard_collect(sql, strlen(sql), &o, &r, &err));
  assert_true(has_ref(&r, 'f', "app", "score", 1));
  assert_true(has_ref(&r, 'o', "app", "===", -1));
  tt_pg_refs_free(&r);
  /* an off-list name is left to the catalog (every candidate must be trusted) */
  sql = "SELECT score(x) FROM t";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), &o, &r, &err));
  assert_true(has_ref(&r, 'F', NULL, "score", 1));
  tt_pg_refs_free(&r);
  /* another schema, and denied names, stay refused */
  sql = "SELECT other.score(x) FROM t";
  assert_false(tt_pg_guard_collect(sql, strlen(sql), &o, &r, &err));
  tt_pg_refs_free(&r);
  sql = "SELECT app.pg_sleep(1)";
  assert_false(tt_pg_guard_collect(sql, strlen(sql), &o, &r, &err));
  assert_non_null(strstr(err.message, "it only waits"));
  tt_pg_refs_free(&r);
  sql = "SELECT x FROM t WHERE x OPERATOR(other.=) 1";
  assert_false(tt_pg_guard_collect(sql, strlen(sql), &o, &r, &err));
  tt_pg_refs_free(&r);
}

static void test_settings_and_secrets(void **state) {
  (void)state;
  expect_message("SELECT current_setting('app.api_key')", TT_REFUSE_INTERNALS,
                 "current_setting('app.api_key') is not readable here: a custom setting");
  expect_message("SELECT current_setting('Data_Directory')", TT_REFUSE_INTERNALS,
                 "reveals paths, commands or connection strings");
  expect_message("SELECT current_setting(n) FROM t", TT_REFUSE_INTERNALS,
                 "a name the query computes");
  expect_message("SELECT * FROM information_schema.user_mapping_options", TT_REFUSE_INTERNALS,
                 "user_mapping_options is not readable here: it holds passwords");
  expect_message("SELECT query FROM pg_stat_activity", TT_REFUSE_INTERNALS,
                 "other sessions' queries");
  tt_error err;
  /* a table of the user's with a catalog's name in another schema is the user's */
  assert_true(check("SELECT * FROM sales.pg_settings", &err));
  assert_true(check("SELECT current_setting('TimeZone')", &err));
  /* the catalog check's own lists */
  assert_non_null(tt_pg_guard_denied_why("pg_read_file"));
  assert_non_null(tt_pg_guard_denied_why("pg_stat_reset_shared"));
  assert_null(tt_pg_guard_denied_why("lower"));
  assert_non_null(tt_pg_guard_secret_why("pg_catalog", "pg_largeobject"));
  assert_non_null(tt_pg_guard_secret_why("information_schema", "_pg_user_mappings"));
  assert_null(tt_pg_guard_secret_why("public", "pg_largeobject"));
  assert_null(tt_pg_guard_secret_why("pg_catalog", "pg_class"));
}

/* The catalog check's SQL: the items as E'' literals (whatever
 * standard_conforming_strings says), nothing once all are known. */
static void test_trust_sql(void **state) {
  (void)state;
  tt_pg_refs r = {0};
  tt_error err;
  const char *sql = "SELECT \"it's\\\" FROM \"Artist\"";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &r, &err));
  tt_pg_trust *t = tt_pg_trust_new();
  tt_pg_schema_list trust;
  tt_pg_schema_list_parse("app,,b", &trust);
  assert_int_equal(trust.n, 2);
  tt_buf b = TT_BUF_INIT;
  tt_pg_trust_sql(t, &r, &trust, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "E'Artist'"));
  assert_non_null(strstr(tt_buf_cstr(&b), "ARRAY[E'app',E'b']::text[]"));
  assert_non_null(strstr(tt_buf_cstr(&b), "(-1, 'g'"));
  /* a relation needs the closure, not the calls' part */
  assert_non_null(strstr(tt_buf_cstr(&b), "rels(i, oid, top)"));
  assert_null(strstr(tt_buf_cstr(&b), "'column notation'"));
  tt_buf_free(&b);
  tt_pg_refs_free(&r);
  tt_pg_schema_list_free(&trust);
  tt_pg_trust_free(t);
  sql = "SELECT 'x' FROM \"a'b\\c\"";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &r, &err));
  t = tt_pg_trust_new();
  tt_pg_trust_sql(t, &r, NULL, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "E'a''b\\\\c'"));
  tt_buf_free(&b);
  tt_pg_refs_free(&r);
  tt_pg_trust_free(t);
}

/* The refusal words, from rows as the check returns them. */
static void test_trust_refusal(void **state) {
  (void)state;
  /* i, kind, how, rel schema, rel, top schema, top, what, function, its schema, its name */
  const char *rows[][TT_PG_TRUST_NCOLS] = {
      {"0", "P", "view", "public", "v_dbl", "public", "v_nested", NULL, "public.f()", "public", "f"},
      {"1", "B", "view", "public", "v_ok", "public", "v_ok", NULL, "lower(text)", "pg_catalog", "lower"},
      {"2", "B", "view", "public", "v_file", "public", "v_file", NULL, "pg_read_file(text)", "pg_catalog", "pg_read_file"},
      {"3", "S", "view", "pg_catalog", "pg_stat_activity", "public", "v_act", NULL, NULL, NULL, NULL},
      {"4", "S", "read", "pg_catalog", "pg_class", "pg_catalog", "pg_class", NULL, NULL, NULL, NULL},
      {"5", "P", "operator", NULL, NULL, NULL, NULL, "the operator public.=(character varying,character varying)", "public.eq(character varying,character varying)", "public", "eq"},
      {"6", "P", "policy p", "app", "t", "app", "t", NULL, "app.visible(integer)", "app", "visible"},
      {"-1", "P", "global", NULL, NULL, NULL, NULL, "a cast from text to integer", "pg_catalog.evil(text)", "pg_catalog", "evil"},
  };
  const char *const *cells = &rows[0][0];
  size_t n = sizeof rows / sizeof rows[0];
  tt_buf msg = TT_BUF_INIT;
  tt_db_refusal reason;
  assert_true(tt_pg_trust_refusal(cells, n, 0, &msg, &reason));
  assert_int_equal(reason, TT_REFUSE_FUNCTION);
  assert_string_equal(tt_buf_cstr(&msg), "view v_dbl (read through v_nested) calls public.f(), which "
                                          "tabletalk does not run; --trust-functions public to allow");
  assert_false(tt_pg_trust_refusal(cells, n, 1, &msg, &reason)); /* lower is fine in a view */
  assert_true(tt_pg_trust_refusal(cells, n, 2, &msg, &reason));
  assert_non_null(strstr(tt_buf_cstr(&msg), "view v_file calls pg_read_file(text), which is not allowed"));
  assert_true(tt_pg_trust_refusal(cells, n, 3, &msg, &reason));
  assert_int_equal(reason, TT_REFUSE_INTERNALS);
  assert_non_null(strstr(tt_buf_cstr(&msg), "view v_act reads pg_catalog.pg_stat_activity"));
  assert_false(tt_pg_trust_refusal(cells, n, 4, &msg, &reason)); /* pg_class holds no secret */
  assert_true(tt_pg_trust_refusal(cells, n, 5, &msg, &reason));
  assert_non_null(strstr(tt_buf_cstr(&msg), "(through the operator public.=("));
  assert_true(tt_pg_trust_refusal(cells, n, 6, &msg, &reason));
  assert_non_null(strstr(tt_buf_cstr(&msg), "the row security policy p of app.t calls app.visible"));
  assert_non_null(strstr(tt_buf_cstr(&msg), "--trust-functions app to allow"));
  assert_true(tt_pg_trust_refusal(cells, n, -1, &msg, &reason));
  assert_non_null(strstr(tt_buf_cstr(&msg), "added to pg_catalog"));
  assert_false(tt_pg_trust_refusal(cells, n, 7, &msg, &reason)); /* no rows: nothing stops it */
  tt_buf_free(&msg);
}

/* A profile row as the server gives it (libpq builds one without a
 * server): bad, global, bad_names, bad_ops, risky. */
static PGresult *profile_row(const char *bad, const char *global, const char *names,
                             const char *ops, const char *risky) {
  assert_non_null(tt_pq_api_get(NULL)); /* what pg_trust.c reads the row with */
  PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
  PGresAttDesc att[TT_PG_PROFILE_NCOLS];
  const char *labels[] = {"bad", "global", "bad_names", "bad_ops", "risky"};
  for (int i = 0; i < TT_PG_PROFILE_NCOLS; i++)
    att[i] = (PGresAttDesc){.name = (char *)labels[i], .format = 0, .typid = 25, .typlen = -1,
                            .atttypmod = -1};
  assert_int_equal(PQsetResultAttrs(r, TT_PG_PROFILE_NCOLS, att), 1);
  const char *v[] = {bad, global, names, ops, risky};
  for (int i = 0; i < TT_PG_PROFILE_NCOLS; i++)
    assert_int_equal(PQsetvalue(r, 0, i, (char *)v[i], (int)strlen(v[i])), 1);
  return r;
}

/* The profile spares the check every name it does not hold. */
static void test_trust_profile(void **state) {
  (void)state;
  tt_pg_trust *t = tt_pg_trust_new();
  assert_true(tt_pg_trust_wants_profile(t, NULL));
  PGresult *r = profile_row("2", "0", "{lower,pwn,\"odd \\\"name\"}", "{=}", "{v_dbl,t_rls}");
  tt_pg_trust_set_profile(t, NULL, r, 0);
  PQclear(r);
  assert_false(tt_pg_trust_wants_profile(t, NULL));
  tt_pg_refs refs = {0};
  tt_error err;
  tt_buf b = TT_BUF_INIT;
  /* nothing named is the database's: no check at all */
  const char *sql = "SELECT count(*), upper(a.\"Name\") FROM \"Artist\" a WHERE a.x > 1";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &refs, &err));
  tt_pg_trust_sql(t, &refs, NULL, &b);
  assert_int_equal(b.len, 0);
  tt_pg_refs_free(&refs);
  /* a name it holds goes to the check, and only that */
  sql = "SELECT lower(x), count(*) FROM v_dbl v JOIN \"Artist\" a ON a.id = v.id";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &refs, &err));
  tt_pg_trust_sql(t, &refs, NULL, &b);
  const char *q = tt_buf_cstr(&b);
  assert_non_null(strstr(q, "E'lower'"));
  assert_non_null(strstr(q, "E'v_dbl'"));
  assert_non_null(strstr(q, "E'='"));
  assert_null(strstr(q, "E'count'"));
  assert_null(strstr(q, "E'Artist'"));
  assert_null(strstr(q, "'global'")); /* the profile found no additions to built-in types */
  tt_buf_free(&b);
  tt_pg_refs_free(&refs);
  /* an element the server wrote in quotes is read back whole */
  sql = "SELECT a.\"odd \"\"name\" FROM t a";
  assert_true(tt_pg_guard_collect(sql, strlen(sql), NULL, &refs, &err));
  tt_pg_trust_sql(t, &refs, NULL, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "E'odd \"name'"));
  tt_buf_free(&b);
  tt_pg_refs_free(&refs);
  tt_pg_trust_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),
      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_configured_functions),
      cmocka_unit_test(test_text_not_terminated),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_refs),
      cmocka_unit_test(test_trusted_schemas),
      cmocka_unit_test(test_settings_and_secrets),
      cmocka_unit_test(test_trust_sql),
      cmocka_unit_test(test_trust_refusal),
      cmocka_unit_test(test_trust_profile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
