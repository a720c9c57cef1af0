/*
 * lower_atomic.h - the atomics family (lower_atomic.c): every
 * gpujit.atomic row lowers through one function, the row's sub saying
 * which operation (GjAtomicOp) and which dtypes typing accepted.
 *
 * Input: (array, index, value...) with the index checked under boundscheck
 * (the call's subject).  Output: the old value, of the array's dtype.
 */
#ifndef GJ_LOWER_ATOMIC_H
#define GJ_LOWER_ATOMIC_H

#include "lower_base.h"

LLVMValueRef gj_lower_atomic(GjLower *L, const GjIntrCall *call);

#endif
