/*
 * lower_warp.h - the warp family (lower_warp.c): block and warp
 * collectives and memory fences (the row's GjCollective, lowered by the
 * target's `collective` hook, target.h) and the bit operations popc, brev,
 * clz, ffs, fma, cbrt, selp (the row's GjBitOp, alike on every target).
 *
 * Output: the call's value in the type typing chose; values cross the
 * hooks as their bits (i32 or i64), masks and lanes as i32.
 */
#ifndef GJ_LOWER_WARP_H
#define GJ_LOWER_WARP_H

#include "lower_base.h"

LLVMValueRef gj_lower_collective(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_bits(GjLower *L, const GjIntrCall *call);

#endif
