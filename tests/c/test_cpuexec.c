/*
 * test_cpuexec.c - unit test of the host-CPU grid executor (runtime/cpuexec.c).
 *
 * Built and run by tests/test_cpuexec.py (with the pool's worker count set
 * by GPUJIT_CPU_THREADS, and under AddressSanitizer where available).  The
 * "kernels" are C functions with the GjCpuKernelFn signature; each counts
 * what it finds wrong in its state's `bad`, and the launcher side checks
 * every (block, thread) ran exactly once.  Prints one line per failure and
 * exits 1 if there was any.
 */
#include "cpuexec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            atomic_fetch_add(&failures, 1);                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

typedef struct Dim { unsigned x, y, z; } Dim;

static unsigned count(Dim d) { return d.x * d.y * d.z; }

static unsigned thread_lin(const GjCpuThread *t)
{
    return t->tid[0] + t->bdim[0] * (t->tid[1] + t->bdim[1] * t->tid[2]);
}

static unsigned block_lin(const GjCpuThread *t)
{
    return t->bid[0] + t->gdim[0] * (t->bid[1] + t->gdim[1] * t->bid[2]);
}

static unsigned block_threads(const GjCpuThread *t)
{
    return t->bdim[0] * t->bdim[1] * t->bdim[2];
}

static int launch(GjCpuKernelFn fn, void *state, Dim grid, Dim block, size_t shared,
                  int fibers, char *err, size_t errlen)
{
    void *params[1] = { state };
    GjCpuLaunch l = {
        .fn = fn, .params = params,
        .grid = { grid.x, grid.y, grid.z }, .block = { block.x, block.y, block.z },
        .shared_bytes = shared, .needs_fibers = fibers,
    };
    return gj_cpu_launch(&l, err, errlen);
}

static void launch_ok(GjCpuKernelFn fn, void *state, Dim grid, Dim block, size_t shared,
                      int fibers)
{
    char err[256] = "";
    int rc = launch(fn, state, grid, block, shared, fibers, err, sizeof err);
    CHECK(rc == 0, "launch grid (%u,%u,%u) block (%u,%u,%u) failed: %s", grid.x, grid.y,
          grid.z, block.x, block.y, block.z, err);
}

/* ---- every (block, thread) exactly once, with the right indices ---------- */

typedef struct IndexState {
    Dim grid, block;
    int barrier;
    atomic_uint *hits;
    atomic_uint bad;
} IndexState;

static void k_index(void **params, GjCpuThread *t)
{
    IndexState *s = params[0];
    unsigned bad = 0;
    unsigned g[3] = { s->grid.x, s->grid.y, s->grid.z }, b[3] = { s->block.x, s->block.y, s->block.z };
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

static void run_index(Dim grid, Dim block, int fibers)
{
    size_t total = (size_t)count(grid) * count(block);
    IndexState s = { .grid = grid, .block = block, .barrier = fibers };
    s.hits = calloc(total, sizeof *s.hits);
    launch_ok(k_index, &s, grid, block, 0, fibers);
    size_t wrong = 0;
    for (size_t i = 0; i < total; i++)
        wrong += atomic_load(&s.hits[i]) != 1;
    CHECK(wrong == 0 && atomic_load(&s.bad) == 0,
          "index: grid (%u,%u,%u) block (%u,%u,%u) fibers %d: %zu threads not run once, %u bad",
          grid.x, grid.y, grid.z, block.x, block.y, block.z, fibers, wrong, atomic_load(&s.bad));
    free(s.hits);
}

static const Dim GRIDS[] = { {1, 1, 1}, {7, 1, 1}, {3, 4, 1}, {2, 3, 4}, {5, 1, 3}, {1, 1, 9},
                             {4, 2, 3}, {2, 4, 2} };
static const Dim BLOCKS[] = { {1, 1, 1}, {33, 1, 1}, {8, 4, 1}, {4, 2, 3}, {1, 1, 64},
                              {1024, 1, 1}, {32, 32, 1}, {16, 8, 8}, {3, 5, 7} };
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_indices(void)
{
    for (size_t g = 0; g < LEN(GRIDS); g++)
        for (size_t b = 0; b < LEN(BLOCKS); b++)
            for (int f = 0; f < 2; f++)
                run_index(GRIDS[g], BLOCKS[b], f);
    run_index((Dim){ 1000, 1, 1 }, (Dim){ 64, 1, 1 }, 0);
}

/* ---- shared memory: zeroed per block, private to it ----------------------- */

typedef struct SharedState {
    size_t words;
    int fibers;
    atomic_uint bad;
} SharedState;

static uint64_t shared_value(unsigned block, size_t j) { return (block + 1) * 1000003ull + j; }

static void k_shared(void **params, GjCpuThread *t)
{
    SharedState *s = params[0];
    uint64_t *sh = t->shared;
    unsigned n = block_threads(t), i = thread_lin(t), blk = block_lin(t), bad = 0;
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

static void test_shared(void)
{
    static const unsigned sizes[] = { 1, 31, 64, 256 };
    static const size_t words[] = { 1, 100, 4096 };
    for (size_t a = 0; a < LEN(sizes); a++)
        for (size_t w = 0; w < LEN(words); w++)
            for (int f = 0; f < 2; f++) {
                SharedState s = { .words = words[w], .fibers = f };
                launch_ok(k_shared, &s, (Dim){ 40, 1, 1 }, (Dim){ sizes[a], 1, 1 },
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
static unsigned rounds_of(const BarrierState *s, unsigned i, unsigned n)
{
    switch (s->exit_mode) {
    case EXIT_THIRDS: return i % 3 == 1 ? 0 : s->rounds;
    case EXIT_ALL_BUT_ONE: return i == n / 2 ? s->rounds : 0;
    case EXIT_STAGGERED: return i % 3 == 0 ? i % (s->rounds + 1) : s->rounds;
    default: return s->rounds;
    }
}

static uint64_t round_value(unsigned blk, unsigned r, unsigned i)
{
    return ((uint64_t)blk << 40) ^ ((uint64_t)r << 20) ^ i ^ 0x5a5a5;
}

static void k_barrier(void **params, GjCpuThread *t)
{
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

static void test_barriers(void)
{
    static const Dim blocks[] = { {1, 1, 1}, {31, 1, 1}, {32, 1, 1}, {33, 1, 1}, {256, 1, 1},
                                  {1024, 1, 1}, {8, 8, 4}, {32, 32, 1}, {48, 1, 1} };
    for (size_t b = 0; b < LEN(blocks); b++)
        for (int mode = EXIT_NONE; mode <= EXIT_STAGGERED; mode++)
            for (int warp = 0; warp < 2; warp++) {
                unsigned n = count(blocks[b]);
                BarrierState s = { .rounds = n >= 1024 ? 3 : 5, .exit_mode = mode, .warp = warp };
                Dim grid = { 3, 2, 1 };
                launch_ok(k_barrier, &s, grid, blocks[b], n * sizeof(uint64_t), 1);
                CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.finished) == n * count(grid),
                      "barrier: block %u, exit mode %d, warp %d: %u bad, %u of %u finished",
                      n, mode, warp, atomic_load(&s.bad), atomic_load(&s.finished),
                      n * count(grid));
            }
}

/* Thread 0 waits at the block barrier while its warp waits at a warp sync:
   undefined in CUDA; here it must simply end. */
static void k_mixed(void **params, GjCpuThread *t)
{
    atomic_uint *done = params[0];
    if (t->warp == 0 && t->lane != 0)
        gj_cpu_syncwarp(t);
    else
        gj_cpu_barrier(t);
    atomic_fetch_add(done, 1);
}

static void test_mixed_groups(void)
{
    atomic_uint done = 0;
    launch_ok(k_mixed, &done, (Dim){ 2, 1, 1 }, (Dim){ 64, 1, 1 }, 0, 1);
    CHECK(atomic_load(&done) == 128, "mixed groups: %u of 128 threads finished", atomic_load(&done));
}

/* Warp syncs whose release depends on a returning lane (the block's last
   thread returns after its warp-mates, which run before it, have parked) or
   on a partial last warp, while lower warps wait at the block barrier: the
   barrier must not open before every live thread has written. */
static void k_two_level(void **params, GjCpuThread *t)
{
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

static void test_two_level(void)
{
    static const unsigned sizes[] = { 20, 33, 48, 96, 1000 };
    for (size_t k = 0; k < LEN(sizes); k++) {
        atomic_uint bad = 0;
        launch_ok(k_two_level, &bad, (Dim){ 3, 1, 1 }, (Dim){ sizes[k], 1, 1 },
                  sizes[k] * sizeof(uint64_t), 1);
        CHECK(atomic_load(&bad) == 0, "two-level sync, block %u: %u bad", sizes[k],
              atomic_load(&bad));
    }
}

/* A fiber's stack holds a sizeable local array (default stacks are 64 KiB). */
static void k_stack(void **params, GjCpuThread *t)
{
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

static void test_stack(void)
{
    atomic_uint bad = 0;
    launch_ok(k_stack, &bad, (Dim){ 4, 1, 1 }, (Dim){ 64, 1, 1 }, 0, 1);
    CHECK(atomic_load(&bad) == 0, "stack: %u bytes wrong", atomic_load(&bad));
}

/* ---- errors ---------------------------------------------------------------- */

static void k_nothing(void **params, GjCpuThread *t)
{
    (void)params;
    gj_cpu_barrier(t);
}

static void k_relaunch(void **params, GjCpuThread *t)
{
    atomic_int *rcs = params[0];
    char err[128];
    nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);   /* let the helpers take blocks */
    atomic_fetch_add(&rcs[block_lin(t)],
                     launch(k_nothing, NULL, (Dim){ 1, 1, 1 }, (Dim){ 1, 1, 1 }, 0, 0, err,
                            sizeof err));
}

static void test_errors(void)
{
    char err[256];
    struct { Dim grid, block; } bad[] = {
        { {1, 1, 1}, {0, 1, 1} }, { {1, 1, 1}, {1025, 1, 1} }, { {1, 1, 1}, {32, 32, 2} },
        { {0, 1, 1}, {1, 1, 1} }, { {1, 1, 0}, {1, 1, 1} },
    };
    for (size_t i = 0; i < LEN(bad); i++) {
        err[0] = '\0';
        int rc = launch(k_nothing, NULL, bad[i].grid, bad[i].block, 0, 1, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "invalid"), "invalid configuration %zu: rc %d, '%s'", i,
              rc, err);
    }
    GjCpuLaunch none = { .grid = {1, 1, 1}, .block = {1, 1, 1} };
    CHECK(gj_cpu_launch(&none, err, sizeof err) == -1, "launch without a function accepted");
    CHECK(gj_cpu_launch(&none, NULL, 0) == -1, "launch without a function accepted (no err)");

    /* A barrier in a kernel launched without fibers: fine alone, reported otherwise. */
    CHECK(launch(k_nothing, NULL, (Dim){ 5, 1, 1 }, (Dim){ 1, 1, 1 }, 0, 0, err, sizeof err) == 0,
          "barrier without fibers, one thread per block: %s", err);
    err[0] = '\0';
    CHECK(launch(k_nothing, NULL, (Dim){ 5, 1, 1 }, (Dim){ 2, 1, 1 }, 0, 0, err, sizeof err) == -1
          && strstr(err, "needs_fibers"), "barrier without fibers not reported: '%s'", err);
    CHECK(launch(k_nothing, NULL, (Dim){ 5, 1, 1 }, (Dim){ 2, 1, 1 }, 0, 1, err, sizeof err) == 0,
          "launch after a misuse failed: %s", err);

    atomic_int rcs[8] = { 0 };
    launch_ok(k_relaunch, rcs, (Dim){ 8, 1, 1 }, (Dim){ 1, 1, 1 }, 0, 0);
    for (int i = 0; i < 8; i++)
        CHECK(atomic_load(&rcs[i]) == -1, "launch from kernel code in block %d returned %d", i,
              atomic_load(&rcs[i]));
}

/* ---- concurrency, repetition, fork ------------------------------------------ */

static void *launcher_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int it = 0; it < 40; it++) {
        const Dim g = GRIDS[(seed + (unsigned)it) % LEN(GRIDS)];
        const Dim b = BLOCKS[(seed * 3 + (unsigned)it) % LEN(BLOCKS)];
        run_index(g, b, it & 1);
        if (it % 8 == 0) {
            BarrierState s = { .rounds = 3, .exit_mode = EXIT_STAGGERED };
            launch_ok(k_barrier, &s, (Dim){ 4, 1, 1 }, (Dim){ 100, 1, 1 }, 100 * sizeof(uint64_t), 1);
            CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.finished) == 400,
                  "concurrent barrier: %u bad", atomic_load(&s.bad));
        }
    }
    return NULL;
}

static void test_concurrent(void)
{
    pthread_t th[2];
    for (unsigned i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, launcher_thread, (void *)(uintptr_t)(i + 1)) == 0,
              "pthread_create");
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
}

static void test_many_small(void)
{
    for (int it = 0; it < 2000; it++)
        run_index((Dim){ 1u + (unsigned)it % 5, 1, 1 }, (Dim){ 1u + (unsigned)it % 40, 1, 1 }, it % 3 == 0);
}

static void test_fork(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        run_index((Dim){ 9, 1, 1 }, (Dim){ 33, 1, 1 }, 1);
        run_index((Dim){ 9, 1, 1 }, (Dim){ 33, 1, 1 }, 0);
        _exit(atomic_load(&failures) ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
          && WEXITSTATUS(status) == 0, "launches in a fork() child failed");
}

int main(void)
{
    alarm(240);   /* a deadlock fails the test instead of hanging it */
    const char *env = getenv("GPUJIT_CPU_THREADS");
    int workers = gj_cpu_workers();
    printf("workers: %d\n", workers);
    CHECK(workers >= 1, "gj_cpu_workers() = %d", workers);
    if (env && *env)
        CHECK(workers == atoi(env), "GPUJIT_CPU_THREADS=%s but %d workers", env, workers);
    test_indices();
    test_shared();
    test_barriers();
    test_mixed_groups();
    test_two_level();
    test_stack();
    test_errors();
    test_concurrent();
    test_many_small();
    if (!getenv("GJ_TEST_NO_FORK"))   /* qemu-user cannot fork a threaded guest */
        test_fork();
    int n = atomic_load(&failures);
    printf("%s: %d failure(s)\n", n ? "FAILED" : "ok", n);
    return n ? 1 : 0;
}
