/*
 * dlpack.h - the DLPack ABI (version 1.0, dmlc/dlpack's dlpack.h, a stable
 * C ABI restated here so that gpujit needs no header from elsewhere) and
 * dlpack.c's contract: DeviceArray.__dlpack__ / __dlpack_device__ (export)
 * and gpujit.from_dlpack (import), both without copying.
 *
 * A DLPack tensor travels in a PyCapsule named "dltensor" (a DLManagedTensor)
 * or "dltensor_versioned" (a DLManagedTensorVersioned, when the consumer
 * asked with max_version >= (1, 0)).  The consumer renames the capsule
 * "used_dltensor[_versioned]" and calls the tensor's deleter when it no
 * longer needs the memory; a capsule that dies unconsumed calls the deleter
 * itself.  Strides count elements, not bytes.
 */
#ifndef GJ_DLPACK_H
#define GJ_DLPACK_H

#include "gjpy.h"

#include <stdint.h>

enum { GJ_DLPACK_MAJOR = 1, GJ_DLPACK_MINOR = 0 };

typedef enum {                 /* DLDeviceType: where the memory is */
               kDLCPU = 1,                /* host memory */
               kDLCUDA = 2,               /* CUDA device memory; device_id is the ordinal */
               kDLCUDAHost = 3,           /* pinned host memory (cuMemHostAlloc) */
               kDLCUDAManaged = 13,       /* CUDA managed (unified) memory */
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {                 /* DLDataTypeCode */
               kDLInt = 0,
               kDLUInt = 1,
               kDLFloat = 2,
               kDLOpaqueHandle = 3,
               kDLBfloat = 4,
               kDLComplex = 5,
               kDLBool = 6,
} DLDataTypeCode;

typedef struct {
    uint8_t code;              /* DLDataTypeCode */
    uint8_t bits;              /* of one lane: 32 for float32, 64 for complex64 */
    uint16_t lanes;            /* 1 for every dtype gpujit has */
} DLDataType;

typedef struct {
    void *data;                /* opaque: a device address for kDLCUDA */
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;            /* ndim extents */
    int64_t *strides;          /* ndim strides in elements; NULL: C-contiguous */
    uint64_t byte_offset;      /* to the first element from data */
} DLTensor;

typedef struct DLManagedTensor {          /* capsule "dltensor" */
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major, minor;
} DLPackVersion;

enum {
    DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0,   /* the consumer must not write */
    DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1,   /* the producer copied for this export */
};

typedef struct DLManagedTensorVersioned { /* capsule "dltensor_versioned" */
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* DeviceArray.__dlpack__(*, stream=None, max_version=None, dl_device=None,
   copy=None) and __dlpack_device__() (methods of DeviceArray). */
PyObject *gj_py_dlpack_export(PyObject *self, PyObject *args, PyObject *kw);
PyObject *gj_py_dlpack_device(PyObject *self, PyObject *unused);

/* A DeviceArray viewing the memory of obj (an object with __dlpack__, or a
   DLPack capsule not yet consumed), which calls the tensor's deleter when
   it dies.  NULL raised: BufferError when the memory is not on the current
   target (naming both device types) or the tensor is unusable. */
PyObject *gj_py_from_dlpack(GjPyState *st, PyObject *obj);
/* gpujit.from_dlpack(obj), a module function (METH_O). */
PyObject *gj_py_from_dlpack_fn(PyObject *module, PyObject *obj);

#endif
