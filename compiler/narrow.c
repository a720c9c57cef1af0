/*
 * narrow.c - loop versioning: a 64-bit counter that fits in 32 bits counts
 * in 32 bits.
 *
 * Python ints are int64, so `while n < it: ... n += 1` counts in 64 bits,
 * and on a GPU each 64-bit add and compare is two instructions (a
 * Mandelbrot kernel whose bound is an argument ran 1.2x CUDA C's `int`
 * loop, exactly as CUDA C with a `long long` counter does).  LLVM narrows
 * no induction variable, so this pass does, by versioning:
 *
 *   before:  P: ... br H          H: n = phi [s, P], [n + 1, latch]; ...
 *   after:   P: br fits(s, B), H32, H      (H: the loop as it was)
 *            H32: n32 = phi [trunc s, P], [n32 + 1, latch32]; the same
 *                 body, reading sext(n32) where it read n, and the exit test
 *                 `n < B` as `n32 < trunc B`
 *
 * A loop qualifies when it has one latch, one predecessor P outside it (a
 * block of its own is put on that edge when P branches elsewhere too), one
 * exit block whose predecessors are all in the
 * loop, no convergent call (a barrier in two copies of a loop would be two
 * barrier instructions) and no inline assembly, and an i64 phi n in its
 * header stepping by +1 with an exit test in the header or the latch that
 * keeps it below a loop-invariant bound B (n < B, n <= B, n != B, signed or
 * unsigned; n or n + 1 compared; alone or and-ed with other conditions).  `fits` holds when every value n and
 * n + 1 take lies in the int32 range (the start, the bound, and for !=
 * that the start is not past the bound); otherwise the 64-bit loop runs,
 * so results stay exact past 2^31 trips.  Values of the loop used after it
 * meet in phis of the exit block.
 *
 * Input: an optimised module.  Output: the same module with loops
 * versioned, computing the same values.
 */
#include "narrow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LOOP_INSTRUCTIONS = 1500, MAX_VERSIONS_PER_FUNCTION = 16 };

/* ---- an open-addressing map of values ---------------------------------- */

typedef struct Map {
    LLVMValueRef *key, *val;
    size_t cap;   /* a power of two */
} Map;

static size_t slot(const Map *m, LLVMValueRef k) {
    size_t h = ((size_t)(uintptr_t)k >> 4) * 0x9E3779B97F4A7C15u, i = h & (m->cap - 1);
    while (m->key[i] && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int map_init(Map *m, size_t n) {
    m->cap = 16;
    while (m->cap < 2 * n + 2)
        m->cap *= 2;
    m->key = calloc(m->cap, sizeof *m->key);
    m->val = calloc(m->cap, sizeof *m->val);
    return m->key && m->val;
}

static void map_free(Map *m) {
    free(m->key);
    free(m->val);
}

static void map_put(Map *m, LLVMValueRef k, LLVMValueRef v) {
    size_t i = slot(m, k);
    m->key[i] = k;
    m->val[i] = v;
}

/* The value k maps to, or k itself. */
static LLVMValueRef map_get(const Map *m, LLVMValueRef k) {
    size_t i = slot(m, k);
    return m->key[i] ? m->val[i] : k;
}

/* ---- the function's blocks and loops ----------------------------------- */

typedef struct Func {
    LLVMValueRef fn;
    LLVMBasicBlockRef *bb;
    int n;
    int **succ, *nsucc;   /* successors by index */
    char *in_loop;        /* membership of the loop under study */
} Func;

/* f's block count as a size for allocations (at least 1). */
static size_t nblocks(const Func *f) { return f->n > 0 ? (size_t)f->n : 1; }

static int block_index(const Func *f, LLVMBasicBlockRef b) {
    for (int k = 0; k < f->n; k++)
        if (f->bb[k] == b)
            return k;
    return -1;
}

static void func_free(Func *f) {
    for (int k = 0; k < f->n; k++)
        free(f->succ ? f->succ[k] : NULL);
    free(f->succ);
    free(f->nsucc);
    free(f->bb);
    free(f->in_loop);
}

static int func_init(Func *f, LLVMValueRef fn) {
    memset(f, 0, sizeof *f);
    f->fn = fn;
    f->n = (int)LLVMCountBasicBlocks(fn);
    f->bb = calloc(nblocks(f), sizeof *f->bb);
    f->succ = calloc(nblocks(f), sizeof *f->succ);
    f->nsucc = calloc(nblocks(f), sizeof *f->nsucc);
    f->in_loop = calloc(nblocks(f), 1);
    if (!f->bb || !f->succ || !f->nsucc || !f->in_loop)
        return 0;
    LLVMGetBasicBlocks(fn, f->bb);
    for (int k = 0; k < f->n; k++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(f->bb[k]);
        unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
        f->succ[k] = calloc(ns ? ns : 1, sizeof **f->succ);
        if (!f->succ[k])
            return 0;
        for (unsigned s = 0; s < ns; s++) {
            int t = block_index(f, LLVMGetSuccessor(term, s));
            if (t >= 0)
                f->succ[k][f->nsucc[k]++] = t;
        }
    }
    return 1;
}

/* Back edges latch -> header of a depth-first search from the entry: up to
   cap pairs into edges[]; the count. */
static int back_edges(const Func *f, int (*edges)[2], int cap) {
    int *state = calloc(nblocks(f), sizeof *state);   /* 0 new, 1 on stack, 2 done */
    int *stack = calloc(nblocks(f), sizeof *stack), *next = calloc(nblocks(f), sizeof *next);
    int found = 0, top = 0;
    if (!state || !stack || !next || f->n == 0)
        goto done;
    stack[top++] = 0;
    state[0] = 1;
    while (top) {
        int b = stack[top - 1];
        if (next[b] == f->nsucc[b]) {
            state[b] = 2;
            top--;
            continue;
        }
        int s = f->succ[b][next[b]++];
        if (state[s] == 1 && found < cap) {
            edges[found][0] = b;
            edges[found][1] = s;
            found++;
        } else if (state[s] == 0) {
            state[s] = 1;
            stack[top++] = s;
        }
    }
done:
    free(state);
    free(stack);
    free(next);
    return found;
}

/* Marks in f->in_loop the natural loop of the back edge latch -> header:
   the header and every block that reaches the latch without it. */
static void mark_loop(Func *f, int latch, int header) {
    memset(f->in_loop, 0, nblocks(f));
    f->in_loop[header] = 1;
    int *work = malloc(nblocks(f) * sizeof *work), top = 0;
    if (!work)
        return;
    if (!f->in_loop[latch]) {
        f->in_loop[latch] = 1;
        work[top++] = latch;
    }
    while (top) {
        int b = work[--top];
        for (int p = 0; p < f->n; p++)
            for (int s = 0; s < f->nsucc[p]; s++)
                if (f->succ[p][s] == b && !f->in_loop[p]) {
                    f->in_loop[p] = 1;
                    work[top++] = p;
                }
    }
    free(work);
}

static int in_loop(const Func *f, LLVMBasicBlockRef b) {
    int k = block_index(f, b);
    return k >= 0 && f->in_loop[k];
}

/* Whether v is defined outside the loop (a constant, an argument, or an
   instruction of a block outside it). */
static int invariant(const Func *f, LLVMValueRef v) {
    return !LLVMIsAInstruction(v) || !in_loop(f, LLVMGetInstructionParent(v));
}

/* ---- what a loop must be --------------------------------------------- */

typedef struct Loop {
    int header, latch;
    LLVMBasicBlockRef pre, exit;   /* the preheader, the one exit block */
    LLVMValueRef iv, next;         /* n = phi [start, pre], [next, latch]; next = n + 1 */
    LLVMValueRef start, bound;     /* start (from pre), the exit test's bound */
    LLVMValueRef test;             /* the icmp of the exit test */
    LLVMIntPredicate stay;         /* the loop goes on while (v stay bound) */
    int tests_next;                /* v is next rather than n */
} Loop;

static int is_int64(LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64;
}

static int is_const_one(LLVMValueRef v) {
    return LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == 1;
}

static LLVMIntPredicate swapped(LLVMIntPredicate p) {
    switch (p) {
    case LLVMIntSLT: return LLVMIntSGT;
    case LLVMIntSGT: return LLVMIntSLT;
    case LLVMIntSLE: return LLVMIntSGE;
    case LLVMIntSGE: return LLVMIntSLE;
    case LLVMIntULT: return LLVMIntUGT;
    case LLVMIntUGT: return LLVMIntULT;
    case LLVMIntULE: return LLVMIntUGE;
    case LLVMIntUGE: return LLVMIntULE;
    case LLVMIntEQ:
    case LLVMIntNE: return p;
    }
    return p;
}

static LLVMIntPredicate inverse(LLVMIntPredicate p) {
    switch (p) {
    case LLVMIntEQ: return LLVMIntNE;
    case LLVMIntNE: return LLVMIntEQ;
    case LLVMIntSLT: return LLVMIntSGE;
    case LLVMIntSGE: return LLVMIntSLT;
    case LLVMIntSGT: return LLVMIntSLE;
    case LLVMIntSLE: return LLVMIntSGT;
    case LLVMIntULT: return LLVMIntUGE;
    case LLVMIntUGE: return LLVMIntULT;
    case LLVMIntUGT: return LLVMIntULE;
    case LLVMIntULE: return LLVMIntUGT;
    }
    return p;
}

/* Whether v is `and a, b` or `select a, b, false` (want 1), or `or a, b`
   or `select a, true, b` (want 0): its two operands into ab. */
static int logical(LLVMValueRef v, int want_and, LLVMValueRef ab[2]) {
    if (!LLVMIsAInstruction(v) || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind ||
        LLVMGetIntTypeWidth(LLVMTypeOf(v)) != 1)
        return 0;
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == (want_and ? LLVMAnd : LLVMOr)) {
        ab[0] = LLVMGetOperand(v, 0);
        ab[1] = LLVMGetOperand(v, 1);
        return 1;
    }
    if (op != LLVMSelect)
        return 0;
    LLVMValueRef k = LLVMGetOperand(v, want_and ? 2 : 1);   /* false for and, true for or */
    if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != (want_and ? 0u : 1u))
        return 0;
    ab[0] = LLVMGetOperand(v, 0);
    ab[1] = LLVMGetOperand(v, want_and ? 1 : 2);
    return 1;
}

/* An icmp on the loop's counter that must hold (or, with `negated`, fail)
   for cond to keep the loop going: the first found through and (or) of
   conditions, or NULL. */
static LLVMValueRef counter_test(const Loop *L, LLVMValueRef cond, int negated, int depth) {
    LLVMValueRef ab[2];
    if (LLVMIsAICmpInst(cond)) {
        LLVMValueRef a = LLVMGetOperand(cond, 0), c = LLVMGetOperand(cond, 1);
        return a == L->iv || a == L->next || c == L->iv || c == L->next ? cond : NULL;
    }
    if (depth > 4 || !logical(cond, !negated, ab))
        return NULL;
    LLVMValueRef t = counter_test(L, ab[0], negated, depth + 1);
    return t ? t : counter_test(L, ab[1], negated, depth + 1);
}

/* The exit test of block b's terminator on the loop's n or next: fills
   L->test, bound, stay and tests_next. */
static int exit_test(const Func *f, Loop *L, int b) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(f->bb[b]);
    if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br))
        return 0;
    int stays0 = in_loop(f, LLVMGetSuccessor(br, 0)), stays1 = in_loop(f, LLVMGetSuccessor(br, 1));
    if (stays0 == stays1)
        return 0;
    LLVMValueRef cmp = counter_test(L, LLVMGetCondition(br), !stays0, 0);
    if (!cmp)
        return 0;
    LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
    LLVMValueRef a = LLVMGetOperand(cmp, 0), c = LLVMGetOperand(cmp, 1);
    if (a != L->iv && a != L->next) {   /* the counter on the left */
        LLVMValueRef t = a;
        a = c;
        c = t;
        p = swapped(p);
    }
    if ((a != L->iv && a != L->next) || !invariant(f, c))
        return 0;
    p = stays0 ? p : inverse(p);
    if (p != LLVMIntSLT && p != LLVMIntSLE && p != LLVMIntULT && p != LLVMIntULE && p != LLVMIntNE)
        return 0;
    L->test = cmp;
    L->bound = c;
    L->stay = p;
    L->tests_next = a == L->next;
    return 1;
}

/* Whether the instruction forbids copying the loop: a convergent call or
   inline assembly. */
static int forbids_copy(LLVMValueRef inst, unsigned convergent) {
    if (!LLVMIsACallInst(inst))
        return 0;
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    if (!callee || LLVMIsAInlineAsm(callee) || !LLVMIsAFunction(callee))
        return 1;
    LLVMAttributeIndex at_fn = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    return LLVMGetEnumAttributeAtIndex(callee, at_fn, convergent) != NULL ||
           LLVMGetCallSiteEnumAttribute(inst, at_fn, convergent) != NULL;
}

/* Whether the loop reads its counter only to count: in comparisons and
   truncations, and in the step.  A counter that indexes memory is left to
   loop strength reduction, which makes it a pointer that steps (64 bits
   either way), and which would otherwise count in 64 bits again beside a
   32-bit counter. */
static int counts_only(const Func *f, const Loop *L) {
    LLVMValueRef v[2] = {L->iv, L->next};
    for (int k = 0; k < 2; k++)
        for (LLVMUseRef u = LLVMGetFirstUse(v[k]); u; u = LLVMGetNextUse(u)) {
            LLVMValueRef user = LLVMGetUser(u);
            if (!in_loop(f, LLVMGetInstructionParent(user)) || user == L->next ||
                LLVMIsAICmpInst(user) || LLVMIsATruncInst(user) || (user == L->iv && k == 1))
                continue;
            return 0;
        }
    return 1;
}

/* Whether the loop of f->in_loop (back edge latch -> header) qualifies:
   fills L. */
static int analyse(const Func *f, Loop *L, int latch, int header, unsigned convergent) {
    memset(L, 0, sizeof *L);
    L->header = header;
    L->latch = latch;
    size_t count = 0;
    for (int b = 0; b < f->n; b++) {
        if (!f->in_loop[b])
            continue;
        for (int s = 0; s < f->nsucc[b]; s++) {
            int t = f->succ[b][s];
            if (t == header && b != latch)
                return 0;                       /* a second latch */
            if (!f->in_loop[t]) {
                if (L->exit && L->exit != f->bb[t])
                    return 0;                   /* a second exit block */
                L->exit = f->bb[t];
            }
        }
        for (LLVMValueRef i = LLVMGetFirstInstruction(f->bb[b]); i; i = LLVMGetNextInstruction(i)) {
            if (forbids_copy(i, convergent) || ++count > MAX_LOOP_INSTRUCTIONS)
                return 0;
        }
    }
    if (!L->exit)
        return 0;
    for (int p = 0; p < f->n; p++)   /* preheader: the header's one outside predecessor */
        for (int s = 0; s < f->nsucc[p]; s++) {
            if (f->succ[p][s] == header && !f->in_loop[p]) {
                if (L->pre)
                    return 0;
                L->pre = f->bb[p];
            }
            if (f->bb[f->succ[p][s]] == L->exit && !f->in_loop[p])
                return 0;                       /* the exit block is not the loop's own */
        }
    LLVMValueRef pre_br = L->pre ? LLVMGetBasicBlockTerminator(L->pre) : NULL;
    if (!pre_br || !LLVMIsABranchInst(pre_br))
        return 0;
    LLVMBasicBlockRef lb = f->bb[latch];
    for (LLVMValueRef phi = LLVMGetFirstInstruction(f->bb[header]); phi && LLVMIsAPHINode(phi);
         phi = LLVMGetNextInstruction(phi)) {
        if (!is_int64(phi) || LLVMCountIncoming(phi) != 2)
            continue;
        int from_latch = LLVMGetIncomingBlock(phi, 0) == lb ? 0 : 1;
        LLVMValueRef next = LLVMGetIncomingValue(phi, (unsigned)from_latch);
        if (LLVMGetIncomingBlock(phi, (unsigned)!from_latch) != L->pre ||
            !LLVMIsAInstruction(next) || LLVMGetInstructionOpcode(next) != LLVMAdd ||
            !in_loop(f, LLVMGetInstructionParent(next)) || LLVMGetOperand(next, 0) != phi ||
            !is_const_one(LLVMGetOperand(next, 1)))
            continue;
        L->iv = phi;
        L->next = next;
        L->start = LLVMGetIncomingValue(phi, (unsigned)!from_latch);
        if (counts_only(f, L) && (exit_test(f, L, header) || exit_test(f, L, latch)))
            return 1;
    }
    return 0;
}

/* ---- versioning -------------------------------------------------------- */

/* Whether every value the counter takes fits in int32: an i1 built in the
   preheader before its terminator. */
static LLVMValueRef build_fits(LLVMBuilderRef b, const Loop *L, LLVMTypeRef i64) {
    int is_unsigned = L->stay == LLVMIntULT || L->stay == LLVMIntULE;
    long long lo = is_unsigned ? 0 : INT32_MIN;
    long long bound_hi = L->stay == LLVMIntSLE || L->stay == LLVMIntULE ? INT32_MAX - 1 : INT32_MAX;
    LLVMValueRef s = L->start, n = L->bound;
#define K(v) LLVMConstInt(i64, (unsigned long long)(v), 1)
    LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, s, K(lo), ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, s, K(INT32_MAX), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, n, K(lo), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLE, n, K(bound_hi), ""), "");
    if (L->stay == LLVMIntNE)   /* counting up to the bound reaches it */
        ok = LLVMBuildAnd(b, ok,
                          LLVMBuildICmp(b, L->tests_next ? LLVMIntSLT : LLVMIntSLE, s, n, ""), "");
#undef K
    return ok;
}

/* The first instruction of bb that is not a phi. */
static LLVMValueRef first_non_phi(LLVMBasicBlockRef bb) {
    LLVMValueRef i = LLVMGetFirstInstruction(bb);
    while (i && LLVMIsAPHINode(i))
        i = LLVMGetNextInstruction(i);
    return i;
}

/* Replaces, in user, every operand that is from by to. */
static void replace_operand(LLVMValueRef user, LLVMValueRef from, LLVMValueRef to) {
    int n = LLVMGetNumOperands(user);
    for (int k = 0; k < n; k++)
        if (LLVMGetOperand(user, (unsigned)k) == from)
            LLVMSetOperand(user, (unsigned)k, to);
}

/* Copies the loop's blocks into map (blocks as values too). */
static void copy_blocks(const Func *f, LLVMBuilderRef b, Map *map) {
    LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f->fn));
    for (int k = 0; k < f->n; k++) {
        if (!f->in_loop[k])
            continue;
        LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(ctx, f->fn, "narrow");
        map_put(map, LLVMBasicBlockAsValue(f->bb[k]), LLVMBasicBlockAsValue(nb));
        LLVMPositionBuilderAtEnd(b, nb);
        for (LLVMValueRef i = LLVMGetFirstInstruction(f->bb[k]); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef c =
                LLVMIsAPHINode(i) ? LLVMBuildPhi(b, LLVMTypeOf(i), "") : LLVMInstructionClone(i);
            if (!LLVMIsAPHINode(i))
                LLVMInsertIntoBuilder(b, c);
            map_put(map, i, c);
        }
    }
}

static LLVMBasicBlockRef mapped_block(const Map *map, LLVMBasicBlockRef bb) {
    return LLVMValueAsBasicBlock(map_get(map, LLVMBasicBlockAsValue(bb)));
}

/* The copies' operands, successors and phi incomings, read through map. */
static void remap_copies(const Func *f, const Map *map) {
    for (int k = 0; k < f->n; k++) {
        if (!f->in_loop[k])
            continue;
        for (LLVMValueRef i = LLVMGetFirstInstruction(f->bb[k]); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef c = map_get(map, i);
            if (LLVMIsAPHINode(i)) {
                for (unsigned in = 0; in < LLVMCountIncoming(i); in++) {
                    LLVMValueRef v = map_get(map, LLVMGetIncomingValue(i, in));
                    LLVMBasicBlockRef from = mapped_block(map, LLVMGetIncomingBlock(i, in));
                    LLVMAddIncoming(c, &v, &from, 1);
                }
                continue;
            }
            int n = LLVMGetNumOperands(c);
            for (int op = 0; op < n; op++) {
                LLVMValueRef v = LLVMGetOperand(c, (unsigned)op);
                if (v && !LLVMValueIsBasicBlock(v))
                    LLVMSetOperand(c, (unsigned)op, map_get(map, v));
            }
            if (LLVMIsATerminatorInst(c))
                for (unsigned s = 0; s < LLVMGetNumSuccessors(c); s++)
                    LLVMSetSuccessor(c, s, mapped_block(map, LLVMGetSuccessor(c, s)));
        }
    }
}

/* The copies leave through an exit block of their own, X, which goes on to
   the loop's exit block E: each phi of E gets a phi of X over the copies'
   values, and a loop value used beyond E's phis is read through a new phi
   of E that merges it with its copy (through X).  X is where narrow_exit
   moves the copies' widenings to.  Returns X. */
static LLVMBasicBlockRef merge_at_exit(const Func *f, const Loop *L, LLVMBuilderRef b,
                                       const Map *map) {
    LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f->fn));
    LLVMBasicBlockRef x = LLVMAppendBasicBlockInContext(ctx, f->fn, "narrow.exit");
    LLVMBasicBlockRef *preds = malloc(nblocks(f) * sizeof *preds);
    unsigned npreds = 0;
    if (!preds)
        return x;
    for (int p = 0; p < f->n; p++)
        for (int s = 0; s < f->nsucc[p]; s++)
            if (f->bb[f->succ[p][s]] == L->exit && f->in_loop[p]) {
                preds[npreds++] = f->bb[p];
                break;
            }
    /* each copy's exit edge gets a block of its own on the way to x (its
       `edge`), so that the copies the phis of x make are out of the loop */
    LLVMBasicBlockRef *edge = malloc(nblocks(f) * sizeof *edge);
    if (!edge) {
        free(preds);
        return x;
    }
    for (unsigned p = 0; p < npreds; p++) {
        edge[p] = LLVMAppendBasicBlockInContext(ctx, f->fn, "narrow.exit.edge");
        LLVMPositionBuilderAtEnd(b, edge[p]);
        LLVMBuildBr(b, x);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(mapped_block(map, preds[p]));
        for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++)
            if (LLVMGetSuccessor(term, s) == L->exit)
                LLVMSetSuccessor(term, s, edge[p]);
    }
    /* the phi of x over the copies of `v`, read from each of preds, or of the
       values an E phi takes from them */
    LLVMValueRef first = first_non_phi(L->exit);
    for (LLVMValueRef phi = LLVMGetFirstInstruction(L->exit); phi && LLVMIsAPHINode(phi);
         phi = LLVMGetNextInstruction(phi)) {
        LLVMPositionBuilderAtEnd(b, x);
        LLVMValueRef px = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
        unsigned n = LLVMCountIncoming(phi);
        for (unsigned in = 0; in < n; in++) {
            LLVMValueRef v = map_get(map, LLVMGetIncomingValue(phi, in));
            unsigned p = 0;
            while (p + 1 < npreds && preds[p] != LLVMGetIncomingBlock(phi, in))
                p++;
            LLVMAddIncoming(px, &v, &edge[p], 1);
        }
        LLVMAddIncoming(phi, &px, &x, 1);
    }
    size_t cap = 16, nusers;
    LLVMValueRef *users = malloc(cap * sizeof *users);
    for (int k = 0; k < f->n && users; k++) {
        if (!f->in_loop[k])
            continue;
        for (LLVMValueRef i = LLVMGetFirstInstruction(f->bb[k]); i && users;
             i = LLVMGetNextInstruction(i)) {
            /* the readers beyond the loop, collected first: replacing an
               operand moves its use to another list */
            nusers = 0;
            for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
                LLVMValueRef user = LLVMGetUser(u);
                LLVMBasicBlockRef where = LLVMGetInstructionParent(user);
                /* in the loop, in its copy or x (blocks f does not know), or
                   a phi of the exit block (given x's phi above) */
                if (in_loop(f, where) || block_index(f, where) < 0 ||
                    (where == L->exit && LLVMIsAPHINode(user)))
                    continue;
                if (nusers == cap) {
                    LLVMValueRef *grown = realloc(users, 2 * cap * sizeof *users);
                    if (!grown) {
                        free(users);
                        users = NULL;
                        break;
                    }
                    users = grown;
                    cap *= 2;
                }
                users[nusers++] = user;
            }
            if (!users || nusers == 0)
                continue;
            LLVMPositionBuilderAtEnd(b, x);
            LLVMValueRef ix = LLVMBuildPhi(b, LLVMTypeOf(i), "");
            LLVMPositionBuilder(b, L->exit, first);
            LLVMValueRef merged = LLVMBuildPhi(b, LLVMTypeOf(i), "");
            LLVMValueRef copy = map_get(map, i);
            for (unsigned p = 0; p < npreds; p++) {
                LLVMAddIncoming(ix, &copy, &edge[p], 1);
                LLVMAddIncoming(merged, &i, &preds[p], 1);
            }
            LLVMAddIncoming(merged, &ix, &x, 1);
            for (size_t u = 0; u < nusers; u++)
                replace_operand(users[u], i, merged);
        }
    }
    free(users);
    free(preds);
    free(edge);
    LLVMPositionBuilderAtEnd(b, x);
    LLVMBuildBr(b, L->exit);
    return x;
}

/* Each phi of x whose incoming values are all sext of i32 values (or the
   start or the bound, which fit in the copy) is made an i32 phi, widened
   after: the copy then widens nothing inside the loop. */
static void narrow_exit(const Loop *L, LLVMBasicBlockRef x, LLVMBuilderRef b, LLVMValueRef start32,
                        LLVMValueRef bound32) {
    LLVMTypeRef i32 = LLVMTypeOf(start32);
    for (LLVMValueRef phi = LLVMGetFirstInstruction(x), next; phi && LLVMIsAPHINode(phi);
         phi = next) {
        next = LLVMGetNextInstruction(phi);
        unsigned n = LLVMCountIncoming(phi), narrow = n > 0;
        for (unsigned in = 0; in < n && narrow; in++) {
            LLVMValueRef v = LLVMGetIncomingValue(phi, in);
            narrow = (LLVMIsASExtInst(v) && LLVMTypeOf(LLVMGetOperand(v, 0)) == i32) ||
                     v == L->start || v == L->bound;
        }
        if (!narrow)
            continue;
        LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(x));
        LLVMValueRef phi32 = LLVMBuildPhi(b, i32, "");
        for (unsigned in = 0; in < n; in++) {
            LLVMValueRef v = LLVMGetIncomingValue(phi, in);
            v = v == L->start ? start32 : v == L->bound ? bound32 : LLVMGetOperand(v, 0);
            LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, in);
            LLVMAddIncoming(phi32, &v, &from, 1);
        }
        LLVMPositionBuilderBefore(b, first_non_phi(x));
        LLVMReplaceAllUsesWith(phi, LLVMBuildSExt(b, phi32, LLVMTypeOf(phi), ""));
        LLVMInstructionEraseFromParent(phi);
    }
}

/* Replaces the i64 v (then erased) by sext(v32) where the builder is, and
   a truncation of v by v32 or a truncation of it: no optimisation pass
   runs after this one, and loop strength reduction would otherwise make a
   64-bit counter again for the truncation. */
static LLVMValueRef widen(LLVMBuilderRef b, LLVMValueRef v, LLVMValueRef v32) {
    LLVMValueRef wide = LLVMBuildSExt(b, v32, LLVMTypeOf(v), "");
    LLVMReplaceAllUsesWith(v, wide);
    LLVMInstructionEraseFromParent(v);
    for (LLVMUseRef u = LLVMGetFirstUse(wide), nu; u; u = nu) {
        nu = LLVMGetNextUse(u);
        LLVMValueRef t = LLVMGetUser(u);
        if (!LLVMIsATruncInst(t))
            continue;
        unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(t));
        LLVMPositionBuilderBefore(b, t);
        LLVMReplaceAllUsesWith(t, bits == 32 ? v32 : LLVMBuildTrunc(b, v32, LLVMTypeOf(t), ""));
        LLVMInstructionEraseFromParent(t);
    }
    return wide;
}

/* Erases v if nothing reads it. */
static void drop_if_unused(LLVMValueRef v) {
    if (!LLVMGetFirstUse(v))
        LLVMInstructionEraseFromParent(v);
}

/* In the copy: the counter as an i32 phi, its step an i32 add, every other
   reader reading sext of them, the exit test in i32. */
static void narrow_copy(const Loop *L, LLVMBuilderRef b, const Map *map, LLVMValueRef start32,
                        LLVMValueRef bound32, LLVMBasicBlockRef x) {
    LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(L->iv));
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMValueRef iv = map_get(map, L->iv), next = map_get(map, L->next),
                 test = map_get(map, L->test);
    LLVMBasicBlockRef header = LLVMGetInstructionParent(iv);
    LLVMBasicBlockRef latch = mapped_block(map, LLVMGetIncomingBlock(L->iv, 0) == L->pre
                                                    ? LLVMGetIncomingBlock(L->iv, 1)
                                                    : LLVMGetIncomingBlock(L->iv, 0));
    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(header));
    LLVMValueRef iv32 = LLVMBuildPhi(b, i32, "n32");
    /* frozen, so that the counter is no recurrence to scalar evolution:
       loop strength reduction (NVPTX calls a truncation free) would count
       in 64 bits again and truncate */
    LLVMPositionBuilderBefore(b, next);
    LLVMValueRef next32 =
        LLVMBuildFreeze(b, LLVMBuildAdd(b, iv32, LLVMConstInt(i32, 1, 0), ""), "");
    LLVMBasicBlockRef pre = L->pre;
    LLVMAddIncoming(iv32, &start32, &pre, 1);
    LLVMAddIncoming(iv32, &next32, &latch, 1);
    /* the test first: it reads iv or next, which are replaced below */
    LLVMValueRef a = LLVMGetOperand(test, 0) == iv     ? iv32
                     : LLVMGetOperand(test, 0) == next ? next32
                                                       : bound32;
    LLVMValueRef c = LLVMGetOperand(test, 1) == iv     ? iv32
                     : LLVMGetOperand(test, 1) == next ? next32
                                                       : bound32;
    LLVMPositionBuilderBefore(b, test);
    LLVMValueRef test32 = LLVMBuildICmp(b, LLVMGetICmpPredicate(test), a, c, "");
    LLVMReplaceAllUsesWith(test, test32);
    LLVMInstructionEraseFromParent(test);
    LLVMPositionBuilderBefore(b, next);
    LLVMValueRef wide_next = widen(b, next, next32);
    LLVMPositionBuilderBefore(b, first_non_phi(header));
    LLVMValueRef wide_iv = widen(b, iv, iv32);
    narrow_exit(L, x, b, start32, bound32);
    drop_if_unused(wide_next);
    drop_if_unused(wide_iv);
}

/* A block of its own between the preheader and the header, where the
   preheader ends in a conditional branch: the header's phis are made
   again, since the C API cannot change a phi's incoming block.  L->pre
   and L->iv then name the new block and phi. */
static void own_preheader(Loop *L, LLVMBasicBlockRef header, LLVMBuilderRef b) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(L->pre);
    if (!LLVMIsConditional(br))
        return;
    LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(L->iv));
    LLVMBasicBlockRef edge = LLVMInsertBasicBlockInContext(ctx, header, "narrow.pre");
    for (unsigned s = 0; s < LLVMGetNumSuccessors(br); s++)
        if (LLVMGetSuccessor(br, s) == header)
            LLVMSetSuccessor(br, s, edge);
    LLVMPositionBuilderAtEnd(b, edge);
    LLVMBuildBr(b, header);
    for (LLVMValueRef phi = LLVMGetFirstInstruction(header), next; phi && LLVMIsAPHINode(phi);
         phi = next) {
        next = LLVMGetNextInstruction(phi);
        LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(header));
        LLVMValueRef again = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
        for (unsigned in = 0; in < LLVMCountIncoming(phi); in++) {
            LLVMValueRef v = LLVMGetIncomingValue(phi, in);
            LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, in);
            from = from == L->pre ? edge : from;
            LLVMAddIncoming(again, &v, &from, 1);
        }
        if (phi == L->iv)
            L->iv = again;
        LLVMReplaceAllUsesWith(phi, again);   /* L->next's operand too */
        LLVMInstructionEraseFromParent(phi);
    }
    L->pre = edge;
}

/* Versions the loop L of f: the copy's header, or NULL. */
static LLVMBasicBlockRef version(Func *f, Loop *L) {
    LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f->fn));
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
    size_t count = 0;
    for (int k = 0; k < f->n; k++)
        if (f->in_loop[k])
            for (LLVMValueRef i = LLVMGetFirstInstruction(f->bb[k]); i;
                 i = LLVMGetNextInstruction(i))
                count++;
    Map map;
    if (!map_init(&map, count + nblocks(f))) {
        map_free(&map);
        return NULL;
    }
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    own_preheader(L, f->bb[L->header], b);
    copy_blocks(f, b, &map);
    remap_copies(f, &map);
    LLVMBasicBlockRef x = merge_at_exit(f, L, b, &map);
    LLVMValueRef pre_br = LLVMGetBasicBlockTerminator(L->pre);
    LLVMPositionBuilderBefore(b, pre_br);
    LLVMValueRef fits = build_fits(b, L, i64);
    LLVMValueRef start32 = LLVMBuildTrunc(b, L->start, i32, "");
    LLVMValueRef bound32 = LLVMBuildTrunc(b, L->bound, i32, "");
    narrow_copy(L, b, &map, start32, bound32, x);
    LLVMBasicBlockRef header32 = mapped_block(&map, f->bb[L->header]);
    LLVMPositionBuilderBefore(b, pre_br);
    LLVMBuildCondBr(b, fits, header32, f->bb[L->header]);
    LLVMInstructionEraseFromParent(pre_br);
    LLVMDisposeBuilder(b);
    map_free(&map);
    return header32;
}

/* Whether the loop of f->in_loop holds another loop (a back edge to
   another header inside it): only innermost loops are copied. */
static int holds_a_loop(const Func *f, int (*edges)[2], int n, int header) {
    for (int e = 0; e < n; e++)
        if (edges[e][1] != header && f->in_loop[edges[e][1]])
            return 1;
    return 0;
}

enum { MAX_DONE = 4 * MAX_VERSIONS_PER_FUNCTION };

/* Versions one qualifying loop of fn whose header is not in done[] (loops
   looked at, and the copies made): 1, or 0 when none is left. */
static int version_one(LLVMValueRef fn, LLVMBasicBlockRef *done, int *ndone, unsigned convergent) {
    Func f;
    int changed = 0;
    if (!func_init(&f, fn))
        goto out;
    enum { MAX_EDGES = 64 };
    int edges[MAX_EDGES][2];
    int n = back_edges(&f, edges, MAX_EDGES);
    for (int e = 0; e < n && !changed && *ndone + 2 <= MAX_DONE; e++) {
        int seen = 0;
        for (int d = 0; d < *ndone; d++)
            seen |= done[d] == f.bb[edges[e][1]];
        if (seen)
            continue;
        done[(*ndone)++] = f.bb[edges[e][1]];
        mark_loop(&f, edges[e][0], edges[e][1]);
        Loop L;
        if (holds_a_loop(&f, edges, n, edges[e][1]) ||
            !analyse(&f, &L, edges[e][0], edges[e][1], convergent))
            continue;
        LLVMBasicBlockRef copy = version(&f, &L);   /* f's arrays are stale after it */
        if (copy) {
            done[(*ndone)++] = copy;
            changed = 1;
        }
    }
out:
    func_free(&f);
    return changed;
}

int gj_narrow_loop_counters(LLVMModuleRef mod) {
    unsigned convergent = LLVMGetEnumAttributeKindForName("convergent", strlen("convergent"));
    int total = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMCountBasicBlocks(fn) == 0)
            continue;
        LLVMBasicBlockRef done[MAX_DONE];
        int ndone = 0, versions = 0;
        while (versions < MAX_VERSIONS_PER_FUNCTION && version_one(fn, done, &ndone, convergent))
            versions++;
        total += versions;
    }
    return total;
}
