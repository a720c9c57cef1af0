/*
 * exec_cpu.c - the CPU target's hooks (exectarget.h) over cpuexec.c: host
 * memory stands in for device memory, a launch runs the grid on the
 * executor's workers and returns when it is done, so streams have no
 * handle and waiting is nothing, and events are host timestamps taken when
 * recorded (every earlier launch has finished by then).
 *
 * Input: the device GJ_EXEC_HOST, host pointers as uint64_t.  Limits are
 * an H200's, so a bad launch configuration fails as it would on a GPU.
 * Host memory is 64-byte aligned (a cache line, any vector unit); large
 * arrays get 2 MiB pages.  Modules are the compiler's JIT's, never loaded
 * here.  Also the table of runtime functions kernel code calls.
 */
#include "exectarget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpuexec.h"

/* The CPU target's limits: a CUDA device's, so errors mean the same. */
static const GjDeviceInfo cpu_limits = {
    .ordinal = GJ_EXEC_HOST,
    .name = "CPU",
    .max_threads_per_block = 1024,
    .max_block_dim = {1024, 1024, 64},
    .max_grid_dim = {2147483647, 65535, 65535},
    .max_shared_per_block = 48 * 1024,
    .max_shared_per_block_optin = 227 * 1024,   /* an H100/H200's */
    .warp_size = 32,
};

static GjExecStatus cpu_ok(int device, GjExecError *err) {
    (void)device;
    (void)err;
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_device_info(int device, GjDeviceInfo *info, GjExecError *err) {
    (void)device;
    (void)err;
    *info = cpu_limits;
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_memory_info(int device, size_t *free_bytes, size_t *total_bytes,
                                    GjExecError *err) {
    (void)device;
    long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES),
         total = sysconf(_SC_PHYS_PAGES);
    if (page <= 0 || avail < 0 || total <= 0)
        return gj_exec_fail(err, GJ_ERR_INVALID, "",
                            "the host's memory size is unknown (sysconf failed)");
    *free_bytes = (size_t)avail * (size_t)page;
    *total_bytes = (size_t)total * (size_t)page;
    return GJ_EXEC_OK;
}

/* Test-only fault injection (gj_exec_inject_fault): the allocation of host
   memory that brings the countdown to 0 fails. */
static long inject_countdown;

static void cpu_inject_fault(long n, int code) {
    (void)code;
    __atomic_store_n(&inject_countdown, n, __ATOMIC_RELAXED);
}

/* The runtime functions that CPU-target kernel code calls (cpuexec.h,
   "called from kernel code"), one row each; the compiler declares them in
   the code it generates (compiler/target_cpu.c). */
/* clang-format off */
#define GJ_CPU_RUNTIME_SYMBOLS(X) \
    X(gj_cpu_barrier)             \
    X(gj_cpu_syncthreads_op)      \
    X(gj_cpu_syncwarp_mask)       \
    X(gj_cpu_warp_shfl)           \
    X(gj_cpu_warp_vote)           \
    X(gj_cpu_warp_match)          \
    X(gj_cpu_activemask)          \
    X(gj_cpu_vprintf)             \
    X(gj_cpu_error_record)
/* clang-format on */

static const GjExecSymbol cpu_symbols[] = {
#define X(fn) {#fn, (void (*)(void))fn},
    GJ_CPU_RUNTIME_SYMBOLS(X)
#undef X
};

static const GjExecSymbol *cpu_kernel_symbols(int *n) {
    *n = (int)(sizeof cpu_symbols / sizeof cpu_symbols[0]);
    return cpu_symbols;
}

/* ---- modules: the compiler's JIT loads the CPU target's code ---------------------- */

static GjExecStatus no_modules(GjExecError *err) {
    return gj_exec_fail(err, GJ_ERR_NOT_SUPPORTED, "",
                        "the CPU target loads no modules (its kernels are JIT-compiled)");
}

static GjExecStatus cpu_module_load(const void *image, int lineinfo, void **module,
                                    GjExecError *err) {
    (void)image;
    (void)lineinfo;
    *module = NULL;
    return no_modules(err);
}

static GjExecStatus cpu_link_ptx(const char *ptx, int lineinfo, void **cubin, size_t *size,
                                 GjExecError *err) {
    (void)ptx;
    (void)lineinfo;
    *cubin = NULL;
    *size = 0;
    return no_modules(err);
}

static GjExecStatus cpu_module_function(void *module, const char *kernel, void **func,
                                        GjExecError *err) {
    (void)module;
    (void)kernel;
    *func = NULL;
    return no_modules(err);
}

static GjExecStatus cpu_module_global(void *module, const char *name, uint64_t *dptr, size_t *bytes,
                                      GjExecError *err) {
    (void)module;
    (void)name;
    *dptr = 0;
    *bytes = 0;
    return no_modules(err);
}

static GjExecStatus cpu_module_unload(void *module, GjExecError *err) {
    (void)module;
    (void)err;
    return GJ_EXEC_OK;
}

/* ---- memory ----------------------------------------------------------------------- */

enum { HOST_ALIGN = 64 };

/* Large host arrays start on a 2 MiB boundary and ask for transparent huge
   pages, as NumPy's do (where THP is "madvise"): a kernel streaming through
   three 40 MB arrays otherwise misses the TLB at every 4 KiB page, and the
   hardware prefetcher stops there. */
#define HUGE_FROM ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

static GjExecStatus host_oom(size_t bytes, GjExecError *err) {
    /* host memory: a MemoryError, not a CUDA error */
    gj_exec_fail(err, GJ_ERR_OUT_OF_MEMORY, "aligned_alloc", "out of host memory");
    err->requested = bytes;
    err->host = 1;
    return GJ_EXEC_ERROR;
}

static GjExecStatus cpu_alloc(int device, size_t bytes, uint64_t *ptr, GjExecError *err) {
    (void)device;
    size_t rounded = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
    if (rounded < bytes || (__atomic_load_n(&inject_countdown, __ATOMIC_RELAXED) > 0 &&
                            __atomic_sub_fetch(&inject_countdown, 1, __ATOMIC_RELAXED) == 0))
        return host_oom(bytes, err);
    size_t align = rounded >= HUGE_FROM ? HUGE_PAGE : HOST_ALIGN;
    if (align == HUGE_PAGE)
        rounded = (rounded + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; /* no wrap: < SIZE_MAX / 2 */
    void *p = aligned_alloc(align, rounded ? rounded : HOST_ALIGN);
    if (!p)
        return host_oom(bytes, err);
    if (align == HUGE_PAGE)
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* best effort */
    *ptr = (uint64_t)(uintptr_t)p;
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_free(int device, uint64_t ptr, GjExecError *err) {
    (void)device;
    (void)err;
    free((void *)(uintptr_t)ptr);
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                             GjExecError *err) {
    (void)device;
    (void)stream;
    (void)err;
    if (bytes)
        memcpy((void *)(uintptr_t)dst, src, bytes);
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                             GjExecError *err) {
    (void)device;
    (void)stream;
    (void)err;
    if (bytes)
        memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                             GjExecError *err) {
    (void)device;
    (void)stream;
    (void)err;
    if (bytes)
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_peer_copy(int dst_device, uint64_t dst, int src_device, uint64_t src,
                                  size_t bytes, void *stream, GjExecError *err) {
    (void)dst_device;
    (void)dst;
    (void)src_device;
    (void)src;
    (void)bytes;
    (void)stream;
    return gj_exec_fail(err, GJ_ERR_INVALID, "",
                        "a copy between the CPU target's memory and a GPU's");
}

static GjExecStatus cpu_check_pointer(uint64_t ptr, size_t bytes, GjExecError *err) {
    (void)ptr;
    (void)bytes;
    (void)err;
    return GJ_EXEC_OK;   /* kernels run on the host: any host memory is theirs */
}

static GjExecStatus cpu_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags,
                                   void **host, uint64_t *dptr, GjExecError *err) {
    (void)flags;
    GjExecStatus st = cpu_alloc(device, bytes, dptr, err);
    *host = (void *)(uintptr_t)*dptr;
    if (kind == GJ_HOST_PINNED)
        *dptr = 0;
    return st;
}

static void cpu_host_free(int device, GjHostKind kind, void *host) {
    (void)device;
    (void)kind;
    free(host);
}

static GjExecStatus cpu_host_register(int device, void *host, size_t bytes, GjExecError *err) {
    (void)host;
    (void)bytes;
    return cpu_ok(device, err);
}

static void cpu_host_unregister(int device, void *host) {
    (void)device;
    (void)host;
}

/* ---- kernels and launches --------------------------------------------------------- */

static GjExecStatus cpu_allow_dynamic_shared(void *func, unsigned bytes, GjExecError *err) {
    (void)func;
    (void)bytes;
    (void)err;
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_kernel_use(void *func, GjKernelUse *use, GjExecError *err) {
    (void)func;
    (void)err;
    int limit = cpu_limits.max_threads_per_block;
    if (use->max_threads <= 0 || use->max_threads > limit)
        use->max_threads = limit;
    use->regs = -1;
    return GJ_EXEC_OK;
}

static GjExecStatus cpu_best_block(void *func, size_t shared, int max_threads, int *block,
                                   GjExecError *err) {
    (void)func;
    (void)shared;
    (void)err;
    *block = max_threads < GJ_EXEC_CPU_BLOCK ? max_threads : GJ_EXEC_CPU_BLOCK;
    return GJ_EXEC_OK;
}

/* Host arrays in place, the grid on the executor's workers. */
static GjExecStatus cpu_launch(GjLaunch *l, GjExecError *err) {
    for (int i = 0; i < l->ncopies; i++)
        *l->copies[i].slot = (uint64_t)(uintptr_t)l->copies[i].buf;
    GjCpuLaunch cl = {
        .fn = (GjCpuKernelFn)l->func,
        .params = l->params,
        .grid = {l->grid[0], l->grid[1], l->grid[2]},
        .block = {l->block[0], l->block[1], l->block[2]},
        .shared_bytes = l->shared_static + l->shared,
        .local_bytes = l->local_bytes,
        .per_thread = l->per_thread,
        .needs_fibers = l->needs_fibers,
        .error_record = l->error_record,
    };
    if (l->error_record)
        memset(l->error_record, 0, l->error_record_words * sizeof *l->error_record);
    char message[256] = "";   /* why the executor could not run the grid */
    if (gj_cpu_launch(&cl, message, sizeof message) != 0)
        return gj_exec_fail(err, GJ_ERR_CPU_TARGET, "gj_cpu_launch",
                            message[0] ? message : "unknown error");
    return GJ_EXEC_OK;
}

/* ---- streams and events ----------------------------------------------------------- */

static double monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static GjExecStatus cpu_stream_create(int device, void **stream, GjExecError *err) {
    (void)stream;   /* no handle: exec.c set it to NULL */
    return cpu_ok(device, err);
}

static void cpu_stream_destroy(int device, void *stream) {
    (void)device;
    (void)stream;
}

static GjExecStatus cpu_stream_synchronize(int device, void *stream, GjExecError *err) {
    (void)stream;
    return cpu_ok(device, err);
}

static GjExecStatus cpu_stream_wait_default(void *stream, GjExecError *err) {
    (void)stream;
    return cpu_ok(GJ_EXEC_HOST, err);
}

static GjExecStatus cpu_event_create(GjExecEvent *ev, GjExecError *err) {
    return cpu_ok(ev->device, err);
}

static void cpu_event_destroy(GjExecEvent *ev) { (void)ev; }

static GjExecStatus cpu_event_record(GjExecEvent *ev, void *stream, GjExecError *err) {
    (void)stream;
    ev->host_ms = monotonic_ms();
    return cpu_ok(ev->device, err);
}

static GjExecStatus cpu_event_synchronize(GjExecEvent *ev, GjExecError *err) {
    return cpu_ok(ev->device, err);
}

static GjExecStatus cpu_event_query(GjExecEvent *ev, int *done, GjExecError *err) {
    (void)done;   /* set by exec.c: what was recorded has finished */
    return cpu_ok(ev->device, err);
}

static GjExecStatus cpu_event_wait(GjExecEvent *ev, void *stream, GjExecError *err) {
    (void)stream;   /* what was recorded has finished */
    return cpu_ok(ev->device, err);
}

/* Refuses as the driver does (INVALID_HANDLE). */
static GjExecStatus cpu_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                      GjExecError *err) {
    if (!a->timing || !b->timing)
        return gj_exec_fail(err, GJ_ERR_INVALID, "",
                            "elapsed_time() of an event made with timing=False");
    if (a->host_ms < 0 || b->host_ms < 0)
        return gj_exec_fail(err, GJ_ERR_INVALID, "",
                            "elapsed_time() of an event that was never recorded");
    *ms = (float)(b->host_ms - a->host_ms);
    return GJ_EXEC_OK;
}

const GjExecTarget gj_exec_cpu = {
    .name = "cpu",
    .copies_host_arrays = 0,
    .launch_waits = 1,
    .select = cpu_ok,
    .device_info = cpu_device_info,
    .memory_info = cpu_memory_info,
    .inject_fault = cpu_inject_fault,
    .env_problem = gj_cpu_env_problem,
    .kernel_symbols = cpu_kernel_symbols,
    .module_load = cpu_module_load,
    .link_ptx = cpu_link_ptx,
    .module_function = cpu_module_function,
    .module_global = cpu_module_global,
    .module_unload = cpu_module_unload,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .htod = cpu_htod,
    .dtoh = cpu_dtoh,
    .dtod = cpu_dtod,
    .peer_copy = cpu_peer_copy,
    .check_pointer = cpu_check_pointer,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .allow_dynamic_shared = cpu_allow_dynamic_shared,
    .kernel_use = cpu_kernel_use,
    .best_block = cpu_best_block,
    .launch = cpu_launch,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_synchronize = cpu_stream_synchronize,
    .stream_wait_default = cpu_stream_wait_default,
    .synchronize = cpu_ok,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_synchronize = cpu_event_synchronize,
    .event_query = cpu_event_query,
    .event_wait = cpu_event_wait,
    .event_elapsed = cpu_event_elapsed,
};
