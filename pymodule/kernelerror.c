/*
 * kernelerror.c - the errors a kernel reported at run time (debug and
 * boundscheck builds): reads the error record compile.h describes after a
 * launch and raises the Python exception of the site that failed first.
 *
 * The record is the launch's own (on the launcher's stack), which the
 * runtime fills (runtime/exec.h): on the CPU target the grid writes it; on
 * the GPU the runtime reads the module's global GJ_ERROR_RECORD_SYMBOL after
 * the kernel completes (the launch synchronises its stream, as numba's
 * debug launches do) and clears it for the next launch.
 *
 * The message is the site's, with the record's two values first for the
 * index kinds (NumPy's words: "index 10 is out of bounds for axis 0 with
 * size 10"), then the kernel and the thread:
 *
 *     index 10 is out of bounds for axis 0 with size 10: array 'a' (k.py:12),
 *     in kernel k at threadIdx (10, 0, 0) of blockIdx (0, 0, 0)
 */
#include "kernelerror.h"

#include <string.h>

#include "dispatcher.h"

/* The first component of qualname `part` (length n) in the module `modname`
   names: in the kernel's own globals when they are that module's (so a
   class of a script or notebook, or of code run by exec, is found), else
   in the module itself.  New reference, or NULL. */
static PyObject *module_member(PyObject *func, PyObject *modname, const char *part, Py_ssize_t n) {
    PyObject *key = PyUnicode_FromStringAndSize(part, n);
    PyObject *globals = key ? PyObject_GetAttrString(func, "__globals__") : NULL;
    PyObject *gname = globals ? PyMapping_GetItemString(globals, "__name__") : NULL;
    PyErr_Clear();
    PyObject *o = NULL;
    if (gname && PyObject_RichCompareBool(gname, modname, Py_EQ) == 1)
        o = PyObject_GetItem(globals, key);
    if (!o && key) {
        PyErr_Clear();
        PyObject *modules = PySys_GetObject("modules");   /* borrowed */
        PyObject *module = modules ? PyObject_GetItem(modules, modname) : NULL;
        o = module ? PyObject_GetAttr(module, key) : NULL;
        Py_XDECREF(module);
    }
    Py_XDECREF(key);
    Py_XDECREF(globals);
    Py_XDECREF(gname);
    return o;
}

/* The class of a raise site, "module:qualname" as codeview.c froze it;
   NULL with RuntimeError when it cannot be found any more. */
static PyObject *raised_class(PyObject *func, const char *name) {
    const char *colon = strchr(name, ':');
    const char *part = colon ? colon + 1 : name;
    const char *dot = strchr(part, '.');
    PyObject *modname = colon ? PyUnicode_FromStringAndSize(name, colon - name) : NULL;
    PyObject *o =
        modname ? module_member(func, modname, part, dot ? dot - part : (Py_ssize_t)strlen(part))
                : NULL;
    Py_XDECREF(modname);
    while (o && dot) {   /* a nested class: Outer.Inner */
        part = dot + 1;
        dot = strchr(part, '.');
        PyObject *attr =
            PyUnicode_FromStringAndSize(part, dot ? dot - part : (Py_ssize_t)strlen(part));
        PyObject *next = attr ? PyObject_GetAttr(o, attr) : NULL;
        Py_XDECREF(attr);
        Py_DECREF(o);
        o = next;
    }
    if (o && PyType_Check(o) &&
        PyType_IsSubtype((PyTypeObject *)o, (PyTypeObject *)PyExc_BaseException))
        return o;
    Py_XDECREF(o);
    PyErr_Clear();
    PyErr_Format(PyExc_RuntimeError,
                 "the kernel raised %s, an exception class its module no "
                 "longer defines",
                 colon ? colon + 1 : name);
    return NULL;
}

/* The Python exception of a site: new reference, or NULL with an error. */
static PyObject *exception_of(PyObject *func, const GjErrorSite *s) {
    switch (s->kind) {
    case GJ_ERROR_UNBOUND_LOCAL: return Py_NewRef(PyExc_UnboundLocalError);
    case GJ_ERROR_INDEX:
    case GJ_ERROR_TUPLE_INDEX: return Py_NewRef(PyExc_IndexError);
    case GJ_ERROR_RAISE:
        return s->exception ? raised_class(func, s->exception) : Py_NewRef(PyExc_RuntimeError);
    }
    return Py_NewRef(PyExc_RuntimeError);
}

/* What the site's message is preceded by: the index kinds' values (the
   index as its type reads it). */
static PyObject *values_text(const GjErrorSite *s, const int64_t *record) {
    PyObject *index = s->unsigned_index ? PyLong_FromUnsignedLongLong((uint64_t)record[7])
                                        : PyLong_FromLongLong(record[7]);
    PyObject *text = NULL;
    switch (s->kind) {
    case GJ_ERROR_INDEX:
        text = index ? PyUnicode_FromFormat("index %S is out of bounds for axis %d with size "
                                            "%lld: ",
                                            index, s->axis, (long long)record[8])
                     : NULL;
        break;
    case GJ_ERROR_TUPLE_INDEX:
        text = index
                   ? PyUnicode_FromFormat("tuple index %S is out of range for %lld items: ", index,
                                          (long long)record[8])
                   : NULL;
        break;
    case GJ_ERROR_UNBOUND_LOCAL:
    case GJ_ERROR_RAISE: text = PyUnicode_FromString(""); break;
    }
    Py_XDECREF(index);
    return text || PyErr_Occurred() ? text : PyUnicode_FromString("");   /* another kind */
}

int gj_py_kernel_error_raise(GjDispatcher *d, const GjEntry *e, const int64_t *record) {
    if (record[0] == 0)
        return 0;
    int64_t site = record[0] - 1;
    if (site < 0 || site >= e->res.nerror_sites) {
        PyErr_Format(PyExc_RuntimeError,
                     "the kernel's error record names no error site "
                     "(%lld); its memory was overwritten",
                     (long long)record[0]);
        return -1;
    }
    const GjErrorSite *s = &e->res.error_sites[site];
    PyObject *name = PyObject_GetAttrString(d->func, "__qualname__");
    PyObject *values = name ? values_text(s, record) : NULL;
    PyObject *cls = values ? exception_of(d->func, s) : NULL;
    PyObject *msg =
        cls ? PyUnicode_FromFormat("%U%s, in kernel %U at threadIdx (%lld, %lld, %lld) of blockIdx "
                                   "(%lld, %lld, %lld)",
                                   values, s->message, name, (long long)record[1],
                                   (long long)record[2], (long long)record[3], (long long)record[4],
                                   (long long)record[5], (long long)record[6])
            : NULL;
    /* Made here, not by PyErr_SetObject when the exception is normalised: a
       class whose constructor takes no single message must not turn the
       kernel's error into an unrelated TypeError. */
    PyObject *exc = msg ? PyObject_CallFunctionObjArgs(cls, msg, NULL) : NULL;
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    } else if (msg) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *cname = PyObject_GetAttrString(cls, "__qualname__");
        PyErr_Format(PyExc_RuntimeError,
                     "the kernel raised %S: %U (gpujit could not make a "
                     "%S of this one message: %S)",
                     cname ? cname : cls, msg, cname ? cname : cls, value ? value : Py_None);
        Py_XDECREF(cname);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    Py_XDECREF(name);
    Py_XDECREF(values);
    Py_XDECREF(cls);
    Py_XDECREF(msg);
    return -1;
}
