/*
 * intrinsics.h - the compile-time objects a kernel can name: builtins
 * (range, abs, ...), gpujit's kernel API (grid, threadIdx, ...) and math /
 * numpy functions.  Each is one row of one table: its namespace and Python
 * name, its parameter names (keyword calls map to positions through them),
 * its arity, its typing rule (GjTypeRule, applied by typecall.c) and its
 * lowering function (a family file: lower_thread.c, lower_math.c, ...).
 * The rows are grouped by family, one X-macro per family below; the enum
 * GjIntrinsic, the lookup in intrinsics.c, lowering's table of lowering
 * functions (lower.c) and the names gpujit/__init__.py exports are all
 * generated from them, so adding an intrinsic is one row plus, at most, one
 * lowering function (docs/internals/kernel-code.md, "Adding an intrinsic").  The front
 * end reads every column but the lowering one, so it links without LLVM.
 *
 * Namespaces: "builtins", "gpujit" and nested ones ("gpujit.atomic"),
 * "math", "numpy", "cmath".  An attribute of a dim3 object (threadIdx.x) is
 * GJ_INTR_DIM3_X/Y/Z in namespace "dim3"; a method of a number
 * (z.conjugate) is in namespace "method".  The math functions and constants
 * that math, numpy and cmath share come from one more table
 * (GJ_MATH_FUNCS, GJ_MATH_CONSTS), one row per function, which also says
 * how each is typed and which libdevice function computes it.
 */
#ifndef GJ_INTRINSICS_H
#define GJ_INTRINSICS_H

struct GjType;

/* Special registers, as PTX names them; the per-axis ones take an axis
   0..2 (x, y, z), the others ignore it.  Each is an i32 (target.h reads
   them; lower_thread.c gives their ranges). */
typedef enum GjSreg {
    GJ_SREG_TID,        /* thread index in the block (threadIdx) */
    GJ_SREG_NTID,       /* threads per block (blockDim) */
    GJ_SREG_CTAID,      /* block index in the grid (blockIdx) */
    GJ_SREG_NCTAID,     /* blocks per grid (gridDim) */
    GJ_SREG_LANEID,     /* lane in the warp */
    GJ_SREG_WARPSIZE,   /* threads per warp */
    GJ_SREG_LANEMASK_LT,/* the lanes below this one: (1 << lane) - 1 */
    GJ_NSREGS
} GjSreg;

/* Block and warp collectives and memory fences: the members of the warp
   family that the target lowers (target.h's `collective` hook; a warp row's
   `sub`).  Operands, in order, and result: masks, lanes, deltas and widths
   are i32; predicates i1; a shuffled or matched value is its bits, i32 or
   i64.  Every one but the fences synchronises threads (GJ_IF_BARRIER). */
typedef enum GjCollective {
    GJ_COLL_SYNC_COUNT,   /* (pred i1) -> i32: block barrier, threads with pred */
    GJ_COLL_SYNC_AND,     /* (pred) -> i32 0/1: block barrier, all preds true */
    GJ_COLL_SYNC_OR,      /* (pred) -> i32 0/1: block barrier, any pred true */
    GJ_COLL_SYNCWARP,     /* (mask) -> non-NULL: the lanes of mask meet */
    GJ_COLL_FENCE_BLOCK,  /* () -> non-NULL: memory ordering seen by the block */
    GJ_COLL_FENCE,        /* (): ... by the device */
    GJ_COLL_FENCE_SYSTEM, /* (): ... by the host and other devices too */
    GJ_COLL_SHFL_IDX,     /* (mask, bits, src_lane, width) -> bits of lane src_lane */
    GJ_COLL_SHFL_UP,      /* (mask, bits, delta, width) -> bits of lane - delta */
    GJ_COLL_SHFL_DOWN,    /* (mask, bits, delta, width) -> bits of lane + delta */
    GJ_COLL_SHFL_XOR,     /* (mask, bits, lane_mask, width) -> bits of lane ^ lane_mask */
    GJ_COLL_VOTE_ALL,     /* (mask, pred) -> i1: every lane's pred */
    GJ_COLL_VOTE_ANY,     /* (mask, pred) -> i1: some lane's pred */
    GJ_COLL_VOTE_EQ,      /* (mask, pred) -> i1: the preds all alike */
    GJ_COLL_BALLOT,       /* (mask, pred) -> i32: the lanes with pred */
    GJ_COLL_MATCH_ANY,    /* (mask, bits) -> i32: the lanes with the same bits */
    GJ_COLL_MATCH_ALL,    /* (mask, bits) -> i32 mask or 0, and *pred i1: all alike */
    GJ_COLL_ACTIVEMASK,   /* () -> i32: the lanes of the warp executing it */
} GjCollective;

/* The bit and arithmetic members of the warp family (lower_warp.c computes
   them alike on every target). */
typedef enum GjBitOp {
    GJ_BIT_POPC,    /* set bits */
    GJ_BIT_BREV,    /* bits reversed */
    GJ_BIT_CLZ,     /* leading zero bits */
    GJ_BIT_FFS,     /* 1 + index of the lowest set bit, 0 for 0 */
    GJ_BIT_FMA,     /* a * b + c, rounded once */
    GJ_BIT_CBRT,    /* cube root (the math library's) */
    GJ_BIT_SELP,    /* cond ? a : b */
} GjBitOp;

/* How a call of an intrinsic is typed (typecall.c, gj_infer_call_type).  The arity
   (the row's min/max) is checked before the rule runs. */
typedef enum GjTypeRule {
    GJ_TR_VALUE,        /* not callable: a value (threadIdx, math.pi) or namespace; with a
                           result and a lowering, a value of that type (laneid) */
    GJ_TR_FIXED,        /* real scalar arguments -> the row's result type (syncthreads: None) */
    GJ_TR_ARG_TYPE,     /* -> the concrete type of argument `sub` */
    GJ_TR_WARP,         /* (integer mask, real value, integers...) -> the row's result, or
                           the value's concrete type (shfl_sync) */
    GJ_TR_WARP_PAIR,    /* as GJ_TR_WARP -> the tuple (row's result, bool) (match_all_sync) */
    GJ_TR_INT,          /* an integer -> the row's result, or its concrete type (popc) */
    GJ_TR_UNSIGNED,     /* an integer -> the unsigned integer of its width (brev) */
    GJ_TR_FLOATS,       /* reals -> their promotion, float64 for integers (fma, cbrt) */
    GJ_TR_SELECT,       /* (cond, a, b) -> promotion of a and b (selp) */
    GJ_TR_ATOMIC,       /* (array, index, value...) -> element type of the array, one
                           of the dtypes `sub` accepts (GJ_AT_*) */
    GJ_TR_RANGE,        /* integers -> range iterator of their promotion */
    GJ_TR_ABS,          /* scalar -> its magnitude's type (builtins keep literals weak) */
    GJ_TR_NP_ABS,       /* scalar -> its magnitude's concrete type */
    GJ_TR_MINMAX,       /* 2+ real scalars, or one tuple of them -> their promotion */
    GJ_TR_ZIP,          /* iterables (range, tuple, array, iterator) -> zip iterator of
                           their iterators; enumerate (sub 1): (iterable[, start]) */
    GJ_TR_OPERATOR,     /* operator.add & co: typed as the operator `sub` names
                           (GJ_OPERATOR_BINOP | GjBinop, ...) */
    GJ_TR_LEN,          /* array or tuple -> int64 */
    GJ_TR_CONVERT,      /* scalar -> the row's result (int(), float(), bool()) */
    GJ_TR_COMPLEX,      /* complex(re[, im]) -> complex128 */
    GJ_TR_ROUND,        /* round(x) -> int64, round(x, n) -> x's type */
    GJ_TR_POW,          /* (a, b) -> type of a ** b */
    GJ_TR_DIVMOD,       /* (a, b) -> (a // b, a % b) */
    GJ_TR_GRID,         /* the constant 1..3 -> int64 or a tuple of them */
    GJ_TR_REAL_PART,    /* numpy.real/imag -> the real type */
    GJ_TR_SAME,         /* scalar -> its concrete type (numpy.conj) */
    GJ_TR_RECEIVER,     /* x.method() -> x's type */
    GJ_TR_PHASE,        /* cmath.phase, cmath.polar, cmath.rect */
    GJ_TR_POLAR,
    GJ_TR_RECT,
    GJ_TR_MATH,         /* a GJ_MATH_FUNCS row (GjMathKind says more) */
    GJ_TR_NPTYPE,       /* numpy.float32(x) ... -> that dtype */
    GJ_TR_PRINT,        /* real scalars, None and str constants -> None */
    GJ_TR_MEMORY,       /* shared/local.array(shape, dtype), const.array_like(ary) ->
                           an array in address space `sub` */
} GjTypeRule;

/* Row flags. */
enum {
    GJ_IF_DIM3 = 1,          /* a dim3 object (threadIdx): its .x/.y/.z are values */
    GJ_IF_WRITES_ARG0 = 2,   /* stores through its first argument (atomics): the
                                written-arrays analysis marks that array */
    GJ_IF_BARRIER = 4,       /* synchronises threads: the CPU target runs the block
                                as fibers */
    GJ_IF_PRINTS = 8,        /* writes to stdout: a CPU launch flushes sys.stdout first */
};

/* One row, as intrinsics.c stores it: every column but `lower`. */
typedef struct GjIntrinsicRow {
    const char *ns;           /* "builtins", "gpujit", "gpujit.atomic", "math", ... */
    const char *name;         /* "": no such function in this namespace */
    const char *qualname;     /* "gpujit.grid", "math.sqrt"; builtins bare: "range" */
    const char *params;       /* parameter names, "shape, dtype"; "" when it takes none
                                 by keyword; trailing optional ones give their integer
                                 default, "mask=0xffffffff" (lower.c passes it) */
    int min_args, max_args;   /* max -1: any number */
    GjTypeRule rule;
    const struct GjType *result;   /* FIXED, CONVERT, a VALUE with a lowering: the result
                                      type; ARG_TYPE: NULL */
    int sub;                       /* what the rule or lowering function reads: ARG_TYPE:
                                      the argument giving the type; a dim3 object or
                                      register value: its GjSreg; a family function:
                                      which member it is (gridsize: 1; a GjCollective,
                                      a GjBitOp) */
    unsigned flags;                /* GJ_IF_* */
    const char *doc;               /* first line of the Python docstring */
} GjIntrinsicRow;

/* The family row lists.  A row is
     X(id, ns, name, params, min, max, rule, result, sub, lower, flags, doc)
   `lower` names a GjIntrLowerFn (lower_base.h) declared in its family's
   header, or is NULL (values, namespaces); `result` is a
   GjType singleton (types.h) or NULL. */

/* The operator module's functions are its operators: operator.add(a, b) is
   a + b, typed and lowered as the BINOP/UNOP/COMPARE op (gj_lower_operator,
   lower_iter.c).  `sub` is the kind of op or'ed with its GjBinop/GjUnop/GjCmp. */
enum { GJ_OPERATOR_BINOP = 0x100, GJ_OPERATOR_UNOP = 0x200, GJ_OPERATOR_CMP = 0x300 };
#define GJ_OPERATOR_ROW(X, id, name, nargs, sub)                                    \
    X(OPERATOR_##id, "operator", name, "", nargs, nargs, GJ_TR_OPERATOR, NULL, sub, \
      gj_lower_operator, 0, "operator." name)
/* clang-format off */
#define GJ_INTR_OPERATOR_ROWS(X)                                                             \
    GJ_OPERATOR_ROW(X, ADD, "add", 2, GJ_OPERATOR_BINOP | 0)                                 \
    GJ_OPERATOR_ROW(X, SUB, "sub", 2, GJ_OPERATOR_BINOP | 1)                                 \
    GJ_OPERATOR_ROW(X, MUL, "mul", 2, GJ_OPERATOR_BINOP | 2)                                 \
    GJ_OPERATOR_ROW(X, TRUEDIV, "truediv", 2, GJ_OPERATOR_BINOP | 3)                         \
    GJ_OPERATOR_ROW(X, FLOORDIV, "floordiv", 2, GJ_OPERATOR_BINOP | 4)                       \
    GJ_OPERATOR_ROW(X, MOD, "mod", 2, GJ_OPERATOR_BINOP | 5)                                 \
    GJ_OPERATOR_ROW(X, POW, "pow", 2, GJ_OPERATOR_BINOP | 6)                                 \
    GJ_OPERATOR_ROW(X, LSHIFT, "lshift", 2, GJ_OPERATOR_BINOP | 7)                           \
    GJ_OPERATOR_ROW(X, RSHIFT, "rshift", 2, GJ_OPERATOR_BINOP | 8)                           \
    GJ_OPERATOR_ROW(X, AND, "and_", 2, GJ_OPERATOR_BINOP | 9)                                \
    GJ_OPERATOR_ROW(X, OR, "or_", 2, GJ_OPERATOR_BINOP | 10)                                 \
    GJ_OPERATOR_ROW(X, XOR, "xor", 2, GJ_OPERATOR_BINOP | 11)                                \
    GJ_OPERATOR_ROW(X, NEG, "neg", 1, GJ_OPERATOR_UNOP | 0)                                  \
    GJ_OPERATOR_ROW(X, POS, "pos", 1, GJ_OPERATOR_UNOP | 1)                                  \
    GJ_OPERATOR_ROW(X, NOT, "not_", 1, GJ_OPERATOR_UNOP | 2)                                 \
    GJ_OPERATOR_ROW(X, INVERT, "invert", 1, GJ_OPERATOR_UNOP | 3)                            \
    GJ_OPERATOR_ROW(X, INV, "inv", 1, GJ_OPERATOR_UNOP | 3)                                  \
    GJ_OPERATOR_ROW(X, LT, "lt", 2, GJ_OPERATOR_CMP | 0)                                     \
    GJ_OPERATOR_ROW(X, LE, "le", 2, GJ_OPERATOR_CMP | 1)                                     \
    GJ_OPERATOR_ROW(X, EQ, "eq", 2, GJ_OPERATOR_CMP | 2)                                     \
    GJ_OPERATOR_ROW(X, NE, "ne", 2, GJ_OPERATOR_CMP | 3)                                     \
    GJ_OPERATOR_ROW(X, GT, "gt", 2, GJ_OPERATOR_CMP | 4)                                     \
    GJ_OPERATOR_ROW(X, GE, "ge", 2, GJ_OPERATOR_CMP | 5)                                     \
    X(OPERATOR_ABS, "operator", "abs", "", 1, 1, GJ_TR_ABS, NULL, 0, gj_lower_abs_call, 0,   \
      "operator.abs(x) is abs(x)")                                                           \
    X(OPERATOR_TRUTH, "operator", "truth", "", 1, 1, GJ_TR_CONVERT, &gj_ty_bool, 0,          \
      gj_lower_convert, 0, "operator.truth(x) is bool(x)")
/* clang-format on */

/* builtins and the numeric helpers of numpy/cmath (lower_math.c) */
/* clang-format off */
#define GJ_INTR_BUILTIN_ROWS(X)                                                                \
    X(RANGE,  "builtins", "range",  "", 1, 3, GJ_TR_RANGE, NULL, 0, gj_lower_range, 0,          \
      "range(stop) / range(start, stop[, step])")                                            \
    X(ABS,    "builtins", "abs",    "", 1, 1, GJ_TR_ABS, NULL, 0, gj_lower_abs_call, 0, "absolute value") \
    X(MIN,    "builtins", "min",    "", 1, -1, GJ_TR_MINMAX, NULL, 0, gj_lower_minmax_call, 0,     \
      "smallest of 2+ scalars")                                                              \
    X(MAX,    "builtins", "max",    "", 1, -1, GJ_TR_MINMAX, NULL, 0, gj_lower_minmax_call, 0,     \
      "largest of 2+ scalars")                                                               \
    X(LEN,    "builtins", "len",    "", 1, 1, GJ_TR_LEN, NULL, 0, gj_lower_len, 0,              \
      "length of the first axis")                                                            \
    X(INT,    "builtins", "int",    "", 1, 1, GJ_TR_CONVERT, &gj_ty_int64, 0, gj_lower_convert, 0, \
      "convert to int64 (truncates)")                                                        \
    X(FLOAT,  "builtins", "float",  "", 1, 1, GJ_TR_CONVERT, &gj_ty_float64, 0, gj_lower_convert, \
      0, "convert to float64")                                                               \
    X(BOOL,   "builtins", "bool",   "", 1, 1, GJ_TR_CONVERT, &gj_ty_bool, 0, gj_lower_convert, 0, \
      "truth value")                                                                         \
    X(ROUND,  "builtins", "round",  "", 1, 2, GJ_TR_ROUND, NULL, 0, gj_lower_round, 0,          \
      "round half to even: int64, or a float with ndigits")                                  \
    X(POW,    "builtins", "pow",    "", 2, 2, GJ_TR_POW, NULL, 0, gj_lower_pow, 0, "pow(a, b) is a ** b") \
    X(DIVMOD, "builtins", "divmod", "", 2, 2, GJ_TR_DIVMOD, NULL, 0, gj_lower_divmod, 0,        \
      "(a // b, a % b)")                                                                     \
    X(COMPLEX,"builtins", "complex","", 1, 2, GJ_TR_COMPLEX, NULL, 0, gj_lower_complex_ctor, 0, \
      "complex(re[, im]): complex128")                                                       \
    X(ZIP,    "builtins", "zip",    "", 1, -1, GJ_TR_ZIP, NULL, 0, gj_lower_zip, 0,              \
      "zip(*iterables): tuples of their items, as long as the shortest")                     \
    X(ENUMERATE, "builtins", "enumerate", "iterable, start", 1, 2, GJ_TR_ZIP, NULL, 1,        \
      gj_lower_zip, 0, "enumerate(iterable, start=0): (index, item) tuples")                 \
    GJ_INTR_OPERATOR_ROWS(X)                                                                 \
    X(NP_ABS,      "numpy", "abs",      "", 1, 1, GJ_TR_NP_ABS, NULL, 0, gj_lower_abs_call, 0,     \
      "absolute value, dtype kept")                                                          \
    X(NP_ABSOLUTE, "numpy", "absolute", "", 1, 1, GJ_TR_NP_ABS, NULL, 0, gj_lower_abs_call, 0,     \
      "absolute value, dtype kept")                                                          \
    X(NP_REAL, "numpy", "real", "", 1, 1, GJ_TR_REAL_PART, NULL, 0, gj_lower_part, 0, "real part") \
    X(NP_IMAG, "numpy", "imag", "", 1, 1, GJ_TR_REAL_PART, NULL, 0, gj_lower_part, 0,         \
      "imaginary part")                                                                      \
    X(NP_CONJ, "numpy", "conj", "", 1, 1, GJ_TR_SAME, NULL, 0, gj_lower_conjugate, 0,         \
      "complex conjugate")                                                                   \
    X(NP_CONJUGATE, "numpy", "conjugate", "", 1, 1, GJ_TR_SAME, NULL, 0, gj_lower_conjugate, 0, \
      "complex conjugate")                                                                   \
    X(CMATH_PHASE, "cmath", "phase", "", 1, 1, GJ_TR_PHASE, NULL, 0, gj_lower_phase, 0,       \
      "argument of a complex number")                                                        \
    X(CMATH_POLAR, "cmath", "polar", "", 1, 1, GJ_TR_POLAR, NULL, 0, gj_lower_polar, 0,       \
      "(abs(z), phase(z))")                                                                  \
    X(CMATH_RECT,  "cmath", "rect",  "", 2, 2, GJ_TR_RECT, NULL, 0, gj_lower_rect, 0,         \
      "r * (cos(phi) + sin(phi) j)")                                                         \
    X(METHOD_CONJUGATE, "method", "conjugate", "", 0, 0, GJ_TR_RECEIVER, NULL, 0,             \
      gj_lower_conjugate, 0, "x.conjugate() of a number")
/* clang-format on */

/* thread indexing and the block barrier (lower_thread.c) */
/* clang-format off */
#define GJ_INTR_THREAD_ROWS(X)                                                                 \
    X(GRID,      "gpujit", "grid",     "ndim", 1, 1, GJ_TR_GRID, NULL, 0, gj_lower_grid, 0,     \
      "grid(ndim) -> int or tuple of int: the absolute index of the thread in the grid")    \
    X(GRIDSIZE,  "gpujit", "gridsize", "ndim", 1, 1, GJ_TR_GRID, NULL, 1, gj_lower_grid, 0,     \
      "gridsize(ndim) -> int or tuple of int: the number of threads in the grid")           \
    X(THREADIDX, "gpujit", "threadIdx", "", 0, 0, GJ_TR_VALUE, NULL, GJ_SREG_TID, NULL, GJ_IF_DIM3, \
      "Index of the thread in its block (.x, .y, .z).")                                     \
    X(BLOCKIDX,  "gpujit", "blockIdx",  "", 0, 0, GJ_TR_VALUE, NULL, GJ_SREG_CTAID, NULL, GJ_IF_DIM3, \
      "Index of the block in the grid (.x, .y, .z).")                                       \
    X(BLOCKDIM,  "gpujit", "blockDim",  "", 0, 0, GJ_TR_VALUE, NULL, GJ_SREG_NTID, NULL, GJ_IF_DIM3, \
      "Threads per block (.x, .y, .z).")                                                    \
    X(GRIDDIM,   "gpujit", "gridDim",   "", 0, 0, GJ_TR_VALUE, NULL, GJ_SREG_NCTAID, NULL, GJ_IF_DIM3, \
      "Blocks per grid (.x, .y, .z).")                                                      \
    X(SYNCTHREADS, "gpujit", "syncthreads", "", 0, 0, GJ_TR_FIXED, &gj_ty_none, 0,            \
      gj_lower_syncthreads, GJ_IF_BARRIER,                                                  \
      "syncthreads() -> None: waits until every thread of the block has reached it.")      \
    X(LANEID,    "gpujit", "laneid",   "", 0, 0, GJ_TR_VALUE, &gj_ty_int64, GJ_SREG_LANEID,    \
      gj_lower_sreg, 0, "Index of the thread in its warp, 0..31 (an int64 value).")      \
    X(WARPSIZE,  "gpujit", "warpsize", "", 0, 0, GJ_TR_VALUE, &gj_ty_int64, GJ_SREG_WARPSIZE,  \
      gj_lower_sreg, 0, "Threads per warp, 32 (an int64 value).")                          \
    X(LANEMASK_LT, "gpujit", "lanemask_lt", "", 0, 0, GJ_TR_FIXED, &gj_ty_uint32,             \
      GJ_SREG_LANEMASK_LT, gj_lower_sreg, 0,                                                \
      "lanemask_lt() -> uint32: the bits of the lanes below this thread's.")               \
    X(DIM3_X, "dim3", "x", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "x component")            \
    X(DIM3_Y, "dim3", "y", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "y component")            \
    X(DIM3_Z, "dim3", "z", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "z component")
/* clang-format on */

/* memory spaces: gpujit.shared.array, gpujit.local.array, gpujit.const.array_like
   (lower_array.c); `sub` is the GjAddrSpace (types.h) of the array made */
/* clang-format off */
#define GJ_INTR_MEMORY_ROWS(X)                                                                 \
    X(SHARED_ARRAY, "gpujit.shared", "array", "shape, dtype", 2, 2, GJ_TR_MEMORY, NULL,         \
      GJ_AS_SHARED, gj_lower_memory_array, 0,                                                 \
      "array(shape, dtype) -> array in the block's shared memory (shape: compile-time "       \
      "constant; 0 for dynamic shared memory sized at launch)")                              \
    X(LOCAL_ARRAY, "gpujit.local", "array", "shape, dtype", 2, 2, GJ_TR_MEMORY, NULL,           \
      GJ_AS_LOCAL, gj_lower_memory_array, 0,                                                  \
      "array(shape, dtype) -> array private to the thread (shape: compile-time constant)")   \
    X(CONST_ARRAY_LIKE, "gpujit.const", "array_like", "ary", 1, 1, GJ_TR_MEMORY, NULL,          \
      GJ_AS_CONST, gj_lower_const_array_like, 0,                                              \
      "array_like(ary) -> read-only copy of module-level NumPy array ary in constant memory")
/* clang-format on */

/* atomics: gpujit.atomic.* (lower_atomic.c).  Every row takes an array,
   an index selecting one element and the operands, which convert to the
   element type; each returns the element's old value.  `sub` is the
   operation (GjAtomicOp) or'ed with the element dtypes it accepts (GJ_AT_*),
   which GJ_TR_ATOMIC checks; gj_lower_atomic picks the LLVM operation for
   the dtype's class (max: signed, unsigned or a float loop) from it. */
#define GJ_ATOMIC_ROW(X, id, name, params, nargs, sub, lower, doc)                              \
    X(ATOMIC_##id, "gpujit.atomic", name, params, nargs, nargs, GJ_TR_ATOMIC, NULL, sub, lower, \
      GJ_IF_WRITES_ARG0, doc)
/* clang-format off */
#define GJ_INTR_ATOMIC_ROWS(X)                                                                 \
    GJ_ATOMIC_ROW(X, ADD, "add", "ary, idx, val", 3,                                           \
                  GJ_AOP_ADD | GJ_AT_INTS | GJ_AT_FLOATS | GJ_AT_FLOAT16, gj_lower_atomic,     \
                  "add(ary, idx, val) -> old value: ary[idx] += val, atomically")             \
    GJ_ATOMIC_ROW(X, SUB, "sub", "ary, idx, val", 3, GJ_AOP_SUB | GJ_AT_INTS | GJ_AT_FLOATS,   \
                  gj_lower_atomic, "sub(ary, idx, val) -> old value: ary[idx] -= val, atomically") \
    GJ_ATOMIC_ROW(X, AND, "and_", "ary, idx, val", 3, GJ_AOP_AND | GJ_AT_INTS,                 \
                  gj_lower_atomic, "and_(ary, idx, val) -> old value: ary[idx] &= val, atomically") \
    GJ_ATOMIC_ROW(X, OR, "or_", "ary, idx, val", 3, GJ_AOP_OR | GJ_AT_INTS,                    \
                  gj_lower_atomic, "or_(ary, idx, val) -> old value: ary[idx] |= val, atomically") \
    GJ_ATOMIC_ROW(X, XOR, "xor", "ary, idx, val", 3, GJ_AOP_XOR | GJ_AT_INTS,                  \
                  gj_lower_atomic, "xor(ary, idx, val) -> old value: ary[idx] ^= val, atomically") \
    GJ_ATOMIC_ROW(X, EXCH, "exch", "ary, idx, val", 3, GJ_AOP_XCHG | GJ_AT_INTS,               \
                  gj_lower_atomic, "exch(ary, idx, val) -> old value: ary[idx] = val, atomically") \
    GJ_ATOMIC_ROW(X, INC, "inc", "ary, idx, val", 3, GJ_AOP_INC | GJ_AT_UINTS, gj_lower_atomic, \
                  "inc(ary, idx, val) -> old value: ary[idx] = 0 if ary[idx] >= val else "    \
                  "ary[idx] + 1, atomically")                                                 \
    GJ_ATOMIC_ROW(X, DEC, "dec", "ary, idx, val", 3, GJ_AOP_DEC | GJ_AT_UINTS, gj_lower_atomic, \
                  "dec(ary, idx, val) -> old value: ary[idx] = val if ary[idx] == 0 or "      \
                  "ary[idx] > val else ary[idx] - 1, atomically")                             \
    GJ_ATOMIC_ROW(X, MAX, "max", "ary, idx, val", 3, GJ_AOP_MAX | GJ_AT_INTS | GJ_AT_FLOATS,   \
                  gj_lower_atomic, "max(ary, idx, val) -> old value: ary[idx] = "             \
                  "max(ary[idx], val), atomically (Python's max: a NaN element stays)")       \
    GJ_ATOMIC_ROW(X, MIN, "min", "ary, idx, val", 3, GJ_AOP_MIN | GJ_AT_INTS | GJ_AT_FLOATS,   \
                  gj_lower_atomic, "min(ary, idx, val) -> old value: ary[idx] = "             \
                  "min(ary[idx], val), atomically (Python's min: a NaN element stays)")       \
    GJ_ATOMIC_ROW(X, NANMIN, "nanmin", "ary, idx, val", 3,                                     \
                  GJ_AOP_MIN | GJ_AT_NAN | GJ_AT_INTS | GJ_AT_FLOATS, gj_lower_atomic,         \
                  "nanmin(ary, idx, val) -> old value: ary[idx] = numpy.nanmin((ary[idx], "   \
                  "val)), atomically (NaN is a missing value)")                               \
    GJ_ATOMIC_ROW(X, NANMAX, "nanmax", "ary, idx, val", 3,                                     \
                  GJ_AOP_MAX | GJ_AT_NAN | GJ_AT_INTS | GJ_AT_FLOATS, gj_lower_atomic,         \
                  "nanmax(ary, idx, val) -> old value: ary[idx] = numpy.nanmax((ary[idx], "   \
                  "val)), atomically (NaN is a missing value)")                               \
    GJ_ATOMIC_ROW(X, CAS, "cas", "ary, idx, old, val", 4, GJ_AOP_CAS | GJ_AT_INTS,             \
                  gj_lower_atomic, "cas(ary, idx, old, val) -> old value: ary[idx] = val if " \
                  "ary[idx] == old, atomically")                                              \
    GJ_ATOMIC_ROW(X, COMPARE_AND_SWAP, "compare_and_swap", "ary, old, val", 3,                 \
                  GJ_AOP_CAS | GJ_AT_INTS | GJ_AT_FIRST, gj_lower_atomic,                      \
                  "compare_and_swap(ary, old, val) -> old value: ary[0] = val if ary[0] == "  \
                  "old, atomically (ary 1-d)")
/* clang-format on */

/* The operation of an atomic row, the low byte of its `sub`.  The
   lowering function maps each to an LLVM atomicrmw operation per numeric
   class (lower_atomic.c), so a new row needs no new member here unless it
   needs an operation LLVM lacks. */
typedef enum GjAtomicOp {
    GJ_AOP_XCHG,        /* val */
    GJ_AOP_ADD,         /* old + val */
    GJ_AOP_SUB,         /* old - val */
    GJ_AOP_AND,         /* old & val */
    GJ_AOP_NAND,        /* ~(old & val) */
    GJ_AOP_OR,          /* old | val */
    GJ_AOP_XOR,         /* old ^ val */
    GJ_AOP_MAX,         /* max(old, val); floats by GJ_AT_NAN's rule */
    GJ_AOP_MIN,         /* min(old, val); likewise */
    GJ_AOP_INC,         /* unsigned: old >= val ? 0 : old + 1 */
    GJ_AOP_DEC,         /* unsigned: old == 0 || old > val ? val : old - 1 */
    GJ_AOP_CAS,         /* (cmp, val): old == cmp ? val : old */
    GJ_NATOMICOPS
} GjAtomicOp;

/* The element dtypes an atomic row accepts, and its NaN rule: bits of
   `sub` above the operation. */
enum {
    GJ_AT_OP_MASK = 0xff,
    GJ_AT_INT32 = 1 << 8,
    GJ_AT_INT64 = 1 << 9,
    GJ_AT_UINT32 = 1 << 10,
    GJ_AT_UINT64 = 1 << 11,
    GJ_AT_FLOAT16 = 1 << 12,
    GJ_AT_FLOAT32 = 1 << 13,
    GJ_AT_FLOAT64 = 1 << 14,
    GJ_AT_UINTS = GJ_AT_UINT32 | GJ_AT_UINT64,
    GJ_AT_INTS = GJ_AT_INT32 | GJ_AT_INT64 | GJ_AT_UINTS,
    GJ_AT_FLOATS = GJ_AT_FLOAT32 | GJ_AT_FLOAT64,
    GJ_AT_NAN = 1 << 15,   /* float max/min treat NaN as missing on both sides (numpy's
                              nanmax); without it, as Python's max(ary[idx], val) does: a
                              NaN element stays, a NaN value changes nothing */
    GJ_AT_FIRST = 1 << 16, /* no index: the first element of a 1-d array (numba's
                              compare_and_swap(ary, old, val)) */
};

/* warp and block primitives, fences, bit operations (lower_warp.c) */
/* clang-format off */
#define GJ_INTR_WARP_ROWS(X)                                                                   \
    X(SYNCTHREADS_COUNT, "gpujit", "syncthreads_count", "predicate", 1, 1, GJ_TR_FIXED,       \
      &gj_ty_int32, GJ_COLL_SYNC_COUNT, gj_lower_collective, GJ_IF_BARRIER,                  \
      "syncthreads_count(predicate) -> int32: syncthreads(), then the number of threads "   \
      "of the block whose predicate is true.")                                              \
    X(SYNCTHREADS_AND, "gpujit", "syncthreads_and", "predicate", 1, 1, GJ_TR_FIXED,           \
      &gj_ty_int32, GJ_COLL_SYNC_AND, gj_lower_collective, GJ_IF_BARRIER,                    \
      "syncthreads_and(predicate) -> int32: syncthreads(), then 1 if the predicate is true " \
      "in every thread of the block, else 0.")                                              \
    X(SYNCTHREADS_OR, "gpujit", "syncthreads_or", "predicate", 1, 1, GJ_TR_FIXED,             \
      &gj_ty_int32, GJ_COLL_SYNC_OR, gj_lower_collective, GJ_IF_BARRIER,                     \
      "syncthreads_or(predicate) -> int32: syncthreads(), then 1 if the predicate is true "  \
      "in some thread of the block, else 0.")                                               \
    X(SYNCWARP, "gpujit", "syncwarp", "mask=0xffffffff", 0, 1, GJ_TR_FIXED, &gj_ty_none,        \
      GJ_COLL_SYNCWARP, gj_lower_collective, GJ_IF_BARRIER,                                  \
      "syncwarp(mask=0xffffffff) -> None: waits until every lane of the warp named in mask " \
      "has reached it.")                                                                     \
    X(THREADFENCE, "gpujit", "threadfence", "", 0, 0, GJ_TR_FIXED, &gj_ty_none,                \
      GJ_COLL_FENCE, gj_lower_collective, 0,                                                 \
      "threadfence() -> None: memory accesses before it are seen by the device before "     \
      "those after it.")                                                                     \
    X(THREADFENCE_BLOCK, "gpujit", "threadfence_block", "", 0, 0, GJ_TR_FIXED, &gj_ty_none,    \
      GJ_COLL_FENCE_BLOCK, gj_lower_collective, 0,                                           \
      "threadfence_block() -> None: threadfence() for the threads of the block.")            \
    X(THREADFENCE_SYSTEM, "gpujit", "threadfence_system", "", 0, 0, GJ_TR_FIXED, &gj_ty_none,  \
      GJ_COLL_FENCE_SYSTEM, gj_lower_collective, 0,                                          \
      "threadfence_system() -> None: threadfence() for the host and other devices too.")     \
    X(SHFL_SYNC, "gpujit", "shfl_sync", "mask, value, src_lane, width=32", 3, 4, GJ_TR_WARP,  \
      NULL, GJ_COLL_SHFL_IDX, gj_lower_collective, GJ_IF_BARRIER,                            \
      "shfl_sync(mask, value, src_lane, width=32) -> value of lane src_lane % width of the " \
      "caller's section of width lanes.")                                                    \
    X(SHFL_UP_SYNC, "gpujit", "shfl_up_sync", "mask, value, delta, width=32", 3, 4,           \
      GJ_TR_WARP, NULL, GJ_COLL_SHFL_UP, gj_lower_collective, GJ_IF_BARRIER,                 \
      "shfl_up_sync(mask, value, delta, width=32) -> value of lane laneid - delta, or the "  \
      "caller's own value where that is outside its section.")                              \
    X(SHFL_DOWN_SYNC, "gpujit", "shfl_down_sync", "mask, value, delta, width=32", 3, 4,       \
      GJ_TR_WARP, NULL, GJ_COLL_SHFL_DOWN, gj_lower_collective, GJ_IF_BARRIER,               \
      "shfl_down_sync(mask, value, delta, width=32) -> value of lane laneid + delta, or "    \
      "the caller's own value where that is outside its section.")                          \
    X(SHFL_XOR_SYNC, "gpujit", "shfl_xor_sync", "mask, value, lane_mask, width=32", 3, 4,     \
      GJ_TR_WARP, NULL, GJ_COLL_SHFL_XOR, gj_lower_collective, GJ_IF_BARRIER,                \
      "shfl_xor_sync(mask, value, lane_mask, width=32) -> value of lane laneid ^ lane_mask " \
      "(a butterfly).")                                                                      \
    X(ALL_SYNC, "gpujit", "all_sync", "mask, predicate", 2, 2, GJ_TR_WARP, &gj_ty_bool,        \
      GJ_COLL_VOTE_ALL, gj_lower_collective, GJ_IF_BARRIER,                                  \
      "all_sync(mask, predicate) -> bool: the predicate is true in every lane of mask.")     \
    X(ANY_SYNC, "gpujit", "any_sync", "mask, predicate", 2, 2, GJ_TR_WARP, &gj_ty_bool,        \
      GJ_COLL_VOTE_ANY, gj_lower_collective, GJ_IF_BARRIER,                                  \
      "any_sync(mask, predicate) -> bool: the predicate is true in some lane of mask.")      \
    X(EQ_SYNC, "gpujit", "eq_sync", "mask, predicate", 2, 2, GJ_TR_WARP, &gj_ty_bool,          \
      GJ_COLL_VOTE_EQ, gj_lower_collective, GJ_IF_BARRIER,                                   \
      "eq_sync(mask, predicate) -> bool: the predicate is the same in every lane of mask.")  \
    X(BALLOT_SYNC, "gpujit", "ballot_sync", "mask, predicate", 2, 2, GJ_TR_WARP,              \
      &gj_ty_uint32, GJ_COLL_BALLOT, gj_lower_collective, GJ_IF_BARRIER,                     \
      "ballot_sync(mask, predicate) -> uint32: bit i set for each lane i of mask whose "     \
      "predicate is true.")                                                                  \
    X(MATCH_ANY_SYNC, "gpujit", "match_any_sync", "mask, value", 2, 2, GJ_TR_WARP,            \
      &gj_ty_uint32, GJ_COLL_MATCH_ANY, gj_lower_collective, GJ_IF_BARRIER,                  \
      "match_any_sync(mask, value) -> uint32: the lanes of mask whose value has the same "   \
      "bits as the caller's.")                                                               \
    X(MATCH_ALL_SYNC, "gpujit", "match_all_sync", "mask, value", 2, 2, GJ_TR_WARP_PAIR,       \
      &gj_ty_uint32, GJ_COLL_MATCH_ALL, gj_lower_collective, GJ_IF_BARRIER,                  \
      "match_all_sync(mask, value) -> (uint32, bool): (mask, True) if every lane of mask "   \
      "has the same value bits, else (0, False).")                                           \
    X(ACTIVEMASK, "gpujit", "activemask", "", 0, 0, GJ_TR_FIXED, &gj_ty_uint32,                \
      GJ_COLL_ACTIVEMASK, gj_lower_collective, GJ_IF_BARRIER,                                \
      "activemask() -> uint32: the lanes of the warp executing this call.")                  \
    X(POPC, "gpujit", "popc", "x", 1, 1, GJ_TR_INT, NULL, GJ_BIT_POPC, gj_lower_bits, 0,       \
      "popc(x) -> x's type: the number of set bits of the integer x.")                      \
    X(BREV, "gpujit", "brev", "x", 1, 1, GJ_TR_UNSIGNED, NULL, GJ_BIT_BREV, gj_lower_bits, 0,  \
      "brev(x) -> unsigned of x's width: the bits of the integer x reversed.")              \
    X(CLZ, "gpujit", "clz", "x", 1, 1, GJ_TR_INT, NULL, GJ_BIT_CLZ, gj_lower_bits, 0,          \
      "clz(x) -> x's type: the number of leading zero bits of the integer x.")              \
    X(FFS, "gpujit", "ffs", "x", 1, 1, GJ_TR_INT, &gj_ty_uint32, GJ_BIT_FFS, gj_lower_bits, 0, \
      "ffs(x) -> uint32: 1 + the index of the lowest set bit of the integer x; 0 for 0.")   \
    X(FMA, "gpujit", "fma", "a, b, c", 3, 3, GJ_TR_FLOATS, NULL, GJ_BIT_FMA, gj_lower_bits, 0, \
      "fma(a, b, c) -> float: a * b + c with one rounding.")                                 \
    X(CBRT, "gpujit", "cbrt", "x", 1, 1, GJ_TR_FLOATS, NULL, GJ_BIT_CBRT, gj_lower_bits, 0,    \
      "cbrt(x) -> float: the cube root.")                                                    \
    X(SELP, "gpujit", "selp", "cond, a, b", 3, 3, GJ_TR_SELECT, NULL, GJ_BIT_SELP,             \
      gj_lower_bits, 0, "selp(cond, a, b) -> a if cond else b, both evaluated.")
/* clang-format on */

/* print (lower_print.c); 16 arguments at most, as lower.c passes calls */
/* clang-format off */
#define GJ_INTR_PRINT_ROWS(X)                                                                  \
    X(PRINT, "builtins", "print", "", 0, 16, GJ_TR_PRINT, &gj_ty_none, 0, gj_lower_print,       \
      GJ_IF_PRINTS, "print(*values): one line per thread, values separated by spaces")
/* clang-format on */

/* clang-format off */
#define GJ_INTRINSICS(X)                                                                       \
    GJ_INTR_BUILTIN_ROWS(X) GJ_INTR_THREAD_ROWS(X) GJ_INTR_MEMORY_ROWS(X)                      \
    GJ_INTR_ATOMIC_ROWS(X) GJ_INTR_WARP_ROWS(X) GJ_INTR_PRINT_ROWS(X) NP_SCALAR_TYPES(X)
/* clang-format on */

/* NumPy's scalar types called as constructors: np.float32(x) converts x as
   NumPy's astype does (floats truncate toward zero, integers wrap). */
#define NP_SCALAR_TYPE(X, id, name)                                                     \
    X(NPTYPE_##id, "numpy", name, "", 1, 1, GJ_TR_NPTYPE, NULL, 0, gj_lower_convert, 0, \
      "numpy." name "(x)")
/* np.complex64(re, im) as complex(re, im), in that dtype */
#define NP_COMPLEX_TYPE(X, id, name)                                                         \
    X(NPTYPE_##id, "numpy", name, "", 1, 2, GJ_TR_NPTYPE, NULL, 0, gj_lower_complex_ctor, 0, \
      "numpy." name "(x) or numpy." name "(re, im)")
/* clang-format off */
#define NP_SCALAR_TYPES(X)                                                         \
    NP_SCALAR_TYPE(X, BOOL, "bool") NP_SCALAR_TYPE(X, BOOL_, "bool_")               \
    NP_SCALAR_TYPE(X, INT8, "int8") NP_SCALAR_TYPE(X, INT16, "int16")               \
    NP_SCALAR_TYPE(X, INT32, "int32") NP_SCALAR_TYPE(X, INT64, "int64")             \
    NP_SCALAR_TYPE(X, UINT8, "uint8") NP_SCALAR_TYPE(X, UINT16, "uint16")           \
    NP_SCALAR_TYPE(X, UINT32, "uint32") NP_SCALAR_TYPE(X, UINT64, "uint64")         \
    NP_SCALAR_TYPE(X, INTP, "intp") NP_SCALAR_TYPE(X, UINTP, "uintp")               \
    NP_SCALAR_TYPE(X, INTC, "intc") NP_SCALAR_TYPE(X, UINTC, "uintc")               \
    NP_SCALAR_TYPE(X, INT_, "int_")                                                 \
    NP_SCALAR_TYPE(X, FLOAT16, "float16") NP_SCALAR_TYPE(X, HALF, "half")           \
    NP_SCALAR_TYPE(X, FLOAT32, "float32") NP_SCALAR_TYPE(X, SINGLE, "single")       \
    NP_SCALAR_TYPE(X, FLOAT64, "float64") NP_SCALAR_TYPE(X, DOUBLE, "double")       \
    NP_COMPLEX_TYPE(X, COMPLEX64, "complex64") NP_COMPLEX_TYPE(X, COMPLEX128, "complex128")
/* clang-format on */

/* Functions and constants that math, numpy and cmath share, one row each:
   id, the name in math, numpy and cmath ("": not there), the number of
   arguments, how it is typed and lowered (GjMathKind), and the libdevice
   function (base name, no __nv_ and no f) or LLVM intrinsic that computes
   it.  Each row gives three intrinsics, GJ_INTR_MATH_<id>, GJ_INTR_NP_<id>
   and GJ_INTR_CMATH_<id>; an empty name is never looked up. */
/* clang-format off */
#define GJ_MATH_FUNCS(X)                                                                    \
    X(SQRT,     "sqrt",     "sqrt",     "sqrt",  1, GJ_MK_FLOAT,  "llvm.sqrt")              \
    X(CBRT,     "cbrt",     "cbrt",     "",      1, GJ_MK_FLOAT,  "cbrt")                   \
    X(EXP,      "exp",      "exp",      "exp",   1, GJ_MK_FLOAT,  "exp")                    \
    X(EXP2,     "exp2",     "exp2",     "",      1, GJ_MK_FLOAT,  "exp2")                   \
    X(EXPM1,    "expm1",    "expm1",    "",      1, GJ_MK_FLOAT,  "expm1")                  \
    X(LOG,      "log",      "log",      "log",   1, GJ_MK_FLOAT,  "log")                    \
    X(LOG2,     "log2",     "log2",     "",      1, GJ_MK_FLOAT,  "log2")                   \
    X(LOG10,    "log10",    "log10",    "log10", 1, GJ_MK_FLOAT,  "log10")                  \
    X(LOG1P,    "log1p",    "log1p",    "",      1, GJ_MK_FLOAT,  "log1p")                  \
    X(SIN,      "sin",      "sin",      "sin",   1, GJ_MK_FLOAT,  "sin")                    \
    X(COS,      "cos",      "cos",      "cos",   1, GJ_MK_FLOAT,  "cos")                    \
    X(TAN,      "tan",      "tan",      "tan",   1, GJ_MK_FLOAT,  "tan")                    \
    X(ASIN,     "asin",     "arcsin",   "asin",  1, GJ_MK_FLOAT,  "asin")                   \
    X(ACOS,     "acos",     "arccos",   "acos",  1, GJ_MK_FLOAT,  "acos")                   \
    X(ATAN,     "atan",     "arctan",   "atan",  1, GJ_MK_FLOAT,  "atan")                   \
    X(SINH,     "sinh",     "sinh",     "sinh",  1, GJ_MK_FLOAT,  "sinh")                   \
    X(COSH,     "cosh",     "cosh",     "cosh",  1, GJ_MK_FLOAT,  "cosh")                   \
    X(TANH,     "tanh",     "tanh",     "tanh",  1, GJ_MK_FLOAT,  "tanh")                   \
    X(ASINH,    "asinh",    "arcsinh",  "asinh", 1, GJ_MK_FLOAT,  "asinh")                  \
    X(ACOSH,    "acosh",    "arccosh",  "acosh", 1, GJ_MK_FLOAT,  "acosh")                  \
    X(ATANH,    "atanh",    "arctanh",  "atanh", 1, GJ_MK_FLOAT,  "atanh")                  \
    X(ERF,      "erf",      "",         "",      1, GJ_MK_FLOAT,  "erf")                    \
    X(ERFC,     "erfc",     "",         "",      1, GJ_MK_FLOAT,  "erfc")                   \
    X(GAMMA,    "gamma",    "",         "",      1, GJ_MK_FLOAT,  "tgamma")                 \
    X(LGAMMA,   "lgamma",   "",         "",      1, GJ_MK_FLOAT,  "lgamma")                 \
    X(FABS,     "fabs",     "fabs",     "",      1, GJ_MK_FLOAT,  "llvm.fabs")              \
    X(RADIANS,  "radians",  "radians",  "",      1, GJ_MK_FLOAT,  "")                     \
    X(DEG2RAD,  "",         "deg2rad",  "",      1, GJ_MK_FLOAT,  "")                     \
    X(DEGREES,  "degrees",  "degrees",  "",      1, GJ_MK_FLOAT,  "")                     \
    X(RAD2DEG,  "",         "rad2deg",  "",      1, GJ_MK_FLOAT,  "")                     \
    X(FLOOR,    "floor",    "floor",    "",      1, GJ_MK_ROUND,  "llvm.floor")             \
    X(CEIL,     "ceil",     "ceil",     "",      1, GJ_MK_ROUND,  "llvm.ceil")              \
    X(TRUNC,    "trunc",    "trunc",    "",      1, GJ_MK_ROUND,  "llvm.trunc")             \
    X(RINT,     "",         "rint",     "",      1, GJ_MK_ROUND,  "llvm.rint")              \
    X(ISNAN,    "isnan",    "isnan",    "isnan", 1, GJ_MK_PRED,   "")                     \
    X(ISINF,    "isinf",    "isinf",    "isinf", 1, GJ_MK_PRED,   "")                     \
    X(ISFINITE, "isfinite", "isfinite", "isfinite", 1, GJ_MK_PRED, "")                    \
    X(POW,      "pow",      "power",    "",      2, GJ_MK_POW,    "pow")                    \
    X(ATAN2,    "atan2",    "arctan2",  "",      2, GJ_MK_FLOAT,  "atan2")                  \
    X(HYPOT,    "hypot",    "hypot",    "",      2, GJ_MK_FLOAT,  "hypot")                  \
    X(COPYSIGN, "copysign", "copysign", "",      2, GJ_MK_FLOAT,  "llvm.copysign")          \
    X(FMOD,     "fmod",     "fmod",     "",      2, GJ_MK_FLOAT,  "fmod")                   \
    X(FREXP,    "frexp",    "frexp",    "",      1, GJ_MK_FREXP,  "frexp")                  \
    X(LDEXP,    "ldexp",    "ldexp",    "",      2, GJ_MK_LDEXP,  "ldexp")
/* clang-format on */

/* Constants of math, numpy and cmath: id, names as above, value. */
/* clang-format off */
#define GJ_MATH_CONSTS(X)                                                      \
    X(PI,  "pi",  "pi",  "pi",  3.141592653589793)                             \
    X(E,   "e",   "e",   "e",   2.718281828459045)                             \
    X(TAU, "tau", "",    "tau", 6.283185307179586)                             \
    X(INF, "inf", "inf", "inf", (double)INFINITY)                              \
    X(NAN, "nan", "nan", "nan", (double)NAN)
/* clang-format on */

/* How a math function is typed and lowered. */
typedef enum GjMathKind {
    GJ_MK_FLOAT,   /* real floats in, the same float out (libdevice or LLVM) */
    GJ_MK_ROUND,   /* floor/ceil/trunc/rint: math -> int64, numpy keeps the dtype */
    GJ_MK_PRED,    /* isnan/isinf/isfinite -> bool */
    GJ_MK_POW,     /* math.pow is float pow; numpy.power is ** */
    GJ_MK_FREXP,   /* x -> (mantissa, exponent) */
    GJ_MK_LDEXP,   /* (x, int) -> x * 2**i */
} GjMathKind;

typedef enum GjMathFn {
/* clang-format off */
#define X(id, m, np, cm, nargs, kind, impl) GJ_MF_##id,
    GJ_MATH_FUNCS(X)
#undef X
    GJ_NMATHFNS
/* clang-format on */
} GjMathFn;

typedef enum GjMathConst {
/* clang-format off */
#define X(id, m, np, cm, value) GJ_MC_##id,
    GJ_MATH_CONSTS(X)
#undef X
    GJ_NMATHCONSTS
/* clang-format on */
} GjMathConst;

/* The module a math row's intrinsic belongs to. */
typedef enum GjMathNs { GJ_NS_MATH, GJ_NS_NUMPY, GJ_NS_CMATH } GjMathNs;

typedef enum GjIntrinsic {
#define X(name, ...) GJ_INTR_##name,
    GJ_INTRINSICS(X)
#undef X
/* clang-format off */
#define X(id, m, np, cm, ...) GJ_INTR_MATH_##id, GJ_INTR_NP_##id, GJ_INTR_CMATH_##id,
    GJ_MATH_FUNCS(X)
    GJ_MATH_CONSTS(X)
#undef X
    GJ_NINTRINSICS
/* clang-format on */
} GjIntrinsic;

/* The intrinsic called `name` in namespace `ns`, or -1. */
int gj_intrinsic_lookup(const char *ns, const char *name);
/* The intrinsic a qualified name "gpujit.atomic.add", "math.sqrt" (also
   "np.sqrt") names, or -1. */
int gj_intrinsic_lookup_qualified(const char *qualname);
/* Whether ns ("gpujit.atomic") is a namespace some row lives in. */
int gj_intrinsic_is_namespace(const char *ns);
const char *gj_intrinsic_name(GjIntrinsic i);   /* "gpujit.grid" style */
/* Row i of the table (i < GJ_NINTRINSICS). */
const GjIntrinsicRow *gj_intrinsic_row(GjIntrinsic i);
/* The position of the parameter called `name` in row i's params, or -1. */
int gj_intrinsic_param_index(GjIntrinsic i, const char *name);
/* Whether parameter k of row i is optional; its default value in *value. */
int gj_intrinsic_param_default(GjIntrinsic i, int k, long long *value);
/* Whether i is a run-time value, not a callable or namespace: a constant
   (math.pi) or a value row (laneid). */
int gj_intrinsic_is_value(GjIntrinsic i);

/* The math row of intrinsic i (and its module in *ns), or -1. */
int gj_intrinsic_math_fn(GjIntrinsic i, GjMathNs *ns);
GjMathKind gj_math_kind(GjMathFn f);
int gj_math_nargs(GjMathFn f);
/* The libdevice base name or "llvm.*" intrinsic computing f, or NULL. */
const char *gj_math_impl(GjMathFn f);
/* Whether f has a complex version (cmath has it; numpy's applies it to complex). */
int gj_math_has_complex(GjMathFn f);
/* The value of constant intrinsic i (math.pi, numpy.inf, ...); 0 if i is none. */
int gj_intrinsic_constant(GjIntrinsic i, double *value);
/* The dtype name ("float32") of a NumPy scalar-type intrinsic, or NULL. */
const char *gj_intrinsic_np_type(GjIntrinsic i);

#endif
