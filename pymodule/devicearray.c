/*
 * devicearray.c - DeviceArray, an n-d array in GPU memory, and the host
 * side of copies (to_device, copy_to_host, copy_to_device).
 *
 *     class DeviceArray:
 *         shape: tuple[int, ...]; strides: tuple[int, ...]  # bytes
 *         dtype: numpy.dtype; size, ndim, nbytes, itemsize: int
 *         flags: dict; base: DeviceArray | None; T: DeviceArray
 *         def copy_to_host(self, ary=None, stream=0) -> numpy.ndarray
 *         def copy_to_device(self, ary, stream=0) -> None
 *         def __array__(self, dtype=None, copy=None) -> numpy.ndarray   # a copy
 *         __getitem__, __setitem__, reshape, ravel, view, transpose  # daview.c
 *         __cuda_array_interface__: dict    # version 3, zero-copy export
 *         def __dlpack__(self, *, stream=None, max_version=None, dl_device=None,
 *                        copy=None) -> PyCapsule     # zero-copy export (dlpack.c)
 *         def __dlpack_device__(self) -> tuple[int, int]
 *         base: object | None               # what keeps a view's memory alive
 *
 * A DeviceArray owns its allocation (freed in tp_dealloc, on its device) or
 * is a view kept alive by `base`: of another DeviceArray (daview.c makes
 * views; base is the owner, as NumPy's) or of another library's memory
 * (gj_py_devicearray_view: as_cuda_array, from_dlpack), read-only when its
 * exporter says so.  On the CPU target its memory is host memory (device
 * GJ_EXEC_HOST); runtime/exec.h hides the difference.  np.asarray(d)
 * copies to the host, as numba's __array__ does.
 *
 * Host arrays are read through the buffer protocol (Py_buffer is in the
 * limited API since 3.11), so numpy's C API is never needed; numpy itself is
 * imported lazily for dtypes and for the few conversions done in Python
 * (ascontiguousarray, copyto).  Copies of 1 MiB or more release the GIL.
 */
#include "devicearray.h"

#include <stddef.h>
#include <string.h>

#include <structmember.h>

#include "cai.h"
#include "daview.h"
#include "dlpack.h"
#include "module.h"
#include "stream.h"

enum { GIL_RELEASE_BYTES = 1 << 20 };

/* ---- element types -------------------------------------------------------- */

const GjDtype gj_py_dtypes[GJ_DT_COUNT] = {
    [GJ_DT_BOOL] = {"bool", 'b', 1, &gj_ty_bool},
    [GJ_DT_INT8] = {"int8", 'i', 1, &gj_ty_int8},
    [GJ_DT_INT16] = {"int16", 'i', 2, &gj_ty_int16},
    [GJ_DT_INT32] = {"int32", 'i', 4, &gj_ty_int32},
    [GJ_DT_INT64] = {"int64", 'i', 8, &gj_ty_int64},
    [GJ_DT_UINT8] = {"uint8", 'u', 1, &gj_ty_uint8},
    [GJ_DT_UINT16] = {"uint16", 'u', 2, &gj_ty_uint16},
    [GJ_DT_UINT32] = {"uint32", 'u', 4, &gj_ty_uint32},
    [GJ_DT_UINT64] = {"uint64", 'u', 8, &gj_ty_uint64},
    [GJ_DT_FLOAT16] = {"float16", 'f', 2, &gj_ty_float16},
    [GJ_DT_FLOAT32] = {"float32", 'f', 4, &gj_ty_float32},
    [GJ_DT_FLOAT64] = {"float64", 'f', 8, &gj_ty_float64},
    [GJ_DT_COMPLEX64] = {"complex64", 'c', 8, &gj_ty_complex64},
    [GJ_DT_COMPLEX128] = {"complex128", 'c', 16, &gj_ty_complex128},
};

int gj_py_dtype_lookup(char kind, Py_ssize_t itemsize) {
    for (int i = 0; i < GJ_DT_COUNT; i++)
        if (gj_py_dtypes[i].kind == kind && gj_py_dtypes[i].itemsize == itemsize)
            return i;
    return -1;
}

int gj_py_dtype_from_format(const char *format, Py_ssize_t itemsize) {
    if (!format)
        return gj_py_dtype_lookup('u', 1);   /* PyBUF_FORMAT not given: bytes */
    /* '@' native, '=' and '<' little-endian standard sizes: the itemsize
       decides the width either way.  Big-endian data has no gpujit type. */
    if (*format == '@' || *format == '=' || *format == '<')
        format++;
    else if (*format == '>' || *format == '!')
        return -1;
    char kind;
    switch (format[0]) {
    case '?': kind = 'b'; break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n': kind = 'i'; break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N': kind = 'u'; break;
    case 'e':
    case 'f':
    case 'd': kind = 'f'; break;
    case 'Z':
        kind = 'c';
        format++;
        break;
    default: return -1;
    }
    if (format[1] != '\0')
        return -1;
    return gj_py_dtype_lookup(kind, itemsize);
}

int gj_py_dtype_id_of(PyObject *dtype) {
    PyObject *kind = PyObject_GetAttrString(dtype, "kind");
    PyObject *isz = kind ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
    PyObject *order = isz ? PyObject_GetAttrString(dtype, "byteorder") : NULL;
    int id = -1;
    if (order) {
        const char *k = PyUnicode_AsUTF8AndSize(kind, NULL);
        const char *o = PyUnicode_AsUTF8AndSize(order, NULL);
        Py_ssize_t n = PyLong_AsSsize_t(isz);
        if (k && o && n > 0 && o[0] != '>')
            id = gj_py_dtype_lookup(k[0], n);
    }
    Py_XDECREF(kind);
    Py_XDECREF(isz);
    Py_XDECREF(order);
    if (id < 0 && !PyErr_Occurred()) {
        PyObject *what = gj_py_dtype_text(dtype);
        if (what)
            PyErr_Format(PyExc_TypeError, "gpujit has no type for dtype %U " GJ_PY_DTYPES, what);
        Py_XDECREF(what);
    }
    return id;
}

PyObject *gj_py_dtype_text(PyObject *dtype) {
    /* NumPy's repr gives datetime64 and timedelta64 by their codes
       (dtype('<M8[D]')); their names are what users search for. */
    PyObject *kind = PyObject_GetAttrString(dtype, "kind");
    const char *k = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8AndSize(kind, NULL) : NULL;
    PyObject *name =
        k && (k[0] == 'M' || k[0] == 'm') ? PyObject_GetAttrString(dtype, "name") : NULL;
    Py_XDECREF(kind);
    PyErr_Clear();
    PyObject *text =
        name ? PyUnicode_FromFormat("%R (%S)", dtype, name) : PyUnicode_FromFormat("%R", dtype);
    Py_XDECREF(name);
    return text;
}

/* ---- layout ------------------------------------------------------------- */

int gj_py_contiguous(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                     Py_ssize_t itemsize, char order) {
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 1;
    Py_ssize_t step = itemsize;
    for (int k = 0; k < ndim; k++) {
        int i = order == 'F' ? k : ndim - 1 - k;
        if (shape[i] != 1 && strides[i] != step)
            return 0;
        step *= shape[i];
    }
    return 1;
}

void gj_py_contiguous_strides(int ndim, const Py_ssize_t *shape, Py_ssize_t itemsize, char order,
                              Py_ssize_t *strides) {
    Py_ssize_t step = itemsize;
    for (int k = 0; k < ndim; k++) {
        int i = order == 'F' ? k : ndim - 1 - k;
        strides[i] = step;
        step *= shape[i] ? shape[i] : 1;
    }
}

char gj_py_layout(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                  Py_ssize_t itemsize) {
    if (gj_py_contiguous(ndim, shape, strides, itemsize, 'C'))
        return 'C';
    return gj_py_contiguous(ndim, shape, strides, itemsize, 'F') ? 'F' : 'A';
}

/* ---- the type -------------------------------------------------------------- */

static GjPyState *state_of(PyObject *self) { return gj_py_state_of_type(Py_TYPE(self)); }

/* As NumPy says it: the element count times the item size does not fit. */
static GjDeviceArray *too_big(void) {
    PyErr_SetString(PyExc_ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is "
                                      "larger than the maximum possible size");
    return NULL;
}

/* A DeviceArray of the given dims (strides in bytes) with no memory yet. */
static GjDeviceArray *new_header(GjPyState *st, int device, int ndim, const Py_ssize_t *shape,
                                 const Py_ssize_t *strides, int id, PyObject *dtype) {
    GjDeviceArray *d = PyObject_New(GjDeviceArray, st->DeviceArrayType);
    if (!d)
        return NULL;
    d->ptr = 0;
    d->nbytes = 0;
    d->device = device;
    d->ndim = ndim;
    d->dtype_id = id;
    d->itemsize = gj_py_dtypes[id].itemsize;
    d->size = 1;
    for (int i = 0; i < ndim; i++) {
        d->shape[i] = shape[i];
        d->strides[i] = strides[i];
        d->size *= shape[i];
    }
    d->layout = gj_py_layout(ndim, shape, strides, d->itemsize);
    d->owns = 0;
    d->readonly = 0;
    d->dtype = Py_NewRef(dtype);
    d->base = NULL;
    d->weakreflist = NULL;
    return d;
}

GjDeviceArray *gj_py_devicearray_view(GjPyState *st, const GjDevView *v, int device,
                                      PyObject *base) {
    Py_ssize_t strides[GJ_PY_MAX_NDIM], step = gj_py_dtypes[v->dtype].itemsize;
    for (int i = v->ndim - 1; i >= 0; i--) {
        strides[i] = v->has_strides ? v->strides[i] : step;
        step *= v->shape[i];
    }
    PyObject *name = PyUnicode_FromString(gj_py_dtypes[v->dtype].name);
    PyObject *dtype = name ? gj_py_as_dtype(st, name) : NULL;
    Py_XDECREF(name);
    GjDeviceArray *d =
        dtype ? new_header(st, device, v->ndim, v->shape, strides, v->dtype, dtype) : NULL;
    Py_XDECREF(dtype);
    if (d) {
        d->ptr = v->ptr;
        d->readonly = v->readonly;
        d->base = Py_NewRef(base);
    }
    return d;
}

GjDeviceArray *gj_py_devicearray_new(GjPyState *st, int ndim, const Py_ssize_t *shape,
                                     const Py_ssize_t *strides, PyObject *dtype) {
    int id = gj_py_dtype_id_of(dtype);
    if (id < 0)
        return NULL;
    Py_ssize_t itemsize = gj_py_dtypes[id].itemsize, size = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return NULL;
        }
        if (__builtin_mul_overflow(size, shape[i], &size))
            return too_big();
    }
    /* Bytes spanned: the largest offset reached plus one element. */
    Py_ssize_t span = size ? itemsize : 0;
    Py_ssize_t own_strides[GJ_PY_MAX_NDIM];
    if (!strides) {
        Py_ssize_t step = itemsize;
        for (int i = ndim - 1; i >= 0; i--) {
            own_strides[i] = step;
            if (__builtin_mul_overflow(step, shape[i] ? shape[i] : 1, &step))
                return too_big();
        }
        strides = own_strides;
        if (__builtin_mul_overflow(size, itemsize, &span))
            return too_big();
    } else if (size) {
        for (int i = 0; i < ndim; i++) {
            Py_ssize_t reach;
            if (strides[i] < 0) {
                PyErr_SetString(PyExc_ValueError,
                                "negative strides are not supported for a new device array");
                return NULL;
            }
            if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
                __builtin_add_overflow(span, reach, &span))
                return too_big();
        }
    }
    int device;
    if (gj_py_ensure(st) < 0 || gj_py_device(st, &device) < 0)
        return NULL;
    GjDeviceArray *d = new_header(st, device, ndim, shape, strides, id, dtype);
    if (!d)
        return NULL;
    d->nbytes = (size_t)span;
    d->owns = 1;
    GjExecError err;
    if (gj_exec_alloc(device, (size_t)span, &d->ptr, &err) != GJ_EXEC_OK) {
        Py_DECREF(d);
        return (GjDeviceArray *)gj_py_raise_cuda(st, &err);
    }
    return d;
}

static void devicearray_dealloc(PyObject *self) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    PyTypeObject *tp = Py_TYPE(self);
    if (d->weakreflist)
        PyObject_ClearWeakRefs(self);
    if (d->owns && d->ptr) {
        /* Free on the owning device; errors (a lost context) are moot here. */
        GjExecError err;
        gj_exec_free(d->device, d->ptr, &err);
    }
    Py_XDECREF(d->dtype);
    Py_XDECREF(d->base);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

PyObject *gj_py_ssize_tuple(int n, const Py_ssize_t *v) {
    PyObject *t = PyTuple_New(n);
    if (!t)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromSsize_t(v[i]);
        if (!x || PyTuple_SetItem(t, i, x) < 0) {
            Py_DECREF(t);
            return NULL;
        }
    }
    return t;
}

static PyObject *da_shape(PyObject *self, void *c) {
    (void)c;
    GjDeviceArray *d = (GjDeviceArray *)self;
    return gj_py_ssize_tuple(d->ndim, d->shape);
}

static PyObject *da_strides(PyObject *self, void *c) {
    (void)c;
    GjDeviceArray *d = (GjDeviceArray *)self;
    return gj_py_ssize_tuple(d->ndim, d->strides);
}

static PyObject *da_dtype(PyObject *self, void *c) {
    (void)c;
    return Py_NewRef(((GjDeviceArray *)self)->dtype);
}

static PyObject *da_size(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromSsize_t(((GjDeviceArray *)self)->size);
}

static PyObject *da_ndim(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromLong(((GjDeviceArray *)self)->ndim);
}

static PyObject *da_nbytes(PyObject *self, void *c) {
    (void)c;
    GjDeviceArray *d = (GjDeviceArray *)self;
    return PyLong_FromSsize_t(d->size * d->itemsize);
}

static PyObject *da_itemsize(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromSsize_t(((GjDeviceArray *)self)->itemsize);
}

static PyObject *da_device_ptr(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(((GjDeviceArray *)self)->ptr);
}

static PyObject *da_base(PyObject *self, void *c) {
    (void)c;
    PyObject *base = ((GjDeviceArray *)self)->base;
    return Py_NewRef(base ? base : Py_None);
}

static PyObject *da_cai(PyObject *self, void *c) {
    (void)c;
    GjDeviceArray *d = (GjDeviceArray *)self;
    if (d->device == GJ_EXEC_HOST) {
        PyErr_SetString(PyExc_AttributeError, "a DeviceArray of the CPU target lives in host "
                                              "memory and has no __cuda_array_interface__");
        return NULL;
    }
    PyObject *shape = gj_py_ssize_tuple(d->ndim, d->shape);
    PyObject *strides =
        d->layout == 'C' ? Py_NewRef(Py_None) : gj_py_ssize_tuple(d->ndim, d->strides);
    PyObject *typestr = PyObject_GetAttrString(d->dtype, "str");
    PyObject *r = NULL;
    if (shape && strides && typestr)
        /* stream 1: gpujit queues work on the legacy default stream */
        r = Py_BuildValue("{s:O,s:O,s:O,s:(KO),s:i,s:i}", "shape", shape, "strides", strides,
                          "typestr", typestr, "data", (unsigned long long)d->ptr,
                          d->readonly ? Py_True : Py_False, "version", 3, "stream", 1);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(typestr);
    return r;
}

static Py_ssize_t da_len(PyObject *self) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    if (d->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d device array");
        return -1;
    }
    return d->shape[0];
}

static PyObject *da_repr(PyObject *self) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    PyObject *shape = gj_py_ssize_tuple(d->ndim, d->shape);
    if (!shape)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<gpujit.DeviceArray shape=%R dtype=%s device=%d>", shape,
                                       gj_py_dtypes[d->dtype_id].name, d->device);
    Py_DECREF(shape);
    return r;
}

/* ---- copies ---------------------------------------------------------------- */

int gj_py_da_copy(GjPyState *st, int device, GjPyCopyDir dir, void *host, uint64_t dst,
                  uint64_t src, size_t bytes, void *stream) {
    return gj_py_da_copy_between(st, device, device, dir, host, dst, src, bytes, stream);
}

int gj_py_da_copy_between(GjPyState *st, int device, int src_device, GjPyCopyDir dir, void *host,
                          uint64_t dst, uint64_t src, size_t bytes, void *stream) {
    GjExecError err;
    GjExecStatus rc;
    int release = bytes >= GIL_RELEASE_BYTES;
    PyThreadState *ts = release ? PyEval_SaveThread() : NULL;
    switch (dir) {
    case GJ_PY_HTOD: rc = gj_exec_htod(device, dst, host, bytes, stream, &err); break;
    case GJ_PY_DTOH: rc = gj_exec_dtoh(device, host, src, bytes, stream, &err); break;
    case GJ_PY_DTOD:
        rc = gj_exec_copy_between(device, dst, src_device, src, bytes, stream, &err);
        break;
    default: rc = GJ_EXEC_OK; break;
    }
    if (release)
        PyEval_RestoreThread(ts);
    if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    return 0;
}

/* Gets a C- or F-contiguous buffer of `obj`, converting it with
   numpy.ascontiguousarray when it is not contiguous or has no buffer.
   *holder keeps the converted object alive (NULL if obj was used as is). */
static int get_contiguous(GjPyState *st, PyObject *obj, Py_buffer *view, PyObject **holder) {
    *holder = NULL;
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) == 0) {
        if (PyBuffer_IsContiguous(view, 'A'))
            return 0;
        PyBuffer_Release(view);
    } else {
        PyErr_Clear();
    }
    if (gj_py_numpy(st) < 0)
        return -1;
    /* asarray first: ascontiguousarray makes a Python number 1-d, where
       to_device(5) is 0-d, as numba's and np.asarray(5) */
    PyObject *arr = PyObject_CallMethod(st->np, "asarray", "(O)", obj);
    if (!arr)
        return -1;
    if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS_RO) == 0) {
        if (PyBuffer_IsContiguous(view, 'A')) {
            *holder = arr;
            return 0;
        }
        PyBuffer_Release(view);
        *holder = PyObject_CallFunctionObjArgs(st->np_ascontiguousarray, arr, NULL);
        Py_DECREF(arr);
        if (!*holder)
            return -1;
    } else {
        PyErr_Clear();   /* no buffer format: the dtype says why, below */
        *holder = arr;
    }
    if (PyObject_GetBuffer(*holder, view, PyBUF_RECORDS_RO) < 0) {
        /* a dtype with no buffer format (datetime64, timedelta64): say that
           gpujit has no type for it, as for any other */
        PyObject *dtype = PyObject_GetAttrString(*holder, "dtype");
        if (dtype) {
            PyErr_Clear();
            gj_py_dtype_id_of(dtype);
            Py_DECREF(dtype);
        }
        Py_CLEAR(*holder);
        return -1;
    }
    return 0;
}

/* numpy.dtype of a buffer's format (of the array `src` of that buffer). */
static PyObject *buffer_dtype(GjPyState *st, PyObject *src, const Py_buffer *view, int *id) {
    *id = gj_py_dtype_from_format(view->format, view->itemsize);
    if (*id < 0) {
        PyObject *dt = PyObject_GetAttrString(src, "dtype");
        PyErr_Clear();
        PyObject *what = dt ? gj_py_dtype_text(dt) : NULL;
        if (what)
            PyErr_Format(PyExc_TypeError, "gpujit has no type for dtype %U " GJ_PY_DTYPES, what);
        else if (!dt)
            PyErr_Format(PyExc_TypeError, "gpujit has no type for buffer format '%s'",
                         view->format ? view->format : "B");
        Py_XDECREF(what);
        Py_XDECREF(dt);
        return NULL;
    }
    PyObject *name = PyUnicode_FromString(gj_py_dtypes[*id].name);
    PyObject *dt = name ? gj_py_as_dtype(st, name) : NULL;
    Py_XDECREF(name);
    return dt;
}

PyObject *gj_py_to_device(GjPyState *st, PyObject *ary, void *stream) {
    if (Py_IS_TYPE(ary, st->DeviceArrayType))
        return Py_NewRef(ary);
    Py_buffer view;
    PyObject *holder;
    if (get_contiguous(st, ary, &view, &holder) < 0)
        return NULL;
    GjDeviceArray *d = NULL;
    int id;
    PyObject *dtype = NULL;
    if (view.ndim > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "array has %d dimensions; gpujit supports up to %d",
                     view.ndim, (int)GJ_PY_MAX_NDIM);
        goto done;
    }
    if (!(dtype = buffer_dtype(st, holder ? holder : ary, &view, &id)))
        goto done;
    Py_ssize_t one = 1, strides[GJ_PY_MAX_NDIM];
    const Py_ssize_t *shape = view.ndim ? view.shape : &one;
    for (int i = 0; i < view.ndim; i++)
        strides[i] = view.strides ? view.strides[i] : 0;
    if (!view.strides)   /* PyBUF_RECORDS_RO asks for strides; be safe anyway */
        for (Py_ssize_t i = view.ndim - 1, step = view.itemsize; i >= 0; i--) {
            strides[i] = step;
            step *= view.shape[i];
        }
    d = gj_py_devicearray_new(st, view.ndim, shape, strides, dtype);
    if (d &&
        gj_py_da_copy(st, d->device, GJ_PY_HTOD, view.buf, d->ptr, 0, (size_t)view.len, stream) < 0)
        Py_CLEAR(d);
done:
    Py_XDECREF(dtype);
    PyBuffer_Release(&view);
    Py_XDECREF(holder);
    return (PyObject *)d;
}

/* arr (a host numpy array) with d's shape: arr itself, or a view of arr
   reshaped when the shapes differ only by extents of 1 (numba's rule for
   copies); ValueError naming both shapes otherwise. */
static PyObject *fit_shape(GjDeviceArray *d, PyObject *arr, const char *what) {
    Py_buffer v;
    if (PyObject_GetBuffer(arr, &v, PyBUF_RECORDS_RO) < 0)
        return NULL;
    int same = v.ndim == d->ndim, i = 0, j = 0;
    for (int k = 0; same && k < d->ndim; k++)
        same = v.shape[k] == d->shape[k];
    int squeezed = 1;   /* the extents other than 1, pairwise equal */
    while (squeezed) {
        while (i < d->ndim && d->shape[i] == 1)
            i++;
        while (j < v.ndim && v.shape[j] == 1)
            j++;
        if (i == d->ndim || j == v.ndim) {
            squeezed = i == d->ndim && j == v.ndim;
            break;
        }
        squeezed = d->shape[i++] == v.shape[j++];
    }
    PyBuffer_Release(&v);
    if (same)
        return Py_NewRef(arr);
    PyObject *shape = gj_py_ssize_tuple(d->ndim, d->shape), *r = NULL;
    if (shape && squeezed) {
        r = PyObject_CallMethod(arr, "reshape", "(O)", shape);   /* () too */
    } else if (shape) {
        PyObject *other = PyObject_GetAttrString(arr, "shape");
        if (other)
            PyErr_Format(PyExc_ValueError, "%s: incompatible shape: %R (device) vs. %R (host)",
                         what, shape, other);
        Py_XDECREF(other);
    }
    Py_XDECREF(shape);
    return r;
}

/* 0 when `other`, an array or values copied to or from d, has d's dtype,
   as numba requires (a copy never casts: int64 2**40 would become 0 in
   int32); -1 with TypeError naming both.  Values without a dtype (a list,
   a Python number) may be of the same kind (ints into an int32 array:
   NumPy then refuses a value that does not fit). */
static int check_dtype(GjPyState *st, const GjDeviceArray *d, PyObject *other, const char *what) {
    PyObject *dtype = Py_IS_TYPE(other, st->DeviceArrayType)
                          ? Py_NewRef(((GjDeviceArray *)other)->dtype)
                          : PyObject_GetAttrString(other, "dtype");
    int ok;
    if (dtype) {
        ok = PyObject_RichCompareBool(dtype, d->dtype, Py_EQ);
    } else {
        PyErr_Clear();
        PyObject *values = PyObject_CallMethod(st->np, "asarray", "(O)", other);
        dtype = values ? PyObject_GetAttrString(values, "dtype") : NULL;
        PyObject *can =
            dtype ? PyObject_CallMethod(st->np, "can_cast", "OOs", dtype, d->dtype, "same_kind")
                  : NULL;
        ok = can ? PyObject_IsTrue(can) : -1;
        /* Python ints (int64 to NumPy) into an unsigned array: NumPy refuses
           each one that does not fit (a negative one too) as it converts */
        int id = ok == 0 ? gj_py_dtype_id_of(dtype) : -1;
        if (id < 0)
            PyErr_Clear();   /* values of a dtype gpujit has none for: refused below */
        else if (gj_py_dtypes[id].kind == 'i' && gj_py_dtypes[d->dtype_id].kind == 'u')
            ok = 1;
        Py_XDECREF(values);
        Py_XDECREF(can);
    }
    if (ok == 0)
        PyErr_Format(PyExc_TypeError,
                     "%s: incompatible dtype: %S (device) vs. %S (%s); "
                     "convert it first (numpy's astype)",
                     what, d->dtype, dtype,
                     Py_IS_TYPE(other, st->DeviceArrayType) ? "device" : "host");
    Py_XDECREF(dtype);
    return ok == 1 ? 0 : -1;
}

/* Copies d into `out`, a host array of d's shape: in one copy when both are
   contiguous in d's order with d's dtype, else through a new host array and
   numpy.copyto (any layout of out; dtype converted as copyto does). */
static int read_into(GjPyState *st, GjDeviceArray *d, PyObject *out, void *stream) {
    Py_buffer v;
    if (d->layout != 'A' && PyObject_GetBuffer(out, &v, PyBUF_RECORDS) == 0) {
        int direct = gj_py_dtype_from_format(v.format, v.itemsize) == d->dtype_id &&
                     gj_py_contiguous(v.ndim, v.shape, v.strides, v.itemsize, d->layout);
        int rc = direct ? gj_py_da_copy(st, d->device, GJ_PY_DTOH, v.buf, 0, d->ptr,
                                        (size_t)(d->size * d->itemsize), stream)
                        : 0;
        PyBuffer_Release(&v);
        if (direct)
            return rc;
    }
    PyErr_Clear();   /* no writable buffer: copyto says why */
    PyObject *host = gj_py_da_to_host(st, d, stream);
    PyObject *r = host ? PyObject_CallFunctionObjArgs(st->np_copyto, out, host, NULL) : NULL;
    Py_XDECREF(host);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *da_copy_to_host(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ary", "stream", NULL};
    PyObject *ary = Py_None, *stream_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:copy_to_host", kwlist, &ary, &stream_obj))
        return NULL;
    GjDeviceArray *d = (GjDeviceArray *)self;
    GjPyState *st = state_of(self);
    void *stream;
    if (gj_py_stream_handle(st, stream_obj, &stream) < 0 || gj_py_numpy(st) < 0)
        return NULL;
    if (ary == Py_None)
        return gj_py_da_to_host(st, d, stream);
    if (!PyObject_TypeCheck(ary, (PyTypeObject *)st->np_ndarray)) {
        PyObject *tname = gj_py_type_name(ary);
        PyErr_Format(PyExc_TypeError,
                     "copy_to_host(ary): ary must be a NumPy array to write "
                     "into, not %S%s",
                     tname,
                     Py_IS_TYPE(ary, st->DeviceArrayType)
                         ? " (to copy between device arrays, use dst.copy_to_device(src))"
                         : "");
        Py_XDECREF(tname);
        return NULL;
    }
    if (check_dtype(st, d, ary, "copy_to_host()") < 0)
        return NULL;
    PyObject *fitted = fit_shape(d, ary, "copy_to_host()");
    int rc = fitted ? read_into(st, d, fitted, stream) : -1;
    Py_XDECREF(fitted);
    return rc < 0 ? NULL : Py_NewRef(ary);
}

static PyObject *da_copy_to_device(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ary", "stream", NULL};
    PyObject *ary, *stream_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:copy_to_device", kwlist, &ary, &stream_obj))
        return NULL;
    GjDeviceArray *d = (GjDeviceArray *)self;
    GjPyState *st = state_of(self);
    void *stream;
    if (gj_py_stream_handle(st, stream_obj, &stream) < 0 || gj_py_numpy(st) < 0)
        return NULL;
    if (d->readonly) {
        PyErr_SetString(PyExc_ValueError, "copy_to_device(): the device array is a read-only "
                                          "view");
        return NULL;
    }
    PyObject *staged = NULL;
    if (check_dtype(st, d, ary, "copy_to_device()") < 0)
        return NULL;
    if (Py_IS_TYPE(ary, st->DeviceArrayType)) {
        GjDeviceArray *s = (GjDeviceArray *)ary;
        int same = s->ndim == d->ndim && s->layout == d->layout && d->layout != 'A' &&
                   (s->device == GJ_EXEC_HOST) == (d->device == GJ_EXEC_HOST);
        for (int i = 0; same && i < d->ndim; i++)
            same = s->shape[i] == d->shape[i];
        if (same) {   /* on one device, or from another GPU's memory (peer copy) */
            if (gj_py_da_copy_between(st, d->device, s->device, GJ_PY_DTOD, NULL, d->ptr, s->ptr,
                                      (size_t)(d->size * d->itemsize), stream) < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        /* Another layout or target: through the host. */
        if (!(staged = gj_py_da_to_host(st, s, stream)))
            return NULL;
        ary = staged;
    }
    PyObject *conv = PyObject_CallMethod(st->np, "asarray", "OO", ary, d->dtype);
    PyObject *fitted = conv ? fit_shape(d, conv, "copy_to_device()") : NULL;
    int rc = fitted ? gj_py_da_write(st, d, fitted, stream) : -1;
    Py_XDECREF(fitted);
    Py_XDECREF(conv);
    Py_XDECREF(staged);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *da_array(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    if (copy == Py_False) {
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as "
                                          "requested: a DeviceArray is always copied to the host");
        return NULL;
    }
    PyObject *host = gj_py_da_to_host(state_of(self), (GjDeviceArray *)self, NULL);
    if (!host || dtype == Py_None)
        return host;
    PyObject *r = PyObject_CallMethod(host, "astype", "O", dtype);
    Py_DECREF(host);
    return r;
}

static int contiguous(PyObject *self, char order) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    return gj_py_contiguous(d->ndim, d->shape, d->strides, d->itemsize, order);
}

static PyObject *da_is_c_contiguous(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(contiguous(self, 'C'));
}

static PyObject *da_is_f_contiguous(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(contiguous(self, 'F'));
}

static PyObject *da_flags(PyObject *self, void *c) {
    (void)c;
    return Py_BuildValue("{s:O,s:O}", "C_CONTIGUOUS", contiguous(self, 'C') ? Py_True : Py_False,
                         "F_CONTIGUOUS", contiguous(self, 'F') ? Py_True : Py_False);
}

static PyObject *da_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    return gj_py_reduce(self, "reduce_device_array");
}

static PyMethodDef da_methods[] = {
    {"__reduce__", da_reduce, METH_NOARGS,
     "__reduce__()\n--\n\nPickles the array through the host, as numba does: it unpickles\n"
     "as a copy on the receiving process's current device."},
    {"copy_to_host", (PyCFunction)(void (*)(void))da_copy_to_host, METH_VARARGS | METH_KEYWORDS,
     "copy_to_host(ary=None, stream=0)\n--\n\n"
     "Copies the array to host memory.\n\n"
     "Parameters\n----------\n"
     "ary : numpy.ndarray, optional\n"
     "    Host array of the same shape (extents of 1 aside) and dtype to write into\n"
     "    (written), of any layout (a non-contiguous one is filled through a contiguous\n"
     "    copy); a new\n"
     "    one, in this array's order (C when not contiguous), is made if None.\n"
     "stream : Stream or 0\n"
     "    Stream to queue the copy on; with a stream the copy may still be running on\n"
     "    return (synchronize the stream before reading).\n\n"
     "Returns\n-------\nnumpy.ndarray\n    The host array (shape and dtype of this array).\n\n"
     "Raises\n------\nValueError\n    If `ary`'s shape differs (\"incompatible shape\").\n"
     "TypeError\n    If `ary`'s dtype differs (\"incompatible dtype\"): a copy never casts.\n"
     "CudaError\n"
     "    If the copy fails (a kernel fault surfaces here as CudaKernelFault)."},
    {"copy_to_device", (PyCFunction)(void (*)(void))da_copy_to_device, METH_VARARGS | METH_KEYWORDS,
     "copy_to_device(ary, stream=0)\n--\n\n"
     "Overwrites this array (any layout, a view included) with `ary`: a host array or a\n"
     "DeviceArray of the same shape (extents of 1 aside) and dtype, in any layout (a\n"
     "list or a Python number: values of the same kind, Python ints for any integer\n"
     "array, converted by NumPy, which refuses an int that does not fit). A DeviceArray of the "
     "same shape and contiguous\n"
     "layout is copied on the device (from another GPU's memory: GPU to GPU,\n"
     "cuMemcpyPeer); any other goes through the host.\n\n"
     "Raises\n------\nValueError\n    If the shapes differ (\"incompatible shape\").\n"
     "TypeError\n    If the dtypes differ (\"incompatible dtype\"), as in numba: a copy\n"
     "    never casts."},
    {"__dlpack__", (PyCFunction)(void (*)(void))gj_py_dlpack_export, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Exports the array without copying, as a DLPack capsule (the Python array API).\n\n"
     "Parameters\n----------\n"
     "stream : int or None\n"
     "    The consumer's CUDA stream (1: legacy default, 2: per-thread default, else a\n"
     "    CUstream handle; None: the legacy default; -1: no ordering).  It is made to\n"
     "    wait for the work gpujit has queued, without blocking the host.  None on the\n"
     "    CPU target.\n"
     "max_version : tuple of two ints, optional\n"
     "    The newest DLPack version the consumer reads; (1, 0) or newer gets a\n"
     "    \"dltensor_versioned\" capsule, else a \"dltensor\" one.\n"
     "dl_device : tuple (device type, device id), optional\n"
     "    Must be this array's device (__dlpack_device__()).\n"
     "copy : bool or None\n"
     "    True is refused: gpujit exports only without copying.\n\n"
     "Returns\n-------\nPyCapsule\n    Keeps this array alive until the consumer calls the "
     "tensor's deleter.\n\n"
     "Raises\n------\nBufferError\n    For copy=True, another dl_device, or a read-only "
     "array asked for\n    as a \"dltensor\" (which cannot say read-only).\n"
     "ValueError\n    For stream 0, or a stream on the CPU target."},
    {"__dlpack_device__", gj_py_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(device type, device id): (2, ordinal) (kDLCUDA) for GPU "
     "memory,\n(1, 0) (kDLCPU) on the CPU target."},
    {"__array__", (PyCFunction)(void (*)(void))da_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None)\n--\n\n"
     "A host copy (numpy.asarray(d)), as copy_to_host(); copy=False is a ValueError."},
    {"getitem", (PyCFunction)(void (*)(void))gj_py_da_getitem, METH_VARARGS | METH_KEYWORDS,
     "getitem(key, stream=0)\n--\n\nd[key], reading an element on `stream`."},
    {"setitem", (PyCFunction)(void (*)(void))gj_py_da_setitem, METH_VARARGS | METH_KEYWORDS,
     "setitem(key, value, stream=0)\n--\n\nd[key] = value, written on `stream`."},
    {"reshape", (PyCFunction)(void (*)(void))gj_py_da_reshape, METH_VARARGS | METH_KEYWORDS,
     "reshape(*newshape, order='C')\n--\n\n"
     "A view with shape `newshape` (ints or one tuple; one extent may be -1).\n\n"
     "Parameters\n----------\norder : {'C', 'F', 'A'}\n"
     "    The order the elements are read in ('A': F if the array is F-contiguous).\n\n"
     "Raises\n------\nValueError\n    If the sizes differ.\nNotImplementedError\n"
     "    If the array is not contiguous in `order` (\"operation requires copying\"),\n"
     "    unless the shape is unchanged."},
    {"ravel", (PyCFunction)(void (*)(void))gj_py_da_ravel, METH_VARARGS | METH_KEYWORDS,
     "ravel(order='C', stream=0)\n--\n\n"
     "A 1-d view of a contiguous array.\n\n"
     "Raises\n------\nNotImplementedError\n"
     "    If the array is not contiguous in `order` (\"operation requires copying\")."},
    {"view", gj_py_da_view, METH_O,
     "view(dtype)\n--\n\n"
     "A view of the same memory as another dtype; a different itemsize rescales the\n"
     "last axis, which must be contiguous (NumPy's rules).\n\n"
     "Raises\n------\nValueError\n    As numpy.ndarray.view."},
    {"transpose", gj_py_da_transpose, METH_VARARGS,
     "transpose(*axes)\n--\n\n"
     "A view with the axes permuted (reversed without `axes`), as NumPy's.\n\n"
     "Raises\n------\nValueError\n    If `axes` is not a permutation of the axes."},
    {"is_c_contiguous", da_is_c_contiguous, METH_NOARGS,
     "is_c_contiguous()\n--\n\nTrue if the array is C-contiguous."},
    {"is_f_contiguous", da_is_f_contiguous, METH_NOARGS,
     "is_f_contiguous()\n--\n\nTrue if the array is Fortran-contiguous."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef da_getset[] = {
    {"shape", da_shape, NULL, "Extents, a tuple of ints.", NULL},
    {"strides", da_strides, NULL, "Strides in bytes, a tuple of ints.", NULL},
    {"dtype", da_dtype, NULL, "Element type, a numpy.dtype.", NULL},
    {"size", da_size, NULL, "Number of elements.", NULL},
    {"ndim", da_ndim, NULL, "Number of dimensions.", NULL},
    {"nbytes", da_nbytes, NULL, "Bytes of the elements (size * itemsize).", NULL},
    {"itemsize", da_itemsize, NULL, "Bytes per element.", NULL},
    {"device_ctypes_pointer_value", da_device_ptr, NULL, "The device address, an int.", NULL},
    {"T", gj_py_da_T, NULL, "The transpose, a view (axes reversed).", NULL},
    {"flags", da_flags, NULL,
     "A new dict: 'C_CONTIGUOUS' and 'F_CONTIGUOUS' (bools), as numba's flags.", NULL},
    {"base", da_base, NULL,
     "What keeps a view's memory alive: the DeviceArray that owns it, the exporter\n"
     "given to as_cuda_array, or a capsule owning a from_dlpack tensor; None for an\n"
     "array that owns its memory.",
     NULL},
    {"__cuda_array_interface__", da_cai, NULL,
     "The CUDA Array Interface (version 3): lets CuPy, PyTorch and numba use the\n"
     "memory without a copy.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef da_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(GjDeviceArray, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot da_slots[] = {
    {Py_tp_dealloc, (void *)devicearray_dealloc},
    {Py_tp_repr, (void *)da_repr},
    {Py_tp_methods, da_methods},
    {Py_tp_getset, da_getset},
    {Py_tp_members, da_members},
    {Py_sq_length, (void *)da_len},
    {Py_mp_length, (void *)da_len},
    {Py_mp_subscript, (void *)gj_py_da_subscript},
    {Py_mp_ass_subscript, (void *)gj_py_da_ass_subscript},
    {Py_tp_doc, "An array in GPU memory.\n\n"
                "Create with gpujit.to_device(), device_array() or device_array_like(). Kernel\n"
                "arguments that are DeviceArrays pass without a copy and the launch stays\n"
                "asynchronous; read results back with copy_to_host(). Indexing and slicing\n"
                "(d[2:10], d[:, 0], d[::-1]), reshape, ravel, T and view give views sharing\n"
                "the memory; d[i, j] reads one element; d[a:b] = x writes through."},
    {0, NULL},
};

static PyType_Spec da_spec = {
    .name = "gpujit.DeviceArray",
    .basicsize = sizeof(GjDeviceArray),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = da_slots,
};

int gj_py_devicearray_register(PyObject *module, GjPyState *st) {
    st->DeviceArrayType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &da_spec, NULL);
    if (!st->DeviceArrayType)
        return -1;
    return PyModule_AddObjectRef(module, "DeviceArray", (PyObject *)st->DeviceArrayType);
}
