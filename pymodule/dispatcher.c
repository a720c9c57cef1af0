/*
 * dispatcher.c - the kernel object gpujit.jit returns: its specialisation
 * table, compilation on a miss, and inspection (compile_ptx() is in
 * compileptx.c, what the kernel uses and launch configurations in
 * occupancy.c).
 *
 *     class Dispatcher:                    # kernel = gpujit.jit(f)
 *         def __getitem__(self, config) -> Launcher   # launcher.c
 *         def __call__(self, *args)        # ValueError: needs kernel[grid, block]
 *         def compile(self, signature: str) -> tuple[str, ...]
 *         def inspect_asm(self, signature=None) -> dict | str   # alias inspect_ptx
 *         def inspect_llvm(self, signature=None) -> dict | str
 *         def inspect_types(self, signature=None, file=None) -> None
 *         def recompile(self) -> None
 *         signatures: list[tuple[str, ...]]; py_func
 *
 * Specialisations live in a chained hash table keyed by the type key of
 * dispatcher.h; the entry last used is checked before hashing, so a loop
 * launching one kernel with one signature does a single memcmp.  A miss
 * builds the code view (pymodule/codeview.c) while holding the GIL, then
 * runs gj_compile() and the module load without it.  An entry's key[0] is
 * the device it was compiled for: a CUDA ordinal (PTX, loaded as a
 * CUmodule) or GJ_EXEC_HOST (the CPU target: host code in LLVM's JIT).
 * inspect_asm always shows PTX, compiling it for a CPU entry's signature
 * when needed (it needs no GPU).  A device function has no entries (the
 * kernels that call it compile it): its inspect_* compile it on its own,
 * as compile_ptx(device=True) does (compileptx.c).
 */
#include "dispatcher.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <structmember.h>

#include "argkey.h"
#include "codeview_py.h"
#include "compileptx.h"
#include "launcher.h"
#include "module.h"
#include "occupancy.h"
#include "specialize.h"

/* ---- specialisation table ------------------------------------------------ */

static uint64_t hash_key(const uint32_t *key, int n) {
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (int i = 0; i < n; i++) {
        h ^= key[i];
        h *= 1099511628211ull;
    }
    return h;
}

GjEntry *gj_py_entry_find(GjDispatcher *d, const uint32_t *key, int n) {
    GjEntry *e = d->last;
    if (e && e->nkey == n && memcmp(e->key, key, (size_t)n * sizeof *key) == 0)
        return e;
    if (!d->nbuckets)
        return NULL;
    uint64_t h = hash_key(key, n);
    for (e = d->buckets[h & (d->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && e->nkey == n && memcmp(e->key, key, (size_t)n * sizeof *key) == 0)
            return d->last = e;
    return NULL;
}

static int table_insert(GjDispatcher *d, GjEntry *e) {
    if (d->count + 1 > d->nbuckets) {
        size_t nb = d->nbuckets ? d->nbuckets * 2 : 8;
        GjEntry **b = PyMem_Calloc(nb, sizeof *b);
        if (!b) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; i < d->nbuckets; i++)
            for (GjEntry *x = d->buckets[i], *next; x; x = next) {
                next = x->next;
                x->next = b[x->hash & (nb - 1)];
                b[x->hash & (nb - 1)] = x;
            }
        PyMem_Free(d->buckets);
        d->buckets = b;
        d->nbuckets = nb;
    }
    e->hash = hash_key(e->key, e->nkey);
    e->next = d->buckets[e->hash & (d->nbuckets - 1)];
    d->buckets[e->hash & (d->nbuckets - 1)] = e;
    d->count++;
    d->last = e;
    return 0;
}

static void entry_free(GjEntry *e) {
    if (e->module) {
        GjExecError err;
        int prev = gj_exec_current_device();
        /* Its kernels may still be queued (launches return before they
           run): wait for them before the code goes. */
        int device = (int)e->key[0];
        if (gj_exec_select(device, &err) == GJ_EXEC_OK &&
            gj_exec_synchronize(device, &err) == GJ_EXEC_OK)
            gj_exec_module_unload(device, e->module, &err);
        gj_exec_select(prev, &err);
    }
    if (e->loops)
        entry_free(e->loops);
    gj_result_free(&e->res);
    Py_XDECREF(e->sig);
    PyMem_Free(e);
}
/* ---- compiling ------------------------------------------------------------- */

/* Whether the function has positional parameters only.  Otherwise counting
   its arguments means nothing, and the compiler reports *args, **kwargs or
   keyword-only parameters at the def line.  (co_flags: CO_VARARGS 0x04 and
   CO_VARKEYWORDS 0x08, as the inspect module documents; the macros are
   outside the limited API.) */
int gj_py_plain_parameters(const GjCodeView *cv) {
    return !(cv->flags & (0x04 | 0x08)) && cv->kwonlyargcount == 0;
}

/* The threads a specialisation's launches run on the CPU target before it
   is compiled with thread loops: GPUJIT_CPU_LOOP_THREADS, else
   CPU_LOOP_THREADS.  A launch of few threads runs the code of one thread
   per call, which compiles in about half the time (docs/internals/cpu-target.md, "How
   a block runs", has the measurements behind the default).  -1 raised (a
   bad value's RuntimeWarning made an error by the warnings filter). */
enum { CPU_LOOP_THREADS = 1 << 20 };

static int cpu_loop_threads(unsigned long long *limit) {
    static int warned;
    *limit = CPU_LOOP_THREADS;
    const char *s = getenv("GPUJIT_CPU_LOOP_THREADS");
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] >= '0' && s[0] <= '9' && *end == '\0') {
        *limit = errno == ERANGE ? ULLONG_MAX : v;   /* more than any grid: never */
        return 0;
    }
    if (warned)
        return 0;
    warned = 1;
    return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                            "gpujit: GPUJIT_CPU_LOOP_THREADS=%s is "
                            "not a number of threads (0 or more); using %d",
                            s, CPU_LOOP_THREADS);
}

/* Compiles d's function for the argument types in key (key[0]: device),
   with thread loops on the CPU target when `loops`, issuing its warnings
   when `warn`; the entry is in no table yet.  NULL raised. */
static GjEntry *entry_build(GjPyState *st, GjDispatcher *d, const uint32_t *key, int nkey,
                            int loops, int warn) {
    GjCtx ctx;
    GjCodeView cv;
    gj_ctx_init(&ctx);
    memset(&cv, 0, sizeof cv);
    GjEntry *e = NULL;
    GjPyViews *views = NULL;   /* instructions are read on a cache miss only */
    if (gj_py_codeview_frozen(d->func, &ctx, &cv, &views) < 0)
        goto done;
    int nargs, leaves, expect;
    gj_py_key_count(key, nkey, &nargs, &leaves, &expect);
    if (gj_py_plain_parameters(&cv) && cv.argcount != nargs) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d argument%s but %d %s given", cv.name,
                     (int)cv.argcount, cv.argcount == 1 ? "" : "s", nargs,
                     nargs == 1 ? "was" : "were");
        goto done;
    }
    const GjType **types = GJ_NEW_N(&ctx.arena, const GjType *, nkey);
    if (!types) {
        PyErr_NoMemory();
        goto done;
    }
    for (int i = 0, pos = 1; i < nargs; i++)
        if (!(types[i] = gj_py_key_type(&ctx, key, nkey, &pos)))
            goto done;
    cv.argtypes = types;
    GjCompileOptions o;
    gj_py_target_options(st, d, (int)key[0], &o);
    o.cpu_thread_loops = loops;
    if (o.target == GJ_TARGET_NVPTX) {   /* searched when a kernel, or a cache key, needs it */
        o.find_libdevice = gj_py_find_libdevice;
        o.find_libdevice_arg = st;
    }
    e = PyMem_Calloc(1, sizeof *e + (size_t)nkey * sizeof *key);
    if (!e) {
        PyErr_NoMemory();
        goto done;
    }
    e->nkey = nkey;
    memcpy(e->key, key, (size_t)nkey * sizeof *key);
    if (gj_py_cache_compile(st, d, &ctx, &cv, views, &o, e, warn) < 0) {
        entry_free(e);
        e = NULL;
        goto done;
    }
    if (e->res.nparams != leaves || e->res.nkernel_params != expect) {
        PyErr_Format(st->InternalError,
                     "launch plan of %s has %d parameters (%d kernel parameters); "
                     "expected %d (%d)",
                     cv.name, e->res.nparams, e->res.nkernel_params, leaves, expect);
        entry_free(e);
        e = NULL;
    }
done:
    gj_py_codeview_release(views);
    gj_ctx_free(&ctx);
    return e;
}

GjEntry *gj_py_entry_compile(GjPyState *st, GjDispatcher *d, const uint32_t *key, int nkey,
                             unsigned long long threads) {
    unsigned long long limit = 0;
    if ((int)key[0] == GJ_EXEC_HOST && cpu_loop_threads(&limit) < 0)
        return NULL;
    GjEntry *e = entry_build(st, d, key, nkey, threads >= limit, 1);
    GjEntry *first = e ? gj_py_entry_find(d, key, nkey) : NULL;
    if (first) {   /* another thread compiled it while this one did (the GIL released) */
        entry_free(e);
        return first;
    }
    if (e && table_insert(d, e) < 0) {
        entry_free(e);
        e = NULL;
    }
    return e;
}

GjEntry *gj_py_entry_for_launch(GjPyState *st, GjDispatcher *d, GjEntry *e,
                                unsigned long long threads) {
    if (e->loops)
        return e->loops;
    if (!e->res.cpu_per_thread || e->res.needs_fibers)
        return e;   /* the GPU's code, thread loops already, or fibers */
    unsigned long long limit;
    if (cpu_loop_threads(&limit) < 0)
        return NULL;
    e->threads_run = threads > ULLONG_MAX - e->threads_run ? ULLONG_MAX : e->threads_run + threads;
    if (e->threads_run < limit)
        return e;
    GjEntry *loops = entry_build(st, d, e->key, e->nkey, 1, 0);   /* warned the first time */
    if (!loops)
        return NULL;
    if (e->loops) {   /* another thread compiled them while this one did */
        entry_free(loops);
        return e->loops;
    }
    if (gj_py_entry_load(st, d, loops) < 0) {   /* the CPU's: in memory, the GIL kept */
        entry_free(loops);
        return NULL;
    }
    return e->loops = loops;
}

/* One module load at a time in the process: a launch that finds its entry
   being loaded by another thread waits for it rather than loading a second
   copy.  Taken with the GIL released, so the loader can finish. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Loads e's code into its device's context (once), and reads what it uses.
   The driver is called with the GIL released: e->func, which tells other
   threads the entry is ready, is set last, with the GIL held, after
   everything a launch reads. */
int gj_py_entry_load(GjPyState *st, GjDispatcher *d, GjEntry *e) {
    if (e->func)
        return 0;
    /* the compiler's counts and launch bounds: the CPU target's answers */
    GjKernelUse use = {.max_threads = d->launch_bounds[0],
                       .shared_bytes = e->res.shared_static_bytes,
                       .local_bytes = e->res.local_bytes,
                       .const_bytes = e->res.const_bytes};
    GjExecError err;
    if ((int)e->key[0] == GJ_EXEC_HOST) {   /* JIT-compiled: already in memory */
        (void)gj_exec_kernel_use(GJ_EXEC_HOST, e->res.cpu_fn, &use, &err);   /* no error */
        e->use = use;
        e->func = e->res.cpu_fn;
        return 0;
    }
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&load_lock);
    Py_END_ALLOW_THREADS if (e->func) {   /* loaded by the thread this one waited for */
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    GjCtx timing = {.dump = gj_dump_parse(getenv("GPUJIT_DUMP")) & GJ_DUMP_TIMING,
                    .funcname = e->res.kernel_name};
    gj_timing(&timing, NULL);
    int store = 0;
    void *func = NULL;
    uint64_t record = 0;
    GjExecStatus rc;
    Py_BEGIN_ALLOW_THREADS rc = gj_exec_select((int)e->key[0], &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_py_cache_module_load(e, d->lineinfo, &store, &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_exec_module_function((int)e->key[0], e->module, e->res.kernel_name, &func, &err);
    if (rc == GJ_EXEC_OK)
        rc = gj_exec_kernel_use((int)e->key[0], func, &use, &err);
    size_t record_bytes = 0;
    if (rc == GJ_EXEC_OK && e->res.nerror_sites > 0)
        rc = gj_exec_module_global((int)e->key[0], e->module, GJ_ERROR_RECORD_SYMBOL, &record,
                                   &record_bytes, &err);
    Py_END_ALLOW_THREADS gj_timing(&timing, "module load (the driver's PTX JIT or its cache)");
    if (rc == GJ_EXEC_OK) {
        e->use = use;
        e->error_record = record;
        e->func = func;
    }
    pthread_mutex_unlock(&load_lock);
    if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    return store ? gj_py_cache_store(e->cache_key, &e->res) : 0;
}

/* ---- signatures as keys ----------------------------------------------------- */

const char *gj_py_signature_text(PyObject *sig) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(sig, &n);
    if (s && (size_t)n != strlen(s)) {
        PyErr_Format(PyExc_ValueError, "signature %R contains a NUL character", sig);
        return NULL;
    }
    return s;
}

/* Key words for a signature string of d compiled for `device`; returns nkey
   or -1 with an exception (a kernel's signature must return void, as in
   numba). */
static int key_from_signature(GjPyState *st, const GjDispatcher *d, const char *sig, int device,
                              uint32_t *key, int max) {
    GjCtx ctx;
    gj_ctx_init(&ctx);
    const GjType **args, *ret;
    int nargs, n = -1;
    if (gj_ty_parse_signature(&ctx, sig, &args, &nargs, &ret) != GJ_OK) {
        gj_py_raise_diag(st, &ctx, NULL);
        goto done;
    }
    if (!d->device_fn && ret && ret->kind != GJ_TK_NONE) {
        PyErr_Format(PyExc_TypeError,
                     "signature '%s' returns %s, but a CUDA kernel must have "
                     "void return type; compile a device function with device=True",
                     sig, ret->name);
        goto done;
    }
    key[0] = (uint32_t)device;
    int pos = 1;
    for (int i = 0; i < nargs; i++)
        if (gj_py_key_words(args[i], key, max, &pos) < 0) {
            if (PyErr_ExceptionMatches(PyExc_TypeError))
                PyErr_Format(PyExc_TypeError,
                             "signature argument %d: %s is not a kernel "
                             "argument type",
                             i + 1, args[i]->name);
            goto done;
        }
    n = pos;
done:
    gj_ctx_free(&ctx);
    return n;
}

/* Whether sig is a key of .signatures: a tuple of type names. */
static int is_signature_key(PyObject *sig) {
    if (!PyTuple_Check(sig))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_Size(sig); i++)
        if (!PyUnicode_Check(PyTuple_GetItem(sig, i)))
            return 0;
    return 1;
}

PyObject *gj_py_signature_string(PyObject *sig) {
    if (PyUnicode_Check(sig))
        return Py_NewRef(sig);
    PyObject *types = PyImport_ImportModule("gpujit.types");
    PyObject *s = types ? PyObject_CallMethod(types, "_signature_string", "(O)", sig) : NULL;
    Py_XDECREF(types);
    return s;
}

/* Whether d has an entry for key[1..n) on a device other than key[0]'s. */
static int compiled_elsewhere(const GjDispatcher *d, const uint32_t *key, int n) {
    for (size_t i = 0; i < d->nbuckets; i++)
        for (const GjEntry *e = d->buckets[i]; e; e = e->next)
            if (e->nkey == n && e->key[0] != key[0] &&
                memcmp(e->key + 1, key + 1, (size_t)(n - 1) * sizeof *key) == 0)
                return 1;
    return 0;
}

/* gj_py_entry_for_signature, and with `compile_new` 0 gj_py_entry_compiled. */
static GjEntry *entry_for_signature(GjPyState *st, GjDispatcher *d, PyObject *sig, int device,
                                    int compile_new) {
    if (!PyUnicode_Check(sig) && !is_signature_key(sig)) {
        PyObject *str = gj_py_signature_string(sig);
        GjEntry *e = str ? entry_for_signature(st, d, str, device, compile_new) : NULL;
        Py_XDECREF(str);
        return e;
    }
    if (PyTuple_Check(sig)) {   /* a key of .signatures: `device`'s entry, else any */
        GjEntry *other = NULL;
        for (size_t i = 0; i < d->nbuckets; i++)
            for (GjEntry *e = d->buckets[i]; e; e = e->next)
                if (PyObject_RichCompareBool(e->sig, sig, Py_EQ) == 1) {
                    if ((int)e->key[0] == device)
                        return e;
                    other = e;
                }
        if (other)
            return other;
        PyErr_Format(PyExc_KeyError, "no specialisation for %R", sig);
        return NULL;
    }
    const char *s = gj_py_signature_text(sig);
    if (!s)
        return NULL;
    uint32_t key[GJ_MAX_ARGS + 1];
    int n = key_from_signature(st, d, s, device, key, GJ_MAX_ARGS + 1);
    if (n < 0)
        return NULL;
    GjEntry *e = gj_py_entry_find(d, key, n);
    if (e)
        return e;
    if (!compile_new && !compiled_elsewhere(d, key, n)) {
        PyObject *name = gj_py_kernel_name(d);
        if (name)
            PyErr_Format(PyExc_KeyError,
                         "kernel %U has no specialisation for %R: compile it "
                         "first (%U.compile(signature), or a launch)",
                         name, sig, name);
        Py_XDECREF(name);
        return NULL;
    }
    return gj_py_entry_compile(st, d, key, n, 0);
}

GjEntry *gj_py_entry_for_signature(GjPyState *st, GjDispatcher *d, PyObject *sig, int device) {
    return entry_for_signature(st, d, sig, device, 1);
}

GjEntry *gj_py_entry_compiled(GjPyState *st, GjDispatcher *d, PyObject *sig, int device) {
    if (d->explicit_sigs && gj_py_entry_explicit_compile(st, d, device) < 0)
        return NULL;   /* jit's signatures count as compiled, as numba compiles them at once */
    return entry_for_signature(st, d, sig, device, 0);
}

/* An entry compiled for layout 'A' (any strides) in place of the C or F
   arrays of key: what an explicit signature with float32[:] compiled. */
GjEntry *gj_py_entry_any_layout(GjDispatcher *d, const uint32_t *key, int n) {
    uint32_t relaxed[GJ_MAX_ARGS + 1];
    int changed = 0;
    relaxed[0] = key[0];
    for (int i = 1; i < n; i++) {
        uint32_t w = key[i];
        if (GJ_KEY_IS_ARRAY(w) && GJ_KEY_LAYOUT(w) != GJ_LAYOUT_A) {
            w = GJ_KEY_WORD(GJ_KEY_DTYPE(w), GJ_KEY_NDIM(w), GJ_LAYOUT_A, 1);
            changed = 1;
        }
        relaxed[i] = w;
    }
    return changed ? gj_py_entry_find(d, relaxed, n) : NULL;
}

int gj_py_entry_explicit_compile(GjPyState *st, GjDispatcher *d, int device) {
    Py_ssize_t nsigs = PyList_Size(d->explicit_sigs);
    for (Py_ssize_t i = 0; i < nsigs; i++)   /* this device's entries (a target switch) */
        if (!gj_py_entry_for_signature(st, d, PyList_GetItem(d->explicit_sigs, i), device))
            return -1;
    return 0;
}

void gj_py_no_matching_definition(GjDispatcher *d, const uint32_t *key, int n) {
    PyObject *types = PyList_New(0);
    for (int i = 1; types && i < n;) {
        PyObject *t = gj_py_key_name(key, n, &i);
        if (!t || PyList_Append(types, t) < 0)
            Py_CLEAR(types);
        Py_XDECREF(t);
    }
    PyObject *sep = types ? PyUnicode_FromString(", ") : NULL;
    PyObject *joined = sep ? PyUnicode_Join(sep, types) : NULL;
    PyObject *name = joined ? gj_py_kernel_name(d) : NULL;
    if (name)
        PyErr_Format(PyExc_TypeError,
                     "no matching definition of %U() for argument types "
                     "(%U): it was compiled for its explicit signatures %R only; compile "
                     "another with %U.compile(signature), or use @jit without signatures",
                     name, joined, d->explicit_sigs, name);
    Py_XDECREF(types);
    Py_XDECREF(sep);
    Py_XDECREF(joined);
    Py_XDECREF(name);
}

/* ---- GjDispatcher type ----------------------------------------------------------------- */

static PyObject *dispatcher_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"func",  "debug",       "fastmath", "contract",      "lineinfo",
                             "opt",   "device",      "inline",   "launch_bounds", "max_registers",
                             "cache", "boundscheck", NULL};
    PyObject *func;
    unsigned fastmath = 0;   /* GjFastMath bits: gpujit.jit translated numba's names */
    int debug = 0, contract = 1, lineinfo = 0, opt = 1, device = 0, inline_fn = 0, cache = 0;
    int boundscheck = 0;   /* gpujit.jit resolved None */
    int bounds[3] = {0, 0, 0}, max_registers = 0;   /* gpujit.jit checked them */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$pIppppp(iii)ipp:Dispatcher", kwlist, &func,
                                     &debug, &fastmath, &contract, &lineinfo, &opt, &device,
                                     &inline_fn, &bounds[0], &bounds[1], &bounds[2], &max_registers,
                                     &cache, &boundscheck))
        return NULL;
    PyObject *code = PyObject_GetAttrString(func, "__code__");
    if (!code) {
        PyErr_Clear();
        PyObject *tname = gj_py_type_name(func);
        PyErr_Format(PyExc_TypeError, "gpujit.jit needs a Python function, not %S", tname);
        Py_XDECREF(tname);
        return NULL;
    }
    PyObject *argc = PyObject_GetAttrString(code, "co_argcount");
    PyObject *flags = PyObject_GetAttrString(code, "co_flags");
    PyObject *kwonly = PyObject_GetAttrString(code, "co_kwonlyargcount");
    Py_DECREF(code);
    long argcount = argc ? PyLong_AsLong(argc) : -1;
    /* plain_parameters()'s test, before there is a code view */
    int plain =
        flags && kwonly && !(PyLong_AsLong(flags) & (0x04 | 0x08)) && PyLong_AsLong(kwonly) == 0;
    Py_XDECREF(argc);
    Py_XDECREF(flags);
    Py_XDECREF(kwonly);
    if (argcount < 0 || argcount > GJ_MAX_ARGS) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "a kernel takes at most %d arguments", GJ_MAX_ARGS);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    GjDispatcher *d = (GjDispatcher *)alloc(tp, 0);
    if (!d)
        return NULL;
    d->func = Py_NewRef(func);
    d->argcount = (int)argcount;
    d->plain = plain;
    d->debug = debug;
    d->boundscheck = boundscheck;
    d->fastmath = fastmath;
    d->contract = contract;
    d->lineinfo = lineinfo;
    d->opt = opt;
    d->device_fn = device;
    d->inline_fn = inline_fn;
    memcpy(d->launch_bounds, bounds, sizeof bounds);
    d->max_registers = max_registers;
    d->cache = cache;
    if (!(d->jit_options = gj_py_cache_jit_options(kw))) {
        Py_DECREF(d);
        return NULL;
    }
    return (PyObject *)d;
}

static int dispatcher_traverse(PyObject *self, visitproc visit, void *arg) {
    GjDispatcher *d = (GjDispatcher *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(d->func);
    Py_VISIT(d->dict);
    Py_VISIT(d->explicit_sigs);
    Py_VISIT(d->jit_options);
    Py_VISIT(d->last_config);
    Py_VISIT(d->last_launcher);
    return 0;
}

static int dispatcher_clear(PyObject *self) {
    GjDispatcher *d = (GjDispatcher *)self;
    Py_CLEAR(d->func);
    Py_CLEAR(d->dict);
    Py_CLEAR(d->explicit_sigs);
    Py_CLEAR(d->jit_options);
    Py_CLEAR(d->last_config);
    Py_CLEAR(d->last_launcher);
    return 0;
}

void gj_py_entry_hold(GjEntry *e) { e->busy++; }

void gj_py_entry_release(GjEntry *e) {
    if (--e->busy == 0 && e->retired)
        entry_free(e);
}

static void table_clear(GjDispatcher *d) {
    for (size_t i = 0; i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = NULL;
            if (e->busy)
                e->retired = 1;   /* a launch in another thread still runs it */
            else
                entry_free(e);
        }
    PyMem_Free(d->buckets);
    d->buckets = NULL;
    d->nbuckets = d->count = 0;
    d->last = NULL;
}

static void dispatcher_dealloc(PyObject *self) {
    GjDispatcher *d = (GjDispatcher *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (d->weakreflist)
        PyObject_ClearWeakRefs(self);
    dispatcher_clear(self);
    table_clear(d);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

PyObject *gj_py_kernel_name(const GjDispatcher *d) {
    PyObject *name = PyObject_GetAttrString(d->func, "__name__");
    if (!name) {
        PyErr_Clear();
        name = PyUnicode_FromString("kernel");
    }
    return name;
}

static PyObject *dispatcher_call(PyObject *self, PyObject *args, PyObject *kw) {
    (void)args;
    (void)kw;
    GjDispatcher *d = (GjDispatcher *)self;
    PyObject *name = gj_py_kernel_name(d);
    /* ValueError for both, as numba's dispatcher raises */
    if (d->device_fn)
        PyErr_Format(PyExc_ValueError,
                     "%S is a device function (device=True): call it from a "
                     "kernel, not from Python",
                     name);
    else
        PyErr_Format(PyExc_ValueError,
                     "kernel %S needs a launch configuration: call it as "
                     "%S[griddim, blockdim](...)",
                     name, name);
    Py_XDECREF(name);
    return NULL;
}

/* kernel[griddim, blockdim] or kernel[griddim, blockdim, stream, sharedmem] */
/* Whether launch configuration b is the one a was, so a's launcher (checked
   when it was made) serves b: equal ints of the exact int type, tuples of
   such items, and the same gpujit Stream objects, all the way down.  2.0 == 2
   and True == 1, but each must be checked (and refused) on its own; any
   other object (a 0-d array, an object with __index__) may have changed
   since, so it is never reused. */
static int same_config(GjPyState *st, PyObject *a, PyObject *b) {
    if (PyTuple_CheckExact(a) && PyTuple_CheckExact(b)) {
        Py_ssize_t n = PyTuple_Size(a);
        if (n != PyTuple_Size(b))
            return 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!same_config(st, PyTuple_GetItem(a, i), PyTuple_GetItem(b, i)))
                return 0;
        return 1;
    }
    if (Py_IS_TYPE(a, st->StreamType) || a == Py_None)
        return a == b;   /* immutable: the same stream */
    if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b))
        return 0;
    int eq = PyObject_RichCompareBool(a, b, Py_EQ);
    if (eq < 0)
        PyErr_Clear();
    return eq == 1;
}

static PyObject *dispatcher_getitem(PyObject *self, PyObject *config) {
    GjDispatcher *d = (GjDispatcher *)self;
    /* A loop launching kernel[g, b](...) re-creates the same configuration,
       often the same constant tuple. */
    if (config == d->last_config && d->last_config_plain)
        return Py_NewRef(d->last_launcher);
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    if (d->last_config && same_config(st, d->last_config, config))
        return Py_NewRef(d->last_launcher);
    if (d->device_fn) {
        PyErr_SetString(PyExc_RuntimeError,   /* numba's class */
                        "a device function (device=True) cannot be launched");
        return NULL;
    }
    PyObject *l = gj_py_launcher_new(st, d, config);
    if (!l)
        return NULL;
    Py_XDECREF(d->last_config);
    Py_XDECREF(d->last_launcher);
    d->last_config = Py_NewRef(config);
    d->last_config_plain = same_config(st, config, config);
    d->last_launcher = Py_NewRef(l);
    return l;
}

int gj_py_entry_twins(GjPyState *st, GjDispatcher *d, int device, int from) {
    size_t n = 0, k = 0;
    for (size_t i = 0; i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next)
            n += (int)e->key[0] != device && (from == -1 || (int)e->key[0] == from);
    if (n == 0)
        return 0;
    GjEntry **other = PyMem_Calloc(n, sizeof *other);
    if (!other) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next)
            if ((int)e->key[0] != device && (from == -1 || (int)e->key[0] == from))
                other[k++] = e;
    int rc = 0;
    uint32_t key[GJ_MAX_ARGS + 1];
    for (size_t i = 0; rc == 0 && i < n; i++) {   /* entries are never freed here */
        memcpy(key, other[i]->key, (size_t)other[i]->nkey * sizeof *key);
        key[0] = (uint32_t)device;
        if (!gj_py_entry_find(d, key, other[i]->nkey) &&
            !gj_py_entry_compile(st, d, key, other[i]->nkey, 0))
            rc = -1;
    }
    PyMem_Free(other);
    return rc;
}

/* The entries of a signature argument: one (a str or tuple given) or all,
   keyed by signature.  PTX comes from the CUDA specialisation; the LLVM IR
   and the types from the current target's, so a kernel compiled for both
   targets shows the one it runs on (the other only for a signature that
   the current target has not compiled), and on the CPU target the thread
   loops once a launch made them (gj_py_entry_for_launch). */
static PyObject *inspect(PyObject *self, PyObject *sig, size_t field_offset) {
    GjDispatcher *d = (GjDispatcher *)self;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    if (d->device_fn)   /* no entries: the kernels that call it compile it */
        return gj_py_device_fn_inspect(st, d, sig, field_offset);
    int ptx = field_offset == offsetof(GjCompileResult, ptx), device = gj_exec_current_device();
    if (ptx && gj_py_entry_twins(st, d, device, GJ_EXEC_HOST) < 0)
        return NULL;
    if (!ptx && gj_py_device(st, &device) < 0)
        return NULL;
    if (sig && sig != Py_None) {
        GjEntry *e = gj_py_entry_for_signature(st, d, sig, device);
        if (!e)
            return NULL;
        if (e->loops)
            e = e->loops;
        const char *text = *(char **)((char *)&e->res + field_offset);
        return PyUnicode_FromString(text ? text : "");
    }
    PyObject *out = PyDict_New();
    for (size_t i = 0; out && i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next) {
            const GjEntry *code = e->loops ? e->loops : e;
            const char *text = *(char **)((char *)&code->res + field_offset);
            if (!text)
                continue;   /* a CPU entry's PTX: its twin gives it */
            int shown = (int)e->key[0] != device ? PyDict_Contains(out, e->sig) : 0;
            if (shown < 0) {
                Py_CLEAR(out);
                break;
            }
            if (shown)
                continue;   /* the current target's entry is there */
            PyObject *v = PyUnicode_FromString(text);
            if (!v || PyDict_SetItem(out, e->sig, v) < 0) {
                Py_XDECREF(v);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(v);
        }
    return out;
}

static PyObject *dispatcher_inspect_asm(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"signature", NULL};
    PyObject *sig = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:inspect_asm", kwlist, &sig))
        return NULL;
    return inspect(self, sig, offsetof(GjCompileResult, ptx));
}

static PyObject *dispatcher_inspect_llvm(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"signature", NULL};
    PyObject *sig = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:inspect_llvm", kwlist, &sig))
        return NULL;
    return inspect(self, sig, offsetof(GjCompileResult, llvm_ir));
}

static PyObject *dispatcher_inspect_types(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"signature", "file", NULL};
    PyObject *sig = NULL, *file = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:inspect_types", kwlist, &sig, &file))
        return NULL;
    PyObject *dumps = inspect(self, sig, offsetof(GjCompileResult, type_dump));
    if (!dumps)
        return NULL;
    if (!file || file == Py_None) {
        file = PySys_GetObject("stdout");   /* borrowed */
        if (!file) {
            Py_DECREF(dumps);
            PyErr_SetString(PyExc_RuntimeError, "sys.stdout is not set");
            return NULL;
        }
    }
    PyObject *name = gj_py_kernel_name((GjDispatcher *)self);
    PyObject *text;
    if (PyUnicode_Check(dumps)) {
        text = PyUnicode_FromFormat("%S %S\n%U\n", name, sig, dumps);
    } else {
        text = PyUnicode_FromString("");
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (text && PyDict_Next(dumps, &pos, &k, &v)) {
            PyObject *part = PyUnicode_FromFormat("%S %S\n%U\n", name, k, v);
            PyObject *joined = part ? PyUnicode_Concat(text, part) : NULL;
            Py_XDECREF(part);
            Py_DECREF(text);
            text = joined;
        }
    }
    Py_XDECREF(name);
    Py_DECREF(dumps);
    if (!text)
        return NULL;
    PyObject *r = PyObject_CallMethod(file, "write", "O", text);
    Py_DECREF(text);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *dispatcher_compile(PyObject *self, PyObject *sig) {
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    int device;
    if (gj_py_device(st, &device) < 0)
        return NULL;
    PyObject *str = gj_py_signature_string(sig);   /* not a key of .signatures */
    GjEntry *e = str ? gj_py_entry_for_signature(st, (GjDispatcher *)self, str, device) : NULL;
    Py_XDECREF(str);
    if (!e)
        return NULL;
    gj_py_entry_hold(e);   /* the load runs without the GIL */
    PyObject *r = (device == GJ_EXEC_HOST || gj_exec_gpu_available()) &&
                          gj_py_entry_load(st, (GjDispatcher *)self, e) < 0
                      ? NULL
                      : Py_NewRef(e->sig);
    gj_py_entry_release(e);
    return r;
}

/* None if signature string sig parses and has as many argument types as d's
   function takes; NULL with TypingError or TypeError if not.  (A device
   function's signature is compiled where a kernel calls it.) */
static PyObject *check_device_signature(PyObject *self, PyObject *sig) {
    GjDispatcher *d = (GjDispatcher *)self;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    const char *s = gj_py_signature_text(sig);
    if (!s)
        return NULL;
    GjCtx ctx;
    gj_ctx_init(&ctx);
    const GjType **args, *ret;
    int nargs;
    PyObject *out = NULL;
    if (gj_ty_parse_signature(&ctx, s, &args, &nargs, &ret) != GJ_OK)
        gj_py_raise_diag(st, &ctx, NULL);
    else if (nargs != d->argcount)
        PyErr_Format(PyExc_TypeError,
                     "signature '%s' has %d argument types but the function "
                     "takes %d",
                     s, nargs, d->argcount);
    else
        out = Py_NewRef(Py_None);
    gj_ctx_free(&ctx);
    return out;
}

/* _set_signatures(list of signatures): compiles each now and keeps them (as
   strings), so that launches with other argument types raise instead of
   compiling.  A device function's one signature is kept for the kernels
   that call it (_gpujit_callee). */
static PyObject *dispatcher_set_signatures(PyObject *self, PyObject *sigs) {
    GjDispatcher *d = (GjDispatcher *)self;
    if (!PyList_Check(sigs)) {
        PyErr_SetString(PyExc_TypeError, "_set_signatures() takes a list of signatures");
        return NULL;
    }
    if (d->device_fn && PyList_Size(sigs) != 1) {
        PyErr_SetString(PyExc_TypeError, "a device function takes one signature");
        return NULL;
    }
    PyObject *strs = PyList_New(PyList_Size(sigs));
    for (Py_ssize_t i = 0; strs && i < PyList_Size(sigs); i++) {
        PyObject *str = gj_py_signature_string(PyList_GetItem(sigs, i));
        /* a device function's signature is compiled where a kernel calls it */
        PyObject *r = !str           ? NULL
                      : d->device_fn ? check_device_signature(self, str)
                                     : dispatcher_compile(self, str);
        if (!r) {
            Py_XDECREF(str);
            Py_CLEAR(strs);
            return NULL;
        }
        Py_DECREF(r);
        PyList_SetItem(strs, i, str);
    }
    if (!strs)
        return NULL;
    PyObject *old = d->explicit_sigs;
    d->explicit_sigs = strs;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyObject *dispatcher_recompile(PyObject *self, PyObject *unused) {
    (void)unused;
    table_clear((GjDispatcher *)self);
    Py_RETURN_NONE;
}

static PyObject *dispatcher_signatures(PyObject *self, void *c) {
    (void)c;
    GjDispatcher *d = (GjDispatcher *)self;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next) {
            /* once each: a CPU-target entry and its PTX twin (inspect_asm)
               share a signature, as entries of two devices do */
            int seen = PySequence_Contains(out, e->sig);
            if (seen < 0 || (!seen && PyList_Append(out, e->sig) < 0)) {
                Py_CLEAR(out);
                break;
            }
        }
    return out;
}

static PyObject *dispatcher_py_func(PyObject *self, void *c) {
    (void)c;
    return Py_NewRef(((GjDispatcher *)self)->func);
}

static PyObject *dispatcher_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    return gj_py_reduce(self, "reduce_dispatcher");
}

static PyMethodDef dispatcher_methods[] = {
    {"__reduce__", dispatcher_reduce, METH_NOARGS,
     "__reduce__()\n--\n\nPickles the kernel: by reference (its module and qualified name)\n"
     "when importable from its module, otherwise by value (its function through\n"
     "cloudpickle, with the options and signatures given to jit)."},
    {"compile", dispatcher_compile, METH_O,
     "compile(signature)\n--\n\nCompiles the kernel for a signature: a string such as\n"
     "'void(float32[:], float32[:], int64)', the same made of gpujit.types objects\n"
     "(void(float32[:], float32[:], int64)) or a tuple of argument types (and loads\n"
     "it when a GPU is present).\n\n"
     "Returns\n-------\ntuple of str\n    The signature's key in .signatures.\n\n"
     "Raises\n------\nTypingError, UnsupportedError\n    If the kernel does not compile."},
    {"inspect_asm", (PyCFunction)(void (*)(void))dispatcher_inspect_asm,
     METH_VARARGS | METH_KEYWORDS,
     "inspect_asm(signature=None)\n--\n\nPTX of every compiled signature, as a dict\n"
     "{signature tuple: ptx}; with a signature (a str, compiled if needed, or a key of\n"
     ".signatures) the PTX of that one as a str.  A device function's is its .func\n"
     "compiled now, as compile_ptx(device=True) with its jit options: for that\n"
     "signature, or without one for each of its jit signatures.\n\n"
     "Raises\n------\nKeyError\n    For a key of .signatures not compiled.\n"
     "TypingError, UnsupportedError\n    If the function does not compile for it."},
    {"inspect_ptx", (PyCFunction)(void (*)(void))dispatcher_inspect_asm,
     METH_VARARGS | METH_KEYWORDS, "inspect_ptx(signature=None)\n--\n\nAlias of inspect_asm."},
    {"inspect_llvm", (PyCFunction)(void (*)(void))dispatcher_inspect_llvm,
     METH_VARARGS | METH_KEYWORDS,
     "inspect_llvm(signature=None)\n--\n\nOptimised LLVM IR, like inspect_asm."},
    {"inspect_types", (PyCFunction)(void (*)(void))dispatcher_inspect_types,
     METH_VARARGS | METH_KEYWORDS,
     "inspect_types(signature=None, file=None)\n--\n\nWrites the inferred type of every\n"
     "variable, per compiled signature, to file (default sys.stdout)."},
    {"_set_signatures", dispatcher_set_signatures, METH_O,
     "_set_signatures(signatures)\n--\n\nCompiles a list of signature strings and restricts\n"
     "launches to them (what jit(signature) does)."},
#define X(name)                                                                      \
    {#name, (PyCFunction)(void (*)(void))gj_py_##name, METH_VARARGS | METH_KEYWORDS, \
     gj_py_doc_##name},
    GJ_PY_OCCUPANCY_METHODS(X)   /* occupancy.c */
#undef X
    {"recompile", dispatcher_recompile, METH_NOARGS,
     "recompile()\n--\n\nDrops every compiled specialisation, so the next launch\n"
     "compiles again (and re-reads the function's globals)."},
    {NULL, NULL, 0, NULL},
};

/* What codeview.c needs to compile a call of this function from a kernel. */
static PyObject *dispatcher_callee(PyObject *self, void *c) {
    (void)c;
    GjDispatcher *d = (GjDispatcher *)self;
    PyObject *sig = d->device_fn && d->explicit_sigs && PyList_Size(d->explicit_sigs) == 1
                        ? PyList_GetItem(d->explicit_sigs, 0)
                        : Py_None;
    return Py_BuildValue("(OOOO)", d->func, d->inline_fn ? Py_True : Py_False,
                         d->device_fn ? Py_True : Py_False, sig);
}

static PyGetSetDef dispatcher_getset[] = {
    {"signatures", dispatcher_signatures, NULL,
     "Signatures compiled so far: a list of tuples of type names.", NULL},
    {"py_func", dispatcher_py_func, NULL, "The Python function.", NULL},
    {"_gpujit_callee", dispatcher_callee, NULL,
     "(py_func, inline, device, signature or None): how a kernel that calls this function "
     "compiles it.",
     NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef dispatcher_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(GjDispatcher, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(GjDispatcher, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot dispatcher_slots[] = {
    {Py_tp_new, (void *)dispatcher_new},
    {Py_tp_dealloc, (void *)dispatcher_dealloc},
    {Py_tp_traverse, (void *)dispatcher_traverse},
    {Py_tp_clear, (void *)dispatcher_clear},
    {Py_tp_call, (void *)dispatcher_call},
    {Py_mp_subscript, (void *)dispatcher_getitem},
    {Py_tp_methods, dispatcher_methods},
    {Py_tp_getset, dispatcher_getset},
    {Py_tp_members, dispatcher_members},
    {Py_tp_doc, "A gpujit kernel, as ``gpujit.jit`` returns it: launch it as\n"
                "``kernel[griddim, blockdim](*args)``."},
    {0, NULL},
};

static PyType_Spec dispatcher_spec = {
    .name = "gpujit.Dispatcher",
    .basicsize = sizeof(GjDispatcher),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = dispatcher_slots,
};

int gj_py_dispatcher_register(PyObject *module, GjPyState *st) {
    st->DispatcherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &dispatcher_spec, NULL);
    if (!st->DispatcherType)
        return -1;
    if (PyModule_AddObjectRef(module, "Dispatcher", (PyObject *)st->DispatcherType) < 0)
        return -1;
    return gj_py_launcher_register(module, st);
}
