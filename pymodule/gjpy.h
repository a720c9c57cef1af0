/*
 * gjpy.h - what the files of the _gpujit extension share: the module state
 * (exception classes, heap types, cached NumPy callables; no C globals hold
 * Python objects), the table of element types (dtypes) gpujit knows, the
 * DeviceArray struct the dispatcher reads without a Python call, and the
 * error-raising functions every file uses.
 *
 * Built against the limited API (abi3, 3.11): no macros or struct fields
 * outside it.  module.c owns the state; devicearray.c, dispatcher.c and
 * stream objects (module.c) register their types into it.
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

extern const GjDtype gj_py_dtypes[GJ_DT_COUNT];

/* Dtype id for NumPy kind char and itemsize, or -1. */
int gj_py_dtype_lookup(char kind, Py_ssize_t itemsize);
/* Dtype id of a struct-module buffer format ("f", "<i8", "=q", "Zd") with the
   buffer's itemsize, or -1 (big-endian, records, ...). */
int gj_py_dtype_from_format(const char *format, Py_ssize_t itemsize);

/* ---- device memory of other libraries (cai.c) ------------------------------ */

/* An array in device memory that another library exports. */
typedef struct GjDevView {
    uint64_t ptr;
    int dtype;                /* GjDtypeId */
    int ndim;
    int readonly;
    int has_strides;          /* 0: C-contiguous (strides not set) */
    Py_ssize_t shape[GJ_PY_MAX_NDIM];
    Py_ssize_t strides[GJ_PY_MAX_NDIM];   /* bytes */
} GjDevView;

/* obj's __cuda_array_interface__ (or, for CuPy arrays and PyTorch tensors,
   the same read from their attributes) into v: 0; -1 raised; -2 when obj
   exports none (no exception). */
int gj_py_cai_view(GjPyState *st, PyObject *obj, GjDevView *v);
/* gpujit.as_cuda_array(obj, sync=True): a DeviceArray viewing obj's memory
   (obj is its base), after waiting for the interface's stream if sync. */
PyObject *gj_py_as_cuda_array_fn(PyObject *module, PyObject *args, PyObject *kw);
/* 0 when the memory v describes is memory the CUDA driver knows (device,
   managed or page-locked host memory); -1 with ValueError naming kernel
   argument `arg` (-1: as_cuda_array) when not: plain host memory would
   fault the kernel, and a fault ends the process's CUDA context. */
int gj_py_cai_check_pointer(GjPyState *st, const GjDevView *v, int arg);
/* Interns the attribute names cai.c reads; -1 raised (module exec). */
int gj_py_cai_init(GjPyState *st);

/* ---- device arrays ------------------------------------------------------ */

typedef struct GjDeviceArray {
    PyObject_HEAD uint64_t ptr;          /* device address of element [0, 0, ...] */
    size_t nbytes;         /* of the allocation it owns (0 for a view, daview.h) */
    int device;            /* ordinal whose context owns ptr */
    int ndim;
    int dtype_id;          /* GjDtypeId */
    char layout;           /* 'C', 'F' or 'A' (GjLayout) */
    int owns;              /* frees ptr in tp_dealloc */
    int readonly;          /* a view of memory its owner exports read-only */
    Py_ssize_t itemsize;
    Py_ssize_t size;       /* elements */
    Py_ssize_t shape[GJ_PY_MAX_NDIM];
    Py_ssize_t strides[GJ_PY_MAX_NDIM];   /* bytes */
    PyObject *dtype;       /* numpy.dtype */
    PyObject *base;        /* object that keeps ptr alive for a view, or NULL */
    PyObject *weakreflist;
} GjDeviceArray;

/* Whether ndim extents/strides (bytes) of itemsize elements are contiguous
   in `order` ('C' or 'F'), as numpy's flags say it: extents of 1 do not
   constrain their stride, and an empty array is contiguous both ways. */
/* The bytes an array of ndim extents/strides (bytes) spans: from *lo bytes
   off element 0 (<= 0, negative strides reach below it), *len bytes long;
   0 and 0 for an empty array. */
void gj_py_extent(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t itemsize,
                  Py_ssize_t *lo, Py_ssize_t *len);
int gj_py_contiguous(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                     Py_ssize_t itemsize, char order);
/* The strides (bytes) of a contiguous array in order 'C' or 'F' (the caller
   has checked that the extents' product fits). */
void gj_py_contiguous_strides(int ndim, const Py_ssize_t *shape, Py_ssize_t itemsize, char order,
                              Py_ssize_t *strides);
/* Layout ('C', 'F', 'A') of the same; C wins a tie (1-d arrays). */
char gj_py_layout(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                  Py_ssize_t itemsize);
/* A tuple of n ints. */
PyObject *gj_py_ssize_tuple(int n, const Py_ssize_t *v);

/* One copy between host memory and a device's memory (or within it), on
   that device, without the GIL when it is large; -1 raised. */
typedef enum { GJ_PY_HTOD, GJ_PY_DTOH, GJ_PY_DTOD } GjPyCopyDir;
int gj_py_da_copy(GjPyState *st, int device, GjPyCopyDir dir, void *host, uint64_t dst,
                  uint64_t src, size_t bytes, void *stream);
/* The same where a device-to-device copy's source lives on src_device
   (another GPU: a peer copy, on a stream of `device`). */
int gj_py_da_copy_between(GjPyState *st, int device, int src_device, GjPyCopyDir dir, void *host,
                          uint64_t dst, uint64_t src, size_t bytes, void *stream);

/* New uninitialised DeviceArray on the current device (strides NULL = C order). */
GjDeviceArray *gj_py_devicearray_new(GjPyState *st, int ndim, const Py_ssize_t *shape,
                                     const Py_ssize_t *strides, PyObject *dtype);
/* A DeviceArray viewing v's memory on `device` (an ordinal, or GJ_EXEC_HOST),
   without copying; `base` (a new reference is taken) keeps the memory alive
   until the array dies.  Used by as_cuda_array and from_dlpack. */
GjDeviceArray *gj_py_devicearray_view(GjPyState *st, const GjDevView *v, int device,
                                      PyObject *base);
/* to_device(): copies a host array (anything with the buffer protocol). */
PyObject *gj_py_to_device(GjPyState *st, PyObject *ary, void *stream);

int gj_py_devicearray_register(PyObject *module, GjPyState *st);
int gj_py_dispatcher_register(PyObject *module, GjPyState *st);

/* ---- module state and helpers (module.c) -------------------------------- */

GjPyState *gj_py_state_of_type(PyTypeObject *tp);   /* via PyType_GetModuleState */
/* Imports numpy once and caches the callables in st; -1 with an exception. */
int gj_py_numpy(GjPyState *st);
/* numpy.dtype(obj) */
PyObject *gj_py_as_dtype(GjPyState *st, PyObject *obj);
/* GjDtypeId of a numpy.dtype, or -1 with TypeError naming it. */
int gj_py_dtype_id_of(PyObject *dtype);
/* A dtype as messages name it (new str, NULL raised): its repr, and for
   datetime64 and timedelta64 also its name, "dtype('<M8[D]') (datetime64[D])". */
PyObject *gj_py_dtype_text(PyObject *dtype);
/* What follows "has no type for" the dtype in those messages. */
#define GJ_PY_DTYPES \
    "(supported: bool, int8-64, uint8-64, float16-64, complex64/128, in native byte order)"
/* The type's name ("str") as a new str, for messages. */
PyObject *gj_py_type_name(PyObject *obj);
/* A str argument's UTF-8 text (owned by obj), or NULL raised: TypeError
   with `message` when obj is no str. */
const char *gj_py_str(PyObject *obj, const char *message);
/* An integer argument: an int or anything with __index__ (a NumPy integer),
   but not a bool.  1 with *v set (LLONG_MIN or LLONG_MAX beyond their
   range); 0 when obj is none of these (no exception set); -1 raised (an
   __index__ that raised anything but TypeError: its own exception). */
int gj_py_integer(PyObject *obj, long long *v);
/* obj.attr (a protocol: "__dlpack__"), or NULL raised: a TypeError built
   from `message` (a format with one %S, the type's name) when obj has none. */
PyObject *gj_py_protocol_attr(PyObject *obj, const char *attr, const char *message);
/* __reduce__ of a Dispatcher or a DeviceArray: gpujit._pickling.<reducer>(obj),
   imported when something is first pickled, not with gpujit. */
PyObject *gj_py_reduce(PyObject *obj, const char *reducer);
/* stream.c: converts a stream argument (0, None, a Stream, or a raw CUstream
   int) to a handle; -1 with TypeError. */
int gj_py_stream_handle(GjPyState *st, PyObject *obj, void **stream);
/* hostmem.c: 1 and *dptr (the device address of buf) when [buf, buf+len)
   lies in a live mapped or managed allocation, which a kernel then takes
   in place; else 0. */
int gj_py_hostmem_device_ptr(GjPyState *st, const void *buf, size_t len, uint64_t *dptr);
/* hostmem.c: adds the host-memory types and functions to the module; and
   forgets the allocations still alive when the module's state goes. */
int gj_py_hostmem_register(PyObject *module, GjPyState *st);
void gj_py_hostmem_forget(GjPyState *st);
/* stream.c: adds Stream, Event and the stream, event and synchronize
   functions to the module. */
int gj_py_stream_register(PyObject *module, GjPyState *st);
/* Makes the current device's context current on this thread (nothing to do
   on the CPU target); -1 raised. */
int gj_py_ensure(GjPyState *st);
/* GjCompileOptions.find_libdevice with arg st: the path of libdevice.10.bc
   gpujit/_libdevice.py finds (searched once per process, the GIL taken for
   it), or NULL when there is none or the search raised (its exception is
   left set). */
const char *gj_py_find_libdevice(void *st);
/* The execution target (GjTargetKind), chosen on first call: GPUJIT_TARGET
   ("cpu" or "cuda"), else CUDA when a driver and a device are usable, else
   the CPU with a one-time RuntimeWarning.  -1 raised. */
int gj_py_target(GjPyState *st);
/* Where the current target's memory and kernels live: the current CUDA
   device's ordinal, or GJ_EXEC_HOST on the CPU target.  -1 raised. */
int gj_py_device(GjPyState *st, int *device);

/* Raise the Python exception for a driver error / a compiler diagnostic.
   Both return NULL so callers can `return gj_py_raise_cuda(...)`. */
PyObject *gj_py_raise_cuda(GjPyState *st, const GjExecError *err);
PyObject *gj_py_raise_diag(GjPyState *st, const GjCtx *ctx, const GjCodeView *cv);
/* Issues ctx's warnings as GpujitWarning; -1 with an exception when the
   warnings filter turns one into an error. */
int gj_py_warn_diags(GjPyState *st, const GjCtx *ctx, const GjCodeView *cv);

#endif
