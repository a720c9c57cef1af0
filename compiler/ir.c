/*
 * ir.c - constructors, op properties and the text dump of the IR (ir.h).
 *
 * Everything is allocated from the compilation's arena; growing arrays use
 * gj_arena_grow, so a GjIns pointer into a block is valid only until the
 * next instruction is appended to that block.  Out of memory records an
 * INTERNAL diagnostic; the constructors then return NULL or -1 and callers
 * stop at the next check of c->diag.
 *
 * The dump (GPUJIT_DUMP=ir, and the tests) prints one function as
 *
 *     function saxpy(a, x, y, out)  file.py:3
 *       vars: v0 a (arg), v1 x (arg), ..., v5 i, v6 $s0 (stack)
 *     b0 @0:
 *       t0 = GLOBAL gpujit (module)            ; 5
 *       t1 = GETATTR t0 .grid                  ; 5
 *       ...
 *       BRANCH t7 -> b1, b2                    ; 6
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int nargs;
    int term;
    unsigned effects;
} op_info[] = {
#define X(name, nargs, term, effects, doc) {#name, nargs, term, effects},
    GJ_IR_OPS(X)
#undef X
};

static const char *const binop_symbols[GJ_NBINOPS] = {
    [GJ_BIN_ADD] = "+",       [GJ_BIN_SUB] = "-", [GJ_BIN_MUL] = "*",  [GJ_BIN_TRUEDIV] = "/",
    [GJ_BIN_FLOORDIV] = "//", [GJ_BIN_MOD] = "%", [GJ_BIN_POW] = "**", [GJ_BIN_LSHIFT] = "<<",
    [GJ_BIN_RSHIFT] = ">>",   [GJ_BIN_AND] = "&", [GJ_BIN_OR] = "|",   [GJ_BIN_XOR] = "^",
    [GJ_BIN_MATMUL] = "@",
};

static void *oom(GjCtx *c) {
    gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    return NULL;
}

GjFunc *gj_ir_func_new(GjCtx *c, const GjCodeView *code) {
    GjFunc *f = GJ_NEW(&c->arena, GjFunc);
    if (!f)
        return oom(c);
    f->code = code;
    return f;
}

GjBlock *gj_ir_block_new(GjCtx *c, GjFunc *f, int32_t offset) {
    GjBlock *b = GJ_NEW(&c->arena, GjBlock);
    GjBlock **blocks =
        gj_arena_grow(&c->arena, f->blocks, &f->blocks_cap, f->nblocks + 1, sizeof *f->blocks);
    if (!b || !blocks)
        return oom(c);
    f->blocks = blocks;
    b->id = f->nblocks;
    b->offset = offset;
    f->blocks[f->nblocks++] = b;
    return b;
}

int32_t gj_ir_var(GjCtx *c, GjFunc *f, const char *name, GjVarKind kind) {
    for (int32_t v = 0; v < f->nvars; v++) {
        if (strcmp(f->vars[v].name, name) == 0)
            return v;
    }
    GjVar *vars = gj_arena_grow(&c->arena, f->vars, &f->vars_cap, f->nvars + 1, sizeof *vars);
    char *copy = gj_arena_strdup(&c->arena, name);
    if (!vars || !copy) {
        oom(c);
        return -1;
    }
    f->vars = vars;
    f->vars[f->nvars] = (GjVar){.name = copy, .kind = kind, .def_loc = {0, -1, -1}};
    return f->nvars++;
}

int32_t gj_ir_temp(GjCtx *c, GjFunc *f) {
    const GjType **types =
        gj_arena_grow(&c->arena, f->temp_types, &f->temps_cap, f->ntemps + 1, sizeof *types);
    if (!types) {
        oom(c);
        return -1;
    }
    f->temp_types = types;
    f->temp_types[f->ntemps] = NULL;
    return f->ntemps++;
}

GjIns *gj_ir_emit(GjCtx *c, GjBlock *b, GjOp op, GjLoc loc, int32_t nargs, const int32_t *args) {
    GjIns *ins = gj_arena_grow(&c->arena, b->ins, &b->cap, b->nins + 1, sizeof *ins);
    int32_t *copy = nargs > 0 ? GJ_NEW_N(&c->arena, int32_t, nargs) : NULL;
    if (!ins || (nargs > 0 && !copy))
        return oom(c);
    b->ins = ins;
    if (nargs > 0)
        memcpy(copy, args, sizeof *copy * (size_t)nargs);
    GjIns *it = &b->ins[b->nins++];
    *it = (GjIns){.op = op, .dst = -1, .nargs = nargs, .args = copy, .var = -1, .loc = loc};
    return it;
}

int32_t gj_ir_emit_value(GjCtx *c, GjFunc *f, GjBlock *b, GjOp op, GjLoc loc, int32_t nargs,
                         const int32_t *args, GjIns **out) {
    int32_t t = gj_ir_temp(c, f);
    GjIns *ins = t < 0 ? NULL : gj_ir_emit(c, b, op, loc, nargs, args);
    if (out)
        *out = ins;
    if (!ins)
        return -1;
    ins->dst = t;
    return t;
}

const char *gj_ir_op_name(GjOp op) { return (unsigned)op < GJ_NOPS ? op_info[op].name : "?"; }

int gj_ir_op_is_terminator(GjOp op) { return (unsigned)op < GJ_NOPS && op_info[op].term; }

unsigned gj_ir_op_effects(GjOp op) { return (unsigned)op < GJ_NOPS ? op_info[op].effects : 0; }

const char *gj_ir_binop_symbol(GjBinop b) {
    return (unsigned)b < GJ_NBINOPS ? binop_symbols[b] : "?";
}

const char *gj_ir_unop_symbol(GjUnop u) {
    switch (u) {
    case GJ_UN_NEG: return "-";
    case GJ_UN_POS: return "+";
    case GJ_UN_NOT: return "not";
    case GJ_UN_INVERT: return "~";
    }
    return "?";
}

const char *gj_ir_cmp_symbol(GjCmp k) {
    switch (k) {
    case GJ_CMP_LT: return "<";
    case GJ_CMP_LE: return "<=";
    case GJ_CMP_EQ: return "==";
    case GJ_CMP_NE: return "!=";
    case GJ_CMP_GT: return ">";
    case GJ_CMP_GE: return ">=";
    }
    return "?";
}

/* ---- dump ------------------------------------------------------------- */

static const char *const global_kind_names[] = {
    [GJ_GLOBAL_MISSING] = "missing",     [GJ_GLOBAL_MODULE] = "module",
    [GJ_GLOBAL_BUILTIN] = "builtin",     [GJ_GLOBAL_INTRINSIC] = "intrinsic",
    [GJ_GLOBAL_CONST] = "const",         [GJ_GLOBAL_OTHER] = "other",
    [GJ_GLOBAL_FUNCTION] = "function",   [GJ_GLOBAL_ARRAY] = "array",
    [GJ_GLOBAL_EXCEPTION] = "exception",
};

static const char *const var_kind_names[] = {
    [GJ_VAR_ARG] = " (arg)",
    [GJ_VAR_LOCAL] = "",
    [GJ_VAR_STACK] = " (stack)",
};

static int dump_const(FILE *out, const GjConst *k) {
    switch (k->kind) {
    case GJ_CONST_NONE: return fprintf(out, "None");
    case GJ_CONST_BOOL: return fprintf(out, "%s", k->i ? "True" : "False");
    case GJ_CONST_INT:
        return k->s ? fprintf(out, "%s(%lld)", k->s, (long long)k->i)
                    : fprintf(out, "%lld", (long long)k->i);
    case GJ_CONST_FLOAT:
        return k->s ? fprintf(out, "%s(%.17g)", k->s, k->f) : fprintf(out, "%.17g", k->f);
    case GJ_CONST_COMPLEX: return fprintf(out, "%s(%.17g%+.17gj)", k->s ? k->s : "", k->f, k->im);
    case GJ_CONST_STR: return fprintf(out, "'%s'", k->s);
    case GJ_CONST_TUPLE: {
        int n = fprintf(out, "(");
        for (int32_t i = 0; i < k->n; i++) {
            n += i ? fprintf(out, ", ") : 0;
            n += dump_const(out, &k->items[i]);
        }
        return n + fprintf(out, k->n == 1 ? ",)" : ")");
    }
    case GJ_CONST_SLICE: return fprintf(out, "<slice>");
    case GJ_CONST_OTHER: return fprintf(out, "<%s>", k->s ? k->s : "object");
    }
    return 0;
}

/* Prints the part after "tN = OP"; returns the columns written.  Jump
   targets are the block's succ[], printed by dump_ins. */
static int dump_operands(FILE *out, const GjFunc *f, const GjIns *ins) {
    int n = 0;
    switch (ins->op) {
    case GJ_OP_CONST: return fprintf(out, " ") + dump_const(out, &ins->c);
    case GJ_OP_GLOBAL:
        return fprintf(out, " %s (%s %s)", ins->global.key, global_kind_names[ins->global.kind],
                       ins->global.name ? ins->global.name : "");
    case GJ_OP_LOAD_VAR: return fprintf(out, " %s", f->vars[ins->var].name);
    case GJ_OP_STORE_VAR: return fprintf(out, " %s = t%d", f->vars[ins->var].name, ins->args[0]);
    case GJ_OP_BINOP:
        return fprintf(out, " t%d %s t%d", ins->args[0], gj_ir_binop_symbol((GjBinop)ins->sub),
                       ins->args[1]);
    case GJ_OP_UNOP:
        return fprintf(out, " %s t%d", gj_ir_unop_symbol((GjUnop)ins->sub), ins->args[0]);
    case GJ_OP_COMPARE:
        return fprintf(out, " t%d %s t%d", ins->args[0], gj_ir_cmp_symbol((GjCmp)ins->sub),
                       ins->args[1]);
    case GJ_OP_GETATTR: return fprintf(out, " t%d .%s", ins->args[0], ins->name);
    case GJ_OP_TUPLE_GET: return fprintf(out, " t%d [%lld]", ins->args[0], (long long)ins->i);
    case GJ_OP_RAISE: return fprintf(out, " %s ", ins->global.name) + dump_const(out, &ins->c);
    case GJ_OP_JUMP:
    case GJ_OP_BRANCH:
    case GJ_OP_TRUTH:
    case GJ_OP_GETITEM:
    case GJ_OP_SETITEM:
    case GJ_OP_CALL:
    case GJ_OP_BUILD_TUPLE:
    case GJ_OP_BUILD_SLICE:
    case GJ_OP_GET_ITER:
    case GJ_OP_ITER_VALID:
    case GJ_OP_ITER_VALUE:
    case GJ_OP_ITER_NEXT:
    case GJ_OP_RETURN:
    case GJ_NOPS: break;
    }
    for (int32_t i = 0; i < ins->nargs; i++)
        n += fprintf(out, "%s t%d", i ? "," : "", ins->args[i]);
    return n;
}

static void dump_ins(FILE *out, const GjFunc *f, const GjBlock *b, const GjIns *ins) {
    int n = fprintf(out, "    ");
    if (ins->dst >= 0 && f->temp_types && f->temp_types[ins->dst])
        n += fprintf(out, "t%d: %s = ", ins->dst, f->temp_types[ins->dst]->name);
    else if (ins->dst >= 0)
        n += fprintf(out, "t%d = ", ins->dst);
    n += fprintf(out, "%s", gj_ir_op_name(ins->op));
    n += dump_operands(out, f, ins);
    if (ins->op == GJ_OP_JUMP && b->nsucc > 0)
        n += fprintf(out, " -> b%d", b->succ[0]);
    if (ins->op == GJ_OP_BRANCH && b->nsucc > 1)
        n += fprintf(out, " -> b%d, b%d", b->succ[0], b->succ[1]);
    if (ins->loc.line > 0)
        fprintf(out, "%*s; %d", n < 44 ? 44 - n : 1, "", ins->loc.line);
    fprintf(out, "\n");
}

void gj_ir_dump(const GjFunc *f, void *file) {
    FILE *out = file;
    const GjCodeView *code = f->code;
    fprintf(out, "function %s(", code->name);
    for (int32_t i = 0; i < code->argcount; i++)
        fprintf(out, "%s%s", i ? ", " : "", code->varnames[i]);
    fprintf(out, ")  %s:%d\n  vars:", code->filename, code->firstlineno);
    for (int32_t v = 0; v < f->nvars; v++) {
        fprintf(out, "%s v%d %s%s", v ? "," : "", v, f->vars[v].name,
                var_kind_names[f->vars[v].kind]);
        if (f->vars[v].type)
            fprintf(out, ": %s", f->vars[v].type->name);
    }
    fprintf(out, "\n");
    for (int32_t i = 0; i < f->nblocks; i++) {
        const GjBlock *b = f->blocks[i];
        fprintf(out, "b%d @%d:\n", b->id, b->offset);
        for (int32_t k = 0; k < b->nins; k++)
            dump_ins(out, f, b, &b->ins[k]);
    }
}
