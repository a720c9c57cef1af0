/*
 * nvptx_fix.h - rewrites of an optimised NVPTX module that steer LLVM 19's
 * NVPTX backend and ptxas away from instructions they miscompile.
 */
#ifndef GJ_NVPTX_FIX_H
#define GJ_NVPTX_FIX_H

#include <llvm-c/Core.h>

/* Rewrites, in every function of mod (optimised, about to be emitted), what
   nvptx_fix.c lists; the result computes the same values.  Run it after the
   last optimisation pass: InstCombine would undo it. */
void gj_nvptx_fix_module(LLVMModuleRef mod);

#endif
