/*
 * narrow.h - loops whose 64-bit counter fits in 32 bits, versioned to run
 * with a 32-bit one (narrow.c).
 */
#ifndef GJ_NARROW_H
#define GJ_NARROW_H

#include <llvm-c/Core.h>

/* In every function of mod (optimised), each loop with an i64 counter
   stepping by 1 against a loop-invariant bound gets a copy that counts in
   i32, entered when the start and the bound fit in 32 bits; the original
   runs otherwise.  Returns the number of loops versioned.  Run after the
   last optimisation pass (nothing after it must widen the counter again). */
int gj_narrow_loop_counters(LLVMModuleRef mod);

#endif
