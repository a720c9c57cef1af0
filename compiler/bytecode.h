/*
 * bytecode.h - the normalised bytecode that build.c interprets.
 *
 * gj_bc_decode() turns the dis instructions of a GjCodeView (opname strings
 * of CPython 3.11 to 3.15) into one version-free op set, GjBcOp.  It
 * is the only code that knows the Python version.  What it guarantees:
 *
 *   - no RESUME, NOP, NOT_TAKEN, CACHE, PRECALL, EXTENDED_ARG,
 *     COPY_FREE_VARS, MAKE_CELL, TO_BOOL or END_FOR: consumers do not see
 *     them;
 *   - fused ops (LOAD_FAST_LOAD_FAST, ...) are split in two, RETURN_CONST
 *     is LOAD_CONST + RETURN_VALUE, every constant load (LOAD_SMALL_INT,
 *     3.15's LOAD_COMMON_CONSTANT None) is LOAD_CONST;
 *   - stack depths are CPython's: an iterator takes the entries it takes
 *     there (two from 3.15: the iterator, then a NULL), so SWAP and COPY
 *     keep their operands;
 *   - every jump target is an index into ins[] (never a byte offset), and a
 *     jump to a dropped instruction lands on the next one kept;
 *   - FOR_ITER's target is the loop exit: the first instruction after the
 *     loop, where the exhausted iterator has already been popped;
 *   - calls follow one protocol: CALL n pops n arguments, then two entries
 *     [callable, self_or_null] of which exactly one may be NULL (PUSH_NULL);
 *     keyword names (3.11/3.12's KW_NAMES, 3.13's CALL_KW) are CALL's c;
 *   - an opname outside the supported subset is an UNSUPPORTED diagnostic
 *     that names the Python construct ("with statement") at its line.
 *
 * The op set is the X-macro table below: name, flags, stack meaning
 * (TOS = top of stack, TOS1 the entry below it).
 */
#ifndef GJ_BYTECODE_H
#define GJ_BYTECODE_H

#include "gj.h"
#include "codeview.h"

enum {
    GJ_BCF_JUMP = 1,      /* has a target */
    GJ_BCF_NOFALL = 2,    /* never continues with the next instruction */
};

/* clang-format off */
#define GJ_BC_OPS(X)                                                                       \
    X(LOAD_CONST,       0, "push constant c")                                              \
    X(LOAD_FAST,        0, "push local `name`")                                            \
    X(STORE_FAST,       0, "pop TOS into local `name`")                                    \
    X(LOAD_GLOBAL,      0, "push global `name` (frozen in GjCodeView.globals)")            \
    X(LOAD_DEREF,       0, "push closure variable `name` (frozen like a global)")          \
    X(PUSH_NULL,        0, "push the call protocol's NULL")                                \
    X(LOAD_ATTR,        0, "TOS = TOS.name")                                               \
    X(BINARY_OP,        0, "TOS = TOS1 <arg> TOS, arg a GjBinop (in-place forms too)")    \
    X(UNARY_OP,         0, "TOS = <arg> TOS, arg a GjUnop")                                \
    X(COMPARE_OP,       0, "TOS = TOS1 <arg> TOS, arg a GjCmp")                            \
    X(BINARY_SUBSCR,    0, "TOS = TOS1[TOS]")                                              \
    X(STORE_SUBSCR,     0, "TOS1[TOS] = TOS2; pops three")                                 \
    X(BUILD_TUPLE,      0, "replace the top arg entries by their tuple")                   \
    X(BUILD_SLICE,      0, "replace the top arg (2 or 3) entries by slice(start, stop[, step])") \
    X(UNPACK_SEQUENCE,  0, "replace TOS by its arg items, item 0 on top")                  \
    X(POP_TOP,          0, "drop TOS")                                                     \
    X(COPY,             0, "push a copy of the entry arg places down (1 = TOS)")           \
    X(SWAP,             0, "swap TOS with the entry arg places down")                      \
    X(CALL,             0, "call with arg arguments over [callable, self_or_null]; the last " \
                           "len(c) of them are keywords named by tuple c (None: no keywords)") \
    X(GET_ITER,         0, "TOS = iter(TOS)")                                              \
    X(FOR_ITER,         GJ_BCF_JUMP, "the iterator is the entry arg places down (1 = TOS): " \
                           "push next(it); when exhausted pop it and the entries above it, " \
                           "go to target")                                                 \
    X(JUMP,             GJ_BCF_JUMP | GJ_BCF_NOFALL, "go to target")                       \
    X(POP_JUMP_IF_FALSE, GJ_BCF_JUMP, "pop TOS; go to target if it is false")              \
    X(POP_JUMP_IF_TRUE, GJ_BCF_JUMP, "pop TOS; go to target if it is true")                \
    X(JUMP_IF_FALSE_OR_POP, GJ_BCF_JUMP, "go to target keeping TOS if false, else pop it") \
    X(JUMP_IF_TRUE_OR_POP, GJ_BCF_JUMP, "go to target keeping TOS if true, else pop it")   \
    X(RETURN_VALUE,     GJ_BCF_NOFALL, "return TOS")                                      \
    X(LOAD_EXCEPTION,   0, "push builtin exception class `name` (an assert's AssertionError)") \
    X(RAISE,            GJ_BCF_NOFALL, "raise TOS: an exception class, or an instance made " \
                           "by calling one")
/* clang-format on */

typedef enum GjBcOp {
/* clang-format off */
#define X(name, flags, doc) GJ_BC_##name,
    GJ_BC_OPS(X)
#undef X
    GJ_BC_NOPS
/* clang-format on */
} GjBcOp;

typedef struct GjBcIns {
    GjBcOp op;
    int32_t arg;          /* count, GjBinop/GjUnop/GjCmp, COPY/SWAP/FOR_ITER depth */
    int32_t target;       /* jumps: index into GjBcCode.ins; else -1 */
    const char *name;     /* LOAD/STORE_FAST, LOAD_GLOBAL, LOAD_DEREF, LOAD_ATTR,
                             LOAD_EXCEPTION */
    GjConst c;            /* LOAD_CONST; CALL: keyword names (a tuple) or None */
    int32_t offset;       /* byte offset of the dis instruction it came from */
    GjLoc loc;
} GjBcIns;

typedef struct GjBcCode {
    int32_t n;
    GjBcIns *ins;         /* arena-owned */
} GjBcCode;

/* Normalises cv->instrs into out.  On an unsupported construct or Python
   version records a diagnostic and returns GJ_ERR. */
GjStatus gj_bc_decode(GjCtx *c, const GjCodeView *cv, GjBcCode *out);

/* The indices into co_names of the globals that LOAD_GLOBAL reads, in the
   order of first use and each once, into out[0..nnames): code is co_code
   (n bytes of CPython wordcode), load_global and extended_arg the running
   interpreter's opcodes (opcode.opmap), nnames len(co_names).  Returns how
   many, or -1 for a Python version without a row or an index past nnames.
   pymodule freezes these globals without reading the instructions through
   dis, which the persistent cache's lookup must not wait for. */
int32_t gj_bc_global_names(int py_major, int py_minor, const unsigned char *code, size_t n,
                           int load_global, int extended_arg, int32_t nnames, int32_t *out);

const char *gj_bc_op_name(GjBcOp op);      /* "LOAD_FAST" */
int gj_bc_op_flags(GjBcOp op);             /* GJ_BCF_* bits */
void gj_bc_dump(const GjBcCode *bc, void *file /* FILE* */);

#endif
