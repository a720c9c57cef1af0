/*
 * irverify.c - the IR verifier (gj_ir_verify in ir.h): checks the invariants
 * ir.h and build.c state, after each pass that makes or changes IR.
 *
 * A pass that breaks an invariant is a compiler bug; without the verifier it
 * shows up later as a crash in lowering or as wrong code.  With it, the bug
 * is an INTERNAL diagnostic (Python's gpujit.InternalError) that names the
 * pass after which it was found, the function, the block and the
 * instruction.  It runs when GjCtx.verify_ir is set: always in builds
 * without NDEBUG (meson's debug buildtype), and under GPUJIT_VERIFY_IR=1 in
 * any build (gj_ctx_init); release builds skip it, since it walks every
 * instruction once more per pass.
 *
 * Input: a GjFunc after build, definite assignment or type inference.  The
 * checks that need types (every temp and variable typed, a bool branch
 * condition, keyword arguments placed, a specialisation on each call of a
 * device function and on no other call) apply once f->ret_type is set, which
 * type inference does last.  It reads the IR only; the first violation is
 * reported and the rest skipped.
 */
#include "ir.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct Verify {
    GjCtx *c;
    const GjFunc *f;
    const char *pass;
    int32_t *def_block;   /* [ntemps]: block defining each temp, or -1 */
    int32_t *def_index;   /* [ntemps]: its instruction's index there */
    int32_t *npreds;      /* [nblocks] */
    int32_t *stored;      /* [nvars]: stamp of the last block that stores it */
} Verify;

static const char *func_name(const GjFunc *f) {
    const GjCodeView *code = f->code;
    return !code ? "?" : code->qualname ? code->qualname : code->name ? code->name : "?";
}

/* Records the violation: "IR verifier: after <pass>: <function>, b<i>,
   instruction <k> (<OP>): <what>".  ins may be NULL (a block or the whole
   function is at fault: k < 0 leaves the instruction out, b NULL the block). */
static GjStatus fail(Verify *v, const GjBlock *b, int32_t k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static GjStatus fail(Verify *v, const GjBlock *b, int32_t k, const char *fmt, ...) {
    char what[300], where[120] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const GjIns *ins = b && k >= 0 && k < b->nins ? &b->ins[k] : NULL;
    if (ins)
        snprintf(where, sizeof where, ", b%d, instruction %d (%s)", (int)b->id, (int)k,
                 gj_ir_op_name(ins->op));
    else if (b)
        snprintf(where, sizeof where, ", b%d", (int)b->id);
    GjLoc loc = ins ? ins->loc : (GjLoc){v->f->code ? v->f->code->firstlineno : 0, -1, -1};
    return gj_error(v->c, GJ_DIAG_INTERNAL, loc, "IR verifier: after %s: %s%s: %s", v->pass,
                    func_name(v->f), where, what);
}

/* Operand count: ops of fixed arity (the X-macro's column) must match it;
   variadic ones have their own bounds.  Returns -1 when nargs is allowed,
   else the fixed count expected (or -2 for a bad variadic count). */
static const int op_nargs[] = {
#define X(name, nargs, term, effects, doc) nargs,
    GJ_IR_OPS(X)
#undef X
};

static int nargs_ok(const GjIns *ins) {
    switch (ins->op) {
    case GJ_OP_CALL: return ins->nargs >= 1;                        /* the callee first */
    case GJ_OP_BUILD_TUPLE: return ins->nargs >= 0;
    case GJ_OP_BUILD_SLICE: return ins->nargs == 2 || ins->nargs == 3;
    case GJ_OP_CONST:
    case GJ_OP_GLOBAL:
    case GJ_OP_LOAD_VAR:
    case GJ_OP_STORE_VAR:
    case GJ_OP_BINOP:
    case GJ_OP_UNOP:
    case GJ_OP_COMPARE:
    case GJ_OP_TRUTH:
    case GJ_OP_GETATTR:
    case GJ_OP_GETITEM:
    case GJ_OP_SETITEM:
    case GJ_OP_TUPLE_GET:
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_VALID:
    case GJ_OP_ITER_VALUE:
    case GJ_OP_ITER_NEXT:
    case GJ_OP_JUMP:
    case GJ_OP_BRANCH:
    case GJ_OP_RETURN:
    case GJ_OP_RAISE: return ins->nargs == op_nargs[ins->op];
    case GJ_NOPS: break;
    }
    return 0;
}

/* Whether the op defines a temp (dst >= 0) or never does (dst == -1). */
static int defines_value(GjOp op) {
    switch (op) {
    case GJ_OP_STORE_VAR:
    case GJ_OP_SETITEM:
    case GJ_OP_JUMP:
    case GJ_OP_BRANCH:
    case GJ_OP_RETURN:
    case GJ_OP_RAISE:
    case GJ_NOPS: return 0;
    case GJ_OP_CONST:
    case GJ_OP_GLOBAL:
    case GJ_OP_LOAD_VAR:
    case GJ_OP_BINOP:
    case GJ_OP_UNOP:
    case GJ_OP_COMPARE:
    case GJ_OP_TRUTH:
    case GJ_OP_GETATTR:
    case GJ_OP_GETITEM:
    case GJ_OP_CALL:
    case GJ_OP_BUILD_TUPLE:
    case GJ_OP_BUILD_SLICE:
    case GJ_OP_TUPLE_GET:
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_VALID:
    case GJ_OP_ITER_VALUE:
    case GJ_OP_ITER_NEXT: return 1;
    }
    return 0;
}

/* Successors a terminator names. */
static int32_t term_nsucc(GjOp op) { return op == GJ_OP_BRANCH ? 2 : op == GJ_OP_JUMP ? 1 : 0; }

/* The immediates an op reads are in range. */
static GjStatus check_immediates(Verify *v, const GjBlock *b, int32_t k) {
    const GjIns *ins = &b->ins[k];
    const GjFunc *f = v->f;
    switch (ins->op) {
    case GJ_OP_LOAD_VAR:
    case GJ_OP_STORE_VAR:
        if (ins->var < 0 || ins->var >= f->nvars)
            return fail(v, b, k, "variable v%d out of range (%d variables)", (int)ins->var,
                        (int)f->nvars);
        return GJ_OK;
    case GJ_OP_BINOP:
        return (unsigned)ins->sub < GJ_NBINOPS
                   ? GJ_OK
                   : fail(v, b, k, "binary operator %d out of range", (int)ins->sub);
    case GJ_OP_UNOP:
        return (unsigned)ins->sub <= GJ_UN_INVERT
                   ? GJ_OK
                   : fail(v, b, k, "unary operator %d out of range", (int)ins->sub);
    case GJ_OP_COMPARE:
        return (unsigned)ins->sub <= GJ_CMP_GE
                   ? GJ_OK
                   : fail(v, b, k, "comparison %d out of range", (int)ins->sub);
    case GJ_OP_GETATTR: return ins->name ? GJ_OK : fail(v, b, k, "no attribute name");
    case GJ_OP_RAISE:
        return ins->global.kind == GJ_GLOBAL_EXCEPTION
                   ? GJ_OK
                   : fail(v, b, k, "raises %s, not an exception class",
                          ins->global.name ? ins->global.name : "nothing");
    case GJ_OP_CONST:
    case GJ_OP_GLOBAL:
    case GJ_OP_TRUTH:
    case GJ_OP_GETITEM:
    case GJ_OP_SETITEM:
    case GJ_OP_CALL:
    case GJ_OP_BUILD_TUPLE:
    case GJ_OP_BUILD_SLICE:
    case GJ_OP_TUPLE_GET:
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_VALID:
    case GJ_OP_ITER_VALUE:
    case GJ_OP_ITER_NEXT:
    case GJ_OP_JUMP:
    case GJ_OP_BRANCH:
    case GJ_OP_RETURN:
    case GJ_NOPS: break;
    }
    return GJ_OK;
}

/* One instruction: its place (terminators last), operand count, its
   operands (read only after their definition in the same block) and
   immediates. */
static GjStatus check_ins(Verify *v, const GjBlock *b, int32_t k) {
    const GjIns *ins = &b->ins[k];
    const GjFunc *f = v->f;
    int last = k == b->nins - 1;
    if (gj_ir_op_is_terminator(ins->op) && !last)
        return fail(v, b, k, "terminator in the middle of the block");
    if (last && !gj_ir_op_is_terminator(ins->op))
        return fail(v, b, k, "the block does not end in a terminator");
    if (!nargs_ok(ins) || (ins->nargs > 0 && !ins->args))
        return fail(v, b, k, "%d operands", (int)ins->nargs);
    for (int32_t a = 0; a < ins->nargs; a++) {
        int32_t t = ins->args[a];
        if (t < 0 || t >= f->ntemps)
            return fail(v, b, k, "operand %d is t%d, out of range (%d temps)", (int)a, (int)t,
                        (int)f->ntemps);
        if (v->def_block[t] != b->id)
            return fail(v, b, k, "operand %d, t%d, is not defined in this block", (int)a, (int)t);
        if (v->def_index[t] >= k)
            return fail(v, b, k, "operand %d, t%d, is read before its definition", (int)a, (int)t);
    }
    return check_immediates(v, b, k);
}

/* Where each temp is defined, before any use is checked, so a use that
   comes first is told apart from one of a temp never defined. */
static GjStatus record_defs(Verify *v) {
    const GjFunc *f = v->f;
    for (int32_t i = 0; i < f->nblocks; i++) {
        const GjBlock *b = f->blocks[i];
        if (!b || b->id != i)
            return fail(v, NULL, -1, "blocks[%d] has id %d", (int)i, b ? (int)b->id : -1);
        for (int32_t k = 0; k < b->nins; k++) {
            const GjIns *ins = &b->ins[k];
            if ((unsigned)ins->op >= GJ_NOPS)
                return fail(v, b, k, "op %d out of range", (int)ins->op);
            if (defines_value(ins->op) ? ins->dst < 0 || ins->dst >= f->ntemps : ins->dst != -1)
                return fail(v, b, k, "defines t%d", (int)ins->dst);
            if (ins->dst < 0)
                continue;
            if (v->def_block[ins->dst] >= 0)
                return fail(v, b, k, "t%d is defined twice (first in b%d)", (int)ins->dst,
                            (int)v->def_block[ins->dst]);
            v->def_block[ins->dst] = b->id;
            v->def_index[ins->dst] = k;
        }
    }
    return GJ_OK;
}

/* A stack-slot variable $s<k>.b<id> is a block argument of block id: loaded
   only there, and before any store to it there (a block that jumps to
   itself reads its entry before it overwrites it); stored only by a
   predecessor of block id. */
static GjStatus check_slot(Verify *v, const GjBlock *b, int32_t k, int32_t stamp) {
    const GjIns *ins = &b->ins[k];
    if (ins->op != GJ_OP_LOAD_VAR && ins->op != GJ_OP_STORE_VAR)
        return GJ_OK;
    const GjVar *var = &v->f->vars[ins->var];
    if (var->kind != GJ_VAR_STACK)
        return GJ_OK;
    if (var->block < 0 || var->block >= v->f->nblocks)
        return fail(v, b, k, "stack slot %s belongs to block %d, out of range", var->name,
                    (int)var->block);
    if (ins->op == GJ_OP_LOAD_VAR && var->block != b->id)
        return fail(v, b, k, "loads %s, an entry of b%d", var->name, (int)var->block);
    if (ins->op == GJ_OP_LOAD_VAR && v->stored[ins->var] == stamp)
        return fail(v, b, k, "loads %s after this block stored it", var->name);
    if (ins->op == GJ_OP_STORE_VAR) {
        int is_pred = 0;
        for (int32_t s = 0; s < b->nsucc; s++)
            is_pred |= b->succ[s] == var->block;
        if (!is_pred)
            return fail(v, b, k, "stores %s, but b%d is no successor", var->name, (int)var->block);
        v->stored[ins->var] = stamp;
    }
    return GJ_OK;
}

/* The block's successors match its terminator and are in range; every
   predecessor stores all the entry slots of each successor, so the stack
   depths that meet at a block agree (build.c's enter_block, in the IR). */
static GjStatus check_edges(Verify *v, const GjBlock *b, int32_t stamp) {
    const GjFunc *f = v->f;
    const GjIns *term = &b->ins[b->nins - 1];
    if (b->nsucc != term_nsucc(term->op))
        return fail(v, b, b->nins - 1, "%d successors", (int)b->nsucc);
    for (int32_t s = 0; s < b->nsucc; s++) {
        int32_t to = b->succ[s];
        if (to < 0 || to >= f->nblocks)
            return fail(v, b, b->nins - 1, "successor b%d out of range (%d blocks)", (int)to,
                        (int)f->nblocks);
        v->npreds[to]++;
        for (int32_t x = 0; x < f->nvars; x++) {
            const GjVar *var = &f->vars[x];
            if (var->kind == GJ_VAR_STACK && var->block == to && v->stored[x] != stamp)
                return fail(v, b, b->nins - 1,
                            "does not store %s on its edge to b%d: the stack "
                            "depths at b%d's entry disagree",
                            var->name, (int)to, (int)to);
        }
    }
    return GJ_OK;
}

/* Whether CALL ins calls a device function (typed: its callee's type). */
static int calls_device_function(const GjFunc *f, const GjIns *ins) {
    const GjType *ft = f->temp_types[ins->args[0]];
    return ft && ft->kind == GJ_TK_CALLABLE && ft->callee;
}

/* After type inference: every temp, variable and the result typed; a
   branch on a bool; keyword arguments moved to their positions; the
   specialisation of each device-function call recorded (GjIns.spec). */
static GjStatus check_types(Verify *v) {
    const GjFunc *f = v->f;
    for (int32_t x = 0; x < f->nvars; x++) {
        if (!f->vars[x].type)
            return fail(v, NULL, -1, "variable %s has no type", f->vars[x].name);
    }
    for (int32_t i = 0; i < f->nblocks; i++) {
        const GjBlock *b = f->blocks[i];
        for (int32_t k = 0; k < b->nins; k++) {
            const GjIns *ins = &b->ins[k];
            if (ins->dst >= 0 && !f->temp_types[ins->dst])
                return fail(v, b, k, "t%d has no type", (int)ins->dst);
            if (ins->op == GJ_OP_BRANCH && f->temp_types[ins->args[0]] != &gj_ty_bool)
                return fail(v, b, k, "branches on %s, not bool", f->temp_types[ins->args[0]]->name);
            if (ins->op == GJ_OP_CALL && ins->c.kind != GJ_CONST_NONE &&
                !(ins->c.kind == GJ_CONST_TUPLE && ins->c.n == 0))
                return fail(v, b, k, "keyword arguments left after typing");
            if (ins->op == GJ_OP_CALL && !ins->spec != !calls_device_function(f, ins))
                return fail(v, b, k,
                            ins->spec ? "a specialisation on a call of no device function"
                                      : "a device-function call without its specialisation");
        }
    }
    return GJ_OK;
}

static GjStatus verify(Verify *v) {
    const GjFunc *f = v->f;
    if (f->nblocks < 1 || !f->blocks)
        return fail(v, NULL, -1, "no blocks");
    for (int32_t t = 0; t < f->ntemps; t++)
        v->def_block[t] = -1;
    for (int32_t x = 0; x < f->nvars; x++)
        v->stored[x] = -1;
    if (record_defs(v) != GJ_OK)
        return GJ_ERR;
    for (int32_t i = 0; i < f->nblocks; i++) {
        const GjBlock *b = f->blocks[i];
        if (b->nins < 1)
            return fail(v, b, -1, "empty block: no terminator");
        for (int32_t k = 0; k < b->nins; k++) {
            if (check_ins(v, b, k) != GJ_OK || check_slot(v, b, k, i) != GJ_OK)
                return GJ_ERR;
        }
        if (check_edges(v, b, i) != GJ_OK)
            return GJ_ERR;
    }
    if (v->npreds[0] > 0)
        return fail(v, f->blocks[0], -1, "the entry block has %d predecessors", (int)v->npreds[0]);
    for (int32_t i = 1; i < f->nblocks; i++) {
        if (v->npreds[i] == 0)
            return fail(v, f->blocks[i], -1, "unreachable: no predecessors");
    }
    return f->ret_type ? check_types(v) : GJ_OK;
}

GjStatus gj_ir_verify(GjCtx *c, const GjFunc *f, const char *after_pass) {
    if (!c->verify_ir || c->diag)
        return c->diag ? GJ_ERR : GJ_OK;
    Verify v = {.c = c, .f = f, .pass = after_pass};
    v.def_block = GJ_NEW_N(&c->arena, int32_t, f->ntemps + 1);
    v.def_index = GJ_NEW_N(&c->arena, int32_t, f->ntemps + 1);
    v.npreds = GJ_NEW_N(&c->arena, int32_t, f->nblocks + 1);
    v.stored = GJ_NEW_N(&c->arena, int32_t, f->nvars + 1);
    if (!v.def_block || !v.def_index || !v.npreds || !v.stored)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    return verify(&v);
}
