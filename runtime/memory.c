/*
 * memory.c - memory.h: device memory through the CUDA driver, or host
 * memory (64-byte aligned, like a cache line and any vector unit wants)
 * for the CPU target.  No Python, no cu* calls of its own.
 */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HOST_ALIGN = 64 };

/* Large host arrays start on a 2 MiB boundary and ask for transparent huge
   pages, as NumPy's do (where THP is "madvise"): a kernel streaming through
   three 40 MB arrays otherwise misses the TLB at every 4 KiB page, and the
   hardware prefetcher stops there. */
#define HUGE_FROM ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

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

int gj_mem_enter(int device, GjCuError *err) {
    int prev = gj_cu_thread_device();
    return gj_cu_ensure(device, err) == GJ_CU_OK ? prev : GJ_MEM_NO_ENTRY;
}

void gj_mem_leave(int device, int prev) {
    GjCuError ignored;   /* a thread that had no device keeps the one entered */
    if (prev >= 0 && prev != device)
        gj_cu_ensure(prev, &ignored);
}

/* Test-only fault injection (gj_mem_inject_fault): the allocation of host
   memory that brings the countdown to 0 fails. */
static long inject_countdown;

void gj_mem_inject_fault(long n) { __atomic_store_n(&inject_countdown, n, __ATOMIC_RELAXED); }

GjCuStatus gj_mem_alloc(int device, size_t bytes, uint64_t *ptr, GjCuError *err) {
    if (device >= 0)
        GJ_MEM_ON_DEVICE(device, err, gj_cu_alloc(bytes, ptr, err));
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
    return GJ_CU_OK;
}

GjCuStatus gj_mem_free(int device, uint64_t ptr, GjCuError *err) {
    if (device >= 0)
        GJ_MEM_ON_DEVICE(device, err, gj_cu_free(ptr, err));
    free((void *)(uintptr_t)ptr);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        GJ_MEM_ON_DEVICE(device, err, gj_cu_htod(dst, src, bytes, stream, err));
    if (bytes)
        memcpy((void *)(uintptr_t)dst, src, bytes);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        GJ_MEM_ON_DEVICE(device, err, gj_cu_dtoh(dst, src, bytes, stream, err));
    if (bytes)
        memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                       GjCuError *err) {
    if (device >= 0)
        GJ_MEM_ON_DEVICE(device, err, gj_cu_dtod(dst, src, bytes, stream, err));
    if (bytes)
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return GJ_CU_OK;
}

GjCuStatus gj_mem_copy_between(int dst_device, uint64_t dst, int src_device, uint64_t src,
                               size_t bytes, void *stream, GjCuError *err) {
    if (dst_device == src_device)
        return gj_mem_dtod(dst_device, dst, src, bytes, stream, err);
    GJ_MEM_ON_DEVICE(dst_device, err,
                     gj_cu_peer_copy(dst_device, dst, src_device, src, bytes, stream, err));
}

/* ---- host memory kinds ------------------------------------------------------------ */

GjCuStatus gj_mem_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags, void **host,
                             uint64_t *dptr, GjCuError *err) {
    *host = NULL;
    *dptr = 0;
    GjCuStatus st;
    if (device == GJ_MEM_HOST) {
        st = gj_mem_alloc(device, bytes, dptr, err);
        *host = (void *)(uintptr_t)*dptr;
        if (kind == GJ_HOST_PINNED)
            *dptr = 0;
        return st;
    }
    int prev = gj_mem_enter(device, err);
    if (prev == GJ_MEM_NO_ENTRY)
        return err->status;
    if (kind == GJ_HOST_MANAGED) {
        st = gj_cu_managed_alloc(bytes, !(flags & GJ_HOST_ATTACH_HOST), dptr, err);
        *host = (void *)(uintptr_t)*dptr;
    } else {
        unsigned f = (kind == GJ_HOST_MAPPED ? GJ_HOST_MAPPED_FLAG : 0) |
                     (flags & GJ_HOST_WC ? GJ_HOST_WRITE_COMBINED : 0);
        st = gj_cu_host_alloc_flags(bytes, f, host, err);
        if (st == GJ_CU_OK && kind == GJ_HOST_MAPPED &&
            (st = gj_cu_host_device_ptr(*host, dptr, err)) != GJ_CU_OK) {
            GjCuError ignored;
            gj_cu_host_free(*host, &ignored);
            *host = NULL;
        }
    }
    gj_mem_leave(device, prev);
    return st;
}

void gj_mem_host_free(int device, GjHostKind kind, void *host) {
    GjCuError ignored; /* a lost context took its memory already */
    if (!host)
        return;
    if (device == GJ_MEM_HOST) {
        free(host);
        return;
    }
    int prev = gj_mem_enter(device, &ignored);
    if (prev == GJ_MEM_NO_ENTRY)
        return;
    if (kind == GJ_HOST_MANAGED)
        gj_cu_free((uint64_t)(uintptr_t)host, &ignored);
    else
        gj_cu_host_free(host, &ignored);
    gj_mem_leave(device, prev);
}

GjCuStatus gj_mem_host_register(int device, void *host, size_t bytes, GjCuError *err) {
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(device, err, gj_cu_host_register(host, bytes, err));
}

void gj_mem_host_unregister(int device, void *host) {
    GjCuError ignored;
    if (device == GJ_MEM_HOST)
        return;
    int prev = gj_mem_enter(device, &ignored);
    if (prev == GJ_MEM_NO_ENTRY)
        return;
    gj_cu_host_unregister(host, &ignored);
    gj_mem_leave(device, prev);
}
