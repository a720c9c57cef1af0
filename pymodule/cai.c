/*
 * cai.c - device memory that other libraries own, as kernel arguments:
 * objects exporting __cuda_array_interface__ (CuPy arrays, PyTorch CUDA
 * tensors, numba device arrays, ...), version 0 to 3.
 *
 * The generic path reads the interface's dict: typestr, shape, strides
 * (None: C-contiguous), data (pointer, read-only flag), mask (must be None).
 * CuPy and PyTorch build that dict afresh on every access, in code that
 * costs more than the launch itself, so for exactly `cupy.ndarray` and
 * `torch.Tensor` the same fields are read from the object's own attributes
 * on every launch (`data.ptr` / `data_ptr()`, `shape`, `strides` /
 * `stride()` times the itemsize, `dtype`).  Nothing about an array is kept
 * between launches.  The one thing remembered is which gpujit dtype a
 * library's dtype object is, learned from the interface dict the first time
 * that dtype object comes by, so the fast path never types an argument the
 * generic path would not.  Anything unusual (a tensor in host memory or
 * one that requires grad, a dtype not yet seen) takes the generic path,
 * which raises the library's own error where there is one.  Attribute
 * names are interned once (GjPyState.cai_names): building a str per read
 * cost as much as the reads.
 *
 * gpujit.as_cuda_array (numba's name) reads the interface dict into a
 * DeviceArray view whose base is the exporter, waiting first for the
 * interface's stream (version 3) when asked to, as numba does.
 */
#include "cai.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daview.h"
#include "devicearray.h"
#include "module.h"

/* The dtype id the interface's typestr ("<f4", "|b1") names, or -1. */
static int typestr_dtype(const char *ts) {
    long itemsize = strlen(ts) >= 3 ? strtol(ts + 2, NULL, 10) : 0;
    return ts[0] == '>' ? -1 : gj_py_dtype_lookup(ts[1], itemsize);
}

/* shape and strides (tuples of ints; strides NULL for C order, else in units
   of `scale` bytes) into v; -1 raised. */
static int read_dims(PyObject *shape, PyObject *strides, Py_ssize_t scale, GjDevView *v) {
    Py_ssize_t n = PyTuple_Size(shape);
    if (n > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "array argument has %zd dimensions; at most %d", n,
                     (int)GJ_PY_MAX_NDIM);
        return -1;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_TypeError, "0-d __cuda_array_interface__ arguments are not "
                                         "supported; pass a scalar");
        return -1;
    }
    if (strides && (!PyTuple_Check(strides) || PyTuple_Size(strides) != n)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ strides do not match its "
                                         "shape");
        return -1;
    }
    v->ndim = (int)n;
    v->has_strides = strides != NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        v->shape[i] = PyLong_AsSsize_t(PyTuple_GetItem(shape, i));
        v->strides[i] = strides ? PyLong_AsSsize_t(PyTuple_GetItem(strides, i)) * scale : 0;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* The interface dict of obj; -1 raised. */
static int read_interface(const GjPyState *st, PyObject *cai, GjDevView *v) {
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *const *key = st->cai_names;   /* interned: no str made per lookup */
    PyObject *typestr = PyDict_GetItemWithError(cai, key[GJ_CAI_TYPESTR]);
    PyObject *shape = PyDict_GetItemWithError(cai, key[GJ_CAI_SHAPE]);
    PyObject *strides = PyDict_GetItemWithError(cai, key[GJ_CAI_STRIDES]);
    PyObject *data = PyDict_GetItemWithError(cai, key[GJ_CAI_DATA]);
    PyObject *mask = PyDict_GetItemWithError(cai, key[GJ_CAI_MASK]);
    const char *ts = typestr ? PyUnicode_AsUTF8AndSize(typestr, NULL) : NULL;
    if (!ts || !shape || !PyTuple_Check(shape) || !data || !PyTuple_Check(data) ||
        PyTuple_Size(data) != 2 || (mask && mask != Py_None)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "malformed or masked __cuda_array_interface__");
        return -1;
    }
    v->dtype = typestr_dtype(ts);
    if (v->dtype < 0) {
        PyErr_Format(PyExc_TypeError,
                     "__cuda_array_interface__ typestr '%s' has no gpujit "
                     "type",
                     ts);
        return -1;
    }
    if (read_dims(shape, strides == Py_None ? NULL : strides, 1, v) < 0)
        return -1;
    v->ptr = (uint64_t)PyLong_AsUnsignedLongLongMask(PyTuple_GetItem(data, 0));
    v->readonly = PyObject_IsTrue(PyTuple_GetItem(data, 1));
    return PyErr_Occurred() ? -1 : 0;
}

/* ---- CuPy and PyTorch ------------------------------------------------------ */

/* Which fast path type `tp` takes (GJ_CAI_*), learned on its first use:
   exactly cupy.ndarray or torch.Tensor (subclasses take the generic path). */
static int classify(GjPyState *st, PyTypeObject *tp) {
    for (int k = 0; k < GJ_CAI_NTYPES; k++)
        if (st->cai_types[k] == tp)
            return k;
    PyObject *module = PyObject_GetAttrString((PyObject *)tp, "__module__");
    PyObject *name = PyType_GetName(tp);
    int kind = GJ_CAI_OTHER;
    if (module && name && PyUnicode_Check(module)) {
        if (PyUnicode_CompareWithASCIIString(module, "cupy") == 0 &&
            PyUnicode_CompareWithASCIIString(name, "ndarray") == 0)
            kind = GJ_CAI_CUPY;
        else if (PyUnicode_CompareWithASCIIString(module, "torch") == 0 &&
                 PyUnicode_CompareWithASCIIString(name, "Tensor") == 0)
            kind = GJ_CAI_TORCH;
    }
    Py_XDECREF(module);
    Py_XDECREF(name);
    PyErr_Clear();
    PyTypeObject *old = st->cai_types[kind];
    st->cai_types[kind] = (PyTypeObject *)Py_NewRef((PyObject *)tp);
    Py_XDECREF((PyObject *)old);
    return kind;
}

/* The dtype id of a library's dtype object seen before, or -1. */
static int known_dtype(const GjPyState *st, PyObject *dtype) {
    for (int k = 0; k < st->ncai_dtypes; k++)
        if (st->cai_dtypes[k] == dtype)
            return st->cai_dtype_ids[k];
    return -1;
}

static void learn_dtype(GjPyState *st, PyObject *dtype, int id) {
    if (st->ncai_dtypes < GJ_CAI_DTYPES && known_dtype(st, dtype) < 0) {
        st->cai_dtypes[st->ncai_dtypes] = Py_NewRef(dtype);
        st->cai_dtype_ids[st->ncai_dtypes++] = id;
    }
}

/* True when a tensor may take the fast path: in device memory, no grad. */
static int plain_cuda_tensor(GjPyState *st, PyObject *t) {
    PyObject *is_cuda = PyObject_GetAttr(t, st->cai_names[GJ_CAI_IS_CUDA]);
    PyObject *grad =
        is_cuda == Py_True ? PyObject_GetAttr(t, st->cai_names[GJ_CAI_REQUIRES_GRAD]) : NULL;
    int ok = is_cuda == Py_True && grad == Py_False;
    Py_XDECREF(is_cuda);
    Py_XDECREF(grad);
    PyErr_Clear();
    return ok;
}

/* obj's fields from its own attributes: 0, -1 raised, or 1 when obj must
   take the generic path (no exception). */
static int read_attributes(GjPyState *st, int kind, PyObject *obj, GjDevView *v) {
    if (kind == GJ_CAI_TORCH && !plain_cuda_tensor(st, obj))
        return 1;
    PyObject *dtype = PyObject_GetAttr(obj, st->cai_names[GJ_CAI_DTYPE]);
    int id = dtype ? known_dtype(st, dtype) : -1;
    Py_XDECREF(dtype);
    if (id < 0) {
        PyErr_Clear();
        return 1;
    }
    PyObject *ptr = NULL, *shape = NULL, *strides = NULL;
    Py_ssize_t scale = 1;
    if (kind == GJ_CAI_CUPY) {
        PyObject *data = PyObject_GetAttr(obj, st->cai_names[GJ_CAI_DATA]);
        ptr = data ? PyObject_GetAttr(data, st->cai_names[GJ_CAI_PTR]) : NULL;
        Py_XDECREF(data);
        strides = ptr ? PyObject_GetAttr(obj, st->cai_names[GJ_CAI_STRIDES]) : NULL;
    } else {
        ptr = PyObject_CallMethodObjArgs(obj, st->cai_names[GJ_CAI_DATA_PTR], NULL);
        strides = ptr ? PyObject_CallMethodObjArgs(obj, st->cai_names[GJ_CAI_STRIDE], NULL) : NULL;
        scale = gj_py_dtypes[id].itemsize;
    }
    shape = strides ? PyObject_GetAttr(obj, st->cai_names[GJ_CAI_SHAPE]) : NULL;
    int rc = -1;
    if (shape && PyTuple_Check(shape) && PyLong_Check(ptr)) {
        v->dtype = id;
        v->readonly = 0;
        v->ptr = (uint64_t)PyLong_AsUnsignedLongLongMask(ptr);
        rc = read_dims(shape, strides, scale, v);
    } else if (shape) {
        PyErr_Format(PyExc_TypeError, "%s array without the expected shape or data pointer",
                     kind == GJ_CAI_CUPY ? "CuPy" : "PyTorch");
    }
    Py_XDECREF(ptr);
    Py_XDECREF(strides);
    Py_XDECREF(shape);
    return rc;
}

int gj_py_cai_view(GjPyState *st, PyObject *obj, GjDevView *v) {
    int kind = classify(st, Py_TYPE(obj));
    if (kind != GJ_CAI_OTHER) {
        int rc = read_attributes(st, kind, obj, v);
        if (rc <= 0)
            return rc;
    }
    PyObject *cai = PyObject_GetAttr(obj, st->str_cai);
    if (!cai) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return -2;
    }
    int rc = read_interface(st, cai, v);
    Py_DECREF(cai);
    if (rc == 0 && kind != GJ_CAI_OTHER) {
        PyObject *dtype = PyObject_GetAttr(obj, st->cai_names[GJ_CAI_DTYPE]);
        if (dtype)
            learn_dtype(st, dtype, v->dtype);
        Py_XDECREF(dtype);
        PyErr_Clear();
    }
    return rc;
}

int gj_py_cai_init(GjPyState *st) {
    static const char *const names[GJ_CAI_NNAMES] = {
        [GJ_CAI_DTYPE] = "dtype",
        [GJ_CAI_DATA] = "data",
        [GJ_CAI_PTR] = "ptr",
        [GJ_CAI_SHAPE] = "shape",
        [GJ_CAI_STRIDES] = "strides",
        [GJ_CAI_DATA_PTR] = "data_ptr",
        [GJ_CAI_STRIDE] = "stride",
        [GJ_CAI_IS_CUDA] = "is_cuda",
        [GJ_CAI_REQUIRES_GRAD] = "requires_grad",
        [GJ_CAI_TYPESTR] = "typestr",
        [GJ_CAI_MASK] = "mask",
        [GJ_CAI_STREAM] = "stream",
    };
    for (int k = 0; k < GJ_CAI_NNAMES; k++)
        if (!(st->cai_names[k] = PyUnicode_InternFromString(names[k])))
            return -1;
    return 0;
}

/* ---- as_cuda_array ------------------------------------------------------------ */

/* Waits for the interface's "stream" (v3), as numba's as_cuda_array(sync=True). */
static int sync_stream(GjPyState *st, PyObject *cai) {
    PyObject *stream = PyDict_GetItemWithError(cai, st->cai_names[GJ_CAI_STREAM]);
    if (!stream && PyErr_Occurred())
        return -1;
    if (!stream || stream == Py_None)
        return 0;
    long long handle = PyLong_AsLongLong(stream);
    if (handle == -1 && PyErr_Occurred())
        return -1;
    if (handle == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "__cuda_array_interface__ stream 0 is not allowed "
                        "(version 3: 1 is the legacy default stream, 2 the per-thread one)");
        return -1;
    }
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc =
        gj_exec_stream_synchronize(gj_exec_current_device(), (void *)(uintptr_t)handle, &err);
    Py_END_ALLOW_THREADS if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    return 0;
}

PyObject *gj_py_as_cuda_array_fn(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"obj", "sync", NULL};
    PyObject *obj;
    int sync = 1, device;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:as_cuda_array", kwlist, &obj, &sync))
        return NULL;
    GjPyState *st = PyModule_GetState(module);
    if (gj_py_ensure(st) < 0 || gj_py_device(st, &device) < 0)
        return NULL;
    PyObject *cai = gj_py_protocol_attr(obj, "__cuda_array_interface__",
                                        "as_cuda_array(): '%S' has no __cuda_array_interface__ "
                                        "(host memory: to_device copies it, from_dlpack views "
                                        "it on the CPU target)");
    if (!cai)
        return NULL;
    if (device == GJ_EXEC_HOST) {
        Py_DECREF(cai);
        PyErr_SetString(PyExc_TypeError, "as_cuda_array(): __cuda_array_interface__ describes "
                                         "GPU memory, which the CPU target cannot use");
        return NULL;
    }
    GjDevView v;
    PyObject *r = NULL;
    if (read_interface(st, cai, &v) == 0 && gj_py_cai_check_pointer(st, &v, -1) == 0 &&
        (!sync || sync_stream(st, cai) == 0))
        r = (PyObject *)gj_py_devicearray_view(st, &v, device, obj);
    Py_DECREF(cai);
    return r;
}

int gj_py_cai_check_pointer(GjPyState *st, const GjDevView *v, int arg) {
    Py_ssize_t lo = 0, len = 0, itemsize = gj_py_dtypes[v->dtype].itemsize, size = 1;
    if (v->has_strides) {
        gj_py_extent(v->ndim, v->shape, v->strides, itemsize, &lo, &len);
    } else {
        for (int k = 0; k < v->ndim; k++)
            size *= v->shape[k];
        len = size * itemsize;
    }
    GjExecError err;
    if (len == 0 || gj_exec_check_pointer(gj_exec_current_device(), v->ptr + (uint64_t)lo,
                                          (size_t)len, &err) == GJ_EXEC_OK)
        return 0;
    if (err.kind != GJ_ERR_INVALID) {   /* the driver could not be asked */
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    char what[48] = "as_cuda_array()";
    if (arg >= 0)
        snprintf(what, sizeof what, "kernel argument %d", arg + 1);
    PyErr_Format(PyExc_ValueError,
                 "%s: its __cuda_array_interface__ points at 0x%llx, which "
                 "is not GPU memory the CUDA driver knows (host memory? %s: %s)",
                 what, (unsigned long long)(v->ptr + (uint64_t)lo),
                 err.name[0] ? err.name : err.call, err.message);
    return -1;
}
