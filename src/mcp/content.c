/* content.c — what the MCP server offers besides tools: a resource for the
 * whole schema and one per table or view (their cards, as text), a
 * resource for the user's knowledge file when there is one, a
 * resource template for tables by name, two prompts (explore the database,
 * analyse one table), and the pagination cursors of the list methods. */
#include "mcp/mcp_internal.h"

#include <stdlib.h>
#include <string.h>

#define TT_URI_SCHEMA "tabletalk://schema"
#define TT_URI_TABLE "tabletalk://table/"
#define TT_URI_KNOWLEDGE "tabletalk://knowledge"
/* What the explore_database prompt's table index may take, in tokens. */
#define TT_EXPLORE_INDEX_TOKENS 3000
#define TT_RESOURCES_PAGE 100

/* ---- cursors ------------------------------------------------------------------ */

json_t *tt_mcp_cursor_make(size_t offset) {
  char text[40];
  int n = snprintf(text, sizeof text, "offset:%zu", offset);
  tt_buf b = TT_BUF_INIT;
  tt_base64_encode(&b, text, (size_t)n, true);
  json_t *c = json_string(tt_buf_cstr(&b));
  tt_buf_free(&b);
  return c;
}

bool tt_mcp_cursor_parse(const json_t *params, size_t *offset) {
  *offset = 0;
  const json_t *c = json_object_get(params, "cursor");
  if (!c || json_is_null(c)) return true;
  if (!json_is_string(c) || json_string_length(c) > 64) return false;
  tt_buf b = TT_BUF_INIT;
  bool ok = tt_base64_decode(&b, json_string_value(c), json_string_length(c));
  long off = 0;
  ok = ok && tt_has_prefix(tt_buf_cstr(&b), "offset:") &&
       tt_parse_long(tt_buf_cstr(&b) + 7, 0, 100000000L, &off);
  tt_buf_free(&b);
  *offset = (size_t)off;
  return ok;
}

/* ---- resources ------------------------------------------------------------------ */

/* Table names may hold any character: everything but RFC 3986 unreserved
 * characters is percent-encoded. */
static void tt_uri_put_name(tt_buf *b, const char *name) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
        strchr("-._~", *p)) {
      tt_buf_putc(b, (char)*p);
    } else {
      char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
      tt_buf_append(b, esc, 3);
    }
  }
}

static int tt_hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes percent escapes; false on a bad escape or a NUL byte. */
static bool tt_uri_decode(tt_buf *out, const char *s) {
  for (; *s; s++) {
    if (*s != '%') {
      tt_buf_putc(out, *s);
      continue;
    }
    int hi = tt_hexval(s[1]), lo = hi >= 0 ? tt_hexval(s[2]) : -1;
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return false;
    tt_buf_putc(out, (char)(hi * 16 + lo));
    s += 2;
  }
  return true;
}

static json_t *tt_table_resource(const tt_card *c) {
  const tt_table_info *t = c->table;
  tt_buf uri = TT_BUF_INIT, title = TT_BUF_INIT, desc = TT_BUF_INIT;
  tt_buf_puts(&uri, TT_URI_TABLE);
  tt_uri_put_name(&uri, t->name);
  tt_buf_printf(&title, "%s %s", t->is_view ? "View" : "Table", t->name);
  tt_buf_printf(&desc, "Columns, keys, example values and row count of %s %s", t->is_view ? "view" : "table",
                t->name);
  if (t->row_count >= 0) {
    tt_buf_puts(&desc, t->row_count_kind == TT_ROWS_AT_LEAST ? " (more than "
                       : t->row_count_kind == TT_ROWS_STAT1  ? " (about "
                                                             : " (");
    tt_buf_put_grouped(&desc, t->row_count);
    tt_buf_puts(&desc, t->row_count == 1 ? " row)" : " rows)");
  }
  json_t *r = json_pack("{s:s, s:o, s:o, s:o, s:s, s:I}", "uri", tt_buf_cstr(&uri), "name",
                        tt_json_stringn(t->name, strlen(t->name)), "title",
                        tt_json_stringn(title.data, title.len), "description",
                        tt_json_stringn(desc.data, desc.len), "mimeType", "text/plain", "size",
                        (json_int_t)strlen(c->text));
  tt_buf_free(&uri);
  tt_buf_free(&title);
  tt_buf_free(&desc);
  return r;
}

json_t *tt_mcp_resources_list(tt_mcp_req *r) {
  tt_error serr;
  const tt_schema *s = tt_mcp_schema(r->srv, &serr);
  if (!s) {
    json_t *e = tt_mcp_fail(r, TT_RPC_INTERNAL_ERROR, 500, "%s", serr.message);
    return e;
  }
  size_t n = tt_schema_count(s) + 1, off;
  if (!tt_mcp_cursor_parse(r->params, &off) || (off && off >= n))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                       "Invalid cursor: pass back the nextCursor of an earlier resources/list "
                       "result, or no cursor for the first page");
  json_t *list = json_array();
  for (size_t i = off; i < n && i < off + TT_RESOURCES_PAGE; i++) {
    if (i == 0) {
      tt_buf desc = TT_BUF_INIT;
      tt_buf_printf(&desc, "Every table and view of %s as compact cards: columns with types, "
                    "keys, example values and row counts", r->srv->db_name);
      json_array_append_new(
          list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "uri", TT_URI_SCHEMA, "name", "schema",
                          "title", "Database schema", "description", tt_buf_cstr(&desc),
                          "mimeType", "text/plain"));
      tt_buf_free(&desc);
      if (tt_schema_knowledge(s)) /* listed with the schema, on the first page */
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "uri", TT_URI_KNOWLEDGE, "name", "knowledge",
                            "title", "What the user knows about the data", "description",
                            "The knowledge file beside the database: descriptions of tables and "
                            "columns, business definitions, example questions with their SQL",
                            "mimeType", "application/json"));
    } else {
      json_array_append_new(list, tt_table_resource(tt_schema_card(s, i - 1)));
    }
  }
  json_t *res = json_pack("{s:o}", "resources", list);
  if (off + TT_RESOURCES_PAGE < n)
    json_object_set_new(res, "nextCursor", tt_mcp_cursor_make(off + TT_RESOURCES_PAGE));
  return res;
}

json_t *tt_mcp_resource_templates(tt_mcp_req *r) {
  size_t off;
  if (!tt_mcp_cursor_parse(r->params, &off) || off)
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                       "Invalid cursor: resources/templates/list has a single page");
  return json_pack("{s:[{s:s, s:s, s:s, s:s, s:s}]}", "resourceTemplates", "uriTemplate",
                   TT_URI_TABLE "{name}", "name", "table", "title", "Table or view by name",
                   "description",
                   "The card of one table or view: columns, keys, example values, row count",
                   "mimeType", "text/plain");
}

static json_t *tt_resource_not_found(tt_mcp_req *r, const char *uri, const char *why) {
  tt_mcp_fail(r, r->modern ? TT_RPC_INVALID_PARAMS : TT_MCP_RESOURCE_NOT_FOUND, 0,
              "Resource not found: %s; resources/list shows what there is", why);
  r->err_data = json_pack("{s:o}", "uri", tt_json_stringn(uri, strlen(uri)));
  return NULL;
}

json_t *tt_mcp_resources_read(tt_mcp_req *r) {
  const json_t *u = json_object_get(r->params, "uri");
  if (!json_is_string(u))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                       "resources/read needs params.uri, e.g. \"" TT_URI_SCHEMA "\"");
  const char *uri = json_string_value(u);
  tt_error serr;
  const tt_schema *s = tt_mcp_schema(r->srv, &serr);
  if (!s) {
    json_t *e = tt_mcp_fail(r, TT_RPC_INTERNAL_ERROR, 500, "%s", serr.message);
    return e;
  }
  tt_buf text = TT_BUF_INIT;
  const char *mime = "text/plain";
  if (strcmp(uri, TT_URI_KNOWLEDGE) == 0) {
    const tt_knowledge *k = tt_schema_knowledge(s);
    if (!k) return tt_resource_not_found(r, uri, "there is no knowledge file beside the database");
    char *dump = tt_knowledge_dump(k);
    tt_buf_puts(&text, dump);
    free(dump);
    mime = "application/json";
  } else if (strcmp(uri, TT_URI_SCHEMA) == 0) {
    tt_schema_render_text(s, NULL, 0, &text);
  } else if (tt_has_prefix(uri, TT_URI_TABLE)) {
    tt_buf name = TT_BUF_INIT;
    const tt_card *c = NULL;
    if (tt_uri_decode(&name, uri + strlen(TT_URI_TABLE))) c = tt_schema_find(s, tt_buf_cstr(&name));
    tt_buf_free(&name);
    if (!c) return tt_resource_not_found(r, uri, "no table or view by that name");
    tt_buf_puts(&text, c->text);
  } else {
    return tt_resource_not_found(r, uri, "tabletalk serves " TT_URI_SCHEMA " and " TT_URI_TABLE "{name}");
  }
  json_t *res = json_pack("{s:[{s:O, s:s, s:o}]}", "contents", "uri", u, "mimeType", mime,
                          "text", tt_json_stringn(text.data ? text.data : "", text.len));
  tt_buf_free(&text);
  return res;
}

/* ---- prompts ------------------------------------------------------------------------ */

json_t *tt_mcp_prompt_defs(const tt_mcp_server *s) {
  (void)s;
  return json_pack(
      "[{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}, {s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}]",
      "name", "explore_database", "title", "Explore this database", "description",
      "Find out what the database holds: read the schema, run overview queries, and suggest "
      "questions it can answer (with the SQL)",
      "arguments", "name", "focus", "description",
      "a topic to concentrate on, e.g. \"sales by country\" (optional)", "required", 0,
      "name", "analyze_table", "title", "Analyse one table", "description",
      "Look closely at one table or view: value distributions, NULLs, ranges and how it relates "
      "to other tables",
      "arguments", "name", "table", "description", "the table or view to analyse", "required", 1);
}

static json_t *tt_prompt_result(const char *description, const char *text) {
  return json_pack("{s:s, s:[{s:s, s:{s:s, s:o}}]}", "description", description, "messages",
                   "role", "user", "content", "type", "text", "text",
                   tt_json_stringn(text, strlen(text)));
}

json_t *tt_mcp_prompts_get(tt_mcp_req *r) {
  const json_t *name = json_object_get(r->params, "name");
  const json_t *args = json_object_get(r->params, "arguments");
  if (!json_is_string(name))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                       "prompts/get needs params.name: explore_database or analyze_table");
  if (args && !json_is_object(args))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0, "params.arguments must be an object of strings");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)args, key, v) {
    if (!json_is_string(v))
      return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0, "prompt argument \"%.60s\" must be a string",
                         key);
  }
  tt_error serr;
  const tt_schema *s = tt_mcp_schema(r->srv, &serr);
  if (!s) {
    json_t *e = tt_mcp_fail(r, TT_RPC_INTERNAL_ERROR, 500, "%s", serr.message);
    return e;
  }
  const char *n = json_string_value(name);
  tt_buf text = TT_BUF_INIT;
  json_t *res = NULL;
  if (strcmp(n, "explore_database") == 0) {
    const char *focus = json_string_value(json_object_get(args, "focus"));
    tt_buf_printf(&text,
                  "Explore the %s database %s through the tabletalk tools (all of them are "
                  "read-only). Its tables and views (* marks primary keys, -> foreign keys):\n\n",
                  r->srv->dialect, r->srv->db_name);
    /* the compact index ask uses: names with key columns, or only names
     * when a large schema would not fit a client's context otherwise */
    tt_schema_render_compact_index(s, TT_EXPLORE_INDEX_TOKENS, &text);
    tt_buf_puts(&text,
                "\n1. Call describe_schema to read columns, keys and example values.\n"
                "2. Run a few overview queries with run_sql: row counts, the range of dates, the "
                "largest categories.\n"
                "3. Summarise in a few sentences what the data is about, then suggest five "
                "questions it can answer, each with the SQL that answers it (ask_database answers "
                "plain-language questions directly).\n");
    if (focus && *focus) tt_buf_printf(&text, "\nFocus on: %s\n", focus);
    res = tt_prompt_result("Explore the database", tt_buf_cstr(&text));
  } else if (strcmp(n, "analyze_table") == 0) {
    const char *table = json_string_value(json_object_get(args, "table"));
    if (!table || !*table) {
      tt_buf_free(&text);
      return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                         "analyze_table needs the argument \"table\": a table or view name");
    }
    const tt_card *c = tt_schema_find(s, table);
    if (!c) {
      tt_buf_free(&text);
      return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                         "analyze_table: no table or view named \"%.80s\"; resources/list or "
                         "describe_schema shows the names",
                         table);
    }
    tt_buf_printf(&text,
                  "Analyse the %s %s of the %s database %s with the tabletalk tools (all "
                  "read-only). Its card:\n\n%s\n"
                  "Use run_sql to find, for each column, the number of distinct values, NULLs, "
                  "and the range or the most common values; then how the %s relates to other "
                  "tables through its keys. Report what you find with the numbers and the SQL "
                  "behind each of them.\n",
                  c->table->is_view ? "view" : "table", c->table->name, r->srv->dialect, r->srv->db_name, c->text,
                  c->table->is_view ? "view" : "table");
    res = tt_prompt_result("Analyse one table", tt_buf_cstr(&text));
  } else {
    res = tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                      "Unknown prompt: %.100s; the prompts are explore_database and analyze_table", n);
  }
  tt_buf_free(&text);
  return res;
}
