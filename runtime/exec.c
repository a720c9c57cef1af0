/*
 * exec.c - exec.h, by dispatch: each call picks the target that owns its
 * device (target() below, the one place that tells a CUDA ordinal from
 * GJ_EXEC_HOST) and calls its hook (exectarget.h).  What both targets
 * share stays here: which launches block, the event pairing check, a copy
 * within one device, and the error of our own making (gj_exec_fail).
 * Questions about CUDA itself (is a GPU there, the driver's version) are
 * exec_cuda.c's.
 *
 * Input: a device (or a launch plan, an event that records its device);
 * output: the hook's status and error, unchanged.  No state, no
 * allocation, one indirect call per call.
 */
#include "exectarget.h"

#include <stdio.h>
#include <string.h>

static inline const GjExecTarget *target(int device) {
    return device >= 0 ? &gj_exec_cuda : &gj_exec_cpu;
}

GjExecStatus gj_exec_fail(GjExecError *err, GjErrKind kind, const char *call, const char *message) {
    memset(err, 0, sizeof *err);
    err->status = GJ_EXEC_ERROR;
    err->kind = kind;
    snprintf(err->call, sizeof err->call, "%s", call);
    snprintf(err->message, sizeof err->message, "%s", message);
    return GJ_EXEC_ERROR;
}

/* ---- devices ---------------------------------------------------------------------- */

GjExecStatus gj_exec_select(int device, GjExecError *err) {
    return target(device)->select(device, err);
}

GjExecStatus gj_exec_device_info(int device, GjDeviceInfo *info, GjExecError *err) {
    return target(device)->device_info(device, info, err);
}

GjExecStatus gj_exec_memory_info(int device, size_t *free_bytes, size_t *total_bytes,
                                 GjExecError *err) {
    return target(device)->memory_info(device, free_bytes, total_bytes, err);
}

void gj_exec_inject_fault(int device, long n, int code) { target(device)->inject_fault(n, code); }

int gj_exec_env_problem(int device, char *msg, size_t size) {
    return target(device)->env_problem(msg, size);
}

const GjExecSymbol *gj_exec_kernel_symbols(int device, int *n) {
    return target(device)->kernel_symbols(n);
}

/* ---- modules ---------------------------------------------------------------------- */

GjExecStatus gj_exec_module_load(int device, const void *image, int lineinfo, void **module,
                                 GjExecError *err) {
    return target(device)->module_load(image, lineinfo, module, err);
}

GjExecStatus gj_exec_link_ptx(int device, const char *ptx, int lineinfo, void **cubin, size_t *size,
                              GjExecError *err) {
    return target(device)->link_ptx(ptx, lineinfo, cubin, size, err);
}

GjExecStatus gj_exec_module_function(int device, void *module, const char *kernel, void **func,
                                     GjExecError *err) {
    return target(device)->module_function(module, kernel, func, err);
}

GjExecStatus gj_exec_module_global(int device, void *module, const char *name, uint64_t *dptr,
                                   size_t *bytes, GjExecError *err) {
    return target(device)->module_global(module, name, dptr, bytes, err);
}

GjExecStatus gj_exec_module_unload(int device, void *module, GjExecError *err) {
    return target(device)->module_unload(module, err);
}

/* ---- kernels and launches --------------------------------------------------------- */

GjExecStatus gj_exec_allow_dynamic_shared(int device, void *func, unsigned bytes,
                                          GjExecError *err) {
    return target(device)->allow_dynamic_shared(func, bytes, err);
}

GjExecStatus gj_exec_kernel_use(int device, void *func, GjKernelUse *use, GjExecError *err) {
    return target(device)->kernel_use(func, use, err);
}

GjExecStatus gj_exec_best_block(int device, void *func, size_t shared, int max_threads, int *block,
                                GjExecError *err) {
    return target(device)->best_block(func, shared, max_threads, block, err);
}

int gj_exec_copies_host_arrays(int device) { return target(device)->copies_host_arrays; }

int gj_exec_blocks(const GjLaunch *l) {
    return target(l->device)->launch_waits || l->ncopies > 0 || l->error_record;
}

GjExecStatus gj_exec_launch(GjLaunch *l, GjExecError *err) {
    return target(l->device)->launch(l, err);
}

/* ---- streams and events ----------------------------------------------------------- */

GjExecStatus gj_exec_stream_create(int device, void **stream, GjExecError *err) {
    *stream = NULL;
    return target(device)->stream_create(device, stream, err);
}

void gj_exec_stream_destroy(int device, void *stream) {
    if (stream)
        target(device)->stream_destroy(device, stream);
}

GjExecStatus gj_exec_stream_synchronize(int device, void *stream, GjExecError *err) {
    return target(device)->stream_synchronize(device, stream, err);
}

GjExecStatus gj_exec_stream_wait_default(int device, void *stream, GjExecError *err) {
    return target(device)->stream_wait_default(stream, err);
}

GjExecStatus gj_exec_synchronize(int device, GjExecError *err) {
    return target(device)->synchronize(device, err);
}

GjExecStatus gj_exec_event_create(int device, int timing, GjExecEvent *ev, GjExecError *err) {
    *ev = (GjExecEvent){.device = device, .timing = timing, .host_ms = -1.0};
    return target(device)->event_create(ev, err);
}

void gj_exec_event_destroy(GjExecEvent *ev) { target(ev->device)->event_destroy(ev); }

GjExecStatus gj_exec_event_record(GjExecEvent *ev, void *stream, GjExecError *err) {
    return target(ev->device)->event_record(ev, stream, err);
}

GjExecStatus gj_exec_event_synchronize(GjExecEvent *ev, GjExecError *err) {
    return target(ev->device)->event_synchronize(ev, err);
}

GjExecStatus gj_exec_event_query(GjExecEvent *ev, int *done, GjExecError *err) {
    *done = 1;
    return target(ev->device)->event_query(ev, done, err);
}

GjExecStatus gj_exec_event_wait(GjExecEvent *ev, void *stream, GjExecError *err) {
    return target(ev->device)->event_wait(ev, stream, err);
}

GjExecStatus gj_exec_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                   GjExecError *err) {
    *ms = 0.0f;
    if (a->device != b->device)
        return gj_exec_fail(err, GJ_ERR_INVALID, "",
                            "elapsed_time() between events of different devices "
                            "(or targets)");
    return target(a->device)->event_elapsed(a, b, ms, err);
}

/* ---- memory ----------------------------------------------------------------------- */

GjExecStatus gj_exec_alloc(int device, size_t bytes, uint64_t *ptr, GjExecError *err) {
    return target(device)->alloc(device, bytes, ptr, err);
}

GjExecStatus gj_exec_free(int device, uint64_t ptr, GjExecError *err) {
    return target(device)->free(device, ptr, err);
}

GjExecStatus gj_exec_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                          GjExecError *err) {
    return target(device)->htod(device, dst, src, bytes, stream, err);
}

GjExecStatus gj_exec_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                          GjExecError *err) {
    return target(device)->dtoh(device, dst, src, bytes, stream, err);
}

GjExecStatus gj_exec_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                          GjExecError *err) {
    return target(device)->dtod(device, dst, src, bytes, stream, err);
}

GjExecStatus gj_exec_copy_between(int dst_device, uint64_t dst, int src_device, uint64_t src,
                                  size_t bytes, void *stream, GjExecError *err) {
    if (dst_device == src_device)
        return gj_exec_dtod(dst_device, dst, src, bytes, stream, err);
    return target(dst_device)->peer_copy(dst_device, dst, src_device, src, bytes, stream, err);
}

GjExecStatus gj_exec_check_pointer(int device, uint64_t ptr, size_t bytes, GjExecError *err) {
    return target(device)->check_pointer(ptr, bytes, err);
}

GjExecStatus gj_exec_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags,
                                void **host, uint64_t *dptr, GjExecError *err) {
    *host = NULL;
    *dptr = 0;
    return target(device)->host_alloc(device, kind, bytes, flags, host, dptr, err);
}

void gj_exec_host_free(int device, GjHostKind kind, void *host) {
    if (host)
        target(device)->host_free(device, kind, host);
}

GjExecStatus gj_exec_host_register(int device, void *host, size_t bytes, GjExecError *err) {
    return target(device)->host_register(device, host, bytes, err);
}

void gj_exec_host_unregister(int device, void *host) {
    target(device)->host_unregister(device, host);
}
