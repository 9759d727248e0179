/* my_conn.c — connections of the MySQL/MariaDB engine: dialing a server
 * with tabletalk's options (utf8mb4, LOAD DATA LOCAL off, no
 * multi-statements, the URL's TLS settings), setting every session up
 * read-only by construction before any query (the session's sql_mode
 * stripped of what changes how SQL is split into tokens, ANSI_QUOTES,
 * NO_BACKSLASH_ESCAPES, IGNORE_SPACE, ORACLE and the other compatibility
 * modes, and checked; SET SESSION TRANSACTION READ ONLY; a system schema
 * refused as the database), learning what the server is, and the second
 * connection that sends KILL QUERY. */
#define _GNU_SOURCE /* strcasestr */
#include "db/mysql/mysql.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The library's message on one line. */
static void tt_my_message(char *out, size_t n, const char *msg) {
  snprintf(out, n, "%s", msg && *msg ? msg : "unknown error");
  for (char *p = out; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
}

/* A new handle with tabletalk's options; NULL when the library has no
 * memory. nonblocking: for the session (statements are waited for in
 * my_run.c); the KILL connection blocks. */
static MYSQL *tt_my_handle(const tt_my *my, unsigned timeout_s, bool nonblocking) {
  const tt_my_api *api = my->api;
  MYSQL *m = api->init(NULL);
  if (!m) return NULL;
  unsigned int zero = 0;
  if (nonblocking) api->options(m, MYSQL_OPT_NONBLOCK, NULL);
  api->options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  api->options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s);
  api->options(m, MYSQL_OPT_LOCAL_INFILE, &zero); /* the server may not ask for our files */
  api->options4(m, MYSQL_OPT_CONNECT_ATTR_ADD, "program_name", "tabletalk");
  const tt_my_conninfo *ci = &my->ci;
  if (ci->ssl_ca) api->options(m, MYSQL_OPT_SSL_CA, ci->ssl_ca);
  if (ci->ssl_capath) api->options(m, MYSQL_OPT_SSL_CAPATH, ci->ssl_capath);
  if (ci->ssl_cert) api->options(m, MYSQL_OPT_SSL_CERT, ci->ssl_cert);
  if (ci->ssl_key) api->options(m, MYSQL_OPT_SSL_KEY, ci->ssl_key);
  my_bool yes = 1, no = 0;
  switch (ci->ssl_mode) {
  case TT_MY_SSL_DISABLED:
    api->options(m, MYSQL_OPT_SSL_ENFORCE, &no);
    api->options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &no);
    break;
  case TT_MY_SSL_REQUIRED:
    api->options(m, MYSQL_OPT_SSL_ENFORCE, &yes);
    api->options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &no);
    break;
  case TT_MY_SSL_VERIFY_CA: case TT_MY_SSL_VERIFY_IDENTITY:
    api->options(m, MYSQL_OPT_SSL_ENFORCE, &yes);
    api->options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
    break;
  case TT_MY_SSL_PREFERRED: case TT_MY_SSL_DEFAULT: break;
  }
  return m;
}

static unsigned tt_my_connect_timeout(const tt_db *db) {
  if (tt_my_of(db)->ci.connect_timeout) return tt_my_of(db)->ci.connect_timeout;
  double t = db->opts.timeout_s > 0 ? db->opts.timeout_s : 5;
  return t < 2 ? 2 : t > 600 ? 600 : (unsigned)t;
}

static MYSQL *tt_my_dial(tt_db *db, bool nonblocking, char *msg, size_t n) {
  tt_my *my = tt_my_of(db);
  const tt_my_conninfo *ci = &my->ci;
  MYSQL *m = tt_my_handle(my, tt_my_connect_timeout(db), nonblocking);
  if (!m) {
    snprintf(msg, n, "out of memory");
    return NULL;
  }
  /* no CLIENT_MULTI_STATEMENTS, no CLIENT_LOCAL_FILES */
  if (!my->api->real_connect(m, ci->socket ? NULL : ci->host, ci->user, ci->password,
                             ci->database, ci->port, ci->socket, 0)) {
    tt_my_message(msg, n, my->api->error(m));
    my->api->close(m);
    return NULL;
  }
  return m;
}

/* One row of one statement of tabletalk's own on a blocking call: its
 * first ncols values into vals (strdup'ed, NULL for NULL). */
static bool tt_my_row(tt_my *my, MYSQL *m, const char *sql, char **vals, size_t ncols, char *msg,
                      size_t n) {
  const tt_my_api *api = my->api;
  for (size_t i = 0; i < ncols; i++) vals[i] = NULL;
  if (api->real_query(m, sql, (unsigned long)strlen(sql)) != 0) {
    tt_my_message(msg, n, api->error(m));
    return false;
  }
  MYSQL_RES *r = api->store_result(m);
  if (!r) {
    tt_my_message(msg, n, api->error(m));
    return false;
  }
  MYSQL_ROW row = api->fetch_row(r);
  unsigned nf = api->num_fields(r);
  for (size_t i = 0; row && i < ncols && i < nf; i++) vals[i] = row[i] ? tt_xstrdup(row[i]) : NULL;
  api->free_result(r);
  return true;
}

static bool tt_my_simple(tt_my *my, MYSQL *m, const char *sql, char *msg, size_t n) {
  if (my->api->real_query(m, sql, (unsigned long)strlen(sql)) == 0) return true;
  tt_my_message(msg, n, my->api->error(m));
  return false;
}

/* The session's sql_mode without the modes that change how SQL splits
 * into tokens or what a word means (my_lex.h reads the text as the server
 * does only without them). */
static bool tt_my_sql_mode_ok(const char *mode, tt_buf *clean) {
  static const char *const drop[] = {"ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "IGNORE_SPACE",
                                     "ORACLE",      "MSSQL",                "DB2",
                                     "POSTGRESQL",  "MAXDB",                "ANSI",
                                     "MYSQL323",    "MYSQL40",              "EMPTY_STRING_IS_NULL",
                                     "SIMULTANEOUS_ASSIGNMENT", "TIME_ROUND_FRACTIONAL"};
  bool ok = true;
  for (const char *p = mode ? mode : ""; *p;) {
    size_t n = strcspn(p, ",");
    bool dropped = false;
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
      if (strlen(drop[i]) == n && strncasecmp(p, drop[i], n) == 0) dropped = true;
    for (size_t i = 0; i < n; i++)
      if (!isalnum((unsigned char)p[i]) && p[i] != '_') dropped = true;
    if (dropped) {
      ok = false;
    } else if (clean && n) {
      if (clean->len) tt_buf_putc(clean, ',');
      tt_buf_append(clean, p, n);
    }
    p += n;
    if (*p == ',') p++;
  }
  return ok;
}

/* The session set up read-only: sql_mode, READ ONLY transactions, and
 * what the server is. */
static bool tt_my_setup(tt_db *db, MYSQL *m, tt_error *err) {
  tt_my *my = tt_my_of(db);
  char msg[400];
  char *v[4];
  bool ok = tt_my_row(my, m, "SELECT @@SESSION.sql_mode, DATABASE(), @@lower_case_table_names",
                      v, 3, msg, sizeof msg);
  if (ok) {
    my->lower_case_table_names = v[2] ? atoi(v[2]) : 0;
    if (v[1] && tt_my_system_schema(v[1], true)) {
      tt_db_set_error(err, TT_ERR_CONFIG,
                      "%s names the system schema %s, which tabletalk does not read (it holds "
                      "accounts, settings or other sessions' queries); name a database of "
                      "tables",
                      db->name, v[1]);
      ok = false;
      msg[0] = '\0';
    }
  }
  tt_buf clean = TT_BUF_INIT;
  if (ok) {
    tt_my_sql_mode_ok(v[0], &clean);
    char *set = tt_xasprintf("SET SESSION sql_mode = '%s'", tt_buf_cstr(&clean));
    ok = tt_my_simple(my, m, set, msg, sizeof msg);
    free(set);
  }
  for (size_t i = 0; i < 3; i++) free(v[i]);
  tt_buf_free(&clean);
  if (ok) ok = tt_my_simple(my, m, "SET SESSION TRANSACTION READ ONLY", msg, sizeof msg);
  if (ok) { /* the settings the guard relies on, as the server now has them */
    ok = tt_my_row(my, m, "SELECT @@SESSION.sql_mode", v, 1, msg, sizeof msg);
    if (ok && !tt_my_sql_mode_ok(v[0], NULL)) {
      snprintf(msg, sizeof msg, "the session kept sql_mode %s", v[0] ? v[0] : "");
      ok = false;
    }
    free(v[0]);
  }
  if (!ok) {
    if (msg[0])
      tt_db_set_error(err, TT_ERR_IO, "cannot set up a read-only session on %s: %s", db->name,
                      msg);
    return false;
  }
  const char *info = my->api->get_server_info(m);
  info = info ? info : "";
  if (strncmp(info, "5.5.5-", 6) == 0) info += 6; /* MariaDB's old replication prefix */
  my->mariadb = strcasestr(info, "MariaDB") != NULL;
  my->version = my->api->get_server_version(m);
  size_t vn = strspn(info, "0123456789.");
  snprintf(my->dialect, sizeof my->dialect, "%s %.*s", my->mariadb ? "MariaDB" : "MySQL",
           (int)(vn < 20 ? vn : 20), info);
  my->timeout_ms_set = -1;
  return true;
}

bool tt_my_connect(tt_db *db, tt_error *err) {
  tt_my *my = tt_my_of(db);
  tt_my_drop_connection(my);
  char msg[400];
  MYSQL *m = tt_my_dial(db, true, msg, sizeof msg);
  if (!m) {
    tt_db_set_error(err, TT_ERR_IO,
                    "cannot connect to %s: %s (check the URL, that the server runs and lets "
                    "this user in; a password goes in the URL or, better, in a file named by "
                    "?password_file=)",
                    db->name, msg);
    return false;
  }
  if (!tt_my_setup(db, m, err)) {
    my->api->close(m);
    return false;
  }
  my->conn = m;
  return true;
}

void tt_my_drop_connection(tt_my *my) {
  if (my->conn) my->api->close(my->conn);
  my->conn = NULL;
}

bool tt_my_kill_query(tt_db *db, unsigned long thread) {
  tt_my *my = tt_my_of(db);
  char msg[400];
  if (!my->killer) my->killer = tt_my_dial(db, false, msg, sizeof msg);
  if (!my->killer) return false;
  char sql[64];
  snprintf(sql, sizeof sql, "KILL QUERY %lu", thread);
  if (tt_my_simple(my, my->killer, sql, msg, sizeof msg)) return true;
  my->api->close(my->killer); /* a lost connection: made again next time */
  my->killer = NULL;
  return false;
}
