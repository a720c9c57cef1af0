/*
 * module.h - the module: its state's accessors, the execution target and
 * device, NumPy on first need, small argument helpers, and the one place
 * that turns runtime errors and compiler diagnostics into Python
 * exceptions (module.c).
 */
#ifndef GJ_PY_MODULE_H
#define GJ_PY_MODULE_H

#include "gjpy.h"

GjPyState *gj_py_state_of_type(PyTypeObject *tp);   /* via PyType_GetModuleState */

/* Imports numpy once and caches the callables in st; -1 with an exception. */
int gj_py_numpy(GjPyState *st);

/* numpy.dtype(obj) */
PyObject *gj_py_as_dtype(GjPyState *st, PyObject *obj);

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

/* Makes the current device's context current on this thread (nothing to do
   on the CPU target); -1 raised. */
int gj_py_ensure(GjPyState *st);

/* GjCompileOptions.find_libdevice with arg st: the path of libdevice.10.bc
   gpujit/_libdevice.py finds (searched once per process, the GIL taken for
   it), or NULL when there is none or the search raised (its exception is
   left set). */
const char *gj_py_find_libdevice(void *st);

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

/* The type's name ("str") as a new str, for messages. */
PyObject *gj_py_type_name(PyObject *obj);

/* The execution target (GjTargetKind), chosen on first call: GPUJIT_TARGET
   ("cpu" or "cuda"), else CUDA when a driver and a device are usable, else
   the CPU with a one-time RuntimeWarning.  -1 raised. */
int gj_py_target(GjPyState *st);

#endif
