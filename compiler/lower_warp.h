/*
 * lower_warp.h - the warp family (lower_warp.c): block and warp
 * collectives and fences (the row's GjCollective, through the target's
 * hook), and the bit operations (the row's GjBitOp).
 */
#ifndef GJ_LOWER_WARP_H
#define GJ_LOWER_WARP_H

#include "lower_base.h"

LLVMValueRef gj_lower_collective(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_bits(GjLower *L, const GjIntrCall *call);

#endif
