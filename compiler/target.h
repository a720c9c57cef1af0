/*
 * target.h - the seam between lowering (lower.c, lower_base.c) and the
 * machine the kernel runs on.  Everything in the generated code that
 * differs between a GPU and the host CPU goes through one GjTarget:
 *
 *   - the module's triple and data layout, and the LLVM address space of
 *     each GjAddrSpace (NVPTX global 1, shared 3, const 4, local 5; host 0);
 *   - the kernel's calling convention and signature (a PTX .entry, or an
 *     internal body plus a wrapper with runtime/cpuexec.h's ABI);
 *   - the special registers (GjSreg: thread/block index and extents per
 *     axis, lane, warp size);
 *   - the block barrier, and the block and warp collectives and memory
 *     fences (GjCollective: syncthreads_count, shuffles, votes, ...);
 *   - the device-side printf (CUDA's vprintf, or the runtime's);
 *   - atomic read-modify-write instructions;
 *   - where shared memory lives (module globals, or the CPU block's buffer);
 *   - the names of math library functions (libdevice's __nv_sinf, libm's
 *     sinf), and their fast approximate variants under fastmath's afn
 *     (__nv_fast_sinf);
 *   - approximate float32 instructions under fastmath (div.approx.f32,
 *     sqrt.approx.f32, tanh.approx.f32), where the target has them;
 *   - where the error record of debug builds lives (a module global, or
 *     the CPU launch's).
 *
 * lower.c never asks which target it lowers for; it calls these hooks.
 * target_nvptx.c and target_cpu.c implement them.
 */
#ifndef GJ_TARGET_H
#define GJ_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "compile.h"
#include "intrinsics.h"
#include "types.h"

typedef struct GjLower GjLower;

#define GJ_THREAD_PARAMS 4   /* most trailing thread-context parameters (thread_params) */

/* float32 operations a target may have a fast approximate instruction for,
   used under fastmath's arcp (division) and afn (the functions). */
typedef enum GjApprox {
    GJ_APPROX_DIV,     /* a / b: div.approx.f32 (2 ulp for |b| in [2**-126, 2**126]) */
    GJ_APPROX_SQRT,    /* sqrt(a): sqrt.approx.f32 */
    GJ_APPROX_TANH,    /* tanh(a): tanh.approx.f32 (sm_75 and later) */
} GjApprox;

typedef struct GjTarget {
    const char *name;            /* "nvptx", "cpu" */
    unsigned addrspace[GJ_NADDRSPACES];   /* LLVM address space of each GjAddrSpace */
    /* How many trailing parameters carry the thread's context in every kernel
       body and device function (L->thread[0..n), at most GJ_THREAD_PARAMS;
       the CPU: its GjCpuThread * and threadIdx.x/y/z as values), and their
       types (thread_types fills n); 0 if special registers and barriers need
       none. */
    unsigned thread_params;
    void (*thread_types)(GjLower *L, LLVMTypeRef *types);
    /* Sets the new module's triple and data layout. */
    void (*init_module)(GjLower *L);
    /* Adds the kernel (with params[0..n) per compile.h's ABI) to L->mod and
       sets L->fn; the target may append parameters of its own. */
    GjStatus (*declare_kernel)(GjLower *L, const char *name, LLVMTypeRef *params, unsigned n);
    /* After the body is lowered (L->needs_fibers is final): entry wrappers
       and the like. */
    GjStatus (*finish_kernel)(GjLower *L, const char *name);
    /* Special register `reg` along `axis` (0..2) as an i32, or NULL with a
       diag when the target has no such register. */
    LLVMValueRef (*special_reg)(GjLower *L, GjSreg reg, int axis);
    /* __syncthreads(); returns the call (non-NULL) or NULL with a diag. */
    LLVMValueRef (*barrier)(GjLower *L);
    /* The device-side printf, int32 name(ptr format, ptr args) with CUDA's
       vprintf ABI (lower_print.c): "vprintf", or runtime/cpuexec.h's. */
    const char *vprintf_name;
    /* atomicrmw `op` of v at p (an array element in any address space),
       relaxed, at the target's widest scope; returns the old value.  NVPTX
       calls atom.inc/atom.dec for 32-bit uinc_wrap/udec_wrap, which LLVM 19
       would otherwise expand to a compare-and-swap loop. */
    LLVMValueRef (*atomic_rmw)(GjLower *L, LLVMAtomicRMWBinOp op, LLVMValueRef p, LLVMValueRef v);
    /* Collective op on args (intrinsics.h's GjCollective gives their number
       and LLVM types, and the result's); MATCH_ALL also sets *pred (i1).
       NULL with a diag when the target cannot. */
    LLVMValueRef (*collective)(GjLower *L, GjCollective op, LLVMValueRef *args, LLVMValueRef *pred);
    /* The math library's name for function `base` ("sin", "pow", "fmod")
       on float (is_double 0) or double arguments, into buf; with `fast`
       (fastmath's afn), the library's fast approximate variant where it has
       one (libdevice's __nv_fast_sinf), else the accurate function. */
    void (*math_name)(char *buf, size_t len, const char *base, int is_double, int fast);
    /* The approximate instruction for float32 op on args (one or two), with
       denormals flushed to zero when ftz; NULL (and no diag) where the
       target has none, for the caller to emit the IEEE operation.  NULL
       hook: the target has no approximate instructions. */
    LLVMValueRef (*approx)(GjLower *L, GjApprox op, LLVMValueRef *args, int ftz);
    /* The address of `bytes` bytes at `offset` in the block's static shared
       memory (lower_array.c lays it out), in the shared address space. */
    LLVMValueRef (*shared_static)(GjLower *L, uint64_t offset, uint64_t bytes);
    /* The address of the block's dynamic shared memory (sized by the
       launch), and its size in bytes as an i64 in *bytes. */
    LLVMValueRef (*shared_dynamic)(GjLower *L, LLVMValueRef *bytes);
    /* The address of the launch's error record (compile.h), in the global
       address space. */
    LLVMValueRef (*error_record)(GjLower *L);
} GjTarget;

extern const GjTarget gj_target_nvptx;
extern const GjTarget gj_target_cpu;

/* The target for compile options' target selector. */
const GjTarget *gj_target_of(GjTargetKind kind);

#endif
