/* hints.c — turning "no such table/column" into a suggestion of the
 * closest names that do exist, so the model can repair its SQL in one step
 * ("no such column: Trak.Name — did you mean Track.Name?"). A wrong column
 * name is looked for first among the tables the query itself names (found
 * by sqlrefs.c, aliases included), then in the whole schema. SQLite's
 * messages and PostgreSQL's (relation "x" does not exist, column x does
 * not exist, column reference "x" is ambiguous) are both read, and MySQL's
 * and MariaDB's (Table 'db.x' doesn't exist, Unknown column 'x'); on
 * PostgreSQL a name with capitals also needs double quotes, which the hint
 * says. */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Small enough to be a typo of name (or a case difference). */
static size_t tt_typo_limit(const char *name) {
  size_t n = strlen(name);
  return n <= 4 ? 1 : n <= 8 ? 2 : 3;
}

/* Among the few columns of the tables a query names, one more edit is
 * still a likely typo ("Nme" for "Name"), but never half the name. */
static size_t tt_named_typo_limit(const char *name) {
  size_t lim = tt_typo_limit(name) + 1, half = strlen(name) / 2;
  return lim < half ? lim : half > 0 ? half : 1;
}

static const tt_table_info *tt_closest_table(const tt_catalog *cat, const char *name) {
  const tt_table_info *best = NULL;
  size_t best_d = tt_typo_limit(name) + 1;
  for (size_t i = 0; i < cat->ntables; i++) {
    size_t d = tt_edit_distance(name, cat->tables[i].name, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = &cat->tables[i];
    }
  }
  return best;
}

/* The column of t closest to name within limit; *dist gets its distance
 * (limit+1 when none). */
static const char *tt_closest_column(const tt_table_info *t, const char *name, size_t limit,
                                     size_t *dist) {
  const char *best = NULL;
  size_t best_d = limit + 1;
  for (size_t c = 0; c < t->ncols; c++) {
    size_t d = tt_edit_distance(name, t->cols[c].name, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = t->cols[c].name;
    }
  }
  *dist = best_d;
  return best;
}

/* "GenreName" or "genre_name" for Genre.Name: the table's name glued to a
 * column's. Returns the column, or NULL. */
static const char *tt_prefixed_column(const tt_table_info *t, const char *name) {
  size_t n = strlen(t->name);
  if (strncasecmp(name, t->name, n) != 0) return NULL;
  const char *rest = name + n;
  if (*rest == '_') rest++;
  if (!*rest) return NULL;
  size_t d;
  return tt_closest_column(t, rest, tt_typo_limit(rest), &d);
}

/* Unknown column without a known table: the closest column anywhere,
 * with the tables that have it. */
static void tt_hint_any_column(tt_buf *b, const tt_catalog *cat, const char *qual, const char *col) {
  const char *best = NULL;
  size_t best_d = tt_typo_limit(col) + 1;
  for (size_t i = 0; i < cat->ntables; i++) {
    size_t d;
    const char *c = tt_closest_column(&cat->tables[i], col, best_d - 1, &d);
    if (c && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  if (!best) return;
  bool elsewhere = best_d == 0 && !qual; /* right name, table not in the query */
  if (elsewhere) tt_buf_printf(b, " — %s is in ", best);
  else tt_buf_printf(b, " — did you mean %s%s%s? (", qual ? qual : "", qual ? "." : "", best);
  int listed = 0;
  for (size_t i = 0; i < cat->ntables && listed < 4; i++) {
    const tt_table_info *t = &cat->tables[i];
    for (size_t c = 0; c < t->ncols; c++)
      if (strcasecmp(t->cols[c].name, best) == 0) {
        if (elsewhere) tt_buf_printf(b, "%s%s", listed++ ? ", " : "", t->name);
        else tt_buf_printf(b, "%s%s.%s", listed++ ? ", " : "", t->name, t->cols[c].name);
        break;
      }
  }
  tt_buf_puts(b, elsewhere ? "; the query must name one of those tables (FROM or JOIN)" : ")");
}

/* How the query refers to a named table: its alias, else its name. */
static const char *tt_ref_label(const tt_sql_table_ref *r) {
  return r->alias ? r->alias : r->table->name;
}

/* The closest column among the tables the query names; *which gets the
 * table reference. NULL when none is close enough. */
static const char *tt_closest_named_column(const tt_sql_table_refs *refs, const char *col,
                                           const tt_sql_table_ref **which) {
  for (size_t i = 0; i < refs->n; i++) { /* GenreName: the table's name glued on */
    const char *c = tt_prefixed_column(refs->refs[i].table, col);
    if (c) {
      *which = &refs->refs[i];
      return c;
    }
  }
  const char *best = NULL;
  size_t best_d = tt_named_typo_limit(col) + 1;
  for (size_t i = 0; i < refs->n; i++) {
    size_t d;
    const char *c = tt_closest_column(refs->refs[i].table, col, best_d - 1, &d);
    if (c && d < best_d) {
      best = c;
      best_d = d;
      *which = &refs->refs[i];
    }
  }
  return best;
}

/* Unqualified unknown column: the named tables first. With one table named
 * the column is suggested bare, otherwise with the alias or table that
 * holds it. */
static bool tt_hint_named_column(tt_buf *b, const tt_sql_table_refs *refs, const char *col) {
  const tt_sql_table_ref *which = NULL;
  const char *c = tt_closest_named_column(refs, col, &which);
  if (!c) return false;
  if (refs->n == 1)
    tt_buf_printf(b, " — did you mean %s? (%s.%s)", c, which->table->name, c);
  else
    tt_buf_printf(b, " — did you mean %s.%s?", tt_ref_label(which), c);
  return true;
}

/* The named table that qual stands for: an alias, or a table's name. */
static const tt_sql_table_ref *tt_resolve_qualifier(const tt_sql_table_refs *refs, const char *qual) {
  for (size_t i = 0; refs && i < refs->n; i++)
    if (refs->refs[i].alias && strcasecmp(refs->refs[i].alias, qual) == 0) return &refs->refs[i];
  for (size_t i = 0; refs && i < refs->n; i++)
    if (!refs->refs[i].alias && strcasecmp(refs->refs[i].table->name, qual) == 0) return &refs->refs[i];
  return NULL;
}

static void tt_hint_qualified_column(tt_buf *b, const tt_catalog *cat, const tt_sql_table_refs *refs,
                                     const char *qual, const char *col) {
  size_t d;
  const tt_sql_table_ref *r = tt_resolve_qualifier(refs, qual);
  if (r) {
    const char *c = tt_closest_column(r->table, col, tt_named_typo_limit(col), &d);
    if (c) {
      tt_buf_printf(b, " — did you mean %s.%s?", qual, c);
      return;
    }
    /* the right column of another table the query names */
    const tt_sql_table_ref *which = NULL;
    c = tt_closest_named_column(refs, col, &which);
    if (c) {
      tt_buf_printf(b, " — did you mean %s.%s? (%s has no column %s)", tt_ref_label(which), c, qual, col);
      return;
    }
  }
  const tt_table_info *t = tt_catalog_find(cat, qual);
  if (!t) t = tt_closest_table(cat, qual);
  const char *c = t ? tt_closest_column(t, col, tt_typo_limit(col), &d) : NULL;
  if (c) tt_buf_printf(b, " — did you mean %s.%s?", t->name, c);
  else tt_hint_any_column(b, cat, qual, col); /* qual is probably an alias */
}

static void tt_hint_column(tt_buf *b, const tt_catalog *cat, const tt_sql_table_refs *refs,
                           const char *ref) {
  const char *dot = strrchr(ref, '.');
  if (!dot) {
    if (!refs || !tt_hint_named_column(b, refs, ref)) tt_hint_any_column(b, cat, NULL, ref);
    return;
  }
  char *qual = tt_xstrndup(ref, (size_t)(dot - ref));
  tt_hint_qualified_column(b, cat, refs, qual, dot + 1);
  free(qual);
}

/* An ambiguous column: the named tables that have it, as the query calls
 * them; without a query, every table that has it. */
static void tt_hint_ambiguous(tt_buf *b, const tt_catalog *cat, const tt_sql_table_refs *refs,
                              const char *col) {
  int listed = 0;
  for (size_t i = 0; refs && i < refs->n; i++) {
    const tt_table_info *t = refs->refs[i].table;
    for (size_t c = 0; c < t->ncols; c++)
      if (strcasecmp(t->cols[c].name, col) == 0) {
        tt_buf_printf(b, "%s%s.%s", listed++ ? ", " : " — it is in ", tt_ref_label(&refs->refs[i]),
                      t->cols[c].name);
        break;
      }
  }
  bool from_query = listed > 0;
  for (size_t i = 0; !from_query && i < cat->ntables; i++)
    for (size_t c = 0; c < cat->tables[i].ncols; c++)
      if (strcasecmp(cat->tables[i].cols[c].name, col) == 0) {
        tt_buf_printf(b, "%s%s.%s", listed++ ? ", " : " — it is in ", cat->tables[i].name,
                      cat->tables[i].cols[c].name);
        break;
      }
  if (listed) tt_buf_puts(b, "; qualify it with its table or alias");
}

/* The text between start and the first end after it, without double
 * quotes; NULL when message has no such span. */
static char *tt_between(const char *message, const char *start, const char *end) {
  const char *p = strstr(message, start);
  if (!p) return NULL;
  p += strlen(start);
  const char *q = strstr(p, end);
  if (!q || q == p) return NULL;
  tt_buf b = TT_BUF_INIT;
  for (; p < q; p++)
    if (*p != '"') tt_buf_putc(&b, *p);
  return tt_buf_detach(&b);
}

static bool tt_has_upper(const char *s) {
  for (; *s; s++)
    if (*s >= 'A' && *s <= 'Z') return true;
  return false;
}

/* PostgreSQL's messages for an unknown table or column or an ambiguous
 * column. It folds unquoted names to lower case, so "track" is often
 * Track unquoted: the hint then says to quote names with capitals. */
static void tt_hint_postgres(tt_buf *b, const tt_catalog *cat, const tt_sql_table_refs *refs,
                             const char *message) {
  char *name;
  if ((name = tt_between(message, "relation ", " does not exist"))) {
    const char *dot = strrchr(name, '.');
    const char *bare = dot ? dot + 1 : name; /* public.tracks */
    const tt_table_info *t = tt_catalog_find(cat, bare);
    if (!t) t = tt_closest_table(cat, bare);
    if (t) tt_buf_printf(b, tt_has_upper(t->name) ? " — did you mean \"%s\"?" : " — did you mean %s?", t->name);
  } else if ((name = tt_between(message, "column reference ", " is ambiguous"))) {
    tt_hint_ambiguous(b, cat, refs, name);
  } else if ((name = tt_between(message, "column ", " does not exist"))) {
    tt_hint_column(b, cat, refs, name);
  }
  if (b->len && tt_has_upper(b->data))
    tt_buf_puts(b, " (PostgreSQL folds unquoted names to lower case: write names with capitals in "
                   "double quotes, as \"Track\".\"Name\")");
  free(name);
}

/* MySQL's and MariaDB's messages: Table 'db.x' doesn't exist (error 1146),
 * Unknown column 'x' in 'field list' (1054), Column 'x' in field list is
 * ambiguous (1052). Table names are case-sensitive there, so a name that
 * differs only in case is the likely mistake. */
static void tt_hint_mysql(tt_buf *b, const tt_catalog *cat, const tt_sql_table_refs *refs,
                          const char *message) {
  char *name;
  if ((name = tt_between(message, "Table '", "' doesn't exist"))) {
    const char *dot = strchr(name, '.');
    const char *bare = dot ? dot + 1 : name; /* chinook.track */
    const tt_table_info *t = tt_catalog_find(cat, bare);
    if (!t) t = tt_closest_table(cat, bare);
    if (t) tt_buf_printf(b, " — did you mean %s? (table names are case-sensitive here)", t->name);
  } else if ((name = tt_between(message, "Unknown column '", "' in "))) {
    tt_hint_column(b, cat, refs, name);
  } else if (strstr(message, "is ambiguous") && (name = tt_between(message, "Column '", "' in "))) {
    tt_hint_ambiguous(b, cat, refs, name);
  }
  free(name);
}

char *tt_hint_for_error(const tt_catalog *cat, const char *sql, const char *message) {
  if (!cat || !message) return NULL;
  tt_sql_table_refs *refs = sql ? tt_sql_table_refs_find(cat, sql) : NULL;
  tt_buf b = TT_BUF_INIT;
  const char *p;
  if ((p = strstr(message, "no such table: "))) {
    const char *name = p + 15;
    const char *dot = strchr(name, '.');
    if (dot) name = dot + 1; /* main.Tracks */
    const tt_table_info *t = tt_closest_table(cat, name);
    if (t) tt_buf_printf(&b, " — did you mean %s?", t->name);
  } else if ((p = strstr(message, "no such column: "))) {
    tt_hint_column(&b, cat, refs, p + 16);
  } else if ((p = strstr(message, "ambiguous column name: "))) {
    tt_hint_ambiguous(&b, cat, refs, p + 23);
  } else if (strstr(message, "(error 1")) {
    tt_hint_mysql(&b, cat, refs, message);
  } else {
    tt_hint_postgres(&b, cat, refs, message);
  }
  tt_sql_table_refs_free(refs);
  if (!b.len) {
    tt_buf_free(&b);
    return NULL;
  }
  return tt_buf_detach(&b);
}

char *tt_agent_sql_hint(const tt_catalog *cat, const char *sql, const char *message) {
  return tt_hint_for_error(cat, sql, message);
}
