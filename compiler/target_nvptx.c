/*
 * target_nvptx.c - the NVPTX target (target.h): what lowering emits that
 * only a CUDA GPU understands.
 *
 * The module is nvptx64-nvidia-cuda with NVPTX's data layout; array data
 * lives in the global address space (1).  The kernel is marked with the PTX
 * kernel calling convention (71), never with nvvm.annotations alone (newer
 * LLVM ignores the metadata on modules built through the C API).  Special
 * registers are llvm.nvvm.read.ptx.sreg.* intrinsics, the barrier is
 * llvm.nvvm.barrier0 (renamed in LLVM 21, so it is looked up), the block
 * and warp collectives are the llvm.nvvm.barrier0.popc/vote/shfl/match
 * intrinsics, fences llvm.nvvm.membar.* (never LLVM's `fence`, which the
 * NVPTX backend of LLVM 19 cannot select), atomics are atomicrmw
 * (atom.global.add...) or atom.inc/dec intrinsics, math functions are
 * libdevice's __nv_* (nvptx.c links them), and shared arrays are globals
 * in the shared address space (3).
 */
#include "target.h"

#include <stdio.h>
#include <string.h>

#include "lower_base.h"

#define NVPTX_DATA_LAYOUT "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"

static void nvptx_init_module(GjLower *L) {
    LLVMSetTarget(L->mod, "nvptx64-nvidia-cuda");
    LLVMSetDataLayout(L->mod, NVPTX_DATA_LAYOUT);
}

static GjStatus nvptx_declare_kernel(GjLower *L, const char *name, LLVMTypeRef *params,
                                     unsigned n) {
    L->fn = LLVMAddFunction(L->mod, name,
                            LLVMFunctionType(LLVMVoidTypeInContext(L->ctx), params, n, 0));
    LLVMSetFunctionCallConv(L->fn, LLVMPTXKernelCallConv);
    return GJ_OK;
}

/* One launch bound, in both forms LLVM has read: an !nvvm.annotations
   entry {kernel, "maxntidx", i32 n} (LLVM 19 and 20) and the function
   attribute "nvvm.maxntid"="n" (LLVM 21 reads only the attribute, and
   upgrades annotations only in modules it parses, not in ours). */
static void launch_bound(GjLower *L, const char *annotation, const char *attribute, int n) {
    char text[16];
    int len = snprintf(text, sizeof text, "%d", n);
    LLVMAddAttributeAtIndex(L->fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(L->ctx, attribute,
                                                      (unsigned)strlen(attribute), text,
                                                      (unsigned)len));
    LLVMMetadataRef md[3] = {
        LLVMValueAsMetadata(L->fn),
        LLVMMDStringInContext2(L->ctx, annotation, strlen(annotation)),
        LLVMValueAsMetadata(LLVMConstInt(L->i32, (unsigned long long)n, 0)),
    };
    LLVMAddNamedMetadataOperand(L->mod, "nvvm.annotations",
                                LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 3)));
}

/* launch_bounds: .maxntid, .minnctapersm, .maxclusterrank (sm_90); and
   max_registers: .maxnreg. */
static GjStatus nvptx_finish_kernel(GjLower *L, const char *name) {
    (void)name;
    const GjCompileOptions *o = L->opt;
    if (o->device)
        return GJ_OK;
    if (o->max_threads > 0)
        launch_bound(L, "maxntidx", "nvvm.maxntid", o->max_threads);
    if (o->min_blocks > 0)
        launch_bound(L, "minctasm", "nvvm.minctasm", o->min_blocks);
    if (o->max_cluster > 0)
        launch_bound(L, "maxclusterrank", "nvvm.maxclusterrank", o->max_cluster);
    if (o->max_registers > 0)
        launch_bound(L, "maxnreg", "nvvm.maxnreg", o->max_registers);
    return GJ_OK;
}

/* llvm.nvvm.read.ptx.sreg.<reg>[.<axis>]: i32. */
static LLVMValueRef nvptx_special_reg(GjLower *L, GjSreg reg, int axis) {
    static const char *const names[GJ_NSREGS] = {
        [GJ_SREG_TID] = "tid",
        [GJ_SREG_NTID] = "ntid",
        [GJ_SREG_CTAID] = "ctaid",
        [GJ_SREG_NCTAID] = "nctaid",
        [GJ_SREG_LANEID] = "laneid",
        [GJ_SREG_WARPSIZE] = "warpsize",
        [GJ_SREG_LANEMASK_LT] = "lanemask.lt",
    };
    char name[48];
    if (reg == GJ_SREG_LANEID || reg == GJ_SREG_WARPSIZE || reg == GJ_SREG_LANEMASK_LT)
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", names[reg]);
    else
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", names[reg], 'x' + axis);
    return gj_lower_call_intrinsic(L, name, NULL, NULL, 0);
}

/* The block barrier: llvm.nvvm.barrier0() until LLVM 20, renamed
   llvm.nvvm.barrier.cta.sync.aligned.all(i32 0) in LLVM 21. */
static LLVMValueRef nvptx_barrier(GjLower *L) {
    static const char old_name[] = "llvm.nvvm.barrier0";
    static const char new_name[] = "llvm.nvvm.barrier.cta.sync.aligned.all";
    if (LLVMLookupIntrinsicID(old_name, sizeof old_name - 1))
        return gj_lower_call_intrinsic(L, old_name, NULL, NULL, 0);
    LLVMValueRef barrier_id = LLVMConstInt(L->i32, 0, 0);
    return gj_lower_call_intrinsic(L, new_name, NULL, &barrier_id, 1);
}

/* The NVVM intrinsic of each collective and its number of operands; the
   predicate of barrier0.popc/and/or is an i32, a shuffle's name is that of
   its 32-bit half, and match's is made from the value's width. */
static const struct {
    const char *name;
    unsigned nargs;
} nvvm[] = {
    [GJ_COLL_SYNC_COUNT] = {"llvm.nvvm.barrier0.popc", 1},
    [GJ_COLL_SYNC_AND] = {"llvm.nvvm.barrier0.and", 1},
    [GJ_COLL_SYNC_OR] = {"llvm.nvvm.barrier0.or", 1},
    [GJ_COLL_SYNCWARP] = {"llvm.nvvm.bar.warp.sync", 1},
    [GJ_COLL_FENCE_BLOCK] = {"llvm.nvvm.membar.cta", 0},
    [GJ_COLL_FENCE] = {"llvm.nvvm.membar.gl", 0},
    [GJ_COLL_FENCE_SYSTEM] = {"llvm.nvvm.membar.sys", 0},
    [GJ_COLL_SHFL_IDX] = {"llvm.nvvm.shfl.sync.idx.i32", 4},
    [GJ_COLL_SHFL_UP] = {"llvm.nvvm.shfl.sync.up.i32", 4},
    [GJ_COLL_SHFL_DOWN] = {"llvm.nvvm.shfl.sync.down.i32", 4},
    [GJ_COLL_SHFL_XOR] = {"llvm.nvvm.shfl.sync.bfly.i32", 4},
    [GJ_COLL_VOTE_ALL] = {"llvm.nvvm.vote.all.sync", 2},
    [GJ_COLL_VOTE_ANY] = {"llvm.nvvm.vote.any.sync", 2},
    [GJ_COLL_VOTE_EQ] = {"llvm.nvvm.vote.uni.sync", 2},
    [GJ_COLL_BALLOT] = {"llvm.nvvm.vote.ballot.sync", 2},
    [GJ_COLL_MATCH_ANY] = {"llvm.nvvm.match.any.sync", 2},
    [GJ_COLL_MATCH_ALL] = {"llvm.nvvm.match.all.sync", 2},
    [GJ_COLL_ACTIVEMASK] = {"llvm.nvvm.activemask", 0},
};

/* A shuffle (mask, bits, b, width) with CUDA's c for a section of `width`
   lanes: (32 - width) << 8, or'ed with the clamp 0x1f except for up.  A
   64-bit value goes as its two 32-bit halves. */
static LLVMValueRef nvptx_shfl(GjLower *L, GjCollective op, LLVMValueRef *a) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef c = LLVMBuildShl(b, LLVMBuildSub(b, LLVMConstInt(L->i32, 32, 0), a[3], ""),
                                  LLVMConstInt(L->i32, 8, 0), "");
    if (op != GJ_COLL_SHFL_UP)
        c = LLVMBuildOr(b, c, LLVMConstInt(L->i32, 0x1f, 0), "");
    int wide = LLVMGetIntTypeWidth(LLVMTypeOf(a[1])) == 64;
    LLVMValueRef half[2] = {a[1], NULL};
    if (wide) {
        half[0] = LLVMBuildTrunc(b, a[1], L->i32, "");
        half[1] =
            LLVMBuildTrunc(b, LLVMBuildLShr(b, a[1], LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
    }
    for (int k = 0; k <= wide; k++) {
        LLVMValueRef args[4] = {a[0], half[k], a[2], c};
        if (!(half[k] = gj_lower_call_intrinsic(L, nvvm[op].name, NULL, args, 4)))
            return NULL;
    }
    if (!wide)
        return half[0];
    LLVMValueRef hi =
        LLVMBuildShl(b, LLVMBuildZExt(b, half[1], L->i64, ""), LLVMConstInt(L->i64, 32, 0), "");
    return LLVMBuildOr(b, LLVMBuildZExt(b, half[0], L->i64, ""), hi, "");
}

/* llvm.nvvm.match.{any,all}.sync.{i32,i64}[p](mask, bits); all's gives
   {mask, pred}. */
static LLVMValueRef nvptx_match(GjLower *L, GjCollective op, LLVMValueRef *a, LLVMValueRef *pred) {
    char name[40];
    snprintf(name, sizeof name, "%s.i%u%s", nvvm[op].name, LLVMGetIntTypeWidth(LLVMTypeOf(a[1])),
             op == GJ_COLL_MATCH_ALL ? "p" : "");
    LLVMValueRef r = gj_lower_call_intrinsic(L, name, NULL, a, 2);
    if (!r || op != GJ_COLL_MATCH_ALL)
        return r;
    *pred = LLVMBuildExtractValue(L->b, r, 1, "");
    return LLVMBuildExtractValue(L->b, r, 0, "");
}

static LLVMValueRef nvptx_collective(GjLower *L, GjCollective op, LLVMValueRef *a,
                                     LLVMValueRef *pred) {
    LLVMValueRef args[4] = {a[0], a[1], a[2], a[3]};
    switch (op) {
    case GJ_COLL_SYNC_COUNT:
    case GJ_COLL_SYNC_AND:
    case GJ_COLL_SYNC_OR: args[0] = LLVMBuildZExt(L->b, a[0], L->i32, ""); break;
    case GJ_COLL_SHFL_IDX:
    case GJ_COLL_SHFL_UP:
    case GJ_COLL_SHFL_DOWN:
    case GJ_COLL_SHFL_XOR: return nvptx_shfl(L, op, a);
    case GJ_COLL_MATCH_ANY:
    case GJ_COLL_MATCH_ALL: return nvptx_match(L, op, a, pred);
    case GJ_COLL_SYNCWARP:
    case GJ_COLL_FENCE_BLOCK:
    case GJ_COLL_FENCE:
    case GJ_COLL_FENCE_SYSTEM:
    case GJ_COLL_VOTE_ALL:
    case GJ_COLL_VOTE_ANY:
    case GJ_COLL_VOTE_EQ:
    case GJ_COLL_BALLOT:
    case GJ_COLL_ACTIVEMASK: break;
    }
    return gj_lower_call_intrinsic(L, nvvm[op].name, NULL, args, nvvm[op].nargs);
}

/* libdevice: __nv_<base> (double), __nv_<base>f (float); fast, the float
   functions libdevice has a __nv_fast_<base>f of (sin.approx.f32,
   cos.approx.f32, ex2.approx, lg2.approx underneath), the ones numba-cuda's
   fastmath uses. */
static void nvptx_math_name(char *buf, size_t len, const char *base, int is_double, int fast) {
    static const char *const fast_fns[] = {"cos",  "exp", "log", "log10",
                                           "log2", "pow", "sin", "tan"};
    for (size_t k = 0; fast && !is_double && k < sizeof fast_fns / sizeof fast_fns[0]; k++)
        if (strcmp(base, fast_fns[k]) == 0) {
            snprintf(buf, len, "__nv_fast_%sf", base);
            return;
        }
    snprintf(buf, len, "__nv_%s%s", base, is_double ? "" : "f");
}

/* div.approx.f32 and sqrt.approx.f32 (.ftz) through their NVVM intrinsics;
   tanh.approx.f32 (sm_75+) as inline PTX, as numba-cuda emits it, since
   LLVM 19 has no intrinsic for it. */
static LLVMValueRef nvptx_approx(GjLower *L, GjApprox op, LLVMValueRef *args, int ftz) {
    switch (op) {
    case GJ_APPROX_DIV:
        return gj_lower_call_intrinsic(
            L, ftz ? "llvm.nvvm.div.approx.ftz.f" : "llvm.nvvm.div.approx.f", NULL, args, 2);
    case GJ_APPROX_SQRT:
        return gj_lower_call_intrinsic(
            L, ftz ? "llvm.nvvm.sqrt.approx.ftz.f" : "llvm.nvvm.sqrt.approx.f", NULL, args, 1);
    case GJ_APPROX_TANH: {
        if (L->opt->cc_major * 10 + L->opt->cc_minor < 75)
            return NULL;
        static const char text[] = "tanh.approx.f32 $0, $1;", constraints[] = "=f,f";
        LLVMTypeRef f32 = LLVMFloatTypeInContext(L->ctx);
        LLVMTypeRef fty = LLVMFunctionType(f32, &f32, 1, 0);
        LLVMValueRef asm_ =
            LLVMGetInlineAsm(fty, text, sizeof text - 1, constraints, sizeof constraints - 1, 0, 0,
                             LLVMInlineAsmDialectATT, 0);
        return LLVMBuildCall2(L->b, fty, asm_, args, 1, "");
    }
    }
    return NULL;
}

/* PTX's atom.<op>.<type>; relaxed at gpu scope is what atom means without
   qualifiers, and LLVM 19 emits no other.  A 32-bit inc/dec goes through
   llvm.nvvm.atomic.load.inc/dec.32 (atom.inc.u32, atom.dec.u32) while LLVM
   has them: newer versions upgrade the intrinsics to the atomicrmw itself. */
static LLVMValueRef nvptx_atomic_rmw(GjLower *L, LLVMAtomicRMWBinOp op, LLVMValueRef p,
                                     LLVMValueRef v) {
    static const char inc[] = "llvm.nvvm.atomic.load.inc.32";
    static const char dec[] = "llvm.nvvm.atomic.load.dec.32";
    const char *name = op == LLVMAtomicRMWBinOpUIncWrap   ? inc
                       : op == LLVMAtomicRMWBinOpUDecWrap ? dec
                                                          : NULL;
    if (name && LLVMTypeOf(v) == L->i32 && LLVMLookupIntrinsicID(name, sizeof inc - 1)) {
        LLVMValueRef args[2] = {p, v};
        return gj_lower_call_intrinsic(L, name, LLVMTypeOf(p), args, 2);
    }
    return LLVMBuildAtomicRMW(L->b, op, p, v, LLVMAtomicOrderingMonotonic, 0);
}

/* Static shared arrays are module globals of their own in the shared
   address space: `.shared .align 16 .b8 gj_$_shared_$_<offset>[bytes]`, left
   undefined (CUDA does not clear shared memory). */
static LLVMValueRef nvptx_shared_static(GjLower *L, uint64_t offset, uint64_t bytes) {
    char name[48];
    snprintf(name, sizeof name, "gj.shared.%llu", (unsigned long long)offset);
    LLVMTypeRef ty = LLVMArrayType2(L->i8, bytes);
    LLVMValueRef g =
        LLVMAddGlobalInAddressSpace(L->mod, ty, name, L->target->addrspace[GJ_AS_SHARED]);
    LLVMSetInitializer(g, LLVMGetUndef(ty));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 16);
    return g;
}

/* Dynamic shared memory is one external array of unknown size,
   `.extern .shared .align 16 .b8 gj$shared_dynamic[]`, that every
   dynamic array of the module starts at (they alias, as in CUDA and
   numba); its size is the register %dynamic_smem_size, which LLVM 19 has
   no intrinsic for, so it is read with inline PTX (as numba does). */
static LLVMValueRef nvptx_shared_dynamic(GjLower *L, LLVMValueRef *bytes) {
    static const char name[] = "gj$shared_dynamic";   /* external: a '$' (symbol.h) */
    static const char text[] = "mov.u32 $0, %dynamic_smem_size;", constraints[] = "=r";
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, name);
    if (!g) {
        g = LLVMAddGlobalInAddressSpace(L->mod, LLVMArrayType2(L->i8, 0), name,
                                        L->target->addrspace[GJ_AS_SHARED]);
        LLVMSetAlignment(g, 16);
    }
    LLVMTypeRef fty = LLVMFunctionType(L->i32, NULL, 0, 0);
    LLVMValueRef read = LLVMGetInlineAsm(fty, text, sizeof text - 1, constraints,
                                         sizeof constraints - 1, 0, 0, LLVMInlineAsmDialectATT, 0);
    *bytes = LLVMBuildZExt(L->b, LLVMBuildCall2(L->b, fty, read, NULL, 0, ""), L->i64, "");
    return g;
}

/* The error record is one global of the module, `.visible .global
   .align 8 .b8 gj$error[72]`, zero at load; the host finds it by name
   (cuModuleGetGlobal), reads it after a launch and clears it. */
static LLVMValueRef nvptx_error_record(GjLower *L) {
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, GJ_ERROR_RECORD_SYMBOL);
    if (!g) {
        LLVMTypeRef ty = LLVMArrayType2(L->i64, GJ_ERROR_RECORD_WORDS);
        g = LLVMAddGlobalInAddressSpace(L->mod, ty, GJ_ERROR_RECORD_SYMBOL,
                                        L->target->addrspace[GJ_AS_GLOBAL]);
        LLVMSetInitializer(g, LLVMConstNull(ty));
        LLVMSetAlignment(g, 8);
    }
    return g;
}

const GjTarget gj_target_nvptx = {
    .name = "nvptx",
    .addrspace = {[GJ_AS_GLOBAL] = 1, [GJ_AS_SHARED] = 3, [GJ_AS_LOCAL] = 5, [GJ_AS_CONST] = 4},
    .thread_params = 0,
    .init_module = nvptx_init_module,
    .declare_kernel = nvptx_declare_kernel,
    .finish_kernel = nvptx_finish_kernel,
    .special_reg = nvptx_special_reg,
    .barrier = nvptx_barrier,
    .vprintf_name = "vprintf",   /* CUDA's, linked by the driver's PTX JIT (grep tag
                                    GJ_SYMBOL_NAMES: no C ABI name may be it) */
    .collective = nvptx_collective,
    .math_name = nvptx_math_name,
    .approx = nvptx_approx,
    .atomic_rmw = nvptx_atomic_rmw,
    .shared_static = nvptx_shared_static,
    .shared_dynamic = nvptx_shared_dynamic,
    .error_record = nvptx_error_record,
};

const GjTarget *gj_target_of(GjTargetKind kind) {
    switch (kind) {
    case GJ_TARGET_CPU: return &gj_target_cpu;
    case GJ_TARGET_NVPTX: return &gj_target_nvptx;
    }
    return &gj_target_nvptx;
}
