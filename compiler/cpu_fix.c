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
 * Masked loads and stores with every lane on.  Most vectors of a thread
 * loop have all their threads in range (`if i < n` is false only in the
 * grid's last block), and there a masked load or store is a plain one.  But
 * without AVX-512's mask registers x86 has only VMASKMOVPS/VPMASKMOVD, and
 * AMD's Zen cores run their stores as microcode: LLVM's Zen 3 and Zen 4
 * models give the 256-bit store 42 micro-ops and one every 12 cycles,
 * against a plain store a cycle (LLVM issue 213195).  Per 8 float32 of a
 * guarded vector add, LLVM's Zen 3 model (llvm-mca) gives 15 cycles and 85
 * micro-ops with masked loads and store, 7 and 29 with plain ones; on a
 * 2-core EPYC with AVX2 that add took 2.05 times NumPy's time, against 1.02
 * with AVX-512.  So where masked stores are microcode (GjCpuHost's
 * slow_masked_stores: AMD's and the generic x86-64 levels, without AVX-512)
 * a contiguous masked load or store first tests whether every lane is on,
 * and then a plain load or store does the work (with the call's alignment
 * and metadata), on the likely path, the call only when some lanes are on.
 * Elsewhere the masked code stays: on the Intel benchmark host, whose
 * masked moves are fast (AVX-512's and VMASKMOVPS alike), the plain ones
 * measured 1 to 4% slower in the 10M vector add.
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

/* One of the four masked memory intrinsics: its operands' indices. */
typedef struct MaskedOp {
    const char *prefix;
    int mask;
    int passthru;   /* a load's or gather's pass-through value; -1 for a store or scatter */
    int pointer;    /* a contiguous load's or store's address, else -1 */
    int align;      /* its alignment (an immediate) */
} MaskedOp;

/* The operation call's callee is, or NULL. */
static const MaskedOp *masked_op(LLVMValueRef call) {
    static const MaskedOp ops[] = {
        {"llvm.masked.load.", 2, 3, 0, 1},
        {"llvm.masked.gather.", 2, 3, -1, 1},
        {"llvm.masked.store.", 3, -1, 1, 2},
        {"llvm.masked.scatter.", 3, -1, -1, 2},
    };
    LLVMValueRef fn = LLVMGetCalledValue(call);
    size_t len;
    const char *name = fn && LLVMIsAFunction(fn) ? LLVMGetValueName2(fn, &len) : NULL;
    for (size_t k = 0; name && k < sizeof ops / sizeof ops[0]; k++)
        if (strncmp(name, ops[k].prefix, strlen(ops[k].prefix)) == 0)
            return &ops[k];
    return NULL;
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
                    LLVMBasicBlockRef at =
                        LLVMIsAInstruction(user) ? LLVMGetInstructionParent(user) : NULL;
                    if (!at || at == bb || LLVMIsAPHINode(user) || !split_below(s, bb, at))
                        continue;
                    LLVMInstructionRemoveFromParent(i);
                    LLVMPositionBuilderBefore(b, user);
                    LLVMInsertIntoBuilder(b, i);
                    moved = 1;
                }
    }
}

/* The plain load or store that a contiguous masked one with every lane on
   is, built at b's position: the call's alignment, its metadata. */
static LLVMValueRef plain_access(LLVMBuilderRef b, LLVMValueRef call, const MaskedOp *op) {
    LLVMValueRef ptr = LLVMGetOperand(call, (unsigned)op->pointer);
    LLVMValueRef access = op->passthru >= 0 ? LLVMBuildLoad2(b, LLVMTypeOf(call), ptr, "")
                                            : LLVMBuildStore(b, LLVMGetOperand(call, 0), ptr);
    LLVMSetAlignment(access,
                     (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(call, (unsigned)op->align)));
    size_t n = 0;
    LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(call, &n);
    LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(ptr));
    for (unsigned k = 0; k < n; k++)
        LLVMSetMetadata(access, LLVMValueMetadataEntriesGetKind(md, k),
                        LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, k)));
    if (md)
        LLVMDisposeValueMetadataEntries(md);
    return access;
}

/* Marks the conditional branch br as taken far more often than not
   (!prof branch_weights), so that block placement makes its target the
   fall-through path: the vectors of a guarded thread loop have every lane
   on but in the grid's last block. */
static void likely(LLVMContextRef ctx, LLVMValueRef br) {
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMMetadataRef md[3] = {LLVMMDStringInContext2(ctx, "branch_weights", 14),
                             LLVMValueAsMetadata(LLVMConstInt(i32, 2000, 0)),
                             LLVMValueAsMetadata(LLVMConstInt(i32, 1, 0))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx, "prof", 4),
                    LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 3)));
}

/* Splits call's block after the test of its mask: the call alone in a
   block of its own, run when the mask has a lane on, then what followed it
   (recorded in s).  With plain_when_full, a contiguous load or store first
   tests whether every lane is on, and then runs its plain form instead, in
   a block of its own that is the likely way. */
static void guard(LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef call, const MaskedOp *op,
                  int plain_when_full, Splits *s) {
    LLVMBasicBlockRef head = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef next = LLVMGetNextBasicBlock(head);
    LLVMValueRef fn = LLVMGetBasicBlockParent(head);
#define NEW_BLOCK(name)                                    \
    (next ? LLVMInsertBasicBlockInContext(ctx, next, name) \
          : LLVMAppendBasicBlockInContext(ctx, fn, name))
    LLVMBasicBlockRef full = plain_when_full && op->pointer >= 0 ? NEW_BLOCK("unmasked") : NULL;
    LLVMBasicBlockRef some = full ? NEW_BLOCK("") : head;   /* tests for a lane on */
    LLVMBasicBlockRef run = NEW_BLOCK("masked");
    LLVMBasicBlockRef tail = NEW_BLOCK("");
#undef NEW_BLOCK
    s->head[s->n] = head;
    s->tail[s->n++] = tail;

    LLVMValueRef mask = LLVMGetOperand(call, (unsigned)op->mask);
    unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(mask));
    LLVMPositionBuilderBefore(b, call);
    LLVMValueRef bits = LLVMBuildBitCast(b, mask, LLVMIntTypeInContext(ctx, lanes), "");

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

    LLVMValueRef plain = NULL;
    if (full) {
        LLVMPositionBuilderAtEnd(b, full);
        plain = plain_access(b, call, op);
        LLVMBuildBr(b, tail);
        LLVMPositionBuilderAtEnd(b, head);
        LLVMValueRef all =
            LLVMBuildICmp(b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "");
        likely(ctx, LLVMBuildCondBr(b, all, full, some));
    }
    LLVMInstructionRemoveFromParent(call);
    LLVMPositionBuilderAtEnd(b, run);
    LLVMInsertIntoBuilder(b, call);
    LLVMBuildBr(b, tail);
    LLVMPositionBuilderAtEnd(b, some);
    LLVMValueRef any = LLVMBuildICmp(b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), "");
    LLVMBuildCondBr(b, any, run, tail);

    if (op->passthru >= 0) {   /* the load's value: the plain load's, the call's, or the
                                  pass-through */
        LLVMValueRef first = LLVMGetFirstInstruction(tail);
        if (first)
            LLVMPositionBuilderBefore(b, first);
        else
            LLVMPositionBuilderAtEnd(b, tail);
        LLVMValueRef value = LLVMBuildPhi(b, LLVMTypeOf(call), "");
        LLVMReplaceAllUsesWith(call, value);
        LLVMValueRef in[3] = {LLVMGetOperand(call, (unsigned)op->passthru), call, plain};
        LLVMBasicBlockRef from[3] = {some, run, full};
        LLVMAddIncoming(value, in, from, full ? 3 : 2);
    }
}

void gj_cpu_fix_module(LLVMModuleRef mod, int plain_when_full) {
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    size_t n = 0, cap = 0;
    LLVMValueRef *calls = NULL;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
                const MaskedOp *op = LLVMIsACallInst(i) ? masked_op(i) : NULL;
                if (!op || LLVMIsConstant(LLVMGetOperand(i, (unsigned)op->mask)))
                    continue;
                if (n == cap) {
                    LLVMValueRef *grown =
                        realloc(calls, (cap = cap ? 2 * cap : 16) * sizeof *calls);
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
        guard(ctx, b, calls[k], masked_op(calls[k]), plain_when_full, &s);
    }
    if (s.n)
        sink_products(b, mod, &s);
    free(s.head);
    free(s.tail);
done:
    free(calls);
    LLVMDisposeBuilder(b);
}
