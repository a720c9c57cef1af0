/*
 * exec.c - exec.h: a launch plan's copies, launch, synchronisation, error
 * record and clean-up, for a CUDA device (driver.h, memory.h) or the CPU
 * target (cpuexec.h).  The one place outside memory.c that tells the two
 * apart.
 */
#include "exec.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpuexec.h"

/* The CPU target's limits: a CUDA device's, so errors mean the same. */
static const GjCuDeviceInfo cpu_limits = {
    .ordinal = GJ_MEM_HOST,
    .name = "CPU",
    .max_threads_per_block = 1024,
    .max_block_dim = {1024, 1024, 64},
    .max_grid_dim = {2147483647, 65535, 65535},
    .max_shared_per_block = 48 * 1024,
    .max_shared_per_block_optin = 227 * 1024,   /* an H100/H200's */
    .warp_size = 32,
};

GjCuStatus gj_exec_device_info(int device, GjCuDeviceInfo *info, GjCuError *err) {
    if (device == GJ_MEM_HOST) {
        *info = cpu_limits;
        return GJ_CU_OK;
    }
    return gj_cu_device_info(device, info, err);
}

GjCuStatus gj_exec_allow_dynamic_shared(int device, void *func, unsigned bytes, GjCuError *err) {
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    return gj_cu_func_set_max_dynamic_shared(func, (int)bytes, err);
}

GjCuStatus gj_exec_kernel_use(int device, void *func, GjKernelUse *use, GjCuError *err) {
    if (device == GJ_MEM_HOST) {
        int limit = cpu_limits.max_threads_per_block;
        if (use->max_threads <= 0 || use->max_threads > limit)
            use->max_threads = limit;
        use->regs = -1;
        return GJ_CU_OK;
    }
    GjCuFuncAttrs a;
    GjCuStatus st = gj_cu_func_attrs(func, &a, err);
    if (st == GJ_CU_OK)
        *use = (GjKernelUse){.max_threads = a.max_threads,
                             .regs = a.regs,
                             .shared_bytes = (size_t)a.shared_bytes,
                             .local_bytes = (size_t)a.local_bytes,
                             .const_bytes = (size_t)a.const_bytes};
    return st;
}

GjCuStatus gj_exec_best_block(int device, void *func, size_t shared, int max_threads, int *block,
                              GjCuError *err) {
    if (device == GJ_MEM_HOST) {
        *block = max_threads < GJ_EXEC_CPU_BLOCK ? max_threads : GJ_EXEC_CPU_BLOCK;
        return GJ_CU_OK;
    }
    return gj_cu_occupancy_block(func, shared, max_threads, block, err);
}

int gj_exec_copies_host_arrays(int device) { return device != GJ_MEM_HOST; }

int gj_exec_blocks(const GjLaunch *l) {
    return l->device == GJ_MEM_HOST || l->ncopies > 0 || l->error_record;
}

static GjCuStatus cpu_failed(const char *message, GjCuError *err) {
    memset(err, 0, sizeof *err);
    err->status = GJ_CU_DRIVER_ERROR;
    err->kind = GJ_ERR_CPU_TARGET;
    snprintf(err->call, sizeof err->call, "gj_cpu_launch");
    snprintf(err->message, sizeof err->message, "%s", message[0] ? message : "unknown error");
    return GJ_CU_DRIVER_ERROR;
}

/* The CPU target: host arrays in place, the grid on the executor's workers. */
static GjCuStatus launch_cpu(GjLaunch *l, GjCuError *err) {
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
        return cpu_failed(message, err);
    return GJ_CU_OK;
}

/* Reads the module's error record after the launch, in the launch's stream:
   into pageable memory the copy returns once it is done, so it has waited
   for the kernel and the copies before it, and stands for the synchronize
   (a fault shows here as it would there). */
static GjCuStatus read_error_record(GjLaunch *l, GjCuError *err) {
    size_t bytes = l->error_record_words * sizeof *l->error_record;
    return gj_cu_dtoh(l->error_record, l->error_record_dptr, bytes, l->stream, err);
}

/* Clears a record that a failing thread set, for the next launch. */
static GjCuStatus clear_error_record(GjLaunch *l, GjCuError *err) {
    size_t bytes = l->error_record_words * sizeof *l->error_record;
    if (l->error_record[0] == 0)
        return GJ_CU_OK;
    return gj_cu_memset8(l->error_record_dptr, 0, bytes, NULL, err);
}

static void free_temporaries(GjLaunch *l) {
    GjCuError ignored;   /* after a fault this fails too; nothing more to do */
    for (int i = 0; i < l->ncopies; i++)
        if (l->copies[i].temp) {
            gj_mem_free(l->device, l->copies[i].temp, &ignored);
            l->copies[i].temp = 0;
        }
}

static GjCuStatus launch_cuda(GjLaunch *l, GjCuError *err) {
    GjCuStatus st = GJ_CU_OK;
    for (int i = 0; i < l->ncopies && st == GJ_CU_OK; i++) {
        GjHostCopy *c = &l->copies[i];
        st = gj_mem_alloc(l->device, c->nbytes, &c->temp, err);
        if (st == GJ_CU_OK)
            st = gj_mem_htod(l->device, c->temp, c->buf, c->nbytes, l->stream, err);
        *c->slot = c->temp;
    }
    if (st == GJ_CU_OK)
        st = gj_cu_launch(l->func, l->grid, l->block, l->shared, l->stream, l->params, err);
    for (int i = 0; i < l->ncopies && st == GJ_CU_OK; i++)
        if (l->copies[i].written)
            st = gj_mem_dtoh(l->device, l->copies[i].buf, l->copies[i].temp, l->copies[i].nbytes,
                             l->stream, err);
    if (st == GJ_CU_OK && l->error_record)
        st = read_error_record(l, err);
    else if (st == GJ_CU_OK && gj_exec_blocks(l))
        st = gj_cu_stream_synchronize(l->stream, err);
    if (st == GJ_CU_OK && l->error_record)
        st = clear_error_record(l, err);
    free_temporaries(l);
    return st;
}

GjCuStatus gj_exec_launch(GjLaunch *l, GjCuError *err) {
    return l->device == GJ_MEM_HOST ? launch_cpu(l, err) : launch_cuda(l, err);
}

/* ---- streams, events, memory ------------------------------------------------ */

static GjCuStatus invalid(GjCuError *err, const char *message) {
    memset(err, 0, sizeof *err);
    err->status = GJ_CU_DRIVER_ERROR;
    err->kind = GJ_ERR_INVALID;
    snprintf(err->message, sizeof err->message, "%s", message);
    return GJ_CU_DRIVER_ERROR;
}

static double monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

GjCuStatus gj_exec_stream_create(int device, void **stream, GjCuError *err) {
    *stream = NULL;
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(device, err, gj_cu_stream_create(stream, err));
}

void gj_exec_stream_destroy(int device, void *stream) {
    GjCuError ignored;   /* a destroyed context took its streams already */
    int prev;
    if (device == GJ_MEM_HOST || !stream ||
        (prev = gj_mem_enter(device, &ignored)) == GJ_MEM_NO_ENTRY)
        return;
    gj_cu_stream_destroy(stream, &ignored);
    gj_mem_leave(device, prev);
}

GjCuStatus gj_exec_stream_synchronize(int device, void *stream, GjCuError *err) {
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(device, err, gj_cu_stream_synchronize(stream, err));
}

GjCuStatus gj_exec_synchronize(int device, GjCuError *err) {
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(device, err, gj_cu_synchronize(err));
}

GjCuStatus gj_exec_event_create(int device, int timing, GjExecEvent *ev, GjCuError *err) {
    *ev = (GjExecEvent){.device = device, .timing = timing, .host_ms = -1.0};
    if (device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(device, err, gj_cu_event_create(&ev->handle, timing, err));
}

void gj_exec_event_destroy(GjExecEvent *ev) {
    GjCuError ignored;
    int prev;
    if (ev->device == GJ_MEM_HOST || !ev->handle ||
        (prev = gj_mem_enter(ev->device, &ignored)) == GJ_MEM_NO_ENTRY)
        return;
    gj_cu_event_destroy(ev->handle, &ignored);
    ev->handle = NULL;
    gj_mem_leave(ev->device, prev);
}

GjCuStatus gj_exec_event_record(GjExecEvent *ev, void *stream, GjCuError *err) {
    if (ev->device == GJ_MEM_HOST) {
        ev->host_ms = monotonic_ms();
        return GJ_CU_OK;
    }
    GJ_MEM_ON_DEVICE(ev->device, err, gj_cu_event_record(ev->handle, stream, err));
}

GjCuStatus gj_exec_event_synchronize(GjExecEvent *ev, GjCuError *err) {
    if (ev->device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(ev->device, err, gj_cu_event_synchronize(ev->handle, err));
}

GjCuStatus gj_exec_event_query(GjExecEvent *ev, int *done, GjCuError *err) {
    *done = 1;
    if (ev->device == GJ_MEM_HOST)
        return GJ_CU_OK;
    GJ_MEM_ON_DEVICE(ev->device, err, gj_cu_event_query(ev->handle, done, err));
}

GjCuStatus gj_exec_event_wait(GjExecEvent *ev, void *stream, GjCuError *err) {
    if (ev->device == GJ_MEM_HOST)
        return GJ_CU_OK;   /* what was recorded has finished */
    GJ_MEM_ON_DEVICE(ev->device, err, gj_cu_stream_wait_event(stream, ev->handle, err));
}

GjCuStatus gj_exec_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                 GjCuError *err) {
    *ms = 0.0f;
    if (a->device != b->device)
        return invalid(err, "elapsed_time() between events of different devices "
                            "(or targets)");
    if (a->device == GJ_MEM_HOST) {   /* as the driver refuses (INVALID_HANDLE) */
        if (!a->timing || !b->timing)
            return invalid(err, "elapsed_time() of an event made with timing=False");
        if (a->host_ms < 0 || b->host_ms < 0)
            return invalid(err, "elapsed_time() of an event that was never recorded");
        *ms = (float)(b->host_ms - a->host_ms);
        return GJ_CU_OK;
    }
    GJ_MEM_ON_DEVICE(a->device, err, gj_cu_event_elapsed(ms, a->handle, b->handle, err));
}

GjCuStatus gj_exec_memory_info(int device, size_t *free_bytes, size_t *total_bytes,
                               GjCuError *err) {
    if (device == GJ_MEM_HOST) {
        long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES),
             total = sysconf(_SC_PHYS_PAGES);
        if (page <= 0 || avail < 0 || total <= 0)
            return invalid(err, "the host's memory size is unknown (sysconf failed)");
        *free_bytes = (size_t)avail * (size_t)page;
        *total_bytes = (size_t)total * (size_t)page;
        return GJ_CU_OK;
    }
    GJ_MEM_ON_DEVICE(device, err, gj_cu_memory_info(free_bytes, total_bytes, err));
}
