/*
 * test_sigmatch.c - unit test of pymodule/sigmatch.c, numba's ranking of
 * scalar conversions for explicit signatures.
 *
 * Built and run by meson (tests/c/meson.build), with no Python and no runtime.
 * Checks each kind of conversion (exact, promotion, safe, fits, none) on
 * values at the edges of their types, the bytes a conversion writes, and
 * the order of two candidates' counts.  Prints one line per failure and
 * exits 1 if there was any.
 */
#include "sigmatch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static const GjScalarType B1 = {'b', 1}, I8 = {'i', 1}, I16 = {'i', 2}, I32 = {'i', 4},
                          I64 = {'i', 8}, U8 = {'u', 1}, U32 = {'u', 4}, U64 = {'u', 8},
                          F16 = {'f', 2}, F32 = {'f', 4}, F64 = {'f', 8}, C64 = {'c', 8},
                          C128 = {'c', 16};

static const char *const conv_names[] = {"EXACT", "PROMOTE", "SAFE", "FITS", "NONE"};

static void expect(int line, GjScalarType from, const void *value, GjScalarType to, GjConv want) {
    GjConv got = gj_sig_conv(from, value, to);
    if (got != want) {
        printf("line %d: %c%d -> %c%d: %s, expected %s\n", line, from.kind, from.itemsize, to.kind,
               to.itemsize, conv_names[got], conv_names[want]);
        failures++;
    }
}

#define EXPECT(from, value, to, want) expect(__LINE__, from, value, to, want)

static void conversions(void) {
    int64_t i3 = 3, big = INT64_MAX, neg = -1, i300 = 300;
    int32_t i32 = -7;
    int16_t i16 = 5;
    uint8_t yes = 1;
    uint64_t u_top = UINT64_MAX;
    double half = 0.5, two = 2.0, huge = 1e300, inf = INFINITY, neg_two = -2.0;
    float f = 1.5f;
    double c[2] = {1.0, 0.0}, ci[2] = {1.0, 2.0};
    uint16_t h = 0x3c00;   /* 1.0 */

    EXPECT(I64, &i3, I64, GJ_CONV_EXACT);
    EXPECT(I32, &i32, I64, GJ_CONV_PROMOTE);
    EXPECT(F32, &f, F64, GJ_CONV_PROMOTE);
    EXPECT(C64, &c, C128, GJ_CONV_PROMOTE);
    EXPECT(I16, &i16, F32, GJ_CONV_SAFE);          /* 16 bits < float32's 24 */
    EXPECT(U32, &u_top, I64, GJ_CONV_SAFE);
    EXPECT(F64, &half, C128, GJ_CONV_SAFE);
    EXPECT(B1, &yes, I8, GJ_CONV_SAFE);
    EXPECT(B1, &yes, F32, GJ_CONV_SAFE);
    EXPECT(I64, &i3, I32, GJ_CONV_FITS);           /* the Python int 3 */
    EXPECT(I64, &big, I32, GJ_CONV_NONE);
    EXPECT(I64, &neg, U64, GJ_CONV_NONE);
    EXPECT(I64, &i300, U8, GJ_CONV_NONE);
    EXPECT(I64, &i3, U8, GJ_CONV_FITS);
    EXPECT(U64, &u_top, I64, GJ_CONV_NONE);
    EXPECT(U64, &u_top, U64, GJ_CONV_EXACT);
    EXPECT(I64, &big, F64, GJ_CONV_FITS);          /* 64 bits > float64's 53 */
    EXPECT(F64, &half, F32, GJ_CONV_FITS);
    EXPECT(F64, &huge, F32, GJ_CONV_NONE);
    EXPECT(F64, &inf, F32, GJ_CONV_FITS);
    EXPECT(F64, &two, I32, GJ_CONV_FITS);          /* integral floats */
    EXPECT(F64, &neg_two, U32, GJ_CONV_NONE);
    EXPECT(F64, &half, I64, GJ_CONV_NONE);
    EXPECT(C128, &c, F64, GJ_CONV_NONE);           /* complex never to float */
    EXPECT(C128, &c, I64, GJ_CONV_FITS);
    EXPECT(C128, &ci, I64, GJ_CONV_NONE);
    EXPECT(I64, &i3, B1, GJ_CONV_NONE);            /* bool and float16 take only themselves */
    EXPECT(F32, &f, F16, GJ_CONV_NONE);
    EXPECT(F16, &h, F32, GJ_CONV_PROMOTE);
}

static void converted_bytes(void) {
    int64_t i3 = 3;
    double two = 2.0, half = 0.5;
    uint64_t out[2];
    gj_sig_convert(I64, &i3, I32, out);
    int32_t i32;
    memcpy(&i32, out, sizeof i32);
    if (i32 != 3 || out[1] != 0) {
        printf("int64 3 -> int32 gave %d\n", i32);
        failures++;
    }
    gj_sig_convert(F64, &two, U8, out);
    if (out[0] != 2) {
        printf("float64 2.0 -> uint8 gave %llu\n", (unsigned long long)out[0]);
        failures++;
    }
    gj_sig_convert(F64, &half, C64, out);
    float c[2];
    memcpy(c, out, sizeof c);
    if (c[0] != 0.5f || c[1] != 0.0f) {
        printf("float64 0.5 -> complex64 gave (%g, %g)\n", (double)c[0], (double)c[1]);
        failures++;
    }
}

static void order(void) {
    int exact[GJ_CONV_COUNT] = {2, 0, 0, 0, 0}, promote[GJ_CONV_COUNT] = {1, 1, 0, 0, 0},
        safe[GJ_CONV_COUNT] = {1, 0, 1, 0, 0}, fits[GJ_CONV_COUNT] = {0, 2, 0, 1, 0};
    struct {
        const int *a, *b;
        int want;
    } cases[] = {
        {exact, promote, 1}, {promote, exact, 0}, {promote, safe, 1},
        {safe, fits, 1},     {fits, safe, 0},     {exact, exact, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (gj_sig_better(cases[k].a, cases[k].b) != cases[k].want) {
            printf("order case %zu: expected %d\n", k, cases[k].want);
            failures++;
        }
}

int main(void) {
    conversions();
    converted_bytes();
    order();
    printf("%d failures\n", failures);
    return failures != 0;
}
