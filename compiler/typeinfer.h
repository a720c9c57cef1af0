/*
 * typeinfer.h - what typeinfer.c (the sweep over a function's blocks, and
 * the types of operators, attributes and indexing) and typecall.c (the
 * types of calls: intrinsics, device functions, iterators) share.  Private
 * to those two files; gj_infer_func in ir.h is the stage's interface.
 */
#ifndef GJ_TYPEINFER_H
#define GJ_TYPEINFER_H

#include "ir.h"

enum { GJ_MAX_NDIM_INDEX = 32 };   /* axes an indexed array may have */

typedef struct Infer {
    GjCtx *c;
    GjFunc *f;
    const GjIns **defs;   /* defining instruction of each temp (constant operands) */
    char *reachable;      /* per block */
    int report;           /* the final sweep: record diagnostics */
    int changed;          /* a variable's type changed during this sweep */
} Infer;

/* ---- typeinfer.c ---- */

/* Records a diagnostic in the final sweep; returns NULL (no type) always. */
const GjType *gj_infer_fail(Infer *in, GjDiagKind kind, GjLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The type of argument k of instruction ins. */
const GjType *gj_infer_arg_type(const Infer *in, const GjIns *ins, int k);
/* The value of a temp defined in this block by an integer constant or a
   frozen integer global; 0 if it is not one. */
int gj_infer_const_int(const Infer *in, int32_t temp, int64_t *value);
int gj_infer_is_int_or_bool(const GjType *t);
int gj_infer_is_complex(const GjType *t);
const GjType *gj_infer_binop_type(Infer *in, GjBinop op, const GjType *a, const GjType *b,
                                  GjLoc loc);
const GjType *gj_infer_unop_type(Infer *in, GjUnop op, const GjType *a, GjLoc loc);
const GjType *gj_infer_compare_type(Infer *in, GjCmp op, const GjType *a, const GjType *b,
                                    GjLoc loc);
/* The real type of a complex t (complex64 -> float32), else t. */
const GjType *gj_infer_real_part_type(const GjType *t);
/* The type tuple(int64 x n) (shape, strides, grid(n)). */
const GjType *gj_infer_int64_tuple(Infer *in, int n);
/* arr[idx]: an element, or a view when idx holds slices. */
const GjType *gj_infer_array_index_type(Infer *in, const GjType *arr, const GjType *idx, GjLoc loc);
/* The one type every element of tuple t unifies to, or NULL. */
const GjType *gj_infer_tuple_element_type(Infer *in, const GjType *t);

/* ---- typecall.c ---- */

/* An intrinsic's Python name, builtins bare ("range", "math.sqrt"). */
const char *gj_infer_fn_name(int id);
/* The type of a CALL of callee (an intrinsic or a device function); moves
   keyword arguments of intrinsics to their positions. */
const GjType *gj_infer_call_type(Infer *in, GjIns *ins, const GjType *callee);
/* The value an iterator of type it yields. */
const GjType *gj_infer_iter_value_type(Infer *in, const GjType *it);
/* The type of iterator op ins (ITER_VALID, ITER_VALUE, ITER_NEXT) on it. */
const GjType *gj_infer_iter_type(Infer *in, const GjIns *ins, const GjType *it);

#endif
