/*
 * lower.c - typed IR -> LLVM module: one kernel for one signature.
 *
 * Input: a GjFunc after type inference (every reachable temp and variable
 * typed; weak literal types are materialised here with gj_ty_concrete).
 * Output: a module for the options' target holding the kernel, with
 * parameters per compile.h's ABI, plus the plan's `written` flag for each
 * array parameter.  Each device function a kernel calls (a GjSpec) becomes
 * an internal LLVM function of the same module, lowered when its first call
 * is; frozen NumPy arrays become internal constants in the target's
 * constant memory.  What differs between targets (triple, calling
 * convention, special registers, barrier, math names, address spaces) is
 * asked of the GjTarget (target.h); nothing here tests which target it is.
 *
 * Shape of the generated code: an entry block with one alloca per variable
 * (mem2reg/SROA make them SSA) that stores the parameters, then one LLVM
 * block per reachable GjBlock.  Temps are LLVM values, valid only in the
 * block that defines them (ir.h's invariant).  This file is the top layer
 * of lowering (lower_base.h): it walks the IR and handles tuples,
 * device-function calls (the specialisation typing recorded in each CALL)
 * and calls of intrinsics through their row's lowering function (lower_fns
 * below, made from intrinsics.h's rows); lower_ops.c gives the operators,
 * lower_array.c arrays, views and frozen arrays, lower_iter.c iterators,
 * lower_error.c run-time checks, and each intrinsic family its file.
 *
 * Anything not handled is a LOWERING diagnostic at the instruction's line;
 * on error the module is disposed and *mod stays NULL.
 */
#include "lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intrinsics.h"
#include "lower_array.h"
#include "lower_atomic.h"
#include "lower_base.h"
#include "lower_error.h"
#include "lower_iter.h"
#include "lower_math.h"
#include "lower_ops.h"
#include "lower_print.h"
#include "lower_thread.h"
#include "lower_warp.h"
#include "symbol.h"

/* Each intrinsic's lowering function, from the `lower` column of
   intrinsics.h's rows (the front end's table keeps the other columns). */
/* clang-format off */
#define ROW(id, ns, name, params, lo, hi, rule, result, sub, lower, flags, doc) lower,
#define MATH_ROWS(id, ...) gj_lower_math_fn, gj_lower_math_fn, gj_lower_math_fn,
#define CONST_ROWS(id, ...) NULL, NULL, NULL,
static const GjIntrLowerFn lower_fns[] = {
    GJ_INTRINSICS(ROW) GJ_MATH_FUNCS(MATH_ROWS) GJ_MATH_CONSTS(CONST_ROWS)
};
#undef ROW
#undef MATH_ROWS
#undef CONST_ROWS
/* clang-format on */
_Static_assert(sizeof lower_fns / sizeof lower_fns[0] == GJ_NINTRINSICS,
               "one lowering function per GjIntrinsic");

static GjStatus fail_status(GjLower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static GjStatus fail_status(GjLower *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&L->c->arena, fmt, ap);
    va_end(ap);
    gj_lower_fail(L, "%s", msg ? msg : fmt);
    return GJ_ERR;
}

/* Whether a call of spec may end the thread: under boundscheck any function
   may index out of bounds; else one that raises, or calls one that may.
   Such a function returns its `ended` flag with its value (status_ret);
   after inlining, a flag that is always false costs nothing. */
static int spec_ends_thread(GjLower *L, GjSpec *spec) {
    if (L->opt->boundscheck)
        return 1;
    if (spec->ends_thread == 0) {
        spec->ends_thread = 1;   /* no, unless found below (typing refused recursion) */
        const GjFunc *f = spec->f;
        for (int32_t b = 0; b < f->nblocks && spec->ends_thread == 1; b++)
            for (int32_t k = 0; k < f->blocks[b]->nins; k++) {
                const GjIns *in = &f->blocks[b]->ins[k];
                if (in->op == GJ_OP_RAISE ||
                    (in->op == GJ_OP_CALL && in->spec && spec_ends_thread(L, in->spec))) {
                    spec->ends_thread = 2;
                    break;
                }
            }
    }
    return spec->ends_thread == 2;
}

/* raise: under debug the host raises the exception (a site with the class
   and the message); with or without, the thread ends there, as numba-cuda's
   kernels end at a raise whose status only a debug launch reads. */
static GjStatus lower_raise(GjLower *L, const GjIns *in) {
    if (L->opt->debug) {
        int32_t site = gj_lower_error_site(L, GJ_ERROR_RAISE, in->global.name, 0, "%s",
                                           in->c.kind == GJ_CONST_STR ? in->c.s : "");
        if (site < 0 || gj_lower_report(L, site, NULL, NULL) != GJ_OK)
            return GJ_ERR;
    }
    gj_lower_end_thread(L);
    return GJ_OK;
}

/* ---- constants ------------------------------------------------------------ */

/* The value of constant k as type t (the temp's type, which may differ from
   k's Python kind: a frozen np.float32 global, an int literal typed float). */
static LLVMValueRef const_value(GjLower *L, const GjConst *k, const GjType *t) {
    t = gj_ty_concrete(t);
    LLVMTypeRef ty = gj_lower_type(L, t);
    if (!ty)
        return gj_lower_fail(L, "constants of type %s are not supported", t->name);
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
    int is_number =
        k->kind == GJ_CONST_BOOL || k->kind == GJ_CONST_INT || k->kind == GJ_CONST_FLOAT;
    if (k->kind == GJ_CONST_COMPLEX && gj_lower_class(t) == GJ_NC_COMPLEX) {
        LLVMTypeRef part = LLVMStructGetTypeAtIndex(ty, 0);
        return gj_lower_complex(L, LLVMConstReal(part, k->f), LLVMConstReal(part, k->im));
    }
    switch (gj_lower_class(t)) {
    case GJ_NC_BOOL:
        if (is_number)
            return LLVMConstInt(ty, k->kind == GJ_CONST_FLOAT ? k->f != 0 : k->i != 0, 0);
        break;
    case GJ_NC_SINT:
    case GJ_NC_UINT:
        if (is_number)
            return LLVMConstInt(
                ty, (unsigned long long)(k->kind == GJ_CONST_FLOAT ? (long long)k->f : k->i), 1);
        break;
    case GJ_NC_FLOAT:
        if (is_number)
            return LLVMConstReal(ty, k->kind == GJ_CONST_FLOAT ? k->f : (double)k->i);
        break;
    case GJ_NC_COMPLEX:
        if (is_number) {
            LLVMTypeRef part = LLVMStructGetTypeAtIndex(ty, 0);
            double re = k->kind == GJ_CONST_FLOAT ? k->f : (double)k->i;
            return gj_lower_complex(L, LLVMConstReal(part, re), LLVMConstReal(part, 0.0));
        }
        break;
    case GJ_NC_OTHER: break;
    }
    return gj_lower_fail(L, "cannot use this constant as %s", t->name);
}

/* ---- calls ------------------------------------------------------------------- */

/* A call of an intrinsic: its row's lowering function (lower_fns), with
   the defaults of the optional parameters not given (int64 constants;
   call->v and call->t have room for 16). */
static LLVMValueRef call_intrinsic(GjLower *L, GjIntrinsic id, GjIntrCall *call) {
    const GjIntrinsicRow *row = gj_intrinsic_row(id);
    long long value;
    if (!lower_fns[id])
        return gj_lower_fail(L, "%s cannot be called in a kernel", gj_intrinsic_name(id));
    if (row->flags & GJ_IF_BARRIER)
        L->needs_fibers = 1;
    if (row->flags & GJ_IF_PRINTS)
        L->prints = 1;
    for (; call->n < 16 && gj_intrinsic_param_default(id, call->n, &value); call->n++) {
        call->v[call->n] = gj_lower_i64(L, value);
        call->t[call->n] = &gj_ty_int64;
    }
    call->id = id;
    call->row = row;
    return lower_fns[id](L, call);
}

/* The value of a value row (gpujit.laneid) read as a global or attribute. */
static LLVMValueRef intrinsic_value(GjLower *L, GjIntrinsic id, const GjType *rt) {
    LLVMValueRef v[16];
    const GjType *t[16];
    GjIntrCall call = {.v = v, .t = t, .n = 0, .rt = rt};
    return call_intrinsic(L, id, &call);
}

static LLVMValueRef spec_function(GjLower *caller, GjSpec *spec);

/* A call of a @gpujit.jit function: the specialisation typing recorded in
   the CALL, lowered on first use, called with each argument converted to
   the parameter's concrete type. */
static LLVMValueRef device_call(GjLower *L, const GjIns *in, const GjType *rt) {
    int32_t n = in->nargs - 1;
    LLVMValueRef *args = GJ_NEW_N(&L->c->arena, LLVMValueRef, n + 1 + GJ_THREAD_PARAMS);
    GjSpec *spec = in->spec;
    if (!args)
        return gj_lower_fail(L, "out of memory");
    if (!spec)
        return gj_lower_fail(L, "internal error: a device-function call was not typed");
    LLVMValueRef fn = spec_function(L, spec);
    if (!fn)
        return NULL;
    for (int32_t k = 0; k < n; k++)
        if (!(args[k] = gj_lower_cast(L, L->temps[in->args[k + 1]],
                                      L->f->temp_types[in->args[k + 1]], spec->argtypes[k])))
            return NULL;
    for (unsigned k = 0; k < L->target->thread_params; k++)
        args[n++] = L->thread[k];
    LLVMValueRef r = LLVMBuildCall2(L->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)n, "");
    int none = spec->f->ret_type->kind == GJ_TK_NONE;
    if (spec_ends_thread(L, spec)) {   /* {value, ended}: an ended callee ends this thread */
        LLVMValueRef ended = none ? r : LLVMBuildExtractValue(L->b, r, 1, "ended");
        r = none ? r : LLVMBuildExtractValue(L->b, r, 0, "");
        LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "call.ended");
        LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "call.ok");
        gj_lower_branch_unlikely(L, LLVMBuildNot(L->b, ended, ""), cont, end);
        LLVMPositionBuilderAtEnd(L->b, end);
        gj_lower_end_thread(L);
        LLVMPositionBuilderAtEnd(L->b, cont);
    }
    if (none)
        return LLVMGetUndef(L->empty);
    return gj_lower_cast(L, r, spec->f->ret_type, rt);
}

/* ---- attributes -------------------------------------------------------------- */

static LLVMValueRef getattr(GjLower *L, LLVMValueRef obj, const GjType *ot, const char *name,
                            const GjType *rt) {
    double value;
    if (gj_lower_type(L, rt) == L->empty)
        return LLVMGetUndef(L->empty); /* gpujit.grid, math.sqrt, gpujit.threadIdx, x.conjugate */
    if (ot->kind == GJ_TK_MODULE) { /* math.pi: a float literal */
        int id = gj_intrinsic_lookup(ot->name, name);
        if (id >= 0 && gj_intrinsic_constant((GjIntrinsic)id, &value))
            return gj_lower_cast(L, LLVMConstReal(LLVMDoubleTypeInContext(L->ctx), value),
                                 &gj_ty_float64, rt);
        if (id >= 0 && gj_intrinsic_is_value((GjIntrinsic)id)) /* gpujit.laneid */
            return intrinsic_value(L, (GjIntrinsic)id, rt);
    }
    if (gj_ty_is_scalar(ot) && (strcmp(name, "real") == 0 || strcmp(name, "imag") == 0)) {
        const GjType *t = gj_ty_concrete(ot);
        if (gj_lower_class(t) == GJ_NC_COMPLEX) {
            LLVMValueRef part = name[0] == 'r' ? gj_lower_re(L, obj) : gj_lower_im(L, obj);
            return gj_lower_cast(L, part, t->bits == 64 ? &gj_ty_float32 : &gj_ty_float64, rt);
        }
        return name[0] == 'r' ? gj_lower_cast(L, obj, ot, rt) : LLVMConstNull(gj_lower_type(L, rt));
    }
    if (ot->kind == GJ_TK_DIM3) {
        if (name[0] >= 'x' && name[0] <= 'z' && name[1] == '\0')
            return gj_lower_dim3_attr(L, ot->intrinsic, name[0] - 'x', rt);
    } else if (ot->kind == GJ_TK_ARRAY) {
        LLVMValueRef v = NULL;
        if (strcmp(name, "size") == 0)
            v = gj_lower_array_size(L, obj, ot);
        else if (strcmp(name, "ndim") == 0)
            v = gj_lower_i64(L, ot->ndim);
        else if (strcmp(name, "itemsize") == 0)
            v = gj_lower_i64(L, (long long)gj_ty_itemsize(ot->dtype));
        else if (strcmp(name, "shape") == 0 || strcmp(name, "strides") == 0)
            return gj_lower_array_dims_tuple(L, obj, ot, name[1] == 'h' ? 1 : 2,
                                             gj_lower_type(L, rt));
        if (v)
            return gj_lower_cast(L, v, &gj_ty_int64, rt);
    }
    return gj_lower_fail(L, "attribute '%s' of %s is not supported", name, ot->name);
}

/* ---- instructions --------------------------------------------------------------- */

static LLVMValueRef tuple_get(GjLower *L, LLVMValueRef tup, const GjType *tt, int64_t i) {
    if (tt->kind != GJ_TK_TUPLE)
        return gj_lower_fail(L, "%s is not a tuple", tt->name);
    if (i < 0)
        i += tt->n;
    if (i < 0 || i >= tt->n)
        return gj_lower_fail(L, "tuple index out of range for %s", tt->name);
    return LLVMBuildExtractValue(L->b, tup, (unsigned)i, "");
}

static LLVMValueRef build_tuple(GjLower *L, const GjIntrCall *a, const GjType *rt) {
    LLVMTypeRef ty = gj_lower_type(L, rt);
    if (!ty || rt->kind != GJ_TK_TUPLE || rt->n != a->n)
        return gj_lower_fail(L, "tuples of type %s are not supported", rt->name);
    LLVMValueRef out = LLVMGetUndef(ty);
    for (int k = 0; k < a->n; k++) {
        LLVMValueRef e = gj_lower_cast(L, a->v[k], a->t[k], rt->elems[k]);
        if (!e)
            return NULL;
        out = LLVMBuildInsertValue(L->b, out, e, (unsigned)k, "");
    }
    return out;
}

/* obj[idx]; subject names obj under boundscheck (access_subject), else NULL. */
static LLVMValueRef getitem(GjLower *L, LLVMValueRef obj, const GjType *ot, LLVMValueRef idx,
                            const GjType *it, const GjType *rt, const char *subject) {
    if (ot->kind == GJ_TK_ARRAY && rt->kind == GJ_TK_ARRAY)
        return gj_lower_array_view(L, obj, ot, idx, it, rt, subject);
    if (ot->kind == GJ_TK_ARRAY)
        return gj_lower_load_element(L, obj, ot, idx, it, subject);
    if (ot->kind == GJ_TK_TUPLE && LLVMIsAConstantInt(idx)) {
        int64_t k = LLVMConstIntGetSExtValue(idx);
        LLVMValueRef v = tuple_get(L, obj, ot, k);
        return v ? gj_lower_cast(L, v, ot->elems[k < 0 ? k + ot->n : k], rt) : NULL;
    }
    if (ot->kind == GJ_TK_TUPLE && gj_lower_class(it) != GJ_NC_OTHER && ot->n > 0) {
        LLVMValueRef i = gj_lower_cast(L, idx, it, &gj_ty_int64);
        if (i && subject) { /* an unsigned index never counts from the end */
            LLVMValueRef n = gj_lower_i64(L, ot->n);
            GjIndexCheck ix = {i,
                               gj_lower_class(it) == GJ_NC_SINT ? gj_lower_wrap_index(L, i, n) : i,
                               n, 0, gj_lower_class(it) == GJ_NC_UINT};
            if (gj_lower_check_bounds(L, subject, GJ_ERROR_TUPLE_INDEX, 1, &ix) != GJ_OK)
                return NULL;
        }
        return i ? gj_lower_tuple_item(L, obj, ot, i, rt) : NULL;
    }
    return gj_lower_fail(L, "indexing %s with %s is not supported", ot->name, it->name);
}

/* slice(start, stop[, step]) as {i64 start, i64 stop, i64 step}; omitted
   parts (None, which rt records) are 0 and never read. */
static LLVMValueRef build_slice(GjLower *L, const GjIns *in, const GjType *rt) {
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    for (int k = 0; k < 3; k++) {
        LLVMValueRef x = gj_lower_i64(L, 0);
        if (k < in->nargs && rt->elems[k]->kind != GJ_TK_NONE &&
            !(x = gj_lower_cast(L, L->temps[in->args[k]], L->f->temp_types[in->args[k]],
                                &gj_ty_int64)))
            return NULL;
        out = LLVMBuildInsertValue(L->b, out, x, (unsigned)k, "");
    }
    return out;
}

static GjStatus store_var(GjLower *L, int32_t var, LLVMValueRef v, const GjType *vt) {
    const GjVar *gv = &L->f->vars[var];
    if (!L->vars[var])
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "variable '%s' has no type", gv->name);
    if (!(v = gj_lower_cast(L, v, vt, gv->type)))
        return GJ_ERR;
    LLVMBuildStore(L->b, v, L->vars[var]);
    if (L->assigned[var])
        LLVMBuildStore(L->b, LLVMConstInt(L->i1, 1, 0), L->assigned[var]);
    return GJ_OK;
}

/* The value of a local; `unchecked` is 1 when some path may reach this read
   before any assignment (defassign.c): under debug, a check then reports
   UnboundLocalError where none came first (the read gives zero, as without
   debug). */
static LLVMValueRef load_var(GjLower *L, int32_t var, const GjType *rt, int unchecked) {
    const GjVar *gv = &L->f->vars[var];
    if (!L->vars[var]) {
        gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "variable '%s' has no type", gv->name);
        return NULL;
    }
    if (unchecked && L->assigned[var] &&
        gj_lower_check(L, LLVMBuildLoad2(L->b, L->i1, L->assigned[var], ""), GJ_ERROR_UNBOUND_LOCAL,
                       NULL, NULL,
                       "cannot access local variable '%s' where it is not associated with a "
                       "value",
                       gv->name) != GJ_OK)
        return NULL;
    LLVMValueRef v = LLVMBuildLoad2(L->b, gj_lower_type(L, gv->type), L->vars[var], gv->name);
    return gj_lower_cast(L, v, gv->type, rt);
}

/* A kernel returns nothing; a device function its value, converted to the
   return type inference unified from all its returns. */
static GjStatus build_return(GjLower *L, LLVMValueRef v, const GjType *vt) {
    const GjType *rt = L->f->ret_type;
    LLVMValueRef going_on = LLVMConstInt(L->i1, 0, 0); /* status_ret's `ended` */
    if (!L->f->is_device || !rt || rt->kind == GJ_TK_NONE) {
        if (L->status_ret)
            LLVMBuildRet(L->b, going_on);
        else
            LLVMBuildRetVoid(L->b);
        return GJ_OK;
    }
    if (!(v = gj_lower_cast(L, v, vt, rt)))
        return GJ_ERR;
    if (L->status_ret) {
        LLVMValueRef pair =
            LLVMBuildInsertValue(L->b, LLVMGetUndef(gj_lower_return_type(L)), v, 0, "");
        v = LLVMBuildInsertValue(L->b, pair, going_on, 1, "");
    }
    LLVMBuildRet(L->b, v);
    return GJ_OK;
}

/* The instruction of blk that defines temp (temps live in one block). */
static const GjIns *defining_ins(const GjBlock *blk, int32_t temp) {
    for (int32_t k = 0; k < blk->nins; k++)
        if (blk->ins[k].dst == temp)
            return &blk->ins[k];
    return NULL;
}

/* What temp (of block blk) is, for the message of an IndexError: "array
   'a'", "shared array 'tile'", "tuple 't'", "a view of array 'a'"; NULL
   without boundscheck, which is what turns the checks off. */
static const char *describe(GjLower *L, const GjBlock *blk, int32_t temp, int depth) {
    const GjType *t = L->f->temp_types[temp];
    const char *what = t->kind == GJ_TK_TUPLE         ? "tuple"
                       : t->addrspace == GJ_AS_SHARED ? "shared array"
                       : t->addrspace == GJ_AS_LOCAL  ? "local array"
                                                      : "array";
    const GjIns *def = defining_ins(blk, temp);
    const char *name = NULL;
    if (def && def->op == GJ_OP_LOAD_VAR && L->f->vars[def->var].kind != GJ_VAR_STACK)
        name = L->f->vars[def->var].name;
    else if (def && def->op == GJ_OP_GLOBAL)
        name = def->global.key;
    else if (def && def->op == GJ_OP_GETITEM && depth < 4)
        return gj_arena_printf(&L->c->arena, "a view of %s",
                               describe(L, blk, def->args[0], depth + 1));
    return name ? gj_arena_printf(&L->c->arena, "%s '%s'", what, name) : what;
}

static const char *access_subject(GjLower *L, const GjBlock *blk, int32_t temp) {
    return L->opt->boundscheck ? describe(L, blk, temp, 0) : NULL;
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
    case GJ_OP_CONST: v = const_value(L, &in->c, rt); break;
    case GJ_OP_GLOBAL:
        v = in->global.kind == GJ_GLOBAL_CONST   ? const_value(L, &in->global.value, rt)
            : in->global.kind == GJ_GLOBAL_ARRAY ? gj_lower_const_array(L, in->global.array, rt)
            : in->global.kind == GJ_GLOBAL_INTRINSIC && gj_lower_type(L, rt) != L->empty
                ? intrinsic_value(L, (GjIntrinsic)gj_intrinsic_lookup_qualified(in->global.name),
                                  rt) /* from gpujit import laneid */
                : LLVMGetUndef(L->empty);
        break;
    case GJ_OP_LOAD_VAR: v = load_var(L, in->var, rt, in->sub); break;
    case GJ_OP_STORE_VAR: return store_var(L, in->var, a[0], t[0]);
    case GJ_OP_BINOP: v = gj_lower_binop(L, (GjBinop)in->sub, a[0], t[0], a[1], t[1], rt); break;
    case GJ_OP_UNOP: v = gj_lower_unop(L, (GjUnop)in->sub, a[0], t[0], rt); break;
    case GJ_OP_COMPARE: v = gj_lower_compare(L, (GjCmp)in->sub, a[0], t[0], a[1], t[1]); break;
    case GJ_OP_TRUTH:
        v = t[0]->kind == GJ_TK_NONE ? LLVMConstInt(L->i1, 0, 0) : gj_lower_truth(L, a[0], t[0]);
        break;
    case GJ_OP_GETATTR: v = getattr(L, a[0], t[0], in->name, rt); break;
    case GJ_OP_GETITEM:
        v = getitem(L, a[0], t[0], a[1], t[1], rt, access_subject(L, blk, in->args[0]));
        break;
    case GJ_OP_SETITEM:
        if (t[0]->kind != GJ_TK_ARRAY)
            return fail_status(L, "%s does not support item assignment", t[0]->name);
        return gj_lower_store_element(L, a[0], t[0], a[1], t[1], a[2], t[2],
                                      access_subject(L, blk, in->args[0]));
    case GJ_OP_CALL: {
        if (t[0]->kind == GJ_TK_CALLABLE && t[0]->callee) {
            v = device_call(L, in, rt);
            break;
        }
        LLVMValueRef args[16];
        const GjType *types[16];
        GjIntrCall ca = {.v = args, .t = types, .n = in->nargs - 1, .rt = rt};
        if (t[0]->kind != GJ_TK_CALLABLE || ca.n > 16)
            return fail_status(L, "this call is not supported");
        for (int k = 0; k < ca.n; k++) {
            args[k] = L->temps[in->args[k + 1]];
            types[k] = f->temp_types[in->args[k + 1]];
        }
        if (ca.n > 0 && types[0]->kind == GJ_TK_ARRAY) /* atomics index it */
            ca.subject = access_subject(L, blk, in->args[1]);
        if (gj_intrinsic_row((GjIntrinsic)t[0]->intrinsic)->rule == GJ_TR_RECEIVER) {
            /* x.conjugate(): x is args[0] */
            const GjIns *def = defining_ins(blk, in->args[0]);
            if (!def || def->op != GJ_OP_GETATTR || ca.n != 0)
                return fail_status(L, "this method call is not supported");
            args[0] = L->temps[def->args[0]];
            types[0] = f->temp_types[def->args[0]];
            ca.n = 1;
        }
        v = call_intrinsic(L, (GjIntrinsic)t[0]->intrinsic, &ca);
        break;
    }
    case GJ_OP_BUILD_TUPLE: {
        LLVMValueRef args[64];
        const GjType *types[64];
        GjIntrCall ca = {.v = args, .t = types, .n = in->nargs};
        if (in->nargs > 64)
            return fail_status(L, "tuples of more than 64 items are not supported");
        for (int k = 0; k < ca.n; k++) {
            args[k] = L->temps[in->args[k]];
            types[k] = f->temp_types[in->args[k]];
        }
        v = build_tuple(L, &ca, rt);
        break;
    }
    case GJ_OP_BUILD_SLICE: v = build_slice(L, in, rt); break;
    case GJ_OP_TUPLE_GET:
        v = tuple_get(L, a[0], t[0], in->i);
        if (v)
            v = gj_lower_cast(L, v, t[0]->elems[in->i < 0 ? in->i + t[0]->n : in->i], rt);
        break;
    case GJ_OP_GET_ITER: v = gj_lower_iter_get(L, a[0], t[0], rt); break;
    case GJ_OP_ITER_VALID:
        v = gj_lower_iter_valid(L, a[0], t[0]);
        if (v && !LLVMIsAConstant(v) && L->opt->boundscheck &&
            (L->iter_facts = gj_lower_iter_facts(L, a[0], t[0])))
            L->iter_valid = v;
        break;
    case GJ_OP_ITER_VALUE: v = gj_lower_iter_value(L, a[0], t[0], rt); break;
    case GJ_OP_ITER_NEXT: v = gj_lower_iter_next(L, a[0], t[0]); break;
    case GJ_OP_JUMP: LLVMBuildBr(L->b, L->bbs[blk->succ[0]]); return GJ_OK;
    case GJ_OP_BRANCH: {
        LLVMValueRef cond = gj_lower_truth(L, a[0], t[0]);
        if (!cond)
            return GJ_ERR;
        if (cond == L->iter_valid && L->iter_facts) {
            /* FOR_ITER's test: the body starts with the iterator's facts,
               so that bounds checks of its values fold (a grid-stride loop's
               x[i]) without a second test in the loop's exit */
            LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "iter.facts");
            LLVMBuildCondBr(L->b, cond, body, L->bbs[blk->succ[1]]);
            LLVMPositionBuilderAtEnd(L->b, body);
            gj_lower_call_intrinsic(L, "llvm.assume", NULL, &L->iter_facts, 1);
            L->iter_valid = L->iter_facts = NULL;
            LLVMBuildBr(L->b, L->bbs[blk->succ[0]]);
            return GJ_OK;
        }
        LLVMBuildCondBr(L->b, cond, L->bbs[blk->succ[0]], L->bbs[blk->succ[1]]);
        return GJ_OK;
    }
    case GJ_OP_RETURN: return build_return(L, a[0], t[0]);
    case GJ_OP_RAISE: return lower_raise(L, in);
    case GJ_NOPS: break;
    }
    if (!v) {
        if (!L->c->diag)
            gj_lower_fail(L, "cannot lower %s", gj_ir_op_name(in->op));
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

static LLVMMetadataRef di_file(GjLower *L, const GjCodeView *cv) {
    const char *path = cv->filename ? cv->filename : "<unknown>";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = slash ? (size_t)(slash - path) : 0;
    return LLVMDIBuilderCreateFile(L->dib, base, strlen(base), path, dirlen);
}

/* The module's debug-info builder and compile unit (the kernel's file). */
static void lineinfo_module(GjLower *L) {
    L->dib = LLVMCreateDIBuilder(L->mod);
    LLVMDIBuilderCreateCompileUnit(L->dib, LLVMDWARFSourceLanguagePython, di_file(L, L->f->code),
                                   "gpujit", 6, L->opt->opt_level > 0, "", 0, 0, "", 0,
                                   GJ_DWARF_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
    LLVMAddModuleFlag(L->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(L->i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(L->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(L->i32, 2, 0)));
}

/* A subprogram for L->fn in its own Python file (device functions may live
   in another module than the kernel). */
static void lineinfo_function(GjLower *L, const char *llname) {
    const GjCodeView *cv = L->f->code;
    LLVMMetadataRef file = di_file(L, cv);
    LLVMMetadataRef fn_type =
        LLVMDIBuilderCreateSubroutineType(L->dib, file, NULL, 0, LLVMDIFlagZero);
    const char *pyname = cv->name ? cv->name : llname;
    unsigned line = cv->firstlineno > 0 ? (unsigned)cv->firstlineno : 0;
    L->subprogram = LLVMDIBuilderCreateFunction(
        L->dib, file, pyname, strlen(pyname), llname, strlen(llname), file, line, fn_type,
        L->spec != NULL, 1, line, LLVMDIFlagZero, L->opt->opt_level > 0);
    LLVMSetSubprogram(L->fn, L->subprogram);
}

static void lineinfo_at(GjLower *L, GjLoc loc) {
    if (!L->dib || loc.line <= 0)
        return;
    unsigned col = loc.col >= 0 ? (unsigned)loc.col + 1 : 0;
    LLVMSetCurrentDebugLocation2(L->b, LLVMDIBuilderCreateDebugLocation(L->ctx, (unsigned)loc.line,
                                                                        col, L->subprogram, NULL));
}

/* ---- the kernel ------------------------------------------------------------------ */

static const GjType *param_type(const GjFunc *f, int i) {
    const GjType *t = f->code->argtypes ? f->code->argtypes[i] : NULL;
    return t ? t : f->vars[i].type;
}

/* The LLVM parameter types of an argument of type t, per compile.h's ABI
   (a tuple: its items', depth-first). */
static GjStatus flat_params(GjLower *L, const GjType *t, const char *name, LLVMTypeRef *out,
                            unsigned *n, unsigned cap) {
    t = gj_ty_concrete(t);
    if (t->kind == GJ_TK_TUPLE) {
        for (int k = 0; k < t->n; k++)
            if (flat_params(L, t->elems[k], name, out, n, cap) != GJ_OK)
                return GJ_ERR;
        return GJ_OK;
    }
    unsigned need = t->kind == GJ_TK_ARRAY ? 1 + 2 * (unsigned)t->ndim : 1;
    if (*n + need > cap)
        return fail_status(L,
                           "the arguments flatten to more than %u kernel parameters "
                           "(a scalar takes 1, an array 1 + 2 * ndim); pass fewer, or "
                           "pack scalars into an array",
                           cap);
    if (t->kind == GJ_TK_ARRAY) {
        out[(*n)++] = L->ptr_global;
        for (int k = 0; k < 2 * t->ndim; k++)
            out[(*n)++] = L->i64;
    } else if (gj_lower_class(t) != GJ_NC_OTHER) {
        out[(*n)++] = t->kind == GJ_TK_BOOL ? L->i8 : gj_lower_type(L, t);
    } else {
        return fail_status(L, "parameter '%s' of type %s cannot be passed to a kernel", name,
                           t->name);
    }
    return GJ_OK;
}

/* The kernel's LLVM parameter types, per compile.h's ABI. */
static GjStatus kernel_params(GjLower *L, LLVMTypeRef *out, unsigned *n, unsigned cap) {
    *n = 0;
    for (int i = 0; i < L->f->code->argcount; i++)
        if (flat_params(L, param_type(L->f, i), L->f->vars[i].name, out, n, cap) != GJ_OK)
            return GJ_ERR;
    return GJ_OK;
}

/* The value of an argument of type t from the kernel's parameters *p on
   (flat_params' order), naming them after `name`. */
static LLVMValueRef param_value(GjLower *L, const GjType *t, const char *name, unsigned *p) {
    t = gj_ty_concrete(t);
    LLVMValueRef v;
    if (t->kind == GJ_TK_TUPLE) {
        v = LLVMGetUndef(gj_lower_type(L, t));
        for (int k = 0; k < t->n; k++) {
            char *item = gj_arena_printf(&L->c->arena, "%s.%d", name, k);
            LLVMValueRef e = param_value(L, t->elems[k], item ? item : name, p);
            if (!e)
                return NULL;
            v = LLVMBuildInsertValue(L->b, v, e, (unsigned)k, "");
        }
    } else if (t->kind == GJ_TK_ARRAY) {
        v = LLVMGetUndef(gj_lower_type(L, t));
        LLVMValueRef data = LLVMGetParam(L->fn, (*p)++);
        LLVMSetValueName2(data, name, strlen(name));
        v = LLVMBuildInsertValue(L->b, v, data, 0, "");
        for (unsigned field = 1; field <= 2; field++) {
            LLVMValueRef dims = LLVMGetUndef(LLVMArrayType2(L->i64, (uint64_t)t->ndim));
            for (int k = 0; k < t->ndim; k++) {
                LLVMValueRef d = LLVMGetParam(L->fn, (*p)++);
                char *dname = gj_arena_printf(&L->c->arena, "%s.%s%d", name,
                                              field == 1 ? "shape" : "stride", k);
                if (dname)
                    LLVMSetValueName2(d, dname, strlen(dname));
                if (field == 1 && L->opt->boundscheck) {
                    /* An extent is never negative: with this, a kernel's own test
                       `if i < a.shape[0]` (signed) proves a bounds check of a[i]
                       (unsigned), which LLVM's constraint elimination then drops. */
                    LLVMValueRef nonnegative =
                        LLVMBuildICmp(L->b, LLVMIntSGE, d, gj_lower_i64(L, 0), "");
                    gj_lower_call_intrinsic(L, "llvm.assume", NULL, &nonnegative, 1);
                }
                dims = LLVMBuildInsertValue(L->b, dims, d, (unsigned)k, "");
            }
            v = LLVMBuildInsertValue(L->b, v, dims, field, "");
        }
    } else {
        v = LLVMGetParam(L->fn, (*p)++);
        LLVMSetValueName2(v, name, strlen(name));
        if (t->kind == GJ_TK_BOOL)
            v = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "");
    }
    return v;
}

/* Names the parameters and stores each Python argument into its variable. */
static GjStatus store_params(GjLower *L) {
    unsigned p = 0;
    for (int i = 0; i < L->f->code->argcount; i++) {
        const GjType *t = gj_ty_concrete(param_type(L->f, i));
        LLVMValueRef v = param_value(L, t, L->f->vars[i].name, &p);
        if (!v)
            return GJ_ERR;
        if (L->vars[i] && store_var(L, i, v, t) != GJ_OK)
            return GJ_ERR;
    }
    return GJ_OK;
}

/* ---- device functions ---------------------------------------------------------- */

/* A device function takes each argument as its value (arrays and tuples as
   the structs of lower_base.h) and returns its value, or void for None. */
static GjStatus device_signature(GjLower *L, LLVMTypeRef *params, unsigned *n, unsigned cap,
                                 LLVMTypeRef *ret) {
    const GjFunc *f = L->f;
    *n = 0;
    if ((unsigned)f->code->argcount > cap)
        return fail_status(L, "a device function takes at most %u parameters", cap);
    for (int i = 0; i < f->code->argcount; i++) {
        const GjType *t = param_type(f, i);
        if (!(params[(*n)++] = gj_lower_type(L, t)))
            return fail_status(L,
                               "parameter '%s' of type %s cannot be passed to a device "
                               "function",
                               f->vars[i].name, t->name);
    }
    *ret = f->ret_type->kind == GJ_TK_NONE ? LLVMVoidTypeInContext(L->ctx)
                                           : gj_lower_type(L, f->ret_type);
    return *ret ? GJ_OK : fail_status(L, "a device function cannot return %s", f->ret_type->name);
}

static GjStatus store_device_params(GjLower *L) {
    for (int i = 0; i < L->f->code->argcount; i++) {
        LLVMValueRef v = LLVMGetParam(L->fn, (unsigned)i);
        LLVMSetValueName2(v, L->f->vars[i].name, strlen(L->f->vars[i].name));
        if (L->vars[i] && store_var(L, i, v, param_type(L->f, i)) != GJ_OK)
            return GJ_ERR;
    }
    return GJ_OK;
}

static void add_fn_attribute(GjLower *L, const char *name) {
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(L->fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(L->ctx, kind, 0));
}

/* The one place kernels and device functions differ: the LLVM signature,
   calling convention and linkage.  A kernel (PTX .entry) takes compile.h's
   flattened parameters; a device function (.func) is internal to the
   module, or visible when it is what compile_ptx(device=True) compiles. */
static GjStatus declare_function(GjLower *L, const char *name) {
    LLVMTypeRef params[256 + GJ_THREAD_PARAMS], ret = LLVMVoidTypeInContext(L->ctx);
    unsigned nparams;
    GjStatus st = L->f->is_device ? device_signature(L, params, &nparams, 256, &ret)
                                  : kernel_params(L, params, &nparams, 256);
    if (st != GJ_OK)
        return GJ_ERR;
    if (!L->f->is_device) {
        if (L->target->declare_kernel(L, name, params, nparams) != GJ_OK)
            return GJ_ERR;
    } else {
        L->status_ret = L->spec && spec_ends_thread(L, L->spec);
        if (L->status_ret) { /* {value, ended}, or ended alone */
            LLVMTypeRef pair[2] = {ret, L->i1};
            ret = LLVMGetTypeKind(ret) == LLVMVoidTypeKind
                      ? L->i1
                      : LLVMStructTypeInContext(L->ctx, pair, 2, 0);
        }
        unsigned first = nparams;
        if (L->target->thread_params)
            L->target->thread_types(L, params + first);
        nparams += L->target->thread_params;
        L->fn = LLVMAddFunction(L->mod, name, LLVMFunctionType(ret, params, nparams, 0));
        for (unsigned k = 0; k < L->target->thread_params; k++)
            L->thread[k] = LLVMGetParam(L->fn, first + k);
        if (L->spec)
            LLVMSetLinkage(L->fn, LLVMInternalLinkage);
    }
    if (L->spec && L->spec->callee->inline_always)
        add_fn_attribute(L, "alwaysinline");
    return GJ_OK;
}

static void mark_reachable(const GjFunc *f, char *seen, int32_t id) {
    if (seen[id])
        return;
    seen[id] = 1;
    for (int32_t s = 0; s < f->blocks[id]->nsucc; s++)
        mark_reachable(f, seen, f->blocks[id]->succ[s]);
}

/* Creates the function, its entry block (allocas, parameters) and one LLVM
   block per reachable GjBlock. */
static GjStatus begin_function(GjLower *L, const char *name) {
    GjFunc *f = L->f;
    if (declare_function(L, name) != GJ_OK)
        return GJ_ERR;
    if (L->opt->fastmath & GJ_FM_FTZ) {
        /* float32 denormals flush to zero: .ftz instructions.  The rest of
           fastmath is per instruction (lower_base.c's gj_lower_fast, and
           gj_lower_approx for what LLVM 19's NVPTX backend would select
           only under the function-wide "unsafe-fp-math", which would also
           turn on everything else). */
        static const char key[] = "denormal-fp-math-f32", value[] = "preserve-sign,preserve-sign";
        LLVMAddAttributeAtIndex(
            L->fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
            LLVMCreateStringAttribute(L->ctx, key, sizeof key - 1, value, sizeof value - 1));
    }
    if (L->dib)
        lineinfo_function(L, name);

    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "entry");
    LLVMPositionBuilderAtEnd(L->b, entry);
    lineinfo_at(L, (GjLoc){f->code->firstlineno, -1, -1});
    for (int32_t v = 0; v < f->nvars; v++) {
        LLVMTypeRef ty = f->vars[v].type ? gj_lower_type(L, f->vars[v].type) : NULL;
        if (f->vars[v].type && !ty)
            return fail_status(L, "variable '%s' has type %s, which is not supported in kernels",
                               f->vars[v].name, f->vars[v].type->name);
        L->vars[v] = ty ? LLVMBuildAlloca(L->b, ty, f->vars[v].name) : NULL;
        if (ty && f->vars[v].maybe_unassigned) { /* numba's zero for an unassigned read */
            LLVMBuildStore(L->b, LLVMConstNull(ty), L->vars[v]);
            if (L->opt->debug) {
                L->assigned[v] = LLVMBuildAlloca(L->b, L->i1, "");
                LLVMBuildStore(L->b, LLVMConstInt(L->i1, 0, 0), L->assigned[v]);
            }
        }
    }
    if ((f->is_device ? store_device_params(L) : store_params(L)) != GJ_OK)
        return GJ_ERR;

    char *seen = GJ_NEW_N(&L->c->arena, char, f->nblocks + 1);
    if (!seen || f->nblocks == 0)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "kernel has no blocks");
    mark_reachable(f, seen, 0);
    for (int32_t i = 0; i < f->nblocks; i++) {
        if (!seen[i])
            continue;
        char *bname = gj_arena_printf(&L->c->arena, "b%d", i);
        L->bbs[i] = LLVMAppendBasicBlockInContext(L->ctx, L->fn, bname ? bname : "");
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

/* Lowers L->f into L->mod as function `name`; L's module-wide fields are set. */
static GjStatus lower_function(GjLower *L, const char *name) {
    GjFunc *f = L->f;
    L->bbs = GJ_NEW_N(&L->c->arena, LLVMBasicBlockRef, f->nblocks + 1);
    L->vars = GJ_NEW_N(&L->c->arena, LLVMValueRef, f->nvars + 1);
    L->assigned = GJ_NEW_N(&L->c->arena, LLVMValueRef, f->nvars + 1);
    L->temps = GJ_NEW_N(&L->c->arena, LLVMValueRef, f->ntemps + 1);
    L->loc = (GjLoc){f->code->firstlineno, -1, -1};
    if (!L->bbs || !L->vars || !L->assigned || !L->temps)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
    L->b = LLVMCreateBuilderInContext(L->ctx);
    GjStatus st = begin_function(L, name);
    if (st == GJ_OK)
        st = lower_blocks(L);
    LLVMDisposeBuilder(L->b);
    L->b = NULL;
    return st;
}

/* The LLVM function of a device-function specialisation, lowered into the
   caller's module on first use (typing rejected recursion, so this nests
   no deeper than the calls do). */
static LLVMValueRef spec_function(GjLower *caller, GjSpec *spec) {
    if (spec->llfn)
        return spec->llfn;
    GjLower L = *caller;
    L.f = spec->f;
    L.spec = spec;
    L.subprogram = NULL;
    const GjCodeView *cv = spec->f->code, *saved = caller->c->code;
    const char *q = cv->qualname ? cv->qualname : cv->name ? cv->name : "device";
    char *name = gj_sym_of_python_name("_gj_dev_", q);
    caller->c->code = cv;
    GjStatus st = name ? lower_function(&L, name) : GJ_ERR;
    free(name); /* LLVM keeps a copy */
    caller->needs_fibers |= L.needs_fibers; /* a barrier in a callee synchronises the block */
    caller->prints |= L.prints;
    caller->local_bytes += L.local_bytes; /* at most: callees' frames may not all be live */
    caller->dynamic_shared |= L.dynamic_shared;
    caller->c->code = saved;
    if (st != GJ_OK) {
        if (!caller->c->diag)
            gj_error(caller->c, GJ_DIAG_INTERNAL, caller->loc, "out of memory in lowering");
        gj_note(caller->c, "lowering of a call to %s at %s:%d", q,
                saved && saved->filename ? saved->filename : "?", caller->loc.line);
        return NULL;
    }
    spec->llfn = L.fn;
    return L.fn;
}

GjStatus gj_lower_kernel(GjCtx *c, GjFunc *f, const GjCompileOptions *opt, const char *kernel_name,
                         LLVMContextRef llctx, LLVMModuleRef *mod, GjCompileResult *plan) {
    /* require: typed IR (gj_infer_func) */
    *mod = NULL;
    GjErrorSites errors = {0};
    GjLower L = {.c = c,
                 .f = f,
                 .opt = opt,
                 .target = gj_target_of(opt->target),
                 .ctx = llctx,
                 .errors = &errors};
    L.i1 = LLVMInt1TypeInContext(llctx);
    L.i8 = LLVMInt8TypeInContext(llctx);
    L.i32 = LLVMInt32TypeInContext(llctx);
    L.i64 = LLVMInt64TypeInContext(llctx);
    L.ptr_global = LLVMPointerTypeInContext(llctx, L.target->addrspace[GJ_AS_GLOBAL]);
    L.ptr_const = LLVMPointerTypeInContext(llctx, L.target->addrspace[GJ_AS_CONST]);
    L.empty = LLVMStructTypeInContext(llctx, NULL, 0, 0);
    L.mod = LLVMModuleCreateWithNameInContext(kernel_name, llctx);
    L.target->init_module(&L);
    if (opt->lineinfo)
        lineinfo_module(&L);

    GjStatus st = lower_function(&L, kernel_name);
    if (st == GJ_OK)
        st = L.target->finish_kernel(&L, kernel_name);
    if (st == GJ_OK && plan) {
        plan->needs_fibers = L.needs_fibers;
        plan->cpu_per_thread =
            opt->target == GJ_TARGET_CPU && (L.needs_fibers || !opt->cpu_thread_loops);
        plan->prints = L.prints;
        plan->local_bytes = (size_t)L.local_bytes;
        plan->dynamic_shared = L.dynamic_shared;
        plan->shared_static_bytes = gj_lower_shared_finish(&L);
        plan->const_bytes = (size_t)gj_lower_const_bytes(&L);
        st = gj_lower_error_sites(&L, plan);
    }
    if (L.dib) {
        LLVMDIBuilderFinalize(L.dib);
        LLVMDisposeDIBuilder(L.dib);
    }
    if (st != GJ_OK) {
        LLVMDisposeModule(L.mod);
        return GJ_ERR;
    }
    *mod = L.mod;
    return GJ_OK;
}
