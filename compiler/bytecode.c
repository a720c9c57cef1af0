/*
 * bytecode.c - the normaliser: dis instructions of CPython 3.11-3.15 ->
 * GjBcCode, one version-free op set (bytecode.h).  This is the only file
 * that looks at the Python version.
 *
 * Reading guide.  `py_versions` holds, one row per supported minor version,
 * the facts that differ between them where one opname means different
 * things.  `dis_ops` maps every dis opname to a rule: drop it, map it to one
 * GjBcOp, split it in two, reject it naming the Python construct, or one of
 * a few special cases handled in decode_one().  The table is sorted by
 * opname and searched with bsearch.  decode_one() appends 0-3 GjBcIns per
 * dis instruction, with jump targets still as byte offsets;
 * resolve_targets() then turns them into instruction indices.
 *
 * Version quirks absorbed here (checked against dis of 3.11.7, 3.12.1,
 * 3.13.0, 3.14.10 and 3.15.2):
 *   - LOAD_GLOBAL's low oparg bit pushes a NULL: below the global in
 *     3.11/3.12, above it from 3.13;
 *   - a method load (3.11 LOAD_METHOD; LOAD_ATTR with the low bit in 3.12+)
 *     becomes LOAD_ATTR + PUSH_NULL: a bound-method call;
 *   - FOR_ITER: in 3.11 argval is the loop exit; from 3.12 it is END_FOR,
 *     followed by the op that pops the iterator (3.13's POP_TOP, 3.14's
 *     POP_ITER), all of which the exhausted iterator skips, so the exit is
 *     the instruction after them;
 *   - 3.15's iterator takes two stack entries (GET_ITER pushes the iterator
 *     and an index or NULL, POP_ITER pops both): GET_ITER becomes GET_ITER +
 *     PUSH_NULL and FOR_ITER's arg says the iterator is two entries down, so
 *     every depth (SWAP 3 before a return in a loop) stays CPython's;
 *   - 3.12's BINARY_SLICE / STORE_SLICE (a[i:j]) become 3.11's BUILD_SLICE 2
 *     and BINARY_SUBSCR / STORE_SUBSCR; 3.14's BINARY_OP [] is BINARY_SUBSCR;
 *   - 3.11's POP_JUMP_FORWARD/BACKWARD_IF_* and JUMP_IF_*_OR_POP; 3.13's
 *     TO_BOOL (dropped: the consumer applies Python truth itself) and fused
 *     LOAD_FAST_LOAD_FAST / STORE_FAST_STORE_FAST / STORE_FAST_LOAD_FAST;
 *   - 3.14's LOAD_SMALL_INT, borrowed loads (LOAD_FAST_BORROW*), NOT_TAKEN
 *     (dropped), LOAD_COMMON_CONSTANT (AssertionError and NotImplementedError:
 *     LOAD_EXCEPTION, as 3.11-3.13's LOAD_ASSERTION_ERROR; all, any, ...:
 *     refused; 3.15 also loads None, True, False, '' and -1 with it:
 *     constants).
 */
#include "bytecode.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const struct {
    const char *name;
    int flags;
} bc_ops[] = {
#define X(name, flags, doc) {#name, flags},
    GJ_BC_OPS(X)
#undef X
};

const char *gj_bc_op_name(GjBcOp op) { return (unsigned)op < GJ_BC_NOPS ? bc_ops[op].name : "?"; }

int gj_bc_op_flags(GjBcOp op) { return (unsigned)op < GJ_BC_NOPS ? bc_ops[op].flags : 0; }

/* ---- the versions ----------------------------------------------------- */

/* What one opname means on each supported version, where that differs. */
typedef struct PyVersion {
    int minor;                 /* 3.<minor> */
    int null_above_global;     /* LOAD_GLOBAL's NULL goes above the global (3.13+) */
    int attr_method_bit;       /* LOAD_ATTR's low oparg bit is a method load (3.12+) */
    const char *iter_popper;   /* FOR_ITER's argval is END_FOR, then this op pops the
                                  iterator ("" for none: 3.12); NULL: argval is the exit */
    int iter_slots;            /* stack entries an iterator takes (3.15: iterator + index) */
    int common_constants;      /* LOAD_COMMON_CONSTANT loads plain constants too (None,
                                  True...: 3.15), and dis gives them as argval */
} PyVersion;

static const PyVersion py_versions[] = {
    {11, 0, 0, NULL, 1, 0},       {12, 0, 1, "", 1, 0},         {13, 1, 1, "POP_TOP", 1, 0},
    {14, 1, 1, "POP_ITER", 1, 0}, {15, 1, 1, "POP_ITER", 2, 1},
};

#define N_PY_VERSIONS ((int)(sizeof py_versions / sizeof py_versions[0]))

static const PyVersion *find_version(int major, int minor) {
    for (int k = 0; major == 3 && k < N_PY_VERSIONS; k++) {
        if (py_versions[k].minor == minor)
            return &py_versions[k];
    }
    return NULL;
}

/* LOAD_GLOBAL's oparg is its name's index in co_names shifted left once (the
   low bit asks for a NULL) in every version of py_versions; EXTENDED_ARG
   gives the oparg's higher bytes.  In co_code an instruction's inline caches
   are zeroed units (CACHE is opcode 0), which match neither opcode. */
int32_t gj_bc_global_names(int py_major, int py_minor, const unsigned char *code, size_t n,
                           int load_global, int extended_arg, int32_t nnames, int32_t *out) {
    if (!find_version(py_major, py_minor))
        return -1;
    int32_t count = 0;
    uint32_t ext = 0;
    for (size_t k = 0; k + 1 < n; k += 2) {
        uint32_t arg = ext | code[k + 1];
        ext = code[k] == extended_arg ? arg << 8 : 0;
        if (code[k] != load_global)
            continue;
        uint32_t name = arg >> 1;
        if (name >= (uint32_t)nnames)
            return -1;
        int32_t seen = 0;
        while (seen < count && out[seen] != (int32_t)name)
            seen++;
        if (seen == count)
            out[count++] = (int32_t)name;
    }
    return count;
}

/* ---- the opname table ------------------------------------------------- */

typedef enum Rule {
    R_DROP,              /* no effect on a kernel: RESUME, PRECALL, TO_BOOL, ... */
    R_MAP,               /* one op; arg kept (counts, depths) */
    R_NAMED,             /* one op; name = argval */
    R_JUMP,              /* one op; target = argval */
    R_PAIR,              /* 3.13 fused op on argval's two names: op, then op2 */
    R_UNARY,             /* UNARY_OP with arg = sub */
    R_UNSUPPORTED,       /* a construct kernels do not support: what */
    R_CONST,             /* LOAD_CONST */
    R_RETURN_CONST,      /* LOAD_CONST + RETURN_VALUE */
    R_LOAD_GLOBAL,       /* + PUSH_NULL when the low oparg bit is set */
    R_LOAD_ATTR,         /* + PUSH_NULL for a method load (3.12+) */
    R_LOAD_METHOD,       /* 3.11: LOAD_ATTR + PUSH_NULL */
    R_FOR_ITER,          /* target = the loop exit; arg = the iterator's entries */
    R_BINARY_OP,         /* oparg -> GjBinop */
    R_COMPARE_OP,        /* argval string -> GjCmp */
    R_CALL_INTRINSIC_1,  /* only unary + is supported */
    R_SLICE,             /* 3.12 BINARY_SLICE/STORE_SLICE: BUILD_SLICE 2 + *_SUBSCR */
    R_CALL,              /* CALL, with the keyword names KW_NAMES left pending */
    R_KW_NAMES,          /* 3.11/3.12: the next CALL's keyword names (argval) */
    R_CALL_KW,           /* 3.13: CALL whose keyword names the LOAD_CONST before pushed */
    R_GET_ITER,          /* GET_ITER [+ PUSH_NULL where an iterator takes two entries] */
    R_POP_ITER,          /* 3.14+: POP_TOP for each entry of the iterator */
    R_COMMON_CONSTANT,   /* 3.14+ LOAD_COMMON_CONSTANT: a constant, or a refused object */
    R_EXCEPTION,         /* LOAD_EXCEPTION of the builtin class `what` */
    R_RAISE,             /* RAISE_VARARGS: RAISE for `raise x`; refuses re-raise and `from` */
} Rule;

typedef struct DisOp {
    const char *opname;
    Rule rule;
    GjBcOp op, op2;
    int sub;
    const char *what;
} DisOp;

#define DROP(n)          {#n, R_DROP, 0, 0, 0, NULL}
#define MAP(n, op)       {#n, R_MAP, GJ_BC_##op, 0, 0, NULL}
#define NAMED(n, op)     {#n, R_NAMED, GJ_BC_##op, 0, 0, NULL}
#define JUMPS(n, op)     {#n, R_JUMP, GJ_BC_##op, 0, 0, NULL}
#define PAIR(n, a, b)    {#n, R_PAIR, GJ_BC_##a, GJ_BC_##b, 0, NULL}
#define UNARY(n, u)      {#n, R_UNARY, GJ_BC_UNARY_OP, 0, u, NULL}
#define SPECIAL(n, rule) {#n, rule, 0, 0, 0, NULL}
#define NO(n, what)      {#n, R_UNSUPPORTED, 0, 0, 0, what}

/* Sorted by opname (strcmp order): searched with bsearch. */
static const DisOp dis_ops[] = {
    NO(ASYNC_GEN_WRAP, "async code"),
    NO(BEFORE_ASYNC_WITH, "async code"),
    NO(BEFORE_WITH, "with statements"),
    SPECIAL(BINARY_OP, R_BINARY_OP),
    SPECIAL(BINARY_SLICE, R_SLICE),
    MAP(BINARY_SUBSCR, BINARY_SUBSCR),
    NO(BUILD_CONST_KEY_MAP, "dict construction"),
    NO(BUILD_INTERPOLATION, "template strings"),
    NO(BUILD_LIST, "list construction"),
    NO(BUILD_MAP, "dict construction"),
    NO(BUILD_SET, "set construction"),
    MAP(BUILD_SLICE, BUILD_SLICE),
    NO(BUILD_STRING, "f-strings"),
    NO(BUILD_TEMPLATE, "template strings"),
    MAP(BUILD_TUPLE, BUILD_TUPLE),
    DROP(CACHE),
    SPECIAL(CALL, R_CALL),
    NO(CALL_FUNCTION_EX, "calls with *args or **kwargs"),
    SPECIAL(CALL_INTRINSIC_1, R_CALL_INTRINSIC_1),
    NO(CALL_INTRINSIC_2, "exception handling"),
    SPECIAL(CALL_KW, R_CALL_KW),
    NO(CHECK_EG_MATCH, "exception handling"),
    NO(CHECK_EXC_MATCH, "exception handling"),
    NO(CLEANUP_THROW, "exception handling"),
    SPECIAL(COMPARE_OP, R_COMPARE_OP),
    NO(CONTAINS_OP, "the 'in' operator"),
    NO(CONVERT_VALUE, "f-strings"),
    MAP(COPY, COPY),
    DROP(COPY_FREE_VARS),
    NO(DELETE_ATTR, "del statements"),
    NO(DELETE_DEREF, "del statements"),
    NO(DELETE_FAST, "del statements"),
    NO(DELETE_GLOBAL, "del statements"),
    NO(DELETE_NAME, "del statements"),
    NO(DELETE_SUBSCR, "del statements"),
    NO(DICT_MERGE, "dict construction"),
    NO(DICT_UPDATE, "dict construction"),
    NO(END_ASYNC_FOR, "async code"),
    DROP(END_FOR),
    NO(END_SEND, "generators (yield)"),
    DROP(EXTENDED_ARG),
    NO(FORMAT_SIMPLE, "f-strings"),
    NO(FORMAT_VALUE, "f-strings"),
    NO(FORMAT_WITH_SPEC, "f-strings"),
    SPECIAL(FOR_ITER, R_FOR_ITER),
    NO(GET_AITER, "async code"),
    NO(GET_ANEXT, "async code"),
    NO(GET_AWAITABLE, "async code"),
    SPECIAL(GET_ITER, R_GET_ITER),
    NO(GET_LEN, "match statements"),
    NO(GET_YIELD_FROM_ITER, "generators (yield)"),
    NO(IMPORT_FROM, "import statements"),
    NO(IMPORT_NAME, "import statements"),
    NO(IMPORT_STAR, "import statements"),
    NO(IS_OP, "the 'is' operator"),
    JUMPS(JUMP, JUMP),
    JUMPS(JUMP_BACKWARD, JUMP),
    JUMPS(JUMP_BACKWARD_NO_INTERRUPT, JUMP),
    JUMPS(JUMP_FORWARD, JUMP),
    JUMPS(JUMP_IF_FALSE_OR_POP, JUMP_IF_FALSE_OR_POP),
    JUMPS(JUMP_IF_TRUE_OR_POP, JUMP_IF_TRUE_OR_POP),
    JUMPS(JUMP_NO_INTERRUPT, JUMP),
    SPECIAL(KW_NAMES, R_KW_NAMES),
    NO(LIST_APPEND, "list construction"),
    NO(LIST_EXTEND, "list construction"),
    NO(LIST_TO_TUPLE, "list construction"),
    {"LOAD_ASSERTION_ERROR", R_EXCEPTION, GJ_BC_LOAD_EXCEPTION, 0, 0, "AssertionError"},
    SPECIAL(LOAD_ATTR, R_LOAD_ATTR),
    NO(LOAD_BUILD_CLASS, "class definitions"),
    NO(LOAD_CLASSDEREF, "module or class body code"),
    NO(LOAD_CLOSURE, "nested functions, lambdas or comprehensions"),
    SPECIAL(LOAD_COMMON_CONSTANT, R_COMMON_CONSTANT),
    SPECIAL(LOAD_CONST, R_CONST),
    SPECIAL(LOAD_CONST_IMMORTAL, R_CONST),   /* 3.14 specialisations: dis(adaptive=True) */
    SPECIAL(LOAD_CONST_MORTAL, R_CONST),
    NAMED(LOAD_DEREF, LOAD_DEREF),
    NAMED(LOAD_FAST, LOAD_FAST),
    NAMED(LOAD_FAST_AND_CLEAR, LOAD_FAST),
    NAMED(LOAD_FAST_BORROW, LOAD_FAST),
    PAIR(LOAD_FAST_BORROW_LOAD_FAST_BORROW, LOAD_FAST, LOAD_FAST),
    NAMED(LOAD_FAST_CHECK, LOAD_FAST),
    PAIR(LOAD_FAST_LOAD_FAST, LOAD_FAST, LOAD_FAST),
    NO(LOAD_FROM_DICT_OR_DEREF, "module or class body code"),
    NO(LOAD_FROM_DICT_OR_GLOBALS, "module or class body code"),
    SPECIAL(LOAD_GLOBAL, R_LOAD_GLOBAL),
    NO(LOAD_LOCALS, "module or class body code"),
    SPECIAL(LOAD_METHOD, R_LOAD_METHOD),
    NO(LOAD_NAME, "module or class body code"),
    SPECIAL(LOAD_SMALL_INT, R_CONST),
    NO(LOAD_SPECIAL, "with statements"),
    NO(LOAD_SUPER_ATTR, "super()"),
    NO(LOAD_SUPER_METHOD, "super()"),
    NO(LOAD_ZERO_SUPER_ATTR, "super()"),
    NO(LOAD_ZERO_SUPER_METHOD, "super()"),
    DROP(MAKE_CELL),
    NO(MAKE_FUNCTION, "nested functions, lambdas or comprehensions"),
    NO(MAP_ADD, "dict construction"),
    NO(MATCH_CLASS, "match statements"),
    NO(MATCH_KEYS, "match statements"),
    NO(MATCH_MAPPING, "match statements"),
    NO(MATCH_SEQUENCE, "match statements"),
    DROP(NOP),
    DROP(NOT_TAKEN),
    NO(POP_BLOCK, "exception handling"),
    NO(POP_EXCEPT, "exception handling"),
    SPECIAL(POP_ITER, R_POP_ITER),
    JUMPS(POP_JUMP_BACKWARD_IF_FALSE, POP_JUMP_IF_FALSE),
    NO(POP_JUMP_BACKWARD_IF_NONE, "'is None' tests"),
    NO(POP_JUMP_BACKWARD_IF_NOT_NONE, "'is None' tests"),
    JUMPS(POP_JUMP_BACKWARD_IF_TRUE, POP_JUMP_IF_TRUE),
    JUMPS(POP_JUMP_FORWARD_IF_FALSE, POP_JUMP_IF_FALSE),
    NO(POP_JUMP_FORWARD_IF_NONE, "'is None' tests"),
    NO(POP_JUMP_FORWARD_IF_NOT_NONE, "'is None' tests"),
    JUMPS(POP_JUMP_FORWARD_IF_TRUE, POP_JUMP_IF_TRUE),
    JUMPS(POP_JUMP_IF_FALSE, POP_JUMP_IF_FALSE),
    NO(POP_JUMP_IF_NONE, "'is None' tests"),
    NO(POP_JUMP_IF_NOT_NONE, "'is None' tests"),
    JUMPS(POP_JUMP_IF_TRUE, POP_JUMP_IF_TRUE),
    MAP(POP_TOP, POP_TOP),
    DROP(PRECALL),
    NO(PREP_RERAISE_STAR, "exception handling"),
    NO(PRINT_EXPR, "module or class body code"),
    NO(PUSH_EXC_INFO, "exception handling"),
    MAP(PUSH_NULL, PUSH_NULL),
    SPECIAL(RAISE_VARARGS, R_RAISE),
    NO(RERAISE, "exception handling"),
    DROP(RESUME),
    SPECIAL(RETURN_CONST, R_RETURN_CONST),
    NO(RETURN_GENERATOR, "generators (yield)"),
    MAP(RETURN_VALUE, RETURN_VALUE),
    NO(SEND, "generators (yield)"),
    NO(SETUP_ANNOTATIONS, "module or class body code"),
    NO(SETUP_CLEANUP, "exception handling"),
    NO(SETUP_FINALLY, "exception handling"),
    NO(SETUP_WITH, "with statements"),
    NO(SET_ADD, "set construction"),
    NO(SET_FUNCTION_ATTRIBUTE, "nested functions, lambdas or comprehensions"),
    NO(SET_UPDATE, "set construction"),
    NO(STORE_ATTR, "attribute assignment"),
    NO(STORE_DEREF, "assignment to closure variables"),
    NAMED(STORE_FAST, STORE_FAST),
    PAIR(STORE_FAST_LOAD_FAST, STORE_FAST, LOAD_FAST),
    NAMED(STORE_FAST_MAYBE_NULL, STORE_FAST),
    PAIR(STORE_FAST_STORE_FAST, STORE_FAST, STORE_FAST),
    NO(STORE_GLOBAL, "assignment to global variables"),
    NO(STORE_NAME, "module or class body code"),
    SPECIAL(STORE_SLICE, R_SLICE),
    MAP(STORE_SUBSCR, STORE_SUBSCR),
    MAP(SWAP, SWAP),
    DROP(TO_BOOL),
    UNARY(UNARY_INVERT, GJ_UN_INVERT),
    UNARY(UNARY_NEGATIVE, GJ_UN_NEG),
    UNARY(UNARY_NOT, GJ_UN_NOT),
    UNARY(UNARY_POSITIVE, GJ_UN_POS),
    NO(UNPACK_EX, "starred assignment"),
    MAP(UNPACK_SEQUENCE, UNPACK_SEQUENCE),
    NO(WITH_EXCEPT_START, "with statements"),
    NO(YIELD_VALUE, "generators (yield)"),
};

#undef DROP
#undef MAP
#undef NAMED
#undef JUMPS
#undef PAIR
#undef UNARY
#undef SPECIAL
#undef NO

static int cmp_opname(const void *key, const void *elem) {
    return strcmp(key, ((const DisOp *)elem)->opname);
}

static const DisOp *find_dis_op(const char *opname) {
    return bsearch(opname, dis_ops, sizeof dis_ops / sizeof dis_ops[0], sizeof dis_ops[0],
                   cmp_opname);
}

#ifndef NDEBUG
static int table_is_sorted(void) {
    for (size_t i = 1; i < sizeof dis_ops / sizeof dis_ops[0]; i++) {
        if (strcmp(dis_ops[i - 1].opname, dis_ops[i].opname) >= 0)
            return 0;
    }
    return 1;
}
#endif

/* ---- decoding --------------------------------------------------------- */

/* The state of one decode: the code view and the ops appended so far. */
typedef struct Decoder {
    GjCtx *c;
    const GjCodeView *cv;
    const PyVersion *v;   /* cv's Python version */
    GjBcCode *out;
    int32_t cap;
    GjConst kw_names;     /* KW_NAMES's tuple for the next CALL; kind NONE if none */
} Decoder;

/* Appends an op for dis instruction `in`; NULL (with a diag) on OOM. */
static GjBcIns *append(Decoder *d, const GjInstr *in, GjBcOp op) {
    GjBcCode *out = d->out;
    GjBcIns *ins = gj_arena_grow(&d->c->arena, out->ins, &d->cap, out->n + 1, sizeof *ins);
    if (!ins) {
        gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "out of memory");
        return NULL;
    }
    out->ins = ins;
    GjBcIns *it = &out->ins[out->n++];
    *it = (GjBcIns){.op = op, .arg = in->arg, .target = -1, .offset = in->offset, .loc = in->loc};
    return it;
}

static GjStatus append_named(Decoder *d, const GjInstr *in, GjBcOp op, const char *name) {
    GjBcIns *ins = append(d, in, op);
    if (!ins)
        return GJ_ERR;
    ins->name = name;
    return GJ_OK;
}

static GjStatus append_const_value(Decoder *d, const GjInstr *in, GjConst value) {
    GjBcIns *ins = append(d, in, GJ_BC_LOAD_CONST);
    if (!ins)
        return GJ_ERR;
    ins->c = value;
    return GJ_OK;
}

static int has_slice(const GjConst *k) {
    if (k->kind == GJ_CONST_SLICE)
        return 1;
    for (int32_t i = 0; k->kind == GJ_CONST_TUPLE && i < k->n; i++) {
        if (has_slice(&k->items[i]))
            return 1;
    }
    return 0;
}

/* LOAD_CONST k.  A constant slice (3.14 folds a[2:10] into one, 3.15 also
   b[:, 0]'s index into a tuple constant) is built as the versions before
   spell it: its bounds, then BUILD_SLICE 2, or 3 when it has a step; a
   tuple holding one, from its items. */
static GjStatus append_const_built(Decoder *d, const GjInstr *in, const GjConst *k) {
    if (!has_slice(k))
        return append_const_value(d, in, *k);
    int is_slice = k->kind == GJ_CONST_SLICE;
    int32_t n = is_slice ? (k->items[2].kind == GJ_CONST_NONE ? 2 : 3) : k->n;
    for (int32_t i = 0; i < n; i++) {
        if (append_const_built(d, in, &k->items[i]) != GJ_OK)
            return GJ_ERR;
    }
    GjBcIns *ins = append(d, in, is_slice ? GJ_BC_BUILD_SLICE : GJ_BC_BUILD_TUPLE);
    if (!ins)
        return GJ_ERR;
    ins->arg = n;
    return GJ_OK;
}

static GjStatus append_const(Decoder *d, const GjInstr *in) {
    return append_const_built(d, in, &in->argval);
}

static GjStatus append_jump(Decoder *d, const GjInstr *in, GjBcOp op, int64_t target_offset) {
    GjBcIns *ins = append(d, in, op);
    if (!ins)
        return GJ_ERR;
    ins->target = (int32_t)target_offset;   /* a byte offset until resolve_targets() */
    return GJ_OK;
}

static const char *argval_name(Decoder *d, const GjInstr *in) {
    if (in->argval.kind != GJ_CONST_STR) {
        gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "%s: argval is not a name", in->opname);
        return NULL;
    }
    return in->argval.s;
}

/* Index of the dis instruction at byte offset `offset`, or -1. */
static int32_t instr_at(const GjCodeView *cv, int64_t offset) {
    int32_t lo = 0, hi = cv->ninstrs - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (cv->instrs[mid].offset == offset)
            return mid;
        if (cv->instrs[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Byte offset where an exhausted FOR_ITER continues, with the iterator popped. */
static GjStatus for_iter_exit(Decoder *d, const GjInstr *in, int64_t *exit) {
    const GjCodeView *cv = d->cv;
    const char *popper = d->v->iter_popper;
    int32_t i = instr_at(cv, in->argval.i);
    if (i >= 0 && popper) {
        /* 3.12: the target is END_FOR; 3.13: END_FOR, POP_TOP; 3.14+: END_FOR,
           POP_ITER.  Skip them. */
        if (strcmp(cv->instrs[i].opname, "END_FOR") != 0)
            i = -1;
        else if (++i < cv->ninstrs && *popper && strcmp(cv->instrs[i].opname, popper) == 0)
            i++;
    }
    if (i < 0 || i >= cv->ninstrs)
        return gj_error(d->c, GJ_DIAG_INTERNAL, in->loc,
                        "FOR_ITER at offset %d: no loop exit at offset %lld", in->offset,
                        (long long)in->argval.i);
    *exit = cv->instrs[i].offset;
    return GJ_OK;
}

/* Where to report an instruction without a line (3.11 exception-handler
   code): the next instruction that has one (the `except` line), else the
   previous one, else the function's first line. */
static GjLoc nearest_loc(const GjCodeView *cv, const GjInstr *in) {
    int32_t k = (int32_t)(in - cv->instrs);
    for (int32_t i = k + 1; i < cv->ninstrs; i++) {
        if (cv->instrs[i].loc.line > 0)
            return cv->instrs[i].loc;
    }
    for (int32_t i = k - 1; i >= 0; i--) {
        if (cv->instrs[i].loc.line > 0)
            return cv->instrs[i].loc;
    }
    return (GjLoc){cv->firstlineno, -1, -1};
}

/* dis's BINARY_OP oparg order (NB_ADD ... NB_XOR), then the in-place forms. */
static const GjBinop nb_binops[13] = {
    GJ_BIN_ADD, GJ_BIN_AND, GJ_BIN_FLOORDIV, GJ_BIN_LSHIFT, GJ_BIN_MATMUL,  GJ_BIN_MUL, GJ_BIN_MOD,
    GJ_BIN_OR,  GJ_BIN_POW, GJ_BIN_RSHIFT,   GJ_BIN_SUB,    GJ_BIN_TRUEDIV, GJ_BIN_XOR,
};

static GjStatus decode_binary_op(Decoder *d, const GjInstr *in) {
    enum { NB_SUBSCR = 26 };   /* 3.14: container[index], BINARY_SUBSCR before */
    if (in->arg == NB_SUBSCR)
        return append(d, in, GJ_BC_BINARY_SUBSCR) ? GJ_OK : GJ_ERR;
    if (in->arg < 0 || in->arg >= 26)
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc, "binary operator %d is not supported",
                        in->arg);
    GjBcIns *ins = append(d, in, GJ_BC_BINARY_OP);
    if (!ins)
        return GJ_ERR;
    ins->arg = (int32_t)nb_binops[in->arg % 13];
    return GJ_OK;
}

static GjStatus decode_compare_op(Decoder *d, const GjInstr *in) {
    static const struct {
        const char *sym;
        GjCmp cmp;
    } cmps[] = {
        {"<", GJ_CMP_LT},  {"<=", GJ_CMP_LE}, {"==", GJ_CMP_EQ},
        {"!=", GJ_CMP_NE}, {">", GJ_CMP_GT},  {">=", GJ_CMP_GE},
    };
    const char *sym = argval_name(d, in);
    if (!sym)
        return GJ_ERR;
    size_t n = strlen(sym);
    if (strncmp(sym, "bool(", 5) == 0 && n > 6) {   /* 3.13 spells the to-bool form so */
        sym += 5;
        n -= 6;
    }
    for (size_t k = 0; k < sizeof cmps / sizeof cmps[0]; k++) {
        if (strlen(cmps[k].sym) == n && strncmp(cmps[k].sym, sym, n) == 0) {
            GjBcIns *ins = append(d, in, GJ_BC_COMPARE_OP);
            if (!ins)
                return GJ_ERR;
            ins->arg = (int32_t)cmps[k].cmp;
            return GJ_OK;
        }
    }
    return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc, "comparison '%s' is not supported", sym);
}

static GjStatus decode_pair(Decoder *d, const GjInstr *in, const DisOp *op) {
    const GjConst *v = &in->argval;
    if (v->kind != GJ_CONST_TUPLE || v->n != 2 || v->items[0].kind != GJ_CONST_STR ||
        v->items[1].kind != GJ_CONST_STR)
        return gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "%s: argval is not a pair of names",
                        in->opname);
    if (append_named(d, in, op->op, v->items[0].s) != GJ_OK)
        return GJ_ERR;
    return append_named(d, in, op->op2, v->items[1].s);
}

static GjStatus decode_load_global(Decoder *d, const GjInstr *in) {
    const char *name = argval_name(d, in);
    if (!name)
        return GJ_ERR;
    int push_null = in->arg >= 0 && (in->arg & 1);
    int null_first = !d->v->null_above_global;
    if (push_null && null_first && !append(d, in, GJ_BC_PUSH_NULL))
        return GJ_ERR;
    if (append_named(d, in, GJ_BC_LOAD_GLOBAL, name) != GJ_OK)
        return GJ_ERR;
    if (push_null && !null_first && !append(d, in, GJ_BC_PUSH_NULL))
        return GJ_ERR;
    return GJ_OK;
}

/* LOAD_ATTR (with is_method for a method load) -> LOAD_ATTR [+ PUSH_NULL]. */
static GjStatus decode_load_attr(Decoder *d, const GjInstr *in, int is_method) {
    const char *name = argval_name(d, in);
    if (!name || append_named(d, in, GJ_BC_LOAD_ATTR, name) != GJ_OK)
        return GJ_ERR;
    return is_method && !append(d, in, GJ_BC_PUSH_NULL) ? GJ_ERR : GJ_OK;
}

/* 3.13's CALL_KW n: [callable, self_or_null, args..., names] where names
   is the tuple the LOAD_CONST just before pushed; it becomes CALL n with
   those keyword names, as 3.11/3.12's KW_NAMES + CALL. */
static GjStatus decode_call_kw(Decoder *d, const GjInstr *in) {
    GjBcCode *out = d->out;
    GjBcIns *names = out->n > 0 ? &out->ins[out->n - 1] : NULL;
    if (!names || names->op != GJ_BC_LOAD_CONST || names->c.kind != GJ_CONST_TUPLE)
        return gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "CALL_KW without its names");
    GjConst kw = names->c;
    out->n--;
    GjBcIns *ins = append(d, in, GJ_BC_CALL);
    if (!ins)
        return GJ_ERR;
    ins->c = kw;
    return GJ_OK;
}

static GjStatus decode_call_intrinsic_1(Decoder *d, const GjInstr *in) {
    enum {
        INTRINSIC_STOPITERATION_ERROR = 3,
        INTRINSIC_UNARY_POSITIVE = 5,
        INTRINSIC_LIST_TO_TUPLE = 6
    };
    GjBcIns *ins;
    switch (in->arg) {
    case INTRINSIC_UNARY_POSITIVE:
        if (!(ins = append(d, in, GJ_BC_UNARY_OP)))
            return GJ_ERR;
        ins->arg = GJ_UN_POS;
        return GJ_OK;
    case INTRINSIC_STOPITERATION_ERROR:
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc,
                        "gpujit kernels do not support generators (yield)");
    case INTRINSIC_LIST_TO_TUPLE:
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc,
                        "gpujit kernels do not support calls with *args");
    default:
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc,
                        "gpujit kernels do not support this construct (CALL_INTRINSIC_1 %d)",
                        in->arg);
    }
}

/* LOAD_COMMON_CONSTANT: an object of the interpreter's table.  3.15 loads
   None, True, False, '' and -1 with it (dis resolves argval); its first
   two rows, in both versions (3.14's dis leaves argval the index), are the
   exception classes an assert and `raise NotImplementedError` load; the
   others are objects a kernel cannot use (all, any, tuple: generator
   expressions). */
static GjStatus decode_common_constant(Decoder *d, const GjInstr *in) {
    static const char *const exceptions[] = {"AssertionError", "NotImplementedError"};
    GjConstKind kind = in->argval.kind;
    if (d->v->common_constants && kind != GJ_CONST_OTHER && kind != GJ_CONST_TUPLE)
        return append_const(d, in);
    if (in->arg >= 0 && in->arg < 2)
        return append_named(d, in, GJ_BC_LOAD_EXCEPTION, exceptions[in->arg]);
    return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc,
                    "gpujit kernels do not support generator expressions");
}

/* RAISE_VARARGS n: `raise x` (n = 1); a bare `raise` re-raises the exception
   being handled, which a kernel never has, and `raise x from y` sets a
   cause the host's exception would not show. */
static GjStatus decode_raise(Decoder *d, const GjInstr *in) {
    if (in->arg == 1)
        return append(d, in, GJ_BC_RAISE) ? GJ_OK : GJ_ERR;
    return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc, "gpujit kernels do not support %s",
                    in->arg == 0 ? "a bare raise (there is no exception to re-raise)"
                                 : "raise ... from ... (raise the exception alone)");
}

static GjStatus decode_one(Decoder *d, const GjInstr *in) {
    const DisOp *op = find_dis_op(in->opname);
    GjInstr located;
    if (in->loc.line == 0 && (!op || op->rule == R_UNSUPPORTED)) {
        located = *in;
        located.loc = nearest_loc(d->cv, in);
        in = &located;
    }
    if (!op)
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc,
                        "gpujit kernels do not support this construct (bytecode %s)", in->opname);
    const char *name;
    int64_t exit_offset = 0;
    GjBcIns *ins;
    switch (op->rule) {
    case R_DROP: return GJ_OK;
    case R_MAP: return append(d, in, op->op) ? GJ_OK : GJ_ERR;
    case R_NAMED:
        name = argval_name(d, in);
        return name ? append_named(d, in, op->op, name) : GJ_ERR;
    case R_JUMP: return append_jump(d, in, op->op, in->argval.i);
    case R_PAIR: return decode_pair(d, in, op);
    case R_UNARY:
        if (!(ins = append(d, in, op->op)))
            return GJ_ERR;
        ins->arg = op->sub;
        return GJ_OK;
    case R_UNSUPPORTED:
        return gj_error(d->c, GJ_DIAG_UNSUPPORTED, in->loc, "gpujit kernels do not support %s",
                        op->what);
    case R_CONST: return append_const(d, in);
    case R_RETURN_CONST:
        if (append_const(d, in) != GJ_OK)
            return GJ_ERR;
        return append(d, in, GJ_BC_RETURN_VALUE) ? GJ_OK : GJ_ERR;
    case R_LOAD_GLOBAL: return decode_load_global(d, in);
    case R_LOAD_ATTR:
        return decode_load_attr(d, in, d->v->attr_method_bit && in->arg >= 0 && (in->arg & 1));
    case R_LOAD_METHOD: return decode_load_attr(d, in, 1);
    case R_FOR_ITER:
        if (for_iter_exit(d, in, &exit_offset) != GJ_OK ||
            append_jump(d, in, GJ_BC_FOR_ITER, exit_offset) != GJ_OK)
            return GJ_ERR;
        d->out->ins[d->out->n - 1].arg = d->v->iter_slots;
        return GJ_OK;
    case R_GET_ITER:
        if (!append(d, in, GJ_BC_GET_ITER))
            return GJ_ERR;
        return d->v->iter_slots == 2 && !append(d, in, GJ_BC_PUSH_NULL) ? GJ_ERR : GJ_OK;
    case R_POP_ITER:
        for (int k = 0; k < d->v->iter_slots; k++) {
            if (!append(d, in, GJ_BC_POP_TOP))
                return GJ_ERR;
        }
        return GJ_OK;
    case R_COMMON_CONSTANT: return decode_common_constant(d, in);
    case R_EXCEPTION: return append_named(d, in, op->op, op->what);
    case R_RAISE: return decode_raise(d, in);
    case R_BINARY_OP: return decode_binary_op(d, in);
    case R_COMPARE_OP: return decode_compare_op(d, in);
    case R_CALL_INTRINSIC_1: return decode_call_intrinsic_1(d, in);
    case R_CALL:
        if (!(ins = append(d, in, GJ_BC_CALL)))
            return GJ_ERR;
        ins->c = d->kw_names;
        d->kw_names = (GjConst){.kind = GJ_CONST_NONE};
        return GJ_OK;
    case R_KW_NAMES:
        if (in->argval.kind != GJ_CONST_TUPLE)
            return gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "KW_NAMES without a tuple");
        d->kw_names = in->argval;
        return GJ_OK;
    case R_CALL_KW: return decode_call_kw(d, in);
    case R_SLICE:
        /* container[start:stop] as 3.11 spells it: the slice, then a subscript. */
        if (!(ins = append(d, in, GJ_BC_BUILD_SLICE)))
            return GJ_ERR;
        ins->arg = 2;
        return append(d, in,
                      strcmp(in->opname, "STORE_SLICE") == 0 ? GJ_BC_STORE_SUBSCR
                                                             : GJ_BC_BINARY_SUBSCR)
                   ? GJ_OK
                   : GJ_ERR;
    }
    return gj_error(d->c, GJ_DIAG_INTERNAL, in->loc, "bad rule for %s", in->opname);
}

/* Jump targets: byte offset -> index of the first op at or after it (a
   jump to a dropped EXTENDED_ARG or NOP lands on the next op kept). */
static GjStatus resolve_targets(Decoder *d) {
    GjBcCode *out = d->out;
    for (int32_t k = 0; k < out->n; k++) {
        GjBcIns *ins = &out->ins[k];
        if (!(gj_bc_op_flags(ins->op) & GJ_BCF_JUMP))
            continue;
        int32_t lo = 0, hi = out->n;   /* first index with offset >= target */
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (out->ins[mid].offset < ins->target)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == out->n)
            return gj_error(d->c, GJ_DIAG_INTERNAL, ins->loc,
                            "%s at offset %d jumps past the end (offset %d)",
                            gj_bc_op_name(ins->op), ins->offset, ins->target);
        ins->target = lo;
    }
    return GJ_OK;
}

/* "3.11, 3.12, 3.13, 3.14 and 3.15" from py_versions, into buf. */
static const char *version_list(char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < N_PY_VERSIONS && n < size; k++) {
        const char *sep = k == 0 ? "" : k == N_PY_VERSIONS - 1 ? " and " : ", ";
        int w = snprintf(buf + n, size - n, "%s3.%d", sep, py_versions[k].minor);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* What the function's signature or kind rules out, before any bytecode. */
static GjStatus check_code(GjCtx *c, const GjCodeView *cv) {
    enum {
        CO_VARARGS = 0x04,
        CO_VARKEYWORDS = 0x08,
        CO_GENERATOR = 0x20,
        CO_COROUTINE = 0x80,
        CO_ITERABLE_COROUTINE = 0x100,
        CO_ASYNC_GENERATOR = 0x200
    };
    GjLoc loc = {cv->firstlineno, -1, -1};
    char versions[128];
    if (!find_version(cv->py_major, cv->py_minor))
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc,
                        "Python %d.%d is not supported: gpujit reads the bytecode of Python %s",
                        cv->py_major, cv->py_minor, version_list(versions, sizeof versions));
    if (cv->flags & CO_VARARGS)
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc, "gpujit kernels do not support *args");
    if (cv->flags & CO_VARKEYWORDS)
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc, "gpujit kernels do not support **kwargs");
    if (cv->kwonlyargcount > 0)
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc,
                        "gpujit kernels do not support keyword-only parameters");
    if (cv->flags & (CO_GENERATOR | CO_ASYNC_GENERATOR))
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc,
                        "gpujit kernels do not support generators (yield)");
    if (cv->flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE))
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc, "gpujit kernels do not support async code");
    return GJ_OK;
}

GjStatus gj_bc_decode(GjCtx *c, const GjCodeView *cv, GjBcCode *out) {
    assert(table_is_sorted());
    *out = (GjBcCode){0};
    if (check_code(c, cv) != GJ_OK)
        return GJ_ERR;
    Decoder d = {.c = c, .cv = cv, .v = find_version(cv->py_major, cv->py_minor), .out = out};
    for (int32_t i = 0; i < cv->ninstrs; i++) {
        if (decode_one(&d, &cv->instrs[i]) != GJ_OK)
            return GJ_ERR;
    }
    if (out->n == 0)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){cv->firstlineno, -1, -1}, "empty bytecode");
    return resolve_targets(&d);
}

static int dump_const(FILE *out, const GjConst *k) {
    switch (k->kind) {
    case GJ_CONST_NONE: return fprintf(out, " None");
    case GJ_CONST_BOOL: return fprintf(out, " %s", k->i ? "True" : "False");
    case GJ_CONST_INT: return fprintf(out, " %lld", (long long)k->i);
    case GJ_CONST_FLOAT: return fprintf(out, " %.17g", k->f);
    case GJ_CONST_COMPLEX: return fprintf(out, " (%.17g%+.17gj)", k->f, k->im);
    case GJ_CONST_STR: return fprintf(out, " '%s'", k->s);
    case GJ_CONST_TUPLE: return fprintf(out, " (tuple of %d)", k->n);
    case GJ_CONST_SLICE: return fprintf(out, " <slice>");
    case GJ_CONST_OTHER: return fprintf(out, " <%s>", k->s ? k->s : "object");
    }
    return 0;
}

/* Prints what follows the op name; returns the columns written. */
static int dump_operand(FILE *out, const GjBcIns *ins) {
    switch (ins->op) {
    case GJ_BC_LOAD_CONST: return dump_const(out, &ins->c);
    case GJ_BC_BINARY_OP: return fprintf(out, " %s", gj_ir_binop_symbol((GjBinop)ins->arg));
    case GJ_BC_UNARY_OP: return fprintf(out, " %s", gj_ir_unop_symbol((GjUnop)ins->arg));
    case GJ_BC_COMPARE_OP: return fprintf(out, " %s", gj_ir_cmp_symbol((GjCmp)ins->arg));
    case GJ_BC_BUILD_TUPLE:
    case GJ_BC_BUILD_SLICE:
    case GJ_BC_UNPACK_SEQUENCE:
    case GJ_BC_COPY:
    case GJ_BC_SWAP:
    case GJ_BC_CALL: return fprintf(out, " %d", ins->arg);
    case GJ_BC_FOR_ITER:
        if (ins->arg != 1)   /* the iterator below a NULL (3.15) */
            return fprintf(out, " %d -> %d", ins->arg, ins->target);
        return fprintf(out, " -> %d", ins->target);
    case GJ_BC_JUMP:
    case GJ_BC_POP_JUMP_IF_FALSE:
    case GJ_BC_POP_JUMP_IF_TRUE:
    case GJ_BC_JUMP_IF_FALSE_OR_POP:
    case GJ_BC_JUMP_IF_TRUE_OR_POP: return fprintf(out, " -> %d", ins->target);
    case GJ_BC_LOAD_FAST:
    case GJ_BC_STORE_FAST:
    case GJ_BC_LOAD_GLOBAL:
    case GJ_BC_LOAD_DEREF:
    case GJ_BC_LOAD_ATTR:
    case GJ_BC_LOAD_EXCEPTION: return fprintf(out, " %s", ins->name);
    case GJ_BC_PUSH_NULL:
    case GJ_BC_BINARY_SUBSCR:
    case GJ_BC_STORE_SUBSCR:
    case GJ_BC_POP_TOP:
    case GJ_BC_GET_ITER:
    case GJ_BC_RETURN_VALUE:
    case GJ_BC_RAISE:
    case GJ_BC_NOPS: break;
    }
    return 0;
}

/* One op per line: index, byte offset, op, operand, source line. */
void gj_bc_dump(const GjBcCode *bc, void *file) {
    FILE *out = file;
    for (int32_t k = 0; k < bc->n; k++) {
        const GjBcIns *ins = &bc->ins[k];
        int n = fprintf(out, "  %4d @%-4d %-20s", k, ins->offset, gj_bc_op_name(ins->op));
        n += dump_operand(out, ins);
        fprintf(out, "%*s; %d\n", n < 48 ? 48 - n : 1, "", ins->loc.line);
    }
}

/* ---- the code view ---------------------------------------------------- */

const GjGlobal *gj_codeview_global(const GjCodeView *cv, const char *name) {
    for (int32_t i = 0; i < cv->nglobals; i++) {
        if (strcmp(cv->globals[i].key, name) == 0)
            return &cv->globals[i];
    }
    return NULL;
}
