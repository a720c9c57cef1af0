/*
 * memory.c - memory.h: device memory through the CUDA driver, or host
 * memory (64-byte aligned, like a cache line and any vector unit wants)
 * for the CPU target.  No Python, no cu* calls of its own.
 */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HOST_ALIGN = 64 };

static GjCuStatus host_oom(size_t bytes, GjCuError *err) {
    memset(err, 0, sizeof *err);
    err->status = GJ_CU_DRIVER_ERROR;
    err->kind = GJ_ERR_OUT_OF_MEMORY;   /* host memory: a MemoryError, not a CUDA error */
    snprintf(err->call, sizeof err->call, "aligned_alloc");
    snprintf(err->message, sizeof err->message, "out of host memory");
    err->requested = bytes;
    err->host = 1;
    return GJ_CU_DRIVER_ERROR;
}

GjCuStatus gj_mem_alloc(int device, size_t bytes, uint64_t *ptr, GjCuError *err) {
    if (device >= 0)
        return gj_cu_alloc(bytes, ptr, err);
    size_t rounded = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
    if (rounded < bytes)
        return host_oom(bytes, err);
    void *p = aligned_alloc(HOST_ALIGN, rounded ? rounded : HOST_ALIGN);
    if (!p)
        return host_oom(bytes, err);
    *ptr = (uint64_t)(uintptr_t)p;
    return GJ_CU_OK;
}

GjCuStatus gj_mem_free(int device, uint64_t ptr, GjCuError *err) {
    if (device >= 0)
        return gj_cu_free(ptr, err);
    free((void *)(uintptr_t)ptr);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        return gj_cu_htod(dst, src, bytes, stream, err);
    if (bytes)
        memcpy((void *)(uintptr_t)dst, src, bytes);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        return gj_cu_dtoh(dst, src, bytes, stream, err);
    if (bytes)
        memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        return gj_cu_dtod(dst, src, bytes, stream, err);
    if (bytes)
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return GJ_CU_OK;
}
