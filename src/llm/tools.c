/* tools.c — checking a tool call's arguments against the tool's JSON
 * schema (the small subset tabletalk's tools use), with messages that tell
 * the model exactly what to fix. Every failure is a TT_ERR_CONFIG: the
 * arguments are the model's to repair. */
#include "llm/llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tt_tool_spec *tt_tool_find(const tt_tool_spec *tools, size_t n, const char *name) {
  for (size_t i = 0; name && i < n; i++)
    if (strcmp(tools[i].name, name) == 0) return &tools[i];
  return NULL;
}

static bool tt_type_is(const json_t *v, const char *type) {
  if (strcmp(type, "string") == 0) return json_is_string(v);
  if (strcmp(type, "integer") == 0) return json_is_integer(v);
  if (strcmp(type, "number") == 0) return json_is_number(v);
  if (strcmp(type, "boolean") == 0) return json_is_boolean(v);
  if (strcmp(type, "object") == 0) return json_is_object(v);
  if (strcmp(type, "array") == 0) return json_is_array(v);
  if (strcmp(type, "null") == 0) return json_is_null(v);
  return true; /* unknown type names constrain nothing */
}

static bool tt_type_ok(const json_t *schema, const json_t *v, const char **want) {
  const json_t *type = json_object_get(schema, "type");
  if (json_is_string(type)) {
    *want = json_string_value(type);
    return tt_type_is(v, *want);
  }
  if (json_is_array(type)) {
    size_t i;
    const json_t *t;
    json_array_foreach(type, i, t) {
      if (json_is_string(t) && tt_type_is(v, json_string_value(t))) return true;
    }
    *want = "one of the allowed types";
    return false;
  }
  return true;
}

static bool tt_check_value(const json_t *schema, const json_t *v, const char *where,
                           tt_error *err);

static bool tt_check_object(const json_t *schema, const json_t *v, const char *where,
                            tt_error *err) {
  const json_t *props = json_object_get(schema, "properties");
  const json_t *required = json_object_get(schema, "required");
  size_t i;
  const json_t *r;
  json_array_foreach(required, i, r) {
    const char *name = json_string_value(r);
    if (name && !json_object_get(v, name)) {
      tt_error_set(err, TT_ERR_CONFIG, "%s is missing the required property \"%s\"", where, name);
      return false;
    }
  }
  const char *key;
  const json_t *val;
  json_object_foreach((json_t *)v, key, val) {
    const json_t *ps = json_object_get(props, key);
    if (!ps) {
      if (json_is_false(json_object_get(schema, "additionalProperties"))) {
        tt_buf allowed = TT_BUF_INIT;
        const char *k;
        const json_t *unused;
        json_object_foreach((json_t *)props, k, unused)
          tt_buf_printf(&allowed, "%s \"%s\"", allowed.len ? "," : "", k);
        tt_error_set(err, TT_ERR_CONFIG, "%s has an unknown property \"%s\" (allowed:%s)", where,
                     key, tt_buf_cstr(&allowed));
        tt_buf_free(&allowed);
        return false;
      }
      continue;
    }
    char sub[160];
    snprintf(sub, sizeof sub, "property \"%s\"", key);
    if (!tt_check_value(ps, val, sub, err)) return false;
  }
  return true;
}

/* anyOf: the value must fit one of the alternatives; the message names
 * what each alternative wants. */
static bool tt_check_any_of(const json_t *alts, const json_t *v, const char *where,
                            tt_error *err) {
  size_t i;
  const json_t *alt;
  json_array_foreach(alts, i, alt) {
    if (tt_check_value(alt, v, where, NULL)) return true;
  }
  tt_buf wants = TT_BUF_INIT;
  json_array_foreach(alts, i, alt) {
    const char *type = json_string_value(json_object_get(alt, "type"));
    const char *items = json_string_value(json_object_get(json_object_get(alt, "items"), "type"));
    tt_buf_printf(&wants, "%s", i == 0 ? " " : i + 1 == json_array_size(alts) ? " or " : ", ");
    if (type && strcmp(type, "array") == 0 && items)
      tt_buf_printf(&wants, "an array of %ss", items);
    else
      tt_buf_printf(&wants, "%s %s", type && strchr("aeiou", type[0]) ? "an" : "a",
                    type ? type : "value");
  }
  tt_error_set(err, TT_ERR_CONFIG, "%s must be%s", where, tt_buf_cstr(&wants));
  tt_buf_free(&wants);
  return false;
}

static bool tt_check_value(const json_t *schema, const json_t *v, const char *where,
                           tt_error *err) {
  const json_t *alts = json_object_get(schema, "anyOf");
  if (json_is_array(alts) && json_array_size(alts)) return tt_check_any_of(alts, v, where, err);
  const char *want = NULL;
  if (!tt_type_ok(schema, v, &want)) {
    tt_error_set(err, TT_ERR_CONFIG, "%s must be %s %s", where,
                 want && strchr("aeiou", want[0]) ? "an" : "a", want ? want : "value");
    return false;
  }
  const json_t *options = json_object_get(schema, "enum");
  if (json_is_array(options)) {
    size_t i;
    const json_t *o;
    bool found = false;
    json_array_foreach(options, i, o) found |= json_equal(o, (json_t *)v);
    if (!found) {
      char *list = json_dumps(options, JSON_COMPACT);
      tt_error_set(err, TT_ERR_CONFIG, "%s must be one of %s", where,
                   list ? list : "the listed values");
      free(list);
      return false;
    }
  }
  if (json_is_string(v)) {
    json_int_t min = json_integer_value(json_object_get(schema, "minLength"));
    if ((json_int_t)json_string_length(v) < min) {
      tt_error_set(err, TT_ERR_CONFIG, "%s must not be empty", where);
      return false;
    }
  }
  if (json_is_number(v)) {
    const json_t *lo = json_object_get(schema, "minimum"), *hi = json_object_get(schema, "maximum");
    if ((lo && json_number_value(v) < json_number_value(lo)) ||
        (hi && json_number_value(v) > json_number_value(hi))) {
      tt_error_set(err, TT_ERR_CONFIG, "%s must be between %g and %g", where,
                   lo ? json_number_value(lo) : -1e308, hi ? json_number_value(hi) : 1e308);
      return false;
    }
  }
  if (json_is_array(v)) {
    const json_t *items = json_object_get(schema, "items");
    json_int_t min = json_integer_value(json_object_get(schema, "minItems"));
    if ((json_int_t)json_array_size(v) < min) {
      tt_error_set(err, TT_ERR_CONFIG, "%s needs at least %lld item(s)", where, (long long)min);
      return false;
    }
    const json_t *max = json_object_get(schema, "maxItems");
    if (json_is_integer(max) && (json_int_t)json_array_size(v) > json_integer_value(max)) {
      tt_error_set(err, TT_ERR_CONFIG, "%s takes at most %lld item(s)", where,
                   (long long)json_integer_value(max));
      return false;
    }
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item) {
      char sub[200];
      snprintf(sub, sizeof sub, "item %zu of %s", i + 1, where);
      if (items && !tt_check_value(items, item, sub, err)) return false;
    }
  }
  if (json_is_object(v)) return tt_check_object(schema, v, where, err);
  return true;
}

bool tt_tool_check(const tt_tool_spec *tool, const char *args, tt_error *err) {
  json_error_t jerr;
  json_t *v = json_loads(args ? args : "", JSON_DECODE_ANY, &jerr);
  if (!v) {
    tt_error_set(err, TT_ERR_CONFIG, "the arguments of %s are not valid JSON (%s at character %d)",
                 tool->name, jerr.text, jerr.position);
    tt_error_hint(err, "send one JSON object");
    return false;
  }
  json_t *schema = json_loads(tool->parameters, 0, NULL);
  char where[96];
  snprintf(where, sizeof where, "the arguments of %s", tool->name);
  bool ok = schema ? tt_check_value(schema, v, where, err) : true;
  json_decref(schema);
  json_decref(v);
  return ok;
}
