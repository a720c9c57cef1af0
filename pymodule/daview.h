/*
 * daview.h - views of a DeviceArray (indexing, slicing, reshape, ravel,
 * transpose, dtype views) and the copies between a device array of any
 * layout and the host (daview.c).  devicearray.c puts these functions in
 * the DeviceArray type's tables; they take and return Python objects as
 * those slots do.
 *
 * A view shares its parent's memory: ptr is the address of its element
 * [0, ...], `owns` is 0, and `base` is the array that owns the allocation
 * (a view of a view points at the owner too, as NumPy's base does), so the
 * memory lives while any view does.
 */
#ifndef GJ_DAVIEW_H
#define GJ_DAVIEW_H

#include "devicearray.h"

/* The bytes d's elements span: from ptr + *lo (*lo <= 0; below 0 with
   negative strides), *len bytes (0 for an empty array). */
void gj_py_da_extent(const GjDeviceArray *d, Py_ssize_t *lo, Py_ssize_t *len);
/* A new host numpy array holding d's elements: d's order when d is
   contiguous, else C.  -1/NULL raised. */
PyObject *gj_py_da_to_host(GjPyState *st, GjDeviceArray *d, void *stream);
/* Writes the host numpy array src (d's shape and dtype, any layout) into d
   (any layout); a non-contiguous d is read, merged and written back over
   its whole extent.  -1 raised. */
int gj_py_da_write(GjPyState *st, GjDeviceArray *d, PyObject *src, void *stream);

/* d[key] (mp_subscript) and d[key] = value (mp_ass_subscript). */
PyObject *gj_py_da_subscript(PyObject *self, PyObject *key);
int gj_py_da_ass_subscript(PyObject *self, PyObject *key, PyObject *value);
/* Methods: getitem(key, stream=0), setitem(key, value, stream=0),
   reshape(*shape, order='C'), ravel(order='C'), view(dtype),
   transpose(*axes); and the getter T. */
PyObject *gj_py_da_getitem(PyObject *self, PyObject *args, PyObject *kw);
PyObject *gj_py_da_setitem(PyObject *self, PyObject *args, PyObject *kw);
PyObject *gj_py_da_reshape(PyObject *self, PyObject *args, PyObject *kw);
PyObject *gj_py_da_ravel(PyObject *self, PyObject *args, PyObject *kw);
PyObject *gj_py_da_view(PyObject *self, PyObject *dtype);
PyObject *gj_py_da_transpose(PyObject *self, PyObject *args);
PyObject *gj_py_da_T(PyObject *self, void *closure);

/* The bytes an array of ndim extents/strides (bytes) spans: from *lo bytes
   off element 0 (<= 0, negative strides reach below it), *len bytes long;
   0 and 0 for an empty array. */
void gj_py_extent(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides, Py_ssize_t itemsize,
                  Py_ssize_t *lo, Py_ssize_t *len);

#endif
