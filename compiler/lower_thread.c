/*
 * lower_thread.c - the thread family of intrinsics (lower_thread.h): thread
 * indexing (threadIdx/blockIdx/blockDim/gridDim .x/.y/.z, grid(n),
 * gridsize(n), laneid, warpsize, lanemask_lt()) and the block barrier
 * (syncthreads).
 *
 * Thread registers are int64 values: each 32-bit special register (asked of
 * the target by its GjSreg) carries !range metadata with CUDA's limits and
 * is zero-extended, so hand-written global indices never wrap past 2^31
 * threads while LLVM still sees 32-bit operands and the NVPTX backend emits
 * one widening multiply (mul.wide.u32 / mad.wide.u32) for
 * blockIdx.x * blockDim.x + threadIdx.x, as for grid(1).
 */
#include "lower_thread.h"

/* What CUDA allows each register to hold: [lo, hi). */
static const struct {
    unsigned long long lo, hi;
} sreg_range[GJ_NSREGS] = {
    [GJ_SREG_TID] = {0, 1024},
    [GJ_SREG_NTID] = {1, 1025},
    [GJ_SREG_CTAID] = {0, 0x7fffffffULL},
    [GJ_SREG_NCTAID] = {1, 0x80000000ULL},
    [GJ_SREG_LANEID] = {0, 32},
    [GJ_SREG_WARPSIZE] = {32, 33},
    [GJ_SREG_LANEMASK_LT] = {0, 0x80000000ULL},
};

/* Register reg along axis (0..2), an int64 known to fit its range. */
static LLVMValueRef sreg64(GjLower *L, GjSreg reg, int axis) {
    LLVMValueRef r = L->target->special_reg(L, reg, axis);
    if (!r)
        return NULL;
    if (!LLVMIsALoadInst(r) && !LLVMIsACallInst(r))   /* a constant or computed (CPU) */
        return LLVMBuildZExt(L->b, r, L->i64, "");
    LLVMMetadataRef bounds[2] = {
        LLVMValueAsMetadata(LLVMConstInt(L->i32, sreg_range[reg].lo, 0)),
        LLVMValueAsMetadata(LLVMConstInt(L->i32, sreg_range[reg].hi, 0)),
    };
    unsigned kind = LLVMGetMDKindIDInContext(L->ctx, "range", 5);
    LLVMSetMetadata(r, kind, LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, bounds, 2)));
    return LLVMBuildZExt(L->b, r, L->i64, "");
}

/* grid(1) along one axis: ctaid * ntid + tid. */
static LLVMValueRef grid_axis(GjLower *L, int axis) {
    LLVMValueRef ctaid = sreg64(L, GJ_SREG_CTAID, axis), ntid = sreg64(L, GJ_SREG_NTID, axis);
    LLVMValueRef tid = sreg64(L, GJ_SREG_TID, axis);
    if (!ctaid || !ntid || !tid)
        return NULL;
    return LLVMBuildAdd(L->b, LLVMBuildMul(L->b, ctaid, ntid, ""), tid, "");
}

/* gridsize(1) along one axis: ntid * nctaid. */
static LLVMValueRef gridsize_axis(GjLower *L, int axis) {
    LLVMValueRef ntid = sreg64(L, GJ_SREG_NTID, axis), nctaid = sreg64(L, GJ_SREG_NCTAID, axis);
    return ntid && nctaid ? LLVMBuildMul(L->b, ntid, nctaid, "") : NULL;
}

/* gpujit.grid(n) / gridsize(n): an int64, or an n-tuple of them. */
LLVMValueRef gj_lower_grid(GjLower *L, const GjIntrCall *c) {
    LLVMValueRef ndim_value = c->v[0];
    long long ndim = LLVMIsAConstantInt(ndim_value) ? LLVMConstIntGetSExtValue(ndim_value) : 0;
    if (ndim < 1 || ndim > 3)
        return gj_lower_fail(L, "grid()/gridsize() take the constant 1, 2 or 3");
    LLVMValueRef axes[3];
    for (int k = 0; k < ndim; k++)
        if (!(axes[k] = c->row->sub ? gridsize_axis(L, k) : grid_axis(L, k)))
            return NULL;
    if (ndim == 1)
        return gj_lower_cast(L, axes[0], &gj_ty_int64, c->rt);
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, c->rt));
    for (int k = 0; k < ndim; k++)
        out = LLVMBuildInsertValue(L->b, out, axes[k], (unsigned)k, "");
    return out;
}

LLVMValueRef gj_lower_dim3_attr(GjLower *L, int dim3, int axis, const GjType *rt) {
    const GjIntrinsicRow *row = gj_intrinsic_row((GjIntrinsic)dim3);
    if (!(row->flags & GJ_IF_DIM3))
        return gj_lower_fail(L, "%s has no registers", gj_intrinsic_name((GjIntrinsic)dim3));
    LLVMValueRef r = sreg64(L, (GjSreg)row->sub, axis);
    return r ? gj_lower_cast(L, r, &gj_ty_int64, rt) : NULL;
}

/* laneid, warpsize (values), lanemask_lt(): the register the row names. */
LLVMValueRef gj_lower_sreg(GjLower *L, const GjIntrCall *c) {
    LLVMValueRef r = sreg64(L, (GjSreg)c->row->sub, 0);
    return r ? gj_lower_cast(L, r, &gj_ty_int64, c->rt) : NULL;
}

/* The block barrier. */
LLVMValueRef gj_lower_syncthreads(GjLower *L, const GjIntrCall *c) {
    (void)c;   /* GJ_IF_BARRIER in its row makes lower.c run the block as fibers */
    return L->target->barrier(L) ? LLVMGetUndef(L->empty) : NULL;
}
