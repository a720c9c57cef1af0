/*
 * compile.h - the compiler's whole contract with its callers (pymodule/).
 *
 * gj_compile() runs the pipeline on one code object specialised for one
 * argument-type signature:
 *
 *     build (bytecode -> IR)  ->  infer (types)  ->  lower (LLVM IR)
 *         ->  optimise (O3)  ->  emit PTX (NVPTX)
 *                               or  JIT-compile for the host CPU (cpujit.c)
 *
 * and returns what outlives the compilation: PTX text (or, for the CPU
 * target, the address of the JIT-compiled kernel) and the launch plan
 * (parameter layout and which arrays the kernel may write).  The result is
 * malloc-owned and released with gj_result_free(); everything else lives in
 * the GjCtx arena.
 *
 * Kernel parameter ABI (kernelParams order), for each Python argument:
 *   scalar:  one parameter of its concrete type (bool as i8, weak literals
 *            never occur: Python int -> int64, float -> float64);
 *   array:   data pointer (global address space), then ndim int64 extents,
 *            then ndim int64 strides in bytes.
 *   tuple:   its items' parameters in order (nested tuples depth-first).
 * Device functions (called from kernels, or opt->device) are PTX .func
 * functions of the same module that take each argument by value (arrays and
 * tuples as the structs of lower_base.h) and return their value.
 */
#ifndef GJ_COMPILE_H
#define GJ_COMPILE_H

#include "gj.h"
#include "codeview.h"
#include "symbol.h"
#include "types.h"

/* What a kernel is compiled for (grep tag: GJ_TARGET_KINDS). */
typedef enum GjTargetKind {
    GJ_TARGET_NVPTX = 0,      /* PTX for a CUDA GPU */
    GJ_TARGET_CPU,            /* host code, JIT-compiled; run by the host executor */
} GjTargetKind;

/* A runtime function that generated CPU code calls (gj_cpu_barrier), with
   its address.  The caller (pymodule) passes the table, so compiler/
   includes no runtime/ header; a name the table lacks is resolved in the
   process, and fails to link if it is not there. */
typedef struct GjRuntimeSymbol {
    const char *name;
    void (*addr)(void);
} GjRuntimeSymbol;

/* numba's fastmath flags, one bit each (GjCompileOptions.fastmath): LLVM's
   fast-math flags, set on every floating-point instruction, plus what
   numba-cuda makes of them on a GPU.  gpujit/__init__.py maps numba's names
   to the bits through _gpujit._fastmath_flags(), which is made from this
   table (grep tag: GJ_FASTMATH_FLAGS). */
/* clang-format off */
#define GJ_FASTMATH_FLAGS(X)                                                                  \
    X(NNAN, "nnan", 1u << 0)         /* no NaN operands or results */                        \
    X(NINF, "ninf", 1u << 1)         /* no infinite operands or results */                   \
    X(NSZ, "nsz", 1u << 2)           /* the sign of a zero does not matter */                \
    X(ARCP, "arcp", 1u << 3)         /* x / y may be x * (1 / y); float32 division is        \
                                        approximate (target.h's GJ_APPROX_DIV) */            \
    X(CONTRACT, "contract", 1u << 4) /* a * b + c may fuse, library code included */         \
    X(AFN, "afn", 1u << 5)           /* approximate functions: float32 sqrt and tanh         \
                                        (GJ_APPROX_*), libdevice's __nv_fast_* functions */  \
    X(REASSOC, "reassoc", 1u << 6)   /* reassociation */
/* clang-format on */

typedef enum GjFastMath {
#define X(id, name, bit) GJ_FM_##id = bit,
    GJ_FASTMATH_FLAGS(X)
#undef X
    /* Not an LLVM flag, so no set of them implies it: float32 denormals flush
       to zero (.ftz instructions, libdevice's nvvm-reflect-ftz).  numba's
       fastmath=True, its {'fast'}, brings it, as numba-cuda's NVVM -ftz=1. */
    GJ_FM_FTZ = 1u << 7,
#define X(id, name, bit) | GJ_FM_##id
    GJ_FM_FAST = GJ_FM_FTZ GJ_FASTMATH_FLAGS(X),   /* numba's 'fast' (fastmath=True): all */
#undef X
} GjFastMath;

/* The persistent cache keys a compile by this struct's bytes, with every
   pointer zeroed and its contents keyed instead (grep tag GJ_CACHE_OPTIONS,
   compiler/cache.c): a new value field is keyed with no further work; a new
   pointer field must be zeroed there and what it points to keyed. */
typedef struct GjCompileOptions {
    GjTargetKind target;
    int cc_major, cc_minor;   /* compute capability to target, e.g. 9, 0 */
    int ptx_version;          /* 0 = LLVM's default for the target; else e.g. 78 = PTX 7.8 */
    int opt_level;            /* 0..3 */
    unsigned fastmath;        /* GjFastMath bits; 0 = IEEE */
    /* The kernel's own a * b + c (its operators on real and complex floats)
       may fuse into an FMA, rounded once: nvcc's -fmad=true, the default.
       Off, every operation rounds as NumPy's does. */
    int contract;
    int lineinfo;
    int debug;                /* run-time checks that report errors to the host (error
                                 sites below): reads of maybe-unassigned locals,
                                 raise and assert statements */
    int boundscheck;          /* every array element access (and variable tuple index)
                                 is checked against its axis: an IndexError site */
    int want_llvm_ir;         /* keep the optimised LLVM IR text in the result */
    int device;               /* compile a device function (PTX .func, by-value
                                 arguments, may return a value), not a kernel */
    /* Kernels: launch_bounds (0 = none): at most max_threads threads per
       block, at least min_blocks blocks per multiprocessor, at most
       max_cluster blocks per cluster; NVPTX emits .maxntid, .minnctapersm
       and .maxclusterrank. */
    int max_threads, min_blocks, max_cluster;
    int max_registers;        /* kernels: registers per thread (.maxnreg), 0 = any */
    const char *entry_name;   /* the PTX name, or NULL: "_gj_" + the qualname; a C ABI
                                 name (gj_sym_c_name_problem, symbol.h) */
    const char *libdevice;    /* NVPTX: path of libdevice.10.bc, or NULL when none
                                 was found (kernels calling math functions then
                                 fail with a diagnostic saying what to install) */
    /* When libdevice is NULL and this is set, it is asked for the path the
       first time a kernel needs libdevice (and may return NULL: none), so a
       kernel without math functions never pays for the search. */
    const char *(*find_libdevice)(void *arg);
    void *find_libdevice_arg;
    /* GJ_TARGET_CPU: the runtime functions kernel code may call; the same
       table on every compile (the JIT defines them once per process). */
    const GjRuntimeSymbol *runtime_symbols;
    int nruntime_symbols;
    /* GJ_TARGET_CPU, for the persistent cache: keep the object file in the
       result (GjCompileResult.binary) and name the kernel's symbol
       "<entry name>.<object_id>", the same in every process, so the object
       loads anywhere (gj_cache_unpack).  NULL: no copy, and a name unique in
       this process ("<entry name>.<n>"). */
    const char *object_id;
    /* GJ_TARGET_CPU, kernels without barriers or warp operations: 1 (the
       default), one call runs every thread of a block, in loops that are
       vectorised across threads; 0, one call runs one thread (the executor
       calls it for each), which compiles in about half the time and suits
       launches of few threads (the dispatcher's first tier, docs/internals/cpu-target.md
       "How a block runs"). */
    int cpu_thread_loops;
} GjCompileOptions;

/* Errors a kernel reports at run time (debug builds, lower_error.c).  Each
   check of the kernel is an error site; a failing thread records the first
   failure of the launch in the error record and goes on, and the launch
   raises the site's Python exception once the kernel has completed.

   The record is GJ_ERROR_RECORD_WORDS int64 words: [0] 0, or 1 + the index
   of the site that failed first; [1..3] that thread's threadIdx, [4..6] its
   blockIdx; [7..8] values of the site's kind (GjErrorKind says which).  NVPTX: the module's
   global GJ_ERROR_RECORD_SYMBOL, which the host reads and clears; CPU: the
   one the launch passes (runtime/cpuexec.h's gj_cpu_error_record). */
#define GJ_ERROR_RECORD_WORDS  9
#define GJ_ERROR_RECORD_SYMBOL "gj$error"   /* gpujit's own name (symbol.h) */

typedef enum GjErrorKind {
    GJ_ERROR_UNBOUND_LOCAL = 1,   /* UnboundLocalError: a local read before assignment;
                                     the thread goes on with zero */
    GJ_ERROR_INDEX,               /* IndexError: an array index outside axis `axis`
                                     (boundscheck); values: the index, the extent */
    GJ_ERROR_TUPLE_INDEX,         /* IndexError: a variable tuple index out of range
                                     (boundscheck); values: the index, the length */
    GJ_ERROR_RAISE,               /* a raise or assert statement (debug): `exception` */
} GjErrorKind;

typedef struct GjErrorSite {
    GjErrorKind kind;
    int axis;                 /* GJ_ERROR_INDEX: the axis checked */
    int unsigned_index;       /* the index kinds: the index is of an unsigned type, so the
                                 record's index word is a uint64 (2**63 is no -2**63) */
    char *message;            /* the exception's text (after the values, for the index
                                 kinds), with the Python file and line (malloc-owned) */
    char *exception;          /* GJ_ERROR_RAISE: the class, "module:qualname"
                                 ("builtins:ValueError"); else NULL (malloc-owned) */
} GjErrorSite;

typedef struct GjParamPlan {
    const char *name;         /* Python parameter name, "t[1][0]" for a tuple's item
                                 (malloc-owned copy) */
    int is_array;
    int ndim;                 /* arrays */
    int written;              /* arrays: the kernel may store/atomic into it (into any
                                 array of the tuple holding it) */
    char dtype[16];           /* scalar type / array dtype name, "float32" */
    size_t itemsize;
} GjParamPlan;

/* Every field is packed into a persistent-cache entry by compiler/cache.c
   (grep tag GJ_CACHE_RESULT): a new field must be packed there too. */
typedef struct GjCompileResult {
    char *kernel_name;        /* PTX entry name */
    char *ptx;                /* NUL-terminated PTX */
    char *llvm_ir;            /* optimised LLVM IR if asked, else NULL */
    char *type_dump;          /* "a: array(float32, 1d, C)\n..." for inspect_types */
    int nparams;              /* scalars and arrays of the Python parameters
                                 (a tuple's items flattened, depth-first) */
    GjParamPlan *params;
    int nkernel_params;       /* entries in kernelParams */
    char *return_type;        /* the return type's name ("none" for kernels) */
    /* Static shared memory per block in bytes, a 16-byte multiple (the
       shared.array calls of the kernel and its device functions); a launch
       needs it plus its dynamic shared memory (sharedmem).  On the CPU
       target the dynamic part starts at this offset of the block's buffer. */
    size_t shared_static_bytes;
    size_t local_bytes;       /* local arrays per thread, callees' included (an upper
                                 bound): the CPU target sizes fiber stacks by it */
    size_t const_bytes;       /* constant memory lowering placed: frozen arrays, print's
                                 strings, cmath's tables (before LLVM drops unread ones) */
    int dynamic_shared;       /* uses dynamic shared memory: a launch must give sharedmem */
    int nerror_sites;         /* > 0: the launch reads the error record (above) */
    GjErrorSite *error_sites;
    /* GJ_TARGET_CPU only (ptx is then NULL): */
    void *cpu_fn;             /* GjCpuKernelFn: void kernel(void **params, GjCpuThread *t),
                                 one thread with cpu_per_thread, else the block's threads */
    void *cpu_code;           /* JIT resources holding cpu_fn; freed by gj_result_free */
    int needs_fibers;         /* the kernel calls a barrier (or warp operation) */
    int cpu_per_thread;       /* cpu_fn runs one thread: needs_fibers, or compiled
                                 without opt->cpu_thread_loops */
    int prints;               /* the kernel calls print (a CPU launch flushes sys.stdout) */
    char *cpu_symbol;         /* GJ_TARGET_CPU: cpu_fn's symbol in the JIT */
    /* Loadable code for the persistent cache, or NULL: the CPU target's
       object file (when opt->object_id asks for it), or the cubin the CUDA
       driver linked from ptx (set by pymodule when it loads the PTX). */
    void *binary;
    size_t binary_size;
    /* GJ_TARGET_NVPTX: the libdevice file linked into ptx, or NULL when the
       kernel calls no libdevice function.  The persistent cache keeps a
       compile by everything but this, and a kept entry naming a libdevice
       is used only while the search still finds that file. */
    char *libdevice;
} GjCompileResult;

/* sm_90, O3, contraction.  Zeroes the whole struct first, padding
   included, since the persistent cache keys a compile by its bytes
   (GJ_CACHE_OPTIONS). */
void gj_compile_options_default(GjCompileOptions *o);

/* Compiles code (with code->argtypes set) to PTX, or for opt->target.  On
   failure returns GJ_ERR with c->diag set; *out is then untouched.  A device
   function (opt->device) returns the type code->rettype names, or the one its
   returns unify to when that is NULL. */
GjStatus gj_compile(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt,
                    GjCompileResult *out);
void gj_result_free(GjCompileResult *r);

/* Renders diagnostic d (c->diag, or one of c->warnings) of compiling code
   like a compiler ("file:line:col: kind: message", the source line src with
   a caret under the columns, "during:" notes) into a malloc'd string; src
   is the text of line d->loc.line of gj_diag_file's file (the caller reads
   it: the code view has no source), or NULL for none. */
char *gj_diag_render_one(const GjCtx *c, const GjDiag *d, const GjCodeView *code, const char *src);
/* The file d is in: its device function's, code's or c's. */
const char *gj_diag_file(const GjCtx *c, const GjDiag *d, const GjCodeView *code);

/* The CPU the CPU target compiles for (compiler/cpuhost.h: the host's, or
   what GPUJIT_CPU_NAME and GPUJIT_CPU_FEATURES choose).  The strings live
   as long as the process. */
typedef struct GjCpuInfo {
    const char *cpu;          /* LLVM CPU name */
    const char *features;     /* LLVM feature string */
    const char *isa;          /* "avx512", "avx2", "avx", "sse", or the architecture */
    const char *chosen_by;    /* "host", or the variables that chose */
    unsigned vector_bits;     /* the widest float32 vectors: 128, 256, 512 */
    int slow_masked_stores;   /* its masked stores are microcode: full vectors store plainly */
    const char *host_cpu;     /* the host's own LLVM CPU name and instruction set */
    const char *host_isa;
} GjCpuInfo;
/* Starts the CPU target's JIT if need be and fills out; GJ_ERR with c->diag
   set when it cannot start (UNSUPPORTED: the choice was refused). */
GjStatus gj_cpu_info(GjCtx *c, GjCpuInfo *out);

/* LLVM's version string, and the newest sm_XY its NVPTX backend knows. */
const char *gj_llvm_version(void);
int gj_nvptx_max_sm(void);

#endif
