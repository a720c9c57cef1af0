/*
 * target_cpu.c - the host-CPU target (target.h): what lowering emits for a
 * kernel that runs on the host through runtime/cpuexec.h.
 *
 * The module has the host's triple (cpujit.c sets the data layout of its
 * target machine); array data is plain memory (address space 0).  The
 * kernel body is an internal function with compile.h's parameters plus the
 * thread's context: GjCpuThread *t and threadIdx.x/y/z as i32 values.  An
 * entry point with the executor's ABI,
 *
 *     void <kernel>(void **params, GjCpuThread *t)
 *
 * loads each parameter from params[k] (the kernelParams array a CUDA launch
 * would get) once and calls the body, which O3 then inlines: for the one
 * thread t->tid when the kernel synchronises its block (each thread is then
 * a fiber) or when GjCompileOptions.cpu_thread_loops is 0 (the quick first
 * tier), else in loops over every thread of the block, which the loop
 * vectoriser can turn into SIMD across threads (cpu_finish_kernel), or,
 * for a body with loops of its own, vectorize.h's row over W threads.
 * threadIdx is the context's values; the other special registers are loads
 * from t's fields (grep tag: GJ_CPU_THREAD_ABI), the barrier and
 * the block and warp collectives are calls of the executor's gj_cpu_*(t, ...)
 * functions (their addresses come from the runtime symbol table, compile.h's
 * GjRuntimeSymbol), fences are LLVM fences, math functions are libm's, and shared
 * memory is the block's buffer t->shared.
 */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>
#include <llvm-c/TargetMachine.h>

#include "lower_array.h"
#include "lower_base.h"
#include "vectorize.h"

static void cpu_init_module(GjLower *L) {
    char *triple = LLVMGetDefaultTargetTriple();
    LLVMSetTarget(L->mod, triple);
    LLVMDisposeMessage(triple);
}

/* GjCpuThread's fields (runtime/cpuexec.h; grep tag GJ_CPU_THREAD_ABI): four
   uint32_t[3] (tid, bid, bdim, gdim), two pointers (shared, block), three
   uint32_t (lane, warp, shared_bytes). */
enum {
    THREAD_TID,
    THREAD_BID,
    THREAD_BDIM,
    THREAD_GDIM,
    THREAD_SHARED,
    THREAD_BLOCK,
    THREAD_LANE,
    THREAD_WARP,
    THREAD_SHARED_BYTES,
    THREAD_NFIELDS
};

/* GjCpuThread as an LLVM struct (cpuexec.h; GJ_CPU_THREAD_ABI). */
static LLVMTypeRef thread_type(GjLower *L) {
    LLVMTypeRef dim = LLVMArrayType2(L->i32, 3);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(L->ctx, 0);
    LLVMTypeRef fields[THREAD_NFIELDS] = {dim, dim, dim, dim, ptr, ptr, L->i32, L->i32, L->i32};
    return LLVMStructTypeInContext(L->ctx, fields, THREAD_NFIELDS, 0);
}

/* A load of field `field` (of type ty) of the thread's GjCpuThread. */
static LLVMValueRef thread_field_load(GjLower *L, unsigned field, LLVMTypeRef ty) {
    LLVMValueRef p = LLVMBuildStructGEP2(L->b, thread_type(L), L->thread[0], field, "");
    LLVMValueRef v = LLVMBuildLoad2(L->b, ty, p, "");
    LLVMSetAlignment(v, ty == L->i32 ? 4 : 8);
    return v;
}

/* t->field[axis], field one of the uint32_t[3] (tid, bid, bdim, gdim). */
static LLVMValueRef thread_dim_load(GjLower *L, LLVMBuilderRef b, LLVMValueRef t, unsigned field,
                                    int axis) {
    LLVMValueRef idx[3] = {LLVMConstInt(L->i32, 0, 0), LLVMConstInt(L->i32, field, 0),
                           LLVMConstInt(L->i32, (unsigned)axis, 0)};
    LLVMValueRef p = LLVMBuildInBoundsGEP2(b, thread_type(L), t, idx, 3, "");
    LLVMValueRef v = LLVMBuildLoad2(b, L->i32, p, "");
    LLVMSetAlignment(v, 4);
    return v;
}

/* The thread's context (target.h's thread_params): GjCpuThread *t, then
   threadIdx.x, .y, .z as i32 values, so that the thread loop's induction
   variables reach the body as values, not as memory it must load. */
enum { CPU_THREAD_PARAMS = 4 };

static void cpu_thread_types(GjLower *L, LLVMTypeRef *types) {
    types[0] = LLVMPointerTypeInContext(L->ctx, 0);
    types[1] = types[2] = types[3] = L->i32;
}

static GjStatus cpu_declare_kernel(GjLower *L, const char *name, LLVMTypeRef *params, unsigned n) {
    LLVMTypeRef all[256 + CPU_THREAD_PARAMS];
    if (n > 256)
        return gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "too many kernel parameters");
    memcpy(all, params, n * sizeof *params);
    cpu_thread_types(L, all + n);
    char *body = gj_arena_printf(&L->c->arena, "%s.body", name);
    if (!body)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
    L->fn = LLVMAddFunction(
        L->mod, body,
        LLVMFunctionType(LLVMVoidTypeInContext(L->ctx), all, n + CPU_THREAD_PARAMS, 0));
    LLVMSetLinkage(L->fn, LLVMInternalLinkage);
    static const char *const names[CPU_THREAD_PARAMS] = {"thread", "tid.x", "tid.y", "tid.z"};
    for (unsigned k = 0; k < CPU_THREAD_PARAMS; k++) {
        L->thread[k] = LLVMGetParam(L->fn, n + k);
        LLVMSetValueName2(L->thread[k], names[k], strlen(names[k]));
    }
    return GJ_OK;
}

/* Nested counted loops over the block's threads from axis `axis` down to
   `last`, z outermost (the executor's linear order: lane = linear % 32),
   from the builder's block: each level's induction variable is threadIdx
   along its axis (an i32, args[first + axis]), the innermost calls callee
   with args. */
static void thread_loops(GjLower *L, LLVMBuilderRef b, LLVMValueRef w, int axis, int last,
                         LLVMValueRef *bdim, LLVMValueRef *args, unsigned first,
                         LLVMValueRef callee) {
    LLVMTypeRef callee_ty = LLVMGlobalGetValueType(callee);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->ctx, w, "thread");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef i = LLVMBuildPhi(b, L->i32, "");
    args[first + (unsigned)axis] = i;
    if (axis == last)
        LLVMBuildCall2(b, callee_ty, callee, args, LLVMCountParamTypes(callee_ty), "");
    else
        thread_loops(L, b, w, axis - 1, last, bdim, args, first, callee);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMValueRef next = LLVMBuildNUWAdd(b, i, LLVMConstInt(L->i32, 1, 0), "");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->ctx, w, "");
    gj_cpu_loop_no_unroll(
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, next, bdim[axis], ""), head, done));
    LLVMValueRef in[2] = {LLVMConstInt(L->i32, 0, 0), next};
    LLVMBasicBlockRef from[2] = {pre, latch};
    LLVMAddIncoming(i, in, from, 2);
    LLVMPositionBuilderAtEnd(b, done);
}

void gj_cpu_loop_no_unroll(LLVMValueRef latch) {
    LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(latch));
    static const char disable[] = "llvm.loop.unroll.disable";
    LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
    LLVMMetadataRef hint = LLVMMDStringInContext2(ctx, disable, sizeof disable - 1);
    LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(ctx, &hint, 1)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, id);   /* a loop ID names itself first */
    LLVMSetMetadata(latch, LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9),
                    LLVMMetadataAsValue(ctx, id));
}

static void add_attribute(GjLower *L, LLVMValueRef fn, LLVMAttributeIndex at, const char *name) {
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, at, LLVMCreateEnumAttribute(L->ctx, kind, 0));
}

/* The body's string attributes (fastmath's "denormal-fp-math-f32") on the
   entry point too: the body is inlined there, and the inliner keeps no
   attribute of the callee's. */
static GjStatus copy_string_attributes(LLVMValueRef from, LLVMValueRef to) {
    LLVMAttributeIndex fn = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    unsigned n = LLVMGetAttributeCountAtIndex(from, fn);
    LLVMAttributeRef *attrs = malloc((n ? n : 1) * sizeof *attrs);
    if (!attrs)
        return GJ_ERR;
    LLVMGetAttributesAtIndex(from, fn, attrs);
    for (unsigned k = 0; k < n; k++)
        if (LLVMIsStringAttribute(attrs[k]))
            LLVMAddAttributeAtIndex(to, fn, attrs[k]);
    free(attrs);
    return GJ_OK;
}

/* The row (vectorize.h): void <kernel>.row(params...,
   t, i32 count, i32 tid.y, i32 tid.z), the body for threadIdx.x = 0 ..
   count - 1 as a plain counted loop, which the loop vectoriser takes once
   O3 has inlined the body, or which vectorize.c replaces by a loop over W
   threads at a time when the body has loops of its own.  alwaysinline, as
   the body is. */
static LLVMValueRef row_function(GjLower *L, const char *name) {
    LLVMTypeRef body_ty = LLVMGlobalGetValueType(L->fn);
    unsigned n = LLVMCountParamTypes(body_ty), first = n - CPU_THREAD_PARAMS + 1;
    char *row_name = gj_arena_printf(&L->c->arena, "%s" GJ_CPU_ROW_SUFFIX, name);
    if (!row_name)
        return NULL;
    LLVMValueRef row = LLVMAddFunction(L->mod, row_name, body_ty);
    LLVMSetLinkage(row, LLVMInternalLinkage);
    add_attribute(L, row, (LLVMAttributeIndex)LLVMAttributeFunctionIndex, "alwaysinline");
    LLVMValueRef args[256 + CPU_THREAD_PARAMS], bdim[1];
    for (unsigned k = 0; k < n; k++)
        args[k] = LLVMGetParam(row, k);
    bdim[0] = args[first];
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(L->ctx, row, "entry"));
    thread_loops(L, b, row, 0, 0, bdim, args, first, L->fn);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return row;
}

/* The entry point with the executor's ABI, void name(void **params,
   GjCpuThread *t), which loads each parameter from params[k] once and
   calls the body: for one thread (threadIdx from t->tid) when the kernel
   synchronises its block, for it then runs as one fiber of the block, or
   when the options ask for no thread loops (the executor then calls it
   for each thread in turn); else for every thread of the block in turn
   (thread_loops).  In a
   block's loop t holds only what every thread shares, and nothing the
   kernel's arrays point to aliases it (noalias): its loads leave the loop. */
static GjStatus cpu_finish_kernel(GjLower *L, const char *name) {
    LLVMTypeRef ptr = LLVMPointerTypeInContext(L->ctx, 0);
    LLVMTypeRef body_ty = LLVMGlobalGetValueType(L->fn);
    unsigned n = LLVMCountParamTypes(body_ty), first = n - CPU_THREAD_PARAMS + 1;
    LLVMTypeRef ptys[256 + CPU_THREAD_PARAMS];
    LLVMValueRef args[256 + CPU_THREAD_PARAMS];
    LLVMGetParamTypes(body_ty, ptys);

    LLVMTypeRef wparams[2] = {ptr, ptr};
    LLVMValueRef w = LLVMAddFunction(
        L->mod, name, LLVMFunctionType(LLVMVoidTypeInContext(L->ctx), wparams, 2, 0));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(L->ctx, w, "entry"));
    LLVMValueRef params = LLVMGetParam(w, 0), t = LLVMGetParam(w, 1);
    for (unsigned k = 0; k + CPU_THREAD_PARAMS < n; k++) {
        LLVMValueRef idx = LLVMConstInt(L->i64, k, 0);
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, ptr, params, &idx, 1, "");
        LLVMValueRef p = LLVMBuildLoad2(b, ptr, slot, "");
        args[k] = LLVMBuildLoad2(b, ptys[k], p, "");
    }
    args[first - 1] = t;
    int per_thread = L->needs_fibers || !L->opt->cpu_thread_loops;
    LLVMValueRef dim[3];
    for (int axis = 0; axis < 3; axis++)
        dim[axis] = thread_dim_load(L, b, t, per_thread ? THREAD_TID : THREAD_BDIM, axis);
    if (per_thread) {
        memcpy(args + first, dim, sizeof dim);
        LLVMBuildCall2(b, body_ty, L->fn, args, n, "");
    } else {
        add_attribute(L, w, 2, "noalias");
        add_attribute(L, L->fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex, "alwaysinline");
        LLVMValueRef row = row_function(L, name);
        if (!row || copy_string_attributes(L->fn, w) != GJ_OK) {
            LLVMDisposeBuilder(b);
            return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
        }
        args[first] = dim[0];
        thread_loops(L, b, w, 2, 1, dim, args, first, row);
    }
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return GJ_OK;
}

/* The lane: the thread's linear index in its block (x fastest) % 32, as
   the executor numbers lanes and warps (cpuexec.h). */
static LLVMValueRef lane(GjLower *L) {
    LLVMValueRef zy = LLVMBuildMul(L->b, thread_dim_load(L, L->b, L->thread[0], THREAD_BDIM, 1),
                                   L->thread[3], "");
    LLVMValueRef lin = LLVMBuildAdd(L->b, L->thread[2], zy, "");
    lin = LLVMBuildMul(L->b, thread_dim_load(L, L->b, L->thread[0], THREAD_BDIM, 0), lin, "");
    lin = LLVMBuildAdd(L->b, L->thread[1], lin, "");
    return LLVMBuildAnd(L->b, lin, LLVMConstInt(L->i32, 31, 0), "lane");
}

/* threadIdx is the context's values; blockIdx, blockDim and gridDim are
   loads from t; the warp size is 32; the lane and its mask are computed. */
static LLVMValueRef cpu_special_reg(GjLower *L, GjSreg reg, int axis) {
    if (axis < 0 || axis > 2)
        return gj_lower_fail(L, "special register %d has no axis %d", (int)reg, axis);
    LLVMValueRef one = LLVMConstInt(L->i32, 1, 0);
    switch (reg) {
    case GJ_SREG_TID: return L->thread[1 + axis];
    case GJ_SREG_CTAID: return thread_dim_load(L, L->b, L->thread[0], THREAD_BID, axis);
    case GJ_SREG_NTID: return thread_dim_load(L, L->b, L->thread[0], THREAD_BDIM, axis);
    case GJ_SREG_NCTAID: return thread_dim_load(L, L->b, L->thread[0], THREAD_GDIM, axis);
    case GJ_SREG_LANEID: return lane(L);
    case GJ_SREG_LANEMASK_LT:
        return LLVMBuildSub(L->b, LLVMBuildShl(L->b, one, lane(L), ""), one, "");
    case GJ_SREG_WARPSIZE: return LLVMConstInt(L->i32, 32, 0);
    case GJ_NSREGS: break;
    }
    return gj_lower_fail(L, "special register %d is not supported on the CPU target", (int)reg);
}

/* ret name(GjCpuThread *t, args...): a function of runtime/cpuexec.h's
   "called from kernel code" part (GJ_CPU_RUNTIME_SYMBOLS in runtime/exec_cpu.c). */
static LLVMValueRef runtime_call(GjLower *L, const char *name, LLVMTypeRef ret, LLVMValueRef *args,
                                 unsigned n) {
    LLVMTypeRef ptys[8];
    LLVMValueRef all[8];
    ptys[0] = LLVMPointerTypeInContext(L->ctx, 0);
    all[0] = L->thread[0];
    for (unsigned k = 0; k < n && k < 7; k++) {
        ptys[k + 1] = LLVMTypeOf(args[k]);
        all[k + 1] = args[k];
    }
    LLVMTypeRef fty = LLVMFunctionType(ret, ptys, n + 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, name);
    if (!fn)
        fn = LLVMAddFunction(L->mod, name, fty);
    return LLVMBuildCall2(L->b, fty, fn, all, n + 1, "");
}

/* gj_cpu_barrier(t) (runtime/cpuexec.h). */
static LLVMValueRef cpu_barrier(GjLower *L) {
    return runtime_call(L, "gj_cpu_barrier", LLVMVoidTypeInContext(L->ctx), NULL, 0);
}

/* An i32 slot in the entry block (a loop must not grow the stack). */
static LLVMValueRef entry_slot(GjLower *L) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->ctx);
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(L->b));
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(b, first);
    else
        LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef slot = LLVMBuildAlloca(b, L->i32, "");
    LLVMDisposeBuilder(b);
    return slot;
}

/* Each collective's runtime function and its mode argument (cpuexec.h's
   GJ_CPU_SYNC_*, GJ_CPU_SHFL_*, GJ_CPU_VOTE_*, GJ_CPU_MATCH_* values: keep
   in step with them). */
static const struct {
    const char *fn;
    int mode;
} collectives[] = {
    [GJ_COLL_SYNC_COUNT] = {"gj_cpu_syncthreads_op", 0},
    [GJ_COLL_SYNC_AND] = {"gj_cpu_syncthreads_op", 1},
    [GJ_COLL_SYNC_OR] = {"gj_cpu_syncthreads_op", 2},
    [GJ_COLL_SYNCWARP] = {"gj_cpu_syncwarp_mask", -1},
    [GJ_COLL_SHFL_IDX] = {"gj_cpu_warp_shfl", 0},
    [GJ_COLL_SHFL_UP] = {"gj_cpu_warp_shfl", 1},
    [GJ_COLL_SHFL_DOWN] = {"gj_cpu_warp_shfl", 2},
    [GJ_COLL_SHFL_XOR] = {"gj_cpu_warp_shfl", 3},
    [GJ_COLL_VOTE_ALL] = {"gj_cpu_warp_vote", 0},
    [GJ_COLL_VOTE_ANY] = {"gj_cpu_warp_vote", 1},
    [GJ_COLL_VOTE_EQ] = {"gj_cpu_warp_vote", 2},
    [GJ_COLL_BALLOT] = {"gj_cpu_warp_vote", 3},
    [GJ_COLL_MATCH_ANY] = {"gj_cpu_warp_match", 0},
    [GJ_COLL_MATCH_ALL] = {"gj_cpu_warp_match", 1},
    [GJ_COLL_ACTIVEMASK] = {"gj_cpu_activemask", 0},
};

/* The fences need no runtime: the threads of a block are fibers of one OS
   thread, so the block's fence only keeps the compiler from moving memory
   accesses across it; the others order them for other OS threads too.
   activemask() waits, in the runtime, until every other lane of the warp
   is parked or has returned, and gives the lanes that reached it together:
   those of the caller's branch, as on the GPU. */
static LLVMValueRef cpu_collective(GjLower *L, GjCollective op, LLVMValueRef *a,
                                   LLVMValueRef *pred) {
    LLVMValueRef args[5], r;
    LLVMValueRef mode = LLVMConstInt(L->i32, (unsigned long long)collectives[op].mode, 1);
    const char *fn = collectives[op].fn;
    switch (op) {
    case GJ_COLL_SYNC_COUNT:
    case GJ_COLL_SYNC_AND:
    case GJ_COLL_SYNC_OR:
        args[0] = LLVMBuildZExt(L->b, a[0], L->i32, "");
        args[1] = mode;
        return runtime_call(L, fn, L->i32, args, 2);
    case GJ_COLL_SYNCWARP: return runtime_call(L, fn, LLVMVoidTypeInContext(L->ctx), a, 1);
    case GJ_COLL_FENCE_BLOCK:
        return LLVMBuildFence(L->b, LLVMAtomicOrderingSequentiallyConsistent, 1, "");
    case GJ_COLL_FENCE:
    case GJ_COLL_FENCE_SYSTEM:
        return LLVMBuildFence(L->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    case GJ_COLL_SHFL_IDX:
    case GJ_COLL_SHFL_UP:
    case GJ_COLL_SHFL_DOWN:
    case GJ_COLL_SHFL_XOR:
        args[0] = a[0];
        args[1] = LLVMBuildZExt(L->b, a[1], L->i64, "");
        args[2] = a[2];
        args[3] = a[3];
        args[4] = mode;
        r = runtime_call(L, fn, L->i64, args, 5);
        return LLVMBuildTrunc(L->b, r, LLVMTypeOf(a[1]), "");
    case GJ_COLL_VOTE_ALL:
    case GJ_COLL_VOTE_ANY:
    case GJ_COLL_VOTE_EQ:
    case GJ_COLL_BALLOT:
        args[0] = a[0];
        args[1] = LLVMBuildZExt(L->b, a[1], L->i32, "");
        args[2] = mode;
        r = runtime_call(L, fn, L->i32, args, 3);
        return op == GJ_COLL_BALLOT ? r
                                    : LLVMBuildICmp(L->b, LLVMIntNE, r, LLVMConstNull(L->i32), "");
    case GJ_COLL_MATCH_ANY:
    case GJ_COLL_MATCH_ALL: {
        LLVMValueRef slot = op == GJ_COLL_MATCH_ALL ? entry_slot(L) : NULL;
        args[0] = a[0];
        args[1] = LLVMBuildZExt(L->b, a[1], L->i64, "");
        args[2] = mode;
        args[3] = slot ? slot : LLVMConstNull(LLVMPointerTypeInContext(L->ctx, 0));
        r = runtime_call(L, fn, L->i32, args, 4);
        if (slot)
            *pred = LLVMBuildICmp(L->b, LLVMIntNE, LLVMBuildLoad2(L->b, L->i32, slot, ""),
                                  LLVMConstNull(L->i32), "");
        return r;
    }
    case GJ_COLL_ACTIVEMASK: return runtime_call(L, fn, L->i32, args, 0);
    }
    return gj_lower_fail(L, "unknown collective %d", (int)op);
}

/* Shared memory is the block's buffer t->shared (runtime/cpuexec.h): the
   static arrays at the offsets lower_array.c gives them, then the dynamic
   part, t->shared_bytes less the static bytes (a constant once the module
   is lowered: gj_lower_shared_static_total). */
static LLVMValueRef cpu_shared_static(GjLower *L, uint64_t offset, uint64_t bytes) {
    (void)bytes;
    LLVMValueRef base = thread_field_load(L, THREAD_SHARED, LLVMPointerTypeInContext(L->ctx, 0));
    LLVMValueRef off = LLVMConstInt(L->i64, offset, 0);
    return LLVMBuildInBoundsGEP2(L->b, L->i8, base, &off, 1, "");
}

static LLVMValueRef cpu_shared_dynamic(GjLower *L, LLVMValueRef *bytes) {
    LLVMValueRef base = thread_field_load(L, THREAD_SHARED, LLVMPointerTypeInContext(L->ctx, 0));
    LLVMValueRef total =
        LLVMBuildZExt(L->b, thread_field_load(L, THREAD_SHARED_BYTES, L->i32), L->i64, "");
    LLVMValueRef off = gj_lower_shared_static_total(L);
    *bytes = LLVMBuildSub(L->b, total, off, "");
    return LLVMBuildInBoundsGEP2(L->b, L->i8, base, &off, 1, "");
}

/* gj_cpu_error_record(t): the record the launch passed (runtime/cpuexec.h). */
static LLVMValueRef cpu_error_record(GjLower *L) {
    return runtime_call(L, "gj_cpu_error_record", LLVMPointerTypeInContext(L->ctx, 0), NULL, 0);
}

/* libm: <base> (double), <base>f (float); libm has no fast variants. */
static void cpu_math_name(char *buf, size_t len, const char *base, int is_double, int fast) {
    (void)fast;
    snprintf(buf, len, "%s%s", base, is_double ? "" : "f");
}

/* Blocks run on several OS threads: a real atomic instruction (x86 lock
   xadd, or LLVM's compare-and-swap loop where the host has no instruction). */
static LLVMValueRef cpu_atomic_rmw(GjLower *L, LLVMAtomicRMWBinOp op, LLVMValueRef p,
                                   LLVMValueRef v) {
    return LLVMBuildAtomicRMW(L->b, op, p, v, LLVMAtomicOrderingMonotonic, 0);
}

const GjTarget gj_target_cpu = {
    .name = "cpu",
    .addrspace = {0, 0, 0, 0},
    .thread_params = CPU_THREAD_PARAMS,
    .thread_types = cpu_thread_types,
    .init_module = cpu_init_module,
    .declare_kernel = cpu_declare_kernel,
    .finish_kernel = cpu_finish_kernel,
    .special_reg = cpu_special_reg,
    .barrier = cpu_barrier,
    .vprintf_name = "gj_cpu_vprintf",
    .collective = cpu_collective,
    .math_name = cpu_math_name,
    .approx = NULL,   /* the host's IEEE division and sqrt are its fast ones */
    .atomic_rmw = cpu_atomic_rmw,
    .shared_static = cpu_shared_static,
    .shared_dynamic = cpu_shared_dynamic,
    .error_record = cpu_error_record,
};
