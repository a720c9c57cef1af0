/*
 * specialize.h - making a specialisation's code (specialize.c): the
 * compile options for a device, the compile itself, and the persistent
 * cache's lookup, store and module load.
 */
#ifndef GJ_PY_SPECIALIZE_H
#define GJ_PY_SPECIALIZE_H

#include "dispatcher.h"
#include "codeview_py.h"

/* Compiles cv (argument types set) with o, the GIL released,
   issuing its warnings when `warn` (not for the CPU target's second tier,
   whose first compile issued them); *sig gets the signature's type names.
   -1 raised. */
int gj_py_run_compile(GjPyState *st, GjCtx *ctx, GjCodeView *cv, const GjCompileOptions *o,
                      GjCompileResult *res, PyObject **sig, int warn);

/* The signature's type names, a key of .signatures; NULL raised. */
PyObject *gj_py_signature_tuple(const GjCodeView *cv);

/* The compile options of d's entries on device `ordinal`: d's jit options
   for that device's compute capability (sm_90 without a GPU), or the host
   CPU for GJ_EXEC_HOST. */
void gj_py_target_options(GjPyState *st, const GjDispatcher *d, int ordinal, GjCompileOptions *o);

/* The persistent cache.  e->res and e->sig for cv (argument
   types set, instructions not yet read: views holds its code objects) with
   o on device e->key[0], from the cache or else compiled
   (gj_py_codeview_instructions, then gj_py_run_compile) and, when it is to
   be kept (e->cache_key), stored: a CPU object file now, a cubin when
   gj_py_entry_load has the driver link it.  A compile issues its warnings
   when `warn` (gj_py_run_compile).  -1 raised. */
int gj_py_cache_compile(GjPyState *st, GjDispatcher *d, GjCtx *ctx, GjCodeView *cv,
                        GjPyViews *views, GjCompileOptions *o, GjEntry *e, int warn);

/* The options of a persistent-cache key: jit()'s keyword arguments to the
   Dispatcher (kw, may be NULL) but the function and `cache`; NULL raised. */
PyObject *gj_py_cache_jit_options(PyObject *kw);

/* Writes res (with its binary, which it then frees) as the entry of key;
   -1 raised. */
int gj_py_cache_store(const char *key, GjCompileResult *res);

/* Loads e's module, without the GIL: its cached cubin; else, when the
   persistent cache keeps e (e->cache_key), the cubin the driver's linker
   makes of the PTX, left in e->res.binary with *store set, for
   gj_py_cache_store; else the PTX, as without the cache.  Each step that
   fails falls to the next; the last one's error is reported. */
GjExecStatus gj_py_cache_module_load(GjEntry *e, int lineinfo, int *store, GjExecError *err);

#endif
