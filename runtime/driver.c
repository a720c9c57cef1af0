/*
 * driver.c - the only file that calls the CUDA driver (driver.h).
 *
 * There is no cuda.h here: the build must not need a CUDA toolkit, so the
 * few driver types, enum values and prototypes gpujit uses are declared
 * below, from the driver API's documented ABI.  libcuda.so.1 is dlopen()ed
 * on first use; cuGetProcAddress_v2 is the only symbol taken with dlsym, and
 * every other entry point is resolved through it at API version 12000
 * (CUDA 12.0), so "cuMemAlloc" yields the current ABI (cuMemAlloc_v2), not
 * the legacy one the plain symbol names.
 *
 * State: one process-wide struct `D`, loaded once (pthread_once) by
 * load_driver(): the function table, the device count, and per device its
 * primary context (retained lazily, under D.lock) and cached limits.  Which
 * context is current is per OS thread in CUDA, so the thread's current
 * device and context are thread-local: gj_cu_ensure() costs a compare when
 * the device is already current on the calling thread.
 *
 * Every driver call goes through CU(), which records the CUresult, its name,
 * the call and the driver's message in the caller's GjExecError.  Nothing here
 * exits or aborts; a child process after fork() gets GJ_EXEC_FORKED.
 */
#include "driver.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the slice of the CUDA driver API gpujit uses ----------------------- */

typedef int CUresult;                       /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};

enum {                                      /* CUdevice_attribute */
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,      /* Y = 3, Z = 4 */
       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,       /* Y = 6, Z = 7 */
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
       CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
       CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
       CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
       CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum {                                      /* CUjit_option */
       CU_JIT_ERROR_LOG_BUFFER = 5,
       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
       CU_JIT_GENERATE_LINE_INFO = 13,
};

enum { CU_JIT_INPUT_PTX = 1 };             /* CUjitInputType */

enum {                                      /* CUfunction_attribute */
       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
       CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
       CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
       CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};
enum {                                      /* CUpointer_attribute */
       CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
       CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
};
enum { CU_GET_PROC_ADDRESS_DEFAULT = 0 };
enum { CU_GET_PROC_ADDRESS_SUCCESS = 0 };
enum {
    CU_MEMHOSTALLOC_PORTABLE = 1,
    CU_MEMHOSTALLOC_DEVICEMAP = 2,
    CU_MEMHOSTALLOC_WRITECOMBINED = 4
};
enum { CU_MEM_ATTACH_GLOBAL = 1, CU_MEM_ATTACH_HOST = 2 };
enum { CU_MEMHOSTREGISTER_PORTABLE = 1 };
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };
#define CU_STREAM_LEGACY ((CUstream)0x1)    /* the legacy default stream, by name */
enum { CU_STREAM_NON_BLOCKING = 1 };
enum { GJ_CUDA_API_VERSION = 12000 };       /* the ABI every entry point is taken at */

/* CUoccupancyB2DSize: dynamic shared memory as a function of the block size
   (gpujit passes none: its dynamic shared memory is the launch's, whatever
   the block). */
typedef size_t (*CUoccupancyB2DSize)(int block_size);

typedef CUresult (*GetProcAddressFn)(const char *symbol, void **pfn, int cuda_version,
                                     unsigned long long flags, int *symbol_status);

/* Every entry point gpujit calls: X(name, parameter list). */
/* clang-format off */
#define GJ_CU_FUNCS(X)                                                                 \
    X(cuGetErrorName, (CUresult, const char **))                                       \
    X(cuGetErrorString, (CUresult, const char **))                                     \
    X(cuInit, (unsigned))                                                              \
    X(cuDriverGetVersion, (int *))                                                     \
    X(cuDeviceGetCount, (int *))                                                       \
    X(cuDeviceGet, (CUdevice *, int))                                                  \
    X(cuDeviceGetName, (char *, int, CUdevice))                                        \
    X(cuDeviceGetAttribute, (int *, int, CUdevice))                                    \
    X(cuDeviceTotalMem, (size_t *, CUdevice))                                          \
    X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                               \
    X(cuCtxSetCurrent, (CUcontext))                                                    \
    X(cuCtxSynchronize, (void))                                                        \
    X(cuMemGetInfo, (size_t *, size_t *))                                              \
    X(cuPointerGetAttribute, (void *, int, CUdeviceptr))                               \
    X(cuMemAlloc, (CUdeviceptr *, size_t))                                             \
    X(cuMemFree, (CUdeviceptr))                                                        \
    X(cuMemHostAlloc, (void **, size_t, unsigned))                                     \
    X(cuMemFreeHost, (void *))                                                         \
    X(cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned))                            \
    X(cuMemHostRegister, (void *, size_t, unsigned))                                   \
    X(cuMemHostUnregister, (void *))                                                   \
    X(cuMemHostGetDevicePointer, (CUdeviceptr *, void *, unsigned))                    \
    X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t))                               \
    X(cuMemcpyDtoH, (void *, CUdeviceptr, size_t))                                     \
    X(cuMemcpyDtoD, (CUdeviceptr, CUdeviceptr, size_t))                                \
    X(cuMemcpyHtoDAsync, (CUdeviceptr, const void *, size_t, CUstream))                \
    X(cuMemcpyDtoHAsync, (void *, CUdeviceptr, size_t, CUstream))                      \
    X(cuMemcpyDtoDAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                 \
    X(cuMemcpyPeer, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t))          \
    X(cuMemcpyPeerAsync, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,      \
                          CUstream))                                                   \
    X(cuMemsetD8, (CUdeviceptr, unsigned char, size_t))                                \
    X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))                 \
    X(cuModuleLoadDataEx, (CUmodule *, const void *, unsigned, int *, void **))        \
    X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                     \
    X(cuModuleGetGlobal, (CUdeviceptr *, size_t *, CUmodule, const char *))            \
    X(cuModuleUnload, (CUmodule))                                                      \
    X(cuLinkCreate, (unsigned, int *, void **, CUlinkState *))                         \
    X(cuLinkAddData, (CUlinkState, int, void *, size_t, const char *, unsigned, int *,  \
                      void **))                                                        \
    X(cuLinkComplete, (CUlinkState, void **, size_t *))                                \
    X(cuLinkDestroy, (CUlinkState))                                                    \
    X(cuFuncGetAttribute, (int *, int, CUfunction))                                    \
    X(cuFuncSetAttribute, (CUfunction, int, int))                                      \
    X(cuOccupancyMaxPotentialBlockSize, (int *, int *, CUfunction, CUoccupancyB2DSize,  \
                                         size_t, int))                                 \
    X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,   \
                       unsigned, unsigned, CUstream, void **, void **))                \
    X(cuStreamCreate, (CUstream *, unsigned))                                          \
    X(cuStreamDestroy, (CUstream))                                                     \
    X(cuStreamSynchronize, (CUstream))                                                 \
    X(cuStreamWaitEvent, (CUstream, CUevent, unsigned))                                \
    X(cuEventCreate, (CUevent *, unsigned))                                            \
    X(cuEventDestroy, (CUevent))                                                       \
    X(cuEventRecord, (CUevent, CUstream))                                              \
    X(cuEventSynchronize, (CUevent))                                                   \
    X(cuEventQuery, (CUevent))                                                         \
    X(cuEventElapsedTime, (float *, CUevent, CUevent))
/* clang-format on */

/* ---- process-wide state -------------------------------------------------- */

typedef struct Device {
    CUcontext ctx;           /* primary context, retained once, never released */
    GjDeviceInfo info;     /* limits, read when the context is retained */
} Device;

typedef struct Driver {
    pthread_once_t once;
    pthread_mutex_t lock;    /* guards devs[*].ctx retains */
    GjExecStatus status;       /* of loading: GJ_EXEC_OK once usable */
    GjExecError load_err;      /* why loading failed */
    void *lib;               /* dlopen handle, kept for the process's life */
    int version;             /* cuDriverGetVersion, e.g. 13000 */
    int ndevices;
    Device *devs;            /* [ndevices] */
    pid_t pid;               /* process that loaded the driver */
    volatile int forked;     /* set in a fork() child: CUDA is unusable there */
#define X(name, params) CUresult(*name) params;
    GJ_CU_FUNCS(X)
#undef X
} Driver;

static Driver D = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

/* The calling thread's current device and the context made current for it. */
static _Thread_local int tl_device = -1;
static _Thread_local CUcontext tl_ctx;

/* ---- errors ------------------------------------------------------------- */

static void set_error(GjExecError *err, GjExecStatus st, int code, const char *call,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void set_error(GjExecError *err, GjExecStatus st, int code, const char *call,
                      const char *fmt, ...) {
    err->status = st;
    err->kind = st == GJ_EXEC_ERROR ? GJ_ERR_DRIVER : GJ_ERR_NO_DRIVER;
    if (code == CUDA_ERROR_OUT_OF_MEMORY)
        err->kind = GJ_ERR_OUT_OF_MEMORY;
    else if (gj_cu_is_fault(code))
        err->kind = GJ_ERR_KERNEL_FAULT;
    else if (code == CUDA_ERROR_NOT_SUPPORTED)
        err->kind = GJ_ERR_NOT_SUPPORTED;
    err->code = code;
    err->name[0] = '\0';
    err->log[0] = '\0';
    err->requested = err->free_bytes = err->total_bytes = 0;
    err->host = 0;
    snprintf(err->call, sizeof err->call, "%s", call);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* Records a failed driver call (res != CUDA_SUCCESS) in err. */
static GjExecStatus check(GjExecError *err, const char *call, CUresult res) {
    if (res == CUDA_SUCCESS)
        return GJ_EXEC_OK;
    const char *name = NULL, *text = NULL;
    if (!D.cuGetErrorName || D.cuGetErrorName(res, &name) != CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_UNKNOWN";
    if (!D.cuGetErrorString || D.cuGetErrorString(res, &text) != CUDA_SUCCESS || !text)
        text = "unknown error";
    set_error(err, GJ_EXEC_ERROR, res, call, "%s", text);
    snprintf(err->name, sizeof err->name, "%s", name);
    if (res == CUDA_ERROR_OUT_OF_MEMORY) {
        size_t free_b = 0, total = 0;
        if (D.cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS) {
            err->free_bytes = free_b;
            err->total_bytes = total;
        }
    }
    return GJ_EXEC_ERROR;
}

/* Test-only fault injection (gj_cu_inject_fault): the driver call that
   brings the countdown to 0 is not made, and fails with inject_code. */
static long inject_countdown;
static CUresult inject_code;

static int injected(void) {
    return __atomic_load_n(&inject_countdown, __ATOMIC_RELAXED) > 0 &&
           __atomic_sub_fetch(&inject_countdown, 1, __ATOMIC_RELAXED) == 0;
}

void gj_cu_inject_fault(long n, int code) {
    inject_code = code;
    __atomic_store_n(&inject_countdown, n, __ATOMIC_RELAXED);
}

/* The one way gpujit calls the driver: CU(err, cuMemAlloc, (&p, n)). */
#define CU(err, fn, args) check((err), #fn, injected() ? inject_code : D.fn args)

/* Returns from the calling function unless the driver call succeeded. */
#define CU_TRY(err, fn, args)                 \
    do {                                      \
        GjExecStatus st_ = CU(err, fn, args); \
        if (st_ != GJ_EXEC_OK)                \
            return st_;                       \
    } while (0)

int gj_cu_is_fault(int code) {
    switch (code) {
    case 700:   /* ILLEGAL_ADDRESS */
    case 702:   /* LAUNCH_TIMEOUT */
    case 710:   /* ASSERT */
    case 714:   /* HARDWARE_STACK_ERROR */
    case 715:   /* ILLEGAL_INSTRUCTION */
    case 716:   /* MISALIGNED_ADDRESS */
    case 717:   /* INVALID_ADDRESS_SPACE */
    case 718:   /* INVALID_PC */
    case 719: /* LAUNCH_FAILED */ return 1;
    default: return 0;
    }
}

/* ---- loading ------------------------------------------------------------ */

static void on_fork_child(void) {
    D.forked = 1;
    tl_device = -1;
    tl_ctx = NULL;
}

static int resolve_all(GetProcAddressFn get_proc) {
    void *p;
    int sym_status;
#define X(name, params)                                                                       \
    p = NULL;                                                                                 \
    sym_status = -1;                                                                          \
    if (get_proc(#name, &p, GJ_CUDA_API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &sym_status) != \
            CUDA_SUCCESS ||                                                                   \
        sym_status != CU_GET_PROC_ADDRESS_SUCCESS || !p) {                                    \
        set_error(&D.load_err, GJ_EXEC_NO_DRIVER, 0, "cuGetProcAddress_v2",                   \
                  "the CUDA driver (libcuda.so.1) lacks %s at API version %d; "               \
                  "a driver for CUDA 12.0 or newer is needed",                                \
                  #name, GJ_CUDA_API_VERSION);                                                \
        return -1;                                                                            \
    }                                                                                         \
    memcpy(&D.name, &p, sizeof p);
    GJ_CU_FUNCS(X)
#undef X
    return 0;
}

/* Runs once per process: dlopen, resolve, cuInit, count devices. */
static void load_driver(void) {
    D.pid = getpid();
    D.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!D.lib) {
        const char *why = dlerror();
        set_error(&D.load_err, GJ_EXEC_NO_DRIVER, 0, "dlopen",
                  "no NVIDIA driver was found (libcuda.so.1 could not be loaded: %s)",
                  why ? why : "unknown reason");
        D.status = GJ_EXEC_NO_DRIVER;
        return;
    }
    void *sym = dlsym(D.lib, "cuGetProcAddress_v2");
    if (!sym) {
        set_error(&D.load_err, GJ_EXEC_NO_DRIVER, 0, "dlsym",
                  "the NVIDIA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2 "
                  "(a driver for CUDA 12.0 or newer is needed)");
        D.status = GJ_EXEC_NO_DRIVER;
        return;
    }
    GetProcAddressFn get_proc;
    memcpy(&get_proc, &sym, sizeof sym);
    if (resolve_all(get_proc) != 0) {
        D.status = GJ_EXEC_NO_DRIVER;
        return;
    }
    CUresult res = D.cuInit(0);
    if (res != CUDA_SUCCESS) {
        check(&D.load_err, "cuInit", res);
        if (res == CUDA_ERROR_NO_DEVICE)
            D.load_err.status = GJ_EXEC_NO_DEVICE;
        else if (res == CUDA_ERROR_STUB_LIBRARY || res == CUDA_ERROR_INSUFFICIENT_DRIVER)
            D.load_err.status = GJ_EXEC_NO_DRIVER;
        D.status = D.load_err.status;
        return;
    }
    if (check(&D.load_err, "cuDriverGetVersion", D.cuDriverGetVersion(&D.version)) != GJ_EXEC_OK ||
        check(&D.load_err, "cuDeviceGetCount", D.cuDeviceGetCount(&D.ndevices)) != GJ_EXEC_OK) {
        D.status = D.load_err.status;
        return;
    }
    if (D.ndevices <= 0) {
        set_error(&D.load_err, GJ_EXEC_NO_DEVICE, CUDA_ERROR_NO_DEVICE, "cuDeviceGetCount",
                  "the NVIDIA driver found no CUDA device");
        D.status = GJ_EXEC_NO_DEVICE;
        return;
    }
    D.devs = calloc((size_t)D.ndevices, sizeof *D.devs);
    if (!D.devs) {
        set_error(&D.load_err, GJ_EXEC_ERROR, CUDA_ERROR_OUT_OF_MEMORY, "calloc",
                  "out of host memory");
        D.status = GJ_EXEC_ERROR;
        return;
    }
    pthread_atfork(NULL, NULL, on_fork_child);
    D.status = GJ_EXEC_OK;
}

/* Loads the driver once; GJ_EXEC_OK when it and a device can be used. */
static GjExecStatus loaded(GjExecError *err) {
    pthread_once(&D.once, load_driver);
    if (D.forked) {
        set_error(err, GJ_EXEC_FORKED, 0, "fork",
                  "CUDA was initialised in process %d and cannot be used in a child created "
                  "by fork()",
                  (int)D.pid);
        return GJ_EXEC_FORKED;
    }
    if (D.status != GJ_EXEC_OK) {
        *err = D.load_err;
        return D.status;
    }
    return GJ_EXEC_OK;
}

/* ---- devices and contexts ----------------------------------------------- */

static GjExecStatus read_info(CUdevice dev, int ordinal, GjDeviceInfo *info, GjExecError *err) {
    static const int attrs[] = {
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 1,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + 2,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 1,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 2,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        CU_DEVICE_ATTRIBUTE_WARP_SIZE,
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
        CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
    };
    int *dst[] = {
        &info->cc_major,
        &info->cc_minor,
        &info->max_threads_per_block,
        &info->max_block_dim[0],
        &info->max_block_dim[1],
        &info->max_block_dim[2],
        &info->max_grid_dim[0],
        &info->max_grid_dim[1],
        &info->max_grid_dim[2],
        &info->max_shared_per_block,
        &info->warp_size,
        &info->multiprocessors,
        &info->max_shared_per_block_optin,
        &info->pci_domain,
        &info->pci_bus,
        &info->pci_device,
    };
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    CU_TRY(err, cuDeviceGetName, (info->name, (int)sizeof info->name, dev));
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        CU_TRY(err, cuDeviceGetAttribute, (dst[i], attrs[i], dev));
    CU_TRY(err, cuDeviceTotalMem, (&info->total_memory, dev));
    return GJ_EXEC_OK;
}

static GjExecStatus check_ordinal(int ordinal, GjExecError *err) {
    if (ordinal < 0 || ordinal >= D.ndevices) {
        set_error(err, GJ_EXEC_ERROR, 101, "select_device",
                  "device %d does not exist (%d device%s)", ordinal, D.ndevices,
                  D.ndevices == 1 ? "" : "s");
        snprintf(err->name, sizeof err->name, "CUDA_ERROR_INVALID_DEVICE");
        return GJ_EXEC_ERROR;
    }
    return GJ_EXEC_OK;
}

/* The primary context of device `ordinal`, retained on first use. */
static GjExecStatus primary_ctx(int ordinal, CUcontext *ctx, GjExecError *err) {
    GjExecStatus st = GJ_EXEC_OK;
    pthread_mutex_lock(&D.lock);
    Device *d = &D.devs[ordinal];
    if (!d->ctx) {
        CUdevice dev;
        CUcontext c = NULL;
        st = CU(err, cuDeviceGet, (&dev, ordinal));
        if (st == GJ_EXEC_OK)
            st = read_info(dev, ordinal, &d->info, err);
        if (st == GJ_EXEC_OK)
            st = CU(err, cuDevicePrimaryCtxRetain, (&c, dev));
        if (st == GJ_EXEC_OK)
            d->ctx = c;
    }
    *ctx = d->ctx;
    pthread_mutex_unlock(&D.lock);
    return st;
}

GjExecStatus gj_cu_ensure(int ordinal, GjExecError *err) {
    if (ordinal == tl_device && tl_ctx && !D.forked)
        return GJ_EXEC_OK;
    GjExecStatus st = loaded(err);
    if (st != GJ_EXEC_OK)
        return st;
    if ((st = check_ordinal(ordinal, err)) != GJ_EXEC_OK)
        return st;
    CUcontext ctx;
    if ((st = primary_ctx(ordinal, &ctx, err)) != GJ_EXEC_OK)
        return st;
    if ((st = CU(err, cuCtxSetCurrent, (ctx))) != GJ_EXEC_OK)
        return st;
    tl_device = ordinal;
    tl_ctx = ctx;
    return GJ_EXEC_OK;
}

/* Makes sure a context is current on this thread before a driver call:
   device 0's when the thread has not chosen one yet. */
static GjExecStatus ready(GjExecError *err) {
    if (tl_ctx && !D.forked)
        return GJ_EXEC_OK;
    return gj_cu_ensure(tl_device >= 0 ? tl_device : 0, err);
}

int gj_cu_available(void) {
    GjExecError err;
    return loaded(&err) == GJ_EXEC_OK;
}

GjExecStatus gj_cu_device_count(int *n, GjExecError *err) {
    *n = 0;
    GjExecStatus st = loaded(err);
    if (st == GJ_EXEC_OK)
        *n = D.ndevices;
    return st;
}

GjExecStatus gj_cu_device_info(int ordinal, GjDeviceInfo *info, GjExecError *err) {
    GjExecStatus st = loaded(err);
    if (st == GJ_EXEC_OK)
        st = check_ordinal(ordinal, err);
    CUcontext ctx;
    if (st == GJ_EXEC_OK)
        st = primary_ctx(ordinal, &ctx, err);
    if (st == GJ_EXEC_OK)
        *info = D.devs[ordinal].info;   /* written once, before ctx was published */
    return st;
}

GjExecStatus gj_cu_driver_version(int *version, GjExecError *err) {
    *version = 0;
    GjExecStatus st = loaded(err);
    if (st == GJ_EXEC_OK)
        *version = D.version;
    return st;
}

int gj_cu_current_device(void) { return tl_device >= 0 ? tl_device : 0; }

int gj_cu_thread_device(void) { return tl_device; }

/* ---- memory ------------------------------------------------------------- */

GjExecStatus gj_cu_alloc(size_t bytes, uint64_t *dptr, GjExecError *err) {
    *dptr = 0;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    CUdeviceptr p = 0;
    /* cuMemAlloc rejects 0 bytes; a zero-size array owns no memory. */
    if (bytes == 0)
        return GJ_EXEC_OK;
    st = CU(err, cuMemAlloc, (&p, bytes));
    if (st != GJ_EXEC_OK) {
        err->requested = bytes;
        return st;
    }
    *dptr = p;
    return GJ_EXEC_OK;
}

GjExecStatus gj_cu_free(uint64_t dptr, GjExecError *err) {
    if (dptr == 0)
        return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuMemFree, (dptr));
}

GjExecStatus gj_cu_htod(uint64_t dst, const void *src, size_t bytes, void *stream,
                        GjExecError *err) {
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK || bytes == 0)
        return st;
    if (stream)
        return CU(err, cuMemcpyHtoDAsync, (dst, src, bytes, (CUstream)stream));
    return CU(err, cuMemcpyHtoD, (dst, src, bytes));
}

GjExecStatus gj_cu_dtoh(void *dst, uint64_t src, size_t bytes, void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK || bytes == 0)
        return st;
    if (stream)
        return CU(err, cuMemcpyDtoHAsync, (dst, src, bytes, (CUstream)stream));
    return CU(err, cuMemcpyDtoH, (dst, src, bytes));
}

GjExecStatus gj_cu_dtod(uint64_t dst, uint64_t src, size_t bytes, void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK || bytes == 0)
        return st;
    if (stream)
        return CU(err, cuMemcpyDtoDAsync, (dst, src, bytes, (CUstream)stream));
    return CU(err, cuMemcpyDtoD, (dst, src, bytes));
}

GjExecStatus gj_cu_peer_copy(int dst_device, uint64_t dst, int src_device, uint64_t src,
                             size_t bytes, void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    CUcontext dst_ctx, src_ctx;
    if (st != GJ_EXEC_OK || (st = check_ordinal(dst_device, err)) != GJ_EXEC_OK ||
        (st = check_ordinal(src_device, err)) != GJ_EXEC_OK ||
        (st = primary_ctx(dst_device, &dst_ctx, err)) != GJ_EXEC_OK ||
        (st = primary_ctx(src_device, &src_ctx, err)) != GJ_EXEC_OK || bytes == 0)
        return st;
    if (stream)
        return CU(err, cuMemcpyPeerAsync, (dst, dst_ctx, src, src_ctx, bytes, (CUstream)stream));
    return CU(err, cuMemcpyPeer, (dst, dst_ctx, src, src_ctx, bytes));
}

/* Allocation ranges the calling thread has seen the driver know: a launch
   with the same arrays again costs a lookup, not a driver call. */
enum { KNOWN_RANGES = 8 };
static _Thread_local struct {
    uint64_t lo, hi;
} tl_known[KNOWN_RANGES];
static _Thread_local unsigned tl_known_next;

GjExecStatus gj_cu_check_pointer(uint64_t ptr, size_t bytes, GjExecError *err) {
    uint64_t end = ptr + (bytes ? bytes : 1);
    for (unsigned i = 0; i < KNOWN_RANGES; i++)
        if (ptr >= tl_known[i].lo && end <= tl_known[i].hi && end > ptr)
            return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    CUdeviceptr lo = 0;
    size_t size = 0;
    if ((st = CU(err, cuPointerGetAttribute, (&lo, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr))) !=
            GJ_EXEC_OK ||
        (st = CU(err, cuPointerGetAttribute, (&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr))) !=
            GJ_EXEC_OK) {
        err->kind = GJ_ERR_INVALID;
        return st;
    }
    if (end < ptr || end > lo + size) {
        set_error(err, GJ_EXEC_ERROR, CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute",
                  "%zu bytes from 0x%llx pass the end of its allocation (%zu bytes from 0x%llx)",
                  bytes, (unsigned long long)ptr, size, (unsigned long long)lo);
        err->kind = GJ_ERR_INVALID;
        return GJ_EXEC_ERROR;
    }
    tl_known[tl_known_next].lo = lo;
    tl_known[tl_known_next].hi = lo + size;
    tl_known_next = (tl_known_next + 1) % KNOWN_RANGES;
    return GJ_EXEC_OK;
}

GjExecStatus gj_cu_memset8(uint64_t dst, uint8_t value, size_t bytes, void *stream,
                           GjExecError *err) {
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK || bytes == 0)
        return st;
    if (stream)
        return CU(err, cuMemsetD8Async, (dst, value, bytes, (CUstream)stream));
    return CU(err, cuMemsetD8, (dst, value, bytes));
}

GjExecStatus gj_cu_host_alloc_flags(size_t bytes, unsigned flags, void **ptr, GjExecError *err) {
    *ptr = NULL;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    unsigned f = CU_MEMHOSTALLOC_PORTABLE;
    if (flags & GJ_HOST_MAPPED_FLAG)
        f |= CU_MEMHOSTALLOC_DEVICEMAP;
    if (flags & GJ_HOST_WRITE_COMBINED)
        f |= CU_MEMHOSTALLOC_WRITECOMBINED;
    st = CU(err, cuMemHostAlloc, (ptr, bytes ? bytes : 1, f));
    if (st != GJ_EXEC_OK)
        err->requested = bytes;
    return st;
}

GjExecStatus gj_cu_host_device_ptr(void *ptr, uint64_t *dptr, GjExecError *err) {
    *dptr = 0;
    GjExecStatus st = ready(err);
    CUdeviceptr p = 0;
    if (st == GJ_EXEC_OK)
        st = CU(err, cuMemHostGetDevicePointer, (&p, ptr, 0));
    *dptr = (uint64_t)p;
    return st;
}

GjExecStatus gj_cu_managed_alloc(size_t bytes, int attach_global, uint64_t *dptr,
                                 GjExecError *err) {
    *dptr = 0;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    CUdeviceptr p = 0;
    st = CU(err, cuMemAllocManaged,
            (&p, bytes ? bytes : 1, attach_global ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST));
    if (st != GJ_EXEC_OK)
        err->requested = bytes;
    *dptr = (uint64_t)p;
    return st;
}

GjExecStatus gj_cu_host_register(void *ptr, size_t bytes, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK || bytes == 0
               ? st
               : CU(err, cuMemHostRegister, (ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE));
}

GjExecStatus gj_cu_host_unregister(void *ptr, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuMemHostUnregister, (ptr));
}

GjExecStatus gj_cu_host_free(void *ptr, GjExecError *err) {
    if (!ptr)
        return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuMemFreeHost, (ptr));
}

/* ---- modules and launches ----------------------------------------------- */

/* The JIT options of a module load or a link: the error log into log (of
   GjExecError.log's size), line info when asked.  Returns their number. */
static unsigned jit_options(int opts[3], void *vals[3], char *log, size_t logsize, int lineinfo) {
    log[0] = '\0';
    opts[0] = CU_JIT_ERROR_LOG_BUFFER;
    vals[0] = log;
    opts[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    vals[1] = (void *)(uintptr_t)logsize;
    opts[2] = CU_JIT_GENERATE_LINE_INFO;
    vals[2] = (void *)(uintptr_t)1;
    return lineinfo ? 3u : 2u;
}

static void keep_log(GjExecError *err, char *log) {
    log[sizeof err->log - 1] = '\0';
    memcpy(err->log, log, sizeof err->log);
}

GjExecStatus gj_cu_module_load(const void *image, int lineinfo, void **module, GjExecError *err) {
    *module = NULL;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    char log[sizeof err->log];
    int opts[3];
    void *vals[3];
    unsigned nopts = jit_options(opts, vals, log, sizeof log, lineinfo);
    CUmodule m = NULL;
    st = CU(err, cuModuleLoadDataEx, (&m, image, nopts, opts, vals));
    if (st != GJ_EXEC_OK) {
        keep_log(err, log);
        if (err->kind == GJ_ERR_DRIVER)   /* not a fault reported late: the PTX */
            err->kind = GJ_ERR_COMPILE;
        return st;
    }
    *module = m;
    return GJ_EXEC_OK;
}

GjExecStatus gj_cu_link_ptx(const char *ptx, int lineinfo, void **cubin, size_t *size,
                            GjExecError *err) {
    *cubin = NULL;
    *size = 0;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    char log[sizeof err->log];   /* the linker writes it until cuLinkDestroy */
    int opts[3];
    void *vals[3];
    unsigned nopts = jit_options(opts, vals, log, sizeof log, lineinfo);
    CUlinkState link = NULL;
    void *out = NULL;
    size_t n = 0;
    st = CU(err, cuLinkCreate, (nopts, opts, vals, &link));
    if (st == GJ_EXEC_OK)
        st = CU(err, cuLinkAddData,
                (link, CU_JIT_INPUT_PTX, (void *)(uintptr_t)ptx, strlen(ptx) + 1, "gpujit.ptx", 0,
                 NULL, NULL));
    if (st == GJ_EXEC_OK)
        st = CU(err, cuLinkComplete, (link, &out, &n));
    if (st == GJ_EXEC_OK && !(*cubin = malloc(n ? n : 1))) {
        set_error(err, GJ_EXEC_ERROR, CUDA_ERROR_OUT_OF_MEMORY, "malloc", "out of host memory");
        err->host = 1;
        st = GJ_EXEC_ERROR;
    }
    if (st == GJ_EXEC_OK) {   /* the linker owns out until cuLinkDestroy */
        memcpy(*cubin, out, n);
        *size = n;
    } else {
        keep_log(err, log);
    }
    GjExecError ignored;   /* a failed clean-up leaves st as it is */
    if (link)
        (void)CU(&ignored, cuLinkDestroy, (link));
    return st;
}

GjExecStatus gj_cu_module_function(void *module, const char *kernel, void **func,
                                   GjExecError *err) {
    CUfunction f = NULL;
    GjExecStatus st = CU(err, cuModuleGetFunction, (&f, (CUmodule)module, kernel));
    *func = f;
    return st;
}

GjExecStatus gj_cu_module_global(void *module, const char *name, uint64_t *dptr, size_t *bytes,
                                 GjExecError *err) {
    CUdeviceptr p = 0;
    GjExecStatus st = CU(err, cuModuleGetGlobal, (&p, bytes, (CUmodule)module, name));
    *dptr = (uint64_t)p;
    return st;
}

GjExecStatus gj_cu_module_unload(void *module, GjExecError *err) {
    if (!module)
        return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuModuleUnload, ((CUmodule)module));
}

GjExecStatus gj_cu_func_attrs(void *func, GjCuFuncAttrs *a, GjExecError *err) {
    static const int attrs[] = {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,     CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
    };
    int *dst[] = {&a->max_threads, &a->regs, &a->shared_bytes, &a->local_bytes, &a->const_bytes};
    memset(a, 0, sizeof *a);
    GjExecStatus st = ready(err);
    for (size_t i = 0; st == GJ_EXEC_OK && i < sizeof attrs / sizeof attrs[0]; i++)
        st = CU(err, cuFuncGetAttribute, (dst[i], attrs[i], (CUfunction)func));
    return st;
}

GjExecStatus gj_cu_occupancy_block(void *func, size_t dynamic_shared, int block_limit, int *block,
                                   GjExecError *err) {
    int min_grid = 0;
    *block = 0;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK
               ? st
               : CU(err, cuOccupancyMaxPotentialBlockSize,
                    (&min_grid, block, (CUfunction)func, NULL, dynamic_shared, block_limit));
}

GjExecStatus gj_cu_func_set_max_dynamic_shared(void *func, int bytes, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK
               ? st
               : CU(err, cuFuncSetAttribute,
                    ((CUfunction)func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

GjExecStatus gj_cu_launch(void *func, const unsigned grid[3], const unsigned block[3],
                          unsigned shared_bytes, void *stream, void **params, GjExecError *err) {
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    st = CU(err, cuLaunchKernel,
            ((CUfunction)func, grid[0], grid[1], grid[2], block[0], block[1], block[2],
             shared_bytes, (CUstream)stream, params, NULL));
    if (st != GJ_EXEC_OK &&
        (err->code == CUDA_ERROR_INVALID_VALUE || err->code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES))
        err->kind = GJ_ERR_LAUNCH_CONFIG;
    return st;
}

/* ---- synchronisation, streams, events ----------------------------------- */

GjExecStatus gj_cu_synchronize(GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuCtxSynchronize, ());
}

GjExecStatus gj_cu_stream_create(void **stream, GjExecError *err) {
    *stream = NULL;
    GjExecStatus st = ready(err);
    CUstream s = NULL;
    if (st == GJ_EXEC_OK)
        st = CU(err, cuStreamCreate, (&s, 0));
    *stream = s;
    return st;
}

GjExecStatus gj_cu_stream_destroy(void *stream, GjExecError *err) {
    if (!stream)
        return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuStreamDestroy, ((CUstream)stream));
}

GjExecStatus gj_cu_stream_synchronize(void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuStreamSynchronize, ((CUstream)stream));
}

GjExecStatus gj_cu_stream_wait_default(void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    CUevent e = NULL;
    if (st == GJ_EXEC_OK)
        st = CU(err, cuEventCreate, (&e, CU_EVENT_DISABLE_TIMING));
    if (st == GJ_EXEC_OK)
        st = CU(err, cuEventRecord, (e, CU_STREAM_LEGACY));
    if (st == GJ_EXEC_OK)
        st = CU(err, cuStreamWaitEvent, ((CUstream)stream, e, 0));
    if (e) {
        /* The wait, once queued, outlives the event: destroying it now is
           allowed and frees it when it completes. */
        GjExecError ignored;
        CU(&ignored, cuEventDestroy, (e));
    }
    return st;
}

GjExecStatus gj_cu_event_create(void **event, int timing, GjExecError *err) {
    *event = NULL;
    GjExecStatus st = ready(err);
    CUevent e = NULL;
    if (st == GJ_EXEC_OK)
        st = CU(err, cuEventCreate, (&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    *event = e;
    return st;
}

GjExecStatus gj_cu_event_query(void *event, int *done, GjExecError *err) {
    *done = 0;
    GjExecStatus st = ready(err);
    if (st != GJ_EXEC_OK)
        return st;
    CUresult r = D.cuEventQuery((CUevent)event);
    if (r == CUDA_ERROR_NOT_READY)
        return GJ_EXEC_OK;
    *done = r == CUDA_SUCCESS;
    return check(err, "cuEventQuery", r);
}

GjExecStatus gj_cu_stream_wait_event(void *stream, void *event, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st
                            : CU(err, cuStreamWaitEvent, ((CUstream)stream, (CUevent)event, 0));
}

GjExecStatus gj_cu_memory_info(size_t *free_bytes, size_t *total_bytes, GjExecError *err) {
    *free_bytes = *total_bytes = 0;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuMemGetInfo, (free_bytes, total_bytes));
}

GjExecStatus gj_cu_event_destroy(void *event, GjExecError *err) {
    if (!event)
        return GJ_EXEC_OK;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuEventDestroy, ((CUevent)event));
}

GjExecStatus gj_cu_event_record(void *event, void *stream, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuEventRecord, ((CUevent)event, (CUstream)stream));
}

GjExecStatus gj_cu_event_synchronize(void *event, GjExecError *err) {
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuEventSynchronize, ((CUevent)event));
}

GjExecStatus gj_cu_event_elapsed(float *ms, void *start, void *end, GjExecError *err) {
    *ms = 0.0f;
    GjExecStatus st = ready(err);
    return st != GJ_EXEC_OK ? st : CU(err, cuEventElapsedTime, (ms, (CUevent)start, (CUevent)end));
}
