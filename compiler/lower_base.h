/*
 * lower_base.h - the base layer of lowering: the lowering state (GjLower),
 * how values look in LLVM, and the builder helpers, constants, casts and
 * floating-point flags that every lowering file uses and none rewrites.
 *
 * Values: bool is i1 (i8 only in memory and kernel parameters), integers
 * iN, floats half/float/double, complex a struct {re, im}, arrays {ptr
 * data (the target's global or constant space), [n x i64] shape, strides},
 * range iterators {cur, left, step, stop}, tuples literal structs, and
 * compile-time objects (modules, callables, dim3, None) an empty struct.
 *
 * Layers, each including only headers below its own: this base (and
 * target.h); lower_error.h, lower_cmath.h; lower_ops.h, lower_array.h; the
 * intrinsic families (lower_thread.h, lower_math.h, ...); lower.c's walk.
 */
#ifndef GJ_LOWER_BASE_H
#define GJ_LOWER_BASE_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "compile.h"
#include "intrinsics.h"
#include "ir.h"
#include "target.h"

/* The numeric class that decides which LLVM instruction an operation uses;
   one entry covers every width (int8..int64 are all GJ_NC_SINT). */
typedef enum GjNumClass {
    GJ_NC_BOOL,    /* i1 */
    GJ_NC_SINT,    /* signed iN */
    GJ_NC_UINT,    /* unsigned iN */
    GJ_NC_FLOAT,   /* half, float, double */
    GJ_NC_COMPLEX, /* {float, float}, {double, double} */
    GJ_NC_OTHER,   /* not a number: arrays, tuples, compile-time objects */
} GjNumClass;

typedef struct GjLower {
    GjCtx *c;
    GjFunc *f;
    const GjCompileOptions *opt;
    const GjTarget *target;       /* everything machine-specific (target.h) */
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn;              /* the kernel */
    LLVMBasicBlockRef *bbs;       /* per GjBlock; NULL for unreachable blocks */
    LLVMValueRef *vars;           /* alloca per GjVar; NULL if the var has no type */
    LLVMValueRef *assigned;       /* debug: an i1 alloca per maybe-unassigned GjVar, set by
                                     its stores (else NULL) */
    struct GjErrorSites *errors;  /* the module's run-time checks (lower_error.h) */
    LLVMValueRef *temps;          /* per temp; valid in the defining block */
    GjLoc loc;                    /* instruction being lowered, for diagnostics */
    LLVMTypeRef i1, i8, i32, i64, ptr_global, empty;
    LLVMTypeRef ptr_const;        /* constant memory: data of readonly (frozen) arrays */
    LLVMDIBuilderRef dib;         /* lineinfo only, else NULL; one per module */
    LLVMMetadataRef subprogram;
    GjSpec *spec;                 /* the device function being lowered; NULL for the
                                     compile's own function (kernel, or device=True) */
    int status_ret;               /* spec may end the thread: it returns {value, i1 ended}
                                     (i1 alone for None), which its callers test */
    LLVMValueRef thread[GJ_THREAD_PARAMS];   /* the thread's context (target.h's
                                                thread_params): the CPU's GjCpuThread *
                                                and threadIdx.x/y/z */
    int needs_fibers;             /* the kernel synchronises its block (barrier, warp op) */
    int prints;                   /* the kernel calls print */
    uint64_t local_bytes;         /* local arrays, this function's and its callees' */
    int dynamic_shared;           /* it uses dynamic shared memory (shared.array(0, ...)) */
    LLVMBasicBlockRef bounds_fail;   /* boundscheck: fn's block that reports a failed */
    LLVMValueRef bounds_phi[3];      /* index, from these phis of site, index, extent */
    LLVMValueRef iter_valid;      /* boundscheck: the last ITER_VALID lowered with facts, */
    LLVMValueRef iter_facts;      /* and its gj_lower_iter_facts, assumed where it branches */
} GjLower;

/* One call of an intrinsic, as lower.c hands it to the row's lowering
   function (lower.c's table, from intrinsics.h's rows): arguments in
   positional order, keyword arguments already placed by the row's
   parameter names.  Nothing else dispatches on which intrinsic it is. */
typedef struct GjIntrCall {
    GjIntrinsic id;
    const GjIntrinsicRow *row;
    LLVMValueRef *v;         /* v[0] is the first argument (not the callee); for a
                                method, the receiver comes first */
    const GjType **t;
    int n;
    const GjType *rt;        /* the call's type (typeinfer.c) */
    const char *subject;     /* under boundscheck, what the first argument names for an
                                IndexError ("array 'a'": atomics); else NULL */
} GjIntrCall;

/* Lowers one call; returns the value, or NULL with a LOWERING diagnostic. */
typedef LLVMValueRef (*GjIntrLowerFn)(GjLower *L, const GjIntrCall *call);

/* ---- diagnostics and the builder ---- */

/* Records a LOWERING diagnostic at L->loc; returns NULL ("no value"). */
LLVMValueRef gj_lower_fail(GjLower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An alloca in the function's entry block: SROA can promote it, and one in a
   loop does not grow the stack. */
LLVMValueRef gj_lower_entry_alloca(GjLower *L, LLVMTypeRef ty);
/* The LLVM return type of the function being lowered. */
LLVMTypeRef gj_lower_return_type(GjLower *L);
/* Ends the thread where the builder is (a raise, a failed bounds check):
   the kernel returns; a device function returns with its `ended` flag set
   (status_ret), and every caller ends in turn.  The block is terminated. */
void gj_lower_end_thread(GjLower *L);
LLVMValueRef gj_lower_sel(GjLower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_icmp(GjLower *L, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_fcmp(GjLower *L, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b);

/* ---- constants ---- */

LLVMValueRef gj_lower_i64(GjLower *L, long long v);   /* an i64 constant */
/* Constants of the type of value `like`. */
LLVMValueRef gj_lower_iconst(LLVMValueRef like, long long v);
LLVMValueRef gj_lower_fconst(LLVMValueRef like, double v);
/* A new constant global `name` in the target's constant memory holding the
   n bytes at data (an i8 array, as gj_lower_const_bytes counts them),
   unnamed_addr, with the given linkage and alignment. */
LLVMValueRef gj_lower_const_global(GjLower *L, const char *name, const char *data, size_t n,
                                   LLVMLinkage linkage, unsigned align);

/* ---- types and casts ---- */

GjNumClass gj_lower_class(const GjType *t);
/* The LLVM type of values of t (weak literals materialised); NULL if t has none. */
LLVMTypeRef gj_lower_type(GjLower *L, const GjType *t);
/* The pointer type of array type t's data: its address space on the target. */
LLVMTypeRef gj_lower_data_ptr(GjLower *L, const GjType *t);
/* Converts v from type `from` to type `to` (scalars by class and width;
   equal types unchanged); records a LOWERING diag and returns NULL if impossible. */
LLVMValueRef gj_lower_cast(GjLower *L, LLVMValueRef v, const GjType *from, const GjType *to);
/* Python truth of a scalar as i1. */
LLVMValueRef gj_lower_truth(GjLower *L, LLVMValueRef v, const GjType *t);

/* ---- parts of values ---- */

/* Complex values: parts of z, and a complex of z's part type from parts;
   the float type of complex type t's parts (complex64 -> float32). */
LLVMValueRef gj_lower_re(GjLower *L, LLVMValueRef z);
LLVMValueRef gj_lower_im(GjLower *L, LLVMValueRef z);
LLVMValueRef gj_lower_complex(GjLower *L, LLVMValueRef re, LLVMValueRef im);
const GjType *gj_lower_part_type(const GjType *t);
/* Field `field` (1 shape, 2 strides) of axis k of array value arr, an i64. */
LLVMValueRef gj_lower_array_dim(GjLower *L, LLVMValueRef arr, unsigned field, int k);
/* Index i (i64) of an axis or tuple of n items, a negative one counted from
   the end: i < 0 ? i + n : i. */
LLVMValueRef gj_lower_wrap_index(GjLower *L, LLVMValueRef i, LLVMValueRef n);

/* ---- floating point ---- */

/* Floating-point flags, on v when it is an instruction that takes them;
   return v.  gj_lower_fast: the LLVM flags of opt->fastmath (division,
   comparisons, math functions, and the library code written here: cmath,
   pow).  gj_lower_arith: the same plus `contract` when opt->contract, for
   the + - * (and negation) a kernel writes, real or complex. */
LLVMValueRef gj_lower_fast(GjLower *L, LLVMValueRef v);
LLVMValueRef gj_lower_arith(GjLower *L, LLVMValueRef v);
/* Library code's a + b, a - b, a * b, -a (gj_lower_fast's flags). */
LLVMValueRef gj_lower_fadd(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_fsub(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_fmul(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_fneg(GjLower *L, LLVMValueRef a);
/* The kernel's own float a + b, a - b, a * b, real or the parts of complex
   ones (gj_lower_arith's flags: they may contract). */
LLVMValueRef gj_lower_arith_fadd(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_arith_fsub(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_arith_fmul(GjLower *L, LLVMValueRef a, LLVMValueRef b);
/* The target's approximate instruction for float32 op (target.h) when
   opt->fastmath allows it (arcp: division, afn: sqrt and tanh); else NULL,
   and the caller emits the accurate operation. */
LLVMValueRef gj_lower_approx(GjLower *L, GjApprox op, LLVMValueRef *args);
/* Float a / b and sqrt(a): IEEE (correctly rounded), or gj_lower_approx's. */
LLVMValueRef gj_lower_fdiv(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_sqrt(GjLower *L, LLVMValueRef a);

/* ---- calls ---- */

/* A call of LLVM intrinsic `name`, overloaded on `overload` unless NULL. */
LLVMValueRef gj_lower_call_intrinsic(GjLower *L, const char *name, LLVMTypeRef overload,
                                     LLVMValueRef *args, unsigned nargs);
/* llvm.<name> (sqrt, fabs, floor, ceil, trunc) on a float value; fabs and
   copysign by name. */
LLVMValueRef gj_lower_float_intrinsic(GjLower *L, const char *name, LLVMValueRef a);
LLVMValueRef gj_lower_fabs(GjLower *L, LLVMValueRef a);
LLVMValueRef gj_lower_copysign(GjLower *L, LLVMValueRef mag, LLVMValueRef sign);
/* The math library's <base> (libdevice's __nv_<base> / __nv_<base>f on
   NVPTX, libm's on the host: target.h) on args whose first is a float; the
   one place that names a math library function.  math1/math2: of one or
   two arguments. */
LLVMValueRef gj_lower_libdevice(GjLower *L, const char *base, LLVMValueRef *args, unsigned nargs);
LLVMValueRef gj_lower_math1(GjLower *L, const char *base, LLVMValueRef x);
LLVMValueRef gj_lower_math2(GjLower *L, const char *base, LLVMValueRef x, LLVMValueRef y);

#endif
