/*
 * lower_atomic.c - the atomic family (gpujit.atomic.*, GJ_INTR_ATOMIC_ROWS
 * in intrinsics.h): one indivisible read-modify-write of one array element,
 * returning the element's old value.
 *
 * Input: a call typed by GJ_TR_ATOMIC (the array is writable, its dtype one
 * the row accepts, the index selects one element); the row's `sub` holds
 * the operation (GjAtomicOp) and the NaN rule (GJ_AT_NAN).  The element's
 * address is lower_array.c's (negative indices wrap), in the address space
 * of the array's type, so global and shared arrays lower alike; operands
 * are converted to the dtype first, as a store would.
 *
 * Each operation becomes, by the dtype's numeric class (rmw_ops):
 *   - one atomicrmw, emitted by the target (target.h: the CPU has real
 *     atomic instructions, never a lock; NVPTX atom.*), relaxed ordering as
 *     CUDA's atomicAdd & co;
 *   - float min/max: a compare-and-swap loop that stores only when the value
 *     changes, with numba's NaN rules (float_minmax);
 *   - cas: a cmpxchg.
 */
#include "lower_atomic.h"

#include "lower_array.h"

enum { NONE = -1 };

/* The atomicrmw operation (an LLVMAtomicRMWBinOp) of each GjAtomicOp for
   signed integers, unsigned integers and floats; NONE where another path
   lowers it (float min/max, cas) or no row accepts the class. */
static const int rmw_ops[GJ_NATOMICOPS][3] = {
    /*               signed                    unsigned                   float */
    [GJ_AOP_XCHG] = {LLVMAtomicRMWBinOpXchg, LLVMAtomicRMWBinOpXchg, NONE},
    [GJ_AOP_ADD] = {LLVMAtomicRMWBinOpAdd, LLVMAtomicRMWBinOpAdd, LLVMAtomicRMWBinOpFAdd},
    [GJ_AOP_SUB] = {LLVMAtomicRMWBinOpSub, LLVMAtomicRMWBinOpSub, LLVMAtomicRMWBinOpFSub},
    [GJ_AOP_AND] = {LLVMAtomicRMWBinOpAnd, LLVMAtomicRMWBinOpAnd, NONE},
    [GJ_AOP_NAND] = {LLVMAtomicRMWBinOpNand, LLVMAtomicRMWBinOpNand, NONE},
    [GJ_AOP_OR] = {LLVMAtomicRMWBinOpOr, LLVMAtomicRMWBinOpOr, NONE},
    [GJ_AOP_XOR] = {LLVMAtomicRMWBinOpXor, LLVMAtomicRMWBinOpXor, NONE},
    [GJ_AOP_MAX] = {LLVMAtomicRMWBinOpMax, LLVMAtomicRMWBinOpUMax, NONE},
    [GJ_AOP_MIN] = {LLVMAtomicRMWBinOpMin, LLVMAtomicRMWBinOpUMin, NONE},
    [GJ_AOP_INC] = {LLVMAtomicRMWBinOpUIncWrap, LLVMAtomicRMWBinOpUIncWrap, NONE},
    [GJ_AOP_DEC] = {LLVMAtomicRMWBinOpUDecWrap, LLVMAtomicRMWBinOpUDecWrap, NONE},
    [GJ_AOP_CAS] = {NONE, NONE, NONE},
};

/* atomicrmw op of v at p through the target; float subtraction as the
   addition of -v (the same IEEE result), which NVPTX has as one
   instruction (atom.add.f32) where fsub would be a compare-and-swap loop. */
static LLVMValueRef rmw(GjLower *L, LLVMAtomicRMWBinOp op, LLVMValueRef p, LLVMValueRef v,
                        unsigned align) {
    if (op == LLVMAtomicRMWBinOpFSub) {
        op = LLVMAtomicRMWBinOpFAdd;
        v = LLVMBuildFNeg(L->b, v, "");
    }
    LLVMValueRef old = L->target->atomic_rmw(L, op, p, v);
    if (old && LLVMIsAAtomicRMWInst(old))
        LLVMSetAlignment(old, align);
    return old;
}

/* cmpxchg of the integer bits of cmp and v at p; *swapped gets whether it
   stored.  Returns the value it found, in v's type. */
static LLVMValueRef cmpxchg(GjLower *L, LLVMValueRef p, LLVMValueRef cmp, LLVMValueRef v,
                            unsigned align, LLVMValueRef *swapped) {
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMTypeRef bits = LLVMIntTypeInContext(L->ctx, 8 * align);
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(
        L->b, p, LLVMBuildBitCast(L->b, cmp, bits, ""), LLVMBuildBitCast(L->b, v, bits, ""),
        LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMSetAlignment(x, align);
    if (swapped)
        *swapped = LLVMBuildExtractValue(L->b, x, 1, "");
    return LLVMBuildBitCast(L->b, LLVMBuildExtractValue(L->b, x, 0, ""), ty, "");
}

/* Float max/min of v into *p; returns the old value.  numba's rules:
     max/min:       stores when old < v (max) / old > v (min), both ordered:
                    a NaN element stays, a NaN v changes nothing (Python's
                    max(ary[idx], v));
     nanmax/nanmin: NaN is a missing value: stores when v is not NaN and
                    old < v / old > v or old is NaN (numpy.nanmax of the two).
   The loop re-reads with each failed compare-and-swap and stops as soon as
   the element no longer needs the store, so an element already at its
   extreme is never written. */
static LLVMValueRef float_minmax(GjLower *L, int is_max, int nan_missing, LLVMValueRef p,
                                 LLVMValueRef v, unsigned align) {
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(L->b));
    LLVMBasicBlockRef entry = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(L->ctx, fn, "atomic.test");
    LLVMBasicBlockRef swap = LLVMAppendBasicBlockInContext(L->ctx, fn, "atomic.swap");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->ctx, fn, "atomic.done");

    LLVMValueRef first = LLVMBuildLoad2(L->b, ty, p, "");
    LLVMSetOrdering(first, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(first, align);
    LLVMValueRef v_ordered = LLVMBuildFCmp(L->b, LLVMRealORD, v, v, "");
    LLVMBuildBr(L->b, loop);

    LLVMPositionBuilderAtEnd(L->b, loop);
    LLVMValueRef old = LLVMBuildPhi(L->b, ty, "old");
    LLVMRealPredicate beats =
        nan_missing ? (is_max ? LLVMRealULT : LLVMRealUGT) : (is_max ? LLVMRealOLT : LLVMRealOGT);
    LLVMValueRef store = LLVMBuildFCmp(L->b, beats, old, v, "");
    if (nan_missing)
        store = LLVMBuildAnd(L->b, store, v_ordered, "");
    LLVMBuildCondBr(L->b, store, swap, done);

    LLVMPositionBuilderAtEnd(L->b, swap);
    LLVMValueRef swapped;
    LLVMValueRef seen = cmpxchg(L, p, old, v, align, &swapped);
    LLVMBuildCondBr(L->b, swapped, done, loop);

    LLVMValueRef in_vals[2] = {first, seen};
    LLVMBasicBlockRef in_blocks[2] = {entry, swap};
    LLVMAddIncoming(old, in_vals, in_blocks, 2);
    LLVMPositionBuilderAtEnd(L->b, done);
    return old;
}

LLVMValueRef gj_lower_atomic(GjLower *L, const GjIntrCall *call) {
    const GjType *at = call->t[0], *dtype = at->dtype;
    GjAtomicOp op = (GjAtomicOp)(call->row->sub & GJ_AT_OP_MASK);
    unsigned align = (unsigned)gj_ty_itemsize(dtype);
    LLVMValueRef p =
        call->row->sub & GJ_AT_FIRST   /* compare_and_swap: element 0 */
            ? gj_lower_element_ptr(L, call->v[0], at, LLVMConstInt(L->i64, 0, 0), &gj_ty_int64,
                                   call->subject)
            : gj_lower_element_ptr(L, call->v[0], at, call->v[1], call->t[1], call->subject);
    LLVMValueRef v = p ? gj_lower_cast(L, call->v[call->n - 1], call->t[call->n - 1], dtype) : NULL;
    if (!v)
        return NULL;
    GjNumClass cls = gj_lower_class(dtype);
    if (op == GJ_AOP_CAS) {   /* (..., old, val) */
        LLVMValueRef cmp = gj_lower_cast(L, call->v[call->n - 2], call->t[call->n - 2], dtype);
        return cmp ? cmpxchg(L, p, cmp, v, align, NULL) : NULL;
    }
    if (cls == GJ_NC_FLOAT && (op == GJ_AOP_MAX || op == GJ_AOP_MIN))
        return float_minmax(L, op == GJ_AOP_MAX, (call->row->sub & GJ_AT_NAN) != 0, p, v, align);
    int k = cls == GJ_NC_SINT ? 0 : cls == GJ_NC_UINT ? 1 : cls == GJ_NC_FLOAT ? 2 : NONE;
    if (k == NONE || rmw_ops[op][k] == NONE)
        return gj_lower_fail(L, "internal: %s has no form for %s", gj_intrinsic_name(call->id),
                             dtype->name);
    return rmw(L, (LLVMAtomicRMWBinOp)rmw_ops[op][k], p, v, align);
}
