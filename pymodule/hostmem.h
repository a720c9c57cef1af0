/*
 * hostmem.h - page-locked, mapped and managed host memory (hostmem.c): the
 * buffers under pinned_array, mapped_array and managed_array, and the list
 * of live zero-copy allocations a launch consults.
 */
#ifndef GJ_PY_HOSTMEM_H
#define GJ_PY_HOSTMEM_H

#include "gjpy.h"

/* 1 and *dptr (the device address of buf) when [buf, buf+len)
   lies in a live mapped or managed allocation, which a kernel then takes
   in place; else 0. */
int gj_py_hostmem_device_ptr(GjPyState *st, const void *buf, size_t len, uint64_t *dptr);

/* Adds the host-memory types and functions to the module; and
   forgets the allocations still alive when the module's state goes. */
int gj_py_hostmem_register(PyObject *module, GjPyState *st);
void gj_py_hostmem_forget(GjPyState *st);

#endif
