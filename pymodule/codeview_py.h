/*
 * codeview_py.h - building a GjCodeView from a Python function.
 *
 * The only bridge between a Python function object and the compiler's input:
 * it freezes every global and closure variable the code reads, reads the
 * bytecode through dis.get_instructions(), and copies everything into the
 * compilation's arena, so the compile itself needs no Python objects.  In
 * two steps, so that a persistent-cache hit never reads the instructions:
 * dis takes microseconds per instruction, the rest of the view little.
 */
#ifndef GJ_CODEVIEW_PY_H
#define GJ_CODEVIEW_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "codeview.h"

/* The views of one build: the code object of each function viewed, held
   until gj_py_codeview_release so that the instructions read later are
   those of the code the view (and the persistent cache's key) has. */
typedef struct GjPyViews GjPyViews;

/* Fills *cv from func (a Python function) with strings and arrays owned by
   c->arena, all but the instructions, without dis: names, counts, defaults,
   the code object as key bytes (cv->code_bytes), every global and closure
   variable frozen, and the same for each device function it calls.  This
   is all the persistent cache's key needs.  cv->argtypes is left NULL for
   the caller.  Returns 0, or -1 with a Python exception set (TypeError when
   func is not a Python function); *views is set in both cases, for
   gj_py_codeview_instructions and then gj_py_codeview_release.  What the
   compiler cannot support (*args, generators, an unsupported Python
   version) is not an error here: gj_bc_decode() reports it as a
   diagnostic. */
int gj_py_codeview_frozen(PyObject *func, GjCtx *c, GjCodeView *cv, GjPyViews **views);
/* Reads the instructions of every view of the build through
   dis.get_instructions.  -1 raised. */
int gj_py_codeview_instructions(GjPyViews *views);
/* Releases the code objects (NULL: nothing); before c's arena is freed. */
void gj_py_codeview_release(GjPyViews *views);
/* The three above: a whole view of func.  0, or -1 raised. */
int gj_py_codeview(PyObject *func, GjCtx *c, GjCodeView *cv);

/* _gpujit._intrinsics(): the kernel API rows of the intrinsic table as
   (name, kind, params, doc) tuples, for gpujit/__init__.py. */
PyObject *gj_py_intrinsics(PyObject *module, PyObject *unused);

PyObject *gj_py_intrinsics(PyObject *module, PyObject *unused);

#endif
