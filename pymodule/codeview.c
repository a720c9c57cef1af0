/*
 * codeview.c - GjCodeView from a Python function, through `dis` and the
 * limited API only (codeview_py.h).
 *
 *     cv = CodeView(func)          # pseudo-Python of what this file does
 *     # gj_py_codeview_frozen: no dis, all a persistent-cache key needs
 *     cv.names, cv.defaults = func.__code__.co_varnames, ..., func.__defaults__
 *     cv.code_bytes = put_code(func.__code__)        # every field, constants too
 *     cv.globals = [(name, classify(lookup(name))) for name in
 *                   LOAD_GLOBAL names (gj_bc_global_names) + co_freevars]
 *     # gj_py_codeview_instructions: only to compile
 *     cv.instrs = [(i.opname, i.arg, const(i.argval), i.offset, i.positions,
 *                   i.is_jump_target) for i in dis.get_instructions(code)]
 *
 * Globals are frozen here, as numba does: the compiler sees what a name is
 * bound to now (a module, a builtin, a gpujit intrinsic, a number, a NumPy
 * array's bytes), and a rebinding needs a recompile.  Closure variables
 * (co_freevars) are frozen the same way from func.__closure__.  A global
 * bound to a gpujit.jit function (a device function) gets its own code
 * view, built here recursively: one view per function per compile, so a
 * recursive call points back at a view being built instead of building
 * forever (the compiler reports the recursion).  The names LOAD_GLOBAL
 * reads come from the raw bytecode rather than from dis, so that the view
 * a lookup keys and the one a miss compiles freeze the same globals, by the
 * same code, before dis has run.
 *
 * Every string is copied into c->arena; the functions and code objects
 * viewed are held until gj_py_codeview_release, no Python object longer.
 */
#include "codeview_py.h"

#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "cache.h"
#include "intrinsics.h"
#include "types.h"

/* Modules whose attributes the compiler resolves itself (intrinsics.h). */
static const char *const known_modules[] = {"gpujit", "math", "numpy", "cmath", "operator"};

static int no_memory(void) {
    PyErr_NoMemory();
    return -1;
}

/* Arena copy of a str; NULL with an exception set when s is not a str. */
static char *copy_str(GjCtx *c, PyObject *s) {
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(s, &n);
    if (!utf8)
        return NULL;
    char *copy = gj_arena_alloc(&c->arena, (size_t)n + 1);
    if (!copy) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, utf8, (size_t)n);
    return copy;
}

static const char *str_attr(GjCtx *c, PyObject *o, const char *name) {
    PyObject *v = PyObject_GetAttrString(o, name);
    const char *s = v ? copy_str(c, v) : NULL;
    Py_XDECREF(v);
    return s;
}

/* o.name as an int32; -1 with an exception set on failure. */
static int int_attr(PyObject *o, const char *name, int32_t *out) {
    PyObject *v = PyObject_GetAttrString(o, name);
    if (!v)
        return -1;
    long x = PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = (int32_t)x;
    return 0;
}

/* An int attribute that may be None (-1 then). */
static int opt_int_attr(PyObject *o, const char *name, int32_t *out) {
    PyObject *v = PyObject_GetAttrString(o, name);
    if (!v)
        return -1;
    long x = v == Py_None ? -1 : PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = (int32_t)x;
    return 0;
}

static const char *type_name(GjCtx *c, PyObject *o) {
    PyObject *name = PyType_GetName(Py_TYPE(o));
    const char *s = name ? copy_str(c, name) : NULL;
    Py_XDECREF(name);
    return s;
}

/* ---- constants -------------------------------------------------------- */

static int to_const(GjCtx *c, PyObject *o, GjConst *k);
static int to_const_at(GjCtx *c, PyObject *o, GjConst *k, int depth);

/* Tuples nested deeper than this are not frozen (and C recursion stays bounded). */
enum { MAX_TUPLE_DEPTH = 32 };

/* Whether o is a numpy.ndarray (numpy is only looked up if imported). */
static int is_ndarray(PyObject *o) {
    PyObject *name = PyUnicode_FromString("numpy");
    PyObject *np = name ? PyImport_GetModule(name) : NULL;
    PyObject *ndarray = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
    int r = ndarray ? PyObject_IsInstance(o, ndarray) : 0;
    Py_XDECREF(name);
    Py_XDECREF(np);
    Py_XDECREF(ndarray);
    PyErr_Clear();
    return r > 0;
}

/* A NumPy scalar (np.float32(2)): its Python value, tagged with its dtype.
   Returns 1 when o is one, 0 when not, -1 on error. */
static int numpy_scalar(GjCtx *c, PyObject *o, GjConst *k) {
    PyObject *type = (PyObject *)Py_TYPE(o);
    if (is_ndarray(o))   /* arrays have .item() too */
        return 0;
    PyObject *module = PyObject_GetAttrString(type, "__module__");
    int is_numpy = module && PyUnicode_Check(module) &&
                   PyUnicode_CompareWithASCIIString(module, "numpy") == 0 &&
                   PyObject_HasAttrString(o, "dtype") && PyObject_HasAttrString(o, "item");
    Py_XDECREF(module);
    PyErr_Clear();
    if (!is_numpy)
        return 0;
    PyObject *dtype = PyObject_GetAttrString(o, "dtype");
    const char *dtype_name = dtype ? str_attr(c, dtype, "name") : NULL;
    Py_XDECREF(dtype);
    if (!dtype_name)
        return -1;
    if (!gj_ty_from_name(dtype_name)) {   /* longdouble, datetime64, str_, ...: no gpujit type */
        *k = (GjConst){.kind = GJ_CONST_OTHER, .s = type_name(c, o)};
        return k->s ? 1 : -1;
    }
    PyObject *value = PyObject_CallMethod(o, "item", NULL);
    int ok = value && !PyTuple_Check(value) && to_const(c, value, k) == 0;
    if (ok && k->kind == GJ_CONST_OTHER && strcmp(dtype_name, "uint64") == 0) {
        /* above int64's range: keep the bits, typed uint64 */
        unsigned long long u = PyLong_AsUnsignedLongLong(value);
        ok = !(u == (unsigned long long)-1 && PyErr_Occurred());
        *k = (GjConst){.kind = GJ_CONST_INT, .i = (int64_t)u};
    }
    Py_XDECREF(value);
    if (!ok)
        return -1;
    if (k->kind == GJ_CONST_BOOL || k->kind == GJ_CONST_INT || k->kind == GJ_CONST_FLOAT ||
        k->kind == GJ_CONST_COMPLEX)
        k->s = dtype_name;
    else   /* complex, datetime, ...: keep the NumPy type's name */
        *k = (GjConst){.kind = GJ_CONST_OTHER, .s = type_name(c, o)};
    return 1;
}

static int tuple_const(GjCtx *c, PyObject *o, GjConst *k, int depth) {
    Py_ssize_t n = PyTuple_Size(o);
    if (n < 0)
        return -1;
    if (depth >= MAX_TUPLE_DEPTH) {
        *k = (GjConst){.kind = GJ_CONST_OTHER, .s = "tuple (nested too deeply)"};
        return 0;
    }
    k->kind = GJ_CONST_TUPLE;
    k->n = (int32_t)n;
    k->items = GJ_NEW_N(&c->arena, GjConst, n > 0 ? n : 1);
    if (!k->items)
        return no_memory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GetItem(o, i);
        if (!item || to_const_at(c, item, &k->items[i], depth + 1) < 0)
            return -1;
    }
    return 0;
}

/* slice(start, stop, step) -> SLICE with its three items. */
static int slice_const(GjCtx *c, PyObject *o, GjConst *k, int depth) {
    static const char *const parts[3] = {"start", "stop", "step"};
    k->kind = GJ_CONST_SLICE;
    k->s = "slice";
    k->n = 3;
    k->items = GJ_NEW_N(&c->arena, GjConst, 3);
    if (!k->items)
        return no_memory();
    for (int i = 0; i < 3; i++) {
        PyObject *item = PyObject_GetAttrString(o, parts[i]);
        int rc = item ? to_const_at(c, item, &k->items[i], depth + 1) : -1;
        Py_XDECREF(item);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Any Python object -> GjConst; what has no constant form is OTHER with
   its type name.  -1 only on a Python error. */
static int to_const(GjCtx *c, PyObject *o, GjConst *k) { return to_const_at(c, o, k, 0); }

/* to_const for an object `depth` tuples deep. */
static int to_const_at(GjCtx *c, PyObject *o, GjConst *k, int depth) {
    *k = (GjConst){0};
    if (o == Py_None) {
        k->kind = GJ_CONST_NONE;
        return 0;
    }
    /* First: np.float64 and np.complex128 are also Python floats/complexes,
       but as NumPy scalars they are strong types. */
    int r = numpy_scalar(c, o, k);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (PyBool_Check(o)) {
        k->kind = GJ_CONST_BOOL;
        k->i = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (overflow) {
            *k = (GjConst){.kind = GJ_CONST_OTHER, .s = "int (outside int64)"};
            return 0;
        }
        k->kind = GJ_CONST_INT;
        k->i = v;
        return 0;
    }
    if (PyFloat_Check(o)) {
        k->kind = GJ_CONST_FLOAT;
        k->f = PyFloat_AsDouble(o);
        return 0;
    }
    if (PyComplex_Check(o)) {
        k->kind = GJ_CONST_COMPLEX;
        k->f = PyComplex_RealAsDouble(o);
        k->im = PyComplex_ImagAsDouble(o);
        return 0;
    }
    if (PyUnicode_Check(o)) {
        k->kind = GJ_CONST_STR;
        return (k->s = copy_str(c, o)) ? 0 : -1;
    }
    if (PyTuple_Check(o))
        return tuple_const(c, o, k, depth);
    if (PySlice_Check(o))
        return slice_const(c, o, k, depth);
    k->kind = GJ_CONST_OTHER;
    return (k->s = type_name(c, o)) ? 0 : -1;
}

/* The reason of the first constant inside tuple k (depth first) that
   to_const could not take ("int (outside int64)"), or NULL. */
static const char *unfrozen_part(const GjConst *k) {
    if (k->kind == GJ_CONST_OTHER)
        return k->s;
    for (int32_t i = 0; k->kind == GJ_CONST_TUPLE && i < k->n; i++) {
        const char *r = unfrozen_part(&k->items[i]);
        if (r)
            return r;
    }
    return NULL;
}

/* A constant usable as a frozen global: numbers, bools, tuples of them. */
static int is_frozen_value(const GjConst *k) {
    switch (k->kind) {
    case GJ_CONST_BOOL:
    case GJ_CONST_INT:
    case GJ_CONST_FLOAT:
    case GJ_CONST_COMPLEX: return 1;
    case GJ_CONST_TUPLE:
        for (int32_t i = 0; i < k->n; i++) {
            if (!is_frozen_value(&k->items[i]))
                return 0;
        }
        return 1;
    case GJ_CONST_NONE:
    case GJ_CONST_STR:
    case GJ_CONST_SLICE:
    case GJ_CONST_OTHER: return 0;
    }
    return 0;
}

/* ---- globals ---------------------------------------------------------- */

/* 1 and the known module's name when o is math, numpy, cmath, operator or gpujit. */
static int known_module(PyObject *o, const char **name) {
    if (!PyModule_Check(o))
        return 0;
    PyObject *mod_name = PyModule_GetNameObject(o);
    if (!mod_name) {
        PyErr_Clear();
        return 0;
    }
    int found = 0;
    for (size_t i = 0; i < sizeof known_modules / sizeof known_modules[0] && !found; i++) {
        if (PyUnicode_CompareWithASCIIString(mod_name, known_modules[i]) == 0) {
            *name = known_modules[i];
            found = 1;
        }
    }
    Py_DECREF(mod_name);
    return found;
}

/* Whether `name` ("numpy.float32") is qualified by a known module other
   than gpujit. */
static int names_known_member(const char *name) {
    for (size_t i = 1; i < sizeof known_modules / sizeof known_modules[0]; i++) {
        size_t n = strlen(known_modules[i]);
        if (strncmp(name, known_modules[i], n) == 0 && name[n] == '.')
            return 1;
    }
    return 0;
}

/* "gpujit." + o's `_gpujit_intrinsic` name (gpujit's kernel API objects:
   "grid", "atomic.add", the namespace "atomic"), or that name as it is when
   it names another known module's member (gpujit.types' scalar types are
   NumPy's constructors: "numpy.float32"); NULL if o has none. */
static const char *intrinsic_name(GjCtx *c, PyObject *o) {
    PyObject *v = PyObject_GetAttrString(o, "_gpujit_intrinsic");
    const char *s = v && PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, NULL) : NULL;
    const char *name = !s                      ? NULL
                       : names_known_member(s) ? gj_arena_strdup(&c->arena, s)
                                               : gj_arena_printf(&c->arena, "gpujit.%s", s);
    Py_XDECREF(v);
    PyErr_Clear();
    return name;
}

/* "math.sin", "cmath.exp", "numpy.float32" for a function or NumPy scalar
   type imported by name (from math import sin), or NULL.  Whether gpujit
   supports it is for the compiler to say. */
static const char *module_member_name(GjCtx *c, PyObject *o) {
    if (PyModule_Check(o))
        return NULL;
    PyObject *mod = PyObject_GetAttrString(o, "__module__");
    PyObject *name = mod ? PyObject_GetAttrString(o, "__name__") : NULL;
    const char *s = NULL;
    if (mod && name && PyUnicode_Check(mod) && PyUnicode_Check(name)) {
        for (size_t i = 1; i < sizeof known_modules / sizeof known_modules[0] && !s; i++) {
            /* operator's functions say they come from _operator, its C half */
            if (PyUnicode_CompareWithASCIIString(mod, known_modules[i]) == 0 ||
                (strcmp(known_modules[i], "operator") == 0 &&
                 PyUnicode_CompareWithASCIIString(mod, "_operator") == 0)) {
                const char *n = PyUnicode_AsUTF8AndSize(name, NULL);
                s = n ? gj_arena_printf(&c->arena, "%s.%s", known_modules[i], n) : NULL;
            }
        }
    }
    Py_XDECREF(mod);
    Py_XDECREF(name);
    PyErr_Clear();
    return s;
}

/* The name under which o is a builtin (range, abs, ...), found by identity
   so a user's own `range` is not mistaken for it; NULL if none. */
static const char *builtin_name(GjCtx *c, PyObject *o, PyObject *builtins) {
    PyObject *name = PyObject_GetAttrString(o, "__name__");
    PyObject *bound = name && PyUnicode_Check(name) ? PyObject_GetItem(builtins, name) : NULL;
    const char *s = bound == o ? copy_str(c, name) : NULL;
    Py_XDECREF(name);
    Py_XDECREF(bound);
    PyErr_Clear();
    return s;
}

/* A function whose view this build made (or is making). */
typedef struct ViewOf {
    PyObject *func;      /* held, for its identity: a device function met again */
    PyObject *code;      /* its __code__, held: the instructions are read from it */
    GjCodeView *cv;
    struct ViewOf *next;
} ViewOf;

/* One build of views (codeview_py.h): the functions met, newest first, and
   the running interpreter's opcodes that the scan for globals needs. */
struct GjPyViews {
    GjCtx *c;
    ViewOf *seen;
    int load_global, extended_arg;   /* opcode.opmap's */
};

static int build_view(PyObject *func, GjPyViews *w, GjCodeView *cv);

/* A gpujit.jit function (its `_gpujit_callee` is (py_func, inline, device,
   signature or None)): 1 and g filled when o is one, 0 when not, -1 on a
   Python error. */
static int callee_global(GjPyViews *w, PyObject *o, GjGlobal *g) {
    GjCtx *c = w->c;
    PyObject *info = PyObject_GetAttrString(o, "_gpujit_callee");
    PyObject *func, *sig;
    int inline_always, device;
    if (!info || !PyTuple_Check(info)) {
        Py_XDECREF(info);
        PyErr_Clear();
        return 0;
    }
    int rc = PyArg_ParseTuple(info, "OppO", &func, &inline_always, &device, &sig) ? 1 : -1;
    GjCallee *callee = rc > 0 ? GJ_NEW(&c->arena, GjCallee) : NULL;
    if (rc > 0 && !callee)
        rc = no_memory();
    if (rc > 0) {
        *callee = (GjCallee){.inline_always = inline_always, .device = device};
        for (ViewOf *s = w->seen; s; s = s->next)
            if (s->func == func)
                callee->code = s->cv;
        if (!callee->code) {
            GjCodeView *cv = GJ_NEW(&c->arena, GjCodeView);
            rc = cv && build_view(func, w, cv) == 0 ? 1 : cv ? -1 : no_memory();
            if (rc > 0 && PyUnicode_Check(sig) && !(cv->signature = copy_str(c, sig)))
                rc = -1;
            callee->code = cv;
        }
    }
    if (rc > 0) {
        g->kind = GJ_GLOBAL_FUNCTION;
        g->callee = callee;
        g->name = callee->code->name;
    }
    Py_DECREF(info);
    return rc;
}

enum { CONST_ARRAY_MAX = 64 * 1024 };   /* constant memory; typeinfer.c reports bigger */

/* A NumPy array: a C-ordered, native-endian copy of its bytes.  1 and g
   filled when o is one, 0 when not, -1 on a Python error. */
static int array_global(GjCtx *c, PyObject *o, GjGlobal *g) {
    if (!is_ndarray(o))
        return 0;
    GjConstArray *a = GJ_NEW(&c->arena, GjConstArray);
    PyObject *dtype = PyObject_GetAttrString(o, "dtype");
    PyObject *native = dtype ? PyObject_CallMethod(dtype, "newbyteorder", "s", "=") : NULL;
    PyObject *copy = native ? PyObject_CallMethod(o, "astype", "O", native) : NULL;
    PyObject *bytes = NULL, *shape = NULL;
    Py_ssize_t n = 0;
    int rc = -1;
    if (!a || !copy || !(a->dtype = str_attr(c, native, "name")) ||
        !(shape = PyObject_GetAttrString(copy, "shape")) || (n = PyTuple_Size(shape)) < 0)
        goto done;
    a->ndim = (int32_t)n;
    int64_t *dims = GJ_NEW_N(&c->arena, int64_t, n + 1);
    int64_t *strides = GJ_NEW_N(&c->arena, int64_t, n + 1);
    int32_t itemsize;
    if (!dims || !strides || int_attr(native, "itemsize", &itemsize) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        dims[k] = PyLong_AsLongLong(PyTuple_GetItem(shape, k));
    int64_t stride = itemsize;
    for (Py_ssize_t k = n; k-- > 0;) {
        strides[k] = stride;
        stride *= dims[k];
    }
    a->shape = dims;
    a->strides = strides;
    a->nbytes = (size_t)stride;
    if (PyErr_Occurred())
        goto done;
    if (a->nbytes <= CONST_ARRAY_MAX) {   /* bigger: no copy, only the size for the error */
        char *src;
        Py_ssize_t len;
        if (!(bytes = PyObject_CallMethod(copy, "tobytes", NULL)) ||
            PyBytes_AsStringAndSize(bytes, &src, &len) < 0)
            goto done;
        void *data = gj_arena_alloc(&c->arena, (size_t)len + 1);
        if (!data) {
            no_memory();
            goto done;
        }
        memcpy(data, src, (size_t)len);
        a->data = data;
    }
    g->kind = n > 0 ? GJ_GLOBAL_ARRAY : GJ_GLOBAL_OTHER;
    g->array = n > 0 ? a : NULL;
    g->name = n > 0 ? a->dtype : "0-d numpy.ndarray";
    rc = 1;
done:
    Py_XDECREF(dtype);
    Py_XDECREF(native);
    Py_XDECREF(copy);
    Py_XDECREF(bytes);
    Py_XDECREF(shape);
    return rc;
}

/* An exception class, which a kernel may raise: 1 and g filled when o is
   one, 0 when not, -1 on a Python error.  The host raises it after the
   launch by "module:qualname" (kernelerror.c), so a class defined inside a
   function, which no name reaches, is refused here as a compile error
   rather than found missing when a kernel raises it. */
static int exception_global(GjCtx *c, PyObject *o, GjGlobal *g) {
    if (!PyType_Check(o) ||
        !PyType_IsSubtype((PyTypeObject *)o, (PyTypeObject *)PyExc_BaseException))
        return 0;
    const char *module = str_attr(c, o, "__module__");
    const char *qualname = module ? str_attr(c, o, "__qualname__") : NULL;
    if (!qualname)
        return -1;
    if (strstr(qualname, "<locals>")) {
        g->kind = GJ_GLOBAL_OTHER;
        g->name = GJ_LOCAL_EXCEPTION_CLASS;
        return 1;
    }
    g->kind = GJ_GLOBAL_EXCEPTION;
    g->name = gj_arena_printf(&c->arena, "%s:%s", module, qualname);
    return g->name ? 1 : no_memory();
}

/* Freezes object o, bound to `key`, into g.  -1 only on a Python error. */
static int classify(GjPyViews *w, PyObject *o, PyObject *builtins, GjGlobal *g) {
    GjCtx *c = w->c;
    if (known_module(o, &g->name)) {
        g->kind = GJ_GLOBAL_MODULE;
        return 0;
    }
    if ((g->name = intrinsic_name(c, o))) {
        g->kind = GJ_GLOBAL_INTRINSIC;
        return 0;
    }
    int r = callee_global(w, o, g);
    if (r == 0)
        r = array_global(c, o, g);
    if (r == 0)
        r = exception_global(c, o, g);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if ((g->name = module_member_name(c, o))) {
        g->kind = GJ_GLOBAL_INTRINSIC;
        return 0;
    }
    if ((g->name = builtin_name(c, o, builtins))) {
        g->kind = GJ_GLOBAL_BUILTIN;
        return 0;
    }
    if (to_const(c, o, &g->value) < 0)
        return -1;
    if (is_frozen_value(&g->value)) {
        g->kind = GJ_GLOBAL_CONST;
        return 0;
    }
    g->kind = GJ_GLOBAL_OTHER;
    /* to_const's reason ("int (outside int64)", "tuple (nested too deeply)")
       says more than the bare type name, also from inside a tuple */
    const char *part = g->value.kind == GJ_CONST_TUPLE ? unfrozen_part(&g->value) : NULL;
    if (g->value.kind == GJ_CONST_OTHER && g->value.s)
        g->name = g->value.s;
    else if (part && !(g->name = gj_arena_printf(&c->arena, "tuple holding %s", part)))
        return no_memory();
    else if (!part)
        g->name = type_name(c, o);
    g->value = (GjConst){0};
    return g->name ? 0 : -1;
}

/* mapping[key] as a new reference; NULL without an exception if absent. */
static PyObject *lookup(PyObject *mapping, PyObject *key) {
    PyObject *v = PyObject_GetItem(mapping, key);
    if (!v && PyErr_ExceptionMatches(PyExc_KeyError))
        PyErr_Clear();
    return v;
}

/* Freezes value v of global or closure variable `name` (a str) into a new
   entry of cv->globals; NULL v: not found (MISSING).  -1 on a Python error. */
static int freeze(GjPyViews *w, GjCodeView *cv, PyObject *name, PyObject *v, PyObject *builtins) {
    GjGlobal *g = &cv->globals[cv->nglobals++];
    g->kind = GJ_GLOBAL_MISSING;
    if (!(g->key = copy_str(w->c, name)))
        return -1;
    return v ? classify(w, v, builtins, g) : 0;
}

/* The globals LOAD_GLOBAL reads (gj_bc_global_names: in first-use order),
   found in globals, else builtins, else MISSING.  -1 on a Python error. */
static int resolve_load_globals(GjPyViews *w, PyObject *code, GjCodeView *cv, PyObject *globals,
                                PyObject *builtins) {
    PyObject *bytes = PyObject_GetAttrString(code, "co_code");
    PyObject *names = bytes ? PyObject_GetAttrString(code, "co_names") : NULL;
    Py_ssize_t n, nnames = names ? PyTuple_Size(names) : -1;
    char *raw;
    int32_t *found = NULL, count = 0;
    int rc = nnames >= 0 && PyBytes_AsStringAndSize(bytes, &raw, &n) == 0 ? 0 : -1;
    if (rc == 0 && !(found = GJ_NEW_N(&w->c->arena, int32_t, nnames + 1)))
        rc = no_memory();
    if (rc == 0)   /* -1, no globals: a version without a row, which decoding reports */
        count =
            gj_bc_global_names(cv->py_major, cv->py_minor, (const unsigned char *)raw, (size_t)n,
                               w->load_global, w->extended_arg, (int32_t)nnames, found);
    for (int32_t k = 0; rc == 0 && k < count; k++) {
        PyObject *name = PyTuple_GetItem(names, found[k]);
        PyObject *v = lookup(globals, name);
        if (!v && !PyErr_Occurred())
            v = lookup(builtins, name);
        rc = PyErr_Occurred() ? -1 : freeze(w, cv, name, v, builtins);
        Py_XDECREF(v);
    }
    Py_XDECREF(bytes);
    Py_XDECREF(names);
    return rc;
}

/* The closure variables (co_freevars) whose cells hold a value; an empty
   cell is left out (build.c reports a read of it).  -1 on a Python error. */
static int resolve_closure(GjPyViews *w, PyObject *func, PyObject *code, GjCodeView *cv,
                           PyObject *builtins) {
    PyObject *freevars = PyObject_GetAttrString(code, "co_freevars");
    PyObject *closure = freevars ? PyObject_GetAttrString(func, "__closure__") : NULL;
    int rc = freevars && closure ? 0 : -1;
    Py_ssize_t n =
        rc == 0 && PyTuple_Check(freevars) && PyTuple_Check(closure) ? PyTuple_Size(freevars) : 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n && i < PyTuple_Size(closure); i++) {
        PyObject *cell = PyTuple_GetItem(closure, i);
        PyObject *v = PyObject_GetAttrString(cell, "cell_contents");
        if (!v && PyErr_ExceptionMatches(PyExc_ValueError)) {   /* empty */
            PyErr_Clear();
            continue;
        }
        rc = v ? freeze(w, cv, PyTuple_GetItem(freevars, i), v, builtins) : -1;
        Py_XDECREF(v);
    }
    Py_XDECREF(freevars);
    Py_XDECREF(closure);
    return rc;
}

/* Freezes every global LOAD_GLOBAL reads and every closure variable, from
   the raw bytecode: no dis, so a persistent-cache hit never waits for it. */
static int resolve_globals(GjPyViews *w, PyObject *func, PyObject *code, GjCodeView *cv) {
    PyObject *globals = PyObject_GetAttrString(func, "__globals__");
    PyObject *builtins = PyObject_GetAttrString(func, "__builtins__");
    PyObject *names = PyObject_GetAttrString(code, "co_names");
    PyObject *freevars = PyObject_GetAttrString(code, "co_freevars");
    Py_ssize_t most = names && freevars ? PyTuple_Size(names) + PyTuple_Size(freevars) : -1;
    int rc = -1;
    if (!globals || !builtins || most < 0)
        goto done;
    if (!(cv->globals = GJ_NEW_N(&w->c->arena, GjGlobal, most + 1))) {
        no_memory();
        goto done;
    }
    rc = resolve_load_globals(w, code, cv, globals, builtins) < 0 ||
                 resolve_closure(w, func, code, cv, builtins) < 0
             ? -1
             : 0;
done:
    Py_XDECREF(globals);
    Py_XDECREF(builtins);
    Py_XDECREF(names);
    Py_XDECREF(freevars);
    return rc;
}

/* ---- instructions ----------------------------------------------------- */

static int read_positions(PyObject *instr, GjLoc *loc) {
    PyObject *pos = PyObject_GetAttrString(instr, "positions");
    int32_t end_line = -1;
    int rc = 0;
    *loc = (GjLoc){0, -1, -1};
    if (!pos)
        return -1;
    if (pos != Py_None) {
        rc = opt_int_attr(pos, "lineno", &loc->line) < 0 ||
                     opt_int_attr(pos, "end_lineno", &end_line) < 0 ||
                     opt_int_attr(pos, "col_offset", &loc->col) < 0 ||
                     opt_int_attr(pos, "end_col_offset", &loc->end_col) < 0
                 ? -1
                 : 0;
        if (loc->line < 0)
            loc->line = 0;
        if (end_line != loc->line)   /* a span over several lines: no end column */
            loc->end_col = -1;
    }
    Py_DECREF(pos);
    return rc;
}

/* dis leaves KW_NAMES's argval unresolved in 3.11 ("<unknown>"): its oparg
   indexes co_consts, which holds the tuple of keyword names. */
static PyObject *kw_names_argval(PyObject *instr, PyObject *argval, PyObject *consts) {
    PyObject *opname = PyObject_GetAttrString(instr, "opname");
    PyObject *arg = PyObject_GetAttrString(instr, "arg");
    int is_kw = opname && PyUnicode_Check(opname) &&
                PyUnicode_CompareWithASCIIString(opname, "KW_NAMES") == 0;
    Py_ssize_t k = is_kw && consts && arg && PyLong_Check(arg) ? PyLong_AsSsize_t(arg) : -1;
    Py_XDECREF(opname);
    Py_XDECREF(arg);
    PyErr_Clear();
    PyObject *names = k >= 0 && k < PyTuple_Size(consts) ? PyTuple_GetItem(consts, k) : NULL;
    if (!names || !PyTuple_Check(names))
        return argval;
    Py_INCREF(names);
    Py_DECREF(argval);
    return names;
}

static int read_instr(GjCtx *c, PyObject *instr, PyObject *consts, GjInstr *in) {
    PyObject *argval = PyObject_GetAttrString(instr, "argval");
    if (argval)
        argval = kw_names_argval(instr, argval, consts);
    int rc = argval && (in->opname = str_attr(c, instr, "opname")) &&
                     opt_int_attr(instr, "arg", &in->arg) == 0 &&
                     int_attr(instr, "offset", &in->offset) == 0 &&
                     read_positions(instr, &in->loc) == 0 && to_const(c, argval, &in->argval) == 0
                 ? 0
                 : -1;
    Py_XDECREF(argval);
    if (rc == 0) {
        PyObject *jt = PyObject_GetAttrString(instr, "is_jump_target");
        in->is_jump_target = jt ? PyObject_IsTrue(jt) : -1;
        Py_XDECREF(jt);
        rc = in->is_jump_target < 0 ? -1 : 0;
    }
    return rc;
}

/* cv's instructions, from dis.get_instructions(code). */
static int read_instructions(PyObject *code, GjCtx *c, GjCodeView *cv) {
    PyObject *dis = PyImport_ImportModule("dis");
    PyObject *it = dis ? PyObject_CallMethod(dis, "get_instructions", "O", code) : NULL;
    PyObject *list = it ? PySequence_List(it) : NULL;
    PyObject *consts = list ? PyObject_GetAttrString(code, "co_consts") : NULL;
    if (consts && !PyTuple_Check(consts))
        Py_CLEAR(consts);
    PyErr_Clear();
    int rc = -1;
    if (!list)
        goto done;
    Py_ssize_t n = PyList_Size(list);
    cv->instrs = GJ_NEW_N(&c->arena, GjInstr, n > 0 ? n : 1);
    if (!cv->instrs && no_memory())
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (read_instr(c, PyList_GetItem(list, i), consts, &cv->instrs[i]) < 0)
            goto done;
    }
    cv->ninstrs = (int32_t)n;
    rc = 0;
done:
    Py_XDECREF(dis);
    Py_XDECREF(it);
    Py_XDECREF(list);
    Py_XDECREF(consts);
    return rc;
}

/* ---- the code object as key bytes ---------------------------------------- */

/* Every field of a code object, as marshal writes one (and more): dis makes
   the instructions of these and of nothing else but the Python version. */
static const char *const code_fields[] = {
    "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",  "co_stacksize",
    "co_flags",    "co_firstlineno",     "co_code",           "co_consts",   "co_names",
    "co_varnames", "co_freevars",        "co_cellvars",       "co_filename", "co_name",
    "co_qualname", "co_linetable",       "co_exceptiontable",
};

enum { MAX_OBJECT_DEPTH = 64 };   /* deeper constants are not keyed (nor cached) */

static int put_object(GjBuf *b, PyObject *o, PyTypeObject *code_type, int depth);

static int put_code(GjBuf *b, PyObject *code, int depth) {
    gj_buf_put(b, "C", 1);
    for (size_t i = 0; i < sizeof code_fields / sizeof code_fields[0]; i++) {
        PyObject *v = PyObject_GetAttrString(code, code_fields[i]);
        int ok = v && put_object(b, v, Py_TYPE(code), depth + 1);
        Py_XDECREF(v);
        if (!ok)
            return 0;
    }
    return 1;
}

static int compare_bufs(const void *x, const void *y) {
    const GjBuf *a = x, *b = y;
    int c = memcmp(a->data, b->data, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A frozenset's items in the order of their bytes: its own order follows
   string hashes, which differ between processes. */
static int put_frozenset(GjBuf *b, PyObject *o, PyTypeObject *code_type, int depth) {
    Py_ssize_t n = PySet_Size(o);
    GjBuf *items = n >= 0 ? PyMem_Calloc((size_t)n + 1, sizeof *items) : NULL;
    PyObject *it = items ? PyObject_GetIter(o) : NULL, *item;
    Py_ssize_t k = 0;
    int ok = it != NULL;
    while (ok && (item = PyIter_Next(it))) {
        ok = k < n && put_object(&items[k++], item, code_type, depth + 1);
        Py_DECREF(item);
    }
    ok = ok && k == n && !PyErr_Occurred();
    if (ok) {
        qsort(items, (size_t)n, sizeof *items, compare_bufs);
        gj_buf_put(b, "z", 1);
        gj_buf_put_i64(b, n);
        for (Py_ssize_t i = 0; i < n; i++)
            gj_buf_put_blob(b, items[i].data, items[i].len);
    }
    for (Py_ssize_t i = 0; items && i < n; i++)
        gj_buf_free(&items[i]);
    PyMem_Free(items);
    Py_XDECREF(it);
    return ok;
}

/* A str, bytes or int too big for int64, tagged: its bytes with their length. */
static int put_text(GjBuf *b, char tag, PyObject *o) {
    Py_ssize_t n;
    char *data;
    const char *utf8 = NULL;
    if (PyBytes_CheckExact(o))
        utf8 = PyBytes_AsStringAndSize(o, &data, &n) == 0 ? data : NULL;
    else
        utf8 = PyUnicode_AsUTF8AndSize(o, &n);   /* a lone surrogate fails: not keyed */
    if (!utf8)
        return 0;
    gj_buf_put(b, &tag, 1);
    gj_buf_put_blob(b, utf8, (size_t)n);
    return 1;
}

/* o, a constant of a code object (what marshal can write) or a field of
   one, as bytes that no other value writes: 1, or 0 for an object of
   another kind (the view is then not keyed, so not cached). */
static int put_object(GjBuf *b, PyObject *o, PyTypeObject *code_type, int depth) {
    if (depth > MAX_OBJECT_DEPTH)
        return 0;
    if (o == Py_None || o == Py_True || o == Py_False || o == Py_Ellipsis) {
        gj_buf_put(b, o == Py_None ? "N" : o == Py_True ? "T" : o == Py_False ? "F" : "E", 1);
        return 1;
    }
    if (PyLong_CheckExact(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            PyObject *text = PyObject_Repr(o);
            int ok = text && put_text(b, 'I', text);
            Py_XDECREF(text);
            return ok;
        }
        gj_buf_put(b, "i", 1);
        gj_buf_put_i64(b, v);
        return !PyErr_Occurred();
    }
    if (PyFloat_CheckExact(o) || PyComplex_CheckExact(o)) {   /* the bits: -0.0 is not 0.0 */
        double parts[2] = {PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)};
        int64_t bits[2];
        memcpy(bits, parts, sizeof bits);
        gj_buf_put(b, PyFloat_CheckExact(o) ? "f" : "c", 1);
        gj_buf_put_i64(b, bits[0]);
        gj_buf_put_i64(b, bits[1]);
        return !PyErr_Occurred();
    }
    if (PyUnicode_CheckExact(o) || PyBytes_CheckExact(o))
        return put_text(b, PyBytes_CheckExact(o) ? 'b' : 's', o);
    if (PyTuple_CheckExact(o)) {
        Py_ssize_t n = PyTuple_Size(o);
        gj_buf_put(b, "t", 1);
        gj_buf_put_i64(b, n);
        for (Py_ssize_t i = 0; i < n; i++)
            if (!put_object(b, PyTuple_GetItem(o, i), code_type, depth + 1))
                return 0;
        return 1;
    }
    if (PyFrozenSet_CheckExact(o))
        return put_frozenset(b, o, code_type, depth);
    if (Py_IS_TYPE(o, code_type))
        return put_code(b, o, depth);
    if (PySlice_Check(o)) {   /* 3.14 folds constant slices */
        static const char *const parts[3] = {"start", "stop", "step"};
        gj_buf_put(b, "S", 1);
        for (int i = 0; i < 3; i++) {
            PyObject *part = PyObject_GetAttrString(o, parts[i]);
            int ok = part && put_object(b, part, code_type, depth + 1);
            Py_XDECREF(part);
            if (!ok)
                return 0;
        }
        return 1;
    }
    return 0;
}

/* cv->code_bytes: code as put_code writes it, or NULL (and no error) when
   a constant of it is of a kind put_object does not write. */
static int key_code(PyObject *code, GjCtx *c, GjCodeView *cv) {
    GjBuf b = {0};
    int ok = put_code(&b, code, 0);
    PyErr_Clear();   /* an attribute or a value put_object cannot write: not keyed */
    if (b.failed) {
        gj_buf_free(&b);
        return no_memory();
    }
    unsigned char *copy = ok ? gj_arena_alloc(&c->arena, b.len) : NULL;
    if (ok && !copy) {
        gj_buf_free(&b);
        return no_memory();
    }
    if (copy) {
        memcpy(copy, b.data, b.len);
        cv->code_bytes = copy;
        cv->code_nbytes = b.len;
    }
    gj_buf_free(&b);
    return 0;
}

/* ---- code object and source ------------------------------------------- */

static int read_varnames(PyObject *code, GjCtx *c, GjCodeView *cv) {
    PyObject *names = PyObject_GetAttrString(code, "co_varnames");
    int rc = -1;
    if (!names)
        return -1;
    Py_ssize_t n = PyTuple_Size(names);
    cv->varnames = GJ_NEW_N(&c->arena, const char *, n > 0 ? n : 1);
    if (n < 0 || (!cv->varnames && no_memory()))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(cv->varnames[i] = copy_str(c, PyTuple_GetItem(names, i))))
            goto done;
    }
    cv->nvarnames = (int32_t)n;
    rc = 0;
done:
    Py_DECREF(names);
    return rc;
}

static int read_version(GjCodeView *cv) {
    PyObject *v = PySys_GetObject("version_info");   /* borrowed */
    PyObject *major = v ? PySequence_GetItem(v, 0) : NULL;
    PyObject *minor = v ? PySequence_GetItem(v, 1) : NULL;
    int rc = major && minor ? 0 : -1;
    if (rc == 0) {
        cv->py_major = (int)PyLong_AsLong(major);
        cv->py_minor = (int)PyLong_AsLong(minor);
        rc = PyErr_Occurred() ? -1 : 0;
    }
    Py_XDECREF(major);
    Py_XDECREF(minor);
    if (!v)
        PyErr_SetString(PyExc_RuntimeError, "sys.version_info is missing");
    return rc;
}

static int read_code(PyObject *code, GjCtx *c, GjCodeView *cv) {
    if (!(cv->name = str_attr(c, code, "co_name")) ||
        !(cv->qualname = str_attr(c, code, "co_qualname")) ||
        !(cv->filename = str_attr(c, code, "co_filename")))
        return -1;
    if (int_attr(code, "co_firstlineno", &cv->firstlineno) < 0 ||
        int_attr(code, "co_argcount", &cv->argcount) < 0 ||
        int_attr(code, "co_kwonlyargcount", &cv->kwonlyargcount) < 0 ||
        int_attr(code, "co_flags", &cv->flags) < 0)
        return -1;
    return read_varnames(code, c, cv);
}

/* __defaults__, frozen like globals (numbers, tuples of them, None). */
static int read_defaults(PyObject *func, GjCtx *c, GjCodeView *cv) {
    PyObject *defaults = PyObject_GetAttrString(func, "__defaults__");
    if (!defaults) {
        PyErr_Clear();
        return 0;
    }
    int rc = 0;
    Py_ssize_t n = PyTuple_Check(defaults) ? PyTuple_Size(defaults) : 0;
    GjConst *items = n > 0 ? GJ_NEW_N(&c->arena, GjConst, n) : NULL;
    if (n > 0 && !items)
        rc = no_memory();
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        rc = to_const(c, PyTuple_GetItem(defaults, i), &items[i]);
        if (rc == 0 && items[i].kind != GJ_CONST_NONE && !is_frozen_value(&items[i])) {
            const char *type = type_name(c, PyTuple_GetItem(defaults, i));
            items[i] = (GjConst){.kind = GJ_CONST_OTHER, .s = type};
            rc = type ? 0 : -1;
        }
    }
    Py_DECREF(defaults);
    if (rc == 0) {
        cv->defaults = items;
        cv->ndefaults = (int32_t)n;
    }
    return rc;
}

/* The view of func without its instructions, and of each device function
   it calls, recursively; the code objects held in w->seen. */
static int build_view(PyObject *func, GjPyViews *w, GjCodeView *cv) {
    GjCtx *c = w->c;
    memset(cv, 0, sizeof *cv);
    PyObject *code = PyObject_HasAttrString(func, "__globals__")
                         ? PyObject_GetAttrString(func, "__code__")
                         : NULL;
    if (!code) {
        PyErr_Clear();
        const char *type = type_name(c, func);
        PyErr_Format(PyExc_TypeError, "gpujit can only compile a Python function, not %s",
                     type ? type : "this object");
        return -1;
    }
    ViewOf *self = PyMem_Malloc(sizeof *self);
    if (!self) {
        Py_DECREF(code);
        return no_memory();
    }
    *self = (ViewOf){.func = Py_NewRef(func), .code = code, .cv = cv, .next = w->seen};
    w->seen = self;   /* before the globals: a recursive call finds this view */
    return read_version(cv) < 0 || read_code(code, c, cv) < 0 || read_defaults(func, c, cv) < 0 ||
                   key_code(code, c, cv) < 0 || resolve_globals(w, func, code, cv) < 0
               ? -1
               : 0;
}

/* opcode.opmap[name] */
static int opcode_of(PyObject *opmap, const char *name) {
    PyObject *v = opmap ? PyMapping_GetItemString(opmap, name) : NULL;
    long op = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    if (!PyErr_Occurred() && (op < 0 || op > 255))
        PyErr_Format(PyExc_RuntimeError, "opcode.opmap['%s'] is not an opcode", name);
    return PyErr_Occurred() ? -1 : (int)op;
}

int gj_py_codeview_frozen(PyObject *func, GjCtx *c, GjCodeView *cv, GjPyViews **views) {
    GjPyViews *w = *views = PyMem_Calloc(1, sizeof *w);
    if (!w)
        return no_memory();
    w->c = c;
    PyObject *opcode = PyImport_ImportModule("opcode");
    PyObject *opmap = opcode ? PyObject_GetAttrString(opcode, "opmap") : NULL;
    w->load_global = opcode_of(opmap, "LOAD_GLOBAL");
    w->extended_arg = w->load_global < 0 ? -1 : opcode_of(opmap, "EXTENDED_ARG");
    Py_XDECREF(opcode);
    Py_XDECREF(opmap);
    return w->extended_arg < 0 ? -1 : build_view(func, w, cv);
}

int gj_py_codeview_instructions(GjPyViews *views) {
    for (ViewOf *s = views->seen; s; s = s->next)
        if (!s->cv->instrs && read_instructions(s->code, views->c, s->cv) < 0)
            return -1;
    return 0;
}

void gj_py_codeview_release(GjPyViews *views) {
    if (!views)
        return;
    while (views->seen) {
        ViewOf *s = views->seen;
        views->seen = s->next;
        Py_DECREF(s->func);
        Py_DECREF(s->code);
        PyMem_Free(s);
    }
    PyMem_Free(views);
}

int gj_py_codeview(PyObject *func, GjCtx *c, GjCodeView *cv) {
    GjPyViews *views;
    int rc =
        gj_py_codeview_frozen(func, c, cv, &views) < 0 || gj_py_codeview_instructions(views) < 0
            ? -1
            : 0;
    gj_py_codeview_release(views);
    return rc;
}

/* _intrinsics() -> [(name, kind, params, doc)]: gpujit's kernel API as the
   compiler's table (intrinsics.h) has it, for gpujit/__init__.py to build
   its objects from.  name is relative to gpujit ("grid", "atomic.add");
   kind is "dim3" or "function". */
PyObject *gj_py_intrinsics(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (int i = 0; out && i < GJ_NINTRINSICS; i++) {
        const GjIntrinsicRow *r = gj_intrinsic_row((GjIntrinsic)i);
        if (!r->name[0] || strncmp(r->ns, "gpujit", 6) != 0 || (r->ns[6] && r->ns[6] != '.'))
            continue;
        PyObject *name = r->ns[6] ? PyUnicode_FromFormat("%s.%s", r->ns + 7, r->name)
                                  : PyUnicode_FromString(r->name);
        PyObject *item =
            name ? Py_BuildValue("(Osss)", name, (r->flags & GJ_IF_DIM3) ? "dim3" : "function",
                                 r->params, r->doc)
                 : NULL;
        Py_XDECREF(name);
        if (!item || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
    }
    return out;
}
