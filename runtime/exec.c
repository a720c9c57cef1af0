/*
 * exec.c - exec.h: a launch plan's copies, launch, synchronisation, error
 * record and clean-up, for a CUDA device (driver.h, memory.h) or the CPU
 * target (cpuexec.h).  The one place outside memory.c that tells the two
 * apart.
 */
#include "exec.h"

#include <stdio.h>
#include <string.h>

#include "cpuexec.h"

int gj_exec_blocks(const GjLaunch *l) {
    return l->device == GJ_MEM_HOST || l->ncopies > 0 || l->error_record;
}

static GjCuStatus cpu_failed(GjLaunch *l, GjCuError *err) {
    memset(err, 0, sizeof *err);
    err->status = GJ_CU_DRIVER_ERROR;
    err->kind = GJ_ERR_CPU_TARGET;
    snprintf(err->call, sizeof err->call, "gj_cpu_launch");
    snprintf(err->message, sizeof err->message, "%s",
             l->cpu_message[0] ? l->cpu_message : "unknown error");
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
        .needs_fibers = l->needs_fibers,
        .error_record = l->error_record,
    };
    if (l->error_record)
        memset(l->error_record, 0, l->error_record_words * sizeof *l->error_record);
    l->cpu_message[0] = '\0';
    if (gj_cpu_launch(&cl, l->cpu_message, sizeof l->cpu_message) != 0)
        return cpu_failed(l, err);
    return GJ_CU_OK;
}

/* Reads the module's error record after the launch and clears a set one. */
static GjCuStatus read_error_record(GjLaunch *l, GjCuError *err) {
    size_t bytes = l->error_record_words * sizeof *l->error_record;
    GjCuStatus st = gj_cu_dtoh(l->error_record, l->error_record_dptr, bytes, NULL, err);
    if (st == GJ_CU_OK && l->error_record[0] != 0)
        st = gj_cu_memset8(l->error_record_dptr, 0, bytes, NULL, err);
    return st;
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
            st = gj_mem_dtoh(l->device, l->copies[i].buf, l->copies[i].temp,
                             l->copies[i].nbytes, l->stream, err);
    if (st == GJ_CU_OK && gj_exec_blocks(l))
        st = gj_cu_stream_synchronize(l->stream, err);
    if (st == GJ_CU_OK && l->error_record)
        st = read_error_record(l, err);
    free_temporaries(l);
    return st;
}

GjCuStatus gj_exec_launch(GjLaunch *l, GjCuError *err) {
    return l->device == GJ_MEM_HOST ? launch_cpu(l, err) : launch_cuda(l, err);
}
