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

/* ptx (malloc'd, freed here) with every neg.s16 and abs.s16 written as not
   and add 1: a malloc'd string, or NULL when out of memory. */
char *gj_nvptx_fix_ptx(char *ptx);

#endif
