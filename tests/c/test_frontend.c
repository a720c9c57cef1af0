/*
 * test_frontend.c - unit tests of the compiler's frontend stages without
 * Python or LLVM: bytecode normalisation (compiler/bytecode.c), IR building
 * (build.c), definite assignment, type inference (typeinfer.c) and the IR
 * verifier (irverify.c).
 *
 * Built and run by meson (tests/c/meson.build).  The inputs are hand-written
 * dis listings, as pymodule/codeview.c would copy them, of two functions
 * under the Python versions whose bytecode differs most (3.11, 3.12, 3.13):
 *
 *     def f(a, b):                       def g(x, n):
 *         if a < b:                          s = 0
 *             a = a + b                      for i in range(n):
 *         return a                               s = s + (x if i < 2 else i)
 *                                            return s
 *
 * g has a loop (an iterator in a stack slot) and a conditional expression
 * (a value in a stack slot), so its IR has every kind of variable.  The
 * verifier tests break one invariant each in a freshly built function and
 * expect the INTERNAL diagnostic naming it.  Prints one line per failure
 * and "ok: N failure(s)" last; exits 1 on any failure.
 */
#include "bytecode.h"
#include "frontend.h"
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* ---- hand-written dis listings ---------------------------------------- */

/* One dis.Instruction: argval a name (s), a pair of names (s, s2: 3.13's
   LOAD_FAST_LOAD_FAST), an integer (i: jump targets, constants) or None. */
typedef struct Row {
    const char *opname;
    int32_t arg;
    const char *s, *s2;
    int64_t i;
    int is_none;
    int32_t offset, line, is_jump_target;
} Row;

#define NAME(op, arg, name, off, line, jt) {op, arg, name, NULL, 0, 0, off, line, jt}
#define INT(op, arg, value, off, line, jt) {op, arg, NULL, NULL, value, 0, off, line, jt}
#define NONE(op, arg, off, line, jt)       {op, arg, NULL, NULL, 0, 1, off, line, jt}

static const Row f_311[] = {
    INT("RESUME", 0, 0, 0, 2, 0),
    NAME("LOAD_FAST", 0, "a", 2, 3, 0),
    NAME("LOAD_FAST", 1, "b", 4, 3, 0),
    NAME("COMPARE_OP", 0, "<", 6, 3, 0),
    INT("POP_JUMP_FORWARD_IF_FALSE", 5, 24, 12, 3, 0),
    NAME("LOAD_FAST", 0, "a", 14, 4, 0),
    NAME("LOAD_FAST", 1, "b", 16, 4, 0),
    INT("BINARY_OP", 0, 0, 18, 4, 0),
    NAME("STORE_FAST", 0, "a", 22, 4, 0),
    NAME("LOAD_FAST", 0, "a", 24, 5, 1),
    NONE("RETURN_VALUE", -1, 26, 5, 0),
};

static const Row f_312[] = {
    INT("RESUME", 0, 0, 0, 2, 0),
    NAME("LOAD_FAST", 0, "a", 2, 3, 0),
    NAME("LOAD_FAST", 1, "b", 4, 3, 0),
    NAME("COMPARE_OP", 2, "<", 6, 3, 0),
    INT("POP_JUMP_IF_FALSE", 5, 22, 10, 3, 0),
    NAME("LOAD_FAST", 0, "a", 12, 4, 0),
    NAME("LOAD_FAST", 1, "b", 14, 4, 0),
    INT("BINARY_OP", 0, 0, 16, 4, 0),
    NAME("STORE_FAST", 0, "a", 20, 4, 0),
    NAME("LOAD_FAST", 0, "a", 22, 5, 1),
    NONE("RETURN_VALUE", -1, 24, 5, 0),
};

static const Row f_313[] = {
    INT("RESUME", 0, 0, 0, 2, 0),
    {"LOAD_FAST_LOAD_FAST", 1, "a", "b", 0, 0, 2, 3, 0},
    NAME("COMPARE_OP", 18, "<", 4, 3, 0),
    INT("POP_JUMP_IF_FALSE", 4, 20, 8, 3, 0),
    {"LOAD_FAST_LOAD_FAST", 1, "a", "b", 0, 0, 12, 4, 0},
    INT("BINARY_OP", 0, 0, 14, 4, 0),
    NAME("STORE_FAST", 0, "a", 18, 4, 0),
    NAME("LOAD_FAST", 0, "a", 20, 5, 1),
    NONE("RETURN_VALUE", -1, 22, 5, 0),
};

static const Row g_311[] = {
    INT("RESUME", 0, 0, 0, 6, 0),
    INT("LOAD_CONST", 1, 0, 2, 7, 0),
    NAME("STORE_FAST", 2, "s", 4, 7, 0),
    NAME("LOAD_GLOBAL", 1, "range", 6, 8, 0),
    NAME("LOAD_FAST", 1, "n", 18, 8, 0),
    INT("PRECALL", 1, 1, 20, 8, 0),
    INT("CALL", 1, 1, 24, 8, 0),
    NONE("GET_ITER", -1, 34, 8, 0),
    INT("FOR_ITER", 15, 68, 36, 8, 1),
    NAME("STORE_FAST", 3, "i", 38, 8, 0),
    NAME("LOAD_FAST", 2, "s", 40, 9, 0),
    NAME("LOAD_FAST", 3, "i", 42, 9, 0),
    INT("LOAD_CONST", 2, 2, 44, 9, 0),
    NAME("COMPARE_OP", 0, "<", 46, 9, 0),
    INT("POP_JUMP_FORWARD_IF_FALSE", 2, 58, 52, 9, 0),
    NAME("LOAD_FAST", 0, "x", 54, 9, 0),
    INT("JUMP_FORWARD", 1, 60, 56, 9, 0),
    NAME("LOAD_FAST", 3, "i", 58, 9, 1),
    INT("BINARY_OP", 0, 0, 60, 9, 1),
    NAME("STORE_FAST", 2, "s", 64, 9, 0),
    INT("JUMP_BACKWARD", 16, 36, 66, 9, 0),
    NAME("LOAD_FAST", 2, "s", 68, 10, 1),
    NONE("RETURN_VALUE", -1, 70, 10, 0),
};

static const char *f_names[] = {"a", "b"};
static const char *g_names[] = {"x", "n", "s", "i"};

/* A code view of `rows` as Python minor version `minor`, in c's arena, with
   the given argument types (NULL: none yet). */
static GjCodeView *view(GjCtx *c, int minor, const char *name, const Row *rows, int32_t n,
                        const char **varnames, int32_t nvarnames, const GjType *t0,
                        const GjType *t1) {
    GjCodeView *cv = GJ_NEW(&c->arena, GjCodeView);
    GjInstr *ins = GJ_NEW_N(&c->arena, GjInstr, n);
    const GjType **types = GJ_NEW_N(&c->arena, const GjType *, 2);
    GjGlobal *range = GJ_NEW(&c->arena, GjGlobal);
    for (int32_t k = 0; k < n; k++) {
        const Row *r = &rows[k];
        GjConst v = {.kind = GJ_CONST_INT, .i = r->i};
        if (r->is_none)
            v = (GjConst){.kind = GJ_CONST_NONE};
        else if (r->s2) {
            GjConst *pair = GJ_NEW_N(&c->arena, GjConst, 2);
            pair[0] = (GjConst){.kind = GJ_CONST_STR, .s = r->s};
            pair[1] = (GjConst){.kind = GJ_CONST_STR, .s = r->s2};
            v = (GjConst){.kind = GJ_CONST_TUPLE, .items = pair, .n = 2};
        } else if (r->s)
            v = (GjConst){.kind = GJ_CONST_STR, .s = r->s};
        ins[k] = (GjInstr){.opname = r->opname,
                           .arg = r->arg,
                           .argval = v,
                           .offset = r->offset,
                           .loc = {r->line, 4, 8},
                           .is_jump_target = r->is_jump_target};
    }
    *range = (GjGlobal){.key = "range", .kind = GJ_GLOBAL_BUILTIN, .name = "range"};
    types[0] = t0;
    types[1] = t1;
    *cv = (GjCodeView){.py_major = 3,
                       .py_minor = minor,
                       .name = name,
                       .qualname = name,
                       .filename = "test.py",
                       .firstlineno = rows[0].line,
                       .argcount = 2,
                       .nvarnames = nvarnames,
                       .varnames = varnames,
                       .ninstrs = n,
                       .instrs = ins,
                       .argtypes = t0 ? types : NULL,
                       .nglobals = 1,
                       .globals = range};
    return cv;
}

#define F_VIEW(c, minor, rows, t0, t1) \
    view(c, minor, "f", rows, (int32_t)(sizeof rows / sizeof *rows), f_names, 2, t0, t1)
#define G_VIEW(c, t0, t1) \
    view(c, 11, "g", g_311, (int32_t)(sizeof g_311 / sizeof *g_311), g_names, 4, t0, t1)

static void ctx(GjCtx *c) {
    gj_ctx_init(c);
    c->verify_ir = 1;
    c->dump = 0;
}

/* The passes gj_compile runs before lowering, each verified: the front end
   (as a device function, which may return a value), or its passes up to
   typing. */
static GjStatus frontend(GjCtx *c, const GjCodeView *cv, GjFunc **f, int typed) {
    c->code = cv;
    if (typed)
        return gj_front_end(c, cv, 1, NULL, f);
    GjBcCode bc;
    if (gj_bc_decode(c, cv, &bc) != GJ_OK || gj_build_func(c, cv, &bc, f) != GJ_OK ||
        gj_ir_verify(c, *f, "build") != GJ_OK || gj_check_assigned(c, *f) != GJ_OK ||
        gj_ir_verify(c, *f, "definite assignment") != GJ_OK)
        return GJ_ERR;
    (*f)->is_device = 1;
    return GJ_OK;
}

static const char *diag_text(const GjCtx *c) {
    return c->diag ? c->diag->message : "(no diagnostic)";
}

/* ---- bytecode normalisation ------------------------------------------- */

static void test_decode_versions(void) {
    static const GjBcOp want[] = {
        GJ_BC_LOAD_FAST, GJ_BC_LOAD_FAST,    GJ_BC_COMPARE_OP, GJ_BC_POP_JUMP_IF_FALSE,
        GJ_BC_LOAD_FAST, GJ_BC_LOAD_FAST,    GJ_BC_BINARY_OP,  GJ_BC_STORE_FAST,
        GJ_BC_LOAD_FAST, GJ_BC_RETURN_VALUE,
    };
    static const char *want_names[] = {"a", "b", NULL, NULL, "a", "b", NULL, "a", "a", NULL};
    struct {
        int minor;
        const Row *rows;
        int32_t n;
    } cases[] = {
        {11, f_311, (int32_t)(sizeof f_311 / sizeof *f_311)},
        {12, f_312, (int32_t)(sizeof f_312 / sizeof *f_312)},
        {13, f_313, (int32_t)(sizeof f_313 / sizeof *f_313)},
    };
    for (size_t v = 0; v < sizeof cases / sizeof *cases; v++) {
        GjCtx c;
        ctx(&c);
        GjCodeView *cv =
            view(&c, cases[v].minor, "f", cases[v].rows, cases[v].n, f_names, 2, NULL, NULL);
        GjBcCode bc;
        GjStatus st = gj_bc_decode(&c, cv, &bc);
        CHECK(st == GJ_OK, "3.%d: decode failed: %s", cases[v].minor, diag_text(&c));
        int32_t n = (int32_t)(sizeof want / sizeof *want);
        CHECK(st != GJ_OK || bc.n == n, "3.%d: %d ops, want %d", cases[v].minor, bc.n, n);
        for (int32_t k = 0; st == GJ_OK && k < bc.n && k < n; k++) {
            CHECK(bc.ins[k].op == want[k], "3.%d: op %d is %s, want %s", cases[v].minor, k,
                  gj_bc_op_name(bc.ins[k].op), gj_bc_op_name(want[k]));
            if (want_names[k])
                CHECK(bc.ins[k].name && strcmp(bc.ins[k].name, want_names[k]) == 0,
                      "3.%d: op %d names %s", cases[v].minor, k,
                      bc.ins[k].name ? bc.ins[k].name : "nothing");
        }
        if (st == GJ_OK && bc.n == n) {
            CHECK(bc.ins[2].arg == GJ_CMP_LT, "3.%d: compare %d", cases[v].minor, bc.ins[2].arg);
            CHECK(bc.ins[6].arg == GJ_BIN_ADD, "3.%d: binop %d", cases[v].minor, bc.ins[6].arg);
            CHECK(bc.ins[3].target == 8,
                  "3.%d: jump to op %d, want 8 (an index, not an "
                  "offset)",
                  cases[v].minor, bc.ins[3].target);
        }
        gj_ctx_free(&c);
    }
}

static void test_decode_refuses_unknown_version(void) {
    GjCtx c;
    ctx(&c);
    GjCodeView *cv = F_VIEW(&c, 9, f_311, NULL, NULL);
    GjBcCode bc;
    CHECK(gj_bc_decode(&c, cv, &bc) == GJ_ERR && c.diag && strstr(c.diag->message, "3.9"),
          "Python 3.9 accepted or not named: %s", diag_text(&c));
    gj_ctx_free(&c);
}

static void test_decode_refuses_construct(void) {
    static const Row rows[] = {
        INT("RESUME", 0, 0, 0, 2, 0),
        NONE("BEFORE_WITH", -1, 2, 3, 0),
        NONE("RETURN_VALUE", -1, 4, 3, 0),
    };
    GjCtx c;
    ctx(&c);
    GjCodeView *cv = view(&c, 11, "f", rows, 3, f_names, 2, NULL, NULL);
    GjBcCode bc;
    CHECK(gj_bc_decode(&c, cv, &bc) == GJ_ERR && c.diag && c.diag->kind == GJ_DIAG_UNSUPPORTED &&
              c.diag->loc.line == 3,
          "BEFORE_WITH: %s", diag_text(&c));
    gj_ctx_free(&c);
}

/* ---- building and typing ---------------------------------------------- */

static void test_build_f(void) {
    GjCtx c;
    ctx(&c);
    GjFunc *f = NULL;
    CHECK(frontend(&c, F_VIEW(&c, 12, f_312, NULL, NULL), &f, 0) == GJ_OK, "f: %s", diag_text(&c));
    if (f) {
        CHECK(f->nblocks == 3, "f has %d blocks, want 3", f->nblocks);
        const GjBlock *b0 = f->blocks[0];
        const GjIns *last = &b0->ins[b0->nins - 1];
        CHECK(last->op == GJ_OP_BRANCH && b0->nsucc == 2 && b0->succ[0] == 1 && b0->succ[1] == 2,
              "b0 ends in %s -> %d successors", gj_ir_op_name(last->op), b0->nsucc);
        CHECK(f->nvars == 2 && f->vars[0].kind == GJ_VAR_ARG, "f has %d variables", f->nvars);
    }
    gj_ctx_free(&c);
}

/* NEP 50 through a variable: a (int64) = a + b (float32) makes a float64. */
static void test_infer_f(void) {
    for (int minor = 11; minor <= 13; minor++) {
        GjCtx c;
        ctx(&c);
        const Row *rows = minor == 11 ? f_311 : minor == 12 ? f_312 : f_313;
        int32_t n = minor == 11   ? (int32_t)(sizeof f_311 / sizeof *f_311)
                    : minor == 12 ? (int32_t)(sizeof f_312 / sizeof *f_312)
                                  : (int32_t)(sizeof f_313 / sizeof *f_313);
        GjCodeView *cv = view(&c, minor, "f", rows, n, f_names, 2, &gj_ty_int64, &gj_ty_float32);
        GjFunc *f = NULL;
        CHECK(frontend(&c, cv, &f, 1) == GJ_OK, "3.%d: %s", minor, diag_text(&c));
        if (f && !c.diag) {
            CHECK(f->vars[0].type == &gj_ty_float64, "3.%d: a is %s", minor, f->vars[0].type->name);
            CHECK(f->vars[1].type == &gj_ty_float32, "3.%d: b is %s", minor, f->vars[1].type->name);
            CHECK(f->ret_type == &gj_ty_float64, "3.%d: returns %s", minor,
                  f->ret_type ? f->ret_type->name : "nothing");
        }
        gj_ctx_free(&c);
    }
}

static void test_infer_g(void) {
    GjCtx c;
    ctx(&c);
    GjFunc *f = NULL;
    CHECK(frontend(&c, G_VIEW(&c, &gj_ty_float32, &gj_ty_int32), &f, 1) == GJ_OK, "g: %s",
          diag_text(&c));
    int nstack = 0;
    for (int32_t v = 0; f && v < f->nvars; v++)
        nstack += f->vars[v].kind == GJ_VAR_STACK;
    CHECK(nstack >= 2, "g has %d stack slots, want the iterator's and the value's", nstack);
    /* s = 0 + (float32 or int32): float64, as numpy.result_type(float32, int32) */
    int32_t s = f ? gj_ir_var(&c, f, "s", GJ_VAR_LOCAL) : -1;
    CHECK(s >= 0 && f->vars[s].type == &gj_ty_float64, "s is %s",
          s >= 0 && f->vars[s].type ? f->vars[s].type->name : "untyped");
    gj_ctx_free(&c);
}

/* ---- the verifier: one broken invariant each --------------------------- */

/* The index of the nth instruction with op in block b, or -1. */
static int32_t find(const GjBlock *b, GjOp op, int nth) {
    for (int32_t k = 0; k < b->nins; k++) {
        if (b->ins[k].op == op && nth-- == 0)
            return k;
    }
    return -1;
}

/* The first block holding op, or NULL. */
static GjBlock *block_with(GjFunc *f, GjOp op) {
    for (int32_t i = 0; i < f->nblocks; i++) {
        if (find(f->blocks[i], op, 0) >= 0)
            return f->blocks[i];
    }
    return NULL;
}

/* A stack slot variable of a block other than `not_of`, or -1. */
static int32_t slot_of_other(const GjFunc *f, int32_t not_of) {
    for (int32_t v = 0; v < f->nvars; v++) {
        if (f->vars[v].kind == GJ_VAR_STACK && f->vars[v].block != not_of)
            return v;
    }
    return -1;
}

/* A load of a stack slot: its block, the index in *k. */
static GjBlock *slot_load(GjFunc *f, int32_t *k) {
    for (int32_t i = 0; i < f->nblocks; i++) {
        GjBlock *b = f->blocks[i];
        for (*k = 0; *k < b->nins; (*k)++) {
            if (b->ins[*k].op == GJ_OP_LOAD_VAR && f->vars[b->ins[*k].var].kind == GJ_VAR_STACK)
                return b;
        }
    }
    return NULL;
}

/* Removes instruction k of block b. */
static void drop_ins(GjBlock *b, int32_t k) {
    memmove(&b->ins[k], &b->ins[k + 1], sizeof *b->ins * (size_t)(b->nins - k - 1));
    b->nins--;
}

typedef enum Break {
    BR_NO_TERMINATOR,
    BR_TERMINATOR_INSIDE,
    BR_EMPTY_BLOCK,
    BR_NSUCC,
    BR_SUCC_RANGE,
    BR_ENTRY_PRED,
    BR_UNREACHABLE,
    BR_NARGS,
    BR_ARG_RANGE,
    BR_ARG_OTHER_BLOCK,
    BR_ARG_BEFORE_DEF,
    BR_DEF_TWICE,
    BR_DST_ON_STORE,
    BR_NO_DST,
    BR_VAR_RANGE,
    BR_BINOP_SUB,
    BR_OP_RANGE,
    BR_SLOT_LOAD_ELSEWHERE,
    BR_SLOT_STORE_NOT_PRED,
    BR_SLOT_DEPTH,
    BR_SLOT_LOAD_AFTER_STORE,
    BR_BLOCK_ID,
    BR_RAISE_CLASS,
    BR_UNTYPED_TEMP,
    BR_UNTYPED_VAR,
    BR_BRANCH_NOT_BOOL,
    BR_KEYWORDS_LEFT,
    BR_CALL_SPEC,
    NBREAKS
} Break;

static const struct {
    const char *what;   /* expected in the message */
    int typed;          /* break the typed IR of g (else the untyped) */
} breaks[NBREAKS] = {
    [BR_NO_TERMINATOR] = {"does not end in a terminator", 0},
    [BR_TERMINATOR_INSIDE] = {"terminator in the middle", 0},
    [BR_EMPTY_BLOCK] = {"empty block", 0},
    [BR_NSUCC] = {"successors", 0},
    [BR_SUCC_RANGE] = {"out of range (", 0},
    [BR_ENTRY_PRED] = {"entry block has 1 predecessors", 0},
    [BR_UNREACHABLE] = {"unreachable", 0},
    [BR_NARGS] = {"1 operands", 0},
    [BR_ARG_RANGE] = {"out of range", 0},
    [BR_ARG_OTHER_BLOCK] = {"not defined in this block", 0},
    [BR_ARG_BEFORE_DEF] = {"before its definition", 0},
    [BR_DEF_TWICE] = {"defined twice", 0},
    [BR_DST_ON_STORE] = {"defines t", 0},
    [BR_NO_DST] = {"defines t-1", 0},
    [BR_VAR_RANGE] = {"variable v999 out of range", 0},
    [BR_BINOP_SUB] = {"binary operator 99", 0},
    [BR_OP_RANGE] = {"op 1234 out of range", 0},
    [BR_SLOT_LOAD_ELSEWHERE] = {"an entry of b", 0},
    [BR_SLOT_STORE_NOT_PRED] = {"is no successor", 0},
    [BR_SLOT_DEPTH] = {"stack depths at b", 0},
    [BR_SLOT_LOAD_AFTER_STORE] = {"after this block stored it", 0},
    [BR_BLOCK_ID] = {"has id", 0},
    [BR_RAISE_CLASS] = {"not an exception class", 0},
    [BR_UNTYPED_TEMP] = {"has no type", 1},
    [BR_UNTYPED_VAR] = {"variable s has no type", 1},
    [BR_BRANCH_NOT_BOOL] = {"branches on int32, not bool", 1},
    [BR_KEYWORDS_LEFT] = {"keyword arguments left", 1},
    [BR_CALL_SPEC] = {"a specialisation on a call of no device function", 1},
};

/* Breaks f as `br` says; 0 when g's IR lacks what the break needs. */
static int break_ir(GjCtx *c, GjFunc *f, Break br) {
    GjBlock *b0 = f->blocks[0], *last = f->blocks[f->nblocks - 1];
    GjBlock *bin = block_with(f, GJ_OP_BINOP), *branch = block_with(f, GJ_OP_BRANCH);
    GjBlock *store = block_with(f, GJ_OP_STORE_VAR);
    int32_t k;
    switch (br) {
    case BR_NO_TERMINATOR: b0->nins--; return 1;
    case BR_TERMINATOR_INSIDE: b0->ins[0] = b0->ins[b0->nins - 1]; return 1;
    case BR_EMPTY_BLOCK: last->nins = 0; return 1;
    case BR_NSUCC: branch->nsucc = 1; return 1;
    case BR_SUCC_RANGE: branch->succ[1] = 99; return 1;
    case BR_ENTRY_PRED: branch->succ[1] = 0; return 1;
    case BR_UNREACHABLE: {
        /* f's b0 branches to b1 (a = a + b) and b2 (return a) */
        b0->succ[0] = b0->succ[1];
        return 1;
    }
    case BR_NARGS: bin->ins[find(bin, GJ_OP_BINOP, 0)].nargs = 1; return 1;
    case BR_ARG_RANGE: bin->ins[find(bin, GJ_OP_BINOP, 0)].args[0] = 1 << 20; return 1;
    case BR_ARG_OTHER_BLOCK: {
        k = find(bin, GJ_OP_BINOP, 0);
        for (int32_t i = 0; i < f->nblocks; i++) {
            GjBlock *o = f->blocks[i];
            if (o != bin && o->nins > 0 && o->ins[0].dst >= 0) {
                bin->ins[k].args[0] = o->ins[0].dst;
                return 1;
            }
        }
        return 0;
    }
    case BR_ARG_BEFORE_DEF:
        k = find(bin, GJ_OP_BINOP, 0);
        bin->ins[k].args[0] = bin->ins[k].dst;
        return 1;
    case BR_DEF_TWICE:
        k = find(bin, GJ_OP_BINOP, 0);
        bin->ins[k].dst = bin->ins[0].dst;
        return 1;
    case BR_DST_ON_STORE: store->ins[find(store, GJ_OP_STORE_VAR, 0)].dst = 0; return 1;
    case BR_NO_DST: bin->ins[find(bin, GJ_OP_BINOP, 0)].dst = -1; return 1;
    case BR_VAR_RANGE: store->ins[find(store, GJ_OP_STORE_VAR, 0)].var = 999; return 1;
    case BR_BINOP_SUB: bin->ins[find(bin, GJ_OP_BINOP, 0)].sub = 99; return 1;
    case BR_OP_RANGE: b0->ins[0].op = (GjOp)1234; return 1;
    case BR_SLOT_LOAD_ELSEWHERE: {
        GjBlock *b = slot_load(f, &k);
        int32_t other = b ? slot_of_other(f, b->id) : -1;
        if (other < 0)
            return 0;
        b->ins[k].var = other;
        return 1;
    }
    case BR_SLOT_STORE_NOT_PRED: {
        /* the entry block stores no slot: make its first store one of a
           block it does not jump to */
        for (int32_t v = 0; v < f->nvars; v++) {
            const GjVar *var = &f->vars[v];
            if (var->kind == GJ_VAR_STACK && var->block != b0->succ[0] &&
                (b0->nsucc < 2 || var->block != b0->succ[1]) &&
                (k = find(b0, GJ_OP_STORE_VAR, 0)) >= 0) {
                b0->ins[k].var = v;
                return 1;
            }
        }
        return 0;
    }
    case BR_SLOT_DEPTH:
        /* a store to a stack slot dropped: its successor's entry then
           differs by predecessor */
        for (int32_t i = 0; i < f->nblocks; i++) {
            GjBlock *b = f->blocks[i];
            for (k = 0; k < b->nins; k++) {
                if (b->ins[k].op == GJ_OP_STORE_VAR &&
                    f->vars[b->ins[k].var].kind == GJ_VAR_STACK) {
                    drop_ins(b, k);
                    return 1;
                }
            }
        }
        return 0;
    case BR_SLOT_LOAD_AFTER_STORE: {
        /* a block that loads its entry slot made a loop of itself, storing
           the slot and then loading it again */
        GjBlock *b = slot_load(f, &k);
        if (!b || b->nsucc < 1)
            return 0;
        b->succ[0] = b->id;
        GjIns *ins = GJ_NEW_N(&c->arena, GjIns, b->nins + 2);
        memcpy(ins, b->ins, sizeof *ins * (size_t)(k + 1));
        memcpy(ins + k + 3, b->ins + k + 1, sizeof *ins * (size_t)(b->nins - k - 1));
        ins[k + 1] = (GjIns){.op = GJ_OP_STORE_VAR,
                             .dst = -1,
                             .nargs = 1,
                             .args = &b->ins[k].dst,
                             .var = b->ins[k].var};
        ins[k + 2] = (GjIns){.op = GJ_OP_LOAD_VAR, .dst = gj_ir_temp(c, f), .var = b->ins[k].var};
        b->ins = ins;
        b->nins += 2;
        return 1;
    }
    case BR_BLOCK_ID: last->id = 0; return 1;
    case BR_RAISE_CLASS: {
        GjIns *t = &last->ins[last->nins - 1];
        *t = (GjIns){.op = GJ_OP_RAISE,
                     .dst = -1,
                     .var = -1,
                     .loc = t->loc,
                     .global = {.key = "x", .kind = GJ_GLOBAL_CONST, .name = "x"}};
        return 1;
    }
    case BR_UNTYPED_TEMP: f->temp_types[bin->ins[find(bin, GJ_OP_BINOP, 0)].dst] = NULL; return 1;
    case BR_UNTYPED_VAR: f->vars[gj_ir_var(c, f, "s", GJ_VAR_LOCAL)].type = NULL; return 1;
    case BR_BRANCH_NOT_BOOL:
        f->temp_types[branch->ins[branch->nins - 1].args[0]] = &gj_ty_int32;
        return 1;
    case BR_KEYWORDS_LEFT: {
        GjBlock *call = block_with(f, GJ_OP_CALL);
        static GjConst name = {.kind = GJ_CONST_STR, .s = "stop"};
        call->ins[find(call, GJ_OP_CALL, 0)].c =
            (GjConst){.kind = GJ_CONST_TUPLE, .items = &name, .n = 1};
        return 1;
    }
    case BR_CALL_SPEC: {   /* g's call of range(), an intrinsic */
        static GjSpec spec;
        GjBlock *call = block_with(f, GJ_OP_CALL);
        call->ins[find(call, GJ_OP_CALL, 0)].spec = &spec;
        return 1;
    }
    case NBREAKS: break;
    }
    return 0;
}

static void test_verifier_catches(Break br) {
    GjCtx c;
    ctx(&c);
    int uses_f = br == BR_UNREACHABLE;
    GjCodeView *cv = uses_f ? F_VIEW(&c, 11, f_311, &gj_ty_int64, &gj_ty_int64)
                            : G_VIEW(&c, &gj_ty_float32, &gj_ty_int32);
    GjFunc *f = NULL;
    if (frontend(&c, cv, &f, breaks[br].typed) != GJ_OK) {
        CHECK(0, "break %d: the unbroken IR fails: %s", (int)br, diag_text(&c));
        gj_ctx_free(&c);
        return;
    }
    CHECK(break_ir(&c, f, br), "break %d (%s): nothing to break", (int)br, breaks[br].what);
    GjStatus st = gj_ir_verify(&c, f, "the test");
    CHECK(st == GJ_ERR && c.diag && c.diag->kind == GJ_DIAG_INTERNAL &&
              strstr(c.diag->message, breaks[br].what) &&
              strstr(c.diag->message, "IR verifier: after the test: ") &&
              strstr(c.diag->message, uses_f ? ": f" : ": g"),
          "break %d: want \"%s\", got: %s", (int)br, breaks[br].what, diag_text(&c));
    gj_ctx_free(&c);
}

/* Off, the verifier lets broken IR through (release builds); the switch is
   GPUJIT_VERIFY_IR, read by gj_ctx_init. */
static void test_verifier_switch(void) {
    GjCtx c;
    ctx(&c);
    GjFunc *f = NULL;
    CHECK(frontend(&c, G_VIEW(&c, NULL, NULL), &f, 0) == GJ_OK, "g: %s", diag_text(&c));
    if (f) {
        f->blocks[0]->nins--;
        c.verify_ir = 0;
        CHECK(gj_ir_verify(&c, f, "x") == GJ_OK && !c.diag, "ran while off");
    }
    gj_ctx_free(&c);
    setenv("GPUJIT_VERIFY_IR", "1", 1);
    gj_ctx_init(&c);
    CHECK(c.verify_ir == 1, "GPUJIT_VERIFY_IR=1 leaves it off");
    gj_ctx_free(&c);
    setenv("GPUJIT_VERIFY_IR", "0", 1);
    gj_ctx_init(&c);
    CHECK(c.verify_ir == 0, "GPUJIT_VERIFY_IR=0 leaves it on");
    gj_ctx_free(&c);
    unsetenv("GPUJIT_VERIFY_IR");
    gj_ctx_init(&c);
#ifdef NDEBUG
    CHECK(c.verify_ir == 0, "on by default in a release build");
#else
    CHECK(c.verify_ir == 1, "off by default in a debug build");
#endif
    gj_ctx_free(&c);
}

int main(void) {
    test_decode_versions();
    test_decode_refuses_unknown_version();
    test_decode_refuses_construct();
    test_build_f();
    test_infer_f();
    test_infer_g();
    for (int br = 0; br < NBREAKS; br++)
        test_verifier_catches((Break)br);
    test_verifier_switch();
    printf("ok: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
