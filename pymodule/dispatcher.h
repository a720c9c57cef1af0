/*
 * dispatcher.h - the Dispatcher type (dispatcher.c): the compiled-entry
 * and dispatcher structs every file of a launch reads, the type-key
 * encoding, and the specialisation table's lookups, compiles and loads.
 *
 * A type key is an array of 32-bit words: key[0] is the device ordinal (a
 * CUmodule belongs to one context), then each argument's words in order: one
 * for a scalar or an array, a tuple marker and its items' words for a tuple.
 */
#ifndef GJ_PY_DISPATCHER_H
#define GJ_PY_DISPATCHER_H

#include "gjpy.h"

#include "cache.h"
#include "codeview_py.h"
#include "compile.h"
#include "exec.h"

enum { GJ_MAX_ARGS = 255 };   /* Python parameters of a kernel */
enum { GJ_CACHE_KEY_LEN = 64 };   /* a persistent-cache key: SHA-256 in hex */

/* Key word of one argument: its dtype, and for arrays ndim and layout. */
#define GJ_KEY_WORD(dtype, ndim, layout, is_array)                                         \
    ((uint32_t)(dtype) | (uint32_t)(ndim) << 8 | (uint32_t)(unsigned char)(layout) << 16 | \
     (uint32_t)(is_array) << 24)
#define GJ_KEY_DTYPE(w)    ((int)((w) & 0xff))
#define GJ_KEY_NDIM(w)     ((int)(((w) >> 8) & 0xff))
#define GJ_KEY_LAYOUT(w)   ((GjLayout)(((w) >> 16) & 0xff))
#define GJ_KEY_IS_ARRAY(w) ((int)(((w) >> 24) & 1))
/* A tuple argument of n items: this word, then each item's words (argkey.c). */
#define GJ_KEY_TUPLE(n)     ((uint32_t)1 << 25 | (uint32_t)(n))
#define GJ_KEY_IS_TUPLE(w)  ((int)(((w) >> 25) & 1))
#define GJ_KEY_TUPLE_LEN(w) ((int)((w) & 0xffff))
enum { GJ_KEY_MAX_TUPLE = 0xffff };

typedef struct GjEntry {
    struct GjEntry *next;        /* hash chain */
    uint64_t hash;
    GjCompileResult res;       /* PTX and launch plan (malloc-owned) */
    void *module;              /* CUmodule, NULL until loaded */
    void *func;                /* CUfunction */
    GjKernelUse use;           /* what it uses, once loaded (max threads per block: its
                                  registers may allow fewer than the device) */
    int best_block;            /* its occupancy calculator's block size for
                                  best_block_shared bytes of dynamic shared memory,
                                  0 until asked (occupancy.c) */
    unsigned best_block_shared;
    uint64_t error_record;     /* GPU: the module's error record when the kernel has error
                                  sites (compile.h), else 0 */
    PyObject *sig;             /* tuple of type names, ('float32', 'array(float32, 1d, C)') */
    int busy;                  /* launches and loads using it now (they release the GIL) */
    int retired;               /* dropped from the table (recompile()) while busy: the
                                  last of those frees it */
    char cache_key[GJ_CACHE_KEY_LEN + 1];   /* its persistent-cache key, or "" when the
                                               persistent cache does not keep it */
    /* The CPU target's second tier (gj_py_entry_for_launch): an entry whose
       code runs one thread per call counts the threads its launches ran, and
       past GPUJIT_CPU_LOOP_THREADS gets `loops`, the same kernel compiled
       with thread loops, which every later launch runs.  Owned by this
       entry, never in the table. */
    unsigned long long threads_run;
    struct GjEntry *loops;
    int nkey;                  /* key[0] = device ordinal, key[1 + i] = argument i */
    uint32_t key[];
} GjEntry;

typedef struct GjDispatcher {
    PyObject_HEAD PyObject *func;            /* the Python function */
    PyObject *dict;            /* __dict__ (functools.wraps writes __name__, __doc__) */
    PyObject *weakreflist;
    int argcount;
    int plain;                 /* positional parameters only (no *args, **kwargs or
                                  keyword-only ones, which the compiler reports) */
    unsigned fastmath;         /* GjFastMath bits (compile.h) */
    int contract;              /* a * b + c may fuse (GjCompileOptions.contract) */
    int lineinfo, debug, opt, device_fn, inline_fn;
    int boundscheck;           /* GjCompileOptions.boundscheck (gpujit.jit resolved None) */
    int launch_bounds[3];      /* max threads per block, min blocks per SM, max blocks
                                  per cluster; 0 = none (jit(launch_bounds=...)) */
    int max_registers;         /* per thread, 0 = any (jit(max_registers=...)) */
    int cache;                 /* jit(cache=True): the persistent cache keeps its code */
    PyObject *jit_options;     /* the keyword arguments jit() gave, less cache: part of
                                  every persistent-cache key */
    GjEntry **buckets;           /* [nbuckets], a power of two */
    size_t nbuckets, count;
    GjEntry *last;               /* the last entry used: checked before hashing */
    PyObject *explicit_sigs;   /* signature strings given to jit(), or NULL: launches
                                  must then match one of them, as in numba */
    int warned_implicit_copy;  /* GpujitPerformanceWarning given once (launcher.c) */
    PyObject *last_config;     /* kernel[...] key of last_launcher */
    int last_config_plain;     /* it holds only exact ints, None and Streams: the same
                                  object again is the same configuration */
    PyObject *last_launcher;
} GjDispatcher;

/* Adds the Dispatcher type to the module and its state. */
int gj_py_dispatcher_register(PyObject *module, GjPyState *st);

/* The compiled entry for key[0..n), or NULL (no exception). */
GjEntry *gj_py_entry_find(GjDispatcher *d, const uint32_t *key, int n);

/* Compiles d's function for key and adds it to d's table; NULL raised.  On
   the CPU target a kernel gets thread loops when `threads`, those of the
   launch that asks for it (0: none asks), reach GPUJIT_CPU_LOOP_THREADS. */
GjEntry *gj_py_entry_compile(GjPyState *st, GjDispatcher *d, const uint32_t *key, int n,
                             unsigned long long threads);

/* The entry a launch of `threads` threads of e runs: e, or on the CPU target
   e->loops once e's launches, this one included, have run
   GPUJIT_CPU_LOOP_THREADS threads (compiled and loaded then).  e held;
   NULL raised. */
GjEntry *gj_py_entry_for_launch(GjPyState *st, GjDispatcher *d, GjEntry *e,
                                unsigned long long threads);

/* An entry compiled for layout 'A' that serves key's C or F arrays (what an
   explicit float32[:] signature compiled), or NULL. */
GjEntry *gj_py_entry_any_layout(GjDispatcher *d, const uint32_t *key, int n);

/* For a dispatcher with explicit signatures: compiles them for `device`
   if needed; -1 raised. */
int gj_py_entry_explicit_compile(GjPyState *st, GjDispatcher *d, int device);

/* The kernel's __name__ (or "kernel"), for messages; NULL only out of memory. */
PyObject *gj_py_kernel_name(const GjDispatcher *d);

/* Raises the TypeError of a launch whose argument types (key[1..n)) match
   none of d's explicit signatures. */
void gj_py_no_matching_definition(GjDispatcher *d, const uint32_t *key, int n);

/* A signature as the string the compiler parses (new reference): a str as
   it is; a gpujit.types signature or tuple of types rendered by
   gpujit.types._signature_string; NULL raised (TypeError) otherwise. */
PyObject *gj_py_signature_string(PyObject *sig);

/* The UTF-8 of a signature string, or NULL raised: ValueError for one with
   a NUL, which C would cut short ("void(float32[:])\0junk"). */
const char *gj_py_signature_text(PyObject *sig);

/* An entry a launch uses across GIL releases is held: recompile() (or the
   dispatcher's end) then retires it instead of freeing it under the launch,
   and the last release frees it.  Both with the GIL held. */
void gj_py_entry_hold(GjEntry *e);
void gj_py_entry_release(GjEntry *e);

/* Loads e's PTX (or its cached cubin) into its device's context (once)
   and reads what it uses (e->use); -1 raised. */
int gj_py_entry_load(GjPyState *st, GjDispatcher *d, GjEntry *e);

/* The entry for a signature (a string, a gpujit.types signature or tuple of
   types, or a key of .signatures, which must have been compiled: KeyError)
   on `device`, compiling it if needed; NULL raised. */
GjEntry *gj_py_entry_for_signature(GjPyState *st, GjDispatcher *d, PyObject *sig, int device);

/* The same for a signature d has compiled already, for any device (its
   entry on `device` compiled from that one if needed), or was given by
   jit(); KeyError for another, as numba's queries of d.overloads. */
GjEntry *gj_py_entry_compiled(GjPyState *st, GjDispatcher *d, PyObject *sig, int device);

/* Compiles, for `device`, the twin (same argument types) of every entry of
   device `from` (-1: of any other device) that lacks one, so that one
   device's entries answer for every signature; -1 raised. */
int gj_py_entry_twins(GjPyState *st, GjDispatcher *d, int device, int from);

/* Whether cv's function has positional parameters only (then a count of
   arguments means something: a function with *args, **kwargs or
   keyword-only parameters is refused by the compiler at its def line). */
int gj_py_plain_parameters(const GjCodeView *cv);

#endif
