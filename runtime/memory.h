/*
 * memory.h - "device memory" for whichever target a DeviceArray or a launch
 * uses: CUDA device memory through driver.c for a device ordinal >= 0, or
 * host memory standing in for it on the CPU target (GJ_MEM_HOST).
 *
 * Callers (pymodule/devicearray.c, launcher.c) pass the memory's owner, the
 * "device" recorded in the DeviceArray, and never test the target
 * themselves.  For a CUDA device the caller makes its context current first
 * (gj_cu_ensure), as before; host memory needs nothing.  Host copies are
 * synchronous memcpy, whatever stream is passed.  Errors are GjCuError, as
 * the driver's: OUT_OF_MEMORY is code 2 with requested bytes.
 */
#ifndef GJ_MEMORY_H
#define GJ_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "driver.h"

enum { GJ_MEM_HOST = -1 };   /* the "device" of CPU-target memory */

GjCuStatus gj_mem_alloc(int device, size_t bytes, uint64_t *ptr, GjCuError *err);
GjCuStatus gj_mem_free(int device, uint64_t ptr, GjCuError *err);
GjCuStatus gj_mem_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                       GjCuError *err);
GjCuStatus gj_mem_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err);
GjCuStatus gj_mem_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err);

#endif
