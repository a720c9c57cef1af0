/*
 * kernelerror.h - the exception a kernel's error record names
 * (kernelerror.c): a failed bounds check, assert or raise in a debug
 * build, after its launch.
 */
#ifndef GJ_PY_KERNELERROR_H
#define GJ_PY_KERNELERROR_H

#include "dispatcher.h"

/* Raises the exception of the error site `record` (the
   kernel's error record, compile.h) names and returns -1, or returns 0 when
   the record is clear. */
int gj_py_kernel_error_raise(GjDispatcher *d, const GjEntry *e, const int64_t *record);

#endif
