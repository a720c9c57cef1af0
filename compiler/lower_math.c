/*
 * lower_math.c - the math family of intrinsics (lower_intr.h): calls of
 * math, numpy and cmath functions and of the builtins (range, abs, min,
 * max, len, int, float, bool, round, pow, divmod, complex), NumPy scalar
 * constructors (np.float32(x)) and number methods (z.conjugate()).
 *
 * Input: the call's argument values and types and the result type that
 * typeinfer.c chose (it decided every promotion; this file only converts
 * the arguments to it).  Real functions go by their GJ_MATH_FUNCS row: an
 * "llvm.*" implementation is an LLVM intrinsic the NVPTX backend selects
 * (sqrt, fabs, floor, copysign...), any other name is a libdevice function
 * called through gj_lower_libdevice(), the one place that names libdevice.
 * Complex functions are written here from real ones: the textbook formulas
 * (as CPython's cmath and C99's csqrt/cexp/clog do for finite arguments),
 * Kahan's for the inverse functions; at infinities and NaNs C99 Annex G's
 * values, from a table per function (annex_g) as CPython's cmath has them.
 */
#include "lower_ops.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "intrinsics.h"
#include "lower_intr.h"

static LLVMValueRef fail(GjLower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static LLVMValueRef fail(GjLower *L, const char *fmt, ...) {
    if (L->c->diag)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&L->c->arena, fmt, ap);
    va_end(ap);
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "%s", msg ? msg : fmt);
    return NULL;
}

/* ---- small helpers ------------------------------------------------------- */

static LLVMValueRef fconst(LLVMValueRef like, double v) {
    return LLVMConstReal(LLVMTypeOf(like), v);
}

static LLVMValueRef ld1(GjLower *L, const char *base, LLVMValueRef x) {
    return gj_lower_libdevice(L, base, &x, 1);
}

static LLVMValueRef ld2(GjLower *L, const char *base, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef args[2] = {x, y};
    return gj_lower_libdevice(L, base, args, 2);
}

static LLVMValueRef fmul_(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFMul(L->b, a, b, ""));
}

static LLVMValueRef fadd_(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFAdd(L->b, a, b, ""));
}

static LLVMValueRef fdiv_(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fdiv(L, a, b);
}

static LLVMValueRef fsub_(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFSub(L->b, a, b, ""));
}

static LLVMValueRef fneg_(GjLower *L, LLVMValueRef a) { return LLVMBuildFNeg(L->b, a, ""); }

static LLVMValueRef copysign_(GjLower *L, LLVMValueRef mag, LLVMValueRef sign) {
    LLVMValueRef args[2] = {mag, sign};
    return gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(mag), args, 2);
}

static LLVMValueRef fcmp(GjLower *L, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFCmp(L->b, p, a, b, "");
}

static LLVMValueRef sel(GjLower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(L->b, c, a, b, "");
}

static LLVMValueRef fabs_of(GjLower *L, LLVMValueRef x) {
    return gj_lower_float_intrinsic(L, "llvm.fabs", x);
}

/* The float type of a complex type's parts. */
static const GjType *part_of(const GjType *t) {
    return gj_ty_concrete(t)->bits == 64 ? &gj_ty_float32 : &gj_ty_float64;
}

static int is_complex_type(const GjType *t) { return gj_lower_class(t) == GJ_NC_COMPLEX; }

/* isnan / isinf / isfinite of a float value. */
static LLVMValueRef float_pred(GjLower *L, GjMathFn fn, LLVMValueRef x) {
    LLVMValueRef inf = fconst(x, INFINITY);
    switch ((int)fn) {   /* the three predicates only */
    case GJ_MF_ISNAN: return fcmp(L, LLVMRealUNO, x, x);
    case GJ_MF_ISINF: return fcmp(L, LLVMRealOEQ, fabs_of(L, x), inf);
    default: return fcmp(L, LLVMRealOLT, fabs_of(L, x), inf);   /* isfinite */
    }
}

/* ---- complex functions ---------------------------------------------------- */

/* sqrt(z) with the stable formula: t = sqrt((|x| + |z|) / 2), then the
   half with the larger part; sqrt(+-0 + yj) keeps y's sign. */
static LLVMValueRef z_sqrt(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef zero = fconst(x, 0.0), half = fconst(x, 0.5), two = fconst(x, 2.0);
    LLVMValueRef t = fadd_(L, fabs_of(L, x), ld2(L, "hypot", x, y));
    t = gj_lower_sqrt(L, fmul_(L, t, half));
    LLVMValueRef y_over = fdiv_(L, y, fmul_(L, two, t));
    LLVMValueRef ay_over = fdiv_(L, fabs_of(L, y), fmul_(L, two, t));
    LLVMValueRef sign_args[2] = {t, y};
    LLVMValueRef t_signed =
        gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(t), sign_args, 2);
    LLVMValueRef pos = fcmp(L, LLVMRealOGE, x, zero);
    LLVMValueRef re = sel(L, pos, t, ay_over), im = sel(L, pos, y_over, t_signed);
    LLVMValueRef is_zero =
        LLVMBuildAnd(L->b, fcmp(L, LLVMRealOEQ, x, zero), fcmp(L, LLVMRealOEQ, y, zero), "");
    return gj_lower_complex(L, sel(L, is_zero, zero, re), sel(L, is_zero, y, im));
}

/* Where e^|x| would overflow while e^|x| cos y might not (|x| > log(max/4)),
   exp, sinh and cosh use x - 1 (toward 0) and multiply the product by e
   afterwards, as CPython does: exp(710 + 3j) is -1.6e308, not -inf.
   Returns x's stand-in; *k is e there, else 1. */
static LLVMValueRef near_overflow(GjLower *L, LLVMValueRef x, int sides, LLVMValueRef *k) {
    int dbl = LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMDoubleTypeKind;
    double lim = log((dbl ? DBL_MAX : (double)FLT_MAX) / 4);
    LLVMValueRef big = fcmp(L, LLVMRealOGT, sides == 2 ? fabs_of(L, x) : x, fconst(x, lim));
    *k = sel(L, big, fconst(x, M_E), fconst(x, 1.0));
    return sel(L, big, fsub_(L, x, copysign_(L, fconst(x, 1.0), x)), x);
}

/* exp(x + yj) = e^x (cos y + j sin y); a real argument stays exact. */
static LLVMValueRef z_exp(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z), k;
    LLVMValueRef e = ld1(L, "exp", near_overflow(L, x, 1, &k));
    LLVMValueRef re = fmul_(L, fmul_(L, e, ld1(L, "cos", y)), k);
    LLVMValueRef im = fmul_(L, fmul_(L, e, ld1(L, "sin", y)), k);
    LLVMValueRef real = fcmp(L, LLVMRealOEQ, y, fconst(y, 0.0));
    return gj_lower_complex(L, sel(L, real, fmul_(L, e, k), re), sel(L, real, y, im));
}

/* log(z) = log|z| + j arg(z); log10 divides both by ln 10. */
static LLVMValueRef z_log(GjLower *L, LLVMValueRef z, int base10) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef r = ld2(L, "hypot", x, y), phi = ld2(L, "atan2", y, x);
    if (!base10)
        return gj_lower_complex(L, ld1(L, "log", r), phi);
    return gj_lower_complex(L, ld1(L, "log10", r), fdiv_(L, phi, fconst(phi, M_LN10)));
}

/* sinh, cosh of x + yj from the real functions of x and y (sin and cos are
   them rotated: z_rotated). */
static LLVMValueRef z_trig(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z), k;
    LLVMValueRef xs = near_overflow(L, x, 2, &k);
    LLVMValueRef sh = ld1(L, "sinh", xs), ch = ld1(L, "cosh", xs);
    LLVMValueRef c = ld1(L, "cos", y), sn = ld1(L, "sin", y);
    if (fn == GJ_MF_SINH)
        return gj_lower_complex(L, fmul_(L, fmul_(L, sh, c), k), fmul_(L, fmul_(L, ch, sn), k));
    return gj_lower_complex(L, fmul_(L, fmul_(L, ch, c), k), fmul_(L, fmul_(L, sh, sn), k));
}

/* tanh(x + yj) = (sinh x cosh x + j sin y cos y) / (cos^2 y + sinh^2 x)
   (tan is it rotated: z_rotated): the textbook denominator
   cosh 2x + cos 2y equals 2 (cos^2 y + sinh^2 x), but computed as a sum it
   cancels near the poles (cos 2y -> -1, x -> 0); the squares do not
   (Kahan, "Branch cuts for complex elementary functions", 1987).  For a
   large |x| the quotient is inf / inf: then tanh -> +-1, the limit. */
static LLVMValueRef z_tanh(GjLower *L, LLVMValueRef z) {
    LLVMValueRef x = gj_lower_re(L, z), y = gj_lower_im(L, z);
    LLVMValueRef c = ld1(L, "cos", y), sn = ld1(L, "sin", y);
    LLVMValueRef sh = ld1(L, "sinh", x), ch = ld1(L, "cosh", x);
    LLVMValueRef d = fadd_(L, fmul_(L, c, c), fmul_(L, sh, sh));
    LLVMValueRef trig = fdiv_(L, fmul_(L, sn, c), d);
    LLVMValueRef hyp = fdiv_(L, fmul_(L, sh, ch), d);
    LLVMValueRef big = fcmp(L, LLVMRealOGT, fabs_of(L, x), fconst(x, 20.0));
    /* sinh x cosh x / sinh^2 x: 1 to the float's precision */
    hyp = sel(L, big, copysign_(L, fconst(x, 1.0), x), hyp);
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
static const unsigned char sv_table[SVT_N][SV_NCLASSES][SV_NCLASSES][2] = {
    {
        /* sqrt */
        {{VINF, VNINF},
         {V0, VNINF},
         {V0, VNINF},
         {V0, VINF},
         {V0, VINF},
         {VINF, VINF},
         {VNAN, VINF}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VINF}, {VNAN, VNAN}},
        {{VINF, VNINF},
         {VINF, VN0},
         {VINF, VN0},
         {VINF, V0},
         {VINF, V0},
         {VINF, VINF},
         {VINF, VNAN}},
        {{VINF, VNINF},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VINF, VINF},
         {VNAN, VNAN}},
    },
    {
        /* log */
        {{VINF, VNP34},
         {VINF, VNPI},
         {VINF, VNPI},
         {VINF, VPI},
         {VINF, VPI},
         {VINF, VP34},
         {VINF, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VINF, VNAN},
         {VNAN, VNAN}},
    },
    {
        /* acosh: log's but acosh(+-0 + nan j) = nan + pi/2 j (CPython 3.14; nan+nanj before) */
        {{VINF, VNP34},
         {VINF, VNPI},
         {VINF, VNPI},
         {VINF, VPI},
         {VINF, VPI},
         {VINF, VP34},
         {VINF, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VP2}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VP2}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VINF, VNAN},
         {VNAN, VNAN}},
    },
    {
        /* acos */
        {{VP34, VINF},
         {VPI, VINF},
         {VPI, VINF},
         {VPI, VNINF},
         {VPI, VNINF},
         {VP34, VNINF},
         {VNAN, VINF}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VNAN, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VP2, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VP2, VNAN}},
        {{VP2, VINF}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VP2, VNINF}, {VNAN, VNAN}},
        {{VP4, VINF}, {V0, VINF}, {V0, VINF}, {V0, VNINF}, {V0, VNINF}, {VP4, VNINF}, {VNAN, VINF}},
        {{VNAN, VINF},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNINF},
         {VNAN, VNAN}},
    },
    {
        /* asinh */
        {{VNINF, VNP4},
         {VNINF, VN0},
         {VNINF, VN0},
         {VNINF, V0},
         {VNINF, V0},
         {VNINF, VP4},
         {VNINF, VNAN}},
        {{VNINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNINF, VP2}, {VNAN, VNAN}},
        {{VNINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VINF, VP2}, {VNAN, VNAN}},
        {{VINF, VNP4}, {VINF, VN0}, {VINF, VN0}, {VINF, V0}, {VINF, V0}, {VINF, VP4}, {VINF, VNAN}},
        {{VINF, VNAN},
         {VNAN, VNAN},
         {VNAN, VN0},
         {VNAN, V0},
         {VNAN, VNAN},
         {VINF, VNAN},
         {VNAN, VNAN}},
    },
    {
        /* atanh */
        {{VN0, VNP2}, {VN0, VNP2}, {VN0, VNP2}, {VN0, VP2}, {VN0, VP2}, {VN0, VP2}, {VN0, VNAN}},
        {{VN0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VN0, VP2}, {VNAN, VNAN}},
        {{VN0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VN0, VP2}, {VN0, VNAN}},
        {{V0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VP2}, {V0, VNAN}},
        {{V0, VNP2}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VP2}, {VNAN, VNAN}},
        {{V0, VNP2}, {V0, VNP2}, {V0, VNP2}, {V0, VP2}, {V0, VP2}, {V0, VP2}, {V0, VNAN}},
        {{V0, VNP2},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {V0, VP2},
         {VNAN, VNAN}},
    },
    {
        /* exp */
        {{V0, V0}, {V0, V0}, {V0, VN0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VN0},
         {VNAN, V0},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN}},
    },
    {
        /* cosh */
        {{VINF, VNAN}, {V0, V0}, {VINF, V0}, {VINF, VN0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VNAN, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, V0}, {VNAN, V0}},
        {{VNAN, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, V0}, {VNAN, V0}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, V0},
         {VNAN, V0},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN}},
    },
    {
        /* sinh */
        {{VINF, VNAN}, {V0, V0}, {VNINF, VN0}, {VNINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{V0, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VNAN}, {V0, VNAN}},
        {{V0, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, VNAN}, {V0, VNAN}},
        {{VNAN, VNAN}, {V0, V0}, {V0, V0}, {V0, V0}, {V0, V0}, {VNAN, VNAN}, {VNAN, VNAN}},
        {{VINF, VNAN}, {V0, V0}, {VINF, VN0}, {VINF, V0}, {V0, V0}, {VINF, VNAN}, {VINF, VNAN}},
        {{VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VN0},
         {VNAN, V0},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN}},
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
        {{VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VN0},
         {VNAN, V0},
         {VNAN, VNAN},
         {VNAN, VNAN},
         {VNAN, VNAN}},
    },
};

static LLVMValueRef i32c(GjLower *L, int v) {
    return LLVMConstInt(L->i32, (unsigned long long)v, 0);
}

/* The SV_* class of a float part, as an i32. */
static LLVMValueRef part_class(GjLower *L, LLVMValueRef v) {
    unsigned bits = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMDoubleTypeKind ? 64 : 32;
    LLVMTypeRef ity = LLVMIntTypeInContext(L->ctx, bits);
    LLVMValueRef sign = LLVMBuildICmp(L->b, LLVMIntSLT, LLVMBuildBitCast(L->b, v, ity, ""),
                                      LLVMConstInt(ity, 0, 0), "");
    LLVMValueRef zero = fconst(v, 0.0);
    LLVMValueRef c = sel(L, sign, i32c(L, SV_NZERO), i32c(L, SV_PZERO));
    c = sel(L, fcmp(L, LLVMRealOLT, v, zero), i32c(L, SV_NEG), c);
    c = sel(L, fcmp(L, LLVMRealOGT, v, zero), i32c(L, SV_POS), c);
    c = sel(L, fcmp(L, LLVMRealOEQ, v, fconst(v, -INFINITY)), i32c(L, SV_NINF), c);
    c = sel(L, fcmp(L, LLVMRealOEQ, v, fconst(v, INFINITY)), i32c(L, SV_PINF), c);
    return sel(L, fcmp(L, LLVMRealUNO, v, v), i32c(L, SV_NAN), c);
}

/* Table t as a module constant: [re, im] pairs of doubles, row by row, as
   bytes (an i8 array, as lower_array.c's frozen arrays, so its count of
   constant memory stays right). */
static LLVMValueRef sv_global(GjLower *L, int t) {
    char name[32];
    snprintf(name, sizeof name, "gj.cmath.%s", sv_name[t]);
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, name);
    if (g)
        return g;
    double vals[SV_NCLASSES * SV_NCLASSES * 2];
    for (int k = 0; k < SV_NCLASSES * SV_NCLASSES * 2; k++)
        vals[k] = sv_value[sv_table[t][k / 14][k / 2 % 7][k % 2]];
    LLVMValueRef init = LLVMConstStringInContext2(L->ctx, (const char *)vals, sizeof vals, 1);
    g = LLVMAddGlobalInAddressSpace(L->mod, LLVMTypeOf(init), name,
                                    L->target->addrspace[GJ_AS_CONST]);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 8);
    return g;
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
    LLVMValueRef ok =
        LLVMBuildAnd(L->b, float_pred(L, GJ_MF_ISFINITE, x), float_pred(L, GJ_MF_ISFINITE, y), "");
    return sel(L, ok, finite, gj_lower_complex(L, part[0], part[1]));
}

static LLVMValueRef annex_g(GjLower *L, int t, LLVMValueRef z, LLVMValueRef finite) {
    return annex_g_scaled(L, t, z, finite, 1.0);
}

/* exp, cosh, sinh or tanh of x + yj at x = +-inf and y finite and nonzero:
   the limit, with the signs of cos y and sin y (C99 G.6.2.4-6, G.6.3.1). */
static LLVMValueRef inf_limit(GjLower *L, GjMathFn fn, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef c = ld1(L, "cos", y), s = ld1(L, "sin", y), inf = fconst(x, INFINITY);
    LLVMValueRef pos = fcmp(L, LLVMRealOGT, x, fconst(x, 0.0));
    LLVMValueRef ic = copysign_(L, inf, c), is = copysign_(L, inf, s);
    switch ((int)fn) { /* the four functions only */
    case GJ_MF_EXP:
        return gj_lower_complex(L, sel(L, pos, ic, copysign_(L, fconst(x, 0.0), c)),
                                sel(L, pos, is, copysign_(L, fconst(x, 0.0), s)));
    case GJ_MF_COSH: return gj_lower_complex(L, ic, sel(L, pos, is, fneg_(L, is)));
    case GJ_MF_SINH: return gj_lower_complex(L, sel(L, pos, ic, fneg_(L, ic)), is);
    default: /* tanh */
        return gj_lower_complex(L, sel(L, pos, fconst(x, 1.0), fconst(x, -1.0)),
                                copysign_(L, fconst(x, 0.0), fmul_(L, s, c)));
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
    LLVMValueRef limit =
        LLVMBuildAnd(L->b, float_pred(L, GJ_MF_ISINF, x), float_pred(L, GJ_MF_ISFINITE, y), "");
    limit = LLVMBuildAnd(L->b, limit, fcmp(L, LLVMRealONE, y, fconst(y, 0.0)), "");
    return sel(L, limit, inf_limit(L, fn, x, y), r);
}

/* sin, cos, tan as CPython computes them: -j sinh(jz), cosh(jz), -j tanh(jz). */
static LLVMValueRef z_rotated(GjLower *L, GjMathFn fn, LLVMValueRef z) {
    LLVMValueRef w = gj_lower_complex(L, fneg_(L, gj_lower_im(L, z)), gj_lower_re(L, z));
    GjMathFn h = fn == GJ_MF_SIN ? GJ_MF_SINH : fn == GJ_MF_COS ? GJ_MF_COSH : GJ_MF_TANH;
    LLVMValueRef r = annex_g_exp(L, h, w, h == GJ_MF_TANH ? z_tanh(L, w) : z_trig(L, h, w));
    if (fn == GJ_MF_COS)
        return r;
    return gj_lower_complex(L, gj_lower_im(L, r), fneg_(L, gj_lower_re(L, r)));
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
    LLVMValueRef one = fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, fadd_(L, one, y), fneg_(L, x));
    LLVMValueRef s2 = zc(L, fsub_(L, one, y), x);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(L, ld1(L, "asinh", fsub_(L, fmul_(L, a, d), fmul_(L, c, b))),
                            ld2(L, "atan2", y, fsub_(L, fmul_(L, a, c), fmul_(L, b, d))));
}

/* acos(x + yj) = 2 atan2(Re s1, Re s2) + j asinh(Im(conj(s2) s1)) with
   s1 = sqrt(1 - x - yj), s2 = sqrt(1 + x + yj). */
static LLVMValueRef z_acos(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef one = fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, fsub_(L, one, x), fneg_(L, y));
    LLVMValueRef s2 = zc(L, fadd_(L, one, x), y);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(L, fmul_(L, fconst(x, 2.0), ld2(L, "atan2", a, c)),
                            ld1(L, "asinh", fsub_(L, fmul_(L, c, b), fmul_(L, d, a))));
}

/* acosh(x + yj) = asinh(Re(conj(s1) s2)) + 2j atan2(Im s1, Re s2) with
   s1 = sqrt(x - 1 + yj), s2 = sqrt(x + 1 + yj). */
static LLVMValueRef z_acosh(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef one = fconst(x, 1.0);
    LLVMValueRef s1 = zc(L, fsub_(L, x, one), y);
    LLVMValueRef s2 = zc(L, fadd_(L, x, one), y);
    LLVMValueRef a = gj_lower_re(L, s1), b = gj_lower_im(L, s1);
    LLVMValueRef c = gj_lower_re(L, s2), d = gj_lower_im(L, s2);
    return gj_lower_complex(L, ld1(L, "asinh", fadd_(L, fmul_(L, a, c), fmul_(L, b, d))),
                            fmul_(L, fconst(x, 2.0), ld2(L, "atan2", b, c)));
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
    LLVMValueRef one = fconst(x, 1.0), half = fconst(x, 0.5), quarter = fconst(x, 0.25);
    LLVMValueRef neg = fcmp(L, LLVMRealOLT, x, fconst(x, 0.0));
    LLVMValueRef a = sel(L, neg, fneg_(L, x), x), b = sel(L, neg, fneg_(L, y), y);
    LLVMValueRef ab = fabs_of(L, b);

    LLVMValueRef h = ld2(L, "hypot", fmul_(L, a, half), fmul_(L, b, half));
    LLVMValueRef big_re = fdiv_(L, fdiv_(L, fmul_(L, a, quarter), h), h);
    LLVMValueRef big_im = copysign_(L, fconst(x, M_PI / 2), b);
    LLVMValueRef big = LLVMBuildOr(L->b, fcmp(L, LLVMRealOGT, a, fconst(x, large)),
                                   fcmp(L, LLVMRealOGT, ab, fconst(x, large)), "");

    LLVMValueRef q =
        fdiv_(L, gj_lower_sqrt(L, ab), gj_lower_sqrt(L, ld2(L, "hypot", ab, fconst(x, 2.0))));
    LLVMValueRef b_zero = fcmp(L, LLVMRealOEQ, ab, fconst(x, 0.0));
    LLVMValueRef one_re = sel(L, b_zero, fconst(x, INFINITY), fneg_(L, ld1(L, "log", q)));
    LLVMValueRef one_im =
        sel(L, b_zero, b,
            copysign_(L, fmul_(L, ld2(L, "atan2", fconst(x, 2.0), fneg_(L, ab)), half), b));
    LLVMValueRef at_one = LLVMBuildAnd(L->b, fcmp(L, LLVMRealOEQ, a, one),
                                       fcmp(L, LLVMRealOLT, ab, fconst(x, tiny)), "");

    LLVMValueRef om = fsub_(L, one, a);
    LLVMValueRef den = fadd_(L, fmul_(L, om, om), fmul_(L, ab, ab));
    LLVMValueRef gen_re =
        fmul_(L, ld1(L, "log1p", fdiv_(L, fmul_(L, fconst(x, 4.0), a), den)), quarter);
    LLVMValueRef gen_im = fmul_(L,
                                ld2(L, "atan2", fmul_(L, fconst(x, 2.0), b),
                                    fsub_(L, fmul_(L, om, fadd_(L, one, a)), fmul_(L, ab, ab))),
                                half);
    LLVMValueRef re = sel(L, big, big_re, sel(L, at_one, one_re, gen_re));
    LLVMValueRef im = sel(L, big, big_im, sel(L, at_one, one_im, gen_im));
    return gj_lower_complex(L, sel(L, neg, fneg_(L, re), re), sel(L, neg, fneg_(L, im), im));
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
        LLVMValueRef w = gj_lower_complex(L, fneg_(L, y), x);
        LLVMValueRef r = fn == GJ_MF_ASIN ? annex_g(L, SVT_ASINH, w, z_asinh(L, fneg_(L, y), x))
                                          : annex_g(L, SVT_ATANH, w, z_atanh(L, fneg_(L, y), x));
        return gj_lower_complex(L, gj_lower_im(L, r), fneg_(L, gj_lower_re(L, r)));
    }
    }
}

static LLVMValueRef complex_fn(GjLower *L, GjMathFn fn, LLVMValueRef z) {
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
    case GJ_MF_ISNAN: return LLVMBuildOr(L->b, float_pred(L, fn, x), float_pred(L, fn, y), "");
    case GJ_MF_ISINF: return LLVMBuildOr(L->b, float_pred(L, fn, x), float_pred(L, fn, y), "");
    case GJ_MF_ISFINITE: return LLVMBuildAnd(L->b, float_pred(L, fn, x), float_pred(L, fn, y), "");
    default: break;
    }
    return fail(L, "this function of a complex number is not supported");
}

/* a ** b as NumPy's npy_cpow computes it (NumPy 2): b == 0 gives 1; a zero
   base gives 0 when b.real > 0, else nan; an integral real exponent with
   |n| < 100 is a product (n = 1, 2, 3: a, a*a, a*(a*a); else binary powering
   from 1, inverted for n < 0), so (1+1j)**2 is exactly 2j; everything else
   is exp(b log a).  Written with selects: for a constant exponent LLVM folds
   away the paths not taken. */
LLVMValueRef gj_lower_complex_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef ar = gj_lower_re(L, a), ai = gj_lower_im(L, a);
    LLVMValueRef br = gj_lower_re(L, b), bi = gj_lower_im(L, b);
    LLVMValueRef zero = fconst(ar, 0.0), one = fconst(ar, 1.0), nan = fconst(ar, NAN);
    LLVMValueRef lg = z_log(L, a, 0);
    LLVMValueRef lr = gj_lower_re(L, lg), li = gj_lower_im(L, lg);
    LLVMValueRef w =
        gj_lower_complex(L, LLVMBuildFSub(L->b, fmul_(L, br, lr), fmul_(L, bi, li), ""),
                         fadd_(L, fmul_(L, br, li), fmul_(L, bi, lr)));
    LLVMValueRef r = z_exp(L, w);

    /* the integral exponent's product */
    LLVMValueRef n = LLVMBuildFPToSI(L->b, br, L->i64, "");
    LLVMValueRef integral = LLVMBuildAnd(
        L->b,
        LLVMBuildAnd(L->b, fcmp(L, LLVMRealOEQ, bi, zero),
                     fcmp(L, LLVMRealOEQ, gj_lower_float_intrinsic(L, "llvm.trunc", br), br), ""),
        fcmp(L, LLVMRealOLT, fabs_of(L, br), fconst(br, 100.0)), "");
    LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, n, LLVMConstInt(L->i64, 0, 0), "");
    LLVMValueRef m = sel(L, neg, LLVMBuildNeg(L->b, n, ""), n);
    LLVMValueRef p = a, acc = gj_lower_complex(L, one, zero);
    for (unsigned bit = 0; bit < 7; bit++) { /* |n| < 100 < 2**7 */
        LLVMValueRef set = LLVMBuildTrunc(
            L->b, LLVMBuildLShr(L->b, m, LLVMConstInt(L->i64, bit, 0), ""), L->i1, "");
        acc = sel(L, set, gj_lower_complex_binop(L, GJ_BIN_MUL, acc, p), acc);
        p = gj_lower_complex_binop(L, GJ_BIN_MUL, p, p);
    }
    acc = sel(L, neg,
              gj_lower_complex_binop(L, GJ_BIN_TRUEDIV, gj_lower_complex(L, one, zero), acc), acc);
    LLVMValueRef sq = gj_lower_complex_binop(L, GJ_BIN_MUL, a, a);
    LLVMValueRef cube = gj_lower_complex_binop(L, GJ_BIN_MUL, a, sq);
    acc = sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 3, 0), ""), cube, acc);
    acc = sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 2, 0), ""), sq, acc);
    acc = sel(L, LLVMBuildICmp(L->b, LLVMIntEQ, n, LLVMConstInt(L->i64, 1, 0), ""), a, acc);
    r = sel(L, integral, acc, r);

    LLVMValueRef re = gj_lower_re(L, r), im = gj_lower_im(L, r);
    LLVMValueRef a_zero =
        LLVMBuildAnd(L->b, fcmp(L, LLVMRealOEQ, ar, zero), fcmp(L, LLVMRealOEQ, ai, zero), "");
    LLVMValueRef b_zero =
        LLVMBuildAnd(L->b, fcmp(L, LLVMRealOEQ, br, zero), fcmp(L, LLVMRealOEQ, bi, zero), "");
    LLVMValueRef zero_base = sel(L, fcmp(L, LLVMRealOGT, br, zero), zero, nan);
    re = sel(L, a_zero, zero_base, re);
    im = sel(L, a_zero, zero_base, im);
    return gj_lower_complex(L, sel(L, b_zero, one, re), sel(L, b_zero, zero, im));
}

/* ---- real functions ----------------------------------------------------------- */

/* radians(x) and degrees(x) as NumPy's npy_deg2rad and npy_rad2deg: x times
   pi/180 or 180/pi computed in x's precision (in float, 180.0f / (float)pi is
   not (float)(180.0 / pi)); float16 in float32, rounded once, as NumPy's
   float16 loops compute it. */
static LLVMValueRef angle(GjLower *L, LLVMValueRef x, int to_degrees) {
    LLVMTypeRef ty = LLVMTypeOf(x);
    if (LLVMGetTypeKind(ty) == LLVMDoubleTypeKind)
        return fmul_(L, x, fconst(x, to_degrees ? 180.0 / M_PI : M_PI / 180.0));
    float pi = (float)M_PI;
    double k = to_degrees ? (double)(180.0f / pi) : (double)(pi / 180.0f);
    int half = LLVMGetTypeKind(ty) == LLVMHalfTypeKind;
    LLVMValueRef xf = half ? LLVMBuildFPExt(L->b, x, LLVMFloatTypeInContext(L->ctx), "") : x;
    LLVMValueRef r = fmul_(L, xf, fconst(xf, k));
    return half ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

/* A real float function of the row's implementation on args of one float type. */
static LLVMValueRef float_fn(GjLower *L, GjMathFn fn, LLVMValueRef *x, int n) {
    const char *impl = gj_math_impl(fn);
    LLVMValueRef r;
    switch ((int)fn) { /* rows without an implementation function, and fastmath's */
    case GJ_MF_RADIANS:
    case GJ_MF_DEG2RAD: return angle(L, x[0], 0);
    case GJ_MF_DEGREES:
    case GJ_MF_RAD2DEG: return angle(L, x[0], 1);
    case GJ_MF_SQRT: return gj_lower_sqrt(L, x[0]);
    case GJ_MF_TANH:
        if ((r = gj_lower_approx(L, GJ_APPROX_TANH, x)))
            return r;
        break;
    default: break;
    }
    if (!impl || !impl[0])
        return fail(L, "no implementation of this math function");
    if (strncmp(impl, "llvm.", 5) == 0) {
        if (n == 1)
            return gj_lower_float_intrinsic(L, impl, x[0]);
        return gj_lower_call_intrinsic(L, impl, LLVMTypeOf(x[0]), x, (unsigned)n);
    }
    return gj_lower_libdevice(L, impl, x, (unsigned)n);
}

/* frexp(x) -> (m, e), x == m * 2**e with 0.5 <= |m| < 1; e is 0 for 0,
   inf and nan, as CPython and NumPy give. */
static LLVMValueRef frexp_call(GjLower *L, LLVMValueRef x, const GjType *xt, const GjType *rt) {
    const GjType *ft = rt->elems[0];
    if (!(x = gj_lower_cast(L, x, xt, ft)))
        return NULL;
    LLVMValueRef slot = gj_lower_entry_alloca(L, L->i32);
    LLVMValueRef m = ld2(L, "frexp", x, slot);
    LLVMValueRef e = LLVMBuildLoad2(L->b, L->i32, slot, "");
    e = sel(L, float_pred(L, GJ_MF_ISFINITE, x), e, LLVMConstInt(L->i32, 0, 0));
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    out = LLVMBuildInsertValue(L->b, out, m, 0, "");
    return LLVMBuildInsertValue(L->b, out, gj_lower_cast(L, e, &gj_ty_int32, rt->elems[1]), 1, "");
}

/* ldexp(x, i): i clamped to +-2**20 (beyond it every result is 0 or inf). */
static LLVMValueRef ldexp_call(GjLower *L, LLVMValueRef x, LLVMValueRef i, const GjType *it) {
    LLVMValueRef k = gj_lower_cast(L, i, it, &gj_ty_int64);
    if (!k)
        return NULL;
    LLVMValueRef lim = LLVMConstInt(L->i64, 1 << 20, 0),
                 nlim = LLVMConstInt(L->i64, (unsigned long long)-(1LL << 20), 1);
    k = sel(L, LLVMBuildICmp(L->b, LLVMIntSGT, k, lim, ""), lim, k);
    k = sel(L, LLVMBuildICmp(L->b, LLVMIntSLT, k, nlim, ""), nlim, k);
    return ld2(L, "ldexp", x, LLVMBuildTrunc(L->b, k, L->i32, ""));
}

/* np.fmod of integers: C's remainder (the dividend's sign); x % 0 is 0 and
   INT_MIN % -1 is 0, as NumPy gives. */
static LLVMValueRef int_fmod(GjLower *L, LLVMValueRef *args, const GjType **types,
                             const GjType *rt) {
    LLVMValueRef a = gj_lower_cast(L, args[0], types[0], rt);
    LLVMValueRef b = gj_lower_cast(L, args[1], types[1], rt);
    if (!a || !b)
        return NULL;
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstInt(ty, 0, 0), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef bad = LLVMBuildICmp(L->b, LLVMIntEQ, b, zero, "");
    int is_signed = gj_lower_class(rt) == GJ_NC_SINT;
    if (is_signed)
        bad =
            LLVMBuildOr(L->b, bad, LLVMBuildICmp(L->b, LLVMIntEQ, b, LLVMConstAllOnes(ty), ""), "");
    LLVMValueRef bs = sel(L, bad, one, b);
    LLVMValueRef r = is_signed ? LLVMBuildSRem(L->b, a, bs, "") : LLVMBuildURem(L->b, a, bs, "");
    return sel(L, bad, zero, r);
}

static LLVMValueRef math_fn_call(GjLower *L, int id, LLVMValueRef *args, const GjType **types,
                                 int n, const GjType *rt) {
    GjMathNs ns;
    GjMathFn fn = (GjMathFn)gj_intrinsic_math_fn((GjIntrinsic)id, &ns);
    GjMathKind kind = gj_math_kind(fn);
    LLVMValueRef x[2];
    int any_complex = is_complex_type(rt);
    for (int k = 0; k < n; k++)
        any_complex |= is_complex_type(types[k]);
    if (any_complex) {
        const GjType *ct = is_complex_type(rt) ? gj_ty_concrete(rt) : gj_ty_concrete(types[0]);
        LLVMValueRef z = gj_lower_cast(L, args[0], types[0], ct);
        return z ? complex_fn(L, fn, z) : NULL;
    }
    switch (kind) {
    case GJ_MK_FLOAT:
        if (fn == GJ_MF_FMOD &&
            (gj_lower_class(rt) == GJ_NC_SINT || gj_lower_class(rt) == GJ_NC_UINT))
            return int_fmod(L, args, types, rt);
        for (int k = 0; k < n; k++)
            if (!(x[k] = gj_lower_cast(L, args[k], types[k], rt)))
                return NULL;
        return float_fn(L, fn, x, n);
    case GJ_MK_ROUND: {
        const GjType *at = gj_ty_concrete(types[0]);
        if (gj_lower_class(at) != GJ_NC_FLOAT)
            return gj_lower_cast(L, args[0], types[0], rt);
        LLVMValueRef r = gj_lower_float_intrinsic(L, gj_math_impl(fn), args[0]);
        return r ? gj_lower_cast(L, r, at, rt) : NULL;
    }
    case GJ_MK_PRED:
        if (gj_lower_class(types[0]) != GJ_NC_FLOAT) /* integers are finite numbers */
            return LLVMConstInt(L->i1, fn == GJ_MF_ISFINITE, 0);
        return float_pred(L, fn, args[0]);
    case GJ_MK_POW:
        if (ns != GJ_NS_MATH)
            return gj_lower_binop(L, GJ_BIN_POW, args[0], types[0], args[1], types[1], rt);
        for (int k = 0; k < 2; k++)
            if (!(x[k] = gj_lower_cast(L, args[k], types[k], rt)))
                return NULL;
        return gj_lower_float_pow(L, x[0], x[1]);
    case GJ_MK_FREXP: return frexp_call(L, args[0], types[0], rt);
    case GJ_MK_LDEXP:
        if (!(x[0] = gj_lower_cast(L, args[0], types[0], rt)))
            return NULL;
        return ldexp_call(L, x[0], args[1], types[1]);
    }
    return fail(L, "unknown math function");
}

/* ---- builtins ------------------------------------------------------------------ */

/* 10**k as a float like x, for 0 <= k: exact (integer powers) up to 10**18. */
static LLVMValueRef pow10(GjLower *L, LLVMValueRef k, LLVMValueRef like) {
    LLVMValueRef capped =
        sel(L, LLVMBuildICmp(L->b, LLVMIntSGT, k, LLVMConstInt(L->i64, 18, 0), ""),
            LLVMConstInt(L->i64, 18, 0), k);
    LLVMValueRef p = gj_lower_binop(L, GJ_BIN_POW, LLVMConstInt(L->i64, 10, 0), &gj_ty_int64,
                                    capped, &gj_ty_int64, &gj_ty_int64);
    LLVMValueRef d = LLVMBuildSIToFP(L->b, p, LLVMDoubleTypeInContext(L->ctx), "");
    LLVMValueRef rest = LLVMBuildSIToFP(L->b, LLVMBuildSub(L->b, k, capped, ""),
                                        LLVMDoubleTypeInContext(L->ctx), "");
    d = fmul_(L, d, ld2(L, "pow", fconst(d, 10.0), rest));
    return LLVMTypeOf(like) != LLVMTypeOf(d) ? LLVMBuildFPTrunc(L->b, d, LLVMTypeOf(like), "") : d;
}

/* round(x, nd) as NumPy: y = x * 10**nd, rint, / 10**nd (nd < 0: divide
   first); an integer x with nd < 0 as NumPy's PyArray_Round too, in float64
   (x / 10**-nd, rint, times 10**-nd, converted back), so that values beyond
   2**53, and uint64 beyond 2**63, round as NumPy's do; nd >= 0 keeps it. */
static LLVMValueRef round_digits(GjLower *L, LLVMValueRef x, const GjType *xt, LLVMValueRef nd,
                                 const GjType *ndt, const GjType *rt) {
    LLVMValueRef d = gj_lower_cast(L, nd, ndt, &gj_ty_int64);
    if (!d || !(x = gj_lower_cast(L, x, xt, rt)))
        return NULL;
    LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntSLT, d, LLVMConstInt(L->i64, 0, 0), "");
    LLVMValueRef absd = sel(L, neg, LLVMBuildNeg(L->b, d, ""), d);
    if (gj_lower_class(rt) == GJ_NC_FLOAT) { /* in x's type, each step rounded (float16 too) */
        LLVMValueRef f = pow10(L, absd, x);
        LLVMValueRef y = sel(L, neg, fdiv_(L, x, f), fmul_(L, x, f));
        y = gj_lower_float_intrinsic(L, "llvm.rint", y);
        return sel(L, neg, fmul_(L, y, f), fdiv_(L, y, f));
    }
    LLVMValueRef xd = gj_lower_cast(L, x, rt, &gj_ty_float64);
    LLVMValueRef f = pow10(L, absd, xd);
    LLVMValueRef y = fmul_(L, gj_lower_float_intrinsic(L, "llvm.rint", fdiv_(L, xd, f)), f);
    LLVMValueRef res = gj_lower_cast(L, y, &gj_ty_float64, rt);
    return res ? sel(L, neg, res, x) : NULL;
}

/* round(x): half to even, as int64. */
static LLVMValueRef round_call(GjLower *L, LLVMValueRef *args, const GjType **types, int n,
                               const GjType *rt) {
    if (n == 2)
        return round_digits(L, args[0], types[0], args[1], types[1], rt);
    if (gj_lower_class(types[0]) != GJ_NC_FLOAT)
        return gj_lower_cast(L, args[0], types[0], rt);
    LLVMValueRef r = gj_lower_float_intrinsic(L, "llvm.rint", args[0]);
    return r ? gj_lower_cast(L, r, gj_ty_concrete(types[0]), rt) : NULL;
}

/* A tuple value of type rt from two values. */
static LLVMValueRef pair(GjLower *L, const GjType *rt, LLVMValueRef a, LLVMValueRef b) {
    if (!a || !b)
        return NULL;
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    out = LLVMBuildInsertValue(L->b, out, a, 0, "");
    return LLVMBuildInsertValue(L->b, out, b, 1, "");
}

/* complex(a, b) == a + b * 1j for any numbers a and b. */
static LLVMValueRef complex_ctor(GjLower *L, LLVMValueRef *args, const GjType **types, int n,
                                 const GjType *rt) {
    LLVMValueRef a = gj_lower_cast(L, args[0], types[0], rt);
    if (!a || n == 1)
        return a;
    LLVMValueRef b = gj_lower_cast(L, args[1], types[1], rt);
    if (!b)
        return NULL;
    return gj_lower_complex(L, LLVMBuildFSub(L->b, gj_lower_re(L, a), gj_lower_im(L, b), ""),
                            LLVMBuildFAdd(L->b, gj_lower_im(L, a), gj_lower_re(L, b), ""));
}

/* x.conjugate(), np.conj(x): a real number is its own conjugate. */
static LLVMValueRef conjugate(GjLower *L, LLVMValueRef x, const GjType *xt, const GjType *rt) {
    if (!(x = gj_lower_cast(L, x, xt, rt)) || !is_complex_type(rt))
        return x;
    return gj_lower_complex(L, gj_lower_re(L, x), LLVMBuildFNeg(L->b, gj_lower_im(L, x), ""));
}

/* np.real(x) / np.imag(x) */
static LLVMValueRef part(GjLower *L, int imag, LLVMValueRef x, const GjType *xt, const GjType *rt) {
    if (!is_complex_type(xt))
        return imag ? LLVMConstNull(gj_lower_type(L, rt)) : gj_lower_cast(L, x, xt, rt);
    LLVMValueRef p = imag ? gj_lower_im(L, x) : gj_lower_re(L, x);
    return gj_lower_cast(L, p, part_of(xt), rt);
}

/* cmath.phase / polar of a complex or real number, in rt's float type. */
static LLVMValueRef polar_part(GjLower *L, int want_abs, LLVMValueRef x, const GjType *xt,
                               const GjType *ft) {
    const GjType *ct = gj_ty_concrete(ft)->bits == 32 ? &gj_ty_complex64 : &gj_ty_complex128;
    LLVMValueRef z = gj_lower_cast(L, x, xt, ct);
    if (!z)
        return NULL;
    LLVMValueRef re = gj_lower_re(L, z), im = gj_lower_im(L, z);
    return want_abs ? ld2(L, "hypot", re, im) : ld2(L, "atan2", im, re);
}

/* ---- one lowering function per row (intrinsics.h, GJ_INTR_BUILTIN_ROWS) ---- */

LLVMValueRef gj_lower_math_fn(GjLower *L, const GjIntrCall *c) {
    return math_fn_call(L, c->id, c->v, c->t, c->n, c->rt);
}

LLVMValueRef gj_lower_round(GjLower *L, const GjIntrCall *c) {
    return round_call(L, c->v, c->t, c->n, c->rt);
}

LLVMValueRef gj_lower_pow(GjLower *L, const GjIntrCall *c) {
    return gj_lower_binop(L, GJ_BIN_POW, c->v[0], c->t[0], c->v[1], c->t[1], c->rt);
}

LLVMValueRef gj_lower_divmod(GjLower *L, const GjIntrCall *c) {
    const GjType *et = c->rt->elems[0];
    return pair(L, c->rt,
                gj_lower_binop(L, GJ_BIN_FLOORDIV, c->v[0], c->t[0], c->v[1], c->t[1], et),
                gj_lower_binop(L, GJ_BIN_MOD, c->v[0], c->t[0], c->v[1], c->t[1], et));
}

LLVMValueRef gj_lower_complex_ctor(GjLower *L, const GjIntrCall *c) {
    return complex_ctor(L, c->v, c->t, c->n, c->rt);
}

/* numpy.real / numpy.imag */
LLVMValueRef gj_lower_part(GjLower *L, const GjIntrCall *c) {
    return part(L, c->id == GJ_INTR_NP_IMAG, c->v[0], c->t[0], c->rt);
}

/* numpy.conj, numpy.conjugate, x.conjugate() (the receiver is v[0]) */
LLVMValueRef gj_lower_conjugate(GjLower *L, const GjIntrCall *c) {
    return conjugate(L, c->v[0], c->t[0], c->rt);
}

LLVMValueRef gj_lower_phase(GjLower *L, const GjIntrCall *c) {
    return polar_part(L, 0, c->v[0], c->t[0], c->rt);
}

LLVMValueRef gj_lower_polar(GjLower *L, const GjIntrCall *c) {
    const GjType *ft = c->rt->elems[0];
    return pair(L, c->rt, polar_part(L, 1, c->v[0], c->t[0], ft),
                polar_part(L, 0, c->v[0], c->t[0], ft));
}

LLVMValueRef gj_lower_rect(GjLower *L, const GjIntrCall *c) {
    const GjType *ft = part_of(c->rt);
    LLVMValueRef r = gj_lower_cast(L, c->v[0], c->t[0], ft);
    LLVMValueRef phi = gj_lower_cast(L, c->v[1], c->t[1], ft);
    if (!r || !phi)
        return NULL;
    return gj_lower_complex(L, fmul_(L, r, ld1(L, "cos", phi)), fmul_(L, r, ld1(L, "sin", phi)));
}

/* The number of values range(start, stop, step) yields, as an unsigned
   integer of their type (Python's len(range(...)): 0 for a zero step, whose
   ValueError a kernel cannot raise).  Computed from the distance between
   start and stop, which as an unsigned number is exact, so no bound near the
   type's limits overflows: range(250, 255, 4) of uint8 is 2 values. */
static LLVMValueRef range_count(GjLower *L, const GjType *et, LLVMValueRef start, LLVMValueRef stop,
                                LLVMValueRef step) {
    LLVMTypeRef ty = LLVMTypeOf(start);
    LLVMValueRef zero = LLVMConstNull(ty), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef any, dist, mag;
    if (gj_lower_class(et) == GJ_NC_SINT) {
        LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, zero, "up");
        LLVMValueRef down = LLVMBuildICmp(L->b, LLVMIntSLT, step, zero, "");
        any = LLVMBuildSelect(
            L->b, up, LLVMBuildICmp(L->b, LLVMIntSLT, start, stop, ""),
            LLVMBuildAnd(L->b, down, LLVMBuildICmp(L->b, LLVMIntSGT, start, stop, ""), ""), "");
        dist = LLVMBuildSelect(L->b, up, LLVMBuildSub(L->b, stop, start, ""),
                               LLVMBuildSub(L->b, start, stop, ""), "");
        mag = LLVMBuildSelect(L->b, up, step, LLVMBuildSub(L->b, zero, step, ""), "");
    } else { /* an unsigned step is never negative */
        any = LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntULT, start, stop, ""),
                           LLVMBuildICmp(L->b, LLVMIntNE, step, zero, ""), "");
        dist = LLVMBuildSub(L->b, stop, start, "");
        mag = step;
    }
    mag = LLVMBuildSelect(L->b, any, mag, one, ""); /* never a division by zero */
    LLVMValueRef n = LLVMBuildAdd(
        L->b, LLVMBuildUDiv(L->b, LLVMBuildSub(L->b, dist, one, ""), mag, ""), one, "");
    return LLVMBuildSelect(L->b, any, n, zero, "count");
}

/* range(stop) / range(start, stop[, step]): the iterator {start, the count
   of values left, step, stop} (lower_iter.c). */
LLVMValueRef gj_lower_range(GjLower *L, const GjIntrCall *c) {
    const GjType *et = c->rt->elems[0];
    LLVMTypeRef ety = gj_lower_type(L, et);
    LLVMValueRef start = LLVMConstInt(ety, 0, 0), step = LLVMConstInt(ety, 1, 0), stop;
    int first = c->n >= 2;
    if (first && !(start = gj_lower_cast(L, c->v[0], c->t[0], et)))
        return NULL;
    if (!(stop = gj_lower_cast(L, c->v[first], c->t[first], et)))
        return NULL;
    if (c->n == 3 && !(step = gj_lower_cast(L, c->v[2], c->t[2], et)))
        return NULL;
    LLVMValueRef it = LLVMGetUndef(gj_lower_type(L, c->rt));
    it = LLVMBuildInsertValue(L->b, it, start, 0, "");
    it = LLVMBuildInsertValue(L->b, it, range_count(L, et, start, stop, step), 1, "");
    it = LLVMBuildInsertValue(L->b, it, step, 2, "");
    return LLVMBuildInsertValue(L->b, it, stop, 3, "");
}

/* abs, numpy.abs, numpy.absolute: |z| of a complex is computed in z's type. */
LLVMValueRef gj_lower_abs_call(GjLower *L, const GjIntrCall *c) {
    LLVMValueRef x = c->v[0];
    const GjType *xt = c->t[0];
    if (gj_lower_class(xt) == GJ_NC_COMPLEX)
        return gj_lower_cast(L, gj_lower_abs(L, x, gj_ty_concrete(xt)),
                             gj_ty_concrete(xt)->bits == 64 ? &gj_ty_float32 : &gj_ty_float64,
                             c->rt);
    return (x = gj_lower_cast(L, x, xt, c->rt)) ? gj_lower_abs(L, x, c->rt) : NULL;
}

/* min(a, b, ...), and min(t) of one tuple: the same over its items. */
LLVMValueRef gj_lower_minmax_call(GjLower *L, const GjIntrCall *c) {
    int is_max = c->id == GJ_INTR_MAX, tuple = c->n == 1 && c->t[0]->kind == GJ_TK_TUPLE;
    int n = tuple ? c->t[0]->n : c->n;
    LLVMValueRef acc = NULL;
    for (int k = 0; k < n; k++) {
        LLVMValueRef x = tuple ? LLVMBuildExtractValue(L->b, c->v[0], (unsigned)k, "") : c->v[k];
        if (!(x = gj_lower_cast(L, x, tuple ? c->t[0]->elems[k] : c->t[k], c->rt)))
            return NULL;
        acc = k == 0 ? x : gj_lower_minmax(L, is_max, acc, x, c->rt);
    }
    return acc;
}

LLVMValueRef gj_lower_len(GjLower *L, const GjIntrCall *c) {
    const GjType *xt = c->t[0];
    if (xt->kind == GJ_TK_TUPLE)
        return LLVMConstInt(gj_lower_type(L, c->rt), (unsigned long long)xt->n, 0);
    if (xt->kind == GJ_TK_ARRAY)
        return gj_lower_cast(L, gj_lower_array_dim(L, c->v[0], 1, 0), &gj_ty_int64, c->rt);
    return fail(L, "len() of %s is not supported", xt->name);
}

/* int(), float(), bool(), numpy.float32(x) ...: a cast (int() truncates: fptosi;
   NumPy's constructors convert as astype does). */
LLVMValueRef gj_lower_convert(GjLower *L, const GjIntrCall *c) {
    return gj_lower_cast(L, c->v[0], c->t[0], c->rt);
}
