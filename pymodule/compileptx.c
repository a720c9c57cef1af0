/*
 * compileptx.c - compiling without a kernel object: gpujit.compile_ptx()
 * (a function and a signature to PTX, no GPU needed) and a device
 * function's inspect_asm/inspect_llvm/inspect_types, the compiler's
 * signature parser and fastmath flag table for the Python package
 * (gpujit.types, gpujit.jit), and _load_ptx() for tests of what the
 * driver makes of PTX.
 */
#include "compileptx.h"

#include <stdlib.h>
#include <string.h>

#include "codeview_py.h"
#include "dispatcher.h"
#include "module.h"
#include "occupancy.h"
#include "specialize.h"

/* ---- _parse_signature -------------------------------------------------------------- */

/* One type as (dtype name, ndim, layout): ("float32", 0, "") for a scalar,
   ("none", 0, "") for void, ("tuple", 0, (item triples...)) for a tuple. */
static PyObject *type_triple(const GjType *t) {
    char layout = (char)t->layout;   /* 'C', 'F' or 'A' */
    if (t->kind == GJ_TK_TUPLE) {
        PyObject *items = PyTuple_New(t->n);
        for (int k = 0; items && k < t->n; k++) {
            PyObject *item = type_triple(t->elems[k]);
            if (!item)
                Py_CLEAR(items);
            else
                PyTuple_SetItem(items, k, item);
        }
        return items ? Py_BuildValue("(siN)", "tuple", 0, items) : NULL;
    }
    if (t->kind == GJ_TK_ARRAY)
        return Py_BuildValue("(sis#)", t->dtype->name, (int)t->ndim, &layout, (Py_ssize_t)1);
    return Py_BuildValue("(sis)", t->kind == GJ_TK_NONE ? "none" : t->name, 0, "");
}

/* _parse_signature(str) -> (return type or None, (argument types...)), each
   type a type_triple: the compiler's own parse, for gpujit.types. */
PyObject *gj_py_parse_signature(PyObject *module, PyObject *sig) {
    GjPyState *st = PyModule_GetState(module);
    if (!PyUnicode_Check(sig)) {
        PyErr_SetString(PyExc_TypeError, "_parse_signature() takes a str");
        return NULL;
    }
    const char *s = gj_py_signature_text(sig);   /* refuses a NUL */
    if (!s)
        return NULL;
    GjCtx ctx;
    gj_ctx_init(&ctx);
    const GjType **args, *ret;
    int nargs;
    PyObject *out = NULL, *list = NULL, *r = NULL;
    if (gj_ty_parse_signature(&ctx, s, &args, &nargs, &ret) != GJ_OK) {
        gj_py_raise_diag(st, &ctx, NULL);
        goto done;
    }
    if (!(list = PyTuple_New(nargs)))
        goto done;
    for (int i = 0; i < nargs; i++) {
        PyObject *t = type_triple(args[i]);
        if (!t)
            goto done;
        PyTuple_SetItem(list, i, t);
    }
    if ((r = ret ? type_triple(ret) : Py_NewRef(Py_None)))
        out = PyTuple_Pack(2, r, list);
done:
    Py_XDECREF(r);
    Py_XDECREF(list);
    gj_ctx_free(&ctx);
    return out;
}

/* ---- compile_ptx ------------------------------------------------------------------- */

/* {numba's fastmath flag name: GjFastMath bits}, from compile.h's table
   (grep tag GJ_FASTMATH_FLAGS), plus 'fast' (fastmath=True): everything. */
PyObject *gj_py_fastmath_flags(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    static const struct {
        const char *name;
        unsigned bits;
    } rows[] = {
#define X(id, name, bit) {name, GJ_FM_##id},
        GJ_FASTMATH_FLAGS(X)
#undef X
            {"fast", GJ_FM_FAST},
    };
    PyObject *flags = PyDict_New();
    for (size_t k = 0; flags && k < sizeof rows / sizeof rows[0]; k++) {
        PyObject *bits = PyLong_FromUnsignedLong(rows[k].bits);
        if (!bits || PyDict_SetItemString(flags, rows[k].name, bits) < 0)
            Py_CLEAR(flags);
        Py_XDECREF(bits);
    }
    return flags;
}

/* Compiles func (a Python function) for the signature text sig with o
   into *res (the caller frees it); *names gets the signature's type names.
   A kernel's signature returns void; a device function's (o->device) may
   name its return type.  -1 raised. */
static int compile_signature(GjPyState *st, PyObject *func, const char *sig,
                             const GjCompileOptions *o, GjCompileResult *res, PyObject **names) {
    GjCtx ctx;
    GjCodeView cv;
    gj_ctx_init(&ctx);
    memset(&cv, 0, sizeof cv);
    memset(res, 0, sizeof *res);
    int rc = -1;
    const GjType **types, *ret;
    int ntypes;
    if (gj_py_codeview(func, &ctx, &cv) < 0)
        goto done;
    if (gj_ty_parse_signature(&ctx, sig, &types, &ntypes, &ret) != GJ_OK) {
        gj_py_raise_diag(st, &ctx, &cv);
        goto done;
    }
    if (gj_py_plain_parameters(&cv) && ntypes != cv.argcount) {
        PyErr_Format(PyExc_TypeError, "signature '%s' has %d argument types but %s() takes %d", sig,
                     ntypes, cv.name, (int)cv.argcount);
        goto done;
    }
    if (!o->device && ret && ret->kind != GJ_TK_NONE) {
        PyErr_Format(PyExc_TypeError,
                     "signature '%s' returns %s, but a kernel returns nothing "
                     "(void); compile a device function with device=True",
                     sig, ret->name);
        goto done;
    }
    cv.argtypes = types;
    cv.rettype = o->device ? ret : NULL;
    rc = gj_py_run_compile(st, &ctx, &cv, o, res, names, 1);
done:
    gj_ctx_free(&ctx);
    return rc;
}

/* The PTX name of a C ABI function: abi_name as the user chose it, else
   c_name (the function's __name__) made a symbol as gpujit makes one of a
   Python name ("<lambda>" gives "_lambda_"); malloc'd.  NULL, with
   ValueError when the name is none PTX can hold, or neither is given. */
static char *c_abi_name(const char *abi_name, const char *c_name) {
    char *name = abi_name ? strdup(abi_name) : c_name ? gj_sym_of_python_name("", c_name) : NULL;
    if (!name) {
        if (abi_name || c_name)
            PyErr_NoMemory();
        return NULL;
    }
    const char *why = gj_sym_c_name_problem(name);
    if (!why)
        return name;
    PyObject *given = PyUnicode_FromString(abi_name ? abi_name : c_name);
    PyObject *made = given ? PyUnicode_FromString(name) : NULL;
    if (made && abi_name)
        PyErr_Format(PyExc_ValueError,
                     "abi_info[\"abi_name\"] %R cannot name a C ABI function "
                     "in PTX: it %s",
                     given, why);
    else if (made)
        PyErr_Format(PyExc_ValueError,
                     "the C ABI name %R, made of the function's __name__ %R, "
                     "cannot name a function in PTX: it %s; give one with "
                     "abi_info={\"abi_name\": ...}",
                     made, given, why);
    Py_XDECREF(given);
    Py_XDECREF(made);
    free(name);
    return NULL;
}

PyObject *gj_py_compile_ptx(PyObject *module, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"pyfunc",   "signature",     "cc",          "fastmath", "contract",
                             "lineinfo", "debug",         "opt",         "device",   "abi_name",
                             "c_name",   "launch_bounds", "boundscheck", NULL};
    PyObject *func, *sig_obj, *sig_str;
    unsigned fastmath = 0;   /* GjFastMath bits */
    int cc_major = 9, cc_minor = 0, contract = 1, lineinfo = 0, debug = 0, opt = 1, device = 0;
    int boundscheck = 0;   /* gpujit.compile_ptx resolved None */
    /* abi="c": the name the user chose (abi_info), else the function's __name__ */
    const char *abi_name = NULL, *c_name = NULL;
    int bounds[3] = {0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$(ii)Ipppppzz(iii)p:compile_ptx", kwlist, &func,
                                     &sig_obj, &cc_major, &cc_minor, &fastmath, &contract,
                                     &lineinfo, &debug, &opt, &device, &abi_name, &c_name,
                                     &bounds[0], &bounds[1], &bounds[2], &boundscheck))
        return NULL;
    char *entry_name = c_abi_name(abi_name, c_name);
    if ((abi_name || c_name) && !entry_name)
        return NULL;
    const char *sig =
        (sig_str = gj_py_signature_string(sig_obj)) ? gj_py_signature_text(sig_str) : NULL;
    if (!sig) {
        Py_XDECREF(sig_str);
        free(entry_name);
        return NULL;
    }
    GjPyState *st = PyModule_GetState(module);
    if (Py_IS_TYPE(func, st->DispatcherType)) {
        device = device || ((GjDispatcher *)func)->device_fn;
        func = ((GjDispatcher *)func)->func;
    }
    GjCompileOptions o;
    gj_compile_options_default(&o);
    o.cc_major = cc_major;
    o.cc_minor = cc_minor;
    o.fastmath = fastmath;
    o.contract = contract;
    o.lineinfo = lineinfo;
    o.opt_level = opt ? 3 : 0;
    o.device = device;
    o.entry_name = entry_name;
    o.max_threads = bounds[0];
    o.min_blocks = bounds[1];
    o.max_cluster = bounds[2];
    o.debug = debug;
    o.boundscheck = boundscheck;
    GjCompileResult res;
    PyObject *out = NULL, *names = NULL;
    if (compile_signature(st, func, sig, &o, &res, &names) == 0) {
        out = Py_BuildValue("(ss)", res.ptx, res.return_type ? res.return_type : "none");
        gj_result_free(&res);
    }
    Py_XDECREF(names);
    Py_DECREF(sig_str);
    free(entry_name);
    return out;
}

/* ---- a device function's inspect_* --------------------------------------------------- */

/* The text at `field` of d compiled for sig (a signature in any form gpujit
   takes), as compile_ptx(device=True) compiles it with d's options; *names
   gets the signature's type names when names is not NULL. */
static PyObject *device_fn_text(GjPyState *st, GjDispatcher *d, PyObject *sig, size_t field,
                                PyObject **names) {
    PyObject *str = gj_py_signature_string(sig);
    const char *text = str ? gj_py_signature_text(str) : NULL;
    PyObject *out = NULL, *key = NULL;
    GjCompileOptions o;
    gj_py_target_options(st, d, gj_exec_current_device(), &o);
    o.device = 1;
    GjCompileResult res;
    if (text && compile_signature(st, d->func, text, &o, &res, &key) == 0) {
        const char *s = *(char **)((char *)&res + field);
        out = PyUnicode_FromString(s ? s : "");
        gj_result_free(&res);
    }
    if (out && names)
        *names = Py_NewRef(key);
    Py_XDECREF(key);
    Py_XDECREF(str);
    return out;
}

PyObject *gj_py_device_fn_inspect(GjPyState *st, GjDispatcher *d, PyObject *sig, size_t field) {
    if (sig && sig != Py_None)
        return device_fn_text(st, d, sig, field, NULL);
    PyObject *out = PyDict_New();
    Py_ssize_t n = d->explicit_sigs ? PyList_Size(d->explicit_sigs) : 0;
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *key = NULL;
        PyObject *v = device_fn_text(st, d, PyList_GetItem(d->explicit_sigs, i), field, &key);
        if (!v || PyDict_SetItem(out, key, v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(key);
        Py_XDECREF(v);
    }
    return out;
}

/* _load_ptx(ptx): has the current device's driver load PTX text (its JIT
   compiles it), as a kernel's first launch does, then unloads it; raises
   what such a load raises (CudaCompileError with the driver's log).  The
   troubleshooting tests give it PTX newer than the driver. */
PyObject *gj_py_load_ptx(PyObject *module, PyObject *ptx) {
    GjPyState *st = PyModule_GetState(module);
    const char *text = gj_py_str(ptx, "_load_ptx() takes PTX text (a str)");
    if (!text)
        return NULL;
    GjExecError err;
    GjExecStatus rc;
    void *m = NULL;
    int device = gj_exec_current_device();
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_select(device, &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_exec_module_load(device, text, 0, &m, &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_exec_module_unload(device, m, &err);
    Py_END_ALLOW_THREADS return rc == GJ_EXEC_OK ? Py_NewRef(Py_None) : gj_py_raise_cuda(st, &err);
}
