/*
 * launcher.c - launching a kernel: kernel[griddim, blockdim(, stream,
 * sharedmem)] makes a Launcher; calling it parses the arguments into GjArgs
 * and a type key (launchargs.h), finds the specialisation (dispatcher.h; by
 * numba's scalar-conversion ranking, sigmatch.h, for explicit signatures)
 * or compiles it, and launches it.
 *
 *     class Launcher:
 *         def __call__(self, *args) -> None
 *
 * kernelParams are packed per compile.h's ABI into buffers on the C stack
 * (calls of more than STACK_ARGS arguments allocate), and the launch goes
 * to the runtime (exec.h) with the host arrays to copy, which the runtime
 * copies to temporaries and back (on the CPU target host memory is the
 * "device" memory).  Device arguments pass zero-copy and a CUDA launch
 * stays asynchronous.  This file never asks which target runs the kernel.
 * The configuration is checked against the device's limits before anything
 * is launched, shared memory (static from the launch plan plus dynamic)
 * against the opt-in limit; the CPU target has a CUDA device's limits, so a
 * bad configuration fails the same way on both targets.
 */
#include "launcher.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "dispatcher.h"
#include "kernelerror.h"
#include "launchargs.h"
#include "module.h"
#include "occupancy.h"
#include "sigmatch.h"
#include "stream.h"

enum {
    STACK_ARGS = 16,
};

typedef struct Launcher {
    PyObject_HEAD GjDispatcher *disp;
    unsigned grid[3], block[3];
    unsigned shared;           /* dynamic shared memory, bytes */
    void *stream;
    PyObject *stream_obj;      /* keeps a gpujit Stream alive */
    int checked_device;        /* device the configuration was validated on (GJ_EXEC_HOST:
                                  the CPU target), or INT_MIN */
    long long forall_tasks;    /* kernel.forall(n): n (0 launches nothing); -1 otherwise */
    int forall_best;           /* forall with tpb=0: each call takes the block size of the
                                  occupancy calculator for the entry it launches */
} Launcher;

/* ---- launch configuration ------------------------------------------------------ */

/* griddim/blockdim: an int or a tuple of 1-3 ints. */
static int parse_dim3(PyObject *obj, unsigned out[3], const char *what) {
    out[0] = out[1] = out[2] = 1;
    PyObject *items[3] = {obj, NULL, NULL};
    Py_ssize_t n = 1;
    if (PyTuple_Check(obj)) {
        n = PyTuple_Size(obj);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be an int or a tuple of 1 to 3 ints, "
                         "not a tuple of %zd",
                         what, n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            items[i] = PyTuple_GetItem(obj, i);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v;
        int is_int = gj_py_integer(items[i], &v);
        if (is_int < 0)
            return -1;
        if (!is_int) {
            PyObject *tname = gj_py_type_name(items[i]);
            PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of ints, not %S", what,
                         tname);
            Py_XDECREF(tname);
            return -1;
        }
        if (v < 0 || v > 0xffffffffLL) {
            PyErr_Format(PyExc_ValueError,
                         "%s has %S in dimension %c; it must be a count "
                         "from 0 to the device's limit",
                         what, items[i], "xyz"[i]);
            return -1;
        }
        out[i] = (unsigned)v;
    }
    return 0;
}

/* ValueError unless the configuration fits device `ordinal`'s limits. */
static int check_config(GjPyState *st, const Launcher *l, int ordinal) {
    GjDeviceInfo info;
    GjExecError err;
    if (gj_exec_device_info(ordinal, &info, &err) != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    for (int i = 0; i < 3; i++) {
        if (l->block[i] > (unsigned)info.max_block_dim[i]) {
            PyErr_Format(PyExc_ValueError, "blockDim.%c of %u exceeds the device's limit of %d",
                         "xyz"[i], l -> block[i], info.max_block_dim[i]);
            return -1;
        }
        if (l->grid[i] > (unsigned)info.max_grid_dim[i]) {
            PyErr_Format(PyExc_ValueError, "gridDim.%c of %u exceeds the device's limit of %d",
                         "xyz"[i], l -> grid[i], info.max_grid_dim[i]);
            return -1;
        }
    }
    if (threads > (unsigned long long)info.max_threads_per_block) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds the device's limit of "
                     "%d threads per block",
                     threads, info.max_threads_per_block);
        return -1;
    }
    return 0;
}

/* ---- launching ---------------------------------------------------------------------- */

/* ValueError if the kernel writes a read-only argument. */
static int check_writable(const GjEntry *e, const GjArg *args, int n) {
    for (int i = 0; i < n; i++) {
        const GjArg *a = &args[i];
        if (a->kind == GJ_ARG_SCALAR || !e->res.params[i].written || !a->readonly)
            continue;
        PyErr_Format(PyExc_ValueError,
                     "kernel argument '%s' is read-only, but the "
                     "kernel writes to it",
                     e->res.params[i].name);
        return -1;
    }
    return 0;
}

/* ---- explicit signatures: converting scalar arguments ------------------------ */

static GjScalarType scalar_type(int dtype) {
    return (GjScalarType){gj_py_dtypes[dtype].kind, gj_py_dtypes[dtype].itemsize};
}

/* Rates entry e for args: counts of each GjConv (GJ_CONV_NONE set: no match).
   key has n words after the device; args are its scalars and arrays. */
static void rate(const GjEntry *e, const GjArg *args, const uint32_t *key, int n,
                 int count[GJ_CONV_COUNT]) {
    memset(count, 0, GJ_CONV_COUNT * sizeof *count);
    for (int i = 0, leaf = 0; i < n && !count[GJ_CONV_NONE]; i++) {
        uint32_t want = e->key[1 + i], have = key[1 + i];
        if (GJ_KEY_IS_TUPLE(want) || GJ_KEY_IS_TUPLE(have)) {   /* the same shape only */
            count[want == have ? GJ_CONV_EXACT : GJ_CONV_NONE]++;
            continue;
        }
        int a = leaf++;
        if (GJ_KEY_IS_ARRAY(want) || GJ_KEY_IS_ARRAY(have)) {
            int same = want == have ||
                       (GJ_KEY_IS_ARRAY(have) && GJ_KEY_LAYOUT(want) == GJ_LAYOUT_A &&
                        want == GJ_KEY_WORD(GJ_KEY_DTYPE(have), GJ_KEY_NDIM(have), GJ_LAYOUT_A, 1));
            count[same ? GJ_CONV_EXACT : GJ_CONV_NONE]++;
        } else {
            int to = GJ_KEY_DTYPE(want);
            count[gj_sig_conv(scalar_type(args[a].dtype), args[a].scalar, scalar_type(to))]++;
        }
    }
}

/* The compiled entry of d on key[0]'s device that args convert to best,
   with the scalar arguments converted; NULL without an exception if none
   does; NULL with a TypeError naming the candidates if two are as good. */
static GjEntry *convert_to_signature(GjDispatcher *d, GjArg *args, const uint32_t *key, int n) {
    GjEntry *best = NULL;
    int best_rate[GJ_CONV_COUNT], r[GJ_CONV_COUNT], tie = 0;
    for (size_t b = 0; b < d->nbuckets; b++)
        for (GjEntry *e = d->buckets[b]; e; e = e->next) {
            if (e->nkey != n + 1 || e->key[0] != key[0])
                continue;
            rate(e, args, key, n, r);
            if (r[GJ_CONV_NONE])
                continue;
            if (!best || gj_sig_better(r, best_rate)) {
                best = e;
                memcpy(best_rate, r, sizeof r);
                tie = 0;
            } else if (!gj_sig_better(best_rate, r)) {
                tie = 1;
            }
        }
    if (best && tie) {
        PyObject *names = PyList_New(0);
        for (size_t b = 0; names && b < d->nbuckets; b++)
            for (GjEntry *e = d->buckets[b]; e; e = e->next) {
                if (e->nkey != n + 1 || e->key[0] != key[0])
                    continue;
                rate(e, args, key, n, r);
                if (!r[GJ_CONV_NONE] && !gj_sig_better(best_rate, r) &&
                    PyList_Append(names, e->sig) < 0)
                    Py_CLEAR(names);
            }
        PyObject *name = names ? PyObject_GetAttrString(d->func, "__name__") : NULL;
        if (name && PyList_Sort(names) == 0)
            PyErr_Format(PyExc_TypeError,
                         "ambiguous call of %U(): its arguments convert "
                         "equally well to the signatures %R; pass NumPy scalars of the "
                         "intended types (np.float32(x))",
                         name, names);
        Py_XDECREF(names);
        Py_XDECREF(name);
        return NULL;
    }
    for (int i = 0, leaf = 0; best && i < n; i++) {
        uint32_t want = best->key[1 + i];
        if (GJ_KEY_IS_TUPLE(want))
            continue;
        GjArg *a = &args[leaf++];
        int to = GJ_KEY_DTYPE(want);
        if (!GJ_KEY_IS_ARRAY(want) && a->dtype != to) {
            uint64_t value[2];
            gj_sig_convert(scalar_type(a->dtype), a->scalar, scalar_type(to), value);
            memcpy(a->scalar, value, sizeof value);
            a->dtype = to;
        }
    }
    return best;
}

/* kernelParams per compile.h: scalar value; array data, shape[ndim],
   strides[ndim].  A host array's data slot is left for the runtime, which
   puts its temporary there: copies[] gets one entry per host array.
   Returns their count. */
static int pack_params(const GjEntry *e, const GjArg *args, int n, void **params, uint64_t *slots,
                       GjHostCopy *copies) {
    int p = 0, s = 0, c = 0;
    for (int i = 0; i < n; i++) {
        const GjArg *a = &args[i];
        if (a->kind == GJ_ARG_SCALAR) {
            memcpy(&slots[s], a->scalar, sizeof a->scalar);
            params[p++] = &slots[s];
            s += 2;
            continue;
        }
        slots[s] = a->ptr;
        if (a->kind == GJ_ARG_HOST)
            copies[c++] = (GjHostCopy){.buf = a->view.buf,
                                       .nbytes = a->nbytes,
                                       .written = e->res.params[i].written,
                                       .slot = &slots[s]};
        params[p++] = &slots[s++];
        for (int k = 0; k < a->ndim; k++) {
            memcpy(&slots[s], &a->shape[k], sizeof(int64_t));
            params[p++] = &slots[s++];
        }
        for (int k = 0; k < a->ndim; k++) {
            memcpy(&slots[s], &a->strides[k], sizeof(int64_t));
            params[p++] = &slots[s++];
        }
    }
    return c;
}

/* Written strided host arguments go back from their contiguous copies,
   through an ndarray over the argument's own buffer (a memoryview or
   another exporter is no ndarray for numpy.copyto). */
static int copy_back_strided(GjPyState *st, const GjEntry *e, const GjArg *args, int n) {
    for (int i = 0; i < n; i++) {
        const GjArg *a = &args[i];
        if (a->kind != GJ_ARG_HOST || !a->contig || !e->res.params[i].written)
            continue;
        PyObject *dst = PyObject_CallMethod(st->np, "asarray", "O", a->obj);
        PyObject *r =
            dst ? PyObject_CallFunctionObjArgs(st->np_copyto, dst, a->contig, NULL) : NULL;
        Py_XDECREF(dst);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* A kernel that prints writes to fd 1 (the CPU target at once, CUDA's
   printf buffer at the next synchronisation): what Python's sys.stdout
   holds goes first. */
static int flush_stdout(void) {
    PyObject *out = PySys_GetObject("stdout");   /* borrowed */
    if (!out || out == Py_None)
        return 0;
    PyObject *r = PyObject_CallMethod(out, "flush", NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

enum { IMPLICIT_COPY_WARN_BYTES = 1 << 20 };

/* numba's NumbaPerformanceWarning, once per kernel: host arrays of 1 MiB or
   more in all that the runtime copies to the GPU and back at this launch
   (GPUJIT_WARN_ON_IMPLICIT_COPY=0 silences it).  -1 when a filter made it
   an error. */
static int warn_implicit_copies(GjPyState *st, GjDispatcher *d, const GjHostCopy *copies, int n,
                                int device) {
    if (d->warned_implicit_copy || n == 0 || !gj_exec_copies_host_arrays(device))
        return 0;
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += copies[i].nbytes;
    const char *env = getenv("GPUJIT_WARN_ON_IMPLICIT_COPY");
    if (bytes < IMPLICIT_COPY_WARN_BYTES || (env && strcmp(env, "0") == 0))
        return 0;
    d->warned_implicit_copy = 1;
    PyObject *name = PyObject_GetAttrString(d->func, "__qualname__");
    int rc = name ? PyErr_WarnFormat(st->GpujitPerformanceWarning, 1,
                                     "kernel %U was given host arrays (%zu bytes), which are "
                                     "copied to the GPU and back, with a synchronize, at each "
                                     "launch; pass device arrays (gpujit.to_device) to keep "
                                     "the data on the GPU (GPUJIT_WARN_ON_IMPLICIT_COPY=0 "
                                     "silences this)",
                                     name, bytes)
                  : -1;
    Py_XDECREF(name);
    return rc;
}

/* forall(n) with tpb=0: the block size the occupancy calculator gives e
   (occupancy.c), and enough blocks for n tasks. */
static int forall_config(GjPyState *st, Launcher *l, GjEntry *e, int device) {
    int block;
    if (gj_py_entry_best_block(st, e, l->shared, device, &block) < 0)
        return -1;
    l->block[0] = (unsigned)block;
    long long blocks = l->forall_tasks / block + (l->forall_tasks % block != 0);
    if (blocks > 0xffffffffLL) {
        PyErr_Format(PyExc_ValueError,
                     "forall(%lld) needs %lld blocks of %d threads, more "
                     "than a grid has",
                     l->forall_tasks, blocks, block);
        return -1;
    }
    l->grid[0] = (unsigned)blocks;
    return check_config(st, l, device);
}

/* The threads of l's grid, ULLONG_MAX for more than that (a 2^31 x 65535 x
   65535 grid of 1024-thread blocks is). */
static unsigned long long launch_threads(const Launcher *l) {
    unsigned long long n = 1;
    const unsigned dims[6] = {l->grid[0],  l->grid[1],  l->grid[2],
                              l->block[0], l->block[1], l->block[2]};
    for (int i = 0; i < 6; i++)
        if (__builtin_mul_overflow(n, dims[i], &n))
            return ULLONG_MAX;
    return n;
}

/* Hands the launch to the runtime (runtime/exec.h): host arguments are
   copied in and, when written, back, and then the call has synchronized;
   with device arguments only the launch stays asynchronous. */
static int launch(GjPyState *st, Launcher *l, GjEntry *e, GjArg *args, int n, void **params,
                  uint64_t *slots, GjHostCopy *copies, int device) {
    if (e->res.prints && flush_stdout() < 0)
        return -1;
    if (check_writable(e, args, n) < 0)
        return -1;
    int64_t record[GJ_ERROR_RECORD_WORDS] = {0};
    GjLaunch g = {
        .device = device,
        .func = e->func,
        .grid = {l->grid[0], l->grid[1], l->grid[2]},
        .block = {l->block[0], l->block[1], l->block[2]},
        .shared = l->shared,
        .shared_static = e->res.shared_static_bytes,
        .local_bytes = e->res.local_bytes,
        .per_thread = e->res.cpu_per_thread,
        .needs_fibers = e->res.needs_fibers,
        .stream = l->stream,
        .params = params,
        .copies = copies,
        .ncopies = pack_params(e, args, n, params, slots, copies),
        .error_record_dptr = e->error_record,
        .error_record = e->res.nerror_sites > 0 ? record : NULL,
        .error_record_words = GJ_ERROR_RECORD_WORDS,
    };
    if (warn_implicit_copies(st, l->disp, copies, g.ncopies, device) < 0)
        return -1;
    GjExecError err;
    GjExecStatus rc;
    if (gj_exec_blocks(&g)) {
        Py_BEGIN_ALLOW_THREADS rc = gj_exec_launch(&g, &err);
        Py_END_ALLOW_THREADS
    } else {
        rc = gj_exec_launch(&g, &err);
    }
    if (rc != GJ_EXEC_OK && err.kind == GJ_ERR_CPU_TARGET) {
        PyObject *name = PyObject_GetAttrString(l->disp->func, "__qualname__");
        if (name)
            PyErr_Format(st->GpujitError, "the CPU target could not run kernel %U: %s", name,
                         err.message);
        Py_XDECREF(name);
        return -1;
    }
    if (rc != GJ_EXEC_OK) {
        gj_py_raise_cuda(st, &err);
        return -1;
    }
    if (copy_back_strided(st, e, args, n) < 0)
        return -1;
    return gj_py_kernel_error_raise(l->disp, e, record);
}

static PyObject *launcher_call(PyObject *self, PyObject *pyargs, PyObject *kw) {
    Launcher *l = (Launcher *)self;
    GjDispatcher *d = l->disp;
    GjPyState *st = gj_py_state_of_type(Py_TYPE(self));
    GjEntry *held = NULL;   /* kept alive through a recompile() until done */
    if (kw && PyDict_Size(kw) > 0) {
        PyErr_SetString(PyExc_TypeError, "kernel arguments are positional only");
        return NULL;
    }
    if (l->forall_tasks == 0)
        Py_RETURN_NONE;   /* as numba's forall: no task, no launch (and no compile) */
    Py_ssize_t n = PyTuple_Size(pyargs);
    if (n != d->argcount && d->plain) {   /* else compiling reports *args and the like */
        PyObject *name = PyObject_GetAttrString(d->func, "__name__");
        PyObject *defaults = PyObject_GetAttrString(d->func, "__defaults__");
        PyErr_Clear();
        if (n < d->argcount && defaults && defaults != Py_None)
            PyErr_Format(PyExc_TypeError,
                         "%S() has default parameter values, which a kernel "
                         "does not use: pass all %d arguments (%zd %s given)",
                         name, d->argcount, n, n == 1 ? "was" : "were");
        else
            PyErr_Format(PyExc_TypeError, "%S() takes %d argument%s but %zd %s given", name,
                         d->argcount, d->argcount == 1 ? "" : "s", n, n == 1 ? "was" : "were");
        Py_XDECREF(defaults);
        Py_XDECREF(name);
        return NULL;
    }
    int nleaves = 0, nwords = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (gj_py_args_count(PyTuple_GetItem(pyargs, i), &nleaves, &nwords) < 0)
            return NULL;
    GjArg stack_args[STACK_ARGS];
    GjHostCopy stack_copies[STACK_ARGS];
    uint32_t stack_key[STACK_ARGS + 1];
    void *stack_params[STACK_ARGS * (2 + 2 * GJ_PY_MAX_NDIM)];
    uint64_t stack_slots[STACK_ARGS * (2 + 2 * GJ_PY_MAX_NDIM)];
    GjArg *args = stack_args;
    GjHostCopy *copies = stack_copies;
    uint32_t *key = stack_key;
    void **params = stack_params;
    uint64_t *slots = stack_slots;
    PyObject *result = NULL;
    int parsed = 0, nkey = 1;
    if (nleaves > STACK_ARGS || nwords > STACK_ARGS) {
        size_t nslots = (size_t)nleaves * (2 + 2 * GJ_PY_MAX_NDIM);
        args = PyMem_Calloc((size_t)nleaves + 1, sizeof *args);
        copies = PyMem_Calloc((size_t)nleaves + 1, sizeof *copies);
        key = PyMem_Calloc((size_t)nwords + 1, sizeof *key);
        params = PyMem_Calloc(nslots, sizeof *params);
        slots = PyMem_Calloc(nslots, sizeof *slots);
        if (!args || !copies || !key || !params || !slots) {
            PyErr_NoMemory();
            goto done;
        }
    } else {
        memset(stack_args, 0, (size_t)nleaves * sizeof *args);
    }
    int device;
    if (gj_py_device(st, &device) < 0)
        goto done;
    key[0] = (uint32_t)device;   /* the CPU target's GJ_EXEC_HOST keys its own entries */
    for (Py_ssize_t i = 0; i < n; i++)
        if (gj_py_args_parse(st, d, device, (int)i, PyTuple_GetItem(pyargs, i), args, &parsed, key,
                             &nkey) < 0)
            goto done;
    if (gj_py_ensure(st) < 0)
        goto done;
    if (l->checked_device != device) {
        if (check_config(st, l, device) < 0)
            goto done;
        l->checked_device = device;
    }
    GjEntry *e = gj_py_entry_find(d, key, nkey);
    if (!e)
        e = gj_py_entry_any_layout(d, key, nkey);
    if (!e && d->explicit_sigs) {   /* exactly, else by converting scalars, as numba */
        if (gj_py_entry_explicit_compile(st, d, (int)key[0]) < 0)
            goto done;
        if (!(e = gj_py_entry_find(d, key, nkey)) && !(e = gj_py_entry_any_layout(d, key, nkey)) &&
            !(e = convert_to_signature(d, args, key, nkey - 1))) {
            if (!PyErr_Occurred())
                gj_py_no_matching_definition(d, key, nkey);
            goto done;
        }
    }
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    unsigned long long grid_threads = launch_threads(l);
    /* the threads the CPU target's tiers count (forall: its tasks, known before
       its grid) */
    unsigned long long counted =
        l->forall_tasks > 0 ? (unsigned long long)l->forall_tasks : grid_threads;
    if (!e && !(e = gj_py_entry_compile(st, d, key, nkey, counted)))
        goto done;
    gj_py_entry_hold(held = e);   /* the launch and the load run without the GIL */
    if (gj_py_entry_load(st, d, e) < 0 || gj_py_prepare_shared(st, d, e, l->shared, device) < 0)
        goto done;
    if (l->forall_best) {
        if (forall_config(st, l, e, device) < 0)
            goto done;
        threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
        grid_threads = launch_threads(l);
    }
    if (d->launch_bounds[0] > 0 && threads > (unsigned long long)d->launch_bounds[0]) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds the kernel's "
                     "launch_bounds of %d threads per block",
                     threads, d->launch_bounds[0]);
        goto done;
    }
    if (threads > (unsigned long long)e->use.max_threads) {
        PyErr_Format(PyExc_ValueError,
                     "block of %llu threads exceeds this kernel's limit of "
                     "%d threads per block (set by its register use)",
                     threads, e->use.max_threads);
        goto done;
    }
    if (grid_threads == 0) {
        result = Py_NewRef(Py_None);   /* an empty grid launches nothing */
        goto done;
    }
    if (!(e = gj_py_entry_for_launch(st, d, e, counted)))
        goto done;
    if (launch(st, l, e, args, parsed, params, slots, copies, device) == 0)
        result = Py_NewRef(Py_None);
done:
    if (held)
        gj_py_entry_release(held);
    if (args)
        gj_py_args_release(args, parsed);
    if (args != stack_args) {
        PyMem_Free(args);
        PyMem_Free(copies);
        PyMem_Free(key);
        PyMem_Free(params);
        PyMem_Free(slots);
    }
    return result;
}

/* ---- Launcher type ------------------------------------------------------------------- */

static int launcher_traverse(PyObject *self, visitproc visit, void *arg) {
    Launcher *l = (Launcher *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT((PyObject *)l->disp);
    Py_VISIT(l->stream_obj);
    return 0;
}

static int launcher_clear(PyObject *self) {
    Launcher *l = (Launcher *)self;
    Py_CLEAR(l->disp);
    Py_CLEAR(l->stream_obj);
    return 0;
}

static void launcher_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

static PyObject *launcher_repr(PyObject *self) {
    Launcher *l = (Launcher *)self;
    PyObject *name = PyObject_GetAttrString(l->disp->func, "__name__");
    if (!name)
        return NULL;
    if (l->forall_best) {
        PyObject *r = PyUnicode_FromFormat("<gpujit forall of %S: %lld tasks, in blocks of the "
                                           "size suggest_config() gives, %u bytes of shared "
                                           "memory>",
                                           name, l->forall_tasks, l->shared);
        Py_DECREF(name);
        return r;
    }
    PyObject *r = PyUnicode_FromFormat("<gpujit launch of %S: grid (%u, %u, %u), block "
                                       "(%u, %u, %u), %u bytes of shared memory>",
                                       name, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                       l->block[1], l->block[2], l->shared);
    Py_DECREF(name);
    return r;
}

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, (void *)launcher_dealloc},
    {Py_tp_traverse, (void *)launcher_traverse},
    {Py_tp_clear, (void *)launcher_clear},
    {Py_tp_call, (void *)launcher_call},
    {Py_tp_repr, (void *)launcher_repr},
    {Py_tp_doc, "A kernel with a launch configuration; call it with the kernel's arguments."},
    {0, NULL},
};

static PyType_Spec launcher_spec = {
    .name = "gpujit.Launcher",
    .basicsize = sizeof(Launcher),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = launcher_slots,
};

PyObject *gj_py_launcher_new(GjPyState *st, GjDispatcher *d, PyObject *config) {
    Py_ssize_t n = PyTuple_Check(config) ? PyTuple_Size(config) : 0;
    if (n < 2 || n > 4) {
        PyErr_SetString(PyExc_ValueError,
                        "launch configuration must be kernel[griddim, "
                        "blockdim] or kernel[griddim, blockdim, stream, sharedmem]");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(st->LauncherType, Py_tp_alloc);
    Launcher *l = (Launcher *)alloc(st->LauncherType, 0);
    if (!l)
        return NULL;
    l->disp = (GjDispatcher *)Py_NewRef((PyObject *)d);
    l->checked_device = INT_MIN;
    l->forall_tasks = -1;
    if (parse_dim3(PyTuple_GetItem(config, 0), l->grid, "griddim") < 0 ||
        parse_dim3(PyTuple_GetItem(config, 1), l->block, "blockdim") < 0)
        goto fail;
    for (int i = 0; i < 3; i++)
        if (l->block[i] == 0) {
            PyErr_Format(PyExc_ValueError,
                         "blockdim has 0 threads in dimension %c; each "
                         "dimension needs at least 1",
                         "xyz"[i]);
            goto fail;
        }
    if (n >= 3) {
        PyObject *s = PyTuple_GetItem(config, 2);
        if (gj_py_stream_handle(st, s, &l->stream) < 0)
            goto fail;
        l->stream_obj = Py_NewRef(s);
    }
    if (n == 4) {
        PyObject *index = PyNumber_Index(PyTuple_GetItem(config, 3));
        if (!index && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *tname = gj_py_type_name(PyTuple_GetItem(config, 3));
            PyErr_Format(PyExc_TypeError,
                         "sharedmem (the launch's 4th item) must be an int "
                         "count of bytes, not %S",
                         tname);
            Py_XDECREF(tname);
        }
        int overflow = 0;
        long long shared = index ? PyLong_AsLongLongAndOverflow(index, &overflow) : -1;
        Py_XDECREF(index);
        if (shared == -1 && PyErr_Occurred())
            goto fail;
        if (overflow || shared < 0 || shared > 0x7fffffffLL) {
            PyErr_Format(PyExc_ValueError,
                         "sharedmem must be a byte count from 0 to 2**31-1 "
                         "(and within the device's shared memory), not %S",
                         PyTuple_GetItem(config, 3));
            goto fail;
        }
        l->shared = (unsigned)shared;
    }
    /* Validate against the target's device now when one is in use; else at the call. */
    if (st->target == GJ_TARGET_CPU || gj_exec_gpu_available()) {
        int dev;
        if (gj_py_device(st, &dev) < 0 || check_config(st, l, dev) < 0)
            goto fail;
        l->checked_device = dev;
    }
    return (PyObject *)l;
fail:
    Py_DECREF(l);
    return NULL;
}

PyObject *gj_py_launcher_forall(GjPyState *st, GjDispatcher *d, long long ntasks, int tpb,
                                PyObject *stream, PyObject *sharedmem) {
    /* tpb=0: one block until each call knows its entry (forall_config) */
    long long block = tpb > 0 ? tpb : 1;
    long long blocks = tpb > 0 ? ntasks / tpb + (ntasks % tpb != 0) : 1;
    PyObject *config = Py_BuildValue("(LLOO)", blocks, block, stream, sharedmem);
    Launcher *l = config ? (Launcher *)gj_py_launcher_new(st, d, config) : NULL;
    Py_XDECREF(config);
    if (l) {
        l->forall_tasks = ntasks;
        l->forall_best = tpb == 0;
    }
    return (PyObject *)l;
}

int gj_py_launcher_register(PyObject *module, GjPyState *st) {
    st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launcher_spec, NULL);
    if (!st->LauncherType)
        return -1;
    return PyModule_AddObjectRef(module, "Launcher", (PyObject *)st->LauncherType);
}
