/*
 * lower_iter.h - iterators (lower_iter.c): the IR's GET_ITER, ITER_VALID,
 * ITER_VALUE and ITER_NEXT on an iterator of type itt (GET_ITER makes one
 * of type rt from a range, tuple, array or iterator), and the iterator
 * family of intrinsics: zip, enumerate, and the operator module's
 * functions (lowered as the operators they name).
 *
 * An iterator is a small struct value (lower_base.c's gj_lower_type),
 * advanced by making a new one, so it lives in an IR variable.
 */
#ifndef GJ_LOWER_ITER_H
#define GJ_LOWER_ITER_H

#include "lower_base.h"

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

#endif
