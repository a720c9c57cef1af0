/*
 * cpuexec_impl.h - what the CPU executor's files share, and nothing else
 * includes: a block as its worker runs it (GjCpuBlock), its fibers, the
 * block barrier, the warps and the per-thread Slot of a collective, and the
 * launch (Job).
 *
 *   cpuexec.c   the pool, running blocks, fibers and the context switch
 *   cpuwarp.c   what kernel code calls to synchronise: the block barrier
 *               and the warp collectives, and misuse of them
 *   cpuprint.c  gj_cpu_vprintf
 *
 * A block is only ever touched by the worker running it (its fibers take
 * turns on one OS thread), so nothing here is locked.
 */
#ifndef GJ_CPUEXEC_IMPL_H
#define GJ_CPUEXEC_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "cpuexec.h"

#define MAX_THREADS_PER_BLOCK 1024u
#define WARP                  32u
#define ERRLEN                200

/* AddressSanitizer must be told about stack switches, or it reports the
   fibers' frames as overflows of the thread's stack (cpuexec.c); a block
   then records the scheduler's stack, so every file must agree on it. */
#if defined(__SANITIZE_ADDRESS__)
#define GJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GJ_ASAN 1
#endif
#endif

/* A suspended execution context: the saved stack pointer (assembly switch)
   or a ucontext (fallback), and its ThreadSanitizer fiber. */
typedef struct Ctx {
    void *sp;
    ucontext_t *uc;
    void *tsan;
} Ctx;

/* ---- blocks, fibers and collectives -------------------------------------- */

/* The block barrier: fibers wait until the `live` ones (not yet returned)
   have all arrived; syncthreads_count/and/or add up their predicates. */
typedef struct Barrier {
    unsigned live;          /* fibers that have not returned */
    unsigned arrived;       /* fibers parked here now, plus the one arriving */
    unsigned npred, ntrue;  /* predicates given at this barrier, non-zero ones */
} Barrier;

/* A warp: lanes that have returned (or do not exist, in a partial last
   warp) and lanes parked at a warp operation. */
typedef struct Warp {
    uint32_t exited;
    uint32_t parked;
} Warp;

enum { RUNNABLE, AT_BARRIER, AT_WARP_OP };   /* Fiber.wait */

/* The collective operations (Slot.op); their modes are cpuexec.h's. */
enum { OP_BARRIER, OP_SYNCTHREADS, OP_SYNCWARP, OP_SHFL, OP_VOTE, OP_MATCH, OP_ACTIVEMASK };

/* What a thread brings to its collective, and what it takes away.  Written
   by the thread as it arrives, results by whichever fiber completes the
   collective; read back by the thread once released.  Each thread has its
   own, so a result cannot be overwritten by the next collective before its
   owner has read it. */
typedef struct Slot {
    int op, mode;
    uint32_t mask;          /* warp operations */
    int32_t arg, width;     /* shuffles: source lane, delta or lane mask; width */
    uint64_t value;         /* shuffled or matched value, predicate */
    uint64_t result;
    int32_t pred;           /* match_all's predicate */
} Slot;

typedef struct Fiber {
    Ctx ctx;
    unsigned char *stack;   /* lowest usable byte; the guard page is below */
    int wait;               /* RUNNABLE, AT_BARRIER or AT_WARP_OP */
    int done;               /* the kernel function returned */
    Slot slot;
} Fiber;

typedef struct Job Job;

struct GjCpuBlock {
    GjCpuKernelFn fn;
    void **params;
    unsigned nthreads;
    int fibered;            /* 0: fn runs the block's threads as a loop */
    Job *job;
    /* fiber mode only */
    Fiber *fibers;          /* [nthreads] */
    GjCpuThread *threads;   /* [nthreads] */
    unsigned live;          /* fibers that have not returned */
    unsigned current;       /* the running fiber */
    int from_sched;         /* it was switched to by the scheduler, not a fiber */
    int failed;             /* a misuse ended the block: the scheduler abandons it */
    int use_asm;
    size_t stack_bytes;     /* usable bytes of each fiber's stack */
    Ctx sched;              /* the worker's scheduler loop */
    ucontext_t sched_uc;
#ifdef GJ_ASAN
    const void *sched_bottom;
    size_t sched_size;
#endif
    Barrier bar;
    Warp warps[MAX_THREADS_PER_BLOCK / WARP];
};

/* One launch, on the launcher's stack while it runs. */
struct Job {
    const GjCpuLaunch *launch;
    uint64_t nblocks;
    unsigned nthreads;      /* per block */
    int fibered;
    uint64_t share;         /* a chunk of blocks is what is left / share (take_blocks) */
    _Atomic uint64_t next;  /* next block index to hand out */
    _Atomic uint64_t done;  /* blocks run */
    atomic_int misuse;      /* a barrier without fibers */
    atomic_int failed;      /* a kernel misused a collective: no more blocks start */
    char why[2 * ERRLEN];   /* the first such misuse, written by whoever set `failed` */
};

/* cpuexec.c: fiber i parks or has returned; switches to the next runnable
   fiber or the scheduler, and returns when fiber i runs again. */
void gj_cpu_switch_away(GjCpuBlock *b, unsigned i);
/* cpuexec.c: parks fiber i at the block barrier until every live fiber has
   arrived. */
void gj_cpu_barrier_arrive(GjCpuBlock *b, unsigned i);

/* cpuwarp.c: fiber i has returned; the warp operations waiting only for it
   complete. */
void gj_cpu_warp_exit(GjCpuBlock *b, unsigned i);
/* cpuwarp.c: no fiber can run but some wait.  Completes the activemask()
   calls (every other lane of their warps is now parked or has returned) and
   returns 1, or records the deadlock, abandons the block and returns 0. */
int gj_cpu_settle(GjCpuBlock *b);

/* cpuprint.c: in a fork() child, the print lock starts afresh. */
void gj_cpu_print_after_fork(void);

#endif
