/* util.h — public face of the util layer: growable byte buffers, an arena,
 * UTF-8 decoding, escaping text for terminals and JSON, clocks and small
 * string helpers. Everything else in tabletalk builds on these; this layer
 * knows nothing about databases, models or front ends.
 *
 * Ownership: functions named _new/_detach/_dup return memory the caller
 * frees; a tt_buf owns its bytes until tt_buf_free or tt_buf_detach. Memory
 * exhaustion is fatal (message on stderr, exit 1), like git's xmalloc: every
 * size that user input can influence is capped before it reaches here. */
#ifndef TT_UTIL_H
#define TT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#if defined(__GNUC__)
#define TT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TT_PRINTF(a, b)
#endif

/* ---- memory ---------------------------------------------------------- */

void *tt_xmalloc(size_t n);
void *tt_xcalloc(size_t count, size_t size);
void *tt_xrealloc(void *p, size_t n);
char *tt_xstrdup(const char *s);
char *tt_xstrndup(const char *s, size_t n);
char *tt_xasprintf(const char *fmt, ...) TT_PRINTF(1, 2);

/* ---- errors (error.c): the one error type of every layer -------------- */

/* What kind of thing went wrong: callers decide on the kind (and a refused
 * statement's reason), never on the wording of the message. */
typedef enum tt_errkind {
  TT_OK = 0,
  TT_ERR_CONFIG,    /* a setting, option or file the user named is unusable */
  TT_ERR_IO,        /* a file or folder cannot be opened, read or written */
  TT_ERR_REFUSED,   /* a statement the guard refused (reason says why) */
  TT_ERR_TIMEOUT,   /* a time limit ran out */
  TT_ERR_LIMIT,     /* a size, depth or memory limit */
  TT_ERR_SQL,       /* the database engine rejected or failed a statement */
  TT_ERR_BUSY,      /* another program held the data locked, or kept changing it */
  TT_ERR_CANCELLED, /* stopped by the user, a signal or a client that left */
  TT_ERR_CONNECT,   /* a server (a model endpoint) cannot be reached */
  TT_ERR_HTTP,      /* an HTTP error status (status holds it) */
  TT_ERR_PROTOCOL,  /* a peer's reply is not what its protocol says */
  TT_ERR_UNAVAILABLE, /* something the request needs is not set up (no model) */
} tt_errkind;

/* Filled by any function that takes a tt_error *err and fails (NULL or
 * false returned); like curl's CURLcode and error buffer in one. The
 * message says what happened, the hint (may be "") what to do; front ends
 * show both. */
typedef struct tt_error {
  tt_errkind kind;
  int reason;         /* TT_ERR_REFUSED: the guard's reason (tt_db_refusal) */
  int status;         /* TT_ERR_HTTP: the HTTP status; else 0 */
  int line;           /* the line of a file the problem is on; 0: none */
  char message[768];
  char hint[256];
} tt_error;

#define TT_ERROR_INIT {TT_OK, 0, 0, 0, "", ""}

/* "config", "io", "refused", "timeout", "limit", "sql", "busy",
 * "cancelled", "connect", "http", "protocol", "unavailable" ("ok"). */
const char *tt_errkind_name(tt_errkind kind);
/* Empties err (kind TT_OK). */
void tt_error_clear(tt_error *err);
/* Sets kind and message (the hint is emptied); err may be NULL. */
void tt_error_set(tt_error *err, tt_errkind kind, const char *fmt, ...) TT_PRINTF(3, 4);
void tt_error_vset(tt_error *err, tt_errkind kind, const char *fmt, va_list ap) TT_PRINTF(3, 0);
/* Sets the hint: what the user can do about it. */
void tt_error_hint(tt_error *err, const char *fmt, ...) TT_PRINTF(2, 3);
/* Puts text before the message ("knowledge file k.json: "). */
void tt_error_prefix(tt_error *err, const char *fmt, ...) TT_PRINTF(2, 3);
/* The message and, when there is one, the hint after "; ": how a front
 * end prints the error on one line. Points into a thread-local buffer
 * valid until the next call on this thread. */
const char *tt_error_text(const tt_error *err);

/* ---- byte buffer ----------------------------------------------------- */

typedef struct tt_buf {
  char *data; /* always NUL-terminated when non-NULL */
  size_t len;
  size_t cap;
} tt_buf;

#define TT_BUF_INIT {NULL, 0, 0}

void tt_buf_append(tt_buf *b, const void *p, size_t n);
void tt_buf_puts(tt_buf *b, const char *s);
void tt_buf_putc(tt_buf *b, char c);
void tt_buf_printf(tt_buf *b, const char *fmt, ...) TT_PRINTF(2, 3);
void tt_buf_vprintf(tt_buf *b, const char *fmt, va_list ap) TT_PRINTF(2, 0);
void tt_buf_repeat(tt_buf *b, const char *s, size_t times);
/* Empties the buffer but keeps its memory. */
void tt_buf_reset(tt_buf *b);
/* Returns the contents as a NUL-terminated string ("" when empty, never NULL). */
const char *tt_buf_cstr(tt_buf *b);
/* Hands the contents to the caller (free() it) and empties the buffer. */
char *tt_buf_detach(tt_buf *b);
void tt_buf_free(tt_buf *b);

/* ---- arena: many small allocations freed together --------------------- */

typedef struct tt_arena tt_arena;

tt_arena *tt_arena_new(void);
void *tt_arena_alloc(tt_arena *a, size_t n);
/* Copies n bytes and appends a NUL (the copy may itself contain NULs). */
char *tt_arena_memdup(tt_arena *a, const void *p, size_t n);
char *tt_arena_strdup(tt_arena *a, const char *s);
void tt_arena_free(tt_arena *a);

/* ---- UTF-8 ------------------------------------------------------------ */

/* Decodes the UTF-8 sequence at s (n bytes available). Returns its length
 * (1-4) and stores the code point, or returns 0 when the bytes are not valid
 * UTF-8 (overlong, surrogate, above U+10FFFF, cut short). */
size_t tt_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* True when s[0..n) is valid UTF-8. *bad_offset (may be NULL) receives the
 * offset of the first invalid byte. */
bool tt_utf8_valid(const char *s, size_t n, size_t *bad_offset);
void tt_utf8_encode(tt_buf *b, uint32_t cp);
/* Number of code points; each invalid byte counts as one. */
size_t tt_utf8_count(const char *s, size_t n);
/* Byte length of the first max_chars code points of s. */
size_t tt_utf8_prefix(const char *s, size_t n, size_t max_chars);
/* Copies s writing every byte that is not valid UTF-8 as the four
 * characters \xHH (how names with such bytes are shown). */
void tt_utf8_escape_invalid(tt_buf *out, const char *s, size_t n);
/* Copies s replacing every invalid byte with U+FFFD. */
void tt_utf8_sanitize(tt_buf *out, const char *s, size_t n);

/* ---- escaping -------------------------------------------------------- */

/* Code points that must never reach a terminal raw: C0/C1 controls, DEL,
 * bidi controls, zero-width and other invisible format characters, tag
 * characters and variation selectors. */
bool tt_cp_is_unsafe(uint32_t cp);

typedef struct tt_escape_opts {
  size_t max_chars;      /* cut after this many code points (0: no cut) */
  bool short_marker;     /* a cut ends in "…" alone, not "…[N chars]" */
  const char *mark_on;   /* wrapped around each escape, e.g. a dim colour */
  const char *mark_off;  /* (NULL: nothing) */
} tt_escape_opts;

/* Appends s to out in a form safe for a terminal: \n \r \t \0 and \xHH for
 * control bytes and invalid UTF-8, <U+XXXX> for invisible or bidi code
 * points (a single variation selector after a visible character and a
 * zero-width joiner between emoji are kept). A cut string ends with
 * "…[N chars]" giving the original length. Returns the display width of
 * what was appended, escapes and marker included. */
size_t tt_escape_terminal(tt_buf *out, const char *s, size_t n,
                          const tt_escape_opts *opts);

/* Display width (terminal columns) of valid, already escaped UTF-8 text.
 * Needs an UTF-8 LC_CTYPE for wide characters (the CLI sets C.UTF-8). */
size_t tt_display_width(const char *s, size_t n);

/* ---- JSON -------------------------------------------------------------- */

/* A JSON string from arbitrary bytes: invalid UTF-8 becomes U+FFFD. */
json_t *tt_json_stringn(const char *s, size_t n);
/* Serialises v (jansson flags) and then rewrites DEL, C1, bidi, zero-width
 * and other unsafe code points inside strings as \uXXXX escapes, so the text
 * is safe to print and still parses to the same value. */
void tt_json_dump(tt_buf *out, const json_t *v, size_t flags);
/* The same through json_dumps and tt_json_escape_unsafe, always: what
 * tt_json_dump's own writer of the compact form is checked against. */
void tt_json_dump_jansson(tt_buf *out, const json_t *v, size_t flags);
/* The escaping pass of tt_json_dump over already serialised JSON text. */
void tt_json_escape_unsafe(tt_buf *out, const char *json, size_t n);
/* Appends the JSON string of arbitrary bytes exactly as
 * tt_json_dump(tt_json_stringn(s, n), flags) writes it (flags without
 * JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH), without building a value: for
 * exports of millions of cells. */
void tt_json_put_string(tt_buf *out, const char *s, size_t n);
/* Appends a finite real exactly as tt_json_dump writes it with
 * JSON_REAL_PRECISION(15) (jansson's form of %.15g: "1.0", "1e15", "1e-5"). */
void tt_json_put_real(tt_buf *out, double v);
/* The same with jansson's default precision, 17 digits (%.17g). */
void tt_json_put_real17(tt_buf *out, double v);

/* ---- numbers as text (num.c) --------------------------------------------- */

#define TT_FMT_INT_MAX 21  /* bytes tt_fmt_int may write, the NUL included */
#define TT_FMT_REAL_MAX 32 /* the same for tt_fmt_real15 */

/* v in decimal ("-9223372036854775808"), NUL-terminated; returns the
 * length. The same text as printf's "%lld", without printf. */
size_t tt_fmt_int(char *out, int64_t v);
/* v exactly as snprintf(out, TT_FMT_REAL_MAX, "%.15g", v) writes it in
 * the C locale ("0.1", "1e+15", "-0", "inf"), NUL-terminated; returns the
 * length. Computed without printf for the magnitudes data holds (2^-23 up
 * to 2^64), by printf itself for the rest. */
size_t tt_fmt_real15(char *out, double v);
/* Reads a whole decimal integer as PostgreSQL and printf write one
 * ("-42": an optional '-', then digits) into *v; false for anything else
 * (a '+', blanks, other text, a value past int64's range). */
bool tt_parse_int(const char *s, size_t n, int64_t *v);
/* Reads s as strtod would, when that can be done exactly without it: a
 * plain decimal ("-12.5", "0.0001") of at most 15 significant digits and
 * no exponent is one integer under 2^53 divided by a power of ten under
 * 10^23, both exact doubles, so the one correctly rounded division is
 * strtod's own result. False for everything else (the caller asks
 * strtod). */
bool tt_parse_real_plain(const char *s, size_t n, double *v);

/* ---- time ------------------------------------------------------------ */

/* Milliseconds on a monotonic clock (for durations and deadlines). */
double tt_now_ms(void);

/* The CLOCK_REALTIME time ms milliseconds from now: the deadline of a
 * pthread_cond_timedwait on a condition with the default clock. */
struct timespec tt_realtime_in(double ms);
/* Seconds since the epoch, with fractions (for timestamps in traces). */
double tt_wall_time(void);
/* Appends t (seconds since the epoch) as UTC ISO 8601 with milliseconds:
 * 2026-12-02T09:45:12.345Z. */
void tt_buf_put_iso_time(tt_buf *b, double t);

/* ---- identifiers ------------------------------------------------------- */

/* n random bytes from the kernel as 2n lower-case hex digits into out
 * (which must hold 2n+1 bytes). */
void tt_random_hex(char *out, size_t n);
/* A run id that sorts as text in start order: UTC time to the millisecond
 * plus three random hex digits, 20261202-094512-0837f3 (at
 * 09:45:12.083, random 7f3). */
char *tt_new_run_id(void);

/* ---- shared libraries loaded on first use (dl.c) -------------------------- */

/* One function of a library: its name (after the prefix) and the address
 * of the function pointer to fill. */
typedef struct tt_dl_sym {
  const char *name;
  void *slot;
} tt_dl_sym;

typedef enum tt_dl_status { TT_DL_OK, TT_DL_NO_LIBRARY, TT_DL_NO_SYMBOL } tt_dl_status;

/* Opens the first of files (NULL-terminated: the versioned name, then the
 * development one) that loads and fills every slot of syms with prefix +
 * name. TT_DL_NO_LIBRARY: why holds the loader's reason; TT_DL_NO_SYMBOL:
 * why holds the missing name (the library is closed again). */
tt_dl_status tt_dl_load(const char *const *files, const char *prefix, const tt_dl_sym *syms,
                        size_t n, char *why, size_t whylen);

/* ---- hashing (hash.c) ------------------------------------------------------- */

#define TT_FNV1A64_INIT 14695981039346656037ULL
#define TT_FNV1A32_INIT 2166136261u
/* FNV-1a of n bytes, continuing from h (an INIT value to start). */
uint64_t tt_fnv1a64(uint64_t h, const void *data, size_t n);
uint32_t tt_fnv1a32(uint32_t h, const void *data, size_t n);

/* ---- hosts (host.c) --------------------------------------------------------- */

/* host (n bytes, no port) names this machine's loopback: localhost, ::1,
 * [::1] or 127.x.y.z. */
bool tt_host_is_loopback(const char *host, size_t n);

/* ---- SHA-256 (libcrypto, loaded on first use) ------------------------------ */

typedef struct tt_sha256 tt_sha256;

/* NULL when libcrypto is not installed. */
tt_sha256 *tt_sha256_new(void);
void tt_sha256_update(tt_sha256 *h, const void *data, size_t n);
/* Writes 64 lower-case hex digits and a NUL, and frees h. */
void tt_sha256_finish(tt_sha256 *h, char hex[65]);
/* HMAC-SHA-256 of msg under key as 64 hex digits; false when libcrypto is
 * not installed. */
bool tt_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t n, char hex[65]);

/* ---- base64 (RFC 4648) ------------------------------------------------------ */

/* Appends the base64 of p (url: the URL-safe alphabet without padding). */
void tt_base64_encode(tt_buf *out, const void *p, size_t n, bool url);
/* Appends the decoded bytes of s (either alphabet, padding optional); false
 * when s is not base64. */
bool tt_base64_decode(tt_buf *out, const char *s, size_t n);

/* ---- configuration: environment, then a .env file, then the config file -- */

typedef struct tt_dotenv tt_dotenv;

/* Reads KEY=VALUE lines from path by dotenv's rules: optional "export ",
 * "double quotes" (\n \t \" \\ escapes, may span lines), 'single quotes'
 * (no escapes), # comments on their own line or after a blank outside
 * quotes. An absent file gives an empty set. Never modifies the process
 * environment. */
tt_dotenv *tt_dotenv_load(const char *path);
/* The same from text in memory. */
tt_dotenv *tt_dotenv_parse(const char *text);
void tt_dotenv_free(tt_dotenv *d);
/* The process environment wins over the .env file; NULL when neither has
 * name or the value is empty. d may be NULL. */
const char *tt_config_get(const tt_dotenv *d, const char *name);
/* The user's config file: $TABLETALK_CONFIG, else
 * $XDG_CONFIG_HOME/tabletalk/config, else ~/.config/tabletalk/config
 * (freshly allocated; the file may not exist). */
char *tt_config_path(void);
/* The config file and then dotenv_path (".env"), both by dotenv's rules,
 * in one set where the .env file's values win; with tt_config_get the
 * order is: environment, .env, config file. Absent files add nothing. */
tt_dotenv *tt_config_load(const char *dotenv_path);
/* Where tt_config_get found name: "the environment", "./.env", "the config
 * file" or "nowhere", for messages. */
const char *tt_config_origin(const tt_dotenv *d, const char *name);

/* ---- files and folders -------------------------------------------------- */

/* Creates path and its parents (mode for new folders); true on success or
 * when it already exists as a folder. */
bool tt_mkdir_p(const char *path, unsigned mode);
/* $TABLETALK_<KIND>_DIR, else $XDG_<KIND>_HOME/tabletalk, else
 * ~/.local/<state|share|...>/tabletalk, for kind "STATE", "DATA", "CACHE". */
char *tt_default_dir(const tt_dotenv *d, const char *kind);
bool tt_file_exists(const char *path);
/* Names of the regular files in dir ending in suffix, sorted; free with
 * tt_strv_free. */
char **tt_list_files(const char *dir, const char *suffix, size_t *n);
void tt_strv_free(char **v, size_t n);

/* ---- strings --------------------------------------------------------- */

bool tt_streq_nocase(const char *a, const char *b);
/* Case-insensitive edit distance in which a swap of two neighbouring letters
 * counts as one edit, or max+1 once it is certain to exceed max. */
size_t tt_edit_distance(const char *a, const char *b, size_t max);
bool tt_has_prefix(const char *s, const char *prefix);
/* s ends with suffix, ignoring ASCII case ("chart.PNG" ends with ".png"). */
bool tt_has_suffix_nocase(const char *s, const char *suffix);
/* Appends n with thousands separators: 12,345. */
void tt_buf_put_grouped(tt_buf *b, long long n);
/* Parses a whole decimal number; false on junk, overflow or out of range. */
bool tt_parse_long(const char *s, long min, long max, long *out);
bool tt_parse_double(const char *s, double min, double max, double *out);
/* Appends s as a double-quoted SQL identifier ("a""b"). */
void tt_buf_put_sql_ident(tt_buf *b, const char *s);
/* Appends s as a single-quoted SQL string literal ('it''s'). */
void tt_buf_put_sql_string(tt_buf *b, const char *s);
/* Reads a whole stream (at most max bytes; *too_long set when more came).
 * Returns NULL on a read error. The result is NUL-terminated; *len excludes
 * the terminator. */
char *tt_read_stream(int fd, size_t max, size_t *len, bool *too_long);

#endif
