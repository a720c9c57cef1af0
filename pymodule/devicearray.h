/*
 * devicearray.h - the DeviceArray type (devicearray.c): the struct the
 * launcher reads without a Python call, new arrays and views of other
 * libraries' memory, to_device, copies between host and device memory, the
 * dtype lookups and the layout helpers (contiguity, strides) the other
 * files share.
 */
#ifndef GJ_PY_DEVICEARRAY_H
#define GJ_PY_DEVICEARRAY_H

#include "cai.h"

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

/* The direction of a copy (gj_py_da_copy). */
typedef enum { GJ_PY_HTOD, GJ_PY_DTOH, GJ_PY_DTOD } GjPyCopyDir;

/* Dtype id for NumPy kind char and itemsize, or -1. */
int gj_py_dtype_lookup(char kind, Py_ssize_t itemsize);

/* Dtype id of a struct-module buffer format ("f", "<i8", "=q", "Zd") with the
   buffer's itemsize, or -1 (big-endian, records, ...). */
int gj_py_dtype_from_format(const char *format, Py_ssize_t itemsize);

/* Whether ndim extents/strides (bytes) of itemsize elements are contiguous
   in `order` ('C' or 'F'), as numpy's flags say it: extents of 1 do not
   constrain their stride, and an empty array is contiguous both ways. */
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

/* Adds the DeviceArray type to the module and its state. */
int gj_py_devicearray_register(PyObject *module, GjPyState *st);

/* GjDtypeId of a numpy.dtype, or -1 with TypeError naming it. */
int gj_py_dtype_id_of(PyObject *dtype);

/* A dtype as messages name it (new str, NULL raised): its repr, and for
   datetime64 and timedelta64 also its name, "dtype('<M8[D]') (datetime64[D])". */
PyObject *gj_py_dtype_text(PyObject *dtype);

#endif
