/*
 * launcher.h - the Launcher type (launcher.c): kernel[config] and
 * kernel.forall(n), whose call launches.
 */
#ifndef GJ_PY_LAUNCHER_H
#define GJ_PY_LAUNCHER_H

#include "dispatcher.h"

/* kernel[config]: a new launch configuration object; NULL raised. */
PyObject *gj_py_launcher_new(GjPyState *st, GjDispatcher *d, PyObject *config);

/* kernel.forall(ntasks, tpb, stream, sharedmem) (ntasks >= 0, tpb >= 0,
   occupancy.c checked them): a launch configuration of ceil(ntasks / tpb)
   blocks of tpb threads; for tpb 0, of the block size the occupancy
   calculator gives the specialisation each call launches.  NULL raised. */
PyObject *gj_py_launcher_forall(GjPyState *st, GjDispatcher *d, long long ntasks, int tpb,
                                PyObject *stream, PyObject *sharedmem);

/* Adds the Launcher type to the module state. */
int gj_py_launcher_register(PyObject *module, GjPyState *st);

#endif
