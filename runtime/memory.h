/*
 * memory.h - "device memory" for whichever target a DeviceArray or a launch
 * uses: CUDA device memory through driver.c for a device ordinal >= 0, or
 * host memory standing in for it on the CPU target (GJ_MEM_HOST).
 *
 * Callers (pymodule/devicearray.c, runtime/exec.c) pass the memory's owner,
 * the "device" recorded in the DeviceArray, and never test the target
 * themselves.  Each call makes a CUDA device's context current for itself
 * and the calling thread's device current again after; host memory needs
 * nothing.  Host copies are synchronous memcpy, whatever stream is passed.
 * Errors are GjCuError, as the driver's, with a kind: out of memory (host
 * memory: `host` set) with the bytes requested.
 */
#ifndef GJ_MEMORY_H
#define GJ_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "driver.h"

enum { GJ_MEM_HOST = -1 };   /* the "device" of CPU-target memory */

/* Makes CUDA device `device`'s context current; returns the thread's device
   before (-1: none yet), for gj_mem_leave, or GJ_MEM_NO_ENTRY with err set. */
enum { GJ_MEM_NO_ENTRY = -1000 };
int gj_mem_enter(int device, GjCuError *err);
void gj_mem_leave(int device, int prev);
/* In a function returning GjCuStatus: returns call's status, made with CUDA
   device `device`'s context current (err's when it cannot be made so). */
#define GJ_MEM_ON_DEVICE(device, err, call)                                 \
    do {                                                                    \
        int prev_ = gj_mem_enter((device), (err));                          \
        GjCuStatus st_ = prev_ == GJ_MEM_NO_ENTRY ? (err)->status : (call); \
        gj_mem_leave((device), prev_);                                      \
        return st_;                                                         \
    } while (0)

GjCuStatus gj_mem_alloc(int device, size_t bytes, uint64_t *ptr, GjCuError *err);
/* Tests only: the n-th allocation of host memory for the CPU target from now
   (n >= 1) fails as out of memory; n = 0 stops injecting. */
void gj_mem_inject_fault(long n);
GjCuStatus gj_mem_free(int device, uint64_t ptr, GjCuError *err);
GjCuStatus gj_mem_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                       GjCuError *err);
GjCuStatus gj_mem_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err);
GjCuStatus gj_mem_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err);
/* From src_device's memory to dst_device's (both CUDA devices, or both the
   host), on `stream` of the destination. */
GjCuStatus gj_mem_copy_between(int dst_device, uint64_t dst, int src_device, uint64_t src,
                               size_t bytes, void *stream, GjCuError *err);

/* Host memory that the GPU reaches (CUDA's memory kinds), for `device`:
 *   PINNED   page-locked: copies from and to it are DMA, asynchronous on a
 *            stream; kernels reach it only through copies (*dptr 0);
 *   MAPPED   page-locked and mapped into the device's address space:
 *            kernels read and write it in place at *dptr;
 *   MANAGED  unified memory, migrating between host and device on use:
 *            kernels use it in place at *dptr (= *host).
 * On the CPU target every kind is aligned host memory, in place. */
typedef enum GjHostKind { GJ_HOST_PINNED, GJ_HOST_MAPPED, GJ_HOST_MANAGED } GjHostKind;
enum {
    GJ_HOST_WC = 1,               /* write-combined: fast to write from the host, slow to read */
    GJ_HOST_ATTACH_HOST = 2,      /* managed: attached to the host until a stream takes it */
};
GjCuStatus gj_mem_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags, void **host,
                             uint64_t *dptr, GjCuError *err);
void gj_mem_host_free(int device, GjHostKind kind, void *host);
/* Page-locks existing host memory for faster, asynchronous copies (nothing
   on the CPU target), and unlocks it. */
GjCuStatus gj_mem_host_register(int device, void *host, size_t bytes, GjCuError *err);
void gj_mem_host_unregister(int device, void *host);

#endif
