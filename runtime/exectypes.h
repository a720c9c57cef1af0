/*
 * exectypes.h - what every layer of the runtime returns, whichever target
 * it runs on: a status, an error with a target-neutral kind, and a
 * device's launch limits.  driver.c (CUDA) and the CPU target fill the same
 * structs, so the extension picks its exception from `kind` alone and
 * never asks which target failed.
 *
 * A CUDA error keeps its CUresult (`code`), its name and the driver call
 * for messages; the CPU target's errors have code 0 and no name.  No
 * Python and no CUDA types here.
 */
#ifndef GJ_EXECTYPES_H
#define GJ_EXECTYPES_H

#include <stddef.h>

typedef enum GjExecStatus {
    GJ_EXEC_OK = 0,
    GJ_EXEC_NO_DRIVER,      /* libcuda.so.1 could not be loaded or lacks an entry point */
    GJ_EXEC_NO_DEVICE,      /* driver present, no device */
    GJ_EXEC_FORKED,         /* used in a child after fork(): CUDA cannot be */
    GJ_EXEC_ERROR,       /* a call failed: see kind (and code/name for CUDA) */
} GjExecStatus;

/* What went wrong, for the caller to choose its exception by (never by the
   name of the call that failed). */
typedef enum GjErrKind {
    GJ_ERR_DRIVER = 0,     /* another driver error: see code and name */
    GJ_ERR_NO_DRIVER,      /* no usable driver, no device, or CUDA after fork() */
    GJ_ERR_OUT_OF_MEMORY,  /* GPU memory; host memory when `host` (the CPU target's) */
    GJ_ERR_KERNEL_FAULT,   /* a kernel faulted: the context is lost */
    GJ_ERR_LAUNCH_CONFIG,  /* the driver refused a launch configuration */
    GJ_ERR_COMPILE,        /* the driver's JIT refused the PTX (see log) */
    GJ_ERR_NOT_SUPPORTED,  /* the device or driver lacks what was asked */
    GJ_ERR_CPU_TARGET,     /* the CPU target could not run a grid (see message) */
    GJ_ERR_INVALID,        /* a request that makes no sense here (see message) */
} GjErrKind;

typedef struct GjExecError {
    GjExecStatus status;
    GjErrKind kind;
    int code;             /* CUresult (0 for the CPU target's errors) */
    char name[64];        /* "CUDA_ERROR_INVALID_VALUE" */
    char call[64];        /* "cuMemAlloc" */
    char message[256];    /* human text: cuGetErrorString or ours */
    char log[4096];       /* JIT error log of a failed module load */
    size_t requested;     /* OUT_OF_MEMORY: bytes asked for */
    size_t free_bytes;    /* OUT_OF_MEMORY: bytes free then */
    size_t total_bytes;   /* OUT_OF_MEMORY: the device's memory */
    int host;             /* OUT_OF_MEMORY: host memory of the CPU target, not the GPU's */
} GjExecError;

typedef struct GjDeviceInfo {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    int max_shared_per_block;     /* bytes a block gets without opting in (48 KiB) */
    int max_shared_per_block_optin;   /* bytes a kernel may opt in to (H200: 227 KiB) */
    int warp_size;
    int multiprocessors;
    size_t total_memory;          /* bytes */
    int pci_domain, pci_bus, pci_device;   /* where it sits on the PCI bus */
} GjDeviceInfo;

#endif
