/*
 * build.c - normalised bytecode -> IR: the CFG and the operand stack turned
 * into temps and variables (gj_build_func in ir.h).
 *
 * Input: the instructions gj_bc_decode made (frontend.c decodes first).
 * Steps: cut the code into basic blocks (a block starts
 * at 0, at each jump target and after each jump or return); mark the blocks
 * reachable from the entry and create their GjBlocks in bytecode order; then
 * interpret each block's ops on an abstract stack of Vals, emitting IR, in
 * worklist order from the entry.
 *
 * A Val is a temp of the current block, or something not emitted yet: a
 * constant, a compile-time object (module, builtin, intrinsic or attribute
 * of one: a "static"), the call protocol's NULL, a stack slot inherited
 * from a predecessor, or an exception made by calling an exception class,
 * which only RAISE consumes (it becomes the RAISE instruction's immediates:
 * kernels have no exception objects).  Constants and statics are emitted where they are
 * used, so `math.sqrt` costs nothing until called and `min(a if c else b, 1)`
 * does not push a callable through a variable.
 *
 * At a block's end, the entries still on the stack pass to each successor
 * through that successor's entry variables: entry k of block id is variable
 * $s<k>.b<id>, stored by every predecessor and loaded only in block id (a
 * block argument).  NULLs and statics pass symbolically, without a store.
 * A successor receives a prefix of the stack (FOR_ITER's exit lacks the
 * iterator's entries and the value, JUMP_IF_*_OR_POP's fall-through one
 * entry); its depth, and where the statics sit, must agree over all its
 * predecessors.
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

#include "bytecode.h"
#include "intrinsics.h"

typedef struct Static Static;
struct Static {
    const GjGlobal *global;   /* a global or closure variable, or NULL: */
    const Static *base;       /*   attribute `attr` of base */
    const char *attr;
    GjLoc loc;
};

typedef enum ValKind {
    V_TEMP,     /* temp n of the current block */
    V_SLOT,     /* variable $s<n>, not loaded yet */
    V_CONST,    /* constant *c, not emitted yet */
    V_STATIC,   /* compile-time object *s, not emitted yet */
    V_NULL,     /* the call protocol's NULL */
    V_EXC,      /* exception class *s called with message *c (NULL: no argument) */
} ValKind;

typedef struct Val {
    ValKind kind;
    int32_t n;            /* V_TEMP, V_SLOT */
    int is_bool;          /* V_TEMP from COMPARE or TRUTH: no TRUTH needed */
    const GjConst *c;     /* V_CONST; V_EXC: the message */
    const Static *s;      /* V_STATIC, V_EXC */
    GjLoc loc;            /* V_CONST, V_STATIC: where it was loaded */
} Val;

typedef struct BlockInfo {
    int32_t start, end;   /* ops [start, end) of the GjBcCode */
    int reachable;
    int entered;          /* entry state known (some predecessor was built) */
    int32_t depth;        /* stack depth at entry */
    Val *entry;           /* [depth]: V_SLOT k, V_NULL or V_STATIC */
    GjBlock *ir;
} BlockInfo;

typedef struct Builder {
    GjCtx *c;
    const GjCodeView *cv;
    GjBcCode bc;
    GjFunc *f;
    int32_t nblocks;
    BlockInfo *blocks;
    int32_t *block_at;    /* op index -> index of the block starting there, or -1 */
    int32_t *worklist;
    int32_t nwork;
    GjBlock *cur;         /* block being built */
    Val *stack;
    int32_t sp, stack_cap;
} Builder;

static GjStatus oom(Builder *b, GjLoc loc) {
    return gj_error(b->c, GJ_DIAG_INTERNAL, loc, "out of memory");
}

/* ---- the abstract stack ----------------------------------------------- */

static GjStatus push(Builder *b, Val v) {
    Val *s = gj_arena_grow(&b->c->arena, b->stack, &b->stack_cap, b->sp + 1, sizeof *s);
    if (!s)
        return oom(b, (GjLoc){0, -1, -1});
    b->stack = s;
    b->stack[b->sp++] = v;
    return GJ_OK;
}

/* Pushes temp t; t < 0 (the emit failed) passes the error on. */
static GjStatus push_temp(Builder *b, int32_t t) {
    if (t < 0)
        return GJ_ERR;
    return push(b, (Val){.kind = V_TEMP, .n = t});
}

static GjStatus need(Builder *b, int32_t n, const GjBcIns *ins) {
    if (b->sp >= n)
        return GJ_OK;
    return gj_error(b->c, GJ_DIAG_INTERNAL, ins->loc, "stack underflow at %s (offset %d)",
                    gj_bc_op_name(ins->op), ins->offset);
}

static Val pop(Builder *b) { return b->stack[--b->sp]; }

/* The variable $s<k>.b<id>: stack entry k on entry to IR block id.  One
   variable per (block, depth), like a block argument: a depth is reused by
   unrelated values (a loop's value, then an inner loop's iterator), which
   must not share one variable and so one type. */
static int32_t slot_var(Builder *b, const GjBlock *block, int32_t k) {
    char name[32];
    snprintf(name, sizeof name, "$s%d.b%d", k, block->id);
    int32_t v = gj_ir_var(b->c, b->f, name, GJ_VAR_STACK);
    if (v >= 0)
        b->f->vars[v].block = block->id;
    return v;
}

/* ---- emitting --------------------------------------------------------- */

static int32_t emit1(Builder *b, GjOp op, GjLoc loc, int32_t a0, GjIns **out) {
    return gj_ir_emit_value(b->c, b->f, b->cur, op, loc, 1, &a0, out);
}

static int32_t emit2(Builder *b, GjOp op, GjLoc loc, int32_t a0, int32_t a1, int32_t sub) {
    int32_t args[2] = {a0, a1};
    GjIns *ins;
    int32_t t = gj_ir_emit_value(b->c, b->f, b->cur, op, loc, 2, args, &ins);
    if (ins)
        ins->sub = sub;
    return t;
}

static int32_t emit_const(Builder *b, const GjConst *k, GjLoc loc) {
    if (k->kind == GJ_CONST_TUPLE) {   /* IR constants are scalars: build the tuple */
        int32_t *items = GJ_NEW_N(&b->c->arena, int32_t, k->n > 0 ? k->n : 1);
        if (!items) {
            oom(b, loc);
            return -1;
        }
        for (int32_t i = 0; i < k->n; i++) {
            if ((items[i] = emit_const(b, &k->items[i], loc)) < 0)
                return -1;
        }
        return gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_BUILD_TUPLE, loc, k->n, items, NULL);
    }
    GjIns *ins;
    int32_t t = gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_CONST, loc, 0, NULL, &ins);
    if (ins)
        ins->c = *k;
    return t;
}

static int32_t emit_static(Builder *b, const Static *s) {
    GjIns *ins;
    if (s->global) {
        int32_t t = gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_GLOBAL, s->loc, 0, NULL, &ins);
        if (ins)
            ins->global = *s->global;
        return t;
    }
    int32_t base = emit_static(b, s->base);
    if (base < 0)
        return -1;
    int32_t t = emit1(b, GJ_OP_GETATTR, s->loc, base, &ins);
    if (ins)
        ins->name = s->attr;
    return t;
}

/* The temp holding v, emitting what v still needs; -1 after an error. */
static int32_t materialise(Builder *b, Val v, GjLoc loc) {
    GjIns *ins;
    int32_t t;
    switch (v.kind) {
    case V_TEMP: return v.n;
    case V_SLOT:
        t = gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_LOAD_VAR, loc, 0, NULL, &ins);
        if (ins)
            ins->var = slot_var(b, b->cur, v.n);
        return t;
    case V_CONST: return emit_const(b, v.c, v.loc);
    case V_STATIC: return emit_static(b, v.s);
    case V_EXC:
        gj_error(b->c, GJ_DIAG_UNSUPPORTED, v.loc,
                 "an exception can only be raised in a kernel (raise %s(...)), not kept as "
                 "a value",
                 v.s->global->key);
        return -1;
    case V_NULL: break;
    }
    gj_error(b->c, GJ_DIAG_INTERNAL, loc, "the call protocol's NULL used as a value");
    return -1;
}

static int32_t pop_value(Builder *b, GjLoc loc) { return materialise(b, pop(b), loc); }

/* bool(v) for a branch; comparisons are bool already. */
static int32_t truth(Builder *b, Val v, GjLoc loc) {
    int32_t t = materialise(b, v, loc);
    if (t < 0 || (v.kind == V_TEMP && v.is_bool))
        return t;
    return emit1(b, GJ_OP_TRUTH, loc, t, NULL);
}

/* ---- block edges ------------------------------------------------------ */

static int same_static(const Static *x, const Static *y) {
    if (x == y)
        return 1;
    if (!x || !y || !x->global != !y->global)
        return 0;
    if (x->global)
        return strcmp(x->global->key, y->global->key) == 0;
    return strcmp(x->attr, y->attr) == 0 && same_static(x->base, y->base);
}

/* Whether static s is a run-time value (math.pi, threadIdx.x, laneid) rather than a
   module or a callable: values cross block edges in stack-slot variables
   like any other (`math.inf if c else 0.0`); the others pass symbolically. */
static int static_is_value(const Static *s) {
    int id;
    if (!s->attr && s->global && s->global->kind == GJ_GLOBAL_INTRINSIC)   /* laneid */
        return (id = gj_intrinsic_lookup_qualified(s->global->name)) >= 0 &&
               gj_intrinsic_is_value((GjIntrinsic)id);
    if (!s->attr || !s->base)
        return 0;
    const Static *base = s->base;
    if (base->global && base->global->kind == GJ_GLOBAL_MODULE) {
        id = gj_intrinsic_lookup(base->global->name, s->attr);
        return id >= 0 && gj_intrinsic_is_value((GjIntrinsic)id);
    }
    const char *dim3 = base->global
                           ? (base->global->kind == GJ_GLOBAL_INTRINSIC ? base->global->name : NULL)
                           : base->attr;
    id = !dim3          ? -1
         : base->global ? gj_intrinsic_lookup_qualified(dim3)
                        : gj_intrinsic_lookup("gpujit", dim3);
    return id >= 0 && (gj_intrinsic_row((GjIntrinsic)id)->flags & GJ_IF_DIM3) &&
           gj_intrinsic_lookup("dim3", s->attr) >= 0;
}

/* What crosses a block edge without a variable: NULL and non-value statics. */
static int passed_symbolically(Val v) {
    return v.kind == V_NULL || (v.kind == V_STATIC && !static_is_value(v.s));
}

/* Records (first predecessor) or checks (later ones) what block `to`
   receives: the bottom `depth` entries of the current stack. */
static GjStatus enter_block(Builder *b, int32_t to, int32_t depth, GjLoc loc) {
    BlockInfo *s = &b->blocks[to];
    if (!s->entered) {
        s->entered = 1;
        s->depth = depth;
        s->entry = GJ_NEW_N(&b->c->arena, Val, depth > 0 ? depth : 1);
        if (!s->entry)
            return oom(b, loc);
        for (int32_t k = 0; k < depth; k++) {
            Val v = b->stack[k];
            s->entry[k] = passed_symbolically(v) ? v : (Val){.kind = V_SLOT, .n = k};
        }
        b->worklist[b->nwork++] = to;
        return GJ_OK;
    }
    if (s->depth != depth)
        return gj_error(b->c, GJ_DIAG_INTERNAL, loc,
                        "operand stack depth %d and %d meet at offset %d", s->depth, depth,
                        b->bc.ins[s->start].offset);
    for (int32_t k = 0; k < depth; k++) {
        Val have = s->entry[k], v = b->stack[k];
        int dynamic = !passed_symbolically(v);
        int ok = have.kind == V_SLOT
                     ? dynamic
                     : have.kind == v.kind && (v.kind == V_NULL || same_static(have.s, v.s));
        if (!ok)
            return gj_error(b->c, GJ_DIAG_UNSUPPORTED, loc,
                            "a module or function chosen at run time is not supported");
    }
    return GJ_OK;
}

/* Ends the current block: stores what each successor receives (the bottom
   depth[i] entries of the stack) into its entry variables, enters the
   successors (block indices) and emits the terminator `op` on cond.  All
   loads come before any store, so a block that jumps to itself reads its
   entry variables before it overwrites them. */
static GjStatus end_block(Builder *b, GjOp op, int32_t cond, int32_t nsucc, const int32_t *succ,
                          const int32_t *depth, GjLoc loc) {
    int32_t *temps = GJ_NEW_N(&b->c->arena, int32_t, b->sp > 0 ? b->sp : 1);
    if (!temps)
        return oom(b, loc);
    for (int32_t k = 0; k < b->sp; k++) {
        Val v = b->stack[k];
        int passed = passed_symbolically(v);
        if (!passed && (temps[k] = materialise(b, v, loc)) < 0)
            return GJ_ERR;
        if (passed)
            temps[k] = -1;
    }
    for (int32_t i = 0; i < nsucc; i++) {
        const GjBlock *to = b->blocks[succ[i]].ir;
        for (int32_t k = 0; k < depth[i]; k++) {
            GjIns *ins =
                temps[k] < 0 ? NULL : gj_ir_emit(b->c, b->cur, GJ_OP_STORE_VAR, loc, 1, &temps[k]);
            if (ins)
                ins->var = slot_var(b, to, k);
        }
        if (b->c->diag || enter_block(b, succ[i], depth[i], loc) != GJ_OK)
            return GJ_ERR;
        b->cur->succ[i] = to->id;
    }
    b->cur->nsucc = nsucc;
    return gj_ir_emit(b->c, b->cur, op, loc, cond >= 0 ? 1 : 0, &cond) ? GJ_OK : GJ_ERR;
}

static GjStatus end_jump(Builder *b, int32_t to, GjLoc loc) {
    int32_t depth = b->sp;
    return end_block(b, GJ_OP_JUMP, -1, 1, &to, &depth, loc);
}

static GjStatus end_branch(Builder *b, int32_t cond, int32_t if_true, int32_t true_depth,
                           int32_t if_false, int32_t false_depth, GjLoc loc) {
    int32_t succ[2] = {if_true, if_false}, depth[2] = {true_depth, false_depth};
    if (cond < 0)
        return GJ_ERR;
    return end_block(b, GJ_OP_BRANCH, cond, 2, succ, depth, loc);
}

/* ---- one op ----------------------------------------------------------- */

static GjStatus load_global(Builder *b, const GjBcIns *ins) {
    const GjGlobal *g = gj_codeview_global(b->cv, ins->name);
    int is_deref = ins->op == GJ_BC_LOAD_DEREF;
    if (!g && is_deref)
        return gj_error(b->c, GJ_DIAG_UNSUPPORTED, ins->loc,
                        "variable '%s' of an enclosing function cannot be used in a kernel",
                        ins->name);
    switch (g ? g->kind : GJ_GLOBAL_MISSING) {
    case GJ_GLOBAL_MISSING:
        return gj_error(b->c, GJ_DIAG_TYPING, ins->loc, "name '%s' is not defined", ins->name);
    case GJ_GLOBAL_OTHER:
        return gj_error(
            b->c, GJ_DIAG_UNSUPPORTED, ins->loc, "%s '%s' of type %s cannot be used in a kernel%s",
            is_deref ? "closure variable" : "global", ins->name, g->name,
            strcmp(g->name, "function") == 0 ? "; decorate it with @gpujit.jit to call it from one"
            : strcmp(g->name, GJ_LOCAL_EXCEPTION_CLASS) == 0
                ? "; define it at module level to raise it in a kernel"
                : "");
    case GJ_GLOBAL_CONST: return push(b, (Val){.kind = V_CONST, .c = &g->value, .loc = ins->loc});
    case GJ_GLOBAL_MODULE:
    case GJ_GLOBAL_BUILTIN:
    case GJ_GLOBAL_INTRINSIC:
    case GJ_GLOBAL_FUNCTION:
    case GJ_GLOBAL_ARRAY:
    case GJ_GLOBAL_EXCEPTION: break;
    }
    Static *s = GJ_NEW(&b->c->arena, Static);
    if (!s)
        return oom(b, ins->loc);
    *s = (Static){.global = g, .loc = ins->loc};
    return push(b, (Val){.kind = V_STATIC, .s = s});
}

static GjStatus load_attr(Builder *b, const GjBcIns *ins) {
    Val v = pop(b);
    if (v.kind == V_STATIC) {   /* math.sqrt, gpujit.threadIdx, threadIdx.x */
        Static *s = GJ_NEW(&b->c->arena, Static);
        if (!s)
            return oom(b, ins->loc);
        *s = (Static){.base = v.s, .attr = ins->name, .loc = ins->loc};
        return push(b, (Val){.kind = V_STATIC, .s = s});
    }
    int32_t t = materialise(b, v, ins->loc);
    GjIns *out;
    if (t < 0 || (t = emit1(b, GJ_OP_GETATTR, ins->loc, t, &out)) < 0)
        return GJ_ERR;
    out->name = ins->name;
    return push_temp(b, t);
}

static GjStatus store_fast(Builder *b, const GjBcIns *ins) {
    int32_t t = pop_value(b, ins->loc);
    int32_t var = gj_ir_var(b->c, b->f, ins->name, GJ_VAR_LOCAL);
    GjIns *out;
    if (t < 0 || var < 0 || !(out = gj_ir_emit(b->c, b->cur, GJ_OP_STORE_VAR, ins->loc, 1, &t)))
        return GJ_ERR;
    out->var = var;
    if (b->f->vars[var].def_loc.line == 0)
        b->f->vars[var].def_loc = ins->loc;
    return GJ_OK;
}

static GjStatus load_fast(Builder *b, const GjBcIns *ins) {
    int32_t var = gj_ir_var(b->c, b->f, ins->name, GJ_VAR_LOCAL);
    GjIns *out;
    int32_t t = var < 0
                    ? -1
                    : gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_LOAD_VAR, ins->loc, 0, NULL, &out);
    if (t < 0)
        return GJ_ERR;
    out->var = var;
    return push_temp(b, t);
}

/* The @gpujit.jit function a call's callee is bound to, or NULL. */
static const GjCodeView *device_callee(Val callee) {
    if (callee.kind != V_STATIC || !callee.s->global ||
        callee.s->global->kind != GJ_GLOBAL_FUNCTION || !callee.s->global->callee)
        return NULL;
    return callee.s->global->callee->code;
}

/* Binds the n arguments given (the last ins->c.n of them keywords) to the
   parameters of device function `code` as Python does: keywords by the
   parameter names, the parameters still missing from __defaults__ (frozen
   constants), so typing and lowering see a positional call that passes
   every parameter.  *out gets the argcount Vals. */
static GjStatus bind_args(Builder *b, const GjBcIns *ins, const GjCodeView *code, const Val *given,
                          int32_t n, Val **out) {
    const char *fn = code->name ? code->name : "?";
    int32_t np = code->argcount, nkw = ins->c.kind == GJ_CONST_TUPLE ? ins->c.n : 0;
    int32_t npos = n - nkw;
    if (npos > np)
        return gj_error(b->c, GJ_DIAG_TYPING, ins->loc, "%s() takes %d argument%s, got %d", fn, np,
                        np == 1 ? "" : "s", npos);
    Val *bound = GJ_NEW_N(&b->c->arena, Val, np > 0 ? np : 1);
    char *set = GJ_NEW_N(&b->c->arena, char, np > 0 ? np : 1);
    if (!bound || !set)
        return oom(b, ins->loc);
    for (int32_t i = 0; i < npos; i++) {
        bound[i] = given[i];
        set[i] = 1;
    }
    for (int32_t j = 0; j < nkw; j++) {
        const char *name = ins->c.items[j].s ? ins->c.items[j].s : "?";
        int32_t p = 0;
        while (p < np && strcmp(code->varnames[p], name) != 0)
            p++;
        if (p == np)
            return gj_error(b->c, GJ_DIAG_TYPING, ins->loc,
                            "%s() got an unexpected keyword argument '%s'", fn, name);
        if (set[p])
            return gj_error(b->c, GJ_DIAG_TYPING, ins->loc,
                            "%s() got multiple values for argument '%s'", fn, name);
        bound[p] = given[npos + j];
        set[p] = 1;
    }
    for (int32_t p = 0; p < np; p++) {
        int32_t d = p - (np - code->ndefaults);
        if (set[p])
            continue;
        if (d < 0)
            return gj_error(b->c, GJ_DIAG_TYPING, ins->loc, "%s() missing required argument '%s'",
                            fn, code->varnames[p]);
        if (code->defaults[d].kind == GJ_CONST_OTHER)
            return gj_error(b->c, GJ_DIAG_TYPING, ins->loc,
                            "the default value of parameter '%s' of %s() is a %s; a default "
                            "must be a number, a tuple of numbers or None",
                            code->varnames[p], fn, code->defaults[d].s ? code->defaults[d].s : "?");
        bound[p] = (Val){.kind = V_CONST, .c = &code->defaults[d], .loc = ins->loc};
    }
    *out = bound;
    return GJ_OK;
}

/* The exception class v is (a global, or an assert's AssertionError), or NULL. */
static const GjGlobal *exception_class(Val v) {
    if (v.kind != V_STATIC || !v.s->global || v.s->global->kind != GJ_GLOBAL_EXCEPTION)
        return NULL;
    return v.s->global;
}

/* LOAD_EXCEPTION: the builtin class an assert (or 3.14's `raise
   NotImplementedError`) loads without naming a global. */
static GjStatus load_exception(Builder *b, const GjBcIns *ins) {
    GjGlobal *g = GJ_NEW(&b->c->arena, GjGlobal);
    Static *s = GJ_NEW(&b->c->arena, Static);
    char *name = gj_arena_printf(&b->c->arena, "builtins:%s", ins->name);
    if (!g || !s || !name)
        return oom(b, ins->loc);
    *g = (GjGlobal){.key = ins->name, .kind = GJ_GLOBAL_EXCEPTION, .name = name};
    *s = (Static){.global = g, .loc = ins->loc};
    return push(b, (Val){.kind = V_STATIC, .s = s});
}

/* The text of an exception's argument: str(arg) for the constants a kernel
   can raise with (a string, an integer, a bool, None). */
static GjConst *exception_message(Builder *b, const Val *arg, GjLoc loc) {
    const GjConst *k = arg->kind == V_CONST ? arg->c : NULL;
    GjConst *msg = GJ_NEW(&b->c->arena, GjConst);
    if (!msg) {
        oom(b, loc);
        return NULL;
    }
    *msg = (GjConst){.kind = GJ_CONST_STR};
    switch (k ? k->kind : GJ_CONST_OTHER) {
    case GJ_CONST_STR: msg->s = k->s; break;
    case GJ_CONST_INT: msg->s = gj_arena_printf(&b->c->arena, "%lld", (long long)k->i); break;
    case GJ_CONST_BOOL: msg->s = k->i ? "True" : "False"; break;
    case GJ_CONST_NONE: msg->s = "None"; break;
    case GJ_CONST_FLOAT:
    case GJ_CONST_COMPLEX:
    case GJ_CONST_TUPLE:
    case GJ_CONST_SLICE:
    case GJ_CONST_OTHER:
        gj_error(b->c, GJ_DIAG_UNSUPPORTED, loc,
                 "the argument of an exception raised in a kernel must be a constant string "
                 "(or integer): the kernel cannot format values");
        return NULL;
    }
    if (!msg->s)
        oom(b, loc);
    return msg->s ? msg : NULL;
}

/* E(arg) for an exception class E: the n (0 or 1) arguments at args,
   above [callable, self_or_null] (an assert's message is the `self`), are
   replaced by a V_EXC for RAISE. */
static GjStatus make_exception(Builder *b, const GjBcIns *ins, Val cls, const Val *args,
                               int32_t n) {
    if (ins->c.kind == GJ_CONST_TUPLE || n > 1)
        return gj_error(b->c, GJ_DIAG_UNSUPPORTED, ins->loc,
                        "an exception raised in a kernel takes one argument at most, a "
                        "constant string (%s(\"message\"))",
                        cls.s->global->key);
    const GjConst *msg = n == 1 ? exception_message(b, args, ins->loc) : NULL;
    if (n == 1 && !msg)
        return GJ_ERR;
    b->sp -= ins->arg + 2;
    return push(b, (Val){.kind = V_EXC, .s = cls.s, .c = msg, .loc = ins->loc});
}

/* RAISE of TOS: an exception class, or one called (V_EXC). */
static GjStatus raise(Builder *b, const GjBcIns *ins) {
    Val v = pop(b);
    const GjGlobal *cls = v.kind == V_EXC ? v.s->global : exception_class(v);
    if (!cls)
        return gj_error(b->c, GJ_DIAG_UNSUPPORTED, ins->loc,
                        "a kernel can raise an exception class or an instance made by calling "
                        "one (raise ValueError(\"message\")), nothing else");
    GjIns *out = gj_ir_emit(b->c, b->cur, GJ_OP_RAISE, ins->loc, 0, NULL);
    if (!out)
        return GJ_ERR;
    out->global = *cls;
    out->c = v.kind == V_EXC && v.c ? *v.c : (GjConst){.kind = GJ_CONST_NONE};
    return GJ_OK;
}

/* Stack [..., callable, self_or_null, arg1..argn]: one of the two below the
   arguments is NULL (a function call), or neither (a method and its self).
   A call of a device function passes every parameter by position
   (bind_args); keywords of other calls stay in the CALL's imm.c. */
static GjStatus call(Builder *b, const GjBcIns *ins) {
    int32_t n = ins->arg;
    Val *base = &b->stack[b->sp - n - 2];
    Val callee = base[0].kind == V_NULL ? base[1] : base[0];
    int has_self = base[0].kind != V_NULL && base[1].kind != V_NULL;
    if (exception_class(callee))   /* an assert's message is the `self` */
        return make_exception(b, ins, callee, &base[2 - has_self], n + has_self);
    const GjCodeView *code = has_self ? NULL : device_callee(callee);
    Val *given = &base[2];
    int32_t nkw = ins->c.kind == GJ_CONST_TUPLE ? ins->c.n : 0;
    if (code && (nkw > 0 || n < code->argcount)) {
        if (bind_args(b, ins, code, &base[2], n, &given) != GJ_OK)
            return GJ_ERR;
        n = code->argcount;
        nkw = 0;
    }
    int32_t nargs = 1 + has_self + n;
    int32_t *args = GJ_NEW_N(&b->c->arena, int32_t, nargs);
    if (!args)
        return oom(b, ins->loc);
    int32_t k = 0;
    args[k++] = materialise(b, callee, ins->loc);
    if (has_self)
        args[k++] = materialise(b, base[1], ins->loc);
    for (int32_t i = 0; i < n; i++)
        args[k++] = materialise(b, given[i], ins->loc);
    b->sp -= ins->arg + 2;
    if (b->c->diag)
        return GJ_ERR;
    GjIns *out;
    int32_t t = gj_ir_emit_value(b->c, b->f, b->cur, GJ_OP_CALL, ins->loc, nargs, args, &out);
    if (t < 0)
        return GJ_ERR;
    if (nkw > 0)
        out->c = ins->c;   /* keyword names */
    return push_temp(b, t);
}

/* BUILD_TUPLE and BUILD_SLICE: the top ins->arg entries become operands of op. */
static GjStatus build_tuple(Builder *b, const GjBcIns *ins, GjOp op) {
    int32_t n = ins->arg;
    int32_t *items = GJ_NEW_N(&b->c->arena, int32_t, n > 0 ? n : 1);
    if (!items)
        return oom(b, ins->loc);
    for (int32_t i = 0; i < n; i++) {
        if ((items[i] = materialise(b, b->stack[b->sp - n + i], ins->loc)) < 0)
            return GJ_ERR;
    }
    b->sp -= n;
    int32_t t = gj_ir_emit_value(b->c, b->f, b->cur, op, ins->loc, n, items, NULL);
    return push_temp(b, t);
}

static GjStatus unpack_sequence(Builder *b, const GjBcIns *ins) {
    int32_t n = ins->arg;
    Val v = pop(b);
    if (v.kind == V_CONST) {   /* x, y = 1, 2 is a constant tuple */
        if (v.c->kind != GJ_CONST_TUPLE || v.c->n != n)
            return gj_error(b->c, GJ_DIAG_TYPING, ins->loc,
                            "cannot unpack a constant into %d values", n);
        for (int32_t i = n - 1; i >= 0; i--) {
            Val item = {.kind = V_CONST, .c = &v.c->items[i], .loc = v.loc};
            if (push(b, item) != GJ_OK)
                return GJ_ERR;
        }
        return GJ_OK;
    }
    int32_t t = materialise(b, v, ins->loc);
    int32_t *items = GJ_NEW_N(&b->c->arena, int32_t, n > 0 ? n : 1);
    if (t < 0 || !items)
        return t < 0 ? GJ_ERR : oom(b, ins->loc);
    for (int32_t i = 0; i < n; i++) {
        GjIns *out;
        if ((items[i] = emit1(b, GJ_OP_TUPLE_GET, ins->loc, t, &out)) < 0)
            return GJ_ERR;
        out->i = i;
    }
    for (int32_t i = n - 1; i >= 0; i--) {   /* item 0 ends on top */
        if (push_temp(b, items[i]) != GJ_OK)
            return GJ_ERR;
    }
    return GJ_OK;
}

/* TOS1[TOS] for a constant tuple and a constant index in range (PAIR[1]
   of a frozen global): replaces both by the item; 0 if not that case. */
static int const_item(Builder *b) {
    Val tuple = b->stack[b->sp - 2], index = b->stack[b->sp - 1];
    if (tuple.kind != V_CONST || tuple.c->kind != GJ_CONST_TUPLE || index.kind != V_CONST ||
        index.c->kind != GJ_CONST_INT)
        return 0;
    int64_t i = index.c->i < 0 ? index.c->i + tuple.c->n : index.c->i;
    if (i < 0 || i >= tuple.c->n)
        return 0;   /* left to typing, which reports the bad index */
    b->sp -= 2;
    b->stack[b->sp++] = (Val){.kind = V_CONST, .c = &tuple.c->items[i], .loc = tuple.loc};
    return 1;
}

/* FOR_ITER with the iterator `it` ins->arg entries down (the entries above
   it, a NULL, stay): the body gets [..., ITER_NEXT(it), ..., ITER_VALUE(it)],
   the exit [...] without the iterator's entries, chosen by ITER_VALID(it). */
static GjStatus for_iter(Builder *b, const GjBcIns *ins, int32_t body, int32_t exit) {
    int32_t k = b->sp - ins->arg;
    int32_t it = materialise(b, b->stack[k], ins->loc);
    if (it < 0)
        return GJ_ERR;
    int32_t value = emit1(b, GJ_OP_ITER_VALUE, ins->loc, it, NULL);
    int32_t next = emit1(b, GJ_OP_ITER_NEXT, ins->loc, it, NULL);
    int32_t valid = emit1(b, GJ_OP_ITER_VALID, ins->loc, it, NULL);
    if (next < 0)
        return GJ_ERR;
    b->stack[k] = (Val){.kind = V_TEMP, .n = next};
    if (push_temp(b, value) != GJ_OK)
        return GJ_ERR;
    return end_branch(b, valid, body, b->sp, exit, k, ins->loc);
}

/* How many entries each op needs on the stack before it runs. */
static int32_t operands_needed(const GjBcIns *ins) {
    switch (ins->op) {
    case GJ_BC_LOAD_CONST:
    case GJ_BC_LOAD_FAST:
    case GJ_BC_LOAD_GLOBAL:
    case GJ_BC_LOAD_DEREF:
    case GJ_BC_PUSH_NULL:
    case GJ_BC_JUMP:
    case GJ_BC_LOAD_EXCEPTION:
    case GJ_BC_NOPS: return 0;
    case GJ_BC_STORE_FAST:
    case GJ_BC_LOAD_ATTR:
    case GJ_BC_UNARY_OP:
    case GJ_BC_UNPACK_SEQUENCE:
    case GJ_BC_POP_TOP:
    case GJ_BC_GET_ITER:
    case GJ_BC_POP_JUMP_IF_FALSE:
    case GJ_BC_POP_JUMP_IF_TRUE:
    case GJ_BC_JUMP_IF_FALSE_OR_POP:
    case GJ_BC_JUMP_IF_TRUE_OR_POP:
    case GJ_BC_RETURN_VALUE:
    case GJ_BC_RAISE: return 1;
    case GJ_BC_BINARY_OP:
    case GJ_BC_COMPARE_OP:
    case GJ_BC_BINARY_SUBSCR: return 2;
    case GJ_BC_STORE_SUBSCR: return 3;
    case GJ_BC_BUILD_TUPLE:
    case GJ_BC_BUILD_SLICE:
    case GJ_BC_COPY:
    case GJ_BC_SWAP:
    case GJ_BC_FOR_ITER: return ins->arg;
    case GJ_BC_CALL: return ins->arg + 2;
    }
    return 0;
}

/* Interprets op k of block bi; a jump, branch or return ends the block. */
static GjStatus step(Builder *b, int32_t bi, int32_t k) {
    const GjBcIns *ins = &b->bc.ins[k];
    GjLoc loc = ins->loc;
    int32_t next = bi + 1 < b->nblocks ? bi + 1 : -1;
    int32_t target = ins->target >= 0 ? b->block_at[ins->target] : -1;
    int32_t l, r, t;
    Val v;
    GjIns *out;
    if (need(b, operands_needed(ins), ins) != GJ_OK)
        return GJ_ERR;
    switch (ins->op) {
    case GJ_BC_LOAD_CONST: return push(b, (Val){.kind = V_CONST, .c = &ins->c, .loc = loc});
    case GJ_BC_LOAD_FAST: return load_fast(b, ins);
    case GJ_BC_STORE_FAST: return store_fast(b, ins);
    case GJ_BC_LOAD_GLOBAL:
    case GJ_BC_LOAD_DEREF: return load_global(b, ins);
    case GJ_BC_PUSH_NULL: return push(b, (Val){.kind = V_NULL});
    case GJ_BC_LOAD_ATTR: return load_attr(b, ins);
    case GJ_BC_BINARY_OP:
    case GJ_BC_COMPARE_OP:
        r = pop_value(b, loc);
        l = pop_value(b, loc);
        if (l < 0 || r < 0)
            return GJ_ERR;
        t = emit2(b, ins->op == GJ_BC_BINARY_OP ? GJ_OP_BINOP : GJ_OP_COMPARE, loc, l, r, ins->arg);
        if (t < 0 || push_temp(b, t) != GJ_OK)
            return GJ_ERR;
        b->stack[b->sp - 1].is_bool = ins->op == GJ_BC_COMPARE_OP;
        return GJ_OK;
    case GJ_BC_UNARY_OP:
        if ((t = pop_value(b, loc)) < 0 || (t = emit1(b, GJ_OP_UNOP, loc, t, &out)) < 0)
            return GJ_ERR;
        out->sub = ins->arg;
        return push_temp(b, t);
    case GJ_BC_BINARY_SUBSCR:
        if (const_item(b))
            return GJ_OK;
        r = pop_value(b, loc);
        l = pop_value(b, loc);
        if (l < 0 || r < 0)
            return GJ_ERR;
        return push_temp(b, emit2(b, GJ_OP_GETITEM, loc, l, r, 0));
    case GJ_BC_STORE_SUBSCR: {   /* TOS1[TOS] = TOS2 */
        int32_t args[3];
        args[1] = pop_value(b, loc);
        args[0] = pop_value(b, loc);
        args[2] = pop_value(b, loc);
        if (args[0] < 0 || args[1] < 0 || args[2] < 0)
            return GJ_ERR;
        return gj_ir_emit(b->c, b->cur, GJ_OP_SETITEM, loc, 3, args) ? GJ_OK : GJ_ERR;
    }
    case GJ_BC_BUILD_TUPLE: return build_tuple(b, ins, GJ_OP_BUILD_TUPLE);
    case GJ_BC_BUILD_SLICE: return build_tuple(b, ins, GJ_OP_BUILD_SLICE);
    case GJ_BC_UNPACK_SEQUENCE: return unpack_sequence(b, ins);
    case GJ_BC_POP_TOP: b->sp--; return GJ_OK;
    case GJ_BC_COPY: return push(b, b->stack[b->sp - ins->arg]);
    case GJ_BC_SWAP:
        v = b->stack[b->sp - 1];
        b->stack[b->sp - 1] = b->stack[b->sp - ins->arg];
        b->stack[b->sp - ins->arg] = v;
        return GJ_OK;
    case GJ_BC_CALL: return call(b, ins);
    case GJ_BC_GET_ITER:
        if ((t = pop_value(b, loc)) < 0)
            return GJ_ERR;
        return push_temp(b, emit1(b, GJ_OP_GET_ITER, loc, t, NULL));
    case GJ_BC_FOR_ITER: return for_iter(b, ins, next, target);
    case GJ_BC_JUMP: return end_jump(b, target, loc);
    case GJ_BC_POP_JUMP_IF_FALSE:
        t = truth(b, pop(b), loc);
        return end_branch(b, t, next, b->sp, target, b->sp, loc);
    case GJ_BC_POP_JUMP_IF_TRUE:
        t = truth(b, pop(b), loc);
        return end_branch(b, t, target, b->sp, next, b->sp, loc);
    case GJ_BC_JUMP_IF_FALSE_OR_POP:
    case GJ_BC_JUMP_IF_TRUE_OR_POP:
        /* The target keeps the value, the fall-through pops it. */
        v = b->stack[b->sp - 1];
        if (v.kind != V_TEMP) {
            if ((t = materialise(b, v, loc)) < 0)
                return GJ_ERR;
            b->stack[b->sp - 1] = (Val){.kind = V_TEMP, .n = t};
        }
        t = truth(b, b->stack[b->sp - 1], loc);
        if (ins->op == GJ_BC_JUMP_IF_FALSE_OR_POP)
            return end_branch(b, t, next, b->sp - 1, target, b->sp, loc);
        return end_branch(b, t, target, b->sp, next, b->sp - 1, loc);
    case GJ_BC_RETURN_VALUE:
        if ((t = pop_value(b, loc)) < 0)
            return GJ_ERR;
        return gj_ir_emit(b->c, b->cur, GJ_OP_RETURN, loc, 1, &t) ? GJ_OK : GJ_ERR;
    case GJ_BC_LOAD_EXCEPTION: return load_exception(b, ins);
    case GJ_BC_RAISE: return raise(b, ins);
    case GJ_BC_NOPS: break;
    }
    return gj_error(b->c, GJ_DIAG_INTERNAL, loc, "bad bytecode op %d", (int)ins->op);
}

static GjStatus build_block(Builder *b, int32_t bi) {
    BlockInfo *info = &b->blocks[bi];
    b->cur = info->ir;
    b->sp = 0;
    for (int32_t k = 0; k < info->depth; k++) {
        if (push(b, info->entry[k]) != GJ_OK)
            return GJ_ERR;
    }
    for (int32_t k = info->start; k < info->end; k++) {
        if (step(b, bi, k) != GJ_OK)
            return GJ_ERR;
    }
    const GjBcIns *last = &b->bc.ins[info->end - 1];
    if (gj_bc_op_flags(last->op) & (GJ_BCF_JUMP | GJ_BCF_NOFALL))
        return GJ_OK;
    if (bi + 1 >= b->nblocks)
        return gj_error(b->c, GJ_DIAG_INTERNAL, last->loc, "control falls off the end");
    return end_jump(b, bi + 1, last->loc);
}

/* ---- the CFG ---------------------------------------------------------- */

/* Cuts the ops into blocks: starts at 0, at jump targets, after jumps. */
static GjStatus find_blocks(Builder *b) {
    int32_t n = b->bc.n;
    b->block_at = GJ_NEW_N(&b->c->arena, int32_t, n);
    char *starts = GJ_NEW_N(&b->c->arena, char, n);
    if (!b->block_at || !starts)
        return oom(b, (GjLoc){0, -1, -1});
    starts[0] = 1;
    for (int32_t k = 0; k < n; k++) {
        const GjBcIns *ins = &b->bc.ins[k];
        if (gj_bc_op_flags(ins->op) & GJ_BCF_JUMP)
            starts[ins->target] = 1;
        if ((gj_bc_op_flags(ins->op) & (GJ_BCF_JUMP | GJ_BCF_NOFALL)) && k + 1 < n)
            starts[k + 1] = 1;
    }
    for (int32_t k = 0; k < n; k++)
        b->nblocks += starts[k];
    b->blocks = GJ_NEW_N(&b->c->arena, BlockInfo, b->nblocks);
    b->worklist = GJ_NEW_N(&b->c->arena, int32_t, b->nblocks);
    if (!b->blocks || !b->worklist)
        return oom(b, (GjLoc){0, -1, -1});
    int32_t bi = -1;
    for (int32_t k = 0; k < n; k++) {
        if (starts[k])
            b->blocks[++bi].start = k;
        b->blocks[bi].end = k + 1;
        b->block_at[k] = starts[k] ? bi : -1;
    }
    return GJ_OK;
}

/* Successor blocks of block bi per its last op; returns how many. */
static int32_t block_succs(const Builder *b, int32_t bi, int32_t succ[2]) {
    const GjBcIns *last = &b->bc.ins[b->blocks[bi].end - 1];
    int flags = gj_bc_op_flags(last->op);
    int32_t n = 0;
    if (!(flags & GJ_BCF_NOFALL) && bi + 1 < b->nblocks)
        succ[n++] = bi + 1;
    if (flags & GJ_BCF_JUMP)
        succ[n++] = b->block_at[last->target];
    return n;
}

static GjStatus mark_reachable(Builder *b, int32_t bi) {
    int32_t *todo = GJ_NEW_N(&b->c->arena, int32_t, b->nblocks), ntodo = 0;
    if (!todo)
        return oom(b, (GjLoc){0, -1, -1});
    b->blocks[bi].reachable = 1;
    todo[ntodo++] = bi;
    while (ntodo > 0) {
        int32_t succ[2], from = todo[--ntodo];
        for (int32_t i = block_succs(b, from, succ); i-- > 0;) {
            if (!b->blocks[succ[i]].reachable) {
                b->blocks[succ[i]].reachable = 1;
                todo[ntodo++] = succ[i];
            }
        }
    }
    return GJ_OK;
}

/* Creates the IR function, its parameters and its reachable blocks; an
   extra entry block when the first op is a loop head (a `while True:` that
   opens the function), so that the entry has no predecessors. */
static GjStatus create_ir(Builder *b) {
    const GjCodeView *cv = b->cv;
    if (!(b->f = gj_ir_func_new(b->c, cv)))
        return GJ_ERR;
    for (int32_t i = 0; i < cv->argcount; i++) {
        int32_t v = gj_ir_var(b->c, b->f, cv->varnames[i], GJ_VAR_ARG);
        if (v < 0)
            return GJ_ERR;
        b->f->vars[v].def_loc = (GjLoc){cv->firstlineno, -1, -1};
    }
    int entry_is_target = 0;
    for (int32_t k = 0; k < b->bc.n; k++)
        entry_is_target |=
            (gj_bc_op_flags(b->bc.ins[k].op) & GJ_BCF_JUMP) && b->bc.ins[k].target == 0;
    GjBlock *pre = entry_is_target ? gj_ir_block_new(b->c, b->f, b->bc.ins[0].offset) : NULL;
    if (entry_is_target && !pre)
        return GJ_ERR;
    for (int32_t bi = 0; bi < b->nblocks; bi++) {
        BlockInfo *info = &b->blocks[bi];
        if (info->reachable &&
            !(info->ir = gj_ir_block_new(b->c, b->f, b->bc.ins[info->start].offset)))
            return GJ_ERR;
    }
    b->sp = 0;
    if (!pre)
        return enter_block(b, 0, 0, (GjLoc){cv->firstlineno, -1, -1});
    b->cur = pre;
    return end_jump(b, 0, (GjLoc){cv->firstlineno, -1, -1});
}

GjStatus gj_build_func(GjCtx *c, const GjCodeView *code, const GjBcCode *bc, GjFunc **out) {
    Builder b = {.c = c, .cv = code, .bc = *bc};
    if (find_blocks(&b) != GJ_OK)
        return GJ_ERR;
    if (mark_reachable(&b, 0) != GJ_OK || create_ir(&b) != GJ_OK)
        return GJ_ERR;
    for (int32_t w = 0; w < b.nwork; w++) {   /* enter_block appends to the worklist */
        if (build_block(&b, b.worklist[w]) != GJ_OK)
            return GJ_ERR;
    }
    for (int32_t bi = 0; bi < b.nblocks; bi++) {
        if (b.blocks[bi].reachable && !b.blocks[bi].entered)
            return gj_error(c, GJ_DIAG_INTERNAL, b.bc.ins[b.blocks[bi].start].loc,
                            "block at offset %d was never built",
                            b.bc.ins[b.blocks[bi].start].offset);
    }
    *out = b.f;
    return GJ_OK;
}
