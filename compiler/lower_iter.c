/*
 * lower_iter.c - iterators (what `for` loops over) and the functions that
 * make them (zip, enumerate), and the operator module's functions.
 *
 * An iterator is a value (ir.h: GET_ITER makes it, ITER_VALID/VALUE/NEXT
 * read and advance it; build.c keeps it in a stack-slot variable across the
 * loop), so each kind is a small struct (lower_base.c's gj_lower_type):
 *
 *   range_iter  {cur, left, step, stop} valid while left (the values still
 *                                      to come, unsigned) is not 0: a counted
 *                                      loop, which never overflows near the
 *                                      type's limits and whose trip count
 *                                      LLVM can see (so it can unroll it);
 *                                      stop only for gj_lower_iter_facts
 *   tuple_iter  {tuple, index}         item index of the tuple
 *   array_iter  {array, index}         array[index]: an element, or a row view
 *   zip         {iterators...}         valid while all are; value the tuple of
 *                                      theirs, so zip stops at the shortest
 *
 * enumerate(x, start) is zip(range_iter{start, UINT64_MAX, 1, 0}, iter(x)):
 * its counter has no stop, and only a range iterator of its own (never one
 * in a zip) has facts.
 * operator.add(a, b) and friends lower as the BINOP/UNOP/COMPARE op their
 * row's `sub` names, with the types typeinfer.c gave the call.
 */
#include "lower_iter.h"

#include <stdint.h>

#include "lower_array.h"
#include "lower_ops.h"

/* The row numbering of GJ_INTR_OPERATOR_ROWS (intrinsics.h) is ir.h's. */
_Static_assert(GJ_BIN_ADD == 0 && GJ_BIN_XOR == 11 && GJ_UN_INVERT == 3 && GJ_CMP_GE == 5,
               "GJ_INTR_OPERATOR_ROWS numbers GjBinop, GjUnop and GjCmp");

LLVMValueRef gj_lower_iter_get(GjLower *L, LLVMValueRef v, const GjType *t, const GjType *rt) {
    if (t == rt)   /* an iterator already: iter(it) is it */
        return v;
    if (t->kind == GJ_TK_RANGE_ITER && rt->kind == GJ_TK_RANGE_ITER)
        return gj_lower_cast(L, v, t, rt);
    if ((t->kind == GJ_TK_TUPLE && rt->kind == GJ_TK_TUPLE_ITER) ||
        (t->kind == GJ_TK_ARRAY && rt->kind == GJ_TK_ARRAY_ITER)) {
        LLVMValueRef it = LLVMGetUndef(gj_lower_type(L, rt));
        if (!(v = gj_lower_cast(L, v, t, rt->elems[1])))
            return NULL;
        it = LLVMBuildInsertValue(L->b, it, v, 0, "");
        return LLVMBuildInsertValue(L->b, it, gj_lower_i64(L, 0), 1, "");
    }
    return gj_lower_fail(L, "cannot iterate over %s", t->name);
}

LLVMValueRef gj_lower_iter_valid(GjLower *L, LLVMValueRef it, const GjType *itt) {
    switch ((int)itt->kind) {   /* iterator kinds only: others fail below */
    case GJ_TK_TUPLE_ITER:
        return LLVMBuildICmp(L->b, LLVMIntSLT, LLVMBuildExtractValue(L->b, it, 1, ""),
                             gj_lower_i64(L, itt->elems[1]->n), "");
    case GJ_TK_ARRAY_ITER: {
        LLVMValueRef arr = LLVMBuildExtractValue(L->b, it, 0, "");
        return LLVMBuildICmp(L->b, LLVMIntSLT, LLVMBuildExtractValue(L->b, it, 1, ""),
                             gj_lower_array_dim(L, arr, 1, 0), "");
    }
    case GJ_TK_ZIP_ITER: {
        LLVMValueRef all = LLVMConstInt(L->i1, 1, 0);
        for (int k = 0; k < itt->n; k++) {
            LLVMValueRef v = gj_lower_iter_valid(
                L, LLVMBuildExtractValue(L->b, it, (unsigned)k, ""), itt->elems[k]);
            if (!v)
                return NULL;
            all = k == 0 ? v : LLVMBuildAnd(L->b, all, v, "");
        }
        return all;
    }
    case GJ_TK_RANGE_ITER: {
        LLVMValueRef left = LLVMBuildExtractValue(L->b, it, 1, "");
        return LLVMBuildICmp(L->b, LLVMIntNE, left, LLVMConstNull(LLVMTypeOf(left)), "");
    }
    default: return gj_lower_fail(L, "%s is not an iterator", itt->name);
    }
}

LLVMValueRef gj_lower_iter_facts(GjLower *L, LLVMValueRef it, const GjType *itt) {
    /* With a positive step every value lies in [start, stop): cur < stop.
       A step of unknown sign gives `step <= 0 || cur < stop`, which
       InstCombine makes `cur < stop` where it proves the step positive
       (gridsize(1): the thread registers' ranges). */
    if (itt->kind != GJ_TK_RANGE_ITER)
        return NULL;
    int is_signed = gj_lower_class(itt->elems[0]) == GJ_NC_SINT;
    LLVMValueRef cur = LLVMBuildExtractValue(L->b, it, 0, "");
    LLVMValueRef step = LLVMBuildExtractValue(L->b, it, 2, "");
    LLVMValueRef stop = LLVMBuildExtractValue(L->b, it, 3, "");
    LLVMValueRef below = LLVMBuildICmp(L->b, is_signed ? LLVMIntSLT : LLVMIntULT, cur, stop, "");
    if (LLVMIsAConstantInt(step)) {
        int positive =
            is_signed ? LLVMConstIntGetSExtValue(step) > 0 : LLVMConstIntGetZExtValue(step) != 0;
        return positive ? below : NULL;
    }
    if (!is_signed)   /* an unsigned step of 0 yields nothing: never valid */
        return below;
    return LLVMBuildOr(L->b,
                       LLVMBuildICmp(L->b, LLVMIntSLE, step, LLVMConstNull(LLVMTypeOf(step)), ""),
                       below, "");
}

/* The element of an array iterator.  build.c's FOR_ITER takes the value
   before it tests ITER_VALID (the value reaches the body through a
   variable), and an exhausted iterator's element lies past the array's end:
   at address 0 for an empty device array.  Optimised, the load sinks into
   the body, its one user; unoptimised (debug), it is guarded here to run
   only while the iterator is valid (else the value is zero).  The guard is
   not emitted at O3, where LLVM would not merge it with ITER_VALID's test
   and would then stop unrolling the loop. */
static LLVMValueRef array_element(GjLower *L, LLVMValueRef it, const GjType *itt,
                                  const GjType *rt) {
    const GjType *at = itt->elems[1];
    LLVMValueRef arr = LLVMBuildExtractValue(L->b, it, 0, "");
    LLVMValueRef i = LLVMBuildExtractValue(L->b, it, 1, "");
    if (L->opt->opt_level > 0) {
        LLVMValueRef v = gj_lower_load_element(L, arr, at, i, &gj_ty_int64, NULL);
        return v ? gj_lower_cast(L, v, at->dtype, rt) : NULL;
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef load = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "iter.load");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "iter.value");
    LLVMBuildCondBr(L->b, gj_lower_iter_valid(L, it, itt), load, done);
    LLVMPositionBuilderAtEnd(L->b, load);
    LLVMValueRef v = gj_lower_load_element(L, arr, at, i, &gj_ty_int64, NULL);
    if (!v || !(v = gj_lower_cast(L, v, at->dtype, rt)))
        return NULL;
    LLVMBasicBlockRef loaded = LLVMGetInsertBlock(L->b);
    LLVMBuildBr(L->b, done);
    LLVMPositionBuilderAtEnd(L->b, done);
    LLVMValueRef phi = LLVMBuildPhi(L->b, LLVMTypeOf(v), "");
    LLVMValueRef vals[2] = {v, LLVMConstNull(LLVMTypeOf(v))};
    LLVMBasicBlockRef from_blocks[2] = {loaded, from};
    LLVMAddIncoming(phi, vals, from_blocks, 2);
    return phi;
}

LLVMValueRef gj_lower_iter_value(GjLower *L, LLVMValueRef it, const GjType *itt, const GjType *rt) {
    switch ((int)itt->kind) {   /* iterator kinds only: others fail below */
    case GJ_TK_TUPLE_ITER:
        return gj_lower_tuple_item(L, LLVMBuildExtractValue(L->b, it, 0, ""), itt->elems[1],
                                   LLVMBuildExtractValue(L->b, it, 1, ""), rt);
    case GJ_TK_ARRAY_ITER: {
        LLVMValueRef arr = LLVMBuildExtractValue(L->b, it, 0, "");
        LLVMValueRef i = LLVMBuildExtractValue(L->b, it, 1, "");
        const GjType *at = itt->elems[1];
        /* unchecked (no subject): i is below the first extent where the body uses it */
        if (itt->elems[0]->kind == GJ_TK_ARRAY)   /* a row of a 2-d+ array: a view */
            return gj_lower_array_view(L, arr, at, i, &gj_ty_int64, rt, NULL);
        return array_element(L, it, itt, rt);
    }
    case GJ_TK_ZIP_ITER: {
        LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
        for (int k = 0; k < itt->n; k++) {
            LLVMValueRef v = gj_lower_iter_value(
                L, LLVMBuildExtractValue(L->b, it, (unsigned)k, ""), itt->elems[k], rt->elems[k]);
            if (!v)
                return NULL;
            out = LLVMBuildInsertValue(L->b, out, v, (unsigned)k, "");
        }
        return out;
    }
    case GJ_TK_RANGE_ITER:
        return gj_lower_cast(L, LLVMBuildExtractValue(L->b, it, 0, ""), itt->elems[0], rt);
    default: return gj_lower_fail(L, "%s is not an iterator", itt->name);
    }
}

LLVMValueRef gj_lower_iter_next(GjLower *L, LLVMValueRef it, const GjType *itt) {
    switch ((int)itt->kind) {   /* iterator kinds only: others fail below */
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_ARRAY_ITER: {
        LLVMValueRef i = LLVMBuildExtractValue(L->b, it, 1, "");
        return LLVMBuildInsertValue(L->b, it, LLVMBuildAdd(L->b, i, gj_lower_i64(L, 1), ""), 1, "");
    }
    case GJ_TK_ZIP_ITER:
        for (int k = 0; it && k < itt->n; k++) {
            LLVMValueRef sub = gj_lower_iter_next(
                L, LLVMBuildExtractValue(L->b, it, (unsigned)k, ""), itt->elems[k]);
            it = sub ? LLVMBuildInsertValue(L->b, it, sub, (unsigned)k, "") : NULL;
        }
        return it;
    case GJ_TK_RANGE_ITER: {
        LLVMValueRef cur = LLVMBuildExtractValue(L->b, it, 0, "");
        LLVMValueRef left = LLVMBuildExtractValue(L->b, it, 1, "");
        LLVMValueRef step = LLVMBuildExtractValue(L->b, it, 2, "");
        /* Every value the loop yields lies between start and stop, so no
           step to one wraps: nsw (nuw for unsigned types) holds, and lets
           LLVM see that an index start >= 0 stays so.  The step past the
           last value may wrap, but that value is never read. */
        cur = gj_lower_class(itt->elems[0]) == GJ_NC_SINT ? LLVMBuildNSWAdd(L->b, cur, step, "")
                                                          : LLVMBuildNUWAdd(L->b, cur, step, "");
        it = LLVMBuildInsertValue(L->b, it, cur, 0, "");
        left = LLVMBuildNUWSub(L->b, left, LLVMConstInt(LLVMTypeOf(left), 1, 0), "");
        return LLVMBuildInsertValue(L->b, it, left, 1, "");
    }
    default: return gj_lower_fail(L, "%s is not an iterator", itt->name);
    }
}

/* zip(a, b, ...) and enumerate(x[, start]) (row sub 1): the zip of the
   arguments' iterators; enumerate's first counts from start with no end. */
LLVMValueRef gj_lower_zip(GjLower *L, const GjIntrCall *c) {
    const GjType *rt = c->rt;
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    int counted = c->row->sub == 1;
    if (counted) {
        LLVMValueRef start = gj_lower_i64(L, 0);
        if (c->n > 1 && !(start = gj_lower_cast(L, c->v[1], c->t[1], &gj_ty_int64)))
            return NULL;
        LLVMValueRef count = LLVMGetUndef(gj_lower_type(L, rt->elems[0]));
        count = LLVMBuildInsertValue(L->b, count, start, 0, "");
        count = LLVMBuildInsertValue(L->b, count, LLVMConstAllOnes(L->i64), 1, "");   /* no end */
        count = LLVMBuildInsertValue(L->b, count, gj_lower_i64(L, 1), 2, "");
        count = LLVMBuildInsertValue(L->b, count, gj_lower_i64(L, 0), 3, "");   /* no stop */
        out = LLVMBuildInsertValue(L->b, out, count, 0, "");
    }
    for (int k = counted; k < rt->n; k++) {
        int arg = counted ? 0 : k;
        LLVMValueRef it = gj_lower_iter_get(L, c->v[arg], c->t[arg], rt->elems[k]);
        if (!it)
            return NULL;
        out = LLVMBuildInsertValue(L->b, out, it, (unsigned)k, "");
    }
    return out;
}

/* operator.add(a, b) is a + b; the row's sub says which operator. */
LLVMValueRef gj_lower_operator(GjLower *L, const GjIntrCall *c) {
    int code = c->row->sub & 0xff;
    switch (c->row->sub & ~0xff) {
    case GJ_OPERATOR_BINOP:
        return gj_lower_binop(L, (GjBinop)code, c->v[0], c->t[0], c->v[1], c->t[1], c->rt);
    case GJ_OPERATOR_UNOP: return gj_lower_unop(L, (GjUnop)code, c->v[0], c->t[0], c->rt);
    case GJ_OPERATOR_CMP:
        return gj_lower_compare(L, (GjCmp)code, c->v[0], c->t[0], c->v[1], c->t[1]);
    default: return gj_lower_fail(L, "bad operator row");
    }
}
