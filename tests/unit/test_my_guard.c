/* test_my_guard.c — the MySQL/MariaDB engine's parts that need no server:
 * every case of tests/fixtures/mysql_guard_corpus.tsv gets its expected
 * outcome from the guard (src/db/mysql/my_guard.c), the tokenizer splits
 * text as the server's lexer does (comments, quotes, numbers glued to
 * words, names after a dot), the messages users read, what the guard
 * hands to the catalog check (names, keyword-named calls, the bytes to
 * send), and mysql:// URLs taken apart (src/db/mysql/my_url.c) and shown
 * without their password. The server-side half is
 * tests/integration/mysql_guard_live.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/mysql/my_guard.h"
#include "db/mysql/my_lex.h"
#include "db/mysql/mysql.h"
#include "testutil.h"

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR "."
#endif

static const tt_my_guard_opts chinook = {.trust_schemas = NULL, .current_db = "chinook"};

static bool check(const char *sql, tt_error *err) {
  return tt_my_guard_check(sql, strlen(sql), TT_MY_GUARD_QUERY, &chinook, NULL, err);
}

static void outcome(bool ok, const tt_error *err, char *buf, size_t n) {
  if (ok) snprintf(buf, n, "ok");
  else if (err->kind == TT_ERR_REFUSED)
    snprintf(buf, n, "refused:%s", tt_db_refusal_name(err->reason));
  else snprintf(buf, n, "error:%s", tt_errkind_name(err->kind));
}

static void test_corpus(void **state) {
  (void)state;
  size_t n;
  tu_row *rows =
      tu_corpus_load(TT_SOURCE_DIR "/tests/fixtures/mysql_guard_corpus.tsv", 1u << 2, &n);
  size_t cases = 0, failures = 0, refused = 0, allowed = 0;
  for (size_t i = 0; i < n; i++) {
    tu_row *r = &rows[i];
    if (r->nfields == 0 || r->field[0][0] == '#' || strcmp(r->field[0], "id") == 0) continue;
    assert_int_equal(r->nfields, 6);
    cases++;
    tt_error err;
    memset(&err, 0x55, sizeof err); /* the guard must fill it in */
    tt_my_refs refs;
    bool ok = tt_my_guard_check(r->field[2], r->len[2], TT_MY_GUARD_QUERY, &chinook, &refs, &err);
    char got[64];
    outcome(ok, &err, got, sizeof got);
    if (strcmp(got, r->field[3]) != 0) {
      failures++;
      fprintf(stderr, "%s (%s): expected %s, got %s: %s\n  sql: %.200s\n", r->field[0],
              r->field[1], r->field[3], got, ok ? "" : err.message, r->field[2]);
    } else if (ok) {
      allowed++;
      assert_int_equal(err.kind, TT_OK);
      assert_true(refs.send_len <= r->len[2]);
    } else {
      refused++;
      assert_true(strlen(err.message) > 20); /* something a user can act on */
    }
    if (ok) tt_my_refs_free(&refs);
  }
  fprintf(stderr, "mysql guard corpus: %zu cases, %zu allowed, %zu refused or failed, %zu wrong\n",
          cases, allowed, refused, failures);
  assert_true(cases >= 200);
  assert_int_equal(failures, 0);
  tu_corpus_free(rows, n);
}

static void expect_refusal(const char *sql, tt_db_refusal reason, const char *message) {
  tt_error err;
  assert_false(check(sql, &err));
  if (err.kind != TT_ERR_REFUSED || err.reason != (int)reason || !strstr(err.message, message))
    fail_msg("%s\n  got: %s/%s %s\n  wanted: %s %s", sql, tt_errkind_name(err.kind),
             tt_db_refusal_name(err.reason), err.message, tt_db_refusal_name(reason), message);
}

static void test_messages(void **state) {
  (void)state;
  expect_refusal("SELECT * FROM Genre INTO OUTFILE '/tmp/x'", TT_REFUSE_WRITE,
                 "SELECT ... INTO OUTFILE writes a file on the server");
  expect_refusal("SELECT 1 INTO @a", TT_REFUSE_OTHER, "INTO @variable changes the session");
  expect_refusal("SELECT @a := 1", TT_REFUSE_OTHER, "user variables (@name) are not allowed");
  expect_refusal("SELECT 1 FROM t WHERE (a := 1)", TT_REFUSE_OTHER, ":= assigns a user variable");
  expect_refusal("SELECT LOAD_FILE('/etc/passwd')", TT_REFUSE_FUNCTION,
                 "LOAD_FILE is not allowed: it reads a file on the server");
  expect_refusal("SELECT GET_LOCK('x', 1)", TT_REFUSE_FUNCTION, "a named lock that outlives");
  expect_refusal("SELECT * FROM t FOR SHARE", TT_REFUSE_OTHER, "FOR SHARE takes row locks");
  expect_refusal("SELECT * FROM t LOCK IN SHARE MODE", TT_REFUSE_OTHER, "LOCK IN SHARE MODE");
  expect_refusal("CREATE TEMPORARY TABLE t (a INT)", TT_REFUSE_SCHEMA,
                 "schema changes are not allowed: CREATE TEMPORARY TABLE");
  expect_refusal("SELECT /*!50000 1 */", TT_REFUSE_OTHER, "MySQL and MariaDB run the SQL inside");
  expect_refusal("SELECT /*+ SET_VAR(a=1) */ 1", TT_REFUSE_OTHER, "optimizer hints");
  expect_refusal("SELECT * FROM mysql.global_priv", TT_REFUSE_INTERNALS,
                 "mysql.global_priv is not readable here");
  expect_refusal("SELECT * FROM information_schema.processlist", TT_REFUSE_INTERNALS,
                 "information_schema.processlist is not readable here");
  expect_refusal("SELECT @@datadir", TT_REFUSE_INTERNALS, "@@datadir is not readable here");
  expect_refusal("SELECT chinook.f(1)", TT_REFUSE_FUNCTION,
                 "chinook.f is not allowed: a function named with its schema is a stored "
                 "function");
  expect_refusal("SELECT f(1)", TT_REFUSE_FUNCTION,
                 "f is not allowed: it is not on tabletalk's list");
  expect_refusal("SELECT `count`(1)", TT_REFUSE_FUNCTION, "a quoted name called like a function");
  expect_refusal("SELECT max (1)", TT_REFUSE_FUNCTION, "write max( with no blank");
  expect_refusal("SELECT 1; SELECT 2; SELECT 3", TT_REFUSE_MULTIPLE, "this text holds 3");
  expect_refusal("-- nothing", TT_REFUSE_EMPTY, "no SQL statement");
  expect_refusal("SHOW TABLES", TT_REFUSE_OTHER, "read information_schema with a SELECT");
  expect_refusal("SELECT NEXT VALUE FOR s", TT_REFUSE_FUNCTION, "NEXT VALUE FOR is not allowed");
  expect_refusal("EXPLAIN SELECT 1", TT_REFUSE_EXPLAIN, "send the SELECT itself");
  expect_refusal("SELECT 'caf\xC3'", TT_REFUSE_TEXT, "not valid UTF-8");

  tt_error err;
  assert_false(check("SELECT 'open", &err));
  assert_int_equal(err.kind, TT_ERR_SQL);
  assert_non_null(strstr(err.message, "never closed"));
}

/* The tokens of sql, each as "KIND:text", joined by spaces. */
static void tokens(const char *sql, char *out, size_t n) {
  tt_my_lexed l;
  bool ok = tt_my_lex(sql, strlen(sql), &l);
  static const char *const kinds[] = {"W", "Q", "S", "N", "V", "Y", "O"};
  out[0] = '\0';
  for (size_t i = 0; i < l.n; i++) {
    char one[128];
    snprintf(one, sizeof one, "%s%s%s:%.*s", i ? " " : "", kinds[l.toks[i].kind],
             l.toks[i].name_only ? "!" : "", (int)l.toks[i].len, sql + l.toks[i].start);
    strncat(out, one, n - strlen(out) - 1);
  }
  if (!ok) strncat(out, " FAIL", n - strlen(out) - 1);
  tt_my_lex_free(&l);
}

static void expect_tokens(const char *sql, const char *want) {
  char got[1024];
  tokens(sql, got, sizeof got);
  if (strcmp(got, want) != 0) fail_msg("%s\n  got:    %s\n  wanted: %s", sql, got, want);
}

static void test_lexer(void **state) {
  (void)state;
  expect_tokens("SELECT 1e5into", "W:SELECT N:1e5 W:into");
  expect_tokens("SELECT 1into", "W:SELECT W:1into");
  expect_tokens("SELECT 1.5into", "W:SELECT N:1.5 W:into");
  expect_tokens("SELECT 0x1Fg, 0x1F, 0b12", "W:SELECT W:0x1Fg O:, N:0x1F O:, W:0b12");
  expect_tokens("SELECT t.1e5, t.into", "W:SELECT W:t O:. W!:1e5 O:, W:t O:. W!:into");
  expect_tokens("SELECT `t`.1e5into", "W:SELECT Q:`t` N:.1e5 W:into");
  expect_tokens("SELECT `t`.into", "W:SELECT Q:`t` O:. W!:into");
  expect_tokens("SELECT t . into", "W:SELECT W:t O:. W:into");
  expect_tokens("SELECT 1--1", "W:SELECT N:1 O:- O:- N:1");
  expect_tokens("SELECT 1-- x\n2", "W:SELECT N:1 N:2");
  expect_tokens("SELECT 1--\t2", "W:SELECT N:1");
  expect_tokens("SELECT 1 #x\r2\n3", "W:SELECT N:1 N:3");
  expect_tokens("SELECT 'a\\'b', \"c\"\"d\", `e``f`",
                "W:SELECT S:'a\\'b' O:, S:\"c\"\"d\" O:, Q:`e``f`");
  expect_tokens("SELECT X'41', b'01', N'x', _utf8mb4'y'",
                "W:SELECT N:X'41' O:, N:b'01' O:, W:N S:'x' O:, W:_utf8mb4 S:'y'");
  expect_tokens("SELECT @a, @@b, @@session.c, @'d', @`e`",
                "W:SELECT V:@a O:, Y:@@b O:, Y:@@session.c O:, V:@'d' O:, V:@`e`");
  expect_tokens("SELECT a:=1 <=> 2 ->> 'x'", "W:SELECT W:a O::= N:1 O:<=> N:2 O:->> S:'x'");
  expect_tokens("SELECT 1 /* a /* b */ 2", "W:SELECT N:1 N:2");
  expect_tokens("SELECT 1 /*/ x */ 2", "W:SELECT N:1 N:2");
  expect_tokens("SELECT /*! 1 */", "W:SELECT FAIL");
  expect_tokens("SELECT 'x", "W:SELECT FAIL");
  expect_tokens("SELECT .5e3, .x", "W:SELECT N:.5e3 O:, O:. W!:x");

  char name[32];
  tt_my_lexed l;
  assert_true(tt_my_lex("`a``b`", 6, &l));
  tt_my_tok_name("`a``b`", &l.toks[0], name, sizeof name);
  assert_string_equal(name, "a`b");
  tt_my_lex_free(&l);
}

static void test_refs(void **state) {
  (void)state;
  const char *sql = "SELECT ROW_NUMBER() OVER (ORDER BY a) FROM chinook.v1 JOIN `v2` x ON 1 ; ";
  tt_my_refs refs;
  tt_error err;
  assert_true(tt_my_guard_check(sql, strlen(sql), TT_MY_GUARD_QUERY, &chinook, &refs, &err));
  bool qualified = false, plain = false;
  for (size_t i = 0; i < refs.nnames; i++) {
    if (refs.names[i].schema && strcmp(refs.names[i].schema, "chinook") == 0 &&
        strcmp(refs.names[i].name, "v1") == 0)
      qualified = true;
    if (!refs.names[i].schema && strcmp(refs.names[i].name, "v2") == 0) plain = true;
  }
  assert_true(qualified);
  assert_true(plain);
  /* every unqualified call is looked up: ROW_NUMBER is no built-in of an
   * old server, OVER no reserved word of MariaDB */
  assert_int_equal(refs.nmaybe, 2);
  assert_string_equal(refs.maybe_stored[0], "ROW_NUMBER");
  assert_string_equal(refs.maybe_stored[1], "OVER");
  assert_int_equal(
      refs.send_len,
      strlen("SELECT ROW_NUMBER() OVER (ORDER BY a) FROM chinook.v1 JOIN `v2` x ON 1 "));
  tt_my_refs_free(&refs);

  /* not NUL-terminated: only len bytes count */
  char buf[] = {'S', 'E', 'L', 'E', 'C', 'T', ' ', '1', ';', 'X'};
  assert_true(tt_my_guard_check(buf, 8, TT_MY_GUARD_QUERY, &chinook, NULL, &err));

  /* a view's definition must be a SELECT too; an expression need not */
  assert_false(tt_my_guard_check("DELETE FROM t", 13, TT_MY_GUARD_VIEW, &chinook, NULL, &err));
  assert_true(tt_my_guard_check("`a` * 2", 7, TT_MY_GUARD_EXPR, &chinook, NULL, &err));
  assert_false(tt_my_guard_check("sleep(`a`)", 10, TT_MY_GUARD_EXPR, &chinook, NULL, &err));

  /* trusted schemas hand their calls to the catalog check */
  tt_my_guard_opts trusting = {.trust_schemas = "util, chinook", .current_db = "chinook"};
  assert_true(
      tt_my_guard_check("SELECT util.f(1), g(2)", 21, TT_MY_GUARD_QUERY, &trusting, &refs, &err));
  assert_int_equal(refs.ntrusted, 2);
  tt_my_refs_free(&refs);
  assert_true(tt_my_schema_trusted(" a , B ", "b"));
  assert_false(tt_my_schema_trusted("ab", "a"));
  assert_true(tt_my_system_schema("MySQL", false));
  assert_false(tt_my_system_schema("information_schema", false));
  assert_true(tt_my_system_schema("information_schema", true));
}

static void test_url(void **state) {
  (void)state;
  unsetenv("MYSQL_HOST");
  unsetenv("MYSQL_TCP_PORT");
  unsetenv("MYSQL_UNIX_PORT");
  tt_my_conninfo ci;
  tt_error err;
  assert_true(tt_my_conninfo_parse("mysql://bob:p%40ss:w@db.example:3307/shop?ssl_mode=REQUIRED",
                                   &ci, &err));
  assert_string_equal(ci.user, "bob");
  assert_string_equal(ci.password, "p@ss:w");
  assert_string_equal(ci.host, "db.example");
  assert_int_equal(ci.port, 3307);
  assert_string_equal(ci.database, "shop");
  assert_int_equal(ci.ssl_mode, TT_MY_SSL_REQUIRED);
  assert_null(ci.socket);
  tt_my_conninfo_free(&ci);

  assert_true(
      tt_my_conninfo_parse("mariadb://root@localhost/db?socket=%2Frun%2Fx.sock", &ci, &err));
  assert_string_equal(ci.socket, "/run/x.sock");
  assert_null(ci.password);
  tt_my_conninfo_free(&ci);

  assert_true(tt_my_conninfo_parse("mysql://u@%2Ftmp%2Fs.sock/db", &ci, &err));
  assert_string_equal(ci.socket, "/tmp/s.sock");
  assert_null(ci.host);
  tt_my_conninfo_free(&ci);

  assert_true(tt_my_conninfo_parse("mysql://u@[::1]:3306/db?ssl-ca=/ca.pem", &ci, &err));
  assert_string_equal(ci.host, "::1");
  assert_string_equal(ci.ssl_ca, "/ca.pem");
  tt_my_conninfo_free(&ci);

  char path[] = "/tmp/tt_my_pwXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "s3cret\nignored\n", 15), 15);
  close(fd);
  char *uri = tt_xasprintf("mysql://u@h/db?password_file=%s", path);
  assert_true(tt_my_conninfo_parse(uri, &ci, &err));
  assert_string_equal(ci.password, "s3cret");
  tt_my_conninfo_free(&ci);
  free(uri);
  unlink(path);

  assert_false(tt_my_conninfo_parse("mysql://u:secretpw@h/db?colour=red", &ci, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_null(strstr(err.message, "secretpw"));
  assert_false(tt_my_conninfo_parse("mysql://u:secretpw@h", &ci, &err));
  assert_non_null(strstr(err.message, "names no database"));
  assert_false(tt_my_conninfo_parse("mysql://u:pw@h:99999/db", &ci, &err));
  assert_false(tt_my_conninfo_parse("mysql://u:p%4@h/db", &ci, &err));
  assert_null(strstr(err.message, "p%4"));

  setenv("MYSQL_UNIX_PORT", "/env/sock", 1);
  assert_true(tt_my_conninfo_parse("mysql://u@localhost/db", &ci, &err));
  assert_string_equal(ci.socket, "/env/sock");
  tt_my_conninfo_free(&ci);
  unsetenv("MYSQL_UNIX_PORT");

  /* the target: the engine, and the password never shown */
  tt_db_target t;
  assert_true(tt_db_target_parse("MySQL://bob:hunter2@db/shop?password=hunter3", &t, &err));
  assert_int_equal(t.kind, TT_DB_KIND_MYSQL);
  assert_string_equal(t.engine, "mysql");
  assert_true(t.uri);
  assert_null(strstr(t.shown, "hunter2"));
  assert_null(strstr(t.shown, "hunter3"));
  assert_non_null(strstr(t.shown, "bob:***@db/shop"));
  tt_db_target_free(&t);
  assert_true(tt_db_target_parse("mariadb://root@localhost/x", &t, &err));
  assert_int_equal(t.kind, TT_DB_KIND_MYSQL);
  tt_db_target_free(&t);
  char *red = tt_db_uri_redacted("mariadb://a:b@c/d");
  assert_string_equal(red, "mariadb://a:***@c/d");
  free(red);
  assert_string_equal(tt_db_kind_dialect(TT_DB_KIND_MYSQL), "MySQL");
  assert_int_equal(tt_db_kind_facts(TT_DB_KIND_MYSQL)->ident_quote, '`');
}

static void test_no_library_needed(void **state) {
  (void)state;
  /* opening a URL that names no database fails before any connection,
   * naming the URL without its password */
  tt_error err;
  tt_db *db = tt_db_open("mysql://u:topsecret@127.0.0.1:1/", NULL, &err);
  assert_null(db);
  assert_null(strstr(err.message, "topsecret"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_lexer),       cmocka_unit_test(test_refs),
      cmocka_unit_test(test_url),         cmocka_unit_test(test_no_library_needed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
