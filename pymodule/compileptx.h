/*
 * compileptx.h - compile_ptx() and the module functions around it
 * (compileptx.c): PTX of a function without a dispatcher, signatures
 * parsed, fastmath flags, a test's PTX load, and a device function's
 * inspect_*.
 */
#ifndef GJ_PY_COMPILEPTX_H
#define GJ_PY_COMPILEPTX_H

#include "dispatcher.h"

/* A device function's inspect_* (field: the GjCompileResult
   member, ptx, llvm_ir or type_dump): for signature sig, d compiled now as
   compile_ptx(device=True) compiles it, with d's options, for the current
   GPU; for sig NULL or None, a dict {type names: text} of jit()'s
   signatures.  NULL raised. */
PyObject *gj_py_device_fn_inspect(GjPyState *st, GjDispatcher *d, PyObject *sig, size_t field);

/* The module's functions: compile_ptx(pyfunc, signature, ...) -> (ptx, return
   type name); _fastmath_flags() -> {numba's flag name: GjFastMath bits};
   _parse_signature(str) -> (return type or None, (argument types...)),
   the compiler's own parse, for gpujit.types; _load_ptx(ptx), which has
   the current device's driver load PTX text and unload it, raising what
   such a load raises.  NULL raised. */
PyObject *gj_py_compile_ptx(PyObject *module, PyObject *args, PyObject *kw);
PyObject *gj_py_fastmath_flags(PyObject *module, PyObject *unused);
PyObject *gj_py_parse_signature(PyObject *module, PyObject *sig);
PyObject *gj_py_load_ptx(PyObject *module, PyObject *ptx);

#endif
