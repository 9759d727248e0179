/* pg_guard.c — the parse-level guard of the PostgreSQL backend: SQL is
 * parsed with libpg_query (the server's own grammar, loaded with dlopen on
 * first use so that runs on SQLite never pay for it) into a JSON tree, and
 * that whole tree is walked: exactly one statement, a plain read (SELECT,
 * VALUES, TABLE, WITH of selects), no SELECT INTO, no locking clause, no
 * data-modifying WITH, every function called anywhere on the allow-list,
 * no relation or setting that holds a secret. Deny by default: a function
 * not on the list is refused. The walk also lists what the server will
 * resolve through the catalog (calls, x.f fields, operators written or
 * implied, relations, types) for the catalog check (pg_trust.c), which
 * finds what they would run of the database owner's. The rules and the
 * allow-list's families are in docs/guide/postgresql.md. */
#include "db/pg/pg_guard.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db/db_internal.h"

/* ---- libpg_query, loaded on first use ------------------------------------ */

/* Types from the library's own header (CMake requires it); the two
 * functions used are looked up with dlopen. */
#include <pg_query.h>

typedef struct tt_pgq_api {
  PgQueryParseResult (*parse)(const char *input);
  void (*free_parse_result)(PgQueryParseResult result);
} tt_pgq_api;

static tt_pgq_api tt_pgq_loaded;
static const tt_pgq_api *tt_pgq_ready;
static char tt_pgq_error[300];
static pthread_once_t tt_pgq_once = PTHREAD_ONCE_INIT;

static void tt_pgq_load(void) {
  static const char *const files[] = {"libpg_query.so.1504.0", "libpg_query.so", NULL};
  const tt_dl_sym syms[] = {
      {"parse", &tt_pgq_loaded.parse},
      {"free_parse_result", &tt_pgq_loaded.free_parse_result},
  };
  char why[200];
  switch (tt_dl_load(files, "pg_query_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    snprintf(tt_pgq_error, sizeof tt_pgq_error,
             "cannot load libpg_query to check the SQL (%s); install it with: "
             "apt-get install libpg-query1504.0",
             why);
    return;
  case TT_DL_NO_SYMBOL:
    snprintf(tt_pgq_error, sizeof tt_pgq_error,
             "libpg_query lacks %s; install Debian's libpg-query1504.0 (PostgreSQL 15 grammar)",
             why);
    return;
  case TT_DL_OK: break;
  }
  tt_pgq_ready = &tt_pgq_loaded; /* stays loaded for good */
}

/* ---- functions ----------------------------------------------------------- */

/* Names refused with a reason of their own (checked before the allow-list,
 * so a configured allow-list cannot let them through). A trailing '*'
 * matches any rest of the name. */
typedef struct tt_pg_denied {
  const char *name;
  const char *why;
} tt_pg_denied;

static const tt_pg_denied TT_PG_DENIED[] = {
    {"pg_read_file", "it reads files on the server"},
    {"pg_read_binary_file", "it reads files on the server"},
    {"pg_stat_file", "it reads file metadata on the server"},
    {"pg_ls_*", "it lists folders on the server"},
    {"pg_file_*", "it writes files on the server"},
    {"pg_logdir_ls", "it lists folders on the server"},
    {"pg_current_logfile", "it reveals paths on the server"},
    {"lo_*", "it reads or writes large objects and files on the server"},
    {"loread", "it reads large objects"},
    {"lowrite", "it writes large objects"},
    {"dblink*", "it connects to other databases"},
    {"pg_sleep*", "it only waits, holding the connection"},
    {"set_config", "it changes the session's settings"},
    {"setseed", "it changes the session's state"},
    {"pg_terminate_backend", "it stops other sessions"},
    {"pg_cancel_backend", "it cancels other sessions' queries"},
    {"pg_signal_backend", "it signals other sessions"},
    {"pg_advisory_*", "it takes advisory locks that can outlive the query"},
    {"pg_try_advisory_*", "it takes advisory locks that can outlive the query"},
    {"nextval", "it advances a sequence, which is a write"},
    {"setval", "it sets a sequence, which is a write"},
    {"currval", "it reads this session's sequence state, which a read-only query never sets"},
    {"lastval", "it reads this session's sequence state, which a read-only query never sets"},
    {"txid_*", "it assigns or reads transaction ids"},
    {"pg_current_xact_id*", "it assigns or reads transaction ids"},
    {"pg_current_snapshot", "it reads transaction state"},
    {"pg_notify", "it sends notifications to other sessions"},
    {"query_to_xml*", "it runs SQL given as text, which the guard cannot check"},
    {"table_to_xml*", "it runs SQL the guard cannot check"},
    {"cursor_to_xml*", "it reads from a cursor the guard cannot check"},
    {"schema_to_xml*", "it runs SQL the guard cannot check"},
    {"database_to_xml*", "it runs SQL the guard cannot check"},
    {"ts_stat", "it runs SQL given as text, which the guard cannot check"},
    {"ts_rewrite", "it can run SQL given as text, which the guard cannot check"},
    {"pg_reload_conf", "it administers the server"},
    {"pg_rotate_logfile", "it administers the server"},
    {"pg_switch_wal", "it administers the server"},
    {"pg_promote", "it administers the server"},
    {"pg_backup_*", "it administers the server"},
    {"pg_start_backup", "it administers the server"},
    {"pg_stop_backup", "it administers the server"},
    {"pg_create_*", "it administers the server"},
    {"pg_drop_replication_slot", "it administers the server"},
    {"pg_copy_*_slot", "it administers the server"},
    {"pg_replication_*", "it administers replication"},
    {"pg_logical_*", "it administers replication"},
    {"pg_wal_replay_*", "it administers the server"},
    {"pg_export_snapshot", "it exports a snapshot to other sessions"},
    {"pg_stat_reset*", "it resets statistics"},
    {"pg_stat_statements_reset", "it resets statistics"},
    {"pg_import_system_collations", "it writes to the catalog"},
    {"pg_log_backend_memory_contexts", "it writes to the server log"},
    {"pg_prewarm", "it loads tables into the server's memory"},
    {"pg_sequence_last_value", "it reads sequence state"},
    {"pg_stat_get_activity", "it shows other sessions' queries, which can hold passwords"},
    {"pg_stat_get_backend_activity", "it shows other sessions' queries, which can hold passwords"},
    {"pg_show_all_settings", "it lists every setting, custom ones (which can hold secrets) and "
                             "server paths included; use current_setting('name')"},
    {"pg_config", "it reveals paths on the server"},
    {"pg_tablespace_location", "it reveals paths on the server"},
};

/* Ordinary read-only functions, by family (docs/guide/postgresql.md lists the
 * families). Names as the parser gives them: lower case, without schema;
 * pg_catalog.x counts as x. */
static const char *const TT_PG_ALLOWED[] = {
    /* aggregates */
    "count", "sum", "avg", "min", "max", "every", "bool_and", "bool_or", "bit_and", "bit_or",
    "bit_xor", "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg",
    "jsonb_object_agg", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
    "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept",
    "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "percentile_cont",
    "percentile_disc", "mode", "range_agg", "range_intersect_agg", "xmlagg",
    /* window functions */
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
    "first_value", "last_value", "nth_value",
    /* math */
    "abs", "cbrt", "ceil", "ceiling", "degrees", "div", "exp", "factorial", "floor", "gcd", "lcm",
    "ln", "log", "log10", "min_scale", "mod", "pi", "power", "pow", "radians", "round", "scale",
    "sign", "sqrt", "trim_scale", "trunc", "width_bucket", "random", "acos", "acosd", "asin",
    "asind", "atan", "atand", "atan2", "atan2d", "cos", "cosd", "cot", "cotd", "sin", "sind", "tan",
    "tand", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    /* strings and bytes */
    "ascii", "bit_length", "btrim", "char_length", "character_length", "chr", "concat",
    "concat_ws", "format", "initcap", "left", "length", "lower", "lpad", "ltrim", "md5",
    "normalize", "is_normalized", "octet_length", "overlay", "position", "quote_ident",
    "quote_literal", "quote_nullable", "regexp_count", "regexp_instr", "regexp_like",
    "regexp_match", "regexp_matches", "regexp_replace", "regexp_split_to_array",
    "regexp_split_to_table", "regexp_substr", "repeat", "replace", "reverse", "right", "rpad",
    "rtrim", "split_part", "starts_with", "string_to_array", "string_to_table", "strpos", "substr",
    "substring", "to_ascii", "to_hex", "translate", "unistr", "upper", "encode", "decode",
    "convert", "convert_from", "convert_to", "sha224", "sha256", "sha384", "sha512", "get_byte",
    "get_bit", "bit_count", "similar_to_escape", "like_escape", "similar_escape", "textlen",
    "gen_random_uuid",
    /* formatting */
    "to_char", "to_date", "to_number", "to_timestamp",
    /* dates and times */
    "age", "clock_timestamp", "date_bin", "date_part", "date_trunc", "extract",
    "isfinite", "justify_days", "justify_hours", "justify_interval", "make_date",
    "make_interval", "make_time", "make_timestamp", "make_timestamptz", "now",
    "statement_timestamp", "timeofday", "transaction_timestamp", "timezone", "overlaps",
    /* conditionals and comparisons */
    "num_nulls", "num_nonnulls",
    /* casts written as calls */
    "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar", "bool",
    "date", "time", "timetz", "timestamp", "timestamptz", "interval", "money", "name", "char",
    /* JSON */
    "to_json", "to_jsonb", "array_to_json", "row_to_json", "json_build_array",
    "jsonb_build_array", "json_build_object", "jsonb_build_object", "json_object",
    "jsonb_object", "json_array_length", "jsonb_array_length", "json_each", "jsonb_each",
    "json_each_text", "jsonb_each_text", "json_extract_path", "jsonb_extract_path",
    "json_extract_path_text", "jsonb_extract_path_text", "json_object_keys", "jsonb_object_keys",
    "json_populate_record", "jsonb_populate_record", "json_populate_recordset",
    "jsonb_populate_recordset", "json_to_record", "jsonb_to_record", "json_to_recordset",
    "jsonb_to_recordset", "json_array_elements", "jsonb_array_elements",
    "json_array_elements_text", "jsonb_array_elements_text", "json_typeof", "jsonb_typeof",
    "json_strip_nulls", "jsonb_strip_nulls", "jsonb_set", "jsonb_set_lax", "jsonb_insert",
    "jsonb_pretty", "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query",
    "jsonb_path_query_array", "jsonb_path_query_first", "jsonb_path_exists_tz",
    "jsonb_path_match_tz", "jsonb_path_query_tz", "jsonb_path_query_array_tz",
    "jsonb_path_query_first_tz",
    /* arrays */
    "array_append", "array_cat", "array_dims", "array_fill", "array_length", "array_lower",
    "array_ndims", "array_position", "array_positions", "array_prepend", "array_remove",
    "array_replace", "array_to_string", "array_upper", "cardinality", "trim_array", "unnest",
    "generate_subscripts",
    /* series (bounded by the backend's statement_timeout and row cap) */
    "generate_series",
    /* ranges */
    "isempty", "lower_inc", "upper_inc", "lower_inf", "upper_inf", "range_merge", "int4range",
    "int8range", "numrange", "tsrange", "tstzrange", "daterange", "multirange",
    /* full-text search */
    "to_tsvector", "to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery",
    "ts_rank", "ts_rank_cd", "ts_headline", "setweight", "strip", "tsvector_to_array",
    "array_to_tsvector", "numnode", "querytree", "ts_delete", "ts_filter", "get_current_ts_config",
    /* network addresses */
    "abbrev", "broadcast", "family", "host", "hostmask", "masklen", "netmask", "network",
    "set_masklen", "inet_merge", "inet_same_family",
    /* XML read from values (not from queries) */
    "xpath", "xpath_exists", "xml_is_well_formed", "xml_is_well_formed_document",
    "xml_is_well_formed_content", "xmlcomment",
    /* reading the catalog and the session (read-only) */
    "current_setting", "current_database", "current_schema", "current_schemas", "current_query",
    "version", "pg_typeof", "format_type", "pg_column_size", "obj_description", "col_description",
    "shobj_description", "pg_get_viewdef", "pg_get_constraintdef", "pg_get_indexdef",
    "pg_get_expr", "pg_get_functiondef", "pg_get_function_arguments", "pg_get_function_result",
    "pg_get_serial_sequence", "pg_get_userbyid", "pg_get_keywords", "pg_relation_size",
    "pg_table_size", "pg_indexes_size", "pg_total_relation_size", "pg_database_size",
    "pg_size_pretty", "pg_size_bytes", "pg_table_is_visible", "pg_type_is_visible",
    "pg_function_is_visible", "to_regclass", "to_regtype", "to_regproc", "to_regprocedure",
    "to_regnamespace", "to_regrole", "has_table_privilege", "has_column_privilege",
    "has_schema_privilege", "has_database_privilege", "has_function_privilege",
    "pg_has_role", "pg_backend_pid", "pg_postmaster_start_time", "pg_conf_load_time",
    "pg_is_in_recovery", "pg_encoding_to_char", "pg_client_encoding", "inet_server_port",
    "row_security_active", "pg_collation_for", "pg_get_partkeydef", "pg_partition_tree",
    "pg_partition_root", "pg_partition_ancestors",
};

/* True when name matches pattern (a trailing '*' matches any rest). */
static bool tt_pg_name_matches(const char *pattern, const char *name) {
  size_t n = strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, name, n - 1) == 0;
  return strcmp(pattern, name) == 0;
}

const char *tt_pg_guard_denied_why(const char *name) {
  for (size_t i = 0; i < sizeof TT_PG_DENIED / sizeof TT_PG_DENIED[0]; i++)
    if (tt_pg_name_matches(TT_PG_DENIED[i].name, name)) return TT_PG_DENIED[i].why;
  return NULL;
}

static bool tt_pg_builtin_allowed(const char *name) {
  for (size_t i = 0; i < sizeof TT_PG_ALLOWED / sizeof TT_PG_ALLOWED[0]; i++)
    if (strcmp(TT_PG_ALLOWED[i], name) == 0) return true;
  return false;
}

/* qualified is "schema.name" or "name" as written. */
static bool tt_pg_configured(const tt_pg_guard_opts *o, const char *qualified) {
  for (size_t i = 0; o && i < o->nallow_functions; i++)
    if (o->allow_functions[i] && strcmp(o->allow_functions[i], qualified) == 0) return true;
  return false;
}

/* ---- walking the tree ---------------------------------------------------- */

typedef struct tt_pg_walk {
  const tt_pg_guard_opts *opts;
  tt_error *err;
  bool refused;
  tt_pg_refs *refs; /* NULL: not collected */
} tt_pg_walk;

/* ---- what the server resolves: collected for the catalog check ----------- */

void tt_pg_refs_free(tt_pg_refs *refs) {
  if (!refs) return;
  for (size_t i = 0; i < refs->n; i++) {
    free(refs->v[i].schema);
    free(refs->v[i].name);
  }
  free(refs->v);
  memset(refs, 0, sizeof *refs);
}

static bool tt_pg_same(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Names one query may have the catalog check look up: a bound on its work
 * (and on the linear search below) that no real query comes near. */
#define TT_PG_MAX_REFS 4096

static void tt_pg_ref_add(tt_pg_walk *w, tt_pg_ref_kind kind, const char *schema,
                          const char *name, int nargs) {
  tt_pg_refs *r = w->refs;
  if (!r || !name || w->refused) return;
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].kind == (char)kind && r->v[i].nargs == nargs && tt_pg_same(r->v[i].schema, schema) &&
        strcmp(r->v[i].name, name) == 0)
      return;
  if (r->n >= TT_PG_MAX_REFS) {
    w->refused = true;
    if (w->err)
      tt_db_set_error(w->err, TT_ERR_LIMIT,
                      "the SQL names more than %d functions, operators, relations and "
                      "qualified columns to check; write it with fewer",
                      TT_PG_MAX_REFS);
    return;
  }
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->v = tt_xrealloc(r->v, r->cap * sizeof *r->v);
  }
  r->v[r->n++] = (tt_pg_ref){.kind = (char)kind, .schema = schema ? tt_xstrdup(schema) : NULL,
                             .name = tt_xstrdup(name), .nargs = nargs};
}

static bool tt_pg_trusted_schema(const tt_pg_guard_opts *o, const char *schema) {
  for (size_t i = 0; o && schema && i < o->ntrust_schemas; i++)
    if (o->trust_schemas[i] && strcmp(o->trust_schemas[i], schema) == 0) return true;
  return false;
}

static void tt_pg_refuse(tt_pg_walk *w, tt_db_refusal r, const char *fmt, ...) TT_PRINTF(3, 4);
static void tt_pg_refuse(tt_pg_walk *w, tt_db_refusal r, const char *fmt, ...) {
  if (w->refused) return; /* the first reason found is the one given */
  w->refused = true;
  if (!w->err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(w->err, TT_ERR_REFUSED, fmt, ap);
  va_end(ap);
  w->err->reason = (int)r;
}

/* The sval of a {"String":{"sval":...}} node, or NULL. */
static const char *tt_pg_string_node(json_t *n) {
  return json_string_value(json_object_get(json_object_get(n, "String"), "sval"));
}

/* The arguments a FuncCall passes, as the catalog check counts them: -1
 * when any number of a function's parameters may match (VARIADIC, an
 * ordered-set aggregate's WITHIN GROUP). */
static int tt_pg_call_nargs(json_t *call) {
  if (!call) return -1;
  if (json_is_true(json_object_get(call, "agg_star"))) return 0;
  if (json_is_true(json_object_get(call, "func_variadic")) ||
      json_is_true(json_object_get(call, "agg_within_group")))
    return -1;
  return (int)json_array_size(json_object_get(call, "args"));
}

/* A function call (call: the FuncCall node, for its arguments; NULL for a
 * TABLESAMPLE method and the like). */
static void tt_pg_check_funcname(tt_pg_walk *w, json_t *names, const char *what, json_t *call) {
  size_t n = json_array_size(names);
  const char *schema = NULL, *name = NULL;
  if (n == 1) {
    name = tt_pg_string_node(json_array_get(names, 0));
  } else if (n == 2) {
    schema = tt_pg_string_node(json_array_get(names, 0));
    name = tt_pg_string_node(json_array_get(names, 1));
  }
  if (!name || (n == 2 && !schema)) {
    tt_pg_refuse(w, TT_REFUSE_FUNCTION,
                 "a %s with a name of %zu parts is not allowed: call functions by their "
                 "name or as schema.name",
                 what, n);
    return;
  }
  const char *written = schema; /* pg_catalog.x is looked up in pg_catalog only */
  if (schema && strcmp(schema, "pg_catalog") == 0) schema = NULL;
  const char *why = tt_pg_guard_denied_why(name);
  if (why) {
    tt_pg_refuse(w, TT_REFUSE_FUNCTION, "%s is not allowed: %s", name, why);
    return;
  }
  int nargs = tt_pg_call_nargs(call);
  if (schema) {
    char q[256];
    snprintf(q, sizeof q, "%s.%s", schema, name);
    if (tt_pg_configured(w->opts, q) || tt_pg_trusted_schema(w->opts, schema)) {
      tt_pg_ref_add(w, TT_PG_REF_CALL, schema, name, nargs);
      return;
    }
    tt_pg_refuse(w, TT_REFUSE_FUNCTION,
                 "%s.%s is not allowed: only built-in (pg_catalog) functions and those on the "
                 "configured allow-list run; call a built-in function instead, or trust the "
                 "schema's functions with --trust-functions %s",
                 schema, name, schema);
    return;
  }
  if (tt_pg_builtin_allowed(name) || tt_pg_configured(w->opts, name)) {
    /* which function the name is decided by the server: the catalog check
     * looks for one of the database's that could be chosen instead */
    tt_pg_ref_add(w, TT_PG_REF_CALL, written, name, nargs);
    return;
  }
  if (w->opts && w->opts->ntrust_schemas > 0 && !written) {
    tt_pg_ref_add(w, TT_PG_REF_TRUSTED_CALL, NULL, name, nargs);
    return;
  }
  tt_pg_refuse(w, TT_REFUSE_FUNCTION,
               "%s is not allowed: it is not on tabletalk's list of read-only functions "
               "(docs/guide/postgresql.md, \"The guard\"); use an ordinary built-in function instead",
               name);
}

/* Settings that name paths on the server, or hold commands and connection
 * strings: current_setting of these is refused like pg_current_logfile. */
static const char *const TT_PG_PATH_SETTINGS[] = {
    "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file",
    "log_directory", "log_filename", "unix_socket_directories", "ssl_cert_file", "ssl_key_file",
    "ssl_ca_file", "ssl_crl_file", "ssl_crl_dir", "ssl_dh_params_file", "ssl_passphrase_command",
    "krb_server_keyfile", "dynamic_library_path", "archive_command", "archive_library",
    "archive_cleanup_command", "restore_command", "recovery_end_command", "primary_conninfo",
    "shared_preload_libraries", "session_preload_libraries", "local_preload_libraries",
    "stats_temp_directory",
};

/* current_setting('name'): a custom setting (app.api_key: a name with a
 * dot) can hold a secret the database's owner set (ALTER DATABASE ... SET),
 * and some settings show paths on the server; a name the query computes
 * could be either. Setting names are matched without regard to case, as
 * the server does. */
static void tt_pg_check_setting_arg(tt_pg_walk *w, json_t *call) {
  json_t *arg = json_array_get(json_object_get(call, "args"), 0);
  const char *name = json_string_value(
      json_object_get(json_object_get(json_object_get(arg, "A_Const"), "sval"), "sval"));
  if (!name) {
    tt_pg_refuse(w, TT_REFUSE_INTERNALS,
                 "current_setting of a name the query computes is not allowed: custom "
                 "settings can hold secrets; name the setting as a string, "
                 "current_setting('TimeZone')");
    return;
  }
  if (strchr(name, '.')) {
    tt_pg_refuse(w, TT_REFUSE_INTERNALS,
                 "current_setting('%s') is not readable here: a custom setting (a name with a "
                 "dot) can hold a secret",
                 name);
    return;
  }
  for (size_t i = 0; i < sizeof TT_PG_PATH_SETTINGS / sizeof TT_PG_PATH_SETTINGS[0]; i++) {
    if (strcasecmp(name, TT_PG_PATH_SETTINGS[i]) == 0) {
      tt_pg_refuse(w, TT_REFUSE_INTERNALS,
                   "current_setting('%s') is not readable here: it reveals paths, commands or "
                   "connection strings of the server",
                   name);
      return;
    }
  }
}

/* "Track" or "public"."Track" for a RangeVar, into buf. */
static const char *tt_pg_relname(json_t *rangevar, char *buf, size_t n) {
  const char *rel = json_string_value(json_object_get(rangevar, "relname"));
  const char *sch = json_string_value(json_object_get(rangevar, "schemaname"));
  if (!rel) snprintf(buf, n, "a table");
  else if (sch) snprintf(buf, n, "\"%s\".\"%s\"", sch, rel);
  else snprintf(buf, n, "\"%s\"", rel);
  return buf;
}

/* CreateTableAsStmt -> "CREATE TABLE AS": the node's name in SQL words. */
static void tt_pg_stmt_words(const char *key, char *buf, size_t n) {
  static const struct {
    const char *key, *words;
  } named[] = {
      {"IndexStmt", "CREATE INDEX"},        {"ViewStmt", "CREATE VIEW"},
      {"RuleStmt", "CREATE RULE"},          {"DefineStmt", "CREATE (aggregate, operator, type)"},
      {"CreateTrigStmt", "CREATE TRIGGER"}, {"GrantStmt", "GRANT or REVOKE"},
      {"GrantRoleStmt", "GRANT or REVOKE of a role"}, {"RenameStmt", "ALTER ... RENAME"},
      {"VacuumStmt", "VACUUM or ANALYZE"},  {"CreatedbStmt", "CREATE DATABASE"},
      {"DropdbStmt", "DROP DATABASE"},      {"CreateSeqStmt", "CREATE SEQUENCE"},
      {"AlterSeqStmt", "ALTER SEQUENCE"},   {"CreateStmt", "CREATE TABLE"},
      {"CreatePLangStmt", "CREATE LANGUAGE"}, {"SecLabelStmt", "SECURITY LABEL"},
      {"CompositeTypeStmt", "CREATE TYPE"}, {"CreateEnumStmt", "CREATE TYPE AS ENUM"},
  };
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
    if (strcmp(named[i].key, key) == 0) {
      snprintf(buf, n, "%s", named[i].words);
      return;
    }
  }
  size_t o = 0, klen = strlen(key);
  if (klen > 4 && strcmp(key + klen - 4, "Stmt") == 0) klen -= 4;
  for (size_t i = 0; i < klen && o + 2 < n; i++) {
    char c = key[i];
    if (i > 0 && c >= 'A' && c <= 'Z') buf[o++] = ' ';
    buf[o++] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  buf[o] = '\0';
}

/* "OBJECT_TABLE" -> "TABLE". */
static void tt_pg_enum_words(const char *v, const char *prefix, char *buf, size_t n) {
  size_t pl = strlen(prefix), o = 0;
  if (!v) v = "";
  if (strncmp(v, prefix, pl) == 0) v += pl;
  for (; *v && o + 1 < n; v++) buf[o++] = *v == '_' ? ' ' : *v;
  buf[o] = '\0';
}

static bool tt_pg_is_schema_stmt(const char *key) {
  static const char *const others[] = {
      "IndexStmt", "ViewStmt", "RuleStmt", "DefineStmt", "GrantStmt", "GrantRoleStmt",
      "CommentStmt", "SecLabelStmt", "CompositeTypeStmt", "RenameStmt", "ClusterStmt",
      "ReindexStmt", "VacuumStmt", "RefreshMatViewStmt", "ReassignOwnedStmt",
      "ImportForeignSchemaStmt", "CreatedbStmt", "DropdbStmt", "AlterDefaultPrivilegesStmt",
  };
  if (strncmp(key, "Create", 6) == 0 || strncmp(key, "Alter", 5) == 0 ||
      strncmp(key, "Drop", 4) == 0)
    return true;
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (strcmp(others[i], key) == 0) return true;
  return false;
}

/* Refuses a statement other than SelectStmt found at key (node is its
 * body); nested: inside the query (a WITH, a subquery). */
static void tt_pg_refuse_stmt(tt_pg_walk *w, const char *key, json_t *node, bool nested) {
  char rel[200], words[120];
  const char *where = nested ? " (a data-modifying WITH query)" : "";
  const char *verb = NULL;
  if (strcmp(key, "InsertStmt") == 0) verb = "INSERT into";
  else if (strcmp(key, "UpdateStmt") == 0) verb = "UPDATE on";
  else if (strcmp(key, "DeleteStmt") == 0) verb = "DELETE on";
  else if (strcmp(key, "MergeStmt") == 0) verb = "MERGE into";
  if (verb) {
    tt_pg_refuse(w, TT_REFUSE_WRITE, "writes are not allowed: %s %s%s; only reads run here", verb,
                 tt_pg_relname(json_object_get(node, "relation"), rel, sizeof rel), where);
    return;
  }
  if (strcmp(key, "TruncateStmt") == 0) {
    tt_pg_refuse(w, TT_REFUSE_WRITE, "writes are not allowed: TRUNCATE empties tables; "
                                     "only reads run here");
    return;
  }
  if (strcmp(key, "CopyStmt") == 0) {
    if (json_is_true(json_object_get(node, "is_from")))
      tt_pg_refuse(w, TT_REFUSE_WRITE, "writes are not allowed: COPY ... FROM loads rows into %s",
                   tt_pg_relname(json_object_get(node, "relation"), rel, sizeof rel));
    else if (json_is_true(json_object_get(node, "is_program")))
      tt_pg_refuse(w, TT_REFUSE_OTHER,
                   "COPY ... PROGRAM is not allowed: it runs a program on the server; "
                   "send the SELECT itself");
    else if (json_object_get(node, "filename"))
      tt_pg_refuse(w, TT_REFUSE_OTHER,
                   "COPY ... TO a file is not allowed: it writes a file on the server; "
                   "send the SELECT itself");
    else
      tt_pg_refuse(w, TT_REFUSE_OTHER, "COPY is not allowed: send the SELECT itself and "
                                       "tabletalk returns its rows");
    return;
  }
  if (strcmp(key, "DropStmt") == 0) {
    tt_pg_enum_words(json_string_value(json_object_get(node, "removeType")), "OBJECT_", words,
                     sizeof words);
    tt_pg_refuse(w, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP %s; only reads run "
                                      "here",
                 words);
    return;
  }
  if (tt_pg_is_schema_stmt(key)) {
    tt_pg_stmt_words(key, words, sizeof words);
    tt_pg_refuse(w, TT_REFUSE_SCHEMA, "schema changes are not allowed: %s; only reads run here",
                 words);
    return;
  }
  if (strcmp(key, "TransactionStmt") == 0) {
    tt_pg_enum_words(json_string_value(json_object_get(node, "kind")), "TRANS_STMT_", words,
                     sizeof words);
    if (strcmp(words, "PREPARE") == 0) snprintf(words, sizeof words, "PREPARE TRANSACTION");
    tt_pg_refuse(w, TT_REFUSE_TRANSACTION,
                 "transaction control is not allowed (%s): tabletalk runs each query in a "
                 "read-only transaction of its own and rolls it back; send only the SELECT",
                 words);
    return;
  }
  if (strcmp(key, "ExplainStmt") == 0) {
    tt_pg_refuse(w, TT_REFUSE_EXPLAIN, "EXPLAIN is not allowed (EXPLAIN ANALYZE runs the "
                                       "statement): send the SELECT itself");
    return;
  }
  if (strcmp(key, "CallStmt") == 0) {
    tt_pg_refuse(w, TT_REFUSE_FUNCTION, "CALL is not allowed: a procedure can write or commit; "
                                        "only SELECT runs here");
    return;
  }
  if (strcmp(key, "DoStmt") == 0) {
    tt_pg_refuse(w, TT_REFUSE_FUNCTION, "DO is not allowed: it runs a block of code on the "
                                        "server; only SELECT runs here");
    return;
  }
  if (strcmp(key, "VariableSetStmt") == 0) {
    const char *kind = json_string_value(json_object_get(node, "kind"));
    bool reset = kind && strncmp(kind, "VAR_RESET", 9) == 0;
    tt_pg_refuse(w, TT_REFUSE_OTHER,
                 "%s is not allowed: it changes the session's settings, and tabletalk sets "
                 "its own limits; send only the SELECT",
                 reset ? "RESET" : "SET");
    return;
  }
  static const struct {
    const char *key, *msg;
  } others[] = {
      {"VariableShowStmt", "SHOW is not allowed here: use SELECT current_setting('name')"},
      {"ListenStmt", "LISTEN is not allowed: it waits for other sessions' notifications"},
      {"UnlistenStmt", "UNLISTEN is not allowed: only SELECT runs here"},
      {"NotifyStmt", "NOTIFY is not allowed: it sends notifications to other sessions"},
      {"PrepareStmt", "PREPARE is not allowed: send the SELECT itself"},
      {"ExecuteStmt", "EXECUTE is not allowed: send the SELECT itself"},
      {"DeallocateStmt", "DEALLOCATE is not allowed: send only a SELECT"},
      {"DeclareCursorStmt", "DECLARE is not allowed: tabletalk fetches the rows itself; send "
                            "the SELECT itself"},
      {"FetchStmt", "FETCH and MOVE are not allowed: send the SELECT itself"},
      {"ClosePortalStmt", "CLOSE is not allowed: send only a SELECT"},
      {"LockStmt", "LOCK is not allowed: it takes table locks; only SELECT runs here"},
      {"CheckPointStmt", "CHECKPOINT is not allowed: it administers the server"},
      {"DiscardStmt", "DISCARD is not allowed: it resets the session"},
      {"LoadStmt", "LOAD is not allowed: it loads a library into the server"},
      {"ConstraintsSetStmt", "SET CONSTRAINTS is not allowed: only SELECT runs here"},
  };
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    if (strcmp(others[i].key, key) == 0) {
      tt_pg_refuse(w, TT_REFUSE_OTHER, "%s", others[i].msg);
      return;
    }
  }
  tt_pg_stmt_words(key, words, sizeof words);
  tt_pg_refuse(w, TT_REFUSE_OTHER,
               "%s is not allowed: only SELECT, VALUES, TABLE and WITH of selects run here",
               words);
}

static void tt_pg_walk_value(tt_pg_walk *w, json_t *v);

/* Field names (ColumnRef, A_Indirection) from the first'th on: x.f is
 * PostgreSQL's column notation for f(x) when x has no column f (also for
 * a value that is not a row: (x).f). A name that is a denied function is
 * refused at once (whole names only, so that a column such as lo_id stays
 * usable); every name goes to the catalog check, which looks for a
 * function of one argument that could be called so. */
static void tt_pg_check_field_names(tt_pg_walk *w, json_t *list, size_t first) {
  for (size_t i = first; i < json_array_size(list); i++) {
    const char *s = tt_pg_string_node(json_array_get(list, i));
    if (!s) continue;
    for (size_t d = 0; d < sizeof TT_PG_DENIED / sizeof TT_PG_DENIED[0]; d++) {
      if (strcmp(TT_PG_DENIED[d].name, s) == 0) {
        tt_pg_refuse(w, TT_REFUSE_FUNCTION, "%s is not allowed: %s", s, TT_PG_DENIED[d].why);
        return;
      }
    }
    tt_pg_ref_add(w, TT_PG_REF_FIELD, NULL, s, 1);
  }
}

/* An operator's name as written: OPERATOR(schema.op) runs whatever that
 * schema defines, so only pg_catalog's, a trusted schema's (or an
 * unqualified one) may. Where an operator is named: A_Expr's name,
 * SubLink's operName (x OPERATOR(s.=) ANY (SELECT ...)), SortBy's useOp
 * (ORDER BY x USING OPERATOR(s.<), also in aggregates and windows). The
 * name goes to the catalog check. */
static void tt_pg_check_opname(tt_pg_walk *w, json_t *name) {
  size_t n = json_array_size(name);
  if (n == 0) return;
  const char *op = tt_pg_string_node(json_array_get(name, n - 1));
  const char *s = n > 1 ? tt_pg_string_node(json_array_get(name, 0)) : NULL;
  if (n > 1 && (!s || n > 2 || (strcmp(s, "pg_catalog") != 0 && !tt_pg_trusted_schema(w->opts, s)))) {
    tt_pg_refuse(w, TT_REFUSE_FUNCTION,
                 "OPERATOR(%s.%s) is not allowed: only built-in operators run; write the "
                 "operator without a schema",
                 s ? s : "?", op ? op : "?");
    return;
  }
  tt_pg_ref_add(w, TT_PG_REF_OPERATOR, s, op, -1);
}

/* The operators an A_Expr uses: its name, or for BETWEEN the comparisons
 * the server writes it as. */
static void tt_pg_check_aexpr(tt_pg_walk *w, json_t *node) {
  const char *kind = json_string_value(json_object_get(node, "kind"));
  if (kind && strncmp(kind, "AEXPR_BETWEEN", 13) == 0) {
    tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, ">=", -1);
    tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, "<=", -1);
  } else if (kind && strncmp(kind, "AEXPR_NOT_BETWEEN", 17) == 0) {
    tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, "<", -1);
    tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, ">", -1);
  } else {
    tt_pg_check_opname(w, json_object_get(node, "name"));
  }
}

/* Catalog relations that hold secrets, show other sessions' queries or
 * read server files, refused though only a superuser can read some of
 * them: a superuser's URI should not let a question show password hashes,
 * a foreign server's password or pg_hba.conf. */
static const struct {
  const char *nsp, *name, *why;
} TT_PG_SECRET_RELS[] = {
    {"pg_catalog", "pg_authid", "it holds the roles' password hashes"},
    {"pg_catalog", "pg_shadow", "it holds the roles' password hashes"},
    {"pg_catalog", "pg_user_mapping", "it holds passwords for foreign servers"},
    {"pg_catalog", "pg_user_mappings", "it holds passwords for foreign servers"},
    {"information_schema", "user_mapping_options", "it holds passwords for foreign servers"},
    {"information_schema", "user_mappings", "it holds passwords for foreign servers"},
    {"information_schema", "_pg_user_mappings", "it holds passwords for foreign servers"},
    {"pg_catalog", "pg_subscription", "its connection strings can hold passwords"},
    {"pg_catalog", "pg_file_settings", "it reads the server's configuration files"},
    {"pg_catalog", "pg_hba_file_rules", "it reads the server's pg_hba.conf"},
    {"pg_catalog", "pg_ident_file_mappings", "it reads the server's pg_ident.conf"},
    {"pg_catalog", "pg_stat_activity", "it shows other sessions' queries, which can hold passwords"},
    {"pg_catalog", "pg_settings", "it lists every setting, custom ones (which can hold secrets) "
                                  "and server paths included; use current_setting('name')"},
    {"pg_catalog", "pg_db_role_setting", "it holds the settings of databases and roles, which "
                                         "can hold secrets"},
    {"pg_catalog", "pg_roles", "its rolconfig shows the roles' settings, which can hold secrets; "
                               "current_user and pg_get_userbyid(oid) name roles"},
    {"pg_catalog", "pg_user", "its useconfig shows the roles' settings, which can hold secrets; "
                              "current_user and pg_get_userbyid(oid) name roles"},
    {"pg_catalog", "pg_largeobject", "it holds large objects, which lo_* functions guard"},
    {"pg_catalog", "pg_largeobject_metadata", "it describes large objects, which lo_* functions "
                                              "guard"},
    {"pg_catalog", "pg_config", "it reveals paths on the server"},
};

const char *tt_pg_guard_secret_why(const char *nsp, const char *rel) {
  for (size_t i = 0; nsp && rel && i < sizeof TT_PG_SECRET_RELS / sizeof TT_PG_SECRET_RELS[0]; i++)
    if (strcmp(rel, TT_PG_SECRET_RELS[i].name) == 0 && strcmp(nsp, TT_PG_SECRET_RELS[i].nsp) == 0)
      return TT_PG_SECRET_RELS[i].why;
  return NULL;
}

/* A relation read: refused when it is a secret one of a system schema
 * (named bare: the system schemas come first in the search_path; a table
 * of the same name elsewhere is refused too, which is the safe side), else
 * handed to the catalog check, which finds what reading it runs. */
static void tt_pg_check_relation(tt_pg_walk *w, json_t *rangevar) {
  const char *rel = json_string_value(json_object_get(rangevar, "relname"));
  const char *sch = json_string_value(json_object_get(rangevar, "schemaname"));
  if (!rel) return;
  for (size_t i = 0; i < sizeof TT_PG_SECRET_RELS / sizeof TT_PG_SECRET_RELS[0]; i++) {
    if (strcmp(rel, TT_PG_SECRET_RELS[i].name) == 0 &&
        (!sch || strcmp(sch, TT_PG_SECRET_RELS[i].nsp) == 0)) {
      tt_pg_refuse(w, TT_REFUSE_INTERNALS, "%s is not readable here: %s", rel, TT_PG_SECRET_RELS[i].why);
      return;
    }
  }
  tt_pg_ref_add(w, TT_PG_REF_RELATION, sch, rel, -1);
}

/* A type named in a cast or a column definition list: a type of the
 * database's may run its own functions (a domain's check). */
static void tt_pg_check_typename(tt_pg_walk *w, json_t *typename) {
  json_t *names = json_object_get(typename, "names");
  size_t n = json_array_size(names);
  if (n == 0) return;
  const char *name = tt_pg_string_node(json_array_get(names, n - 1));
  const char *schema = n > 1 ? tt_pg_string_node(json_array_get(names, n - 2)) : NULL;
  tt_pg_ref_add(w, TT_PG_REF_TYPE, schema, name, -1);
}

/* The operators a node implies without naming them: x IN (SELECT ...) and
 * = ANY without a name, CASE x WHEN v, JOIN ... USING and NATURAL JOIN
 * compare with =. */
static void tt_pg_implied_operators(tt_pg_walk *w, const char *key, json_t *v) {
  if (strcmp(key, "SubLink") == 0) {
    json_t *op = json_object_get(v, "operName");
    const char *type = json_string_value(json_object_get(v, "subLinkType"));
    if (json_array_size(op) > 0) tt_pg_check_opname(w, op);
    else if (type && (strcmp(type, "ANY_SUBLINK") == 0 || strcmp(type, "ALL_SUBLINK") == 0))
      tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, "=", -1);
  } else if (strcmp(key, "CaseExpr") == 0) {
    if (json_object_get(v, "arg")) tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, "=", -1);
  } else if (strcmp(key, "JoinExpr") == 0) {
    if (json_array_size(json_object_get(v, "usingClause")) > 0 ||
        json_is_true(json_object_get(v, "isNatural")))
      tt_pg_ref_add(w, TT_PG_REF_OPERATOR, NULL, "=", -1);
  }
}

/* One node {"Kind": {...}} or a plain object of fields: checks what it is,
 * then everything below it. */
static void tt_pg_walk_object(tt_pg_walk *w, json_t *obj) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    if (w->refused) return;
    size_t klen = strlen(key);
    if (strcmp(key, "FuncCall") == 0) {
      json_t *fn = json_object_get(v, "funcname");
      tt_pg_check_funcname(w, fn, "function", v);
      const char *last = tt_pg_string_node(json_array_get(fn, json_array_size(fn) - 1));
      const char *first = tt_pg_string_node(json_array_get(fn, 0));
      if (!w->refused && last && strcmp(last, "current_setting") == 0 &&
          (json_array_size(fn) == 1 || (first && strcmp(first, "pg_catalog") == 0)))
        tt_pg_check_setting_arg(w, v);
    } else if (strcmp(key, "intoClause") == 0) {
      char rel[200];
      tt_pg_refuse(w, TT_REFUSE_WRITE,
                   "writes are not allowed: SELECT ... INTO creates the table %s; remove INTO",
                   tt_pg_relname(json_object_get(v, "rel"), rel, sizeof rel));
    } else if (strcmp(key, "lockingClause") == 0) {
      json_t *lc = json_object_get(json_array_get(v, 0), "LockingClause");
      const char *st = json_string_value(json_object_get(lc, "strength"));
      const char *words = "UPDATE";
      if (st && strcmp(st, "LCS_FORSHARE") == 0) words = "SHARE";
      else if (st && strcmp(st, "LCS_FORKEYSHARE") == 0) words = "KEY SHARE";
      else if (st && strcmp(st, "LCS_FORNOKEYUPDATE") == 0) words = "NO KEY UPDATE";
      tt_pg_refuse(w, TT_REFUSE_OTHER,
                   "SELECT ... FOR %s takes row locks: remove the FOR %s clause", words, words);
    } else if (strcmp(key, "RangeTableSample") == 0) {
      json_t *m = json_object_get(v, "method");
      const char *name = json_array_size(m) == 1 ? tt_pg_string_node(json_array_get(m, 0)) : NULL;
      if (!name || (strcmp(name, "bernoulli") != 0 && strcmp(name, "system") != 0))
        tt_pg_refuse(w, TT_REFUSE_FUNCTION,
                     "TABLESAMPLE %s is not allowed: use TABLESAMPLE BERNOULLI or SYSTEM",
                     name ? name : "(qualified)");
    } else if (strcmp(key, "A_Expr") == 0) {
      tt_pg_check_aexpr(w, v);
    } else if (strcmp(key, "RangeVar") == 0) {
      tt_pg_check_relation(w, v);
    } else if (strcmp(key, "TypeName") == 0 || strcmp(key, "typeName") == 0) {
      tt_pg_check_typename(w, v);
    } else if (strcmp(key, "SubLink") == 0 || strcmp(key, "CaseExpr") == 0 ||
               strcmp(key, "JoinExpr") == 0) {
      tt_pg_implied_operators(w, key, v);
    } else if (strcmp(key, "SortBy") == 0) {
      tt_pg_check_opname(w, json_object_get(v, "useOp"));
    } else if (strcmp(key, "ParamRef") == 0) {
      /* $1 has no value: tabletalk sends none (the server would fail it as
       * a protocol error, which reads like a lost connection) */
      w->refused = true;
      if (w->err)
        tt_db_set_error(w->err, TT_ERR_SQL,
                        "$%lld is a parameter, and a query here has no parameter values: write "
                        "the value into the SQL",
                        (long long)json_integer_value(json_object_get(v, "number")));
    } else if (strcmp(key, "ColumnRef") == 0) {
      tt_pg_check_field_names(w, json_object_get(v, "fields"), 1);
    } else if (strcmp(key, "A_Indirection") == 0) {
      tt_pg_check_field_names(w, json_object_get(v, "indirection"), 0);
    } else if (klen > 4 && strcmp(key + klen - 4, "Stmt") == 0 && strcmp(key, "SelectStmt") != 0 &&
               json_is_object(v)) {
      tt_pg_refuse_stmt(w, key, v, true);
    }
    if (w->refused) return;
    tt_pg_walk_value(w, v);
  }
}

static void tt_pg_walk_value(tt_pg_walk *w, json_t *v) {
  if (json_is_object(v)) {
    tt_pg_walk_object(w, v);
  } else if (json_is_array(v)) {
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
      if (w->refused) return;
      tt_pg_walk_value(w, e);
    }
  }
}

/* ---- the check ------------------------------------------------------------ */

bool tt_pg_guard_check(const char *sql, size_t len, const tt_pg_guard_opts *opts,
                       tt_error *err) {
  return tt_pg_guard_collect(sql, len, opts, NULL, err);
}

bool tt_pg_guard_collect(const char *sql, size_t len, const tt_pg_guard_opts *opts,
                         tt_pg_refs *refs, tt_error *err) {
  if (!tt_db_check_sql_text(sql, len, false, err)) return false;
  pthread_once(&tt_pgq_once, tt_pgq_load);
  if (!tt_pgq_ready) {
    tt_db_set_error(err, TT_ERR_IO, "%s", tt_pgq_error);
    return false;
  }
  char *text = malloc(len + 1);
  if (!text) {
    tt_db_set_error(err, TT_ERR_LIMIT, "out of memory while checking the SQL");
    return false;
  }
  memcpy(text, sql, len);
  text[len] = '\0';
  PgQueryParseResult pr = tt_pgq_ready->parse(text);
  free(text);
  if (pr.error) {
    const char *m = pr.error->message ? pr.error->message : "syntax error";
    if (strstr(m, "stack depth") || strstr(m, "too deeply") || strstr(m, "memory exhausted"))
      tt_db_set_error(err, TT_ERR_LIMIT, "the SQL is nested too deeply to check (%s); "
                                            "write it with fewer nested parts", m);
    else if (pr.error->cursorpos > 0)
      tt_db_set_error(err, TT_ERR_SQL, "%s (at character %d)", m, pr.error->cursorpos);
    else
      tt_db_set_error(err, TT_ERR_SQL, "%s", m);
    tt_pgq_ready->free_parse_result(pr);
    return false;
  }
  json_error_t jerr;
  json_t *tree = pr.parse_tree ? json_loads(pr.parse_tree, 0, &jerr) : NULL;
  tt_pgq_ready->free_parse_result(pr);
  if (!tree) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "the SQL is nested too deeply to check (%s); write it with fewer nested "
                    "parts",
                    jerr.text);
    return false;
  }
  tt_pg_walk w = {.opts = opts, .err = err, .refused = false, .refs = refs};
  json_t *stmts = json_object_get(tree, "stmts");
  size_t n = json_array_size(stmts);
  if (n == 0) {
    tt_pg_refuse(&w, TT_REFUSE_EMPTY, "no SQL statement: the text holds only blanks or comments");
  } else if (n > 1) {
    tt_pg_refuse(&w, TT_REFUSE_MULTIPLE,
                 "only one statement is allowed, and this text holds %zu; send one SELECT at a "
                 "time",
                 n);
  } else {
    json_t *stmt = json_object_get(json_array_get(stmts, 0), "stmt");
    const char *key = NULL;
    json_t *body = NULL;
    if (json_object_size(stmt) == 1) {
      void *it = json_object_iter(stmt);
      key = json_object_iter_key(it);
      body = json_object_iter_value(it);
    }
    if (!key) tt_pg_refuse(&w, TT_REFUSE_OTHER, "the statement could not be checked");
    else if (strcmp(key, "SelectStmt") != 0) tt_pg_refuse_stmt(&w, key, body, false);
    else tt_pg_walk_value(&w, body);
  }
  json_decref(tree);
  return !w.refused;
}
