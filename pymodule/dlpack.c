/*
 * dlpack.c - DLPack both ways, without copying: DeviceArray.__dlpack__ and
 * __dlpack_device__ (export), gpujit.from_dlpack (import).
 *
 * Export: one malloc'd block holds the managed tensor (legacy or versioned,
 * as the consumer's max_version asks) followed by its shape and strides;
 * manager_ctx is the DeviceArray, referenced until the consumer calls the
 * deleter, which takes the GIL (consumers may call it from any thread).
 * For CUDA memory the consumer's stream is made to wait for the work gpujit
 * has queued (an event on the legacy default stream, which orders after
 * gpujit's blocking streams); the host is never blocked.
 *
 * Import: the producer's __dlpack__ is asked with gpujit's own stream (1,
 * the legacy default stream, where gpujit queues work unless given a
 * stream) and max_version (1, 0); the capsule is renamed "used_..." and
 * the tensor handed to an owner capsule, the DeviceArray's `base`, whose
 * destructor calls the tensor's deleter.  The tensor must be where the
 * current target runs kernels: kDLCUDA or kDLCUDAManaged memory on the
 * CUDA target, kDLCPU or kDLCUDAHost memory on the CPU target.
 */
#include "dlpack.h"

#include <stdlib.h>
#include <string.h>

#include "cai.h"
#include "devicearray.h"
#include "module.h"

/* Capsule names: the spec's, and the owner capsules of imported tensors. */
#define LEGACY          "dltensor"
#define VERSIONED       "dltensor_versioned"
#define USED_LEGACY     "used_dltensor"
#define USED_VERSIONED  "used_dltensor_versioned"
#define OWNER_LEGACY    "gpujit.dltensor_owner"
#define OWNER_VERSIONED "gpujit.dltensor_versioned_owner"

/* DLDataTypeCode -> NumPy kind, '?' where gpujit has no type (opaque
   handles, bfloat): the one table read both ways. */
static const char kind_of_code[] = "iuf??cb";

static uint8_t code_of_kind(char kind) {
    return (uint8_t)(strchr(kind_of_code, kind) - kind_of_code);
}

static const char *device_name(int type) {
    switch (type) {
    case kDLCPU: return "kDLCPU (host)";
    case kDLCUDA: return "kDLCUDA (CUDA device)";
    case kDLCUDAHost: return "kDLCUDAHost (pinned host)";
    case kDLCUDAManaged: return "kDLCUDAManaged (CUDA managed)";
    default: return "another device's";
    }
}

/* BufferError unless memory of DLPack device `type` is usable where the
   current target (`device`: an ordinal, or GJ_EXEC_HOST) runs kernels. */
static int check_device(int type, long id, int device) {
    int host = device == GJ_EXEC_HOST;
    if (!host && (type == kDLCUDA || type == kDLCUDAManaged) && id < 0) {
        /* a negative device would name the CPU target to the runtime (exec.h) */
        PyErr_Format(PyExc_BufferError,
                     "from_dlpack(): the tensor's DLPack device id is %ld; a GPU's is 0 or more",
                     id);
        return -1;
    }
    if (host ? type == kDLCPU || type == kDLCUDAHost : type == kDLCUDA || type == kDLCUDAManaged)
        return 0;
    PyErr_Format(PyExc_BufferError,
                 "from_dlpack(): the tensor is in %s memory (DLPack device "
                 "type %d), but the current target, %s, runs kernels on %s memory; copy it "
                 "there first",
                 device_name(type), type, host ? "cpu" : "cuda",
                 host ? "kDLCPU" : "kDLCUDA or kDLCUDAManaged");
    return -1;
}

/* ---- export -------------------------------------------------------------------- */

/* The consumer is done: drop the array (with the GIL) and the block. */
static void release_export(void *block, void *array) {
    if (Py_IsInitialized()) {   /* at exit the array is gone with the interpreter */
        PyGILState_STATE g = PyGILState_Ensure();
        Py_DECREF((PyObject *)array);
        PyGILState_Release(g);
    }
    free(block);
}

static void delete_legacy(DLManagedTensor *m) { release_export(m, m->manager_ctx); }

static void delete_versioned(DLManagedTensorVersioned *m) { release_export(m, m->manager_ctx); }

/* An exported capsule that dies unconsumed frees its tensor (spec). */
static void export_destructor(PyObject *cap) {
    if (PyCapsule_IsValid(cap, LEGACY)) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, LEGACY);
        m->deleter(m);
    } else if (PyCapsule_IsValid(cap, VERSIONED)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, VERSIONED);
        m->deleter(m);
    }
}

/* d as a DLTensor; dims holds 2 * ndim int64 (shape, then strides). */
static int fill_tensor(const GjDeviceArray *d, DLTensor *t, int64_t *dims) {
    t->data = (void *)(uintptr_t)d->ptr;
    t->device.device_type = d->device == GJ_EXEC_HOST ? kDLCPU : kDLCUDA;
    t->device.device_id = d->device == GJ_EXEC_HOST ? 0 : d->device;
    t->ndim = d->ndim;
    t->dtype.code = code_of_kind(gj_py_dtypes[d->dtype_id].kind);
    t->dtype.bits = (uint8_t)(8 * d->itemsize);
    t->dtype.lanes = 1;
    t->shape = dims;
    t->strides = dims + d->ndim;
    t->byte_offset = 0;
    for (int i = 0; i < d->ndim; i++) {
        if (d->strides[i] % d->itemsize) {
            PyErr_SetString(PyExc_BufferError, "__dlpack__(): a stride is not a multiple of "
                                               "the item size, which DLPack cannot express");
            return -1;
        }
        dims[i] = d->shape[i];
        dims[d->ndim + i] = d->strides[i] / d->itemsize;
    }
    return 0;
}

/* A capsule holding d as a (versioned) managed tensor that references d. */
static PyObject *wrap(GjDeviceArray *d, int versioned) {
    size_t head = versioned ? sizeof(DLManagedTensorVersioned) : sizeof(DLManagedTensor);
    head = (head + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
    char *block = malloc(head + (size_t)(2 * d->ndim + 1) * sizeof(int64_t));
    if (!block)
        return PyErr_NoMemory();
    DLTensor *t;
    if (versioned) {
        DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)(void *)block;
        m->version = (DLPackVersion){GJ_DLPACK_MAJOR, GJ_DLPACK_MINOR};
        m->manager_ctx = d;
        m->deleter = delete_versioned;
        m->flags = d->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
        t = &m->dl_tensor;
    } else {
        DLManagedTensor *m = (DLManagedTensor *)(void *)block;
        m->manager_ctx = d;
        m->deleter = delete_legacy;
        t = &m->dl_tensor;
    }
    if (fill_tensor(d, t, (int64_t *)(void *)(block + head)) < 0) {
        free(block);
        return NULL;
    }
    Py_INCREF((PyObject *)d);
    PyObject *cap = PyCapsule_New(block, versioned ? VERSIONED : LEGACY, export_destructor);
    if (!cap) {
        Py_DECREF((PyObject *)d);
        free(block);
    }
    return cap;
}

/* What the consumer asked for, checked; *versioned: a versioned capsule. */
static int check_request(const GjDeviceArray *d, PyObject *max_version, PyObject *dl_device,
                         PyObject *copy, int *versioned) {
    *versioned = 0;
    if (max_version != Py_None) {
        long major;
        if (!PyTuple_Check(max_version) || PyTuple_Size(max_version) != 2 ||
            ((major = PyLong_AsLong(PyTuple_GetItem(max_version, 0))) == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "__dlpack__(): max_version must be a tuple "
                                             "(major, minor) of ints");
            return -1;
        }
        *versioned = major >= GJ_DLPACK_MAJOR;
    }
    if (dl_device != Py_None) {
        long type = -1, id = -1;
        if (PyTuple_Check(dl_device) && PyTuple_Size(dl_device) == 2) {
            type = PyLong_AsLong(PyTuple_GetItem(dl_device, 0));
            id = PyLong_AsLong(PyTuple_GetItem(dl_device, 1));
        }
        if (PyErr_Occurred())
            return -1;
        long own_type = d->device == GJ_EXEC_HOST ? kDLCPU : kDLCUDA;
        long own_id = d->device == GJ_EXEC_HOST ? 0 : d->device;
        if (type != own_type || id != own_id) {
            PyErr_Format(PyExc_BufferError,
                         "__dlpack__(): the array is on DLPack device "
                         "(%ld, %ld), not %R; gpujit exports without copying",
                         own_type, own_id, dl_device);
            return -1;
        }
    }
    int want_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (want_copy < 0)
        return -1;
    if (want_copy) {
        PyErr_SetString(PyExc_BufferError,
                        "__dlpack__(copy=True): gpujit exports only "
                        "without copying; copy the array first (copy_to_host, or a new "
                        "device array and copy_to_device)");
        return -1;
    }
    if (d->readonly && !*versioned) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__(): the array is read-only, which only "
                                           "a versioned capsule can say: pass max_version=(1, 0)");
        return -1;
    }
    return 0;
}

/* Orders the consumer's `stream` after gpujit's queued work on d's device. */
static int order_stream(GjPyState *st, const GjDeviceArray *d, PyObject *stream) {
    if (d->device == GJ_EXEC_HOST) {
        /* CPU launches are synchronous: nothing is pending. */
        if (stream == Py_None || (PyLong_Check(stream) && PyLong_AsLong(stream) == -1))
            return 0;
        PyErr_SetString(PyExc_ValueError, "__dlpack__(): stream must be None for a CPU-target "
                                          "array (DLPack device kDLCPU)");
        return -1;
    }
    long long handle = 1;   /* None: the legacy default stream */
    if (stream != Py_None) {
        if (!PyLong_Check(stream)) {
            PyErr_SetString(PyExc_TypeError, "__dlpack__(): stream must be an int or None");
            return -1;
        }
        handle = PyLong_AsLongLong(stream);
        if (handle == -1 && PyErr_Occurred())
            return -1;
    }
    if (handle == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "__dlpack__(): stream 0 is ambiguous and not "
                        "allowed; pass 1 for the legacy default stream, 2 for the per-thread "
                        "one");
        return -1;
    }
    /* -1: the consumer orders itself.  1: the legacy default stream already
       waits for all of gpujit's streams, which are blocking ones. */
    if (handle == -1 || handle == 1)
        return 0;
    GjExecError err;
    int prev = gj_exec_current_device();
    GjExecStatus rc = gj_exec_select(d->device, &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_exec_stream_wait_default(d->device, (void *)(uintptr_t)handle, &err);
    if (prev != d->device) {
        GjExecError ignored;
        gj_exec_select(prev, &ignored);
    }
    if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    return 0;
}

PyObject *gj_py_dlpack_export(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &max_version,
                                     &dl_device, &copy))
        return NULL;
    GjDeviceArray *d = (GjDeviceArray *)self;
    int versioned;
    if (check_request(d, max_version, dl_device, copy, &versioned) < 0 ||
        order_stream(gj_py_state_of_type(Py_TYPE(self)), d, stream) < 0)
        return NULL;
    return wrap(d, versioned);
}

PyObject *gj_py_dlpack_device(PyObject *self, PyObject *unused) {
    (void)unused;
    const GjDeviceArray *d = (const GjDeviceArray *)self;
    return d->device == GJ_EXEC_HOST ? Py_BuildValue("(ii)", kDLCPU, 0)
                                     : Py_BuildValue("(ii)", kDLCUDA, d->device);
}

/* ---- import -------------------------------------------------------------------- */

/* Destructor of an imported tensor's owner: the consumer (gpujit) is done. */
static void owner_destructor(PyObject *owner) {
    if (PyCapsule_IsValid(owner, OWNER_VERSIONED)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(owner, OWNER_VERSIONED);
        if (m->deleter)
            m->deleter(m);
    } else if (PyCapsule_IsValid(owner, OWNER_LEGACY)) {
        DLManagedTensor *m = PyCapsule_GetPointer(owner, OWNER_LEGACY);
        if (m->deleter)
            m->deleter(m);
    }
}

/* Consumes capsule cap (renamed "used_..."): a new owner capsule of its
   tensor, with *t and *flags read from it; NULL raised (cap untouched). */
static PyObject *consume(PyObject *cap, DLTensor **t, uint64_t *flags) {
    void *m;
    PyObject *owner;
    if (PyCapsule_IsValid(cap, VERSIONED)) {
        DLManagedTensorVersioned *v = PyCapsule_GetPointer(cap, VERSIONED);
        if (v->version.major != GJ_DLPACK_MAJOR) {
            PyErr_Format(PyExc_BufferError,
                         "from_dlpack(): a DLPack %u.%u tensor; gpujit "
                         "reads version 1",
                         v->version.major, v->version.minor);
            return NULL;
        }
        if (PyCapsule_SetName(cap, USED_VERSIONED) < 0)
            return NULL;
        m = v;
        *t = &v->dl_tensor;
        *flags = v->flags;
        if (!(owner = PyCapsule_New(m, OWNER_VERSIONED, owner_destructor)) && v->deleter)
            v->deleter(v);
    } else if (PyCapsule_IsValid(cap, LEGACY)) {
        DLManagedTensor *l = PyCapsule_GetPointer(cap, LEGACY);
        if (PyCapsule_SetName(cap, USED_LEGACY) < 0)
            return NULL;
        m = l;
        *t = &l->dl_tensor;
        *flags = 0;
        if (!(owner = PyCapsule_New(m, OWNER_LEGACY, owner_destructor)) && l->deleter)
            l->deleter(l);
    } else if (PyCapsule_IsValid(cap, USED_LEGACY) || PyCapsule_IsValid(cap, USED_VERSIONED)) {
        PyErr_SetString(PyExc_BufferError, "from_dlpack(): the DLPack capsule was already "
                                           "consumed (a capsule can be consumed once)");
        return NULL;
    } else {
        PyErr_SetString(PyExc_TypeError, "from_dlpack(): the capsule is not a DLPack tensor "
                                         "(named \"dltensor\" or \"dltensor_versioned\")");
        return NULL;
    }
    return owner;
}

/* The tensor's element type, dims and data as a GjDevView. */
static int tensor_view(const DLTensor *t, uint64_t flags, GjDevView *v) {
    const DLDataType dt = t->dtype;
    char kind = dt.code < sizeof kind_of_code - 1 ? kind_of_code[dt.code] : '?';
    v->dtype =
        kind == '?' || dt.lanes != 1 || dt.bits % 8 ? -1 : gj_py_dtype_lookup(kind, dt.bits / 8);
    if (v->dtype < 0) {
        PyErr_Format(PyExc_BufferError,
                     "from_dlpack(): DLPack dtype (code %d, %d bits, %d "
                     "lanes) has no gpujit type (supported: bool, int8-64, uint8-64, "
                     "float16-64, complex64/128)",
                     dt.code, dt.bits, dt.lanes);
        return -1;
    }
    if (t->ndim < 0 || t->ndim > GJ_PY_MAX_NDIM) {
        PyErr_Format(PyExc_BufferError,
                     "from_dlpack(): the tensor has %d dimensions; gpujit "
                     "supports up to %d",
                     t->ndim, (int)GJ_PY_MAX_NDIM);
        return -1;
    }
    Py_ssize_t itemsize = gj_py_dtypes[v->dtype].itemsize;
    v->ptr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    v->ndim = t->ndim;
    v->readonly = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    v->has_strides = t->strides != NULL;
    for (int i = 0; i < t->ndim; i++) {
        v->shape[i] = (Py_ssize_t)t->shape[i];
        v->strides[i] = t->strides ? (Py_ssize_t)t->strides[i] * itemsize : 0;
    }
    return 0;
}

/* BufferError early, before the producer does any work, when obj says
   (__dlpack_device__) that its memory is not on the current target. */
static int precheck_device(PyObject *obj, int device) {
    PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!dev) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();   /* the capsule's own device is checked anyway */
        return 0;
    }
    int pair = PyTuple_Check(dev) && PyTuple_Size(dev) == 2;
    long type = pair ? PyLong_AsLong(PyTuple_GetItem(dev, 0)) : -1;
    long id = pair && type != -1 ? PyLong_AsLong(PyTuple_GetItem(dev, 1)) : 0;
    Py_DECREF(dev);
    if (type == -1 || (id == -1 && PyErr_Occurred())) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "__dlpack_device__() did not return a tuple "
                                             "(device type, device id)");
        return -1;
    }
    return check_device((int)type, id, device);
}

/* obj.__dlpack__ as gpujit consumes it; a capsule or NULL raised. */
static PyObject *request_capsule(PyObject *obj, int device) {
    PyObject *method = gj_py_protocol_attr(obj, "__dlpack__",
                                           "from_dlpack() needs an object "
                                           "with __dlpack__ or a DLPack capsule, not '%S'");
    if (!method)
        return NULL;
    PyObject *kw = device == GJ_EXEC_HOST
                       ? Py_BuildValue("{s:O,s:(ii)}", "stream", Py_None, "max_version",
                                       GJ_DLPACK_MAJOR, GJ_DLPACK_MINOR)
                       : Py_BuildValue("{s:i,s:(ii)}", "stream", 1, "max_version", GJ_DLPACK_MAJOR,
                                       GJ_DLPACK_MINOR);
    PyObject *no_args = PyTuple_New(0);
    PyObject *cap = kw && no_args ? PyObject_Call(method, no_args, kw) : NULL;
    if (!cap && kw && no_args && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* A producer older than DLPack 1.0 takes no max_version. */
        PyErr_Clear();
        if (PyDict_DelItemString(kw, "max_version") == 0)
            cap = PyObject_Call(method, no_args, kw);
    }
    Py_DECREF(method);
    Py_XDECREF(kw);
    Py_XDECREF(no_args);
    return cap;
}

PyObject *gj_py_from_dlpack(GjPyState *st, PyObject *obj) {
    int device;
    if (gj_py_ensure(st) < 0 || gj_py_device(st, &device) < 0)
        return NULL;
    PyObject *cap;
    if (PyCapsule_CheckExact(obj))
        cap = Py_NewRef(obj);
    else if (precheck_device(obj, device) < 0 || !(cap = request_capsule(obj, device)))
        return NULL;
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__() did not return a capsule");
        Py_DECREF(cap);
        return NULL;
    }
    DLTensor *t;
    uint64_t flags;
    PyObject *owner = consume(cap, &t, &flags);
    Py_DECREF(cap);
    if (!owner)
        return NULL;
    GjDevView v;
    GjDeviceArray *d = NULL;
    if (check_device(t->device.device_type, t->device.device_id, device) == 0 &&
        tensor_view(t, flags, &v) == 0)
        d = gj_py_devicearray_view(
            st, &v, device == GJ_EXEC_HOST ? GJ_EXEC_HOST : t->device.device_id, owner);
    Py_DECREF(owner);   /* the view holds it, or its death frees the tensor */
    return (PyObject *)d;
}

PyObject *gj_py_from_dlpack_fn(PyObject *module, PyObject *obj) {
    return gj_py_from_dlpack(PyModule_GetState(module), obj);
}
