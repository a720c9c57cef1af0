/*
 * cpuexec.h - runs a kernel's grid on the host CPU (the "cpu" target).
 *
 * The blocks of the grid are shared out over a pool of worker threads (one
 * per core).  Within a block, the threads run either as a loop inside the
 * compiled kernel (a kernel with no barrier and no warp operation) or as
 * fibers, one per CUDA thread, that switch at barriers: gj_cpu_barrier()
 * parks the calling fiber until every fiber of its block has reached the
 * barrier.
 *
 * The compiled kernel (compiler/, host target) is a C-ABI function
 *     void kernel(void **params, GjCpuThread *t)
 * that reads its parameters from `params` (the same kernelParams array the
 * CUDA launch uses; compile.h gives the layout) and its block's indices
 * from `t`.  Launched with per_thread, it runs the one thread t->tid (and
 * t->lane, t->warp), as a fiber with needs_fibers, else called for each
 * thread of the block in turn; without, one call runs every thread of the
 * block t->bid (t->tid, lane and warp are 0 and unused).  Kernel code calls back into
 * this file only through the functions marked "called from kernel code",
 * which the JIT resolves to their addresses.  No Python, no LLVM, no CUDA
 * here.
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
    uint32_t shared_bytes;   /* bytes at `shared` (GjCpuLaunch.shared_bytes): the
                                kernel's dynamic part is what its static part leaves */
} GjCpuThread;

/* Field indices for the host lowering's struct GEPs (grep tag: GJ_CPU_THREAD_ABI). */
enum {
    GJ_CPU_THREAD_TID = 0,
    GJ_CPU_THREAD_BID = 1,
    GJ_CPU_THREAD_BDIM = 2,
    GJ_CPU_THREAD_GDIM = 3,
    GJ_CPU_THREAD_SHARED = 4,
    GJ_CPU_THREAD_BLOCK = 5,
    GJ_CPU_THREAD_LANE = 6,
    GJ_CPU_THREAD_WARP = 7,
    GJ_CPU_THREAD_SHARED_BYTES = 8,
};

typedef void (*GjCpuKernelFn)(void **params, GjCpuThread *t);

typedef struct GjCpuLaunch {
    GjCpuKernelFn fn;
    void **params;
    unsigned grid[3];
    unsigned block[3];
    size_t shared_bytes;  /* per block: static + dynamic shared memory, in bytes */
    size_t local_bytes;   /* per thread: local arrays; fiber stacks get this much
                             more than GPUJIT_CPU_STACK_KIB */
    int per_thread;       /* fn runs one thread, not a block */
    int needs_fibers;     /* the kernel uses barriers or warp operations (per_thread
                             too): each thread of a block is a fiber */
    int64_t *error_record;   /* the kernel's error record (compiler/compile.h), zeroed by
                                the caller, or NULL when the kernel has no checks */
} GjCpuLaunch;

/* Shared memory: each block gets its own `shared_bytes` bytes at
   t->shared, 64-byte aligned and zeroed before the block starts (CUDA does
   not zero it; kernels must not rely on it).  Only the total comes in
   (t->shared_bytes): the compiler lays out the kernel's static shared
   arrays first, each at a 16-byte boundary, and the dynamic shared memory
   after them (its size is the total less the static part, a 16-byte
   multiple that the launch plan reports). */

/* Runs the whole grid and returns when every block is done (0), or -1 with
   a message in err (at most errlen bytes) when resources run out or kernel
   code misused a collective operation (below).  Safe to call from several
   host threads at once. */
int gj_cpu_launch(const GjCpuLaunch *launch, char *err, size_t errlen);

/* Number of worker threads the pool uses (GPUJIT_CPU_THREADS or the core count). */
int gj_cpu_workers(void);
/* 1 and a message in msg when GPUJIT_CPU_THREADS or GPUJIT_CPU_STACK_KIB is
   set to what the pool cannot use (it then takes its default), else 0. */
int gj_cpu_env_problem(char *msg, size_t size);

/* ---- called from kernel code ---- */

/* CUDA's block- and warp-level primitives, with numba.cuda semantics.  A
   kernel that calls any of them but gj_cpu_vprintf and gj_cpu_threadfence
   must be launched with needs_fibers, so each thread is a fiber and a warp
   is 32 consecutive linear thread indices (lane = linear % 32; the last
   warp of a block may be partial).  Values travel zero-extended in 64 bits,
   floats as their bits.

   Masks.  A warp operation with mask M waits until every lane of M that has
   not returned has arrived at a warp operation with mask M, then completes
   for them all.  Lanes of M that have returned, or do not exist, do not take
   part (a shuffle from one gives the caller's own value), so early exits
   never hang.  Lanes with disjoint masks meet separately, as on the GPU.
   What CUDA leaves undefined is an error, never a hang: the launch returns
   -1 with a message naming the thread and the lanes, and stops the grid:
     - a mask without the calling lane, or a shuffle width that is not a
       power of two from 1 to 32;
     - lanes of one mask at different operations (a shuffle and a vote);
     - a deadlock: a warp operation waits for a lane that waits at the block
       barrier, or at a warp operation with another mask, and nothing else
       can run (on the GPU such a kernel hangs). */

/* __syncthreads(): every thread of the block reaches it before any passes. */
void gj_cpu_barrier(GjCpuThread *t);

/* __syncthreads_count/and/or(predicate): the block barrier, returning to
   every thread the number of threads with a non-zero predicate (count), or
   whether all (and) or any (or) have one, as 0/1.  Threads that returned do
   not count.  Each thread gets its result privately: calls in a loop are
   safe. */
enum { GJ_CPU_SYNC_COUNT = 0, GJ_CPU_SYNC_AND = 1, GJ_CPU_SYNC_OR = 2 };
int32_t gj_cpu_syncthreads_op(GjCpuThread *t, int32_t predicate, int32_t op);

/* __syncwarp(mask): the lanes named in mask meet.  gj_cpu_syncwarp is
   __syncwarp() (the full mask). */
void gj_cpu_syncwarp_mask(GjCpuThread *t, uint32_t mask);
void gj_cpu_syncwarp(GjCpuThread *t);

/* __shfl_sync (idx), __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync with
   CUDA's width rules: the warp is cut into sections of `width` lanes (a
   power of two, at most 32); idx reads lane (src % width) of the caller's
   section; up/down read lane -/+ delta when it is in the caller's section,
   else the caller's own value; xor reads lane ^ lane_mask when it is not
   beyond the caller's section (lower sections can be read), else the
   caller's own value.  A source lane not taking part gives the caller's own
   value (undefined on the GPU). */
enum { GJ_CPU_SHFL_IDX = 0, GJ_CPU_SHFL_UP = 1, GJ_CPU_SHFL_DOWN = 2, GJ_CPU_SHFL_XOR = 3 };
uint64_t gj_cpu_warp_shfl(GjCpuThread *t, uint32_t mask, uint64_t value, int32_t lane_or_delta,
                          int32_t width, int32_t mode);

/* __all_sync, __any_sync, __uni_sync (eq: all predicates alike) give 0/1;
   __ballot_sync gives bit i set for each lane i taking part with a non-zero
   predicate. */
enum { GJ_CPU_VOTE_ALL = 0, GJ_CPU_VOTE_ANY = 1, GJ_CPU_VOTE_EQ = 2, GJ_CPU_VOTE_BALLOT = 3 };
uint32_t gj_cpu_warp_vote(GjCpuThread *t, uint32_t mask, int32_t predicate, int32_t mode);

/* __match_any_sync: the lanes taking part whose value equals the caller's.
   __match_all_sync: mask if every lane taking part has the same value, else
   0, and *all_pred (may be NULL) set to 1 or 0. */
enum { GJ_CPU_MATCH_ANY = 0, GJ_CPU_MATCH_ALL = 1 };
uint32_t gj_cpu_warp_match(GjCpuThread *t, uint32_t mask, uint64_t value, int32_t mode,
                           int32_t *all_pred);

/* __activemask(): the lanes of the caller's warp that reach it together.
   The caller parks until no fiber of the block can run (every other lane of
   its warp is then parked elsewhere or has returned); the lanes parked at
   activemask() then are those of the caller's branch, as on the GPU. */
uint32_t gj_cpu_activemask(GjCpuThread *t);

/* __threadfence(): a sequentially consistent fence.  The compiler may as
   well emit `fence seq_cst` itself (threadfence_block: a single-thread
   fence; the fibers of a block share one OS thread). */
void gj_cpu_threadfence(GjCpuThread *t);

/* CUDA's device-side vprintf: `format` in printf syntax, `args` (may be NULL
   without conversions) holding each argument at its natural alignment:
   int and char 4 bytes; long, long long, size_t, double (floats promoted)
   and pointers (%s, %p) 8 bytes.  Handles the conversions d i u o x X c s p
   f F e E g G a A with flags, width, precision ('*' takes a 4-byte int) and
   length modifiers; others (%n too) are printed as written.  The line goes
   to fd 1 in one write(2) under a process-wide lock, after flushing C's
   stdout, so lines of different threads never interleave (Python's
   sys.stdout has its own buffer: flush it before a launch).  Returns the
   number of arguments read, -1 for a NULL format, -2 when out of memory or
   the write fails. */
int32_t gj_cpu_vprintf(const char *format, const void *args);

/* The launch's error record (GjCpuLaunch.error_record), which a failing
   run-time check of a debug build writes. */
int64_t *gj_cpu_error_record(GjCpuThread *t);

#endif
