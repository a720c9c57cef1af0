/*
 * launcher.c - launching a kernel: kernel[griddim, blockdim(, stream,
 * sharedmem)] makes a Launcher; calling it classifies the arguments, finds
 * or compiles the specialisation (dispatch.h) and launches it.
 *
 *     class Launcher:
 *         def __call__(self, *args) -> None
 *
 * Hot path: each argument becomes an Arg and one key word without creating
 * Python objects (DeviceArrays by struct access and NumPy scalars read in
 * place, both by exact type, first; Python scalars by type check, NumPy
 * arrays and other scalars through the buffer protocol;
 * __cuda_array_interface__ objects need an attribute lookup).  Last, an
 * object with only __dlpack__ is seen through a from_dlpack view (dlpack.c)
 * held until the launch returns.
 * kernelParams are packed per compile.h's ABI into buffers on the C stack
 * (calls of more than STACK_ARGS arguments allocate), and the launch goes to
 * the runtime's executor (runtime/exec.h) with the host arrays to copy: it
 * copies them to temporaries before the launch and, if the launch plan says
 * the kernel writes them, back after it, synchronizes and frees the
 * temporaries (on the CPU target host memory is the "device" memory and
 * nothing is copied).  Device arguments pass zero-copy and a CUDA launch
 * stays asynchronous.  This file does not ask which target runs the kernel
 * beyond parsing its arguments.  The configuration is checked against the
 * device's limits before anything is launched, shared memory (the kernel's
 * static part from its launch plan plus the launch's dynamic part) against
 * the opt-in limit; the CPU target checks a CUDA device's limits, so a bad
 * configuration fails the same way on both targets.
 */
#include "dispatch.h"
#include "dlpack.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"

enum {
    STACK_ARGS = 16,
};

typedef struct Launcher {
    PyObject_HEAD GjDispatcher *disp;
    unsigned grid[3], block[3];
    unsigned shared;           /* dynamic shared memory, bytes */
    void *stream;
    PyObject *stream_obj;      /* keeps a gpujit Stream alive */
    int checked_device;        /* device the configuration was validated on (GJ_EXEC_HOST:
                                  the CPU target), or INT_MIN */
    long long forall_tasks;    /* kernel.forall(n): n (0 launches nothing); -1 otherwise */
    int forall_best;           /* forall with tpb=0: each call takes the block size of the
                                  occupancy calculator for the entry it launches */
} Launcher;

/* ---- arguments ---------------------------------------------------------------- */

typedef enum ArgKind {
    ARG_SCALAR,    /* value in `scalar` */
    ARG_HOST,      /* host buffer, copied to `ptr` for the launch */
    ARG_DEVICE,    /* device memory at `ptr`: DeviceArray or __cuda_array_interface__ */
} ArgKind;

typedef struct Arg {
    ArgKind kind;
    int dtype, ndim;
    char layout;
    int readonly;
    uint64_t ptr;
    size_t nbytes;                      /* ARG_HOST: bytes of the temporary */
    int64_t shape[GJ_PY_MAX_NDIM];
    int64_t strides[GJ_PY_MAX_NDIM];    /* bytes */
    uint64_t scalar[2];                 /* complex128 needs 16 bytes */
    PyObject *obj;                      /* borrowed: the argument */
    PyObject *contig;                   /* ARG_HOST: contiguous copy of a strided obj */
    PyObject *dlview;                   /* ARG_DEVICE: the DeviceArray a __dlpack__ obj is
                                           seen through, held until the launch returns */
    Py_buffer view;                     /* ARG_HOST: of obj, or of contig */
    int has_view;
} Arg;

static int unsupported_arg(PyObject *func, int i, PyObject *obj) {
    /* The parameter's name, from co_varnames (error path only). */
    PyObject *code = PyObject_GetAttrString(func, "__code__");
    PyObject *names = code ? PyObject_GetAttrString(code, "co_varnames") : NULL;
    PyObject *name = names ? PySequence_GetItem(names, i) : NULL;
    Py_XDECREF(code);
    Py_XDECREF(names);
    PyErr_Clear();
    /* An array of a dtype gpujit has none for?  (Only for what an array
       argument may be: a buffer or device memory; a PyTorch tensor in host
       memory has a dtype too, but no buffer.) */
    PyObject *dtype =
        PyObject_CheckBuffer(obj) || PyObject_HasAttrString(obj, "__cuda_array_interface__")
            ? PyObject_GetAttrString(obj, "dtype")
            : NULL;
    PyErr_Clear();
    PyObject *tname = gj_py_type_name(obj);
    PyObject *what = dtype ? gj_py_dtype_text(dtype) : NULL;
    if (what)
        PyErr_Format(PyExc_TypeError,
                     "kernel argument %d ('%S') has dtype %U, which gpujit "
                     "has no type for " GJ_PY_DTYPES,
                     i + 1, name ? name : Py_None, what);
    else if (!dtype)
        PyErr_Format(PyExc_TypeError,
                     "kernel argument %d ('%S') has unsupported type '%S'; pass a NumPy array, "
                     "a DeviceArray, an object with __cuda_array_interface__ or __dlpack__, "
                     "or a bool, int, float, complex or NumPy scalar",
                     i + 1, name ? name : Py_None, tname);
    Py_XDECREF(what);
    Py_XDECREF(dtype);
    Py_XDECREF(name);
    Py_XDECREF(tname);
    return -1;
}

static int set_dims(Arg *a, int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                    Py_ssize_t itemsize) {
    if (ndim > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "array argument has %d dimensions; at most %d", ndim,
                     (int)GJ_PY_MAX_NDIM);
        return -1;
    }
    a->ndim = ndim;
    Py_ssize_t step = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        a->shape[i] = shape[i];
        a->strides[i] = strides ? strides[i] : step;
        step *= shape[i];
    }
    Py_ssize_t s[GJ_PY_MAX_NDIM];
    for (int i = 0; i < ndim; i++)
        s[i] = (Py_ssize_t)a->strides[i];
    a->layout = gj_py_layout(ndim, shape, s, itemsize);
    return 0;
}

static int is_ndarray(GjPyState *st, PyObject *obj) {
    if (!st->np_ndarray && gj_py_numpy(st) < 0) {
        PyErr_Clear();
        return 0;
    }
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->np_ndarray);
}

static int is_numpy_scalar(GjPyState *st, PyObject *obj) {
    PyObject *generic = st->np ? PyObject_GetAttrString(st->np, "generic") : NULL;
    int r = generic ? PyObject_IsInstance(obj, generic) : 0;
    Py_XDECREF(generic);
    PyErr_Clear();
    return r > 0;
}

/* The dtype id of obj when it is exactly one of NumPy's scalar types whose
   value sits in place (module.c, find_scalar_types), else -1. */
static int numpy_scalar_id(const GjPyState *st, PyObject *obj) {
    PyObject *type = (PyObject *)Py_TYPE(obj);
    for (int i = 0; i < GJ_DT_COUNT; i++)
        if (st->np_scalar_types[i] == type)
            return i;
    return -1;
}

/* Whether a's buffer lies in mapped or managed memory (hostmem.c); if so
   it becomes a device argument at its device address. */
static int in_zero_copy_memory(GjPyState *st, Arg *a) {
    const Py_buffer *v = &a->view;   /* PyBUF_RECORDS_RO: strides always given */
    Py_ssize_t lo, len;
    gj_py_extent(v->ndim, v->shape, v->strides, v->itemsize, &lo, &len);
    uint64_t dptr;
    if (len == 0 || !gj_py_hostmem_device_ptr(st, (const char *)v->buf + lo, (size_t)len, &dptr))
        return 0;
    a->kind = ARG_DEVICE;
    a->ptr = dptr - (uint64_t)lo;   /* element 0, as buf is */
    return 1;
}

/* A NumPy array or scalar, or any other buffer exporter: 0, -1 with an
   exception, -2 if obj has no buffer after all, -3 if its element type has
   no gpujit type (no exception set).  The kernel gets an aligned array in
   any case: on a GPU the copy the launch makes anyway; on the CPU target,
   which uses host memory in place, a copy of a strided array or of one whose
   data is not a multiple of its item size from the allocation's start (what
   Dask and np.frombuffer at an offset give), written back after the launch
   when the kernel may write it. */
static int parse_buffer(GjPyState *st, int device, PyObject *obj, Arg *a) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_RECORDS_RO) < 0)
        return -2;   /* no buffer after all (CuPy arrays refuse one) */
    a->has_view = 1;
    a->dtype = gj_py_dtype_from_format(a->view.format, a->view.itemsize);
    if (a->dtype < 0)
        return -3;   /* an element type gpujit has none for: the caller says which argument */
    /* A NumPy scalar passes by value; a 0-d array is an array (x[()]). */
    int ndarray = is_ndarray(st, obj);
    if (a->view.ndim == 0 && !ndarray) {
        a->kind = ARG_SCALAR;
        memcpy(a->scalar, a->view.buf, (size_t)a->view.itemsize);
        PyBuffer_Release(&a->view);
        a->has_view = 0;
        return 0;
    }
    /* NumPy scalars with no gpujit type (datetime64, timedelta64, bytes_)
       export their bytes as a 1-d uint8 buffer: not an array to take. */
    if (!ndarray && is_numpy_scalar(st, obj))
        return -3;
    a->kind = ARG_HOST;
    a->readonly = a->view.readonly;
    if (st->zero_copy && in_zero_copy_memory(st, a))   /* mapped or managed: in place */
        return set_dims(a, a->view.ndim, a->view.shape, a->view.strides, a->view.itemsize);
    int strided = !PyBuffer_IsContiguous(&a->view, 'A');
    int unaligned = (uintptr_t)a->view.buf % (uintptr_t)a->view.itemsize != 0;
    if (strided || (unaligned && device == GJ_EXEC_HOST)) {
        /* Copy to a contiguous array (a new one: aligned); written results
           go back through numpy.copyto after the launch. */
        PyBuffer_Release(&a->view);
        a->has_view = 0;
        if (gj_py_numpy(st) < 0 ||
            !(a->contig = strided
                              ? PyObject_CallFunctionObjArgs(st->np_ascontiguousarray, obj, NULL)
                              : PyObject_CallMethod(st->np, "array", "O", obj)) ||
            PyObject_GetBuffer(a->contig, &a->view, PyBUF_RECORDS_RO) < 0)
            return -1;
        a->has_view = 1;
    }
    a->nbytes = (size_t)a->view.len;
    return set_dims(a, a->view.ndim, a->view.shape, a->view.strides, a->view.itemsize);
}

/* Device memory another library exports (cai.c): 0, -1 raised, -2 none. */
static int parse_device_view(GjPyState *st, int i, PyObject *obj, Arg *a) {
    GjDevView v;
    int rc = gj_py_cai_view(st, obj, &v);
    if (rc < 0 || gj_py_cai_check_pointer(st, &v, i) < 0)
        return rc < 0 ? rc : -1;
    a->kind = ARG_DEVICE;
    a->dtype = v.dtype;
    a->ptr = v.ptr;
    a->readonly = v.readonly;
    return set_dims(a, v.ndim, v.shape, v.has_strides ? v.strides : NULL,
                    gj_py_dtypes[v.dtype].itemsize);
}

/* A DeviceArray argument, which must live where the launch runs. */
static int device_array_arg(int device, int i, const GjDeviceArray *da, Arg *a) {
    if (da->device != device) {
        if (da->device == GJ_EXEC_HOST || device == GJ_EXEC_HOST)
            PyErr_Format(PyExc_ValueError,
                         "kernel argument %d is a device array of the "
                         "%s target but the current target is %s",
                         i + 1, da->device == GJ_EXEC_HOST ? "cpu" : "cuda",
                         device == GJ_EXEC_HOST ? "cpu" : "cuda");
        else
            PyErr_Format(PyExc_ValueError,
                         "kernel argument %d lives on device %d but the "
                         "current device is %d",
                         i + 1, da->device, device);
        return -1;
    }
    a->kind = ARG_DEVICE;
    a->dtype = da->dtype_id;
    a->ptr = da->ptr;
    a->ndim = da->ndim;
    a->layout = da->layout;
    for (int k = 0; k < da->ndim; k++) {
        a->shape[k] = da->shape[k];
        a->strides[k] = da->strides[k];
    }
    a->readonly = da->readonly;
    return 0;
}

/* An object with __dlpack__ that no cheaper path takes (a JAX array, a
   PyTorch tensor in host memory on the CPU target), seen through
   from_dlpack: 0, -1 raised, -2 when obj has no __dlpack__ (or is a NumPy
   array, here only when its dtype has no buffer format and no gpujit type). */
static int parse_dlpack(GjPyState *st, int device, int i, PyObject *obj, Arg *a) {
    int has = !is_ndarray(st, obj) && PyObject_HasAttrString(obj, "__dlpack__");
    PyErr_Clear();
    if (!has)
        return -2;
    if (!(a->dlview = gj_py_from_dlpack(st, obj)))
        return -1;
    return device_array_arg(device, i, (const GjDeviceArray *)a->dlview, a);
}

/* ValueError unless array argument i's data and strides are multiples of
   its item size (NumPy's flags.aligned): a kernel's loads and stores assume
   it, and a misaligned one is a fault on the GPU that ends the context.
   Device memory only: host arrays reach the kernel as aligned copies
   (parse_buffer). */
static int check_aligned(int i, const Arg *a) {
    uint64_t size = (uint64_t)gj_py_dtypes[a->dtype].itemsize;
    uint64_t addr = a->ptr;
    int ok = addr % size == 0;
    for (int k = 0; k < a->ndim; k++)
        ok &= a->shape[k] <= 1 || (uint64_t)a->strides[k] % size == 0;
    if (ok)
        return 0;
    PyErr_Format(PyExc_ValueError,
                 "kernel argument %d is not aligned to its %s items (its "
                 "data or strides are not multiples of %d bytes; NumPy: flags.aligned is "
                 "False): pass an aligned copy, np.require(a, requirements='A')",
                 i + 1, gj_py_dtypes[a->dtype].name, (int)size);
    return -1;
}

/* Classifies argument i and computes its key word. */
static int parse_arg(GjPyState *st, GjDispatcher *d, int device, int i, PyObject *obj, Arg *a,
                     uint32_t *word) {
    int rc, id;
    a->obj = obj;
    if (Py_IS_TYPE(obj, st->DeviceArrayType)) {   /* the common cases first, by exact type */
        if (device_array_arg(device, i, (GjDeviceArray *)obj, a) < 0)
            return -1;
    } else if ((id = numpy_scalar_id(st, obj)) >= 0) {
        a->kind = ARG_SCALAR;
        a->dtype = id;
        memcpy(a->scalar, (const char *)obj + sizeof(PyObject), (size_t)gj_py_dtypes[id].itemsize);
    } else if (PyBool_Check(obj)) {
        a->kind = ARG_SCALAR;
        a->dtype = GJ_DT_BOOL;
        a->scalar[0] = obj == Py_True;
    } else if (PyLong_Check(obj)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow) {
            PyErr_Format(PyExc_OverflowError,
                         "kernel argument %d: Python int does not fit "
                         "in int64",
                         i + 1);
            return -1;
        }
        if (v == -1 && PyErr_Occurred())
            return -1;
        a->kind = ARG_SCALAR;
        a->dtype = GJ_DT_INT64;
        memcpy(a->scalar, &v, sizeof v);
    } else if (PyFloat_Check(obj)) {
        double v = PyFloat_AsDouble(obj);
        a->kind = ARG_SCALAR;
        a->dtype = GJ_DT_FLOAT64;
        memcpy(a->scalar, &v, sizeof v);
    } else if (PyComplex_Check(obj)) {
        double v[2] = {PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)};
        a->kind = ARG_SCALAR;
        a->dtype = GJ_DT_COMPLEX128;
        memcpy(a->scalar, v, sizeof v);
    } else if (PyObject_CheckBuffer(obj) && (rc = parse_buffer(st, device, obj, a)) != -2) {
        if (rc == -3)
            return unsupported_arg(d->func, i, obj);
        if (rc < 0)
            return -1;
    } else if (device == GJ_EXEC_HOST) {
        PyErr_Clear();
        int has = PyObject_HasAttr(obj, st->str_cai);
        PyErr_Clear();
        if (has) {
            PyErr_Format(PyExc_TypeError,
                         "kernel argument %d is GPU memory "
                         "(__cuda_array_interface__), which the CPU target cannot use; pass "
                         "a NumPy array",
                         i + 1);
            return -1;
        }
        rc = parse_dlpack(st, device, i, obj, a);
        if (rc == -2)
            return unsupported_arg(d->func, i, obj);
        if (rc < 0)
            return -1;
    } else {
        PyErr_Clear();
        rc = parse_device_view(st, i, obj, a);
        if (rc == -2)
            rc = parse_dlpack(st, device, i, obj, a);
        if (rc == -2)
            return unsupported_arg(d->func, i, obj);
        if (rc < 0)
            return -1;
    }
    int arr = a->kind != ARG_SCALAR;
    if (arr && a->kind != ARG_HOST && check_aligned(i, a) < 0)
        return -1;
    *word = GJ_KEY_WORD(a->dtype, arr ? a->ndim : 0, arr ? a->layout : 0, arr);
    return 0;
}

enum { MAX_TUPLE_DEPTH = 16 };

/* Counts the scalars and arrays (Args) and key words of argument obj: a
   tuple is a word and its items'. */
static int count_arg(PyObject *obj, int *leaves, int *words, int depth) {
    (*words)++;
    if (!PyTuple_Check(obj)) {
        (*leaves)++;
        return 0;
    }
    Py_ssize_t m = PyTuple_Size(obj);
    if (m > GJ_KEY_MAX_TUPLE || depth >= MAX_TUPLE_DEPTH) {
        PyErr_Format(PyExc_ValueError,
                     "a tuple argument may have %d items and %d levels of "
                     "nesting at most",
                     GJ_KEY_MAX_TUPLE, MAX_TUPLE_DEPTH);
        return -1;
    }
    for (Py_ssize_t k = 0; k < m; k++)
        if (count_arg(PyTuple_GetItem(obj, k), leaves, words, depth + 1) < 0)
            return -1;
    return 0;
}

/* Parses argument i into args[*parsed...] and key[*w...]: a tuple's items
   one Arg each (depth-first), after its marker word. */
static int parse_tree(GjPyState *st, GjDispatcher *d, int device, int i, PyObject *obj, Arg *args,
                      int *parsed, uint32_t *key, int *w) {
    if (!Py_IS_TYPE(obj, st->DeviceArrayType) && PyTuple_Check(obj)) {
        Py_ssize_t m = PyTuple_Size(obj);
        key[(*w)++] = GJ_KEY_TUPLE(m);
        for (Py_ssize_t k = 0; k < m; k++)
            if (parse_tree(st, d, device, i, PyTuple_GetItem(obj, k), args, parsed, key, w) < 0)
                return -1;
        return 0;
    }
    Arg *a = &args[(*parsed)++];   /* release_args() cleans up a partly parsed one too */
    return parse_arg(st, d, device, i, obj, a, &key[(*w)++]);
}

static void release_args(Arg *args, int n) {
    for (int i = 0; i < n; i++) {
        Arg *a = &args[i];
        if (a->has_view)
            PyBuffer_Release(&a->view);
        Py_XDECREF(a->contig);
        Py_XDECREF(a->dlview);
    }
}

/* ---- launch configuration ------------------------------------------------------ */

/* griddim/blockdim: an int or a tuple of 1-3 ints. */
static int parse_dim3(PyObject *obj, unsigned out[3], const char *what) {
    out[0] = out[1] = out[2] = 1;
    PyObject *items[3] = {obj, NULL, NULL};
    Py_ssize_t n = 1;
    if (PyTuple_Check(obj)) {
        n = PyTuple_Size(obj);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be an int or a tuple of 1 to 3 ints, "
                         "not a tuple of %zd",
                         what, n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            items[i] = PyTuple_GetItem(obj, i);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v;
        int is_int = gj_py_integer(items[i], &v);
        if (is_int < 0)
            return -1;
        if (!is_int) {
            PyObject *tname = gj_py_type_name(items[i]);
            PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of ints, not %S", what,
                         tname);
            Py_XDECREF(tname);
            return -1;
        }
        if (v < 0 || v > 0xffffffffLL) {
            PyErr_Format(PyExc_ValueError,
                         "%s has %S in dimension %c; it must be a count "
                         "from 0 to the device's limit",
                         what, items[i], "xyz"[i]);
            return -1;
        }
        out[i] = (unsigned)v;
    }
    return 0;
}

/* ValueError unless the configuration fits device `ordinal`'s limits. */
static int check_config(GjPyState *st, const Launcher *l, int ordinal) {
    GjDeviceInfo info;
    GjExecError err;
    if (gj_exec_device_info(ordinal, &info, &err) != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    for (int i = 0; i < 3; i++) {
        if (l->block[i] > (unsigned)info.max_block_dim[i]) {
            PyErr_Format(PyExc_ValueError, "blockDim.%c of %u exceeds the device's limit of %d",
                         "xyz"[i], l -> block[i], info.max_block_dim[i]);
            return -1;
        }
        if (l->grid[i] > (unsigned)info.max_grid_dim[i]) {
            PyErr_Format(PyExc_ValueError, "gridDim.%c of %u exceeds the device's limit of %d",
                         "xyz"[i], l -> grid[i], info.max_grid_dim[i]);
            return -1;
        }
    }
    if (threads > (unsigned long long)info.max_threads_per_block) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds the device's limit of "
                     "%d threads per block",
                     threads, info.max_threads_per_block);
        return -1;
    }
    return 0;
}

/* ---- launching ---------------------------------------------------------------------- */

/* ValueError if the kernel writes a read-only argument. */
static int check_writable(const GjEntry *e, const Arg *args, int n) {
    for (int i = 0; i < n; i++) {
        const Arg *a = &args[i];
        if (a->kind == ARG_SCALAR || !e->res.params[i].written || !a->readonly)
            continue;
        PyErr_Format(PyExc_ValueError,
                     "kernel argument '%s' is read-only, but the "
                     "kernel writes to it",
                     e->res.params[i].name);
        return -1;
    }
    return 0;
}

/* ---- explicit signatures: converting scalar arguments ------------------------ */

/* How an argument reaches a signature's parameter, best first, as numba
   rates overloads: promotion within a kind (int32 -> int64, float32 ->
   float64), a safe conversion (int16 -> float32, uint32 -> int64, float64
   -> complex128), or a conversion that fits this value (the Python int 3
   -> int32, 0.5 -> float32).  Arrays match exactly (layout A takes any). */
typedef enum Conv { CONV_EXACT, CONV_PROMOTE, CONV_SAFE, CONV_FITS, CONV_NONE } Conv;

/* A scalar argument's value: its NumPy kind (b i u f c) and its value. */
typedef struct Num {
    char kind;
    int64_t i;
    uint64_t u;
    double re, im;
} Num;

/* The value of IEEE binary16 bits h, exactly. */
static double half_value(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Reads a's value; 0 for a type with no value here. */
static int read_num(const Arg *a, Num *n) {
    memset(n, 0, sizeof *n);
    n->kind = gj_py_dtypes[a->dtype].kind;
    const void *p = a->scalar;
    switch ((GjDtypeId)a->dtype) {
    case GJ_DT_BOOL:
        n->i = *(const uint8_t *)p != 0;
        n->kind = 'i';
        break;
    case GJ_DT_INT8: n->i = *(const int8_t *)p; break;
    case GJ_DT_INT16: n->i = *(const int16_t *)p; break;
    case GJ_DT_INT32: n->i = *(const int32_t *)p; break;
    case GJ_DT_INT64: n->i = *(const int64_t *)p; break;
    case GJ_DT_UINT8: n->u = *(const uint8_t *)p; break;
    case GJ_DT_UINT16: n->u = *(const uint16_t *)p; break;
    case GJ_DT_UINT32: n->u = *(const uint32_t *)p; break;
    case GJ_DT_UINT64: n->u = *(const uint64_t *)p; break;
    case GJ_DT_FLOAT32: n->re = *(const float *)p; break;
    case GJ_DT_FLOAT64: n->re = *(const double *)p; break;
    case GJ_DT_COMPLEX64:
        n->re = ((const float *)p)[0];
        n->im = ((const float *)p)[1];
        break;
    case GJ_DT_COMPLEX128:
        n->re = ((const double *)p)[0];
        n->im = ((const double *)p)[1];
        break;
    case GJ_DT_FLOAT16: n->re = half_value(*(const uint16_t *)p); break;
    case GJ_DT_COUNT: return 0;
    }
    return 1;
}

static double num_real(const Num *n) {
    return n->kind == 'u' ? (double)n->u : n->kind == 'i' ? (double)n->i : n->re;
}

/* Whether integer n fits an integer type of kind tk ('i'/'u') and tsz bytes. */
static int int_fits(const Num *n, char tk, int tsz) {
    int bits = 8 * tsz;
    if (tk == 'i') {
        int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
        return n->kind == 'u' ? n->u <= (uint64_t)hi : n->i >= -hi - 1 && n->i <= hi;
    }
    uint64_t hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return n->kind == 'i' ? n->i >= 0 && (uint64_t)n->i <= hi : n->u <= hi;
}

/* Whether double x is representable in a float of tsz bytes up to rounding
   (infinities and NaN are). */
static int float_fits(double x, int tsz) {
    return tsz == 8 || x != x || x == (double)INFINITY || x == -(double)INFINITY ||
           (x <= FLT_MAX && x >= -FLT_MAX);
}

/* Makes a float n integral (kind 'i' or 'u') if it is an integer in int64 or
   uint64 range; 0 if not. */
static int float_to_int(Num *n) {
    double x = n->re;
    if (n->im != 0 || x != floor(x) || !(x >= -0x1p63 && x < 0x1p64))
        return 0;
    if (x < 0x1p63) {
        n->kind = 'i';
        n->i = (int64_t)x;
    } else {
        n->kind = 'u';
        n->u = (uint64_t)x;
    }
    return 1;
}

/* How a's value converts to dtype `to`. */
static Conv scalar_conv(const Arg *a, int to) {
    Num n;
    if (a->dtype == to)
        return CONV_EXACT;
    if (to == GJ_DT_BOOL || to == GJ_DT_FLOAT16 || !read_num(a, &n))
        return CONV_NONE;
    char fk = gj_py_dtypes[a->dtype].kind, tk = gj_py_dtypes[to].kind;
    int fsz = gj_py_dtypes[a->dtype].itemsize, tsz = gj_py_dtypes[to].itemsize;
    int mantissa = tk == 'c' ? (tsz == 8 ? 24 : 53) : tsz == 4 ? 24 : 53;
    switch (tk) {
    case 'i':
    case 'u':
        if (fk == 'b')
            return CONV_SAFE;
        if (fk == tk && tsz > fsz)
            return CONV_PROMOTE;
        if (fk == 'u' && tk == 'i' && tsz > fsz)
            return CONV_SAFE;
        if ((fk == 'f' || fk == 'c') && !float_to_int(&n))
            return CONV_NONE;
        return int_fits(&n, tk, tsz) ? CONV_FITS : CONV_NONE;
    case 'f':
    case 'c':
        if (fk == 'b' || ((fk == 'i' || fk == 'u') && 8 * fsz < mantissa))
            return CONV_SAFE;
        if (fk == 'i' || fk == 'u')
            return CONV_FITS;
        if (fk == 'c' && tk == 'f')
            return CONV_NONE;
        if (fk == tk && tsz > fsz)
            return CONV_PROMOTE;
        if (fk == 'f' && tk == 'c' && tsz >= 2 * fsz)
            return CONV_SAFE;
        return float_fits(n.re, tk == 'c' ? tsz / 2 : tsz) && float_fits(n.im, tsz / 2) ? CONV_FITS
                                                                                        : CONV_NONE;
    default: return CONV_NONE;
    }
}

/* Converts a's value to dtype `to` (scalar_conv said it converts). */
static void convert_scalar(Arg *a, int to) {
    Num n;
    read_num(a, &n);
    if (gj_py_dtypes[to].kind != 'f' && gj_py_dtypes[to].kind != 'c' &&
        (n.kind == 'f' || n.kind == 'c'))
        float_to_int(&n);
    int64_t i = n.kind == 'u' ? (int64_t)n.u : n.i;
    uint64_t u = n.kind == 'i' ? (uint64_t)n.i : n.u;
    double x = num_real(&n);
    uint64_t out[2] = {0, 0};
    void *p = out;
    switch ((GjDtypeId)to) {
    case GJ_DT_INT8: *(int8_t *)p = (int8_t)i; break;
    case GJ_DT_INT16: *(int16_t *)p = (int16_t)i; break;
    case GJ_DT_INT32: *(int32_t *)p = (int32_t)i; break;
    case GJ_DT_INT64: *(int64_t *)p = i; break;
    case GJ_DT_UINT8: *(uint8_t *)p = (uint8_t)u; break;
    case GJ_DT_UINT16: *(uint16_t *)p = (uint16_t)u; break;
    case GJ_DT_UINT32: *(uint32_t *)p = (uint32_t)u; break;
    case GJ_DT_UINT64: *(uint64_t *)p = u; break;
    case GJ_DT_FLOAT32: *(float *)p = (float)x; break;
    case GJ_DT_FLOAT64: *(double *)p = x; break;
    case GJ_DT_COMPLEX64:
        ((float *)p)[0] = (float)x;
        ((float *)p)[1] = (float)n.im;
        break;
    case GJ_DT_COMPLEX128:
        ((double *)p)[0] = x;
        ((double *)p)[1] = n.im;
        break;
    case GJ_DT_BOOL:
    case GJ_DT_FLOAT16:
    case GJ_DT_COUNT: return;   /* never chosen */
    }
    memcpy(a->scalar, out, sizeof out);
    a->dtype = to;
}

/* Rates entry e for args: counts of each Conv (CONV_NONE set: no match).
   key has n words after the device; args are its scalars and arrays. */
static void rate(const GjEntry *e, const Arg *args, const uint32_t *key, int n, int count[5]) {
    memset(count, 0, 5 * sizeof *count);
    for (int i = 0, leaf = 0; i < n && !count[CONV_NONE]; i++) {
        uint32_t want = e->key[1 + i], have = key[1 + i];
        if (GJ_KEY_IS_TUPLE(want) || GJ_KEY_IS_TUPLE(have)) {   /* the same shape only */
            count[want == have ? CONV_EXACT : CONV_NONE]++;
            continue;
        }
        int a = leaf++;
        if (GJ_KEY_IS_ARRAY(want) || GJ_KEY_IS_ARRAY(have)) {
            int same = want == have ||
                       (GJ_KEY_IS_ARRAY(have) && GJ_KEY_LAYOUT(want) == GJ_LAYOUT_A &&
                        want == GJ_KEY_WORD(GJ_KEY_DTYPE(have), GJ_KEY_NDIM(have), GJ_LAYOUT_A, 1));
            count[same ? CONV_EXACT : CONV_NONE]++;
        } else {
            count[scalar_conv(&args[a], GJ_KEY_DTYPE(want))]++;
        }
    }
}

/* Whether rating a is better than b: fewer value conversions, then fewer
   safe conversions, then fewer promotions (numba's order). */
static int better(const int a[5], const int b[5]) {
    for (int k = CONV_FITS; k > CONV_EXACT; k--)
        if (a[k] != b[k])
            return a[k] < b[k];
    return 0;
}

/* The compiled entry of d on key[0]'s device that args convert to best,
   with the scalar arguments converted; NULL without an exception if none
   does; NULL with a TypeError naming the candidates if two are as good. */
static GjEntry *convert_to_signature(GjDispatcher *d, Arg *args, const uint32_t *key, int n) {
    GjEntry *best = NULL;
    int best_rate[5], r[5], tie = 0;
    for (size_t b = 0; b < d->nbuckets; b++)
        for (GjEntry *e = d->buckets[b]; e; e = e->next) {
            if (e->nkey != n + 1 || e->key[0] != key[0])
                continue;
            rate(e, args, key, n, r);
            if (r[CONV_NONE])
                continue;
            if (!best || better(r, best_rate)) {
                best = e;
                memcpy(best_rate, r, sizeof r);
                tie = 0;
            } else if (!better(best_rate, r)) {
                tie = 1;
            }
        }
    if (best && tie) {
        PyObject *names = PyList_New(0);
        for (size_t b = 0; names && b < d->nbuckets; b++)
            for (GjEntry *e = d->buckets[b]; e; e = e->next) {
                if (e->nkey != n + 1 || e->key[0] != key[0])
                    continue;
                rate(e, args, key, n, r);
                if (!r[CONV_NONE] && !better(best_rate, r) && PyList_Append(names, e->sig) < 0)
                    Py_CLEAR(names);
            }
        PyObject *name = names ? PyObject_GetAttrString(d->func, "__name__") : NULL;
        if (name && PyList_Sort(names) == 0)
            PyErr_Format(PyExc_TypeError,
                         "ambiguous call of %U(): its arguments convert "
                         "equally well to the signatures %R; pass NumPy scalars of the "
                         "intended types (np.float32(x))",
                         name, names);
        Py_XDECREF(names);
        Py_XDECREF(name);
        return NULL;
    }
    for (int i = 0, leaf = 0; best && i < n; i++) {
        uint32_t want = best->key[1 + i];
        if (GJ_KEY_IS_TUPLE(want))
            continue;
        Arg *a = &args[leaf++];
        if (!GJ_KEY_IS_ARRAY(want) && a->dtype != GJ_KEY_DTYPE(want))
            convert_scalar(a, GJ_KEY_DTYPE(want));
    }
    return best;
}

/* kernelParams per compile.h: scalar value; array data, shape[ndim],
   strides[ndim].  A host array's data slot is left for the runtime, which
   puts its temporary there: copies[] gets one entry per host array.
   Returns their count. */
static int pack_params(const GjEntry *e, const Arg *args, int n, void **params, uint64_t *slots,
                       GjHostCopy *copies) {
    int p = 0, s = 0, c = 0;
    for (int i = 0; i < n; i++) {
        const Arg *a = &args[i];
        if (a->kind == ARG_SCALAR) {
            memcpy(&slots[s], a->scalar, sizeof a->scalar);
            params[p++] = &slots[s];
            s += 2;
            continue;
        }
        slots[s] = a->ptr;
        if (a->kind == ARG_HOST)
            copies[c++] = (GjHostCopy){.buf = a->view.buf,
                                       .nbytes = a->nbytes,
                                       .written = e->res.params[i].written,
                                       .slot = &slots[s]};
        params[p++] = &slots[s++];
        for (int k = 0; k < a->ndim; k++) {
            memcpy(&slots[s], &a->shape[k], sizeof(int64_t));
            params[p++] = &slots[s++];
        }
        for (int k = 0; k < a->ndim; k++) {
            memcpy(&slots[s], &a->strides[k], sizeof(int64_t));
            params[p++] = &slots[s++];
        }
    }
    return c;
}

/* Written strided host arguments go back from their contiguous copies,
   through an ndarray over the argument's own buffer (a memoryview or
   another exporter is no ndarray for numpy.copyto). */
static int copy_back_strided(GjPyState *st, const GjEntry *e, const Arg *args, int n) {
    for (int i = 0; i < n; i++) {
        const Arg *a = &args[i];
        if (a->kind != ARG_HOST || !a->contig || !e->res.params[i].written)
            continue;
        PyObject *dst = PyObject_CallMethod(st->np, "asarray", "O", a->obj);
        PyObject *r =
            dst ? PyObject_CallFunctionObjArgs(st->np_copyto, dst, a->contig, NULL) : NULL;
        Py_XDECREF(dst);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* A kernel that prints writes to fd 1 (the CPU target at once, CUDA's
   printf buffer at the next synchronisation): what Python's sys.stdout
   holds goes first. */
static int flush_stdout(void) {
    PyObject *out = PySys_GetObject("stdout");   /* borrowed */
    if (!out || out == Py_None)
        return 0;
    PyObject *r = PyObject_CallMethod(out, "flush", NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

enum { IMPLICIT_COPY_WARN_BYTES = 1 << 20 };

/* numba's NumbaPerformanceWarning, once per kernel: host arrays of 1 MiB or
   more in all that the runtime copies to the GPU and back at this launch
   (GPUJIT_WARN_ON_IMPLICIT_COPY=0 silences it).  -1 when a filter made it
   an error. */
static int warn_implicit_copies(GjPyState *st, GjDispatcher *d, const GjHostCopy *copies, int n,
                                int device) {
    if (d->warned_implicit_copy || n == 0 || !gj_exec_copies_host_arrays(device))
        return 0;
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += copies[i].nbytes;
    const char *env = getenv("GPUJIT_WARN_ON_IMPLICIT_COPY");
    if (bytes < IMPLICIT_COPY_WARN_BYTES || (env && strcmp(env, "0") == 0))
        return 0;
    d->warned_implicit_copy = 1;
    PyObject *name = PyObject_GetAttrString(d->func, "__qualname__");
    int rc = name ? PyErr_WarnFormat(st->GpujitPerformanceWarning, 1,
                                     "kernel %U was given host arrays (%zu bytes), which are "
                                     "copied to the GPU and back, with a synchronize, at each "
                                     "launch; pass device arrays (gpujit.to_device) to keep "
                                     "the data on the GPU (GPUJIT_WARN_ON_IMPLICIT_COPY=0 "
                                     "silences this)",
                                     name, bytes)
                  : -1;
    Py_XDECREF(name);
    return rc;
}

/* forall(n) with tpb=0: the block size the occupancy calculator gives e
   (occupancy.c), and enough blocks for n tasks. */
static int forall_config(GjPyState *st, Launcher *l, GjEntry *e, int device) {
    int block;
    if (gj_py_entry_best_block(st, e, l->shared, device, &block) < 0)
        return -1;
    l->block[0] = (unsigned)block;
    long long blocks = l->forall_tasks / block + (l->forall_tasks % block != 0);
    if (blocks > 0xffffffffLL) {
        PyErr_Format(PyExc_ValueError,
                     "forall(%lld) needs %lld blocks of %d threads, more "
                     "than a grid has",
                     l->forall_tasks, blocks, block);
        return -1;
    }
    l->grid[0] = (unsigned)blocks;
    return check_config(st, l, device);
}

/* The threads of l's grid, ULLONG_MAX for more than that (a 2^31 x 65535 x
   65535 grid of 1024-thread blocks is). */
static unsigned long long launch_threads(const Launcher *l) {
    unsigned long long n = 1;
    const unsigned dims[6] = {l->grid[0],  l->grid[1],  l->grid[2],
                              l->block[0], l->block[1], l->block[2]};
    for (int i = 0; i < 6; i++)
        if (__builtin_mul_overflow(n, dims[i], &n))
            return ULLONG_MAX;
    return n;
}

/* Hands the launch to the runtime (runtime/exec.h): host arguments are
   copied in and, when written, back, and then the call has synchronized;
   with device arguments only the launch stays asynchronous. */
static int launch(GjPyState *st, Launcher *l, GjEntry *e, Arg *args, int n, void **params,
                  uint64_t *slots, GjHostCopy *copies, int device) {
    if (e->res.prints && flush_stdout() < 0)
        return -1;
    if (check_writable(e, args, n) < 0)
        return -1;
    int64_t record[GJ_ERROR_RECORD_WORDS] = {0};
    GjLaunch g = {
        .device = device,
        .func = e->func,
        .grid = {l->grid[0], l->grid[1], l->grid[2]},
        .block = {l->block[0], l->block[1], l->block[2]},
        .shared = l->shared,
        .shared_static = e->res.shared_static_bytes,
        .local_bytes = e->res.local_bytes,
        .per_thread = e->res.cpu_per_thread,
        .needs_fibers = e->res.needs_fibers,
        .stream = l->stream,
        .params = params,
        .copies = copies,
        .ncopies = pack_params(e, args, n, params, slots, copies),
        .error_record_dptr = e->error_record,
        .error_record = e->res.nerror_sites > 0 ? record : NULL,
        .error_record_words = GJ_ERROR_RECORD_WORDS,
    };
    if (warn_implicit_copies(st, l->disp, copies, g.ncopies, device) < 0)
        return -1;
    GjExecError err;
    GjExecStatus rc;
    if (gj_exec_blocks(&g)) {
        Py_BEGIN_ALLOW_THREADS rc = gj_exec_launch(&g, &err);
        Py_END_ALLOW_THREADS
    } else {
        rc = gj_exec_launch(&g, &err);
    }
    if (rc != GJ_EXEC_OK && err.kind == GJ_ERR_CPU_TARGET) {
        PyObject *name = PyObject_GetAttrString(l->disp->func, "__qualname__");
        if (name)
            PyErr_Format(st->GpujitError, "the CPU target could not run kernel %U: %s", name,
                         err.message);
        Py_XDECREF(name);
        return -1;
    }
    if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    if (copy_back_strided(st, e, args, n) < 0)
        return -1;
    return gj_py_kernel_error_raise(l->disp, e, record);
}

static PyObject *launcher_call(PyObject *self, PyObject *pyargs, PyObject *kw) {
    Launcher *l = (Launcher *)self;
    GjDispatcher *d = l->disp;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    GjEntry *held = NULL;   /* kept alive through a recompile() until done */
    if (kw && PyDict_Size(kw) > 0) {
        PyErr_SetString(PyExc_TypeError, "kernel arguments are positional only");
        return NULL;
    }
    if (l->forall_tasks == 0)
        Py_RETURN_NONE;   /* as numba's forall: no task, no launch (and no compile) */
    Py_ssize_t n = PyTuple_Size(pyargs);
    if (n != d->argcount && d->plain) {   /* else compiling reports *args and the like */
        PyObject *name = PyObject_GetAttrString(d->func, "__name__");
        PyObject *defaults = PyObject_GetAttrString(d->func, "__defaults__");
        PyErr_Clear();
        if (n < d->argcount && defaults && defaults != Py_None)
            PyErr_Format(PyExc_TypeError,
                         "%S() has default parameter values, which a kernel "
                         "does not use: pass all %d arguments (%zd %s given)",
                         name, d->argcount, n, n == 1 ? "was" : "were");
        else
            PyErr_Format(PyExc_TypeError, "%S() takes %d argument%s but %zd %s given", name,
                         d->argcount, d->argcount == 1 ? "" : "s", n, n == 1 ? "was" : "were");
        Py_XDECREF(defaults);
        Py_XDECREF(name);
        return NULL;
    }
    int nleaves = 0, nwords = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (count_arg(PyTuple_GetItem(pyargs, i), &nleaves, &nwords, 0) < 0)
            return NULL;
    Arg stack_args[STACK_ARGS];
    GjHostCopy stack_copies[STACK_ARGS];
    uint32_t stack_key[STACK_ARGS + 1];
    void *stack_params[STACK_ARGS * (2 + 2 * GJ_PY_MAX_NDIM)];
    uint64_t stack_slots[STACK_ARGS * (2 + 2 * GJ_PY_MAX_NDIM)];
    Arg *args = stack_args;
    GjHostCopy *copies = stack_copies;
    uint32_t *key = stack_key;
    void **params = stack_params;
    uint64_t *slots = stack_slots;
    PyObject *result = NULL;
    int parsed = 0, nkey = 1;
    if (nleaves > STACK_ARGS || nwords > STACK_ARGS) {
        size_t nslots = (size_t)nleaves * (2 + 2 * GJ_PY_MAX_NDIM);
        args = PyMem_Calloc((size_t)nleaves + 1, sizeof *args);
        copies = PyMem_Calloc((size_t)nleaves + 1, sizeof *copies);
        key = PyMem_Calloc((size_t)nwords + 1, sizeof *key);
        params = PyMem_Calloc(nslots, sizeof *params);
        slots = PyMem_Calloc(nslots, sizeof *slots);
        if (!args || !copies || !key || !params || !slots) {
            PyErr_NoMemory();
            goto done;
        }
    } else {
        memset(stack_args, 0, (size_t)nleaves * sizeof *args);
    }
    int device;
    if (gj_py_device(st, &device) < 0)
        goto done;
    key[0] = (uint32_t)device;   /* the CPU target's GJ_EXEC_HOST keys its own entries */
    for (Py_ssize_t i = 0; i < n; i++)
        if (parse_tree(st, d, device, (int)i, PyTuple_GetItem(pyargs, i), args, &parsed, key,
                       &nkey) < 0)
            goto done;
    if (gj_py_ensure(st) < 0)
        goto done;
    if (l->checked_device != device) {
        if (check_config(st, l, device) < 0)
            goto done;
        l->checked_device = device;
    }
    GjEntry *e = gj_py_entry_find(d, key, nkey);
    if (!e)
        e = gj_py_entry_any_layout(d, key, nkey);
    if (!e && d->explicit_sigs) {   /* exactly, else by converting scalars, as numba */
        if (gj_py_entry_explicit_compile(st, d, (int)key[0]) < 0)
            goto done;
        if (!(e = gj_py_entry_find(d, key, nkey)) && !(e = gj_py_entry_any_layout(d, key, nkey)) &&
            !(e = convert_to_signature(d, args, key, nkey - 1))) {
            if (!PyErr_Occurred())
                gj_py_no_matching_definition(d, key, nkey);
            goto done;
        }
    }
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    unsigned long long grid_threads = launch_threads(l);
    /* the threads the CPU target's tiers count (forall: its tasks, known before
       its grid) */
    unsigned long long counted =
        l->forall_tasks > 0 ? (unsigned long long)l->forall_tasks : grid_threads;
    if (!e && !(e = gj_py_entry_compile(st, d, key, nkey, counted)))
        goto done;
    gj_py_entry_hold(held = e);   /* the launch and the load run without the GIL */
    if (gj_py_entry_load(st, d, e) < 0 || gj_py_prepare_shared(st, d, e, l->shared, device) < 0)
        goto done;
    if (l->forall_best) {
        if (forall_config(st, l, e, device) < 0)
            goto done;
        threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
        grid_threads = launch_threads(l);
    }
    if (d->launch_bounds[0] > 0 && threads > (unsigned long long)d->launch_bounds[0]) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds the kernel's "
                     "launch_bounds of %d threads per block",
                     threads, d->launch_bounds[0]);
        goto done;
    }
    if (threads > (unsigned long long)e->use.max_threads) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds this kernel's limit of "
                     "%d threads per block (set by its register use)",
                     threads, e->use.max_threads);
        goto done;
    }
    if (grid_threads == 0) {
        result = Py_NewRef(Py_None);   /* an empty grid launches nothing */
        goto done;
    }
    if (!(e = gj_py_entry_for_launch(st, d, e, counted)))
        goto done;
    if (launch(st, l, e, args, parsed, params, slots, copies, device) == 0)
        result = Py_NewRef(Py_None);
done:
    if (held)
        gj_py_entry_release(held);
    if (args)
        release_args(args, parsed);
    if (args != stack_args) {
        PyMem_Free(args);
        PyMem_Free(copies);
        PyMem_Free(key);
        PyMem_Free(params);
        PyMem_Free(slots);
    }
    return result;
}

/* ---- Launcher type ------------------------------------------------------------------- */

static int launcher_traverse(PyObject *self, visitproc visit, void *arg) {
    Launcher *l = (Launcher *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT((PyObject *)l->disp);
    Py_VISIT(l->stream_obj);
    return 0;
}

static int launcher_clear(PyObject *self) {
    Launcher *l = (Launcher *)self;
    Py_CLEAR(l->disp);
    Py_CLEAR(l->stream_obj);
    return 0;
}

static void launcher_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

static PyObject *launcher_repr(PyObject *self) {
    Launcher *l = (Launcher *)self;
    PyObject *name = PyObject_GetAttrString(l->disp->func, "__name__");
    if (!name)
        return NULL;
    if (l->forall_best) {
        PyObject *r = PyUnicode_FromFormat("<gpujit forall of %S: %lld tasks, in blocks of the "
                                           "size suggest_config() gives, %u bytes of shared "
                                           "memory>",
                                           name, l->forall_tasks, l->shared);
        Py_DECREF(name);
        return r;
    }
    PyObject *r = PyUnicode_FromFormat("<gpujit launch of %S: grid (%u, %u, %u), block "
                                       "(%u, %u, %u), %u bytes of shared memory>",
                                       name, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                       l->block[1], l->block[2], l->shared);
    Py_DECREF(name);
    return r;
}

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, (void *)launcher_dealloc},
    {Py_tp_traverse, (void *)launcher_traverse},
    {Py_tp_clear, (void *)launcher_clear},
    {Py_tp_call, (void *)launcher_call},
    {Py_tp_repr, (void *)launcher_repr},
    {Py_tp_doc, "A kernel with a launch configuration; call it with the kernel's arguments."},
    {0, NULL},
};

static PyType_Spec launcher_spec = {
    .name = "gpujit.Launcher",
    .basicsize = sizeof(Launcher),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = launcher_slots,
};

PyObject *gj_py_launcher_new(GjPyState *st, GjDispatcher *d, PyObject *config) {
    Py_ssize_t n = PyTuple_Check(config) ? PyTuple_Size(config) : 0;
    if (n < 2 || n > 4) {
        PyErr_SetString(PyExc_ValueError,
                        "launch configuration must be kernel[griddim, "
                        "blockdim] or kernel[griddim, blockdim, stream, sharedmem]");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(st->LauncherType, Py_tp_alloc);
    Launcher *l = (Launcher *)alloc(st->LauncherType, 0);
    if (!l)
        return NULL;
    l->disp = (GjDispatcher *)Py_NewRef((PyObject *)d);
    l->checked_device = INT_MIN;
    l->forall_tasks = -1;
    if (parse_dim3(PyTuple_GetItem(config, 0), l->grid, "griddim") < 0 ||
        parse_dim3(PyTuple_GetItem(config, 1), l->block, "blockdim") < 0)
        goto fail;
    for (int i = 0; i < 3; i++)
        if (l->block[i] == 0) {
            PyErr_Format(PyExc_ValueError,
                         "blockdim has 0 threads in dimension %c; each "
                         "dimension needs at least 1",
                         "xyz"[i]);
            goto fail;
        }
    if (n >= 3) {
        PyObject *s = PyTuple_GetItem(config, 2);
        if (gj_py_stream_handle(st, s, &l->stream) < 0)
            goto fail;
        l->stream_obj = Py_NewRef(s);
    }
    if (n == 4) {
        PyObject *index = PyNumber_Index(PyTuple_GetItem(config, 3));
        if (!index && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *tname = gj_py_type_name(PyTuple_GetItem(config, 3));
            PyErr_Format(PyExc_TypeError,
                         "sharedmem (the launch's 4th item) must be an int "
                         "count of bytes, not %S",
                         tname);
            Py_XDECREF(tname);
        }
        int overflow = 0;
        long long shared = index ? PyLong_AsLongLongAndOverflow(index, &overflow) : -1;
        Py_XDECREF(index);
        if (shared == -1 && PyErr_Occurred())
            goto fail;
        if (overflow || shared < 0 || shared > 0x7fffffffLL) {
            PyErr_Format(PyExc_ValueError,
                         "sharedmem must be a byte count from 0 to 2**31-1 "
                         "(and within the device's shared memory), not %S",
                         PyTuple_GetItem(config, 3));
            goto fail;
        }
        l->shared = (unsigned)shared;
    }
    /* Validate against the target's device now when one is in use; else at the call. */
    if (st->target == GJ_TARGET_CPU || gj_exec_gpu_available()) {
        int dev;
        if (gj_py_device(st, &dev) < 0 || check_config(st, l, dev) < 0)
            goto fail;
        l->checked_device = dev;
    }
    return (PyObject *)l;
fail:
    Py_DECREF(l);
    return NULL;
}

PyObject *gj_py_launcher_forall(GjPyState *st, GjDispatcher *d, long long ntasks, int tpb,
                                PyObject *stream, PyObject *sharedmem) {
    /* tpb=0: one block until each call knows its entry (forall_config) */
    long long block = tpb > 0 ? tpb : 1;
    long long blocks = tpb > 0 ? ntasks / tpb + (ntasks % tpb != 0) : 1;
    PyObject *config = Py_BuildValue("(LLOO)", blocks, block, stream, sharedmem);
    Launcher *l = config ? (Launcher *)gj_py_launcher_new(st, d, config) : NULL;
    Py_XDECREF(config);
    if (l) {
        l->forall_tasks = ntasks;
        l->forall_best = tpb == 0;
    }
    return (PyObject *)l;
}

int gj_py_launcher_register(PyObject *module, GjPyState *st) {
    st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launcher_spec, NULL);
    if (!st->LauncherType)
        return -1;
    return PyModule_AddObjectRef(module, "Launcher", (PyObject *)st->LauncherType);
}
