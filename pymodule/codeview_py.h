/*
 * codeview_py.h - building a GjCodeView from a Python function.
 *
 * The only bridge between a Python function object and the compiler's input:
 * it reads the bytecode through dis.get_instructions(), copies everything
 * into the compilation's arena and freezes every global and closure
 * variable the code reads, so the compile itself needs no Python objects.
 */
#ifndef GJ_CODEVIEW_PY_H
#define GJ_CODEVIEW_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "codeview.h"

/* Fills *cv from func (a Python function) with strings and arrays owned by
   c->arena.  cv->argtypes is left NULL for the caller.  Returns 0, or -1
   with a Python exception set (TypeError when func is not a Python
   function).  What the compiler cannot support (*args, generators, an
   unsupported Python version) is not an error here: gj_bc_decode() reports
   it as a diagnostic. */
int gj_py_codeview(PyObject *func, GjCtx *c, GjCodeView *cv);

/* _gpujit._intrinsics(): the kernel API rows of the intrinsic table as
   (name, kind, params, doc) tuples, for gpujit/__init__.py. */
PyObject *gj_py_intrinsics(PyObject *module, PyObject *unused);

#endif
