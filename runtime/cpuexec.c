/*
 * cpuexec.c - runs a kernel's grid on the host CPU (cpuexec.h).
 *
 * Pool: one process-wide struct `P`, set up once (pthread_once): the worker
 * count (GPUJIT_CPU_THREADS, else the cores this process may run on) and one
 * Worker per thread, slot 0 being whichever host thread launches.  Helper
 * threads start on the first launch that has work for them and sleep on a
 * condition variable between launches.  Launches are serialised by
 * P.launch_lock; within one, every worker takes chunks of block indices
 * from an atomic counter until none is left (take_blocks), then the
 * launcher closes the job and waits for the helpers that joined it (one
 * still asleep then never touches it).
 *
 * Block: a kernel without barriers or warp operations is called once per
 * block, on the worker's own stack, and loops over the block's threads
 * itself (compiled so: compiler/target_cpu.c), or, compiled per thread,
 * once per thread in turn (run_threads).  Otherwise each CUDA thread is a
 * fiber with its own stack (GPUJIT_CPU_STACK_KIB, default 64; allocated once
 * per worker with a guard page below each, reused), run round-robin by the
 * worker's scheduler.  A fiber that must wait parks (at the block barrier,
 * or at a warp operation with its mask) and switches away; the last one to
 * arrive computes every participant's result into its Slot, releases them
 * and carries on.  Fibers that return leave the barrier's count and their
 * warp's lanes, so an early exit never deadlocks; a real deadlock (CUDA
 * misuse) ends the block and the launch with an error naming the lanes.
 *
 * The block barrier and warp collectives that kernel code calls are in
 * cpuwarp.c, gj_cpu_vprintf in cpuprint.c; cpuexec_impl.h has what the
 * three share.
 *
 * The context switch is a few lines of assembly on x86-64 and aarch64
 * (callee-saved registers and the stack pointer; the floating-point control
 * registers are shared, kernels never change them), ucontext elsewhere and
 * where x86 shadow stacks are enforced.  Nothing here exits or aborts.
 */
#include "cpuexec.h"
#include "cpuexec_impl.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_WORKERS   1024u
#define GUARD_BUDGET  16384u   /* guard pages in all, to stay far below vm.max_map_count */
#define CHUNK_THREADS 4096u   /* the most threads' worth of blocks a worker takes at once */

/* ---- context switch ------------------------------------------------------ */

/* -DGJ_CPUEXEC_UCONTEXT builds the fallback everywhere (tests use it). */
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__ELF__) && \
    !defined(GJ_CPUEXEC_UCONTEXT)
#define HAVE_ASM_SWITCH 1
/* Saves the callee-saved registers on the current stack, stores the stack
   pointer in *save, loads `load` as the stack pointer and restores the
   registers saved there.  gj_cpu_fiber_start is where a new fiber's first
   switch returns to: it calls entry(arg), both taken from the saved frame. */
__attribute__((visibility("hidden"))) void gj_cpu_fiber_switch(void **save, void *load);
__attribute__((visibility("hidden"))) void gj_cpu_fiber_start(void);
#else
#define HAVE_ASM_SWITCH 0
#endif

#if HAVE_ASM_SWITCH && defined(__x86_64__)
/* Frame, from the saved sp up: r15 r14 r13 r12 rbx rbp return-address. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl gj_cpu_fiber_switch\n"
        ".hidden gj_cpu_fiber_switch\n"
        ".type gj_cpu_fiber_switch,@function\n"
        "gj_cpu_fiber_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size gj_cpu_fiber_switch, .-gj_cpu_fiber_switch\n"
        ".p2align 4\n"
        ".globl gj_cpu_fiber_start\n"
        ".hidden gj_cpu_fiber_start\n"
        ".type gj_cpu_fiber_start,@function\n"
        "gj_cpu_fiber_start:\n"
        "    movq %rbx, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n"
        ".size gj_cpu_fiber_start, .-gj_cpu_fiber_start\n");
#define FRAME_WORDS  7
#define FRAME_ENTRY  3      /* r12 */
#define FRAME_ARG    4        /* rbx */
#define FRAME_RETURN 6
#define FRAME_PAD    2        /* words above the frame: sp is 16-aligned after the ret */
#elif HAVE_ASM_SWITCH && defined(__aarch64__)
/* Frame, from the saved sp up: x19..x28, x29, x30 (return address), d8..d15. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl gj_cpu_fiber_switch\n"
        ".hidden gj_cpu_fiber_switch\n"
        ".type gj_cpu_fiber_switch,%function\n"
        "gj_cpu_fiber_switch:\n"
        "    sub sp, sp, #160\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mov x2, sp\n"
        "    str x2, [x0]\n"
        "    mov sp, x1\n"
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    add sp, sp, #160\n"
        "    ret\n"
        ".size gj_cpu_fiber_switch, .-gj_cpu_fiber_switch\n"
        ".p2align 4\n"
        ".globl gj_cpu_fiber_start\n"
        ".hidden gj_cpu_fiber_start\n"
        ".type gj_cpu_fiber_start,%function\n"
        "gj_cpu_fiber_start:\n"
        "    mov x0, x19\n"
        "    blr x20\n"
        "    brk #0\n"
        ".size gj_cpu_fiber_start, .-gj_cpu_fiber_start\n");
#define FRAME_WORDS  20
#define FRAME_ENTRY  1      /* x20 */
#define FRAME_ARG    0        /* x19 */
#define FRAME_RETURN 11    /* x30 */
#define FRAME_PAD    0
#endif

#ifdef GJ_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif

/* ThreadSanitizer must be told about stack switches too (its fiber API),
   or it mixes up the fibers' histories and stacks. */
#if defined(__SANITIZE_THREAD__)
#define GJ_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GJ_TSAN 1
#endif
#endif
#ifdef GJ_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#ifdef GJ_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

typedef struct Worker {
    pthread_t thread;
    unsigned index;
    uint64_t seen;          /* last generation looked at */
    GjCpuBlock block;
    unsigned capacity;      /* fibers allocated */
    size_t stack_bytes;     /* usable bytes of each one's stack */
    unsigned char *stacks;  /* one mapping: per fiber a guard page then its stack */
    size_t stacks_bytes;
    Fiber *fibers;
    GjCpuThread *threads;
    ucontext_t *ucs;        /* fallback switch only */
    unsigned char *shared;
    size_t shared_cap;
    char err[ERRLEN];       /* why this worker ran no block of the job */
} Worker;

typedef struct Pool {
    pthread_once_t once;
    pthread_mutex_t launch_lock;  /* one launch at a time (error-checking) */
    pthread_mutex_t lock;         /* guards generation, job, helpers, busy */
    pthread_cond_t wake;          /* helpers: a new generation */
    pthread_cond_t idle;          /* launcher: busy reached 0 */
    uint64_t generation;
    Job *job;
    unsigned helpers;             /* workers 1..helpers take part in this job */
    unsigned busy;                /* helpers that joined the job and still run it */
    unsigned nstarted;            /* helpers running, workers 1..nstarted (launch_lock) */
    unsigned nworkers;            /* including the launcher */
    size_t page, stack_bytes;
    int use_asm;
    int init_failed;
    pthread_key_t helper_key;     /* set on helper threads */
    Worker *workers;              /* [nworkers] */
} Pool;

static Pool P = {
    .once = PTHREAD_ONCE_INIT,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- switching ------------------------------------------------------------ */

static void raw_switch(GjCpuBlock *b, Ctx *from, Ctx *to) {
#ifdef GJ_TSAN
    __tsan_switch_to_fiber(to->tsan, 0);   /* 0: the switch orders the two fibers */
#endif
#if HAVE_ASM_SWITCH
    if (b->use_asm) {
        gj_cpu_fiber_switch(&from->sp, to->sp);
        return;
    }
#endif
    (void)b;
    swapcontext(from->uc, to->uc);
}

/* ASan: a fiber that was switched to learns the scheduler's stack when the
   switch came from there. */
#ifdef GJ_ASAN
static void switched_in(GjCpuBlock *b, void *fake) {
    if (b->from_sched)
        __sanitizer_finish_switch_fiber(fake, &b->sched_bottom, &b->sched_size);
    else
        __sanitizer_finish_switch_fiber(fake, NULL, NULL);
}
#endif

/* Scheduler -> fiber i; returns when the sweep that starts there ends. */
static void resume(GjCpuBlock *b, unsigned i) {
    b->current = i;
    b->from_sched = 1;
#ifdef GJ_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, b->fibers[i].stack, b->stack_bytes);
    raw_switch(b, &b->sched, &b->fibers[i].ctx);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    raw_switch(b, &b->sched, &b->fibers[i].ctx);
#endif
}

/* Fiber i parks or has returned: the sweep goes on straight to the next
   runnable fiber after it (one switch instead of two through the
   scheduler), or back to the scheduler at the end or when the block has
   failed.  Returns when fiber i is switched to again (never, once it has
   returned or the block has failed). */
void gj_cpu_switch_away(GjCpuBlock *b, unsigned i) {
    unsigned j = b->failed ? b->nthreads : i + 1;
    while (j < b->nthreads && (b->fibers[j].done || b->fibers[j].wait))
        j++;
    Ctx *to = j < b->nthreads ? &b->fibers[j].ctx : &b->sched;
#ifdef GJ_ASAN
    void *fake = NULL;
    int dies = b->fibers[i].done;
    if (j < b->nthreads)
        __sanitizer_start_switch_fiber(dies ? NULL : &fake, b->fibers[j].stack, b->stack_bytes);
    else
        __sanitizer_start_switch_fiber(dies ? NULL : &fake, b->sched_bottom, b->sched_size);
#endif
    b->current = j;
    b->from_sched = 0;
    raw_switch(b, &b->fibers[i].ctx, to);
#ifdef GJ_ASAN
    switched_in(b, fake);
#endif
}

/* Opens the block barrier: hands each syncthreads_count/and/or its result. */
static void barrier_release(GjCpuBlock *b) {
    Barrier *g = &b->bar;
    for (unsigned j = 0; j < b->nthreads; j++) {
        Fiber *f = &b->fibers[j];
        if (f->wait != AT_BARRIER)
            continue;
        f->wait = RUNNABLE;
        if (f->slot.op == OP_SYNCTHREADS)
            f->slot.result = f->slot.mode == GJ_CPU_SYNC_COUNT ? g->ntrue
                             : f->slot.mode == GJ_CPU_SYNC_AND ? g->ntrue == g->npred
                                                               : g->ntrue > 0;
    }
    g->arrived = g->npred = g->ntrue = 0;
}

/* Parks fiber i at the block barrier until every live fiber has arrived;
   the last one to arrive opens it and carries on without switching. */
void gj_cpu_barrier_arrive(GjCpuBlock *b, unsigned i) {
    b->fibers[i].wait = AT_BARRIER;
    if (++b->bar.arrived >= b->bar.live) {
        barrier_release(b);
        return;
    }
    gj_cpu_switch_away(b, i);
}

static void fiber_main(void *arg) {
    GjCpuBlock *b = arg;
    unsigned i = b->current;
#ifdef GJ_ASAN
    switched_in(b, NULL);
#endif
    b->fn(b->params, &b->threads[i]);
    b->fibers[i].done = 1;
    b->live--;
    /* A returned fiber no longer counts: what it leaves complete opens. */
    if (--b->bar.live <= b->bar.arrived && b->bar.arrived > 0)
        barrier_release(b);
    gj_cpu_warp_exit(b, i);
    gj_cpu_switch_away(b, i);
}

/* makecontext passes ints: the block pointer travels in two halves. */
static void fiber_main_uc(int hi, int lo) {
    uint64_t p = ((uint64_t)(unsigned)hi << 32) | (uint64_t)(unsigned)lo;
    fiber_main((void *)(uintptr_t)p);
}

static void fiber_init(GjCpuBlock *b, unsigned i) {
    Fiber *f = &b->fibers[i];
    f->wait = RUNNABLE;
    f->done = 0;
#if HAVE_ASM_SWITCH
    if (b->use_asm) {
        /* Staggered tops: page-aligned ones would put every fiber's frame in
           the same cache sets. */
        uintptr_t top = (uintptr_t)f->stack + b->stack_bytes - (i % 64) * 64;
        void **frame = (void **)top - FRAME_PAD - FRAME_WORDS;
        memset(frame, 0, FRAME_WORDS * sizeof *frame);
        void (*entry)(void *) = fiber_main;
        void (*start)(void) = gj_cpu_fiber_start;
        memcpy(&frame[FRAME_ENTRY], &entry, sizeof entry);
        frame[FRAME_ARG] = b;
        memcpy(&frame[FRAME_RETURN], &start, sizeof start);
        f->ctx.sp = frame;
        return;
    }
#endif
    ucontext_t *uc = f->ctx.uc;
    uc->uc_stack.ss_sp = f->stack;
    uc->uc_stack.ss_size = b->stack_bytes;
    uc->uc_link = NULL;
    uint64_t p = (uint64_t)(uintptr_t)b;
    makecontext(uc, (void (*)(void))fiber_main_uc, 2, (int)(unsigned)(p >> 32),
                (int)(unsigned)(p & 0xffffffffu));
}

/* Runs fibers round-robin until all have returned, or the block fails.
   When none can run but some still wait, the activemask() calls complete;
   failing those, a warp operation waits for a lane that is parked elsewhere
   (at the block barrier, or at a warp operation with another mask): a hang
   on the GPU, an error here. */
static void schedule(GjCpuBlock *b) {
    while (b->live > 0 && !b->failed) {
        unsigned i = 0;
        while (i < b->nthreads && (b->fibers[i].done || b->fibers[i].wait))
            i++;
        if (i < b->nthreads)
            resume(b, i);
        else
            gj_cpu_settle(b);
    }
}

/* ---- running blocks ------------------------------------------------------- */

/* t's threadIdx, lane and warp for the thread of linear index i in its
   block (x fastest). */
static void set_thread(GjCpuThread *t, const GjCpuLaunch *l, unsigned i) {
    unsigned bx = l->block[0], by = l->block[1];
    t->tid[0] = i % bx;
    t->tid[1] = (i / bx) % by;
    t->tid[2] = i / (bx * by);
    t->lane = i % WARP;
    t->warp = i / WARP;
}

static void run_fibers(GjCpuBlock *b, const GjCpuLaunch *l, const GjCpuThread *base) {
    unsigned n = b->nthreads;
    b->failed = 0;
    b->live = n;
    b->bar = (Barrier){.live = n};
    for (unsigned w = 0; w * WARP < n; w++) {
        unsigned c = n - w * WARP;
        b->warps[w] = (Warp){.exited = c < WARP ? ~0u << c : 0};
    }
#ifdef GJ_TSAN
    b->sched.tsan = __tsan_get_current_fiber();
#endif
    for (unsigned i = 0; i < n; i++) {
        GjCpuThread *t = &b->threads[i];
        *t = *base;
        set_thread(t, l, i);
#ifdef GJ_ASAN
        /* The last frames of a fiber that returned (its final switch never
           comes back), and every frame of an abandoned one, keep their
           redzones poisoned. */
        __asan_unpoison_memory_region(b->fibers[i].stack, b->stack_bytes);
#endif
        fiber_init(b, i);
    }
    schedule(b);
}

/* A block of a kernel compiled per thread without barriers: each thread in
   turn, in the order of the executor's linear index (x fastest), on the
   worker's own stack.  t's thread fields are left as the block found them. */
static void run_threads(const GjCpuLaunch *l, GjCpuThread *t, unsigned nthreads) {
    for (unsigned i = 0; i < nthreads; i++) {
        set_thread(t, l, i);
        l->fn(l->params, t);
    }
    set_thread(t, l, 0);
}

/* Runs blocks first .. first + count - 1 (linear indices, x fastest) unless
   the launch fails; returns how many ran.  The division into blockIdx is
   done once, then carried: a block costs its call, not three divisions. */
static uint64_t run_blocks(Worker *w, Job *job, uint64_t first, uint64_t count) {
    const GjCpuLaunch *l = job->launch;
    GjCpuBlock *b = &w->block;
    GjCpuThread t;
    memset(&t, 0, sizeof t);
    uint64_t gx = l->grid[0], gy = l->grid[1];
    t.bid[0] = (uint32_t)(first % gx);
    t.bid[1] = (uint32_t)(first / gx % gy);
    t.bid[2] = (uint32_t)(first / (gx * gy));
    for (int d = 0; d < 3; d++) {
        t.bdim[d] = l->block[d];
        t.gdim[d] = l->grid[d];
    }
    t.shared = w->shared;
    t.shared_bytes = (uint32_t)l->shared_bytes;
    t.block = b;
    for (uint64_t k = 0; k < count; k++) {
        if (atomic_load_explicit(&job->failed, memory_order_relaxed))
            return k;
        if (l->shared_bytes)
            memset(w->shared, 0, l->shared_bytes);
        if (job->fibered)
            run_fibers(b, l, &t);
        else if (l->per_thread)
            run_threads(l, &t, job->nthreads);
        else
            l->fn(l->params, &t);   /* the block's loops over its threads */
        if (++t.bid[0] == l->grid[0]) {
            t.bid[0] = 0;
            if (++t.bid[1] == l->grid[1]) {
                t.bid[1] = 0;
                t.bid[2]++;
            }
        }
    }
    return count;
}

/* getcontext() returns twice (a later setcontext comes back through it), so
   a caller's locals held in registers may be clobbered (gcc's -Wclobbered);
   kept out of line, the loop around it needs no volatile. */
__attribute__((noinline)) static int capture_context(ucontext_t *uc) { return getcontext(uc); }

/* Maps n fiber stacks of stack bytes (a multiple of the page), each above
   a guard page while the pool's guards stay within GUARD_BUDGET. */
/* munmap of fiber stacks.  Under ASan, their frames' redzones are unpoisoned
   first: ASan keeps a region's shadow through munmap, and the addresses,
   mapped again by malloc, would read as stack redzones. */
static void unmap_stacks(void *stacks, size_t bytes) {
#ifdef GJ_ASAN
    __asan_unpoison_memory_region(stacks, bytes);
#endif
    munmap(stacks, bytes);
}

static int grow_fibers(Worker *w, unsigned n, size_t stack) {
    size_t slot = P.page + stack;
    size_t bytes = slot * n;
    unsigned char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (map == MAP_FAILED) {
        snprintf(w->err, sizeof w->err, "cannot map %u fiber stacks of %zu KiB: %s", n,
                 stack / 1024, strerror(errno));
        return -1;
    }
    Fiber *fibers = calloc(n, sizeof *fibers);
    GjCpuThread *threads = calloc(n, sizeof *threads);
    ucontext_t *ucs = P.use_asm ? NULL : calloc(n, sizeof *ucs);
    if (!fibers || !threads || (!P.use_asm && !ucs)) {
        free(fibers);
        free(threads);
        free(ucs);
        munmap(map, bytes);
        snprintf(w->err, sizeof w->err, "out of host memory for %u fibers", n);
        return -1;
    }
    int guard = (uint64_t)n * P.nworkers <= GUARD_BUDGET;
    for (unsigned i = 0; i < n; i++) {
        if (guard)
            mprotect(map + slot * i, P.page, PROT_NONE);   /* best effort */
        fibers[i].stack = map + slot * i + P.page;
        if (ucs) {
            fibers[i].ctx.uc = &ucs[i];
            if (capture_context(&ucs[i]) != 0) {
                snprintf(w->err, sizeof w->err, "getcontext failed: %s", strerror(errno));
                free(fibers);
                free(threads);
                free(ucs);
                munmap(map, bytes);
                return -1;
            }
        }
    }
#ifdef GJ_TSAN
    for (unsigned i = 0; i < n; i++)
        fibers[i].ctx.tsan = __tsan_create_fiber(0);
    for (unsigned i = 0; i < w->capacity; i++)
        __tsan_destroy_fiber(w->fibers[i].ctx.tsan);
#endif
    if (w->stacks)
        unmap_stacks(w->stacks, w->stacks_bytes);
    free(w->fibers);
    free(w->threads);
    free(w->ucs);
    w->stacks = map;
    w->stacks_bytes = bytes;
    w->fibers = fibers;
    w->threads = threads;
    w->ucs = ucs;
    w->capacity = n;
    w->stack_bytes = stack;
    return 0;
}

/* Readies worker w for the job: shared memory and, if needed, fibers. */
static int prepare(Worker *w, Job *job) {
    const GjCpuLaunch *l = job->launch;
    w->err[0] = '\0';
    size_t need = l->shared_bytes > 64 ? l->shared_bytes : 64;
    if (need > w->shared_cap) {
        need = (need + 63) & ~(size_t)63;
        void *mem = NULL;
        if (need < l->shared_bytes || posix_memalign(&mem, 64, need) != 0) {
            snprintf(w->err, sizeof w->err, "cannot allocate %zu bytes of shared memory",
                     l->shared_bytes);
            return -1;
        }
        free(w->shared);
        w->shared = mem;
        w->shared_cap = need;
    }
    GjCpuBlock *b = &w->block;
    b->fn = l->fn;
    b->params = l->params;
    b->nthreads = job->nthreads;
    b->fibered = job->fibered;
    b->job = job;
    if (!job->fibered)
        return 0;
    /* Local arrays live on the fibers' stacks: room for them beyond the
       usual frames (GPUJIT_CPU_STACK_KIB). */
    size_t stack = P.stack_bytes + (l->local_bytes + P.page - 1) / P.page * P.page;
    if (stack < l->local_bytes) {
        snprintf(w->err, sizeof w->err,
                 "local arrays of %zu bytes per thread do not fit a "
                 "fiber stack",
                 l->local_bytes);
        return -1;
    }
    if ((w->capacity < job->nthreads || w->stack_bytes < stack) &&
        grow_fibers(w, job->nthreads > w->capacity ? job->nthreads : w->capacity,
                    stack > w->stack_bytes ? stack : w->stack_bytes) != 0)
        return -1;
    b->fibers = w->fibers;
    b->threads = w->threads;
    b->use_asm = P.use_asm;
    b->stack_bytes = w->stack_bytes;
    b->sched.uc = &b->sched_uc;
    return 0;
}

/* Whether the calling thread's stack has room, below this frame, for a
   kernel run without fibers: its local arrays (a block's loops allocate
   them once; a thread's call, once per call in turn) and the frames a fiber
   is given besides (GPUJIT_CPU_STACK_KIB).  *room gets the bytes left; 1
   when that cannot be told (the frame is not on the thread's stack, as with
   AddressSanitizer's fake stacks). */
static int stack_has_room(size_t local_bytes, size_t *room) {
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 1;
    int known = pthread_attr_getstack(&attr, &addr, &size) == 0;
    pthread_attr_destroy(&attr);
    char here;
    uintptr_t low = (uintptr_t)addr, sp = (uintptr_t)&here;
    if (!known || sp < low || sp - low > size)
        return 1;
    *room = sp - low;
    return *room >= P.stack_bytes && *room - P.stack_bytes >= local_bytes;
}

/* The next blocks for a worker: *first and how many (0: none left).  A
   chunk is a 1/(4 * workers) share of the blocks left (guided
   self-scheduling), at least one and at most CHUNK_THREADS threads' worth:
   a grid of many cheap blocks costs few atomic operations, and its last
   blocks still spread over the workers when blocks differ in cost or a
   worker loses its core to another process for a while. */
static uint64_t take_blocks(Job *job, uint64_t *first) {
    uint64_t k = atomic_load_explicit(&job->next, memory_order_relaxed), count;
    uint64_t most = CHUNK_THREADS / job->nthreads ? CHUNK_THREADS / job->nthreads : 1;
    do {
        if (k >= job->nblocks)
            return 0;
        count = (job->nblocks - k) / job->share;
        count = count < 1 ? 1 : count > most ? most : count;
    } while (!atomic_compare_exchange_weak_explicit(&job->next, &k, k + count, memory_order_relaxed,
                                                    memory_order_relaxed));
    *first = k;
    return count;
}

static void run_job(Worker *w, Job *job) {
    if (prepare(w, job) != 0)
        return;
    uint64_t ran = 0, first, count, k;
    while ((count = take_blocks(job, &first)) != 0) {
        ran += k = run_blocks(w, job, first, count);
        if (k < count)
            break;
    }
    atomic_fetch_add_explicit(&job->done, ran, memory_order_relaxed);
}

/* ---- the pool -------------------------------------------------------------- */

static void *helper_main(void *arg) {
    Worker *w = arg;
    pthread_setspecific(P.helper_key, w);
    pthread_mutex_lock(&P.lock);
    for (;;) {
        while (P.generation == w->seen)
            pthread_cond_wait(&P.wake, &P.lock);
        w->seen = P.generation;
        Job *job = P.job;
        if (!job || w->index > P.helpers)
            continue;   /* not ours, or over: the launcher found no block left */
        P.busy++;
        pthread_mutex_unlock(&P.lock);
        run_job(w, job);
        pthread_mutex_lock(&P.lock);
        if (--P.busy == 0)
            pthread_cond_signal(&P.idle);
    }
    return NULL;
}

/* Starts helper threads 1..want that are not running yet (under
   launch_lock); returns how many run.  A thread that cannot be created
   just means fewer workers. */
static unsigned start_helpers(unsigned want) {
    if (P.nstarted >= want)
        return want;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals go to the host's threads */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (P.nstarted < want) {
        Worker *w = &P.workers[P.nstarted + 1];
        w->seen = P.generation;
        if (pthread_create(&w->thread, &attr, helper_main, w) != 0)
            break;
        P.nstarted++;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return P.nstarted;
}

static void init_launch_lock(void) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&P.launch_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

/* In a fork() child only the forking thread exists: forget the helpers (they
   restart on the next launch) and any launch that was running. */
static void on_fork_child(void) {
    init_launch_lock();
    pthread_mutex_init(&P.lock, NULL);
    gj_cpu_print_after_fork();
    pthread_cond_init(&P.wake, NULL);
    pthread_cond_init(&P.idle, NULL);
    P.nstarted = 0;
    P.busy = 0;
    P.helpers = 0;
    P.job = NULL;
}

static unsigned env_unsigned(const char *name, unsigned lo, unsigned hi) {
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < (long)lo || v > (long)hi)
        return 0;
    return (unsigned)v;
}

/* True where x86 shadow stacks are enforced: the assembly switch would
   break them, ucontext keeps them. */
static int shadow_stack_active(void) {
#if HAVE_ASM_SWITCH && defined(__x86_64__)
    uint64_t ssp = 0;
    __asm__ volatile("rdsspq %0" : "+r"(ssp));   /* a no-op without CET */
    return ssp != 0;
#else
    return 0;
#endif
}

int gj_cpu_env_problem(char *msg, size_t size) {
    static const struct {
        const char *name, *what, *fallback;
        unsigned lo, hi;
    } vars[] = {
        {"GPUJIT_CPU_THREADS", "a number of worker threads", "one per core", 1, MAX_WORKERS},
        {"GPUJIT_CPU_STACK_KIB", "a fiber stack size in KiB", "64", 16, 1u << 20},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i].name);
        if (s && *s && env_unsigned(vars[i].name, vars[i].lo, vars[i].hi) == 0) {
            snprintf(msg, size, "%s='%s' is not %s from %u to %u; using %s", vars[i].name, s,
                     vars[i].what, vars[i].lo, vars[i].hi, vars[i].fallback);
            return 1;
        }
    }
    return 0;
}

static void init_pool(void) {
    unsigned n = env_unsigned("GPUJIT_CPU_THREADS", 1, MAX_WORKERS);
    if (n == 0) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            n = (unsigned)CPU_COUNT(&set);
        if (n == 0) {
            long c = sysconf(_SC_NPROCESSORS_ONLN);
            n = c > 0 ? (unsigned)c : 1;
        }
        if (n > MAX_WORKERS)
            n = MAX_WORKERS;
    }
    long page = sysconf(_SC_PAGESIZE);
    P.page = page > 0 ? (size_t)page : 4096;
    unsigned kib = env_unsigned("GPUJIT_CPU_STACK_KIB", 16, 1u << 20);
    size_t stack = (kib ? kib : 64) * (size_t)1024;
    P.stack_bytes = (stack + P.page - 1) / P.page * P.page;
    P.use_asm = HAVE_ASM_SWITCH && !shadow_stack_active();
    P.workers = calloc(n, sizeof *P.workers);
    if (!P.workers || pthread_key_create(&P.helper_key, NULL) != 0) {
        P.init_failed = 1;
        return;
    }
    for (unsigned i = 0; i < n; i++)
        P.workers[i].index = i;
    P.nworkers = n;
    init_launch_lock();
    pthread_atfork(NULL, NULL, on_fork_child);
}

int gj_cpu_workers(void) {
    pthread_once(&P.once, init_pool);
    return P.init_failed ? 1 : (int)P.nworkers;
}

static int check_launch(const GjCpuLaunch *l, char *err, size_t errlen) {
    if (!l || !l->fn) {
        set_err(err, errlen, "no kernel function to launch");
        return -1;
    }
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads == 0 || threads > MAX_THREADS_PER_BLOCK) {
        set_err(err, errlen, "invalid block (%u, %u, %u): 1 to %u threads per block", l->block[0],
                l->block[1], l->block[2], MAX_THREADS_PER_BLOCK);
        return -1;
    }
    if (l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0) {
        set_err(err, errlen, "invalid grid (%u, %u, %u): every dimension must be at least 1",
                l->grid[0], l->grid[1], l->grid[2]);
        return -1;
    }
    return 0;
}

int gj_cpu_launch(const GjCpuLaunch *launch, char *err, size_t errlen) {
    if (check_launch(launch, err, errlen) != 0)
        return -1;
    pthread_once(&P.once, init_pool);
    if (P.init_failed) {
        set_err(err, errlen, "out of host memory for the CPU worker pool");
        return -1;
    }
    /* Kernel code launching: on a helper it would wait for the launch that
       waits for it; on the launcher the lock says EDEADLK. */
    int rc = pthread_getspecific(P.helper_key) ? EDEADLK : pthread_mutex_lock(&P.launch_lock);
    if (rc == EDEADLK) {
        set_err(err, errlen, "a kernel cannot launch a kernel on the CPU target");
        return -1;
    }
    if (rc != 0) {
        set_err(err, errlen, "cannot lock the CPU worker pool: %s", strerror(rc));
        return -1;
    }
    Job job = {
        .launch = launch,
        .nblocks = (uint64_t)launch->grid[0] * launch->grid[1] * launch->grid[2],
        .nthreads = launch->block[0] * launch->block[1] * launch->block[2],
    };
    job.fibered = launch->needs_fibers && job.nthreads > 1;
    size_t room;
    if (!job.fibered && launch->local_bytes > 0 && !stack_has_room(launch->local_bytes, &room)) {
        /* the launching thread runs blocks on its own stack: an overflow there
           would end the process */
        set_err(err, errlen,
                "the kernel's local arrays (%zu KiB a thread) and the usual "
                "frames (GPUJIT_CPU_STACK_KIB, %zu KiB) need more stack than the launching "
                "thread has left (%zu KiB): launch from the main thread, or from a thread "
                "started after threading.stack_size() gave it more",
                (launch->local_bytes + 1023) / 1024, P.stack_bytes / 1024, room / 1024);
        pthread_mutex_unlock(&P.launch_lock);
        return -1;
    }
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    atomic_init(&job.misuse, 0);
    atomic_init(&job.failed, 0);

    uint64_t want = job.nblocks - 1 < P.nworkers - 1 ? job.nblocks - 1 : P.nworkers - 1;
    unsigned helpers = want ? start_helpers((unsigned)want) : 0;
    job.share = 4 * ((uint64_t)helpers + 1);
    if (helpers) {
        pthread_mutex_lock(&P.lock);
        P.job = &job;
        P.helpers = helpers;
        P.generation++;
        pthread_cond_broadcast(&P.wake);
        pthread_mutex_unlock(&P.lock);
    }
    run_job(&P.workers[0], &job);
    if (helpers) {
        pthread_mutex_lock(&P.lock);
        /* No block is left to take: helpers that have not woken yet stay out
           of the job, and the launch waits only for those running it (a
           small grid costs the wake-up call, not a helper's wake-up). */
        P.job = NULL;
        while (P.busy > 0)
            pthread_cond_wait(&P.idle, &P.lock);
        pthread_mutex_unlock(&P.lock);
    }

    int status = 0;
    if (atomic_load(&job.failed)) {
        set_err(err, errlen, "%s", job.why);
        status = -1;
    } else if (atomic_load(&job.done) != job.nblocks) {
        const char *why = "no worker could run the grid";
        for (unsigned i = 0; i <= helpers; i++)
            if (P.workers[i].err[0]) {
                why = P.workers[i].err;
                break;
            }
        set_err(err, errlen, "CPU launch failed: %s", why);
        status = -1;
    } else if (atomic_load(&job.misuse)) {
        set_err(err, errlen,
                "internal error: a kernel compiled without barriers or warp "
                "operations (needs_fibers = 0) synchronised a block of %u threads; the "
                "synchronisation did not happen",
                job.nthreads);
        status = -1;
    }
    pthread_mutex_unlock(&P.launch_lock);
    return status;
}

int64_t *gj_cpu_error_record(GjCpuThread *t) { return t->block->job->launch->error_record; }
