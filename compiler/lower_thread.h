/*
 * lower_thread.h - the thread-indexing family (lower_thread.c): grid,
 * gridsize, the dim3 registers (threadIdx.x & co), laneid, warpsize,
 * lanemask_lt, and the block barrier.
 *
 * Registers come from the target's sreg hook (target.h) as i32 and leave
 * as int64 values with their CUDA ranges, so indices never wrap past 2^31
 * threads and LLVM still sees 32-bit arithmetic.
 */
#ifndef GJ_LOWER_THREAD_H
#define GJ_LOWER_THREAD_H

#include "lower_base.h"

LLVMValueRef gj_lower_grid(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_syncthreads(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_sreg(GjLower *L, const GjIntrCall *call);   /* laneid: row's GjSreg */
/* threadIdx.x & co: register of dim3 intrinsic `dim3` along axis 0..2, as rt */
LLVMValueRef gj_lower_dim3_attr(GjLower *L, int dim3, int axis, const GjType *rt);

#endif
