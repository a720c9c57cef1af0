/*
 * kernelerror.c - the errors a kernel reported at run time (debug builds):
 * reads the error record compile.h describes after a launch and raises the
 * Python exception of the site that failed first.
 *
 * The record is the launch's own (on the launcher's stack), which the
 * runtime fills (runtime/exec.h): on the CPU target the grid writes it; on
 * the GPU the runtime reads the module's global GJ_ERROR_RECORD_SYMBOL after
 * the kernel completes (the launch synchronises its stream, as numba's
 * debug launches do) and clears it for the next launch.
 */
#include "dispatch.h"


/* The Python exception of an error kind. */
static PyObject *exception_of(GjErrorKind kind)
{
    switch (kind) {
    case GJ_ERROR_UNBOUND_LOCAL: return PyExc_UnboundLocalError;
    }
    return PyExc_RuntimeError;
}

int gj_py_kernel_error_raise(GjDispatcher *d, const GjEntry *e, const int64_t *record)
{
    if (record[0] == 0)
        return 0;
    int64_t site = record[0] - 1;
    if (site < 0 || site >= e->res.nerror_sites) {
        PyErr_Format(PyExc_RuntimeError, "the kernel's error record names no error site "
                     "(%lld); its memory was overwritten", (long long)record[0]);
        return -1;
    }
    const GjErrorSite *s = &e->res.error_sites[site];
    PyObject *name = PyObject_GetAttrString(d->func, "__qualname__");
    if (!name)
        return -1;
    PyErr_Format(exception_of(s->kind),
                 "%s, in kernel %U at threadIdx (%lld, %lld, %lld) of blockIdx (%lld, %lld, %lld)",
                 s->message, name, (long long)record[1], (long long)record[2],
                 (long long)record[3], (long long)record[4], (long long)record[5],
                 (long long)record[6]);
    Py_DECREF(name);
    return -1;
}
