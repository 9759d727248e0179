/* num.c — numbers as text without printf, for exports of millions of
 * cells: integers in decimal, and reals byte for byte as printf's "%.15g"
 * writes them in the C locale. The real is converted exactly: it is a
 * 53-bit integer times a power of two, so its 15 significant digits come
 * from integer arithmetic (a 128-bit product and a shift, or a division),
 * rounded half to even on the exact remainder as glibc rounds. Magnitudes
 * outside the fast path (below 2^-23, from 2^64 up, subnormals, NaN and
 * infinities) go to snprintf itself. Reading numbers back (from a
 * server's text) has exact fast paths too, for the same reason. */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

typedef unsigned __int128 tt_u128;

static const uint64_t tt_pow10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};

#define TT_E14 100000000000000ULL  /* the smallest 15-digit number */
#define TT_E15 1000000000000000ULL /* one past the largest */

static const char tt_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The decimal digits of v, right-aligned to end at end; returns where they
 * start. */
static char *tt_put_u64_backwards(char *end, uint64_t v) {
  while (v >= 100) {
    unsigned pair = (unsigned)(v % 100) * 2;
    v /= 100;
    *--end = tt_digit_pairs[pair + 1];
    *--end = tt_digit_pairs[pair];
  }
  if (v >= 10) {
    unsigned pair = (unsigned)v * 2;
    *--end = tt_digit_pairs[pair + 1];
    *--end = tt_digit_pairs[pair];
  } else {
    *--end = (char)('0' + v);
  }
  return end;
}

size_t tt_fmt_int(char *out, int64_t v) {
  char tmp[24];
  char *end = tmp + sizeof tmp;
  /* the magnitude as unsigned: -INT64_MIN does not fit an int64_t */
  uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  char *p = tt_put_u64_backwards(end, mag);
  if (v < 0) *--p = '-';
  size_t n = (size_t)(end - p);
  memcpy(out, p, n);
  out[n] = '\0';
  return n;
}

/* n (numerator) over 2^shift, rounded half to even. */
static uint64_t tt_round_shift(tt_u128 n, unsigned shift) {
  uint64_t q = (uint64_t)(n >> shift);
  tt_u128 rem = n & (((tt_u128)1 << shift) - 1), half = (tt_u128)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  return q;
}

/* n over d, rounded half to even. */
static uint64_t tt_round_div(tt_u128 n, tt_u128 d) {
  uint64_t q = (uint64_t)(n / d);
  tt_u128 rem = n % d;
  if (rem * 2 > d || (rem * 2 == d && (q & 1))) q++;
  return q;
}

/* floor(n / 2^shift) (the test of how many digits there are). */
static uint64_t tt_floor_shift(tt_u128 n, unsigned shift) { return (uint64_t)(n >> shift); }

/* The 15 significant digits of m * 2^-s (m < 2^53, 1 <= s <= 75, the value
 * at least 2^-23 and below 2^53) as the integer *digits in [10^14, 10^15)
 * and its decimal exponent *x: value ~ digits * 10^(x - 14). */
static void tt_digits_of_fraction(uint64_t m, unsigned s, int e, uint64_t *digits, int *x) {
  /* e = floor(log2(value)); floor(e * log10(2)) is x or x - 1 (the
   * constant is just below log10(2); the loop corrects either way) */
  int est = e >= 0 ? (e * 1233) >> 12 : -((-e * 1233 + 4095) >> 12);
  for (;;) {
    int q = 14 - est; /* scale by 10^q: -1 <= q <= 22 */
    uint64_t whole;
    if (q >= 0) {
      tt_u128 n = q <= 19 ? (tt_u128)m * tt_pow10[q] : (tt_u128)m * tt_pow10[19] * tt_pow10[q - 19];
      whole = tt_floor_shift(n, s);
      if (whole >= TT_E15) {
        est++;
        continue;
      }
      if (whole < TT_E14) {
        est--;
        continue;
      }
      *digits = tt_round_shift(n, s);
    } else {
      tt_u128 d = (tt_u128)tt_pow10[-q] << s;
      whole = (uint64_t)((tt_u128)m / d);
      if (whole >= TT_E15) {
        est++;
        continue;
      }
      if (whole < TT_E14) {
        est--;
        continue;
      }
      *digits = tt_round_div(m, d);
    }
    break;
  }
  if (*digits == TT_E15) { /* 999...9.5 rounded up to the next power of ten */
    *digits = TT_E14;
    est++;
  }
  *x = est;
}

/* The same for an integer value v (v >= 1, below 2^64). */
static void tt_digits_of_integer(uint64_t v, uint64_t *digits, int *x) {
  int nd = 1;
  while (nd < 20 && v >= tt_pow10[nd]) nd++;
  *x = nd - 1;
  if (nd <= 15) {
    *digits = v * tt_pow10[15 - nd];
    return;
  }
  *digits = tt_round_div(v, tt_pow10[nd - 15]);
  if (*digits == TT_E15) {
    *digits = TT_E14;
    ++*x;
  }
}

/* Writes the digits as %g does with 15 significant digits: fixed for
 * exponents from -4 to 14, else d.ddde+XX, trailing zeros dropped. */
static size_t tt_put_g(char *out, bool neg, uint64_t digits, int x) {
  char d[16];
  tt_put_u64_backwards(d + 15, digits); /* exactly 15 digits */
  int nd = 15;
  while (nd > 1 && d[nd - 1] == '0') nd--;
  char *p = out;
  if (neg) *p++ = '-';
  if (x < -4 || x >= 15) {
    *p++ = d[0];
    if (nd > 1) {
      *p++ = '.';
      memcpy(p, d + 1, (size_t)nd - 1);
      p += nd - 1;
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    unsigned ax = (unsigned)(x < 0 ? -x : x); /* -7 to 19 here: two digits */
    *p++ = (char)('0' + ax / 10);
    *p++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    memcpy(p, d, (size_t)x + 1); /* the integer part */
    p += x + 1;
    if (nd > x + 1) {
      *p++ = '.';
      memcpy(p, d + x + 1, (size_t)(nd - x - 1));
      p += nd - x - 1;
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = -1; i > x; i--) *p++ = '0';
    memcpy(p, d, (size_t)nd);
    p += nd;
  }
  *p = '\0';
  return (size_t)(p - out);
}

size_t tt_fmt_real15(char *out, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  bool neg = bits >> 63;
  int be = (int)((bits >> 52) & 0x7FF);
  uint64_t m = bits & ((1ULL << 52) - 1);
  if (be == 0 && m == 0) { /* zero, with its sign as printf shows it */
    char *p = out;
    if (neg) *p++ = '-';
    *p++ = '0';
    *p = '\0';
    return (size_t)(p - out);
  }
  int e = be - 1023; /* floor(log2(|v|)) for normal numbers */
  uint64_t digits;
  int x;
  if (be != 0 && be != 0x7FF && e >= 52 && e < 64) {
    tt_digits_of_integer((m | 1ULL << 52) << (e - 52), &digits, &x);
  } else if (be != 0 && e >= -23 && e < 52) {
    tt_digits_of_fraction(m | 1ULL << 52, (unsigned)(52 - e), e, &digits, &x);
  } else {
    int n = snprintf(out, TT_FMT_REAL_MAX, "%.15g", v);
    return n > 0 ? (size_t)n : 0;
  }
  return tt_put_g(out, neg, digits, x);
}

bool tt_parse_int(const char *s, size_t n, int64_t *v) {
  size_t i = n && s[0] == '-' ? 1 : 0;
  if (i == n || n - i > 19) return false; /* 19 digits: the last may pass */
  uint64_t m = 0;
  for (size_t k = i; k < n; k++) {
    unsigned d = (unsigned)((unsigned char)s[k] - '0');
    if (d > 9) return false;
    m = m * 10 + d;
  }
  if (i) {
    if (m > (uint64_t)INT64_MAX + 1) return false;
    *v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
  } else {
    if (m > (uint64_t)INT64_MAX) return false;
    *v = (int64_t)m;
  }
  return true;
}

bool tt_parse_real_plain(const char *s, size_t n, double *v) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t i = n && s[0] == '-' ? 1 : 0;
  uint64_t m = 0;
  int sig = 0, frac = 0, ndig = 0;
  bool dot = false;
  for (; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '.') {
      if (dot) return false;
      dot = true;
      continue;
    }
    unsigned d = (unsigned)(ch - '0');
    if (d > 9) return false;
    ndig++;
    if (dot) frac++;
    if (m == 0 && d == 0) continue; /* leading zeros are not significant */
    if (++sig > 15) return false;
    m = m * 10 + d;
  }
  if (ndig == 0 || frac > 22) return false;
  double r = (double)m / p10[frac];
  *v = s[0] == '-' ? -r : r;
  return true;
}
