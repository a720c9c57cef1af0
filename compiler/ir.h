/*
 * ir.h - gpujit's typed intermediate representation.
 *
 * A GjFunc is a control-flow graph of GjBlocks; each block is a list of
 * GjIns ending in one terminator (JUMP, BRANCH, RETURN, RAISE).  Values are temps:
 * numbered, each defined once by one instruction and used only inside the
 * block that defines it.  Everything that crosses a block boundary is a
 * variable (GjVar): the function's locals (parameters first) and the
 * "stack slot" variables through which build.c passes operand-stack
 * entries that are live across a jump (FOR_ITER's iterator, the value of a
 * conditional expression): $s<k>.b<id> is entry k on entry to block id,
 * stored by its predecessors and read only in that block, so one variable
 * never holds two unrelated values.  Lowering gives each variable an
 * alloca; LLVM's mem2reg turns them into SSA.
 *
 * The op set is the X-macro below: name, operand count (-1: variadic),
 * whether the op terminates a block, its effects (GJ_OPE_*), and its
 * meaning.  Switches over GjOp
 * compile with -Wswitch-enum, so a new op shows up everywhere it matters.
 *
 * Invariants after build.c:  block 0 is the entry; every block ends in
 * exactly one terminator; succ[] matches the terminator; every temp an
 * instruction reads is defined earlier in the same block.
 * After typeinfer.c: temp_types[t] and vars[v].type are set (non-NULL) for
 * every temp and variable that is reachable, and spec for every reachable
 * CALL of a device function.
 */
#ifndef GJ_IR_H
#define GJ_IR_H

#include "gj.h"
#include "codeview.h"
#include "types.h"

/* Effects of an op, for the written-arrays analysis (effects.c). */
enum {
    GJ_OPE_WRITES_A0 = 1,   /* stores through its first operand (an array or a view) */
    GJ_OPE_CALL = 2,        /* a call: the callee's effects (a device function's
                               written parameters, an intrinsic row's GJ_IF_WRITES_ARG0) */
};

/* clang-format off */
#define GJ_IR_OPS(X)                                                                  \
    X(CONST,       0, 0, 0, "constant imm.c (int/float/bool: weak literal types; None)")     \
    X(GLOBAL,      0, 0, 0, "compile-time object: module/intrinsic imm.global")              \
    X(LOAD_VAR,    0, 0, 0, "value of variable imm.var")                                     \
    X(STORE_VAR,   1, 0, 0, "variable imm.var = a0")                                         \
    X(BINOP,       2, 0, 0, "a0 <imm.sub> a1, imm.sub a GjBinop")                            \
    X(UNOP,        1, 0, 0, "<imm.sub> a0, imm.sub a GjUnop")                                \
    X(COMPARE,     2, 0, 0, "a0 <imm.sub> a1, imm.sub a GjCmp; result bool")                 \
    X(TRUTH,       1, 0, 0, "bool(a0): Python truth of a scalar")                            \
    X(GETATTR,     1, 0, 0, "a0.<imm.name>")                                                 \
    X(GETITEM,     2, 0, 0, "a0[a1]")                                                        \
    X(SETITEM,     3, 0, GJ_OPE_WRITES_A0, "a0[a1] = a2 (a2 cast to the element type)")      \
    X(CALL,       -1, 0, GJ_OPE_CALL, "a0(a1, ..., an-1); imm.c: None, or the keyword "        \
                                       "names of the last arguments")                         \
    X(BUILD_TUPLE,-1, 0, 0, "(a0, ..., an-1)")                                               \
    X(BUILD_SLICE,-1, 0, 0, "slice(a0, a1[, a2]): start, stop, step, each None or an integer") \
    X(TUPLE_GET,   1, 0, 0, "a0[imm.i], imm.i a constant index")                             \
    X(GET_ITER,    1, 0, 0, "iter(a0): a range to its iterator")                             \
    X(ITER_VALID,  1, 0, 0, "iterator a0 is not exhausted (bool)")                           \
    X(ITER_VALUE,  1, 0, 0, "current value of iterator a0")                                  \
    X(ITER_NEXT,   1, 0, 0, "iterator a0 advanced one step")                                 \
    X(JUMP,        0, 1, 0, "go to succ[0]")                                                 \
    X(BRANCH,      1, 1, 0, "a0 (bool) ? succ[0] : succ[1]")                                 \
    X(RETURN,      1, 1, 0, "return a0")                                                     \
    X(RAISE,       0, 1, 0, "raise imm.global (an exception class) with message imm.c (a str, " \
                            "or None): the thread ends; under debug the host raises it")
/* clang-format on */

typedef enum GjOp {
/* clang-format off */
#define X(name, nargs, term, effects, doc) GJ_OP_##name,
    GJ_IR_OPS(X)
#undef X
    GJ_NOPS
/* clang-format on */
} GjOp;

typedef enum GjBinop {
    GJ_BIN_ADD,
    GJ_BIN_SUB,
    GJ_BIN_MUL,
    GJ_BIN_TRUEDIV,    /* / : true division */
    GJ_BIN_FLOORDIV,   /* // : floor, sign of divisor; int x//0 == 0 */
    GJ_BIN_MOD,        /* %  : sign of divisor; int x%0 == 0 */
    GJ_BIN_POW,        /* ** */
    GJ_BIN_LSHIFT,
    GJ_BIN_RSHIFT,
    GJ_BIN_AND,
    GJ_BIN_OR,
    GJ_BIN_XOR,   /* & | ^ */
    GJ_BIN_MATMUL,     /* @ : never supported, kept for the message */
    GJ_NBINOPS
} GjBinop;

typedef enum GjUnop { GJ_UN_NEG, GJ_UN_POS, GJ_UN_NOT, GJ_UN_INVERT } GjUnop;

typedef enum GjCmp { GJ_CMP_LT, GJ_CMP_LE, GJ_CMP_EQ, GJ_CMP_NE, GJ_CMP_GT, GJ_CMP_GE } GjCmp;

typedef struct GjIns {
    GjOp op;
    int32_t dst;          /* temp defined, or -1 */
    int32_t nargs;
    int32_t *args;        /* temps read */
    /* immediates, by op */
    int32_t var;          /* LOAD_VAR, STORE_VAR */
    int32_t sub;          /* BINOP/UNOP/COMPARE kind; LOAD_VAR: 1 if some path may reach
                             it before any assignment (defassign.c) */
    int64_t i;            /* TUPLE_GET index */
    GjConst c;            /* CONST; RAISE: the message */
    GjGlobal global;      /* GLOBAL; RAISE: the exception class */
    const char *name;     /* GETATTR */
    struct GjSpec *spec;  /* CALL of a device function: the specialisation it calls, set
                             by typeinfer.c (numba's calltypes); lowering reads it */
    GjLoc loc;
} GjIns;

typedef struct GjBlock {
    int32_t id;
    int32_t offset;       /* bytecode offset of the first instruction */
    int32_t nins, cap;
    GjIns *ins;
    int32_t nsucc;
    int32_t succ[2];
} GjBlock;

typedef enum GjVarKind {
    GJ_VAR_ARG,      /* a parameter (vars[0..argcount)) */
    GJ_VAR_LOCAL,    /* a Python local */
    GJ_VAR_STACK,    /* operand-stack slot live across blocks */
} GjVarKind;

typedef struct GjVar {
    const char *name;     /* Python name, or "$s<k>.b<id>" */
    GjVarKind kind;
    const GjType *type;   /* set by typeinfer.c */
    GjLoc def_loc;        /* first assignment, for diagnostics */
    int maybe_unassigned; /* some path may read it unassigned (defassign.c):
                             lowering zeroes it at entry */
    int32_t block;        /* GJ_VAR_STACK: the block whose entry it is (build.c) */
} GjVar;

typedef struct GjFunc {
    const GjCodeView *code;
    int32_t nblocks, blocks_cap;
    GjBlock **blocks;     /* blocks[0] is the entry */
    int32_t nvars, vars_cap;
    GjVar *vars;
    int32_t ntemps, temps_cap;
    const GjType **temp_types;   /* set by typeinfer.c */
    const GjType *ret_type;      /* set by typeinfer.c; none for kernels */
    int is_device;               /* a device function: may return a value */
} GjFunc;

/* One specialisation of a device function: a @gpujit.jit function typed for
   the (concrete) argument types of a call site.  Kept in c->specs for the
   whole compilation, so every call with the same types shares it. */
typedef struct GjSpec {
    struct GjSpec *next;
    const GjCallee *callee;
    const GjType **argtypes;     /* [nargs], concrete (no weak literals) */
    int32_t nargs;
    GjFunc *f;                   /* typed IR; f->ret_type is the return type (set once
                                    built, so a call back to it is found busy) */
    int busy;                    /* being typed now: a call to it is recursion */
    void *llfn;                  /* LLVMValueRef once lowered (lower.c) */
    int ends_thread;             /* lower.c: 0 not known yet, 1 no, 2 a call may end the
                                    thread (it raises, or calls one that may) */
    char *written;               /* [nargs] once analysed (effects.c): may store through arg i */
} GjSpec;

/* ---- construction (ir.c) ---- */
GjFunc *gj_ir_func_new(GjCtx *c, const GjCodeView *code);
GjBlock *gj_ir_block_new(GjCtx *c, GjFunc *f, int32_t offset);
int32_t gj_ir_var(GjCtx *c, GjFunc *f, const char *name, GjVarKind kind);   /* find or add */
int32_t gj_ir_temp(GjCtx *c, GjFunc *f);
/* Appends an instruction with the given operands; returns it (dst = -1 until set). */
GjIns *gj_ir_emit(GjCtx *c, GjBlock *b, GjOp op, GjLoc loc, int32_t nargs, const int32_t *args);
/* Appends an instruction that defines a new temp and returns the temp. */
int32_t gj_ir_emit_value(GjCtx *c, GjFunc *f, GjBlock *b, GjOp op, GjLoc loc, int32_t nargs,
                         const int32_t *args, GjIns **out);

const char *gj_ir_op_name(GjOp op);
int gj_ir_op_is_terminator(GjOp op);
unsigned gj_ir_op_effects(GjOp op);         /* GJ_OPE_* */
const char *gj_ir_binop_symbol(GjBinop b);  /* "+", "//" */
const char *gj_ir_unop_symbol(GjUnop u);
const char *gj_ir_cmp_symbol(GjCmp k);
void gj_ir_dump(const GjFunc *f, void *file /* FILE* */);

/* ---- stages ---- */
/* The passes below run in the order listed, from one place (frontend.h's
   gj_front_end); each requires the invariants of the ones before. */
/* build.c: decoded bytecode (bytecode.h) -> IR (CFG, stack -> variables/temps). */
struct GjBcCode;
GjStatus gj_build_func(GjCtx *c, const GjCodeView *code, const struct GjBcCode *bc, GjFunc **out);
/* defassign.c: every read of a local follows an assignment on every path;
   else a WARNING and GjVar.maybe_unassigned where some path assigns it
   first, a TYPING diag where none does (Python: UnboundLocalError). */
GjStatus gj_check_assigned(GjCtx *c, GjFunc *f);
/* irverify.c: checks the invariants above (and the stack slots' and
   operands' rules) after pass `after_pass`; a violation is an INTERNAL error
   naming the pass, function, block and instruction.  Does nothing unless
   c->verify_ir (builds without NDEBUG; GPUJIT_VERIFY_IR=1). */
GjStatus gj_ir_verify(GjCtx *c, const GjFunc *f, const char *after_pass);
/* typeinfer.c: sets every temp and variable type, and each device-function
   CALL's GjIns.spec; errors at the offending line. */
GjStatus gj_infer_func(GjCtx *c, GjFunc *f);
/* devfunc.c: the specialisation of callee for argument types `args` (made
   concrete here), built and typed on first use (gj_front_end); a call to a
   function that is being typed (direct or mutual recursion) is an
   UNSUPPORTED error at loc.  Typing asks; later passes read GjIns.spec. */
GjStatus gj_spec_get(GjCtx *c, const GjCallee *callee, const GjType *const *args, int32_t nargs,
                     GjLoc loc, GjSpec **out);
/* effects.c: written[i] (f->code->argcount entries) is set when f may store
   through array parameter i (a conservative analysis of the typed IR, from
   the ops' and intrinsic rows' effect flags); device functions it calls are
   analysed on demand (GjSpec.written). */
GjStatus gj_effects_written(GjCtx *c, GjFunc *f, char *written);
/* The type a device-function parameter gets for an argument of type t: weak
   literals concrete (int64, float64), also inside tuples. */
const GjType *gj_spec_arg_type(GjCtx *c, const GjType *t);

#endif
