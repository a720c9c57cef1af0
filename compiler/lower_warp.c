/*
 * lower_warp.c - the warp family of intrinsics (lower_warp.h): block and
 * warp collectives (syncthreads_count/and/or, syncwarp, shfl_*_sync, the
 * *_sync votes, match_*_sync, activemask), memory fences, and the bit and
 * arithmetic helpers of numba.cuda (popc, brev, clz, ffs, fma, cbrt, selp).
 *
 * A collective's row names its GjCollective in `sub`; this file converts
 * the arguments to the operand forms intrinsics.h gives for it (masks,
 * lanes and widths i32, predicates i1, values as their bits) and asks the
 * target (target.h's `collective`), so NVPTX and the CPU differ only
 * there.  A value travels as its bits: up to 32 bits (bool, small
 * integers, float16 and float32 too) in an i32, 64-bit ones in an i64, and
 * comes back as the value's own type; match_*_sync compares those bits
 * (0.0 and -0.0 differ, a NaN matches its own bits).  The bit helpers are
 * LLVM intrinsics that both targets select.
 */
#include "lower_warp.h"

/* A real scalar v of type t (concrete) as its bits: i32, or i64 for 64-bit t. */
static LLVMValueRef to_bits(GjLower *L, LLVMValueRef v, const GjType *t) {
    unsigned bits = t->kind == GJ_TK_BOOL ? 1 : (unsigned)t->bits;
    if (gj_ty_is_float(t))
        v = LLVMBuildBitCast(L->b, v, LLVMIntTypeInContext(L->ctx, bits), "");
    return bits < 32 ? LLVMBuildZExt(L->b, v, L->i32, "") : v;
}

/* The value of type t whose bits to_bits gave. */
static LLVMValueRef from_bits(GjLower *L, LLVMValueRef v, const GjType *t) {
    unsigned bits = t->kind == GJ_TK_BOOL ? 1 : (unsigned)t->bits;
    if (bits < 32)
        v = LLVMBuildTrunc(L->b, v, LLVMIntTypeInContext(L->ctx, bits), "");
    return gj_ty_is_float(t) ? LLVMBuildBitCast(L->b, v, gj_lower_type(L, t), "") : v;
}

/* Argument k as an i32 (masks wrap to their low 32 bits, as CUDA's unsigned). */
static LLVMValueRef arg_i32(GjLower *L, const GjIntrCall *c, int k) {
    return gj_lower_cast(L, c->v[k], c->t[k], &gj_ty_uint32);
}

/* Argument k as the bits of its concrete type (*t). */
static LLVMValueRef arg_bits(GjLower *L, const GjIntrCall *c, int k, const GjType **t) {
    *t = gj_ty_concrete(c->t[k]);
    LLVMValueRef v = gj_lower_cast(L, c->v[k], c->t[k], *t);
    return v ? to_bits(L, v, *t) : NULL;
}

LLVMValueRef gj_lower_collective(GjLower *L, const GjIntrCall *c) {
    GjCollective op = (GjCollective)c->row->sub;
    LLVMValueRef a[4] = {NULL, NULL, NULL, NULL}, pred = NULL, r;
    const GjType *vt = NULL;
    switch (op) {
    case GJ_COLL_SYNC_COUNT:
    case GJ_COLL_SYNC_AND:
    case GJ_COLL_SYNC_OR: a[0] = gj_lower_truth(L, c->v[0], c->t[0]); break;
    case GJ_COLL_SYNCWARP: a[0] = arg_i32(L, c, 0); break;
    case GJ_COLL_FENCE_BLOCK:
    case GJ_COLL_FENCE:
    case GJ_COLL_FENCE_SYSTEM:
    case GJ_COLL_ACTIVEMASK: break;
    case GJ_COLL_SHFL_IDX:
    case GJ_COLL_SHFL_UP:
    case GJ_COLL_SHFL_DOWN:
    case GJ_COLL_SHFL_XOR:
        a[0] = arg_i32(L, c, 0);
        a[1] = arg_bits(L, c, 1, &vt);
        a[2] = arg_i32(L, c, 2);
        a[3] = arg_i32(L, c, 3);
        break;
    case GJ_COLL_VOTE_ALL:
    case GJ_COLL_VOTE_ANY:
    case GJ_COLL_VOTE_EQ:
    case GJ_COLL_BALLOT:
        a[0] = arg_i32(L, c, 0);
        a[1] = gj_lower_truth(L, c->v[1], c->t[1]);
        break;
    case GJ_COLL_MATCH_ANY:
    case GJ_COLL_MATCH_ALL:
        a[0] = arg_i32(L, c, 0);
        a[1] = arg_bits(L, c, 1, &vt);
        break;
    }
    if (L->c->diag || !(r = L->target->collective(L, op, a, &pred)))   /* diag: a cast failed */
        return NULL;
    switch (op) {
    case GJ_COLL_SYNCWARP:
    case GJ_COLL_FENCE_BLOCK:
    case GJ_COLL_FENCE:
    case GJ_COLL_FENCE_SYSTEM: return LLVMGetUndef(L->empty);
    case GJ_COLL_SHFL_IDX:
    case GJ_COLL_SHFL_UP:
    case GJ_COLL_SHFL_DOWN:
    case GJ_COLL_SHFL_XOR: return gj_lower_cast(L, from_bits(L, r, vt), vt, c->rt);
    case GJ_COLL_MATCH_ALL: {
        LLVMValueRef pair = LLVMGetUndef(gj_lower_type(L, c->rt));
        pair = LLVMBuildInsertValue(L->b, pair, r, 0, "");
        return LLVMBuildInsertValue(L->b, pair, pred, 1, "");
    }
    case GJ_COLL_SYNC_COUNT:
    case GJ_COLL_SYNC_AND:
    case GJ_COLL_SYNC_OR:
    case GJ_COLL_VOTE_ALL:
    case GJ_COLL_VOTE_ANY:
    case GJ_COLL_VOTE_EQ:
    case GJ_COLL_BALLOT:
    case GJ_COLL_MATCH_ANY:
    case GJ_COLL_ACTIVEMASK: break;
    }
    return r;   /* i32 for int32/uint32 results, i1 for bool ones */
}

/* x == 0 ? 0 : cttz(x) + 1, as an i32. */
static LLVMValueRef ffs(GjLower *L, LLVMValueRef x) {
    LLVMTypeRef ty = LLVMTypeOf(x);
    LLVMValueRef args[2] = {x, LLVMConstInt(L->i1, 1, 0)}; /* cttz(0) is poison: selected away */
    LLVMValueRef tz = gj_lower_call_intrinsic(L, "llvm.cttz", ty, args, 2);
    if (!tz)
        return NULL;
    LLVMValueRef one = LLVMBuildAdd(L->b, tz, LLVMConstInt(ty, 1, 0), "");
    LLVMValueRef is0 = LLVMBuildICmp(L->b, LLVMIntEQ, x, LLVMConstNull(ty), "");
    return LLVMBuildIntCast2(L->b, LLVMBuildSelect(L->b, is0, LLVMConstNull(ty), one, ""), L->i32,
                             0, "");
}

/* fma(a, b, c) in t: llvm.fma rounds once; half computes in double, where the
   product of two halves is exact. */
static LLVMValueRef fma_call(GjLower *L, LLVMValueRef *v, const GjType *t) {
    LLVMTypeRef ty = gj_lower_type(L, t), dty = LLVMDoubleTypeInContext(L->ctx);
    int half = t->bits == 16;
    for (int k = 0; half && k < 3; k++)
        v[k] = LLVMBuildFPExt(L->b, v[k], dty, "");
    LLVMValueRef r = gj_lower_call_intrinsic(L, "llvm.fma", half ? dty : ty, v, 3);
    return half && r ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

LLVMValueRef gj_lower_bits(GjLower *L, const GjIntrCall *c) {
    GjBitOp op = (GjBitOp)c->row->sub;
    /* the operands' type: the result's, but ffs's is its argument's and selp's
       condition keeps its own */
    const GjType *t = op == GJ_BIT_FFS ? gj_ty_concrete(c->t[0]) : c->rt;
    LLVMValueRef v[3], zero_poison = LLVMConstInt(L->i1, 0, 0), cl[2];
    for (int k = 0; k < c->n && k < 3; k++)
        if (!(v[k] = gj_lower_cast(L, c->v[k], c->t[k], op == GJ_BIT_SELP && !k ? c->t[0] : t)))
            return NULL;
    switch (op) {
    case GJ_BIT_POPC: return gj_lower_call_intrinsic(L, "llvm.ctpop", LLVMTypeOf(v[0]), v, 1);
    case GJ_BIT_BREV: return gj_lower_call_intrinsic(L, "llvm.bitreverse", LLVMTypeOf(v[0]), v, 1);
    case GJ_BIT_CLZ:
        cl[0] = v[0];
        cl[1] = zero_poison;
        return gj_lower_call_intrinsic(L, "llvm.ctlz", LLVMTypeOf(v[0]), cl, 2);
    case GJ_BIT_FFS: return ffs(L, v[0]);
    case GJ_BIT_FMA: return fma_call(L, v, t);
    case GJ_BIT_CBRT: return gj_lower_libdevice(L, "cbrt", v, 1);
    case GJ_BIT_SELP: {
        LLVMValueRef cond = gj_lower_truth(L, v[0], c->t[0]);
        return LLVMBuildSelect(L->b, cond, v[1], v[2], "");
    }
    }
    return gj_lower_fail(L, "unknown bit operation %d", (int)op);
}
