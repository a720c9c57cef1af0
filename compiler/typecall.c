/*
 * typecall.c - the types of calls (part of the infer stage, typeinfer.h):
 * intrinsics by their row's typing rule (intrinsics.h: thread indexing,
 * math and cmath, NumPy scalar constructors, atomics, warp primitives,
 * print, memory spaces through typemem.c), keyword arguments moved to their
 * positions, device-function calls (specialised through devfunc.c), and the
 * iterators of `for` (range, tuples, arrays, zip, enumerate).
 *
 * Each function returns the call's type, or NULL after gj_infer_fail
 * (which records the error only in the final sweep).
 */
#include "typeinfer.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "intrinsics.h"
#include "typemem.h"

const char *gj_infer_fn_name(int id) {
    const char *name = gj_intrinsic_name((GjIntrinsic)id);
    return strncmp(name, "builtins.", 9) == 0 ? name + 9 : name;
}

/* Whether the call passes lo..hi arguments; records the error if not. */
static int expect_nargs(Infer *in, const GjIns *ins, int id, int lo, int hi) {
    int n = ins->nargs - 1;
    if (n >= lo && n <= hi)
        return 1;
    if (lo == hi)
        gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes %d argument%s, got %d",
                      gj_infer_fn_name(id), lo, lo == 1 ? "" : "s", n);
    else if (hi == INT_MAX)
        gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes at least %d arguments, got %d",
                      gj_infer_fn_name(id), lo, n);
    else
        gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes %d to %d arguments, got %d",
                      gj_infer_fn_name(id), lo, hi, n);
    return 0;
}

/* Promotes the scalar arguments of a call (or returns NULL with a message). */
static const GjType *promote_args(Infer *in, const GjIns *ins, int id, int want_int) {
    const GjType *p = NULL;
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t) || (want_int && !gj_ty_is_integer(t)))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() arguments must be %s, not %s",
                                 gj_infer_fn_name(id), want_int ? "integers" : "scalars", t->name);
        const GjType *q = p ? gj_ty_promote(p, t) : t;
        if (!q || (want_int && !gj_ty_is_integer(q)))
            return gj_infer_fail(
                in, GJ_DIAG_TYPING, ins->loc, "%s() arguments %s and %s have no common %s type",
                gj_infer_fn_name(id), p->name, t->name, want_int ? "integer" : "scalar");
        p = q;
    }
    return p;
}

/* grid(n) / gridsize(n): n must be the constant 1, 2 or 3. */
static const GjType *grid_type(Infer *in, const GjIns *ins, int id) {
    int64_t ndim;
    if (!expect_nargs(in, ins, id, 1, 1))
        return NULL;
    if (!gj_infer_const_int(in, ins->args[1], &ndim) || ndim < 1 || ndim > 3)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes the constant 1, 2 or 3",
                             gj_infer_fn_name(id));
    return ndim == 1 ? &gj_ty_int64 : gj_infer_int64_tuple(in, (int)ndim);
}

/* The real type holding |z| for a complex z, else t. */
static const GjType *abs_type(const GjType *t) { return gj_infer_real_part_type(t); }

/* ---- math, numpy and cmath functions ----------------------------------- */

/* The float type a math function of real argument t computes in.  math:
   a float keeps its type ("float32 in gives float32 out", float16 too), a
   literal stays a literal, other integers and bool give float64.  numpy: the
   ufunc loop NumPy picks (int8 -> float16, int16 -> float32, int64 ->
   float64). */
static const GjType *float_result(GjMathNs ns, const GjType *t) {
    if (ns == GJ_NS_NUMPY) {
        t = gj_ty_concrete(t);
        return gj_ty_is_float(t) ? t : gj_ty_promote(t, &gj_ty_float16);
    }
    if (gj_ty_is_float(t))
        return t;
    return t->kind == GJ_TK_WEAK_INT ? &gj_ty_weak_float : &gj_ty_float64;
}

/* The complex type of the same precision as t (float32 -> complex64). */
static const GjType *complex_of(const GjType *t) {
    if (gj_infer_is_complex(t))
        return t;
    if (gj_ty_is_weak(t))
        return &gj_ty_weak_complex;
    if (t->kind == GJ_TK_FLOAT && t->bits <= 32)
        return &gj_ty_complex64;
    return &gj_ty_complex128;
}

static const GjType *math_call_type(Infer *in, const GjIns *ins, int id) {
    GjMathNs ns;
    GjMathFn fn = (GjMathFn)gj_intrinsic_math_fn((GjIntrinsic)id, &ns);
    int n = gj_math_nargs(fn);
    if (!expect_nargs(in, ins, id, n, n))
        return NULL;
    /* t: the arguments' promotion; ft: their float types' promotion, the
       loop NumPy's ufuncs pick, which casts each argument safely on its
       own (np.copysign(uint8, int8) is float16, where int16 would give
       float32).  A literal stays weak in ft, to follow the other's type;
       outside numpy, ft is t. */
    const GjType *t = NULL, *ft = NULL;
    int any_complex = 0;
    for (int k = 1; k <= n; k++) {
        const GjType *a = gj_infer_arg_type(in, ins, k);
        if (!gj_ty_is_scalar(a))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a number, not %s",
                                 gj_infer_fn_name(id), a->name);
        any_complex |= gj_infer_is_complex(a);
        if (gj_math_kind(fn) == GJ_MK_LDEXP && k == 2) {
            if (!gj_ty_is_integer(a) && a->kind != GJ_TK_BOOL)
                return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                     "%s() needs an integer exponent, not %s", gj_infer_fn_name(id),
                                     a->name);
            continue;
        }
        t = t ? gj_ty_promote(t, a) : a;
        const GjType *fa = ns == GJ_NS_NUMPY && !gj_ty_is_weak(a) ? float_result(ns, a) : a;
        ft = ft ? gj_ty_promote(ft, fa) : fa;
    }
    if (any_complex && ns == GJ_NS_MATH)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "%s() needs a real number, not %s; use cmath for complex numbers",
                             gj_infer_fn_name(id), t->name);
    if (any_complex && !gj_math_has_complex(fn))
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s() of %s is not supported",
                             gj_infer_fn_name(id), t->name);
    if (ns == GJ_NS_CMATH || any_complex) {
        if (gj_math_kind(fn) == GJ_MK_PRED)
            return &gj_ty_bool;
        return complex_of(ns == GJ_NS_NUMPY ? gj_ty_concrete(t) : t);
    }
    switch (gj_math_kind(fn)) {
    case GJ_MK_FLOAT:
        if (fn == GJ_MF_FMOD && ns == GJ_NS_NUMPY && gj_infer_is_int_or_bool(gj_ty_concrete(t)))
            /* np.fmod of integers is C's %: the integer type (bool, bool: int8) */
            return t->kind == GJ_TK_BOOL ? &gj_ty_int8 : gj_ty_concrete(t);
        return float_result(ns, ft);
    case GJ_MK_ROUND:   /* math.floor -> int64; np.floor keeps the dtype (NumPy 2) */
        if (ns == GJ_NS_MATH)
            return &gj_ty_int64;
        if (fn == GJ_MF_RINT)   /* but np.rint of an integer is a float, as np.sqrt's */
            return float_result(ns, ft);
        return gj_ty_concrete(t);
    case GJ_MK_PRED: return &gj_ty_bool;
    case GJ_MK_POW:   /* math.pow is a float function; numpy.power is ** */
        if (ns == GJ_NS_MATH)
            return float_result(ns, t);
        return gj_infer_binop_type(in, GJ_BIN_POW, gj_infer_arg_type(in, ins, 1),
                                   gj_infer_arg_type(in, ins, 2), ins->loc);
    case GJ_MK_FREXP: {   /* math: (float, int); numpy: (float, int32) */
        const GjType *elems[2] = {gj_ty_concrete(float_result(ns, ft)),
                                  ns == GJ_NS_MATH ? &gj_ty_int64 : &gj_ty_int32};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_MK_LDEXP: return float_result(ns, ft);
    }
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown math function %d", (int)fn);
}

/* round(x) -> int64 (half to even); round(x, ndigits) keeps x's type, as
   NumPy scalars' __round__ does. */
static const GjType *round_type(Infer *in, const GjIns *ins, int id) {
    if (!expect_nargs(in, ins, id, 1, 2))
        return NULL;
    const GjType *t = gj_infer_arg_type(in, ins, 1);
    if (!gj_ty_is_scalar(t) || gj_infer_is_complex(t))
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "round() needs a real number, not %s",
                             t->name);
    if (ins->nargs == 2)
        return &gj_ty_int64;
    const GjType *nd = gj_infer_arg_type(in, ins, 2);
    if (!gj_ty_is_integer(nd))
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "round() needs an integer ndigits, not %s", nd->name);
    if (t->kind == GJ_TK_BOOL)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "round() of bool with ndigits is not supported");
    return gj_ty_concrete(t);
}

/* complex(re[, im]): Python's complex, complex128. */
static const GjType *complex_ctor_type(Infer *in, const GjIns *ins, int id) {
    if (!expect_nargs(in, ins, id, 1, 2))
        return NULL;
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "complex() needs numbers, not %s",
                                 t->name);
    }
    return &gj_ty_complex128;
}

/* np.float32(x), np.int8(x), ...: x converted to that dtype; the complex
   types also take (re, im), as complex() does (their rows' max_args). */
static const GjType *np_type_call(Infer *in, const GjIns *ins, int id) {
    const GjType *to = gj_ty_from_name(gj_intrinsic_np_type((GjIntrinsic)id));
    if (!to || !expect_nargs(in, ins, id, 1, gj_intrinsic_row((GjIntrinsic)id)->max_args))
        return to ? NULL : gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown NumPy type");
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a number, not %s",
                                 gj_infer_fn_name(id), t->name);
        if (gj_infer_is_complex(t) && !gj_infer_is_complex(to))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "cannot convert %s to %s", t->name,
                                 to->name);
    }
    return to;
}

/* print(*values): each a real number, bool, None or str constant
   (lower_print.c formats them). */
static const GjType *print_type(Infer *in, const GjIns *ins, int id) {
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (gj_infer_is_complex(t))
            return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                                 "%s() of %s (argument %d) is not supported; print .real and .imag",
                                 gj_infer_fn_name(id), gj_ty_concrete(t)->name, k);
        if (!gj_ty_is_scalar(t) && t->kind != GJ_TK_STR && t->kind != GJ_TK_NONE)
            return gj_infer_fail(
                in, GJ_DIAG_TYPING, ins->loc,
                "%s() cannot print argument %d (%s): it prints numbers, bools, None "
                "and str constants",
                gj_infer_fn_name(id), k, t->name);
    }
    return &gj_ty_none;
}

/* The receiver of a method call: x in x.conjugate(), the object of the
   GETATTR that defined the callee. */
static const GjType *receiver_type(Infer *in, const GjIns *ins) {
    const GjIns *def = in->defs[ins->args[0]];
    if (!def || def->op != GJ_OP_GETATTR)
        return NULL;
    return gj_infer_arg_type(in, def, 0);
}

/* An atomic (ary, idx, operands...): ary a writable array whose dtype the
   row accepts (the GJ_AT_* bits of its sub), idx one element of it, the
   operands real scalars (they convert to the dtype); -> the dtype. */
static const GjType *atomic_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    static const struct {
        const GjType *t;
        int bit;
    } dtypes[] = {
        {&gj_ty_int32, GJ_AT_INT32},     {&gj_ty_int64, GJ_AT_INT64},
        {&gj_ty_uint32, GJ_AT_UINT32},   {&gj_ty_uint64, GJ_AT_UINT64},
        {&gj_ty_float16, GJ_AT_FLOAT16}, {&gj_ty_float32, GJ_AT_FLOAT32},
        {&gj_ty_float64, GJ_AT_FLOAT64},
    };
    const GjType *t = gj_infer_arg_type(in, ins, 1);
    if (t->kind != GJ_TK_ARRAY)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs an array, not %s",
                             gj_infer_fn_name(id), t->name);
    if (t->addrspace == GJ_AS_CONST)
        return gj_infer_fail(
            in, GJ_DIAG_TYPING, ins->loc,
            "%s() cannot write to %s: module-level arrays "
            "are frozen into constant memory; pass the array as an argument instead",
            gj_infer_fn_name(id), t->name);
    int ok = 0;
    char names[96] = "";
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
        if (!(row->sub & dtypes[k].bit))
            continue;
        ok |= dtypes[k].t == t->dtype;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", dtypes[k].t->name);
    }
    if (!ok)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "%s() does not support %s arrays (it supports "
                             "%s)",
                             gj_infer_fn_name(id), t->dtype->name, names);
    int first = (row->sub & GJ_AT_FIRST) != 0;   /* no index: element 0 */
    if (first && t->ndim != 1)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a 1-d array, not %s",
                             gj_infer_fn_name(id), t->name);
    const GjType *elem =
        first ? t->dtype
              : gj_infer_array_index_type(in, t, gj_infer_arg_type(in, ins, 2), ins->loc);
    if (!elem)
        return NULL;
    if (elem->kind == GJ_TK_ARRAY)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "%s() needs the index of one element of %s "
                             "(an integer per axis), not %s",
                             gj_infer_fn_name(id), t->name, gj_infer_arg_type(in, ins, 2)->name);
    for (int k = first ? 2 : 3; k < ins->nargs; k++) {
        const GjType *v = gj_infer_arg_type(in, ins, k);
        if (!gj_ty_is_scalar(v) || gj_infer_is_complex(v))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() needs a real number to combine with "
                                 "%s, not %s",
                                 gj_infer_fn_name(id), t->name, v->name);
    }
    return t->dtype;
}

static const char *param_name(const GjIntrinsicRow *row, int p, char *buf, size_t len);

/* A warp function (mask, value, integers...): the value a real scalar (a
   bool, an integer or a float: what a register holds), the others integers.
   -> the row's result, the value's type, or (row's result, bool). */
static const GjType *warp_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (k == 2 ? !gj_ty_is_scalar(t) || gj_infer_is_complex(t) : !gj_infer_is_int_or_bool(t)) {
            char buf[64];
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs %s for '%s', not %s",
                                 gj_infer_fn_name(id),
                                 k == 2 ? "a bool, integer or float" : "an integer",
                                 param_name(row, k - 1, buf, sizeof buf), t->name);
        }
    }
    if (row->rule == GJ_TR_WARP)
        return row->result ? row->result : gj_ty_concrete(gj_infer_arg_type(in, ins, 2));
    const GjType *pair[2] = {row->result, &gj_ty_bool};
    return gj_ty_tuple(in->c, pair, 2);
}

/* iter(t): the iterator a loop over t (or zip's argument t) uses. */
static const GjType *iterator_of(Infer *in, const GjType *t, GjLoc loc) {
    if (t->kind == GJ_TK_RANGE_ITER || t->kind == GJ_TK_TUPLE_ITER || t->kind == GJ_TK_ARRAY_ITER ||
        t->kind == GJ_TK_ZIP_ITER)
        return t;
    if (t->kind == GJ_TK_TUPLE) {
        const GjType *e = gj_infer_tuple_element_type(in, t);
        if (!e)
            return gj_infer_fail(
                in, GJ_DIAG_UNSUPPORTED, loc,
                "iterating over %s is not supported: a loop over a tuple needs items "
                "of one type (or one kind of number)",
                t->name);
        return gj_ty_tuple_iter(in->c, t, e);
    }
    if (t->kind == GJ_TK_ARRAY) {   /* its first axis: elements, or rows as views */
        const GjType *e = gj_infer_array_index_type(in, t, &gj_ty_int64, loc);
        return e ? gj_ty_array_iter(in->c, t, e) : NULL;
    }
    return gj_infer_fail(
        in, GJ_DIAG_UNSUPPORTED, loc,
        "iterating over %s is not supported; loop over range(), a tuple, an array, "
        "zip() or enumerate()",
        t->name);
}

/* What iterator `it` yields: zip's the tuple of its iterators' items. */
const GjType *gj_infer_iter_value_type(Infer *in, const GjType *it) {
    if (it->kind != GJ_TK_ZIP_ITER)
        return it->elems[0];
    const GjType *items[16];
    for (int k = 0; k < it->n; k++)
        if (!(items[k] = gj_infer_iter_value_type(in, it->elems[k])))
            return NULL;
    return gj_ty_tuple(in->c, items, it->n);
}

const GjType *gj_infer_iter_type(Infer *in, const GjIns *ins, const GjType *it) {
    if (ins->op == GJ_OP_GET_ITER)
        return iterator_of(in, it, ins->loc);
    if (it->kind == GJ_TK_RANGE_ITER || it->kind == GJ_TK_TUPLE_ITER ||
        it->kind == GJ_TK_ARRAY_ITER || it->kind == GJ_TK_ZIP_ITER)
        return it;
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "%s on %s", gj_ir_op_name(ins->op),
                         it->name);
}

/* zip(a, b, ...) and enumerate(x[, start]) (row sub 1): the zip iterator of
   the arguments' iterators, enumerate's led by an int64 count. */
static const GjType *zip_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    const GjType *its[16];
    int counted = row->sub == 1, n = counted ? 2 : ins->nargs - 1;
    if (n > 15)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s() of more than 15 iterables",
                             gj_infer_fn_name(id));
    if (counted) {
        its[0] = gj_ty_range_iter(in->c, &gj_ty_int64);
        const GjType *start = ins->nargs > 2 ? gj_infer_arg_type(in, ins, 2) : NULL;
        if (start && !gj_ty_is_integer(start))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() start must be an integer, not %s", gj_infer_fn_name(id),
                                 start->name);
    }
    for (int k = counted; k < n; k++)
        if (!(its[k] = iterator_of(in, gj_infer_arg_type(in, ins, counted ? 1 : k + 1), ins->loc)))
            return NULL;
    return gj_ty_zip_iter(in->c, its, n);
}

/* operator.add(a, b) & co: the type of the operator the row's sub names. */
static const GjType *operator_type(Infer *in, const GjIns *ins, const GjIntrinsicRow *row) {
    int code = row->sub & 0xff;
    const GjType *a = gj_infer_arg_type(in, ins, 1),
                 *b = ins->nargs > 2 ? gj_infer_arg_type(in, ins, 2) : NULL;
    switch (row->sub & ~0xff) {
    case GJ_OPERATOR_BINOP: return gj_infer_binop_type(in, (GjBinop)code, a, b, ins->loc);
    case GJ_OPERATOR_UNOP: return gj_infer_unop_type(in, (GjUnop)code, a, ins->loc);
    case GJ_OPERATOR_CMP: return gj_infer_compare_type(in, (GjCmp)code, a, b, ins->loc);
    default: return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "bad operator row");
    }
}

/* min(t) / max(t) of one tuple: the promotion of its items, real scalars. */
static const GjType *minmax_tuple_type(Infer *in, const GjIns *ins, int id) {
    const GjType *t = gj_infer_arg_type(in, ins, 1), *p = NULL;
    if (t->kind == GJ_TK_ARRAY)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                             "%s() of an array is not supported; loop over it",
                             gj_infer_fn_name(id));
    if (t->kind != GJ_TK_TUPLE || t->n == 0)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "%s() takes a non-empty tuple or 2+ scalars, not %s",
                             gj_infer_fn_name(id), t->name);
    for (int k = 0; k < t->n; k++) {
        const GjType *e = t->elems[k];
        const GjType *q = gj_ty_is_scalar(e) ? (p ? gj_ty_promote(p, e) : e) : NULL;
        if (!q || gj_infer_is_complex(q))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() of %s: items must be real numbers", gj_infer_fn_name(id),
                                 t->name);
        p = q;
    }
    return p;
}

/* Whether integer constant v is a value of integer type t. */
static int fits(const GjType *t, int64_t v) {
    if (t->kind == GJ_TK_UINT)
        return v >= 0 && (t->bits == 64 || v < ((int64_t)1 << t->bits));
    return t->bits == 64 ||
           (v >= -((int64_t)1 << (t->bits - 1)) && v < ((int64_t)1 << (t->bits - 1)));
}

/* The type of a range's values: the arguments' promotion t, unless a
   literal argument is not a value of t (range(n - 1, -1, -1) with n uint32,
   range(np.uint8(250), 300)): int64 then, so the range yields Python's
   values where promotion would wrap the literal. */
static const GjType *range_type(Infer *in, const GjIns *ins, const GjType *t) {
    for (int k = 1; k < ins->nargs; k++) {
        int64_t v;
        if (gj_infer_arg_type(in, ins, k)->kind == GJ_TK_WEAK_INT &&
            gj_infer_const_int(in, ins->args[k], &v) && !fits(t, v))
            return &gj_ty_int64;
    }
    return t;
}

/* The type of a call of intrinsic `id` by its row's typing rule; the
   arity is checked already. */
static const GjType *rule_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    const GjType *t;
    switch (row->rule) {
    case GJ_TR_VALUE: break;
    case GJ_TR_FIXED:
        for (int k = 1; k < ins->nargs; k++)
            if (!gj_ty_is_scalar(t = gj_infer_arg_type(in, ins, k)) || gj_infer_is_complex(t))
                return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                     "%s() arguments must be real scalars, not %s",
                                     gj_infer_fn_name(id), t->name);
        return row->result;
    case GJ_TR_ARG_TYPE: return gj_ty_concrete(gj_infer_arg_type(in, ins, row->sub + 1));
    case GJ_TR_ATOMIC: return atomic_type(in, ins, id, row);
    case GJ_TR_WARP:
    case GJ_TR_WARP_PAIR: return warp_type(in, ins, id, row);
    case GJ_TR_INT:
    case GJ_TR_UNSIGNED:
        if (!promote_args(in, ins, id, 1))
            return NULL;
        t = gj_ty_concrete(gj_infer_arg_type(in, ins, 1));
        if (row->rule == GJ_TR_UNSIGNED)
            return t->bits > 32   ? &gj_ty_uint64
                   : t->bits > 16 ? &gj_ty_uint32
                   : t->bits > 8  ? &gj_ty_uint16
                                  : &gj_ty_uint8;
        return row->result ? row->result : t;
    case GJ_TR_FLOATS:
        if (!(t = promote_args(in, ins, id, 0)) || gj_infer_is_complex(t))
            return t ? gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                     "%s() needs real numbers, not %s", gj_infer_fn_name(id),
                                     t->name)
                     : NULL;
        return gj_ty_is_float(t) ? gj_ty_concrete(t) : &gj_ty_float64;
    case GJ_TR_SELECT:
        if (!(t = gj_ty_promote(gj_infer_arg_type(in, ins, 2), gj_infer_arg_type(in, ins, 3))) ||
            !gj_ty_is_scalar(gj_infer_arg_type(in, ins, 1)))
            return gj_infer_fail(
                in, GJ_DIAG_TYPING, ins->loc, "%s() needs scalars, not %s, %s and %s",
                gj_infer_fn_name(id), gj_infer_arg_type(in, ins, 1)->name,
                gj_infer_arg_type(in, ins, 2)->name, gj_infer_arg_type(in, ins, 3)->name);
        return gj_ty_concrete(t);
    case GJ_TR_RANGE: {
        int64_t step;   /* Python's ValueError, known here for a constant step */
        if (!(t = promote_args(in, ins, id, 1)))
            return NULL;
        if (ins->nargs == 4 && gj_infer_const_int(in, ins->args[3], &step) && step == 0)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "range() arg 3 must not be zero");
        return gj_ty_range_iter(in->c, range_type(in, ins, gj_ty_concrete(t)));
    }
    case GJ_TR_ABS: return (t = promote_args(in, ins, id, 0)) ? abs_type(t) : NULL;
    case GJ_TR_NP_ABS:
        return (t = promote_args(in, ins, id, 0)) ? abs_type(gj_ty_concrete(t)) : NULL;
    case GJ_TR_MINMAX:
        if (ins->nargs == 2)
            return minmax_tuple_type(in, ins, id);
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        if (gj_infer_is_complex(t))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "complex numbers cannot be ordered");
        return t;
    case GJ_TR_ZIP: return zip_type(in, ins, id, row);
    case GJ_TR_OPERATOR: return operator_type(in, ins, row);
    case GJ_TR_LEN:
        t = gj_infer_arg_type(in, ins, 1);
        if (t->kind != GJ_TK_ARRAY && t->kind != GJ_TK_TUPLE)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "len() of %s is not supported",
                                 t->name);
        return &gj_ty_int64;
    case GJ_TR_CONVERT:
        if (!promote_args(in, ins, id, 0))
            return NULL;
        if (row->result != &gj_ty_bool && gj_infer_is_complex(gj_infer_arg_type(in, ins, 1)))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "cannot convert %s with %s()",
                                 gj_infer_arg_type(in, ins, 1)->name, gj_infer_fn_name(id));
        return row->result;
    case GJ_TR_COMPLEX: return complex_ctor_type(in, ins, id);
    case GJ_TR_ROUND: return round_type(in, ins, id);
    case GJ_TR_POW:
        return gj_infer_binop_type(in, GJ_BIN_POW, gj_infer_arg_type(in, ins, 1),
                                   gj_infer_arg_type(in, ins, 2), ins->loc);
    case GJ_TR_DIVMOD: {
        if (!(t = gj_infer_binop_type(in, GJ_BIN_FLOORDIV, gj_infer_arg_type(in, ins, 1),
                                      gj_infer_arg_type(in, ins, 2), ins->loc)))
            return NULL;
        const GjType *elems[2] = {t, t};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_TR_GRID: return grid_type(in, ins, id);
    case GJ_TR_REAL_PART:
        return (t = promote_args(in, ins, id, 0)) ? gj_infer_real_part_type(gj_ty_concrete(t))
                                                  : NULL;
    case GJ_TR_SAME: return (t = promote_args(in, ins, id, 0)) ? gj_ty_concrete(t) : NULL;
    case GJ_TR_RECEIVER:
        if (!(t = receiver_type(in, ins)))
            return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s must be called at once",
                                 row->name);
        return t;
    case GJ_TR_PHASE:
    case GJ_TR_POLAR: {
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        t = gj_ty_concrete(gj_infer_real_part_type(t));   /* a float32 phase for complex64 */
        t = t->kind == GJ_TK_FLOAT ? t : &gj_ty_float64;
        if (row->rule == GJ_TR_PHASE)
            return t;
        const GjType *elems[2] = {t, t};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_TR_RECT:
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        if (gj_infer_is_complex(t))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "cmath.rect() needs real numbers");
        return gj_ty_concrete(complex_of(t->kind == GJ_TK_FLOAT ? t : &gj_ty_float64));
    case GJ_TR_MATH: return math_call_type(in, ins, id);
    case GJ_TR_NPTYPE: return np_type_call(in, ins, id);
    case GJ_TR_PRINT: return print_type(in, ins, id);
    case GJ_TR_MEMORY: {   /* shared.array, local.array, const.array_like (typemem.c) */
        const char *why = NULL;
        t = gj_memory_call_type(in->c, ins, in->f->temp_types, in->defs, id, &why);
        return t     ? t
               : why ? gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s", why)
                     : gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
    }
    }
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "%s has no typing rule",
                         gj_infer_fn_name(id));
}

/* A call of a @gpujit.jit function: its specialisation's return type, and
   the specialisation in ins->spec for the passes after typing.  A failure in
   a sweep before the last may come from an argument type that still widens,
   so it is forgotten there; the last sweep reports it. */
static const GjType *device_call_type(Infer *in, GjIns *ins, const GjType *callee) {
    int32_t n = ins->nargs - 1;
    const GjType **args = GJ_NEW_N(&in->c->arena, const GjType *, n > 0 ? n : 1);
    if (!args)
        return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
    for (int32_t k = 0; k < n; k++)
        args[k] = gj_infer_arg_type(in, ins, k + 1);
    if (gj_spec_get(in->c, callee->callee, args, n, ins->loc, &ins->spec) != GJ_OK) {
        if (!in->report)
            in->c->diag = NULL;
        return NULL;
    }
    return ins->spec->f->ret_type;
}

/* The name of parameter p in a row's "a, b, c=1" list, into buf. */
static const char *param_name(const GjIntrinsicRow *row, int p, char *buf, size_t len) {
    const char *s = row->params;
    for (int k = 0; k < p && *s; k++) {
        s += strcspn(s, ",");
        s += strspn(s, ", ");
    }
    snprintf(buf, len, "%.*s", (int)strcspn(s, ",="), s);
    return buf;
}

/* A keyword call of intrinsic id becomes a positional one: each keyword
   argument moves to its parameter's position (the row's names), and the
   call's keyword names are cleared, so typing and lowering see positions
   only.  Every parameter up to the last one given must be given; optional
   ones after it take their defaults in lowering (lower.c). */
static int place_keywords(Infer *in, GjIns *ins, int id, const GjIntrinsicRow *row) {
    int32_t nkw = ins->c.kind == GJ_CONST_TUPLE ? ins->c.n : 0, n = ins->nargs - 1;
    if (nkw == 0)
        return 1;
    if (!row->params[0])
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                             "%s() takes no keyword arguments in kernels",
                             gj_infer_fn_name(id)) != NULL;
    int32_t *args = GJ_NEW_N(&in->c->arena, int32_t, ins->nargs);
    if (!args)
        return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory") != NULL;
    args[0] = ins->args[0];
    for (int32_t k = 1; k <= n; k++)
        args[k] = k <= n - nkw ? ins->args[k] : -1;
    for (int32_t j = 0; j < nkw; j++) {
        const char *name = ins->c.items[j].s ? ins->c.items[j].s : "?";
        int p = gj_intrinsic_param_index((GjIntrinsic)id, name);
        if (p < 0)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() got an unexpected keyword argument '%s'",
                                 gj_infer_fn_name(id), name) != NULL;
        if (p < n && args[p + 1] >= 0)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() got multiple values for argument '%s'", gj_infer_fn_name(id),
                                 name) != NULL;
        if (p >= n)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "%s() needs the arguments before '%s'", gj_infer_fn_name(id),
                                 name) != NULL;
        args[p + 1] = ins->args[n - nkw + j + 1];
    }
    for (int32_t p = 0; p < n; p++) {
        char buf[64];
        if (args[p + 1] < 0)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s() missing argument '%s'",
                                 gj_infer_fn_name(id), param_name(row, p, buf, sizeof buf)) != NULL;
    }
    ins->args = args;
    ins->c = (GjConst){.kind = GJ_CONST_NONE};
    return 1;
}

const GjType *gj_infer_call_type(Infer *in, GjIns *ins, const GjType *callee) {
    if (callee->kind != GJ_TK_CALLABLE)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s is not callable", callee->name);
    /* build.c binds the keywords of a call by the function's global name */
    if (callee->callee && ins->c.kind == GJ_CONST_TUPLE && ins->c.n > 0)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                             "keyword arguments are supported in calls of a device function by its "
                             "global name; %s is reached another way",
                             callee->name);
    if (callee->callee)
        return device_call_type(in, ins, callee);
    int id = callee->intrinsic;
    const GjIntrinsicRow *row = gj_intrinsic_row((GjIntrinsic)id);
    if (row->rule == GJ_TR_VALUE)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s is not callable", callee->name);
    if (!place_keywords(in, ins, id, row))
        return NULL;
    if (!expect_nargs(in, ins, id, row->min_args, row->max_args < 0 ? INT_MAX : row->max_args))
        return NULL;
    return rule_type(in, ins, id, row);
}
