/* target.c — the database target: what the user named (a SQLite file, a
 * CSV file or folder, a postgres://, mysql:// or mariadb:// URI), worked
 * out once, from the
 * string alone (and stat/realpath, and the first bytes of a file whose
 * name does not say what it holds), into the kind, its engine, what is
 * opened and what people are shown. The only place of the layer that
 * looks at the string: engines read the parsed target. A URI's password
 * never leaves given and path: shown has it, in every form it takes, and
 * PGPASSWORD's masked as "***" (secrets.c). */
#include "db/engine.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Targets named by a URI: each kind's schemes (any case). */
static const struct tt_db_scheme {
  const char *prefix;
  tt_db_kind kind;
} tt_db_schemes[] = {
    {"postgres://", TT_DB_KIND_POSTGRES},
    {"postgresql://", TT_DB_KIND_POSTGRES},
    {"mysql://", TT_DB_KIND_MYSQL},
    {"mariadb://", TT_DB_KIND_MYSQL},
};

/* Targets named by a file: each kind's name endings (any case). A file
 * named *.txt, *.dat or without an extension that holds text is CSV too
 * (tt_db_is_text_file); any other file is a SQLite database, and a folder
 * holds CSV files, or Parquet and JSON files for DuckDB (tt_db_folder_kind). */
static const struct tt_db_suffix {
  const char *suffix;
  tt_db_kind kind;
} tt_db_suffixes[] = {
    {".csv", TT_DB_KIND_CSV},
    {".tsv", TT_DB_KIND_CSV},
    {".parquet", TT_DB_KIND_DUCKDB},
    {".json", TT_DB_KIND_DUCKDB},
    {".ndjson", TT_DB_KIND_DUCKDB},
    {".jsonl", TT_DB_KIND_DUCKDB},
    {".duckdb", TT_DB_KIND_DUCKDB},
};


/* Names of files that may hold delimited text without saying so: read as
 * CSV when their first bytes are text and not a SQLite database. */
static const char *const tt_db_text_suffixes[] = {".txt", ".dat"};

/* Bytes of a file's head that decide whether it is text. */
#define TT_DB_TEXT_HEAD 4096

/* A file named *.txt, *.dat or with no extension in its name: true when
 * it is a regular file whose first bytes are text (no NUL byte: not UTF-16,
 * not binary) and not SQLite's header. Never waits on a FIFO. */
static bool tt_db_is_text_file(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  bool named = !dot || dot == base;
  for (size_t i = 0; !named && i < sizeof tt_db_text_suffixes / sizeof tt_db_text_suffixes[0]; i++)
    named = tt_has_suffix_nocase(base, tt_db_text_suffixes[i]);
  struct stat st;
  if (!named || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char head[TT_DB_TEXT_HEAD];
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n <= 0) return false;
  if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0) return false;
  return memchr(head, '\0', (size_t)n) == NULL;
}

/* The kind of a URI's scheme; false when s is no URI tabletalk reads. */
static bool tt_db_uri_kind(const char *s, tt_db_kind *kind) {
  for (size_t i = 0; s && i < sizeof tt_db_schemes / sizeof tt_db_schemes[0]; i++)
    if (strncasecmp(s, tt_db_schemes[i].prefix, strlen(tt_db_schemes[i].prefix)) == 0) {
      *kind = tt_db_schemes[i].kind;
      return true;
    }
  return false;
}

/* A folder: DuckDB's when a file in it (not in its subfolders) is Parquet
 * or JSON, which only DuckDB reads (it reads the folder's CSV files too);
 * else a folder of CSV files for the SQLite loader. */
static tt_db_kind tt_db_folder_kind(const char *path) {
  DIR *d = opendir(path);
  if (!d) return TT_DB_KIND_CSV;
  tt_db_kind kind = TT_DB_KIND_CSV;
  struct dirent *e;
  while (kind == TT_DB_KIND_CSV && (e = readdir(d)))
    for (size_t i = 0; i < sizeof tt_db_suffixes / sizeof tt_db_suffixes[0]; i++)
      if (tt_db_suffixes[i].kind == TT_DB_KIND_DUCKDB && e->d_name[0] != '.' &&
          strcmp(tt_db_suffixes[i].suffix, ".duckdb") != 0 &&
          tt_has_suffix_nocase(e->d_name, tt_db_suffixes[i].suffix))
        kind = TT_DB_KIND_DUCKDB;
  closedir(d);
  return kind;
}

/* The kind of a file or folder, from its name (and stat for a folder). */
static tt_db_kind tt_db_file_kind(const char *path) {
  struct stat st;
  bool exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return tt_db_folder_kind(path);
  if (!exists && strpbrk(path, "*?[")) return TT_DB_KIND_DUCKDB; /* a glob */
  for (size_t i = 0; i < sizeof tt_db_suffixes / sizeof tt_db_suffixes[0]; i++)
    if (tt_has_suffix_nocase(path, tt_db_suffixes[i].suffix)) return tt_db_suffixes[i].kind;
  if (tt_db_is_text_file(path)) return TT_DB_KIND_CSV;
  return TT_DB_KIND_SQLITE;
}

bool tt_db_path_is_uri(const char *path) {
  tt_db_kind kind;
  return tt_db_uri_kind(path, &kind) && kind == TT_DB_KIND_POSTGRES;
}

bool tt_db_path_is_csv(const char *path) {
  tt_db_kind kind;
  return !tt_db_uri_kind(path, &kind) && tt_db_file_kind(path) == TT_DB_KIND_CSV;
}

const char *tt_db_path_dialect(const char *path) {
  tt_db_kind kind;
  return tt_db_kind_dialect(tt_db_uri_kind(path, &kind) ? kind : tt_db_file_kind(path));
}

char *tt_pg_redact_uri(const char *uri) {
  return uri ? tt_db_secrets_masked(uri, uri) : NULL;
}

char *tt_db_uri_redacted(const char *s) {
  tt_db_kind kind;
  if (!tt_db_uri_kind(s, &kind)) return NULL;
  char *red = tt_db_secrets_masked(s, s);
  if (strcmp(red, s) != 0) return red;
  free(red);
  return NULL;
}

bool tt_db_target_parse(const char *given, tt_db_target *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  if (!given || !*given) {
    tt_db_set_error(err, TT_ERR_CONFIG,
                    "no database given: name a SQLite file, a CSV file or a folder of them, or a "
                    "postgres://, mysql:// or mariadb:// URI");
    return false;
  }
  out->given = tt_xstrdup(given);
  if (tt_db_uri_kind(given, &out->kind)) {
    out->uri = true;
    out->engine = tt_db_engine_for(out->kind)->name;
    out->path = tt_xstrdup(given);
    out->shown = tt_db_target_shown(given);
    return true;
  }
  out->kind = tt_db_file_kind(given);
  struct stat st;
  if (out->kind == TT_DB_KIND_CSV && stat(given, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_size >= TT_DB_DUCKDB_CSV_BYTES) {
    out->kind = TT_DB_KIND_DUCKDB;
    out->engine_auto = true;
  }
  out->engine = tt_db_engine_for(out->kind)->name;
  char *real = realpath(given, NULL);
  if (!real && out->kind == TT_DB_KIND_DUCKDB && strpbrk(given, "*?[")) {
    /* a glob: its folder made absolute, the pattern kept */
    const char *slash = strrchr(given, '/');
    char *dir = slash ? tt_xstrndup(given, (size_t)(slash - given) + (slash == given))
                      : tt_xstrdup(".");
    char *rdir = realpath(dir, NULL);
    if (rdir)
      real = tt_xasprintf("%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", slash ? slash + 1 : given);
    free(rdir);
    free(dir);
  }
  out->path = real ? real : tt_xstrdup(given);
  out->shown = tt_xstrdup(out->path);
  return true;
}

bool tt_db_target_parse_engine(const char *given, const char *engine, tt_db_target *out,
                               tt_error *err) {
  if (!tt_db_target_parse(given, out, err)) return false;
  if (!engine || !*engine || strcmp(engine, "auto") == 0) return true;
  bool csv_file = !out->uri && (out->kind == TT_DB_KIND_CSV || out->engine_auto) &&
                  tt_db_file_kind(given) == TT_DB_KIND_CSV;
  struct stat st;
  bool regular = stat(given, &st) == 0 && S_ISREG(st.st_mode);
  if (strcmp(engine, out->engine) == 0) {
    out->engine_auto = false;
    return true;
  }
  if (strcmp(engine, "sqlite") == 0 && csv_file) {
    out->kind = TT_DB_KIND_CSV;
  } else if (strcmp(engine, "duckdb") == 0 && csv_file && regular) {
    out->kind = TT_DB_KIND_DUCKDB;
  } else {
    tt_db_set_error(err, TT_ERR_CONFIG,
                    "--engine %s cannot read %s: sqlite reads SQLite files and CSV, duckdb "
                    "reads Parquet, JSON, .duckdb files, globs and CSV files",
                    engine, out->shown);
    tt_db_target_free(out);
    return false;
  }
  out->engine_auto = false;
  out->engine = tt_db_engine_for(out->kind)->name;
  return true;
}

/* Frees s after overwriting it: a URI may hold a password. */
static void tt_wipe(char *s) {
  if (!s) return;
  memset(s, 0, strlen(s));
  free(s);
}

void tt_db_target_free(tt_db_target *t) {
  if (!t) return;
  tt_wipe(t->given);
  tt_wipe(t->path);
  free(t->shown);
  memset(t, 0, sizeof *t);
}

void tt_db_target_copy(tt_db_target *dst, const tt_db_target *src) {
  *dst = (tt_db_target){
      .kind = src->kind,
      .engine = src->engine,
      .given = src->given ? tt_xstrdup(src->given) : NULL,
      .path = src->path ? tt_xstrdup(src->path) : NULL,
      .shown = src->shown ? tt_xstrdup(src->shown) : NULL,
      .uri = src->uri,
      .engine_auto = src->engine_auto,
  };
}
