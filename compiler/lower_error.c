/*
 * lower_error.c - run-time checks that report an error to the host
 * (compile.h's error record and GjErrorSite): reads of maybe-unassigned
 * locals and raise statements under debug, array and tuple indices under
 * boundscheck.
 *
 * A check is an error site: its exception kind and message (with the
 * Python file and line) go into the launch plan, and the code branches on
 * the checked condition.  A thread that fails it calls the module's
 * gj.report, which races the other threads for the record's first word
 * with a compare-and-swap from 0 to 1 + the site's index; the winner writes
 * its threadIdx, blockIdx and the site's values.
 * Then the thread goes on with zero (an unassigned local) or ends (a raise,
 * an index out of bounds: gj_lower_end_thread), so no `trap` ends
 * the kernel: the CUDA context survives, and the host raises the exception
 * once the kernel has completed.
 *
 * The sites of the kernel and of its device functions share one list
 * (GjErrorSites, owned by gj_lower_kernel), so a site's index means the same
 * in every function of the module.
 */
#include "lower_error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int32_t gj_lower_error_site(GjLower *L, GjErrorKind kind, const char *exception, int axis,
                            const char *fmt, ...) {
    GjErrorSites *s = L->errors;
    if (s->n == s->cap) {
        int32_t cap = s->cap ? 2 * s->cap : 8;
        GjErrorSiteIR *grown = GJ_NEW_N(&L->c->arena, GjErrorSiteIR, cap);
        if (!grown)
            goto oom;
        if (s->n)
            memcpy(grown, s->sites, sizeof *grown * (size_t)s->n);
        s->sites = grown;
        s->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *text = gj_arena_vprintf(&L->c->arena, fmt, ap);
    va_end(ap);
    if (!text)
        goto oom;
    const GjCodeView *code = L->c->code;
    const char *file = code && code->filename ? code->filename : "<kernel>";
    /* "message (file.py:12)"; a raise without a message is just "file.py:12" */
    char *message = text[0] ? gj_arena_printf(&L->c->arena, "%s (%s:%d)", text, file, L->loc.line)
                            : gj_arena_printf(&L->c->arena, "%s:%d", file, L->loc.line);
    if (!message)
        goto oom;
    s->sites[s->n] = (GjErrorSiteIR){kind, axis, 0, message, exception};
    return s->n++;
oom:
    gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
    return -1;
}

/* record[word] = v (an i64). */
static void store_word(GjLower *L, LLVMValueRef record, int word, LLVMValueRef v) {
    LLVMValueRef idx = gj_lower_i64(L, word);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->i64, record, &idx, 1, "");
    LLVMBuildStore(L->b, v, p);
}

#define REPORT_FUNCTION "gj.report"   /* gpujit's own name (symbol.h) */

/* The module's reporting function, made on first use: void gj.report(i64
   site, i64 a, i64 b[, thread context]), cold and never inlined, so that each
   check's failing path is one call and the code around the checks stays
   small (on the GPU, the instruction cache's; on the host, the JIT's
   time).  The thread's context is the last parameters where the target's
   code takes one (the CPU: its error record and registers are in it). */
static LLVMValueRef report_function(GjLower *L, LLVMTypeRef *type) {
    LLVMTypeRef params[3 + GJ_THREAD_PARAMS] = {L->i64, L->i64, L->i64};
    unsigned nthread = L->target->thread_params;
    if (nthread)
        L->target->thread_types(L, params + 3);
    *type = LLVMFunctionType(LLVMVoidTypeInContext(L->ctx), params, 3 + nthread, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, REPORT_FUNCTION);
    if (fn)
        return fn;
    fn = LLVMAddFunction(L->mod, REPORT_FUNCTION, *type);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    static const char *const attrs[] = {"cold", "noinline"};
    for (int k = 0; k < 2; k++)
        LLVMAddAttributeAtIndex(
            fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
            LLVMCreateEnumAttribute(
                L->ctx, LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k])), 0));
    GjLower R = *L;   /* the target's hooks build into R's function */
    R.fn = fn;
    R.b = LLVMCreateBuilderInContext(L->ctx);
    for (unsigned k = 0; k < nthread; k++)
        R.thread[k] = LLVMGetParam(fn, 3 + k);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, fn, "entry");
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(L->ctx, fn, "first");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->ctx, fn, "done");
    LLVMPositionBuilderAtEnd(R.b, entry);
    LLVMValueRef record = L->target->error_record(&R);
    LLVMValueRef won_site = LLVMBuildAdd(R.b, LLVMGetParam(fn, 0), gj_lower_i64(L, 1), "");
    LLVMValueRef pair =
        LLVMBuildAtomicCmpXchg(R.b, record, gj_lower_i64(L, 0), won_site,
                               LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(R.b, LLVMBuildExtractValue(R.b, pair, 1, "won"), first, done);
    LLVMPositionBuilderAtEnd(R.b, first);
    static const GjSreg regs[2] = {GJ_SREG_TID, GJ_SREG_CTAID};
    for (int r = 0; r < 2 && fn; r++)
        for (int axis = 0; axis < 3; axis++) {
            LLVMValueRef v = L->target->special_reg(&R, regs[r], axis);
            if (!v) {
                fn = NULL;
                break;
            }
            store_word(&R, record, 1 + 3 * r + axis, LLVMBuildZExt(R.b, v, L->i64, ""));
        }
    if (fn) {
        store_word(&R, record, 7, LLVMGetParam(fn, 1));
        store_word(&R, record, 8, LLVMGetParam(fn, 2));
        LLVMBuildBr(R.b, done);
        LLVMPositionBuilderAtEnd(R.b, done);
        LLVMBuildRetVoid(R.b);
    }
    LLVMDisposeBuilder(R.b);
    return fn;
}

/* gj.report(site, a, b) where the builder is; site an i64 value. */
static GjStatus report(GjLower *L, LLVMValueRef site, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef type;
    LLVMValueRef fn = report_function(L, &type);
    if (!fn)
        return GJ_ERR;
    LLVMValueRef args[3 + GJ_THREAD_PARAMS] = {site, a ? a : gj_lower_i64(L, 0),
                                               b ? b : gj_lower_i64(L, 0)};
    unsigned nthread = L->target->thread_params;
    memcpy(args + 3, L->thread, nthread * sizeof *args);
    LLVMBuildCall2(L->b, type, fn, args, 3 + nthread, "");
    return GJ_OK;
}

GjStatus gj_lower_report(GjLower *L, int32_t site, LLVMValueRef a, LLVMValueRef b) {
    return report(L, gj_lower_i64(L, site), a, b);
}

void gj_lower_branch_unlikely(GjLower *L, LLVMValueRef ok, LLVMBasicBlockRef then,
                              LLVMBasicBlockRef unlikely) {
    /* Branch weights, as __builtin_expect gives: the failing path is laid out
       away from the hot code, and the backends predict the branch taken. */
    LLVMValueRef br = LLVMBuildCondBr(L->b, ok, then, unlikely);
    LLVMMetadataRef md[3] = {
        LLVMMDStringInContext2(L->ctx, "branch_weights", 14),
        LLVMValueAsMetadata(LLVMConstInt(L->i32, 1 << 20, 0)),
        LLVMValueAsMetadata(LLVMConstInt(L->i32, 1, 0)),
    };
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(L->ctx, "prof", 4),
                    LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 3)));
}

GjStatus gj_lower_check(GjLower *L, LLVMValueRef ok, GjErrorKind kind, LLVMValueRef a,
                        LLVMValueRef b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *text = gj_arena_vprintf(&L->c->arena, fmt, ap);
    va_end(ap);
    int32_t site = text ? gj_lower_error_site(L, kind, NULL, 0, "%s", text) : -1;
    if (site < 0)
        return text ? GJ_ERR
                    : gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "check.fail");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "check.ok");
    gj_lower_branch_unlikely(L, ok, cont, fail);
    LLVMPositionBuilderAtEnd(L->b, fail);
    if (gj_lower_report(L, site, a, b) != GJ_OK)
        return GJ_ERR;
    LLVMBuildBr(L->b, cont);
    LLVMPositionBuilderAtEnd(L->b, cont);
    return GJ_OK;
}

/* The function's one block for failed bounds checks, made on first use: it
   reports the site, index and extent its phis receive and ends the thread.
   Checks that share it are what SimplifyCFG merges (FoldBranchToCommonDest):
   consecutive checks with nothing between them (a[i] and b[i] of
   `out[i] = a[i] + b[i]`) become one branch on the `and` of their compares,
   the phis' values selected, so the first failing check is still the one
   reported.  NULL after an error. */
static LLVMBasicBlockRef bounds_fail_block(GjLower *L) {
    if (L->bounds_fail && LLVMGetBasicBlockParent(L->bounds_fail) == L->fn)
        return L->bounds_fail;
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "bounds.fail");
    LLVMPositionBuilderAtEnd(L->b, fail);
    static const char *const names[3] = {"site", "index", "extent"};
    for (int k = 0; k < 3; k++)
        L->bounds_phi[k] = LLVMBuildPhi(L->b, L->i64, names[k]);
    if (report(L, L->bounds_phi[0], L->bounds_phi[1], L->bounds_phi[2]) != GJ_OK)
        return NULL;
    gj_lower_end_thread(L);
    LLVMPositionBuilderAtEnd(L->b, from);
    return L->bounds_fail = fail;
}

/* The block where the builder is branches to L->bounds_fail when ix fails:
   the phis get its site, index and extent from it. */
static void to_bounds_fail(GjLower *L, int32_t site, const GjIndexCheck *ix) {
    LLVMValueRef values[3] = {gj_lower_i64(L, site), ix->index, ix->extent};
    LLVMBasicBlockRef here = LLVMGetInsertBlock(L->b);
    for (int k = 0; k < 3; k++)
        LLVMAddIncoming(L->bounds_phi[k], &values[k], &here, 1);
}

GjStatus gj_lower_check_bounds(GjLower *L, const char *subject, GjErrorKind kind, int n,
                               const GjIndexCheck *ix) {
    /* One unsigned compare per index covers both ends: a wrapped index still
       negative is huge as unsigned.  The hot path tests them all at once; the
       cold one finds the first failing axis for the report (bounds_fail_block
       reports it). */
    LLVMValueRef all = NULL;
    LLVMValueRef *ok = GJ_NEW_N(&L->c->arena, LLVMValueRef, n > 0 ? n : 1);
    if (!ok)
        return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory in lowering");
    for (int k = 0; k < n; k++) {
        ok[k] = LLVMBuildICmp(L->b, LLVMIntULT, ix[k].wrapped, ix[k].extent, "inbounds");
        all = all ? LLVMBuildAnd(L->b, all, ok[k], "") : ok[k];
    }
    if (!all)
        return GJ_OK;
    LLVMBasicBlockRef fail = bounds_fail_block(L);
    if (!fail)
        return GJ_ERR;
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "bounds.ok");
    LLVMBasicBlockRef axes =
        n > 1 ? LLVMAppendBasicBlockInContext(L->ctx, L->fn, "bounds.axes") : fail;
    int32_t first = -1;
    for (int k = 0; k < n; k++) {   /* the sites, numbered in axis order */
        int32_t site = gj_lower_error_site(L, kind, NULL, ix[k].axis, "%s", subject);
        if (site < 0)
            return GJ_ERR;
        L->errors->sites[site].unsigned_index = ix[k].is_unsigned;
        first = k == 0 ? site : first;
    }
    if (n == 1)
        to_bounds_fail(L, first, &ix[0]);
    gj_lower_branch_unlikely(L, all, cont, axes);
    if (n > 1) {
        LLVMPositionBuilderAtEnd(L->b, axes);
        for (int k = 0; k < n; k++) {
            to_bounds_fail(L, first + k, &ix[k]);
            if (k + 1 == n) {   /* the last axis fails when no earlier one did */
                LLVMBuildBr(L->b, fail);
                break;
            }
            LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "bounds.next");
            LLVMBuildCondBr(L->b, ok[k], next, fail);
            LLVMPositionBuilderAtEnd(L->b, next);
        }
    }
    LLVMPositionBuilderAtEnd(L->b, cont);
    return GJ_OK;
}

void gj_lower_drop_proved_sites(LLVMModuleRef mod, GjCompileResult *plan) {
    LLVMValueRef fn = LLVMGetNamedFunction(mod, REPORT_FUNCTION);
    if (plan->nerror_sites == 0 || (fn && LLVMGetFirstUse(fn)))
        return;
    for (int32_t i = 0; i < plan->nerror_sites; i++) {
        free(plan->error_sites[i].message);
        free(plan->error_sites[i].exception);
    }
    free(plan->error_sites);
    plan->error_sites = NULL;
    plan->nerror_sites = 0;
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
        const GjErrorSiteIR *from = &s->sites[i];
        GjErrorSite *to = &plan->error_sites[i];
        to->kind = from->kind;
        to->axis = from->axis;
        to->unsigned_index = from->unsigned_index;
        to->message = strdup(from->message);
        to->exception = from->exception ? strdup(from->exception) : NULL;
        if (!to->message || (from->exception && !to->exception))
            return gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "out of memory");
    }
    return GJ_OK;
}
