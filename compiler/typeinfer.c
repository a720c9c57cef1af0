/*
 * typeinfer.c - type inference over the IR (gj_infer_func in ir.h).
 *
 * Input: a GjFunc from build.c with code->argtypes set.  Output: a type for
 * every temp and variable of the blocks reachable from the entry
 * (f->temp_types, f->vars[v].type); unreachable blocks stay untyped (NULL).
 *
 * Temps are typed from their operands, in block order.  A variable's type is
 * the gj_ty_unify() of every value stored into it (a parameter starts from
 * its argument type), so the blocks are swept until no variable changes:
 * a fixpoint, reached quickly because unification only climbs the finite
 * promotion lattice.  The sweeps record no errors - a type seen half-way may
 * still widen - and a last sweep over the settled types reports the first
 * error, at the instruction that causes it, with a "typing of ..." note.
 *
 * Weak literal types (int literal, float literal) may remain on temps and
 * variables: lowering materialises them with gj_ty_concrete().
 */
#include "typeinfer.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "intrinsics.h"

/* Records a diagnostic in the final sweep; returns NULL (no type) always. */
const GjType *gj_infer_fail(Infer *in, GjDiagKind kind, GjLoc loc, const char *fmt, ...) {
    if (!in->report)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&in->c->arena, fmt, ap);
    va_end(ap);
    gj_error(in->c, kind, loc, "%s", msg ? msg : fmt);
    return NULL;
}

const GjType *gj_infer_arg_type(const Infer *in, const GjIns *ins, int k) {
    return in->f->temp_types[ins->args[k]];
}

/* The value of a temp defined in this block by an integer constant or a
   frozen integer global (grid(NDIM)). */
int gj_infer_const_int(const Infer *in, int32_t temp, int64_t *value) {
    const GjIns *def = in->defs[temp];
    const GjConst *k = !def                     ? NULL
                       : def->op == GJ_OP_CONST ? &def->c
                       : def->op == GJ_OP_GLOBAL && def->global.kind == GJ_GLOBAL_CONST
                           ? &def->global.value
                           : NULL;
    if (!k || k->kind != GJ_CONST_INT)
        return 0;
    *value = k->i;
    return 1;
}

int gj_infer_is_int_or_bool(const GjType *t) {
    return gj_ty_is_integer(t) || t->kind == GJ_TK_BOOL;
}

int gj_infer_is_complex(const GjType *t) {
    return t->kind == GJ_TK_COMPLEX || t->kind == GJ_TK_WEAK_COMPLEX;
}

/* ---- constants and globals -------------------------------------------- */

/* Python numbers are weak literals; a NumPy scalar (a frozen global such as
   np.float32(2)) names its dtype in k->s and keeps it. */
static const GjType *const_type(Infer *in, const GjConst *k, GjLoc loc) {
    const GjType *dtype = k->s ? gj_ty_from_name(k->s) : NULL;
    switch (k->kind) {
    case GJ_CONST_NONE: return &gj_ty_none;
    case GJ_CONST_BOOL: return &gj_ty_bool;
    case GJ_CONST_INT: return dtype ? dtype : &gj_ty_weak_int;
    case GJ_CONST_FLOAT: return dtype ? dtype : &gj_ty_weak_float;
    case GJ_CONST_COMPLEX: return dtype ? dtype : &gj_ty_weak_complex;
    case GJ_CONST_TUPLE: {
        const GjType **elems = GJ_NEW_N(&in->c->arena, const GjType *, k->n > 0 ? k->n : 1);
        if (!elems)
            return gj_infer_fail(in, GJ_DIAG_INTERNAL, loc, "out of memory");
        for (int32_t i = 0; i < k->n; i++) {
            if (!(elems[i] = const_type(in, &k->items[i], loc)))
                return NULL;
        }
        return gj_ty_tuple(in->c, elems, k->n);
    }
    case GJ_CONST_STR:   /* print() takes one; other uses fail where they are typed */
        return gj_ty_str(in->c, k->s ? k->s : "");
    case GJ_CONST_SLICE:   /* bytecode.c turns LOAD_CONST of one into BUILD_SLICE */
    case GJ_CONST_OTHER: break;
    }
    return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                         "constants of type '%s' are not supported in kernels", k->s ? k->s : "?");
}

/* The type of a namespace member: dim3 objects are values, math.pi and its
   kind are weak float literals (NEP 50: Python floats), a value row (laneid)
   has its result type, the rest are callables. */
static const GjType *intrinsic_type(Infer *in, int id) {
    double value;
    if (gj_intrinsic_constant((GjIntrinsic)id, &value))
        return &gj_ty_weak_float;
    if (gj_intrinsic_is_value((GjIntrinsic)id))
        return gj_intrinsic_row((GjIntrinsic)id)->result;
    if (gj_intrinsic_row((GjIntrinsic)id)->flags & GJ_IF_DIM3)
        return gj_ty_dim3(in->c, id);
    return gj_ty_callable(in->c, id);
}

/* Whether module `name` holds numba's scalar type objects (gpujit/types.py,
   exported by gpujit too): their attributes are NumPy's constructors. */
static int holds_scalar_types(const char *name) {
    return strcmp(name, "gpujit") == 0 || strcmp(name, "gpujit.types") == 0;
}

/* An intrinsic global is named by pymodule with its namespace:
   "gpujit.grid", "gpujit.atomic" (a namespace), "math.sqrt". */
static const GjType *intrinsic_global_type(Infer *in, const char *name, GjLoc loc) {
    int id = gj_intrinsic_lookup_qualified(name);
    if (id >= 0)
        return intrinsic_type(in, id);
    if (gj_intrinsic_is_namespace(name) || holds_scalar_types(name))
        return gj_ty_module(in->c, name);
    return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc, "'%s' is not supported in kernels", name);
}

/* A frozen NumPy array: a readonly C-contiguous array in constant memory. */
static const GjType *const_array_type(Infer *in, const GjGlobal *g, GjLoc loc) {
    const GjType *dtype = gj_ty_from_name(g->array->dtype);
    if (!dtype)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                             "global array '%s' has dtype %s, which kernels do not support", g->key,
                             g->array->dtype);
    if (!g->array->data)   /* pymodule copies at most 64 KiB */
        return gj_infer_fail(
            in, GJ_DIAG_UNSUPPORTED, loc,
            "global array '%s' is %zu bytes; constant memory holds 64 KiB, so pass "
            "it to the kernel as an argument",
            g->key, g->array->nbytes);
    const GjType *t = gj_ty_array(in->c, dtype, g->array->ndim, GJ_LAYOUT_C);
    return t ? gj_ty_array_in(in->c, t, GJ_AS_CONST) : NULL;
}

static const GjType *global_type(Infer *in, const GjGlobal *g, GjLoc loc) {
    int id;
    switch (g->kind) {
    case GJ_GLOBAL_MISSING:
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "name '%s' is not defined", g->key);
    case GJ_GLOBAL_MODULE: return gj_ty_module(in->c, g->name);
    case GJ_GLOBAL_BUILTIN:
        if ((id = gj_intrinsic_lookup("builtins", g->name)) < 0)
            return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                                 "the built-in '%s' is not supported in kernels", g->name);
        return intrinsic_type(in, id);
    case GJ_GLOBAL_INTRINSIC: return intrinsic_global_type(in, g->name, loc);
    case GJ_GLOBAL_CONST: return const_type(in, &g->value, loc);
    case GJ_GLOBAL_FUNCTION: return gj_ty_function(in->c, g->callee, g->name);
    case GJ_GLOBAL_ARRAY: return const_array_type(in, g, loc);
    case GJ_GLOBAL_EXCEPTION:   /* build.c turns `raise E(...)` into RAISE: any other use */
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                             "the exception class '%s' can only be raised in a kernel "
                             "(raise %s or raise %s(\"message\"))",
                             g->key, g->key, g->key);
    case GJ_GLOBAL_OTHER: break;
    }
    return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                         "global '%s' is a '%s', which cannot be used in a kernel", g->key,
                         g->name ? g->name : "?");
}

/* ---- operators -------------------------------------------------------- */

/* NumPy's result type of `a op b`: their promotion, except for true
   division of integers (float64) and NumPy's quirks for two bools. */
const GjType *gj_infer_binop_type(Infer *in, GjBinop op, const GjType *a, const GjType *b,
                                  GjLoc loc) {
    const char *sym = gj_ir_binop_symbol(op);
    if (op == GJ_BIN_MATMUL)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                             "the '@' operator is not supported in kernels");
    const GjType *p = gj_ty_promote(a, b);
    if (!p)
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "unsupported operand types for %s: %s and %s",
                             sym, a->name, b->name);
    int both_bool = a->kind == GJ_TK_BOOL && b->kind == GJ_TK_BOOL;
    switch (op) {
    case GJ_BIN_ADD:
    case GJ_BIN_MUL: return p;   /* bool + bool is logical or, bool * bool logical and */
    case GJ_BIN_SUB:
        if (both_bool)
            return gj_infer_fail(in, GJ_DIAG_TYPING, loc,
                                 "boolean subtract (bool - bool) is not supported, as in NumPy; "
                                 "use ^ or != instead");
        return p;
    case GJ_BIN_TRUEDIV:
        if (p->kind == GJ_TK_WEAK_INT)
            return &gj_ty_weak_float;
        return gj_infer_is_int_or_bool(p) ? &gj_ty_float64 : p;
    case GJ_BIN_FLOORDIV:
    case GJ_BIN_MOD:
        if (gj_infer_is_complex(p))
            return gj_infer_fail(in, GJ_DIAG_TYPING, loc,
                                 "operator %s is not defined for complex numbers", sym);
        return both_bool ? &gj_ty_int8 : p;
    case GJ_BIN_POW: return both_bool ? &gj_ty_int8 : p;
    case GJ_BIN_LSHIFT:
    case GJ_BIN_RSHIFT:
    case GJ_BIN_AND:
    case GJ_BIN_OR:
    case GJ_BIN_XOR:
        if (!gj_infer_is_int_or_bool(a) || !gj_infer_is_int_or_bool(b) ||
            !gj_infer_is_int_or_bool(p))
            return gj_infer_fail(in, GJ_DIAG_TYPING, loc,
                                 "operator %s needs integer or bool operands, not %s and %s", sym,
                                 a->name, b->name);
        if (both_bool && (op == GJ_BIN_LSHIFT || op == GJ_BIN_RSHIFT))
            return &gj_ty_int8;
        return p;
    case GJ_BIN_MATMUL:
    case GJ_NBINOPS: break;
    }
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, loc, "unknown binary operator %d", (int)op);
}

const GjType *gj_infer_unop_type(Infer *in, GjUnop op, const GjType *a, GjLoc loc) {
    const char *sym = gj_ir_unop_symbol(op);
    if (!gj_ty_is_scalar(a))
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "unsupported operand type for unary %s: %s",
                             sym, a->name);
    switch (op) {
    case GJ_UN_NEG:
        if (a->kind == GJ_TK_BOOL)
            return gj_infer_fail(
                in, GJ_DIAG_TYPING, loc,
                "boolean negative (-bool) is not supported, as in NumPy; use 'not'");
        return a;
    case GJ_UN_POS: return a;
    case GJ_UN_NOT: return &gj_ty_bool;
    case GJ_UN_INVERT:
        if (!gj_infer_is_int_or_bool(a))
            return gj_infer_fail(in, GJ_DIAG_TYPING, loc,
                                 "operator ~ needs an integer or bool, not %s", a->name);
        return a;
    }
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, loc, "unknown unary operator %d", (int)op);
}

const GjType *gj_infer_compare_type(Infer *in, GjCmp op, const GjType *a, const GjType *b,
                                    GjLoc loc) {
    if (!gj_ty_promote(a, b))
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "cannot compare %s and %s with %s", a->name,
                             b->name, gj_ir_cmp_symbol(op));
    if ((gj_infer_is_complex(a) || gj_infer_is_complex(b)) && op != GJ_CMP_EQ && op != GJ_CMP_NE)
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "complex numbers cannot be ordered with %s",
                             gj_ir_cmp_symbol(op));
    return &gj_ty_bool;
}

/* ---- attributes and subscripts ---------------------------------------- */

/* The type of x.real and x.imag: a complex's component float, else x's own. */
const GjType *gj_infer_real_part_type(const GjType *t) {
    if (t->kind == GJ_TK_WEAK_COMPLEX)
        return &gj_ty_weak_float;
    if (t->kind == GJ_TK_COMPLEX)
        return t->bits == 64 ? &gj_ty_float32 : &gj_ty_float64;
    return t;
}

const GjType *gj_infer_int64_tuple(Infer *in, int n) {
    const GjType *elems[3] = {&gj_ty_int64, &gj_ty_int64, &gj_ty_int64};
    if (n <= 3)
        return gj_ty_tuple(in->c, elems, n);
    const GjType **many = GJ_NEW_N(&in->c->arena, const GjType *, n);
    if (!many)
        return NULL;
    for (int i = 0; i < n; i++)
        many[i] = &gj_ty_int64;
    return gj_ty_tuple(in->c, many, n);
}

static const GjType *getattr_type(Infer *in, const GjType *obj, const char *name, GjLoc loc) {
    int id;
    switch (obj->kind) {
    case GJ_TK_ARRAY:
        if (strcmp(name, "size") == 0 || strcmp(name, "ndim") == 0 || strcmp(name, "itemsize") == 0)
            return &gj_ty_int64;
        if (strcmp(name, "shape") == 0 || strcmp(name, "strides") == 0)
            return gj_infer_int64_tuple(in, obj->ndim);
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc, "attribute '%s' of %s is not supported",
                             name, obj->name);
    case GJ_TK_MODULE: {
        if ((id = gj_intrinsic_lookup(obj->name, name)) >= 0)
            return intrinsic_type(in, id);
        const GjType *scalar =
            holds_scalar_types(obj->name) && strlen(name) > 1 ? gj_ty_from_name(name) : NULL;
        if (scalar && (id = gj_intrinsic_lookup("numpy", scalar->name)) >= 0)
            return intrinsic_type(in, id);   /* gpujit.float32: gpujit/types.py, NumPy's */
        const char *nested = gj_arena_printf(&in->c->arena, "%s.%s", obj->name, name);
        if (nested && (gj_intrinsic_is_namespace(nested) || holds_scalar_types(nested)))
            return gj_ty_module(in->c, nested);   /* gpujit.atomic, gpujit.types */
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc, "'%s.%s' is not supported in kernels",
                             obj->name, name);
    }
    case GJ_TK_DIM3:
        if ((id = gj_intrinsic_lookup("dim3", name)) < 0)
            return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "%s has no attribute '%s' (only x, y, z)",
                                 gj_intrinsic_name((GjIntrinsic)obj->intrinsic), name);
        return &gj_ty_int64;   /* zero-extended registers: indices never wrap (lower_thread.c) */
    case GJ_TK_BOOL:
    case GJ_TK_INT:
    case GJ_TK_UINT:
    case GJ_TK_FLOAT:
    case GJ_TK_COMPLEX:
    case GJ_TK_WEAK_INT:
    case GJ_TK_WEAK_FLOAT:
    case GJ_TK_WEAK_COMPLEX:
        /* x.real, x.imag, x.conjugate() of any number, as NumPy scalars have */
        if (strcmp(name, "real") == 0 || strcmp(name, "imag") == 0)
            return gj_infer_real_part_type(obj);
        if (strcmp(name, "conjugate") == 0)
            return gj_ty_callable(in->c, GJ_INTR_METHOD_CONJUGATE);
        break;
    case GJ_TK_NONE:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: break;
    }
    return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc, "attribute '%s' of %s is not supported",
                         name, obj->name);
}

/* One item of an array index: an integer (drops its axis) or a slice
   (keeps it); anything else is an error. */
static int check_index_item(Infer *in, const GjType *item, GjLoc loc) {
    if (gj_ty_is_integer(item) || item->kind == GJ_TK_SLICE)
        return 1;
    if (item->kind == GJ_TK_NONE)
        gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, loc,
                      "indexing with None (numpy.newaxis) is not supported in kernels");
    else
        gj_infer_fail(in, GJ_DIAG_TYPING, loc, "array index must be an integer or a slice, not %s",
                      item->name);
    return 0;
}

static int is_full_slice(const GjType *t) {
    return t->kind == GJ_TK_SLICE && t->elems[0]->kind == GJ_TK_NONE &&
           t->elems[1]->kind == GJ_TK_NONE && t->elems[2]->kind == GJ_TK_NONE;
}

/* Whether the view stays contiguous: walking the axes from the fastest
   varying (C: last to first, F: first to last), full slices (`:`), then at
   most one slice without a step, then only integers.  items[k] indexes
   axis k. */
static int view_contiguous(const GjType *const *items, int ndim, int c_order) {
    int full = 1;   /* still in the run of full slices */
    for (int step = 0; step < ndim; step++) {
        const GjType *t = items[c_order ? ndim - 1 - step : step];
        if (gj_ty_is_integer(t)) {
            full = 0;
            continue;
        }
        if (!full || t->elems[2]->kind != GJ_TK_NONE)
            return 0;
        full = is_full_slice(t);
    }
    return 1;
}

/* The type of arr[idx]: the element type when idx is one integer per
   dimension, else a view: an array of the axes that slices keep (missing
   trailing indices are full slices), of layout C or F when the view stays
   contiguous (view_contiguous), else A. */
const GjType *gj_infer_array_index_type(Infer *in, const GjType *arr, const GjType *idx,
                                        GjLoc loc) {
    const GjType *items[GJ_MAX_NDIM_INDEX];
    int n = idx->kind == GJ_TK_TUPLE ? idx->n : 1;
    for (int k = 0; k < n; k++) {
        if (!check_index_item(in, idx->kind == GJ_TK_TUPLE ? idx->elems[k] : idx, loc))
            return NULL;
    }
    if (n > arr->ndim)
        return gj_infer_fail(in, GJ_DIAG_TYPING, loc, "too many indices for %s: %d given",
                             arr->name, n);
    int kept = 0;
    for (int k = 0; k < arr->ndim; k++) {
        items[k] = k >= n ? NULL : idx->kind == GJ_TK_TUPLE ? idx->elems[k] : idx;
        kept += !items[k] || items[k]->kind == GJ_TK_SLICE;
    }
    if (kept == 0)
        return arr->dtype;
    const GjType *full = gj_ty_slice(in->c, &gj_ty_none, &gj_ty_none, &gj_ty_none);
    for (int k = n; k < arr->ndim; k++)
        items[k] = full;
    GjLayout layout = GJ_LAYOUT_A;
    if (arr->layout == GJ_LAYOUT_C && view_contiguous(items, arr->ndim, 1))
        layout = GJ_LAYOUT_C;
    else if (arr->layout == GJ_LAYOUT_F && view_contiguous(items, arr->ndim, 0))
        layout = kept == 1 ? GJ_LAYOUT_C : GJ_LAYOUT_F;   /* 1-d contiguous is C */
    const GjType *view = gj_ty_array(in->c, arr->dtype, kept, layout);
    return view ? gj_ty_array_in(in->c, view, arr->addrspace) : NULL;
}

/* The one type every element of tuple t converts to: their common type
   when they are all the same, or all scalars of one kind (bool, integer,
   float, complex), as for numba's homogeneous tuples, or arrays of one
   dtype and ndim (seen as layout A); NULL otherwise. */
const GjType *gj_infer_tuple_element_type(Infer *in, const GjType *t) {
    const GjType *e = t->n > 0 ? t->elems[0] : &gj_ty_none;
    for (int k = 1; k < t->n; k++) {
        const GjType *x = t->elems[k];
        if (x == e)
            continue;
        if (x->kind == GJ_TK_ARRAY && e->kind == GJ_TK_ARRAY && x->dtype == e->dtype &&
            x->ndim == e->ndim && x->addrspace == e->addrspace) {   /* views in two layouts */
            e = gj_ty_array_in(in->c, gj_ty_array(in->c, e->dtype, e->ndim, GJ_LAYOUT_A),
                               e->addrspace);
            continue;
        }
        int same_kind = gj_ty_is_scalar(x) && gj_ty_is_scalar(e) &&
                        ((gj_ty_is_integer(x) && gj_ty_is_integer(e)) ||
                         (gj_ty_is_float(x) && gj_ty_is_float(e)) ||
                         (gj_infer_is_complex(x) && gj_infer_is_complex(e)));
        if (!same_kind || !(e = gj_ty_promote(e, x)))
            return NULL;
    }
    return e;
}

static const GjType *getitem_type(Infer *in, const GjIns *ins, const GjType *obj,
                                  const GjType *idx) {
    if (obj->kind == GJ_TK_ARRAY)
        return gj_infer_array_index_type(in, obj, idx, ins->loc);
    if (obj->kind == GJ_TK_CALLABLE && obj->callee)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                             "launching a kernel from a kernel (%s[...]) is not supported; call it "
                             "as a device function instead",
                             obj->callee->code->name ? obj->callee->code->name : "?");
    if (obj->kind == GJ_TK_TUPLE) {
        int64_t k;
        if (idx->kind == GJ_TK_SLICE)
            return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                                 "slicing a tuple is not supported");
        if (!gj_infer_const_int(in, ins->args[1], &k)) {
            const GjType *e = gj_ty_is_integer(idx) ? gj_infer_tuple_element_type(in, obj) : NULL;
            if (!e || obj->n == 0)
                return gj_infer_fail(
                    in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "%s can only be indexed by an integer constant (a variable index "
                    "needs a tuple whose items have one type)",
                    obj->name);
            return e;
        }
        if (k < 0)
            k += obj->n;
        if (k < 0 || k >= obj->n)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "tuple index out of range for %s",
                                 obj->name);
        return obj->elems[k];
    }
    return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s cannot be indexed", obj->name);
}

static const GjType *setitem_check(Infer *in, const GjIns *ins, const GjType *arr,
                                   const GjType *idx, const GjType *val) {
    if (arr->kind != GJ_TK_ARRAY)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "%s does not support item assignment",
                             arr->name);
    if (arr->addrspace == GJ_AS_CONST)
        return gj_infer_fail(
            in, GJ_DIAG_TYPING, ins->loc,
            "cannot store into %s: module-level arrays "
            "are frozen into constant memory; pass the array as an argument instead",
            arr->name);
    const GjType *elem = gj_infer_array_index_type(in, arr, idx, ins->loc);
    if (!elem)
        return NULL;
    if (elem->kind == GJ_TK_ARRAY)
        return gj_infer_fail(
            in, GJ_DIAG_UNSUPPORTED, ins->loc,
            "assignment to a slice or sub-array of %s is not supported in kernels; "
            "assign its elements in a loop",
            arr->name);
    if (!gj_ty_is_scalar(val))
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "cannot store %s into an element of %s",
                             val->name, arr->name);
    if (gj_infer_is_complex(val) && !gj_infer_is_complex(elem))
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "cannot store %s into %s without losing the "
                             "imaginary part",
                             val->name, arr->name);
    return elem;
}

/* slice(start, stop[, step]): each part None or an integer; a constant
   step of 0 is Python's ValueError, caught here. */
static const GjType *slice_type(Infer *in, const GjIns *ins) {
    const GjType *parts[3] = {&gj_ty_none, &gj_ty_none, &gj_ty_none};
    int64_t step;
    for (int k = 0; k < ins->nargs && k < 3; k++) {
        const GjType *t = gj_infer_arg_type(in, ins, k);
        if (t->kind != GJ_TK_NONE && !gj_ty_is_integer(t))
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "slice indices must be integers or None, not %s", t->name);
        parts[k] = t->kind == GJ_TK_NONE ? &gj_ty_none : gj_ty_concrete(t);
    }
    if (ins->nargs == 3 && gj_infer_const_int(in, ins->args[2], &step) && step == 0)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "slice step cannot be zero");
    return gj_ty_slice(in->c, parts[0], parts[1], parts[2]);
}

/* ---- intrinsic calls -------------------------------------------------- */

/* How messages name an intrinsic: "range", "gpujit.grid", "math.sqrt". */

/* ---- instructions ----------------------------------------------------- */

/* The type that holds values of types a and b (a variable assigned both,
   the two paths of x if c else y, two returns), or NULL: numbers promote,
   tuples of one length element by element, views of two layouts in one
   memory space are layout A.  a NULL a (nothing stored yet) gives b. */
static const GjType *join(Infer *in, const GjType *a, const GjType *b) {
    if (!a || a == b)
        return b;
    if (a->kind == GJ_TK_ARRAY && b->kind == GJ_TK_ARRAY && a->dtype == b->dtype &&
        a->ndim == b->ndim && a->addrspace == b->addrspace)
        return gj_ty_array_in(in->c, gj_ty_array(in->c, b->dtype, b->ndim, GJ_LAYOUT_A),
                              b->addrspace);
    if (a->kind != GJ_TK_TUPLE || b->kind != GJ_TK_TUPLE || a->n != b->n)
        return gj_ty_unify(a, b);
    const GjType **elems = GJ_NEW_N(&in->c->arena, const GjType *, a->n > 0 ? a->n : 1);
    if (!elems)
        return NULL;
    for (int i = 0; i < a->n; i++) {
        if (!(elems[i] = join(in, a->elems[i], b->elems[i])))
            return NULL;
    }
    return gj_ty_tuple(in->c, elems, a->n);
}

/* Folds a stored type into variable v; a conflict is reported at the store. */
static const GjType *store_var(Infer *in, const GjIns *ins, const GjType *t) {
    GjVar *v = &in->f->vars[ins->var];
    const GjType *u = join(in, v->type, t);
    if (!u && v->kind == GJ_VAR_STACK)   /* a value that joins two paths: x if c else y */
        return gj_infer_fail(
            in, GJ_DIAG_TYPING, ins->loc,
            "the paths of this expression give %s and %s, which cannot be combined", v->type->name,
            t->name);
    if (!u)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "cannot assign %s to '%s', which holds %s", t->name, v->name,
                             v->type->name);
    if (u != v->type) {
        if (!v->type)
            v->def_loc = ins->loc;
        v->type = u;
        in->changed = 1;
    }
    return &gj_ty_none;
}

/* Whether a value of type t has a zero that a read of an unassigned
   variable can give: numbers, bools and None, and tuples of them.  An array
   has none (its "zero" would be a null pointer). */
static int has_zero(const GjType *t) {
    if (t->kind == GJ_TK_ARRAY)
        return 0;
    for (int k = 0; t->kind == GJ_TK_TUPLE && k < t->n; k++)
        if (!has_zero(t->elems[k]))
            return 0;
    return 1;
}

static const GjType *load_var(Infer *in, const GjIns *ins) {
    const GjVar *v = &in->f->vars[ins->var];
    if (v->type && ins->sub && !has_zero(v->type))   /* defassign.c: maybe unassigned */
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "local variable '%s' may be used before it is assigned, and a "
                             "value of type %s has no zero to read instead (Python would raise "
                             "UnboundLocalError); assign it on every path before this read",
                             v->name, v->type->name);
    if (v->type)
        return v->type;
    if (v->kind == GJ_VAR_STACK)
        return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc,
                             "stack slot %s is read before it is written", v->name);
    return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                         "local variable '%s' is read before it is assigned", v->name);
}

/* Whether t is a local array, or a tuple holding one. */
static int holds_local_array(const GjType *t) {
    if (t->kind == GJ_TK_ARRAY)
        return t->addrspace == GJ_AS_LOCAL;
    for (int k = 0; t->kind == GJ_TK_TUPLE && k < t->n; k++)
        if (holds_local_array(t->elems[k]))
            return 1;
    return 0;
}

/* A device function's return: its type is the unification of all returns. */
static const GjType *return_type(Infer *in, const GjIns *ins, const GjType *t) {
    GjFunc *f = in->f;
    if (!f->is_device) {
        if (t->kind != GJ_TK_NONE)
            return gj_infer_fail(in, GJ_DIAG_KERNEL_RETURN, ins->loc,
                                 "a kernel cannot return a value (this one returns %s)", t->name);
        return &gj_ty_none;
    }
    if (t->kind == GJ_TK_CALLABLE || t->kind == GJ_TK_MODULE || t->kind == GJ_TK_DIM3 ||
        t->kind == GJ_TK_RANGE_ITER || t->kind == GJ_TK_TUPLE_ITER || t->kind == GJ_TK_ARRAY_ITER ||
        t->kind == GJ_TK_ZIP_ITER)
        return gj_infer_fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                             "a device function cannot return %s", t->name);
    if (holds_local_array(t))
        return gj_infer_fail(
            in, GJ_DIAG_TYPING, ins->loc,
            "a device function cannot return its local "
            "array (%s): the array ends with the call; let the caller make it with "
            "local.array and pass it in",
            t->name);
    const GjType *u = join(in, f->ret_type, t);
    if (!u)
        return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                             "%s returns %s here but %s elsewhere; every return must have one type",
                             f->code->name ? f->code->name : "function", t->name,
                             f->ret_type->name);
    f->ret_type = u;
    return &gj_ty_none;
}

/* The type of ins's result (&gj_ty_none for instructions without one), or
   NULL when an operand is not typed yet or the instruction is ill-typed. */
static const GjType *ins_type(Infer *in, GjIns *ins) {
    for (int k = 0; k < ins->nargs; k++) {
        if (!gj_infer_arg_type(in, ins, k))
            return NULL;
    }
    const GjType *a = ins->nargs > 0 ? gj_infer_arg_type(in, ins, 0) : NULL;
    const GjType *b = ins->nargs > 1 ? gj_infer_arg_type(in, ins, 1) : NULL;
    switch (ins->op) {
    case GJ_OP_CONST: return const_type(in, &ins->c, ins->loc);
    case GJ_OP_GLOBAL: return global_type(in, &ins->global, ins->loc);
    case GJ_OP_LOAD_VAR: return load_var(in, ins);
    case GJ_OP_STORE_VAR: return store_var(in, ins, a);
    case GJ_OP_BINOP: return gj_infer_binop_type(in, (GjBinop)ins->sub, a, b, ins->loc);
    case GJ_OP_UNOP: return gj_infer_unop_type(in, (GjUnop)ins->sub, a, ins->loc);
    case GJ_OP_COMPARE: return gj_infer_compare_type(in, (GjCmp)ins->sub, a, b, ins->loc);
    case GJ_OP_TRUTH:
        if (!gj_ty_is_scalar(a) && a->kind != GJ_TK_NONE)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc,
                                 "the truth value of %s is not defined", a->name);
        return &gj_ty_bool;
    case GJ_OP_GETATTR: return getattr_type(in, a, ins->name, ins->loc);
    case GJ_OP_GETITEM: return getitem_type(in, ins, a, b);
    case GJ_OP_SETITEM:
        return setitem_check(in, ins, a, b, gj_infer_arg_type(in, ins, 2)) ? &gj_ty_none : NULL;
    case GJ_OP_CALL: return gj_infer_call_type(in, ins, a);
    case GJ_OP_BUILD_SLICE: return slice_type(in, ins);
    case GJ_OP_BUILD_TUPLE: {
        const GjType **elems = GJ_NEW_N(&in->c->arena, const GjType *, ins->nargs + 1);
        if (!elems)
            return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
        for (int k = 0; k < ins->nargs; k++)
            elems[k] = gj_infer_arg_type(in, ins, k);
        return gj_ty_tuple(in->c, elems, ins->nargs);
    }
    case GJ_OP_TUPLE_GET:
        if (a->kind != GJ_TK_TUPLE || ins->i < 0 || ins->i >= a->n)
            return gj_infer_fail(in, GJ_DIAG_TYPING, ins->loc, "index %lld out of range for %s",
                                 (long long)ins->i, a->name);
        return a->elems[ins->i];
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_NEXT: return gj_infer_iter_type(in, ins, a);
    case GJ_OP_ITER_VALID: return gj_infer_iter_type(in, ins, a) ? &gj_ty_bool : NULL;
    case GJ_OP_ITER_VALUE:
        return gj_infer_iter_type(in, ins, a) ? gj_infer_iter_value_type(in, a) : NULL;
    case GJ_OP_JUMP: return &gj_ty_none;
    case GJ_OP_BRANCH:
        if (a->kind != GJ_TK_BOOL)   /* build.c inserts TRUTH */
            return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "branch on %s, not bool", a->name);
        return &gj_ty_none;
    case GJ_OP_RETURN: return return_type(in, ins, a);
    case GJ_OP_RAISE: return &gj_ty_none;
    case GJ_NOPS: break;
    }
    return gj_infer_fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown IR op %d", (int)ins->op);
}

/* What the "during: typing of ..." note calls an instruction. */
static const char *ins_what(Infer *in, const GjIns *ins) {
    GjArena *a = &in->c->arena;
    switch (ins->op) {
    case GJ_OP_STORE_VAR:
        return in->f->vars[ins->var].kind == GJ_VAR_STACK
                   ? "a value that joins two paths (a conditional expression, and/or)"
                   : gj_arena_printf(a, "assignment to '%s'", in->f->vars[ins->var].name);
    case GJ_OP_LOAD_VAR:
        return in->f->vars[ins->var].kind == GJ_VAR_STACK
                   ? "a value that joins two paths (a conditional expression, and/or)"
                   : gj_arena_printf(a, "variable '%s'", in->f->vars[ins->var].name);
    case GJ_OP_BINOP:
        return gj_arena_printf(a, "operator %s", gj_ir_binop_symbol((GjBinop)ins->sub));
    case GJ_OP_UNOP:
        return gj_arena_printf(a, "unary operator %s", gj_ir_unop_symbol((GjUnop)ins->sub));
    case GJ_OP_COMPARE:
        return gj_arena_printf(a, "comparison %s", gj_ir_cmp_symbol((GjCmp)ins->sub));
    case GJ_OP_GETATTR: return gj_arena_printf(a, "attribute '%s'", ins->name);
    case GJ_OP_GLOBAL: return gj_arena_printf(a, "global '%s'", ins->global.key);
    case GJ_OP_CALL: {
        const GjType *callee = in->f->temp_types[ins->args[0]];
        if (callee && callee->callee)
            return gj_arena_printf(a, "call to %s", callee->name);
        return gj_arena_printf(a, "call to %s",
                               callee && callee->kind == GJ_TK_CALLABLE
                                   ? gj_infer_fn_name(callee->intrinsic)
                                   : "a value");
    }
    case GJ_OP_GETITEM: return "subscript";
    case GJ_OP_SETITEM: return "assignment to a subscript";
    case GJ_OP_RETURN: return "return";
    case GJ_OP_RAISE: return "raise";
    case GJ_OP_CONST: return "constant";
    case GJ_OP_TRUTH:
    case GJ_OP_BRANCH: return "condition";
    case GJ_OP_BUILD_TUPLE:
    case GJ_OP_TUPLE_GET: return "tuple";
    case GJ_OP_BUILD_SLICE: return "slice";
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_VALID:
    case GJ_OP_ITER_VALUE:
    case GJ_OP_ITER_NEXT: return "for loop";
    case GJ_OP_JUMP:
    case GJ_NOPS: break;
    }
    return gj_ir_op_name(ins->op);
}

static GjStatus sweep_block(Infer *in, GjBlock *b) {
    for (int32_t k = 0; k < b->nins; k++) {
        GjIns *ins = &b->ins[k];
        const GjType *t = ins_type(in, ins);
        if (in->c->diag) {
            gj_note(in->c, "typing of %s at %s:%d", ins_what(in, ins),
                    in->f->code->filename ? in->f->code->filename : "?", ins->loc.line);
            return GJ_ERR;
        }
        if (ins->dst >= 0) {
            in->f->temp_types[ins->dst] = t;
            in->defs[ins->dst] = ins;
        }
    }
    return GJ_OK;
}

static void mark_reachable(Infer *in, int32_t id) {
    if (in->reachable[id])
        return;
    in->reachable[id] = 1;
    const GjBlock *b = in->f->blocks[id];
    for (int32_t s = 0; s < b->nsucc; s++)
        mark_reachable(in, b->succ[s]);
}

/* One pass over the reachable blocks, in layout order (reverse postorder
   would converge in fewer sweeps; the functions are small). */
static GjStatus sweep(Infer *in) {
    in->changed = 0;
    if (in->f->is_device)
        in->f->ret_type = NULL;   /* recomputed from this sweep's returns */
    for (int32_t i = 0; i < in->f->nblocks; i++) {
        if (in->reachable[i] && sweep_block(in, in->f->blocks[i]) != GJ_OK)
            return GJ_ERR;
    }
    return GJ_OK;
}

GjStatus gj_infer_func(GjCtx *c, GjFunc *f) {
    /* require: build.c's invariants (ir.h); code->argtypes for every parameter */
    Infer in = {.c = c, .f = f};
    in.defs = GJ_NEW_N(&c->arena, const GjIns *, f->ntemps + 1);
    in.reachable = GJ_NEW_N(&c->arena, char, f->nblocks + 1);
    /* As long as ir.c's temps_cap says, should a later pass add temps. */
    int32_t ntypes = f->temps_cap > f->ntemps ? f->temps_cap : f->ntemps;
    f->temp_types = GJ_NEW_N(&c->arena, const GjType *, ntypes + 1);
    if (!in.defs || !in.reachable || !f->temp_types)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory in type inference");
    for (int32_t v = 0; v < f->nvars; v++) {
        f->vars[v].type = NULL;
        if (f->vars[v].kind == GJ_VAR_ARG && v < f->code->argcount)
            f->vars[v].type = f->code->argtypes[v];
    }
    f->ret_type = &gj_ty_none;
    if (f->nblocks > 0)
        mark_reachable(&in, 0);

    int sweeps = 0;
    do {
        if (++sweeps > 10000)
            return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1},
                            "type inference of %s did not converge", f->code->name);
        sweep(&in);
    } while (in.changed);
    in.report = 1;
    if (sweep(&in) != GJ_OK)
        return GJ_ERR;
    if (!f->ret_type)
        f->ret_type = &gj_ty_none;   /* no return is reachable */
    if (!(f->ret_type = gj_spec_arg_type(c, f->ret_type)))
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    const GjType *declared = f->is_device ? f->code->rettype : NULL;
    if (declared && declared != f->ret_type) {
        if (!gj_ty_is_scalar(declared) || !gj_ty_is_scalar(f->ret_type))
            return gj_error(c, GJ_DIAG_TYPING, (GjLoc){f->code->firstlineno, -1, -1},
                            "%s returns %s, not the %s its signature declares", f->code->name,
                            f->ret_type->name, declared->name);
        f->ret_type = declared;   /* lowering converts each returned value */
    }
    return GJ_OK;
}
