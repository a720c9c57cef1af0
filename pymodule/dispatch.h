/*
 * dispatch.h - what dispatcher.c (specialisation table, compiling, the
 * Dispatcher type) and launcher.c (arguments, launch configuration, the
 * launch) share: the compiled-entry and dispatcher structs and the key
 * encoding.
 *
 * A type key is an array of 32-bit words: key[0] is the device ordinal (a
 * CUmodule belongs to one context), then each argument's words in order: one
 * for a scalar or an array, a tuple marker and its items' words for a tuple.
 */
#ifndef GJ_DISPATCH_H
#define GJ_DISPATCH_H

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

/* dispatcher.c: compiles cv (argument types set) with o, the GIL released,
   issuing its warnings when `warn` (not for the CPU target's second tier,
   whose first compile issued them); *sig gets the signature's type names.
   -1 raised. */
int gj_py_run_compile(GjPyState *st, GjCtx *ctx, GjCodeView *cv, const GjCompileOptions *o,
                      GjCompileResult *res, PyObject **sig, int warn);
/* The signature's type names, a key of .signatures; NULL raised. */
PyObject *gj_py_signature_tuple(const GjCodeView *cv);
/* The compile options of d's entries on device `ordinal`: d's jit options
   for that device's compute capability (sm_90 without a GPU), or the host
   CPU for GJ_EXEC_HOST. */
void gj_py_target_options(GjPyState *st, const GjDispatcher *d, int ordinal, GjCompileOptions *o);

/* compileptx.c: a device function's inspect_* (field: the GjCompileResult
   member, ptx, llvm_ir or type_dump): for signature sig, d compiled now as
   compile_ptx(device=True) compiles it, with d's options, for the current
   GPU; for sig NULL or None, a dict {type names: text} of jit()'s
   signatures.  NULL raised. */
PyObject *gj_py_device_fn_inspect(GjPyState *st, GjDispatcher *d, PyObject *sig, size_t field);
/* Whether cv's function has positional parameters only (then a count of
   arguments means something: a function with *args, **kwargs or
   keyword-only parameters is refused by the compiler at its def line). */
int gj_py_plain_parameters(const GjCodeView *cv);

/* cache.c: the persistent cache.  e->res and e->sig for cv (argument
   types set, instructions not yet read: views holds its code objects) with
   o on device e->key[0], from the cache or else compiled
   (gj_py_codeview_instructions, then gj_py_run_compile) and, when it is to
   be kept (e->cache_key), stored: a CPU object file now, a cubin when
   gj_py_entry_load has the driver link it.  A compile issues its warnings
   when `warn` (gj_py_run_compile).  -1 raised. */
int gj_py_cache_compile(GjPyState *st, GjDispatcher *d, GjCtx *ctx, GjCodeView *cv,
                        GjPyViews *views, GjCompileOptions *o, GjEntry *e, int warn);
/* The options of a persistent-cache key: jit()'s keyword arguments to the
   Dispatcher (kw, may be NULL) but the function and `cache`; NULL raised. */
PyObject *gj_py_cache_jit_options(PyObject *kw);
/* Writes res (with its binary, which it then frees) as the entry of key;
   -1 raised. */
int gj_py_cache_store(const char *key, GjCompileResult *res);
/* Loads e's module, without the GIL: its cached cubin; else, when the
   persistent cache keeps e (e->cache_key), the cubin the driver's linker
   makes of the PTX, left in e->res.binary with *store set, for
   gj_py_cache_store; else the PTX, as without the cache.  Each step that
   fails falls to the next; the last one's error is reported. */
GjExecStatus gj_py_cache_module_load(GjEntry *e, int lineinfo, int *store, GjExecError *err);

/* occupancy.c: ValueError unless e's static shared memory plus `shared`
   bytes of dynamic shared memory fit a block on `device`, or when e needs
   dynamic shared memory and gets none; lets e use more than 48 KiB when
   that is needed (the opt-in).  -1 raised. */
int gj_py_prepare_shared(GjPyState *st, GjDispatcher *d, GjEntry *e, unsigned shared, int device);
/* The block size for launching e (loaded) with `shared` bytes of dynamic
   shared memory: the occupancy calculator's on a GPU, the CPU target's
   choice otherwise (runtime/exec.h).  -1 raised. */
int gj_py_entry_best_block(GjPyState *st, GjEntry *e, unsigned shared, int device, int *block);
/* The Dispatcher's methods on what a kernel uses and how to launch it,
   rows of dispatcher.c's method table: X(name) is the method `name`,
   gj_py_<name>(self, args, kw), with the docstring gj_py_doc_<name>. */
/* clang-format off */
#define GJ_PY_OCCUPANCY_METHODS(X) \
    X(get_regs_per_thread)         \
    X(get_shared_mem_per_block)    \
    X(get_local_mem_per_thread)    \
    X(get_const_mem_size)          \
    X(get_max_threads_per_block)   \
    X(suggest_config)              \
    X(forall)
/* clang-format on */
#define X(name)                                                           \
    PyObject *gj_py_##name(PyObject *self, PyObject *args, PyObject *kw); \
    extern const char gj_py_doc_##name[];
GJ_PY_OCCUPANCY_METHODS(X)
#undef X
/* cachefile.c: the entry files.  Whether to cache a kernel whose
   jit(cache=...) is flag: GPUJIT_CACHE overrides it when set (1, true, yes
   or on caches every kernel, 0, false, no or off none; another value is
   ignored with a RuntimeWarning, once); -1 raised (the warning an error). */
int gj_py_cache_enabled(int flag);
/* _gpujit._cache_directory(): the directory, a str; NULL raised. */
PyObject *gj_py_cache_directory(PyObject *module, PyObject *unused);
/* The key of material: SHA-256, in hex, of this build's identity (st)
   and material.  -1 raised. */
int gj_py_cache_key(GjPyState *st, const GjBuf *material, char key[GJ_CACHE_KEY_LEN + 1]);
/* key's entry, when its file is this user's, whole and key's: 1 and
   *payload (malloc'd, *n bytes), touched so it is evicted last; 0 when
   there is none to use; -1 raised (no directory can be named). */
int gj_py_cache_read(const char *key, unsigned char **payload, size_t *n);
/* Removes key's entry file, if any.  -1 raised. */
int gj_py_cache_discard(const char *key);
/* The bytes of key's entry file holding payload (header and payload);
   NULL raised. */
PyObject *gj_py_cache_entry(const char *key, const void *payload, size_t n);
/* _gpujit._cache_counts(): (hits, misses) of this process. */
PyObject *gj_py_cache_counts(PyObject *module, PyObject *unused);

/* kernelerror.c: raises the exception of the error site `record` (the
   kernel's error record, compile.h) names and returns -1, or returns 0 when
   the record is clear. */
int gj_py_kernel_error_raise(GjDispatcher *d, const GjEntry *e, const int64_t *record);

/* argkey.c: argument types as key words.  The type of the argument whose
   words start at key[*pos] (key has n words), advancing *pos; NULL with a
   TypeError if the words are malformed. */
const GjType *gj_py_key_type(GjCtx *c, const uint32_t *key, int n, int *pos);
/* Appends argument type t's words at key[*pos] (room for max words); -1 with
   a TypeError if t cannot be a kernel argument. */
int gj_py_key_words(const GjType *t, uint32_t *key, int max, int *pos);
/* The name of the argument whose words start at key[*pos], as .signatures
   spells it ("float32", "array(float32, 2d, C)", "tuple(int64, float32)"),
   advancing *pos; NULL raised. */
PyObject *gj_py_key_name(const uint32_t *key, int n, int *pos);
/* Python arguments, scalars and arrays (the plan's parameters), and kernel
   parameters that key[1..n) describes. */
void gj_py_key_count(const uint32_t *key, int n, int *args, int *leaves, int *kernel_params);

/* kernel[config]: a new launch configuration object; NULL raised. */
PyObject *gj_py_launcher_new(GjPyState *st, GjDispatcher *d, PyObject *config);
/* kernel.forall(ntasks, tpb, stream, sharedmem) (ntasks >= 0, tpb >= 0,
   occupancy.c checked them): a launch configuration of ceil(ntasks / tpb)
   blocks of tpb threads; for tpb 0, of the block size the occupancy
   calculator gives the specialisation each call launches.  NULL raised. */
PyObject *gj_py_launcher_forall(GjPyState *st, GjDispatcher *d, long long ntasks, int tpb,
                                PyObject *stream, PyObject *sharedmem);
int gj_py_launcher_register(PyObject *module, GjPyState *st);

#endif
