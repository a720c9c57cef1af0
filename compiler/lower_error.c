/*
 * lower_error.c - run-time checks that report an error to the host (debug
 * builds; compile.h's error record and GjErrorSite).
 *
 * A check is an error site: its exception kind and message (with the
 * Python file and line) go into the launch plan, and the code branches on
 * the checked condition.  A thread that fails it races the others for the
 * record's first word with a compare-and-swap from 0 to 1 + the site's
 * index; the winner writes its threadIdx, blockIdx and the site's values.
 * The thread then goes on (the check's caller decides with what value), so
 * no `trap` ends the kernel: the CUDA context survives, and the host raises
 * the exception once the kernel has completed.
 *
 * The sites of the kernel and of its device functions share one list
 * (GjErrorSites, owned by gj_lower_kernel), so a site's index means the same
 * in every function of the module.
 */
#include "lower_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

/* The message of a new site, "<text> (file.py:12)", in the arena; its index
   in L->errors, or -1 with a diag. */
static int32_t add_site(GjLower *L, GjErrorKind kind, const char *text) {
    GjErrorSites *s = L->errors;
    if (s->n == s->cap) {
        int32_t cap = s->cap ? 2 * s->cap : 8;
        GjErrorSiteIR *grown = GJ_NEW_N(&L->c->arena, GjErrorSiteIR, cap);
        if (!grown)
            return -1;
        if (s->n)
            memcpy(grown, s->sites, sizeof *grown * (size_t)s->n);
        s->sites = grown;
        s->cap = cap;
    }
    const GjCodeView *code = L->c->code;
    const char *file = code && code->filename ? code->filename : "<kernel>";
    char *message = gj_arena_printf(&L->c->arena, "%s (%s:%d)", text, file, L->loc.line);
    if (!message)
        return -1;
    s->sites[s->n] = (GjErrorSiteIR){kind, message};
    return s->n++;
}

/* record[word] = v (an i64). */
static void store_word(GjLower *L, LLVMValueRef record, int word, LLVMValueRef v) {
    LLVMValueRef idx = gj_lower_i64(L, word);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->i64, record, &idx, 1, "");
    LLVMBuildStore(L->b, v, p);
}

GjStatus gj_lower_check(GjLower *L, LLVMValueRef ok, GjErrorKind kind, LLVMValueRef a,
                        LLVMValueRef b, const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int32_t site = add_site(L, kind, text);
    if (site < 0)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");

    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "check.fail");
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "check.first");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "check.ok");
    LLVMBuildCondBr(L->b, ok, cont, fail);

    LLVMPositionBuilderAtEnd(L->b, fail);
    LLVMValueRef record = L->target->error_record(L);
    LLVMValueRef pair = LLVMBuildAtomicCmpXchg(L->b, record, gj_lower_i64(L, 0),
                                               gj_lower_i64(L, site + 1),
                                               LLVMAtomicOrderingMonotonic,
                                               LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(L->b, LLVMBuildExtractValue(L->b, pair, 1, "won"), first, cont);

    LLVMPositionBuilderAtEnd(L->b, first);
    static const GjSreg regs[2] = {GJ_SREG_TID, GJ_SREG_CTAID};
    for (int r = 0; r < 2; r++)
        for (int axis = 0; axis < 3; axis++) {
            LLVMValueRef v = L->target->special_reg(L, regs[r], axis);
            if (!v)
                return GJ_ERR;
            store_word(L, record, 1 + 3 * r + axis, LLVMBuildZExt(L->b, v, L->i64, ""));
        }
    store_word(L, record, 7, a ? a : gj_lower_i64(L, 0));
    store_word(L, record, 8, b ? b : gj_lower_i64(L, 0));
    LLVMBuildBr(L->b, cont);

    LLVMPositionBuilderAtEnd(L->b, cont);
    return GJ_OK;
}

GjStatus gj_lower_error_sites(GjLower *L, GjCompileResult *plan) {
    const GjErrorSites *s = L->errors;
    if (s->n == 0)
        return GJ_OK;
    plan->error_sites = calloc((size_t)s->n, sizeof *plan->error_sites);
    if (!plan->error_sites)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory");
    plan->nerror_sites = s->n;
    for (int32_t i = 0; i < s->n; i++) {
        plan->error_sites[i].kind = s->sites[i].kind;
        plan->error_sites[i].message = strdup(s->sites[i].message);
        if (!plan->error_sites[i].message)
            return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory");
    }
    return GJ_OK;
}
