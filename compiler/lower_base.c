/*
 * lower_base.c - the base layer of lowering (lower_base.h): diagnostics,
 * builder helpers and constants; LLVM types of gpujit types and the one
 * cast function, driven by a [from][to] table over numeric classes; the
 * floating-point flags of fastmath and contraction; calls of LLVM
 * intrinsics and of the math library.
 *
 * Input: the GjLower of the function being lowered, its builder placed
 * where the code goes.  Everything here emits at the builder and asks the
 * target (target.h) for what differs between machines; nothing here knows
 * an IR op or an intrinsic.
 *
 * Never emitted, because LLVM 19's NVPTX backend cannot select them:
 * llvm.pow/exp/log/sin/cos; the math library's functions (libdevice's
 * __nv_* on NVPTX, which nvptx.c links) stand in.
 */
#include "lower_base.h"

#include <stdarg.h>
#include <string.h>

/* ---- diagnostics and the builder ------------------------------------------------ */

LLVMValueRef gj_lower_fail(GjLower *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&L->c->arena, fmt, ap);
    va_end(ap);
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "%s", msg ? msg : fmt);
    return NULL;
}

LLVMValueRef gj_lower_entry_alloca(GjLower *L, LLVMTypeRef ty) {
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(L->fn);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->ctx);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(b, first);
    else
        LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef p = LLVMBuildAlloca(b, ty, "");
    LLVMDisposeBuilder(b);
    return p;
}

LLVMValueRef gj_lower_sel(GjLower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(L->b, c, a, b, "");
}

LLVMValueRef gj_lower_icmp(GjLower *L, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildICmp(L->b, p, a, b, "");
}

LLVMValueRef gj_lower_fcmp(GjLower *L, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFCmp(L->b, p, a, b, "");
}

/* ---- ending the thread ------------------------------------------------------ */

/* The LLVM return type of the function being lowered. */
LLVMTypeRef gj_lower_return_type(GjLower *L) {
    return LLVMGetReturnType(LLVMGlobalGetValueType(L->fn));
}

void gj_lower_end_thread(GjLower *L) {
    LLVMTypeRef ret = gj_lower_return_type(L);
    LLVMValueRef ended = LLVMConstInt(L->i1, 1, 0);
    if (L->status_ret && ret == L->i1)
        LLVMBuildRet(L->b, ended);
    else if (L->status_ret)
        LLVMBuildRet(L->b, LLVMBuildInsertValue(L->b, LLVMGetUndef(ret), ended, 1, ""));
    else if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
        LLVMBuildRet(L->b, NULL);
    else   /* compile_ptx(device=True)'s own function: its caller is not ours to end */
        LLVMBuildRet(L->b, LLVMConstNull(ret));
}

/* ---- constants ----------------------------------------------------------------- */

LLVMValueRef gj_lower_i64(GjLower *L, long long v) {
    return LLVMConstInt(L->i64, (unsigned long long)v, 1);
}

LLVMValueRef gj_lower_iconst(LLVMValueRef like, long long v) {
    return LLVMConstInt(LLVMTypeOf(like), (unsigned long long)v, 1);
}

LLVMValueRef gj_lower_fconst(LLVMValueRef like, double v) {
    return LLVMConstReal(LLVMTypeOf(like), v);
}

LLVMValueRef gj_lower_const_global(GjLower *L, const char *name, const char *data, size_t n,
                                   LLVMLinkage linkage, unsigned align) {
    LLVMValueRef init = LLVMConstStringInContext2(L->ctx, data, n, 1);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->mod, LLVMTypeOf(init), name,
                                                 L->target->addrspace[GJ_AS_CONST]);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, linkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, align);
    return g;
}

/* ---- types and casts -------------------------------------------------------- */

GjNumClass gj_lower_class(const GjType *t) {
    switch (gj_ty_concrete(t)->kind) {
    case GJ_TK_BOOL: return GJ_NC_BOOL;
    case GJ_TK_INT: return GJ_NC_SINT;
    case GJ_TK_UINT: return GJ_NC_UINT;
    case GJ_TK_FLOAT: return GJ_NC_FLOAT;
    case GJ_TK_COMPLEX: return GJ_NC_COMPLEX;
    case GJ_TK_NONE:
    case GJ_TK_WEAK_INT:
    case GJ_TK_WEAK_FLOAT:
    case GJ_TK_WEAK_COMPLEX:
    case GJ_TK_ARRAY:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: return GJ_NC_OTHER;
    }
    return GJ_NC_OTHER;
}

static LLVMTypeRef float_type(GjLower *L, int bits) {
    switch (bits) {
    case 16: return LLVMHalfTypeInContext(L->ctx);
    case 32: return LLVMFloatTypeInContext(L->ctx);
    default: return LLVMDoubleTypeInContext(L->ctx);
    }
}

LLVMTypeRef gj_lower_data_ptr(GjLower *L, const GjType *t) {
    return LLVMPointerTypeInContext(L->ctx, L->target->addrspace[t->addrspace]);
}

LLVMTypeRef gj_lower_type(GjLower *L, const GjType *t) {
    if (!t)
        return NULL;
    t = gj_ty_concrete(t);
    switch (t->kind) {
    case GJ_TK_BOOL: return L->i1;
    case GJ_TK_INT:
    case GJ_TK_UINT: return LLVMIntTypeInContext(L->ctx, (unsigned)t->bits);
    case GJ_TK_FLOAT: return float_type(L, t->bits);
    case GJ_TK_COMPLEX: {
        LLVMTypeRef part = float_type(L, t->bits / 2), fields[2] = {part, part};
        return LLVMStructTypeInContext(L->ctx, fields, 2, 0);
    }
    case GJ_TK_ARRAY: {
        LLVMTypeRef dims = LLVMArrayType2(L->i64, (uint64_t)t->ndim);
        LLVMTypeRef fields[3] = {gj_lower_data_ptr(L, t), dims, dims};
        return LLVMStructTypeInContext(L->ctx, fields, 3, 0);
    }
    case GJ_TK_TUPLE:
    case GJ_TK_ZIP_ITER: {   /* the items; a zip's iterators */
        LLVMTypeRef fields[64];
        if (t->n > 64)
            return NULL;
        for (int i = 0; i < t->n; i++)
            if (!(fields[i] = gj_lower_type(L, t->elems[i])))
                return NULL;
        return LLVMStructTypeInContext(L->ctx, fields, (unsigned)t->n, 0);
    }
    case GJ_TK_RANGE_ITER: {
        LLVMTypeRef it = gj_lower_type(L, t->elems[0]);
        /* cur, values left (unsigned), step, stop (lower_iter.c) */
        LLVMTypeRef fields[4] = {it, it, it, it};
        return it ? LLVMStructTypeInContext(L->ctx, fields, 4, 0) : NULL;
    }
    case GJ_TK_SLICE: {   /* start, stop, step as int64; omitted parts are in the type */
        LLVMTypeRef fields[3] = {L->i64, L->i64, L->i64};
        return LLVMStructTypeInContext(L->ctx, fields, 3, 0);
    }
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_ARRAY_ITER: {   /* the tuple or array, the next index */
        LLVMTypeRef fields[2] = {gj_lower_type(L, t->elems[1]), L->i64};
        return fields[0] ? LLVMStructTypeInContext(L->ctx, fields, 2, 0) : NULL;
    }
    case GJ_TK_NONE:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_STR: return L->empty;
    case GJ_TK_WEAK_INT:
    case GJ_TK_WEAK_FLOAT:
    case GJ_TK_WEAK_COMPLEX: return NULL;
    }
    return NULL;
}

LLVMValueRef gj_lower_truth(GjLower *L, LLVMValueRef v, const GjType *t) {
    switch (gj_lower_class(t)) {
    case GJ_NC_BOOL: return v;
    case GJ_NC_SINT:
    case GJ_NC_UINT: return LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    case GJ_NC_FLOAT:   /* unordered: bool(nan) is True */
        return LLVMBuildFCmp(L->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    case GJ_NC_COMPLEX: {
        LLVMValueRef re = gj_lower_re(L, v), im = gj_lower_im(L, v);
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(re));
        return LLVMBuildOr(L->b, LLVMBuildFCmp(L->b, LLVMRealUNE, re, zero, ""),
                           LLVMBuildFCmp(L->b, LLVMRealUNE, im, zero, ""), "");
    }
    case GJ_NC_OTHER: break;
    }
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "cannot take the truth value of %s", t->name);
    return NULL;
}

/* How a value of class [from] becomes class [to] when `to` is at least as
   wide (or the classes differ); a narrower int or float target truncates.
   To-bool is a truth test, not a cast. */
static const LLVMOpcode cast_ops[4][4] = {
    /*            BOOL          SINT         UINT         FLOAT       */
    [GJ_NC_BOOL] = {0, LLVMZExt, LLVMZExt, LLVMUIToFP},
    [GJ_NC_SINT] = {0, LLVMSExt, LLVMSExt, LLVMSIToFP},
    [GJ_NC_UINT] = {0, LLVMZExt, LLVMZExt, LLVMUIToFP},
    [GJ_NC_FLOAT] = {0, LLVMFPToSI, LLVMFPToUI, LLVMFPExt},
};

/* Element-wise conversion of aggregates of the same shape (tuples, iterators). */
static LLVMValueRef cast_fields(GjLower *L, LLVMValueRef v, const GjType *const *from,
                                const GjType *const *to, int n, LLVMTypeRef ty) {
    LLVMValueRef out = LLVMGetUndef(ty);
    for (int i = 0; i < n; i++) {
        LLVMValueRef e = LLVMBuildExtractValue(L->b, v, (unsigned)i, "");
        if (!(e = gj_lower_cast(L, e, from[i], to[i])))
            return NULL;
        out = LLVMBuildInsertValue(L->b, out, e, (unsigned)i, "");
    }
    return out;
}

const GjType *gj_lower_part_type(const GjType *t) {
    return gj_ty_concrete(t)->bits == 64 ? &gj_ty_float32 : &gj_ty_float64;
}

/* Casts that involve a complex type: parts one by one; a real becomes the
   real part (imaginary 0); a complex becomes a real by dropping the
   imaginary part, as NumPy's astype does. */
static LLVMValueRef complex_cast(GjLower *L, LLVMValueRef v, const GjType *from, const GjType *to) {
    GjNumClass fc = gj_lower_class(from), tc = gj_lower_class(to);
    if (tc == GJ_NC_BOOL)
        return gj_lower_truth(L, v, from);
    if (fc == GJ_NC_COMPLEX && tc != GJ_NC_COMPLEX)
        return gj_lower_cast(L, gj_lower_re(L, v), gj_lower_part_type(from), to);
    const GjType *pt = gj_lower_part_type(to);
    if (fc != GJ_NC_COMPLEX) {
        LLVMValueRef re = gj_lower_cast(L, v, from, pt);
        return re ? gj_lower_complex(L, re, LLVMConstNull(LLVMTypeOf(re))) : NULL;
    }
    LLVMValueRef re = gj_lower_cast(L, gj_lower_re(L, v), gj_lower_part_type(from), pt);
    LLVMValueRef im = gj_lower_cast(L, gj_lower_im(L, v), gj_lower_part_type(from), pt);
    return re && im ? gj_lower_complex(L, re, im) : NULL;
}

/* A float the integer type cannot hold (nan, inf, out of range) converts to
   an unspecified value (docs/typing.md), not to LLVM's poison: a branch or
   a divisor that depends on poison is undefined behaviour, which O3 may turn
   into an endless loop or drop the code around it.  freeze picks one value. */
static LLVMValueRef float_to_int(GjLower *L, LLVMOpcode op, LLVMValueRef v, LLVMTypeRef ty) {
    return LLVMBuildFreeze(L->b, LLVMBuildCast(L->b, op, v, ty, ""), "");
}

LLVMValueRef gj_lower_cast(GjLower *L, LLVMValueRef v, const GjType *from, const GjType *to) {
    from = gj_ty_concrete(from);
    to = gj_ty_concrete(to);
    if (from == to)
        return v;
    GjNumClass fc = gj_lower_class(from), tc = gj_lower_class(to);
    LLVMTypeRef ty = gj_lower_type(L, to);
    if ((fc == GJ_NC_COMPLEX || tc == GJ_NC_COMPLEX) && fc != GJ_NC_OTHER && tc != GJ_NC_OTHER)
        return complex_cast(L, v, from, to);
    if (fc != GJ_NC_OTHER && tc != GJ_NC_OTHER && ty) {
        if (tc == GJ_NC_BOOL)
            return gj_lower_truth(L, v, from);
        if (fc == GJ_NC_FLOAT && tc != GJ_NC_FLOAT && to->bits < 64)   /* as NumPy on x86: */
            return LLVMBuildTrunc(L->b, float_to_int(L, LLVMFPToSI, v, L->i64), ty, ""); /* wrap */
        LLVMOpcode op = cast_ops[fc][tc];
        if (op == LLVMFPToSI || op == LLVMFPToUI)
            return float_to_int(L, op, v, ty);
        if (op == LLVMSExt || op == LLVMZExt || op == LLVMFPExt) {
            int fb = fc == GJ_NC_BOOL ? 1 : from->bits;
            if (fb == to->bits)
                return v; /* int32 <-> uint32: same bits */
            if (fb > to->bits)
                op = op == LLVMFPExt ? LLVMFPTrunc : LLVMTrunc;
        }
        return LLVMBuildCast(L->b, op, v, ty, "");
    }
    if (from->kind == GJ_TK_ARRAY && to->kind == GJ_TK_ARRAY && from->dtype == to->dtype &&
        from->ndim == to->ndim)
        return v; /* a C or F array seen as layout A: the same {data, shape, strides} */
    if (from->kind == GJ_TK_TUPLE && to->kind == GJ_TK_TUPLE && from->n == to->n && ty)
        return cast_fields(L, v, from->elems, to->elems, from->n, ty);
    if (from->kind == GJ_TK_RANGE_ITER && to->kind == GJ_TK_RANGE_ITER && ty) {
        /* cur, step and stop as values; the count left is
           unsigned (unification only widens, so each fits) */
        const GjType *left_from = gj_ty_int(gj_ty_concrete(from->elems[0])->bits, 0);
        const GjType *left_to = gj_ty_int(gj_ty_concrete(to->elems[0])->bits, 0);
        const GjType *f4[4] = {from->elems[0], left_from, from->elems[0], from->elems[0]};
        const GjType *t4[4] = {to->elems[0], left_to, to->elems[0], to->elems[0]};
        return cast_fields(L, v, f4, t4, 4, ty);
    }
    if (ty == L->empty && gj_lower_type(L, from) == L->empty)
        return LLVMGetUndef(ty); /* compile-time objects carry no value */
    gj_error(L->c, GJ_DIAG_LOWERING, L->loc, "cannot convert %s to %s", from->name, to->name);
    return NULL;
}

/* ---- parts of values ------------------------------------------------------------ */

LLVMValueRef gj_lower_re(GjLower *L, LLVMValueRef z) {
    return LLVMBuildExtractValue(L->b, z, 0, "");
}

LLVMValueRef gj_lower_im(GjLower *L, LLVMValueRef z) {
    return LLVMBuildExtractValue(L->b, z, 1, "");
}

LLVMValueRef gj_lower_complex(GjLower *L, LLVMValueRef re, LLVMValueRef im) {
    LLVMTypeRef fields[2] = {LLVMTypeOf(re), LLVMTypeOf(re)};
    LLVMValueRef z = LLVMGetUndef(LLVMStructTypeInContext(L->ctx, fields, 2, 0));
    z = LLVMBuildInsertValue(L->b, z, re, 0, "");
    return LLVMBuildInsertValue(L->b, z, im, 1, "");
}

LLVMValueRef gj_lower_array_dim(GjLower *L, LLVMValueRef arr, unsigned field, int k) {
    LLVMValueRef dims = LLVMBuildExtractValue(L->b, arr, field, "");
    return LLVMBuildExtractValue(L->b, dims, (unsigned)k, "");
}

LLVMValueRef gj_lower_wrap_index(GjLower *L, LLVMValueRef i, LLVMValueRef n) {
    LLVMValueRef negative = LLVMBuildICmp(L->b, LLVMIntSLT, i, gj_lower_i64(L, 0), "");
    return LLVMBuildSelect(L->b, negative, LLVMBuildAdd(L->b, i, n, ""), i, "");
}

/* ---- floating-point flags ------------------------------------------------------ */

/* LLVM's fast-math flags for GjFastMath bits fm (the GJ_FASTMATH_FLAGS). */
static LLVMFastMathFlags llvm_fast_math_flags(unsigned fm) {
    static const struct {
        unsigned bit;
        LLVMFastMathFlags llvm;
    } map[] = {
        {GJ_FM_NNAN, LLVMFastMathNoNaNs},
        {GJ_FM_NINF, LLVMFastMathNoInfs},
        {GJ_FM_NSZ, LLVMFastMathNoSignedZeros},
        {GJ_FM_ARCP, LLVMFastMathAllowReciprocal},
        {GJ_FM_CONTRACT, LLVMFastMathAllowContract},
        {GJ_FM_AFN, LLVMFastMathApproxFunc},
        {GJ_FM_REASSOC, LLVMFastMathAllowReassoc},
    };
    LLVMFastMathFlags flags = LLVMFastMathNone;
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (fm & map[k].bit)
            flags |= map[k].llvm;
    return flags;
}

static LLVMValueRef with_flags(LLVMValueRef v, LLVMFastMathFlags flags) {
    if (flags != LLVMFastMathNone && v && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
        LLVMSetFastMathFlags(v, flags);
    return v;
}

LLVMValueRef gj_lower_fast(GjLower *L, LLVMValueRef v) {
    return with_flags(v, llvm_fast_math_flags(L->opt->fastmath));
}

/* Contraction happens where both the multiply and the add carry `contract`:
   LLVM then selects one FMA (fma.rn on NVPTX, vfmadd on an x86 host with
   FMA); a multiply or add left alone stays .rn in PTX, so ptxas fuses
   nothing behind LLVM's back and contract=False is NumPy's rounding. */
LLVMValueRef gj_lower_arith(GjLower *L, LLVMValueRef v) {
    LLVMFastMathFlags flags = llvm_fast_math_flags(L->opt->fastmath);
    return with_flags(v, L->opt->contract ? flags | LLVMFastMathAllowContract : flags);
}

LLVMValueRef gj_lower_fadd(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFAdd(L->b, a, b, ""));
}

LLVMValueRef gj_lower_fsub(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFSub(L->b, a, b, ""));
}

LLVMValueRef gj_lower_fmul(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_fast(L, LLVMBuildFMul(L->b, a, b, ""));
}

LLVMValueRef gj_lower_fneg(GjLower *L, LLVMValueRef a) { return LLVMBuildFNeg(L->b, a, ""); }

LLVMValueRef gj_lower_arith_fadd(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_arith(L, LLVMBuildFAdd(L->b, a, b, ""));
}

LLVMValueRef gj_lower_arith_fsub(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_arith(L, LLVMBuildFSub(L->b, a, b, ""));
}

LLVMValueRef gj_lower_arith_fmul(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    return gj_lower_arith(L, LLVMBuildFMul(L->b, a, b, ""));
}

LLVMValueRef gj_lower_approx(GjLower *L, GjApprox op, LLVMValueRef *args) {
    unsigned needs = op == GJ_APPROX_DIV ? GJ_FM_ARCP : GJ_FM_AFN;
    if (!(L->opt->fastmath & needs) || !L->target->approx ||
        LLVMGetTypeKind(LLVMTypeOf(args[0])) != LLVMFloatTypeKind)
        return NULL;
    return L->target->approx(L, op, args, (L->opt->fastmath & GJ_FM_FTZ) != 0);
}

/* A division by a constant stays an fdiv: under arcp LLVM multiplies by the
   reciprocal instead, which is cheaper than div.approx and as accurate. */
LLVMValueRef gj_lower_fdiv(GjLower *L, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef args[2] = {a, b};
    LLVMValueRef r = LLVMIsAConstantFP(b) ? NULL : gj_lower_approx(L, GJ_APPROX_DIV, args);
    if (r)
        return r;
    /* afn is for functions, but LLVM 21 lets it approximate an fdiv too: a
       division is approximate only under arcp (as in numba), so without arcp
       the fdiv does not carry afn */
    unsigned fm = L->opt->fastmath;
    if (!(fm & GJ_FM_ARCP))
        fm &= ~(unsigned)GJ_FM_AFN;
    return with_flags(LLVMBuildFDiv(L->b, a, b, ""), llvm_fast_math_flags(fm));
}

LLVMValueRef gj_lower_sqrt(GjLower *L, LLVMValueRef a) {
    LLVMValueRef r = gj_lower_approx(L, GJ_APPROX_SQRT, &a);
    return r ? r : gj_lower_float_intrinsic(L, "llvm.sqrt", a);
}

/* ---- calls ---------------------------------------------------------- */

LLVMValueRef gj_lower_call_intrinsic(GjLower *L, const char *name, LLVMTypeRef overload,
                                     LLVMValueRef *args, unsigned nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        gj_error(L->c, GJ_DIAG_INTERNAL, L->loc, "LLVM has no intrinsic %s", name);
        return NULL;
    }
    size_t n_over = overload ? 1 : 0;
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(L->mod, id, &overload, n_over);
    LLVMTypeRef fty = LLVMIntrinsicGetType(L->ctx, id, &overload, n_over);
    return LLVMBuildCall2(L->b, fty, decl, args, nargs, "");
}

/* Half goes through float: every intrinsic used here is exact that way. */
LLVMValueRef gj_lower_float_intrinsic(GjLower *L, const char *name, LLVMValueRef a) {
    LLVMTypeRef ty = LLVMTypeOf(a);
    int half = LLVMGetTypeKind(ty) == LLVMHalfTypeKind;
    if (half)
        a = LLVMBuildFPExt(L->b, a, LLVMFloatTypeInContext(L->ctx), "");
    LLVMValueRef r = gj_lower_fast(L, gj_lower_call_intrinsic(L, name, LLVMTypeOf(a), &a, 1));
    return half && r ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

LLVMValueRef gj_lower_fabs(GjLower *L, LLVMValueRef a) {
    return gj_lower_float_intrinsic(L, "llvm.fabs", a);
}

LLVMValueRef gj_lower_copysign(GjLower *L, LLVMValueRef mag, LLVMValueRef sign) {
    LLVMValueRef args[2] = {mag, sign};
    return gj_lower_call_intrinsic(L, "llvm.copysign", LLVMTypeOf(mag), args, 2);
}

/* The math library's <base> (libdevice's __nv_<base>[f] on NVPTX, libm's
   <base>[f] on the host: target.h) on args whose first is a float, giving
   that float type; half goes through float, as libdevice has no half
   versions.  Other arguments keep their own LLVM types (ldexp's i32,
   frexp's pointer). */
static LLVMValueRef libdevice_call(GjLower *L, const char *base, LLVMValueRef *args,
                                   unsigned nargs) {
    LLVMTypeRef ty = LLVMTypeOf(args[0]);
    LLVMTypeKind kind = LLVMGetTypeKind(ty);
    LLVMTypeRef cty = kind == LLVMDoubleTypeKind ? ty : LLVMFloatTypeInContext(L->ctx);
    LLVMValueRef cargs[4];
    LLVMTypeRef ptys[4];
    if (nargs > 4)
        nargs = 4;
    for (unsigned i = 0; i < nargs; i++) {
        int half = LLVMGetTypeKind(LLVMTypeOf(args[i])) == LLVMHalfTypeKind;
        cargs[i] = half ? LLVMBuildFPExt(L->b, args[i], cty, "") : args[i];
        ptys[i] = LLVMTypeOf(cargs[i]);
    }

    char name[64];
    int fast = (L->opt->fastmath & GJ_FM_AFN) && kind != LLVMDoubleTypeKind;
    L->target->math_name(name, sizeof name, base, kind == LLVMDoubleTypeKind, fast);
    LLVMTypeRef fty = LLVMFunctionType(cty, ptys, nargs, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, name);
    if (!fn)
        fn = LLVMAddFunction(L->mod, name, fty);
    LLVMValueRef r = LLVMBuildCall2(L->b, fty, fn, cargs, nargs, "");
    return kind == LLVMHalfTypeKind ? LLVMBuildFPTrunc(L->b, r, ty, "") : r;
}

LLVMValueRef gj_lower_libdevice(GjLower *L, const char *base, LLVMValueRef *args, unsigned nargs) {
    return libdevice_call(L, base, args, nargs);
}

LLVMValueRef gj_lower_math1(GjLower *L, const char *base, LLVMValueRef x) {
    return libdevice_call(L, base, &x, 1);
}

LLVMValueRef gj_lower_math2(GjLower *L, const char *base, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef args[2] = {x, y};
    return libdevice_call(L, base, args, 2);
}
