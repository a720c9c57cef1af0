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
#include "ir.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "intrinsics.h"
#include "typemem.h"

enum { GJ_MAX_NDIM_INDEX = 32 };   /* axes an indexed array may have */

typedef struct Infer {
    GjCtx *c;
    GjFunc *f;
    const GjIns **defs;   /* defining instruction of each temp (constant operands) */
    char *reachable;      /* per block */
    int report;           /* the final sweep: record diagnostics */
    int changed;          /* a variable's type changed during this sweep */
} Infer;

/* Records a diagnostic in the final sweep; returns NULL (no type) always. */
static const GjType *fail(Infer *in, GjDiagKind kind, GjLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static const GjType *fail(Infer *in, GjDiagKind kind, GjLoc loc, const char *fmt, ...) {
    if (!in->report)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&in->c->arena, fmt, ap);
    va_end(ap);
    gj_error(in->c, kind, loc, "%s", msg ? msg : fmt);
    return NULL;
}

static const GjType *arg_type(const Infer *in, const GjIns *ins, int k) {
    return in->f->temp_types[ins->args[k]];
}

/* The value of a temp defined in this block by an integer constant or a
   frozen integer global (grid(NDIM)). */
static int const_int(const Infer *in, int32_t temp, int64_t *value) {
    const GjIns *def = in->defs[temp];
    const GjConst *k = !def ? NULL : def->op == GJ_OP_CONST ? &def->c
                     : def->op == GJ_OP_GLOBAL && def->global.kind == GJ_GLOBAL_CONST
                         ? &def->global.value : NULL;
    if (!k || k->kind != GJ_CONST_INT)
        return 0;
    *value = k->i;
    return 1;
}

static int is_int_or_bool(const GjType *t) {
    return gj_ty_is_integer(t) || t->kind == GJ_TK_BOOL;
}

static int is_complex(const GjType *t) {
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
            return fail(in, GJ_DIAG_INTERNAL, loc, "out of memory");
        for (int32_t i = 0; i < k->n; i++) {
            if (!(elems[i] = const_type(in, &k->items[i], loc)))
                return NULL;
        }
        return gj_ty_tuple(in->c, elems, k->n);
    }
    case GJ_CONST_STR:   /* print() takes one; other uses fail where they are typed */
        return gj_ty_str(in->c, k->s ? k->s : "");
    case GJ_CONST_SLICE:   /* bytecode.c turns LOAD_CONST of one into BUILD_SLICE */
    case GJ_CONST_OTHER:
        break;
    }
    return fail(in, GJ_DIAG_UNSUPPORTED, loc, "constants of type '%s' are not supported in kernels",
                k->s ? k->s : "?");
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
    return fail(in, GJ_DIAG_UNSUPPORTED, loc, "'%s' is not supported in kernels", name);
}

/* A frozen NumPy array: a readonly C-contiguous array in constant memory. */
static const GjType *const_array_type(Infer *in, const GjGlobal *g, GjLoc loc) {
    const GjType *dtype = gj_ty_from_name(g->array->dtype);
    if (!dtype)
        return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                    "global array '%s' has dtype %s, which kernels do not support", g->key,
                    g->array->dtype);
    if (!g->array->data)   /* pymodule copies at most 64 KiB */
        return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                    "global array '%s' is %zu bytes; constant memory holds 64 KiB, so pass "
                    "it to the kernel as an argument", g->key, g->array->nbytes);
    const GjType *t = gj_ty_array(in->c, dtype, g->array->ndim, GJ_LAYOUT_C);
    return t ? gj_ty_array_in(in->c, t, GJ_AS_CONST) : NULL;
}

static const GjType *global_type(Infer *in, const GjGlobal *g, GjLoc loc) {
    int id;
    switch (g->kind) {
    case GJ_GLOBAL_MISSING:
        return fail(in, GJ_DIAG_TYPING, loc, "name '%s' is not defined", g->key);
    case GJ_GLOBAL_MODULE:
        return gj_ty_module(in->c, g->name);
    case GJ_GLOBAL_BUILTIN:
        if ((id = gj_intrinsic_lookup("builtins", g->name)) < 0)
            return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                        "the built-in '%s' is not supported in kernels", g->name);
        return intrinsic_type(in, id);
    case GJ_GLOBAL_INTRINSIC:
        return intrinsic_global_type(in, g->name, loc);
    case GJ_GLOBAL_CONST:
        return const_type(in, &g->value, loc);
    case GJ_GLOBAL_FUNCTION:
        return gj_ty_function(in->c, g->callee, g->name);
    case GJ_GLOBAL_ARRAY:
        return const_array_type(in, g, loc);
    case GJ_GLOBAL_OTHER:
        break;
    }
    return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                "global '%s' is a '%s', which cannot be used in a kernel", g->key,
                g->name ? g->name : "?");
}

/* ---- operators -------------------------------------------------------- */

/* NumPy's result type of `a op b`: their promotion, except for true
   division of integers (float64) and NumPy's quirks for two bools. */
static const GjType *binop_type(Infer *in, GjBinop op, const GjType *a, const GjType *b, GjLoc loc) {
    const char *sym = gj_ir_binop_symbol(op);
    if (op == GJ_BIN_MATMUL)
        return fail(in, GJ_DIAG_UNSUPPORTED, loc, "the '@' operator is not supported in kernels");
    const GjType *p = gj_ty_promote(a, b);
    if (!p)
        return fail(in, GJ_DIAG_TYPING, loc, "unsupported operand types for %s: %s and %s", sym,
                    a->name, b->name);
    int both_bool = a->kind == GJ_TK_BOOL && b->kind == GJ_TK_BOOL;
    switch (op) {
    case GJ_BIN_ADD: case GJ_BIN_MUL:
        return p;   /* bool + bool is logical or, bool * bool logical and */
    case GJ_BIN_SUB:
        if (both_bool)
            return fail(in, GJ_DIAG_TYPING, loc,
                        "boolean subtract (bool - bool) is not supported, as in NumPy; "
                        "use ^ or != instead");
        return p;
    case GJ_BIN_TRUEDIV:
        if (p->kind == GJ_TK_WEAK_INT)
            return &gj_ty_weak_float;
        return is_int_or_bool(p) ? &gj_ty_float64 : p;
    case GJ_BIN_FLOORDIV: case GJ_BIN_MOD:
        if (is_complex(p))
            return fail(in, GJ_DIAG_TYPING, loc, "operator %s is not defined for complex numbers",
                        sym);
        return both_bool ? &gj_ty_int8 : p;
    case GJ_BIN_POW:
        return both_bool ? &gj_ty_int8 : p;
    case GJ_BIN_LSHIFT: case GJ_BIN_RSHIFT: case GJ_BIN_AND: case GJ_BIN_OR: case GJ_BIN_XOR:
        if (!is_int_or_bool(a) || !is_int_or_bool(b) || !is_int_or_bool(p))
            return fail(in, GJ_DIAG_TYPING, loc,
                        "operator %s needs integer or bool operands, not %s and %s", sym,
                        a->name, b->name);
        if (both_bool && (op == GJ_BIN_LSHIFT || op == GJ_BIN_RSHIFT))
            return &gj_ty_int8;
        return p;
    case GJ_BIN_MATMUL: case GJ_NBINOPS:
        break;
    }
    return fail(in, GJ_DIAG_INTERNAL, loc, "unknown binary operator %d", (int)op);
}

static const GjType *unop_type(Infer *in, GjUnop op, const GjType *a, GjLoc loc) {
    const char *sym = gj_ir_unop_symbol(op);
    if (!gj_ty_is_scalar(a))
        return fail(in, GJ_DIAG_TYPING, loc, "unsupported operand type for unary %s: %s", sym,
                    a->name);
    switch (op) {
    case GJ_UN_NEG:
        if (a->kind == GJ_TK_BOOL)
            return fail(in, GJ_DIAG_TYPING, loc,
                        "boolean negative (-bool) is not supported, as in NumPy; use 'not'");
        return a;
    case GJ_UN_POS:
        return a;
    case GJ_UN_NOT:
        return &gj_ty_bool;
    case GJ_UN_INVERT:
        if (!is_int_or_bool(a))
            return fail(in, GJ_DIAG_TYPING, loc, "operator ~ needs an integer or bool, not %s",
                        a->name);
        return a;
    }
    return fail(in, GJ_DIAG_INTERNAL, loc, "unknown unary operator %d", (int)op);
}

static const GjType *compare_type(Infer *in, GjCmp op, const GjType *a, const GjType *b, GjLoc loc) {
    if (!gj_ty_promote(a, b))
        return fail(in, GJ_DIAG_TYPING, loc, "cannot compare %s and %s with %s", a->name, b->name,
                    gj_ir_cmp_symbol(op));
    if ((is_complex(a) || is_complex(b)) && op != GJ_CMP_EQ && op != GJ_CMP_NE)
        return fail(in, GJ_DIAG_TYPING, loc, "complex numbers cannot be ordered with %s",
                    gj_ir_cmp_symbol(op));
    return &gj_ty_bool;
}

/* ---- attributes and subscripts ---------------------------------------- */

/* The type of x.real and x.imag: a complex's component float, else x's own. */
static const GjType *real_part_type(const GjType *t) {
    if (t->kind == GJ_TK_WEAK_COMPLEX)
        return &gj_ty_weak_float;
    if (t->kind == GJ_TK_COMPLEX)
        return t->bits == 64 ? &gj_ty_float32 : &gj_ty_float64;
    return t;
}

static const GjType *int64_tuple(Infer *in, int n) {
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
        if (strcmp(name, "size") == 0 || strcmp(name, "ndim") == 0 ||
            strcmp(name, "itemsize") == 0)
            return &gj_ty_int64;
        if (strcmp(name, "shape") == 0 || strcmp(name, "strides") == 0)
            return int64_tuple(in, obj->ndim);
        return fail(in, GJ_DIAG_UNSUPPORTED, loc, "attribute '%s' of %s is not supported", name,
                    obj->name);
    case GJ_TK_MODULE: {
        if ((id = gj_intrinsic_lookup(obj->name, name)) >= 0)
            return intrinsic_type(in, id);
        const GjType *scalar = holds_scalar_types(obj->name) && strlen(name) > 1
                                   ? gj_ty_from_name(name) : NULL;
        if (scalar && (id = gj_intrinsic_lookup("numpy", scalar->name)) >= 0)
            return intrinsic_type(in, id);   /* gpujit.float32: gpujit/types.py, NumPy's */
        const char *nested = gj_arena_printf(&in->c->arena, "%s.%s", obj->name, name);
        if (nested && (gj_intrinsic_is_namespace(nested) || holds_scalar_types(nested)))
            return gj_ty_module(in->c, nested);   /* gpujit.atomic, gpujit.types */
        return fail(in, GJ_DIAG_UNSUPPORTED, loc, "'%s.%s' is not supported in kernels",
                    obj->name, name);
    }
    case GJ_TK_DIM3:
        if ((id = gj_intrinsic_lookup("dim3", name)) < 0)
            return fail(in, GJ_DIAG_TYPING, loc, "%s has no attribute '%s' (only x, y, z)",
                        gj_intrinsic_name((GjIntrinsic)obj->intrinsic), name);
        return &gj_ty_int64;   /* zero-extended registers: indices never wrap (lower_thread.c) */
    case GJ_TK_BOOL: case GJ_TK_INT: case GJ_TK_UINT: case GJ_TK_FLOAT: case GJ_TK_COMPLEX:
    case GJ_TK_WEAK_INT: case GJ_TK_WEAK_FLOAT: case GJ_TK_WEAK_COMPLEX:
        /* x.real, x.imag, x.conjugate() of any number, as NumPy scalars have */
        if (strcmp(name, "real") == 0 || strcmp(name, "imag") == 0)
            return real_part_type(obj);
        if (strcmp(name, "conjugate") == 0)
            return gj_ty_callable(in->c, GJ_INTR_METHOD_CONJUGATE);
        break;
    case GJ_TK_NONE: case GJ_TK_TUPLE: case GJ_TK_RANGE_ITER: case GJ_TK_CALLABLE:
    case GJ_TK_SLICE: case GJ_TK_TUPLE_ITER: case GJ_TK_STR: case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER:
        break;
    }
    return fail(in, GJ_DIAG_UNSUPPORTED, loc, "attribute '%s' of %s is not supported", name,
                obj->name);
}

/* One item of an array index: an integer (drops its axis) or a slice
   (keeps it); anything else is an error. */
static int check_index_item(Infer *in, const GjType *item, GjLoc loc) {
    if (gj_ty_is_integer(item) || item->kind == GJ_TK_SLICE)
        return 1;
    if (item->kind == GJ_TK_NONE)
        fail(in, GJ_DIAG_UNSUPPORTED, loc,
             "indexing with None (numpy.newaxis) is not supported in kernels");
    else
        fail(in, GJ_DIAG_TYPING, loc, "array index must be an integer or a slice, not %s",
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
static const GjType *array_index_type(Infer *in, const GjType *arr, const GjType *idx, GjLoc loc) {
    const GjType *items[GJ_MAX_NDIM_INDEX];
    int n = idx->kind == GJ_TK_TUPLE ? idx->n : 1;
    for (int k = 0; k < n; k++) {
        if (!check_index_item(in, idx->kind == GJ_TK_TUPLE ? idx->elems[k] : idx, loc))
            return NULL;
    }
    if (n > arr->ndim)
        return fail(in, GJ_DIAG_TYPING, loc, "too many indices for %s: %d given", arr->name, n);
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
static const GjType *tuple_element_type(Infer *in, const GjType *t) {
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
                         (is_complex(x) && is_complex(e)));
        if (!same_kind || !(e = gj_ty_promote(e, x)))
            return NULL;
    }
    return e;
}

static const GjType *getitem_type(Infer *in, const GjIns *ins, const GjType *obj,
                                  const GjType *idx) {
    if (obj->kind == GJ_TK_ARRAY)
        return array_index_type(in, obj, idx, ins->loc);
    if (obj->kind == GJ_TK_CALLABLE && obj->callee)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "launching a kernel from a kernel (%s[...]) is not supported; call it "
                    "as a device function instead",
                    obj->callee->code->name ? obj->callee->code->name : "?");
    if (obj->kind == GJ_TK_TUPLE) {
        int64_t k;
        if (idx->kind == GJ_TK_SLICE)
            return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "slicing a tuple is not supported");
        if (!const_int(in, ins->args[1], &k)) {
            const GjType *e = gj_ty_is_integer(idx) ? tuple_element_type(in, obj) : NULL;
            if (!e || obj->n == 0)
                return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                            "%s can only be indexed by an integer constant (a variable index "
                            "needs a tuple whose items have one type)", obj->name);
            return e;
        }
        if (k < 0)
            k += obj->n;
        if (k < 0 || k >= obj->n)
            return fail(in, GJ_DIAG_TYPING, ins->loc, "tuple index out of range for %s",
                        obj->name);
        return obj->elems[k];
    }
    return fail(in, GJ_DIAG_TYPING, ins->loc, "%s cannot be indexed", obj->name);
}

static const GjType *setitem_check(Infer *in, const GjIns *ins, const GjType *arr,
                                   const GjType *idx, const GjType *val) {
    if (arr->kind != GJ_TK_ARRAY)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s does not support item assignment",
                    arr->name);
    if (arr->addrspace == GJ_AS_CONST)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot store into %s: module-level arrays "
                    "are frozen into constant memory; pass the array as an argument instead",
                    arr->name);
    const GjType *elem = array_index_type(in, arr, idx, ins->loc);
    if (!elem)
        return NULL;
    if (elem->kind == GJ_TK_ARRAY)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "assignment to a slice or sub-array of %s is not supported in kernels; "
                    "assign its elements in a loop", arr->name);
    if (!gj_ty_is_scalar(val))
        return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot store %s into an element of %s",
                    val->name, arr->name);
    if (is_complex(val) && !is_complex(elem))
        return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot store %s into %s without losing the "
                    "imaginary part", val->name, arr->name);
    return elem;
}

/* slice(start, stop[, step]): each part None or an integer; a constant
   step of 0 is Python's ValueError, caught here. */
static const GjType *slice_type(Infer *in, const GjIns *ins) {
    const GjType *parts[3] = {&gj_ty_none, &gj_ty_none, &gj_ty_none};
    int64_t step;
    for (int k = 0; k < ins->nargs && k < 3; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (t->kind != GJ_TK_NONE && !gj_ty_is_integer(t))
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "slice indices must be integers or None, not %s", t->name);
        parts[k] = t->kind == GJ_TK_NONE ? &gj_ty_none : gj_ty_concrete(t);
    }
    if (ins->nargs == 3 && const_int(in, ins->args[2], &step) && step == 0)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "slice step cannot be zero");
    return gj_ty_slice(in->c, parts[0], parts[1], parts[2]);
}

/* ---- intrinsic calls -------------------------------------------------- */

/* How messages name an intrinsic: "range", "gpujit.grid", "math.sqrt". */
static const char *fn_name(int id) {
    const char *name = gj_intrinsic_name((GjIntrinsic)id);
    return strncmp(name, "builtins.", 9) == 0 ? name + 9 : name;
}

/* Whether the call passes lo..hi arguments; records the error if not. */
static int expect_nargs(Infer *in, const GjIns *ins, int id, int lo, int hi) {
    int n = ins->nargs - 1;
    if (n >= lo && n <= hi)
        return 1;
    if (lo == hi)
        fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes %d argument%s, got %d", fn_name(id), lo,
             lo == 1 ? "" : "s", n);
    else if (hi == INT_MAX)
        fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes at least %d arguments, got %d",
             fn_name(id), lo, n);
    else
        fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes %d to %d arguments, got %d", fn_name(id),
             lo, hi, n);
    return 0;
}

/* Promotes the scalar arguments of a call (or returns NULL with a message). */
static const GjType *promote_args(Infer *in, const GjIns *ins, int id, int want_int) {
    const GjType *p = NULL;
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t) || (want_int && !gj_ty_is_integer(t)))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() arguments must be %s, not %s",
                        fn_name(id), want_int ? "integers" : "scalars",
                        t->name);
        const GjType *q = p ? gj_ty_promote(p, t) : t;
        if (!q || (want_int && !gj_ty_is_integer(q)))
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "%s() arguments %s and %s have no common %s type",
                        fn_name(id), p->name, t->name,
                        want_int ? "integer" : "scalar");
        p = q;
    }
    return p;
}

/* grid(n) / gridsize(n): n must be the constant 1, 2 or 3. */
static const GjType *grid_type(Infer *in, const GjIns *ins, int id) {
    int64_t ndim;
    if (!expect_nargs(in, ins, id, 1, 1))
        return NULL;
    if (!const_int(in, ins->args[1], &ndim) || ndim < 1 || ndim > 3)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() takes the constant 1, 2 or 3",
                    fn_name(id));
    return ndim == 1 ? &gj_ty_int64 : int64_tuple(in, (int)ndim);
}

/* The real type holding |z| for a complex z, else t. */
static const GjType *abs_type(const GjType *t) {
    return real_part_type(t);
}

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
    if (is_complex(t))
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
    const GjType *t = NULL;
    int any_complex = 0;
    for (int k = 1; k <= n; k++) {
        const GjType *a = arg_type(in, ins, k);
        if (!gj_ty_is_scalar(a))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a number, not %s",
                        fn_name(id), a->name);
        any_complex |= is_complex(a);
        if (gj_math_kind(fn) == GJ_MK_LDEXP && k == 2) {
            if (!gj_ty_is_integer(a) && a->kind != GJ_TK_BOOL)
                return fail(in, GJ_DIAG_TYPING, ins->loc,
                            "%s() needs an integer exponent, not %s", fn_name(id), a->name);
            continue;
        }
        t = t ? gj_ty_promote(t, a) : a;
    }
    if (any_complex && ns == GJ_NS_MATH)
        return fail(in, GJ_DIAG_TYPING, ins->loc,
                    "%s() needs a real number, not %s; use cmath for complex numbers",
                    fn_name(id), t->name);
    if (any_complex && !gj_math_has_complex(fn))
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s() of %s is not supported",
                    fn_name(id), t->name);
    if (ns == GJ_NS_CMATH || any_complex) {
        if (gj_math_kind(fn) == GJ_MK_PRED)
            return &gj_ty_bool;
        return complex_of(ns == GJ_NS_NUMPY ? gj_ty_concrete(t) : t);
    }
    switch (gj_math_kind(fn)) {
    case GJ_MK_FLOAT:
        if (fn == GJ_MF_FMOD && ns == GJ_NS_NUMPY && is_int_or_bool(gj_ty_concrete(t)))
            /* np.fmod of integers is C's %: the integer type (bool, bool: int8) */
            return t->kind == GJ_TK_BOOL ? &gj_ty_int8 : gj_ty_concrete(t);
        return float_result(ns, t);
    case GJ_MK_ROUND:   /* math.floor -> int64; np.floor keeps the dtype (NumPy 2) */
        if (ns == GJ_NS_MATH)
            return &gj_ty_int64;
        return gj_ty_concrete(t);
    case GJ_MK_PRED:
        return &gj_ty_bool;
    case GJ_MK_POW:   /* math.pow is a float function; numpy.power is ** */
        if (ns == GJ_NS_MATH)
            return float_result(ns, t);
        return binop_type(in, GJ_BIN_POW, arg_type(in, ins, 1), arg_type(in, ins, 2), ins->loc);
    case GJ_MK_FREXP: {   /* math: (float, int); numpy: (float, int32) */
        const GjType *elems[2] = {gj_ty_concrete(float_result(ns, t)),
                                  ns == GJ_NS_MATH ? &gj_ty_int64 : &gj_ty_int32};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_MK_LDEXP:
        return float_result(ns, t);
    }
    return fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown math function %d", (int)fn);
}

/* round(x) -> int64 (half to even); round(x, ndigits) keeps x's type, as
   NumPy scalars' __round__ does. */
static const GjType *round_type(Infer *in, const GjIns *ins, int id) {
    if (!expect_nargs(in, ins, id, 1, 2))
        return NULL;
    const GjType *t = arg_type(in, ins, 1);
    if (!gj_ty_is_scalar(t) || is_complex(t))
        return fail(in, GJ_DIAG_TYPING, ins->loc, "round() needs a real number, not %s",
                    t->name);
    if (ins->nargs == 2)
        return &gj_ty_int64;
    const GjType *nd = arg_type(in, ins, 2);
    if (!gj_ty_is_integer(nd))
        return fail(in, GJ_DIAG_TYPING, ins->loc, "round() needs an integer ndigits, not %s",
                    nd->name);
    if (t->kind == GJ_TK_BOOL)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "round() of bool with ndigits is not supported");
    return gj_ty_concrete(t);
}

/* complex(re[, im]): Python's complex, complex128. */
static const GjType *complex_ctor_type(Infer *in, const GjIns *ins, int id) {
    if (!expect_nargs(in, ins, id, 1, 2))
        return NULL;
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "complex() needs numbers, not %s", t->name);
    }
    return &gj_ty_complex128;
}

/* np.float32(x), np.int8(x), ...: x converted to that dtype; the complex
   types also take (re, im), as complex() does (their rows' max_args). */
static const GjType *np_type_call(Infer *in, const GjIns *ins, int id) {
    const GjType *to = gj_ty_from_name(gj_intrinsic_np_type((GjIntrinsic)id));
    if (!to || !expect_nargs(in, ins, id, 1, gj_intrinsic_row((GjIntrinsic)id)->max_args))
        return to ? NULL : fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown NumPy type");
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (!gj_ty_is_scalar(t))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a number, not %s",
                        fn_name(id), t->name);
        if (is_complex(t) && !is_complex(to))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot convert %s to %s", t->name,
                        to->name);
    }
    return to;
}

/* print(*values): each a real number, bool, None or str constant
   (lower_print.c formats them). */
static const GjType *print_type(Infer *in, const GjIns *ins, int id) {
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (is_complex(t))
            return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                        "%s() of %s (argument %d) is not supported; print .real and .imag",
                        fn_name(id), gj_ty_concrete(t)->name, k);
        if (!gj_ty_is_scalar(t) && t->kind != GJ_TK_STR && t->kind != GJ_TK_NONE)
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "%s() cannot print argument %d (%s): it prints numbers, bools, None "
                        "and str constants", fn_name(id), k, t->name);
    }
    return &gj_ty_none;
}

/* The receiver of a method call: x in x.conjugate(), the object of the
   GETATTR that defined the callee. */
static const GjType *receiver_type(Infer *in, const GjIns *ins) {
    const GjIns *def = in->defs[ins->args[0]];
    if (!def || def->op != GJ_OP_GETATTR)
        return NULL;
    return arg_type(in, def, 0);
}

/* An atomic (ary, idx, operands...): ary a writable array whose dtype the
   row accepts (the GJ_AT_* bits of its sub), idx one element of it, the
   operands real scalars (they convert to the dtype); -> the dtype. */
static const GjType *atomic_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    static const struct { const GjType *t; int bit; } dtypes[] = {
        {&gj_ty_int32, GJ_AT_INT32}, {&gj_ty_int64, GJ_AT_INT64},
        {&gj_ty_uint32, GJ_AT_UINT32}, {&gj_ty_uint64, GJ_AT_UINT64},
        {&gj_ty_float16, GJ_AT_FLOAT16}, {&gj_ty_float32, GJ_AT_FLOAT32},
        {&gj_ty_float64, GJ_AT_FLOAT64},
    };
    const GjType *t = arg_type(in, ins, 1);
    if (t->kind != GJ_TK_ARRAY)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs an array, not %s", fn_name(id),
                    t->name);
    if (t->addrspace == GJ_AS_CONST)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() cannot write to %s: module-level arrays "
                    "are frozen into constant memory; pass the array as an argument instead",
                    fn_name(id), t->name);
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
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() does not support %s arrays (it supports "
                    "%s)", fn_name(id), t->dtype->name, names);
    int first = (row->sub & GJ_AT_FIRST) != 0;   /* no index: element 0 */
    if (first && t->ndim != 1)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a 1-d array, not %s",
                    fn_name(id), t->name);
    const GjType *elem = first ? t->dtype : array_index_type(in, t, arg_type(in, ins, 2), ins->loc);
    if (!elem)
        return NULL;
    if (elem->kind == GJ_TK_ARRAY)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs the index of one element of %s "
                    "(an integer per axis), not %s", fn_name(id), t->name,
                    arg_type(in, ins, 2)->name);
    for (int k = first ? 2 : 3; k < ins->nargs; k++) {
        const GjType *v = arg_type(in, ins, k);
        if (!gj_ty_is_scalar(v) || is_complex(v))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs a real number to combine with "
                        "%s, not %s", fn_name(id), t->name, v->name);
    }
    return t->dtype;
}

static const char *param_name(const GjIntrinsicRow *row, int p, char *buf, size_t len);

/* A warp function (mask, value, integers...): the value a real scalar (a
   bool, an integer or a float: what a register holds), the others integers.
   -> the row's result, the value's type, or (row's result, bool). */
static const GjType *warp_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    for (int k = 1; k < ins->nargs; k++) {
        const GjType *t = arg_type(in, ins, k);
        if (k == 2 ? !gj_ty_is_scalar(t) || is_complex(t) : !is_int_or_bool(t)) {
            char buf[64];
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs %s for '%s', not %s",
                        fn_name(id), k == 2 ? "a bool, integer or float" : "an integer",
                        param_name(row, k - 1, buf, sizeof buf), t->name);
        }
    }
    if (row->rule == GJ_TR_WARP)
        return row->result ? row->result : gj_ty_concrete(arg_type(in, ins, 2));
    const GjType *pair[2] = {row->result, &gj_ty_bool};
    return gj_ty_tuple(in->c, pair, 2);
}

/* iter(t): the iterator a loop over t (or zip's argument t) uses. */
static const GjType *iterator_of(Infer *in, const GjType *t, GjLoc loc) {
    if (t->kind == GJ_TK_RANGE_ITER || t->kind == GJ_TK_TUPLE_ITER ||
        t->kind == GJ_TK_ARRAY_ITER || t->kind == GJ_TK_ZIP_ITER)
        return t;
    if (t->kind == GJ_TK_TUPLE) {
        const GjType *e = tuple_element_type(in, t);
        if (!e)
            return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                        "iterating over %s is not supported: a loop over a tuple needs items "
                        "of one type (or one kind of number)", t->name);
        return gj_ty_tuple_iter(in->c, t, e);
    }
    if (t->kind == GJ_TK_ARRAY) {   /* its first axis: elements, or rows as views */
        const GjType *e = array_index_type(in, t, &gj_ty_int64, loc);
        return e ? gj_ty_array_iter(in->c, t, e) : NULL;
    }
    return fail(in, GJ_DIAG_UNSUPPORTED, loc,
                "iterating over %s is not supported; loop over range(), a tuple, an array, "
                "zip() or enumerate()", t->name);
}

/* What iterator `it` yields: zip's the tuple of its iterators' items. */
static const GjType *iter_value_type(Infer *in, const GjType *it) {
    if (it->kind != GJ_TK_ZIP_ITER)
        return it->elems[0];
    const GjType *items[16];
    for (int k = 0; k < it->n; k++)
        if (!(items[k] = iter_value_type(in, it->elems[k])))
            return NULL;
    return gj_ty_tuple(in->c, items, it->n);
}

static const GjType *iter_type(Infer *in, const GjIns *ins, const GjType *it) {
    if (ins->op == GJ_OP_GET_ITER)
        return iterator_of(in, it, ins->loc);
    if (it->kind == GJ_TK_RANGE_ITER || it->kind == GJ_TK_TUPLE_ITER ||
        it->kind == GJ_TK_ARRAY_ITER || it->kind == GJ_TK_ZIP_ITER)
        return it;
    return fail(in, GJ_DIAG_INTERNAL, ins->loc, "%s on %s", gj_ir_op_name(ins->op), it->name);
}

/* zip(a, b, ...) and enumerate(x[, start]) (row sub 1): the zip iterator of
   the arguments' iterators, enumerate's led by an int64 count. */
static const GjType *zip_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    const GjType *its[16];
    int counted = row->sub == 1, n = counted ? 2 : ins->nargs - 1;
    if (n > 15)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s() of more than 15 iterables",
                    fn_name(id));
    if (counted) {
        its[0] = gj_ty_range_iter(in->c, &gj_ty_int64);
        const GjType *start = ins->nargs > 2 ? arg_type(in, ins, 2) : NULL;
        if (start && !gj_ty_is_integer(start))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() start must be an integer, not %s",
                        fn_name(id), start->name);
    }
    for (int k = counted; k < n; k++)
        if (!(its[k] = iterator_of(in, arg_type(in, ins, counted ? 1 : k + 1), ins->loc)))
            return NULL;
    return gj_ty_zip_iter(in->c, its, n);
}

/* operator.add(a, b) & co: the type of the operator the row's sub names. */
static const GjType *operator_type(Infer *in, const GjIns *ins, const GjIntrinsicRow *row) {
    int code = row->sub & 0xff;
    const GjType *a = arg_type(in, ins, 1), *b = ins->nargs > 2 ? arg_type(in, ins, 2) : NULL;
    switch (row->sub & ~0xff) {
    case GJ_OPERATOR_BINOP:
        return binop_type(in, (GjBinop)code, a, b, ins->loc);
    case GJ_OPERATOR_UNOP:
        return unop_type(in, (GjUnop)code, a, ins->loc);
    case GJ_OPERATOR_CMP:
        return compare_type(in, (GjCmp)code, a, b, ins->loc);
    default:
        return fail(in, GJ_DIAG_INTERNAL, ins->loc, "bad operator row");
    }
}

/* min(t) / max(t) of one tuple: the promotion of its items, real scalars. */
static const GjType *minmax_tuple_type(Infer *in, const GjIns *ins, int id) {
    const GjType *t = arg_type(in, ins, 1), *p = NULL;
    if (t->kind == GJ_TK_ARRAY)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "%s() of an array is not supported; loop over it", fn_name(id));
    if (t->kind != GJ_TK_TUPLE || t->n == 0)
        return fail(in, GJ_DIAG_TYPING, ins->loc,
                    "%s() takes a non-empty tuple or 2+ scalars, not %s", fn_name(id), t->name);
    for (int k = 0; k < t->n; k++) {
        const GjType *e = t->elems[k];
        const GjType *q = gj_ty_is_scalar(e) ? (p ? gj_ty_promote(p, e) : e) : NULL;
        if (!q || is_complex(q))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() of %s: items must be real numbers",
                        fn_name(id), t->name);
        p = q;
    }
    return p;
}

/* The type of a call of intrinsic `id` by its row's typing rule; the
   arity is checked already. */
static const GjType *rule_type(Infer *in, const GjIns *ins, int id, const GjIntrinsicRow *row) {
    const GjType *t;
    switch (row->rule) {
    case GJ_TR_VALUE:
        break;
    case GJ_TR_FIXED:
        for (int k = 1; k < ins->nargs; k++)
            if (!gj_ty_is_scalar(t = arg_type(in, ins, k)) || is_complex(t))
                return fail(in, GJ_DIAG_TYPING, ins->loc,
                            "%s() arguments must be real scalars, not %s", fn_name(id), t->name);
        return row->result;
    case GJ_TR_ARG_TYPE:
        return gj_ty_concrete(arg_type(in, ins, row->sub + 1));
    case GJ_TR_ATOMIC:
        return atomic_type(in, ins, id, row);
    case GJ_TR_WARP: case GJ_TR_WARP_PAIR:
        return warp_type(in, ins, id, row);
    case GJ_TR_INT: case GJ_TR_UNSIGNED:
        if (!promote_args(in, ins, id, 1))
            return NULL;
        t = gj_ty_concrete(arg_type(in, ins, 1));
        if (row->rule == GJ_TR_UNSIGNED)
            return t->bits > 32 ? &gj_ty_uint64 : t->bits > 16 ? &gj_ty_uint32
                 : t->bits > 8 ? &gj_ty_uint16 : &gj_ty_uint8;
        return row->result ? row->result : t;
    case GJ_TR_FLOATS:
        if (!(t = promote_args(in, ins, id, 0)) || is_complex(t))
            return t ? fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs real numbers, not %s",
                            fn_name(id), t->name) : NULL;
        return gj_ty_is_float(t) ? gj_ty_concrete(t) : &gj_ty_float64;
    case GJ_TR_SELECT:
        if (!(t = gj_ty_promote(arg_type(in, ins, 2), arg_type(in, ins, 3))) ||
            !gj_ty_is_scalar(arg_type(in, ins, 1)))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() needs scalars, not %s, %s and %s",
                        fn_name(id), arg_type(in, ins, 1)->name, arg_type(in, ins, 2)->name,
                        arg_type(in, ins, 3)->name);
        return gj_ty_concrete(t);
    case GJ_TR_RANGE:
        if (!(t = promote_args(in, ins, id, 1)))
            return NULL;
        return gj_ty_range_iter(in->c, gj_ty_concrete(t));
    case GJ_TR_ABS:
        return (t = promote_args(in, ins, id, 0)) ? abs_type(t) : NULL;
    case GJ_TR_NP_ABS:
        return (t = promote_args(in, ins, id, 0)) ? abs_type(gj_ty_concrete(t)) : NULL;
    case GJ_TR_MINMAX:
        if (ins->nargs == 2)
            return minmax_tuple_type(in, ins, id);
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        if (is_complex(t))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "complex numbers cannot be ordered");
        return t;
    case GJ_TR_ZIP:
        return zip_type(in, ins, id, row);
    case GJ_TR_OPERATOR:
        return operator_type(in, ins, row);
    case GJ_TR_LEN:
        t = arg_type(in, ins, 1);
        if (t->kind != GJ_TK_ARRAY && t->kind != GJ_TK_TUPLE)
            return fail(in, GJ_DIAG_TYPING, ins->loc, "len() of %s is not supported", t->name);
        return &gj_ty_int64;
    case GJ_TR_CONVERT:
        if (!promote_args(in, ins, id, 0))
            return NULL;
        if (row->result != &gj_ty_bool && is_complex(arg_type(in, ins, 1)))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot convert %s with %s()",
                        arg_type(in, ins, 1)->name, fn_name(id));
        return row->result;
    case GJ_TR_COMPLEX:
        return complex_ctor_type(in, ins, id);
    case GJ_TR_ROUND:
        return round_type(in, ins, id);
    case GJ_TR_POW:
        return binop_type(in, GJ_BIN_POW, arg_type(in, ins, 1), arg_type(in, ins, 2), ins->loc);
    case GJ_TR_DIVMOD: {
        if (!(t = binop_type(in, GJ_BIN_FLOORDIV, arg_type(in, ins, 1), arg_type(in, ins, 2),
                             ins->loc)))
            return NULL;
        const GjType *elems[2] = {t, t};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_TR_GRID:
        return grid_type(in, ins, id);
    case GJ_TR_REAL_PART:
        return (t = promote_args(in, ins, id, 0)) ? real_part_type(gj_ty_concrete(t)) : NULL;
    case GJ_TR_SAME:
        return (t = promote_args(in, ins, id, 0)) ? gj_ty_concrete(t) : NULL;
    case GJ_TR_RECEIVER:
        if (!(t = receiver_type(in, ins)))
            return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc, "%s must be called at once",
                        row->name);
        return t;
    case GJ_TR_PHASE: case GJ_TR_POLAR: {
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        t = gj_ty_concrete(real_part_type(t));   /* a float32 phase for complex64 */
        t = t->kind == GJ_TK_FLOAT ? t : &gj_ty_float64;
        if (row->rule == GJ_TR_PHASE)
            return t;
        const GjType *elems[2] = {t, t};
        return gj_ty_tuple(in->c, elems, 2);
    }
    case GJ_TR_RECT:
        if (!(t = promote_args(in, ins, id, 0)))
            return NULL;
        if (is_complex(t))
            return fail(in, GJ_DIAG_TYPING, ins->loc, "cmath.rect() needs real numbers");
        return gj_ty_concrete(complex_of(t->kind == GJ_TK_FLOAT ? t : &gj_ty_float64));
    case GJ_TR_MATH:
        return math_call_type(in, ins, id);
    case GJ_TR_NPTYPE:
        return np_type_call(in, ins, id);
    case GJ_TR_PRINT:
        return print_type(in, ins, id);
    case GJ_TR_MEMORY: {   /* shared.array, local.array, const.array_like (typemem.c) */
        const char *why = NULL;
        t = gj_memory_call_type(in->c, ins, in->f->temp_types, in->defs, id, &why);
        return t ? t : why ? fail(in, GJ_DIAG_TYPING, ins->loc, "%s", why)
                           : fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
    }
    }
    return fail(in, GJ_DIAG_INTERNAL, ins->loc, "%s has no typing rule", fn_name(id));
}

/* A call of a @gpujit.jit function: its specialisation's return type.  A
   failure in a sweep before the last may come from an argument type that
   still widens, so it is forgotten there; the last sweep reports it. */
static const GjType *device_call_type(Infer *in, const GjIns *ins, const GjType *callee) {
    int32_t n = ins->nargs - 1;
    const GjType **args = GJ_NEW_N(&in->c->arena, const GjType *, n > 0 ? n : 1);
    if (!args)
        return fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
    for (int32_t k = 0; k < n; k++)
        args[k] = arg_type(in, ins, k + 1);
    GjSpec *spec;
    if (gj_spec_get(in->c, callee->callee, args, n, ins->loc, &spec) != GJ_OK) {
        if (!in->report)
            in->c->diag = NULL;
        return NULL;
    }
    return spec->f->ret_type;
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
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "%s() takes no keyword arguments in kernels", fn_name(id)) != NULL;
    int32_t *args = GJ_NEW_N(&in->c->arena, int32_t, ins->nargs);
    if (!args)
        return fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory") != NULL;
    args[0] = ins->args[0];
    for (int32_t k = 1; k <= n; k++)
        args[k] = k <= n - nkw ? ins->args[k] : -1;
    for (int32_t j = 0; j < nkw; j++) {
        const char *name = ins->c.items[j].s ? ins->c.items[j].s : "?";
        int p = gj_intrinsic_param_index((GjIntrinsic)id, name);
        if (p < 0)
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "%s() got an unexpected keyword argument '%s'", fn_name(id), name) != NULL;
        if (p < n && args[p + 1] >= 0)
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "%s() got multiple values for argument '%s'", fn_name(id), name) != NULL;
        if (p >= n)
            return fail(in, GJ_DIAG_TYPING, ins->loc,
                        "%s() needs the arguments before '%s'", fn_name(id), name) != NULL;
        args[p + 1] = ins->args[n - nkw + j + 1];
    }
    for (int32_t p = 0; p < n; p++) {
        char buf[64];
        if (args[p + 1] < 0)
            return fail(in, GJ_DIAG_TYPING, ins->loc, "%s() missing argument '%s'", fn_name(id),
                        param_name(row, p, buf, sizeof buf)) != NULL;
    }
    ins->args = args;
    ins->c = (GjConst){.kind = GJ_CONST_NONE};
    return 1;
}

static const GjType *call_type(Infer *in, GjIns *ins, const GjType *callee) {
    if (callee->kind != GJ_TK_CALLABLE)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s is not callable", callee->name);
    /* build.c binds the keywords of a call by the function's global name */
    if (callee->callee && ins->c.kind == GJ_CONST_TUPLE && ins->c.n > 0)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "keyword arguments are supported in calls of a device function by its "
                    "global name; %s is reached another way", callee->name);
    if (callee->callee)
        return device_call_type(in, ins, callee);
    int id = callee->intrinsic;
    const GjIntrinsicRow *row = gj_intrinsic_row((GjIntrinsic)id);
    if (row->rule == GJ_TR_VALUE)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "%s is not callable", callee->name);
    if (!place_keywords(in, ins, id, row))
        return NULL;
    if (!expect_nargs(in, ins, id, row->min_args, row->max_args < 0 ? INT_MAX : row->max_args))
        return NULL;
    return rule_type(in, ins, id, row);
}

/* ---- instructions ----------------------------------------------------- */

/* Folds a stored type into variable v; a conflict is reported at the store. */
static const GjType *store_var(Infer *in, const GjIns *ins, const GjType *t) {
    GjVar *v = &in->f->vars[ins->var];
    const GjType *u = gj_ty_unify(v->type, t);
    if (!u && v->type->kind == GJ_TK_ARRAY && t->kind == GJ_TK_ARRAY &&
        v->type->dtype == t->dtype && v->type->ndim == t->ndim &&
        v->type->addrspace == t->addrspace)   /* views of two layouts, one memory space */
        u = gj_ty_array_in(in->c, gj_ty_array(in->c, t->dtype, t->ndim, GJ_LAYOUT_A),
                           t->addrspace);
    if (!u && v->kind == GJ_VAR_STACK)   /* a value that joins two paths: x if c else y */
        return fail(in, GJ_DIAG_TYPING, ins->loc,
                    "the paths of this expression give %s and %s, which cannot be combined",
                    v->type->name, t->name);
    if (!u)
        return fail(in, GJ_DIAG_TYPING, ins->loc, "cannot assign %s to '%s', which holds %s",
                    t->name, v->name, v->type->name);
    if (u != v->type) {
        if (!v->type)
            v->def_loc = ins->loc;
        v->type = u;
        in->changed = 1;
    }
    return &gj_ty_none;
}

static const GjType *load_var(Infer *in, const GjIns *ins) {
    const GjVar *v = &in->f->vars[ins->var];
    if (v->type)
        return v->type;
    if (v->kind == GJ_VAR_STACK)
        return fail(in, GJ_DIAG_INTERNAL, ins->loc, "stack slot %s is read before it is written",
                    v->name);
    return fail(in, GJ_DIAG_TYPING, ins->loc, "local variable '%s' is read before it is assigned",
                v->name);
}

/* The return type of two returns: their unification, element-wise for tuples. */
static const GjType *unify_returns(Infer *in, const GjType *a, const GjType *b) {
    if (!a || a == b)
        return b;
    if (a->kind != GJ_TK_TUPLE || b->kind != GJ_TK_TUPLE || a->n != b->n)
        return gj_ty_unify(a, b);
    const GjType **elems = GJ_NEW_N(&in->c->arena, const GjType *, a->n > 0 ? a->n : 1);
    if (!elems)
        return NULL;
    for (int i = 0; i < a->n; i++) {
        if (!(elems[i] = unify_returns(in, a->elems[i], b->elems[i])))
            return NULL;
    }
    return gj_ty_tuple(in->c, elems, a->n);
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
            return fail(in, GJ_DIAG_KERNEL_RETURN, ins->loc,
                        "a kernel cannot return a value (this one returns %s)", t->name);
        return &gj_ty_none;
    }
    if (t->kind == GJ_TK_CALLABLE || t->kind == GJ_TK_MODULE || t->kind == GJ_TK_DIM3 ||
        t->kind == GJ_TK_RANGE_ITER || t->kind == GJ_TK_TUPLE_ITER ||
        t->kind == GJ_TK_ARRAY_ITER || t->kind == GJ_TK_ZIP_ITER)
        return fail(in, GJ_DIAG_UNSUPPORTED, ins->loc,
                    "a device function cannot return %s", t->name);
    if (holds_local_array(t))
        return fail(in, GJ_DIAG_TYPING, ins->loc, "a device function cannot return its local "
                    "array (%s): the array ends with the call; let the caller make it with "
                    "local.array and pass it in", t->name);
    const GjType *u = unify_returns(in, f->ret_type, t);
    if (!u)
        return fail(in, GJ_DIAG_TYPING, ins->loc,
                    "%s returns %s here but %s elsewhere; every return must have one type",
                    f->code->name ? f->code->name : "function", t->name, f->ret_type->name);
    f->ret_type = u;
    return &gj_ty_none;
}

/* The type of ins's result (&gj_ty_none for instructions without one), or
   NULL when an operand is not typed yet or the instruction is ill-typed. */
static const GjType *ins_type(Infer *in, GjIns *ins) {
    for (int k = 0; k < ins->nargs; k++) {
        if (!arg_type(in, ins, k))
            return NULL;
    }
    const GjType *a = ins->nargs > 0 ? arg_type(in, ins, 0) : NULL;
    const GjType *b = ins->nargs > 1 ? arg_type(in, ins, 1) : NULL;
    switch (ins->op) {
    case GJ_OP_CONST:
        return const_type(in, &ins->c, ins->loc);
    case GJ_OP_GLOBAL:
        return global_type(in, &ins->global, ins->loc);
    case GJ_OP_LOAD_VAR:
        return load_var(in, ins);
    case GJ_OP_STORE_VAR:
        return store_var(in, ins, a);
    case GJ_OP_BINOP:
        return binop_type(in, (GjBinop)ins->sub, a, b, ins->loc);
    case GJ_OP_UNOP:
        return unop_type(in, (GjUnop)ins->sub, a, ins->loc);
    case GJ_OP_COMPARE:
        return compare_type(in, (GjCmp)ins->sub, a, b, ins->loc);
    case GJ_OP_TRUTH:
        if (!gj_ty_is_scalar(a) && a->kind != GJ_TK_NONE)
            return fail(in, GJ_DIAG_TYPING, ins->loc, "the truth value of %s is not defined",
                        a->name);
        return &gj_ty_bool;
    case GJ_OP_GETATTR:
        return getattr_type(in, a, ins->name, ins->loc);
    case GJ_OP_GETITEM:
        return getitem_type(in, ins, a, b);
    case GJ_OP_SETITEM:
        return setitem_check(in, ins, a, b, arg_type(in, ins, 2)) ? &gj_ty_none : NULL;
    case GJ_OP_CALL:
        return call_type(in, ins, a);
    case GJ_OP_BUILD_SLICE:
        return slice_type(in, ins);
    case GJ_OP_BUILD_TUPLE: {
        const GjType **elems = GJ_NEW_N(&in->c->arena, const GjType *, ins->nargs + 1);
        if (!elems)
            return fail(in, GJ_DIAG_INTERNAL, ins->loc, "out of memory");
        for (int k = 0; k < ins->nargs; k++)
            elems[k] = arg_type(in, ins, k);
        return gj_ty_tuple(in->c, elems, ins->nargs);
    }
    case GJ_OP_TUPLE_GET:
        if (a->kind != GJ_TK_TUPLE || ins->i < 0 || ins->i >= a->n)
            return fail(in, GJ_DIAG_TYPING, ins->loc, "index %lld out of range for %s",
                        (long long)ins->i, a->name);
        return a->elems[ins->i];
    case GJ_OP_GET_ITER: case GJ_OP_ITER_NEXT:
        return iter_type(in, ins, a);
    case GJ_OP_ITER_VALID:
        return iter_type(in, ins, a) ? &gj_ty_bool : NULL;
    case GJ_OP_ITER_VALUE:
        return iter_type(in, ins, a) ? iter_value_type(in, a) : NULL;
    case GJ_OP_JUMP:
        return &gj_ty_none;
    case GJ_OP_BRANCH:
        if (a->kind != GJ_TK_BOOL)   /* build.c inserts TRUTH */
            return fail(in, GJ_DIAG_INTERNAL, ins->loc, "branch on %s, not bool", a->name);
        return &gj_ty_none;
    case GJ_OP_RETURN:
        return return_type(in, ins, a);
    case GJ_NOPS:
        break;
    }
    return fail(in, GJ_DIAG_INTERNAL, ins->loc, "unknown IR op %d", (int)ins->op);
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
    case GJ_OP_GETATTR:
        return gj_arena_printf(a, "attribute '%s'", ins->name);
    case GJ_OP_GLOBAL:
        return gj_arena_printf(a, "global '%s'", ins->global.key);
    case GJ_OP_CALL: {
        const GjType *callee = in->f->temp_types[ins->args[0]];
        if (callee && callee->callee)
            return gj_arena_printf(a, "call to %s", callee->name);
        return gj_arena_printf(a, "call to %s", callee && callee->kind == GJ_TK_CALLABLE ?
                               fn_name(callee->intrinsic) : "a value");
    }
    case GJ_OP_GETITEM: return "subscript";
    case GJ_OP_SETITEM: return "assignment to a subscript";
    case GJ_OP_RETURN: return "return";
    case GJ_OP_CONST: return "constant";
    case GJ_OP_TRUTH: case GJ_OP_BRANCH: return "condition";
    case GJ_OP_BUILD_TUPLE: case GJ_OP_TUPLE_GET: return "tuple";
    case GJ_OP_BUILD_SLICE: return "slice";
    case GJ_OP_GET_ITER: case GJ_OP_ITER_VALID: case GJ_OP_ITER_VALUE: case GJ_OP_ITER_NEXT:
        return "for loop";
    case GJ_OP_JUMP: case GJ_NOPS:
        break;
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

static void dump_types(const GjFunc *f) {
    fprintf(stderr, "---- types: %s ----\n", f->code->qualname ? f->code->qualname : f->code->name);
    gj_ir_dump(f, stderr);   /* variables and temps with their types */
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
    if (c->dump & GJ_DUMP_TYPES)
        dump_types(f);
    return GJ_OK;
}
