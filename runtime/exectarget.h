/*
 * exectarget.h - the seam between exec.c and the machine a launch runs on,
 * inside runtime/ only.  Everything exec.h offers that differs between a
 * CUDA device and the CPU target is one hook of a GjExecTarget:
 *
 *   - device selection and limits, memory size, fault injection;
 *   - modules (CUDA's; the CPU target refuses them);
 *   - memory and copies, host memory kinds, pointer checks;
 *   - a kernel's use and block size, the launch itself;
 *   - streams and events.
 *
 * exec.c never asks which target it serves: it picks the struct from the
 * device (an ordinal >= 0: exec_cuda.c over driver.c; GJ_EXEC_HOST:
 * exec_cpu.c over cpuexec.c) and calls the hook, one indirect call per
 * exec.h call, the launch included.  Hooks take exec.h's arguments and
 * keep its contracts.
 */
#ifndef GJ_EXECTARGET_H
#define GJ_EXECTARGET_H

#include "exec.h"

typedef struct GjExecTarget {
    const char *name;          /* "cuda", "cpu" */
    int copies_host_arrays;    /* host arrays go to device memory and back */
    int launch_waits;          /* every launch returns when its grid is done */

    GjExecStatus (*select)(int device, GjExecError *err);
    GjExecStatus (*device_info)(int device, GjDeviceInfo *info, GjExecError *err);
    GjExecStatus (*memory_info)(int device, size_t *free_bytes, size_t *total_bytes,
                                GjExecError *err);
    void (*inject_fault)(long n, int code);
    int (*env_problem)(char *msg, size_t size);
    const GjExecSymbol *(*kernel_symbols)(int *n);

    GjExecStatus (*module_load)(const void *image, int lineinfo, void **module, GjExecError *err);
    GjExecStatus (*link_ptx)(const char *ptx, int lineinfo, void **cubin, size_t *size,
                             GjExecError *err);
    GjExecStatus (*module_function)(void *module, const char *kernel, void **func,
                                    GjExecError *err);
    GjExecStatus (*module_global)(void *module, const char *name, uint64_t *dptr, size_t *bytes,
                                  GjExecError *err);
    GjExecStatus (*module_unload)(void *module, GjExecError *err);

    GjExecStatus (*alloc)(int device, size_t bytes, uint64_t *ptr, GjExecError *err);
    GjExecStatus (*free)(int device, uint64_t ptr, GjExecError *err);
    GjExecStatus (*htod)(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                         GjExecError *err);
    GjExecStatus (*dtoh)(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                         GjExecError *err);
    GjExecStatus (*dtod)(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                         GjExecError *err);
    /* between two devices of this target (exec.c sends a copy within one
       device to dtod) */
    GjExecStatus (*peer_copy)(int dst_device, uint64_t dst, int src_device, uint64_t src,
                              size_t bytes, void *stream, GjExecError *err);
    GjExecStatus (*check_pointer)(uint64_t ptr, size_t bytes, GjExecError *err);
    GjExecStatus (*host_alloc)(int device, GjHostKind kind, size_t bytes, unsigned flags,
                               void **host, uint64_t *dptr, GjExecError *err);
    void (*host_free)(int device, GjHostKind kind, void *host);
    GjExecStatus (*host_register)(int device, void *host, size_t bytes, GjExecError *err);
    void (*host_unregister)(int device, void *host);

    GjExecStatus (*allow_dynamic_shared)(void *func, unsigned bytes, GjExecError *err);
    GjExecStatus (*kernel_use)(void *func, GjKernelUse *use, GjExecError *err);
    GjExecStatus (*best_block)(void *func, size_t shared, int max_threads, int *block,
                               GjExecError *err);
    GjExecStatus (*launch)(GjLaunch *l, GjExecError *err);

    GjExecStatus (*stream_create)(int device, void **stream, GjExecError *err);
    void (*stream_destroy)(int device, void *stream);
    GjExecStatus (*stream_synchronize)(int device, void *stream, GjExecError *err);
    GjExecStatus (*stream_wait_default)(void *stream, GjExecError *err);
    GjExecStatus (*synchronize)(int device, GjExecError *err);
    /* ev is set up (device, timing, no handle, never recorded) */
    GjExecStatus (*event_create)(GjExecEvent *ev, GjExecError *err);
    void (*event_destroy)(GjExecEvent *ev);
    GjExecStatus (*event_record)(GjExecEvent *ev, void *stream, GjExecError *err);
    GjExecStatus (*event_synchronize)(GjExecEvent *ev, GjExecError *err);
    GjExecStatus (*event_query)(GjExecEvent *ev, int *done, GjExecError *err);
    GjExecStatus (*event_wait)(GjExecEvent *ev, void *stream, GjExecError *err);
    /* a and b are of one device */
    GjExecStatus (*event_elapsed)(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                  GjExecError *err);
} GjExecTarget;

extern const GjExecTarget gj_exec_cuda;   /* exec_cuda.c */
extern const GjExecTarget gj_exec_cpu;    /* exec_cpu.c */

/* An error of `kind` with our own message (no driver call behind it). */
GjExecStatus gj_exec_fail(GjExecError *err, GjErrKind kind, const char *call, const char *message);

#endif
