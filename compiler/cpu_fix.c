/*
 * cpu_fix.c - the last rewrite of a CPU-target module before code
 * generation (cpujit.c runs it after O3).
 *
 * Masked memory operations with no lane set.  The loop vectoriser turns a
 * thread loop's `if i < n: out[i] = ...` or `if x[i] > 0.5: y[i] = 1.0`
 * into masked loads and stores (llvm.masked.load/store), and vectorize.c's
 * bodies use masked gathers and scatters: the lanes of the threads that
 * skip the access are off.  Where every lane of a vector is off (the
 * threads past the end of an array, a condition false for a whole vector
 * of threads), the instruction still costs a great deal on x86: on the
 * benchmark host (AMD EPYC, AVX-512) a kernel whose store was off in every
 * lane ran at about 10 ns a thread (40 ms for 2^22 threads, 8 lanes of
 * float64 a vector), against 0.6 ns with half the lanes on; one whose
 * masked-off loads pointed past the end of the array took about 27 ns a
 * thread.  Each such call is put behind a test of its mask: the block
 * is split there, and the call runs only when a lane is on; a load's
 * value is then its pass-through operand, as the intrinsic defines for
 * lanes that are off.  A mask that is a constant is left alone.
 *
 * Contraction.  Instruction selection fuses a multiply and the add that
 * uses it into an FMA (both `contract`, gpujit's default) within one
 * block only: a split between them (a masked load of the addend) would
 * round the product, and the vectorised threads' values would differ from
 * the code of one thread.  So a float multiply or negation whose one user
 * now lies in a block the splits made below its own moves to just before
 * that user, where it is still dominated by its operands.
 *
 * Input: an optimised module (SimplifyCFG would turn the branches back
 * into the calls alone).  Output: the same module, computing the same
 * values.
 */
#include "cpu_fix.h"

#include <stdlib.h>
#include <string.h>

/* The operand index of call's mask when it calls one of the four masked
   memory intrinsics, with *passthru the index of a load's or gather's
   pass-through value (-1 for a store or scatter); else -1. */
static int masked_operand(LLVMValueRef call, int *passthru) {
    static const struct { const char *prefix; int mask, passthru; } ops[] = {
        {"llvm.masked.load.", 2, 3},
        {"llvm.masked.gather.", 2, 3},
        {"llvm.masked.store.", 3, -1},
        {"llvm.masked.scatter.", 3, -1},
    };
    LLVMValueRef fn = LLVMGetCalledValue(call);
    size_t len;
    const char *name = fn && LLVMIsAFunction(fn) ? LLVMGetValueName2(fn, &len) : NULL;
    for (size_t k = 0; name && k < sizeof ops / sizeof ops[0]; k++)
        if (strncmp(name, ops[k].prefix, strlen(ops[k].prefix)) == 0) {
            *passthru = ops[k].passthru;
            return ops[k].mask;
        }
    return -1;
}

/* Each phi of succ with an edge from `from` gets that edge from `to`
   instead: a new phi replaces it (the C API has no setter of a phi's
   incoming block). */
static void move_phi_edges(LLVMBuilderRef b, LLVMBasicBlockRef succ, LLVMBasicBlockRef from,
                           LLVMBasicBlockRef to) {
    LLVMValueRef phi = LLVMGetFirstInstruction(succ);
    while (phi && LLVMIsAPHINode(phi)) {
        LLVMValueRef next = LLVMGetNextInstruction(phi);
        unsigned n = LLVMCountIncoming(phi), moved = 0;
        for (unsigned k = 0; k < n; k++)
            moved |= LLVMGetIncomingBlock(phi, k) == from;
        if (moved) {
            LLVMPositionBuilderBefore(b, phi);
            LLVMValueRef fresh = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
            for (unsigned k = 0; k < n; k++) {
                LLVMValueRef v = LLVMGetIncomingValue(phi, k);
                LLVMBasicBlockRef in = LLVMGetIncomingBlock(phi, k);
                LLVMBasicBlockRef edge = in == from ? to : in;
                LLVMAddIncoming(fresh, &v, &edge, 1);
            }
            LLVMReplaceAllUsesWith(phi, fresh);
            LLVMInstructionEraseFromParent(phi);
        }
        phi = next;
    }
}

/* The blocks the splits made: tail[k] follows head[k] (dominated by it). */
typedef struct Splits {
    LLVMBasicBlockRef *head, *tail;
    size_t n;
} Splits;

/* Whether block `to` is `from` or lies below it along the splits. */
static int split_below(const Splits *s, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
    for (size_t steps = 0; to != from && steps <= s->n; steps++) {
        size_t k = 0;
        while (k < s->n && s->tail[k] != to)
            k++;
        if (k == s->n)
            return 0;
        to = s->head[k];
    }
    return to == from;
}

/* The float multiplies and negations whose one user lies below them along
   the splits (not a phi), each moved to just before its user; until none
   is left, so a negated product follows its negation. */
static void sink_products(LLVMBuilderRef b, LLVMModuleRef mod, const Splits *s) {
    for (int moved = 1; moved;) {
        moved = 0;
        for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
            for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb;
                 bb = LLVMGetNextBasicBlock(bb))
                for (LLVMValueRef i = LLVMGetFirstInstruction(bb), next; i; i = next) {
                    next = LLVMGetNextInstruction(i);
                    LLVMOpcode op = LLVMGetInstructionOpcode(i);
                    LLVMUseRef use = LLVMGetFirstUse(i);
                    if ((op != LLVMFMul && op != LLVMFNeg) || !use || LLVMGetNextUse(use))
                        continue;
                    LLVMValueRef user = LLVMGetUser(use);
                    LLVMBasicBlockRef at = LLVMIsAInstruction(user)
                                               ? LLVMGetInstructionParent(user) : NULL;
                    if (!at || at == bb || LLVMIsAPHINode(user) || !split_below(s, bb, at))
                        continue;
                    LLVMInstructionRemoveFromParent(i);
                    LLVMPositionBuilderBefore(b, user);
                    LLVMInsertIntoBuilder(b, i);
                    moved = 1;
                }
    }
}

/* Splits call's block after the test of its mask: the call alone in a
   block of its own, run when the mask has a lane, then what followed it
   (recorded in s). */
static void guard(LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef call, int mask_arg,
                  int passthru_arg, Splits *s) {
    LLVMBasicBlockRef head = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef next = LLVMGetNextBasicBlock(head);
    LLVMValueRef fn = LLVMGetBasicBlockParent(head);
    LLVMBasicBlockRef run = next ? LLVMInsertBasicBlockInContext(ctx, next, "masked")
                                 : LLVMAppendBasicBlockInContext(ctx, fn, "masked");
    LLVMBasicBlockRef tail = next ? LLVMInsertBasicBlockInContext(ctx, next, "")
                                  : LLVMAppendBasicBlockInContext(ctx, fn, "");
    s->head[s->n] = head;
    s->tail[s->n++] = tail;

    LLVMValueRef mask = LLVMGetOperand(call, (unsigned)mask_arg);
    unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(mask));
    LLVMPositionBuilderBefore(b, call);
    LLVMValueRef bits = LLVMBuildBitCast(b, mask, LLVMIntTypeInContext(ctx, lanes), "");
    LLVMValueRef any = LLVMBuildICmp(b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), "");

    LLVMPositionBuilderAtEnd(b, tail);
    for (LLVMValueRef i = LLVMGetNextInstruction(call), after; i; i = after) {
        after = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(b, i);
    }
    LLVMValueRef term = LLVMGetBasicBlockTerminator(tail);
    unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
    for (unsigned k = 0; k < nsucc; k++) {
        LLVMBasicBlockRef succ = LLVMGetSuccessor(term, k), seen = NULL;
        for (unsigned j = 0; j < k && !seen; j++)
            seen = LLVMGetSuccessor(term, j) == succ ? succ : NULL;
        if (!seen)
            move_phi_edges(b, succ, head, tail);
    }

    LLVMInstructionRemoveFromParent(call);
    LLVMPositionBuilderAtEnd(b, run);
    LLVMInsertIntoBuilder(b, call);
    LLVMBuildBr(b, tail);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMBuildCondBr(b, any, run, tail);

    if (passthru_arg >= 0) {   /* the load's value: the call's, or the pass-through */
        LLVMValueRef first = LLVMGetFirstInstruction(tail);
        if (first)
            LLVMPositionBuilderBefore(b, first);
        else
            LLVMPositionBuilderAtEnd(b, tail);
        LLVMValueRef value = LLVMBuildPhi(b, LLVMTypeOf(call), "");
        LLVMReplaceAllUsesWith(call, value);
        LLVMValueRef in[2] = {LLVMGetOperand(call, (unsigned)passthru_arg), call};
        LLVMBasicBlockRef from[2] = {head, run};
        LLVMAddIncoming(value, in, from, 2);
    }
}

void gj_cpu_fix_module(LLVMModuleRef mod) {
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    size_t n = 0, cap = 0;
    LLVMValueRef *calls = NULL;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
                int passthru;
                int m = LLVMIsACallInst(i) ? masked_operand(i, &passthru) : -1;
                if (m < 0 || LLVMIsConstant(LLVMGetOperand(i, (unsigned)m)))
                    continue;
                if (n == cap) {
                    LLVMValueRef *grown = realloc(calls, (cap = cap ? 2 * cap : 16) * sizeof *calls);
                    if (!grown)
                        goto done;   /* out of memory: the module stays correct, only slower */
                    calls = grown;
                }
                calls[n++] = i;
            }
    Splits s = {.head = malloc((n ? n : 1) * sizeof *s.head),
                .tail = malloc((n ? n : 1) * sizeof *s.tail)};
    for (size_t k = 0; s.head && s.tail && k < n; k++) {   /* in order: a split moves the
                                                              later ones into its tail */
        int passthru;
        int m = masked_operand(calls[k], &passthru);
        guard(ctx, b, calls[k], m, passthru, &s);
    }
    if (s.n)
        sink_products(b, mod, &s);
    free(s.head);
    free(s.tail);
done:
    free(calls);
    LLVMDisposeBuilder(b);
}
