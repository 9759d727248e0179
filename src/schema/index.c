/* index.c — the table index a prompt carries when the whole schema does
 * not fit its budget: every table at a glance, as compact as it must be to
 * stay within its share of the budget. Tried in order: names with their key
 * columns ("Album(AlbumId*, ArtistId->Artist)"), names only, then names
 * grouped by their common prefix ("sales_: orders, items"), and last as many
 * names as fit with a count of the rest. */
#include "schema/schema.h"

#include <stdlib.h>
#include <string.h>

static void tt_put_shown(tt_buf *out, const char *s, size_t n) {
  tt_escape_terminal(out, s, n, NULL);
}

static const tt_fk_info *tt_index_fk(const tt_table_info *t, const char *col) {
  for (size_t k = 0; k < t->nfks; k++)
    if (strcmp(t->fks[k].from, col) == 0) return &t->fks[k];
  return NULL;
}

/* "Album(AlbumId*, ArtistId->Artist)": primary key columns starred, foreign
 * keys with the table they point at; a table without keys by name alone. */
static void tt_index_keys(const tt_schema *s, tt_buf *out) {
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    const tt_table_info *t = tt_schema_card(s, i)->table;
    tt_put_shown(out, t->name, strlen(t->name));
    bool any = false;
    for (size_t c = 0; c < t->ncols; c++) {
      const tt_column_info *col = &t->cols[c];
      const tt_fk_info *fk = tt_index_fk(t, col->name);
      if (!col->pk && !fk) continue;
      tt_buf_puts(out, any ? ", " : "(");
      any = true;
      tt_put_shown(out, col->name, strlen(col->name));
      if (col->pk) tt_buf_putc(out, '*');
      if (fk) {
        tt_buf_puts(out, "->");
        tt_put_shown(out, fk->table, strlen(fk->table));
      }
    }
    tt_buf_puts(out, any ? ")\n" : "\n");
  }
}

/* All names on comma-separated lines of about ten. */
static void tt_index_names(const tt_schema *s, tt_buf *out) {
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    const char *name = tt_schema_card(s, i)->table->name;
    if (i) tt_buf_puts(out, i % 10 ? ", " : "\n");
    tt_put_shown(out, name, strlen(name));
  }
  if (tt_schema_count(s)) tt_buf_putc(out, '\n');
}

/* Length of name's prefix up to and including its first '_', 0 when none. */
static size_t tt_prefix_len(const char *name) {
  const char *u = strchr(name, '_');
  return u && u != name && u[1] ? (size_t)(u - name) + 1 : 0;
}

/* Names grouped by prefix, one line per group: "sales_: orders, items".
 * Stops before a line that would pass max_tokens and says how many tables
 * are left out (max_tokens 0: no limit). */
static void tt_index_grouped(const tt_schema *s, size_t max_tokens, tt_buf *out) {
  size_t n = tt_schema_count(s), shown = 0;
  bool *done = tt_xcalloc(n ? n : 1, sizeof(bool));
  tt_buf line = TT_BUF_INIT;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    if (done[i]) continue;
    const char *name = tt_schema_card(s, i)->table->name;
    size_t p = tt_prefix_len(name), members = 0;
    tt_buf_reset(&line);
    for (size_t k = i; k < n && p; k++) {
      const char *other = tt_schema_card(s, k)->table->name;
      if (!done[k] && strncmp(other, name, p) == 0 && tt_prefix_len(other) == p) members++;
    }
    if (members >= 2) {
      tt_put_shown(&line, name, p);
      tt_buf_puts(&line, ": ");
      size_t m = 0;
      for (size_t k = i; k < n; k++) {
        const char *other = tt_schema_card(s, k)->table->name;
        if (done[k] || strncmp(other, name, p) != 0 || tt_prefix_len(other) != p) continue;
        if (m++) tt_buf_puts(&line, ", ");
        tt_put_shown(&line, other + p, strlen(other + p));
        done[k] = true;
      }
    } else {
      /* tables of no group share one line of their own */
      size_t m = 0;
      for (size_t k = i; k < n && m < 10; k++) {
        const char *other = tt_schema_card(s, k)->table->name;
        size_t q = tt_prefix_len(other), same = 0;
        for (size_t j = 0; j < n && q && same < 2; j++)
          if (strncmp(tt_schema_card(s, j)->table->name, other, q) == 0 &&
              tt_prefix_len(tt_schema_card(s, j)->table->name) == q)
            same++;
        if (done[k] || same >= 2) continue;
        if (m++) tt_buf_puts(&line, ", ");
        tt_put_shown(&line, other, strlen(other));
        done[k] = true;
      }
      members = m;
    }
    tt_buf_putc(&line, '\n');
    size_t cost = tt_tokens_estimate(line.data, line.len);
    if (max_tokens && used + cost + 12 > max_tokens) {
      for (size_t k = 0; k < n; k++) done[k] = true;
      break;
    }
    tt_buf_append(out, line.data, line.len);
    used += cost;
    shown += members;
  }
  if (shown < n)
    tt_buf_printf(out, "(and %zu more tables: %s lists them)\n", n - shown,
                  tt_schema_catalog(s)->list_tables_sql ? tt_schema_catalog(s)->list_tables_sql
                                                        : "the database's catalog");
  tt_buf_free(&line);
  free(done);
}

static size_t tt_buf_tokens(const tt_buf *b) { return tt_tokens_estimate(b->data ? b->data : "", b->len); }

tt_schema_index_form tt_schema_render_compact_index(const tt_schema *s, size_t max_tokens,
                                                    tt_buf *out) {
  tt_buf b = TT_BUF_INIT;
  tt_schema_index_form form = TT_INDEX_KEYS;
  tt_index_keys(s, &b);
  if (tt_buf_tokens(&b) > max_tokens) {
    tt_buf_reset(&b);
    form = TT_INDEX_NAMES;
    tt_index_names(s, &b);
  }
  if (tt_buf_tokens(&b) > max_tokens) {
    tt_buf_reset(&b);
    form = TT_INDEX_GROUPED;
    tt_index_grouped(s, 0, &b);
  }
  if (tt_buf_tokens(&b) > max_tokens) {
    tt_buf_reset(&b);
    form = TT_INDEX_PARTIAL;
    tt_index_grouped(s, max_tokens, &b);
  }
  tt_buf_append(out, b.data ? b.data : "", b.len);
  tt_buf_free(&b);
  return form;
}
