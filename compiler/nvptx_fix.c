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
 *   - neg.s16 and abs.s16: ptxas computes them in 32 bits and takes the
 *     result to be sign-extended, so -(-32768) became +32768 where a
 *     signed 16-bit comparison or shift read it (`x >= -x` was false: the
 *     fuzzer's seed 90622; np.int8(-x) of -128, which the code generator
 *     computes as neg.s16 of x << 8, gave +128: seed 11).  The code
 *     generator makes neg.s16 of much besides an i16 `sub 0, x` (a
 *     truncated i32 negation, `mul x, -256`, an i8 negation), so these are
 *     rewritten in the PTX text itself (gj_nvptx_fix_ptx): as not and
 *     add 1, whose result ptxas extends again.
 *   - ptxas folds a neg.s32 that feeds two chained min.s32/max.s32 into a
 *     three-input VIMNMX3 and drops the negation (min(a, -b, c) is
 *     min(a, b, c)): such a negation is written as not and add (inline PTX,
 *     which LLVM cannot fold back into neg).
 *
 * Input: an optimised module (InstCombine would undo these), then the PTX
 * emitted from it.  Output: the same module and PTX, computing the same
 * values.
 */
#include "nvptx_fix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MINMAX_IDS = 4 };

typedef struct Fix {
    LLVMContextRef ctx;
    LLVMBuilderRef b;
    unsigned abs_id;
    unsigned minmax_id[MINMAX_IDS];   /* llvm.smin, smax, umin, umax */
} Fix;

static unsigned intrinsic_id(const char *name) { return LLVMLookupIntrinsicID(name, strlen(name)); }

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

/* -x of an i32 as `not` and `add 1` in inline PTX, which LLVM cannot fold
   back into neg. */
static LLVMValueRef opaque_neg32(Fix *F, LLVMValueRef x) {
    static const char text[] = "not.b32 $0, $1;\n\tadd.s32 $0, $0, 1;", constraints[] = "=r,r";
    LLVMTypeRef i32 = LLVMInt32TypeInContext(F->ctx);
    LLVMTypeRef fty = LLVMFunctionType(i32, &i32, 1, 0);
    LLVMValueRef code = LLVMGetInlineAsm(fty, text, sizeof text - 1, constraints,
                                         sizeof constraints - 1, 0, 0, LLVMInlineAsmDialectATT, 0);
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
    return LLVMCanValueUseFastMathFlags(v) && (LLVMGetFastMathFlags(v) & LLVMFastMathNoSignedZeros);
}

/* A float select on an fcmp that the backend may turn into min/max. */
static int select_may_become_minmax(LLVMValueRef inst) {
    if (LLVMGetInstructionOpcode(inst) != LLVMSelect || !is_float(LLVMTypeOf(inst)))
        return 0;
    LLVMValueRef cond = LLVMGetOperand(inst, 0);
    return LLVMIsAFCmpInst(cond) && !compares_nonzero_constant(cond) && !ignores_zero_signs(inst) &&
           !ignores_zero_signs(cond);
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
    if (is_int(t, 32) && is_negation(inst) && feeds_minmax(F, inst))
        return opaque_neg32(F, LLVMGetOperand(inst, 1));
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

/* ---- the PTX text ------------------------------------------------------ */

enum { REG_MAX = 32 };

/* A register name at *p (`%rs12`) into out: its length, or 0. */
static size_t read_register(const char **p, char out[REG_MAX]) {
    const char *s = *p;
    size_t n = 0;
    if (*s != '%')
        return 0;
    while (n + 1 < REG_MAX &&
           (s[n] == '%' || s[n] == '_' || s[n] == '$' || (s[n] >= 'a' && s[n] <= 'z') ||
            (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9')))
        n++;
    memcpy(out, s, n);
    out[n] = '\0';
    *p = s + n;
    return n;
}

static const char *skip_blanks(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Whether the line at s is `neg.s16 d, a;` or `abs.s16 d, a;`: *abs says
   which, d and a get the registers, *end the line's end. */
static int unary16(const char *s, int *abs, char d[REG_MAX], char a[REG_MAX], const char **end) {
    s = skip_blanks(s);
    if (strncmp(s, "neg.s16", 7) != 0 && strncmp(s, "abs.s16", 7) != 0)
        return 0;
    *abs = s[0] == 'a';
    s = skip_blanks(s + 7);
    if (!read_register(&s, d) || *s != ',')
        return 0;
    s = skip_blanks(s + 1);
    if (!read_register(&s, a) || *s != ';')
        return 0;
    *end = s + 1;
    return 1;
}

/* -a, or |a|, into d with not and add 1 (right when d is a); text
   appended to out (NULL: only measured).  Its length. */
static size_t write_unary16(char *out, int abs, const char *d, const char *a) {
    char buf[512];
    int n =
        abs ? snprintf(buf, sizeof buf,
                       "{\n\t.reg .pred \t%%abs_neg;\n\tsetp.lt.s16 \t%%abs_neg, %s, 0;\n"
                       "\tmov.b16 \t%s, %s;\n\t@%%abs_neg not.b16 \t%s, %s;\n"
                       "\t@%%abs_neg add.s16 \t%s, %s, 1;\n\t}",
                       a, d, a, d, d, d, d)
            : snprintf(buf, sizeof buf, "not.b16 \t%s, %s;\n\tadd.s16 \t%s, %s, 1;", d, a, d, d);
    if (out)
        memcpy(out, buf, (size_t)n);
    return (size_t)n;
}

/* One pass over ptx: the length of the rewritten text, written to out
   unless it is NULL. */
static size_t rewrite_ptx(const char *ptx, char *out) {
    size_t len = 0;
    for (const char *line = ptx; *line;) {
        const char *eol = strchr(line, '\n'), *end;
        eol = eol ? eol + 1 : line + strlen(line);
        char d[REG_MAX], a[REG_MAX];
        int abs;
        if (unary16(line, &abs, d, a, &end) && end <= eol) {
            size_t indent = (size_t)(skip_blanks(line) - line);
            if (out)
                memcpy(out + len, line, indent);
            len += indent;
            len += write_unary16(out ? out + len : NULL, abs, d, a);
            line = end;
            continue;
        }
        if (out)
            memcpy(out + len, line, (size_t)(eol - line));
        len += (size_t)(eol - line);
        line = eol;
    }
    return len;
}

char *gj_nvptx_fix_ptx(char *ptx) {
    size_t len = rewrite_ptx(ptx, NULL);
    char *out = malloc(len + 1);
    if (out) {
        rewrite_ptx(ptx, out);
        out[len] = '\0';
    }
    free(ptx);
    return out;
}
