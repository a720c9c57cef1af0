/*
 * lower_math.h - the math family of intrinsics (lower_math.c): the math,
 * numpy and cmath functions of the math table (complex arguments through
 * lower_cmath.h), the numeric builtins (range, abs, min, max, len, int,
 * float, bool, round, pow, divmod, complex), NumPy scalar constructors and
 * number methods (z.conjugate()).
 *
 * Input: a GjIntrCall whose arguments typing promoted; output: the value
 * of the call's type.
 */
#ifndef GJ_LOWER_MATH_H
#define GJ_LOWER_MATH_H

#include "lower_base.h"

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
LLVMValueRef gj_lower_math_fn(GjLower *L, const GjIntrCall *call);   /* a GJ_MATH_FUNCS row */

#endif
