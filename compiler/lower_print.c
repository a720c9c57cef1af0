/*
 * lower_print.c - the print family (lower_print.h): print(*values) in
 * kernels and device functions, as numba.cuda lowers it.
 *
 * One call prints one line: the values separated by single spaces, then a
 * newline.  The format is a private constant global (the target's constant
 * address space, cast to generic as vprintf wants it); the values are
 * packed into an LLVM struct on the stack, each at its natural alignment
 * after C's default argument promotions (integers to 64 bits, floats to
 * double), and both go to the target's vprintf (CUDA's `vprintf` on NVPTX,
 * linked by the driver; runtime/cpuexec.h's gj_cpu_vprintf on the CPU).
 *
 * Formats, as numba's printimpl.py: signed integers %lld, unsigned %llu,
 * floats %f.  str constants and None are written into the format itself
 * ('%' doubled), and bools are "%s" of "True" or "False", as Python
 * prints them (numba refuses bools).  typeinfer.c refuses anything else.
 */
#include "lower_print.h"

#include <string.h>

/* CUDA's printf takes 32 arguments at most; print's row allows fewer. */
enum { MAX_VALUES = 32 };

typedef struct Fmt {
    char *p;
    size_t len, cap;
} Fmt;

static int append(GjLower *L, Fmt *f, const char *s, int escape) {
    for (; *s; s++) {
        if (f->len + 3 > f->cap) {
            size_t cap = f->cap ? 2 * f->cap : 64;
            char *p = gj_arena_alloc(&L->c->arena, cap);
            if (!p)
                return 0;
            if (f->len)
                memcpy(p, f->p, f->len);
            f->p = p;
            f->cap = cap;
        }
        if (escape && *s == '%')
            f->p[f->len++] = '%';
        f->p[f->len++] = *s;
        f->p[f->len] = '\0';
    }
    return 1;
}

/* A generic pointer to the NUL-terminated constant s, a private global in
   the target's constant address space (O3 merges equal ones). */
static LLVMValueRef const_string(GjLower *L, const char *s, const char *name) {
    LLVMValueRef g = gj_lower_const_global(L, name, s, strlen(s) + 1, LLVMPrivateLinkage, 1);
    unsigned as = L->target->addrspace[GJ_AS_CONST];
    LLVMTypeRef generic = LLVMPointerTypeInContext(L->ctx, 0);
    return as ? LLVMConstAddrSpaceCast(g, generic) : g;
}

/* Appends v's conversion to f; returns v as vprintf reads it (promoted). */
static LLVMValueRef promote(GjLower *L, Fmt *f, LLVMValueRef v, const GjType *t) {
    static const struct {
        const char *conv;
        const GjType *as;
    } conv[] = {
        [GJ_NC_SINT] = {"%lld", &gj_ty_int64},
        [GJ_NC_UINT] = {"%llu", &gj_ty_uint64},
        [GJ_NC_FLOAT] = {"%f", &gj_ty_float64},
        [GJ_NC_BOOL] = {"%s", NULL},
    };
    GjNumClass c = gj_lower_class(t);
    if ((size_t)c >= sizeof conv / sizeof conv[0] || !conv[c].conv)
        return gj_lower_fail(L, "print() cannot print %s", t->name);
    if (!append(L, f, conv[c].conv, 0))
        return gj_lower_fail(L, "out of memory in lowering");
    if (conv[c].as)
        return gj_lower_cast(L, v, t, conv[c].as);
    return LLVMBuildSelect(L->b, v, const_string(L, "True", "gj.print.true"),
                           const_string(L, "False", "gj.print.false"), "");
}

LLVMValueRef gj_lower_print(GjLower *L, const GjIntrCall *call) {
    Fmt f = {0};
    LLVMValueRef vals[MAX_VALUES];
    LLVMTypeRef tys[MAX_VALUES];
    unsigned n = 0;
    if (call->n > MAX_VALUES)
        return gj_lower_fail(L, "print() takes at most %d values", MAX_VALUES);
    for (int k = 0; k < call->n; k++) {
        const GjType *t = call->t[k];
        if (k > 0 && !append(L, &f, " ", 0))
            return gj_lower_fail(L, "out of memory in lowering");
        if (t->kind == GJ_TK_STR || t->kind == GJ_TK_NONE) {
            if (!append(L, &f, t->kind == GJ_TK_STR ? t->text : "None", 1))
                return gj_lower_fail(L, "out of memory in lowering");
            continue;
        }
        LLVMValueRef v = promote(L, &f, call->v[k], gj_ty_concrete(t));
        if (!v)
            return NULL;
        vals[n] = v;
        tys[n++] = LLVMTypeOf(v);
    }
    if (!append(L, &f, "\n", 0))
        return gj_lower_fail(L, "out of memory in lowering");

    LLVMTypeRef ptr = LLVMPointerTypeInContext(L->ctx, 0);
    LLVMValueRef args = LLVMConstNull(ptr);
    if (n > 0) {
        LLVMTypeRef st = LLVMStructTypeInContext(L->ctx, tys, n, 0);
        args = gj_lower_entry_alloca(L, st);
        for (unsigned i = 0; i < n; i++)
            LLVMBuildStore(L->b, vals[i], LLVMBuildStructGEP2(L->b, st, args, i, ""));
    }
    LLVMTypeRef params[2] = {ptr, ptr};
    LLVMTypeRef fty = LLVMFunctionType(L->i32, params, 2, 0);
    const char *name = L->target->vprintf_name;
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, name);
    if (!fn)
        fn = LLVMAddFunction(L->mod, name, fty);
    LLVMValueRef cargs[2] = {const_string(L, f.p, "gj.print.fmt"), args};
    LLVMBuildCall2(L->b, fty, fn, cargs, 2, "");
    return LLVMGetUndef(L->empty);
}
