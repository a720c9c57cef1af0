/*
 * lower_cmath.h - complex numbers (lower_cmath.c): the kernel's arithmetic
 * on them and the complex versions of the math table's functions.
 *
 * Input: {re, im} values (lower_base.h) whose parts share one float type.
 * Output: values of the same type (i1 for the predicates).  The arithmetic
 * contracts as the kernel's real arithmetic does; the functions are library
 * code, with fastmath's flags only.
 */
#ifndef GJ_LOWER_CMATH_H
#define GJ_LOWER_CMATH_H

#include "lower_base.h"

/* Complex a <op> b for + - * / ** (NumPy's formulas; NULL for other ops). */
LLVMValueRef gj_lower_complex_binop(GjLower *L, GjBinop op, LLVMValueRef a, LLVMValueRef b);
/* Math row fn (one with a cmath name, or isnan/isinf/isfinite) of complex z;
   a LOWERING diagnostic for any other. */
LLVMValueRef gj_lower_complex_fn(GjLower *L, GjMathFn fn, LLVMValueRef z);
/* isnan / isinf / isfinite (fn) of a float value, as i1. */
LLVMValueRef gj_lower_float_pred(GjLower *L, GjMathFn fn, LLVMValueRef x);

#endif
