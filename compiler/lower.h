/*
 * lower.h - the last two stages of the pipeline: typed IR -> LLVM module
 * (lower.c, for the target of target.h) and LLVM module -> PTX (nvptx.c)
 * or -> host machine code in the JIT (cpujit.c).  compile.c calls them in that
 * order; both record a LOWERING (or INTERNAL) diagnostic in the context on
 * failure and return GJ_ERR.
 */
#ifndef GJ_LOWER_H
#define GJ_LOWER_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "ir.h"
#include "compile.h"

/* Lowers typed f as a kernel named kernel_name into a new module in llctx
   (the caller disposes the module, then the context).  Sets
   plan->needs_fibers and plan->shared_static_bytes. */
GjStatus gj_lower_kernel(GjCtx *c, GjFunc *f, const GjCompileOptions *opt, const char *kernel_name,
                         LLVMContextRef llctx, LLVMModuleRef *mod, GjCompileResult *plan);

/* Links libdevice if needed, optimises (O3) and emits PTX (malloc'd) for opt's
   compute capability; *llvm_ir (malloc'd) gets the optimised IR when
   opt->want_llvm_ir, else NULL. */
GjStatus gj_nvptx_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt, char **ptx,
                       char **llvm_ir);

/* CPU target: optimises (O3) for the host, JIT-compiles and looks up the
   kernel's wrapper (target_cpu.c): *fn is a GjCpuKernelFn, *code the JIT
   resources holding it (gj_cpujit_release).  *llvm_ir as above. */
GjStatus gj_cpujit_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                        const char *kernel_name, void **fn, void **code, char **llvm_ir);
void gj_cpujit_release(void *code);

/* nvptx.c, shared by both back ends: LLVM's verifier, and the default<On>
   pipeline, each failing with an INTERNAL diagnostic. */
GjStatus gj_llvm_verify(GjCtx *c, LLVMModuleRef mod, const char *when);
GjStatus gj_llvm_optimise(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level);

#endif
