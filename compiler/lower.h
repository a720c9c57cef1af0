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
#include "cpuhost.h"

/* Lowers typed f as a kernel named kernel_name into a new module in llctx
   (the caller disposes the module, then the context).  Sets
   plan->needs_fibers, plan->shared_static_bytes and plan->const_bytes. */
GjStatus gj_lower_kernel(GjCtx *c, GjFunc *f, const GjCompileOptions *opt, const char *kernel_name,
                         LLVMContextRef llctx, LLVMModuleRef *mod, GjCompileResult *plan);

/* Links libdevice if needed (r->libdevice: its path, malloc'd), optimises
   (O3) and emits r->ptx (malloc'd) for opt's compute capability; r->llvm_ir
   (malloc'd) gets the optimised IR when opt->want_llvm_ir.  On failure the
   three are NULL. */
GjStatus gj_nvptx_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                       GjCompileResult *r);

/* CPU target: optimises (O3) for the host, emits an object file and loads
   it (gj_cpujit_load) under the name "<r->kernel_name>.<id>" (target_cpu.c's
   wrapper): sets r->cpu_fn (a GjCpuKernelFn), r->cpu_code (the JIT resources
   holding it, gj_cpujit_release), r->cpu_symbol, r->llvm_ir as above, and
   with opt->object_id r->binary (a copy of the object file). */
GjStatus gj_cpujit_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                        GjCompileResult *r);
/* Adds an object file (copied) to the JIT and looks up `symbol` in it: the
   one way code enters the JIT, for a new compile and a cached one alike.
   Objects are shared by symbol: loading one already loaded gives the same
   code and takes a reference; gj_cpujit_release drops it. */
GjStatus gj_cpujit_load(GjCtx *c, const GjCompileOptions *opt, const void *object, size_t size,
                        const char *symbol, void **fn, void **code);
void gj_cpujit_release(void *code);
/* The CPU the JIT compiles for (cpuhost.h): its name, features and vector
   instruction set, and in ->key the triple, CPU name and features (what an
   object file may rely on); NULL, with c->diag set, when there is no JIT
   (an UNSUPPORTED diagnostic when the GPUJIT_CPU_* choice was refused). */
const GjCpuHost *gj_cpujit_host(GjCtx *c);

/* nvptx.c, shared by both back ends: LLVM's verifier, a pass pipeline, and
   the default<On> pipeline, each failing with an INTERNAL diagnostic. */
GjStatus gj_llvm_verify(GjCtx *c, LLVMModuleRef mod, const char *when);
GjStatus gj_llvm_run(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *pipeline);
GjStatus gj_llvm_optimise(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level);
/* The code generator's level for opt_level (clamped to 0..3): None, Less,
   Default, Aggressive; both targets' target machines use it. */
LLVMCodeGenOptLevel gj_llvm_codegen_level(int opt_level);
/* Code generation of mod with tm into a memory buffer, as gj_llvm_emit
   (a gj_llvm_guard function, llvmguard.h) runs it for both back ends. */
typedef struct GjLlvmEmit {
    LLVMTargetMachineRef tm;
    LLVMModuleRef mod;
    LLVMCodeGenFileType kind;      /* LLVMAssemblyFile (PTX) or LLVMObjectFile */
    LLVMBool failed;               /* then `message` says why (LLVMDisposeMessage) */
    char *message;
    LLVMMemoryBufferRef out;
} GjLlvmEmit;
GjStatus gj_llvm_emit(void *emit);

#endif
