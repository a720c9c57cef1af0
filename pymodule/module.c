/*
 * module.c - the _gpujit extension module: its state, exceptions, the one
 * place driver errors and compiler diagnostics become Python exceptions,
 * Stream and Event objects, and the module-level functions.
 *
 *     class GpujitError(Exception)
 *         TypingError, UnsupportedError, LoweringError, InternalError
 *         CudaError                       .name .code .call
 *             CudaOutOfMemoryError(CudaError, MemoryError)  .requested .free .total
 *             CudaCompileError, CudaKernelFault, CudaSupportError
 *     class GpujitWarning(UserWarning)    the compiler's warnings
 *         GpujitPerformanceWarning        host arrays copied at every launch
 *
 * Streams and events are stream.c's, host memory kinds hostmem.c's.
 *
 * Multi-phase init (PEP 489): the exec slot fills a GjPyState; heap types
 * come from PyType_FromModuleAndSpec, so every method finds the state
 * through its type.  Limited API (abi3, 3.11) only.  Importing the module
 * touches neither CUDA nor numpy: both load on first use.
 *
 * The execution target ("cuda" or "cpu", module state) is chosen on first
 * need: GPUJIT_TARGET, else the GPU when a driver and a device are usable,
 * else the CPU with a one-time RuntimeWarning; set_target() changes it.
 */
#include "module.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cachefile.h"
#include "cai.h"
#include "codeview_py.h"
#include "compileptx.h"
#include "devicearray.h"
#include "dispatcher.h"
#include "dlpack.h"
#include "hostmem.h"
#include "stream.h"

/* ---- state ---------------------------------------------------------------- */

GjPyState *gj_py_state_of_type(PyTypeObject *tp) { return (GjPyState *)PyType_GetModuleState(tp); }

/* st->np_scalar_types: each dtype's scalar type, kept where a scalar made
   of a known value holds its bytes at sizeof(PyObject), as NumPy lays out
   every scalar (arrayscalars.h: PyObject_HEAD, then obval); any doubt
   leaves the type to the buffer protocol. */
static void find_scalar_types(GjPyState *st) {
    for (int i = 0; i < GJ_DT_COUNT; i++) {
        const GjDtype *t = &gj_py_dtypes[i];
        PyObject *dtype = PyObject_CallFunction(st->np_dtype, "s", t->name);
        PyObject *type = dtype ? PyObject_GetAttrString(dtype, "type") : NULL;
        PyObject *known = t->kind == 'b'   ? Py_NewRef(Py_True)
                          : t->kind == 'c' ? PyComplex_FromDoubles(1.5, -2.25)
                                           : PyLong_FromLong(90);
        PyObject *value = type && known ? PyObject_CallFunctionObjArgs(type, known, NULL) : NULL;
        Py_XDECREF(known);
        Py_buffer view;
        if (value && PyType_Check(type) && Py_IS_TYPE(value, (PyTypeObject *)type) &&
            PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) == 0) {
            if (view.len == t->itemsize &&
                memcmp(view.buf, (const char *)value + sizeof(PyObject), (size_t)view.len) == 0)
                st->np_scalar_types[i] = Py_NewRef(type);
            PyBuffer_Release(&view);
        }
        PyErr_Clear();
        Py_XDECREF(value);
        Py_XDECREF(type);
        Py_XDECREF(dtype);
    }
}

int gj_py_numpy(GjPyState *st) {
    if (st->np_empty)
        return 0;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
        return -1;
    st->np = np;
    st->np_dtype = PyObject_GetAttrString(np, "dtype");
    st->np_empty = PyObject_GetAttrString(np, "empty");
    st->np_ascontiguousarray = PyObject_GetAttrString(np, "ascontiguousarray");
    st->np_copyto = PyObject_GetAttrString(np, "copyto");
    st->np_ndarray = PyObject_GetAttrString(np, "ndarray");
    if (!st->np_dtype || !st->np_empty || !st->np_ascontiguousarray || !st->np_copyto ||
        !st->np_ndarray) {
        Py_CLEAR(st->np_dtype);
        Py_CLEAR(st->np_empty);
        Py_CLEAR(st->np_ascontiguousarray);
        Py_CLEAR(st->np_copyto);
        Py_CLEAR(st->np_ndarray);
        Py_CLEAR(st->np);
        return -1;
    }
    find_scalar_types(st);
    return 0;
}

PyObject *gj_py_as_dtype(GjPyState *st, PyObject *obj) {
    if (gj_py_numpy(st) < 0)
        return NULL;
    return PyObject_CallFunctionObjArgs(st->np_dtype, obj, NULL);
}

PyObject *gj_py_type_name(PyObject *obj) { return PyType_GetName(Py_TYPE(obj)); }

const char *gj_py_str(PyObject *obj, const char *message) {
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8AndSize(obj, NULL) : NULL;
    if (!s && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, message);
    return s;
}

int gj_py_integer(PyObject *obj, long long *v) {
    PyObject *index = PyBool_Check(obj) ? NULL : PyNumber_Index(obj);
    if (!index) {   /* not an integer; an __index__ that raised something else says so */
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int overflow;
    *v = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (*v == -1 && PyErr_Occurred())
        return -1;
    if (overflow)
        *v = overflow > 0 ? LLONG_MAX : LLONG_MIN;
    return 1;
}

PyObject *gj_py_reduce(PyObject *obj, const char *reducer) {
    PyObject *pickling = PyImport_ImportModule("gpujit._pickling");
    PyObject *r = pickling ? PyObject_CallMethod(pickling, reducer, "O", obj) : NULL;
    Py_XDECREF(pickling);
    return r;
}

PyObject *gj_py_protocol_attr(PyObject *obj, const char *attr, const char *message) {
    PyObject *r = PyObject_GetAttrString(obj, attr);
    if (!r && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyObject *tname = gj_py_type_name(obj);
        if (tname)
            PyErr_Format(PyExc_TypeError, message, tname);
        Py_XDECREF(tname);
    }
    return r;
}

/* ---- execution target ------------------------------------------------------ */

static const char *target_name(int target) { return target == GJ_TARGET_CPU ? "cpu" : "cuda"; }

static int target_from_name(const char *name, const char *what) {
    if (strcmp(name, "cpu") == 0)
        return GJ_TARGET_CPU;
    if (strcmp(name, "cuda") == 0)
        return GJ_TARGET_NVPTX;
    PyErr_Format(PyExc_ValueError, "%s must be 'cpu' or 'cuda', not '%s'", what, name);
    return -1;
}

/* Warns (once per process) about a setting of the CPU target's pool that
   it cannot use; -1 when the warnings filter makes that an error. */
static int warn_cpu_env(void) {
    static int warned;
    char msg[256];
    if (warned || !gj_exec_env_problem(GJ_EXEC_HOST, msg, sizeof msg))
        return 0;
    warned = 1;
    return PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "gpujit: %s", msg);
}

/* Resolves the initial target; warns about the CPU fallback when `warn`. */
static int choose_target(GjPyState *st, int warn) {
    if (st->target >= 0)
        return st->target;
    const char *env = getenv("GPUJIT_TARGET");
    if (env && *env) {
        int t = target_from_name(env, "GPUJIT_TARGET");
        if (t >= 0)
            st->target = t;
        return t == GJ_TARGET_CPU && warn && warn_cpu_env() < 0 ? -1 : t;
    }
    int gpu;
    Py_BEGIN_ALLOW_THREADS gpu = gj_exec_gpu_available();
    Py_END_ALLOW_THREADS st->target = gpu ? GJ_TARGET_NVPTX : GJ_TARGET_CPU;
    if (!gpu && warn &&
        PyErr_WarnEx(PyExc_RuntimeWarning,
                     "gpujit: no CUDA GPU found: running kernels on the CPU target "
                     "(set GPUJIT_TARGET=cpu to silence this warning)",
                     1) < 0)
        return -1;
    return !gpu && warn && warn_cpu_env() < 0 ? -1 : st->target;
}

int gj_py_target(GjPyState *st) { return st->target >= 0 ? st->target : choose_target(st, 1); }

int gj_py_device(GjPyState *st, int *device) {
    int t = gj_py_target(st);
    if (t < 0)
        return -1;
    *device = t == GJ_TARGET_CPU ? GJ_EXEC_HOST : gj_exec_current_device();
    return 0;
}

int gj_py_ensure(GjPyState *st) {
    int t = gj_py_target(st);
    if (t < 0)
        return -1;
    if (t == GJ_TARGET_CPU)
        return 0;
    GjExecError err;
    if (gj_exec_select(gj_exec_current_device(), &err) != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    return 0;
}

/* ---- libdevice ------------------------------------------------------------- */

/* The libdevice the GPU target links (gpujit/_libdevice.py searches once
   per process), or NULL when there is none; -1 with an exception. */
static int libdevice_path(GjPyState *st, const char **path) {
    if (!st->libdevice) {
        PyObject *search = PyImport_ImportModule("gpujit._libdevice");
        PyObject *found = search ? PyObject_CallMethod(search, "find", NULL) : NULL;
        Py_XDECREF(search);
        if (!found)
            return -1;
        PyObject *where =
            PyTuple_Check(found) && PyTuple_Size(found) == 2 ? PyTuple_GetItem(found, 1) : NULL;
        if (where == Py_None)
            st->libdevice = Py_NewRef(Py_None);
        else if (where)
            PyUnicode_FSConverter(where, &st->libdevice);
        else
            PyErr_SetString(PyExc_RuntimeError,
                            "gpujit._libdevice.find() returned no (source, path)");
        Py_DECREF(found);
        if (!st->libdevice)
            return -1;
    }
    *path = st->libdevice != Py_None ? PyBytes_AsString(st->libdevice) : NULL;
    return 0;
}

/* GjCompileOptions.find_libdevice (module.h): the search of gpujit/_libdevice.py, run
   (once per process) only when a kernel first needs libdevice.  Called from
   the compile, which runs without the GIL; an exception the search raises
   stays set for gj_py_run_compile to raise. */
const char *gj_py_find_libdevice(void *arg) {
    PyGILState_STATE gil = PyGILState_Ensure();
    const char *path = NULL;
    libdevice_path((GjPyState *)arg, &path);
    PyGILState_Release(gil);
    return path;
}

/* ---- raising ---------------------------------------------------------------- */

/* Raises cls(message) with the driver error's details as attributes. */
static void raise_with_attrs(PyObject *cls, const char *message, const GjExecError *err) {
    PyObject *exc = PyObject_CallFunction(cls, "s", message);
    if (!exc)
        return;
    PyObject *name = err->name[0] ? PyUnicode_FromString(err->name) : Py_NewRef(Py_None);
    PyObject *code = PyLong_FromLong(err->code);
    PyObject *call = PyUnicode_FromString(err->call);
    if (name && code && call && PyObject_SetAttrString(exc, "name", name) == 0 &&
        PyObject_SetAttrString(exc, "code", code) == 0 &&
        PyObject_SetAttrString(exc, "call", call) == 0) {
        if (err->requested || err->free_bytes) {
            PyObject *req = PyLong_FromSize_t(err->requested);
            PyObject *fre = PyLong_FromSize_t(err->free_bytes);
            PyObject *tot = PyLong_FromSize_t(err->total_bytes);
            if (req && fre && tot) {
                PyObject_SetAttrString(exc, "requested", req);
                PyObject_SetAttrString(exc, "free", fre);
                PyObject_SetAttrString(exc, "total", tot);
            }
            Py_XDECREF(req);
            Py_XDECREF(fre);
            Py_XDECREF(tot);
        }
        if (!PyErr_Occurred())
            PyErr_SetObject(cls, exc);
    }
    Py_XDECREF(name);
    Py_XDECREF(code);
    Py_XDECREF(call);
    Py_DECREF(exc);
}

PyObject *gj_py_raise_cuda(GjPyState *st, const GjExecError *err) {
    char msg[sizeof err->message + sizeof err->log + 512];
    switch (err->status) {
    case GJ_EXEC_OK:
        PyErr_SetString(st->InternalError, "CUDA error raised without an error");
        return NULL;
    case GJ_EXEC_NO_DRIVER:
        snprintf(msg, sizeof msg,
                 "%s. A GPU launch needs an NVIDIA GPU and its driver; "
                 "gpujit.compile_ptx() works without one",
                 err->message);
        raise_with_attrs(st->CudaSupportError, msg, err);
        return NULL;
    case GJ_EXEC_NO_DEVICE:
        snprintf(msg, sizeof msg,
                 "no CUDA device is available (%s: %s); check nvidia-smi and "
                 "CUDA_VISIBLE_DEVICES",
                 err->call, err->message);
        raise_with_attrs(st->CudaSupportError, msg, err);
        return NULL;
    case GJ_EXEC_FORKED:
        snprintf(msg, sizeof msg,
                 "%s; start worker processes with the 'spawn' method instead: "
                 "multiprocessing.get_context('spawn').Pool(...), "
                 "concurrent.futures.ProcessPoolExecutor(mp_context="
                 "multiprocessing.get_context('spawn')), or "
                 "multiprocessing.set_start_method('spawn') once at startup",
                 err->message);
        raise_with_attrs(st->CudaError, msg, err);
        return NULL;
    case GJ_EXEC_ERROR: break;
    }
    switch (err->kind) {
    case GJ_ERR_OUT_OF_MEMORY:
        if (err->host) {   /* the CPU target's memory: not a CUDA error */
            PyErr_Format(PyExc_MemoryError, "out of host memory: %s of %zu bytes failed", err->call,
                         err->requested);
            break;
        }
        if (err->requested)
            snprintf(msg, sizeof msg,
                     "out of GPU memory: %s of %zu bytes failed with %zu of %zu bytes free "
                     "(%s)",
                     err->call, err->requested, err->free_bytes, err->total_bytes, err->name);
        else
            snprintf(msg, sizeof msg, "out of GPU memory in %s (%zu of %zu bytes free; %s)",
                     err->call, err->free_bytes, err->total_bytes, err->name);
        raise_with_attrs(st->CudaOutOfMemoryError, msg, err);
        break;
    case GJ_ERR_COMPILE:
        snprintf(msg, sizeof msg, "the CUDA driver rejected the kernel's PTX (%s: %s)%s%s",
                 err->name, err->message, err->log[0] ? ":\n" : "", err->log);
        raise_with_attrs(st->CudaCompileError, msg, err);
        break;
    case GJ_ERR_KERNEL_FAULT:   /* also reported by a later call, a load too */
        snprintf(msg, sizeof msg,
                 "a kernel faulted: %s (%s, reported by %s). The CUDA context is lost: "
                 "every later CUDA call in this process fails, and CUDA allows no recovery "
                 "but a new process; host memory (NumPy and pinned arrays) stays readable, "
                 "so save what you need and restart (run with debug=True or "
                 "compute-sanitizer to locate the fault)",
                 err->message, err->name, err->call);
        raise_with_attrs(st->CudaKernelFault, msg, err);
        break;
    case GJ_ERR_CPU_TARGET:
        PyErr_Format(st->GpujitError, "the CPU target could not run the kernel: %s", err->message);
        break;
    case GJ_ERR_INVALID: PyErr_SetString(PyExc_ValueError, err->message); break;
    case GJ_ERR_DRIVER:
    case GJ_ERR_NO_DRIVER:
    case GJ_ERR_LAUNCH_CONFIG:
    case GJ_ERR_NOT_SUPPORTED:
        snprintf(msg, sizeof msg, "%s failed: %s: %s", err->call, err->name, err->message);
        raise_with_attrs(st->CudaError, msg, err);
        break;
    }
    return NULL;
}

/* gj_diag_render_one with the source line read now, by linecache.getline
   (which also knows the sources of notebooks' cells and of exec'd strings
   that registered theirs); NULL when out of memory. */
static char *render_diag(const GjCtx *ctx, const GjDiag *d, const GjCodeView *cv) {
    const char *file = gj_diag_file(ctx, d, cv);
    PyObject *line = NULL;
    if (file && d->loc.line > 0) {
        PyObject *linecache = PyImport_ImportModule("linecache");
        line = linecache ? PyObject_CallMethod(linecache, "getline", "si", file, (int)d->loc.line)
                         : NULL;
        Py_XDECREF(linecache);
        PyErr_Clear();   /* no source is no error: the message goes without it */
    }
    const char *src = line && PyUnicode_Check(line) ? PyUnicode_AsUTF8AndSize(line, NULL) : NULL;
    PyErr_Clear();
    char *text = gj_diag_render_one(ctx, d, cv, src && src[0] ? src : NULL);
    Py_XDECREF(line);
    return text;
}

PyObject *gj_py_raise_diag(GjPyState *st, const GjCtx *ctx, const GjCodeView *cv) {
    if (!ctx->diag) {
        PyErr_SetString(st->InternalError, "the compiler failed without a diagnostic");
        return NULL;
    }
    PyObject *cls = st->InternalError;
    switch (ctx->diag->kind) {
    case GJ_DIAG_TYPING: cls = st->TypingError; break;
    case GJ_DIAG_UNSUPPORTED: cls = st->UnsupportedError; break;
    case GJ_DIAG_KERNEL_RETURN: cls = st->KernelReturnError; break;
    case GJ_DIAG_LOWERING: cls = st->LoweringError; break;
    case GJ_DIAG_INTERNAL: cls = st->InternalError; break;
    case GJ_DIAG_WARNING:
    case GJ_DIAG_NKINDS: break;   /* never the error */
    }
    char *text = render_diag(ctx, ctx->diag, cv);
    if (text) {
        PyErr_SetString(cls, text);
        free(text);
    } else {
        PyErr_SetString(cls, ctx->diag->message ? ctx->diag->message : "compile error");
    }
    return NULL;
}

int gj_py_warn_diags(GjPyState *st, const GjCtx *ctx, const GjCodeView *cv) {
    for (const GjDiag *w = ctx->warnings; w; w = w->next) {
        char *text = render_diag(ctx, w, cv);
        const GjCodeView *in = w->code ? w->code : cv;
        /* attributed to the kernel's line, not to gpujit's caller */
        int rc = PyErr_WarnExplicit(st->GpujitWarning, text ? text : w->message,
                                    in && in->filename ? in->filename : "<unknown>", w->loc.line,
                                    NULL, NULL);
        free(text);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- module functions ------------------------------------------------------- */

/* _inject_fault(where, n, code=2): tests' fault injection (runtime/). */
static PyObject *mod_inject_fault(PyObject *module, PyObject *args) {
    (void)module;
    const char *where;
    long n;
    int code = 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    if (!PyArg_ParseTuple(args, "sl|i:_inject_fault", &where, &n, &code))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "_inject_fault(): n must be >= 0");
        return NULL;
    }
    if (strcmp(where, "cuda") == 0)
        gj_exec_inject_fault(gj_exec_current_device(), n, code);
    else if (strcmp(where, "host") == 0)
        gj_exec_inject_fault(GJ_EXEC_HOST, n, 0);
    else {
        PyErr_Format(PyExc_ValueError,
                     "_inject_fault(): where must be 'cuda' or 'host', not "
                     "'%s'",
                     where);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *mod_is_available(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    int ok;
    Py_BEGIN_ALLOW_THREADS ok = gj_exec_gpu_available();
    Py_END_ALLOW_THREADS return PyBool_FromLong(ok);
}

/* Device `ordinal`'s properties as a dict (the Python layer wraps it). */
static PyObject *device_info_dict(GjPyState *st, int ordinal) {
    GjDeviceInfo info;
    GjExecError err;
    if (gj_exec_device_info(ordinal, &info, &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);
    int driver = 0;
    gj_exec_driver_version(&driver, &err);
    return Py_BuildValue(
        "{s:i,s:s,s:(ii),s:i,s:(iii),s:(iii),s:i,s:i,s:i,s:i,s:n,s:i,s:N}", "id", info.ordinal,
        "name", info.name, "compute_capability", info.cc_major, info.cc_minor,
        "max_threads_per_block", info.max_threads_per_block, "max_block_dim", info.max_block_dim[0],
        info.max_block_dim[1], info.max_block_dim[2], "max_grid_dim", info.max_grid_dim[0],
        info.max_grid_dim[1], info.max_grid_dim[2], "max_shared_memory_per_block",
        info.max_shared_per_block, "max_shared_memory_per_block_optin",
        info.max_shared_per_block_optin, "warp_size", info.warp_size, "multiprocessor_count",
        info.multiprocessors, "total_memory", (Py_ssize_t)info.total_memory, "driver_version",
        driver, "pci_bus_id",
        PyUnicode_FromFormat("%04x:%02x:%02x.0", info.pci_domain, info.pci_bus, info.pci_device));
}

static PyObject *mod_select_device(PyObject *module, PyObject *arg) {
    GjPyState *st = PyModule_GetState(module);
    long ordinal = PyLong_AsLong(arg);
    if (ordinal == -1 && PyErr_Occurred())
        return NULL;
    GjExecError err;
    GjExecStatus rc;
    if (ordinal < 0 || ordinal > 1 << 20) {
        PyErr_Format(PyExc_ValueError, "device ordinal must be >= 0, not %ld", ordinal);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_select((int)ordinal, &err);
    Py_END_ALLOW_THREADS if (rc != GJ_EXEC_OK) return gj_py_raise_cuda(st, &err);
    return device_info_dict(st, (int)ordinal);
}

static PyObject *mod_device_info(PyObject *module, PyObject *args) {
    GjPyState *st = PyModule_GetState(module);
    int ordinal = -1;
    if (!PyArg_ParseTuple(args, "|i:_device_info", &ordinal))
        return NULL;
    if (ordinal < 0)
        ordinal = gj_exec_current_device();
    return device_info_dict(st, ordinal);
}

static PyObject *mod_device_count(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    int n = 0;
    GjExecError err;
    gj_exec_device_count(&n, &err);
    return PyLong_FromLong(n);
}

static PyObject *mod_to_device(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ary", "stream", NULL};
    PyObject *ary, *stream_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:to_device", kwlist, &ary, &stream_obj))
        return NULL;
    GjPyState *st = PyModule_GetState(module);
    void *stream;
    if (gj_py_stream_handle(st, stream_obj, &stream) < 0)
        return NULL;
    return gj_py_to_device(st, ary, stream);
}

/* Extents from an int or a tuple of ints; -1 with an exception. */
static int parse_shape(PyObject *obj, Py_ssize_t *shape, const char *what) {
    if (PyLong_Check(obj)) {
        shape[0] = PyLong_AsSsize_t(obj);
        if (shape[0] == -1 && PyErr_Occurred())
            return -1;
        if (shape[0] < 0) {
            PyErr_Format(PyExc_ValueError, "negative dimensions are not allowed in %s", what);
            return -1;
        }
        return 1;
    }
    PyObject *seq = PySequence_Tuple(obj);
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of ints", what);
        return -1;
    }
    Py_ssize_t n = PyTuple_Size(seq);
    if (n > GJ_PY_MAX_NDIM) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s has %zd dimensions; gpujit supports up to %d", what, n,
                     (int)GJ_PY_MAX_NDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        shape[i] = PyLong_AsSsize_t(PyTuple_GetItem(seq, i));
        if (shape[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return (int)n;
}

static PyObject *mod_device_array(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"shape", "dtype", "strides", "order", "stream", NULL};
    PyObject *shape_obj, *dtype_obj = NULL, *strides_obj = Py_None, *stream_obj = NULL;
    const char *order = "C";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOsO:device_array", kwlist, &shape_obj,
                                     &dtype_obj, &strides_obj, &order, &stream_obj))
        return NULL;
    GjPyState *st = PyModule_GetState(module);
    Py_ssize_t shape[GJ_PY_MAX_NDIM], strides[GJ_PY_MAX_NDIM];
    int ndim = parse_shape(shape_obj, shape, "shape");
    if (ndim < 0)
        return NULL;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return NULL;
        }
    if (strcmp(order, "C") != 0 && strcmp(order, "F") != 0) {
        PyErr_Format(PyExc_ValueError, "order must be 'C' or 'F', not '%s'", order);
        return NULL;
    }
    void *stream;
    if (gj_py_stream_handle(st, stream_obj, &stream) < 0)
        return NULL;
    PyObject *dtype = gj_py_as_dtype(st, dtype_obj ? dtype_obj : (PyObject *)&PyFloat_Type);
    if (!dtype)
        return NULL;
    const Py_ssize_t *strides_arg = NULL;
    if (strides_obj != Py_None) {
        int n = parse_shape(strides_obj, strides, "strides");
        if (n < 0 || n != ndim) {
            if (n >= 0)
                PyErr_Format(PyExc_ValueError, "strides has %d entries but shape has %d", n, ndim);
            Py_DECREF(dtype);
            return NULL;
        }
        strides_arg = strides;
    } else if (order[0] == 'F') {
        PyObject *isz = PyObject_GetAttrString(dtype, "itemsize");
        Py_ssize_t itemsize = isz ? PyLong_AsSsize_t(isz) : -1;
        Py_XDECREF(isz);
        if (itemsize < 0) {
            Py_DECREF(dtype);
            return NULL;
        }
        gj_py_contiguous_strides(ndim, shape, itemsize, 'F', strides);
        strides_arg = strides;
    }
    GjDeviceArray *d = gj_py_devicearray_new(st, ndim, shape, strides_arg, dtype);
    Py_DECREF(dtype);
    return (PyObject *)d;
}

static PyObject *mod_device_array_like(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ary", "stream", NULL};
    PyObject *ary, *stream_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:device_array_like", kwlist, &ary, &stream_obj))
        return NULL;
    PyObject *shape = PyObject_GetAttrString(ary, "shape");
    PyObject *dtype = shape ? PyObject_GetAttrString(ary, "dtype") : NULL;
    if (!dtype) {
        Py_XDECREF(shape);
        return NULL;
    }
    /* Keep a Fortran-ordered input Fortran-ordered; anything else becomes C.
       A DeviceArray has no numpy `flags`: its layout says it. */
    const char *order = "C";
    GjPyState *st = PyModule_GetState(module);
    PyObject *flags = NULL;
    if (Py_IS_TYPE(ary, st->DeviceArrayType))
        order = ((GjDeviceArray *)ary)->layout == 'F' ? "F" : "C";
    else
        flags = PyObject_GetAttrString(ary, "flags");
    if (flags) {
        PyObject *f = PyObject_GetAttrString(flags, "f_contiguous");
        PyObject *c = PyObject_GetAttrString(flags, "c_contiguous");
        if (f && c && PyObject_IsTrue(f) == 1 && PyObject_IsTrue(c) == 0)
            order = "F";
        Py_XDECREF(f);
        Py_XDECREF(c);
        Py_DECREF(flags);
    }
    PyErr_Clear();
    PyObject *r = NULL;
    PyObject *new_args = Py_BuildValue("(OO)", shape, dtype);
    PyObject *new_kw = Py_BuildValue("{s:s}", "order", order);
    if (new_args && new_kw)
        r = mod_device_array(module, new_args, new_kw);
    Py_XDECREF(new_args);
    Py_XDECREF(new_kw);
    Py_DECREF(shape);
    Py_DECREF(dtype);
    return r;
}

static PyObject *mod_current_target(PyObject *module, PyObject *unused) {
    (void)unused;
    int t = gj_py_target(PyModule_GetState(module));
    return t < 0 ? NULL : PyUnicode_FromString(target_name(t));
}

static PyObject *mod_set_target(PyObject *module, PyObject *arg) {
    GjPyState *st = PyModule_GetState(module);
    const char *name = gj_py_str(arg, "set_target() takes 'cpu' or 'cuda'");
    if (!name)
        return NULL;
    int t = target_from_name(name, "target");
    if (t < 0)
        return NULL;
    GjExecError err;
    if (t == GJ_TARGET_NVPTX && !gj_exec_gpu_available() &&
        gj_exec_select(gj_exec_current_device(), &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);   /* no driver or no device: says which */
    /* The previous target, resolved (without the fallback warning: the
       caller chooses explicitly), so that restoring it is exact. */
    int prev = choose_target(st, 0);
    if (prev < 0) {
        PyErr_Clear();   /* an invalid GPUJIT_TARGET is replaced by an explicit choice */
        prev = t;
    }
    st->target = t;
    if (t == GJ_TARGET_CPU && warn_cpu_env() < 0)
        return NULL;
    return PyUnicode_FromString(target_name(prev));
}

/* _cpu_info(): the CPU the CPU target compiles for, as a dict (GjCpuInfo's
   fields); raises what a CPU compile would when there is no JIT. */
static PyObject *mod_cpu_info(PyObject *module, PyObject *unused) {
    (void)unused;
    GjPyState *st = PyModule_GetState(module);
    GjCtx ctx;
    GjCpuInfo info;
    gj_ctx_init(&ctx);
    GjStatus rc;
    Py_BEGIN_ALLOW_THREADS   /* the first call starts LLVM's JIT: milliseconds */
        rc = gj_cpu_info(&ctx, &info);
    Py_END_ALLOW_THREADS PyObject *out =
        rc != GJ_OK
            ? gj_py_raise_diag(st, &ctx, NULL)
            : Py_BuildValue("{s:s,s:s,s:s,s:s,s:I,s:O,s:s,s:s}", "name", info.cpu, "features",
                            info.features, "isa", info.isa, "chosen_by", info.chosen_by,
                            "vector_bits", info.vector_bits, "slow_masked_stores",
                            info.slow_masked_stores ? Py_True : Py_False, "host_name",
                            info.host_cpu, "host_isa", info.host_isa);
    gj_ctx_free(&ctx);
    return out;
}

static PyMethodDef module_methods[] = {
    {"_parse_signature", gj_py_parse_signature, METH_O,
     "_parse_signature(signature)\n--\n\nThe compiler's parse of a signature string: "
     "(return type or None, argument types), each (dtype, ndim, layout)."},
    {"_intrinsics", gj_py_intrinsics, METH_NOARGS,
     "_intrinsics()\n--\n\nThe kernel API rows of the compiler's intrinsic table: "
     "(name, kind, params, doc) tuples."},
    {"_fastmath_flags", gj_py_fastmath_flags, METH_NOARGS,
     "_fastmath_flags()\n--\n\nnumba's fastmath flag names ('fast' included) -> the "
     "compiler's bits."},
    {"_load_ptx", gj_py_load_ptx, METH_O,
     "_load_ptx(ptx)\n--\n\nHas the current device's driver load PTX text, then unloads "
     "it; raises as a kernel's load does (tests)."},
    {"_cache_directory", gj_py_cache_directory, METH_NOARGS,
     "_cache_directory()\n--\n\nThe persistent cache's directory: GPUJIT_CACHE_DIR, else "
     "$XDG_CACHE_HOME/gpujit, else ~/.cache/gpujit (an absolute path)."},
    {"_cache_counts", gj_py_cache_counts, METH_NOARGS,
     "_cache_counts()\n--\n\n(hits, misses): this process's persistent-cache lookups that "
     "loaded an entry and that compiled."},
    {"_cpu_info", mod_cpu_info, METH_NOARGS,
     "_cpu_info()\n--\n\nThe CPU the CPU target compiles for: a dict of name and features "
     "(LLVM's), isa ('avx512', 'avx2', 'avx', 'sse', or the architecture), vector_bits, "
     "slow_masked_stores (AMD's VMASKMOVPS: full vectors then store plainly), "
     "chosen_by ('host' or the GPUJIT_CPU_* variables), host_name and host_isa."},
    {"_inject_fault", mod_inject_fault, METH_VARARGS,
     "_inject_fault(where, n, code=2)\n--\n\nTests only: the n-th driver call ('cuda', "
     "failing with CUresult code) or host allocation of the CPU target ('host') from now "
     "fails; n = 0 stops."},
    {"is_available", mod_is_available, METH_NOARGS,
     "is_available()\n--\n\nTrue if a CUDA driver and at least one device can be used. "
     "Never raises; loads the driver on first call."},
    {"current_target", mod_current_target, METH_NOARGS,
     "current_target()\n--\n\nThe execution target, 'cuda' or 'cpu' (chosen on first use: "
     "GPUJIT_TARGET, else the GPU if one is usable, else the CPU with a warning)."},
    {"set_target", mod_set_target, METH_O,
     "set_target(name)\n--\n\nMakes 'cpu' or 'cuda' the execution target of later "
     "launches and allocations; returns the previous target's name.\n\n"
     "Raises\n------\nValueError\n    For another name.\nCudaSupportError\n"
     "    For 'cuda' without a usable driver and device (the target stays as it was)."},
    {"select_device", mod_select_device, METH_O,
     "select_device(i)\n--\n\nMakes device i current on this thread; returns its info dict."},
    {"_device_info", mod_device_info, METH_VARARGS,
     "_device_info(i=-1)\n--\n\nProperties of device i (default: current) as a dict."},
    {"_device_count", mod_device_count, METH_NOARGS,
     "_device_count()\n--\n\nNumber of CUDA devices (0 without a driver)."},
    {"to_device", (PyCFunction)(void (*)(void))mod_to_device, METH_VARARGS | METH_KEYWORDS,
     "to_device(ary, stream=0)\n--\n\nCopies a host array to a new DeviceArray."},
    {"device_array", (PyCFunction)(void (*)(void))mod_device_array, METH_VARARGS | METH_KEYWORDS,
     "device_array(shape, dtype=float64, strides=None, order='C', stream=0)\n--\n\n"
     "A new uninitialised DeviceArray."},
    {"device_array_like", (PyCFunction)(void (*)(void))mod_device_array_like,
     METH_VARARGS | METH_KEYWORDS,
     "device_array_like(ary, stream=0)\n--\n\nA new uninitialised DeviceArray with ary's "
     "shape and dtype."},
    {"from_dlpack", gj_py_from_dlpack_fn, METH_O,
     "from_dlpack(obj)\n--\n\nA DeviceArray viewing obj's memory (DLPack), without copying."},
    {"as_cuda_array", (PyCFunction)(void (*)(void))gj_py_as_cuda_array_fn,
     METH_VARARGS | METH_KEYWORDS,
     "as_cuda_array(obj, sync=True)\n--\n\nA DeviceArray viewing obj's memory "
     "(__cuda_array_interface__), without copying."},
    {"compile_ptx", (PyCFunction)(void (*)(void))gj_py_compile_ptx, METH_VARARGS | METH_KEYWORDS,
     "compile_ptx(pyfunc, signature, cc=(9, 0), fastmath=0, contract=True, lineinfo=False, "
     "debug=False, device=False, boundscheck=False)\n--\n\nCompiles pyfunc for signature (a "
     "string, a "
     "gpujit.types signature\nor a tuple of argument types) to PTX without a GPU; "
     "returns (ptx, return type name).\nWith device=True it is compiled as a device function "
     "(a PTX .func that\nreturns a value: 'float32(float32, float32)'), else as a kernel "
     "(.entry).\nfastmath is the bits of _fastmath_flags()."},
    {NULL, NULL, 0, NULL},
};

/* ---- module init ------------------------------------------------------------ */

static int add_exception(PyObject *module, PyObject **slot, const char *name, PyObject *bases,
                         const char *doc) {
    char full[96];
    snprintf(full, sizeof full, "gpujit.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!*slot)
        return -1;
    return PyModule_AddObjectRef(module, name, *slot);
}

/* An exception class with two bases: gpujit's and the Python class that
   numba raises in that case (so `except MemoryError` code keeps working). */
static int add_exception2(PyObject *module, PyObject **slot, const char *name, PyObject *base,
                          PyObject *numba_base, const char *doc) {
    PyObject *bases = PyTuple_Pack(2, base, numba_base);
    if (!bases)
        return -1;
    int rc = add_exception(module, slot, name, bases, doc);
    Py_DECREF(bases);
    return rc;
}

static int add_exceptions(PyObject *m, GjPyState *st) {
    if (add_exception(m, &st->GpujitError, "GpujitError", PyExc_Exception,
                      "Base class of gpujit's errors.") < 0 ||
        add_exception(m, &st->TypingError, "TypingError", st->GpujitError,
                      "A kernel's types do not check (raised when it is compiled).") < 0 ||
        add_exception(m, &st->UnsupportedError, "UnsupportedError", st->GpujitError,
                      "A kernel uses Python that gpujit does not compile.") < 0 ||
        add_exception(m, &st->LoweringError, "LoweringError", st->GpujitError,
                      "Code generation failed for a kernel.") < 0 ||
        add_exception(m, &st->InternalError, "InternalError", st->GpujitError,
                      "A bug in gpujit; please report it.") < 0 ||
        add_exception(m, &st->CudaError, "CudaError", st->GpujitError,
                      "A CUDA driver call failed; .name, .code and .call say which.") < 0 ||
        add_exception(m, &st->GpujitWarning, "GpujitWarning", PyExc_UserWarning,
                      "A kernel compiles, but differs from what Python would do (a "
                      "variable read before it may be assigned reads as zero).") < 0 ||
        add_exception(m, &st->GpujitPerformanceWarning, "GpujitPerformanceWarning",
                      st->GpujitWarning,
                      "A launch is slower than it needs to be: host "
                      "arrays copied to the GPU and back at every launch (numba's "
                      "NumbaPerformanceWarning).") < 0)
        return -1;
    if (add_exception2(m, &st->KernelReturnError, "KernelReturnError", st->UnsupportedError,
                       PyExc_TypeError,
                       "A kernel returns a value (a kernel returns nothing); "
                       "an UnsupportedError and, as in numba, a TypeError.") < 0 ||
        add_exception2(m, &st->CudaOutOfMemoryError, "CudaOutOfMemoryError", st->CudaError,
                       PyExc_MemoryError,
                       "GPU memory ran out; .requested and .free give bytes.") < 0 ||
        add_exception(m, &st->CudaCompileError, "CudaCompileError", st->CudaError,
                      "The CUDA driver rejected a kernel's PTX; the message holds the "
                      "JIT log.") < 0 ||
        add_exception(m, &st->CudaKernelFault, "CudaKernelFault", st->CudaError,
                      "A kernel faulted; the CUDA context is lost for this process.") < 0 ||
        add_exception2(m, &st->CudaSupportError, "CudaSupportError", st->CudaError,
                       PyExc_ImportError,
                       "No usable CUDA driver or device (an ImportError "
                       "too, as numba's CudaSupportError).") < 0)
        return -1;
    return 0;
}

static int module_exec(PyObject *m) {
    GjPyState *st = PyModule_GetState(m);
    memset(st, 0, sizeof *st);
    st->target = -1;
    pthread_mutex_init(&st->write_lock, NULL);
    const GjExecSymbol *sym = gj_exec_kernel_symbols(GJ_EXEC_HOST, &st->nkernel_symbols);
    if (st->nkernel_symbols > GJ_PY_MAX_KERNEL_SYMBOLS) {
        PyErr_SetString(PyExc_SystemError, "GJ_PY_MAX_KERNEL_SYMBOLS is too small");
        return -1;
    }
    for (int i = 0; i < st->nkernel_symbols; i++)
        st->kernel_symbols[i] = (GjRuntimeSymbol){sym[i].name, sym[i].addr};
    st->str_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    if (!st->str_cai || gj_py_cai_init(st) < 0 || add_exceptions(m, st) < 0 ||
        gj_py_stream_register(m, st) < 0 || gj_py_hostmem_register(m, st) < 0 ||
        gj_py_devicearray_register(m, st) < 0 || gj_py_dispatcher_register(m, st) < 0)
        return -1;
    if (PyModule_AddStringConstant(m, "llvm_version", gj_llvm_version()) < 0)
        return -1;
    return 0;
}

/* The module state's object references, for traverse and clear: fills
   objs (at least STATE_OBJECTS entries) and returns how many. */
enum { STATE_OBJECTS = 29 + GJ_CAI_NTYPES + GJ_CAI_DTYPES + GJ_CAI_NNAMES + GJ_DT_COUNT };
static size_t state_objects(GjPyState *st, PyObject **objs[STATE_OBJECTS]) {
    PyObject **all[] = {
        &st->GpujitError,
        &st->TypingError,
        &st->UnsupportedError,
        &st->LoweringError,
        &st->InternalError,
        &st->np,
        &st->CudaError,
        &st->CudaOutOfMemoryError,
        &st->CudaCompileError,
        &st->CudaKernelFault,
        &st->CudaSupportError,
        (PyObject **)&st->DeviceArrayType,
        (PyObject **)&st->DispatcherType,
        (PyObject **)&st->LauncherType,
        (PyObject **)&st->StreamType,
        (PyObject **)&st->EventType,
        &st->np_dtype,
        &st->np_empty,
        &st->np_ascontiguousarray,
        &st->np_copyto,
        &st->np_ndarray,
        &st->str_cai,
        &st->libdevice,
        &st->KernelReturnError,
        &st->GpujitWarning,
        &st->GpujitPerformanceWarning,
        (PyObject **)&st->HostAllocType,
        (PyObject **)&st->HostRegType,
        &st->cache_identity,
    };
    size_t n = sizeof all / sizeof all[0];
    _Static_assert(sizeof all / sizeof all[0] + GJ_CAI_NTYPES + GJ_CAI_DTYPES + GJ_CAI_NNAMES +
                           GJ_DT_COUNT ==
                       STATE_OBJECTS,
                   "update STATE_OBJECTS");
    memcpy(objs, all, sizeof all);
    for (int k = 0; k < GJ_CAI_NTYPES; k++)
        objs[n++] = (PyObject **)&st->cai_types[k];
    for (int k = 0; k < GJ_CAI_DTYPES; k++)
        objs[n++] = &st->cai_dtypes[k];
    for (int k = 0; k < GJ_CAI_NNAMES; k++)
        objs[n++] = &st->cai_names[k];
    for (int k = 0; k < GJ_DT_COUNT; k++)
        objs[n++] = &st->np_scalar_types[k];
    return n;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
    GjPyState *st = PyModule_GetState(m);
    if (!st)
        return 0;
    PyObject **objs[STATE_OBJECTS];
    for (size_t i = 0, n = state_objects(st, objs); i < n; i++)
        Py_VISIT(*objs[i]);
    return 0;
}

static int module_clear(PyObject *m) {
    GjPyState *st = PyModule_GetState(m);
    if (!st)
        return 0;
    PyObject **objs[STATE_OBJECTS];
    for (size_t i = 0, n = state_objects(st, objs); i < n; i++)
        Py_CLEAR(*objs[i]);
    st->ncai_dtypes = 0;
    gj_py_hostmem_forget(st);
    return 0;
}

static void module_free(void *m) { module_clear((PyObject *)m); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gpujit._gpujit",
    .m_doc = "gpujit's C core: the dispatcher, device arrays and the CUDA runtime.",
    .m_size = sizeof(GjPyState),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__gpujit(void);

PyMODINIT_FUNC PyInit__gpujit(void) { return PyModuleDef_Init(&module_def); }
