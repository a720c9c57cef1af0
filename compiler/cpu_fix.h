/*
 * cpu_fix.h - the last rewrite of a CPU-target module before code
 * generation (cpu_fix.c says what and why).
 */
#ifndef GJ_CPU_FIX_H
#define GJ_CPU_FIX_H

#include <llvm-c/Core.h>

/* Puts each masked load, store, gather and scatter of the optimised module
   behind a branch that skips it when its mask has no lane set (with
   `plain_when_full`, a contiguous load or store first behind one that runs
   a plain load or store when every lane is set), and moves the products
   those branches parted from their adds back next to them. */
void gj_cpu_fix_module(LLVMModuleRef mod, int plain_when_full);

#endif
