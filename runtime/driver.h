/*
 * driver.h - the CUDA driver, as gpujit uses it.  driver.c is the only file
 * that calls cu* functions; it dlopen()s libcuda.so.1 on first use and
 * resolves every entry point with cuGetProcAddress_v2 at a fixed API
 * version, so gpujit builds and imports without CUDA.  No Python here.
 *
 * Every call returns GJ_EXEC_OK or an error whose details sit in the
 * GjExecError passed in: the CUresult, its name ("CUDA_ERROR_OUT_OF_MEMORY"),
 * the driver call that failed, and for module loads the JIT error log.
 * Pointers to device memory are plain uint64_t (CUdeviceptr).
 */
#ifndef GJ_DRIVER_H
#define GJ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "exectypes.h"

/* Tests only: the n-th driver call gpujit makes from now (n >= 1) is not
   made and fails with CUresult `code` instead; n = 0 stops injecting. */
void gj_cu_inject_fault(long n, int code);

/* Kernel faults that leave the context unusable (700, 715, 716, 719, ...). */
int gj_cu_is_fault(int code);

/* Loads the driver and cuInit()s it (once per process); makes device
   `ordinal`'s primary context current on the calling thread. */
GjExecStatus gj_cu_ensure(int ordinal, GjExecError *err);
/* 1 if a driver and at least one device can be used; never raises. */
int gj_cu_available(void);
GjExecStatus gj_cu_device_count(int *n, GjExecError *err);
GjExecStatus gj_cu_device_info(int ordinal, GjDeviceInfo *info, GjExecError *err);
GjExecStatus gj_cu_driver_version(int *version, GjExecError *err);   /* e.g. 13000 */
int gj_cu_current_device(void);   /* this thread's device; 0 before any */
int gj_cu_thread_device(void);    /* this thread's device; -1 before any */

GjExecStatus gj_cu_alloc(size_t bytes, uint64_t *dptr, GjExecError *err);
GjExecStatus gj_cu_free(uint64_t dptr, GjExecError *err);
GjExecStatus gj_cu_htod(uint64_t dst, const void *src, size_t bytes, void *stream,
                        GjExecError *err);
GjExecStatus gj_cu_dtoh(void *dst, uint64_t src, size_t bytes, void *stream, GjExecError *err);
GjExecStatus gj_cu_dtod(uint64_t dst, uint64_t src, size_t bytes, void *stream, GjExecError *err);
/* Copies between two devices' memory (cuMemcpyPeer: over NVLink or PCIe
   peer to peer where the devices allow it, else staged by the driver);
   asynchronous on `stream` when one is given. */
GjExecStatus gj_cu_peer_copy(int dst_device, uint64_t dst, int src_device, uint64_t src,
                             size_t bytes, void *stream, GjExecError *err);
/* GJ_EXEC_OK when [ptr, ptr + bytes) lies in one allocation the driver knows
   (device, managed, or page-locked host memory), which a kernel can use;
   else an error of kind GJ_ERR_INVALID (plain host memory, a wild pointer).
   A range once checked is remembered per thread. */
GjExecStatus gj_cu_check_pointer(uint64_t ptr, size_t bytes, GjExecError *err);
GjExecStatus gj_cu_memset8(uint64_t dst, uint8_t value, size_t bytes, void *stream,
                           GjExecError *err);

/* Loads a module image: PTX text (JIT-compiled, with CU_JIT_ERROR_LOG_BUFFER;
   lineinfo adds CU_JIT_GENERATE_LINE_INFO) or a cubin. */
GjExecStatus gj_cu_module_load(const void *image, int lineinfo, void **module, GjExecError *err);
/* Compiles PTX for the current device with the driver's linker (the JIT
   a module load runs), keeping the result: *cubin (malloc'd), *size bytes,
   which gj_cu_module_load loads with no JIT (the persistent cache). */
GjExecStatus gj_cu_link_ptx(const char *ptx, int lineinfo, void **cubin, size_t *size,
                            GjExecError *err);
GjExecStatus gj_cu_module_function(void *module, const char *kernel, void **func, GjExecError *err);
/* The address and size of the module's global `name` (a __device__ variable). */
GjExecStatus gj_cu_module_global(void *module, const char *name, uint64_t *dptr, size_t *bytes,
                                 GjExecError *err);
GjExecStatus gj_cu_module_unload(void *module, GjExecError *err);
/* What a loaded kernel uses (cuFuncGetAttribute). */
typedef struct GjCuFuncAttrs {
    int max_threads;    /* threads per block it can be launched with: the device's limit,
                           or fewer for its registers or its .maxntid */
    int regs;           /* registers per thread */
    int shared_bytes;   /* static shared memory per block */
    int local_bytes;    /* local memory per thread (local arrays, spilled registers) */
    int const_bytes;    /* constant memory of its module's variables */
} GjCuFuncAttrs;
GjExecStatus gj_cu_func_attrs(void *func, GjCuFuncAttrs *attrs, GjExecError *err);
/* The driver's occupancy calculator (cuOccupancyMaxPotentialBlockSize): the
   block size, at most block_limit threads (0: the kernel's limit), that
   keeps the most of func's threads resident per multiprocessor when each
   block also has dynamic_shared bytes of dynamic shared memory. */
GjExecStatus gj_cu_occupancy_block(void *func, size_t dynamic_shared, int block_limit, int *block,
                                   GjExecError *err);

/* Lets `func` be launched with up to `bytes` of dynamic shared memory
   (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): needed when its static
   and dynamic shared memory pass 48 KiB, up to the device's opt-in limit. */
GjExecStatus gj_cu_func_set_max_dynamic_shared(void *func, int bytes, GjExecError *err);

GjExecStatus gj_cu_launch(void *func, const unsigned grid[3], const unsigned block[3],
                          unsigned shared_bytes, void *stream, void **params, GjExecError *err);

GjExecStatus gj_cu_synchronize(GjExecError *err);                  /* context-wide */
GjExecStatus gj_cu_stream_create(void **stream, GjExecError *err);
GjExecStatus gj_cu_stream_destroy(void *stream, GjExecError *err);
GjExecStatus gj_cu_stream_synchronize(void *stream, GjExecError *err);
/* Makes `stream` (a CUstream, or 1 / 2 for the legacy / per-thread default
   stream) wait, without blocking the host, for all work queued so far on
   the legacy default stream, which orders after every blocking stream of
   the context (gpujit's streams are blocking): an event recorded there,
   waited on. */
GjExecStatus gj_cu_stream_wait_default(void *stream, GjExecError *err);
/* An event; `timing` 0 makes a lighter one that elapsed times refuse. */
GjExecStatus gj_cu_event_create(void **event, int timing, GjExecError *err);
/* *done: whether the work before the event's last record has finished. */
GjExecStatus gj_cu_event_query(void *event, int *done, GjExecError *err);
/* Work queued on `stream` later waits for the event's last record. */
GjExecStatus gj_cu_stream_wait_event(void *stream, void *event, GjExecError *err);
/* The current device's free and total memory, bytes. */
GjExecStatus gj_cu_memory_info(size_t *free_bytes, size_t *total_bytes, GjExecError *err);
GjExecStatus gj_cu_event_destroy(void *event, GjExecError *err);
GjExecStatus gj_cu_event_record(void *event, void *stream, GjExecError *err);
GjExecStatus gj_cu_event_synchronize(void *event, GjExecError *err);
GjExecStatus gj_cu_event_elapsed(float *ms, void *start, void *end, GjExecError *err);

/* Pinned host memory (cuMemHostAlloc); managed memory comes later. */
/* Page-locked host memory (portable to every context); flags: GJ_HOST_*. */
enum { GJ_HOST_MAPPED_FLAG = 1, GJ_HOST_WRITE_COMBINED = 2 };
GjExecStatus gj_cu_host_alloc_flags(size_t bytes, unsigned flags, void **ptr, GjExecError *err);
/* The device address of mapped host memory (the same address under UVA). */
GjExecStatus gj_cu_host_device_ptr(void *ptr, uint64_t *dptr, GjExecError *err);
/* Unified memory, reachable from the host and every device; freed with
   gj_cu_free.  attach_global 0: attached to the host until a stream takes it. */
GjExecStatus gj_cu_managed_alloc(size_t bytes, int attach_global, uint64_t *dptr, GjExecError *err);
/* Page-locks (and unlocks) existing host memory. */
GjExecStatus gj_cu_host_register(void *ptr, size_t bytes, GjExecError *err);
GjExecStatus gj_cu_host_unregister(void *ptr, GjExecError *err);
GjExecStatus gj_cu_host_free(void *ptr, GjExecError *err);

#endif
