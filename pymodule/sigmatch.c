/*
 * sigmatch.c - sigmatch.h: numba's scalar conversions for explicit
 * signatures.  A value is read into a Num (its kind and its value as an
 * int64, a uint64 or a complex double), the conversion is judged from the
 * two types' kinds and sizes and, for FITS, the value; converting writes
 * the new type's bytes.  No Python here.
 */
#include "sigmatch.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A scalar's value: its kind (b i u f c; bool is read as 'i') and value. */
typedef struct Num {
    char kind;
    int64_t i;
    uint64_t u;
    double re, im;
} Num;

/* The value of IEEE binary16 bits h, exactly. */
static double half_value(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Reads the value at p of type t; 0 for a type with no value here. */
static int read_num(GjScalarType t, const void *p, Num *n) {
    memset(n, 0, sizeof *n);
    n->kind = t.kind;
    switch (t.kind << 8 | t.itemsize) {
    case 'b' << 8 | 1:
        n->i = *(const uint8_t *)p != 0;
        n->kind = 'i';
        break;
    case 'i' << 8 | 1: n->i = *(const int8_t *)p; break;
    case 'i' << 8 | 2: n->i = *(const int16_t *)p; break;
    case 'i' << 8 | 4: n->i = *(const int32_t *)p; break;
    case 'i' << 8 | 8: n->i = *(const int64_t *)p; break;
    case 'u' << 8 | 1: n->u = *(const uint8_t *)p; break;
    case 'u' << 8 | 2: n->u = *(const uint16_t *)p; break;
    case 'u' << 8 | 4: n->u = *(const uint32_t *)p; break;
    case 'u' << 8 | 8: n->u = *(const uint64_t *)p; break;
    case 'f' << 8 | 2: n->re = half_value(*(const uint16_t *)p); break;
    case 'f' << 8 | 4: n->re = *(const float *)p; break;
    case 'f' << 8 | 8: n->re = *(const double *)p; break;
    case 'c' << 8 | 8:
        n->re = ((const float *)p)[0];
        n->im = ((const float *)p)[1];
        break;
    case 'c' << 8 | 16:
        n->re = ((const double *)p)[0];
        n->im = ((const double *)p)[1];
        break;
    default: return 0;
    }
    return 1;
}

static double num_real(const Num *n) {
    return n->kind == 'u' ? (double)n->u : n->kind == 'i' ? (double)n->i : n->re;
}

/* Whether integer n fits an integer type of kind tk ('i'/'u') and tsz bytes. */
static int int_fits(const Num *n, char tk, int tsz) {
    int bits = 8 * tsz;
    if (tk == 'i') {
        int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
        return n->kind == 'u' ? n->u <= (uint64_t)hi : n->i >= -hi - 1 && n->i <= hi;
    }
    uint64_t hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return n->kind == 'i' ? n->i >= 0 && (uint64_t)n->i <= hi : n->u <= hi;
}

/* Whether double x is representable in a float of tsz bytes up to rounding
   (infinities and NaN are). */
static int float_fits(double x, int tsz) {
    return tsz == 8 || x != x || x == (double)INFINITY || x == -(double)INFINITY ||
           (x <= FLT_MAX && x >= -FLT_MAX);
}

/* Makes a float n integral (kind 'i' or 'u') if it is an integer in int64 or
   uint64 range; 0 if not. */
static int float_to_int(Num *n) {
    double x = n->re;
    if (n->im != 0 || x != floor(x) || !(x >= -0x1p63 && x < 0x1p64))
        return 0;
    if (x < 0x1p63) {
        n->kind = 'i';
        n->i = (int64_t)x;
    } else {
        n->kind = 'u';
        n->u = (uint64_t)x;
    }
    return 1;
}

GjConv gj_sig_conv(GjScalarType from, const void *value, GjScalarType to) {
    Num n;
    if (from.kind == to.kind && from.itemsize == to.itemsize)
        return GJ_CONV_EXACT;
    if (to.kind == 'b' || (to.kind == 'f' && to.itemsize == 2) || !read_num(from, value, &n))
        return GJ_CONV_NONE;
    char fk = from.kind, tk = to.kind;
    int fsz = from.itemsize, tsz = to.itemsize;
    int mantissa = tk == 'c' ? (tsz == 8 ? 24 : 53) : tsz == 4 ? 24 : 53;
    switch (tk) {
    case 'i':
    case 'u':
        if (fk == 'b')
            return GJ_CONV_SAFE;
        if (fk == tk && tsz > fsz)
            return GJ_CONV_PROMOTE;
        if (fk == 'u' && tk == 'i' && tsz > fsz)
            return GJ_CONV_SAFE;
        if ((fk == 'f' || fk == 'c') && !float_to_int(&n))
            return GJ_CONV_NONE;
        return int_fits(&n, tk, tsz) ? GJ_CONV_FITS : GJ_CONV_NONE;
    case 'f':
    case 'c':
        if (fk == 'b' || ((fk == 'i' || fk == 'u') && 8 * fsz < mantissa))
            return GJ_CONV_SAFE;
        if (fk == 'i' || fk == 'u')
            return GJ_CONV_FITS;
        if (fk == 'c' && tk == 'f')
            return GJ_CONV_NONE;
        if (fk == tk && tsz > fsz)
            return GJ_CONV_PROMOTE;
        if (fk == 'f' && tk == 'c' && tsz >= 2 * fsz)
            return GJ_CONV_SAFE;
        return float_fits(n.re, tk == 'c' ? tsz / 2 : tsz) && float_fits(n.im, tsz / 2)
                   ? GJ_CONV_FITS
                   : GJ_CONV_NONE;
    default: return GJ_CONV_NONE;
    }
}

void gj_sig_convert(GjScalarType from, const void *value, GjScalarType to, uint64_t out[2]) {
    Num n;
    read_num(from, value, &n);
    if (to.kind != 'f' && to.kind != 'c' && (n.kind == 'f' || n.kind == 'c'))
        float_to_int(&n);
    int64_t i = n.kind == 'u' ? (int64_t)n.u : n.i;
    uint64_t u = n.kind == 'i' ? (uint64_t)n.i : n.u;
    double x = num_real(&n);
    out[0] = out[1] = 0;
    void *p = out;
    switch (to.kind << 8 | to.itemsize) {
    case 'i' << 8 | 1: *(int8_t *)p = (int8_t)i; break;
    case 'i' << 8 | 2: *(int16_t *)p = (int16_t)i; break;
    case 'i' << 8 | 4: *(int32_t *)p = (int32_t)i; break;
    case 'i' << 8 | 8: *(int64_t *)p = i; break;
    case 'u' << 8 | 1: *(uint8_t *)p = (uint8_t)u; break;
    case 'u' << 8 | 2: *(uint16_t *)p = (uint16_t)u; break;
    case 'u' << 8 | 4: *(uint32_t *)p = (uint32_t)u; break;
    case 'u' << 8 | 8: *(uint64_t *)p = u; break;
    case 'f' << 8 | 4: *(float *)p = (float)x; break;
    case 'f' << 8 | 8: *(double *)p = x; break;
    case 'c' << 8 | 8:
        ((float *)p)[0] = (float)x;
        ((float *)p)[1] = (float)n.im;
        break;
    case 'c' << 8 | 16:
        ((double *)p)[0] = x;
        ((double *)p)[1] = n.im;
        break;
    default: break;   /* bool, float16: never chosen */
    }
}

int gj_sig_better(const int a[GJ_CONV_COUNT], const int b[GJ_CONV_COUNT]) {
    for (int k = GJ_CONV_FITS; k > GJ_CONV_EXACT; k--)
        if (a[k] != b[k])
            return a[k] < b[k];
    return 0;
}
