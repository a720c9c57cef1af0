/*
 * vectorize.c - whole-function vectorisation of a CPU kernel's body with
 * masks (Karrenberg and Hack's full linearisation), W threads of a row in
 * the W lanes of vector registers.
 *
 * Input: the row and body of target_cpu.c (vectorize.h), the body's calls
 * inlined and simplified by a short pipeline (SSA, no switch, loops in LCSSA
 * form).  Output: body.vW, the same function over W threads, and a row that
 * calls it W threads at a time; or, for a body with anything not handled
 * below, the module as it was (the scalar row), never a partial result.
 *
 * The body's blocks run in one order, topological with each loop's blocks
 * together, every lane through every block under a mask: the lanes that
 * would run it.  A block's mask is the OR of its incoming edges' masks (an
 * edge's: its source's mask AND its condition); a phi becomes a select over
 * the masks of its incoming edges.  A loop runs while any lane goes round
 * it: its header's mask is the entry edges' mask, then the back edges'.
 * An edge that leaves loops carries, at the header of each loop it leaves,
 * the lanes that took it in some iteration and, for the phis it feeds, each
 * lane's value from that iteration.  Uniform values (parameters, constants,
 * arithmetic on them) stay scalar.  Loads and stores are masked gathers and
 * scatters; integer division divides inactive lanes by 1.
 */
#include "vectorize.h"
#include "vectorize_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "lower.h"

static LLVMTypeRef vec_type(const GjVec *V, LLVMTypeRef t) { return LLVMVectorType(t, V->width); }

/* ---- what the body may hold ---------------------------------------------- */

/* Intrinsics that act lane by lane, overloaded on their result type alone
   (their other operands: the same type, or constant flags such as abs's),
   sorted for bsearch. */
static const char *const lanewise_intrinsics[] = {
    "llvm.abs",       "llvm.bitreverse", "llvm.bswap",    "llvm.canonicalize", "llvm.ceil",
    "llvm.copysign",  "llvm.cos",        "llvm.ctlz",     "llvm.ctpop",        "llvm.cttz",
    "llvm.exp",       "llvm.exp2",       "llvm.fabs",     "llvm.floor",        "llvm.fma",
    "llvm.fmuladd",   "llvm.fshl",       "llvm.fshr",     "llvm.log",          "llvm.log10",
    "llvm.log2",      "llvm.maximum",    "llvm.maxnum",   "llvm.minimum",      "llvm.minnum",
    "llvm.nearbyint", "llvm.pow",        "llvm.rint",     "llvm.round",        "llvm.roundeven",
    "llvm.sadd.sat",  "llvm.sin",        "llvm.smax",     "llvm.smin",         "llvm.sqrt",
    "llvm.ssub.sat",  "llvm.trunc",      "llvm.uadd.sat", "llvm.umax",         "llvm.umin",
    "llvm.usub.sat",
};

/* Intrinsics that are hints, dropped from the vector body. */
static const char *const hint_intrinsics[] = {
    "llvm.assume",
    "llvm.experimental.noalias.scope.decl",
};

/* Pure libm functions (the double names; a float one adds "f"), called lane
   by lane: they read no memory the kernel can see and have no effect a
   kernel observes, so an inactive lane may call them too. */
static const char *const libm_functions[] = {
    "acos",  "acosh",    "asin",  "asinh", "atan",      "atan2", "atanh",     "cbrt",
    "ceil",  "copysign", "cos",   "cosh",  "erf",       "erfc",  "exp",       "exp2",
    "expm1", "fabs",     "floor", "fmax",  "fmin",      "fmod",  "hypot",     "ldexp",
    "log",   "log10",    "log1p", "log2",  "nextafter", "pow",   "remainder", "rint",
    "round", "sin",      "sinh",  "sqrt",  "tan",       "tanh",  "trunc",
};

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int listed(const char *name, const char *const *list, size_t n) {
    return name && bsearch(&name, list, n, sizeof *list, compare_names) != NULL;
}

#define LISTED(name, list) listed((name), (list), sizeof(list) / sizeof(list)[0])

static const char *intrinsic_name(LLVMValueRef callee) {
    size_t len;
    unsigned id = LLVMGetIntrinsicID(callee);
    return id ? LLVMIntrinsicGetName(id, &len) : NULL;
}

static int is_hint(LLVMValueRef inst) {
    LLVMValueRef callee = LLVMIsACallInst(inst) ? LLVMGetCalledValue(inst) : NULL;
    return callee && LLVMIsAFunction(callee) && LISTED(intrinsic_name(callee), hint_intrinsics);
}

static int is_libm(LLVMValueRef callee) {
    size_t len;
    const char *name = LLVMGetValueName2(callee, &len);
    char base[32];
    if (!LLVMIsDeclaration(callee) || LLVMGetIntrinsicID(callee) || len == 0 || len >= sizeof base)
        return 0;
    if (LISTED(name, libm_functions))
        return 1;
    memcpy(base, name, len - 1);
    base[len - 1] = '\0';
    return name[len - 1] == 'f' && LISTED(base, libm_functions);
}

/* A type a lane can hold: an integer up to 64 bits, a float, a pointer. */
static int scalar_type(LLVMTypeRef t) {
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k == LLVMIntegerTypeKind)
        return LLVMGetIntTypeWidth(t) <= 64;
    return k == LLVMHalfTypeKind || k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind ||
           k == LLVMPointerTypeKind;
}

static int is_uniform(const GjVec *V, LLVMValueRef v) {
    if (LLVMIsAArgument(v))
        return v != LLVMGetParam(V->fn, V->lane);
    if (LLVMIsAInstruction(v))
        return gj_vec_map_get(&V->uniform, v) != NULL;
    return LLVMIsConstant(v);
}

static int is_division(LLVMOpcode op) {
    return op == LLVMUDiv || op == LLVMSDiv || op == LLVMURem || op == LLVMSRem;
}

/* Whether the call is one the vector body can make: a lane-wise intrinsic,
   a hint, or libm. */
static int check_call(GjVec *V, LLVMValueRef inst) {
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    if (!callee || !LLVMIsAFunction(callee))
        return gj_vec_reject(V, "indirect call");
    const char *name = intrinsic_name(callee);
    LLVMTypeRef ty = LLVMTypeOf(inst);
    unsigned n = LLVMGetNumArgOperands(inst);
    if (name && LISTED(name, lanewise_intrinsics)) {
        for (unsigned k = 0; k < n; k++) {
            LLVMValueRef a = LLVMGetOperand(inst, k);
            if (LLVMTypeOf(a) != ty && !LLVMIsAConstantInt(a))
                return gj_vec_reject(V, "intrinsic with operands of other types");
        }
        return 1;
    }
    if (!is_libm(callee))
        return gj_vec_reject(V, "call of a function that is not pure math");
    if (LLVMGetTypeKind(ty) != LLVMFloatTypeKind && LLVMGetTypeKind(ty) != LLVMDoubleTypeKind)
        return gj_vec_reject(V, "libm call without a float result");
    return 1;
}

/* Whether inst's use of its operands is one the order keeps: a value from
   inside a loop is used outside only by a phi on an edge that leaves the
   loop (LCSSA), whose value the exit carries. */
static int check_operands(GjVec *V, LLVMValueRef inst, int blk) {
    int is_phi = LLVMIsAPHINode(inst) != NULL, is_call = LLVMIsACallInst(inst) != NULL;
    unsigned n = (unsigned)LLVMGetNumOperands(inst);
    for (unsigned k = 0; k < n; k++) {
        LLVMValueRef op = LLVMGetOperand(inst, k);
        if (LLVMValueIsBasicBlock(op) || (is_call && k == n - 1))
            continue;
        if (!scalar_type(LLVMTypeOf(op)))
            return gj_vec_reject(V, "operand that is not a scalar");
        if (!LLVMIsAInstruction(op))
            continue;
        int at = is_phi ? gj_vec_block(V, LLVMGetIncomingBlock(inst, k)) : blk;
        int l = V->loop[gj_vec_block(V, LLVMGetInstructionParent(op))];
        if (l >= 0 && !V->loops[l].in[at])
            return gj_vec_reject(V, "value used outside its loop (not LCSSA)");
    }
    return 1;
}

static int all_operands_uniform(const GjVec *V, LLVMValueRef inst) {
    unsigned n = (unsigned)LLVMGetNumOperands(inst);
    if (LLVMIsACallInst(inst))
        n--;
    for (unsigned k = 0; k < n; k++)
        if (!is_uniform(V, LLVMGetOperand(inst, k)))
            return 0;
    return 1;
}

/* Whether the vector body can hold inst; records it as uniform when every
   lane computes the same value and a scalar computes it safely for all:
   division (a lane may divide by 0) and loads (a lane's address may be
   bad) are not, but a load in the entry block, which an active lane always
   runs, is. */
static int check_inst(GjVec *V, LLVMValueRef inst, int blk) {
    LLVMOpcode op = LLVMGetInstructionOpcode(inst);
    LLVMTypeRef ty = LLVMTypeOf(inst);
    int uniform = 0;
    if (is_hint(inst))
        return 1;
    if (LLVMGetTypeKind(ty) != LLVMVoidTypeKind && !scalar_type(ty))
        return gj_vec_reject(V, "value that is not a scalar");
    if (!check_operands(V, inst, blk))
        return 0;
    switch (op) {
    case LLVMRet:
        if (LLVMGetNumOperands(inst))
            return gj_vec_reject(V, "return of a value");
        return 1;
    case LLVMBr:
    case LLVMUnreachable: return 1;
    case LLVMPHI: return 1;
    case LLVMFNeg:
    case LLVMAdd:
    case LLVMFAdd:
    case LLVMSub:
    case LLVMFSub:
    case LLVMMul:
    case LLVMFMul:
    case LLVMUDiv:
    case LLVMSDiv:
    case LLVMFDiv:
    case LLVMURem:
    case LLVMSRem:
    case LLVMFRem:
    case LLVMShl:
    case LLVMLShr:
    case LLVMAShr:
    case LLVMAnd:
    case LLVMOr:
    case LLVMXor:
    case LLVMTrunc:
    case LLVMZExt:
    case LLVMSExt:
    case LLVMFPToUI:
    case LLVMFPToSI:
    case LLVMUIToFP:
    case LLVMSIToFP:
    case LLVMFPTrunc:
    case LLVMFPExt:
    case LLVMPtrToInt:
    case LLVMIntToPtr:
    case LLVMBitCast:
    case LLVMAddrSpaceCast:
    case LLVMICmp:
    case LLVMFCmp:
    case LLVMSelect:
    case LLVMFreeze:
    case LLVMGetElementPtr: uniform = !is_division(op) && all_operands_uniform(V, inst); break;
    case LLVMLoad:
        if (LLVMGetVolatile(inst) || LLVMGetOrdering(inst) != LLVMAtomicOrderingNotAtomic)
            return gj_vec_reject(V, "volatile or atomic load");
        uniform = blk == 0 && all_operands_uniform(V, inst);
        break;
    case LLVMStore:
        if (LLVMGetVolatile(inst) || LLVMGetOrdering(inst) != LLVMAtomicOrderingNotAtomic)
            return gj_vec_reject(V, "volatile or atomic store");
        return 1;
    case LLVMCall:
        if (!check_call(V, inst))
            return 0;
        uniform = LLVMGetTypeKind(ty) != LLVMVoidTypeKind && all_operands_uniform(V, inst);
        break;
    case LLVMSwitch:
    case LLVMIndirectBr:
    case LLVMInvoke:
    case LLVMCallBr:
    case LLVMResume:
    case LLVMCleanupRet:
    case LLVMCatchRet:
    case LLVMCatchSwitch:
    case LLVMAlloca:
    case LLVMExtractElement:
    case LLVMInsertElement:
    case LLVMShuffleVector:
    case LLVMExtractValue:
    case LLVMInsertValue:
    case LLVMFence:
    case LLVMAtomicCmpXchg:
    case LLVMAtomicRMW:
    case LLVMVAArg:
    case LLVMLandingPad:
    case LLVMCleanupPad:
    case LLVMCatchPad:
    case LLVMUserOp1:
    case LLVMUserOp2: return gj_vec_reject(V, "instruction the vector body does not take");
    }
    if (uniform && gj_vec_map_put(V->arena, &V->uniform, inst, inst) != GJ_OK)
        return gj_vec_reject(V, "out of memory");
    return 1;
}

/* Every instruction, in the linear order (so that operands come first). */
static int check_body(GjVec *V) {
    for (int i = 0; i < V->norder; i++) {
        int blk = V->order[i];
        for (LLVMValueRef inst = LLVMGetFirstInstruction(V->bb[blk]); inst;
             inst = LLVMGetNextInstruction(inst))
            if (!check_inst(V, inst, blk))
                return 0;
    }
    return 1;
}

static void set_inlining(LLVMContextRef ctx, LLVMValueRef fn, int always);

/* ---- building the vector body --------------------------------------------- */

static LLVMValueRef no_lanes(const GjVec *V) { return LLVMConstNull(V->i1v); }

static LLVMValueRef or_masks(GjVec *V, LLVMValueRef a, LLVMValueRef b) {
    return !a ? b : !b ? a : LLVMBuildOr(V->b, a, b, "");
}

/* s in every lane. */
static LLVMValueRef splat(GjVec *V, LLVMValueRef s) {
    LLVMValueRef v = gj_vec_map_get(&V->splats, s);
    if (v)
        return v;
    LLVMTypeRef vt = vec_type(V, LLVMTypeOf(s));
    LLVMValueRef zero = LLVMConstNull(LLVMInt32TypeInContext(V->ctx));
    LLVMValueRef one = LLVMBuildInsertElement(V->b, LLVMGetPoison(vt), s, zero, "");
    v = LLVMBuildShuffleVector(
        V->b, one, LLVMGetPoison(vt),
        LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(V->ctx), V->width)), "");
    if (gj_vec_map_put(V->arena, &V->splats, s, v) != GJ_OK)
        gj_vec_reject(V, "out of memory");
    return v;
}

/* The vector body's value for v: a vector for a varying value, the scalar
   for a uniform one (uni) or its broadcast (vec). */
static LLVMValueRef uni(GjVec *V, LLVMValueRef v) {
    LLVMValueRef m = gj_vec_map_get(&V->vals, v);
    if (m)
        return m;
    if (!LLVMIsConstant(v))
        gj_vec_reject(V, "value used before it is defined");
    return v;
}

static LLVMValueRef vec(GjVec *V, LLVMValueRef v) {
    LLVMValueRef m = gj_vec_map_get(&V->vals, v);
    if (m && LLVMGetTypeKind(LLVMTypeOf(m)) == LLVMVectorTypeKind)
        return m;
    if (m)
        return splat(V, m);
    LLVMTypeRef vt = vec_type(V, LLVMTypeOf(v));
    if (LLVMIsPoison(v))
        return LLVMGetPoison(vt);
    if (LLVMIsUndef(v))
        return LLVMGetUndef(vt);
    if (!LLVMIsConstant(v)) {
        gj_vec_reject(V, "value used before it is defined");
        return LLVMGetPoison(vt);
    }
    LLVMValueRef lanes[64];
    for (unsigned k = 0; k < V->width; k++)
        lanes[k] = v;
    return LLVMConstVector(lanes, V->width);
}

static void define(GjVec *V, LLVMValueRef scalar, LLVMValueRef value) {
    if (gj_vec_map_put(V->arena, &V->vals, scalar, value) != GJ_OK)
        gj_vec_reject(V, "out of memory");
}

static LLVMValueRef incoming(LLVMValueRef phi, LLVMBasicBlockRef from) {
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++)
        if (LLVMGetIncomingBlock(phi, k) == from)
            return LLVMGetIncomingValue(phi, k);
    return LLVMGetPoison(LLVMTypeOf(phi));
}

static GjVecExit *exit_of(GjVec *V, int from, int to) {
    for (int k = 0; k < V->nexits; k++)
        if (V->exits[k].from == from && V->exits[k].to == to)
            return &V->exits[k];
    return NULL;
}

/* The lanes that take from -> to in this iteration of from's innermost loop. */
static LLVMValueRef edge_now(GjVec *V, int from, int to) {
    LLVMValueRef m = NULL;
    for (unsigned s = 0; s < gj_vec_nsucc(V, from); s++)
        if (gj_vec_succ(V, from, s) == to)
            m = or_masks(V, m, V->out[2 * from + (int)s]);
    return m;
}

/* The lanes that took from -> to, as `to` sees them: after the loops the
   edge leaves, those that took it in any of their iterations. */
static LLVMValueRef edge_mask(GjVec *V, int from, int to) {
    GjVecExit *e = exit_of(V, from, to);
    return e ? e->upd[e->nlevels - 1] : edge_now(V, from, to);
}

/* The k-th phi of `to`'s value on from -> to, as edge_mask. */
static LLVMValueRef edge_value(GjVec *V, LLVMValueRef phi, int k, int from, int to) {
    GjVecExit *e = exit_of(V, from, to);
    return e ? e->kupd[(e->nlevels - 1) * e->nvals + k] : vec(V, incoming(phi, V->bb[from]));
}

/* Which predecessors of blk to merge: all (-1), or those inside (1) or
   outside (0) loop l. */
static int takes(const GjVec *V, int pred, int l, int inside) {
    return inside < 0 || V->loops[l].in[pred] == inside;
}

static LLVMValueRef merge_mask(GjVec *V, int blk, int l, int inside) {
    LLVMValueRef m = NULL;
    for (int k = 0; k < V->npred[blk]; k++)
        if (takes(V, V->pred[blk][k], l, inside))
            m = or_masks(V, m, edge_mask(V, V->pred[blk][k], blk));
    return m ? m : no_lanes(V);
}

/* The k-th phi of blk: each lane's value from the edge it came by. */
static LLVMValueRef merge_phi(GjVec *V, LLVMValueRef phi, int k, int blk, int l, int inside) {
    LLVMValueRef r = NULL;
    for (int i = 0; i < V->npred[blk]; i++) {
        int p = V->pred[blk][i];
        if (!takes(V, p, l, inside))
            continue;
        LLVMValueRef v = edge_value(V, phi, k, p, blk);
        r = r ? LLVMBuildSelect(V->b, edge_mask(V, p, blk), v, r, "") : v;
    }
    return r ? r : LLVMGetPoison(vec_type(V, LLVMTypeOf(phi)));
}

static LLVMValueRef call_intrinsic(GjVec *V, const char *name, LLVMTypeRef *types, unsigned ntypes,
                                   LLVMValueRef *args, unsigned nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(V->mod, id, types, ntypes);
    return LLVMBuildCall2(V->b, LLVMGlobalGetValueType(fn), fn, args, nargs, "");
}

static LLVMValueRef align_of(GjVec *V, LLVMValueRef inst) {
    unsigned a = LLVMGetAlignment(inst);
    return LLVMConstInt(LLVMInt32TypeInContext(V->ctx), a ? a : 1, 0);
}

/* A load as a gather of the active lanes, a store as a scatter. */
static LLVMValueRef memory_access(GjVec *V, LLVMValueRef inst, LLVMValueRef mask) {
    LLVMValueRef ptrs = vec(V, LLVMGetOperand(inst, LLVMIsALoadInst(inst) ? 0 : 1));
    if (LLVMIsALoadInst(inst)) {
        LLVMTypeRef types[2] = {vec_type(V, LLVMTypeOf(inst)), LLVMTypeOf(ptrs)};
        LLVMValueRef args[4] = {ptrs, align_of(V, inst), mask, LLVMGetPoison(types[0])};
        return call_intrinsic(V, "llvm.masked.gather", types, 2, args, 4);
    }
    LLVMValueRef value = vec(V, LLVMGetOperand(inst, 0));
    LLVMTypeRef types[2] = {LLVMTypeOf(value), LLVMTypeOf(ptrs)};
    LLVMValueRef args[4] = {value, ptrs, align_of(V, inst), mask};
    return call_intrinsic(V, "llvm.masked.scatter", types, 2, args, 4);
}

/* A lane-wise intrinsic on vectors; a libm function once per lane, on
   frozen arguments (an inactive lane's may be poison). */
static LLVMValueRef call(GjVec *V, LLVMValueRef inst) {
    LLVMValueRef callee = LLVMGetCalledValue(inst), args[8], r;
    unsigned n = LLVMGetNumArgOperands(inst);
    LLVMTypeRef ty = LLVMTypeOf(inst), vt = vec_type(V, ty);
    if (n > 8)
        return gj_vec_reject(V, "call with too many arguments"), LLVMGetPoison(vt);
    if (LLVMGetIntrinsicID(callee)) {
        for (unsigned k = 0; k < n; k++) {
            LLVMValueRef a = LLVMGetOperand(inst, k);
            args[k] = LLVMTypeOf(a) == ty ? vec(V, a) : a;
        }
        unsigned id = LLVMGetIntrinsicID(callee);
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(V->mod, id, &vt, 1);
        r = LLVMBuildCall2(V->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
    } else {
        LLVMValueRef lanes[8], one[8];
        for (unsigned k = 0; k < n; k++) {
            LLVMValueRef a = LLVMGetOperand(inst, k);
            lanes[k] = is_uniform(V, a) ? uni(V, a) : LLVMBuildFreeze(V->b, vec(V, a), "");
        }
        r = LLVMGetPoison(vt);
        for (unsigned lane = 0; lane < V->width; lane++) {
            LLVMValueRef at = LLVMConstInt(LLVMInt32TypeInContext(V->ctx), lane, 0);
            for (unsigned k = 0; k < n; k++)
                one[k] = LLVMGetTypeKind(LLVMTypeOf(lanes[k])) == LLVMVectorTypeKind
                             ? LLVMBuildExtractElement(V->b, lanes[k], at, "")
                             : lanes[k];
            LLVMValueRef c =
                LLVMBuildCall2(V->b, LLVMGlobalGetValueType(callee), callee, one, n, "");
            r = LLVMBuildInsertElement(V->b, r, c, at, "");
        }
        return r;
    }
    if (LLVMCanValueUseFastMathFlags(inst))
        LLVMSetFastMathFlags(r, LLVMGetFastMathFlags(inst));
    return r;
}

/* The flags of scalar inst that hold lane by lane, on its vector copy. */
static void copy_flags(LLVMValueRef inst, LLVMValueRef v, LLVMOpcode op) {
    if (!LLVMIsAInstruction(v))
        return;
    if (op == LLVMAdd || op == LLVMSub || op == LLVMMul || op == LLVMShl) {
        LLVMSetNUW(v, LLVMGetNUW(inst));
        LLVMSetNSW(v, LLVMGetNSW(inst));
    }
    if (op == LLVMUDiv || op == LLVMSDiv || op == LLVMLShr || op == LLVMAShr)
        LLVMSetExact(v, LLVMGetExact(inst));
    if (LLVMCanValueUseFastMathFlags(inst) && LLVMCanValueUseFastMathFlags(v))
        LLVMSetFastMathFlags(v, LLVMGetFastMathFlags(inst));
}

/* A copy of uniform inst on scalars. */
static LLVMValueRef scalar_copy(GjVec *V, LLVMValueRef inst) {
    LLVMValueRef c = LLVMInstructionClone(inst);
    unsigned n = (unsigned)LLVMGetNumOperands(inst);
    if (LLVMIsACallInst(inst))
        n--;
    for (unsigned k = 0; k < n; k++)
        LLVMSetOperand(c, k, uni(V, LLVMGetOperand(inst, k)));
    static const char *const scoped[2] = {"alias.scope", "noalias"};
    for (int k = 0; k < 2; k++)   /* the scopes of inlined calls: the lanes mix them */
        LLVMSetMetadata(c, LLVMGetMDKindIDInContext(V->ctx, scoped[k], (unsigned)strlen(scoped[k])),
                        NULL);
    LLVMInsertIntoBuilder(V->b, c);
    return c;
}

static LLVMValueRef gep(GjVec *V, LLVMValueRef inst) {
    unsigned n = (unsigned)LLVMGetNumOperands(inst);
    LLVMValueRef idx[16];
    if (n - 1 > 16)
        return gj_vec_reject(V, "address with too many indices"),
               LLVMGetPoison(vec_type(V, LLVMTypeOf(inst)));
    LLVMValueRef base = LLVMGetOperand(inst, 0);
    base = is_uniform(V, base) ? uni(V, base) : vec(V, base);
    for (unsigned k = 1; k < n; k++) {
        LLVMValueRef a = LLVMGetOperand(inst, k);
        idx[k - 1] = is_uniform(V, a) ? uni(V, a) : vec(V, a);
    }
    LLVMTypeRef src = LLVMGetGEPSourceElementType(inst);
    return LLVMIsInBounds(inst) ? LLVMBuildInBoundsGEP2(V->b, src, base, idx, n - 1, "")
                                : LLVMBuildGEP2(V->b, src, base, idx, n - 1, "");
}

/* inst of block with mask `mask`, on vectors. */
static LLVMValueRef vector_inst(GjVec *V, LLVMValueRef inst, LLVMValueRef mask) {
    LLVMOpcode op = LLVMGetInstructionOpcode(inst);
    LLVMTypeRef ty = LLVMTypeOf(inst);
    LLVMValueRef a = LLVMGetNumOperands(inst) > 0 ? LLVMGetOperand(inst, 0) : NULL, r;
    if (is_division(op)) {   /* inactive lanes divide by 1, never by 0 */
        LLVMValueRef d = vec(V, LLVMGetOperand(inst, 1));
        d = LLVMBuildSelect(V->b, mask, d, vec(V, LLVMConstInt(ty, 1, 0)), "");
        r = LLVMBuildBinOp(V->b, op, vec(V, a), d, "");
    } else if (op == LLVMFNeg) {
        r = LLVMBuildFNeg(V->b, vec(V, a), "");
    } else if (op >= LLVMAdd && op <= LLVMXor) {   /* LLVMOpcode's binary operators */
        r = LLVMBuildBinOp(V->b, op, vec(V, a), vec(V, LLVMGetOperand(inst, 1)), "");
    } else if ((op >= LLVMTrunc && op <= LLVMBitCast) || op == LLVMAddrSpaceCast) {
        r = LLVMBuildCast(V->b, op, vec(V, a), vec_type(V, ty), "");
    } else if (op == LLVMICmp) {
        r = LLVMBuildICmp(V->b, LLVMGetICmpPredicate(inst), vec(V, a),
                          vec(V, LLVMGetOperand(inst, 1)), "");
    } else if (op == LLVMFCmp) {
        r = LLVMBuildFCmp(V->b, LLVMGetFCmpPredicate(inst), vec(V, a),
                          vec(V, LLVMGetOperand(inst, 1)), "");
    } else if (op == LLVMSelect) {
        LLVMValueRef c = is_uniform(V, a) ? uni(V, a) : vec(V, a);
        r = LLVMBuildSelect(V->b, c, vec(V, LLVMGetOperand(inst, 1)),
                            vec(V, LLVMGetOperand(inst, 2)), "");
    } else if (op == LLVMFreeze) {
        r = LLVMBuildFreeze(V->b, vec(V, a), "");
    } else if (op == LLVMGetElementPtr) {
        r = gep(V, inst);
    } else if (op == LLVMLoad || op == LLVMStore) {
        r = memory_access(V, inst, mask);
    } else if (op == LLVMCall) {
        r = call(V, inst);
    } else {
        return gj_vec_reject(V, "instruction without a vector form"), NULL;
    }
    copy_flags(inst, r, op);
    return r;
}

/* The masks of blk's edges, from its terminator. */
static void branch(GjVec *V, int blk, LLVMValueRef term, LLVMValueRef mask) {
    if (!LLVMIsABranchInst(term))
        return;   /* ret, unreachable: the lanes end */
    if (!LLVMIsConditional(term)) {
        V->out[2 * blk] = mask;
        return;
    }
    LLVMValueRef c = vec(V, LLVMGetCondition(term));
    V->out[2 * blk] = LLVMBuildSelect(V->b, mask, c, no_lanes(V), "");
    V->out[2 * blk + 1] = LLVMBuildSelect(V->b, mask, LLVMBuildNot(V->b, c, ""), no_lanes(V), "");
}

static void emit_block(GjVec *V, int blk) {
    int l = V->loop[blk], header = l >= 0 && V->loops[l].header == blk;
    LLVMValueRef inst = LLVMGetFirstInstruction(V->bb[blk]);
    if (!header) {   /* a header's mask and phis are enter_loop's */
        V->mask[blk] = blk == 0 ? LLVMGetLastParam(V->vfn) : merge_mask(V, blk, -1, -1);
        for (int k = 0; inst && LLVMIsAPHINode(inst); inst = LLVMGetNextInstruction(inst), k++)
            define(V, inst, merge_phi(V, inst, k, blk, -1, -1));
    }
    for (; inst; inst = LLVMGetNextInstruction(inst)) {
        if (LLVMIsAPHINode(inst) || is_hint(inst))
            continue;
        if (LLVMIsATerminatorInst(inst))
            branch(V, blk, inst, V->mask[blk]);
        else if (gj_vec_map_get(&V->uniform, inst))
            define(V, inst, scalar_copy(V, inst));
        else {
            LLVMValueRef r = vector_inst(V, inst, V->mask[blk]);
            if (r && LLVMGetTypeKind(LLVMTypeOf(inst)) != LLVMVoidTypeKind)
                define(V, inst, r);
        }
    }
}

static LLVMValueRef phi_of(GjVec *V, LLVMTypeRef ty, LLVMValueRef init, LLVMBasicBlockRef from) {
    LLVMValueRef p = LLVMBuildPhi(V->b, ty, "");
    LLVMAddIncoming(p, &init, &from, 1);
    return p;
}

/* Before loop l's header: the vector loop's header block, with the
   header's mask and phis (their values on entry) and, for each edge that
   leaves l, the lanes that took it so far (none) and their values. */
static void enter_loop(GjVec *V, int l) {
    GjVecLoop *L = &V->loops[l];
    int h = L->header;
    unsigned nphis = gj_vec_count_phis(V->bb[h]);
    LLVMValueRef entry_mask = merge_mask(V, h, l, 0), init[64];
    LLVMValueRef phi = LLVMGetFirstInstruction(V->bb[h]);
    if (nphis > 64) {
        gj_vec_reject(V, "loop with too many phis");
        return;
    }
    for (unsigned k = 0; k < nphis; k++, phi = LLVMGetNextInstruction(phi))
        init[k] = merge_phi(V, phi, (int)k, h, l, 0);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(V->b);
    L->vhead = LLVMAppendBasicBlockInContext(V->ctx, V->vfn, "loop");
    LLVMBuildBr(V->b, L->vhead);
    LLVMPositionBuilderAtEnd(V->b, L->vhead);
    L->mask = V->mask[h] = phi_of(V, V->i1v, entry_mask, pre);
    phi = LLVMGetFirstInstruction(V->bb[h]);
    for (unsigned k = 0; k < nphis; k++, phi = LLVMGetNextInstruction(phi))
        define(V, phi, phi_of(V, vec_type(V, LLVMTypeOf(phi)), init[k], pre));
    for (int x = 0; x < V->nexits; x++) {
        GjVecExit *e = &V->exits[x];
        for (int j = 0; j < e->nlevels; j++) {
            if (e->chain[j] != l)
                continue;
            e->acc[j] = phi_of(V, V->i1v, no_lanes(V), pre);
            phi = LLVMGetFirstInstruction(V->bb[e->to]);
            for (int k = 0; k < e->nvals; k++, phi = LLVMGetNextInstruction(phi)) {
                LLVMTypeRef vt = vec_type(V, LLVMTypeOf(phi));
                e->keep[j * e->nvals + k] = phi_of(V, vt, LLVMGetPoison(vt), pre);
            }
        }
    }
}

/* After loop l's last block: what the edges leaving l carry after this
   iteration, the header's mask and phis for the next, and the branch back
   while any lane goes round. */
static void leave_loop(GjVec *V, int l) {
    GjVecLoop *L = &V->loops[l];
    int h = L->header;
    for (int x = 0; x < V->nexits; x++) {
        GjVecExit *e = &V->exits[x];
        for (int j = 0; j < e->nlevels; j++) {
            if (e->chain[j] != l)
                continue;
            LLVMValueRef now = j == 0 ? edge_now(V, e->from, e->to) : e->upd[j - 1];
            e->upd[j] = or_masks(V, e->acc[j], now);
            LLVMValueRef phi = LLVMGetFirstInstruction(V->bb[e->to]);
            for (int k = 0; k < e->nvals; k++, phi = LLVMGetNextInstruction(phi)) {
                LLVMValueRef v = j == 0 ? vec(V, incoming(phi, V->bb[e->from]))
                                        : e->kupd[(j - 1) * e->nvals + k];
                e->kupd[j * e->nvals + k] =
                    LLVMBuildSelect(V->b, now, v, e->keep[j * e->nvals + k], "");
            }
        }
    }
    LLVMValueRef back = merge_mask(V, h, l, 1);
    LLVMValueRef phi = LLVMGetFirstInstruction(V->bb[h]);
    unsigned nphis = gj_vec_count_phis(V->bb[h]);
    LLVMValueRef next[64];
    for (unsigned k = 0; k < nphis && k < 64; k++, phi = LLVMGetNextInstruction(phi))
        next[k] = merge_phi(V, phi, (int)k, h, l, 1);
    LLVMValueRef any = LLVMBuildICmp(
        V->b, LLVMIntNE, LLVMBuildBitCast(V->b, back, LLVMIntTypeInContext(V->ctx, V->width), ""),
        LLVMConstNull(LLVMIntTypeInContext(V->ctx, V->width)), "");
    LLVMBasicBlockRef end = LLVMGetInsertBlock(V->b);
    LLVMAddIncoming(L->mask, &back, &end, 1);
    phi = LLVMGetFirstInstruction(V->bb[h]);
    for (unsigned k = 0; k < nphis && k < 64; k++, phi = LLVMGetNextInstruction(phi))
        LLVMAddIncoming(gj_vec_map_get(&V->vals, phi), &next[k], &end, 1);
    for (int x = 0; x < V->nexits; x++) {
        GjVecExit *e = &V->exits[x];
        for (int j = 0; j < e->nlevels; j++) {
            if (e->chain[j] != l)
                continue;
            LLVMAddIncoming(e->acc[j], &e->upd[j], &end, 1);
            for (int k = 0; k < e->nvals; k++)
                LLVMAddIncoming(e->keep[j * e->nvals + k], &e->kupd[j * e->nvals + k], &end, 1);
        }
    }
    LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(V->ctx, V->vfn, "");
    LLVMBuildCondBr(V->b, any, L->vhead, after);
    LLVMPositionBuilderAtEnd(V->b, after);
}

/* body.vW: the body's parameters, threadIdx.x a vector, then the mask of
   active lanes; the body's attributes (fastmath's denormal mode). */
static void declare_vector_body(GjVec *V) {
    LLVMTypeRef fty = LLVMGlobalGetValueType(V->fn), params[260];
    unsigned n = LLVMCountParamTypes(fty);
    LLVMGetParamTypes(fty, params);
    params[V->lane] = vec_type(V, params[V->lane]);
    params[n] = V->i1v;
    size_t len;
    const char *name = LLVMGetValueName2(V->fn, &len);
    char *vname = gj_arena_printf(V->arena, "%s.v%u", name, V->width);
    V->vfn = LLVMAddFunction(V->mod, vname ? vname : "body.v",
                             LLVMFunctionType(LLVMVoidTypeInContext(V->ctx), params, n + 1, 0));
    LLVMSetLinkage(V->vfn, LLVMInternalLinkage);
    LLVMAttributeIndex at = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    unsigned nattrs = LLVMGetAttributeCountAtIndex(V->fn, at);
    LLVMAttributeRef attrs[64];
    if (nattrs <= 64) {
        LLVMGetAttributesAtIndex(V->fn, at, attrs);
        for (unsigned k = 0; k < nattrs; k++)
            if (LLVMIsStringAttribute(attrs[k]))
                LLVMAddAttributeAtIndex(V->vfn, at, attrs[k]);
    }
    for (unsigned k = 0; k < n; k++)
        define(V, LLVMGetParam(V->fn, k), LLVMGetParam(V->vfn, k));
    LLVMPositionBuilderAtEnd(V->b, LLVMAppendBasicBlockInContext(V->ctx, V->vfn, "entry"));
}

/* The vector body for V->fn, or 0 with V->why (and no vector body left). */
static int vectorize(GjVec *V) {
    if (!gj_vec_plan(V) || !check_body(V))
        return 0;
    V->out = gj_vec_alloc(V, 2 * (size_t)V->nblocks, sizeof *V->out);
    V->mask = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *V->mask);
    if (!V->out || !V->mask)
        return gj_vec_reject(V, "out of memory");
    declare_vector_body(V);
    for (int i = 0; i < V->norder && !V->why; i++) {
        int blk = V->order[i], l = V->loop[blk];
        if (l >= 0 && V->loops[l].header == blk)
            enter_loop(V, l);
        emit_block(V, blk);
        for (l = 0; l < V->nloops; l++)   /* innermost first */
            if (V->loops[l].last == i)
                leave_loop(V, l);
    }
    LLVMBuildRetVoid(V->b);
    if (!V->why && LLVMVerifyFunction(V->vfn, LLVMReturnStatusAction))
        gj_vec_reject(V, "the vector body fails LLVM's verifier (a gpujit bug)");
    if (V->why) {
        LLVMDeleteFunction(V->vfn);
        V->vfn = NULL;
        return 0;
    }
    return 1;
}

/* The row over W threads at a time: x = 0, W, 2W... < count, each call
   with lanes x .. x + W - 1, those below count active.  noinline: O3 would
   unroll the block's y loop around it, copying the vector body (and its
   compile time) for no gain; a call per W threads costs next to nothing. */
static void replace_row(GjVec *V, LLVMValueRef row) {
    LLVMTypeRef fty = LLVMGlobalGetValueType(row), i32 = LLVMInt32TypeInContext(V->ctx);
    unsigned n = LLVMCountParamTypes(fty);
    size_t len;
    const char *name = LLVMGetValueName2(row, &len);
    char *vname = gj_arena_printf(V->arena, "%s.v%u", name, V->width);
    LLVMValueRef vrow = LLVMAddFunction(V->mod, vname ? vname : "row.v", fty), args[260];
    LLVMSetLinkage(vrow, LLVMInternalLinkage);
    set_inlining(V->ctx, vrow, 0);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(V->ctx, vrow, "entry");
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(V->ctx, vrow, "threads");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(V->ctx, vrow, "");
    LLVMPositionBuilderAtEnd(V->b, entry);
    LLVMBuildBr(V->b, loop);
    LLVMPositionBuilderAtEnd(V->b, loop);
    LLVMValueRef x = LLVMBuildPhi(V->b, i32, ""), count = LLVMGetParam(vrow, V->lane), steps[64];
    for (unsigned k = 0; k < V->width; k++)
        steps[k] = LLVMConstInt(i32, k, 0);
    V->splats = (GjVecMap){0};
    LLVMValueRef lanes = LLVMBuildAdd(V->b, splat(V, x), LLVMConstVector(steps, V->width), "");
    for (unsigned k = 0; k < n; k++)
        args[k] = LLVMGetParam(vrow, k);
    args[V->lane] = lanes;
    args[n] = LLVMBuildICmp(V->b, LLVMIntULT, lanes, splat(V, count), "");
    LLVMBuildCall2(V->b, LLVMGlobalGetValueType(V->vfn), V->vfn, args, n + 1, "");
    LLVMValueRef next = LLVMBuildNUWAdd(V->b, x, LLVMConstInt(i32, V->width, 0), "");
    gj_cpu_loop_no_unroll(
        LLVMBuildCondBr(V->b, LLVMBuildICmp(V->b, LLVMIntULT, next, count, ""), loop, done));
    LLVMValueRef in[2] = {LLVMConstInt(i32, 0, 0), next};
    LLVMBasicBlockRef from[2] = {entry, loop};
    LLVMAddIncoming(x, in, from, 2);
    LLVMPositionBuilderAtEnd(V->b, done);
    LLVMBuildRetVoid(V->b);
    LLVMReplaceAllUsesWith(row, vrow);
    LLVMDeleteFunction(row);
}

/* ---- the pass ---------------------------------------------------------- */

/* The body the row calls, and which of its parameters is threadIdx.x (the
   row loop's induction variable). */
static LLVMValueRef row_body(LLVMValueRef row, unsigned *lane) {
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(row); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
            if (!callee || !LLVMIsAFunction(callee) || LLVMIsDeclaration(callee))
                continue;
            for (unsigned k = 0; k < LLVMGetNumArgOperands(i); k++)
                if (LLVMIsAPHINode(LLVMGetOperand(i, k))) {
                    *lane = k;
                    return callee;
                }
        }
    return NULL;
}

/* Whether fn, or a function it calls, has a cycle in its control flow. */
/* The function inst calls when it is a call of one defined in the module
   (a device function, the body), else NULL. */
static LLVMValueRef defined_callee(LLVMValueRef inst) {
    LLVMValueRef callee = LLVMIsACallInst(inst) ? LLVMGetCalledValue(inst) : NULL;
    return callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee) ? callee : NULL;
}

static int has_loop(GjCtx *c, LLVMValueRef fn, int depth) {
    GjVec V = {.c = c, .arena = &c->arena, .fn = fn};
    if (depth > 32)
        return 0;
    if (gj_vec_has_cycle(&V))
        return 1;
    for (int u = 0; u < V.nblocks; u++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(V.bb[u]); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef callee = defined_callee(i);
            if (callee && has_loop(c, callee, depth + 1))
                return 1;
        }
    return 0;
}

static unsigned attribute_kind(const char *name) {
    return LLVMGetEnumAttributeKindForName(name, strlen(name));
}

/* Marks fn alwaysinline (always 1) or noinline (0), dropping the other. */
static void set_inlining(LLVMContextRef ctx, LLVMValueRef fn, int always) {
    LLVMAttributeIndex at = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    LLVMRemoveEnumAttributeAtIndex(fn, at, attribute_kind(always ? "noinline" : "alwaysinline"));
    LLVMAddAttributeAtIndex(
        fn, at,
        LLVMCreateEnumAttribute(ctx, attribute_kind(always ? "alwaysinline" : "noinline"), 0));
}

/* Every function fn calls, unless noinline (the error report), inlined
   into it by the pipeline below. */
static void inline_callees(LLVMContextRef ctx, LLVMValueRef fn, int depth) {
    LLVMAttributeIndex at = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && depth < 32;
         bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            LLVMValueRef callee = defined_callee(i);
            if (!callee || LLVMGetEnumAttributeAtIndex(callee, at, attribute_kind("noinline")))
                continue;
            set_inlining(ctx, callee, 1);
            inline_callees(ctx, callee, depth + 1);
        }
}

/* What the vectoriser needs of the body: its calls inlined, SSA form, no
   switch, loops with preheaders and their values leaving them through phis
   in their exit blocks (LCSSA). */
static const char simplify_pipeline[] = "always-inline,function(sroa,early-cse,instcombine<no-"
                                        "verify-fixpoint>,simplifycfg,lower-switch,"
                                        "loop-simplify,lcssa)";

GjStatus gj_vec_row(GjCtx *c, LLVMModuleRef mod, LLVMValueRef row, LLVMTargetMachineRef tm,
                    unsigned width) {
    unsigned lane = 0;
    LLVMValueRef body = row ? row_body(row, &lane) : NULL;
    if (!body || width < 2 || width > 64 || !has_loop(c, body, 0))
        return GJ_OK;
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    set_inlining(ctx, body, 0);
    set_inlining(ctx, row, 0);
    inline_callees(ctx, body, 0);
    if (gj_llvm_run(c, mod, tm, simplify_pipeline) != GJ_OK)
        return GJ_ERR;
    GjVec V = {.c = c,
               .arena = &c->arena,
               .ctx = ctx,
               .mod = mod,
               .fn = body,
               .width = width,
               .lane = lane,
               .b = LLVMCreateBuilderInContext(ctx),
               .i1v = LLVMVectorType(LLVMInt1TypeInContext(ctx), width)};
    size_t len;
    const char *name = LLVMGetValueName2(body, &len);
    if (c->dump & GJ_DUMP_LLVM)   /* before the body goes */
        fprintf(stderr, "---- vectorize: %s ----\n", name);
    if (vectorize(&V)) {
        set_inlining(ctx, V.vfn, 1);
        replace_row(&V, row);
    } else {
        set_inlining(ctx, body, 1);
        set_inlining(ctx, row, 1);
    }
    LLVMDisposeBuilder(V.b);
    if (c->dump & GJ_DUMP_LLVM)
        fprintf(stderr, "%s\n", V.why ? V.why : "vectorised across the threads of a row");
    return GJ_OK;
}
