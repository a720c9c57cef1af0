/*
 * lower_cmath.c - complex numbers (lower_cmath.h): the arithmetic of the
 * kernel's + - * / ** on them, and the complex versions of the math rows
 * (cmath's functions, numpy's applied to complex values).
 *
 * Input: complex values ({re, im} structs, lower_base.h), parts already in
 * one float type.  The arithmetic is NumPy's (Smith's division, as
 * npy_cdiv; npy_cpow's cases) and contracts as the kernel's real
 * arithmetic does.  The functions are written from real ones: the textbook
 * formulas (as CPython's cmath and C99's csqrt/cexp/clog do for finite
 * arguments), Kahan's for the inverse functions; at infinities and NaNs C99
 * Annex G's values, from a table per function (annex_g) as CPython's cmath
 * has them.  Library code: it carries fastmath's flags, never `contract`.
 */
#include "lower_cmath.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

static LLVMValueRef complex_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b);

/* ---- arithmetic ------------------------------------------------------------------ */

/* The parts of complex + - * / are the kernel's arithmetic: they contract. */

static LLVMValueRef complex_mul(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef ar = gj_lower_re(L, a), ai = gj_lower_im(L, a);
    LLVMValueRef br = gj_lower_re(L, b), bi = gj_lower_im(L, b);
    return gj_lower_complex(
        L, gj_lower_arith_fsub(L, gj_lower_arith_fmul(L, ar, br), gj_lower_arith_fmul(L, ai, bi)),
        gj_lower_arith_fadd(L, gj_lower_arith_fmul(L, ar, bi), gj_lower_arith_fmul(L, ai, br)));
}

/* NumPy's complex division (Smith's method, as its loops and scalars do):
   scale by the larger part of the divisor; 0 / 0 gives nan, x / 0 inf. */
static LLVMValueRef complex_div(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef ar = gj_lower_re(L, a), ai = gj_lower_im(L, a);
    LLVMValueRef br = gj_lower_re(L, b), bi = gj_lower_im(L, b);
    LLVMValueRef one = gj_lower_fconst(ar, 1.0), zero = gj_lower_fconst(ar, 0.0);
    LLVMValueRef abs_br = gj_lower_call_intrinsic(L, "llvm.fabs", LLVMTypeOf(br), &br, 1);
    LLVMValueRef abs_bi = gj_lower_call_intrinsic(L, "llvm.fabs", LLVMTypeOf(bi), &bi, 1);
    /* |br| >= |bi| */
    LLVMValueRef rat1 = gj_lower_fdiv(L, bi, br);
    LLVMValueRef scl1 =
        gj_lower_fdiv(L, one, gj_lower_arith_fadd(L, br, gj_lower_arith_fmul(L, bi, rat1)));
    LLVMValueRef re1 =
        gj_lower_arith_fmul(L, gj_lower_arith_fadd(L, ar, gj_lower_arith_fmul(L, ai, rat1)), scl1);
    LLVMValueRef im1 =
        gj_lower_arith_fmul(L, gj_lower_arith_fsub(L, ai, gj_lower_arith_fmul(L, ar, rat1)), scl1);
    LLVMValueRef both_zero = LLVMBuildAnd(L->b, gj_lower_fcmp(L, LLVMRealOEQ, abs_br, zero),
                                          gj_lower_fcmp(L, LLVMRealOEQ, abs_bi, zero), "");
    re1 = gj_lower_sel(L, both_zero, gj_lower_fdiv(L, ar, abs_br), re1);
    im1 = gj_lower_sel(L, both_zero, gj_lower_fdiv(L, ai, abs_br), im1);
    /* |br| < |bi| (or a nan) */
    LLVMValueRef rat2 = gj_lower_fdiv(L, br, bi);
    LLVMValueRef scl2 =
        gj_lower_fdiv(L, one, gj_lower_arith_fadd(L, bi, gj_lower_arith_fmul(L, br, rat2)));
    LLVMValueRef re2 =
        gj_lower_arith_fmul(L, gj_lower_arith_fadd(L, gj_lower_arith_fmul(L, ar, rat2), ai), scl2);
    LLVMValueRef im2 =
        gj_lower_arith_fmul(L, gj_lower_arith_fsub(L, gj_lower_arith_fmul(L, ai, rat2), ar), scl2);
    LLVMValueRef first = gj_lower_fcmp(L, LLVMRealOGE, abs_br, abs_bi);
    return gj_lower_complex(L, gj_lower_sel(L, first, re1, re2), gj_lower_sel(L, first, im1, im2));
}

LLVMValueRef gj_lower_complex_binop(GjLower *L, GjBinop op, LLVMValueRef a, LLVMValueRef b) {
    switch (op) {
    case GJ_BIN_ADD:
        return gj_lower_complex(L, gj_lower_arith_fadd(L, gj_lower_re(L, a), gj_lower_re(L, b)),
                                gj_lower_arith_fadd(L, gj_lower_im(L, a), gj_lower_im(L, b)));
    case GJ_BIN_SUB:
        return gj_lower_complex(L, gj_lower_arith_fsub(L, gj_lower_re(L, a), gj_lower_re(L, b)),
                                gj_lower_arith_fsub(L, gj_lower_im(L, a), gj_lower_im(L, b)));
    case GJ_BIN_MUL: return complex_mul(L, a, b);
    case GJ_BIN_TRUEDIV: return complex_div(L, a, b);
    case GJ_BIN_POW: return complex_pow(L, a, b);
    case GJ_BIN_FLOORDIV:
    case GJ_BIN_MOD:
    case GJ_BIN_LSHIFT:
    case GJ_BIN_RSHIFT:
    case GJ_BIN_AND:
    case GJ_BIN_OR:
    case GJ_BIN_XOR:
    case GJ_BIN_MATMUL:
    case GJ_NBINOPS: break;
    }
    return NULL;
}

/* isnan / isinf / isfinite of a float value. */
LLVMValueRef gj_lower_float_pred(GjLower *L, GjMathFn fn, LLVMValueRef x) {
    LLVMValueRef inf = gj_lower_fconst(x, INFINITY);
    switch ((int)fn) {   /* the three predicates only */
    case GJ_MF_ISNAN: return gj_lower_fcmp(L, LLVMRealUNO, x, x);
    case GJ_MF_ISINF: return gj_lower_fcmp(L, LLVMRealOEQ, gj_lower_fabs(L, x), inf);
    default: return gj_lower_fcmp(L, LLVMRealOLT, gj_lower_fabs(L, x), inf);   /* isfinite */
    }
}

/* ---- complex functions ---------------------------------------------------- */

/* sqrt(z) with the stable formula: t = sqrt((|x| + |z|) / 2), then the
   half with the larger part; sqrt(+-0 + yj) keeps y's sign. */
static LLVMValueRef z_sqrt(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef zero = gj_lower_fconst(x, 0.0), half = gj_lower_fconst(x, 0.5),
                 two = gj_lower_fconst(x, 2.0);
    LLVMValueRef t = gj_lower_fadd(L, gj_lower_fabs(L, x), gj_lower_math2(L, "hypot", x, y));
    t = gj_lower_sqrt(L, gj_lower_fmul(L, t, half));
    LLVMValueRef y_over = gj_lower_fdiv(L, y, gj_lower_fmul(L, two, t));
    LLVMValueRef ay_over = gj_lower_fdiv(L, gj_lower_fabs(L, y), gj_lower_fmul(L, two, t));
    LLVMValueRef sign_args[2] = {t, y};
    LLVMValueRef t_signed =
        gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(t), sign_args, 2);
    LLVMValueRef pos = gj_lower_fcmp(L, LLVMRealOGE, x, zero);
    LLVMValueRef re = gj_lower_sel(L, pos, t, ay_over), im = gj_lower_sel(L, pos, y_over, t_signed);
    LLVMValueRef is_zero = LLVMBuildAnd(L->b, gj_lower_fcmp(L, LLVMRealOEQ, x, zero),
                                        gj_lower_fcmp(L, LLVMRealOEQ, y, zero), "");
    return gj_lower_complex(L, gj_lower_sel(L, is_zero, zero, re), gj_lower_sel(L, is_zero, y, im));
}

/* Where e^|x| would overflow while e^|x| cos y might not (|x| > log(max/4)),
   exp, sinh and cosh use x - 1 (toward 0) and multiply the product by e
   afterwards, as CPython does: exp(710 + 3j) is -1.6e308, not -inf.
   Returns x's stand-in; *k is e there, else 1. */
static LLVMValueRef near_overflow(GjLower *L, LLVMValueRef x, int sides, LLVMValueRef *k) {
    int dbl = LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMDoubleTypeKind;
    double lim = log((dbl ? DBL_MAX : (double)FLT_MAX) / 4);
    LLVMValueRef big = gj_lower_fcmp(L, LLVMRealOGT, sides == 2 ? gj_lower_fabs(L, x) : x,
                                     gj_lower_fconst(x, lim));
    *k = gj_lower_sel(L, big, gj_lower_fconst(x, M_E), gj_lower_fconst(x, 1.0));
    return gj_lower_sel(L, big,
                        gj_lower_fsub(L, x, gj_lower_copysign(L, gj_lower_fconst(x, 1.0), x)), x);
}

/* exp(x + yj) = e^x (cos y + j sin y); a real argument stays exact. */
static LLVMValueRef z_exp(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z), k;
    LLVMValueRef e = gj_lower_math1(L, "exp", near_overflow(L, x, 1, &k));
    LLVMValueRef re = gj_lower_fmul(L, gj_lower_fmul(L, e, gj_lower_math1(L, "cos", y)), k);
    LLVMValueRef im = gj_lower_fmul(L, gj_lower_fmul(L, e, gj_lower_math1(L, "sin", y)), k);
    LLVMValueRef real = gj_lower_fcmp(L, LLVMRealOEQ, y, gj_lower_fconst(y, 0.0));
    return gj_lower_complex(L, gj_lower_sel(L, real, gj_lower_fmul(L, e, k), re),
                            gj_lower_sel(L, real, y, im));
}

/* log(z) = log|z| + j arg(z); log10 divides both by ln 10. */
static LLVMValueRef z_log(GjLower *L, LLVMValueRef z, int base10) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef r = gj_lower_math2(L, "hypot", x, y), phi = gj_lower_math2(L, "atan2", y, x);
    if (!base10)
        return gj_lower_complex(L, gj_lower_math1(L, "log", r), phi);
    return gj_lower_complex(L, gj_lower_math1(L, "log10", r),
                            gj_lower_fdiv(L, phi, gj_lower_fconst(phi, M_LN10)));
}

/* sinh, cosh of x + yj from the real functions of x and y (sin and cos are
   them rotated: z_rotated). */
static LLVMValueRef z_trig(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z), k;
    LLVMValueRef xs = near_overflow(L, x, 2, &k);
    LLVMValueRef sh = gj_lower_math1(L, "sinh", xs), ch = gj_lower_math1(L, "cosh", xs);
    LLVMValueRef c = gj_lower_math1(L, "cos", y), sn = gj_lower_math1(L, "sin", y);
    if (fn == GJ_MF_SINH)
        return gj_lower_complex(L, gj_lower_fmul(L, gj_lower_fmul(L, sh, c), k),
                                gj_lower_fmul(L, gj_lower_fmul(L, ch, sn), k));
    return gj_lower_complex(L, gj_lower_fmul(L, gj_lower_fmul(L, ch, c), k),
                            gj_lower_fmul(L, gj_lower_fmul(L, sh, sn), k));
}

/* tanh(x + yj) = (sinh x cosh x + j sin y cos y) / (cos^2 y + sinh^2 x)
   (tan is it rotated: z_rotated): the textbook denominator
   cosh 2x + cos 2y equals 2 (cos^2 y + sinh^2 x), but computed as a sum it
   cancels near the poles (cos 2y -> -1, x -> 0); the squares do not
   (Kahan, "Branch cuts for complex elementary functions", 1987).  For a
   large |x| the quotient is inf / inf: then tanh -> +-1, the limit. */
static LLVMValueRef z_tanh(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef c = gj_lower_math1(L, "cos", y), sn = gj_lower_math1(L, "sin", y);
    LLVMValueRef sh = gj_lower_math1(L, "sinh", x), ch = gj_lower_math1(L, "cosh", x);
    LLVMValueRef d = gj_lower_fadd(L, gj_lower_fmul(L, c, c), gj_lower_fmul(L, sh, sh));
    LLVMValueRef trig = gj_lower_fdiv(L, gj_lower_fmul(L, sn, c), d);
    LLVMValueRef hyp = gj_lower_fdiv(L, gj_lower_fmul(L, sh, ch), d);
    LLVMValueRef big = gj_lower_fcmp(L, LLVMRealOGT, gj_lower_fabs(L, x), gj_lower_fconst(x, 20.0));
    /* sinh x cosh x / sinh^2 x: 1 to the float's precision */
    hyp = gj_lower_sel(L, big, gj_lower_copysign(L, gj_lower_fconst(x, 1.0), x), hyp);
    return gj_lower_complex(L, hyp, trig);
}

/* ---- complex functions at infinities and NaNs (C99 Annex G) ------------------------ */

/* A part's class: the rows and columns of the special-value tables, in
   CPython's cmathmodule.c order. */
enum { SV_NINF, SV_NEG, SV_NZERO, SV_PZERO, SV_POS, SV_PINF, SV_NAN, SV_NCLASSES };

/* The values the tables hold. */
enum { V0, VN0, VINF, VNINF, VNAN, VPI, VNPI, VP2, VNP2, VP4, VNP4, VP34, VNP34, V1, VN1 };
static const double sv_value[] = {0.0,       -0.0,         INFINITY,      -INFINITY, NAN,
                                  M_PI,      -M_PI,        M_PI / 2,      -M_PI / 2, M_PI / 4,
                                  -M_PI / 4, 3 * M_PI / 4, -3 * M_PI / 4, 1.0,       -1.0};

/* The functions with a table; asin, atan, sin and tan are asinh, atanh,
   sinh and tanh rotated (asin z = -j asinh(jz)), cos is cosh(jz), as
   CPython computes them. */
enum {
    SVT_SQRT,
    SVT_LOG,
    SVT_ACOSH,
    SVT_ACOS,
    SVT_ASINH,
    SVT_ATANH,
    SVT_EXP,
    SVT_COSH,
    SVT_SINH,
    SVT_TANH,
    SVT_N
};
static const char *const sv_name[SVT_N] = {"sqrt",  "log", "acosh", "acos", "asinh",
                                           "atanh", "exp", "cosh",  "sinh", "tanh"};

/* [function][class of re][class of im] = {re, im} of the result, for
   arguments with a part that is not finite: C99 Annex G (G.6), as CPython's
   cmath returns them (checked against it by tests/test_math.py; where
   CPython raises, as for exp(1 + inf j), C99's value).  The entries where
   both parts are finite are never read, nor those of exp, cosh, sinh and
   tanh at an infinite real part and a finite nonzero imaginary one
   (inf_limit).  Where CPython versions differ, the newest's (3.14: C11's
   values for tanh and acosh at +-0 + nan j). */
/* clang-format off */
static const unsigned char sv_table[SVT_N][SV_NCLASSES][SV_NCLASSES][2] = {
    {
        /* sqrt */
        {{VINF, VNINF}, {V0, VNINF}, {V0, VNINF}, {V0, VINF}, {V0, VINF}, {VINF, VINF}, {VNAN, VINF}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VINF}, {VINF, VNAN}},
        {{VINF, VNINF}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VINF, VINF}, {VNAN, VNAN}},
    },
    {
        /* log */
        {{VINF, VNP34}, {VINF, VNPI}, {VINF, VNPI}, {VINF, VPI}, {VINF, VPI}, {VINF, VP34}, {VINF, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VINF, VNAN}, {VNAN, VNAN}},
    },
    {
        /* acosh: log's but acosh(+-0 + nan j) = nan + pi/2 j (CPython 3.14; nan+nanj before) */
        {{VINF, VNP34}, {VINF, VNPI}, {VINF, VNPI}, {VINF, VPI}, {VINF, VPI}, {VINF, VP34}, {VINF, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VP2}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VP2}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VINF, VNAN}, {VNAN, VNAN}},
    },
    {
        /* acos */
        {{VP34, VINF}, {VPI, VINF}, {VPI, VINF}, {VPI, VNINF}, {VPI, VNINF}, {VP34, VNINF}, {VNAN, VINF}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VNAN, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VP2, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VP2, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VNAN, VNAN}},
        {{VP4, VINF}, {V0, VINF}, {V0, VINF}, {V0, VNINF}, {V0, VNINF}, {VP4, VNINF}, {VNAN, VINF}},
        {{VNAN, VINF}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNINF}, {VNAN, VNAN}},
    },
    {
        /* asinh */
        {{VNINF, VNP4}, {VNINF, VN0}, {VNINF, VN0}, {VNINF, V0}, {VNINF, V0}, {VNINF, VP4}, {VNINF, VNAN}},
        {{VNINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNINF, VP2}, {VNAN, VNAN}},
        {{VNINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN}, {VNAN, VNAN}, {VNAN, VN0}, {VNAN, V0}, {VNAN, VNAN}, {VINF, VNAN}, {VNAN, VNAN}},
    },
    {
        /* atanh */
        {{VN0, VNP2}, {VN0, VNP2}, {VN0, VNP2}, {VN0, VP2}, {VN0, VP2}, {VN0, VP2}, {VN0, VNAN}},
        {{VN0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VN0, VP2}, {VNAN, VNAN}},
        {{VN0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VN0, VP2}, {VN0, VNAN}},
        {{V0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VP2}, {V0, VNAN}},
        {{V0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VP2}, {VNAN, VNAN}},
        {{V0, VNP2}, {V0, VNP2}, {V0, VNP2}, {V0, VP2}, {V0, VP2}, {V0, VP2}, {V0, VNAN}},
        {{V0, VNP2}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}, {V0, VP2}, {VNAN, VNAN}},
    },
    {
        /* exp */
        {{V0, V0}, {V0, V0}, {V0, VN0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VN0}, {VNAN, V0}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}},
    },
    {
        /* cosh */
        {{VINF, VNAN}, {V0, V0}, {VINF, V0}, {VINF, VN0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, V0}, {VNAN, V0}},
        {{VNAN, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, V0}, {VNAN, V0}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {VNAN, VNAN}, {VNAN, V0}, {VNAN, V0}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}},
    },
    {
        /* sinh */
        {{VINF, VNAN}, {V0, V0}, {VNINF, VN0}, {VNINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{V0, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VNAN}, {V0, VNAN}},
        {{V0, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VNAN}, {V0, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VN0}, {VNAN, V0}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}},
    },
    {
        /* tanh: tanh(+-0 + nan j) is +-0 + nan j as in CPython 3.14 (C11's G.6.2.6;
           3.11-3.13 return nan+nanj) */
        {{VN1, V0}, {V0, V0}, {VN1, VN0}, {VN1, V0}, {V0, V0}, {VN1, V0}, {VN1, V0}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VN0, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {V0, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{V1, V0}, {V0, V0}, {V1, VN0}, {V1, V0}, {V0, V0}, {V1, V0}, {V1, V0}},
        {{VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VN0}, {VNAN, V0}, {VNAN, VNAN}, {VNAN, VNAN}, {VNAN, VNAN}},
    },
};
/* clang-format on */

static LLVMValueRef i32c(GjLower *L, int v) {
    return LLVMConstInt(L->i32, (unsigned long long)v, 0);
}

/* The SV_* class of a float part, as an i32. */
static LLVMValueRef part_class(GjLower *L, LLVMValueRef v) {
    unsigned bits = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMDoubleTypeKind ? 64 : 32;
    LLVMTypeRef ity = LLVMIntTypeInContext(L->ctx, bits);
    LLVMValueRef sign = LLVMBuildICmp(L->b, LLVMIntSLT, LLVMBuildBitCast(L->b, v, ity, ""),
                                      LLVMConstInt(ity, 0, 0), "");
    LLVMValueRef zero = gj_lower_fconst(v, 0.0);
    LLVMValueRef c = gj_lower_sel(L, sign, i32c(L, SV_NZERO), i32c(L, SV_PZERO));
    c = gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOLT, v, zero), i32c(L, SV_NEG), c);
    c = gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOGT, v, zero), i32c(L, SV_POS), c);
    c = gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOEQ, v, gj_lower_fconst(v, -INFINITY)),
                     i32c(L, SV_NINF), c);
    c = gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOEQ, v, gj_lower_fconst(v, INFINITY)),
                     i32c(L, SV_PINF), c);
    return gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealUNO, v, v), i32c(L, SV_NAN), c);
}

/* Table t as a module constant: [re, im] pairs of doubles, row by row, as
   bytes (gj_lower_const_global's i8 array, so the count of constant memory
   stays right). */
static LLVMValueRef sv_global(GjLower *L, int t) {
    char name[32];
    snprintf(name, sizeof name, "gj.cmath.%s", sv_name[t]);
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, name);
    if (g)
        return g;
    double vals[SV_NCLASSES * SV_NCLASSES * 2];
    for (int k = 0; k < SV_NCLASSES * SV_NCLASSES * 2; k++)
        vals[k] = sv_value[sv_table[t][k / 14][k / 2 % 7][k % 2]];
    return gj_lower_const_global(L, name, (const char *)vals, sizeof vals, LLVMInternalLinkage, 8);
}

/* finite, the value of the formula, where both parts of z are finite; table
   t's entry, divided by scale, where one is not. */
static LLVMValueRef annex_g_scaled(GjLower *L, int t, LLVMValueRef z, LLVMValueRef finite,
                                   double scale) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef idx = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, part_class(L, x), i32c(L, 7), ""),
                                    part_class(L, y), "");
    idx = LLVMBuildShl(L->b, idx, i32c(L, 4), ""); /* 16 bytes a pair */
    LLVMValueRef g = sv_global(L, t);
    LLVMTypeRef dbl = LLVMDoubleTypeInContext(L->ctx);
    LLVMValueRef part[2];
    for (int k = 0; k < 2; k++) {
        LLVMValueRef at = LLVMBuildAdd(L->b, idx, i32c(L, 8 * k), "");
        LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->i8, g, &at, 1, "");
        part[k] = LLVMBuildLoad2(L->b, dbl, p, "");
        LLVMSetAlignment(part[k], 8);
        if (scale != 1.0)
            part[k] = LLVMBuildFDiv(L->b, part[k], LLVMConstReal(dbl, scale), "");
        if (LLVMTypeOf(x) != dbl)
            part[k] = LLVMBuildFPTrunc(L->b, part[k], LLVMTypeOf(x), "");
    }
    LLVMValueRef ok = LLVMBuildAnd(L->b, gj_lower_float_pred(L, GJ_MF_ISFINITE, x),
                                   gj_lower_float_pred(L, GJ_MF_ISFINITE, y), "");
    return gj_lower_sel(L, ok, finite, gj_lower_complex(L, part[0], part[1]));
}

static LLVMValueRef annex_g(GjLower *L, int t, LLVMValueRef z, LLVMValueRef finite) {
    return annex_g_scaled(L, t, z, finite, 1.0);
}

/* exp, cosh, sinh or tanh of x + yj at x = +-inf and y finite and nonzero:
   the limit, with the signs of cos y and sin y (C99 G.6.2.4-6, G.6.3.1). */
static LLVMValueRef inf_limit(GjLower *L, GjMathFn fn, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef c = gj_lower_math1(L, "cos", y), s = gj_lower_math1(L, "sin", y),
                 inf = gj_lower_fconst(x, INFINITY);
    LLVMValueRef pos = gj_lower_fcmp(L, LLVMRealOGT, x, gj_lower_fconst(x, 0.0));
    LLVMValueRef ic = gj_lower_copysign(L, inf, c), is = gj_lower_copysign(L, inf, s);
    switch ((int)fn) { /* the four functions only */
    case GJ_MF_EXP:
        return gj_lower_complex(
            L, gj_lower_sel(L, pos, ic, gj_lower_copysign(L, gj_lower_fconst(x, 0.0), c)),
            gj_lower_sel(L, pos, is, gj_lower_copysign(L, gj_lower_fconst(x, 0.0), s)));
    case GJ_MF_COSH: return gj_lower_complex(L, ic, gj_lower_sel(L, pos, is, gj_lower_fneg(L, is)));
    case GJ_MF_SINH: return gj_lower_complex(L, gj_lower_sel(L, pos, ic, gj_lower_fneg(L, ic)), is);
    default: /* tanh */
        return gj_lower_complex(
            L, gj_lower_sel(L, pos, gj_lower_fconst(x, 1.0), gj_lower_fconst(x, -1.0)),
            gj_lower_copysign(L, gj_lower_fconst(x, 0.0), gj_lower_fmul(L, s, c)));
    }
}

/* f(z) for f one of exp, cosh, sinh, tanh: finite where z is, else Annex G's
   value. */
static LLVMValueRef annex_g_exp(GjLower *L, GjMathFn fn, LLVMValueRef z, LLVMValueRef finite) {
    int t = fn == GJ_MF_EXP    ? SVT_EXP
            : fn == GJ_MF_COSH ? SVT_COSH
            : fn == GJ_MF_SINH ? SVT_SINH
                               : SVT_TANH;
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef r = annex_g(L, t, z, finite);
    LLVMValueRef limit = LLVMBuildAnd(L->b, gj_lower_float_pred(L, GJ_MF_ISINF, x),
                                      gj_lower_float_pred(L, GJ_MF_ISFINITE, y), "");
    limit =
        LLVMBuildAnd(L->b, limit, gj_lower_fcmp(L, LLVMRealONE, y, gj_lower_fconst(y, 0.0)), "");
    return gj_lower_sel(L, limit, inf_limit(L, fn, x, y), r);
}

/* sin, cos, tan as CPython computes them: -j sinh(jz), cosh(jz), -j tanh(jz). */
static LLVMValueRef z_rotated(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef w = gj_lower_complex(L, gj_lower_fneg(L, gj_lower_im(L, z)), gj_lower_re(L, z));
    GjMathFn h = fn == GJ_MF_SIN ? GJ_MF_SINH : fn == GJ_MF_COS ? GJ_MF_COSH : GJ_MF_TANH;
    LLVMValueRef r = annex_g_exp(L, h, w, h == GJ_MF_TANH ? z_tanh(L, w) : z_trig(L, h, w));
    if (fn == GJ_MF_COS)
        return r;
    return gj_lower_complex(L, gj_lower_im(L, r), gj_lower_fneg(L, gj_lower_re(L, r)));
}

/* ---- inverse trigonometric and hyperbolic functions -------------------------------- */

/* The formulas of finite arguments are Kahan's ("Branch cuts for complex
   elementary functions", 1987), as CPython's cmath uses them: products of
   square roots, so no cancellation near the branch points.  CPython's
   separate path for parts above DBL_MAX/4 is not reproduced. */

static LLVMValueRef zc(GjLower *L, LLVMValueRef re, LLVMValueRef im) {
    return z_sqrt(L, gj_lower_complex(L, re, im));
}

/* asinh(x + yj) = asinh(Im(conj(s1) s2)) + j atan2(y, Re(s1 s2)) with
   s1 = sqrt(1 + y - xj), s2 = sqrt(1 - y + xj). */
static LLVMValueRef z_asinh(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef one = gj_lower_fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, gj_lower_fadd(L, one, y), gj_lower_fneg(L, x));
    LLVMValueRef s2 = zc(L, gj_lower_fsub(L, one, y), x);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(
        L,
        gj_lower_math1(L, "asinh",
                       gj_lower_fsub(L, gj_lower_fmul(L, a, d), gj_lower_fmul(L, c, b))),
        gj_lower_math2(L, "atan2", y,
                       gj_lower_fsub(L, gj_lower_fmul(L, a, c), gj_lower_fmul(L, b, d))));
}

/* acos(x + yj) = 2 atan2(Re s1, Re s2) + j asinh(Im(conj(s2) s1)) with
   s1 = sqrt(1 - x - yj), s2 = sqrt(1 + x + yj). */
static LLVMValueRef z_acos(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef one = gj_lower_fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, gj_lower_fsub(L, one, x), gj_lower_fneg(L, y));
    LLVMValueRef s2 = zc(L, gj_lower_fadd(L, one, x), y);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(
        L, gj_lower_fmul(L, gj_lower_fconst(x, 2.0), gj_lower_math2(L, "atan2", a, c)),
        gj_lower_math1(L, "asinh",
                       gj_lower_fsub(L, gj_lower_fmul(L, c, b), gj_lower_fmul(L, d, a))));
}

/* acosh(x + yj) = asinh(Re(conj(s1) s2)) + 2j atan2(Im s1, Re s2) with
   s1 = sqrt(x - 1 + yj), s2 = sqrt(x + 1 + yj). */
static LLVMValueRef z_acosh(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef one = gj_lower_fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, gj_lower_fsub(L, x, one), y);
    LLVMValueRef s2 = zc(L, gj_lower_fadd(L, x, one), y);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(
        L,
        gj_lower_math1(L, "asinh",
                       gj_lower_fadd(L, gj_lower_fmul(L, a, c), gj_lower_fmul(L, b, d))),
        gj_lower_fmul(L, gj_lower_fconst(x, 2.0), gj_lower_math2(L, "atan2", b, c)));
}

/* atanh(z) = -atanh(-z) for Re z < 0, so a = |x| below and b is y with the
   same flip.  In general 1/4 log1p(4a / ((1 - a)^2 + b^2)) +
   j/2 atan2(2b, (1 - a)(1 + a) - b^2); for a part above sqrt(max / 4)
   the squares would overflow: a / |z|^2 + j pi/2 sign(b); at a == 1 with
   |b| below sqrt(min) the squares underflow: -log(sqrt|b| / sqrt(hypot(b, 2)))
   + j atan2(2, -|b|) / 2 sign(b), and (inf, b) at b == 0 (a pole). */
static LLVMValueRef z_atanh(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    int dbl = LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMDoubleTypeKind;
    double large = dbl ? sqrt(DBL_MAX / 4) : sqrt(FLT_MAX / 4);
    double tiny = dbl ? sqrt(DBL_MIN) : sqrt(FLT_MIN);
    LLVMValueRef one = gj_lower_fconst(x, 1.0), half = gj_lower_fconst(x, 0.5),
                 quarter = gj_lower_fconst(x, 0.25);
    LLVMValueRef neg = gj_lower_fcmp(L, LLVMRealOLT, x, gj_lower_fconst(x, 0.0));
    LLVMValueRef a = gj_lower_sel(L, neg, gj_lower_fneg(L, x), x),
                 b = gj_lower_sel(L, neg, gj_lower_fneg(L, y), y);
    LLVMValueRef ab = gj_lower_fabs(L, b);

    LLVMValueRef h =
        gj_lower_math2(L, "hypot", gj_lower_fmul(L, a, half), gj_lower_fmul(L, b, half));
    LLVMValueRef big_re = gj_lower_fdiv(L, gj_lower_fdiv(L, gj_lower_fmul(L, a, quarter), h), h);
    LLVMValueRef big_im = gj_lower_copysign(L, gj_lower_fconst(x, M_PI / 2), b);
    LLVMValueRef big =
        LLVMBuildOr(L->b, gj_lower_fcmp(L, LLVMRealOGT, a, gj_lower_fconst(x, large)),
                    gj_lower_fcmp(L, LLVMRealOGT, ab, gj_lower_fconst(x, large)), "");

    LLVMValueRef q =
        gj_lower_fdiv(L, gj_lower_sqrt(L, ab),
                      gj_lower_sqrt(L, gj_lower_math2(L, "hypot", ab, gj_lower_fconst(x, 2.0))));
    LLVMValueRef b_zero = gj_lower_fcmp(L, LLVMRealOEQ, ab, gj_lower_fconst(x, 0.0));
    LLVMValueRef one_re = gj_lower_sel(L, b_zero, gj_lower_fconst(x, INFINITY),
                                       gj_lower_fneg(L, gj_lower_math1(L, "log", q)));
    LLVMValueRef one_im = gj_lower_sel(
        L, b_zero, b,
        gj_lower_copysign(
            L,
            gj_lower_fmul(
                L, gj_lower_math2(L, "atan2", gj_lower_fconst(x, 2.0), gj_lower_fneg(L, ab)), half),
            b));
    LLVMValueRef at_one =
        LLVMBuildAnd(L->b, gj_lower_fcmp(L, LLVMRealOEQ, a, one),
                     gj_lower_fcmp(L, LLVMRealOLT, ab, gj_lower_fconst(x, tiny)), "");

    LLVMValueRef om = gj_lower_fsub(L, one, a);
    LLVMValueRef den = gj_lower_fadd(L, gj_lower_fmul(L, om, om), gj_lower_fmul(L, ab, ab));
    LLVMValueRef gen_re = gj_lower_fmul(
        L,
        gj_lower_math1(L, "log1p",
                       gj_lower_fdiv(L, gj_lower_fmul(L, gj_lower_fconst(x, 4.0), a), den)),
        quarter);
    LLVMValueRef gen_im = gj_lower_fmul(
        L,
        gj_lower_math2(L, "atan2", gj_lower_fmul(L, gj_lower_fconst(x, 2.0), b),
                       gj_lower_fsub(L, gj_lower_fmul(L, om, gj_lower_fadd(L, one, a)),
                                     gj_lower_fmul(L, ab, ab))),
        half);
    LLVMValueRef re = gj_lower_sel(L, big, big_re, gj_lower_sel(L, at_one, one_re, gen_re));
    LLVMValueRef im = gj_lower_sel(L, big, big_im, gj_lower_sel(L, at_one, one_im, gen_im));
    return gj_lower_complex(L, gj_lower_sel(L, neg, gj_lower_fneg(L, re), re),
                            gj_lower_sel(L, neg, gj_lower_fneg(L, im), im));
}

/* f(x + yj) for f one of asin, acos, atan, asinh, acosh, atanh, with Annex
   G's values at infinities and NaNs. */
static LLVMValueRef z_inverse(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    switch ((int)fn) { /* the six inverse functions only */
    case GJ_MF_ACOS: return annex_g(L, SVT_ACOS, z, z_acos(L, x, y));
    case GJ_MF_ACOSH: return annex_g(L, SVT_ACOSH, z, z_acosh(L, x, y));
    case GJ_MF_ASINH: return annex_g(L, SVT_ASINH, z, z_asinh(L, x, y));
    case GJ_MF_ATANH: return annex_g(L, SVT_ATANH, z, z_atanh(L, x, y));
    default: { /* asin, atan: -j f(jz) with f = asinh, atanh */
        LLVMValueRef w = gj_lower_complex(L, gj_lower_fneg(L, y), x);
        LLVMValueRef r = fn == GJ_MF_ASIN
                             ? annex_g(L, SVT_ASINH, w, z_asinh(L, gj_lower_fneg(L, y), x))
                             : annex_g(L, SVT_ATANH, w, z_atanh(L, gj_lower_fneg(L, y), x));
        return gj_lower_complex(L, gj_lower_im(L, r), gj_lower_fneg(L, gj_lower_re(L, r)));
    }
    }
}

LLVMValueRef gj_lower_complex_fn(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    switch ((int)fn) { /* the rows with a cmath name */
    case GJ_MF_SQRT: return annex_g(L, SVT_SQRT, z, z_sqrt(L, z));
    case GJ_MF_EXP: return annex_g_exp(L, fn, z, z_exp(L, z));
    case GJ_MF_LOG: return annex_g(L, SVT_LOG, z, z_log(L, z, 0));
    case GJ_MF_LOG10: return annex_g_scaled(L, SVT_LOG, z, z_log(L, z, 1), M_LN10);
    case GJ_MF_ASIN:
    case GJ_MF_ACOS:
    case GJ_MF_ATAN:
    case GJ_MF_ASINH:
    case GJ_MF_ACOSH:
    case GJ_MF_ATANH: return z_inverse(L, fn, z);
    case GJ_MF_SINH:
    case GJ_MF_COSH: return annex_g_exp(L, fn, z, z_trig(L, fn, z));
    case GJ_MF_TANH: return annex_g_exp(L, fn, z, z_tanh(L, z));
    case GJ_MF_SIN:
    case GJ_MF_COS:
    case GJ_MF_TAN: return z_rotated(L, fn, z);
    case GJ_MF_ISNAN:
        return LLVMBuildOr(L->b, gj_lower_float_pred(L, fn, x), gj_lower_float_pred(L, fn, y), "");
    case GJ_MF_ISINF:
        return LLVMBuildOr(L->b, gj_lower_float_pred(L, fn, x), gj_lower_float_pred(L, fn, y), "");
    case GJ_MF_ISFINITE:
        return LLVMBuildAnd(L->b, gj_lower_float_pred(L, fn, x), gj_lower_float_pred(L, fn, y), "");
    default: break;
    }
    return gj_lower_fail(L, "this function of a complex number is not supported");
}

/* a ** b as NumPy's npy_cpow computes it (NumPy 2): b == 0 gives 1; a zero
   base gives 0 when b.real > 0, else nan; an integral real exponent with
   |n| < 100 is a product (n = 1, 2, 3: a, a*a, a*(a*a); else binary powering
   from 1, inverted for n < 0), so (1+1j)**2 is exactly 2j; everything else
   is exp(b log a).  Written with selects: for a constant exponent LLVM folds
   away the paths not taken. */
static LLVMValueRef complex_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef ar = gj_lower_re(L, a), ai = gj_lower_im(L, a);
    LLVMValueRef br = gj_lower_re(L, b), bi = gj_lower_im(L, b);
    LLVMValueRef zero = gj_lower_fconst(ar, 0.0), one = gj_lower_fconst(ar, 1.0),
                 nan = gj_lower_fconst(ar, NAN);
    LLVMValueRef lg = z_log(L, a, 0);
    LLVMValueRef lr = gj_lower_re(L, lg), li = gj_lower_im(L, lg);
    LLVMValueRef w = gj_lower_complex(
        L, LLVMBuildFSub(L->b, gj_lower_fmul(L, br, lr), gj_lower_fmul(L, bi, li), ""),
        gj_lower_fadd(L, gj_lower_fmul(L, br, li), gj_lower_fmul(L, bi, lr)));
    LLVMValueRef r = z_exp(L, w);

    /* the integral exponent's product */
    LLVMValueRef n = LLVMBuildFPToSI(L->b, br, L->i64, "");
    LLVMValueRef integral = LLVMBuildAnd(
        L->b,
        LLVMBuildAnd(
            L->b, gj_lower_fcmp(L, LLVMRealOEQ, bi, zero),
            gj_lower_fcmp(L, LLVMRealOEQ, gj_lower_float_intrinsic(L, "llvm.trunc", br), br), ""),
        gj_lower_fcmp(L, LLVMRealOLT, gj_lower_fabs(L, br), gj_lower_fconst(br, 100.0)), "");
    LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, n, LLVMConstInt(L->i64, 0, 0), "");
    LLVMValueRef m = gj_lower_sel(L, neg, LLVMBuildNeg(L->b, n, ""), n);
    LLVMValueRef p = a, acc = gj_lower_complex(L, one, zero);
    for (unsigned bit = 0; bit < 7; bit++) { /* |n| < 100 < 2**7 */
        LLVMValueRef set = LLVMBuildTrunc(
            L->b, LLVMBuildLShr(L->b, m, LLVMConstInt(L->i64, bit, 0), ""), L->i1, "");
        acc = gj_lower_sel(L, set, gj_lower_complex_binop(L, GJ_BIN_MUL, acc, p), acc);
        p = gj_lower_complex_binop(L, GJ_BIN_MUL, p, p);
    }
    acc = gj_lower_sel(
        L, neg, gj_lower_complex_binop(L, GJ_BIN_TRUEDIV, gj_lower_complex(L, one, zero), acc),
        acc);
    LLVMValueRef sq = gj_lower_complex_binop(L, GJ_BIN_MUL, a, a);
    LLVMValueRef cube = gj_lower_complex_binop(L, GJ_BIN_MUL, a, sq);
    acc = gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 3, 0), ""), cube,
                       acc);
    acc =
        gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 2, 0), ""), sq, acc);
    acc =
        gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 1, 0), ""), a, acc);
    r = gj_lower_sel(L, integral, acc, r);

    LLVMValueRef re = gj_lower_re(L, r), im = gj_lower_im(L, r);
    LLVMValueRef a_zero = LLVMBuildAnd(L->b, gj_lower_fcmp(L, LLVMRealOEQ, ar, zero),
                                       gj_lower_fcmp(L, LLVMRealOEQ, ai, zero), "");
    LLVMValueRef b_zero = LLVMBuildAnd(L->b, gj_lower_fcmp(L, LLVMRealOEQ, br, zero),
                                       gj_lower_fcmp(L, LLVMRealOEQ, bi, zero), "");
    LLVMValueRef zero_base = gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOGT, br, zero), zero, nan);
    re = gj_lower_sel(L, a_zero, zero_base, re);
    im = gj_lower_sel(L, a_zero, zero_base, im);
    return gj_lower_complex(L, gj_lower_sel(L, b_zero, one, re), gj_lower_sel(L, b_zero, zero, im));
}
