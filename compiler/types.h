/*
 * types.h - gpujit's type system and NumPy 2 (NEP 50) promotion.
 *
 * Scalar types are static singletons (gj_ty_int32, ...); arrays, tuples and
 * other composite types are interned in the compilation's GjTypes table, so
 * type equality is pointer equality everywhere.
 *
 * Python int/float/complex literals are *weak* (GJ_TK_WEAK_*): they take the
 * kind of a strong operand (x * 2.0 stays float32 for float32 x, i + 1 stays
 * int32) and default to int64/float64/complex128 when nothing else decides.
 * gj_ty_promote() is the one place that encodes the promotion table; the
 * constant folder and type inference both use it.
 */
#ifndef GJ_TYPES_H
#define GJ_TYPES_H

#include "gj.h"

struct GjCallee;

typedef enum GjTypeKind {
    GJ_TK_NONE,        /* Python None; a kernel's return type */
    GJ_TK_BOOL,        /* numpy bool_ */
    GJ_TK_INT,         /* signed integer of `bits` */
    GJ_TK_UINT,        /* unsigned integer of `bits` */
    GJ_TK_FLOAT,       /* IEEE binary of `bits` (16, 32, 64) */
    GJ_TK_COMPLEX,     /* pair of floats; `bits` is the whole width (64, 128) */
    GJ_TK_WEAK_INT,    /* Python int literal, not yet given a width */
    GJ_TK_WEAK_FLOAT,  /* Python float literal */
    GJ_TK_WEAK_COMPLEX,/* Python complex literal */
    GJ_TK_ARRAY,       /* dtype, ndim, layout */
    GJ_TK_TUPLE,       /* n elems */
    GJ_TK_RANGE_ITER,  /* range iterator over elems[0] (an integer type) */
    GJ_TK_DIM3,        /* threadIdx/blockIdx/blockDim/gridDim; intrinsic says which */
    GJ_TK_MODULE,      /* a module object: name */
    GJ_TK_CALLABLE,    /* a compile-time callable (builtin, intrinsic): intrinsic */
    GJ_TK_SLICE,       /* start:stop:step; elems[3] each none (omitted) or an integer */
    GJ_TK_TUPLE_ITER,  /* iterator over tuple elems[1], yielding elems[0] */
    GJ_TK_STR,         /* a str constant (an argument of print): its characters are text */
    GJ_TK_ARRAY_ITER,  /* iterator over the first axis of array elems[1], yielding elems[0] */
    GJ_TK_ZIP_ITER,    /* zip/enumerate: n iterators elems[] advanced together, yielding
                          the tuple of their values (enumerate: a range_iter first) */
} GjTypeKind;

typedef enum GjLayout {
    GJ_LAYOUT_C = 'C',   /* C-contiguous: last stride = itemsize */
    GJ_LAYOUT_F = 'F',   /* Fortran-contiguous */
    GJ_LAYOUT_A = 'A',   /* any strides */
} GjLayout;

/* Where an array's data lives.  Kernel parameters are global; frozen
   module-level arrays are constant (and cannot be stored to). */
typedef enum GjAddrSpace {
    GJ_AS_GLOBAL,     /* device memory: kernel parameters (the zero value) */
    GJ_AS_SHARED,     /* per-block shared memory */
    GJ_AS_LOCAL,      /* per-thread memory */
    GJ_AS_CONST,      /* constant memory: read-only in kernels */
    GJ_NADDRSPACES
} GjAddrSpace;

typedef struct GjType GjType;
struct GjType {
    GjTypeKind kind;
    int bits;                 /* scalars */
    const char *name;         /* "float32", "array(float32, 1d, C)", "gpujit" */
    const GjType *dtype;      /* ARRAY */
    int ndim;                 /* ARRAY */
    GjLayout layout;          /* ARRAY */
    int n;                    /* TUPLE */
    const GjType **elems;     /* TUPLE; RANGE_ITER: elems[0] */
    int intrinsic;            /* DIM3, CALLABLE: a GjIntrinsic (intrinsics.h) */
    GjAddrSpace addrspace;    /* ARRAY: where its data lives */
    const struct GjCallee *callee;   /* CALLABLE: a @gpujit.jit function (then
                                        intrinsic is -1), else NULL */
    const char *text;         /* STR: the constant, NUL-terminated (a literal type,
                                 as numba's StringLiteral: no value at run time) */
};

extern const GjType gj_ty_none, gj_ty_bool, gj_ty_int8, gj_ty_int16, gj_ty_int32, gj_ty_int64,
    gj_ty_uint8, gj_ty_uint16, gj_ty_uint32, gj_ty_uint64, gj_ty_float16, gj_ty_float32,
    gj_ty_float64, gj_ty_complex64, gj_ty_complex128, gj_ty_weak_int, gj_ty_weak_float,
    gj_ty_weak_complex;

/* Creates the per-compilation intern table in c->arena (sets c->types). */
void gj_ty_init(GjCtx *c);

const GjType *gj_ty_array(GjCtx *c, const GjType *dtype, int ndim, GjLayout layout);
const GjType *gj_ty_tuple(GjCtx *c, const GjType *const *elems, int n);
const GjType *gj_ty_range_iter(GjCtx *c, const GjType *int_type);
/* A slice's type: each part is &gj_ty_none (omitted) or an integer type. */
const GjType *gj_ty_slice(GjCtx *c, const GjType *start, const GjType *stop, const GjType *step);
const GjType *gj_ty_tuple_iter(GjCtx *c, const GjType *tuple, const GjType *elem);
const GjType *gj_ty_array_iter(GjCtx *c, const GjType *array, const GjType *elem);
const GjType *gj_ty_zip_iter(GjCtx *c, const GjType *const *iters, int n);
const GjType *gj_ty_dim3(GjCtx *c, int intrinsic);
const GjType *gj_ty_module(GjCtx *c, const char *name);
const GjType *gj_ty_callable(GjCtx *c, int intrinsic);
/* The type of the str constant `text`, named "str". */
const GjType *gj_ty_str(GjCtx *c, const char *text);
/* The twin of array type t in address space as ("readonly array(...)" for
   constant memory, "shared array(...)", "local array(...)"). */
const GjType *gj_ty_array_in(GjCtx *c, const GjType *t, GjAddrSpace as);
/* The type of a @gpujit.jit function called from a kernel, "function(name)". */
const GjType *gj_ty_function(GjCtx *c, const struct GjCallee *callee, const char *name);

/* Scalar type from a NumPy dtype character code / name ("f4", "float32",
   "int64", "bool"); NULL if gpujit has no such type. */
const GjType *gj_ty_from_name(const char *name);

int gj_ty_is_scalar(const GjType *t);     /* bool, int, uint, float, complex, weak */
int gj_ty_is_integer(const GjType *t);    /* int, uint, weak int (not bool) */
int gj_ty_is_float(const GjType *t);      /* float, weak float */
int gj_ty_is_weak(const GjType *t);
size_t gj_ty_itemsize(const GjType *t);   /* bytes of a scalar */

/* The integer type of `bits` (8, 16, 32; anything else: 64), signed or not. */
const GjType *gj_ty_int(int bits, int is_signed);

/* The strong type a weak literal becomes on its own (int64, float64, complex128);
   other types are returned unchanged. */
const GjType *gj_ty_concrete(const GjType *t);

/* NumPy 2 result type of a binary arithmetic operation on scalars a and b
   (weak literals per NEP 50); NULL if they do not promote (not scalars). */
const GjType *gj_ty_promote(const GjType *a, const GjType *b);

/* The type a variable has after being assigned both a and b (same rule as
   gj_ty_promote for scalars, identity for equal non-scalars); NULL if the
   two cannot share a variable (array vs scalar). */
const GjType *gj_ty_unify(const GjType *a, const GjType *b);

/* Dimensions an array in a signature (a kernel's argument) may have. */
enum { GJ_TY_MAX_NDIM = 8 };

/* Parses a numba-style signature "void(float32[:], float32[:, ::1], int64)"
   or "(float32[:], int64)".  On success sets *args (arena array), *nargs,
   *ret (NULL when the string names no return type). Records a TYPING diag
   and returns GJ_ERR on a malformed string. */
GjStatus gj_ty_parse_signature(GjCtx *c, const char *sig, const GjType ***args, int *nargs,
                               const GjType **ret);

#endif
