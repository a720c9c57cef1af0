/*
 * occupancy.h - what a compiled kernel uses and how to launch it
 * (occupancy.c): numba's get_*() queries, suggest_config, forall, the
 * shared-memory check and opt-in, and the occupancy calculator's block
 * size.
 */
#ifndef GJ_PY_OCCUPANCY_H
#define GJ_PY_OCCUPANCY_H

#include "dispatcher.h"

/* ValueError unless e's static shared memory plus `shared`
   bytes of dynamic shared memory fit a block on `device`, or when e needs
   dynamic shared memory and gets none; lets e use more than 48 KiB when
   that is needed (the opt-in).  -1 raised. */
int gj_py_prepare_shared(GjPyState *st, GjDispatcher *d, GjEntry *e, unsigned shared, int device);

/* The block size for launching e (loaded) with `shared` bytes of dynamic
   shared memory: the occupancy calculator's on a GPU, the CPU target's
   choice otherwise (runtime/exec.h).  -1 raised. */
int gj_py_entry_best_block(GjPyState *st, GjEntry *e, unsigned shared, int device, int *block);

/* The Dispatcher's methods on what a kernel uses and how to launch it,
   rows of dispatcher.c's method table: X(name) is the method `name`,
   gj_py_<name>(self, args, kw), with the docstring gj_py_doc_<name>. */
/* clang-format off */
#define GJ_PY_OCCUPANCY_METHODS(X) \
    X(get_regs_per_thread)         \
    X(get_shared_mem_per_block)    \
    X(get_local_mem_per_thread)    \
    X(get_const_mem_size)          \
    X(get_max_threads_per_block)   \
    X(suggest_config)              \
    X(forall)
/* clang-format on */
#define X(name)                                                           \
    PyObject *gj_py_##name(PyObject *self, PyObject *args, PyObject *kw); \
    extern const char gj_py_doc_##name[];
GJ_PY_OCCUPANCY_METHODS(X)
#undef X

#endif
