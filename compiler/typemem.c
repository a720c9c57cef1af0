/*
 * typemem.c - typing of shared.array, local.array and const.array_like
 * (typemem.h).
 *
 * shared.array(shape, dtype) and local.array(shape, dtype) make a
 * C-contiguous array of `dtype` in the shared or local address space.  The
 * shape must be known at compile time: an integer or a tuple of integers,
 * each a literal, a frozen module-level global, or + - * // of those
 * (TILE + 1); it is read here from the instructions that define the call's
 * arguments (all in the call's block: ir.h), and lowering reads the same
 * extents back from the lowered values, which the LLVM builder has folded
 * into constants.  shared.array(0, dtype) is the dynamic shared memory, a
 * 1-d array sized by the launch, as in numba.  Limits are CUDA's: 48 KiB of
 * static shared memory per array (lower_array.c checks the kernel's sum),
 * 512 KiB of local memory.  const.array_like(ary) takes a module-level
 * array, which typeinfer.c has already typed as a constant-memory array.
 */
#include "typemem.h"

#include <stdio.h>
#include <string.h>

#include "intrinsics.h"

enum {
    MAX_STATIC_SHARED = 48 * 1024,   /* bytes a kernel may declare statically (CUDA) */
    MAX_LOCAL = 512 * 1024,          /* bytes of local memory a thread may have (CUDA) */
    MAX_NDIM = 32,
};

typedef struct MemCall {
    GjCtx *c;
    const GjIns *call;
    const GjType *const *types;
    const GjIns *const *defs;
    const char *fn;          /* "gpujit.shared.array" */
    const char **why;
} MemCall;

static const GjType *refuse(MemCall *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const GjType *refuse(MemCall *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    *m->why = gj_arena_vprintf(&m->c->arena, fmt, ap);
    va_end(ap);
    return NULL;
}

/* The constant an integer literal or frozen global defines temp with, or NULL. */
static const GjConst *const_of(const MemCall *m, int32_t temp) {
    const GjIns *def = m->defs[temp];
    if (def && def->op == GJ_OP_CONST)
        return &def->c;
    if (def && def->op == GJ_OP_GLOBAL && def->global.kind == GJ_GLOBAL_CONST)
        return &def->global.value;
    return NULL;
}

/* An extent: an integer constant, or +, -, * or // of extents (TILE + 1,
   TILE // 2); operands beyond 2**31 are refused, so the arithmetic cannot
   overflow. */
static int const_extent(const MemCall *m, int32_t temp, int64_t *value, int depth) {
    const GjConst *k = const_of(m, temp);
    const GjIns *def = m->defs[temp];
    int64_t a, b;
    if (k && k->kind == GJ_CONST_INT) {
        *value = k->i;
        return 1;
    }
    if (!def || def->op != GJ_OP_BINOP || depth > 8 ||
        !const_extent(m, def->args[0], &a, depth + 1) ||
        !const_extent(m, def->args[1], &b, depth + 1) || a <= -(1LL << 31) || a >= 1LL << 31 ||
        b <= -(1LL << 31) || b >= 1LL << 31)
        return 0;
    if (def->sub == GJ_BIN_ADD)
        *value = a + b;
    else if (def->sub == GJ_BIN_SUB)
        *value = a - b;
    else if (def->sub == GJ_BIN_MUL)
        *value = a * b;
    else if (def->sub == GJ_BIN_FLOORDIV && b != 0)   /* Python's: rounds toward -inf */
        *value = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
    else
        return 0;
    return 1;
}

/* The extents of a constant shape: an extent, or a tuple of them (a tuple
   literal, a frozen tuple global, or one built from extents:
   (TILE, TILE + 1)).  Returns their number, or -1 when the shape is not
   such a constant. */
static int const_shape(const MemCall *m, int32_t temp, int64_t *dims) {
    const GjIns *def = m->defs[temp];
    const GjConst *k = const_of(m, temp);
    if (def && def->op == GJ_OP_BUILD_TUPLE) {
        for (int i = 0; i < def->nargs; i++)
            if (i >= MAX_NDIM || !const_extent(m, def->args[i], &dims[i], 0))
                return -1;
        return def->nargs;
    }
    if (!k || k->kind != GJ_CONST_TUPLE)
        return const_extent(m, temp, &dims[0], 0) ? 1 : -1;
    for (int32_t i = 0; i < k->n; i++) {
        if (i >= MAX_NDIM || k->items[i].kind != GJ_CONST_INT)
            return -1;
        dims[i] = k->items[i].i;
    }
    return k->n;
}

/* "64" or "(3, 4)", for messages. */
static const char *shape_text(const MemCall *m, const int64_t *dims, int ndim) {
    char buf[256] = "";
    for (int i = 0; i < ndim; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%lld", i ? ", " : "",
                 (long long)dims[i]);
    return ndim == 1 ? gj_arena_strdup(&m->c->arena, buf)
                     : gj_arena_printf(&m->c->arena, "(%s)", buf);
}

/* Checks the extents and the total bytes against the space's limit. */
static int check_size(MemCall *m, GjAddrSpace as, const int64_t *dims, int ndim,
                      const GjType *dtype) {
    uint64_t limit = as == GJ_AS_SHARED ? MAX_STATIC_SHARED : MAX_LOCAL;
    uint64_t bytes = gj_ty_itemsize(dtype);
    for (int i = 0; i < ndim; i++) {
        if (dims[i] <= 0) {
            refuse(m, "%s() shape %s has an extent of %lld; each must be positive%s", m->fn,
                   shape_text(m, dims, ndim), (long long)dims[i],
                   as == GJ_AS_SHARED ? " (shape 0 alone asks for dynamic shared memory)" : "");
            return 0;
        }
        bytes = (uint64_t)dims[i] > limit ? limit + 1 : bytes * (uint64_t)dims[i];
        if (bytes > limit) {
            refuse(m, "%s() of shape %s and dtype %s needs more than the %llu KiB %s", m->fn,
                   shape_text(m, dims, ndim), dtype->name, (unsigned long long)limit / 1024,
                   as == GJ_AS_SHARED ? "of shared memory a kernel may declare statically; use "
                                        "dynamic shared memory (shape 0) for more"
                                      : "of local memory a thread may have");
            return 0;
        }
    }
    return 1;
}

/* shared.array(shape, dtype) / local.array(shape, dtype). */
static const GjType *memory_array(MemCall *m, GjAddrSpace as) {
    int64_t dims[MAX_NDIM];
    int ndim = const_shape(m, m->call->args[1], dims);
    if (ndim < 0)
        return refuse(m,
                      "the shape of %s() must be a compile-time constant: an int or a tuple "
                      "of ints, written as literals or module-level globals (frozen when the "
                      "kernel compiles), not a run-time %s%s",
                      m->fn, m->types[m->call->args[1]]->name,
                      as == GJ_AS_SHARED ? "; for a size chosen at launch, use shape 0 (dynamic "
                                           "shared memory) and the launch's sharedmem"
                                         : "");
    if (ndim == 0)
        return refuse(m, "%s() needs at least one dimension", m->fn);
    const GjType *dt = m->types[m->call->args[2]];
    const char *np = dt->kind == GJ_TK_CALLABLE && !dt->callee
                         ? gj_intrinsic_np_type((GjIntrinsic)dt->intrinsic)
                         : NULL;
    const GjType *dtype = np ? gj_ty_from_name(np) : NULL;
    if (!dtype)
        return refuse(m,
                      "the dtype of %s() must be a NumPy scalar type such as numpy.float32, "
                      "not %s",
                      m->fn, dt->name);
    int dynamic = as == GJ_AS_SHARED && ndim == 1 && dims[0] == 0;
    if (!dynamic && !check_size(m, as, dims, ndim, dtype))
        return NULL;
    const GjType *t = gj_ty_array(m->c, dtype, ndim, GJ_LAYOUT_C);
    return t ? gj_ty_array_in(m->c, t, as) : NULL;
}

const GjType *gj_memory_call_type(GjCtx *c, const GjIns *call, const GjType *const *temp_types,
                                  const GjIns *const *defs, int intrinsic, const char **why) {
    MemCall m = {.c = c,
                 .call = call,
                 .types = temp_types,
                 .defs = defs,
                 .fn = gj_intrinsic_name((GjIntrinsic)intrinsic),
                 .why = why};
    GjAddrSpace as = (GjAddrSpace)gj_intrinsic_row((GjIntrinsic)intrinsic)->sub;
    *why = NULL;
    if (as != GJ_AS_CONST)
        return memory_array(&m, as);
    /* const.array_like(ary): a frozen module-level array is in constant memory already */
    const GjType *t = temp_types[call->args[1]];
    if (t->kind != GJ_TK_ARRAY || t->addrspace != GJ_AS_CONST)
        return refuse(&m,
                      "%s() needs a module-level NumPy array (frozen into constant memory "
                      "when the kernel compiles), not %s",
                      m.fn, t->name);
    return t;
}
