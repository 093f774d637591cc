/* tl-run's host elements (elems.h): dtype conversions by bit pattern
 * (IEEE binary16 and bfloat16 with round-to-nearest-even), element access,
 * the --check tolerances and the random inputs. */
#include "elems.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ dtypes */
static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Nearest-even rounding of x to a binary float with mbits mantissa bits and
 * ebits exponent bits; returns the bit pattern (used for f16). */
static uint16_t double_to_half(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) return 0x7e00;
  x = fabs(x);
  if (isinf(x)) return sign | 0x7c00;
  if (x < ldexp(1.0, -14)) return sign | (uint16_t)nearbyint(ldexp(x, 24));
  int e;
  double m = frexp(x, &e);
  double q = nearbyint(ldexp(m, 11));
  int E = e - 1 + 15;
  if (q >= 2048) {
    q = 1024;
    E++;
  }
  if (E >= 31) return sign | 0x7c00;
  return sign | (uint16_t)(E << 10) | (uint16_t)((uint32_t)q - 1024);
}

static double bf16_to_double(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t double_to_bf16(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

double tlr_get_elem(const void *data, tl_dtype t, size_t i) {
  const char *p = (const char *)data + i * (size_t)tl_dtype_bytes(t);
  switch (t.code) {
  case TL_TYPE_FLOAT:
  case TL_TYPE_TFLOAT:
    if (t.bits == 64) {
      double d;
      memcpy(&d, p, 8);
      return d;
    }
    if (t.bits == 32) {
      float f;
      memcpy(&f, p, 4);
      return f;
    }
    if (t.bits == 16) {
      uint16_t h;
      memcpy(&h, p, 2);
      return half_to_double(h);
    }
    return NAN;
  case TL_TYPE_BFLOAT: {
    uint16_t h;
    memcpy(&h, p, 2);
    return bf16_to_double(h);
  }
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: return tl_fp8_decode(*(const uint8_t *)p, t);
  case TL_TYPE_INT:
    switch (t.bits) {
    case 8: return *(const int8_t *)p;
    case 16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    }
  case TL_TYPE_UINT:
  case TL_TYPE_BOOL:
    switch (t.bits) {
    case 8: return *(const uint8_t *)p;
    case 16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    }
  default: return NAN;
  }
}

static void set_elem(void *data, tl_dtype t, size_t i, double v) {
  char *p = (char *)data + i * (size_t)tl_dtype_bytes(t);
  switch (t.code) {
  case TL_TYPE_FLOAT:
  case TL_TYPE_TFLOAT:
    if (t.bits == 64) memcpy(p, &v, 8);
    else if (t.bits == 32) {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      if (t.code == TL_TYPE_TFLOAT && (u & 0x7f800000) != 0x7f800000) /* tf32: 10 mantissa bits, to nearest even */
        u = (u + 0xfff + ((u >> 13) & 1)) & ~(uint32_t)0x1fff;
      memcpy(p, &u, 4);
    } else if (t.bits == 16) {
      uint16_t h = double_to_half(v);
      memcpy(p, &h, 2);
    }
    break;
  case TL_TYPE_BFLOAT: {
    uint16_t h = double_to_bf16(v);
    memcpy(p, &h, 2);
    break;
  }
  case TL_TYPE_FLOAT8_E4M3:
  case TL_TYPE_FLOAT8_E5M2: *(uint8_t *)p = tl_fp8_encode(v, t); break;
  default: {
    int64_t x = (int64_t)v;
    switch (t.bits) {
    case 8: {
      int8_t y = (int8_t)x;
      memcpy(p, &y, 1);
      break;
    }
    case 16: {
      int16_t y = (int16_t)x;
      memcpy(p, &y, 2);
      break;
    }
    case 32: {
      int32_t y = (int32_t)x;
      memcpy(p, &y, 4);
      break;
    }
    default: memcpy(p, &x, 8);
    }
  }
  }
}

DLDataType tlr_dl_dtype(tl_dtype t) {
  DLDataType d;
  d.code = t.code == TL_TYPE_INT                                            ? kDLInt
           : t.code == TL_TYPE_UINT                                         ? kDLUInt
           : t.code == TL_TYPE_BFLOAT                                       ? kDLBfloat
           : t.code == TL_TYPE_BOOL                                         ? kDLUInt
           : t.code == TL_TYPE_FLOAT8_E4M3 || t.code == TL_TYPE_FLOAT8_E5M2 ? kDLUInt /* runtime.h: the codes */
                                                                            : kDLFloat;
  d.bits = t.bits;
  d.lanes = 1;
  return d;
}

bool tlr_is_float(tl_dtype t) {
  return t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_BFLOAT || t.code == TL_TYPE_TFLOAT ||
         t.code == TL_TYPE_FLOAT8_E4M3 || t.code == TL_TYPE_FLOAT8_E5M2;
}

static double user_atol = -1, user_rtol = -1; /* --atol / --rtol (negative: the dtype's) */

void tlr_set_tolerance(double atol, double rtol) {
  if (atol >= 0) user_atol = atol;
  if (rtol >= 0) user_rtol = rtol;
}

void tlr_tolerance(tl_dtype t, double *atol, double *rtol) {
  if (t.code == TL_TYPE_FLOAT8_E4M3) *atol = *rtol = 0.125; /* 3 mantissa bits: half an ulp is 1/16 */
  else if (t.code == TL_TYPE_FLOAT8_E5M2) *atol = *rtol = 0.25;
  else if (t.code == TL_TYPE_BFLOAT) *atol = *rtol = 2e-2;
  else if (t.code == TL_TYPE_FLOAT && t.bits == 16) *atol = *rtol = 1e-2;
  else if (tlr_is_float(t)) *atol = *rtol = 1e-4;
  else *atol = *rtol = 0;
  if (!tlr_is_float(t)) return; /* integers and bool: exactly, whatever --atol says */
  if (user_atol >= 0) *atol = user_atol;
  if (user_rtol >= 0) *rtol = user_rtol;
}

/* ------------------------------------------------------- generator */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Element i of integer data of dtype t set to v (which t holds), exactly. */
static void set_int(void *data, tl_dtype t, size_t i, int64_t v) {
  char *p = (char *)data + i * (size_t)tl_dtype_bytes(t);
  switch (t.bits) {
  case 8: {
    int8_t y = (int8_t)v;
    memcpy(p, &y, 1);
    break;
  }
  case 16: {
    int16_t y = (int16_t)v;
    memcpy(p, &y, 2);
    break;
  }
  case 32: {
    int32_t y = (int32_t)v;
    memcpy(p, &y, 4);
    break;
  }
  default: memcpy(p, &v, 8);
  }
}

void tlr_fill_random(void *data, tl_dtype t, size_t n, uint64_t *state, const int64_t *int_range) {
  bool ranged = int_range && (t.code == TL_TYPE_INT || t.code == TL_TYPE_UINT);
  uint64_t width = ranged ? (uint64_t)int_range[1] - (uint64_t)int_range[0] + 1 : 0; /* 0: all 2^64 */
  for (size_t i = 0; i < n; i++) {
    uint64_t x = splitmix64(state);
    if (ranged) {
      set_int(data, t, i, (int64_t)((uint64_t)int_range[0] + (width ? x % width : x)));
      continue;
    }
    double v;
    if (tlr_is_float(t)) v = 2.0 * ldexp((double)(x >> 11), -53) - 1.0;
    else if (t.code == TL_TYPE_BOOL) v = (double)(x & 1);
    else if (t.code == TL_TYPE_UINT) v = (double)(x % 5);
    else v = -4.0 + (double)(x % 9);
    set_elem(data, t, i, v);
  }
}
