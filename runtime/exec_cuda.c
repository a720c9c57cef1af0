/*
 * exec_cuda.c - the CUDA target's hooks (exectarget.h) over driver.c, and
 * exec.h's questions about CUDA itself (a GPU there, device count, driver
 * version, the thread's device).
 *
 * Input: CUDA ordinals, device pointers (CUdeviceptr as uint64_t), driver
 * handles as void *.  Memory, stream and event calls make their device's
 * primary context current for themselves (ON_DEVICE) and the thread's
 * device current again after; module and pointer calls run on the
 * thread's current context (the caller selected it).  A launch makes the
 * driver calls of exec.h's sketch in that order, with no allocation of its
 * own beyond the host copies' temporaries.
 */
#include "exectarget.h"

#include <stdio.h>
#include <string.h>

#include "driver.h"

/* Makes `device`'s context current; returns the thread's device before
   (-1: none yet), for leave(), or NO_ENTRY with err set. */
enum { NO_ENTRY = -1000 };

static int enter(int device, GjExecError *err) {
    int prev = gj_cu_thread_device();
    return gj_cu_ensure(device, err) == GJ_EXEC_OK ? prev : NO_ENTRY;
}

static void leave(int device, int prev) {
    GjExecError ignored;   /* a thread that had no device keeps the one entered */
    if (prev >= 0 && prev != device)
        gj_cu_ensure(prev, &ignored);
}

/* In a function returning GjExecStatus: returns call's status, made with
   `device`'s context current (err's when it cannot be made so). */
#define ON_DEVICE(device, err, call)                                   \
    do {                                                               \
        int prev_ = enter((device), (err));                            \
        GjExecStatus st_ = prev_ == NO_ENTRY ? (err)->status : (call); \
        leave((device), prev_);                                        \
        return st_;                                                    \
    } while (0)

/* ---- CUDA itself (exec.h) ---------------------------------------------------------- */

int gj_exec_gpu_available(void) { return gj_cu_available(); }

GjExecStatus gj_exec_device_count(int *n, GjExecError *err) { return gj_cu_device_count(n, err); }

GjExecStatus gj_exec_driver_version(int *version, GjExecError *err) {
    return gj_cu_driver_version(version, err);
}

int gj_exec_current_device(void) { return gj_cu_current_device(); }

/* ---- devices ---------------------------------------------------------------------- */

static GjExecStatus cuda_device_info(int device, GjDeviceInfo *info, GjExecError *err) {
    return gj_cu_device_info(device, info, err);
}

static GjExecStatus cuda_memory_info(int device, size_t *free_bytes, size_t *total_bytes,
                                     GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_memory_info(free_bytes, total_bytes, err));
}

static int cuda_env_problem(char *msg, size_t size) {
    (void)msg;
    (void)size;
    return 0;
}

static const GjExecSymbol *cuda_kernel_symbols(int *n) {
    *n = 0;   /* PTX kernels call no runtime function */
    return NULL;
}

/* ---- memory ----------------------------------------------------------------------- */

static GjExecStatus cuda_alloc(int device, size_t bytes, uint64_t *ptr, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_alloc(bytes, ptr, err));
}

static GjExecStatus cuda_free(int device, uint64_t ptr, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_free(ptr, err));
}

static GjExecStatus cuda_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                              GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_htod(dst, src, bytes, stream, err));
}

static GjExecStatus cuda_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                              GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_dtoh(dst, src, bytes, stream, err));
}

static GjExecStatus cuda_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                              GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_dtod(dst, src, bytes, stream, err));
}

static GjExecStatus cuda_peer_copy(int dst_device, uint64_t dst, int src_device, uint64_t src,
                                   size_t bytes, void *stream, GjExecError *err) {
    ON_DEVICE(dst_device, err,
              gj_cu_peer_copy(dst_device, dst, src_device, src, bytes, stream, err));
}

static GjExecStatus cuda_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags,
                                    void **host, uint64_t *dptr, GjExecError *err) {
    int prev = enter(device, err);
    if (prev == NO_ENTRY)
        return err->status;
    GjExecStatus st;
    if (kind == GJ_HOST_MANAGED) {
        st = gj_cu_managed_alloc(bytes, !(flags & GJ_HOST_ATTACH_HOST), dptr, err);
        *host = (void *)(uintptr_t)*dptr;
    } else {
        unsigned f = (kind == GJ_HOST_MAPPED ? GJ_HOST_MAPPED_FLAG : 0) |
                     (flags & GJ_HOST_WC ? GJ_HOST_WRITE_COMBINED : 0);
        st = gj_cu_host_alloc_flags(bytes, f, host, err);
        if (st == GJ_EXEC_OK && kind == GJ_HOST_MAPPED &&
            (st = gj_cu_host_device_ptr(*host, dptr, err)) != GJ_EXEC_OK) {
            GjExecError ignored;
            gj_cu_host_free(*host, &ignored);
            *host = NULL;
        }
    }
    leave(device, prev);
    return st;
}

static void cuda_host_free(int device, GjHostKind kind, void *host) {
    GjExecError ignored;   /* a lost context took its memory already */
    int prev = enter(device, &ignored);
    if (prev == NO_ENTRY)
        return;
    if (kind == GJ_HOST_MANAGED)
        gj_cu_free((uint64_t)(uintptr_t)host, &ignored);
    else
        gj_cu_host_free(host, &ignored);
    leave(device, prev);
}

static GjExecStatus cuda_host_register(int device, void *host, size_t bytes, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_host_register(host, bytes, err));
}

static void cuda_host_unregister(int device, void *host) {
    GjExecError ignored;
    int prev = enter(device, &ignored);
    if (prev == NO_ENTRY)
        return;
    gj_cu_host_unregister(host, &ignored);
    leave(device, prev);
}

/* ---- kernels and launches --------------------------------------------------------- */

static GjExecStatus cuda_allow_dynamic_shared(void *func, unsigned bytes, GjExecError *err) {
    return gj_cu_func_set_max_dynamic_shared(func, (int)bytes, err);
}

static GjExecStatus cuda_kernel_use(void *func, GjKernelUse *use, GjExecError *err) {
    GjCuFuncAttrs a;
    GjExecStatus st = gj_cu_func_attrs(func, &a, err);
    if (st == GJ_EXEC_OK)
        *use = (GjKernelUse){.max_threads = a.max_threads,
                             .regs = a.regs,
                             .shared_bytes = (size_t)a.shared_bytes,
                             .local_bytes = (size_t)a.local_bytes,
                             .const_bytes = (size_t)a.const_bytes};
    return st;
}

static GjExecStatus cuda_best_block(void *func, size_t shared, int max_threads, int *block,
                                    GjExecError *err) {
    return gj_cu_occupancy_block(func, shared, max_threads, block, err);
}

/* Reads the module's error record after the launch, in the launch's stream:
   into pageable memory the copy returns once it is done, so it has waited
   for the kernel and the copies before it, and stands for the synchronize
   (a fault shows here as it would there). */
static GjExecStatus read_error_record(GjLaunch *l, GjExecError *err) {
    size_t bytes = l->error_record_words * sizeof *l->error_record;
    return gj_cu_dtoh(l->error_record, l->error_record_dptr, bytes, l->stream, err);
}

/* Clears a record that a failing thread set, for the next launch. */
static GjExecStatus clear_error_record(GjLaunch *l, GjExecError *err) {
    size_t bytes = l->error_record_words * sizeof *l->error_record;
    if (l->error_record[0] == 0)
        return GJ_EXEC_OK;
    return gj_cu_memset8(l->error_record_dptr, 0, bytes, NULL, err);
}

static void free_temporaries(GjLaunch *l) {
    GjExecError ignored;   /* after a fault this fails too; nothing more to do */
    for (int i = 0; i < l->ncopies; i++)
        if (l->copies[i].temp) {
            cuda_free(l->device, l->copies[i].temp, &ignored);
            l->copies[i].temp = 0;
        }
}

static GjExecStatus cuda_launch(GjLaunch *l, GjExecError *err) {
    GjExecStatus st = GJ_EXEC_OK;
    for (int i = 0; i < l->ncopies && st == GJ_EXEC_OK; i++) {
        GjHostCopy *c = &l->copies[i];
        st = cuda_alloc(l->device, c->nbytes, &c->temp, err);
        if (st == GJ_EXEC_OK)
            st = cuda_htod(l->device, c->temp, c->buf, c->nbytes, l->stream, err);
        *c->slot = c->temp;
    }
    if (st == GJ_EXEC_OK)
        st = gj_cu_launch(l->func, l->grid, l->block, l->shared, l->stream, l->params, err);
    for (int i = 0; i < l->ncopies && st == GJ_EXEC_OK; i++)
        if (l->copies[i].written)
            st = cuda_dtoh(l->device, l->copies[i].buf, l->copies[i].temp, l->copies[i].nbytes,
                           l->stream, err);
    if (st == GJ_EXEC_OK && l->error_record)
        st = read_error_record(l, err);
    else if (st == GJ_EXEC_OK && l->ncopies > 0)   /* gj_exec_blocks(l) */
        st = gj_cu_stream_synchronize(l->stream, err);
    if (st == GJ_EXEC_OK && l->error_record)
        st = clear_error_record(l, err);
    free_temporaries(l);
    return st;
}

/* ---- streams and events ----------------------------------------------------------- */

static GjExecStatus cuda_stream_create(int device, void **stream, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_stream_create(stream, err));
}

static void cuda_stream_destroy(int device, void *stream) {
    GjExecError ignored;   /* a destroyed context took its streams already */
    int prev = enter(device, &ignored);
    if (prev == NO_ENTRY)
        return;
    gj_cu_stream_destroy(stream, &ignored);
    leave(device, prev);
}

static GjExecStatus cuda_stream_synchronize(int device, void *stream, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_stream_synchronize(stream, err));
}

static GjExecStatus cuda_synchronize(int device, GjExecError *err) {
    ON_DEVICE(device, err, gj_cu_synchronize(err));
}

static GjExecStatus cuda_event_create(GjExecEvent *ev, GjExecError *err) {
    ON_DEVICE(ev->device, err, gj_cu_event_create(&ev->handle, ev->timing, err));
}

static void cuda_event_destroy(GjExecEvent *ev) {
    GjExecError ignored;
    int prev;
    if (!ev->handle || (prev = enter(ev->device, &ignored)) == NO_ENTRY)
        return;
    gj_cu_event_destroy(ev->handle, &ignored);
    ev->handle = NULL;
    leave(ev->device, prev);
}

static GjExecStatus cuda_event_record(GjExecEvent *ev, void *stream, GjExecError *err) {
    ON_DEVICE(ev->device, err, gj_cu_event_record(ev->handle, stream, err));
}

static GjExecStatus cuda_event_synchronize(GjExecEvent *ev, GjExecError *err) {
    ON_DEVICE(ev->device, err, gj_cu_event_synchronize(ev->handle, err));
}

static GjExecStatus cuda_event_query(GjExecEvent *ev, int *done, GjExecError *err) {
    ON_DEVICE(ev->device, err, gj_cu_event_query(ev->handle, done, err));
}

static GjExecStatus cuda_event_wait(GjExecEvent *ev, void *stream, GjExecError *err) {
    ON_DEVICE(ev->device, err, gj_cu_stream_wait_event(stream, ev->handle, err));
}

static GjExecStatus cuda_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                       GjExecError *err) {
    ON_DEVICE(a->device, err, gj_cu_event_elapsed(ms, a->handle, b->handle, err));
}

const GjExecTarget gj_exec_cuda = {
    .name = "cuda",
    .copies_host_arrays = 1,
    .launch_waits = 0,
    .select = gj_cu_ensure,
    .device_info = cuda_device_info,
    .memory_info = cuda_memory_info,
    .inject_fault = gj_cu_inject_fault,
    .env_problem = cuda_env_problem,
    .kernel_symbols = cuda_kernel_symbols,
    .module_load = gj_cu_module_load,
    .link_ptx = gj_cu_link_ptx,
    .module_function = gj_cu_module_function,
    .module_global = gj_cu_module_global,
    .module_unload = gj_cu_module_unload,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .htod = cuda_htod,
    .dtoh = cuda_dtoh,
    .dtod = cuda_dtod,
    .peer_copy = cuda_peer_copy,
    .check_pointer = gj_cu_check_pointer,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
    .allow_dynamic_shared = cuda_allow_dynamic_shared,
    .kernel_use = cuda_kernel_use,
    .best_block = cuda_best_block,
    .launch = cuda_launch,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_wait_default = gj_cu_stream_wait_default,
    .synchronize = cuda_synchronize,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_query = cuda_event_query,
    .event_wait = cuda_event_wait,
    .event_elapsed = cuda_event_elapsed,
};
