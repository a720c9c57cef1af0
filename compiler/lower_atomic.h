/*
 * lower_atomic.h - the atomics family (lower_atomic.c): every
 * gpujit.atomic row, the row's sub saying which operation and dtypes.
 */
#ifndef GJ_LOWER_ATOMIC_H
#define GJ_LOWER_ATOMIC_H

#include "lower_base.h"

LLVMValueRef gj_lower_atomic(GjLower *L, const GjIntrCall *call);

#endif
