/*
 * launchargs.h - a kernel call's Python arguments, each as a GjArg and its
 * words of the type key (dispatcher.h), without creating Python objects on
 * the hot path: DeviceArrays by struct access and NumPy scalars read in
 * place, both by exact type, first; Python scalars by type check; NumPy
 * arrays and other scalars through the buffer protocol;
 * __cuda_array_interface__ objects by attribute lookup; last, an object
 * with only __dlpack__, seen through a from_dlpack view held until the
 * launch returns.  A tuple argument is a marker word and its items, one
 * GjArg each.  launcher.c packs the GjArgs into kernelParams.
 */
#ifndef GJ_LAUNCHARGS_H
#define GJ_LAUNCHARGS_H

#include "dispatcher.h"

typedef enum GjArgKind {
    GJ_ARG_SCALAR,    /* value in `scalar` */
    GJ_ARG_HOST,      /* host buffer, copied to `ptr` for the launch */
    GJ_ARG_DEVICE,    /* device memory at `ptr`: DeviceArray or __cuda_array_interface__ */
} GjArgKind;

typedef struct GjArg {
    GjArgKind kind;
    int dtype, ndim;
    char layout;
    int readonly;
    uint64_t ptr;
    size_t nbytes;                      /* GJ_ARG_HOST: bytes of the temporary */
    int64_t shape[GJ_PY_MAX_NDIM];
    int64_t strides[GJ_PY_MAX_NDIM];    /* bytes */
    uint64_t scalar[2];                 /* complex128 needs 16 bytes */
    PyObject *obj;                      /* borrowed: the argument */
    PyObject *contig;                   /* GJ_ARG_HOST: contiguous copy of a strided obj */
    PyObject *dlview;                   /* GJ_ARG_DEVICE: the DeviceArray a __dlpack__ obj is
                                           seen through, held until the launch returns */
    Py_buffer view;                     /* GJ_ARG_HOST: of obj, or of contig */
    int has_view;
} GjArg;

/* Counts the GjArgs (scalars and arrays) and key words of argument obj: a
   tuple is a word and its items'.  -1 raised (a tuple too large or too
   deep). */
int gj_py_args_count(PyObject *obj, int *leaves, int *words);
/* Parses argument i (obj) for a launch of d on `device` into args[*parsed...]
   and key[*w...], advancing both: a tuple's items one GjArg each
   (depth-first), after its marker word.  -1 raised (TypeError naming the
   argument for what gpujit cannot pass). */
int gj_py_args_parse(GjPyState *st, GjDispatcher *d, int device, int i, PyObject *obj, GjArg *args,
                     int *parsed, uint32_t *key, int *w);
/* Releases what the first n args hold (buffer views, copies, views). */
void gj_py_args_release(GjArg *args, int n);

#endif
