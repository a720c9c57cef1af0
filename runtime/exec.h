/*
 * exec.h - the runtime's one interface to the extension: loading modules,
 * device queries, memory and copies, launch plans, streams and events, on
 * a CUDA device (an ordinal >= 0) or the CPU target (GJ_EXEC_HOST).  The
 * extension parses Python arguments into a GjLaunch and passes a "device"
 * with every call; which target serves it is exec.c's business alone: it
 * picks the target's hooks (exectarget.h) from the device, and the CUDA
 * implementation (exec_cuda.c, over driver.c) and the CPU one (exec_cpu.c,
 * over cpuexec.c) never see each other.  Errors are GjExecError
 * (exectypes.h).  No Python here; driver.h stays inside runtime/.
 *
 *     def gj_exec_launch(plan):                  # pseudo-Python
 *         target = cuda if plan.device >= 0 else cpu   # the one hook call
 *         target.launch(plan)
 *
 *     def cuda.launch(plan):
 *         for c in plan.copies:                  # host arrays
 *             c.temp = alloc(c.nbytes); copy c.buf -> c.temp; *c.slot = c.temp
 *         cuLaunchKernel(plan.func, grid, block, shared, stream, params)
 *         for c in plan.copies if c.written:     # in the stream, after the kernel
 *             copy c.temp -> c.buf
 *         if plan.error_record:                  # in the stream too; returns when
 *             copy the record into it            # done, so it waits as a synchronize
 *         elif gj_exec_blocks(plan):             # copies
 *             synchronize(stream)
 *         clear the error record if a thread set it
 *         free the temporaries                   # also when a step fails
 *
 *     def cpu.launch(plan):                      # host memory is the device memory
 *         for c in plan.copies: *c.slot = c.buf  # nothing is copied
 *         run the grid on cpuexec.h's workers    # returns when it is done
 */
#ifndef GJ_EXEC_H
#define GJ_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "exectypes.h"

enum { GJ_EXEC_HOST = -1 };   /* the "device" of the CPU target (its memory is the host's) */

/* ---- devices -------------------------------------------------------------------- */

/* 1 if a CUDA driver and at least one device can be used (loads the driver
   once, creates no context); never fails. */
int gj_exec_gpu_available(void);
/* The number of CUDA devices (0 when there is no driver: err says why). */
GjExecStatus gj_exec_device_count(int *n, GjExecError *err);
/* The CUDA driver's version, e.g. 13000. */
GjExecStatus gj_exec_driver_version(int *version, GjExecError *err);
/* The calling thread's CUDA device: the last one selected, 0 before any. */
int gj_exec_current_device(void);
/* Makes `device` current on the calling thread: a CUDA device's primary
   context (initialising CUDA on first use; a compare when it already is),
   nothing on the CPU target. */
GjExecStatus gj_exec_select(int device, GjExecError *err);

/* Tests only: on a CUDA device, the n-th driver call from now (n >= 1) is
   not made and fails with CUresult `code`; on GJ_EXEC_HOST, the n-th
   allocation of host memory fails as out of memory.  n = 0 stops. */
void gj_exec_inject_fault(int device, long n, int code);

/* 1 and a message in msg when the target's environment variables ask for
   what it cannot do (GPUJIT_CPU_THREADS, GPUJIT_CPU_STACK_KIB; it then
   takes its defaults), else 0. */
int gj_exec_env_problem(int device, char *msg, size_t size);

/* The runtime functions that `device`'s kernel code calls, by name and
   address, for the compiler to resolve (the CPU target's barriers, warp
   operations, printf and error record: cpuexec.h's "called from kernel
   code"); *n = 0 and NULL for a GPU, whose kernels call none. */
typedef struct GjExecSymbol {
    const char *name;
    void (*addr)(void);
} GjExecSymbol;
const GjExecSymbol *gj_exec_kernel_symbols(int device, int *n);

/* ---- modules ----------------------------------------------------------------------
 *
 * CUDA modules, with `device` current on the calling thread (gj_exec_select);
 * the CPU target's kernels come from the compiler's JIT, and these fail
 * there with GJ_ERR_NOT_SUPPORTED.
 */

/* Loads a module image: PTX text (JIT-compiled, with its error log in err;
   lineinfo keeps line numbers) or a cubin. */
GjExecStatus gj_exec_module_load(int device, const void *image, int lineinfo, void **module,
                                 GjExecError *err);
/* Compiles PTX for the device as a module load would, keeping the result:
   *cubin (malloc'd), *size bytes, which gj_exec_module_load loads with no
   JIT (the persistent cache). */
GjExecStatus gj_exec_link_ptx(int device, const char *ptx, int lineinfo, void **cubin, size_t *size,
                              GjExecError *err);
GjExecStatus gj_exec_module_function(int device, void *module, const char *kernel, void **func,
                                     GjExecError *err);
/* The address and size of the module's global `name` (a __device__ variable). */
GjExecStatus gj_exec_module_global(int device, void *module, const char *name, uint64_t *dptr,
                                   size_t *bytes, GjExecError *err);
GjExecStatus gj_exec_module_unload(int device, void *module, GjExecError *err);

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
    int device;                  /* CUDA ordinal, or GJ_EXEC_HOST */
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
GjExecStatus gj_exec_device_info(int device, GjDeviceInfo *info, GjExecError *err);

/* Lets `func` be launched on `device` with `bytes` of dynamic shared memory
   past the 48 KiB every kernel may have (nothing to do on the CPU target). */
GjExecStatus gj_exec_allow_dynamic_shared(int device, void *func, unsigned bytes, GjExecError *err);

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
GjExecStatus gj_exec_kernel_use(int device, void *func, GjKernelUse *use, GjExecError *err);

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
GjExecStatus gj_exec_best_block(int device, void *func, size_t shared, int max_threads, int *block,
                                GjExecError *err);

/* Whether host arrays given to a launch on `device` are copied (to a GPU
   and back), rather than used in place (the CPU target). */
int gj_exec_copies_host_arrays(int device);

/* Whether gj_exec_launch returns only when the grid is done (host copies,
   an error record to read, the CPU target): the caller releases the GIL. */
int gj_exec_blocks(const GjLaunch *l);

/* Runs the plan; GJ_EXEC_OK, or an error in err (err->kind says which) with
   every temporary freed. */
GjExecStatus gj_exec_launch(GjLaunch *l, GjExecError *err);

/* ---- streams and events -----------------------------------------------------
 *
 * Per device, a CUDA ordinal or GJ_EXEC_HOST.  Each call makes the device's
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

GjExecStatus gj_exec_stream_create(int device, void **stream, GjExecError *err);
void gj_exec_stream_destroy(int device, void *stream);
GjExecStatus gj_exec_stream_synchronize(int device, void *stream, GjExecError *err);
GjExecStatus gj_exec_synchronize(int device, GjExecError *err);   /* all of the device's work */
/* Makes `stream` (a CUstream, or 1 / 2 for CUDA's legacy / per-thread
   default stream) wait, without blocking the host, for all work queued so
   far on the legacy default stream, which orders after every stream gpujit
   makes; with `device` current on the calling thread, as the modules. */
GjExecStatus gj_exec_stream_wait_default(int device, void *stream, GjExecError *err);

/* timing 0: an event that elapsed times refuse (lighter to record on a GPU) */
GjExecStatus gj_exec_event_create(int device, int timing, GjExecEvent *ev, GjExecError *err);
void gj_exec_event_destroy(GjExecEvent *ev);
GjExecStatus gj_exec_event_record(GjExecEvent *ev, void *stream, GjExecError *err);
GjExecStatus gj_exec_event_synchronize(GjExecEvent *ev, GjExecError *err);
GjExecStatus gj_exec_event_query(GjExecEvent *ev, int *done, GjExecError *err);
/* Work queued on `stream` later waits for the event's last record. */
GjExecStatus gj_exec_event_wait(GjExecEvent *ev, void *stream, GjExecError *err);
/* Milliseconds from a's record to b's (both on one device); GJ_ERR_INVALID
   for a CPU-target event never recorded. */
GjExecStatus gj_exec_event_elapsed(const GjExecEvent *a, const GjExecEvent *b, float *ms,
                                   GjExecError *err);

/* Free and total bytes of the device's memory (the host's on the CPU target). */
GjExecStatus gj_exec_memory_info(int device, size_t *free_bytes, size_t *total_bytes,
                                 GjExecError *err);

/* ---- memory ------------------------------------------------------------------------
 *
 * "Device memory" of `device`: CUDA device memory, or host memory standing
 * in for it on the CPU target (64-byte aligned; from 4 MiB on, on 2 MiB
 * boundaries with transparent huge pages asked for).  Each call makes a
 * CUDA device's context current for itself and the thread's device current
 * again after.  The CPU target's copies are memcpy, whatever stream is
 * passed.  Out of memory is GJ_ERR_OUT_OF_MEMORY with the bytes requested
 * (and `host` set for host memory).
 */

GjExecStatus gj_exec_alloc(int device, size_t bytes, uint64_t *ptr, GjExecError *err);
GjExecStatus gj_exec_free(int device, uint64_t ptr, GjExecError *err);
GjExecStatus gj_exec_htod(int device, uint64_t dst, const void *src, size_t bytes, void *stream,
                          GjExecError *err);
GjExecStatus gj_exec_dtoh(int device, void *dst, uint64_t src, size_t bytes, void *stream,
                          GjExecError *err);
GjExecStatus gj_exec_dtod(int device, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                          GjExecError *err);
/* From src_device's memory to dst_device's (both CUDA devices: a peer copy
   on `stream` of the destination; or both the host), bytes. */
GjExecStatus gj_exec_copy_between(int dst_device, uint64_t dst, int src_device, uint64_t src,
                                  size_t bytes, void *stream, GjExecError *err);
/* GJ_EXEC_OK when [ptr, ptr + bytes) lies in one allocation a kernel on
   `device` can use (CUDA: device, managed or page-locked host memory the
   driver knows, on the thread's current context); else an error of kind
   GJ_ERR_INVALID (plain host memory, a wild pointer).  A range once
   checked is remembered per thread. */
GjExecStatus gj_exec_check_pointer(int device, uint64_t ptr, size_t bytes, GjExecError *err);

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
GjExecStatus gj_exec_host_alloc(int device, GjHostKind kind, size_t bytes, unsigned flags,
                                void **host, uint64_t *dptr, GjExecError *err);
void gj_exec_host_free(int device, GjHostKind kind, void *host);
/* Page-locks existing host memory for faster, asynchronous copies (nothing
   on the CPU target), and unlocks it. */
GjExecStatus gj_exec_host_register(int device, void *host, size_t bytes, GjExecError *err);
void gj_exec_host_unregister(int device, void *host);

#endif
