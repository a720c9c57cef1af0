/*
 * gjpy.h - what every file of the _gpujit extension shares, and only that:
 * Python.h under the limited API, the module state (exception classes,
 * heap types, cached NumPy callables; no C globals hold Python objects),
 * and the table of element types (dtypes) gpujit knows.  What each file
 * offers is in its own header (module.h: the state's accessors and the
 * raising functions; devicearray.h, dispatcher.h, launcher.h, ...), which
 * that file includes first.
 *
 * Built against the limited API (abi3, 3.11): no macros or struct fields
 * outside it.  module.c owns the state; devicearray.c, dispatcher.c,
 * stream.c and hostmem.c register their types into it.
 */
#ifndef GJ_PY_H
#define GJ_PY_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdint.h>

#include "codeview.h"
#include "compile.h"
#include "exec.h"
#include "gj.h"
#include "types.h"

enum { GJ_PY_MAX_NDIM = GJ_TY_MAX_NDIM };   /* dimensions of a DeviceArray / kernel argument */
enum { GJ_PY_MAX_KERNEL_SYMBOLS = 32 };      /* GjPyState.kernel_symbols */

/* cai.c: the kinds of __cuda_array_interface__ exporters, and how many
   dtype objects of CuPy and PyTorch it remembers. */
enum { GJ_CAI_CUPY, GJ_CAI_TORCH, GJ_CAI_OTHER, GJ_CAI_NTYPES };
enum { GJ_CAI_DTYPES = 16 };
/* The attribute names cai.c reads, interned (GjPyState.cai_names). */
enum {
    GJ_CAI_DTYPE,
    GJ_CAI_DATA,
    GJ_CAI_PTR,
    GJ_CAI_SHAPE,
    GJ_CAI_STRIDES,
    GJ_CAI_DATA_PTR,
    GJ_CAI_STRIDE,
    GJ_CAI_IS_CUDA,
    GJ_CAI_REQUIRES_GRAD,
    GJ_CAI_TYPESTR,
    GJ_CAI_MASK,
    GJ_CAI_STREAM,
    GJ_CAI_NNAMES
};

/* Scalar types an argument or array element may have; the index is the
   "dtype id" stored in DeviceArrays and type keys. */
typedef enum GjDtypeId {
    GJ_DT_BOOL,
    GJ_DT_INT8,
    GJ_DT_INT16,
    GJ_DT_INT32,
    GJ_DT_INT64,
    GJ_DT_UINT8,
    GJ_DT_UINT16,
    GJ_DT_UINT32,
    GJ_DT_UINT64,
    GJ_DT_FLOAT16,
    GJ_DT_FLOAT32,
    GJ_DT_FLOAT64,
    GJ_DT_COMPLEX64,
    GJ_DT_COMPLEX128,
    GJ_DT_COUNT
} GjDtypeId;

typedef struct GjPyState {
    /* exception classes, see module.c for the hierarchy */
    PyObject *GpujitError, *TypingError, *UnsupportedError, *LoweringError, *InternalError;
    PyObject *KernelReturnError;   /* UnsupportedError and TypeError */
    PyObject *GpujitWarning;       /* a UserWarning: the compiler's WARNING diagnostics */
    PyObject *GpujitPerformanceWarning;   /* a GpujitWarning: implicit copies */
    PyObject *CudaError, *CudaOutOfMemoryError, *CudaCompileError, *CudaKernelFault,
        *CudaSupportError;
    /* heap types */
    PyTypeObject *DeviceArrayType, *DispatcherType, *LauncherType, *StreamType, *EventType;
    PyTypeObject *HostAllocType, *HostRegType;
    /* hostmem.c: the live mapped and managed allocations (borrowed: each
       unlinks itself when freed), which kernels take in place */
    struct GjHostAlloc *zero_copy;
    /* daview.c: held across a write into device memory from the host, so
       that one thread's read-merge-write of a strided view's extent cannot
       undo another thread's write (taken without the GIL) */
    pthread_mutex_t write_lock;
    /* numpy, imported on first need (import gpujit must not import it eagerly
       in C; the Python layer may) */
    PyObject *np, *np_dtype, *np_empty, *np_ascontiguousarray, *np_copyto, *np_ndarray;
    /* NumPy's scalar type of each dtype id (np.float32), whose value the
       launcher reads in place: NULL where the value was not found right
       after the object header, where NumPy's arrayscalars.h puts it */
    PyObject *np_scalar_types[GJ_DT_COUNT];
    PyObject *str_cai;   /* interned "__cuda_array_interface__" */
    /* cai.c: the type of each GJ_CAI_* kind last seen (CuPy's ndarray,
       torch.Tensor, the last other exporter), and the CuPy/PyTorch dtype
       objects seen, with their dtype ids */
    PyTypeObject *cai_types[GJ_CAI_NTYPES];
    PyObject *cai_dtypes[GJ_CAI_DTYPES];
    int cai_dtype_ids[GJ_CAI_DTYPES];
    int ncai_dtypes;
    PyObject *cai_names[GJ_CAI_NNAMES];
    /* libdevice.10.bc's path (bytes, file-system encoding) or None when
       gpujit/_libdevice.py found none; NULL until a GPU compile first needs it */
    PyObject *libdevice;
    /* the persistent cache (cachefile.c): this build's identity, which
       every key hashes (bytes; NULL until the first lookup), and this
       process's lookups that loaded an entry and that compiled */
    PyObject *cache_identity;
    Py_ssize_t cache_hits, cache_misses;
    /* execution target: GJ_TARGET_NVPTX ("cuda") or GJ_TARGET_CPU ("cpu");
       -1 until first needed (GPUJIT_TARGET, else a GPU if usable) */
    int target;
    /* the runtime functions CPU-target kernel code calls (gj_exec_kernel_symbols),
       in the compiler's form, for every CPU compile */
    GjRuntimeSymbol kernel_symbols[GJ_PY_MAX_KERNEL_SYMBOLS];
    int nkernel_symbols;
} GjPyState;

/* ---- element types (GjDtypeId above, for the state's table) --------------- */

typedef struct GjDtype {
    const char *name;     /* NumPy name, "float32" */
    char kind;            /* NumPy dtype.kind: b i u f c */
    int itemsize;         /* bytes */
    const GjType *type;   /* compiler's singleton */
} GjDtype;

extern const GjDtype gj_py_dtypes[GJ_DT_COUNT];   /* devicearray.c */

/* What follows "has no type for" the dtype in those messages. */
#define GJ_PY_DTYPES \
    "(supported: bool, int8-64, uint8-64, float16-64, complex64/128, in native byte order)"

#endif
