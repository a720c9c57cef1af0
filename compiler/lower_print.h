/*
 * lower_print.h - print (lower_print.c): a call of print in a kernel
 * becomes one formatted write through the target's printf hook (target.h).
 */
#ifndef GJ_LOWER_PRINT_H
#define GJ_LOWER_PRINT_H

#include "lower_base.h"

LLVMValueRef gj_lower_print(GjLower *L, const GjIntrCall *call);

#endif
