/*
 * nvptx_fix.c - the last rewrite of an NVPTX module before code generation:
 * it keeps LLVM 19's NVPTX backend and ptxas from selecting instructions
 * that give wrong values (each found by the differential fuzzer on an H200,
 * each checked in the SASS that ptxas makes of the PTX).
 *
 *   - A float `select (fcmp a, b), a, b`, Python's min/max (lower_ops.c's
 *     gj_lower_minmax) or a conditional expression, becomes PTX min/max
 *     when one side is known not to be nan (SelectionDAGBuilder's
 *     matchSelectPattern): min.f64 and max.f64 order -0.0 below +0.0, so
 *     max(-0.0, 0.0), which is -0.0 in Python, gives 0.0.  A freeze of the
 *     condition hides the pattern.  Left alone: a comparison with a
 *     nonzero constant (no zeros of two signs can tie; clamps keep their
 *     min/max) and selects with nsz (fastmath).
 *   - `sitofp i1` (-1.0 or 0.0) becomes `selp.u32 1, 0` and a signed
 *     convert, +1.0, where the i1 is not a comparison: a select instead.
 *   - abs.s16/s32/s64: ptxas takes the result to be non-negative, which
 *     abs(INT_MIN) == INT_MIN is not (NumPy's wrapping abs): it drops the
 *     sign extension of an abs.s16 (abs(-32768) became +32768) and folds
 *     `abs(x) < 0` to false (a floor division by abs(INT64_MIN) lost its
 *     sign correction).  An integer abs is written as a select on a frozen
 *     `x < 0` (LLVM cannot turn it back into abs), in i32 below 32 bits.
 *   - neg.s16: ptxas computes it in 32 bits and takes the result to be
 *     sign-extended, so -(-32768) became +32768 where a signed 16-bit
 *     comparison read it (`x >= -x` was false; the fuzzer's seed 90622).
 *     Done in i32 and truncated, the negation came back as neg.s16 (the
 *     code generator narrows a truncated sub), so an i16 negation is
 *     written as not and add 1 in inline PTX, which neither LLVM nor ptxas
 *     turns back into neg (ptxas re-extends an add.s16's result).
 *   - ptxas folds a neg.s32 that feeds two chained min.s32/max.s32 into a
 *     three-input VIMNMX3 and drops the negation (min(a, -b, c) is
 *     min(a, b, c)): such a negation is written as not and add (inline PTX,
 *     which LLVM cannot fold back into neg).
 *
 * Input: an optimised module (InstCombine would undo these).  Output: the
 * same module, computing the same values.
 */
#include "nvptx_fix.h"

#include <string.h>

enum { MINMAX_IDS = 4 };

typedef struct Fix {
    LLVMContextRef ctx;
    LLVMBuilderRef b;
    unsigned abs_id;
    unsigned minmax_id[MINMAX_IDS];   /* llvm.smin, smax, umin, umax */
} Fix;

static unsigned intrinsic_id(const char *name) {
    return LLVMLookupIntrinsicID(name, strlen(name));
}

/* The intrinsic inst calls, or 0. */
static unsigned called_intrinsic(LLVMValueRef inst) {
    if (!LLVMIsACallInst(inst))
        return 0;
    LLVMValueRef fn = LLVMGetCalledValue(inst);
    return fn && LLVMIsAFunction(fn) ? LLVMGetIntrinsicID(fn) : 0;
}

static int is_int(LLVMTypeRef t, unsigned bits) {
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == bits;
}

static int is_float(LLVMTypeRef t) {
    LLVMTypeKind k = LLVMGetTypeKind(t);
    return k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind || k == LLVMFloatTypeKind ||
           k == LLVMDoubleTypeKind;
}

static int is_negation(LLVMValueRef inst) {
    LLVMValueRef zero = LLVMGetOperand(inst, 0);
    return LLVMGetInstructionOpcode(inst) == LLVMSub && LLVMIsAConstantInt(zero) &&
           LLVMConstIntGetZExtValue(zero) == 0;
}

static int feeds_minmax(const Fix *F, LLVMValueRef v) {
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
        unsigned id = called_intrinsic(LLVMGetUser(u));
        for (int k = 0; id && k < MINMAX_IDS; k++)
            if (id == F->minmax_id[k])
                return 1;
    }
    return 0;
}

/* -x of an i16 or i32 x as `not` and `add 1` in inline PTX. */
static LLVMValueRef opaque_neg(Fix *F, LLVMValueRef x) {
    static const char text32[] = "not.b32 $0, $1;\n\tadd.s32 $0, $0, 1;";
    static const char text16[] = "not.b16 $0, $1;\n\tadd.s16 $0, $0, 1;";
    LLVMTypeRef t = LLVMTypeOf(x);
    int wide = is_int(t, 32);
    const char *text = wide ? text32 : text16, *constraints = wide ? "=r,r" : "=h,h";
    LLVMTypeRef fty = LLVMFunctionType(t, &t, 1, 0);
    LLVMValueRef code = LLVMGetInlineAsm(fty, text, strlen(text), constraints,
                                         strlen(constraints), 0, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(F->b, fty, code, &x, 1, "");
}

/* abs(x) of a call to llvm.abs as x < 0 ? -x : x, the condition frozen,
   in i32 for narrower types: a value for inst, or NULL. */
static LLVMValueRef select_abs(Fix *F, LLVMValueRef inst) {
    if (called_intrinsic(inst) != F->abs_id)
        return NULL;
    LLVMTypeRef t = LLVMTypeOf(inst), i32 = LLVMInt32TypeInContext(F->ctx);
    if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind)
        return NULL;
    int narrow = LLVMGetIntTypeWidth(t) < 32;
    LLVMValueRef x = LLVMGetOperand(inst, 0);
    if (narrow)
        x = LLVMBuildSExt(F->b, x, i32, "");
    LLVMValueRef negative = LLVMBuildICmp(F->b, LLVMIntSLT, x, LLVMConstNull(LLVMTypeOf(x)), "");
    LLVMValueRef r = LLVMBuildSelect(F->b, LLVMBuildFreeze(F->b, negative, ""),
                                     LLVMBuildNeg(F->b, x, ""), x, "");
    return narrow ? LLVMBuildTrunc(F->b, r, t, "") : r;
}

/* Whether the fcmp compares with a constant that is not a zero. */
static int compares_nonzero_constant(LLVMValueRef cmp) {
    for (unsigned k = 0; k < 2; k++) {
        LLVMValueRef v = LLVMGetOperand(cmp, k);
        LLVMBool loses;
        if (LLVMIsAConstantFP(v) && LLVMConstRealGetDouble(v, &loses) != 0.0)
            return 1;
    }
    return 0;
}

static int ignores_zero_signs(LLVMValueRef v) {
    return LLVMCanValueUseFastMathFlags(v) &&
           (LLVMGetFastMathFlags(v) & LLVMFastMathNoSignedZeros);
}

/* A float select on an fcmp that the backend may turn into min/max. */
static int select_may_become_minmax(LLVMValueRef inst) {
    if (LLVMGetInstructionOpcode(inst) != LLVMSelect || !is_float(LLVMTypeOf(inst)))
        return 0;
    LLVMValueRef cond = LLVMGetOperand(inst, 0);
    return LLVMIsAFCmpInst(cond) && !compares_nonzero_constant(cond) &&
           !ignores_zero_signs(inst) && !ignores_zero_signs(cond);
}

/* The value that replaces inst, or NULL (inst stays; it may be changed in
   place).  The builder is positioned before inst. */
static LLVMValueRef fix_instruction(Fix *F, LLVMValueRef inst) {
    LLVMTypeRef t = LLVMTypeOf(inst);
    if (select_may_become_minmax(inst)) {
        LLVMSetOperand(inst, 0, LLVMBuildFreeze(F->b, LLVMGetOperand(inst, 0), ""));
        return NULL;
    }
    if (LLVMGetInstructionOpcode(inst) == LLVMSIToFP &&
        is_int(LLVMTypeOf(LLVMGetOperand(inst, 0)), 1))
        return LLVMBuildSelect(F->b, LLVMGetOperand(inst, 0), LLVMConstReal(t, -1.0),
                               LLVMConstReal(t, 0.0), "");
    if (is_negation(inst) && (is_int(t, 16) || (is_int(t, 32) && feeds_minmax(F, inst))))
        return opaque_neg(F, LLVMGetOperand(inst, 1));
    return select_abs(F, inst);
}

void gj_nvptx_fix_module(LLVMModuleRef mod) {
    Fix F = {.ctx = LLVMGetModuleContext(mod), .abs_id = intrinsic_id("llvm.abs")};
    static const char *const minmax[MINMAX_IDS] = {"llvm.smin", "llvm.smax", "llvm.umin",
                                                   "llvm.umax"};
    for (int k = 0; k < MINMAX_IDS; k++)
        F.minmax_id[k] = intrinsic_id(minmax[k]);
    F.b = LLVMCreateBuilderInContext(F.ctx);
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef inst = LLVMGetFirstInstruction(bb), next; inst; inst = next) {
                next = LLVMGetNextInstruction(inst);
                LLVMPositionBuilderBefore(F.b, inst);
                LLVMValueRef with = fix_instruction(&F, inst);
                if (with) {
                    LLVMReplaceAllUsesWith(inst, with);
                    LLVMInstructionEraseFromParent(inst);
                }
            }
    LLVMDisposeBuilder(F.b);
}
