/*
 * daview.c - views of a DeviceArray and the copies of any layout
 * (daview.h's contract).
 *
 *     d[2:10], d[::-2], d[:, 0], d[1, ...], d[None]   # views (basic indexing)
 *     d[1, 2]                  # every axis by an integer: a numpy scalar, copied
 *     d[a:b] = host_or_scalar  # broadcast as numpy assigns, written through
 *     d.reshape(2, -1), d.ravel(order='F'), d.T, d.transpose(1, 0), d.view('u4')
 *
 * Indexing is NumPy's basic indexing with NumPy's errors (IndexError for an
 * integer out of range, a second Ellipsis or too many indices); fancy and
 * boolean indexing are a TypeError, as numba refuses them.  reshape and
 * ravel only make views: an array that is not contiguous in the order asked
 * raises numba's NotImplementedError("operation requires copying").
 *
 * A non-contiguous array moves through its extent (gj_py_da_extent): a read
 * copies the extent to the host and compacts it there; a write reads the
 * extent, merges the new elements on the host and writes the extent back,
 * so the elements between a view's are rewritten with the values just read.
 * Copies go through gj_py_da_copy on the array's own device (GJ_EXEC_HOST on
 * the CPU target): nothing here depends on the target.
 */
#include "daview.h"

#include <string.h>

#include "devicearray.h"
#include "module.h"
#include "stream.h"

/* A view's geometry before it is an object; offset in bytes from the
   parent's element [0, ...]. */
typedef struct Geom {
    int ndim;
    Py_ssize_t offset;
    Py_ssize_t shape[GJ_PY_MAX_NDIM];
    Py_ssize_t strides[GJ_PY_MAX_NDIM];
} Geom;

static GjPyState *state_of(PyObject *self) { return gj_py_state_of_type(Py_TYPE(self)); }

static void geom_of(const GjDeviceArray *d, Geom *g) {
    g->ndim = d->ndim;
    g->offset = 0;
    memcpy(g->shape, d->shape, sizeof g->shape);
    memcpy(g->strides, d->strides, sizeof g->strides);
}

/* A view of d with geometry g and element type dtype (d's when NULL). */
static PyObject *make_view(GjDeviceArray *d, const Geom *g, PyObject *dtype) {
    int id = dtype ? gj_py_dtype_id_of(dtype) : d->dtype_id;
    if (id < 0)
        return NULL;
    GjDeviceArray *v = PyObject_New(GjDeviceArray, Py_TYPE((PyObject *)d));
    if (!v)
        return NULL;
    v->ptr = d->ptr + (uint64_t)g->offset;   /* wraps as a signed add would */
    v->nbytes = 0;
    v->device = d->device;
    v->ndim = g->ndim;
    v->dtype_id = id;
    v->itemsize = gj_py_dtypes[id].itemsize;
    v->size = 1;
    for (int i = 0; i < g->ndim; i++) {
        v->shape[i] = g->shape[i];
        v->strides[i] = g->strides[i];
        v->size *= g->shape[i];
    }
    v->layout = gj_py_layout(g->ndim, g->shape, g->strides, v->itemsize);
    v->owns = 0;
    v->readonly = d->readonly;   /* a view of a read-only export is read-only too */
    v->dtype = Py_NewRef(dtype ? dtype : d->dtype);
    v->base = Py_NewRef(d->base ? d->base : (PyObject *)d);   /* the owner, as NumPy's */
    v->weakreflist = NULL;
    return (PyObject *)v;
}

/* ---- extents and copies -------------------------------------------------- */

void gj_py_extent(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t itemsize,
                  Py_ssize_t *lo, Py_ssize_t *len) {
    Py_ssize_t low = 0, high = 0;
    *lo = 0;
    *len = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            return;
        Py_ssize_t reach = (shape[i] - 1) * strides[i];
        if (reach < 0)
            low += reach;
        else
            high += reach;
    }
    *lo = low;
    *len = high - low + itemsize;
}

void gj_py_da_extent(const GjDeviceArray *d, Py_ssize_t *lo, Py_ssize_t *len) {
    gj_py_extent(d->ndim, d->shape, d->strides, d->itemsize, lo, len);
}

/* numpy.empty of d's shape and dtype in order ('C' or 'F'). */
static PyObject *host_empty(GjPyState *st, const GjDeviceArray *d, char order) {
    PyObject *shape = gj_py_ssize_tuple(d->ndim, d->shape);
    if (!shape)
        return NULL;
    PyObject *r =
        PyObject_CallFunction(st->np_empty, "OOs", shape, d->dtype, order == 'F' ? "F" : "C");
    Py_DECREF(shape);
    return r;
}

/* Copies `bytes` between host object `host` (a contiguous buffer) and
   device address `addr` in direction dir. */
static int copy_buffer(GjPyState *st, const GjDeviceArray *d, GjPyCopyDir dir, PyObject *host,
                       uint64_t addr, Py_ssize_t bytes, void *stream) {
    Py_buffer v;
    int flags = dir == GJ_PY_DTOH ? PyBUF_ANY_CONTIGUOUS | PyBUF_WRITABLE : PyBUF_ANY_CONTIGUOUS;
    if (PyObject_GetBuffer(host, &v, flags) < 0)
        return -1;
    int rc = -1;
    if (v.len != bytes)
        PyErr_Format(PyExc_SystemError, "gpujit: host buffer of %zd bytes for a copy of %zd", v.len,
                     bytes);
    else if (dir == GJ_PY_DTOH)
        rc = gj_py_da_copy(st, d->device, dir, v.buf, 0, addr, (size_t)bytes, stream);
    else
        rc = gj_py_da_copy(st, d->device, dir, v.buf, addr, 0, (size_t)bytes, stream);
    PyBuffer_Release(&v);
    return rc;
}

/* d's extent copied to a new host uint8 array, and a numpy view of it with
   d's shape and strides (*strided); NULL raised. */
static PyObject *read_extent(GjPyState *st, GjDeviceArray *d, void *stream, PyObject **strided) {
    Py_ssize_t lo, len;
    gj_py_da_extent(d, &lo, &len);
    PyObject *raw = PyObject_CallFunction(st->np_empty, "ns", len, "uint8");
    PyObject *shape = gj_py_ssize_tuple(d->ndim, d->shape);
    PyObject *strides = gj_py_ssize_tuple(d->ndim, d->strides);
    *strided = NULL;
    if (raw && shape && strides &&
        copy_buffer(st, d, GJ_PY_DTOH, raw, d->ptr + (uint64_t)lo, len, stream) == 0)
        *strided =
            PyObject_CallFunction(st->np_ndarray, "OOOnO", shape, d->dtype, raw, -lo, strides);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (!*strided)
        Py_CLEAR(raw);
    return raw;
}

PyObject *gj_py_da_to_host(GjPyState *st, GjDeviceArray *d, void *stream) {
    if (gj_py_numpy(st) < 0)
        return NULL;
    if (d->layout != 'A') {
        PyObject *out = host_empty(st, d, d->layout);
        if (out && copy_buffer(st, d, GJ_PY_DTOH, out, d->ptr, d->size * d->itemsize, stream) < 0)
            Py_CLEAR(out);
        return out;
    }
    PyObject *strided, *raw = read_extent(st, d, stream, &strided);
    if (!raw)
        return NULL;
    PyObject *compact = PyObject_CallMethod(strided, "copy", NULL);
    Py_DECREF(strided);
    Py_DECREF(raw);
    return compact;
}

/* Takes st->write_lock, waiting for it without the GIL. */
static void lock_writes(GjPyState *st) {
    if (pthread_mutex_trylock(&st->write_lock) == 0)
        return;
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&st->write_lock);
    Py_END_ALLOW_THREADS
}

static int write_locked(GjPyState *st, GjDeviceArray *d, PyObject *src, void *stream);

int gj_py_da_write(GjPyState *st, GjDeviceArray *d, PyObject *src, void *stream) {
    lock_writes(st);
    int rc = write_locked(st, d, src, stream);
    pthread_mutex_unlock(&st->write_lock);
    return rc;
}

static int write_locked(GjPyState *st, GjDeviceArray *d, PyObject *src, void *stream) {
    Py_ssize_t lo, len;
    gj_py_da_extent(d, &lo, &len);
    if (len == 0)
        return 0;
    if (gj_py_numpy(st) < 0)
        return -1;
    PyObject *buf;
    if (d->layout != 'A') {
        buf = PyObject_CallMethod(st->np, "asarray", "OOs", src, d->dtype,
                                  d->layout == 'F' ? "F" : "C");
    } else {
        PyObject *strided;
        buf = read_extent(st, d, stream, &strided);
        if (!buf)
            return -1;
        PyObject *r = PyObject_CallFunctionObjArgs(st->np_copyto, strided, src, NULL);
        Py_DECREF(strided);
        if (!r)
            Py_CLEAR(buf);
        Py_XDECREF(r);
    }
    if (!buf)
        return -1;
    int rc = copy_buffer(st, d, GJ_PY_HTOD, buf, d->ptr + (uint64_t)lo, len, stream);
    Py_DECREF(buf);
    return rc;
}

/* ---- indexing -------------------------------------------------------------- */

typedef enum { IX_INT, IX_SLICE, IX_ELLIPSIS, IX_NEWAXIS } IndexKind;

static int too_many_indices(int ndim, Py_ssize_t n) {
    PyErr_Format(PyExc_IndexError,
                 "too many indices for array: array is %d-dimensional, "
                 "but %zd were indexed",
                 ndim, n);
    return -1;
}

/* The kind of one item of an index (its value for an integer); -1 raised. */
static int classify(PyObject *item, Py_ssize_t *value) {
    if (item == Py_Ellipsis)
        return IX_ELLIPSIS;
    if (item == Py_None)
        return IX_NEWAXIS;
    if (PySlice_Check(item))
        return IX_SLICE;
    if (!PyBool_Check(item) && PyIndex_Check(item)) {
        /* Python and NumPy integers; an integer array refuses __index__. */
        PyObject *i = PyNumber_Index(item);
        if (i) {
            *value = PyLong_AsSsize_t(i);
            Py_DECREF(i);
            if (*value != -1 || !PyErr_Occurred())
                return IX_INT;
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_IndexError, "cannot fit 'int' into an index-sized integer");
            }
            return -1;
        }
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
    }
    PyObject *name = gj_py_type_name(item);
    if (name) {
        PyErr_Format(PyExc_TypeError,
                     "DeviceArray indices must be integers, slices, '...' "
                     "or None, not %U: fancy and boolean indexing are not supported (as in "
                     "numba); copy the array to the host first",
                     name);
        Py_DECREF(name);
    }
    return -1;
}

static void push_axis(Geom *g, Py_ssize_t extent, Py_ssize_t stride) {
    g->shape[g->ndim] = extent;
    g->strides[g->ndim++] = stride;
}

/* NumPy's basic indexing of d by key into g.  *element is set when every
   axis is indexed by an integer: the result is an element, not a view. */
static int index_geom(const GjDeviceArray *d, PyObject *key, Geom *g, int *element) {
    enum { MAX_ITEMS = 2 * GJ_PY_MAX_NDIM + 1 };   /* no valid index has more */
    PyObject *items[MAX_ITEMS];
    int kinds[MAX_ITEMS];
    Py_ssize_t values[MAX_ITEMS];
    int tuple = PyTuple_Check(key);
    Py_ssize_t n = tuple ? PyTuple_Size(key) : 1;
    int consumed = 0, ints = 0, ellipses = 0, added = 0;
    if (n > MAX_ITEMS)
        return too_many_indices(d->ndim, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        items[i] = tuple ? PyTuple_GetItem(key, i) : key;
        if ((kinds[i] = classify(items[i], &values[i])) < 0)
            return -1;
        switch ((IndexKind)kinds[i]) {
        case IX_INT:
            ints++;
            consumed++;
            break;
        case IX_SLICE: consumed++; break;
        case IX_NEWAXIS: added++; break;
        case IX_ELLIPSIS:
            if (ellipses++) {
                PyErr_SetString(PyExc_IndexError,
                                "an index can only have a single ellipsis ('...')");
                return -1;
            }
            break;
        }
    }
    if (consumed > d->ndim)
        return too_many_indices(d->ndim, consumed);
    if (d->ndim - ints + added > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_IndexError,
                     "the view would have %d dimensions; gpujit supports "
                     "up to %d",
                     d->ndim - ints + added, (int)GJ_PY_MAX_NDIM);
        return -1;
    }
    *element = ints == d->ndim && n == ints;
    g->ndim = 0;
    g->offset = 0;
    int axis = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        switch ((IndexKind)kinds[i]) {
        case IX_ELLIPSIS:
            for (int k = consumed; k < d->ndim; k++, axis++)
                push_axis(g, d->shape[axis], d->strides[axis]);
            break;
        case IX_NEWAXIS: push_axis(g, 1, 0); break;
        case IX_INT: {
            Py_ssize_t j = values[i] < 0 ? values[i] + d->shape[axis] : values[i];
            if (j < 0 || j >= d->shape[axis]) {
                PyErr_Format(PyExc_IndexError,
                             "index %zd is out of bounds for axis %d with "
                             "size %zd",
                             values[i], axis, d->shape[axis]);
                return -1;
            }
            g->offset += j * d->strides[axis++];
            break;
        }
        case IX_SLICE: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(items[i], &start, &stop, &step) < 0)
                return -1;
            Py_ssize_t len = PySlice_AdjustIndices(d->shape[axis], &start, &stop, step);
            if (len > 0)   /* an empty slice stays at the parent's start */
                g->offset += start * d->strides[axis];
            push_axis(g, len, d->strides[axis] * step);
            axis++;
            break;
        }
        }
    }
    for (; axis < d->ndim; axis++)
        push_axis(g, d->shape[axis], d->strides[axis]);
    return 0;
}

/* The element at device address addr of d's dtype, as a numpy scalar. */
static PyObject *read_element(GjPyState *st, GjDeviceArray *d, uint64_t addr, void *stream) {
    if (gj_py_numpy(st) < 0)
        return NULL;
    PyObject *host = PyObject_CallFunction(st->np_empty, "nO", (Py_ssize_t)1, d->dtype);
    PyObject *r = NULL;
    if (host && copy_buffer(st, d, GJ_PY_DTOH, host, addr, d->itemsize, stream) == 0)
        r = PySequence_GetItem(host, 0);
    Py_XDECREF(host);
    return r;
}

static PyObject *getitem_impl(GjPyState *st, GjDeviceArray *d, PyObject *key, void *stream) {
    Geom g;
    int element;
    if (index_geom(d, key, &g, &element) < 0)
        return NULL;
    if (element)
        return read_element(st, d, d->ptr + (uint64_t)g.offset, stream);
    return make_view(d, &g, NULL);
}

/* d[key] = value: value (a scalar, a host array or a DeviceArray) is
   broadcast to the indexed view as numpy assigns, then written. */
static int setitem_impl(GjPyState *st, GjDeviceArray *d, PyObject *key, PyObject *value,
                        void *stream) {
    if (!value) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    if (d->readonly) {   /* a view of memory its exporter made read-only */
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    Geom g;
    int element;
    if (index_geom(d, key, &g, &element) < 0 || gj_py_numpy(st) < 0)
        return -1;
    PyObject *lhs = make_view(d, &g, NULL), *from_device = NULL, *tmp = NULL;
    int rc = -1;
    if (!lhs)
        goto done;
    if (Py_IS_TYPE(value, Py_TYPE((PyObject *)d))) {   /* may overlap d: read it out first */
        if (!(from_device = gj_py_da_to_host(st, (GjDeviceArray *)value, stream)))
            goto done;
        value = from_device;
    }
    GjDeviceArray *l = (GjDeviceArray *)lhs;
    tmp = host_empty(st, l, l->layout);
    if (tmp && PyObject_SetItem(tmp, Py_Ellipsis, value) == 0)
        rc = gj_py_da_write(st, l, tmp, stream);
done:
    Py_XDECREF(lhs);
    Py_XDECREF(from_device);
    Py_XDECREF(tmp);
    return rc;
}

PyObject *gj_py_da_subscript(PyObject *self, PyObject *key) {
    return getitem_impl(state_of(self), (GjDeviceArray *)self, key, NULL);
}

int gj_py_da_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
    return setitem_impl(state_of(self), (GjDeviceArray *)self, key, value, NULL);
}

PyObject *gj_py_da_getitem(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"key", "stream", NULL};
    PyObject *key, *stream_obj = NULL;
    GjPyState *st = state_of(self);
    void *stream;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:getitem", kwlist, &key, &stream_obj) ||
        gj_py_stream_handle(st, stream_obj, &stream) < 0)
        return NULL;
    return getitem_impl(st, (GjDeviceArray *)self, key, stream);
}

PyObject *gj_py_da_setitem(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"key", "value", "stream", NULL};
    PyObject *key, *value, *stream_obj = NULL;
    GjPyState *st = state_of(self);
    void *stream;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:setitem", kwlist, &key, &value, &stream_obj) ||
        gj_py_stream_handle(st, stream_obj, &stream) < 0 ||
        setitem_impl(st, (GjDeviceArray *)self, key, value, stream) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- reshape, ravel, transpose, view ----------------------------------- */

/* An order argument: one of the three letters `allowed` ('C' when obj is NULL
   or None). */
static int order_arg(PyObject *obj, const char *allowed, char *order) {
    *order = 'C';
    if (!obj || obj == Py_None)
        return 0;
    Py_ssize_t n;
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8AndSize(obj, &n) : NULL;
    if (s && n == 1 && strchr(allowed, s[0])) {
        *order = s[0];
        return 0;
    }
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "order must be one of '%c', '%c', '%c', not %R", allowed[0],
                 allowed[1], allowed[2], obj);
    return -1;
}

/* 'A' resolved for d: 'F' when d is F- but not C-contiguous, as numpy. */
static char resolve_order(const GjDeviceArray *d, char order) {
    if (order != 'A')
        return order;
    return d->layout == 'F' ? 'F' : 'C';
}

static PyObject *requires_copying(void) {
    PyErr_SetString(PyExc_NotImplementedError, "operation requires copying");
    return NULL;
}

/* numpy's new shape: the items of shape_obj, at most one -1 (computed). */
static int new_shape(const GjDeviceArray *d, PyObject *shape_obj, Geom *g) {
    PyObject *seq = PySequence_Tuple(shape_obj);
    if (!seq)
        return -1;
    Py_ssize_t n = PyTuple_Size(seq), known = 1;
    int unknown = -1, rc = -1;
    if (n > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "shape has %zd dimensions; gpujit supports up to %d", n,
                     (int)GJ_PY_MAX_NDIM);
        goto done;
    }
    g->ndim = (int)n;
    g->offset = 0;
    for (int i = 0; i < g->ndim; i++) {
        Py_ssize_t v = PyNumber_AsSsize_t(PyTuple_GetItem(seq, i), PyExc_ValueError);
        if (v == -1 && PyErr_Occurred())
            goto done;
        if (v == -1 && unknown >= 0) {
            PyErr_SetString(PyExc_ValueError, "can only specify one unknown dimension");
            goto done;
        }
        if (v < -1) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions not allowed");
            goto done;
        }
        if (v == -1)
            unknown = i;
        else if (__builtin_mul_overflow(known, v, &known))
            known = -1;   /* cannot match the size */
        g->shape[i] = v;
    }
    if (unknown >= 0 && known > 0 && d->size % known == 0)
        g->shape[unknown] = d->size / known;
    else if (unknown >= 0 || known != d->size) {
        PyErr_Format(PyExc_ValueError, "cannot reshape array of size %zd into shape %R", d->size,
                     seq);
        goto done;
    }
    rc = 0;
done:
    Py_DECREF(seq);
    return rc;
}

PyObject *gj_py_da_reshape(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"order", NULL};
    GjDeviceArray *d = (GjDeviceArray *)self;
    PyObject *order_obj = NULL, *no_args = PyTuple_New(0);
    int ok = no_args && PyArg_ParseTupleAndKeywords(no_args, kw, "|$O:reshape", kwlist, &order_obj);
    Py_XDECREF(no_args);
    char order;
    if (!ok || order_arg(order_obj, "CFA", &order) < 0)
        return NULL;
    if (PyTuple_Size(args) == 0) {   /* NumPy's TypeError: the shape is required */
        PyErr_SetString(PyExc_TypeError, "reshape() needs the new shape: reshape(*shape) or "
                                         "reshape(shape)");
        return NULL;
    }
    PyObject *shape_obj = args;
    if (PyTuple_Size(args) == 1 &&
        (PyTuple_Check(PyTuple_GetItem(args, 0)) || PyList_Check(PyTuple_GetItem(args, 0))))
        shape_obj = PyTuple_GetItem(args, 0);
    Geom g;
    if (new_shape(d, shape_obj, &g) < 0)
        return NULL;
    int same = g.ndim == d->ndim;
    for (int i = 0; same && i < g.ndim; i++)
        same = g.shape[i] == d->shape[i];
    if (same) {   /* numba: the same shape is a view whatever the layout */
        memcpy(g.strides, d->strides, sizeof g.strides);
        return make_view(d, &g, NULL);
    }
    order = resolve_order(d, order);
    if (!gj_py_contiguous(d->ndim, d->shape, d->strides, d->itemsize, order))
        return requires_copying();
    gj_py_contiguous_strides(g.ndim, g.shape, d->itemsize, order, g.strides);
    return make_view(d, &g, NULL);
}

PyObject *gj_py_da_ravel(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"order", "stream", NULL};
    GjDeviceArray *d = (GjDeviceArray *)self;
    PyObject *order_obj = NULL, *stream_obj = NULL;   /* stream: numba's; a view copies nothing */
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:ravel", kwlist, &order_obj, &stream_obj) ||
        order_arg(order_obj, "CFA", &order) < 0)
        return NULL;
    order = resolve_order(d, order);
    if (!gj_py_contiguous(d->ndim, d->shape, d->strides, d->itemsize, order))
        return requires_copying();
    Geom g = {.ndim = 1, .offset = 0, .shape = {d->size}, .strides = {d->itemsize}};
    return make_view(d, &g, NULL);
}

/* A view with the axes of d permuted: axes[i] is the old axis of new axis i. */
static PyObject *permuted(GjDeviceArray *d, const int *axes) {
    Geom g;
    geom_of(d, &g);
    for (int i = 0; i < d->ndim; i++) {
        g.shape[i] = d->shape[axes[i]];
        g.strides[i] = d->strides[axes[i]];
    }
    return make_view(d, &g, NULL);
}

PyObject *gj_py_da_transpose(PyObject *self, PyObject *args) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    int axes[GJ_PY_MAX_NDIM], seen[GJ_PY_MAX_NDIM] = {0};
    PyObject *axes_obj = args;
    Py_ssize_t n = PyTuple_Size(args);
    if (n == 1 && PyTuple_GetItem(args, 0) == Py_None)
        n = 0;
    if (n == 0)
        return gj_py_da_T(self, NULL);
    if (n == 1 && PySequence_Check(PyTuple_GetItem(args, 0)))
        axes_obj = PyTuple_GetItem(args, 0);
    PyObject *seq = PySequence_Tuple(axes_obj);
    if (!seq)
        return NULL;
    const char *why = PyTuple_Size(seq) == d->ndim ? NULL : "axes don't match array";
    for (int i = 0; !why && i < d->ndim; i++) {
        Py_ssize_t a = PyNumber_AsSsize_t(PyTuple_GetItem(seq, i), PyExc_ValueError);
        if (a == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        a = a < 0 ? a + d->ndim : a;
        if (a < 0 || a >= d->ndim)
            why = "axis out of bounds in transpose";
        else if (seen[a]++)
            why = "repeated axis in transpose";   /* NumPy's words for both */
        axes[i] = (int)a;
    }
    Py_DECREF(seq);
    if (why) {
        PyErr_SetString(PyExc_ValueError, why);
        return NULL;
    }
    return permuted(d, axes);
}

PyObject *gj_py_da_T(PyObject *self, void *closure) {
    (void)closure;
    GjDeviceArray *d = (GjDeviceArray *)self;
    int axes[GJ_PY_MAX_NDIM];
    for (int i = 0; i < d->ndim; i++)
        axes[i] = d->ndim - 1 - i;
    return permuted(d, axes);
}

PyObject *gj_py_da_view(PyObject *self, PyObject *dtype_obj) {
    GjDeviceArray *d = (GjDeviceArray *)self;
    PyObject *dtype = gj_py_as_dtype(state_of(self), dtype_obj);
    int id = dtype ? gj_py_dtype_id_of(dtype) : -1;
    if (id < 0) {
        Py_XDECREF(dtype);
        return NULL;
    }
    Geom g;
    geom_of(d, &g);
    Py_ssize_t isz = gj_py_dtypes[id].itemsize, last = d->ndim - 1;
    const char *bad = NULL;
    if (isz != d->itemsize) {   /* NumPy's rules and messages */
        if (d->ndim == 0)
            bad = "Changing the dtype of a 0d array is only supported if the itemsize is "
                  "unchanged";
        else if (d->shape[last] != 1 && d->strides[last] != d->itemsize)
            bad = "To change to a dtype of a different size, the last axis must be contiguous";
        else if (d->shape[last] * d->itemsize % isz != 0)
            bad = "When changing to a larger dtype, its size must be a divisor of the total "
                  "size in bytes of the last axis of the array.";
        else {
            g.shape[last] = d->shape[last] * d->itemsize / isz;
            g.strides[last] = isz;
        }
    }
    PyObject *r = NULL;
    if (bad)
        PyErr_SetString(PyExc_ValueError, bad);
    else
        r = make_view(d, &g, dtype);
    Py_DECREF(dtype);
    return r;
}
