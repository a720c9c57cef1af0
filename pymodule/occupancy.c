/*
 * occupancy.c - what a compiled kernel uses, and the launch configurations
 * that fit it: the Dispatcher's resource queries (numba's names), the
 * block size of the driver's occupancy calculator, and the shared-memory
 * check every launch makes.
 *
 *     class Dispatcher:                    # continued from dispatcher.c
 *         def get_regs_per_thread(self, signature=None) -> int | dict
 *         def get_shared_mem_per_block(self, signature=None) -> int | dict
 *         def get_local_mem_per_thread(self, signature=None) -> int | dict
 *         def get_const_mem_size(self, signature=None) -> int | dict
 *         def get_max_threads_per_block(self, signature=None) -> int | dict
 *         def suggest_config(self, n, sharedmem=0, signature=None) -> (int, int)
 *         def forall(self, ntasks, tpb=0, stream=0, sharedmem=0) -> Launcher
 *
 * Every answer is about the current target's device: its entry of each
 * signature (compiled now from another device's entry when it has none,
 * and loaded), whose GjEntry.use the load filled in from the driver, or on
 * the CPU target from the compiler's counts (runtime/exec.h).  As numba's,
 * a query without a signature answers for the one specialisation of a
 * specialized kernel (jit with one signature, or specialize()) and with a
 * dict {signature: value} otherwise, and one with a signature the kernel has
 * compiled nowhere is a KeyError (suggest_config, gpujit's own, compiles it).
 */
#include "occupancy.h"

#include <limits.h>

#include "dispatcher.h"
#include "launcher.h"
#include "module.h"

/* Which GjKernelUse field a query reads. */
typedef enum UseField {
    USE_REGS,          /* registers per thread */
    USE_SHARED,        /* static shared memory per block */
    USE_LOCAL,         /* local memory per thread */
    USE_CONST,         /* constant memory */
    USE_MAX_THREADS,   /* threads per block */
} UseField;

/* RuntimeError for a device function, which has no launch of its own (numba's
   class, as kernel[...] of one raises); 0 for a kernel. */
static int refuse_device_function(const GjDispatcher *d, const char *what) {
    if (!d->device_fn)
        return 0;
    PyObject *name = gj_py_kernel_name(d);
    if (name)
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): %U is a device function (device=True), "
                     "which is compiled into the kernels that call it and never launched on "
                     "its own",
                     what, name);
    Py_XDECREF(name);
    return -1;
}

/* A count argument: an int (or a NumPy integer; not a bool or a float) from
   lo to hi; TypeError or ValueError naming it otherwise. */
static int count_arg(PyObject *obj, const char *what, long long lo, long long hi, long long *out) {
    long long v;
    int is_int = gj_py_integer(obj, &v);
    if (is_int < 0)
        return -1;
    if (!is_int) {
        PyObject *tname = gj_py_type_name(obj);
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %S", what, tname);
        Py_XDECREF(tname);
        return -1;
    }
    if (v < lo) {
        PyErr_Format(PyExc_ValueError, "%s must be at least %lld, not %S", what, lo, obj);
        return -1;
    }
    if (v > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be at most %lld, not %S", what, hi, obj);
        return -1;
    }
    *out = v;
    return 0;
}

/* Gives `device` an entry for every signature the kernel has anywhere (its
   explicit signatures, its other devices' entries). */
static int device_entries(GjPyState *st, GjDispatcher *d, int device) {
    if (d->explicit_sigs && gj_py_entry_explicit_compile(st, d, device) < 0)
        return -1;
    return gj_py_entry_twins(st, d, device, -1);
}

/* The loaded entry on `device` of signature sig, compiled now if it was not
   when `compile_new` (else KeyError); for sig None, of the one signature the
   kernel has (TypeError when it has none or several).  It is held (the load
   runs without the GIL, when a recompile() may come): the caller releases
   it. */
static GjEntry *one_entry(GjPyState *st, GjDispatcher *d, PyObject *sig, int device,
                          int compile_new, const char *what) {
    GjEntry *e = NULL;
    if (sig && sig != Py_None) {
        e = compile_new ? gj_py_entry_for_signature(st, d, sig, device)
                        : gj_py_entry_compiled(st, d, sig, device);
    } else {
        if (device_entries(st, d, device) < 0)
            return NULL;
        int n = 0;
        for (size_t i = 0; i < d->nbuckets; i++)
            for (GjEntry *x = d->buckets[i]; x; x = x->next)
                if ((int)x->key[0] == device && n++ == 0)
                    e = x;
        if (n != 1) {
            PyObject *name = gj_py_kernel_name(d);
            if (name && n == 0)
                PyErr_Format(PyExc_TypeError,
                             "%s(): kernel %U has no compiled specialisation "
                             "yet: launch it once, or name its argument types with "
                             "signature=\"void(float32[::1], ...)\"",
                             what, name);
            else if (name)
                PyErr_Format(PyExc_TypeError,
                             "%s(): kernel %U has %d specialisations; "
                             "choose one with signature= (a key of %U.signatures)",
                             what, name, n, name);
            Py_XDECREF(name);
            return NULL;
        }
    }
    if (!e)
        return NULL;
    gj_py_entry_hold(e);
    if (gj_py_entry_load(st, d, e) < 0) {
        gj_py_entry_release(e);
        return NULL;
    }
    return e;
}

static PyObject *use_value(const GjEntry *e, UseField field) {
    switch (field) {
    case USE_REGS: return PyLong_FromLong(e->use.regs);
    case USE_SHARED: return PyLong_FromSize_t(e->use.shared_bytes);
    case USE_LOCAL: return PyLong_FromSize_t(e->use.local_bytes);
    case USE_CONST: return PyLong_FromSize_t(e->use.const_bytes);
    case USE_MAX_THREADS: return PyLong_FromLong(e->use.max_threads);
    }
    return NULL;
}

/* {signature: value} over the current device's entries. */
static PyObject *use_dict(GjPyState *st, GjDispatcher *d, int device, UseField field) {
    if (device_entries(st, d, device) < 0)
        return NULL;
    /* Held first, then loaded: a load releases the GIL, and a recompile()
       then may empty the table being walked. */
    size_t n = 0, k = 0;
    for (size_t i = 0; i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next)
            n += (int)e->key[0] == device;
    GjEntry **held = PyMem_Calloc(n ? n : 1, sizeof *held);
    if (!held)
        return PyErr_NoMemory();
    for (size_t i = 0; i < d->nbuckets; i++)
        for (GjEntry *e = d->buckets[i]; e; e = e->next)
            if ((int)e->key[0] == device)
                gj_py_entry_hold(held[k++] = e);
    PyObject *out = PyDict_New();
    for (k = 0; out && k < n; k++) {
        PyObject *v = gj_py_entry_load(st, d, held[k]) == 0 ? use_value(held[k], field) : NULL;
        if (!v || PyDict_SetItem(out, held[k]->sig, v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(v);
    }
    for (k = 0; k < n; k++)
        gj_py_entry_release(held[k]);
    PyMem_Free(held);
    return out;
}

/* The CudaSupportError of get_regs_per_thread() on the CPU target: NULL. */
static PyObject *no_host_registers(GjPyState *st, GjDispatcher *d, const char *what) {
    PyObject *name = gj_py_kernel_name(d);
    if (name)
        PyErr_Format(st->CudaSupportError,
                     "%s(): kernel %U runs on the CPU target, as "
                     "host code, which has no registers per thread; on a GPU "
                     "(gpujit.set_target(\"cuda\")) the driver reports them",
                     what, name);
    Py_XDECREF(name);
    return NULL;
}

/* get_<what>(signature=None): one value, or a dict (module comment). */
static PyObject *use_query(PyObject *self, PyObject *args, PyObject *kw, UseField field,
                           const char *what) {
    static char *kwlist[] = {"signature", NULL};
    char format[64];
    PyOS_snprintf(format, sizeof format, "|O:%s", what);
    PyObject *sig = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, format, kwlist, &sig))
        return NULL;
    GjDispatcher *d = (GjDispatcher *)self;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    int device;
    if (refuse_device_function(d, what) < 0 || gj_py_device(st, &device) < 0)
        return NULL;
    /* on the CPU target, registers are refused, for a signature once it is
       known to be compiled (an unknown one is numba's KeyError first) */
    int no_registers = field == USE_REGS && device == GJ_EXEC_HOST;
    if (sig == Py_None && no_registers)
        return no_host_registers(st, d, what);
    if (sig == Py_None) {
        PyObject *special = PyObject_GetAttrString(self, "specialized");
        int one = special ? PyObject_IsTrue(special) : -1;
        Py_XDECREF(special);
        if (one < 0)
            return NULL;
        if (!one)
            return use_dict(st, d, device, field);
    }
    GjEntry *e = one_entry(st, d, sig, device, 0, what);   /* numba's: no compile */
    if (e && no_registers) {
        gj_py_entry_release(e);
        return no_host_registers(st, d, what);
    }
    PyObject *v = e ? use_value(e, field) : NULL;
    if (e)
        gj_py_entry_release(e);
    return v;
}

PyObject *gj_py_get_regs_per_thread(PyObject *self, PyObject *args, PyObject *kw) {
    return use_query(self, args, kw, USE_REGS, "get_regs_per_thread");
}

PyObject *gj_py_get_shared_mem_per_block(PyObject *self, PyObject *args, PyObject *kw) {
    return use_query(self, args, kw, USE_SHARED, "get_shared_mem_per_block");
}

PyObject *gj_py_get_local_mem_per_thread(PyObject *self, PyObject *args, PyObject *kw) {
    return use_query(self, args, kw, USE_LOCAL, "get_local_mem_per_thread");
}

PyObject *gj_py_get_const_mem_size(PyObject *self, PyObject *args, PyObject *kw) {
    return use_query(self, args, kw, USE_CONST, "get_const_mem_size");
}

PyObject *gj_py_get_max_threads_per_block(PyObject *self, PyObject *args, PyObject *kw) {
    return use_query(self, args, kw, USE_MAX_THREADS, "get_max_threads_per_block");
}

/* ---- launch configurations ------------------------------------------------------- */

/* Above the 48 KiB every device gives a block, CUDA launches only kernels
   that opted in to that much dynamic shared memory, so the attribute is set
   first (at each such launch: it is one cheap driver call).  The CPU target
   applies the same limits (gj_exec_device_info). */
int gj_py_prepare_shared(GjPyState *st, GjDispatcher *d, GjEntry *e, unsigned shared, int device) {
    enum { PORTABLE_SHARED = 48 * 1024 };
    if (e->res.dynamic_shared && shared == 0) {
        /* Its arrays would have no element: every access would fault on the
           GPU and overwrite the executor's memory on the CPU target. */
        PyObject *name = gj_py_kernel_name(d);
        if (name)
            PyErr_Format(PyExc_ValueError,
                         "kernel %U uses dynamic shared memory (shared.array(0, "
                         "...)) but the launch gives none: launch it as kernel[griddim, blockdim, "
                         "stream, sharedmem] with sharedmem the bytes it needs",
                         name);
        Py_XDECREF(name);
        return -1;
    }
    size_t total = e->res.shared_static_bytes + shared;
    if (total <= PORTABLE_SHARED)
        return 0;
    GjDeviceInfo info;
    GjExecError err;
    if (gj_exec_device_info(device, &info, &err) != GJ_EXEC_OK)
        goto cuda_error;
    if (total > (size_t)info.max_shared_per_block_optin) {
        PyErr_Format(PyExc_ValueError,
                     "shared memory of %zu bytes per block (%zu static, %u "
                     "dynamic) exceeds the device's limit of %d bytes (%d KiB) per block",
                     total, e->res.shared_static_bytes, shared, info.max_shared_per_block_optin,
                     info.max_shared_per_block_optin / 1024);
        return -1;
    }
    if (gj_exec_allow_dynamic_shared(device, e->func, shared, &err) == GJ_EXEC_OK)
        return 0;
cuda_error:
    gj_py_raise_cuda(st, &err);
    return -1;
}

int gj_py_entry_best_block(GjPyState *st, GjEntry *e, unsigned shared, int device, int *block) {
    /* a loop of forall launches asks each time: the last answer is kept */
    if (e->best_block > 0 && e->best_block_shared == shared) {
        *block = e->best_block;
        return 0;
    }
    GjExecError err;
    if (gj_exec_best_block(device, e->func, shared, e->use.max_threads, block, &err) !=
        GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    if (*block <= 0) {   /* gj_py_prepare_shared let the shared memory through */
        PyErr_Format(st->InternalError,
                     "the occupancy calculator found no block size for "
                     "%u bytes of dynamic shared memory",
                     shared);
        return -1;
    }
    e->best_block = *block;
    e->best_block_shared = shared;
    return 0;
}

PyObject *gj_py_suggest_config(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"n", "sharedmem", "signature", NULL};
    PyObject *n_obj, *shared_obj = NULL, *sig = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:suggest_config", kwlist, &n_obj, &shared_obj,
                                     &sig))
        return NULL;
    GjDispatcher *d = (GjDispatcher *)self;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    long long n, shared = 0;
    int device, block;
    if (refuse_device_function(d, "suggest_config") < 0 ||
        count_arg(n_obj, "suggest_config(): n (threads to launch)", 1, LLONG_MAX, &n) < 0 ||
        (shared_obj && count_arg(shared_obj, "suggest_config(): sharedmem (bytes per block)", 0,
                                 INT_MAX, &shared) < 0) ||
        gj_py_device(st, &device) < 0)
        return NULL;
    GjEntry *e = one_entry(st, d, sig, device, 1, "suggest_config");
    if (!e)
        return NULL;
    int rc = gj_py_prepare_shared(st, d, e, (unsigned)shared, device) < 0 ||
             gj_py_entry_best_block(st, e, (unsigned)shared, device, &block) < 0;
    gj_py_entry_release(e);
    if (rc)
        return NULL;
    long long blocks = n / block + (n % block != 0);
    GjDeviceInfo info;
    GjExecError err;
    if (gj_exec_device_info(device, &info, &err) != GJ_EXEC_OK)
        return gj_py_raise_cuda(st, &err);
    if (blocks > info.max_grid_dim[0]) {
        PyErr_Format(PyExc_ValueError,
                     "suggest_config(): %lld threads need %lld blocks of %d, "
                     "more than the device's %d along x; cover them with a grid-stride loop "
                     "(for i in range(gpujit.grid(1), n, gpujit.gridsize(1))) over fewer "
                     "blocks",
                     n, blocks, block, info.max_grid_dim[0]);
        return NULL;
    }
    return Py_BuildValue("(Li)", blocks, block);
}

PyObject *gj_py_forall(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ntasks", "tpb", "stream", "sharedmem", NULL};
    PyObject *ntasks_obj, *tpb_obj = NULL, *stream = NULL, *shared = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO:forall", kwlist, &ntasks_obj, &tpb_obj,
                                     &stream, &shared))
        return NULL;
    GjDispatcher *d = (GjDispatcher *)self;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    long long ntasks, tpb = 0;
    if (refuse_device_function(d, "forall") < 0 ||
        count_arg(ntasks_obj, "forall(): ntasks", 0, LLONG_MAX, &ntasks) < 0 ||
        (tpb_obj && count_arg(tpb_obj,
                              "forall(): tpb (threads per block, 0 to let gpujit "
                              "choose)",
                              0, INT_MAX, &tpb) < 0))
        return NULL;
    PyObject *zero = PyLong_FromLong(0);
    PyObject *l = zero ? gj_py_launcher_forall(st, d, ntasks, (int)tpb, stream ? stream : zero,
                                               shared ? shared : zero)
                       : NULL;
    Py_XDECREF(zero);
    return l;
}

/* ---- docstrings (the rows of dispatcher.c's method table) ------------------------ */

/* What the resource queries' docstrings end with (Raises goes on). */
#define USE_QUERY_DOC                                                            \
    "Parameters\n"                                                               \
    "----------\n"                                                               \
    "signature : signature, optional\n"                                          \
    "    A specialisation compiled before (by a launch, ``compile()`` or\n"      \
    "    ``jit``'s signatures): a string (``\"void(float32[::1], int64)\"``),\n" \
    "    a signature object, or a key of ``signatures``.  As numba's, a\n"       \
    "    query compiles nothing.\n"                                              \
    "\n"                                                                         \
    "Returns\n"                                                                  \
    "-------\n"                                                                  \
    "int or dict\n"                                                              \
    "    With a signature, or for a specialized kernel (``jit`` with one\n"      \
    "    signature, or ``specialize()``), the value; otherwise, as numba's, a\n" \
    "    dict ``{signature: value}`` of every specialisation (``{}`` before\n"   \
    "    the first compile).\n"                                                  \
    "\n"                                                                         \
    "Raises\n"                                                                   \
    "------\n"                                                                   \
    "KeyError\n"                                                                 \
    "    For a signature the kernel has not compiled.\n"                         \
    "RuntimeError\n"                                                             \
    "    For a device function (``device=True``), which is never launched on\n"  \
    "    its own."

const char gj_py_doc_get_regs_per_thread[] =
    "get_regs_per_thread(signature=None)\n"
    "--\n"
    "\n"
    "Registers each thread of the kernel uses on the current GPU (the driver's\n"
    "``CU_FUNC_ATTRIBUTE_NUM_REGS``), as numba's.\n"
    "\n" USE_QUERY_DOC "\n"
    "CudaSupportError\n"
    "    On the CPU target, whose host code has no registers per thread.";

const char gj_py_doc_get_shared_mem_per_block[] =
    "get_shared_mem_per_block(signature=None)\n"
    "--\n"
    "\n"
    "Bytes of static shared memory a block of the kernel uses (its\n"
    "``shared.array`` calls with constant shapes, and its device functions'),\n"
    "as numba's; a launch's dynamic shared memory (``sharedmem``) comes on\n"
    "top.  On the CPU target, the static part of each block's buffer.\n"
    "\n" USE_QUERY_DOC;

const char gj_py_doc_get_local_mem_per_thread[] =
    "get_local_mem_per_thread(signature=None)\n"
    "--\n"
    "\n"
    "Bytes of local memory each thread of the kernel uses, as numba's: on a\n"
    "GPU the driver's count (``local.array`` arrays that are not kept in\n"
    "registers, and spilled registers); on the CPU target the bytes of its\n"
    "local arrays (its device functions' included), which each thread's stack\n"
    "holds.\n"
    "\n" USE_QUERY_DOC;

const char gj_py_doc_get_const_mem_size[] =
    "get_const_mem_size(signature=None)\n"
    "--\n"
    "\n"
    "Bytes of constant memory the kernel uses, as numba's: its frozen\n"
    "module-level arrays (and ``const.array_like``), and the strings and\n"
    "tables gpujit keeps there (``print``'s formats, ``cmath``'s special\n"
    "values).  On the CPU target, what lowering placed there; on a GPU the\n"
    "driver counts what is left after LLVM dropped what the kernel never\n"
    "reads.\n"
    "\n" USE_QUERY_DOC;

const char gj_py_doc_get_max_threads_per_block[] =
    "get_max_threads_per_block(signature=None)\n"
    "--\n"
    "\n"
    "The most threads per block the kernel can be launched with, as numba's:\n"
    "the device's limit, or fewer where its registers or its\n"
    "``launch_bounds`` say so.  On the CPU target, a CUDA device's 1024 (or\n"
    "``launch_bounds``).\n"
    "\n" USE_QUERY_DOC;

const char gj_py_doc_suggest_config[] =
    "suggest_config(n, sharedmem=0, signature=None)\n"
    "--\n"
    "\n"
    "A launch configuration for ``n`` threads, ``kernel[blocks,\n"
    "threads_per_block](...)``: the block size of the driver's occupancy\n"
    "calculator (``cuOccupancyMaxPotentialBlockSize``), the one that keeps the\n"
    "most of the kernel's threads resident on each multiprocessor, and enough\n"
    "blocks for ``n`` threads.  ``forall()`` launches with it.  On the CPU\n"
    "target, which has no occupancy to gain, blocks of 128 threads (fewer\n"
    "under ``launch_bounds``).\n"
    "\n"
    "Parameters\n"
    "----------\n"
    "n : int\n"
    "    Threads to launch, at least 1 (the kernel checks its index against\n"
    "    its data, as for any launch).\n"
    "sharedmem : int\n"
    "    Bytes of dynamic shared memory per block the launch will give.\n"
    "signature : signature, optional\n"
    "    The specialisation to size (a string is compiled if needed); may be\n"
    "    left out when the kernel has exactly one.\n"
    "\n"
    "Returns\n"
    "-------\n"
    "(int, int)\n"
    "    ``blocks = ceil(n / threads_per_block)``, and ``threads_per_block``.\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    For an ``n`` or ``sharedmem`` that is not an int, or without a\n"
    "    signature when the kernel has no specialisation or several.\n"
    "ValueError\n"
    "    For ``n < 1``, a negative ``sharedmem``, shared memory beyond the\n"
    "    device's limit per block (or none for a kernel with dynamic shared\n"
    "    memory), or more blocks than a grid has.\n"
    "RuntimeError\n"
    "    For a device function (``device=True``).";

const char gj_py_doc_forall[] =
    "forall(ntasks, tpb=0, stream=0, sharedmem=0)\n"
    "--\n"
    "\n"
    "A launch of enough threads for ``ntasks`` tasks, as numba's:\n"
    "``kernel.forall(n)(*args)`` launches ``ceil(n / tpb)`` blocks of ``tpb``\n"
    "threads; with ``tpb=0``, of the size ``suggest_config()`` gives the\n"
    "specialisation the arguments select (the occupancy calculator's on a\n"
    "GPU, 128 threads on the CPU target).  The kernel still checks its index\n"
    "against ``n``.  ``ntasks=0`` launches (and compiles) nothing.\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    For an ``ntasks`` or ``tpb`` that is not an int.\n"
    "ValueError\n"
    "    For a negative ``ntasks`` or ``tpb`` (and at the call, as at any\n"
    "    launch, for a configuration beyond the device's limits).\n"
    "RuntimeError\n"
    "    For a device function (``device=True``).";
