/* pg.c — the PostgreSQL engine behind db.h, through libpq: its table
 * (engine.h), connecting to a postgres:// URI (its password never shown:
 * messages name the target's redacted form, and libpq's own text, which
 * may echo the URI, is masked where the error leaves the engine), what the
 * role could do (tt_db_warning), and running one statement per query: the
 * parse guard (pg_guard.c), the catalog check of what it would run of the
 * database owner's (pg_trust.c) in the same round trip as BEGIN
 * TRANSACTION READ ONLY with SET LOCAL statement_timeout, lock_timeout,
 * idle_in_transaction_session_timeout and standard_conforming_strings,
 * the statement through the extended protocol (one statement only) in
 * single-row mode (memory for one row at a time), then always ROLLBACK.
 * Rows become tt_value: integers (and booleans as 1/0),
 * reals, numeric as a real when it has at most 15 significant digits (else
 * its exact text), bytea as a blob, everything else as text. */
#include "db/pg/pg.h"
#include "db/pg/pg_guard.h"
#include "db/pg/pg_trust.h"
#include "db/pg/pq_api.h"

#include <ctype.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>


/* One statement's rows one at a time (whole results and cursors). */
typedef struct tt_pg_run {
  tt_engine_cursor base;   /* first: what the shared cursor reads */
  tt_db *db;
  PGconn *conn;
  PGcancel *cancel;
  volatile sig_atomic_t *user_cancel;
  double deadline_ms;      /* past it (and a grace), the statement is cancelled */
  bool cancel_sent, by_user, done;
  bool abandoned;          /* the server did not stop when asked: the
                            * connection was closed (the next query makes
                            * a new one) */
  double cancel_ms;        /* when the last cancel request went */
  double cancel_first_ms;  /* ... and the first */
  Oid *types;
  tt_arena *arena;         /* names and types */
  PGresult *pending;       /* the first result, read to learn the columns */
  PGresult *cur;           /* the row now returned (values point into it) */
  unsigned char *bytea;    /* unescaped bytea values of the current row */
  unsigned char **byteas;
  tt_value *row;
} tt_pg_run;

#define TT_PG_GRACE_MS 1000.0 /* the server's statement_timeout fires first */
/* A statement still running this long after the first cancel request is
 * one the server does not interrupt (a huge value being built or sent):
 * its connection is closed, which stops it when it next writes. */
#define TT_PG_ABANDON_MS 2000.0

/* libpq's messages are kept whole up to what an error holds, so that a
 * message is only ever cut at its end, where the boundary's masking of
 * secrets (tt_db_target_scrub) also masks a password cut short. */
#define TT_PG_MSG_MAX sizeof(((tt_error *)0)->message)

/* libpq's message on one line, without its trailing newline. */
static void tt_pg_message(char *out, size_t n, const char *msg) {
  snprintf(out, n, "%s", msg && *msg ? msg : "unknown error");
  size_t len = strlen(out);
  while (len && (out[len - 1] == '\n' || out[len - 1] == ' ')) out[--len] = '\0';
  for (char *p = out; *p; p++)
    if (*p == '\n') *p = ' ';
}

static bool tt_pg_connect(tt_db *db, tt_error *err) {
  tt_pg *pg = tt_pg_of(db);
  char timeout[32];
  double t = db->opts.timeout_s > 0 ? ceil(db->opts.timeout_s) : 5;
  snprintf(timeout, sizeof timeout, "%d", t < 2 ? 2 : t > 600 ? 600 : (int)t);
  /* dbname first: the URI is expanded, and the keywords after it win */
  const char *keys[] = {"dbname", "connect_timeout", "application_name", "client_encoding", NULL};
  const char *vals[] = {db->target.path, timeout, "tabletalk", "UTF8", NULL};
  if (pg->conn) PQfinish(pg->conn);
  tt_pg_trust_forget(pg->trust); /* another connection: learnt again */
  pg->conn = PQconnectdbParams(keys, vals, 1);
  if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK) {
    char msg[TT_PG_MSG_MAX];
    tt_pg_message(msg, sizeof msg, pg->conn ? PQerrorMessage(pg->conn) : "out of memory");
    tt_db_set_error(err, TT_ERR_IO,
                    "cannot connect to %s: %s (check the URI, that the server runs and lets "
                    "this user in; PGHOST, PGUSER, PGPASSWORD and the other PG* variables fill "
                    "in what the URI leaves out)",
                    db->name, msg);
    return false;
  }
  /* no session-level SET: every query begins its own READ ONLY
   * transaction, and a session setting would outlive tabletalk on a
   * pooled server connection (PgBouncer in transaction mode) */
  return true;
}

static bool tt_pg_batch(PGconn *conn, const char *batch, PGresult **check, char *msg, size_t n,
                        char *state, size_t nstate);

/* The profile of the database (pg_trust.h) in a read-only transaction of
 * its own with the search_path at pg_catalog, joined to the SELECT whose
 * text is before (its columns first, then the profile's); the result (one
 * row) or NULL with msg. */
static PGresult *tt_pg_profiled(tt_db *db, const char *before, char *msg, size_t n) {
  tt_pg *pg = tt_pg_of(db);
  tt_pg_schema_list trust;
  tt_pg_schema_list_parse(db->opts.trust_functions, &trust);
  tt_buf sql = TT_BUF_INIT;
  tt_buf_puts(&sql, "BEGIN TRANSACTION READ ONLY; SET LOCAL search_path = pg_catalog, pg_temp; "
                    "SET LOCAL standard_conforming_strings = on; "
                    "SET LOCAL statement_timeout = 10000;\nSELECT * FROM (");
  tt_buf_puts(&sql, before ? before : "SELECT");
  tt_buf_puts(&sql, ") b, (");
  tt_pg_trust_profile_sql(&trust, &sql);
  tt_buf_puts(&sql, ") p;\nROLLBACK");
  PGresult *r = NULL;
  char state[8];
  bool ok = tt_pg_batch(pg->conn, tt_buf_cstr(&sql), &r, msg, n, state, sizeof state);
  if (ok && r && PQntuples(r) == 1 && PQnfields(r) >= TT_PG_PROFILE_NCOLS) {
    tt_pg_trust_set_profile(pg->trust, &trust, r, PQnfields(r) - TT_PG_PROFILE_NCOLS);
  } else {
    if (ok) snprintf(msg, n, "the profile query gave no row");
    PQclear(r);
    r = NULL;
  }
  if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) PQclear(PQexec(pg->conn, "ROLLBACK"));
  tt_buf_free(&sql);
  tt_pg_schema_list_free(&trust);
  return r;
}

static void tt_pg_free(tt_pg *pg) {
  if (!pg) return;
  if (pg->conn) PQfinish(pg->conn);
  tt_pg_trust_free(pg->trust);
  free(pg->warning);
  free(pg);
}

static bool tt_pg_open(tt_db *db, tt_error *err) {
  if (!tt_pq_api_get(err)) return false; /* libpq, loaded on first use */
  tt_pg *pg = tt_xcalloc(1, sizeof(tt_pg));
  pg->trust = tt_pg_trust_new();
  db->state = pg;
  if (tt_pg_connect(db, err)) return true;
  tt_pg_free(pg);
  db->state = NULL;
  return false;
}

static void tt_pg_close(tt_db *db) { tt_pg_free(tt_pg_of(db)); }

/* What the role could do should a function of the database's owner run:
 * a READ ONLY transaction binds the statement, not dblink's connection of
 * its own, COPY ... TO a file, or a server function. Asked once, in a
 * read-only transaction of its own, with the search_path at pg_catalog so
 * that nothing of the database's answers. */
static const char *tt_pg_warning(tt_db *db) {
  tt_pg *pg = tt_pg_of(db);
  if (pg->warned) return pg->warning;
  pg->warned = true; /* asked once, connected or not */
  if (PQstatus(pg->conn) != CONNECTION_OK) return NULL;
  if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) PQclear(PQexec(pg->conn, "ROLLBACK"));
  /* with the database's profile, which the catalog check needs next */
  char msg[TT_PG_MSG_MAX];
  PGresult *r = tt_pg_profiled(
      db,
      "SELECT r.rolname, r.rolsuper, has_database_privilege(current_database(), 'CREATE'), "
      "pg_has_role('pg_write_server_files', 'USAGE') OR "
      "pg_has_role('pg_execute_server_program', 'USAGE'), "
      "(SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relkind IN ('r', 'p', 'v', 'f') AND n.nspname <> 'information_schema' "
      "AND n.nspname NOT LIKE 'pg\\_%' "
      "AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') LIMIT 1) "
      "FROM pg_roles r WHERE r.rolname = current_user",
      msg, sizeof msg);
  bool ok = r && PQnfields(r) == 5 + TT_PG_PROFILE_NCOLS;
  char *role = ok ? tt_xstrdup(PQgetvalue(r, 0, 0)) : NULL;
  bool super = ok && PQgetvalue(r, 0, 1)[0] == 't';
  bool create = ok && PQgetvalue(r, 0, 2)[0] == 't';
  bool files = ok && PQgetvalue(r, 0, 3)[0] == 't';
  char *table = ok && !PQgetisnull(r, 0, 4) ? tt_xstrdup(PQgetvalue(r, 0, 4)) : NULL;
  PQclear(r);
  char what[400] = "";
  if (super) snprintf(what, sizeof what, "a superuser");
  else if (table) snprintf(what, sizeof what, "a role that can write (to %s, for one)", table);
  else if (create) snprintf(what, sizeof what, "a role that can create objects in this database");
  else if (files) snprintf(what, sizeof what, "a role that can write server files");
  if (what[0])
    pg->warning = tt_xasprintf(
        "connected as %s, %s: a READ ONLY transaction cannot stop what a function of the "
        "database's owner does with it (dblink, COPY ... TO a file, server functions); tabletalk "
        "refuses every such function it finds before a query runs, but connect as a read-only "
        "role (docs/guide/postgresql.md, \"A read-only role\")",
        role, what);
  free(role);
  free(table);
  return pg->warning;
}

static bool tt_pg_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  (void)err;
  /* No cheap data version on a server that others write: every snapshot is
   * new, so nothing is served from a cache (results are not repeatable). */
  static _Atomic uint64_t serial;
  (void)db;
  *version = tt_fnv1a64(TT_FNV1A64_INIT, (uint64_t[]){++serial, (uint64_t)tt_now_ms()},
                        2 * sizeof(uint64_t));
  return true;
}

static void tt_pg_snapshot_end(tt_db *db) { (void)db; }

/* ---- types ------------------------------------------------------------- */

static const char *tt_pg_type_name(Oid t) {
  switch (t) {
  case 16: return "boolean";
  case 17: return "bytea";
  case 19: return "name";
  case 20: return "bigint";
  case 21: return "smallint";
  case 23: return "integer";
  case 25: return "text";
  case 26: return "oid";
  case 114: return "json";
  case 700: return "real";
  case 701: return "double precision";
  case 1042: return "character";
  case 1043: return "character varying";
  case 1082: return "date";
  case 1083: return "time";
  case 1114: return "timestamp";
  case 1184: return "timestamp with time zone";
  case 1186: return "interval";
  case 1700: return "numeric";
  case 2950: return "uuid";
  case 3802: return "jsonb";
  case 1266: return "time with time zone";
  case 869: return "inet";
  case 790: return "money";
  /* arrays of the above (array_agg, ARRAY[...]), named as format_type does */
  case 1000: return "boolean[]";
  case 1001: return "bytea[]";
  case 1005: return "smallint[]";
  case 1007: return "integer[]";
  case 1009: return "text[]";
  case 1014: return "character[]";
  case 1015: return "character varying[]";
  case 1016: return "bigint[]";
  case 1021: return "real[]";
  case 1022: return "double precision[]";
  case 1115: return "timestamp[]";
  case 1182: return "date[]";
  case 1231: return "numeric[]";
  case 2951: return "uuid[]";
  case 199: return "json[]";
  case 3807: return "jsonb[]";
  default: return "";
  }
}

/* A numeric a double holds exactly enough to print back the same. */
static bool tt_numeric_fits_real(const char *s) {
  int digits = 0;
  for (const char *p = s; *p; p++) {
    if (isdigit((unsigned char)*p)) digits++;
    else if (*p != '-' && *p != '.') return false; /* NaN, Infinity, exponent */
  }
  return digits > 0 && digits <= 15;
}

/* Column c of res's row 0 into v; its bytes as max_bytes counts them. */
static size_t tt_pg_value(tt_pg_run *run, PGresult *res, size_t c, tt_value *v) {
  memset(v, 0, sizeof *v);
  if (PQgetisnull(res, 0, (int)c)) {
    v->type = TT_VAL_NULL;
    return 0;
  }
  const char *s = PQgetvalue(res, 0, (int)c);
  size_t n = (size_t)PQgetlength(res, 0, (int)c);
  switch (run->types[c]) {
  case 20: case 21: case 23: case 26:
    /* the server's text is canonical: read without strtoll's locale work */
    v->type = TT_VAL_INT;
    if (!tt_parse_int(s, n, &v->u.i)) v->u.i = strtoll(s, NULL, 10);
    return 8;
  case 16:
    v->type = TT_VAL_INT;
    v->u.i = s[0] == 't';
    return 8;
  case 700: case 701:
    /* exactly strtod's value, without it where the text is plain */
    v->type = TT_VAL_REAL;
    if (!tt_parse_real_plain(s, n, &v->u.r)) v->u.r = strtod(s, NULL);
    return 8;
  case 1700:
    if (tt_numeric_fits_real(s)) {
      v->type = TT_VAL_REAL;
      if (!tt_parse_real_plain(s, n, &v->u.r)) v->u.r = strtod(s, NULL);
      return 8;
    }
    break;
  case 17: {
    size_t len = 0;
    unsigned char *b = PQunescapeBytea((const unsigned char *)s, &len);
    if (b) {
      run->byteas[c] = b;
      v->type = TT_VAL_BLOB;
      v->len = len;
      v->u.s = (const char *)b;
      return len;
    }
    break;
  }
  default: break;
  }
  v->type = TT_VAL_TEXT;
  v->len = n;
  v->u.s = s;
  return n;
}

/* ---- running one statement -------------------------------------------- */

/* Asks the server to stop the statement; again every 100 ms while it
 * runs (a request that arrives before the statement starts is lost). */
static void tt_pg_send_cancel(tt_pg_run *run) {
  if (!run->cancel || (run->cancel_sent && tt_now_ms() - run->cancel_ms < 100)) return;
  char buf[256];
  PQcancel(run->cancel, buf, sizeof buf);
  if (!run->cancel_sent) run->cancel_first_ms = tt_now_ms();
  run->cancel_sent = true;
  run->cancel_ms = tt_now_ms();
}

/* The next result of the statement, waiting for the server within the
 * time limit (cancelling past it, or when the user cancels); NULL at the
 * end, or with *lost when the connection failed. */
static PGresult *tt_pg_wait(tt_pg_run *run, bool *lost) {
  *lost = run->abandoned;
  if (run->abandoned) return NULL;
  while (PQisBusy(run->conn)) {
    if (run->user_cancel && *run->user_cancel) {
      if (!run->cancel_sent) run->by_user = true;
      tt_pg_send_cancel(run);
    } else if (run->cancel_sent || tt_now_ms() > run->deadline_ms + TT_PG_GRACE_MS) {
      tt_pg_send_cancel(run);
    }
    if (run->cancel_sent && tt_now_ms() > run->cancel_first_ms + TT_PG_ABANDON_MS) {
      /* the server does not answer even a cancel: waiting for it would
       * hold the caller (and the rows it sends, memory) far past the limit */
      PQfinish(run->conn);
      run->conn = NULL;
      tt_pg_of(run->db)->conn = NULL;
      run->abandoned = true;
      *lost = true;
      return NULL;
    }
    struct pollfd p = {.fd = PQsocket(run->conn), .events = POLLIN};
    if (p.fd < 0) {
      *lost = true;
      return NULL;
    }
    poll(&p, 1, 20);
    if (!PQconsumeInput(run->conn)) {
      *lost = true;
      return NULL;
    }
  }
  return PQgetResult(run->conn);
}

/* What a failed result means for the user. */
static void tt_pg_fail(tt_pg_run *run, const PGresult *res, tt_error *err) {
  const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  char msg[TT_PG_MSG_MAX];
  const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  tt_pg_message(msg, sizeof msg, primary ? primary : PQresultErrorMessage(res));
  state = state ? state : "";
  const tt_db_opts *o = tt_db_limits(run->db);
  if (strcmp(state, "57014") == 0) {
    if (run->by_user)
      tt_db_set_error(err, TT_ERR_CANCELLED, "query cancelled");
    else
      tt_db_set_error(err, TT_ERR_TIMEOUT,
                      "query stopped after the %.3g s time limit; narrow it (WHERE, LIMIT) or "
                      "raise --timeout", o->timeout_s);
  } else if (strcmp(state, "55P03") == 0) {
    tt_db_set_error(err, TT_ERR_BUSY,
                    "another session kept a lock on what the query reads for the whole "
                    "%.3g s time limit; try again, or raise --timeout", o->timeout_s);
  } else if (strcmp(state, "25006") == 0) {
    bool schema = strstr(msg, "CREATE") || strstr(msg, "DROP") || strstr(msg, "ALTER") ||
                  strstr(msg, "COMMENT") || strstr(msg, "GRANT") || strstr(msg, "REVOKE");
    tt_db_refuse(err, schema ? TT_REFUSE_SCHEMA : TT_REFUSE_WRITE,
                 "writes are not allowed: %s", msg);
  } else if (strcmp(state, "42601") == 0 && strstr(msg, "multiple commands")) {
    tt_db_refuse(err, TT_REFUSE_MULTIPLE,
                 "only one statement per query is allowed; remove what follows the first "
                 "statement");
  } else if (strncmp(state, "53", 2) == 0 || strncmp(state, "54", 2) == 0) {
    tt_db_set_error(err, TT_ERR_LIMIT, "query is over a server limit: %s", msg);
  } else if (strncmp(state, "08", 2) == 0) {
    tt_db_set_error(err, TT_ERR_IO, "the connection to %s failed: %s", run->db->name, msg);
  } else {
    tt_db_set_error(err, TT_ERR_SQL, "%s", msg);
  }
}

static void tt_pg_lost(tt_pg_run *run, tt_error *err) {
  if (run->abandoned) {
    if (run->by_user)
      tt_db_set_error(err, TT_ERR_CANCELLED,
                      "query cancelled (the server did not stop it at once, so its connection "
                      "was closed; the next query connects again)");
    else
      tt_db_set_error(err, TT_ERR_TIMEOUT,
                      "query stopped after the %.3g s time limit; the server did not stop it "
                      "when asked, so its connection was closed; narrow it (WHERE, LIMIT, "
                      "smaller values) or raise --timeout",
                      tt_db_limits(run->db)->timeout_s);
    return;
  }
  char msg[TT_PG_MSG_MAX];
  tt_pg_message(msg, sizeof msg, PQerrorMessage(run->conn));
  tt_db_set_error(err, TT_ERR_IO,
                  "the connection to %s was lost: %s (check that the server runs; the next "
                  "query connects again)", run->db->name, msg);
}

static bool tt_pg_exec(PGconn *conn, const char *sql, char *msg, size_t n) {
  PGresult *r = PQexec(conn, sql);
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) tt_pg_message(msg, n, r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
  PQclear(r);
  return ok;
}

/* Frees the current row's memory. */
static void tt_pg_row_clear(tt_pg_run *run) {
  for (size_t c = 0; c < run->base.ncols; c++) {
    PQfreemem(run->byteas[c]);
    run->byteas[c] = NULL;
  }
  PQclear(run->cur);
  run->cur = NULL;
}

static void tt_pg_run_free(tt_pg_run *run) {
  tt_pg_row_clear(run);
  PQclear(run->pending);
  PQfreeCancel(run->cancel);
  tt_arena_free(run->arena);
  free(run->types);
  free(run->byteas);
  free(run->row);
  free(run);
}

static void tt_pg_run_close(tt_pg_run *run) {
  if (!run) return;
  tt_pg_row_clear(run);
  PQclear(run->pending);
  run->pending = NULL;
  if (!run->done) {
    /* rows are left: stop the statement rather than read them all */
    tt_pg_send_cancel(run);
    bool lost = false;
    PGresult *r;
    while ((r = tt_pg_wait(run, &lost))) PQclear(r);
  }
  switch (run->abandoned ? PQTRANS_UNKNOWN : PQtransactionStatus(run->conn)) {
  case PQTRANS_INTRANS: case PQTRANS_INERROR:
    /* ROLLBACK undoes all the statement did but session advisory locks,
     * which a function the guard cannot see may take (a function of the
     * database reached through column notation, x.f for f(x), or through
     * an overload): they go too, in the same round trip */
    PQclear(PQexec(run->conn, "ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()"));
    break;
  default: break;
  }
  tt_pg_run_free(run);
}

/* Sends batch (several statements, one round trip) and reads every
 * result: false with msg (and the failing result's SQLSTATE in state) at
 * the first error, after which the server skipped the rest; *check gets
 * the one result with rows (the catalog check's), when asked. */
static bool tt_pg_batch(PGconn *conn, const char *batch, PGresult **check, char *msg, size_t n,
                        char *state, size_t nstate) {
  if (check) *check = NULL;
  state[0] = '\0';
  if (!PQsendQuery(conn, batch)) {
    tt_pg_message(msg, n, PQerrorMessage(conn));
    return false;
  }
  bool ok = true;
  PGresult *r;
  while ((r = PQgetResult(conn))) {
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK && check && !*check) {
      *check = r;
      continue;
    }
    if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      ok = false;
      tt_pg_message(msg, n, PQresultErrorMessage(r));
      const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      snprintf(state, nstate, "%s", s ? s : "");
    }
    PQclear(r);
  }
  if (!ok && check) {
    PQclear(*check);
    *check = NULL;
  }
  return ok;
}

/* The statement's read-only transaction, begun after the catalog check of
 * what refs name (when a verdict is due) in one round trip: the check in a
 * read-only transaction of its own with the search_path at pg_catalog (so
 * that its own names resolve to nothing of the database's), rolled back,
 * then BEGIN and the limits of the statement's. tabletalk's own SQL (the
 * catalog's) gets no check and the search_path at pg_catalog too. A
 * connection that failed is made again once. */
static bool tt_pg_begin(tt_db *db, const tt_pg_refs *refs, const tt_pg_schema_list *trust,
                        long ms, tt_error *err) {
  tt_pg *pg = tt_pg_of(db);
  if (PQstatus(pg->conn) != CONNECTION_OK && !tt_pg_connect(db, err)) return false;
  char limits[400], msg[TT_PG_MSG_MAX], state[8];
  snprintf(limits, sizeof limits,
           "SET LOCAL statement_timeout = %ld; SET LOCAL lock_timeout = %ld; "
           "SET LOCAL idle_in_transaction_session_timeout = %ld; "
           "SET LOCAL standard_conforming_strings = on",
           ms, ms, ms + 5000);
  for (int attempt = 0; attempt < 2; attempt++) {
    if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
      char m2[200];
      tt_pg_exec(pg->conn, "ROLLBACK", m2, sizeof m2);
    }
    tt_buf batch = TT_BUF_INIT, check = TT_BUF_INIT;
    if (!db->trusted_text && tt_pg_trust_wants_profile(pg->trust, trust)) {
      PGresult *p = tt_pg_profiled(db, NULL, msg, sizeof msg);
      if (!p && PQstatus(pg->conn) == CONNECTION_OK) {
        tt_db_set_error(err, TT_ERR_IO, "cannot read what %s holds to check the query: %s",
                        db->name, msg);
        return false;
      }
      PQclear(p);
    }
    if (!db->trusted_text) tt_pg_trust_sql(pg->trust, refs, trust, &check);
    if (check.len)
      tt_buf_printf(&batch,
                    "BEGIN TRANSACTION READ ONLY; SET LOCAL search_path = pg_catalog, pg_temp; "
                    "%s;\n%s;\nROLLBACK; ",
                    limits, tt_buf_cstr(&check));
    tt_buf_printf(&batch, "BEGIN TRANSACTION READ ONLY; %s%s", limits,
                  db->trusted_text ? "; SET LOCAL search_path = pg_catalog, pg_temp" : "");
    PGresult *verdict = NULL;
    bool ok = tt_pg_batch(pg->conn, tt_buf_cstr(&batch), check.len ? &verdict : NULL, msg,
                          sizeof msg, state, sizeof state);
    bool checked = check.len > 0;
    tt_buf_free(&batch);
    tt_buf_free(&check);
    if (ok) {
      bool allowed = !checked || (verdict && tt_pg_trust_verdict(pg->trust, refs, verdict, err));
      if (checked && !verdict)
        tt_db_set_error(err, TT_ERR_IO, "the catalog check of the query gave no rows");
      PQclear(verdict);
      if (allowed) return true;
      tt_pg_exec(pg->conn, "ROLLBACK", msg, sizeof msg);
      return false;
    }
    if (PQstatus(pg->conn) == CONNECTION_OK) {
      if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
        char m2[200];
        tt_pg_exec(pg->conn, "ROLLBACK", m2, sizeof m2);
      }
      if (strcmp(state, "57014") == 0)
        tt_db_set_error(err, TT_ERR_TIMEOUT,
                        "checking what the query would run took over the %.3g s time limit; "
                        "raise --timeout",
                        (double)ms / 1000.0);
      else
        tt_db_set_error(err, TT_ERR_IO, "cannot start a read-only transaction on %s: %s",
                        db->name, msg);
      return false;
    }
    /* a server that restarted, a connection that timed out: once more */
    if (attempt > 0 || !tt_pg_connect(db, err)) {
      if (err->kind == TT_OK)
        tt_db_set_error(err, TT_ERR_IO, "cannot start a read-only transaction on %s: %s",
                        db->name, msg);
      return false;
    }
  }
  return false;
}

static tt_pg_run *tt_pg_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                          tt_error *err) {
  if (!tt_db_check_sql_text(sql, len, db->trusted_text, err)) return NULL;
  tt_pg_schema_list trust;
  tt_pg_schema_list_parse(db->opts.trust_functions, &trust);
  tt_pg_refs refs = {0};
  /* the parse-level guard (pg_guard.c) for every text that is not
   * tabletalk's own, then the catalog check of what its names would run
   * (pg_trust.c); the READ ONLY transaction is the next layer */
  tt_pg_guard_opts g = {.trust_schemas = (const char *const *)trust.v, .ntrust_schemas = trust.n};
  bool go = db->trusted_text || tt_pg_guard_collect(sql, len, &g, &refs, err);
  long ms = timeout_s > 0 ? (long)ceil(timeout_s * 1000.0) : 5000;
  if (go) go = tt_pg_begin(db, &refs, &trust, ms, err);
  tt_pg_refs_free(&refs);
  tt_pg_schema_list_free(&trust);
  if (!go) return NULL;
  tt_pg *pg = tt_pg_of(db);
  tt_pg_run *run = tt_xcalloc(1, sizeof *run);
  run->db = db;
  run->conn = pg->conn;
  run->user_cancel = tt_db_limits(db)->cancel;
  run->deadline_ms = tt_now_ms() + (double)ms;
  run->arena = tt_arena_new();
  char *text = tt_xstrndup(sql, len);
  int sent = PQsendQueryParams(pg->conn, text, 0, NULL, NULL, NULL, NULL, 0);
  free(text);
  if (!sent) {
    tt_pg_lost(run, err);
    run->done = true;
    tt_pg_run_close(run);
    return NULL;
  }
  PQsetSingleRowMode(pg->conn);
  run->cancel = PQgetCancel(pg->conn);
  bool lost;
  PGresult *first = tt_pg_wait(run, &lost);
  ExecStatusType st = first ? PQresultStatus(first) : PGRES_FATAL_ERROR;
  if (!first || (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK)) {
    if (!first)
      tt_pg_lost(run, err);
    else if (st == PGRES_COMMAND_OK || st == PGRES_EMPTY_QUERY)
      tt_db_refuse(err, st == PGRES_EMPTY_QUERY ? TT_REFUSE_EMPTY : TT_REFUSE_OTHER,
                   st == PGRES_EMPTY_QUERY
                       ? "no SQL statement found: the input is empty or only comments"
                       : "only queries that return rows are allowed (SELECT, VALUES, TABLE, "
                         "WITH ... SELECT)");
    else
      tt_pg_fail(run, first, err);
    PQclear(first);
    PGresult *r;
    while ((r = tt_pg_wait(run, &lost))) PQclear(r);
    run->done = true;
    if (PQtransactionStatus(pg->conn) == PQTRANS_IDLE) {
      /* the statement ended the read-only transaction: nothing it set may
       * last into the next query */
      tt_db_refuse(err, TT_REFUSE_TRANSACTION,
                   "transaction control (COMMIT, END, ROLLBACK...) is not allowed");
      PQfinish(pg->conn);
      pg->conn = NULL;
      tt_error ignored;
      tt_pg_connect(db, &ignored);
    }
    tt_pg_run_close(run);
    return NULL;
  }
  run->pending = first;
  run->base.ncols = (size_t)PQnfields(first);
  size_t n = run->base.ncols ? run->base.ncols : 1;
  run->types = tt_xcalloc(n, sizeof *run->types);
  run->base.names = tt_arena_alloc(run->arena, n * sizeof *run->base.names);
  run->base.decltypes = tt_arena_alloc(run->arena, n * sizeof *run->base.decltypes);
  run->byteas = tt_xcalloc(n, sizeof *run->byteas);
  run->row = tt_xcalloc(n, sizeof *run->row);
  for (size_t c = 0; c < run->base.ncols; c++) {
    run->types[c] = PQftype(first, (int)c);
    run->base.names[c] = tt_db_shown_name(run->arena, PQfname(first, (int)c));
    run->base.decltypes[c] = tt_pg_type_name(run->types[c]);
  }
  return run;
}

static int tt_pg_run_next(tt_pg_run *run, const tt_value **row, size_t *row_bytes, tt_error *err) {
  *row = NULL;
  *row_bytes = 0;
  if (run->done) return 0;
  tt_pg_row_clear(run);
  bool lost = false;
  PGresult *res = run->pending;
  run->pending = NULL;
  if (!res) res = tt_pg_wait(run, &lost);
  ExecStatusType st = res ? PQresultStatus(res) : PGRES_COMMAND_OK;
  if (res && st == PGRES_SINGLE_TUPLE) {
    run->cur = res;
    size_t bytes = 0;
    for (size_t c = 0; c < run->base.ncols; c++) bytes += tt_pg_value(run, res, c, &run->row[c]);
    *row = run->row;
    *row_bytes = bytes;
    return 1;
  }
  run->done = true;
  int rc = 0;
  if (lost) {
    tt_pg_lost(run, err);
    rc = -1;
  } else if (res && st != PGRES_TUPLES_OK) {
    tt_pg_fail(run, res, err);
    rc = -1;
  }
  PQclear(res);
  PGresult *r;
  while (!lost && (r = tt_pg_wait(run, &lost))) PQclear(r);
  return rc;
}

/* ---- whole results ------------------------------------------------------ */

static tt_result *tt_pg_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  double t0 = tt_now_ms();
  tt_pg_run *run = tt_pg_run_open(db, sql, len, tt_db_limits(db)->timeout_s, err);
  return run ? tt_engine_result(db, &run->base, t0, err) : NULL;
}

/* ---- the cursor: a run seen through the table ---------------------------- */

static tt_engine_cursor *tt_pg_cursor_open(tt_db *db, const char *sql, size_t len,
                                           tt_error *err) {
  tt_pg_run *run = tt_pg_run_open(db, sql, len, db->opts.timeout_s, err);
  return run ? &run->base : NULL;
}

static int tt_pg_cursor_next(tt_engine_cursor *c, const tt_value **row, size_t *row_bytes,
                             tt_error *err) {
  return tt_pg_run_next((tt_pg_run *)c, row, row_bytes, err);
}

static void tt_pg_cursor_close(tt_engine_cursor *c) { tt_pg_run_close((tt_pg_run *)c); }

const tt_db_engine tt_db_engine_pg = {
    .name = "postgres",
    .facts = {.name = "PostgreSQL", .ident_quote = '"', .fold = TT_DB_FOLD_LOWER,
              .schemas = true},
    .list_tables_sql = "SELECT table_schema, table_name FROM information_schema.tables WHERE "
                       "table_schema NOT IN ('pg_catalog', 'information_schema')",
    .open = tt_pg_open,
    .close = tt_pg_close,
    .warning = tt_pg_warning,
    .set_opts = NULL,
    .query = tt_pg_query,
    .cursor_open = tt_pg_cursor_open,
    .cursor_next = tt_pg_cursor_next,
    .cursor_close = tt_pg_cursor_close,
    .catalog_load = tt_pg_catalog_load,
    .catalog_stamp = tt_pg_catalog_stamp,
    .snapshot_begin = tt_pg_snapshot_begin,
    .snapshot_end = tt_pg_snapshot_end,
    .sql_column_values = tt_pg_sql_column_values,
    .is_text_type = tt_pg_is_text_type,
};
