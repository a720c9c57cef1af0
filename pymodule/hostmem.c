/*
 * hostmem.c - host memory the GPU reaches, as NumPy arrays: the buffer
 * under pinned_array, mapped_array and managed_array (gpujit/__init__.py
 * makes the arrays), and page-locking an existing array (pinned()).
 *
 *     class _HostAllocation:          # the arrays' base; exports its bytes
 *         kind: str                   # "pinned", "mapped" or "managed"
 *         nbytes: int; device: int
 *     _host_alloc(kind, nbytes, dtype, wc=False, attach_global=True) -> _HostAllocation
 *     _host_register(ary) -> _HostRegistration   # unregisters when closed or freed
 *
 * Mapped and managed allocations stay listed in the module state while they
 * live, so that a kernel argument inside one passes its device address with
 * no copy (gj_py_hostmem_device_ptr); pinned memory goes through the usual
 * copies, which are then DMA and asynchronous on a stream.  runtime/exec.h
 * allocates, on either target.
 */
#include "hostmem.h"

#include <string.h>

#include "devicearray.h"
#include "module.h"

typedef struct GjHostAlloc {
    PyObject_HEAD void *host;
    uint64_t dptr;               /* device address (mapped, managed), else 0 */
    size_t nbytes;
    int device;
    GjHostKind kind;
    struct GjHostAlloc *next;    /* in st->zero_copy (mapped and managed only) */
    struct GjHostAlloc **prev;   /* where the pointer to this one is */
} GjHostAlloc;

static const char *const kind_names[] = {"pinned", "mapped", "managed"};

/* ---- the zero-copy list ----------------------------------------------------------- */

int gj_py_hostmem_device_ptr(GjPyState *st, const void *buf, size_t len, uint64_t *dptr) {
    uintptr_t at = (uintptr_t)buf;
    for (GjHostAlloc *a = st->zero_copy; a; a = a->next) {
        uintptr_t lo = (uintptr_t)a->host;
        if (at >= lo && at - lo <= a->nbytes && len <= a->nbytes - (at - lo)) {
            *dptr = a->dptr + (uint64_t)(at - lo);
            return 1;
        }
    }
    return 0;
}

static void unlink_alloc(GjHostAlloc *a) {
    if (!a->prev)
        return;
    *a->prev = a->next;
    if (a->next)
        a->next->prev = a->prev;
    a->prev = NULL;
    a->next = NULL;
}

void gj_py_hostmem_forget(GjPyState *st) {
    while (st->zero_copy)
        unlink_alloc(st->zero_copy);
}

/* ---- _HostAllocation ----------------------------------------------------------------- */

static void alloc_dealloc(PyObject *self) {
    GjHostAlloc *a = (GjHostAlloc *)self;
    PyTypeObject *tp = Py_TYPE(self);
    unlink_alloc(a);
    gj_exec_host_free(a->device, a->kind, a->host);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* A view holds a reference to the allocation: it outlives every array on it. */
static int alloc_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    GjHostAlloc *a = (GjHostAlloc *)self;
    return PyBuffer_FillInfo(view, self, a->host, (Py_ssize_t)a->nbytes, 0, flags);
}

static PyObject *alloc_repr(PyObject *self) {
    GjHostAlloc *a = (GjHostAlloc *)self;
    return PyUnicode_FromFormat("<gpujit %s host memory, %zu bytes>", kind_names[a->kind],
                                a->nbytes);
}

static PyObject *alloc_kind(PyObject *self, void *c) {
    (void)c;
    return PyUnicode_FromString(kind_names[((GjHostAlloc *)self)->kind]);
}

static PyObject *alloc_nbytes(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromSize_t(((GjHostAlloc *)self)->nbytes);
}

static PyObject *alloc_device_ptr(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(((GjHostAlloc *)self)->dptr);
}

static PyGetSetDef alloc_getset[] = {
    {"kind", alloc_kind, NULL, "'pinned', 'mapped' or 'managed'.", NULL},
    {"nbytes", alloc_nbytes, NULL, "Bytes.", NULL},
    {"device_pointer", alloc_device_ptr, NULL,
     "The device address kernels use (mapped, managed), else 0.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot alloc_slots[] = {
    {Py_tp_dealloc, (void *)alloc_dealloc},
    {Py_tp_repr, (void *)alloc_repr},
    {Py_tp_getset, alloc_getset},
    {Py_bf_getbuffer, (void *)alloc_getbuffer},
    {Py_tp_doc, "Host memory the GPU reaches, under a pinned, mapped or managed array."},
    {0, NULL},
};

static PyType_Spec alloc_spec = {
    .name = "gpujit._HostAllocation",
    .basicsize = sizeof(GjHostAlloc),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = alloc_slots,
};

static PyObject *mod_host_alloc(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"kind", "nbytes", "dtype", "wc", "attach_global", NULL};
    const char *kind_name;
    Py_ssize_t nbytes;
    PyObject *dtype;
    int wc = 0, attach_global = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "snO|pp:_host_alloc", kwlist, &kind_name, &nbytes,
                                     &dtype, &wc, &attach_global) ||
        gj_py_dtype_id_of(dtype) < 0)   /* an object array would read garbage pointers */
        return NULL;
    int kind = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(kind_name, kind_names[i]) == 0)
            kind = i;
    if (kind < 0 || nbytes < 0) {
        PyErr_Format(PyExc_ValueError, "_host_alloc(): kind %s, %zd bytes", kind_name, nbytes);
        return NULL;
    }
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (gj_py_device(st, &device) < 0 || gj_py_ensure(st) < 0)
        return NULL;
    GjHostAlloc *a = PyObject_New(GjHostAlloc, st->HostAllocType);
    if (!a)
        return NULL;
    a->host = NULL;
    a->dptr = 0;
    a->nbytes = (size_t)nbytes;
    a->device = device;
    a->kind = (GjHostKind)kind;
    a->next = NULL;
    a->prev = NULL;
    unsigned flags = (wc ? GJ_HOST_WC : 0) | (attach_global ? 0 : GJ_HOST_ATTACH_HOST);
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc =
        gj_exec_host_alloc(device, a->kind, a->nbytes, flags, &a->host, &a->dptr, &err);
    Py_END_ALLOW_THREADS if (rc != GJ_EXEC_OK) {
        Py_DECREF(a);
        return gj_py_raise_cuda(st, &err);
    }
    if (a->dptr && device != GJ_EXEC_HOST) {   /* kernels take it in place */
        a->next = st->zero_copy;
        if (a->next)
            a->next->prev = &a->next;
        a->prev = &st->zero_copy;
        st->zero_copy = a;
    }
    return (PyObject *)a;
}

/* ---- page-locking an existing array --------------------------------------------------- */

/*
 * class _HostRegistration:  # holds ary's buffer page-locked until close() or freed
 *     def close(self) -> None
 */
typedef struct GjHostReg {
    PyObject_HEAD Py_buffer view;
    int device;
    int registered;
} GjHostReg;

static void reg_close(GjHostReg *r) {
    if (r->registered) {
        gj_exec_host_unregister(r->device, r->view.buf);
        PyBuffer_Release(&r->view);
        r->registered = 0;
    }
}

static void reg_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    reg_close((GjHostReg *)self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

static PyObject *reg_close_method(PyObject *self, PyObject *unused) {
    (void)unused;
    reg_close((GjHostReg *)self);
    Py_RETURN_NONE;
}

static PyMethodDef reg_methods[] = {
    {"close", reg_close_method, METH_NOARGS, "close()\n--\n\nUnlocks the memory."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot reg_slots[] = {
    {Py_tp_dealloc, (void *)reg_dealloc},
    {Py_tp_methods, reg_methods},
    {Py_tp_doc, "An array's memory held page-locked (gpujit.pinned)."},
    {0, NULL},
};

static PyType_Spec reg_spec = {
    .name = "gpujit._HostRegistration",
    .basicsize = sizeof(GjHostReg),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = reg_slots,
};

static PyObject *mod_host_register(PyObject *module, PyObject *ary) {
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (gj_py_device(st, &device) < 0 || gj_py_ensure(st) < 0)
        return NULL;
    GjHostReg *r = PyObject_New(GjHostReg, st->HostRegType);
    if (!r)
        return NULL;
    r->registered = 0;
    r->device = device;
    if (PyObject_GetBuffer(ary, &r->view, PyBUF_ANY_CONTIGUOUS) < 0) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "pinned() takes contiguous arrays (a buffer)");
        return NULL;
    }
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc =
        gj_exec_host_register(device, r->view.buf, (size_t)r->view.len, &err);
    Py_END_ALLOW_THREADS if (rc != GJ_EXEC_OK) {
        PyBuffer_Release(&r->view);
        Py_DECREF(r);
        return gj_py_raise_cuda(st, &err);
    }
    r->registered = 1;
    return (PyObject *)r;
}

static PyMethodDef hostmem_functions[] = {
    {"_host_alloc", (PyCFunction)(void (*)(void))mod_host_alloc, METH_VARARGS | METH_KEYWORDS,
     "_host_alloc(kind, nbytes, dtype, wc=False, attach_global=True)\n--\n\n"
     "Host memory of a kind ('pinned', 'mapped', 'managed') for the current device, for\n"
     "elements of `dtype` (a numpy.dtype; TypeError for one gpujit has no type for)."},
    {"_host_register", mod_host_register, METH_O,
     "_host_register(ary)\n--\n\nPage-locks ary's memory until the result is closed."},
    {NULL, NULL, 0, NULL},
};

int gj_py_hostmem_register(PyObject *module, GjPyState *st) {
    st->HostAllocType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &alloc_spec, NULL);
    st->HostRegType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &reg_spec, NULL);
    if (!st->HostAllocType || !st->HostRegType)
        return -1;
    return PyModule_AddFunctions(module, hostmem_functions);
}
