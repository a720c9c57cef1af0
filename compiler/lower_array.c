/*
 * lower_array.c - arrays in lowering: the {data, shape[n], strides[n]}
 * value, element addresses (negative indices wrap; a C or F layout skips the
 * contiguous axis's stride load), loads and stores with the dtype's memory
 * form (bool as i8), views from slicing with Python's slice.indices()
 * clamping, and frozen NumPy arrays as internal constants in the target's
 * constant address space (64 KiB per module, as CUDA's constant memory).
 * The data pointer's address space is the array type's (GjAddrSpace).  The
 * memory family of intrinsics (shared.array, local.array,
 * const.array_like: GJ_INTR_MEMORY_ROWS) is lowered here too: static shared
 * arrays laid out module-wide at 16-byte boundaries (the total goes into
 * the launch plan), dynamic shared memory through the target, local arrays
 * as entry-block allocas.
 *
 * Called from lower.c's instruction walk; shares GjLower through
 * lower_base.h.  Errors are LOWERING diagnostics at L->loc.
 */
#include "lower_array.h"

#include <stdio.h>
#include <string.h>

#include "lower_error.h"

/* ---- arrays ----------------------------------------------------------------- */

enum { MAX_AXES = 32 };   /* of an indexed array: typeinfer.h's GJ_MAX_NDIM_INDEX */

LLVMValueRef gj_lower_array_size(GjLower *L, LLVMValueRef arr, const GjType *at) {
    LLVMValueRef n = gj_lower_i64(L, 1);
    for (int k = 0; k < at->ndim; k++)
        n = LLVMBuildMul(L->b, n, gj_lower_array_dim(L, arr, 1, k), "");
    return n;
}

/* The i64 tuple (as a struct) of field 1 (shape) or 2 (strides). */
LLVMValueRef gj_lower_array_dims_tuple(GjLower *L, LLVMValueRef arr, const GjType *at,
                                       unsigned field, LLVMTypeRef tuple_ty) {
    LLVMValueRef out = LLVMGetUndef(tuple_ty);
    for (int k = 0; k < at->ndim; k++)
        out =
            LLVMBuildInsertValue(L->b, out, gj_lower_array_dim(L, arr, field, k), (unsigned)k, "");
    return out;
}

/* LLVM's element type in memory: bool arrays hold bytes. */
static LLVMTypeRef element_type(GjLower *L, const GjType *dtype) {
    return dtype->kind == GJ_TK_BOOL ? L->i8 : gj_lower_type(L, dtype);
}

/* The alignment an element access may assume: a complex only its parts'
   (NumPy aligns complex128 to 8 bytes). */
static unsigned element_align(const GjType *dtype) {
    size_t n = gj_ty_itemsize(dtype);
    return (unsigned)(dtype->kind == GJ_TK_COMPLEX ? n / 2 : n);
}

/* Index k of idx (an integer, or a tuple of ndim integers) as an i64,
   wrapped: a negative index counts from the end of axis k (unsigned ones
   never are); *check gets its bounds check. */
static LLVMValueRef array_index(GjLower *L, LLVMValueRef arr, LLVMValueRef idx, const GjType *it,
                                int k, GjIndexCheck *check) {
    if (it->kind == GJ_TK_TUPLE) {
        idx = LLVMBuildExtractValue(L->b, idx, (unsigned)k, "");
        it = it->elems[k];
    }
    LLVMValueRef i = gj_lower_cast(L, idx, it, &gj_ty_int64);
    LLVMValueRef n = gj_lower_array_dim(L, arr, 1, k);
    LLVMValueRef wrapped = i && gj_lower_class(it) == GJ_NC_SINT ? gj_lower_wrap_index(L, i, n) : i;
    *check = (GjIndexCheck){i, wrapped, n, k, gj_lower_class(it) == GJ_NC_UINT};
    return wrapped;
}

/* The wrapped indices of the n axes that `fixed` (NULL: all) marks, checked
   against their extents when there is a subject (boundscheck); out[k] gets
   axis k's.  0 after an error. */
static int array_indices(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                         const GjType *it, const char *fixed, const char *subject,
                         LLVMValueRef *out) {
    GjIndexCheck ix[MAX_AXES];
    int n = 0;
    for (int k = 0; k < at->ndim; k++) {
        if (fixed && !fixed[k])
            continue;
        if (!(out[k] = array_index(L, arr, idx, it, k, &ix[n++])))
            return 0;
    }
    return !subject || gj_lower_check_bounds(L, subject, GJ_ERROR_INDEX, n, ix) == GJ_OK;
}

/* Address of arr[idx]: data + sum(idx_k * stride_k) bytes.  The contiguous
   axis of a C or F array steps by the itemsize instead (a typed GEP), which
   is what lets the backend fold the address into one mul.wide + add. */
LLVMValueRef gj_lower_element_ptr(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                  const GjType *it, const char *subject) {
    int ndim = at->ndim;
    int contiguous = at->layout == GJ_LAYOUT_C ? ndim - 1 : at->layout == GJ_LAYOUT_F ? 0 : -1;
    LLVMValueRef index[MAX_AXES];
    if (ndim > MAX_AXES)
        return gj_lower_fail(L, "internal: %s has more than %d axes", at->name, MAX_AXES);
    if (!array_indices(L, arr, at, idx, it, NULL, subject, index))
        return NULL;
    LLVMValueRef data = LLVMBuildExtractValue(L->b, arr, 0, "");
    LLVMValueRef offset = NULL;
    for (int k = 0; k < ndim; k++) {
        if (k == contiguous)
            continue;
        LLVMValueRef bytes = LLVMBuildMul(L->b, index[k], gj_lower_array_dim(L, arr, 2, k), "");
        offset = offset ? LLVMBuildAdd(L->b, offset, bytes, "") : bytes;
    }
    LLVMValueRef p = data;
    if (offset)
        p = LLVMBuildInBoundsGEP2(L->b, L->i8, p, &offset, 1, "");
    if (contiguous >= 0)
        p = LLVMBuildInBoundsGEP2(L->b, element_type(L, at->dtype), p, &index[contiguous], 1, "");
    return p;
}

LLVMValueRef gj_lower_load_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                   const GjType *it, const char *subject) {
    LLVMValueRef p = gj_lower_element_ptr(L, arr, at, idx, it, subject);
    if (!p)
        return NULL;
    LLVMValueRef v = LLVMBuildLoad2(L->b, element_type(L, at->dtype), p, "");
    LLVMSetAlignment(v, element_align(at->dtype));
    if (at->dtype->kind == GJ_TK_BOOL)
        v = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "");
    return v;
}

GjStatus gj_lower_store_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                const GjType *it, LLVMValueRef v, const GjType *vt,
                                const char *subject) {
    LLVMValueRef p = gj_lower_element_ptr(L, arr, at, idx, it, subject);
    if (!p || !(v = gj_lower_cast(L, v, vt, at->dtype)))
        return GJ_ERR;
    if (at->dtype->kind == GJ_TK_BOOL)
        v = LLVMBuildZExt(L->b, v, L->i8, "");
    LLVMSetAlignment(LLVMBuildStore(L->b, v, p), element_align(at->dtype));
    return GJ_OK;
}

/* ---- views (slicing) -------------------------------------------------------- */

/* Python's slice.indices() for one axis of extent n: the first index, the
   number of items and the step of start:stop:step (st says which parts are
   omitted).  Out-of-range bounds clamp as in Python; a step of 0 (a
   ValueError in Python, which a kernel cannot raise) gives no items. */
static void slice_bounds(GjLower *L, LLVMValueRef sl, const GjType *st, LLVMValueRef n,
                         LLVMValueRef *start_out, LLVMValueRef *len_out, LLVMValueRef *step_out) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef zero = gj_lower_i64(L, 0), one = gj_lower_i64(L, 1), minus1 = gj_lower_i64(L, -1);
    LLVMValueRef step =
        st->elems[2]->kind == GJ_TK_NONE ? one : LLVMBuildExtractValue(b, sl, 2, "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, step, zero, "");
    LLVMValueRef lower = LLVMBuildSelect(b, neg, minus1, zero, "");
    LLVMValueRef upper = LLVMBuildSelect(b, neg, LLVMBuildSub(b, n, one, ""), n, "");
    LLVMValueRef bound[2];
    for (unsigned k = 0; k < 2; k++) {
        if (st->elems[k]->kind == GJ_TK_NONE) {   /* start: lower/upper end; stop: the other */
            bound[k] = k == 0 ? LLVMBuildSelect(b, neg, upper, lower, "")
                              : LLVMBuildSelect(b, neg, lower, upper, "");
            continue;
        }
        LLVMValueRef x = LLVMBuildExtractValue(b, sl, k, "");
        LLVMValueRef below = LLVMBuildICmp(b, LLVMIntSLT, x, zero, "");
        LLVMValueRef wrapped = LLVMBuildAdd(b, x, n, "");
        LLVMValueRef low =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, wrapped, zero, ""), lower, wrapped, "");
        LLVMValueRef high =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGE, x, n, ""), upper, x, "");
        bound[k] = LLVMBuildSelect(b, below, low, high, "");
    }
    /* step > 0: start < stop ? (stop - start - 1) / step + 1 : 0; step < 0 mirrored. */
    LLVMValueRef span = LLVMBuildSelect(b, neg, LLVMBuildSub(b, bound[0], bound[1], ""),
                                        LLVMBuildSub(b, bound[1], bound[0], ""), "");
    LLVMValueRef stride = LLVMBuildSelect(b, neg, LLVMBuildNeg(b, step, ""), step, "");
    LLVMValueRef nonzero = LLVMBuildICmp(b, LLVMIntSGT, stride, zero, "");
    LLVMValueRef safe = LLVMBuildSelect(b, nonzero, stride, one, "");
    LLVMValueRef count =
        LLVMBuildAdd(b, LLVMBuildSDiv(b, LLVMBuildSub(b, span, one, ""), safe, ""), one, "");
    LLVMValueRef any = LLVMBuildAnd(b, nonzero, LLVMBuildICmp(b, LLVMIntSGT, span, zero, ""), "");
    *start_out = bound[0];
    *len_out = LLVMBuildSelect(b, any, count, zero, "");
    *step_out = step;
}

/* arr[idx] as a view (rt): integers fix their axis, slices keep theirs
   with a new extent and stride, missing trailing indices are `:`. */
LLVMValueRef gj_lower_array_view(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                 const GjType *it, const GjType *rt, const char *subject) {
    int nidx = it->kind == GJ_TK_TUPLE ? it->n : 1;
    char fixed[MAX_AXES] = {0};
    LLVMValueRef index[MAX_AXES];
    if (at->ndim > MAX_AXES)
        return gj_lower_fail(L, "internal: %s has more than %d axes", at->name, MAX_AXES);
    for (int k = 0; k < at->ndim && k < nidx; k++)
        fixed[k] = (it->kind == GJ_TK_TUPLE ? it->elems[k] : it)->kind != GJ_TK_SLICE;
    if (!array_indices(L, arr, at, idx, it, fixed, subject, index))
        return NULL;
    LLVMValueRef offset = gj_lower_i64(L, 0);
    LLVMValueRef dims = LLVMGetUndef(LLVMArrayType2(L->i64, (uint64_t)rt->ndim));
    LLVMValueRef strides = dims;
    unsigned kept = 0;
    for (int k = 0; k < at->ndim; k++) {
        const GjType *item = k >= nidx ? NULL : it->kind == GJ_TK_TUPLE ? it->elems[k] : it;
        LLVMValueRef n = gj_lower_array_dim(L, arr, 1, k),
                     stride = gj_lower_array_dim(L, arr, 2, k);
        if (fixed[k]) {
            offset = LLVMBuildAdd(L->b, offset, LLVMBuildMul(L->b, index[k], stride, ""), "");
            continue;
        }
        LLVMValueRef start = gj_lower_i64(L, 0), len = n, step = gj_lower_i64(L, 1);
        if (item) {
            LLVMValueRef sl =
                it->kind == GJ_TK_TUPLE ? LLVMBuildExtractValue(L->b, idx, (unsigned)k, "") : idx;
            slice_bounds(L, sl, item, n, &start, &len, &step);
        }
        offset = LLVMBuildAdd(L->b, offset, LLVMBuildMul(L->b, start, stride, ""), "");
        dims = LLVMBuildInsertValue(L->b, dims, len, kept, "");
        strides =
            LLVMBuildInsertValue(L->b, strides, LLVMBuildMul(L->b, stride, step, ""), kept, "");
        kept++;
    }
    if ((int)kept != rt->ndim)
        return gj_lower_fail(L, "internal: view of %s has %u axes, not %d", at->name, kept,
                             rt->ndim);
    /* A plain GEP, not inbounds: an empty view may start one past the end. */
    LLVMValueRef data = LLVMBuildExtractValue(L->b, arr, 0, "");
    data = LLVMBuildGEP2(L->b, L->i8, data, &offset, 1, "");
    LLVMValueRef out = LLVMGetUndef(gj_lower_type(L, rt));
    out = LLVMBuildInsertValue(L->b, out, data, 0, "");
    out = LLVMBuildInsertValue(L->b, out, dims, 1, "");
    return LLVMBuildInsertValue(L->b, out, strides, 2, "");
}

/* ---- frozen arrays (constant memory) ---------------------------------------- */

enum { CONST_MEMORY_BYTES = 64 * 1024 };   /* per module, as CUDA has it */

uint64_t gj_lower_const_bytes(GjLower *L) {
    uint64_t n = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(L->mod); g; g = LLVMGetNextGlobal(g)) {
        LLVMTypeRef ty = LLVMGlobalGetValueType(g);
        if (LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == L->target->addrspace[GJ_AS_CONST] &&
            LLVMGetTypeKind(ty) == LLVMArrayTypeKind)
            n += LLVMGetArrayLength2(ty);
    }
    return n;
}

/* A frozen NumPy array as a readonly array value over an internal constant
   holding its bytes; equal arrays (also read by several device functions)
   share one constant, named by a hash of their bytes. */
LLVMValueRef gj_lower_const_array(GjLower *L, const GjConstArray *a, const GjType *rt) {
    uint64_t h = 1469598103934665603ull;   /* FNV-1a over dtype and bytes */
    for (const char *p = a->dtype; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    for (size_t i = 0; i < a->nbytes; i++)
        h = (h ^ ((const unsigned char *)a->data)[i]) * 1099511628211ull;
    char name[48];
    snprintf(name, sizeof name, "gj.const.%016llx.%zu", (unsigned long long)h, a->nbytes);
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, name);
    if (!g) {
        uint64_t used = gj_lower_const_bytes(L);
        if (used + a->nbytes > CONST_MEMORY_BYTES)
            return gj_lower_fail(
                L,
                "module-level arrays need %llu bytes of constant memory, more than "
                "the %d KiB a kernel has; pass large arrays as kernel arguments",
                (unsigned long long)(used + a->nbytes), CONST_MEMORY_BYTES / 1024);
        static const char zero = 0;
        g = gj_lower_const_global(L, name, a->nbytes ? a->data : &zero, a->nbytes ? a->nbytes : 1,
                                  LLVMInternalLinkage, 16);
    }
    LLVMValueRef v = LLVMGetUndef(gj_lower_type(L, rt));
    v = LLVMBuildInsertValue(L->b, v, g, 0, "");
    for (unsigned field = 1; field <= 2; field++) {
        LLVMValueRef dims = LLVMGetUndef(LLVMArrayType2(L->i64, (uint64_t)a->ndim));
        for (int k = 0; k < a->ndim; k++)
            dims = LLVMBuildInsertValue(L->b, dims,
                                        gj_lower_i64(L, field == 1 ? a->shape[k] : a->strides[k]),
                                        (unsigned)k, "");
        v = LLVMBuildInsertValue(L->b, v, dims, field, "");
    }
    return v;
}

/* ---- memory spaces: shared.array, local.array, const.array_like --------------- */

/* Static shared memory is laid out module-wide (the kernel and every device
   function it calls), each array at a 16-byte boundary.  The running total
   is the initializer of an internal constant, so code lowered before the
   total is known (the CPU target's dynamic shared memory starts after the
   static arrays) can load it, and O3 folds the load to the final value. */
#define SHARED_STATIC_TOTAL "gj.shared_static_bytes"   /* gpujit's own name (symbol.h) */
enum {
    SHARED_ALIGN = 16,
    MAX_STATIC_SHARED = 48 * 1024,   /* bytes a kernel may declare statically (CUDA) */
    MAX_MEMORY_NDIM = 32,
};

static LLVMValueRef shared_total_global(GjLower *L) {
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, SHARED_STATIC_TOTAL);
    if (!g) {
        g = LLVMAddGlobal(L->mod, L->i64, SHARED_STATIC_TOTAL);
        LLVMSetInitializer(g, gj_lower_i64(L, 0));
        LLVMSetGlobalConstant(g, 1);
        LLVMSetLinkage(g, LLVMInternalLinkage);
    }
    return g;
}

LLVMValueRef gj_lower_shared_static_total(GjLower *L) {
    LLVMValueRef v = LLVMBuildLoad2(L->b, L->i64, shared_total_global(L), "");
    LLVMSetAlignment(v, 8);
    return v;
}

uint64_t gj_lower_shared_finish(GjLower *L) {
    LLVMValueRef g = LLVMGetNamedGlobal(L->mod, SHARED_STATIC_TOTAL);
    if (!g)
        return 0;
    uint64_t total = LLVMConstIntGetZExtValue(LLVMGetInitializer(g));
    if (!LLVMGetFirstUse(g))
        LLVMDeleteGlobal(g);   /* NVPTX: only the layout used it */
    return total;
}

/* The offset of `bytes` more bytes of static shared memory, or -1 with a
   diagnostic when the kernel's static shared memory would pass CUDA's
   48 KiB. */
static int64_t shared_layout(GjLower *L, uint64_t bytes) {
    LLVMValueRef g = shared_total_global(L);
    uint64_t offset = LLVMConstIntGetZExtValue(LLVMGetInitializer(g));
    uint64_t end = (offset + bytes + SHARED_ALIGN - 1) / SHARED_ALIGN * SHARED_ALIGN;
    if (end > MAX_STATIC_SHARED) {
        gj_lower_fail(L,
                      "the shared arrays of this kernel (with the device functions it calls) "
                      "need %llu bytes, more than the %d KiB a kernel may declare statically; "
                      "use dynamic shared memory (shape 0) for more",
                      (unsigned long long)end, MAX_STATIC_SHARED / 1024);
        return -1;
    }
    LLVMSetInitializer(g, gj_lower_i64(L, (long long)end));
    return (int64_t)offset;
}

/* A thread's local array: an alloca in the function's entry block (so it
   is allocated once, and SROA can turn a small one into registers), in the
   address space the array type asks for.  NVPTX allocas live in the generic
   space, as clang emits them; the cast to the local space (5) gives
   ld.local/st.local where the array stays in memory. */
static LLVMValueRef local_alloca(GjLower *L, LLVMTypeRef elem, uint64_t count, const GjType *rt) {
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(L->fn);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->ctx);
    LLVMPositionBuilder(b, entry, LLVMGetFirstInstruction(entry));
    LLVMValueRef p = LLVMBuildAlloca(b, LLVMArrayType2(elem, count), "local");
    L->local_bytes += count * gj_ty_itemsize(rt->dtype);
    LLVMSetAlignment(p, 16);
    LLVMTypeRef want = gj_lower_data_ptr(L, rt);
    if (LLVMTypeOf(p) != want)
        p = LLVMBuildAddrSpaceCast(b, p, want, "");
    LLVMDisposeBuilder(b);
    return p;
}

/* The extents of a shape that typing checked is a compile-time constant:
   its lowered value is an LLVM constant (an integer, or a struct of them,
   which the builder folded). */
static int shape_dims(GjLower *L, LLVMValueRef v, const GjType *t, int64_t *dims, int ndim) {
    for (int k = 0; k < ndim; k++) {
        LLVMValueRef d = t->kind == GJ_TK_TUPLE ? LLVMGetAggregateElement(v, (unsigned)k) : v;
        if (!d || !LLVMIsAConstantInt(d)) {
            gj_lower_fail(L, "internal: the shape of a %s is not a constant", t->name);
            return 0;
        }
        dims[k] = LLVMConstIntGetSExtValue(d);
    }
    return 1;
}

/* shared.array(shape, dtype), local.array(shape, dtype): a C-contiguous
   array value over new memory of the call's address space; shape 0 of a
   shared array is the dynamic shared memory, of length bytes // itemsize
   (numba's rule). */
LLVMValueRef gj_lower_memory_array(GjLower *L, const GjIntrCall *call) {
    const GjType *rt = call->rt;
    int64_t dims[MAX_MEMORY_NDIM];
    if (rt->ndim > MAX_MEMORY_NDIM || !shape_dims(L, call->v[0], call->t[0], dims, rt->ndim))
        return NULL;
    LLVMTypeRef elem = element_type(L, rt->dtype);
    uint64_t itemsize = gj_ty_itemsize(rt->dtype), count = 1;
    for (int k = 0; k < rt->ndim; k++)
        count *= (uint64_t)dims[k];
    LLVMValueRef data, extent0 = gj_lower_i64(L, dims[0]);
    if (rt->addrspace == GJ_AS_LOCAL) {
        data = local_alloca(L, elem, count, rt);
    } else if (rt->ndim == 1 && dims[0] == 0) {
        LLVMValueRef bytes;
        data = L->target->shared_dynamic(L, &bytes);
        L->dynamic_shared = 1;
        extent0 = LLVMBuildUDiv(L->b, bytes, gj_lower_i64(L, (long long)itemsize), "");
    } else {
        int64_t offset = shared_layout(L, count * itemsize);
        if (offset < 0)
            return NULL;
        data = L->target->shared_static(L, (uint64_t)offset, count * itemsize);
    }
    LLVMValueRef v = LLVMBuildInsertValue(L->b, LLVMGetUndef(gj_lower_type(L, rt)), data, 0, "");
    LLVMValueRef shape = LLVMGetUndef(LLVMArrayType2(L->i64, (uint64_t)rt->ndim));
    LLVMValueRef strides = shape;
    int64_t stride = (int64_t)itemsize;
    for (int k = rt->ndim; k-- > 0;) {
        shape = LLVMBuildInsertValue(L->b, shape, k == 0 ? extent0 : gj_lower_i64(L, dims[k]),
                                     (unsigned)k, "");
        strides = LLVMBuildInsertValue(L->b, strides, gj_lower_i64(L, stride), (unsigned)k, "");
        stride *= dims[k];
    }
    v = LLVMBuildInsertValue(L->b, v, shape, 1, "");
    return LLVMBuildInsertValue(L->b, v, strides, 2, "");
}

/* const.array_like(ary): ary is a frozen module-level array, which lowers
   to constant memory already (gj_lower_const_array). */
LLVMValueRef gj_lower_const_array_like(GjLower *L, const GjIntrCall *call) {
    (void)L;
    return call->v[0];
}
