/*
 * lower_ops.c - Python's operators on LLVM values (lower_ops.h): the IR's
 * BINOP, UNOP and COMPARE, tuple items, and abs/min/max for the builtins.
 *
 * Everything here is chosen by (operation, numeric class), never by dtype:
 * one switch per operator over GjNumClass (casts are lower_base.c's table,
 * complex arithmetic lower_cmath.c's).  The semantics
 * are NumPy 2's: integers wrap; x // 0 and x % 0 are 0 for integers; // and
 * % floor with the sign of the divisor (floats follow npy_divmod exactly,
 * with libdevice's exact fmod); / on integers is float64 division; ** on
 * integers is exponentiation by squaring (a helper function in the module),
 * on floats libdevice's pow (exact where y is an integer and the power a
 * float: gj_lower_float_pow), and x ** k for a constant k in 0..4 becomes
 * multiplies.  Comparisons are ordered for floats except != (unordered, so
 * nan != nan as in Python).
 *
 * Never emitted, because LLVM 19's NVPTX backend cannot select them:
 * llvm.pow/exp/log/sin/cos and frem (expanded inexactly); libdevice's
 * __nv_* functions stand in and nvptx.c links them.
 */
#include "lower_ops.h"

#include <stdio.h>
#include <string.h>

#include "lower_cmath.h"

/* ---- floor division and modulo ------------------------------------------------- */

/* Python's a // b and a % b on integers; x // 0 == x % 0 == 0 (NumPy), and
   INT_MIN // -1 wraps instead of being undefined in LLVM. */
static LLVMValueRef int_divmod(GjLower *L, int want_mod, int is_signed, LLVMValueRef a,
                               LLVMValueRef b) {
    LLVMValueRef zero = gj_lower_iconst(a, 0), one = gj_lower_iconst(a, 1),
                 minus1 = gj_lower_iconst(a, -1);
    LLVMValueRef b_zero = gj_lower_icmp(L, LLVMIntEQ, b, zero);
    if (!is_signed) {
        LLVMValueRef bs = gj_lower_sel(L, b_zero, one, b);
        LLVMValueRef r = want_mod ? LLVMBuildURem(L->b, a, bs, "") : LLVMBuildUDiv(L->b, a, bs, "");
        return gj_lower_sel(L, b_zero, zero, r);
    }
    LLVMValueRef b_m1 = gj_lower_icmp(L, LLVMIntEQ, b, minus1);
    LLVMValueRef bs = gj_lower_sel(L, LLVMBuildOr(L->b, b_zero, b_m1, ""), one, b);
    LLVMValueRef q = LLVMBuildSDiv(L->b, a, bs, ""), r = LLVMBuildSRem(L->b, a, bs, "");
    /* Truncating -> flooring: step down when the remainder's sign differs from b's. */
    LLVMValueRef adjust =
        LLVMBuildAnd(L->b, gj_lower_icmp(L, LLVMIntNE, r, zero),
                     gj_lower_icmp(L, LLVMIntSLT, LLVMBuildXor(L->b, r, bs, ""), zero), "");
    LLVMValueRef res;
    if (want_mod) {
        res = gj_lower_sel(L, adjust, LLVMBuildAdd(L->b, r, bs, ""), r);
    } else {
        res = LLVMBuildSub(L->b, q, LLVMBuildZExt(L->b, adjust, LLVMTypeOf(q), ""), "");
        res = gj_lower_sel(L, b_m1, LLVMBuildNeg(L->b, a, ""), res);
    }
    return gj_lower_sel(L, b_zero, zero, res);
}

/* Python's float // and %, as NumPy's npy_divmod: exact fmod, then fix the
   sign; b == 0 gives a / b (inf or nan) and nan. */
static LLVMValueRef float_divmod(GjLower *L, int want_mod, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef zero = gj_lower_fconst(a, 0.0), one = gj_lower_fconst(a, 1.0);
    LLVMValueRef fargs[2] = {a, b};
    LLVMValueRef mod = gj_lower_libdevice(L, "fmod", fargs, 2);
    LLVMValueRef mod_nz = gj_lower_fcmp(L, LLVMRealUNE, mod, zero);
    LLVMValueRef sign_differs = LLVMBuildXor(L->b, gj_lower_fcmp(L, LLVMRealOLT, b, zero),
                                             gj_lower_fcmp(L, LLVMRealOLT, mod, zero), "");
    LLVMValueRef fix = LLVMBuildAnd(L->b, mod_nz, sign_differs, "");
    if (want_mod) {
        LLVMValueRef signed_zero[2] = {zero, b};
        LLVMValueRef m =
            gj_lower_sel(L, fix, gj_lower_fast(L, LLVMBuildFAdd(L->b, mod, b, "")), mod);
        return gj_lower_sel(
            L, mod_nz, m,
            gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(a), signed_zero, 2));
    }
    LLVMValueRef div = gj_lower_fdiv(L, LLVMBuildFSub(L->b, a, mod, ""), b);
    div = gj_lower_sel(L, fix, LLVMBuildFSub(L->b, div, one, ""), div);
    LLVMValueRef fl = gj_lower_float_intrinsic(L, "llvm.floor", div);
    LLVMValueRef round_up =
        gj_lower_fcmp(L, LLVMRealOGT, LLVMBuildFSub(L->b, div, fl, ""), gj_lower_fconst(a, 0.5));
    fl = gj_lower_sel(L, round_up, LLVMBuildFAdd(L->b, fl, one, ""), fl);
    LLVMValueRef quotient = gj_lower_fdiv(L, a, b);
    LLVMValueRef signed_zero[2] = {zero, quotient};
    LLVMValueRef res =
        gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealUNE, div, zero), fl,
                     gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(a), signed_zero, 2));
    return gj_lower_sel(L, gj_lower_fcmp(L, LLVMRealOEQ, b, zero), quotient, res);
}

/* ---- power ------------------------------------------------------------------------ */

/* The small non-negative integer value of constant k, or -1. */
static int small_exponent(LLVMValueRef k) {
    if (LLVMIsAConstantInt(k)) {
        long long e = LLVMConstIntGetSExtValue(k);
        return e >= 0 && e <= 4 ? (int)e : -1;
    }
    if (LLVMIsAConstantFP(k)) {
        LLVMBool loses;
        double e = LLVMConstRealGetDouble(k, &loses);
        return e == 0 || e == 1 || e == 2 || e == 3 || e == 4 ? (int)e : -1;
    }
    return -1;
}

static LLVMValueRef mul(GjLower *L, LLVMValueRef a, LLVMValueRef b, int is_float) {
    return is_float ? gj_lower_arith(L, LLVMBuildFMul(L->b, a, b, ""))
                    : LLVMBuildMul(L->b, a, b, "");
}

/* x ** e for e in 0..4 as multiplies: x*x is exactly pow(x, 2). */
static LLVMValueRef pow_by_multiplies(GjLower *L, LLVMValueRef x, int e, int is_float) {
    switch (e) {
    case 0: return is_float ? gj_lower_fconst(x, 1.0) : gj_lower_iconst(x, 1);
    case 1: return x;
    case 2: return mul(L, x, x, is_float);
    case 3: return mul(L, mul(L, x, x, is_float), x, is_float);
    default: {
        LLVMValueRef sq = mul(L, x, x, is_float);
        return mul(L, sq, sq, is_float);
    }
    }
}

/* The module's helper gj.ipow.{s,u}N(a, e): exponentiation by squaring with
   wrapping multiplies.  A negative exponent gives trunc(1 / a**-e): 1 for
   a == 1, +-1 for a == -1, else 0 (NumPy refuses negative integer powers;
   a kernel cannot raise). */
static LLVMValueRef ipow_helper(GjLower *L, LLVMTypeRef ty, int is_signed) {
    char name[32];
    snprintf(name, sizeof name, "gj.ipow.%c%u", is_signed ? 's' : 'u', LLVMGetIntTypeWidth(ty));
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, name);
    if (fn)
        return fn;
    LLVMTypeRef params[2] = {ty, ty};
    fn = LLVMAddFunction(L->mod, name, LLVMFunctionType(ty, params, 2, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMBuilderRef saved = L->b;
    L->b = LLVMCreateBuilderInContext(L->ctx);

    LLVMValueRef a = LLVMGetParam(fn, 0), e = LLVMGetParam(fn, 1);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, fn, "entry");
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(L->ctx, fn, "loop");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->ctx, fn, "body");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->ctx, fn, "done");
    LLVMValueRef zero = gj_lower_iconst(a, 0), one = gj_lower_iconst(a, 1);

    LLVMPositionBuilderAtEnd(L->b, entry);
    if (is_signed) {
        LLVMBasicBlockRef negative = LLVMAppendBasicBlockInContext(L->ctx, fn, "negative");
        LLVMBuildCondBr(L->b, gj_lower_icmp(L, LLVMIntSLT, e, zero), negative, loop);
        LLVMPositionBuilderAtEnd(L->b, negative);
        LLVMValueRef odd = LLVMBuildTrunc(L->b, e, L->i1, "");
        LLVMValueRef minus1_pow = gj_lower_sel(L, odd, gj_lower_iconst(a, -1), one);
        LLVMValueRef r = gj_lower_sel(L, gj_lower_icmp(L, LLVMIntEQ, a, gj_lower_iconst(a, -1)),
                                      minus1_pow, zero);
        LLVMBuildRet(L->b, gj_lower_sel(L, gj_lower_icmp(L, LLVMIntEQ, a, one), one, r));
    } else {
        LLVMBuildBr(L->b, loop);
    }

    LLVMPositionBuilderAtEnd(L->b, loop);
    LLVMValueRef result = LLVMBuildPhi(L->b, ty, "result");
    LLVMValueRef base = LLVMBuildPhi(L->b, ty, "base");
    LLVMValueRef k = LLVMBuildPhi(L->b, ty, "k");
    LLVMBuildCondBr(L->b, gj_lower_icmp(L, LLVMIntEQ, k, zero), done, body);

    LLVMPositionBuilderAtEnd(L->b, body);
    LLVMValueRef odd = LLVMBuildTrunc(L->b, k, L->i1, "");
    LLVMValueRef result2 = gj_lower_sel(L, odd, LLVMBuildMul(L->b, result, base, ""), result);
    LLVMValueRef base2 = LLVMBuildMul(L->b, base, base, "");
    LLVMValueRef k2 = LLVMBuildLShr(L->b, k, one, "");
    LLVMBuildBr(L->b, loop);

    LLVMValueRef result_in[2] = {one, result2}, base_in[2] = {a, base2}, k_in[2] = {e, k2};
    LLVMBasicBlockRef from[2] = {entry, body};
    LLVMAddIncoming(result, result_in, from, 2);
    LLVMAddIncoming(base, base_in, from, 2);
    LLVMAddIncoming(k, k_in, from, 2);

    LLVMPositionBuilderAtEnd(L->b, done);
    LLVMBuildRet(L->b, result);

    LLVMDisposeBuilder(L->b);
    L->b = saved;
    return fn;
}

/* Float pow(x, y), exact whenever y is a nonzero integer and the exact
   power is a float (pow(3, 1), pow(8, 7), pow(1e20, 1), pow(0.5, 3),
   pow(2, -1074)), on every target.  libdevice's pow is allowed 2 ulp, so
   pow(3, 1) could be 2.9999999999999996 and int() of it 2.

   Write x = +-M 2**E with M an odd integer (from x's bits: the significand
   without its trailing zeros, M < 2**p, p = 53 for float64, 24 for
   float32).  Then x**y = +-M**y 2**(E y).  The library's r = pow(x, y) is
   kept unless y is an integer with 1 <= |y| <= 2**20 and r says M**|y| is
   small: s = |r| 2**(-E y) (an exact scaling while r is normal) lies in
   [1/2, 2**(p+1)] for y > 0, in [2**-(p+1), 2] for y < 0 (margins of far
   more than 2 ulp).  Then M**|y| is computed by squaring, six bits of |y|
   unrolled into selects (M >= 3 and M**|y| <= 2**54 bound |y| by 34; for
   M == 1 every product is 1, whatever |y|).  Why that is exact: every
   product is M**k for some k <= |y|, an integer no larger than M**|y|;
   when that is at most 2**p every one is representable, so every multiply
   is exact, and when it is at most 2**(p+1) only the last one can round
   (its operands are at most half of it), so it is correctly rounded.
   Squares past the last used bit may round, but are discarded.  The
   result is ldexp(M**|y|, E y) for y > 0 (one rounding, none when the
   power is a float) and ldexp(1 / M**|y|, E y) for y < 0 (exact when M ==
   1, the only case where the power is a float; else the division's
   rounding, and ldexp's where the result is subnormal); its sign is x's for
   odd y.  Where r's error lets a power just above 2**(p+1) in, the product
   rounds a few times: still within the library's 2 ulp.  float16 goes
   through float32, as libdevice does.  Under fastmath's afn, float32 takes
   the library's fast pow as it is (__nv_fast_powf), as numba-cuda does. */
LLVMValueRef gj_lower_float_pow(GjLower *L, LLVMValueRef x, LLVMValueRef y) {
    LLVMTypeRef ty = LLVMTypeOf(x);
    LLVMTypeKind kind = LLVMGetTypeKind(ty);
    if (kind == LLVMHalfTypeKind) {
        LLVMTypeRef f32 = LLVMFloatTypeInContext(L->ctx);
        LLVMValueRef r = gj_lower_float_pow(L, LLVMBuildFPExt(L->b, x, f32, ""),
                                            LLVMBuildFPExt(L->b, y, f32, ""));
        return r ? LLVMBuildFPTrunc(L->b, r, ty, "") : NULL;
    }
    LLVMValueRef args[2] = {x, y};
    LLVMValueRef r = gj_lower_libdevice(L, "pow", args, 2);
    if (!r || (kind == LLVMFloatTypeKind && (L->opt->fastmath & GJ_FM_AFN)))
        return r;
    int dbl = kind == LLVMDoubleTypeKind;
    unsigned p = dbl ? 53 : 24, w = dbl ? 64 : 32;
    int bias = dbl ? 1023 : 127;
    LLVMTypeRef ity = LLVMIntTypeInContext(L->ctx, w);

    /* x = +-M 2**E */
    LLVMValueRef bits = LLVMBuildBitCast(L->b, x, ity, "");
    LLVMValueRef frac = LLVMBuildAnd(L->b, bits, LLVMConstInt(ity, (1ull << (p - 1)) - 1, 0), "");
    LLVMValueRef ef = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, bits, LLVMConstInt(ity, p - 1, 0), ""),
                                   LLVMConstInt(ity, dbl ? 0x7ff : 0xff, 0), "");
    LLVMValueRef normal = gj_lower_icmp(L, LLVMIntNE, ef, LLVMConstInt(ity, 0, 0));
    LLVMValueRef m = gj_lower_sel(
        L, normal, LLVMBuildOr(L->b, frac, LLVMConstInt(ity, 1ull << (p - 1), 0), ""), frac);
    LLVMValueRef e =
        LLVMBuildSub(L->b, gj_lower_sel(L, normal, ef, LLVMConstInt(ity, 1, 0)),
                     LLVMConstInt(ity, (unsigned long long)(bias + (int)p - 1), 0), "");
    LLVMValueRef tz_args[2] = {m, LLVMConstInt(L->i1, 0, 0)}; /* m == 0 (x == 0) is gated off */
    LLVMValueRef tz = gj_lower_call_intrinsic(L, "llvm.cttz", ity, tz_args, 2);
    LLVMValueRef big_m = LLVMBuildSIToFP(L->b, LLVMBuildLShr(L->b, m, tz, ""), ty, "");
    e = LLVMBuildTrunc(L->b, LLVMBuildAdd(L->b, e, tz, ""), L->i32, "");

    /* the gate */
    LLVMValueRef ay = gj_lower_float_intrinsic(L, "llvm.fabs", y);
    LLVMValueRef ok = LLVMBuildAnd(
        L->b, gj_lower_fcmp(L, LLVMRealOEQ, gj_lower_float_intrinsic(L, "llvm.trunc", y), y),
        gj_lower_fcmp(L, LLVMRealOGE, ay, gj_lower_fconst(y, 1.0)), "");
    ok = LLVMBuildAnd(L->b, ok, gj_lower_fcmp(L, LLVMRealOLE, ay, gj_lower_fconst(y, 1048576.0)),
                      "");
    LLVMValueRef finite = gj_lower_icmp(L, LLVMIntNE, ef, LLVMConstInt(ity, dbl ? 0x7ff : 0xff, 0));
    ok = LLVMBuildAnd(L->b, ok, finite, "");
    ok = LLVMBuildAnd(L->b, ok, gj_lower_fcmp(L, LLVMRealONE, x, gj_lower_fconst(x, 0.0)), "");
    /* |y| clamped first, so the conversion never sees a value out of range */
    LLVMValueRef k =
        LLVMBuildFPToSI(L->b, gj_lower_sel(L, ok, ay, gj_lower_fconst(y, 1.0)), L->i32, "");
    LLVMValueRef y_pos = gj_lower_fcmp(L, LLVMRealOGT, y, gj_lower_fconst(y, 0.0));
    LLVMValueRef ey =
        LLVMBuildMul(L->b, e, gj_lower_sel(L, y_pos, k, LLVMBuildNeg(L->b, k, "")), "");
    LLVMValueRef scale_args[2] = {gj_lower_float_intrinsic(L, "llvm.fabs", r),
                                  LLVMBuildNeg(L->b, ey, "")};
    LLVMValueRef sc = gj_lower_libdevice(L, "ldexp", scale_args, 2);
    double limit = (double)(1ull << (p + 1));
    LLVMValueRef lo =
        gj_lower_sel(L, y_pos, gj_lower_fconst(x, 0.5), gj_lower_fconst(x, 1.0 / limit));
    LLVMValueRef hi = gj_lower_sel(L, y_pos, gj_lower_fconst(x, limit), gj_lower_fconst(x, 2.0));
    ok = LLVMBuildAnd(L->b, ok, gj_lower_fcmp(L, LLVMRealOGE, sc, lo), "");
    ok = LLVMBuildAnd(L->b, ok, gj_lower_fcmp(L, LLVMRealOLE, sc, hi), "");

    /* M**|y| by squaring */
    LLVMValueRef acc = gj_lower_fconst(x, 1.0), sq = big_m;
    for (unsigned bit = 0; bit < 6; bit++) {
        LLVMValueRef set = LLVMBuildTrunc(
            L->b, LLVMBuildLShr(L->b, k, LLVMConstInt(L->i32, bit, 0), ""), L->i1, "");
        acc = gj_lower_sel(L, set, LLVMBuildFMul(L->b, acc, sq, ""), acc);
        if (bit < 5)
            sq = LLVMBuildFMul(L->b, sq, sq, "");
    }
    acc = gj_lower_sel(L, y_pos, acc, LLVMBuildFDiv(L->b, gj_lower_fconst(x, 1.0), acc, ""));
    LLVMValueRef out_args[2] = {acc, ey};
    LLVMValueRef exact = gj_lower_libdevice(L, "ldexp", out_args, 2);
    LLVMValueRef odd = LLVMBuildTrunc(L->b, k, L->i1, "");
    LLVMValueRef neg =
        LLVMBuildAnd(L->b, odd, gj_lower_fcmp(L, LLVMRealOLT, x, gj_lower_fconst(x, 0.0)), "");
    exact = gj_lower_sel(L, neg, LLVMBuildFNeg(L->b, exact, ""), exact);
    return gj_lower_sel(L, ok, exact, r);
}

static LLVMValueRef power(GjLower *L, GjNumClass cls, LLVMValueRef a, LLVMValueRef b) {
    int e = small_exponent(b);
    if (e >= 0)
        return pow_by_multiplies(L, a, e, cls == GJ_NC_FLOAT);
    if (cls == GJ_NC_FLOAT)
        return gj_lower_float_pow(L, a, b);
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef fn = ipow_helper(L, ty, cls == GJ_NC_SINT);
    LLVMTypeRef params[2] = {ty, ty};
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildCall2(L->b, LLVMFunctionType(ty, params, 2, 0), fn, args, 2, "");
}

/* ---- shifts --------------------------------------------------------------------- */

/* NumPy's shifts: a count of at least the width gives 0 (or -1 for a
   negative signed value shifted right) instead of LLVM's poison. */
static LLVMValueRef shift(GjLower *L, int left, int is_signed, LLVMValueRef a, LLVMValueRef b) {
    unsigned width = LLVMGetIntTypeWidth(LLVMTypeOf(a));
    LLVMValueRef too_far = gj_lower_icmp(L, LLVMIntUGE, b, gj_lower_iconst(a, width));
    if (left)
        return gj_lower_sel(L, too_far, gj_lower_iconst(a, 0), LLVMBuildShl(L->b, a, b, ""));
    if (!is_signed)
        return gj_lower_sel(L, too_far, gj_lower_iconst(a, 0), LLVMBuildLShr(L->b, a, b, ""));
    LLVMValueRef count = gj_lower_sel(L, too_far, gj_lower_iconst(a, width - 1), b);
    return LLVMBuildAShr(L->b, a, count, "");
}

/* ---- operators ------------------------------------------------------------------ */

static LLVMValueRef int_binop(GjLower *L, GjBinop op, GjNumClass cls, LLVMValueRef a,
                              LLVMValueRef b) {
    int is_signed = cls == GJ_NC_SINT;
    switch (op) {
    case GJ_BIN_ADD: return LLVMBuildAdd(L->b, a, b, "");
    case GJ_BIN_SUB: return LLVMBuildSub(L->b, a, b, "");
    case GJ_BIN_MUL: return LLVMBuildMul(L->b, a, b, "");
    case GJ_BIN_FLOORDIV: return int_divmod(L, 0, is_signed, a, b);
    case GJ_BIN_MOD: return int_divmod(L, 1, is_signed, a, b);
    case GJ_BIN_POW: return power(L, cls, a, b);
    case GJ_BIN_LSHIFT: return shift(L, 1, is_signed, a, b);
    case GJ_BIN_RSHIFT: return shift(L, 0, is_signed, a, b);
    case GJ_BIN_AND: return LLVMBuildAnd(L->b, a, b, "");
    case GJ_BIN_OR: return LLVMBuildOr(L->b, a, b, "");
    case GJ_BIN_XOR: return LLVMBuildXor(L->b, a, b, "");
    case GJ_BIN_TRUEDIV:
    case GJ_BIN_MATMUL:
    case GJ_NBINOPS: break; /* true division reaches here only with an integer result type */
    }
    return NULL;
}

static LLVMValueRef float_binop(GjLower *L, GjBinop op, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef ty = LLVMTypeOf(a);
    if (LLVMGetTypeKind(ty) == LLVMHalfTypeKind &&
        (op == GJ_BIN_FLOORDIV || op == GJ_BIN_MOD || op == GJ_BIN_POW)) {
        /* NumPy computes these float16 operations in float32 and rounds once */
        LLVMTypeRef f32 = LLVMFloatTypeInContext(L->ctx);
        LLVMValueRef r =
            float_binop(L, op, LLVMBuildFPExt(L->b, a, f32, ""), LLVMBuildFPExt(L->b, b, f32, ""));
        return r ? LLVMBuildFPTrunc(L->b, r, ty, "") : NULL;
    }
    switch (op) {
    case GJ_BIN_ADD: return gj_lower_arith_fadd(L, a, b);
    case GJ_BIN_SUB: return gj_lower_arith_fsub(L, a, b);
    case GJ_BIN_MUL: return gj_lower_arith_fmul(L, a, b);
    case GJ_BIN_TRUEDIV: return gj_lower_fdiv(L, a, b);
    case GJ_BIN_FLOORDIV: return float_divmod(L, 0, a, b);
    case GJ_BIN_MOD: return float_divmod(L, 1, a, b);
    case GJ_BIN_POW: return power(L, GJ_NC_FLOAT, a, b);
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

/* NumPy bool arithmetic: + is or, * is and; & | ^ are logical. */
static LLVMValueRef bool_binop(GjLower *L, GjBinop op, LLVMValueRef a, LLVMValueRef b) {
    switch (op) {
    case GJ_BIN_ADD:
    case GJ_BIN_OR: return LLVMBuildOr(L->b, a, b, "");
    case GJ_BIN_MUL:
    case GJ_BIN_AND: return LLVMBuildAnd(L->b, a, b, "");
    case GJ_BIN_XOR: return LLVMBuildXor(L->b, a, b, "");
    case GJ_BIN_SUB:
    case GJ_BIN_TRUEDIV:
    case GJ_BIN_FLOORDIV:
    case GJ_BIN_MOD:
    case GJ_BIN_POW:
    case GJ_BIN_LSHIFT:
    case GJ_BIN_RSHIFT:
    case GJ_BIN_MATMUL:
    case GJ_NBINOPS: break;
    }
    return NULL;
}

LLVMValueRef gj_lower_binop(GjLower *L, GjBinop op, LLVMValueRef a, const GjType *ta,
                            LLVMValueRef b, const GjType *tb, const GjType *rt) {
    GjNumClass cls = gj_lower_class(rt);
    LLVMValueRef r = NULL;
    if (cls != GJ_NC_OTHER) {
        if (!(a = gj_lower_cast(L, a, ta, rt)) || !(b = gj_lower_cast(L, b, tb, rt)))
            return NULL;
        switch (cls) {
        case GJ_NC_BOOL: r = bool_binop(L, op, a, b); break;
        case GJ_NC_SINT:
        case GJ_NC_UINT: r = int_binop(L, op, cls, a, b); break;
        case GJ_NC_FLOAT: r = float_binop(L, op, a, b); break;
        case GJ_NC_COMPLEX: r = gj_lower_complex_binop(L, op, a, b); break;
        case GJ_NC_OTHER: break;
        }
    }
    if (!r)
        gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "cannot lower %s %s %s giving %s", ta->name,
                 gj_ir_binop_symbol(op), tb->name, rt->name);
    return r;
}

LLVMValueRef gj_lower_unop(GjLower *L, GjUnop op, LLVMValueRef a, const GjType *ta,
                           const GjType *rt) {
    if (op == GJ_UN_NOT) {
        LLVMValueRef t = gj_lower_truth(L, a, ta);
        return t ? gj_lower_cast(L, LLVMBuildNot(L->b, t, ""), &gj_ty_bool, rt) : NULL;
    }
    GjNumClass cls = gj_lower_class(rt);
    if (cls == GJ_NC_OTHER || !(a = gj_lower_cast(L, a, ta, rt)))
        goto unsupported;
    switch (op) {
    case GJ_UN_POS: return a;
    case GJ_UN_NEG:
        if (cls == GJ_NC_FLOAT)
            return gj_lower_arith(L, LLVMBuildFNeg(L->b, a, ""));
        if (cls == GJ_NC_COMPLEX)
            return gj_lower_complex(L,
                                    gj_lower_arith(L, LLVMBuildFNeg(L->b, gj_lower_re(L, a), "")),
                                    gj_lower_arith(L, LLVMBuildFNeg(L->b, gj_lower_im(L, a), "")));
        return cls == GJ_NC_BOOL ? a : LLVMBuildNeg(L->b, a, "");
    case GJ_UN_INVERT:
        if (cls == GJ_NC_FLOAT || cls == GJ_NC_COMPLEX)
            break;
        return LLVMBuildNot(L->b, a, ""); /* ~x == -x - 1; bool: logical not */
    case GJ_UN_NOT: break;
    }
unsupported:
    if (!L->c->diag)
        gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "cannot lower unary %s on %s",
                 gj_ir_unop_symbol(op), ta->name);
    return NULL;
}

/* Predicates indexed by GjCmp (LT LE EQ NE GT GE). */
static const LLVMIntPredicate cmp_signed[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntEQ,
                                              LLVMIntNE,  LLVMIntSGT, LLVMIntSGE};
static const LLVMIntPredicate cmp_unsigned[] = {LLVMIntULT, LLVMIntULE, LLVMIntEQ,
                                                LLVMIntNE,  LLVMIntUGT, LLVMIntUGE};
static const LLVMRealPredicate cmp_float[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOEQ,
                                              LLVMRealUNE, LLVMRealOGT, LLVMRealOGE};

static LLVMValueRef compare_in(GjLower *L, GjCmp k, LLVMValueRef a, LLVMValueRef b,
                               GjNumClass cls) {
    switch (cls) {
    case GJ_NC_SINT: return gj_lower_icmp(L, cmp_signed[k], a, b);
    case GJ_NC_BOOL:
    case GJ_NC_UINT: return gj_lower_icmp(L, cmp_unsigned[k], a, b);
    case GJ_NC_FLOAT: return gj_lower_fast(L, gj_lower_fcmp(L, cmp_float[k], a, b));
    case GJ_NC_COMPLEX: { /* == and != only (typing refuses the rest) */
        LLVMValueRef re = compare_in(L, k, gj_lower_re(L, a), gj_lower_re(L, b), GJ_NC_FLOAT);
        LLVMValueRef im = compare_in(L, k, gj_lower_im(L, a), gj_lower_im(L, b), GJ_NC_FLOAT);
        if (k == GJ_CMP_EQ)
            return LLVMBuildAnd(L->b, re, im, "");
        return k == GJ_CMP_NE ? LLVMBuildOr(L->b, re, im, "") : NULL;
    }
    case GJ_NC_OTHER: break;
    }
    return NULL;
}

static int is_uint64(const GjType *t) { return t->kind == GJ_TK_UINT && t->bits == 64; }

/* A signed integer or an int literal against a uint64 (either on the left),
   by value, as NumPy 2 compares them: a negative one is below every uint64,
   and otherwise the two compare as unsigned.  (Their promoted type is
   float64, which would round both above 2**53: np.int64(2**63 - 1) <
   np.uint64(2**63) is True.) */
static LLVMValueRef compare_signed_uint64(GjLower *L, GjCmp k, LLVMValueRef a, const GjType *ta,
                                          LLVMValueRef b, const GjType *tb) {
    /* k's truth when the signed one is negative: on the left it is below
       (LT LE NE hold), on the right it is below the left one (GT GE NE) */
    static const int left_below[] = {1, 1, 0, 1, 0, 0}, right_below[] = {0, 0, 0, 1, 1, 1};
    int signed_left = !is_uint64(ta);
    LLVMValueRef *s = signed_left ? &a : &b;
    if (!(*s = gj_lower_cast(L, *s, signed_left ? ta : tb, &gj_ty_int64)))
        return NULL;
    LLVMValueRef negative = gj_lower_icmp(L, LLVMIntSLT, *s, gj_lower_iconst(*s, 0));
    LLVMValueRef known =
        LLVMConstInt(L->i1, (unsigned long long)(signed_left ? left_below[k] : right_below[k]), 0);
    return gj_lower_sel(L, negative, known, compare_in(L, k, a, b, GJ_NC_UINT));
}

/* An integer compared with an int literal (a weak int, an int64 value).
   NumPy 2 compares them by value even where the integer's type cannot hold
   the literal (np.uint8(3) > -1 is True, np.int8(x) < 200 too), where
   converting the literal to that type would wrap it: below 64 bits both are
   compared as int64; a uint64 as against any signed integer. */
static LLVMValueRef compare_with_literal(GjLower *L, GjCmp k, LLVMValueRef a, const GjType *ta,
                                         LLVMValueRef b, const GjType *tb, const GjType *t) {
    if (t->bits < 64)
        return compare_in(L, k, gj_lower_cast(L, a, ta, &gj_ty_int64),
                          gj_lower_cast(L, b, tb, &gj_ty_int64), GJ_NC_SINT);
    return compare_signed_uint64(L, k, a, ta, b, tb);
}

LLVMValueRef gj_lower_compare(GjLower *L, GjCmp k, LLVMValueRef a, const GjType *ta, LLVMValueRef b,
                              const GjType *tb) {
    const GjType *t = gj_ty_promote(ta, tb);
    if (!t && gj_lower_class(ta) == GJ_NC_BOOL && gj_lower_class(tb) == GJ_NC_BOOL)
        t = &gj_ty_bool;
    if (!t || gj_lower_class(t) == GJ_NC_OTHER) {
        gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "cannot compare %s %s %s", ta->name,
                 gj_ir_cmp_symbol(k), tb->name);
        return NULL;
    }
    if ((ta->kind == GJ_TK_WEAK_INT) != (tb->kind == GJ_TK_WEAK_INT) &&
        (t->kind == GJ_TK_UINT || (t->kind == GJ_TK_INT && t->bits < 64)))
        return compare_with_literal(L, k, a, ta, b, tb, t);
    if ((ta->kind == GJ_TK_INT && is_uint64(tb)) || (is_uint64(ta) && tb->kind == GJ_TK_INT))
        return compare_signed_uint64(L, k, a, ta, b, tb); /* promoted to float64 */
    if (!(a = gj_lower_cast(L, a, ta, t)) || !(b = gj_lower_cast(L, b, tb, t)))
        return NULL;
    return compare_in(L, k, a, b, gj_lower_class(t));
}

/* ---- builtins --------------------------------------------------------------------- */

LLVMValueRef gj_lower_abs(GjLower *L, LLVMValueRef a, const GjType *t) {
    switch (gj_lower_class(t)) {
    case GJ_NC_BOOL:
    case GJ_NC_UINT: return a;
    case GJ_NC_SINT: { /* abs(INT_MIN) wraps to INT_MIN, as NumPy */
        LLVMValueRef args[2] = {a, LLVMConstInt(L->i1, 0, 0)};
        return gj_lower_call_intrinsic(L, "llvm.abs", LLVMTypeOf(a), args, 2);
    }
    case GJ_NC_FLOAT: return gj_lower_float_intrinsic(L, "llvm.fabs", a);
    case GJ_NC_COMPLEX: { /* npy_cabs: hypot(re, im) */
        LLVMValueRef parts[2] = {gj_lower_re(L, a), gj_lower_im(L, a)};
        return gj_lower_libdevice(L, "hypot", parts, 2);
    }
    case GJ_NC_OTHER: break;
    }
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "abs() of %s is not supported", t->name);
    return NULL;
}

/* Python's min(a, b) == (b < a ? b : a) and max(a, b) == (b > a ? b : a):
   the first argument wins ties and nan comparisons. */
LLVMValueRef gj_lower_minmax(GjLower *L, int is_max, LLVMValueRef a, LLVMValueRef b,
                             const GjType *t) {
    GjNumClass cls = gj_lower_class(t);
    LLVMValueRef better = compare_in(L, is_max ? GJ_CMP_GT : GJ_CMP_LT, b, a, cls);
    if (!better) {
        gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "%s() of %s is not supported",
                 is_max ? "max" : "min", t->name);
        return NULL;
    }
    return gj_lower_sel(L, better, b, a);
}

/* Item i (an i64, any value in [-n, n)) of tuple tup, as type rt: a chain of
   selects, for a variable index into a tuple whose items share one type. */
LLVMValueRef gj_lower_tuple_item(GjLower *L, LLVMValueRef tup, const GjType *tt, LLVMValueRef i,
                                 const GjType *rt) {
    i = gj_lower_wrap_index(L, i, gj_lower_i64(L, tt->n));
    LLVMValueRef v = LLVMGetUndef(gj_lower_type(L, rt));
    for (int k = 0; k < tt->n; k++) {
        LLVMValueRef e =
            gj_lower_cast(L, LLVMBuildExtractValue(L->b, tup, (unsigned)k, ""), tt->elems[k], rt);
        if (!e)
            return NULL;
        LLVMValueRef here = LLVMBuildICmp(L->b, LLVMIntEQ, i, gj_lower_i64(L, k), "");
        v = k == 0 ? e : LLVMBuildSelect(L->b, here, e, v, "");
    }
    return v;
}
