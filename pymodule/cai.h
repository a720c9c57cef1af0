/*
 * cai.h - __cuda_array_interface__ (cai.c): reading another library's
 * device array into a GjDevView without copying, checking that the driver
 * knows its memory, and gpujit.as_cuda_array.
 */
#ifndef GJ_PY_CAI_H
#define GJ_PY_CAI_H

#include "gjpy.h"

/* An array in device memory that another library exports. */
typedef struct GjDevView {
    uint64_t ptr;
    int dtype;                /* GjDtypeId */
    int ndim;
    int readonly;
    int has_strides;          /* 0: C-contiguous (strides not set) */
    Py_ssize_t shape[GJ_PY_MAX_NDIM];
    Py_ssize_t strides[GJ_PY_MAX_NDIM];   /* bytes */
} GjDevView;

/* obj's __cuda_array_interface__ (or, for CuPy arrays and PyTorch tensors,
   the same read from their attributes) into v: 0; -1 raised; -2 when obj
   exports none (no exception). */
int gj_py_cai_view(GjPyState *st, PyObject *obj, GjDevView *v);

/* gpujit.as_cuda_array(obj, sync=True): a DeviceArray viewing obj's memory
   (obj is its base), after waiting for the interface's stream if sync. */
PyObject *gj_py_as_cuda_array_fn(PyObject *module, PyObject *args, PyObject *kw);

/* 0 when the memory v describes is memory the CUDA driver knows (device,
   managed or page-locked host memory); -1 with ValueError naming kernel
   argument `arg` (-1: as_cuda_array) when not: plain host memory would
   fault the kernel, and a fault ends the process's CUDA context. */
int gj_py_cai_check_pointer(GjPyState *st, const GjDevView *v, int arg);

/* Interns the attribute names cai.c reads; -1 raised (module exec). */
int gj_py_cai_init(GjPyState *st);

#endif
