/*
 * vectorize.h - whole-function vectorisation of a CPU kernel's body across
 * the threads of a block's row (vectorize.c), for bodies with loops of their
 * own, which LLVM's loop vectoriser leaves scalar (it takes innermost loops
 * only, and the thread loop is not one).
 */
#ifndef GJ_VECTORIZE_H
#define GJ_VECTORIZE_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "gj.h"

/* The row's name: the kernel's name and this suffix. */
#define GJ_CPU_ROW_SUFFIX ".row"

/* row is the CPU target's row function (target_cpu.c), "<kernel>.row":
   an internal void row(A..., i32 count, B...) whose one loop calls
   body(A..., x, B...) for x = 0 .. count - 1 (count >= 1), both
   alwaysinline.  When the body, with the functions it calls inlined, has a
   loop and vectorize.c takes every instruction of it, row is replaced by one
   that calls body.v<width>(A..., <width x i32> x, B..., <width x i1> active)
   for width threads at a time; else the module keeps the scalar body (its
   callees then inlined).  GJ_ERR (an INTERNAL diagnostic) only when an LLVM
   pass pipeline fails. */
GjStatus gj_vec_row(GjCtx *c, LLVMModuleRef mod, LLVMValueRef row, LLVMTargetMachineRef tm,
                    unsigned width);

/* Marks the loop whose latch branch is `latch` (the branch back to its
   header) llvm.loop.unroll.disable (target_cpu.c).  A loop over threads is
   never unrolled: the loop vectoriser's interleaving already gives its SIMD
   body the independent work unrolling would, and unrolled copies of a
   vector body with its masks and overlap checks tripled a small kernel's
   machine code (emitting it took 20 ms instead of 8 on a 2-core EPYC). */
void gj_cpu_loop_no_unroll(LLVMValueRef latch);

#endif
