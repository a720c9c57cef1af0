/*
 * stream.h - streams and events as Python objects (stream.c) over
 * runtime/exec.h: a stream argument to its handle, and the module's
 * Stream, Event and synchronize functions.
 */
#ifndef GJ_PY_STREAM_H
#define GJ_PY_STREAM_H

#include "gjpy.h"

/* Converts a stream argument (0, None, a Stream, or a raw CUstream
   int) to a handle; -1 with TypeError. */
int gj_py_stream_handle(GjPyState *st, PyObject *obj, void **stream);

/* Adds Stream, Event and the stream, event and synchronize
   functions to the module. */
int gj_py_stream_register(PyObject *module, GjPyState *st);

#endif
