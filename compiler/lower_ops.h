/*
 * lower_ops.h - what lower.c (the walk over the IR: kernel signature,
 * variables, blocks, arrays, calls) shares with lower_ops.c (Python's
 * numeric semantics on LLVM values: casts, operators, comparisons, math).
 * Private to lowering; the rest of the compiler uses lower.h.
 *
 * Values follow one representation everywhere: bool is i1 (i8 only in
 * memory and kernel parameters), integers iN, floats half/float/double,
 * complex numbers a literal struct {re, im} of float or double,
 * arrays {ptr addrspace(target's global) data, [n x i64] shape, [n x i64] strides}
 * (the target's constant address space for readonly arrays: frozen globals),
 * range iterators {cur, stop, step}, tuples literal structs, compile-time
 * objects (modules, callables, dim3, None) an empty struct.
 */
#ifndef GJ_LOWER_OPS_H
#define GJ_LOWER_OPS_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "ir.h"
#include "compile.h"
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

/* The error sites of a module, in index order (lower_error.c). */
typedef struct GjErrorSiteIR {
    GjErrorKind kind;
    int axis;                     /* GJ_ERROR_INDEX */
    int unsigned_index;           /* GjErrorSite.unsigned_index */
    const char *message;          /* in the arena */
    const char *exception;        /* GJ_ERROR_RAISE: "module:qualname"; else NULL */
} GjErrorSiteIR;

/* One index of an access, for gj_lower_check_bounds (i64 values). */
typedef struct GjIndexCheck {
    LLVMValueRef index;           /* as written (reported) */
    LLVMValueRef wrapped;         /* a negative one plus the extent (checked) */
    LLVMValueRef extent;
    int axis;
    int is_unsigned;              /* of an unsigned type: reported as a uint64 */
} GjIndexCheck;

typedef struct GjErrorSites {
    GjErrorSiteIR *sites;
    int32_t n, cap;
} GjErrorSites;

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
    GjErrorSites *errors;         /* the module's run-time checks (lower_error.c) */
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

/* ---- lower.c ---- */

/* Records a LOWERING diagnostic at L->loc; returns NULL ("no value"). */
LLVMValueRef gj_lower_fail(GjLower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
LLVMValueRef gj_lower_i64(GjLower *L, long long v);   /* an i64 constant */
/* An alloca in the function's entry block: SROA can promote it, and one in a
   loop does not grow the stack. */
LLVMValueRef gj_lower_entry_alloca(GjLower *L, LLVMTypeRef ty);
/* Ends the thread where the builder is (a raise, a failed bounds check):
   the kernel returns; a device function returns with its `ended` flag set
   (status_ret), and every caller ends in turn.  The block is terminated. */
void gj_lower_end_thread(GjLower *L);

/* ---- lower_error.c ---- */

/* A new error site at L->loc: its kind, the exception class of a raise
   ("module:qualname", else NULL), the axis of an index, and the printf-style
   text that the message ends with (then the file and line); its index, or
   -1 with a diag. */
int32_t gj_lower_error_site(GjLower *L, GjErrorKind kind, const char *exception, int axis,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Records site with values a and b (i64, or NULL for 0) in the error record,
   unless another thread came first; the builder goes on in a new block. */
GjStatus gj_lower_report(GjLower *L, int32_t site, LLVMValueRef a, LLVMValueRef b);
/* br ok, then, unlikely, with weights that lay the unlikely block out of line. */
void gj_lower_branch_unlikely(GjLower *L, LLVMValueRef ok, LLVMBasicBlockRef then,
                              LLVMBasicBlockRef unlikely);
/* A run-time check at L->loc (debug builds): where `ok` (i1) is false, the
   thread records error site (kind, the printf-style message) with values a
   and b (i64, or NULL for 0) in the error record, unless another thread
   came first; both paths go on in a new block, where the builder is left. */
GjStatus gj_lower_check(GjLower *L, LLVMValueRef ok, GjErrorKind kind, LLVMValueRef a,
                        LLVMValueRef b, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Index i (i64) of an axis or tuple of n items, a negative one counted from
   the end: i < 0 ? i + n : i. */
LLVMValueRef gj_lower_wrap_index(GjLower *L, LLVMValueRef i, LLVMValueRef n);
/* boundscheck: the thread goes on (in a new block) where each of the n
   indices is in [0, extent) after wrapping; where one is not, it reports a
   site of `kind` (GJ_ERROR_INDEX, GJ_ERROR_TUPLE_INDEX) for the first such
   axis, naming `subject` ("array 'a'"), and ends (gj_lower_end_thread). */
GjStatus gj_lower_check_bounds(GjLower *L, const char *subject, GjErrorKind kind, int n,
                               const GjIndexCheck *ix);
/* Copies the module's sites into plan (malloc-owned). */
GjStatus gj_lower_error_sites(GjLower *L, GjCompileResult *plan);

/* ---- lower_array.c ---- */

/* Field `field` (1 shape, 2 strides) of axis k of array value arr. */
LLVMValueRef gj_lower_array_dim(GjLower *L, LLVMValueRef arr, unsigned field, int k);
LLVMValueRef gj_lower_array_size(GjLower *L, LLVMValueRef arr, const GjType *at);
/* arr.shape or arr.strides (field 1 or 2) as a value of tuple_ty. */
LLVMValueRef gj_lower_array_dims_tuple(GjLower *L, LLVMValueRef arr, const GjType *at,
                                       unsigned field, LLVMTypeRef tuple_ty);
/* Element accesses.  `subject` names the array for an IndexError
   ("array 'a'"): under boundscheck each index is checked against its axis
   (gj_lower_check_bounds), so the builder may end in a new block; NULL
   where the index is in bounds by construction (an iterator's) or nothing
   is checked (lower.c's access_subject). */
/* The address of arr[idx] (an integer, or a tuple of one per axis), in
   the address space of at's data. */
LLVMValueRef gj_lower_element_ptr(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                  const GjType *it, const char *subject);
/* arr[idx] (an integer, or a tuple of one per axis), in the dtype's value form. */
LLVMValueRef gj_lower_load_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                   const GjType *it, const char *subject);
/* arr[idx] = v, v cast to the dtype. */
GjStatus gj_lower_store_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                const GjType *it, LLVMValueRef v, const GjType *vt,
                                const char *subject);
/* arr[idx] as a view of type rt (integers fix axes, and are checked; slices
   keep them, clamped as Python clamps). */
LLVMValueRef gj_lower_array_view(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                 const GjType *it, const GjType *rt, const char *subject);
/* A frozen NumPy array as a readonly array value of type rt. */
LLVMValueRef gj_lower_const_array(GjLower *L, const GjConstArray *a, const GjType *rt);
/* The module's static shared memory in bytes (a 16-byte multiple), as an
   i64 that is constant once lowering ends: where the dynamic part starts. */
LLVMValueRef gj_lower_shared_static_total(GjLower *L);
/* After lowering: the static shared bytes, for the launch plan. */
uint64_t gj_lower_shared_finish(GjLower *L);
/* Bytes the module keeps in constant memory: frozen arrays, and the tables
   and strings lowering puts there (cmath's, print's), as i8 arrays. */
uint64_t gj_lower_const_bytes(GjLower *L);

/* ---- lower_ops.c ---- */

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

/* a <op> b with Python/NumPy semantics; operands are converted to rt, the
   result type inference chose. */
LLVMValueRef gj_lower_binop(GjLower *L, GjBinop op, LLVMValueRef a, const GjType *ta,
                            LLVMValueRef b, const GjType *tb, const GjType *rt);
LLVMValueRef gj_lower_unop(GjLower *L, GjUnop op, LLVMValueRef a, const GjType *ta,
                           const GjType *rt);
/* a <k> b compared in the promoted type of ta and tb; result i1. */
LLVMValueRef gj_lower_compare(GjLower *L, GjCmp k, LLVMValueRef a, const GjType *ta, LLVMValueRef b,
                              const GjType *tb);

/* Item i (an i64 in [-n, n)) of tuple tup of type tt, as rt (lower.c). */
LLVMValueRef gj_lower_tuple_item(GjLower *L, LLVMValueRef tup, const GjType *tt, LLVMValueRef i,
                                 const GjType *rt);

/* Builtins on values already converted to t. */
LLVMValueRef gj_lower_abs(GjLower *L, LLVMValueRef a, const GjType *t);
LLVMValueRef gj_lower_minmax(GjLower *L, int is_max, LLVMValueRef a, LLVMValueRef b,
                             const GjType *t);
/* llvm.<name> (sqrt, fabs, floor, ceil, trunc) on a float value. */
LLVMValueRef gj_lower_float_intrinsic(GjLower *L, const char *name, LLVMValueRef a);
/* A call of LLVM intrinsic `name`, overloaded on `overload` unless NULL. */
LLVMValueRef gj_lower_call_intrinsic(GjLower *L, const char *name, LLVMTypeRef overload,
                                     LLVMValueRef *args, unsigned nargs);
/* Floating-point flags, on v when it is an instruction that takes them;
   return v.  gj_lower_fast: the LLVM flags of opt->fastmath (division,
   comparisons, math functions, and the library code written here: cmath,
   pow).  gj_lower_arith: the same plus `contract` when opt->contract, for
   the + - * (and negation) a kernel writes, real or complex. */
LLVMValueRef gj_lower_fast(GjLower *L, LLVMValueRef v);
LLVMValueRef gj_lower_arith(GjLower *L, LLVMValueRef v);
/* The target's approximate instruction for float32 op (target.h) when
   opt->fastmath allows it (arcp: division, afn: sqrt and tanh); else NULL,
   and the caller emits the accurate operation. */
LLVMValueRef gj_lower_approx(GjLower *L, GjApprox op, LLVMValueRef *args);
/* Float a / b and sqrt(a): IEEE (correctly rounded), or gj_lower_approx's. */
LLVMValueRef gj_lower_fdiv(GjLower *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef gj_lower_sqrt(GjLower *L, LLVMValueRef a);
/* libdevice's __nv_<base> (double) / __nv_<base>f (float, and half through
   float) on args whose first is a float; the one place that names libdevice. */
LLVMValueRef gj_lower_libdevice(GjLower *L, const char *base, LLVMValueRef *args, unsigned nargs);

/* Complex values: parts of z, and a complex of complex type t from parts. */
LLVMValueRef gj_lower_re(GjLower *L, LLVMValueRef z);
LLVMValueRef gj_lower_im(GjLower *L, LLVMValueRef z);
LLVMValueRef gj_lower_complex(GjLower *L, LLVMValueRef re, LLVMValueRef im);
/* Complex a <op> b for + - * / **, parts already in one float type. */
LLVMValueRef gj_lower_complex_binop(GjLower *L, GjBinop op, LLVMValueRef a, LLVMValueRef b);

/* ---- lower_math.c ---- */

/* Float a ** b (both of one float type): the math library's pow, exact
   where b is an integer and the exact power is a float. */
LLVMValueRef gj_lower_float_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b);
/* Complex a ** b for b not a small constant (npy_cpow's special cases, else
   exp(b log a)). */
LLVMValueRef gj_lower_complex_pow(GjLower *L, LLVMValueRef a, LLVMValueRef b);

#endif
