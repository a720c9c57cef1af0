/*
 * devfunc.c - device functions: the specialisation table (ir.h's GjSpec).
 *
 * A @gpujit.jit function called from a kernel is compiled once per distinct
 * tuple of argument types (a specialisation), inside the caller's
 * compilation: type inference of a CALL asks gj_spec_get() for the callee's
 * specialisation, which runs the front end (gj_front_end) on the callee on
 * first use, in the same GjCtx (same arena, same interned types), and
 * records it in the CALL (GjIns.spec).  Lowering later emits one LLVM
 * function per specialisation (lower.c), read from there.
 *
 * Recursion is rejected here: a specialisation is `busy` while it is being
 * typed, and so is the kernel itself (gj_compile registers it), so a
 * call that reaches a function whose typing is still in progress - f calling
 * f, or f -> g -> f - is an UNSUPPORTED error at the call's line instead of
 * an endless loop.  A specialisation that fails to type is dropped, so a
 * caller that asks again (its last, reporting sweep) gets the error again.
 */
#include "ir.h"

#include <string.h>

#include "frontend.h"

const GjType *gj_spec_arg_type(GjCtx *c, const GjType *t) {
    if (t->kind != GJ_TK_TUPLE)
        return gj_ty_concrete(t);
    const GjType **elems = GJ_NEW_N(&c->arena, const GjType *, t->n > 0 ? t->n : 1);
    if (!elems)
        return NULL;
    for (int i = 0; i < t->n; i++) {
        if (!(elems[i] = gj_spec_arg_type(c, t->elems[i])))
            return NULL;
    }
    return gj_ty_tuple(c, elems, t->n);
}

static const char *code_name(const GjCodeView *code) {
    return code->qualname ? code->qualname : code->name ? code->name : "?";
}

static GjSpec *find(GjCtx *c, const GjCodeView *code, const GjType *const *types, int32_t n) {
    for (GjSpec *s = c->specs; s; s = s->next) {
        if (!s->callee || s->callee->code != code || s->nargs != n || !s->f)
            continue;
        if (memcmp(s->argtypes, types, sizeof *types * (size_t)n) == 0)
            return s;
    }
    return NULL;
}

static void drop(GjCtx *c, GjSpec *spec) {
    for (GjSpec **p = &c->specs; *p; p = &(*p)->next) {
        if (*p == spec) {
            *p = spec->next;
            return;
        }
    }
}

/* Builds and types spec->f for a copy of the callee's code view that carries
   the specialisation's argument types and the declared return type. */
static GjStatus type_spec(GjCtx *c, GjSpec *spec, const GjType *ret) {
    GjCodeView *cv = GJ_NEW(&c->arena, GjCodeView);
    if (!cv)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    *cv = *spec->callee->code;
    cv->argtypes = spec->argtypes;
    cv->rettype = ret;
    const GjCodeView *saved = c->code;
    c->code = cv;
    GjFunc *f;
    GjStatus st = gj_front_end(c, cv, 1, spec, &f);
    c->code = saved;
    spec->f = f;
    return st;
}

/* A function declared with a signature (jit("int32(int32, int32)",
   device=True)) is compiled for its types only, as numba does: each scalar
   argument becomes the declared type (lowering casts it at the call) and
   the result the declared return type.  An array must be the declared one;
   a declared layout A takes any layout (that layout is then specialised). */
static GjStatus declared_types(GjCtx *c, const GjCodeView *code, GjLoc loc, const GjType **types,
                               int32_t nargs, const GjType **ret) {
    const GjType **declared;
    int nd;
    if (gj_ty_parse_signature(c, code->signature, &declared, &nd, ret) != GJ_OK)
        return GJ_ERR;
    if (nd != nargs)
        return gj_error(c, GJ_DIAG_TYPING, loc,
                        "the signature '%s' of %s() has %d argument "
                        "types, but it takes %d",
                        code->signature, code_name(code), nd, (int)nargs);
    for (int32_t i = 0; i < nargs; i++) {
        const GjType *want = declared[i], *have = types[i];
        if (gj_ty_is_scalar(want) && gj_ty_is_scalar(have))
            types[i] = want;
        else if (want != have && !(want->kind == GJ_TK_ARRAY && have->kind == GJ_TK_ARRAY &&
                                   want->layout == GJ_LAYOUT_A && want->dtype == have->dtype &&
                                   want->ndim == have->ndim))
            return gj_error(c, GJ_DIAG_TYPING, loc,
                            "argument %d of %s() is %s, which does "
                            "not convert to %s of its signature '%s'",
                            (int)i + 1, code_name(code), have->name, want->name, code->signature);
    }
    return GJ_OK;
}

GjStatus gj_spec_get(GjCtx *c, const GjCallee *callee, const GjType *const *args, int32_t nargs,
                     GjLoc loc, GjSpec **out) {
    const GjCodeView *code = callee->code;
    *out = NULL;
    for (GjSpec *s = c->specs; s; s = s->next) {
        const GjCodeView *busy = s->callee ? s->callee->code : s->f ? s->f->code : NULL;
        if (s->busy && busy == code)
            return gj_error(c, GJ_DIAG_UNSUPPORTED, loc,
                            "recursive call to '%s': device functions cannot call themselves, "
                            "directly or through other functions",
                            code_name(code));
    }
    if (code->argcount != nargs)
        return gj_error(c, GJ_DIAG_TYPING, loc, "%s() takes %d argument%s, got %d",
                        code->name ? code->name : "?", code->argcount,
                        code->argcount == 1 ? "" : "s", nargs);
    const GjType **types = GJ_NEW_N(&c->arena, const GjType *, nargs > 0 ? nargs : 1);
    if (!types)
        return gj_error(c, GJ_DIAG_INTERNAL, loc, "out of memory");
    for (int32_t i = 0; i < nargs; i++) {
        if (!(types[i] = gj_spec_arg_type(c, args[i])))
            return gj_error(c, GJ_DIAG_INTERNAL, loc, "out of memory");
        if (types[i]->kind == GJ_TK_CALLABLE || types[i]->kind == GJ_TK_MODULE ||
            types[i]->kind == GJ_TK_DIM3 || types[i]->kind == GJ_TK_RANGE_ITER)
            return gj_error(c, GJ_DIAG_UNSUPPORTED, loc,
                            "argument %d of %s() is %s, which cannot be passed to a device "
                            "function",
                            (int)i + 1, code->name ? code->name : "?", types[i]->name);
    }
    const GjType *ret = NULL;
    if (code->signature && declared_types(c, code, loc, types, nargs, &ret) != GJ_OK)
        return GJ_ERR;
    if ((*out = find(c, code, types, nargs)))
        return GJ_OK;
    GjSpec *spec = GJ_NEW(&c->arena, GjSpec);
    if (!spec)
        return gj_error(c, GJ_DIAG_INTERNAL, loc, "out of memory");
    *spec = (GjSpec){.next = c->specs, .callee = callee, .argtypes = types, .nargs = nargs};
    c->specs = spec;
    if (type_spec(c, spec, ret) != GJ_OK) {
        drop(c, spec);
        return GJ_ERR;
    }
    *out = spec;
    return GJ_OK;
}
