/*
 * cpuexec.h - runs a kernel's grid on the host CPU (the "cpu" target).
 *
 * The blocks of the grid are shared out over a pool of worker threads (one
 * per core).  Within a block, the threads run either as a plain loop (a
 * kernel with no barrier and no warp operation) or as fibers, one per CUDA
 * thread, that switch at barriers: gj_cpu_barrier() parks the calling fiber
 * until every fiber of its block has reached the barrier.
 *
 * The compiled kernel (compiler/, host target) is a C-ABI function
 *     void kernel(void **params, GjCpuThread *t)
 * that reads its parameters from `params` (the same kernelParams array the
 * CUDA launch uses; compile.h gives the layout) and its thread/block indices
 * from `t`.  Kernel code calls back into this file only through the
 * functions marked "called from kernel code", which the JIT resolves to
 * their addresses.  No Python, no LLVM, no CUDA here.
 */
#ifndef GJ_CPUEXEC_H
#define GJ_CPUEXEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct GjCpuBlock GjCpuBlock;   /* executor-private state of one running block */

/* One CUDA thread's view.  Field order and types are ABI: the host lowering
   reads them with fixed offsets (GJ_CPU_THREAD_* below); keep in sync. */
typedef struct GjCpuThread {
    uint32_t tid[3];      /* threadIdx.x/y/z */
    uint32_t bid[3];      /* blockIdx */
    uint32_t bdim[3];     /* blockDim */
    uint32_t gdim[3];     /* gridDim */
    void *shared;         /* the block's dynamic + static shared memory */
    GjCpuBlock *block;    /* executor's */
    uint32_t lane;        /* linear thread index % 32 */
    uint32_t warp;        /* linear thread index / 32 */
} GjCpuThread;

/* Field indices for the host lowering's struct GEPs (grep tag: GJ_CPU_THREAD_ABI). */
enum {
    GJ_CPU_THREAD_TID = 0, GJ_CPU_THREAD_BID = 1, GJ_CPU_THREAD_BDIM = 2,
    GJ_CPU_THREAD_GDIM = 3, GJ_CPU_THREAD_SHARED = 4, GJ_CPU_THREAD_BLOCK = 5,
    GJ_CPU_THREAD_LANE = 6, GJ_CPU_THREAD_WARP = 7,
};

typedef void (*GjCpuKernelFn)(void **params, GjCpuThread *t);

typedef struct GjCpuLaunch {
    GjCpuKernelFn fn;
    void **params;
    unsigned grid[3];
    unsigned block[3];
    size_t shared_bytes;  /* per block, zero-initialised */
    int needs_fibers;     /* the kernel uses barriers or warp operations */
} GjCpuLaunch;

/* Runs the whole grid and returns when every block is done (0), or -1 with
   a message in err (at most errlen bytes) when resources run out.  Safe to
   call from several host threads at once. */
int gj_cpu_launch(const GjCpuLaunch *launch, char *err, size_t errlen);

/* Number of worker threads the pool uses (GPUJIT_CPU_THREADS or the core count). */
int gj_cpu_workers(void);

/* ---- called from kernel code ---- */

/* __syncthreads(): every thread of the block reaches it before any passes. */
void gj_cpu_barrier(GjCpuThread *t);

/* __syncwarp() with the full mask: every thread of the warp that has not
   returned reaches it before any passes.  Warp shuffles and votes can be
   built on it (write a slot, sync, read the partner's slot, sync). */
void gj_cpu_syncwarp(GjCpuThread *t);

#endif
