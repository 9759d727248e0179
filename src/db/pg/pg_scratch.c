/* pg_scratch.c — a throw-away copy of a PostgreSQL database, for the
 * behaviour suite (`eval behaviors --db postgresql://...`), which plants a
 * row the way it does in its scratch copy of a SQLite file. The copy is
 * made by the server (CREATE DATABASE ... TEMPLATE), which only reads the
 * original; the planted row goes into the copy through an ordinary session,
 * the one place tabletalk writes to a server, and never to the database the
 * user named. Everything else reads through the READ ONLY engine (pg.c). */
#include "db/pg/pg.h"
#include "db/pg/pq_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A session on database dbname of the server uri names (NULL: the one the
 * URI names); NULL with why filled in. */
static PGconn *tt_pg_session(const char *uri, const char *dbname, tt_buf *why) {
  const char *keys[] = {"dbname", "dbname", "application_name", "connect_timeout", NULL};
  const char *vals[] = {uri, dbname, "tabletalk-eval", "10", NULL};
  if (!dbname) keys[1] = NULL;
  tt_error load;
  if (!tt_pq_api_get(&load)) { /* libpq, loaded on first use */
    tt_buf_printf(why, "%s (%s)", load.message, load.hint);
    return NULL;
  }
  PGconn *c = PQconnectdbParams(keys, vals, 1);
  if (c && PQstatus(c) == CONNECTION_OK) return c;
  char *shown = tt_pg_redact_uri(uri);
  tt_buf_printf(why, "cannot connect to %s%s%s: %s", shown, dbname ? " (database " : "",
                dbname ? dbname : "", c ? PQerrorMessage(c) : "out of memory");
  if (dbname) tt_buf_puts(why, ")");
  free(shown);
  PQfinish(c);
  return NULL;
}

/* Runs sql; false with its error (one line) after prefix in why. */
static bool tt_pg_do(PGconn *c, const char *sql, const char *prefix, tt_buf *why) {
  PGresult *r = PQexec(c, sql);
  ExecStatusType st = PQresultStatus(r);
  bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  if (!ok) {
    tt_buf_printf(why, "%s: %s", prefix, PQerrorMessage(c));
    while (why->len && (why->data[why->len - 1] == '\n' || why->data[why->len - 1] == ' '))
      why->data[--why->len] = '\0';
  }
  PQclear(r);
  return ok;
}

/* The server's maintenance database: "postgres", else "template1". */
static PGconn *tt_pg_maintenance(const char *uri, tt_buf *why) {
  PGconn *c = tt_pg_session(uri, "postgres", why);
  if (c) return c;
  tt_buf other = TT_BUF_INIT;
  c = tt_pg_session(uri, "template1", &other);
  if (c) tt_buf_reset(why);
  tt_buf_free(&other);
  return c;
}

/* The one error of a failed step: what went wrong, in words, with the
 * secrets of uri masked (libpq's text may echo it). */
static void tt_pg_scratch_error(tt_error *err, const char *uri, tt_buf *why) {
  tt_db_set_error(err, TT_ERR_IO, "%s", tt_buf_cstr(why));
  tt_db_secrets_scrub(uri, err);
  tt_buf_free(why);
}

char *tt_pg_scratch_create(const char *uri, const char *setup_sql, char **name_out,
                           tt_error *err) {
  *name_out = NULL;
  tt_buf why = TT_BUF_INIT;
  /* the database the URI names, as libpq reads it (PGDATABASE, the user) */
  PGconn *src = tt_pg_session(uri, NULL, &why);
  if (!src) {
    tt_pg_scratch_error(err, uri, &why);
    return NULL;
  }
  char source[64];
  snprintf(source, sizeof source, "%s", PQdb(src));
  PQfinish(src);
  char hex[9];
  tt_random_hex(hex, 4);
  char *name = tt_xasprintf("%.30s_tt_behaviours_%s", source, hex);
  PGconn *m = tt_pg_maintenance(uri, &why);
  if (!m) {
    tt_pg_scratch_error(err, uri, &why);
    free(name);
    return NULL;
  }
  char *qname = PQescapeIdentifier(m, name, strlen(name));
  char *qsrc = PQescapeIdentifier(m, source, strlen(source));
  char *sql = tt_xasprintf("CREATE DATABASE %s TEMPLATE %s", qname, qsrc);
  /* a session that just closed (ours above, or another program's) may
   * still be ending on the server: PostgreSQL waits 5 s for it, then
   * refuses; three tries ride out a slow machine */
  bool ok = false;
  for (int attempt = 0; attempt < 3 && !ok; attempt++) {
    tt_buf_reset(&why);
    ok = tt_pg_do(m, sql, "CREATE DATABASE", &why);
    if (!strstr(tt_buf_cstr(&why), "is being accessed by other users")) break;
  }
  if (!ok)
    tt_db_set_error(err, TT_ERR_IO,
                    "cannot make a scratch copy of database %s for the suite (%s); it needs a "
                    "role that may create databases (CREATEDB) and no other session connected "
                    "to %s",
                    source, tt_buf_cstr(&why), source);
  free(sql);
  PQfreemem(qname);
  PQfreemem(qsrc);
  PQfinish(m);
  tt_buf_free(&why);
  if (!ok) {
    free(name);
    return NULL;
  }
  PGconn *s = tt_pg_session(uri, name, &why);
  ok = s && tt_pg_do(s, setup_sql, "cannot prepare the scratch copy", &why);
  PQfinish(s);
  if (!ok) {
    tt_pg_scratch_error(err, uri, &why);
    tt_error other;
    tt_pg_scratch_drop(uri, name, &other);
    free(name);
    return NULL;
  }
  *name_out = name;
  tt_buf u = TT_BUF_INIT; /* uri with dbname=NAME (percent-encoded) added */
  tt_buf_printf(&u, "%s%sdbname=", uri, strchr(uri, '?') ? "&" : "?");
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
      tt_buf_putc(&u, (char)*p);
    else
      tt_buf_printf(&u, "%%%02X", *p);
  }
  return tt_buf_detach(&u);
}

bool tt_pg_scratch_drop(const char *uri, const char *name, tt_error *err) {
  tt_buf why = TT_BUF_INIT;
  PGconn *m = tt_pg_maintenance(uri, &why);
  if (!m) {
    tt_pg_scratch_error(err, uri, &why);
    return false;
  }
  char *qname = PQescapeIdentifier(m, name, strlen(name));
  char *sql = tt_xasprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", qname);
  bool ok = tt_pg_do(m, sql, "cannot remove the scratch database", &why);
  if (!ok) tt_pg_scratch_error(err, uri, &why);
  else tt_buf_free(&why);
  free(sql);
  PQfreemem(qname);
  PQfinish(m);
  return ok;
}
