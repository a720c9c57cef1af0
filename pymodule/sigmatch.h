/*
 * sigmatch.h - how a scalar argument reaches a signature's parameter, as
 * numba rates overloads: the conversion of one value to one scalar type,
 * the conversion itself, and the order between two candidates' counts.
 *
 * Input: scalars as a NumPy kind (b i u f c), an itemsize in bytes and the
 * value's bytes in native order (at most 16: complex128); output: a
 * GjConv, or the value's bytes in the new type.  No Python and no state:
 * launcher.c ranks a dispatcher's entries with it, and tests/c/
 * test_sigmatch.c checks it against numba's rules.
 */
#ifndef GJ_SIGMATCH_H
#define GJ_SIGMATCH_H

#include <stdint.h>

/* Best first.  Arrays match exactly (layout A takes any). */
typedef enum GjConv {
    GJ_CONV_EXACT,     /* the parameter's type */
    GJ_CONV_PROMOTE,   /* wider, within a kind: int32 -> int64, float32 -> float64 */
    GJ_CONV_SAFE,      /* every value converts: int16 -> float32, uint32 -> int64,
                          float64 -> complex128 */
    GJ_CONV_FITS,      /* this value converts: the Python int 3 -> int32, 0.5 -> float32 */
    GJ_CONV_NONE,      /* it does not */
    GJ_CONV_COUNT
} GjConv;

/* A scalar type: NumPy's kind char and its itemsize, bytes. */
typedef struct GjScalarType {
    char kind;
    int itemsize;
} GjScalarType;

/* How the value at `value` (of type from) converts to type to.  bool and
   float16 parameters take only their own type. */
GjConv gj_sig_conv(GjScalarType from, const void *value, GjScalarType to);

/* The value at `value` (of type from) as type to, into out (zeroed past
   it); gj_sig_conv said it converts. */
void gj_sig_convert(GjScalarType from, const void *value, GjScalarType to, uint64_t out[2]);

/* Whether the counts of each GjConv of candidate a rate it better than b's:
   fewer value conversions, then fewer safe conversions, then fewer
   promotions (numba's order); 0 for a tie. */
int gj_sig_better(const int a[GJ_CONV_COUNT], const int b[GJ_CONV_COUNT]);

#endif
