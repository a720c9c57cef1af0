/*
 * lower.c - typed IR -> LLVM module: one kernel for one signature.
 *
 * Input: a GjFunc after type inference (every reachable temp and variable
 * typed; weak literal types are materialised here with gj_ty_concrete).
 * Output: a module for the options' target holding the kernel, with
 * parameters per compile.h's ABI, plus the plan's `written` flag for each
 * array parameter.  What differs between targets (triple, calling
 * convention, special registers, barrier, math names) is asked of the
 * GjTarget (target.h); nothing here tests which target it is.
 *
 * Shape of the generated code: an entry block with one alloca per variable
 * (mem2reg/SROA make them SSA) that stores the parameters, then one LLVM
 * block per reachable GjBlock.  Temps are LLVM values, valid only in the
 * block that defines them (ir.h's invariant).  lower_ops.c gives the numeric
 * semantics (casts, operators, math); this file walks the IR, handles
 * arrays, tuples, iterators, intrinsic calls and the thread-index registers.
 *
 * Anything not handled is a LOWERING diagnostic at the instruction's line;
 * on error the module is disposed and *mod stays NULL.
 */
#include "lower.h"

#include <stdio.h>
#include <string.h>

#include "intrinsics.h"
#include "lower_ops.h"

static void report(GjLower *L, const char *fmt, va_list ap) {
    char *msg = gj_arena_vprintf(&L->c->arena, fmt, ap);
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "%s", msg ? msg : fmt);
}

static LLVMValueRef fail(GjLower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static GjStatus fail_status(GjLower *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Record a LOWERING diag at the current instruction; return "no value". */
static LLVMValueRef fail(GjLower *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report(L, fmt, ap);
    va_end(ap);
    return NULL;
}

static GjStatus fail_status(GjLower *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report(L, fmt, ap);
    va_end(ap);
    return GJ_ERR;
}

static LLVMValueRef i64_const(GjLower *L, long long v) {
    return LLVMConstInt(L->i64, (unsigned long long)v, 1);
}

/* ---- constants ------------------------------------------------------------ */

/* The value of constant k as type t (the temp's type, which may differ from
   k's Python kind: a frozen np.float32 global, an int literal typed float). */
static LLVMValueRef const_value(GjLower *L, const GjConst *k, const GjType *t) {
    t = gj_ty_concrete(t);
    LLVMTypeRef ty = gj_lower_type(L, t);
    if (!ty)
        return fail(L, "constants of type %s are not supported", t->name);
    if (ty == L->empty)
        return LLVMGetUndef(ty);
    if (k->kind == GJ_CONST_TUPLE && t->kind == GJ_TK_TUPLE && t->n == k->n) {
        LLVMValueRef out = LLVMGetUndef(ty);
        for (int32_t i = 0; i < k->n; i++) {
            LLVMValueRef e = const_value(L, &k->items[i], t->elems[i]);
            if (!e)
                return NULL;
            out = LLVMBuildInsertValue(L->b, out, e, (unsigned)i, "");
        }
        return out;
    }
    int is_number = k->kind == GJ_CONST_BOOL || k->kind == GJ_CONST_INT ||
                    k->kind == GJ_CONST_FLOAT;
    switch (gj_lower_class(t)) {
    case GJ_NC_BOOL:
        if (is_number)
            return LLVMConstInt(ty, k->kind == GJ_CONST_FLOAT ? k->f != 0 : k->i != 0, 0);
        break;
    case GJ_NC_SINT: case GJ_NC_UINT:
        if (is_number)
            return LLVMConstInt(ty, (unsigned long long)(k->kind == GJ_CONST_FLOAT ?
                                                         (long long)k->f : k->i), 1);
        break;
    case GJ_NC_FLOAT:
        if (is_number)
            return LLVMConstReal(ty, k->kind == GJ_CONST_FLOAT ? k->f : (double)k->i);
        break;
    case GJ_NC_OTHER:
        break;
    }
    return fail(L, "cannot use this constant as %s", t->name);
}

/* ---- arrays ----------------------------------------------------------------- */

/* Field `field` (1 shape, 2 strides) of array value arr, axis k, as i64. */
static LLVMValueRef array_dim(GjLower *L, LLVMValueRef arr, unsigned field, int k) {
    LLVMValueRef dims = LLVMBuildExtractValue(L->b, arr, field, "");
    return LLVMBuildExtractValue(L->b, dims, (unsigned)k, "");
}

static LLVMValueRef array_size(GjLower *L, LLVMValueRef arr, const GjType *at) {
    LLVMValueRef n = i64_const(L, 1);
    for (int k = 0; k < at->ndim; k++)
        n = LLVMBuildMul(L->b, n, array_dim(L, arr, 1, k), "");
    return n;
}

/* The i64 tuple (as a struct) of field 1 (shape) or 2 (strides). */
static LLVMValueRef array_dims_tuple(GjLower *L, LLVMValueRef arr, const GjType *at,
                                     unsigned field, LLVMTypeRef tuple_ty) {
    LLVMValueRef out = LLVMGetUndef(tuple_ty);
    for (int k = 0; k < at->ndim; k++)
        out = LLVMBuildInsertValue(L->b, out, array_dim(L, arr, field, k), (unsigned)k, "");
    return out;
}

/* LLVM's element type in memory: bool arrays hold bytes. */
static LLVMTypeRef element_type(GjLower *L, const GjType *dtype) {
    return dtype->kind == GJ_TK_BOOL ? L->i8 : gj_lower_type(L, dtype);
}

/* Index k of idx (an integer, or a tuple of ndim integers) as a wrapped i64:
   a negative index counts from the end of axis k. */
static LLVMValueRef array_index(GjLower *L, LLVMValueRef arr, LLVMValueRef idx,
                                const GjType *it, int k) {
    if (it->kind == GJ_TK_TUPLE) {
        idx = LLVMBuildExtractValue(L->b, idx, (unsigned)k, "");
        it = it->elems[k];
    }
    LLVMValueRef i = gj_lower_cast(L, idx, it, &gj_ty_int64);
    if (!i || gj_lower_class(it) != GJ_NC_SINT)
        return i;
    LLVMValueRef negative = LLVMBuildICmp(L->b, LLVMIntSLT, i, i64_const(L, 0), "");
    LLVMValueRef wrapped = LLVMBuildAdd(L->b, i, array_dim(L, arr, 1, k), "");
    return LLVMBuildSelect(L->b, negative, wrapped, i, "");
}

/* Address of arr[idx]: data + sum(idx_k * stride_k) bytes.  The contiguous
   axis of a C or F array steps by the itemsize instead (a typed GEP), which
   is what lets the backend fold the address into one mul.wide + add. */
static LLVMValueRef element_ptr(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                const GjType *it) {
    int ndim = at->ndim;
    int contiguous = at->layout == GJ_LAYOUT_C ? ndim - 1 : at->layout == GJ_LAYOUT_F ? 0 : -1;
    LLVMValueRef data = LLVMBuildExtractValue(L->b, arr, 0, "");
    LLVMValueRef offset = NULL, contiguous_index = NULL;
    for (int k = 0; k < ndim; k++) {
        LLVMValueRef i = array_index(L, arr, idx, it, k);
        if (!i)
            return NULL;
        if (k == contiguous) {
            contiguous_index = i;
            continue;
        }
        LLVMValueRef bytes = LLVMBuildMul(L->b, i, array_dim(L, arr, 2, k), "");
        offset = offset ? LLVMBuildAdd(L->b, offset, bytes, "") : bytes;
    }
    LLVMValueRef p = data;
    if (offset)
        p = LLVMBuildInBoundsGEP2(L->b, L->i8, p, &offset, 1, "");
    if (contiguous_index)
        p = LLVMBuildInBoundsGEP2(L->b, element_type(L, at->dtype), p, &contiguous_index, 1, "");
    return p;
}

static LLVMValueRef load_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                 const GjType *it) {
    LLVMValueRef p = element_ptr(L, arr, at, idx, it);
    if (!p)
        return NULL;
    LLVMValueRef v = LLVMBuildLoad2(L->b, element_type(L, at->dtype), p, "");
    LLVMSetAlignment(v, (unsigned)gj_ty_itemsize(at->dtype));
    if (at->dtype->kind == GJ_TK_BOOL)
        v = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "");
    return v;
}

static GjStatus store_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                              const GjType *it, LLVMValueRef v, const GjType *vt) {
    LLVMValueRef p = element_ptr(L, arr, at, idx, it);
    if (!p || !(v = gj_lower_cast(L, v, vt, at->dtype)))
        return GJ_ERR;
    if (at->dtype->kind == GJ_TK_BOOL)
        v = LLVMBuildZExt(L->b, v, L->i8, "");
    LLVMSetAlignment(LLVMBuildStore(L->b, v, p), (unsigned)gj_ty_itemsize(at->dtype));
    return GJ_OK;
}

/* ---- thread indexing ------------------------------------------------------- */

/* Special register <reg> ("tid", "ctaid", "ntid", "nctaid") along <axis>: i32. */
static LLVMValueRef special_reg(GjLower *L, const char *reg, char axis) {
    return L->target->special_reg(L, reg, axis);
}

static LLVMValueRef special_reg64(GjLower *L, const char *reg, char axis) {
    LLVMValueRef r = special_reg(L, reg, axis);
    return r ? LLVMBuildZExt(L->b, r, L->i64, "") : NULL;
}

/* grid(1) along one axis: ctaid * ntid + tid, in i64 so large grids do not wrap. */
static LLVMValueRef grid_axis(GjLower *L, char axis) {
    LLVMValueRef ctaid = special_reg64(L, "ctaid", axis), ntid = special_reg64(L, "ntid", axis);
    LLVMValueRef tid = special_reg64(L, "tid", axis);
    if (!ctaid || !ntid || !tid)
        return NULL;
    return LLVMBuildAdd(L->b, LLVMBuildMul(L->b, ctaid, ntid, ""), tid, "");
}

/* gridsize(1) along one axis: ntid * nctaid, in i64. */
static LLVMValueRef gridsize_axis(GjLower *L, char axis) {
    LLVMValueRef ntid = special_reg64(L, "ntid", axis), nctaid = special_reg64(L, "nctaid", axis);
    return ntid && nctaid ? LLVMBuildMul(L->b, ntid, nctaid, "") : NULL;
}

static const char *dim3_register(int intrinsic) {
    switch (intrinsic) {
    case GJ_INTR_THREADIDX: return "tid";
    case GJ_INTR_BLOCKIDX: return "ctaid";
    case GJ_INTR_BLOCKDIM: return "ntid";
    case GJ_INTR_GRIDDIM: return "nctaid";
    default: return NULL;
    }
}

/* gpujit.grid(n) / gridsize(n): an int64, or an n-tuple of them. */
static LLVMValueRef grid_call(GjLower *L, int is_size, LLVMValueRef ndim_value, const GjType *rt) {
    long long ndim = LLVMIsAConstantInt(ndim_value) ? LLVMConstIntGetSExtValue(ndim_value) : 0;
    if (ndim < 1 || ndim > 3)
        return fail(L, "grid()/gridsize() take the constant 1, 2 or 3");
    LLVMValueRef axes[3];
    for (int k = 0; k < ndim; k++) {
        char axis = (char)('x' + k);
        if (!(axes[k] = is_size ? gridsize_axis(L, axis) : grid_axis(L, axis)))
            return NULL;
    }
    if (ndim == 1)
        return gj_lower_cast(L, axes[0], &gj_ty_int64, rt);
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    for (int k = 0; k < ndim; k++)
        out = LLVMBuildInsertValue(L->b, out, axes[k], (unsigned)k, "");
    return out;
}

/* The block barrier; on the CPU target its threads then run as fibers. */
static LLVMValueRef syncthreads(GjLower *L) {
    L->needs_fibers = 1;
    return L->target->barrier(L);
}

/* ---- calls ------------------------------------------------------------------- */

typedef struct CallArgs {
    LLVMValueRef *v;         /* v[0] is the first argument (not the callee) */
    const GjType **t;
    int n;
} CallArgs;

/* math.floor/ceil/trunc: round in the argument's float type, then to int64. */
static LLVMValueRef round_to_int(GjLower *L, const char *intrinsic, LLVMValueRef a,
                                 const GjType *at, const GjType *rt) {
    if (gj_lower_class(at) != GJ_NC_FLOAT)
        return gj_lower_cast(L, a, at, rt);
    LLVMValueRef r = gj_lower_float_intrinsic(L, intrinsic, a);
    return r ? gj_lower_cast(L, r, gj_ty_concrete(at), rt) : NULL;
}

static LLVMValueRef float_call(GjLower *L, const char *intrinsic, LLVMValueRef a,
                               const GjType *at, const GjType *rt) {
    LLVMValueRef x = gj_lower_cast(L, a, at, rt);
    if (!x || gj_lower_class(rt) != GJ_NC_FLOAT)
        return x ? fail(L, "%s of %s is not supported", intrinsic, rt->name) : NULL;
    return gj_lower_float_intrinsic(L, intrinsic, x);
}

static LLVMValueRef range_call(GjLower *L, const CallArgs *a, const GjType *rt) {
    const GjType *et = rt->elems[0];
    LLVMTypeRef ety = gj_lower_type(L, et);
    LLVMValueRef start = LLVMConstInt(ety, 0, 0), step = LLVMConstInt(ety, 1, 0), stop;
    int first = a->n >= 2;
    if (first && !(start = gj_lower_cast(L, a->v[0], a->t[0], et)))
        return NULL;
    if (!(stop = gj_lower_cast(L, a->v[first], a->t[first], et)))
        return NULL;
    if (a->n == 3 && !(step = gj_lower_cast(L, a->v[2], a->t[2], et)))
        return NULL;
    LLVMValueRef it = LLVMGetUndef(gj_lower_type(L, rt));
    it = LLVMBuildInsertValue(L->b, it, start, 0, "");
    it = LLVMBuildInsertValue(L->b, it, stop, 1, "");
    return LLVMBuildInsertValue(L->b, it, step, 2, "");
}

static LLVMValueRef minmax_call(GjLower *L, int is_max, const CallArgs *a, const GjType *rt) {
    LLVMValueRef acc = gj_lower_cast(L, a->v[0], a->t[0], rt);
    for (int k = 1; acc && k < a->n; k++) {
        LLVMValueRef x = gj_lower_cast(L, a->v[k], a->t[k], rt);
        acc = x ? gj_lower_minmax(L, is_max, acc, x, rt) : NULL;
    }
    return acc;
}

static LLVMValueRef len_call(GjLower *L, LLVMValueRef x, const GjType *xt, const GjType *rt) {
    if (xt->kind == GJ_TK_TUPLE)
        return LLVMConstInt(gj_lower_type(L, rt), (unsigned long long)xt->n, 0);
    if (xt->kind == GJ_TK_ARRAY)
        return gj_lower_cast(L, array_dim(L, x, 1, 0), &gj_ty_int64, rt);
    return fail(L, "len() of %s is not supported", xt->name);
}

static LLVMValueRef call_intrinsic(GjLower *L, GjIntrinsic id, const CallArgs *a,
                                   const GjType *rt) {
    if (a->n == 0 && id != GJ_INTR_SYNCTHREADS)
        return fail(L, "%s() needs an argument", gj_intrinsic_name(id));
    LLVMValueRef x = a->v[0];
    const GjType *xt = a->t[0];
    switch (id) {
    case GJ_INTR_RANGE:
        return range_call(L, a, rt);
    case GJ_INTR_ABS: case GJ_INTR_NP_ABS: case GJ_INTR_NP_ABSOLUTE:
        return (x = gj_lower_cast(L, x, xt, rt)) ? gj_lower_abs(L, x, rt) : NULL;
    case GJ_INTR_MIN: case GJ_INTR_MAX:
        return minmax_call(L, id == GJ_INTR_MAX, a, rt);
    case GJ_INTR_LEN:
        return len_call(L, x, xt, rt);
    case GJ_INTR_INT: case GJ_INTR_FLOAT: case GJ_INTR_BOOL:
        return gj_lower_cast(L, x, xt, rt);   /* int() truncates: fptosi */
    case GJ_INTR_GRID: case GJ_INTR_GRIDSIZE:
        return grid_call(L, id == GJ_INTR_GRIDSIZE, x, rt);
    case GJ_INTR_SYNCTHREADS:
        return syncthreads(L) ? LLVMGetUndef(L->empty) : NULL;
    case GJ_INTR_MATH_SQRT: case GJ_INTR_NP_SQRT:
        return float_call(L, "llvm.sqrt", x, xt, rt);   /* correctly rounded */
    case GJ_INTR_MATH_FABS:
        return float_call(L, "llvm.fabs", x, xt, rt);
    case GJ_INTR_MATH_FLOOR:
        return round_to_int(L, "llvm.floor", x, xt, rt);
    case GJ_INTR_MATH_CEIL:
        return round_to_int(L, "llvm.ceil", x, xt, rt);
    case GJ_INTR_MATH_TRUNC:
        return round_to_int(L, "llvm.trunc", x, xt, rt);
    case GJ_INTR_THREADIDX: case GJ_INTR_BLOCKIDX: case GJ_INTR_BLOCKDIM: case GJ_INTR_GRIDDIM:
    case GJ_INTR_DIM3_X: case GJ_INTR_DIM3_Y: case GJ_INTR_DIM3_Z: case GJ_NINTRINSICS:
        break;
    }
    return fail(L, "%s cannot be called in a kernel", gj_intrinsic_name(id));
}

/* ---- attributes -------------------------------------------------------------- */

static LLVMValueRef getattr(GjLower *L, LLVMValueRef obj, const GjType *ot, const char *name,
                            const GjType *rt) {
    if (gj_lower_type(L, rt) == L->empty)
        return LLVMGetUndef(L->empty);   /* gpujit.grid, math.sqrt, gpujit.threadIdx */
    if (ot->kind == GJ_TK_DIM3) {
        const char *reg = dim3_register(ot->intrinsic);
        if (reg && name[0] >= 'x' && name[0] <= 'z' && name[1] == '\0') {
            LLVMValueRef r = special_reg(L, reg, name[0]);
            return r ? gj_lower_cast(L, r, &gj_ty_uint32, rt) : NULL;   /* zero-extended */
        }
    } else if (ot->kind == GJ_TK_ARRAY) {
        LLVMValueRef v = NULL;
        if (strcmp(name, "size") == 0)
            v = array_size(L, obj, ot);
        else if (strcmp(name, "ndim") == 0)
            v = i64_const(L, ot->ndim);
        else if (strcmp(name, "itemsize") == 0)
            v = i64_const(L, (long long)gj_ty_itemsize(ot->dtype));
        else if (strcmp(name, "shape") == 0 || strcmp(name, "strides") == 0)
            return array_dims_tuple(L, obj, ot, name[1] == 'h' ? 1 : 2, gj_lower_type(L, rt));
        if (v)
            return gj_lower_cast(L, v, &gj_ty_int64, rt);
    }
    return fail(L, "attribute '%s' of %s is not supported", name, ot->name);
}

/* ---- instructions --------------------------------------------------------------- */

static LLVMValueRef tuple_get(GjLower *L, LLVMValueRef tup, const GjType *tt, int64_t i) {
    if (tt->kind != GJ_TK_TUPLE)
        return fail(L, "%s is not a tuple", tt->name);
    if (i < 0)
        i += tt->n;
    if (i < 0 || i >= tt->n)
        return fail(L, "tuple index out of range for %s", tt->name);
    return LLVMBuildExtractValue(L->b, tup, (unsigned)i, "");
}

static LLVMValueRef build_tuple(GjLower *L, const CallArgs *a, const GjType *rt) {
    LLVMTypeRef ty = gj_lower_type(L, rt);
    if (!ty || rt->kind != GJ_TK_TUPLE || rt->n != a->n)
        return fail(L, "tuples of type %s are not supported", rt->name);
    LLVMValueRef out = LLVMGetUndef(ty);
    for (int k = 0; k < a->n; k++) {
        LLVMValueRef e = gj_lower_cast(L, a->v[k], a->t[k], rt->elems[k]);
        if (!e)
            return NULL;
        out = LLVMBuildInsertValue(L->b, out, e, (unsigned)k, "");
    }
    return out;
}

static LLVMValueRef getitem(GjLower *L, LLVMValueRef obj, const GjType *ot,
                            LLVMValueRef idx, const GjType *it) {
    if (ot->kind == GJ_TK_ARRAY)
        return load_element(L, obj, ot, idx, it);
    if (ot->kind == GJ_TK_TUPLE && LLVMIsAConstantInt(idx))
        return tuple_get(L, obj, ot, LLVMConstIntGetSExtValue(idx));
    return fail(L, "indexing %s with %s is not supported", ot->name, it->name);
}

/* Range iterator {cur, stop, step}: valid while step > 0 ? cur < stop : cur > stop. */
static LLVMValueRef iter_valid(GjLower *L, LLVMValueRef it, const GjType *itt) {
    LLVMValueRef cur = LLVMBuildExtractValue(L->b, it, 0, "");
    LLVMValueRef stop = LLVMBuildExtractValue(L->b, it, 1, "");
    if (gj_lower_class(itt->elems[0]) != GJ_NC_SINT)
        return LLVMBuildICmp(L->b, LLVMIntULT, cur, stop, "");
    LLVMValueRef step = LLVMBuildExtractValue(L->b, it, 2, "");
    LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, LLVMConstNull(LLVMTypeOf(step)), "");
    return LLVMBuildSelect(L->b, up, LLVMBuildICmp(L->b, LLVMIntSLT, cur, stop, ""),
                           LLVMBuildICmp(L->b, LLVMIntSGT, cur, stop, ""), "");
}

static LLVMValueRef iter_next(GjLower *L, LLVMValueRef it) {
    LLVMValueRef cur = LLVMBuildExtractValue(L->b, it, 0, "");
    LLVMValueRef step = LLVMBuildExtractValue(L->b, it, 2, "");
    return LLVMBuildInsertValue(L->b, it, LLVMBuildAdd(L->b, cur, step, ""), 0, "");
}

static GjStatus store_var(GjLower *L, int32_t var, LLVMValueRef v, const GjType *vt) {
    const GjVar *gv = &L->f->vars[var];
    if (!L->vars[var])
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "variable '%s' has no type", gv->name);
    if (!(v = gj_lower_cast(L, v, vt, gv->type)))
        return GJ_ERR;
    LLVMBuildStore(L->b, v, L->vars[var]);
    return GJ_OK;
}

static LLVMValueRef load_var(GjLower *L, int32_t var, const GjType *rt) {
    const GjVar *gv = &L->f->vars[var];
    if (!L->vars[var]) {
        gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "variable '%s' has no type", gv->name);
        return NULL;
    }
    LLVMValueRef v = LLVMBuildLoad2(L->b, gj_lower_type(L, gv->type), L->vars[var], gv->name);
    return gj_lower_cast(L, v, gv->type, rt);
}

/* Lowers one instruction; sets L->temps[in->dst] for those with a result. */
static GjStatus lower_ins(GjLower *L, const GjBlock *blk, const GjIns *in) {
    GjFunc *f = L->f;
    LLVMValueRef a[3] = {NULL, NULL, NULL};
    const GjType *t[3] = {NULL, NULL, NULL};
    for (int k = 0; k < in->nargs && k < 3; k++) {
        a[k] = L->temps[in->args[k]];
        t[k] = f->temp_types[in->args[k]];
    }
    const GjType *rt = in->dst >= 0 ? f->temp_types[in->dst] : NULL;
    LLVMValueRef v = NULL;
    L->loc = in->loc;
    for (int k = 0; k < in->nargs; k++)
        if (!f->temp_types[in->args[k]] || !L->temps[in->args[k]])
            return gj_error(L->c, GJ_DIAG_INTERNAL, in->loc, "%s reads t%d, which has no value",
                            gj_ir_op_name(in->op), in->args[k]);
    if (in->dst >= 0 && !rt)
        return gj_error(L->c, GJ_DIAG_INTERNAL, in->loc, "%s defines untyped t%d",
                        gj_ir_op_name(in->op), in->dst);

    switch (in->op) {
    case GJ_OP_CONST:
        v = const_value(L, &in->c, rt);
        break;
    case GJ_OP_GLOBAL:
        v = in->global.kind == GJ_GLOBAL_CONST ? const_value(L, &in->global.value, rt)
                                               : LLVMGetUndef(L->empty);
        break;
    case GJ_OP_LOAD_VAR:
        v = load_var(L, in->var, rt);
        break;
    case GJ_OP_STORE_VAR:
        return store_var(L, in->var, a[0], t[0]);
    case GJ_OP_BINOP:
        v = gj_lower_binop(L, (GjBinop)in->sub, a[0], t[0], a[1], t[1], rt);
        break;
    case GJ_OP_UNOP:
        v = gj_lower_unop(L, (GjUnop)in->sub, a[0], t[0], rt);
        break;
    case GJ_OP_COMPARE:
        v = gj_lower_compare(L, (GjCmp)in->sub, a[0], t[0], a[1], t[1]);
        break;
    case GJ_OP_TRUTH:
        v = t[0]->kind == GJ_TK_NONE ? LLVMConstInt(L->i1, 0, 0) : gj_lower_truth(L, a[0], t[0]);
        break;
    case GJ_OP_GETATTR:
        v = getattr(L, a[0], t[0], in->name, rt);
        break;
    case GJ_OP_GETITEM:
        v = getitem(L, a[0], t[0], a[1], t[1]);
        break;
    case GJ_OP_SETITEM:
        if (t[0]->kind != GJ_TK_ARRAY)
            return fail_status(L, "%s does not support item assignment", t[0]->name);
        return store_element(L, a[0], t[0], a[1], t[1], a[2], t[2]);
    case GJ_OP_CALL: {
        LLVMValueRef args[16];
        const GjType *types[16];
        CallArgs ca = {args, types, in->nargs - 1};
        if (t[0]->kind != GJ_TK_CALLABLE || ca.n > 16)
            return fail_status(L, "this call is not supported");
        for (int k = 0; k < ca.n; k++) {
            args[k] = L->temps[in->args[k + 1]];
            types[k] = f->temp_types[in->args[k + 1]];
        }
        v = call_intrinsic(L, (GjIntrinsic)t[0]->intrinsic, &ca, rt);
        break;
    }
    case GJ_OP_BUILD_TUPLE: {
        LLVMValueRef args[64];
        const GjType *types[64];
        CallArgs ca = {args, types, in->nargs};
        if (in->nargs > 64)
            return fail_status(L, "tuples of more than 64 items are not supported");
        for (int k = 0; k < ca.n; k++) {
            args[k] = L->temps[in->args[k]];
            types[k] = f->temp_types[in->args[k]];
        }
        v = build_tuple(L, &ca, rt);
        break;
    }
    case GJ_OP_TUPLE_GET:
        v = tuple_get(L, a[0], t[0], in->i);
        if (v)
            v = gj_lower_cast(L, v, t[0]->elems[in->i < 0 ? in->i + t[0]->n : in->i], rt);
        break;
    case GJ_OP_GET_ITER:
        v = t[0]->kind == GJ_TK_RANGE_ITER ? gj_lower_cast(L, a[0], t[0], rt)
                                           : fail(L, "cannot iterate over %s", t[0]->name);
        break;
    case GJ_OP_ITER_VALID:
        v = iter_valid(L, a[0], t[0]);
        break;
    case GJ_OP_ITER_VALUE:
        v = gj_lower_cast(L, LLVMBuildExtractValue(L->b, a[0], 0, ""), t[0]->elems[0], rt);
        break;
    case GJ_OP_ITER_NEXT:
        v = iter_next(L, a[0]);
        break;
    case GJ_OP_JUMP:
        LLVMBuildBr(L->b, L->bbs[blk->succ[0]]);
        return GJ_OK;
    case GJ_OP_BRANCH: {
        LLVMValueRef cond = gj_lower_truth(L, a[0], t[0]);
        if (!cond)
            return GJ_ERR;
        LLVMBuildCondBr(L->b, cond, L->bbs[blk->succ[0]], L->bbs[blk->succ[1]]);
        return GJ_OK;
    }
    case GJ_OP_RETURN:
        LLVMBuildRetVoid(L->b);   /* a kernel returns None */
        return GJ_OK;
    case GJ_NOPS:
        break;
    }
    if (!v) {
        if (!L->c->diag)
            fail(L, "cannot lower %s", gj_ir_op_name(in->op));
        return GJ_ERR;
    }
    if (in->dst >= 0)
        L->temps[in->dst] = v;
    return GJ_OK;
}

/* ---- line info -------------------------------------------------------------------- */

/* DWARF "directives only" (DICompileUnit::DebugDirectivesOnly, which the C
   API enum lacks): PTX gets .file/.loc lines and no debug sections. */
#define GJ_DWARF_DIRECTIVES_ONLY ((LLVMDWARFEmissionKind)3)

static void lineinfo_begin(GjLower *L, const char *kernel_name) {
    const GjCodeView *cv = L->f->code;
    const char *path = cv->filename ? cv->filename : "<unknown>";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = slash ? (size_t)(slash - path) : 0;

    L->dib = LLVMCreateDIBuilder(L->mod);
    LLVMMetadataRef file = LLVMDIBuilderCreateFile(L->dib, base, strlen(base), path, dirlen);
    LLVMDIBuilderCreateCompileUnit(L->dib, LLVMDWARFSourceLanguagePython, file, "gpujit", 6,
                                   L->opt->opt_level > 0, "", 0, 0, "", 0,
                                   GJ_DWARF_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
    LLVMMetadataRef fn_type = LLVMDIBuilderCreateSubroutineType(L->dib, file, NULL, 0,
                                                                LLVMDIFlagZero);
    const char *pyname = cv->name ? cv->name : kernel_name;
    unsigned line = cv->firstlineno > 0 ? (unsigned)cv->firstlineno : 0;
    L->subprogram = LLVMDIBuilderCreateFunction(L->dib, file, pyname, strlen(pyname), kernel_name,
                                                strlen(kernel_name), file, line, fn_type, 0, 1,
                                                line, LLVMDIFlagZero, L->opt->opt_level > 0);
    LLVMSetSubprogram(L->fn, L->subprogram);
    LLVMAddModuleFlag(L->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(L->i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(L->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(L->i32, 2, 0)));
}

static void lineinfo_at(GjLower *L, GjLoc loc) {
    if (!L->dib || loc.line <= 0)
        return;
    unsigned col = loc.col >= 0 ? (unsigned)loc.col + 1 : 0;
    LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(
                                           L->ctx, (unsigned)loc.line, col, L->subprogram, NULL));
}

/* ---- the kernel ------------------------------------------------------------------ */

static const GjType *param_type(const GjFunc *f, int i) {
    const GjType *t = f->code->argtypes ? f->code->argtypes[i] : NULL;
    return t ? t : f->vars[i].type;
}

/* The kernel's LLVM parameter types, per compile.h's ABI. */
static GjStatus kernel_params(GjLower *L, LLVMTypeRef *out, unsigned *n, unsigned cap) {
    *n = 0;
    for (int i = 0; i < L->f->code->argcount; i++) {
        const GjType *t = gj_ty_concrete(param_type(L->f, i));
        unsigned need = t->kind == GJ_TK_ARRAY ? 1 + 2 * (unsigned)t->ndim : 1;
        if (*n + need > cap)
            return fail_status(L, "too many kernel parameters");
        if (t->kind == GJ_TK_ARRAY) {
            out[(*n)++] = L->ptr_global;
            for (int k = 0; k < 2 * t->ndim; k++)
                out[(*n)++] = L->i64;
        } else if (gj_lower_class(t) != GJ_NC_OTHER) {
            out[(*n)++] = t->kind == GJ_TK_BOOL ? L->i8 : gj_lower_type(L, t);
        } else {
            return fail_status(L, "parameter '%s' of type %s cannot be passed to a kernel",
                        L->f->vars[i].name, t->name);
        }
    }
    return GJ_OK;
}

/* Names the parameters and stores each Python argument into its variable. */
static GjStatus store_params(GjLower *L) {
    unsigned p = 0;
    for (int i = 0; i < L->f->code->argcount; i++) {
        const GjType *t = gj_ty_concrete(param_type(L->f, i));
        const char *name = L->f->vars[i].name;
        LLVMValueRef v;
        if (t->kind == GJ_TK_ARRAY) {
            v = LLVMGetUndef(gj_lower_type(L, t));
            LLVMValueRef data = LLVMGetParam(L->fn, p++);
            LLVMSetValueName2(data, name, strlen(name));
            v = LLVMBuildInsertValue(L->b, v, data, 0, "");
            for (unsigned field = 1; field <= 2; field++) {
                LLVMValueRef dims = LLVMGetUndef(LLVMArrayType2(L->i64, (uint64_t)t->ndim));
                for (int k = 0; k < t->ndim; k++) {
                    LLVMValueRef d = LLVMGetParam(L->fn, p++);
                    char *dname = gj_arena_printf(&L->c->arena, "%s.%s%d", name,
                                                  field == 1 ? "shape" : "stride", k);
                    if (dname)
                        LLVMSetValueName2(d, dname, strlen(dname));
                    dims = LLVMBuildInsertValue(L->b, dims, d, (unsigned)k, "");
                }
                v = LLVMBuildInsertValue(L->b, v, dims, field, "");
            }
        } else {
            v = LLVMGetParam(L->fn, p++);
            LLVMSetValueName2(v, name, strlen(name));
            if (t->kind == GJ_TK_BOOL)
                v = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "");
        }
        if (L->vars[i] && store_var(L, i, v, t) != GJ_OK)
            return GJ_ERR;
    }
    return GJ_OK;
}

static void mark_reachable(const GjFunc *f, char *seen, int32_t id) {
    if (seen[id])
        return;
    seen[id] = 1;
    for (int32_t s = 0; s < f->blocks[id]->nsucc; s++)
        mark_reachable(f, seen, f->blocks[id]->succ[s]);
}

/* Creates the kernel, its entry block (allocas, parameters) and one LLVM
   block per reachable GjBlock. */
static GjStatus begin_kernel(GjLower *L, const char *kernel_name) {
    GjFunc *f = L->f;
    LLVMTypeRef params[256];
    unsigned nparams;
    if (kernel_params(L, params, &nparams, 256) != GJ_OK)
        return GJ_ERR;
    if (L->target->declare_kernel(L, kernel_name, params, nparams) != GJ_OK)
        return GJ_ERR;
    if (L->opt->fastmath) {   /* flush float32 denormals: .ftz instructions */
        static const char key[] = "denormal-fp-math-f32", val[] = "preserve-sign,preserve-sign";
        LLVMAddAttributeAtIndex(L->fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(L->ctx, key, sizeof key - 1, val,
                                                          sizeof val - 1));
    }
    if (L->opt->lineinfo)
        lineinfo_begin(L, kernel_name);

    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "entry");
    LLVMPositionBuilderAtEnd(L->b, entry);
    lineinfo_at(L, (GjLoc){f->code->firstlineno, -1, -1});
    for (int32_t v = 0; v < f->nvars; v++) {
        LLVMTypeRef ty = f->vars[v].type ? gj_lower_type(L, f->vars[v].type) : NULL;
        if (f->vars[v].type && !ty)
            return fail_status(L, "variable '%s' has type %s, which is not supported in kernels",
                        f->vars[v].name, f->vars[v].type->name);
        L->vars[v] = ty ? LLVMBuildAlloca(L->b, ty, f->vars[v].name) : NULL;
    }
    if (store_params(L) != GJ_OK)
        return GJ_ERR;

    char *seen = GJ_NEW_N(&L->c->arena, char, f->nblocks + 1);
    if (!seen || f->nblocks == 0)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "kernel has no blocks");
    mark_reachable(f, seen, 0);
    for (int32_t i = 0; i < f->nblocks; i++) {
        if (!seen[i])
            continue;
        char *name = gj_arena_printf(&L->c->arena, "b%d", i);
        L->bbs[i] = LLVMAppendBasicBlockInContext(L->ctx, L->fn, name ? name : "");
    }
    LLVMBuildBr(L->b, L->bbs[0]);
    return GJ_OK;
}

static GjStatus lower_blocks(GjLower *L) {
    for (int32_t i = 0; i < L->f->nblocks; i++) {
        const GjBlock *blk = L->f->blocks[i];
        if (!L->bbs[i])
            continue;
        LLVMPositionBuilderAtEnd(L->b, L->bbs[i]);
        for (int32_t k = 0; k < blk->nins; k++) {
            lineinfo_at(L, blk->ins[k].loc);
            if (lower_ins(L, blk, &blk->ins[k]) != GJ_OK)
                return GJ_ERR;
        }
        if (!LLVMGetBasicBlockTerminator(L->bbs[i]))
            return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "block b%d has no terminator", i);
    }
    return GJ_OK;
}

/* ---- written arrays ------------------------------------------------------------------ */

/* Sets plan->params[i].written for each array parameter a SETITEM may store
   through.  Exact when the stored-to array is a parameter's variable that is
   never reassigned; otherwise (a local alias, a reassigned parameter, a tuple
   element) every array parameter of that array type counts as written. */
static void mark_written(GjLower *L, GjCompileResult *plan) {
    GjFunc *f = L->f;
    int nargs = f->code->argcount;
    int32_t *source = GJ_NEW_N(&L->c->arena, int32_t, f->ntemps + 1);   /* var loaded, or -1 */
    char *reassigned = GJ_NEW_N(&L->c->arena, char, f->nvars + 1);
    if (!source || !reassigned || !plan || !plan->params)
        return;
    for (int32_t t = 0; t < f->ntemps; t++)
        source[t] = -1;
    for (int32_t i = 0; i < f->nblocks; i++) {
        for (int32_t k = 0; L->bbs[i] && k < f->blocks[i]->nins; k++) {
            const GjIns *in = &f->blocks[i]->ins[k];
            if (in->op == GJ_OP_LOAD_VAR && in->dst >= 0)
                source[in->dst] = in->var;
            else if (in->op == GJ_OP_STORE_VAR)
                reassigned[in->var] = 1;
        }
    }
    for (int32_t i = 0; i < f->nblocks; i++) {
        for (int32_t k = 0; L->bbs[i] && k < f->blocks[i]->nins; k++) {
            const GjIns *in = &f->blocks[i]->ins[k];
            if (in->op != GJ_OP_SETITEM)
                continue;
            int32_t v = source[in->args[0]];
            if (v >= 0 && v < nargs && !reassigned[v] && v < plan->nparams) {
                plan->params[v].written = 1;
                continue;
            }
            const GjType *at = f->temp_types[in->args[0]];
            for (int p = 0; p < nargs && p < plan->nparams; p++)
                if (param_type(f, p) == at)
                    plan->params[p].written = 1;
        }
    }
}

GjStatus gj_lower_kernel(GjCtx *c, GjFunc *f, const GjCompileOptions *opt, const char *kernel_name,
                         LLVMContextRef llctx, LLVMModuleRef *mod, GjCompileResult *plan) {
    /* require: typed IR (gj_infer_func) */
    *mod = NULL;
    GjLower L = {.c = c, .f = f, .opt = opt, .target = gj_target_of(opt->target), .ctx = llctx};
    L.i1 = LLVMInt1TypeInContext(llctx);
    L.i8 = LLVMInt8TypeInContext(llctx);
    L.i32 = LLVMInt32TypeInContext(llctx);
    L.i64 = LLVMInt64TypeInContext(llctx);
    L.ptr_global = LLVMPointerTypeInContext(llctx, L.target->global_as);
    L.empty = LLVMStructTypeInContext(llctx, NULL, 0, 0);
    L.bbs = GJ_NEW_N(&c->arena, LLVMBasicBlockRef, f->nblocks + 1);
    L.vars = GJ_NEW_N(&c->arena, LLVMValueRef, f->nvars + 1);
    L.temps = GJ_NEW_N(&c->arena, LLVMValueRef, f->ntemps + 1);
    L.loc = (GjLoc){f->code->firstlineno, -1, -1};
    if (!L.bbs || !L.vars || !L.temps)
        return gj_error(c, GJ_DIAG_INTERNAL, L.loc, "out of memory in lowering");

    L.mod = LLVMModuleCreateWithNameInContext(kernel_name, llctx);
    L.target->init_module(&L);
    L.b = LLVMCreateBuilderInContext(llctx);

    GjStatus st = begin_kernel(&L, kernel_name);
    if (st == GJ_OK)
        st = lower_blocks(&L);
    if (st == GJ_OK)
        st = L.target->finish_kernel(&L, kernel_name);
    if (st == GJ_OK) {
        mark_written(&L, plan);
        if (plan)
            plan->needs_fibers = L.needs_fibers;
    }
    if (L.dib) {
        LLVMDIBuilderFinalize(L.dib);
        LLVMDisposeDIBuilder(L.dib);
    }
    LLVMDisposeBuilder(L.b);
    if (st != GJ_OK) {
        LLVMDisposeModule(L.mod);
        return GJ_ERR;
    }
    *mod = L.mod;
    return GJ_OK;
}
