/* ddb_files.c — the files a DuckDB target names and the views made over
 * them: a file (its format from its name), or a glob that tabletalk
 * expands itself (glob(3), sorted) because DuckDB, once locked down, may
 * read only the files listed in allowed_paths and expands nothing. A
 * glob's files of one format become one table named after the pattern
 * (columns matched by name across files); files of several formats one
 * table each, named after the file. A folder that holds Parquet or JSON
 * files gives one table per data file in it (not in its subfolders). Only
 * regular files are read: what else a glob matches, and a link out of the
 * folder, is named in the warning. */
#include "db/duckdb/ddb.h"

#include <dirent.h>
#include <glob.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static const struct {
  const char *suffix;
  tt_ddb_format format;
} tt_ddb_suffixes[] = {
    {".csv", TT_DDB_CSV},         {".tsv", TT_DDB_CSV},       {".parquet", TT_DDB_PARQUET},
    {".json", TT_DDB_JSON},       {".ndjson", TT_DDB_NDJSON}, {".jsonl", TT_DDB_NDJSON},
    {".duckdb", TT_DDB_DATABASE},
};

bool tt_ddb_format_of(const char *path, tt_ddb_format *out) {
  for (size_t i = 0; i < sizeof tt_ddb_suffixes / sizeof tt_ddb_suffixes[0]; i++)
    if (tt_has_suffix_nocase(path, tt_ddb_suffixes[i].suffix)) {
      *out = tt_ddb_suffixes[i].format;
      return true;
    }
  return false;
}

/* The table name a file or pattern gives: its last component without the
 * format's ending, glob characters and the separators next to them left
 * out ("sales_*.parquet" -> "sales"); "data" when nothing is left. */
static char *tt_ddb_table_name(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  tt_buf b = TT_BUF_INIT;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  for (size_t i = 0; i < n; i++) {
    char c = base[i];
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') continue;
    tt_buf_putc(&b, c);
  }
  char *s = tt_buf_detach(&b);
  size_t len = s ? strlen(s) : 0;
  while (len && strchr("_-. ", s[len - 1])) s[--len] = '\0';
  size_t start = 0;
  while (start < len && strchr("_-. ", s[start])) start++;
  if (start) memmove(s, s + start, len - start + 1);
  if (!s || !*s) {
    free(s);
    s = tt_xstrdup("data");
  }
  return s;
}

static bool tt_ddb_name_taken(const tt_ddb *dd, const char *name) {
  for (size_t i = 0; i < dd->nviews; i++)
    if (strcasecmp(dd->views[i].name, name) == 0) return true;
  return false;
}

static tt_ddb_view *tt_ddb_add_view(tt_ddb *dd, const char *named_after, tt_ddb_format f) {
  dd->views = tt_xrealloc(dd->views, sizeof *dd->views * (dd->nviews + 1));
  tt_ddb_view *v = &dd->views[dd->nviews];
  *v = (tt_ddb_view){.format = f};
  char *base = tt_ddb_table_name(named_after), *name = tt_xstrdup(base);
  for (int k = 2; tt_ddb_name_taken(dd, name); k++) {
    free(name);
    name = tt_xasprintf("%s_%d", base, k);
  }
  free(base);
  v->name = name;
  dd->nviews++;
  return v;
}

static void tt_ddb_view_add_file(tt_ddb_view *v, const char *file) {
  v->files = tt_xrealloc(v->files, sizeof *v->files * (v->nfiles + 1));
  v->files[v->nfiles++] = tt_xstrdup(file);
}

static bool tt_ddb_is_glob(const char *path) { return strpbrk(path, "*?[") != NULL; }

/* A glob's matches: regular files of a format tabletalk reads; the rest
 * named in dd->warning. */
static bool tt_ddb_expand(tt_ddb *dd, const char *pattern, tt_error *err) {
  glob_t g;
  int rc = glob(pattern, GLOB_ERR, NULL, &g);
  if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
    if (rc == 0) globfree(&g);
    tt_db_set_error(err, TT_ERR_IO, "no file matches %s", pattern);
    return false;
  }
  if (rc != 0) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read the folders of %s", pattern);
    return false;
  }
  tt_buf skipped = TT_BUF_INIT;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *p = g.gl_pathv[i];
    struct stat st;
    tt_ddb_format f = TT_DDB_CSV;
    char *real = realpath(p, NULL);
    bool ok = real && stat(real, &st) == 0 && S_ISREG(st.st_mode) && tt_ddb_format_of(p, &f) &&
              f != TT_DDB_DATABASE;
    if (ok) {
      dd->files = tt_xrealloc(dd->files, sizeof *dd->files * (dd->nfiles + 1));
      dd->files[dd->nfiles++] = real;
    } else {
      free(real);
      tt_buf_printf(&skipped, "%s%s", skipped.len ? ", " : "", p);
    }
  }
  globfree(&g);
  if (skipped.len)
    dd->warning = tt_xasprintf("skipped what %s matched that is not a data file (.csv, .tsv, "
                               ".parquet, .json, .ndjson, .jsonl): %s",
                               pattern, tt_buf_cstr(&skipped));
  tt_buf_free(&skipped);
  if (!dd->nfiles) {
    tt_db_set_error(err, TT_ERR_IO, "no data file matches %s", pattern);
    return false;
  }
  return true;
}

static int tt_ddb_name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's data files (by name, sorted), one table each; a link that
 * leads out of the folder, or to what is not a regular file, is skipped
 * and named in dd->warning. */
static bool tt_ddb_folder(tt_ddb *dd, const char *path, tt_error *err) {
  char *root = realpath(path, NULL);
  DIR *d = root ? opendir(root) : NULL;
  if (!d) {
    free(root);
    tt_db_set_error(err, TT_ERR_IO, "cannot read the folder %s", path);
    return false;
  }
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    tt_ddb_format f;
    if (e->d_name[0] == '.' || !tt_ddb_format_of(e->d_name, &f) || f == TT_DDB_DATABASE) continue;
    names = tt_xrealloc(names, sizeof *names * (n + 1));
    names[n++] = tt_xstrdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, tt_ddb_name_cmp);
  tt_buf skipped = TT_BUF_INIT;
  size_t rootlen = strlen(root);
  for (size_t i = 0; i < n; i++) {
    char *full = tt_xasprintf("%s/%s", root, names[i]);
    char *real = realpath(full, NULL);
    struct stat st;
    bool inside = real && strncmp(real, root, rootlen) == 0 && real[rootlen] == '/';
    if (inside && stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
      tt_ddb_format f = TT_DDB_CSV;
      tt_ddb_format_of(names[i], &f);
      dd->files = tt_xrealloc(dd->files, sizeof *dd->files * (dd->nfiles + 1));
      dd->files[dd->nfiles++] = tt_xstrdup(real);
      tt_ddb_view_add_file(tt_ddb_add_view(dd, names[i], f), real);
    } else {
      tt_buf_printf(&skipped, "%s%s", skipped.len ? ", " : "", names[i]);
    }
    free(real);
    free(full);
    free(names[i]);
  }
  free(names);
  free(root);
  if (skipped.len)
    dd->warning = tt_xasprintf("skipped what in %s is not a data file of the folder (a link out "
                               "of it, or not a regular file): %s",
                               path, tt_buf_cstr(&skipped));
  tt_buf_free(&skipped);
  if (!dd->nfiles) {
    tt_db_set_error(err, TT_ERR_IO, "no data file (.parquet, .json, .ndjson, .jsonl, .csv, .tsv) in %s",
                    path);
    return false;
  }
  return true;
}

bool tt_ddb_files_plan(tt_ddb *dd, const char *path, tt_error *err) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return tt_ddb_folder(dd, path, err);
  if (stat(path, &st) == 0) {
    tt_ddb_format f = TT_DDB_CSV;
    if (!S_ISREG(st.st_mode)) {
      tt_db_set_error(err, TT_ERR_IO, "%s is not a file", path);
      return false;
    }
    if (!tt_ddb_format_of(path, &f)) f = TT_DDB_CSV; /* --engine duckdb on a CSV by another name */
    dd->files = tt_xcalloc(1, sizeof *dd->files);
    dd->files[dd->nfiles++] = tt_xstrdup(path);
    if (f == TT_DDB_DATABASE) {
      dd->database_file = true;
      return true;
    }
    tt_ddb_view_add_file(tt_ddb_add_view(dd, path, f), path);
    return true;
  }
  if (!tt_ddb_is_glob(path)) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: no such file", path);
    return false;
  }
  if (!tt_ddb_expand(dd, path, err)) return false;
  /* one format: one table over them all; else one table per file */
  tt_ddb_format first = TT_DDB_CSV;
  tt_ddb_format_of(dd->files[0], &first);
  bool one = true;
  for (size_t i = 1; i < dd->nfiles; i++) {
    tt_ddb_format f = TT_DDB_CSV;
    tt_ddb_format_of(dd->files[i], &f);
    if (f != first && !((f == TT_DDB_JSON || f == TT_DDB_NDJSON) &&
                        (first == TT_DDB_JSON || first == TT_DDB_NDJSON)))
      one = false;
  }
  if (one) {
    tt_ddb_view *v = tt_ddb_add_view(dd, path, first);
    for (size_t i = 0; i < dd->nfiles; i++) tt_ddb_view_add_file(v, dd->files[i]);
    return true;
  }
  for (size_t i = 0; i < dd->nfiles; i++) {
    tt_ddb_format f = TT_DDB_CSV;
    tt_ddb_format_of(dd->files[i], &f);
    tt_ddb_view_add_file(tt_ddb_add_view(dd, dd->files[i], f), dd->files[i]);
  }
  return true;
}

void tt_ddb_files_free(tt_ddb *dd) {
  for (size_t i = 0; i < dd->nviews; i++) {
    for (size_t j = 0; j < dd->views[i].nfiles; j++) free(dd->views[i].files[j]);
    for (size_t j = 0; j < dd->views[i].ntext_cols; j++) free(dd->views[i].text_cols[j]);
    free(dd->views[i].text_cols);
    for (size_t j = 0; j < dd->views[i].csv_ncols; j++) {
      free(dd->views[i].csv_names[j]);
      free(dd->views[i].csv_notes[j]);
      if (dd->views[i].csv_src) free(dd->views[i].csv_src[j]);
    }
    free(dd->views[i].csv_names);
    free(dd->views[i].csv_src);
    free(dd->views[i].csv_notes);
    free(dd->views[i].csv_select);
    free(dd->views[i].csv_note);
    free(dd->views[i].files);
    free(dd->views[i].name);
  }
  free(dd->views);
  for (size_t i = 0; i < dd->nfiles; i++) free(dd->files[i]);
  free(dd->files);
  dd->views = NULL;
  dd->files = NULL;
  dd->nviews = dd->nfiles = 0;
}
