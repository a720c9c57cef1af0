/*
 * lower_math.c - the math family of intrinsics (lower_math.h): calls of
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
 * A complex argument goes to lower_cmath.c's version of the row; the
 * operators that builtins stand for (pow, divmod, abs) are lower_ops.c's.
 */
#include "lower_math.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lower_cmath.h"
#include "lower_ops.h"

static int is_complex_type(const GjType *t) { return gj_lower_class(t) == GJ_NC_COMPLEX; }

/* ---- real functions ----------------------------------------------------------- */

/* radians(x) and degrees(x) as NumPy's npy_deg2rad and npy_rad2deg: x times
   pi/180 or 180/pi computed in x's precision (in float, 180.0f / (float)pi is
   not (float)(180.0 / pi)); float16 in float32, rounded once, as NumPy's
   float16 loops compute it. */
static LLVMValueRef angle(GjLower *L, LLVMValueRef x, int to_degrees) {
    LLVMTypeRef ty = LLVMTypeOf(x);
    if (LLVMGetTypeKind(ty) == LLVMDoubleTypeKind)
        return gj_lower_fmul(L, x, gj_lower_fconst(x, to_degrees ? 180.0 / M_PI : M_PI / 180.0));
    float pi = (float)M_PI;
    double k = to_degrees ? (double)(180.0f / pi) : (double)(pi / 180.0f);
    int half = LLVMGetTypeKind(ty) == LLVMHalfTypeKind;
    LLVMValueRef xf = half ? LLVMBuildFPExt(L->b, x, LLVMFloatTypeInContext(L->ctx), "") : x;
    LLVMValueRef r = gj_lower_fmul(L, xf, gj_lower_fconst(xf, k));
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
        return gj_lower_fail(L, "no implementation of this math function");
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
    LLVMValueRef m = gj_lower_math2(L, "frexp", x, slot);
    LLVMValueRef e = LLVMBuildLoad2(L->b, L->i32, slot, "");
    e = gj_lower_sel(L, gj_lower_float_pred(L, GJ_MF_ISFINITE, x), e, LLVMConstInt(L->i32, 0, 0));
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
    k = gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntSGT, k, lim, ""), lim, k);
    k = gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntSLT, k, nlim, ""), nlim, k);
    return gj_lower_math2(L, "ldexp", x, LLVMBuildTrunc(L->b, k, L->i32, ""));
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
    LLVMValueRef bs = gj_lower_sel(L, bad, one, b);
    LLVMValueRef r = is_signed ? LLVMBuildSRem(L->b, a, bs, "") : LLVMBuildURem(L->b, a, bs, "");
    return gj_lower_sel(L, bad, zero, r);
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
        return z ? gj_lower_complex_fn(L, fn, z) : NULL;
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
        return gj_lower_float_pred(L, fn, args[0]);
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
    return gj_lower_fail(L, "unknown math function");
}

/* ---- builtins ------------------------------------------------------------------ */

/* 10**k as a float like x, for 0 <= k: exact (integer powers) up to 10**18. */
static LLVMValueRef pow10(GjLower *L, LLVMValueRef k, LLVMValueRef like) {
    LLVMValueRef capped =
        gj_lower_sel(L, LLVMBuildICmp(L->b, LLVMIntSGT, k, LLVMConstInt(L->i64, 18, 0), ""),
                     LLVMConstInt(L->i64, 18, 0), k);
    LLVMValueRef p = gj_lower_binop(L, GJ_BIN_POW, LLVMConstInt(L->i64, 10, 0), &gj_ty_int64,
                                    capped, &gj_ty_int64, &gj_ty_int64);
    LLVMValueRef d = LLVMBuildSIToFP(L->b, p, LLVMDoubleTypeInContext(L->ctx), "");
    LLVMValueRef rest = LLVMBuildSIToFP(L->b, LLVMBuildSub(L->b, k, capped, ""),
                                        LLVMDoubleTypeInContext(L->ctx), "");
    d = gj_lower_fmul(L, d, gj_lower_math2(L, "pow", gj_lower_fconst(d, 10.0), rest));
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
    LLVMValueRef absd = gj_lower_sel(L, neg, LLVMBuildNeg(L->b, d, ""), d);
    if (gj_lower_class(rt) == GJ_NC_FLOAT) { /* in x's type, each step rounded (float16 too) */
        LLVMValueRef f = pow10(L, absd, x);
        LLVMValueRef y = gj_lower_sel(L, neg, gj_lower_fdiv(L, x, f), gj_lower_fmul(L, x, f));
        y = gj_lower_float_intrinsic(L, "llvm.rint", y);
        return gj_lower_sel(L, neg, gj_lower_fmul(L, y, f), gj_lower_fdiv(L, y, f));
    }
    LLVMValueRef xd = gj_lower_cast(L, x, rt, &gj_ty_float64);
    LLVMValueRef f = pow10(L, absd, xd);
    LLVMValueRef y =
        gj_lower_fmul(L, gj_lower_float_intrinsic(L, "llvm.rint", gj_lower_fdiv(L, xd, f)), f);
    LLVMValueRef res = gj_lower_cast(L, y, &gj_ty_float64, rt);
    return res ? gj_lower_sel(L, neg, res, x) : NULL;
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
    return gj_lower_cast(L, p, gj_lower_part_type(xt), rt);
}

/* cmath.phase / polar of a complex or real number, in rt's float type. */
static LLVMValueRef polar_part(GjLower *L, int want_abs, LLVMValueRef x, const GjType *xt,
                               const GjType *ft) {
    const GjType *ct = gj_ty_concrete(ft)->bits == 32 ? &gj_ty_complex64 : &gj_ty_complex128;
    LLVMValueRef z = gj_lower_cast(L, x, xt, ct);
    if (!z)
        return NULL;
    LLVMValueRef re = gj_lower_re(L, z), im = gj_lower_im(L, z);
    return want_abs ? gj_lower_math2(L, "hypot", re, im) : gj_lower_math2(L, "atan2", im, re);
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
    const GjType *ft = gj_lower_part_type(c->rt);
    LLVMValueRef r = gj_lower_cast(L, c->v[0], c->t[0], ft);
    LLVMValueRef phi = gj_lower_cast(L, c->v[1], c->t[1], ft);
    if (!r || !phi)
        return NULL;
    return gj_lower_complex(L, gj_lower_fmul(L, r, gj_lower_math1(L, "cos", phi)),
                            gj_lower_fmul(L, r, gj_lower_math1(L, "sin", phi)));
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
    return gj_lower_fail(L, "len() of %s is not supported", xt->name);
}

/* int(), float(), bool(), numpy.float32(x) ...: a cast (int() truncates: fptosi;
   NumPy's constructors convert as astype does). */
LLVMValueRef gj_lower_convert(GjLower *L, const GjIntrCall *c) {
    return gj_lower_cast(L, c->v[0], c->t[0], c->rt);
}
