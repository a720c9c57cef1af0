/*
 * stream.c - streams and events as Python objects, over the runtime's
 * execution interface (runtime/exec.h), which alone tells a CUDA device
 * from the CPU target.  numba.cuda's names.
 *
 *     class Stream:                     # of the device current when made
 *         handle: int                   # the CUstream (0: the legacy default)
 *         def synchronize(self) -> None
 *         def auto_synchronize(self) -> Stream   # `with`: synchronizes at exit
 *     class Event:
 *         def record(self, stream=0) -> None
 *         def wait(self, stream=0) -> None       # stream's later work waits
 *         def synchronize(self) -> None
 *         def query(self) -> bool
 *         def elapsed_time(self, end: Event) -> float   # ms from self to end
 *     stream(), default_stream(), legacy_default_stream(),
 *     per_thread_default_stream(), event(timing=True), synchronize(),
 *     memory_info() -> (free, total)
 *
 * Every call that can block releases the GIL.
 */
#include "stream.h"

#include "exec.h"
#include "module.h"

/* The driver's names for the default streams (cuda.h: CU_STREAM_LEGACY,
   CU_STREAM_PER_THREAD); a handle of 0 is the legacy default stream too. */
#define LEGACY_STREAM     ((void *)0x1)
#define PER_THREAD_STREAM ((void *)0x2)

typedef struct GjStream {
    PyObject_HEAD void *handle;
    int device;
    int owned;            /* made by stream(): destroyed with the object */
} GjStream;

typedef struct GjEvent {
    PyObject_HEAD GjExecEvent ev;
} GjEvent;

int gj_py_stream_handle(GjPyState *st, PyObject *obj, void **stream) {
    *stream = NULL;
    if (obj == NULL || obj == Py_None)
        return 0;
    if (Py_IS_TYPE(obj, st->StreamType)) {
        *stream = ((GjStream *)obj)->handle;
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        /* a raw CUstream, e.g. torch.cuda.current_stream().cuda_stream */
        void *p = PyLong_AsVoidPtr(obj);
        if (!p && PyErr_Occurred())
            return -1;
        *stream = p;
        return 0;
    }
    PyObject *tname = gj_py_type_name(obj);
    PyErr_Format(PyExc_TypeError,
                 "stream must be 0, None, a gpujit stream or a CUstream handle (int), "
                 "not %S",
                 tname);
    Py_XDECREF(tname);
    return -1;
}

/* Returns None, or raises err (-> NULL). */
static PyObject *done(GjPyState *st, GjExecStatus rc, const GjExecError *err) {
    if (rc != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, err);
    Py_RETURN_NONE;
}

/* ---- Stream ------------------------------------------------------------------- */

static GjStream *stream_new(GjPyState *st, int device, void *handle, int owned) {
    GjStream *s = PyObject_New(GjStream, st->StreamType);
    if (!s) {
        if (owned)
            gj_exec_stream_destroy(device, handle);
        return NULL;
    }
    s->handle = handle;
    s->device = device;
    s->owned = owned;
    return s;
}

static void stream_dealloc(PyObject *self) {
    GjStream *s = (GjStream *)self;
    PyTypeObject *tp = Py_TYPE(self);
    if (s->owned)
        gj_exec_stream_destroy(s->device, s->handle);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

static PyObject *stream_synchronize(PyObject *self, PyObject *unused) {
    (void)unused;
    GjStream *s = (GjStream *)self;
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_stream_synchronize(s->device, s->handle, &err);
    Py_END_ALLOW_THREADS return done(gj_py_state_of_type(Py_TYPE(self)), rc, &err);
}

static PyObject *stream_auto_synchronize(PyObject *self, PyObject *unused) {
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *stream_exit(PyObject *self, PyObject *args) {
    (void)args;
    return stream_synchronize(self, NULL);
}

static PyObject *stream_get_handle(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromVoidPtr(((GjStream *)self)->handle);
}

static PyObject *stream_repr(PyObject *self) {
    GjStream *s = (GjStream *)self;
    const char *what = s->handle == NULL || s->handle == LEGACY_STREAM ? "legacy default "
                       : s->handle == PER_THREAD_STREAM                ? "per-thread default "
                                                                       : "";
    if (s->device == GJ_EXEC_HOST)   /* its streams have no handle and never wait */
        return PyUnicode_FromString("<gpujit.Stream of the CPU target>");
    return PyUnicode_FromFormat("<gpujit.Stream %s%p on device %d>", what, s->handle, s->device);
}

static PyMethodDef stream_methods[] = {
    {"synchronize", stream_synchronize, METH_NOARGS,
     "synchronize()\n--\n\nWaits until all work queued on the stream has finished.\n\n"
     "Raises\n------\nCudaError\n    If queued work failed (a kernel fault: CudaKernelFault)."},
    {"auto_synchronize", stream_auto_synchronize, METH_NOARGS,
     "auto_synchronize()\n--\n\nA context manager (the stream itself) that synchronizes the "
     "stream when the `with` block ends:\n\n    with stream.auto_synchronize():\n"
     "        d = gpujit.to_device(a, stream=stream)\n        kernel[g, b, stream](d)\n"
     "        d.copy_to_host(a, stream=stream)"},
    {"__enter__", stream_auto_synchronize, METH_NOARGS, NULL},
    {"__exit__", stream_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"handle", stream_get_handle, NULL, "The CUstream handle, as an int.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stream_slots[] = {
    {Py_tp_dealloc, (void *)stream_dealloc},
    {Py_tp_repr, (void *)stream_repr},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {Py_tp_doc, "A CUDA stream; create with gpujit.stream()."},
    {0, NULL},
};

static PyType_Spec stream_spec = {
    .name = "gpujit.Stream",
    .basicsize = sizeof(GjStream),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = stream_slots,
};

/* ---- Event ---------------------------------------------------------------------- */

static void event_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    gj_exec_event_destroy(&((GjEvent *)self)->ev);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* The stream argument of record() and wait(); -1 raised. */
static int stream_arg(PyObject *self, PyObject *args, PyObject *kw, const char *format,
                      void **stream) {
    static char *kwlist[] = {"stream", NULL};
    PyObject *obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, format, kwlist, &obj))
        return -1;
    return gj_py_stream_handle(gj_py_state_of_type(Py_TYPE(self)), obj, stream);
}

static PyObject *event_record(PyObject *self, PyObject *args, PyObject *kw) {
    void *stream;
    if (stream_arg(self, args, kw, "|O:record", &stream) < 0)
        return NULL;
    GjExecError err;
    GjExecStatus rc = gj_exec_event_record(&((GjEvent *)self)->ev, stream, &err);
    return done(gj_py_state_of_type(Py_TYPE(self)), rc, &err);
}

static PyObject *event_wait(PyObject *self, PyObject *args, PyObject *kw) {
    void *stream;
    if (stream_arg(self, args, kw, "|O:wait", &stream) < 0)
        return NULL;
    GjExecError err;
    GjExecStatus rc = gj_exec_event_wait(&((GjEvent *)self)->ev, stream, &err);
    return done(gj_py_state_of_type(Py_TYPE(self)), rc, &err);
}

static PyObject *event_synchronize(PyObject *self, PyObject *unused) {
    (void)unused;
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_event_synchronize(&((GjEvent *)self)->ev, &err);
    Py_END_ALLOW_THREADS return done(gj_py_state_of_type(Py_TYPE(self)), rc, &err);
}

static PyObject *event_query(PyObject *self, PyObject *unused) {
    (void)unused;
    GjExecError err;
    int finished;
    if (gj_exec_event_query(&((GjEvent *)self)->ev, &finished, &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(gj_py_state_of_type(Py_TYPE(self)), &err);
    return PyBool_FromLong(finished);
}

static PyObject *event_elapsed_time(PyObject *self, PyObject *end) {
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    if (!Py_IS_TYPE(end, st->EventType)) {
        PyErr_SetString(PyExc_TypeError, "elapsed_time() needs another gpujit event");
        return NULL;
    }
    GjExecError err;
    float ms;
    if (gj_exec_event_elapsed(&((GjEvent *)self)->ev, &((GjEvent *)end)->ev, &ms, &err) !=
        GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);
    return PyFloat_FromDouble((double)ms);
}

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))event_record, METH_VARARGS | METH_KEYWORDS,
     "record(stream=0)\n--\n\nQueues the event on `stream` (0: the default stream)."},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_VARARGS | METH_KEYWORDS,
     "wait(stream=0)\n--\n\nMakes work queued on `stream` from now on wait until the work "
     "before this event's last record has finished (cuStreamWaitEvent); the host does not "
     "wait."},
    {"synchronize", event_synchronize, METH_NOARGS,
     "synchronize()\n--\n\nWaits until the work before the recorded event has finished."},
    {"query", event_query, METH_NOARGS,
     "query()\n--\n\nTrue if the work before the recorded event has finished (or it was "
     "never recorded), without waiting."},
    {"elapsed_time", event_elapsed_time, METH_O,
     "elapsed_time(end)\n--\n\nMilliseconds (float) between this event and `end`; both must "
     "have been recorded and completed, on one device, made with timing=True.\n\n"
     "Raises\n------\nCudaError\n"
     "    CUDA_ERROR_NOT_READY if an event has not completed yet.\n"
     "ValueError\n    For events of two devices, or a CPU-target event never recorded."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot event_slots[] = {
    {Py_tp_dealloc, (void *)event_dealloc},
    {Py_tp_methods, event_methods},
    {Py_tp_doc, "A CUDA event for timing and ordering; create with gpujit.event()."},
    {0, NULL},
};

static PyType_Spec event_spec = {
    .name = "gpujit.Event",
    .basicsize = sizeof(GjEvent),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = event_slots,
};

/* ---- module functions ------------------------------------------------------------- */

/* The current target's device, its context made current; -1 raised. */
static int current_device(GjPyState *st, int *device) {
    return gj_py_device(st, device) < 0 || gj_py_ensure(st) < 0 ? -1 : 0;
}

static PyObject *mod_synchronize(PyObject *module, PyObject *unused) {
    (void)unused;
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (current_device(st, &device) < 0)
        return NULL;
    GjExecError err;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_synchronize(device, &err);
    Py_END_ALLOW_THREADS return done(st, rc, &err);
}

static PyObject *mod_stream(PyObject *module, PyObject *unused) {
    (void)unused;
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (current_device(st, &device) < 0)
        return NULL;
    GjExecError err;
    void *handle;
    if (gj_exec_stream_create(device, &handle, &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);
    return (PyObject *)stream_new(st, device, handle, 1);
}

/* A Stream object for one of the driver's default streams. */
static PyObject *default_stream(PyObject *module, void *handle) {
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (current_device(st, &device) < 0)
        return NULL;
    return (PyObject *)stream_new(st, device, handle, 0);
}

static PyObject *mod_default_stream(PyObject *module, PyObject *unused) {
    (void)unused;
    return default_stream(module, NULL);
}

static PyObject *mod_legacy_default_stream(PyObject *module, PyObject *unused) {
    (void)unused;
    return default_stream(module, LEGACY_STREAM);
}

static PyObject *mod_per_thread_default_stream(PyObject *module, PyObject *unused) {
    (void)unused;
    return default_stream(module, PER_THREAD_STREAM);
}

static PyObject *mod_event(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"timing", NULL};
    int timing = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:event", kwlist, &timing))
        return NULL;
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (current_device(st, &device) < 0)
        return NULL;
    GjEvent *e = PyObject_New(GjEvent, st->EventType);
    if (!e)
        return NULL;
    GjExecError err;
    if (gj_exec_event_create(device, timing, &e->ev, &err) != GJ_EXEC_OK) {
        e->ev.handle = NULL;
        Py_DECREF(e);
        return gj_py_raise_cuda(st, &err);
    }
    return (PyObject *)e;
}

static PyObject *mod_memory_info(PyObject *module, PyObject *unused) {
    (void)unused;
    GjPyState *st = PyModule_GetState(module);
    int device;
    if (current_device(st, &device) < 0)
        return NULL;
    GjExecError err;
    size_t free_bytes, total_bytes;
    if (gj_exec_memory_info(device, &free_bytes, &total_bytes, &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);
    return Py_BuildValue("(nn)", (Py_ssize_t)free_bytes, (Py_ssize_t)total_bytes);
}

static PyMethodDef stream_functions[] = {
    {"synchronize", mod_synchronize, METH_NOARGS,
     "synchronize()\n--\n\nWaits for all work on the current device."},
    {"stream", mod_stream, METH_NOARGS, "stream()\n--\n\nA new CUDA stream."},
    {"default_stream", mod_default_stream, METH_NOARGS,
     "default_stream()\n--\n\nThe default stream (handle 0: the legacy default stream)."},
    {"legacy_default_stream", mod_legacy_default_stream, METH_NOARGS,
     "legacy_default_stream()\n--\n\nThe legacy default stream (CU_STREAM_LEGACY), which "
     "waits for and holds back the other blocking streams."},
    {"per_thread_default_stream", mod_per_thread_default_stream, METH_NOARGS,
     "per_thread_default_stream()\n--\n\nThis thread's default stream (CU_STREAM_PER_THREAD), "
     "which does not synchronize with other threads' default streams."},
    {"event", (PyCFunction)(void (*)(void))mod_event, METH_VARARGS | METH_KEYWORDS,
     "event(timing=True)\n--\n\nA new CUDA event; timing=False makes one that is lighter to "
     "record and cannot time."},
    {"_memory_info", mod_memory_info, METH_NOARGS,
     "_memory_info()\n--\n\n(free, total) bytes of the current device's memory (the host's "
     "on the CPU target)."},
    {NULL, NULL, 0, NULL},
};

static int add_type(PyObject *m, PyTypeObject **slot, PyType_Spec *spec, const char *name) {
    *slot = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, NULL);
    return *slot ? PyModule_AddObjectRef(m, name, (PyObject *)*slot) : -1;
}

int gj_py_stream_register(PyObject *module, GjPyState *st) {
    if (add_type(module, &st->StreamType, &stream_spec, "Stream") < 0 ||
        add_type(module, &st->EventType, &event_spec, "Event") < 0)
        return -1;
    return PyModule_AddFunctions(module, stream_functions);
}
