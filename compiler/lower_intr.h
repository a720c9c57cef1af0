/*
 * lower_intr.h - the lowering functions of intrinsic calls, one family per
 * file, each named by the rows of intrinsics.h.  lower.c builds a
 * GjIntrCall (arguments in positional order, keyword arguments already
 * placed by the row's parameter names) and calls row->lower; nothing else
 * dispatches on which intrinsic it is.
 *
 *   lower_thread.c   thread indexing (grid, gridsize, dim3 registers), barrier
 *   lower_math.c     builtins and math/numpy/cmath functions
 *   lower_array.c    arrays and memory spaces
 *   lower_print.c    print
 *   lower_atomic.c   atomics
 *   lower_warp.c     block and warp collectives, fences, bit operations
 *   lower_iter.c     iterators, zip, enumerate; the operator module
 */
#ifndef GJ_LOWER_INTR_H
#define GJ_LOWER_INTR_H

#include <llvm-c/Core.h>

#include "intrinsics.h"
#include "types.h"

typedef struct GjLower GjLower;

typedef struct GjIntrCall {
    GjIntrinsic id;
    const GjIntrinsicRow *row;
    LLVMValueRef *v;         /* v[0] is the first argument (not the callee); for a
                                method, the receiver comes first */
    const GjType **t;
    int n;
    const GjType *rt;        /* the call's type (typeinfer.c) */
    const char *subject;     /* under boundscheck, what the first argument names for an
                                IndexError ("array 'a'": atomics); else NULL */
} GjIntrCall;

/* lower_thread.c */
LLVMValueRef gj_lower_grid(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_syncthreads(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_sreg(GjLower *L, const GjIntrCall *call);   /* laneid: row's GjSreg */
/* threadIdx.x & co: register of dim3 intrinsic `dim3` along axis 0..2, as rt */
LLVMValueRef gj_lower_dim3_attr(GjLower *L, int dim3, int axis, const GjType *rt);

/* lower_math.c */
LLVMValueRef gj_lower_range(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_abs_call(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_minmax_call(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_len(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_convert(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_round(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_pow(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_divmod(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_complex_ctor(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_part(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_conjugate(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_phase(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_polar(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_rect(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_math_fn(GjLower *L, const GjIntrCall *call);

/* lower_iter.c: the IR's iterator ops on an iterator of type itt
   (GET_ITER makes one of type rt from a range, tuple, array or iterator) */
LLVMValueRef gj_lower_iter_get(GjLower *L, LLVMValueRef v, const GjType *t, const GjType *rt);
LLVMValueRef gj_lower_iter_valid(GjLower *L, LLVMValueRef it, const GjType *itt);
/* An i1 true of a valid iterator's value that its count hides from LLVM (a
   range's `cur < stop` for a positive step), for an llvm.assume where
   ITER_VALID holds; NULL when there is none. */
LLVMValueRef gj_lower_iter_facts(GjLower *L, LLVMValueRef it, const GjType *itt);
LLVMValueRef gj_lower_iter_value(GjLower *L, LLVMValueRef it, const GjType *itt, const GjType *rt);
LLVMValueRef gj_lower_iter_next(GjLower *L, LLVMValueRef it, const GjType *itt);
LLVMValueRef gj_lower_zip(GjLower *L, const GjIntrCall *call);        /* zip, enumerate */
LLVMValueRef gj_lower_operator(GjLower *L, const GjIntrCall *call);   /* operator.add ... */

/* lower_print.c */
LLVMValueRef gj_lower_print(GjLower *L, const GjIntrCall *call);

/* lower_atomic.c: every gpujit.atomic row (its sub says which) */
LLVMValueRef gj_lower_atomic(GjLower *L, const GjIntrCall *call);

/* lower_array.c */
LLVMValueRef gj_lower_memory_array(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_const_array_like(GjLower *L, const GjIntrCall *call);

/* lower_warp.c: the row's GjCollective, or its GjBitOp */
LLVMValueRef gj_lower_collective(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_bits(GjLower *L, const GjIntrCall *call);

#endif
