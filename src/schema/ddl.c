/* ddl.c — the schema in the two forms the SQL writers were trained on:
 * CREATE TABLE statements with example values as SQL comments (OmniSQL's
 * training data, built by RUCKBReasoning/OmniSQL's
 * train_and_evaluate/process_dataset.py: one column per line, two
 * distinct sample values as a Python list, PRIMARY KEY and named FOREIGN
 * KEY constraints, blank lines between tables) and M-Schema
 * (XGenerationLab/M-Schema, m_schema.py, recommended for XiYanSQL: "#
 * Table:" blocks of "(column:TYPE, Primary Key, Examples: [..])" and a
 * foreign-key list). Built from the cards' catalog; names and values from
 * the database are escaped so that none can end a line or a comment. */
#include "schema/schema.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_DDL_VALUE_CHARS 40   /* OmniSQL cuts sample strings here */
#define TT_DDL_EXAMPLES 2       /* ... and shows two values per column */
#define TT_MSCHEMA_EXAMPLES 3   /* M-Schema shows three */

/* SQLite's keywords (https://sqlite.org/lang_keywords.html): a column
 * named like one is written in backticks, as OmniSQL's data does. */
static const char *const tt_sql_keywords[] = {
    "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC",
    "ATTACH", "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST",
    "CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS",
    "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT",
    "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH",
    "ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL",
    "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB",
    "GROUP", "GROUPS", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED",
    "INITIALLY", "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN",
    "KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT",
    "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS",
    "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE",
    "RANGE", "RECURSIVE", "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE",
    "RESTRICT", "RETURNING", "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET",
    "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO", "TRANSACTION", "TRIGGER", "UNBOUNDED",
    "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW", "VIRTUAL", "WHEN", "WHERE",
    "WINDOW", "WITH", "WITHOUT",
    /* not SQLite keywords, but reserved in SQL and backticked by OmniSQL */
    "DATE", "TIME", "TIMESTAMP", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "LANGUAGE", "USER",
    "POSITION", "VALUE", "COUNT", "SUM", "AVG", "MIN", "MAX", "RANK",
};

static bool tt_is_keyword(const char *s) {
  for (size_t i = 0; i < sizeof tt_sql_keywords / sizeof tt_sql_keywords[0]; i++)
    if (strcasecmp(s, tt_sql_keywords[i]) == 0) return true;
  return false;
}

static bool tt_is_plain(const char *s) {
  if (!*s) return false;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return false;
  return true;
}

/* Text from the database on one line: control characters and invisible
 * code points escaped. */
static void tt_put_safe(tt_buf *out, const char *s, size_t n) {
  tt_escape_terminal(out, s, n, NULL);
}

/* A name as OmniSQL writes it: plain, or in backticks when it is a
 * keyword or holds other characters. */
static void tt_put_ident(tt_buf *out, const char *s) {
  if (tt_is_plain(s) && !tt_is_keyword(s)) {
    tt_buf_puts(out, s);
    return;
  }
  tt_buf q = TT_BUF_INIT;
  tt_buf_putc(&q, '`');
  for (const char *p = s; *p; p++) {
    if (*p == '`') tt_buf_putc(&q, '`');
    tt_buf_putc(&q, *p);
  }
  tt_buf_putc(&q, '`');
  tt_put_safe(out, q.data, q.len);
  tt_buf_free(&q);
}

/* A declared type in lower case, as Spider's and BIRD's schemas give
 * them; "" for none or anything that is not a plain type. */
static void tt_put_ddl_type(tt_buf *out, const char *type) {
  if (!type || !*type) return;
  for (const char *p = type; *p; p++)
    if (!(isalnum((unsigned char)*p) || strchr(" _(),.", *p))) return;
  tt_buf_putc(out, ' ');
  for (const char *p = type; *p; p++) tt_buf_putc(out, (char)tolower((unsigned char)*p));
}

/* A string as Python's repr() writes it (the examples are a printed
 * Python list): single quotes unless it holds one and no double quote,
 * backslash escapes, unsafe code points as \uXXXX. */
static void tt_put_pyrepr(tt_buf *out, const char *s, size_t n) {
  bool single = memchr(s, '\'', n) != NULL, dbl = memchr(s, '"', n) != NULL;
  char q = single && !dbl ? '"' : '\'';
  tt_buf_putc(out, q);
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (!k) { /* invalid UTF-8: a replacement character */
      tt_buf_puts(out, "\xef\xbf\xbd");
      i++;
      continue;
    }
    if (cp == '\\' || cp == (uint32_t)q) tt_buf_printf(out, "\\%c", (char)cp);
    else if (cp == '\n') tt_buf_puts(out, "\\n");
    else if (cp == '\r') tt_buf_puts(out, "\\r");
    else if (cp == '\t') tt_buf_puts(out, "\\t");
    else if (cp < 0x20 || cp == 0x7f) tt_buf_printf(out, "\\x%02x", (unsigned)cp);
    else if (tt_cp_is_unsafe(cp)) tt_buf_printf(out, "\\u%04x", (unsigned)cp);
    else tt_buf_append(out, s + i, k);
    i += k;
  }
  tt_buf_putc(out, q);
}

/* Up to max distinct sample values of column col that are neither NULL,
 * empty nor blobs, as indexes into the sample's rows. */
static size_t tt_examples(const tt_result *sample, size_t col, size_t max, size_t *rows) {
  size_t k = 0;
  if (!sample || col >= sample->ncols) return 0;
  for (size_t r = 0; r < sample->nrows && k < max; r++) {
    const tt_value *v = tt_result_cell(sample, r, col);
    if (v->type == TT_VAL_NULL || v->type == TT_VAL_BLOB) continue;
    if (v->type == TT_VAL_TEXT && v->len == 0) continue;
    bool seen = false;
    for (size_t i = 0; i < k && !seen; i++)
      seen = tt_value_equal(v, tt_result_cell(sample, rows[i], col));
    if (!seen) rows[k++] = r;
  }
  return k;
}

static void tt_put_example_py(tt_buf *out, const tt_value *v) {
  if (v->type != TT_VAL_TEXT) {
    tt_value_to_text(out, v);
    return;
  }
  tt_put_pyrepr(out, v->u.s, tt_utf8_prefix(v->u.s, v->len, TT_DDL_VALUE_CHARS));
}

/* A foreign key's target column: as declared, else the referenced
 * table's primary-key column at the same position. */
static const char *tt_fk_target(const tt_catalog *cat, const tt_fk_info *fk) {
  if (fk->to) return fk->to;
  const tt_table_info *t = tt_catalog_find(cat, fk->table);
  for (size_t c = 0; t && c < t->ncols; c++)
    if (t->cols[c].pk == fk->pk_seq + 1) return t->cols[c].name;
  return NULL;
}

/* fk_<table>_<column> in lower case, other characters as '_'. */
static void tt_put_constraint_name(tt_buf *out, const char *table, const char *col) {
  tt_buf_puts(out, "fk_");
  for (const char *p = table; *p; p++)
    tt_buf_putc(out, isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_');
  tt_buf_putc(out, '_');
  for (const char *p = col; *p; p++)
    tt_buf_putc(out, isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_');
}

/* One table as OmniSQL's data writes it: every line ends in a comma, a
 * column's examples follow its comma as a comment, and the comma that
 * ends the whole is dropped (so a last column with a comment keeps it). */
static void tt_table_ddl(const tt_catalog *cat, const tt_table_info *t, tt_buf *out) {
  tt_buf b = TT_BUF_INIT;
  size_t rows[TT_DDL_EXAMPLES];
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    tt_buf_puts(&b, "    ");
    tt_put_ident(&b, col->name);
    tt_put_ddl_type(&b, col->type);
    tt_buf_putc(&b, ',');
    size_t k = tt_examples(t->sample, c, TT_DDL_EXAMPLES, rows);
    if (k) {
      tt_buf_puts(&b, " -- example: [");
      for (size_t i = 0; i < k; i++) {
        if (i) tt_buf_puts(&b, ", ");
        tt_put_example_py(&b, tt_result_cell(t->sample, rows[i], c));
      }
      tt_buf_putc(&b, ']');
    }
    tt_buf_putc(&b, '\n');
  }
  bool pk = false;
  for (size_t c = 0; c < t->ncols && !pk; c++) pk = t->cols[c].pk > 0;
  if (pk) {
    tt_buf_puts(&b, "    PRIMARY KEY (");
    bool first = true;
    for (size_t pos = 1; pos <= t->ncols; pos++)
      for (size_t c = 0; c < t->ncols; c++)
        if ((size_t)t->cols[c].pk == pos) {
          if (!first) tt_buf_puts(&b, ", ");
          tt_put_ident(&b, t->cols[c].name);
          first = false;
        }
    tt_buf_puts(&b, "),\n");
  }
  for (size_t k = 0; k < t->nfks; k++) {
    const tt_fk_info *fk = &t->fks[k];
    const char *to = tt_fk_target(cat, fk);
    tt_buf_puts(&b, "    CONSTRAINT ");
    tt_put_constraint_name(&b, t->name, fk->from);
    tt_buf_puts(&b, " FOREIGN KEY (");
    tt_put_ident(&b, fk->from);
    tt_buf_puts(&b, ") REFERENCES ");
    tt_put_ident(&b, fk->table);
    if (to) {
      tt_buf_puts(&b, " (");
      tt_put_ident(&b, to);
      tt_buf_putc(&b, ')');
    }
    tt_buf_puts(&b, ",\n");
  }
  if (b.len) b.len--; /* the last newline */
  if (b.len && b.data[b.len - 1] == ',') b.len--;
  tt_buf_puts(out, "CREATE TABLE ");
  tt_put_ident(out, t->name);
  tt_buf_puts(out, " (\n");
  tt_buf_append(out, b.data ? b.data : "", b.len);
  tt_buf_puts(out, "\n);");
  tt_buf_free(&b);
}

void tt_schema_render_ddl(const tt_schema *s, const tt_card *const *cards, size_t n, tt_buf *out) {
  size_t count = cards ? n : tt_schema_count(s);
  const tt_catalog *cat = tt_schema_catalog(s);
  for (size_t i = 0; i < count; i++) {
    if (i) tt_buf_puts(out, "\n\n");
    tt_table_ddl(cat, cards ? cards[i]->table : tt_schema_card(s, i)->table, out);
  }
}

/* ---- M-Schema ------------------------------------------------------------------ */

/* A declared type as M-Schema's simple mode writes it: the part before
 * any "(", in upper case. */
static void tt_put_mschema_type(tt_buf *out, const char *type) {
  size_t n = type ? strcspn(type, "(") : 0;
  while (n && type[n - 1] == ' ') n--;
  bool plain = n > 0;
  for (size_t i = 0; i < n && plain; i++) plain = isalnum((unsigned char)type[i]) || type[i] == ' ' || type[i] == '_';
  if (!plain) {
    tt_buf_puts(out, "ANY");
    return;
  }
  for (size_t i = 0; i < n; i++) tt_buf_putc(out, (char)toupper((unsigned char)type[i]));
}

static bool tt_is_time_type(const char *type) {
  static const char *const names[] = {"DATE", "TIME", "DATETIME", "TIMESTAMP"};
  size_t n = type ? strcspn(type, "(") : 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (n == strlen(names[i]) && strncasecmp(type, names[i], n) == 0) return true;
  return false;
}

/* M-Schema drops examples that are e-mail addresses or links. */
static bool tt_is_mail_or_link(const tt_value *v) {
  if (v->type != TT_VAL_TEXT) return false;
  const char *s = v->u.s;
  if (strstr(s, "http://") || strstr(s, "https://")) return true;
  const char *at = strchr(s, '@');
  return at && at > s && strchr(at, '.') && !strchr(s, ' ');
}

static void tt_table_mschema(const tt_table_info *t, tt_buf *out) {
  tt_buf_puts(out, "# Table: ");
  tt_put_safe(out, t->name, strlen(t->name));
  tt_buf_puts(out, "\n[\n");
  size_t rows[TT_MSCHEMA_EXAMPLES];
  tt_buf text = TT_BUF_INIT;
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    if (c) tt_buf_puts(out, ",\n");
    tt_buf_putc(out, '(');
    tt_put_safe(out, col->name, strlen(col->name));
    tt_buf_putc(out, ':');
    tt_put_mschema_type(out, col->type);
    if (col->pk) tt_buf_puts(out, ", Primary Key");
    size_t k = tt_examples(t->sample, c, TT_MSCHEMA_EXAMPLES, rows);
    size_t longest = 0;
    bool drop = false;
    for (size_t i = 0; i < k; i++) {
      const tt_value *v = tt_result_cell(t->sample, rows[i], c);
      drop |= tt_is_mail_or_link(v);
      tt_buf_reset(&text);
      tt_value_to_text(&text, v);
      size_t chars = tt_utf8_count(text.data ? text.data : "", text.len);
      if (chars > longest) longest = chars;
    }
    /* dates: one example; long texts: one, very long ones none */
    if (drop || longest > 50) k = 0;
    else if (k && (tt_is_time_type(col->type) || longest > 20)) k = 1;
    if (k) {
      tt_buf_puts(out, ", Examples: [");
      for (size_t i = 0; i < k; i++) {
        if (i) tt_buf_puts(out, ", ");
        tt_buf_reset(&text);
        tt_value_to_text(&text, tt_result_cell(t->sample, rows[i], c));
        tt_put_safe(out, text.data ? text.data : "", text.len);
      }
      tt_buf_putc(out, ']');
    }
    tt_buf_putc(out, ')');
  }
  tt_buf_free(&text);
  tt_buf_puts(out, "\n]");
}

void tt_schema_render_mschema(const tt_schema *s, const tt_card *const *cards, size_t n,
                              const char *db_id, tt_buf *out) {
  size_t count = cards ? n : tt_schema_count(s);
  const tt_catalog *cat = tt_schema_catalog(s);
  tt_buf_puts(out, "\xe3\x80\x90" "DB_ID\xe3\x80\x91 "); /* 【DB_ID】 */
  tt_put_safe(out, db_id ? db_id : "", db_id ? strlen(db_id) : 0);
  tt_buf_puts(out, "\n\xe3\x80\x90Schema\xe3\x80\x91"); /* 【Schema】 */
  for (size_t i = 0; i < count; i++) {
    tt_buf_putc(out, '\n');
    tt_table_mschema(cards ? cards[i]->table : tt_schema_card(s, i)->table, out);
  }
  /* the foreign keys between the tables shown */
  bool head = false;
  for (size_t i = 0; i < count; i++) {
    const tt_table_info *t = cards ? cards[i]->table : tt_schema_card(s, i)->table;
    for (size_t k = 0; k < t->nfks; k++) {
      const tt_fk_info *fk = &t->fks[k];
      bool shown = !cards;
      for (size_t j = 0; j < count && !shown; j++) shown = tt_streq_nocase(cards[j]->table->name, fk->table);
      const char *to = tt_fk_target(cat, fk);
      if (!shown || !to) continue;
      if (!head) tt_buf_puts(out, "\n\xe3\x80\x90" "Foreign keys\xe3\x80\x91"); /* 【Foreign keys】 */
      head = true;
      const char *parts[] = {t->name, ".", fk->from, "=", fk->table, ".", to};
      tt_buf_putc(out, '\n');
      for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
        tt_put_safe(out, parts[p], strlen(parts[p]));
    }
  }
}
