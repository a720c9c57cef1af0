/*
 * test_cpuexec.c - unit test of the host-CPU grid executor (runtime/cpuexec.c,
 * cpuwarp.c, cpuprint.c).
 *
 * Built and run by meson (tests/c/meson.build: `meson test`), with the
 * pool's worker count set by GPUJIT_CPU_THREADS, with the ucontext fallback,
 * and under ThreadSanitizer where available.  The
 * "kernels" are C functions with the GjCpuKernelFn signature; each counts
 * what it finds wrong in its state's `bad`, and the launcher side checks
 * every (block, thread) ran exactly once.  Prints one line per failure and
 * exits 1 if there was any.
 */
#include "cpuexec.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            atomic_fetch_add(&failures, 1);                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

typedef struct Dim {
    unsigned x, y, z;
} Dim;

static unsigned count(Dim d) { return d.x * d.y * d.z; }

static unsigned thread_lin(const GjCpuThread *t) {
    return t->tid[0] + t->bdim[0] * (t->tid[1] + t->bdim[1] * t->tid[2]);
}

static unsigned block_lin(const GjCpuThread *t) {
    return t->bid[0] + t->gdim[0] * (t->bid[1] + t->gdim[1] * t->bid[2]);
}

static unsigned block_threads(const GjCpuThread *t) { return t->bdim[0] * t->bdim[1] * t->bdim[2]; }

/* A per-thread test kernel, for per_block. */
typedef struct ThreadFn {
    GjCpuKernelFn fn;
} ThreadFn;

/* A kernel without fibers runs a whole block per call, as the compiler
   emits it (compiler/target_cpu.c): this loops over the block's threads,
   calling the per-thread kernel in params[1] with each thread's indices. */
static void per_block(void **params, GjCpuThread *t) {
    const ThreadFn *thread = params[1];
    GjCpuThread u = *t;
    unsigned lin = 0;
    for (u.tid[2] = 0; u.tid[2] < t->bdim[2]; u.tid[2]++)
        for (u.tid[1] = 0; u.tid[1] < t->bdim[1]; u.tid[1]++)
            for (u.tid[0] = 0; u.tid[0] < t->bdim[0]; u.tid[0]++, lin++) {
                u.lane = lin % 32;
                u.warp = lin / 32;
                thread->fn(params, &u);
            }
}

/* How launch() runs a block of thread function fn: one call of per_block
   (a kernel compiled with thread loops), fibers, or the executor's calls of
   fn for each thread in turn (a kernel compiled per thread). */
enum { MODE_BLOCK = 0, MODE_FIBERS = 1, MODE_THREADS = 2 };

static int launch(GjCpuKernelFn fn, void *state, Dim grid, Dim block, size_t shared, int mode,
                  char *err, size_t errlen) {
    ThreadFn thread = {fn};
    void *params[2] = {state, &thread};
    GjCpuLaunch l = {
        .fn = mode == MODE_BLOCK ? per_block : fn,
        .params = params,
        .grid = {grid.x, grid.y, grid.z},
        .block = {block.x, block.y, block.z},
        .shared_bytes = shared,
        .per_thread = mode != MODE_BLOCK,
        .needs_fibers = mode == MODE_FIBERS,
    };
    return gj_cpu_launch(&l, err, errlen);
}

static void launch_ok(GjCpuKernelFn fn, void *state, Dim grid, Dim block, size_t shared, int mode) {
    char err[256] = "";
    int rc = launch(fn, state, grid, block, shared, mode, err, sizeof err);
    CHECK(rc == 0, "launch grid (%u,%u,%u) block (%u,%u,%u) failed: %s", grid.x, grid.y, grid.z,
          block.x, block.y, block.z, err);
}

/* ---- every (block, thread) exactly once, with the right indices ---------- */

typedef struct IndexState {
    Dim grid, block;
    int barrier;
    atomic_uint *hits;
    atomic_uint bad;
} IndexState;

static void k_index(void **params, GjCpuThread *t) {
    IndexState *s = params[0];
    unsigned bad = 0;
    unsigned g[3] = {s->grid.x, s->grid.y, s->grid.z}, b[3] = {s->block.x, s->block.y, s->block.z};
    for (int d = 0; d < 3; d++)
        bad += t->gdim[d] != g[d] || t->bdim[d] != b[d] || t->tid[d] >= b[d] || t->bid[d] >= g[d];
    unsigned lt = thread_lin(t);
    bad += t->lane != lt % 32 || t->warp != lt / 32;
    if (s->barrier)
        gj_cpu_barrier(t);
    bad += t->tid[0] + b[0] * (t->tid[1] + b[1] * t->tid[2]) != lt;   /* intact after a switch */
    atomic_fetch_add(&s->hits[(size_t)block_lin(t) * count(s->block) + lt], 1);
    if (bad)
        atomic_fetch_add(&s->bad, bad);
}

static void run_index(Dim grid, Dim block, int mode) {
    size_t total = (size_t)count(grid) * count(block);
    IndexState s = {.grid = grid, .block = block, .barrier = mode == MODE_FIBERS};
    s.hits = calloc(total, sizeof *s.hits);
    launch_ok(k_index, &s, grid, block, 0, mode);
    size_t wrong = 0;
    for (size_t i = 0; i < total; i++)
        wrong += atomic_load(&s.hits[i]) != 1;
    CHECK(wrong == 0 && atomic_load(&s.bad) == 0,
          "index: grid (%u,%u,%u) block (%u,%u,%u) mode %d: %zu threads not run once, %u bad",
          grid.x, grid.y, grid.z, block.x, block.y, block.z, mode, wrong, atomic_load(&s.bad));
    free(s.hits);
}

static const Dim GRIDS[] = {{1, 1, 1}, {7, 1, 1}, {3, 4, 1}, {2, 3, 4},
                            {5, 1, 3}, {1, 1, 9}, {4, 2, 3}, {2, 4, 2}};
static const Dim BLOCKS[] = {{1, 1, 1},    {33, 1, 1},  {8, 4, 1},  {4, 2, 3}, {1, 1, 64},
                             {1024, 1, 1}, {32, 32, 1}, {16, 8, 8}, {3, 5, 7}};
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_indices(void) {
    for (size_t g = 0; g < LEN(GRIDS); g++)
        for (size_t b = 0; b < LEN(BLOCKS); b++)
            for (int mode = MODE_BLOCK; mode <= MODE_THREADS; mode++)
                run_index(GRIDS[g], BLOCKS[b], mode);
    run_index((Dim){1000, 1, 1}, (Dim){64, 1, 1}, MODE_BLOCK);
    run_index((Dim){1000, 1, 1}, (Dim){64, 1, 1}, MODE_THREADS);
}

/* ---- shared memory: zeroed per block, private to it ----------------------- */

typedef struct SharedState {
    size_t words;
    int fibers;
    atomic_uint bad;
} SharedState;

static uint64_t shared_value(unsigned block, size_t j) { return (block + 1) * 1000003ull + j; }

static void k_shared(void **params, GjCpuThread *t) {
    SharedState *s = params[0];
    uint64_t *sh = t->shared;
    unsigned n = block_threads(t), i = thread_lin(t), blk = block_lin(t), bad = 0;
    bad += (uintptr_t)t->shared % 16 != 0;
    for (size_t j = i; j < s->words; j += n)
        bad += sh[j] != 0;
    if (s->fibers)
        gj_cpu_barrier(t);
    for (size_t j = i; j < s->words; j += n)
        sh[j] = shared_value(blk, j);
    if (s->fibers) {
        gj_cpu_barrier(t);
        for (size_t j = 0; j < s->words; j++)
            bad += sh[j] != shared_value(blk, j);
    }
    if (bad)
        atomic_fetch_add(&s->bad, bad);
}

static void test_shared(void) {
    static const unsigned sizes[] = {1, 31, 64, 256};
    static const size_t words[] = {1, 100, 4096};
    for (size_t a = 0; a < LEN(sizes); a++)
        for (size_t w = 0; w < LEN(words); w++)
            for (int f = 0; f < 2; f++) {
                SharedState s = {.words = words[w], .fibers = f};
                launch_ok(k_shared, &s, (Dim){40, 1, 1}, (Dim){sizes[a], 1, 1},
                          words[w] * sizeof(uint64_t), f);
                CHECK(atomic_load(&s.bad) == 0, "shared: block %u, %zu words, fibers %d: %u bad",
                      sizes[a], words[w], f, atomic_load(&s.bad));
            }
}

/* ---- barrier ordering, early exits, warp syncs ----------------------------- */

enum { EXIT_NONE, EXIT_THIRDS, EXIT_ALL_BUT_ONE, EXIT_STAGGERED };

typedef struct BarrierState {
    unsigned rounds;
    int exit_mode;
    int warp;              /* sync the warp instead of the block */
    atomic_uint bad;
    atomic_uint finished;
} BarrierState;

/* How many rounds thread i of n takes part in before it returns. */
static unsigned rounds_of(const BarrierState *s, unsigned i, unsigned n) {
    switch (s->exit_mode) {
    case EXIT_THIRDS: return i % 3 == 1 ? 0 : s->rounds;
    case EXIT_ALL_BUT_ONE: return i == n / 2 ? s->rounds : 0;
    case EXIT_STAGGERED: return i % 3 == 0 ? i % (s->rounds + 1) : s->rounds;
    default: return s->rounds;
    }
}

static uint64_t round_value(unsigned blk, unsigned r, unsigned i) {
    return ((uint64_t)blk << 40) ^ ((uint64_t)r << 20) ^ i ^ 0x5a5a5;
}

static void k_barrier(void **params, GjCpuThread *t) {
    BarrierState *s = params[0];
    uint64_t *sh = t->shared;
    unsigned n = block_threads(t), i = thread_lin(t), blk = block_lin(t), bad = 0;
    unsigned lo = s->warp ? t->warp * 32 : 0;
    unsigned hi = s->warp ? (lo + 32 < n ? lo + 32 : n) : n;
    unsigned mine = rounds_of(s, i, n);
    for (unsigned r = 0; r < mine; r++) {
        sh[i] = round_value(blk, r, i);
        if (s->warp)
            gj_cpu_syncwarp(t);
        else
            gj_cpu_barrier(t);
        for (unsigned j = lo; j < hi; j++)
            if (rounds_of(s, j, n) > r)
                bad += sh[j] != round_value(blk, r, j);
        if (s->warp)
            gj_cpu_syncwarp(t);
        else
            gj_cpu_barrier(t);
    }
    atomic_fetch_add(&s->finished, 1);
    if (bad)
        atomic_fetch_add(&s->bad, bad);
}

static void test_barriers(void) {
    static const Dim blocks[] = {{1, 1, 1},    {31, 1, 1}, {32, 1, 1},  {33, 1, 1}, {256, 1, 1},
                                 {1024, 1, 1}, {8, 8, 4},  {32, 32, 1}, {48, 1, 1}};
    for (size_t b = 0; b < LEN(blocks); b++)
        for (int mode = EXIT_NONE; mode <= EXIT_STAGGERED; mode++)
            for (int warp = 0; warp < 2; warp++) {
                unsigned n = count(blocks[b]);
                BarrierState s = {.rounds = n >= 1024 ? 3 : 5, .exit_mode = mode, .warp = warp};
                Dim grid = {3, 2, 1};
                launch_ok(k_barrier, &s, grid, blocks[b], n * sizeof(uint64_t), 1);
                CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.finished) == n * count(grid),
                      "barrier: block %u, exit mode %d, warp %d: %u bad, %u of %u finished", n,
                      mode, warp, atomic_load(&s.bad), atomic_load(&s.finished), n * count(grid));
            }
}

/* Thread 0 waits at the block barrier while its warp waits at a warp sync:
   a deadlock on the GPU, an error here. */
static void k_mixed(void **params, GjCpuThread *t) {
    atomic_uint *done = params[0];
    if (t->warp == 0 && t->lane != 0)
        gj_cpu_syncwarp(t);
    else
        gj_cpu_barrier(t);
    atomic_fetch_add(done, 1);
}

static void test_mixed_groups(void) {
    atomic_uint done = 0;
    char err[256] = "";
    int rc = launch(k_mixed, &done, (Dim){2, 1, 1}, (Dim){64, 1, 1}, 0, 1, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "syncwarp with mask 0xffffffff waited for lane 0, which "
                                  "reached syncthreads instead"),
          "mixed groups: rc %d, '%s'", rc, err);
}

/* Warp syncs whose release depends on a returning lane (the block's last
   thread returns after its warp-mates, which run before it, have parked) or
   on a partial last warp, while lower warps wait at the block barrier: the
   barrier must not open before every live thread has written. */
static void k_two_level(void **params, GjCpuThread *t) {
    atomic_uint *bad = params[0];
    uint64_t *sh = t->shared;
    unsigned n = block_threads(t), i = thread_lin(t), blk = block_lin(t), last = (n - 1) / 32;
    unsigned gone = n % 32 == 1 ? n : n - 1;   /* the last warp keeps two lanes or more */
    if (i == gone)
        return;
    if (t->warp == 0 || t->warp == last)
        gj_cpu_syncwarp(t);
    sh[i] = blk + 1;
    gj_cpu_barrier(t);
    unsigned wrong = 0;
    for (unsigned j = 0; j < n; j++)
        wrong += j != gone && sh[j] != blk + 1;
    atomic_fetch_add(bad, wrong);
}

static void test_two_level(void) {
    static const unsigned sizes[] = {20, 33, 48, 96, 1000};
    for (size_t k = 0; k < LEN(sizes); k++) {
        atomic_uint bad = 0;
        launch_ok(k_two_level, &bad, (Dim){3, 1, 1}, (Dim){sizes[k], 1, 1},
                  sizes[k] * sizeof(uint64_t), 1);
        CHECK(atomic_load(&bad) == 0, "two-level sync, block %u: %u bad", sizes[k],
              atomic_load(&bad));
    }
}

/* A fiber's stack holds a sizeable local array (default stacks are 64 KiB). */
static void k_stack(void **params, GjCpuThread *t) {
    atomic_uint *bad = params[0];
    volatile unsigned char buf[40000];
    for (size_t j = 0; j < sizeof buf; j++)
        buf[j] = (unsigned char)(j + t->tid[0]);
    gj_cpu_barrier(t);
    unsigned wrong = 0;
    for (size_t j = 0; j < sizeof buf; j++)
        wrong += buf[j] != (unsigned char)(j + t->tid[0]);
    atomic_fetch_add(bad, wrong);
}

static void test_stack(void) {
    atomic_uint bad = 0;
    launch_ok(k_stack, &bad, (Dim){4, 1, 1}, (Dim){64, 1, 1}, 0, 1);
    CHECK(atomic_load(&bad) == 0, "stack: %u bytes wrong", atomic_load(&bad));
}

/* ---- warp and block collectives ------------------------------------------- */

static const unsigned COLL_SIZES[] = {1, 31, 32, 33, 64, 96, 256};

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Thread i's input in block blk for round `salt`. */
static uint64_t val(unsigned blk, unsigned i, unsigned salt) {
    return mix(((uint64_t)blk << 40) ^ ((uint64_t)salt << 20) ^ i);
}

/* Lanes in the caller's warp. */
static unsigned warp_count(const GjCpuThread *t) {
    unsigned rest = block_threads(t) - t->warp * 32;
    return rest < 32 ? rest : 32;
}

static uint32_t lanes_mask(unsigned count) { return count < 32 ? (1u << count) - 1 : ~0u; }

typedef struct CollState {
    int mode, width, split;
    int32_t arg;
    unsigned salt;
    atomic_uint bad, ran;
} CollState;

static void coll_done(CollState *s, unsigned bad) {
    atomic_fetch_add(&s->ran, 1);
    if (bad)
        atomic_fetch_add(&s->bad, bad);
}

/* The lane a shuffle by every lane of a warp of `count` lanes reads, as the
   CUDA Programming Guide describes it. */
static unsigned ref_shfl_src(unsigned lane, unsigned count, int mode, int32_t arg, unsigned width) {
    unsigned sec = lane / width * width, src = lane;
    uint32_t u = (uint32_t)arg;
    switch (mode) {
    case GJ_CPU_SHFL_IDX: src = sec + u % width; break;
    case GJ_CPU_SHFL_UP: src = u <= lane - sec ? lane - u : lane; break;
    case GJ_CPU_SHFL_DOWN: src = (uint64_t)lane - sec + u < width ? lane + u : lane; break;
    default: src = (lane ^ u) < sec + width ? lane ^ u : lane; break;   /* lower sections too */
    }
    return src < count ? src : lane;
}

static void k_shfl(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    unsigned i = thread_lin(t), blk = block_lin(t);
    uint64_t got = gj_cpu_warp_shfl(t, ~0u, val(blk, i, s->salt), s->arg, s->width, s->mode);
    unsigned src = ref_shfl_src(t->lane, warp_count(t), s->mode, s->arg, (unsigned)s->width);
    coll_done(s, got != val(blk, t->warp * 32 + src, s->salt));
}

static void run_coll(GjCpuKernelFn fn, CollState *s, unsigned n, const char *what) {
    launch_ok(fn, s, (Dim){3, 1, 1}, (Dim){n, 1, 1}, n * sizeof(uint64_t), 1);
    CHECK(atomic_load(&s->bad) == 0 && atomic_load(&s->ran) == 3 * n,
          "%s: block %u, mode %d, width %d, arg %d, split %d: %u wrong, %u of %u ran", what, n,
          s->mode, s->width, s->arg, s->split, atomic_load(&s->bad), atomic_load(&s->ran), 3 * n);
}

static void test_shfl(void) {
    static const int32_t args[] = {0, 1, 3, 16, 31, 33, -1};
    for (size_t b = 0; b < LEN(COLL_SIZES); b++)
        for (int mode = GJ_CPU_SHFL_IDX; mode <= GJ_CPU_SHFL_XOR; mode++)
            for (int width = 1; width <= 32; width *= 2)
                for (size_t a = 0; a < LEN(args); a++) {
                    CollState s = {.mode = mode,
                                   .width = width,
                                   .arg = args[a],
                                   .salt = (unsigned)(a * 64 + (size_t)width)};
                    run_coll(k_shfl, &s, COLL_SIZES[b], "shfl");
                }
}

/* A warp sum by shfl_down in a loop, against the same tree in C (lanes past
   a partial warp's end read their own value). */
static void k_reduce(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    unsigned blk = block_lin(t), count = warp_count(t), base = t->warp * 32;
    uint64_t v = val(blk, thread_lin(t), s->salt) & 0xffff, ref[32];
    for (unsigned j = 0; j < count; j++)
        ref[j] = val(blk, base + j, s->salt) & 0xffff;
    for (int32_t off = 16; off > 0; off /= 2) {
        v += gj_cpu_warp_shfl(t, ~0u, v, off, 32, GJ_CPU_SHFL_DOWN);
        uint64_t next[32];
        for (unsigned j = 0; j < count; j++)
            next[j] = ref[j] + ref[j + (unsigned)off < count ? j + (unsigned)off : j];
        memcpy(ref, next, sizeof ref);
    }
    uint64_t sum = 0;
    for (unsigned j = 0; j < count; j++)
        sum += val(blk, base + j, s->salt) & 0xffff;
    coll_done(s,
              (unsigned)(v != ref[t->lane]) + (unsigned)(count == 32 && t->lane == 0 && v != sum));
}

static void test_reduce(void) {
    for (size_t b = 0; b < LEN(COLL_SIZES); b++)
        for (unsigned salt = 0; salt < 4; salt++) {
            CollState s = {.salt = salt};
            run_coll(k_reduce, &s, COLL_SIZES[b], "shfl_down reduction");
        }
}

/* The mask a lane uses: the whole warp, or (split) its parity class, so
   two disjoint groups meet separately. */
static uint32_t coll_mask(const CollState *s, unsigned lane) {
    return !s->split ? ~0u : lane & 1 ? 0xaaaaaaaau : 0x55555555u;
}

static int vote_pred(unsigned blk, unsigned i, unsigned r) {
    return r == 5 ? 1 : r == 6 ? 0 : r == 7 ? (int)(i & 1) : val(blk, i, r) % 3 == 0;
}

static void k_vote(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    unsigned blk = block_lin(t), bad = 0;
    uint32_t mask = coll_mask(s, t->lane), part = mask & lanes_mask(warp_count(t));
    for (unsigned r = 0; r < 8; r++) {
        uint32_t ballot = 0;
        for (unsigned j = 0; j < 32; j++)
            if (part >> j & 1)
                ballot |= (uint32_t)vote_pred(blk, t->warp * 32 + j, r) << j;
        int p = vote_pred(blk, thread_lin(t), r) ? 7 : 0;   /* any non-zero value is true */
        bad += gj_cpu_warp_vote(t, mask, p, GJ_CPU_VOTE_BALLOT) != ballot;
        bad += gj_cpu_warp_vote(t, mask, p, GJ_CPU_VOTE_ALL) != (ballot == part);
        bad += gj_cpu_warp_vote(t, mask, p, GJ_CPU_VOTE_ANY) != (ballot != 0);
        bad += gj_cpu_warp_vote(t, mask, p, GJ_CPU_VOTE_EQ) != (ballot == 0 || ballot == part);
    }
    coll_done(s, bad);
}

/* Values from a small set, so lanes match; round 2 all alike; round 3
   differing only above bit 32. */
static uint64_t match_value(unsigned blk, unsigned i, unsigned r) {
    return r == 2 ? 42 : r == 3 ? (uint64_t)(i & 1) << 40 : val(blk, i, r) % 4;
}

static void k_match(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    unsigned blk = block_lin(t), bad = 0;
    uint32_t mask = coll_mask(s, t->lane), part = mask & lanes_mask(warp_count(t));
    for (unsigned r = 0; r < 6; r++) {
        uint64_t mine = match_value(blk, thread_lin(t), r);
        uint32_t any = 0;
        int all = 1;
        for (unsigned j = 0; j < 32; j++)
            if (part >> j & 1) {
                uint64_t v = match_value(blk, t->warp * 32 + j, r);
                any |= (uint32_t)(v == mine) << j;
                all &= v == mine;
            }
        int32_t pred = -1;
        bad += gj_cpu_warp_match(t, mask, mine, GJ_CPU_MATCH_ANY, NULL) != any;
        bad += gj_cpu_warp_match(t, mask, mine, GJ_CPU_MATCH_ALL, &pred) != (all ? part : 0);
        bad += pred != all;
    }
    coll_done(s, bad);
}

/* Lanes meet in groups of 8 (syncwarp with a partial mask) to pass values
   through shared memory. */
static void k_syncwarp_groups(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    uint64_t *sh = t->shared;
    unsigned i = thread_lin(t), blk = block_lin(t), bad = 0, first = i & ~7u;
    unsigned last = first + 8 < block_threads(t) ? first + 8 : block_threads(t);
    uint32_t mask = 0xffu << (t->lane & ~7u);
    for (unsigned r = 0; r < 4; r++) {
        sh[i] = val(blk, i, r);
        gj_cpu_syncwarp_mask(t, mask);
        for (unsigned j = first; j < last; j++)
            bad += sh[j] != val(blk, j, r);
        gj_cpu_syncwarp_mask(t, mask);
    }
    coll_done(s, bad);
}

static void test_votes_matches(void) {
    for (size_t b = 0; b < LEN(COLL_SIZES); b++)
        for (int split = 0; split < 2; split++) {
            CollState v = {.split = split}, m = {.split = split}, g = {0};
            run_coll(k_vote, &v, COLL_SIZES[b], "vote");
            run_coll(k_match, &m, COLL_SIZES[b], "match");
            if (!split)
                run_coll(k_syncwarp_groups, &g, COLL_SIZES[b], "syncwarp groups");
        }
}

/* syncthreads_count/and/or 100 times in a loop, every thread checking its
   result; threads i % 5 == 3 return halfway and stop counting. */
static int sync_pred(unsigned blk, unsigned i, unsigned it) {
    unsigned k = it % 4 == 0 ? 1 : it % 4 == 1 ? 2 : 7;
    return it % 5 == 4 ? 0 : val(blk, i, it) % k == 0;
}

static int sync_live(unsigned i, unsigned it) { return !(i % 5 == 3 && it >= 50); }

static void k_syncops(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    unsigned n = block_threads(t), i = thread_lin(t), blk = block_lin(t), bad = 0;
    for (unsigned it = 0; it < 100; it++) {
        if (!sync_live(i, it))
            break;
        unsigned live = 0, yes = 0;
        for (unsigned j = 0; j < n; j++)
            if (sync_live(j, it)) {
                live++;
                yes += (unsigned)sync_pred(blk, j, it);
            }
        int32_t op = (int32_t)(it % 3);
        int32_t want = op == GJ_CPU_SYNC_COUNT ? (int32_t)yes
                       : op == GJ_CPU_SYNC_AND ? yes == live
                                               : yes > 0;
        bad += gj_cpu_syncthreads_op(t, sync_pred(blk, i, it) ? -3 : 0, op) != want;
    }
    coll_done(s, bad);
}

static void test_syncthreads_ops(void) {
    for (size_t b = 0; b < LEN(COLL_SIZES); b++) {
        CollState s = {0};
        run_coll(k_syncops, &s, COLL_SIZES[b], "syncthreads_op");
    }
}

/* Odd lanes return at once; even lanes then use the full mask: no hang,
   the odd lanes do not take part (a shuffle from one gives the caller's own
   value) and, once a warp operation has passed, activemask lacks them
   (those in between two warp syncs, as lanes past the second may have
   returned too). */
static void k_exited(void **params, GjCpuThread *t) {
    CollState *s = params[0];
    if (t->lane & 1)
        return;
    unsigned blk = block_lin(t), bad = 0;
    uint64_t v = val(blk, thread_lin(t), 0);
    uint32_t even = 0x55555555u & lanes_mask(warp_count(t));
    bad += gj_cpu_warp_shfl(t, ~0u, v, 1, 32, GJ_CPU_SHFL_XOR) != v;
    bad += gj_cpu_warp_shfl(t, ~0u, v, 0, 32, GJ_CPU_SHFL_IDX) != val(blk, t->warp * 32, 0);
    bad += gj_cpu_warp_vote(t, ~0u, 1, GJ_CPU_VOTE_BALLOT) != even;
    gj_cpu_syncwarp(t);   /* now every odd lane has returned, and no even one */
    bad += gj_cpu_activemask(t) != even;
    gj_cpu_syncwarp(t);
    atomic_fetch_add(&s->ran, 1);   /* odd lanes do not count */
    if (bad)
        atomic_fetch_add(&s->bad, bad);
}

static void test_exited_lanes(void) {
    for (size_t b = 0; b < LEN(COLL_SIZES); b++) {
        CollState s = {0};
        unsigned n = COLL_SIZES[b];
        launch_ok(k_exited, &s, (Dim){3, 1, 1}, (Dim){n, 1, 1}, 0, 1);
        CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.ran) == 3 * ((n + 1) / 2),
              "exited lanes: block %u: %u wrong, %u ran", n, atomic_load(&s.bad),
              atomic_load(&s.ran));
    }
}

/* Misuses: each must give the launch an error naming it, not a hang. */
static void k_misuse(void **params, GjCpuThread *t) {
    const int *kind = params[0];
    uint32_t lane = t->lane;
    switch (*kind) {
    case 0:   /* a mask without the caller */
        gj_cpu_warp_shfl(t, 1, 5, 0, 32, GJ_CPU_SHFL_IDX);
        break;
    case 1:   /* one mask, two operations */
        if (lane & 1)
            gj_cpu_warp_vote(t, ~0u, 1, GJ_CPU_VOTE_BALLOT);
        else
            gj_cpu_warp_shfl(t, ~0u, 5, 0, 32, GJ_CPU_SHFL_IDX);
        break;
    case 2:   /* overlapping masks that wait for each other */
        if (lane < 3)
            gj_cpu_warp_shfl(t, lane == 0 ? 0x3 : lane == 1 ? 0x7 : 0x5, 5, 0, 32, GJ_CPU_SHFL_IDX);
        break;
    case 3:   /* a width that is not a power of two */
        gj_cpu_warp_shfl(t, ~0u, 5, 0, 3, GJ_CPU_SHFL_IDX);
        break;
    default:  /* a shuffle waits for a lane at the block barrier */
        if (t->warp == 1 && lane == 7)
            gj_cpu_syncthreads_op(t, 1, GJ_CPU_SYNC_COUNT);
        else if (t->warp == 1)
            gj_cpu_warp_shfl(t, ~0u, 5, 0, 32, GJ_CPU_SHFL_DOWN);
        else
            gj_cpu_barrier(t);
        break;
    }
}

static void test_misuse(void) {
    static const char *const want[][2] = {
        /* the thread (any block: they fail in parallel), what */
        {"thread (1, 0, 0) of block (", "): shfl_sync with mask 0x00000001, which does not name "
                                        "the calling lane 1"},
        {"thread (0, 0, 0) of block (", "): lanes 0 and 1 of warp 0 met with mask 0xffffffff at "
                                        "different warp operations, shfl_sync and ballot_sync"},
        {"thread (0, 0, 0) of block (", "): shfl_sync with mask 0x00000003 waited for lane 1, "
                                        "which waits at shfl_sync with mask 0x00000007"},
        {"thread (0, 0, 0) of block (", "): shfl_sync with width 3: the width must be a power "
                                        "of two from 1 to 32"},
        {"thread (32, 0, 0) of block (",
         "): shfl_down_sync with mask 0xffffffff waited for "
         "lane 7, which reached syncthreads_count instead (a deadlock on the GPU)"},
    };
    for (int kind = 0; kind < (int)LEN(want); kind++)
        for (int big = 0; big < 2; big++) {
            char err[256] = "";
            void *params[1] = {&kind};
            GjCpuLaunch l = {.fn = k_misuse,
                             .params = params,
                             .per_thread = 1,
                             .needs_fibers = 1,
                             .grid = {big ? 500u : 1u, 1, 1},
                             .block = {64, 1, 1}};
            int rc = gj_cpu_launch(&l, err, sizeof err);
            CHECK(rc == -1 && strncmp(err, want[kind][0], strlen(want[kind][0])) == 0 &&
                      strstr(err, want[kind][1]),
                  "misuse %d: rc %d, '%s'", kind, rc, err);
            /* The abandoned fibers' stacks serve the next launch. */
            BarrierState s = {.rounds = 3, .exit_mode = EXIT_STAGGERED};
            launch_ok(k_barrier, &s, (Dim){4, 1, 1}, (Dim){64, 1, 1}, 64 * sizeof(uint64_t), 1);
            CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.finished) == 256,
                  "barrier after misuse %d: %u bad", kind, atomic_load(&s.bad));
        }
    /* A block of one thread runs without fibers: a misuse there is reported too. */
    int kind = 0;
    char err[256] = "";
    CHECK(launch(k_misuse, &kind, (Dim){1, 1, 1}, (Dim){1, 1, 1}, 0, 1, err, sizeof err) == 0,
          "mask 0x1 in a block of one thread: %s", err);
    kind = 3;
    CHECK(launch(k_misuse, &kind, (Dim){2, 1, 1}, (Dim){1, 1, 1}, 0, 1, err, sizeof err) == -1 &&
              strstr(err, "power of two"),
          "width 3 in a block of one thread: '%s'", err);
}

/* ---- printf -------------------------------------------------------------------- */

/* CUDA's vprintf argument buffer: each value at its natural alignment. */
typedef struct Args {
    _Alignas(8) unsigned char b[256];
    size_t n;
} Args;

static void arg(Args *a, const void *v, size_t size) {
    a->n = (a->n + size - 1) & ~(size - 1);
    memcpy(a->b + a->n, v, size);
    a->n += size;
}

static void arg_i32(Args *a, int32_t v) { arg(a, &v, 4); }
static void arg_i64(Args *a, int64_t v) { arg(a, &v, 8); }
static void arg_f64(Args *a, double v) { arg(a, &v, 8); }
static void arg_ptr(Args *a, const void *p) {
    uint64_t v = (uintptr_t)p;
    arg(a, &v, 8);
}

/* Sends fd 1 to a temporary file until capture_end, which returns what was
   written (malloc'd). */
static int capture_begin(FILE **tmp) {
    fflush(stdout);
    *tmp = tmpfile();
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(*tmp), STDOUT_FILENO);
    return saved;
}

static char *capture_end(FILE *tmp, int saved) {
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long len = ftell(tmp) >= 0 ? lseek(fileno(tmp), 0, SEEK_END) : 0;
    char *text = calloc((size_t)len + 1, 1);
    if (pread(fileno(tmp), text, (size_t)len, 0) != len)
        text[0] = '\0';
    fclose(tmp);
    return text;
}

static void check_print(const char *format, const Args *a, int want_rc, const char *want) {
    FILE *tmp;
    int saved = capture_begin(&tmp);
    int32_t rc = gj_cpu_vprintf(format, a ? a->b : NULL);
    char *got = capture_end(tmp, saved);
    CHECK(rc == want_rc && strcmp(got, want) == 0,
          "vprintf(\"%s\"): rc %d (want %d), '%s' (want '%s')", format, rc, want_rc, got, want);
    free(got);
}

static void test_vprintf_formats(void) {
    char want[512];
    Args a = {.n = 0};
    arg_i32(&a, -42), arg_i32(&a, 42), arg_i32(&a, -1), arg_i32(&a, 255), arg_i32(&a, 255);
    arg_i32(&a, 8), arg_i32(&a, 7), arg_i32(&a, -7), arg_i32(&a, 7), arg_i32(&a, 7);
    snprintf(want, sizeof want, "%d %i %u %x %X %o|%5d|%-5d|%05d|%+d\n", -42, 42, -1u, 255, 255, 8,
             7, -7, 7, 7);
    check_print("%d %i %u %x %X %o|%5d|%-5d|%05d|%+d\n", &a, 10, want);

    a.n = 0; /* 4-byte values between 8-byte ones: padding */
    arg_i32(&a, 3), arg_i64(&a, -1234567890123ll), arg_i32(&a, 4), arg_f64(&a, 2.5);
    arg_ptr(&a, "str"), arg_i32(&a, 'Z'), arg_i64(&a, (int64_t)18446744073709551615ull);
    arg_i64(&a, 1ll << 40), arg_i64(&a, 0xdeadbeefcafell);
    snprintf(want, sizeof want, "%d %lld %d %f %s %c %% %llu %ld %lx\n", 3, -1234567890123ll, 4,
             2.5, "str", 'Z', 18446744073709551615ull, 1l << 40, 0xdeadbeefcafel);
    check_print("%d %lld %d %f %s %c %% %llu %ld %lx\n", &a, 9, want);

    a.n = 0;
    arg_f64(&a, 3.14159265), arg_f64(&a, -12345.678), arg_f64(&a, 1e-7), arg_f64(&a, 0.5);
    arg_i32(&a, 6), arg_i32(&a, 42), arg_i32(&a, 2), arg_f64(&a, 1.0 / 3), arg_i32(&a, -4);
    arg_i32(&a, 9);
    snprintf(want, sizeof want, "%.3f %10.2e %g %-8.3g| %*d %.*f|%*d|\n", 3.14159265, -12345.678,
             1e-7, 0.5, 6, 42, 2, 1.0 / 3, -4, 9);
    check_print("%.3f %10.2e %g %-8.3g| %*d %.*f|%*d|\n", &a, 10, want);

    a.n = 0;
    arg_ptr(&a, NULL), arg_ptr(&a, "abcdef"), arg_ptr(&a, (void *)0x1234);
    snprintf(want, sizeof want, "(null) ab %p\n", (void *)0x1234);
    check_print("%s %.2s %p\n", &a, 3, want);

    check_print("no arguments\n", NULL, 0, "no arguments\n");
    check_print("%d and %s\n", NULL, 0, "%d and %s\n");
    a.n = 0;
    arg_i32(&a, 5);
    check_print("%k %n %d%", &a, 1, "%k %n 5%");
    CHECK(gj_cpu_vprintf(NULL, NULL) == -1, "vprintf(NULL) not -1");

    a.n = 0; /* longer than the stack buffer */
    arg_i32(&a, 77);
    static char wide[1100];
    snprintf(wide, sizeof wide, "[%1000d]\n", 77);
    check_print("[%1000d]\n", &a, 1, wide);
}

/* Every thread of several blocks prints a line: none is cut or mixed. */
static void k_print(void **params, GjCpuThread *t) {
    (void)params;
    Args a = {.n = 0};
    arg_i32(&a, (int32_t)block_lin(t)), arg_i32(&a, (int32_t)thread_lin(t));
    arg_i64(&a, (int64_t)block_lin(t) * 1000000007ll), arg_f64(&a, thread_lin(t) * 0.25);
    gj_cpu_vprintf("block %d thread %d: %lld %.2f and some more text to make the line longer\n",
                   a.b);
}

static void test_vprintf_threads(void) {
    FILE *tmp;
    int saved = capture_begin(&tmp);
    launch_ok(k_print, NULL, (Dim){16, 1, 1}, (Dim){40, 1, 1}, 0, 0);
    char *text = capture_end(tmp, saved);
    unsigned seen[16 * 40] = {0}, lines = 0, bad = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        int blk, thr, used = 0;
        long long big;
        double q;
        if (sscanf(line,
                   "block %d thread %d: %lld %lf and some more text to make the line "
                   "longer%n",
                   &blk, &thr, &big, &q, &used) != 4 ||
            line[used] != '\0' || blk < 0 || blk >= 16 || thr < 0 || thr >= 40 ||
            big != blk * 1000000007ll || q != thr * 0.25) {
            bad++;
            continue;
        }
        seen[blk * 40 + thr]++;
    }
    for (unsigned k = 0; k < 16 * 40; k++)
        bad += seen[k] != 1;
    CHECK(lines == 16 * 40 && bad == 0, "printing threads: %u lines, %u bad", lines, bad);
    free(text);
}

/* ---- errors ---------------------------------------------------------------- */

static void k_nothing(void **params, GjCpuThread *t) {
    (void)params;
    gj_cpu_barrier(t);
}

static void k_relaunch(void **params, GjCpuThread *t) {
    atomic_int *rcs = params[0];
    char err[128];
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL); /* let the helpers take blocks */
    atomic_fetch_add(&rcs[block_lin(t)], launch(k_nothing, NULL, (Dim){1, 1, 1}, (Dim){1, 1, 1}, 0,
                                                0, err, sizeof err));
}

static void test_errors(void) {
    char err[256];
    struct {
        Dim grid, block;
    } bad[] = {
        {{1, 1, 1}, {0, 1, 1}}, {{1, 1, 1}, {1025, 1, 1}}, {{1, 1, 1}, {32, 32, 2}},
        {{0, 1, 1}, {1, 1, 1}}, {{1, 1, 0}, {1, 1, 1}},
    };
    for (size_t i = 0; i < LEN(bad); i++) {
        err[0] = '\0';
        int rc = launch(k_nothing, NULL, bad[i].grid, bad[i].block, 0, 1, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "invalid"), "invalid configuration %zu: rc %d, '%s'", i, rc,
              err);
    }
    GjCpuLaunch none = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    CHECK(gj_cpu_launch(&none, err, sizeof err) == -1, "launch without a function accepted");
    CHECK(gj_cpu_launch(&none, NULL, 0) == -1, "launch without a function accepted (no err)");

    /* A barrier in a kernel launched without fibers: fine alone, reported otherwise. */
    CHECK(launch(k_nothing, NULL, (Dim){5, 1, 1}, (Dim){1, 1, 1}, 0, 0, err, sizeof err) == 0,
          "barrier without fibers, one thread per block: %s", err);
    err[0] = '\0';
    CHECK(launch(k_nothing, NULL, (Dim){5, 1, 1}, (Dim){2, 1, 1}, 0, 0, err, sizeof err) == -1 &&
              strstr(err, "needs_fibers"),
          "barrier without fibers not reported: '%s'", err);
    err[0] = '\0';
    CHECK(launch(k_nothing, NULL, (Dim){5, 1, 1}, (Dim){2, 1, 1}, 0, MODE_THREADS, err,
                 sizeof err) == -1 &&
              strstr(err, "needs_fibers"),
          "barrier in a kernel run per thread without fibers not reported: '%s'", err);
    CHECK(launch(k_nothing, NULL, (Dim){5, 1, 1}, (Dim){2, 1, 1}, 0, 1, err, sizeof err) == 0,
          "launch after a misuse failed: %s", err);

    atomic_int rcs[8] = {0};
    launch_ok(k_relaunch, rcs, (Dim){8, 1, 1}, (Dim){1, 1, 1}, 0, 0);
    for (int i = 0; i < 8; i++)
        CHECK(atomic_load(&rcs[i]) == -1, "launch from kernel code in block %d returned %d", i,
              atomic_load(&rcs[i]));
}

/* ---- concurrency, repetition, fork ------------------------------------------ */

static void *launcher_thread(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int it = 0; it < 40; it++) {
        const Dim g = GRIDS[(seed + (unsigned)it) % LEN(GRIDS)];
        const Dim b = BLOCKS[(seed * 3 + (unsigned)it) % LEN(BLOCKS)];
        run_index(g, b, it & 1);
        if (it % 8 == 0) {
            BarrierState s = {.rounds = 3, .exit_mode = EXIT_STAGGERED};
            launch_ok(k_barrier, &s, (Dim){4, 1, 1}, (Dim){100, 1, 1}, 100 * sizeof(uint64_t), 1);
            CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.finished) == 400,
                  "concurrent barrier: %u bad", atomic_load(&s.bad));
        }
    }
    return NULL;
}

static void test_concurrent(void) {
    pthread_t th[2];
    for (unsigned i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, launcher_thread, (void *)(uintptr_t)(i + 1)) == 0,
              "pthread_create");
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
}

static void test_many_small(void) {
    for (int it = 0; it < 2000; it++)
        run_index((Dim){1u + (unsigned)it % 5, 1, 1}, (Dim){1u + (unsigned)it % 40, 1, 1},
                  it % 3 == 0);
}

static void test_fork(void) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        run_index((Dim){9, 1, 1}, (Dim){33, 1, 1}, 1);
        run_index((Dim){9, 1, 1}, (Dim){33, 1, 1}, 0);
        _exit(atomic_load(&failures) ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "launches in a fork() child failed");
}

int main(void) {
    alarm(240); /* a deadlock fails the test instead of hanging it */
    const char *env = getenv("GPUJIT_CPU_THREADS");
    int workers = gj_cpu_workers();
    printf("workers: %d\n", workers);
    CHECK(workers >= 1, "gj_cpu_workers() = %d", workers);
    if (env && *env)
        CHECK(workers == atoi(env), "GPUJIT_CPU_THREADS=%s but %d workers", env, workers);
    else {
        cpu_set_t cpus; /* one worker per CPU this process may use */
        int ncpus = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
        CHECK(workers == ncpus, "%d CPUs but %d workers", ncpus, workers);
    }
    test_indices();
    test_shared();
    test_barriers();
    test_mixed_groups();
    test_two_level();
    test_stack();
    test_shfl();
    test_reduce();
    test_votes_matches();
    test_syncthreads_ops();
    test_exited_lanes();
    test_misuse();
    test_vprintf_formats();
    test_vprintf_threads();
    test_errors();
    test_concurrent();
    test_many_small();
    if (!getenv("GJ_TEST_NO_FORK")) /* qemu-user cannot fork a threaded guest */
        test_fork();
    int n = atomic_load(&failures);
    printf("%s: %d failure(s)\n", n ? "FAILED" : "ok", n);
    return n ? 1 : 0;
}
