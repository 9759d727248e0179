/* my_url.c — a mysql:// or mariadb:// URL taken apart into what
 * mysql_real_connect needs:
 *
 *   mysql://[user[:password]@][host][:port][/database][?key=value&...]
 *
 * The host may be [an IPv6 address], or a percent-encoded socket path
 * (mysql://%2Frun%2Fmysqld%2Fmysqld.sock/shop); every part is
 * percent-decoded. Keys: socket (a Unix socket; the host is then
 * ignored), user, password (discouraged: it shows in process lists),
 * password_file (a file whose first line is the password), ssl_mode
 * (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), ssl_ca,
 * ssl_capath, ssl_cert, ssl_key, connect_timeout; '-' and '_' are the
 * same in keys, and ssl-ca, sslca and sslrootcert mean one thing. What the
 * URL leaves out comes from MYSQL_HOST, MYSQL_TCP_PORT and MYSQL_UNIX_PORT
 * as the mysql client reads them, and the user from USER. Nothing here
 * connects; errors never show the password. */
#include "db/mysql/mysql.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int tt_my_hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* s[0..n) percent-decoded (a fresh string); NULL when a % is not followed
 * by two hex digits or the result holds a NUL byte. */
static char *tt_my_decode(const char *s, size_t n) {
  char *out = tt_xmalloc(n + 1);
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      int hi = i + 2 < n ? tt_my_hexval(s[i + 1]) : -1;
      int lo = i + 2 < n ? tt_my_hexval(s[i + 2]) : -1;
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
        free(out);
        return NULL;
      }
      out[w++] = (char)(hi * 16 + lo);
      i += 2;
    } else {
      out[w++] = s[i];
    }
  }
  out[w] = '\0';
  return out;
}

static void tt_my_set(char **slot, char *value) {
  if (*slot) {
    memset(*slot, 0, strlen(*slot));
    free(*slot);
  }
  *slot = value;
}

/* The first line of the file at path, as the password. */
static bool tt_my_read_password(const char *path, char **out, tt_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    tt_error_set(err, TT_ERR_CONFIG, "cannot read the password file %s: %s", path,
                 strerror(errno));
    return false;
  }
  char line[1024];
  if (!fgets(line, sizeof line, f)) line[0] = '\0';
  fclose(f);
  size_t n = strcspn(line, "\r\n");
  line[n] = '\0';
  tt_my_set(out, tt_xstrdup(line));
  memset(line, 0, sizeof line);
  return true;
}

/* key as written, lower case with '-' for '_', into out. */
static void tt_my_key(const char *k, size_t n, char *out, size_t cap) {
  size_t w = 0;
  for (size_t i = 0; i < n && w + 1 < cap; i++)
    out[w++] = k[i] == '-' ? '_' : (char)tolower((unsigned char)k[i]);
  out[w] = '\0';
}

static bool tt_my_param(tt_my_conninfo *ci, const char *key, char *value, tt_error *err) {
  static const struct {
    const char *key;
    size_t slot; /* offset of the char * in tt_my_conninfo */
  } strs[] = {
      {"socket", offsetof(tt_my_conninfo, socket)},
      {"unix_socket", offsetof(tt_my_conninfo, socket)},
      {"user", offsetof(tt_my_conninfo, user)},
      {"password", offsetof(tt_my_conninfo, password)},
      {"ssl_ca", offsetof(tt_my_conninfo, ssl_ca)},
      {"sslca", offsetof(tt_my_conninfo, ssl_ca)},
      {"sslrootcert", offsetof(tt_my_conninfo, ssl_ca)},
      {"ssl_capath", offsetof(tt_my_conninfo, ssl_capath)},
      {"ssl_cert", offsetof(tt_my_conninfo, ssl_cert)},
      {"sslcert", offsetof(tt_my_conninfo, ssl_cert)},
      {"ssl_key", offsetof(tt_my_conninfo, ssl_key)},
      {"sslkey", offsetof(tt_my_conninfo, ssl_key)},
  };
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (strcmp(key, strs[i].key) == 0) {
      tt_my_set((char **)((char *)ci + strs[i].slot), value);
      return true;
    }
  if (strcmp(key, "password_file") == 0) {
    bool ok = tt_my_read_password(value, &ci->password, err);
    free(value);
    return ok;
  }
  if (strcmp(key, "ssl_mode") == 0 || strcmp(key, "sslmode") == 0) {
    static const char *const modes[] = {"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA",
                                        "VERIFY_IDENTITY"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
      if (strcasecmp(value, modes[i]) == 0) {
        ci->ssl_mode = (tt_my_ssl_mode)i;
        free(value);
        return true;
      }
    tt_error_set(err, TT_ERR_CONFIG,
                 "ssl_mode=%s is not a mode: use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or "
                 "VERIFY_IDENTITY",
                 value);
    free(value);
    return false;
  }
  if (strcmp(key, "connect_timeout") == 0) {
    long s;
    bool ok = tt_parse_long(value, 1, 600, &s);
    if (ok) ci->connect_timeout = (unsigned)s;
    else
      tt_error_set(err, TT_ERR_CONFIG, "connect_timeout=%s is not a number of seconds (1-600)",
                   value);
    free(value);
    return ok;
  }
  tt_error_set(err, TT_ERR_CONFIG,
               "the URL's parameter %s is unknown: use socket, user, password_file, ssl_mode, "
               "ssl_ca, ssl_capath, ssl_cert, ssl_key or connect_timeout",
               key);
  free(value);
  return false;
}

static bool tt_my_params(tt_my_conninfo *ci, const char *q, tt_error *err) {
  while (*q) {
    size_t n = strcspn(q, "&");
    const char *eq = memchr(q, '=', n);
    if (n > 0) {
      char key[64];
      tt_my_key(q, eq ? (size_t)(eq - q) : n, key, sizeof key);
      char *value = eq ? tt_my_decode(eq + 1, n - (size_t)(eq + 1 - q)) : tt_xstrdup("");
      if (!value) {
        tt_error_set(err, TT_ERR_CONFIG, "the URL's parameter %s has a bad %%-escape", key);
        return false;
      }
      if (!tt_my_param(ci, key, value, err)) return false;
    }
    q += n;
    if (*q == '&') q++;
  }
  return true;
}

/* [host]:port or host:port into ci->host and ci->port. */
static bool tt_my_hostport(tt_my_conninfo *ci, const char *s, size_t n, tt_error *err) {
  const char *port = NULL;
  size_t hn = n;
  if (n && s[0] == '[') {
    const char *close = memchr(s, ']', n);
    if (!close) {
      tt_error_set(err, TT_ERR_CONFIG, "the URL's host [%.*s is missing its ]", (int)n - 1, s + 1);
      return false;
    }
    hn = (size_t)(close - s) + 1;
    if (hn < n && s[hn] == ':') port = s + hn + 1;
    else if (hn < n) {
      tt_error_set(err, TT_ERR_CONFIG, "the URL has text after its host's ]");
      return false;
    }
    char *h = tt_xstrndup(s + 1, hn - 2);
    tt_my_set(&ci->host, h);
  } else {
    const char *colon = memchr(s, ':', n);
    if (colon) {
      hn = (size_t)(colon - s);
      port = colon + 1;
    }
    if (hn) {
      char *h = tt_my_decode(s, hn);
      if (!h) {
        tt_error_set(err, TT_ERR_CONFIG, "the URL's host has a bad %%-escape");
        return false;
      }
      tt_my_set(&ci->host, h);
    }
  }
  if (port) {
    char buf[16];
    size_t pn = (size_t)(s + n - port);
    long p;
    if (pn == 0 || pn >= sizeof buf) {
      tt_error_set(err, TT_ERR_CONFIG, "the URL's port is empty or too long");
      return false;
    }
    memcpy(buf, port, pn);
    buf[pn] = '\0';
    if (!tt_parse_long(buf, 1, 65535, &p)) {
      tt_error_set(err, TT_ERR_CONFIG, "the URL's port %s is not a number from 1 to 65535", buf);
      return false;
    }
    ci->port = (unsigned)p;
  }
  /* a host that is a path names a Unix socket */
  if (ci->host && ci->host[0] == '/') {
    tt_my_set(&ci->socket, ci->host);
    ci->host = NULL;
  }
  return true;
}

/* user[:password] */
static bool tt_my_userinfo(tt_my_conninfo *ci, const char *s, size_t n, tt_error *err) {
  const char *colon = memchr(s, ':', n);
  size_t un = colon ? (size_t)(colon - s) : n;
  char *user = tt_my_decode(s, un);
  char *pw = colon ? tt_my_decode(colon + 1, n - un - 1) : NULL;
  if (!user || (colon && !pw)) {
    free(user);
    free(pw);
    tt_error_set(err, TT_ERR_CONFIG, "the URL's user or password has a bad %%-escape");
    return false;
  }
  if (user[0]) tt_my_set(&ci->user, user);
  else free(user);
  if (pw) tt_my_set(&ci->password, pw);
  return true;
}

bool tt_my_conninfo_parse(const char *uri, tt_my_conninfo *ci, tt_error *err) {
  memset(ci, 0, sizeof *ci);
  ci->ssl_mode = TT_MY_SSL_DEFAULT;
  const char *p = strstr(uri, "://");
  if (!p) {
    tt_error_set(err, TT_ERR_CONFIG, "not a mysql:// or mariadb:// URL");
    return false;
  }
  p += 3;
  const char *auth_end = p + strcspn(p, "/?#");
  const char *at = NULL;
  for (const char *q = p; q < auth_end; q++)
    if (*q == '@') at = q; /* the last @ ends the user information */
  bool ok = true;
  if (at) {
    ok = tt_my_userinfo(ci, p, (size_t)(at - p), err);
    p = at + 1;
  }
  if (ok) ok = tt_my_hostport(ci, p, (size_t)(auth_end - p), err);
  p = auth_end;
  if (ok && *p == '/') {
    p++;
    size_t n = strcspn(p, "?#");
    if (n) {
      ci->database = tt_my_decode(p, n);
      if (!ci->database) {
        tt_error_set(err, TT_ERR_CONFIG, "the URL's database name has a bad %%-escape");
        ok = false;
      }
    }
    p += n;
  }
  if (ok && *p == '?') {
    p++;
    char *q = tt_xstrndup(p, strcspn(p, "#"));
    ok = tt_my_params(ci, q, err);
    memset(q, 0, strlen(q));
    free(q);
  }
  if (!ok) {
    tt_my_conninfo_free(ci);
    return false;
  }
  /* what the URL leaves out, as the mysql client reads it */
  const char *env;
  if (!ci->host && !ci->socket && (env = getenv("MYSQL_HOST")) && *env)
    ci->host = tt_xstrdup(env);
  long port;
  if (!ci->port && (env = getenv("MYSQL_TCP_PORT")) && tt_parse_long(env, 1, 65535, &port))
    ci->port = (unsigned)port;
  if (!ci->socket && (!ci->host || strcmp(ci->host, "localhost") == 0) &&
      (env = getenv("MYSQL_UNIX_PORT")) && *env)
    ci->socket = tt_xstrdup(env);
  if (!ci->user && (env = getenv("USER")) && *env) ci->user = tt_xstrdup(env);
  if (!ci->database) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "the URL names no database: add it after the host, as in "
                 "mysql://user@host/shop");
    tt_my_conninfo_free(ci);
    return false;
  }
  return true;
}

void tt_my_conninfo_free(tt_my_conninfo *ci) {
  if (!ci) return;
  tt_my_set(&ci->host, NULL);
  tt_my_set(&ci->socket, NULL);
  tt_my_set(&ci->user, NULL);
  tt_my_set(&ci->password, NULL);
  tt_my_set(&ci->database, NULL);
  tt_my_set(&ci->ssl_ca, NULL);
  tt_my_set(&ci->ssl_capath, NULL);
  tt_my_set(&ci->ssl_cert, NULL);
  tt_my_set(&ci->ssl_key, NULL);
  memset(ci, 0, sizeof *ci);
}
