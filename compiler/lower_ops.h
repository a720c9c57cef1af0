/*
 * lower_ops.h - Python's operators on LLVM values (lower_ops.c): the IR's
 * BINOP, UNOP and COMPARE, a tuple's item at a run-time index, and the
 * numeric builtins abs, min and max.
 *
 * Input: values in lower_base.h's representation with their types, and the
 * type inference chose for the result.  Output: the result value, or NULL
 * with a LOWERING diagnostic.  NumPy 2's semantics, by numeric class.
 */
#ifndef GJ_LOWER_OPS_H
#define GJ_LOWER_OPS_H

#include "lower_base.h"

/* a <op> b with Python/NumPy semantics; operands are converted to rt, the
   result type inference chose. */
LLVMValueRef gj_lower_binop(GjLower *L, GjBinop op, LLVMValueRef a, const GjType *ta,
                            LLVMValueRef b, const GjType *tb, const GjType *rt);
LLVMValueRef gj_lower_unop(GjLower *L, GjUnop op, LLVMValueRef a, const GjType *ta,
                           const GjType *rt);
/* a <k> b compared in the promoted type of ta and tb; result i1. */
LLVMValueRef gj_lower_compare(GjLower *L, GjCmp k, LLVMValueRef a, const GjType *ta, LLVMValueRef b,
                              const GjType *tb);
/* Float a ** b (both of one float type): the math library's pow, exact
   where b is an integer and the exact power is a float. */
LLVMValueRef gj_lower_float_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b);

/* Item i (an i64 in [-n, n)) of tuple tup of type tt, as rt. */
LLVMValueRef gj_lower_tuple_item(GjLower *L, LLVMValueRef tup, const GjType *tt, LLVMValueRef i,
                                 const GjType *rt);

/* Builtins on values already converted to t. */
LLVMValueRef gj_lower_abs(GjLower *L, LLVMValueRef a, const GjType *t);
LLVMValueRef gj_lower_minmax(GjLower *L, int is_max, LLVMValueRef a, LLVMValueRef b,
                             const GjType *t);

#endif
