/*
 * exec.h - running a launch plan on its target: a CUDA device (an ordinal)
 * or the CPU target (GJ_MEM_HOST).  The extension parses Python arguments
 * into a GjLaunch and hands it over; which target runs it is this file's
 * business alone.  No Python here.
 *
 *     def gj_exec_launch(plan):                  # pseudo-Python
 *         for c in plan.copies:                  # host arrays
 *             c.temp = alloc(c.nbytes); copy c.buf -> c.temp; *c.slot = c.temp
 *         launch(plan.func, grid, block, shared, stream, params)
 *         for c in plan.copies if c.written:     # in the stream, after the kernel
 *             copy c.temp -> c.buf
 *         if plan.error_record:                  # in the stream too; returns when
 *             copy the record into it            # done, so it waits as a synchronize
 *         elif gj_exec_blocks(plan):             # copies, the CPU
 *             synchronize(stream)
 *         clear the error record if a thread set it
 *         free the temporaries                   # also when a step fails
 *
 * On the CPU target host memory is the device memory: a copy's slot gets
 * its buffer and nothing is copied; the grid runs on runtime/cpuexec.h's
 * workers and the launch returns when it is done.
 */
#ifndef GJ_EXEC_H
#define GJ_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"

/* A host array the kernel reads (and maybe writes) through a temporary in
   device memory. */
typedef struct GjHostCopy {
    void *buf;            /* host memory, contiguous */
    size_t nbytes;
    int written;          /* the kernel may write it: copied back after the launch */
    uint64_t *slot;       /* the kernelParams slot that gets its device address */
    uint64_t temp;        /* gj_exec_launch's temporary while it runs (0: none) */
} GjHostCopy;

typedef struct GjLaunch {
    int device;                  /* CUDA ordinal, or GJ_MEM_HOST */
    void *func;                  /* CUfunction, or GjCpuKernelFn on the CPU target */
    unsigned grid[3], block[3];
    unsigned shared;             /* dynamic shared memory, bytes */
    size_t shared_static;        /* the kernel's static shared memory (the CPU target's
                                    block buffer holds both parts) */
    size_t local_bytes;          /* local arrays per thread (the CPU target's fiber stacks) */
    int per_thread;              /* CPU: func runs one thread (GjCpuLaunch.per_thread) */
    int needs_fibers;            /* the kernel has barriers or warp operations */
    void *stream;                /* CUstream (NULL: the legacy default stream) */
    void **params;               /* kernelParams (compile.h's ABI) */
    GjHostCopy *copies;
    int ncopies;
    uint64_t error_record_dptr;  /* CUDA: the module's error record (0: none) */
    int64_t *error_record;       /* compile.h's error record, filled after the launch
                                    (zero: no error), or NULL when the kernel has none */
    size_t error_record_words;   /* its length: GJ_ERROR_RECORD_WORDS */
} GjLaunch;

/* The launch limits of `device`; the CPU target's are a CUDA device's (an
   H200's), so a bad configuration fails the same way on both targets. */
GjCuStatus gj_exec_device_info(int device, GjCuDeviceInfo *info, GjCuError *err);

/* Lets `func` be launched on `device` with `bytes` of dynamic shared memory
   past the 48 KiB every kernel may have (nothing to do on the CPU target). */
GjCuStatus gj_exec_allow_dynamic_shared(int device, void *func, unsigned bytes, GjCuError *err);

/* What a compiled kernel uses (numba's get_regs_per_thread() and kin). */
typedef struct GjKernelUse {
    int max_threads;        /* threads per block it can be launched with */
    int regs;               /* registers per thread; -1 on the CPU target, which has none */
    size_t shared_bytes;    /* static shared memory per block */
    size_t local_bytes;     /* local memory per thread */
    size_t const_bytes;     /* constant memory */
} GjKernelUse;

/* Fills *use for the loaded kernel func on `device`: on a GPU from the
   driver.  The CPU target keeps the compiler's counts *use holds on entry
   (shared, local and constant bytes, and in max_threads the kernel's
   launch_bounds, 0 for none) and completes them with its limits. */
GjCuStatus gj_exec_kernel_use(int device, void *func, GjKernelUse *use, GjCuError *err);

/* The CPU target's block size where the caller lets gpujit choose
   (kernel.forall(n), suggest_config): blocks run one per worker thread, so
   128 threads make enough blocks to keep every core busy for a few
   thousand tasks, at a cost per block (and, for a kernel with barriers, 128
   fiber stacks) that stays small. */
enum { GJ_EXEC_CPU_BLOCK = 128 };

/* The block size for the loaded kernel func with `shared` bytes of dynamic
   shared memory per block, at most max_threads: on a GPU the driver's
   occupancy calculator's, the one that keeps the most threads resident per
   multiprocessor; on the CPU target, which has no occupancy to gain,
   GJ_EXEC_CPU_BLOCK (or max_threads, when fewer). */
GjCuStatus gj_exec_best_block(int device, void *func, size_t shared, int max_threads, int *block,
                              GjCuError *err);

/* Whether host arrays given to a launch on `device` are copied (to a GPU
   and back), rather than used in place (the CPU target). */
int gj_exec_copies_host_arrays(int device);

/* Whether gj_exec_launch returns only when the grid is done (host copies,
   an error record to read, the CPU target): the caller releases the GIL. */
int gj_exec_blocks(const GjLaunch *l);

/* Runs the plan; GJ_CU_OK, or an error in err (err->kind says which) with
   every temporary freed. */
GjCuStatus gj_exec_launch(GjLaunch *l, GjCuError *err);

/* ---- streams, events, memory ------------------------------------------------
 *
 * Per device, a CUDA ordinal or GJ_MEM_HOST.  Each call makes the device's
 * context current for itself and restores the thread's device after.  The
 * CPU target's launches are synchronous: its streams have no handle and
 * waiting on them is nothing, and its events are host timestamps taken when
 * recorded (every earlier launch has finished by then).
 */

typedef struct GjExecEvent {
    int device;
    int timing;          /* made to time (elapsed times refuse one that is not) */
    void *handle;        /* CUevent; NULL on the CPU target */
    double host_ms;      /* CPU target: CLOCK_MONOTONIC when recorded, ms; < 0: never */
} GjExecEvent;

GjCuStatus gj_exec_stream_create(int device, void **stream, GjCuError *err);
void gj_exec_stream_destroy(int device, void *stream);
GjCuStatus gj_exec_stream_synchronize(int device, void *stream, GjCuError *err);
GjCuStatus gj_exec_synchronize(int device, GjCuError *err);   /* all of the device's work */

/* timing 0: an event that elapsed times refuse (lighter to record on a GPU) */
GjCuStatus gj_exec_event_create(int device, int timing, GjExecEvent *ev, GjCuError *err);
void gj_exec_event_destroy(GjExecEvent *ev);
GjCuStatus gj_exec_event_record(GjExecEvent *ev, void *stream, GjCuError *err);
GjCuStatus gj_exec_event_synchronize(GjExecEvent *ev, GjCuError *err);
GjCuStatus gj_exec_event_query(GjExecEvent *ev, int *done, GjCuError *err);
/* Work queued on `stream` later waits for the event's last record. */
GjCuStatus gj_exec_event_wait(GjExecEvent *ev, void *stream, GjCuError *err);
/* Milliseconds from a's record to b's (both on one device); GJ_ERR_INVALID
   for a CPU-target event never recorded. */
GjCuStatus gj_exec_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                 GjCuError *err);

/* Free and total bytes of the device's memory (the host's on the CPU target). */
GjCuStatus gj_exec_memory_info(int device, size_t *free_bytes, size_t *total_bytes, GjCuError *err);

#endif
