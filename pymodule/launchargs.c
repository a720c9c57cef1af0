/*
 * launchargs.c - launchargs.h: a launch's arguments classified, checked
 * against the device (host memory on the CPU target, memory the driver
 * knows on a GPU, alignment, writability of views) and turned into GjArgs
 * and key words.  Input: the call's Python objects; output: GjArgs whose
 * buffers and views stay held until gj_py_args_release.  Errors name the
 * argument (1-based) and its parameter.
 */
#include "launchargs.h"

#include <string.h>

#include "cai.h"
#include "daview.h"
#include "devicearray.h"
#include "dispatcher.h"
#include "dlpack.h"
#include "hostmem.h"
#include "module.h"

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

static int set_dims(GjArg *a, int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
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
static int in_zero_copy_memory(GjPyState *st, GjArg *a) {
    const Py_buffer *v = &a->view;   /* PyBUF_RECORDS_RO: strides always given */
    Py_ssize_t lo, len;
    gj_py_extent(v->ndim, v->shape, v->strides, v->itemsize, &lo, &len);
    uint64_t dptr;
    if (len == 0 || !gj_py_hostmem_device_ptr(st, (const char *)v->buf + lo, (size_t)len, &dptr))
        return 0;
    a->kind = GJ_ARG_DEVICE;
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
static int parse_buffer(GjPyState *st, int device, PyObject *obj, GjArg *a) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_RECORDS_RO) < 0)
        return -2;   /* no buffer after all (CuPy arrays refuse one) */
    a->has_view = 1;
    a->dtype = gj_py_dtype_from_format(a->view.format, a->view.itemsize);
    if (a->dtype < 0)
        return -3;   /* an element type gpujit has none for: the caller says which argument */
    /* A NumPy scalar passes by value; a 0-d array is an array (x[()]). */
    int ndarray = is_ndarray(st, obj);
    if (a->view.ndim == 0 && !ndarray) {
        a->kind = GJ_ARG_SCALAR;
        memcpy(a->scalar, a->view.buf, (size_t)a->view.itemsize);
        PyBuffer_Release(&a->view);
        a->has_view = 0;
        return 0;
    }
    /* NumPy scalars with no gpujit type (datetime64, timedelta64, bytes_)
       export their bytes as a 1-d uint8 buffer: not an array to take. */
    if (!ndarray && is_numpy_scalar(st, obj))
        return -3;
    a->kind = GJ_ARG_HOST;
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
static int parse_device_view(GjPyState *st, int i, PyObject *obj, GjArg *a) {
    GjDevView v;
    int rc = gj_py_cai_view(st, obj, &v);
    if (rc < 0 || gj_py_cai_check_pointer(st, &v, i) < 0)
        return rc < 0 ? rc : -1;
    a->kind = GJ_ARG_DEVICE;
    a->dtype = v.dtype;
    a->ptr = v.ptr;
    a->readonly = v.readonly;
    return set_dims(a, v.ndim, v.shape, v.has_strides ? v.strides : NULL,
                    gj_py_dtypes[v.dtype].itemsize);
}

/* A DeviceArray argument, which must live where the launch runs. */
static int device_array_arg(int device, int i, const GjDeviceArray *da, GjArg *a) {
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
    a->kind = GJ_ARG_DEVICE;
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
static int parse_dlpack(GjPyState *st, int device, int i, PyObject *obj, GjArg *a) {
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
static int check_aligned(int i, const GjArg *a) {
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
static int parse_arg(GjPyState *st, GjDispatcher *d, int device, int i, PyObject *obj, GjArg *a,
                     uint32_t *word) {
    int rc, id;
    a->obj = obj;
    if (Py_IS_TYPE(obj, st->DeviceArrayType)) {   /* the common cases first, by exact type */
        if (device_array_arg(device, i, (GjDeviceArray *)obj, a) < 0)
            return -1;
    } else if ((id = numpy_scalar_id(st, obj)) >= 0) {
        a->kind = GJ_ARG_SCALAR;
        a->dtype = id;
        memcpy(a->scalar, (const char *)obj + sizeof(PyObject), (size_t)gj_py_dtypes[id].itemsize);
    } else if (PyBool_Check(obj)) {
        a->kind = GJ_ARG_SCALAR;
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
        a->kind = GJ_ARG_SCALAR;
        a->dtype = GJ_DT_INT64;
        memcpy(a->scalar, &v, sizeof v);
    } else if (PyFloat_Check(obj)) {
        double v = PyFloat_AsDouble(obj);
        a->kind = GJ_ARG_SCALAR;
        a->dtype = GJ_DT_FLOAT64;
        memcpy(a->scalar, &v, sizeof v);
    } else if (PyComplex_Check(obj)) {
        double v[2] = {PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)};
        a->kind = GJ_ARG_SCALAR;
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
    int arr = a->kind != GJ_ARG_SCALAR;
    if (arr && a->kind != GJ_ARG_HOST && check_aligned(i, a) < 0)
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

int gj_py_args_count(PyObject *obj, int *leaves, int *words) {
    return count_arg(obj, leaves, words, 0);
}

int gj_py_args_parse(GjPyState *st, GjDispatcher *d, int device, int i, PyObject *obj, GjArg *args,
                     int *parsed, uint32_t *key, int *w) {
    if (!Py_IS_TYPE(obj, st->DeviceArrayType) && PyTuple_Check(obj)) {
        Py_ssize_t m = PyTuple_Size(obj);
        key[(*w)++] = GJ_KEY_TUPLE(m);
        for (Py_ssize_t k = 0; k < m; k++)
            if (gj_py_args_parse(st, d, device, i, PyTuple_GetItem(obj, k), args, parsed, key, w) <
                0)
                return -1;
        return 0;
    }
    GjArg *a = &args[(*parsed)++];   /* gj_py_args_release() cleans up a partly parsed one too */
    return parse_arg(st, d, device, i, obj, a, &key[(*w)++]);
}

void gj_py_args_release(GjArg *args, int n) {
    for (int i = 0; i < n; i++) {
        GjArg *a = &args[i];
        if (a->has_view)
            PyBuffer_Release(&a->view);
        Py_XDECREF(a->contig);
        Py_XDECREF(a->dlview);
    }
}
