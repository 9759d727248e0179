/* axis.c — the numbers on a chart: "nice" tick values (steps of 1, 2, 2.5
 * or 5 times a power of ten), ticks on a time axis at whole years, months,
 * days or hours, numbers with thousands separators, and the dates that
 * tabletalk recognises in result cells. */
#include "chart/chart_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- numbers ----------------------------------------------------------------- */

/* Decimals needed to write step exactly (at most 10). */
static int tt_step_decimals(double step) {
  for (int d = 0; d < 10; d++) {
    double scaled = step * pow(10, d);
    if (fabs(scaled - round(scaled)) < 1e-6 * scaled) return d;
  }
  return 10;
}

double tt_nice_step(double raw) {
  if (!(raw > 0) || !isfinite(raw)) return 1;
  double p = pow(10, floor(log10(raw)));
  if (!(p > 0) || !isfinite(p)) return raw; /* below the smallest power of ten a double has */
  static const double mult[] = {1, 2, 2.5, 5};
  for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
    if (p * mult[i] >= raw * (1 - 1e-9)) return p * mult[i];
  return p * 10;
}

void tt_ticks_number(double lo, double hi, int target, tt_ticks *t) {
  memset(t, 0, sizeof *t);
  if (target < 2) target = 2;
  if (target > 20) target = 20;
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) {
    double s = lo;
    lo = hi;
    hi = s;
  }
  double mid = fabs(lo / 2 + hi / 2);
  if (hi - lo <= mid * 1e-9 || hi - lo < 1e-300) { /* one value: a range around it */
    double pad = mid > 0 ? mid * 0.1 : 1;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  double step = tt_nice_step((hi - lo) / (target - 1));
  double first = floor(lo / step + 1e-9) * step;
  double last = ceil(hi / step - 1e-9) * step;
  double count = round((last - first) / step) + 1;
  if (!(count >= 2)) count = 2;
  if (count > 64) count = 64;
  t->n = (size_t)count;
  t->step = step;
  t->decimals = tt_step_decimals(step);
  for (size_t i = 0; i < t->n; i++) {
    double v = first + (double)i * step;
    if (fabs(v) < step * 1e-9) v = 0; /* no "-0" */
    t->v[i] = v;
  }
  t->lo = t->v[0];
  t->hi = t->v[t->n - 1];
}

void tt_ticks_number_at(double lo, double hi, double at, int target, tt_ticks *t) {
  tt_ticks_number(lo, hi, target, t);
  /* a nice step near the chosen one that `at` is a whole multiple of, so
   * every tick is a round number too */
  static const double tries[] = {1, 2, 2.5, 5, 0.5, 0.25, 0.2, 0.1};
  double step = t->step;
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
    double c = t->step * tries[i], k = at / c;
    if (fabs(k - round(k)) < 1e-6 && fabs(tt_nice_step(c) - c) < c * 1e-9) {
      step = c;
      break;
    }
  }
  t->step = step;
  t->decimals = tt_step_decimals(step);
  bool starts = fabs(at - lo) <= fabs(at - hi); /* the axis starts at `at` (else ends there) */
  double far = starts ? hi : lo;
  double count = ceil(fabs(far - at) / step - 1e-9) + 1;
  if (!(count >= 2)) count = 2;
  if (count > 64) count = 64;
  t->n = (size_t)count;
  double first = starts ? at : at - (count - 1) * step;
  for (size_t i = 0; i < t->n; i++) {
    double v = first + (double)i * step;
    if (fabs(v) < step * 1e-9) v = 0;
    t->v[i] = v;
  }
  t->lo = t->v[0];
  t->hi = t->v[t->n - 1];
}

/* Appends the integer part of a (>= 0, < 1e15) with separators. */
static void tt_put_grouped_digits(tt_buf *out, double a) {
  char digits[32];
  snprintf(digits, sizeof digits, "%.0f", a);
  size_t n = strlen(digits);
  for (size_t i = 0; i < n; i++) {
    if (i && (n - i) % 3 == 0) tt_buf_putc(out, ',');
    tt_buf_putc(out, digits[i]);
  }
}

void tt_fmt_number(tt_buf *out, double v, int decimals) {
  if (!isfinite(v)) {
    tt_buf_puts(out, isnan(v) ? "n/a" : v > 0 ? "∞" : "-∞");
    return;
  }
  if (decimals < 0) decimals = 0;
  if (decimals > 10) decimals = 10;
  double a = fabs(v);
  if (a >= 1e15) {
    char s[48];
    snprintf(s, sizeof s, "%.3g", v);
    char *e = strchr(s, 'e');
    if (e) { /* 1.2e+18 -> 1.2e18 */
      char *d = e + 1;
      if (*d == '+') memmove(d, d + 1, strlen(d));
      if (*d == '-') d++;
      while (d[0] == '0' && d[1]) memmove(d, d + 1, strlen(d));
    }
    tt_buf_puts(out, s);
    return;
  }
  if (a >= 1e9) {
    double scaled = a >= 1e12 ? v / 1e12 : v / 1e9;
    char s[48];
    snprintf(s, sizeof s, "%.2f", scaled);
    char *end = s + strlen(s);
    while (end[-1] == '0') *--end = 0;
    if (end[-1] == '.') *--end = 0;
    tt_buf_printf(out, "%s%s", s, a >= 1e12 ? "T" : "B");
    return;
  }
  double scale = pow(10, decimals);
  double r = round(a * scale) / scale;
  if (v < 0 && r > 0) tt_buf_putc(out, '-');
  double ip = floor(r);
  tt_put_grouped_digits(out, ip);
  if (decimals > 0) {
    char frac[32];
    snprintf(frac, sizeof frac, "%.*f", decimals, r - ip);
    /* "0.25" -> ".25"; a fraction that rounded up to 1 cannot happen: r is rounded */
    tt_buf_puts(out, frac[0] == '1' ? "." : frac + 1);
    if (frac[0] == '1') tt_buf_repeat(out, "0", (size_t)decimals);
  }
}

void tt_fmt_value(tt_buf *out, double v) {
  double a = fabs(v);
  if (a < 1e15 && v == floor(v)) {
    tt_fmt_number(out, v, 0);
    return;
  }
  if (a != 0 && a < 0.01) {
    char s[32];
    snprintf(s, sizeof s, "%.3g", v);
    tt_buf_puts(out, s);
    return;
  }
  tt_buf t = TT_BUF_INIT;
  tt_fmt_number(&t, v, 2);
  const char *s = tt_buf_cstr(&t);
  size_t n = t.len;
  if (strchr(s, '.') && !strpbrk(s, "BTe")) {
    while (n && s[n - 1] == '0') n--;
    if (n && s[n - 1] == '.') n--;
  }
  tt_buf_append(out, s, n);
  tt_buf_free(&t);
}

/* ---- dates --------------------------------------------------------------------- */

/* Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the
 * usual era arithmetic: 400-year eras of 146,097 days). */
double tt_days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * ((int64_t)m + (m > 2 ? -3 : 9)) + 2) / 5 + (int64_t)d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (double)(era * 146097 + doe - 719468);
}

void tt_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
  *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static bool tt_digits(const char *s, size_t n, size_t at, size_t count, int *out) {
  if (at + count > n) return false;
  int v = 0;
  for (size_t i = 0; i < count; i++) {
    char c = s[at + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

static unsigned tt_month_days(int y, int m) {
  static const unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

bool tt_parse_date(const char *s, size_t n, double *days, int *parts) {
  int y, mo = 1, d = 1, h = 0, mi = 0, sec = 0;
  if (!tt_digits(s, n, 0, 4, &y) || y < 1) return false;
  size_t at = 4;
  *parts = 1;
  if (at < n) {
    if (s[at] != '-' || !tt_digits(s, n, at + 1, 2, &mo) || mo < 1 || mo > 12) return false;
    at += 3;
    *parts = 2;
  }
  if (at < n) {
    if (s[at] != '-' || !tt_digits(s, n, at + 1, 2, &d) || d < 1 ||
        (unsigned)d > tt_month_days(y, mo))
      return false;
    at += 3;
    *parts = 3;
  }
  if (at < n) {
    if ((s[at] != ' ' && s[at] != 'T') || !tt_digits(s, n, at + 1, 2, &h) || h > 23 ||
        at + 3 >= n || s[at + 3] != ':' || !tt_digits(s, n, at + 4, 2, &mi) || mi > 59)
      return false;
    at += 6;
    if (at < n && s[at] == ':') {
      if (!tt_digits(s, n, at + 1, 2, &sec) || sec > 60) return false;
      at += 3;
      if (at < n && s[at] == '.') { /* fractions of a second: digits only */
        at++;
        size_t start = at;
        while (at < n && s[at] >= '0' && s[at] <= '9') at++;
        if (at == start) return false;
      }
    }
    if (at < n && s[at] == 'Z') at++;
    if (at != n) return false;
    *parts = 4;
  }
  *days = tt_days_from_civil(y, (unsigned)mo, (unsigned)d) + (h * 3600 + mi * 60 + sec) / 86400.0;
  return true;
}

static const char *const tt_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void tt_fmt_date(tt_buf *out, double days, tt_tunit unit) {
  double whole = floor(days + 1e-9);
  int64_t y;
  unsigned m, d;
  tt_civil_from_days((int64_t)whole, &y, &m, &d);
  switch (unit) {
  case TT_T_YEAR: tt_buf_printf(out, "%lld", (long long)y); break;
  case TT_T_MONTH: tt_buf_printf(out, "%s %lld", tt_months[m - 1], (long long)y); break;
  case TT_T_DAY: tt_buf_printf(out, "%04lld-%02u-%02u", (long long)y, m, d); break;
  case TT_T_TIME: {
    long secs = lround((days - whole) * 86400);
    if (secs >= 86400) secs = 86399;
    tt_buf_printf(out, "%04lld-%02u-%02u %02ld:%02ld", (long long)y, m, d, secs / 3600,
                  secs / 60 % 60);
    break;
  }
  }
}

/* ---- time ticks --------------------------------------------------------------- */

typedef struct tt_tstep {
  tt_tunit unit; /* of the step and the labels */
  int count;     /* hours for TT_T_TIME, else days, months or years */
  double approx; /* length in days */
} tt_tstep;

static const tt_tstep tt_tsteps[] = {
    {TT_T_TIME, 1, 1 / 24.0},  {TT_T_TIME, 3, 3 / 24.0}, {TT_T_TIME, 6, 0.25},
    {TT_T_TIME, 12, 0.5},      {TT_T_DAY, 1, 1},         {TT_T_DAY, 2, 2},
    {TT_T_DAY, 7, 7},          {TT_T_DAY, 14, 14},       {TT_T_MONTH, 1, 30.44},
    {TT_T_MONTH, 2, 60.9},     {TT_T_MONTH, 3, 91.3},    {TT_T_MONTH, 6, 182.6},
    {TT_T_YEAR, 1, 365.25},    {TT_T_YEAR, 2, 730.5},    {TT_T_YEAR, 5, 1826},
    {TT_T_YEAR, 10, 3652},     {TT_T_YEAR, 20, 7305},    {TT_T_YEAR, 50, 18262},
    {TT_T_YEAR, 100, 36525},   {TT_T_YEAR, 200, 73050},  {TT_T_YEAR, 500, 182625},
    {TT_T_YEAR, 1000, 365250},
};

/* The next tick at or after day (a boundary of step). */
static double tt_time_align(double day, const tt_tstep *st) {
  int64_t y;
  unsigned m, d;
  double whole = floor(day);
  tt_civil_from_days((int64_t)whole, &y, &m, &d);
  switch (st->unit) {
  case TT_T_TIME: {
    double h = ceil((day - whole) * 24 / st->count - 1e-9) * st->count;
    return whole + h / 24;
  }
  case TT_T_DAY: return ceil(day / st->count - 1e-9) * st->count;
  case TT_T_MONTH: {
    int64_t mi = y * 12 + (m - 1);
    if (d != 1 || day > whole + 1e-9) mi++;
    while (mi % st->count) mi++;
    return tt_days_from_civil(mi / 12, (unsigned)(mi % 12 + 1), 1);
  }
  case TT_T_YEAR: {
    if (m != 1 || d != 1 || day > whole + 1e-9) y++;
    int64_t r = ((y % st->count) + st->count) % st->count;
    if (r) y += st->count - r;
    return tt_days_from_civil(y, 1, 1);
  }
  }
  return day;
}

static double tt_time_next(double day, const tt_tstep *st) {
  int64_t y;
  unsigned m, d;
  tt_civil_from_days((int64_t)floor(day + 1e-9), &y, &m, &d);
  switch (st->unit) {
  case TT_T_TIME: return day + st->count / 24.0;
  case TT_T_DAY: return day + st->count;
  case TT_T_MONTH: {
    int64_t mi = y * 12 + (m - 1) + st->count;
    return tt_days_from_civil(mi / 12, (unsigned)(mi % 12 + 1), 1);
  }
  case TT_T_YEAR: return tt_days_from_civil(y + st->count, 1, 1);
  }
  return day + 1;
}

void tt_ticks_time(double lo, double hi, tt_tunit unit, int target, tt_ticks *t) {
  memset(t, 0, sizeof *t);
  if (target < 2) target = 2;
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (hi <= lo) { /* one date: a unit either side */
    double pad = unit == TT_T_YEAR ? 365.25 : unit == TT_T_MONTH ? 30.44 : unit == TT_T_DAY ? 1 : 1 / 24.0;
    lo -= pad;
    hi += pad;
  }
  t->lo = lo;
  t->hi = hi;
  size_t nsteps = sizeof tt_tsteps / sizeof tt_tsteps[0];
  const tt_tstep *st = &tt_tsteps[nsteps - 1];
  for (size_t i = 0; i < nsteps; i++) {
    if (tt_tsteps[i].unit > unit) continue; /* finer than the data */
    if ((hi - lo) / tt_tsteps[i].approx <= target) {
      st = &tt_tsteps[i];
      break;
    }
  }
  /* dates run from year 1 to 9999: 1000-year steps always fit in 64 ticks */
  t->tunit = st->unit;
  t->tstep = st->count;
  t->step = st->approx;
  for (double v = tt_time_align(lo, st); v <= hi + 1e-9 && t->n < 64; v = tt_time_next(v, st))
    t->v[t->n++] = v;
  if (t->n < 2) { /* shorter than the finest step: the two ends, to the minute */
    t->v[0] = lo;
    t->v[1] = hi;
    t->n = 2;
    t->tunit = unit == TT_T_TIME || hi - lo < 2 ? TT_T_TIME : unit;
  }
}

/* Scientific notation with enough significant digits that numbers step
 * apart stay apart; "1.2e+18" written as "1.2e18". */
static void tt_fmt_scientific(tt_buf *out, double v, int sig) {
  char s[64];
  snprintf(s, sizeof s, "%.*g", sig, v);
  char *e = strchr(s, 'e');
  if (e) {
    char *d = e + 1;
    if (*d == '+') memmove(d, d + 1, strlen(d));
    if (*d == '-') d++;
    while (d[0] == '0' && d[1]) memmove(d, d + 1, strlen(d));
  }
  tt_buf_puts(out, s);
}

void tt_fmt_tick(tt_buf *out, double v, double step, double magnitude) {
  if (!(step > 0) || !isfinite(step)) step = magnitude > 0 ? magnitude : 1;
  double a = fabs(magnitude);
  if (a >= 1e15 || (step < 1e-6 && a > 0)) {
    int sig = (int)ceil(log10(a / step) - 1e-9) + 1;
    tt_fmt_scientific(out, v, sig < 1 ? 1 : sig > 15 ? 15 : sig);
  } else if (a >= 1e9) { /* 1.2305B: as many decimals as the step needs */
    double scale = a >= 1e12 ? 1e12 : 1e9;
    int dec = tt_step_decimals(step / scale);
    char s[48];
    snprintf(s, sizeof s, "%.*f", dec, v / scale);
    tt_buf_printf(out, "%s%s", strcmp(s, "-0") == 0 ? "0" : s, scale == 1e12 ? "T" : "B");
  } else {
    tt_fmt_number(out, v, tt_step_decimals(step));
  }
}

void tt_ticks_label(const tt_ticks *t, size_t i, bool time_axis, bool year_numbers, tt_buf *out) {
  if (time_axis && t->tstep) {
    tt_fmt_date(out, t->v[i], t->tunit);
  } else if (year_numbers) {
    tt_buf_printf(out, "%.0f", t->v[i]);
  } else {
    double mag = 0;
    for (size_t k = 0; k < t->n; k++) mag = fmax(mag, fabs(t->v[k]));
    tt_fmt_tick(out, t->v[i], t->step, mag);
  }
}
