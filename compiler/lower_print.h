/*
 * lower_print.h - print (lower_print.c), the print family's one function.
 *
 * Input: a call of print whose arguments are real scalars, None and str
 * constants (typing refused the rest).  Output: one formatted write, the
 * whole line at once, through the target's printf hook (target.h: CUDA's
 * vprintf, or the CPU runtime's); the function's value is None.
 */
#ifndef GJ_LOWER_PRINT_H
#define GJ_LOWER_PRINT_H

#include "lower_base.h"

LLVMValueRef gj_lower_print(GjLower *L, const GjIntrCall *call);

#endif
