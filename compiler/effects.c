/*
 * effects.c - which array parameters a kernel (or device function) may
 * write: the launch plan copies back only those (compile.h, `written`).
 *
 * Input: typed IR (gj_infer_func); a temp of an unreachable block has no
 * type and is skipped.  What writes is read from tables, not from the ops
 * themselves: an op with GJ_OPE_WRITES_A0 (SETITEM) stores through its first
 * operand; a CALL (GJ_OPE_CALL) stores through an intrinsic's first argument
 * when its row has GJ_IF_WRITES_ARG0 (atomics), and through a device
 * function's arguments that its own analysis (GjSpec.written of the CALL's
 * GjIns.spec, computed here on first need; recursion is rejected when
 * typing) says it writes.
 *
 * The analysis is conservative: a store through a temp loaded from a
 * parameter that is never reassigned marks that parameter; any other store
 * marks every parameter whose type may hold an array of the stored dtype.
 */
#include "ir.h"

#include "intrinsics.h"

/* Whether a value of type `holder` (an array, or a tuple of them) may be or
   contain an array of a type that `stored` is or contains. */
static int shares_array(const GjType *holder, const GjType *stored) {
    if (!holder || !stored)
        return 0;
    if (stored->kind == GJ_TK_TUPLE) {
        for (int i = 0; i < stored->n; i++)
            if (shares_array(holder, stored->elems[i]))
                return 1;
        return 0;
    }
    if (stored->kind != GJ_TK_ARRAY)
        return 0;
    /* By dtype, not type: a view (a[i], a[2:]) has another ndim or layout. */
    if (holder->kind == GJ_TK_ARRAY && holder->dtype == stored->dtype)
        return 1;
    for (int i = 0; holder->kind == GJ_TK_TUPLE && i < holder->n; i++)
        if (shares_array(holder->elems[i], stored))
            return 1;
    return 0;
}

static const GjType *param_type(const GjFunc *f, int i) {
    const GjType *t = f->code->argtypes ? f->code->argtypes[i] : NULL;
    return t ? t : f->vars[i].type;
}

typedef struct Written {
    const GjFunc *f;
    const int32_t *source;    /* per temp: the variable it was loaded from, or -1 */
    const char *reassigned;   /* per variable */
    char *written;            /* per parameter: may be stored through */
} Written;

/* Temp t is stored through: exactly the parameter it was loaded from when
   that variable is never reassigned; otherwise every parameter whose type
   may hold one of t's arrays. */
static void mark_stored(Written *w, int32_t t) {
    int nargs = w->f->code->argcount;
    int32_t v = w->source[t];
    if (v >= 0 && v < nargs && !w->reassigned[v]) {
        w->written[v] = 1;
        return;
    }
    for (int p = 0; p < nargs; p++)
        if (shares_array(param_type(w->f, p), w->f->temp_types[t]))
            w->written[p] = 1;
}

/* The written flags of the device function that CALL `in` calls, or NULL
   when it cannot be had (then every array argument counts as written). */
static const char *callee_written(GjCtx *c, const GjIns *in) {
    GjSpec *spec = in->spec;   /* typing's */
    if (!spec)
        return NULL;
    if (!spec->written) {
        char *w = GJ_NEW_N(&c->arena, char, spec->nargs + 1);
        if (!w || gj_effects_written(c, spec->f, w) != GJ_OK)
            return NULL;
        spec->written = w;
    }
    return spec->written;
}

/* The stores of call `in`. */
static void call_effects(GjCtx *c, Written *w, const GjIns *in) {
    const GjType *ft = w->f->temp_types[in->args[0]];
    if (!ft || ft->kind != GJ_TK_CALLABLE)
        return;
    if (!ft->callee) {
        unsigned flags = gj_intrinsic_row((GjIntrinsic)ft->intrinsic)->flags;
        if (in->nargs > 1 && (flags & GJ_IF_WRITES_ARG0))
            mark_stored(w, in->args[1]);
        return;
    }
    const char *callee = callee_written(c, in);
    for (int32_t a = 0; a + 1 < in->nargs; a++)
        if (!callee || callee[a])
            mark_stored(w, in->args[a + 1]);
}

GjStatus gj_effects_written(GjCtx *c, GjFunc *f, char *written) {
    /* require: typed IR */
    int32_t *source = GJ_NEW_N(&c->arena, int32_t, f->ntemps + 1);
    char *reassigned = GJ_NEW_N(&c->arena, char, f->nvars + 1);
    if (!source || !reassigned)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    Written w = {f, source, reassigned, written};
    for (int32_t t = 0; t < f->ntemps; t++)
        source[t] = -1;
    for (int32_t i = 0; i < f->nblocks; i++) {
        for (int32_t k = 0; k < f->blocks[i]->nins; k++) {
            const GjIns *in = &f->blocks[i]->ins[k];
            if (in->op == GJ_OP_LOAD_VAR && in->dst >= 0)
                source[in->dst] = in->var;
            else if (in->op == GJ_OP_GETITEM && in->dst >= 0 && f->temp_types[in->dst] &&
                     f->temp_types[in->dst]->kind == GJ_TK_ARRAY)
                source[in->dst] = source[in->args[0]];   /* a view: same memory */
            else if (in->op == GJ_OP_STORE_VAR)
                reassigned[in->var] = 1;
        }
    }
    for (int32_t i = 0; i < f->nblocks; i++) {
        for (int32_t k = 0; k < f->blocks[i]->nins; k++) {
            const GjIns *in = &f->blocks[i]->ins[k];
            unsigned eff = gj_ir_op_effects(in->op);
            if (in->nargs == 0 || !f->temp_types[in->args[0]])
                continue;   /* unreachable */
            if (eff & GJ_OPE_WRITES_A0)
                mark_stored(&w, in->args[0]);
            if (eff & GJ_OPE_CALL)
                call_effects(c, &w, in);
        }
    }
    return GJ_OK;
}
