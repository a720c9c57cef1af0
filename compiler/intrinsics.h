/*
 * intrinsics.h - the compile-time objects a kernel can name: builtins
 * (range, abs, ...), gpujit's kernel API (grid, threadIdx, ...) and math /
 * numpy functions.  Each is one row of one table: its namespace and Python
 * name, its parameter names (keyword calls map to positions through them),
 * its arity, its typing rule (GjTypeRule, applied by typeinfer.c) and its
 * lowering function (a family file: lower_thread.c, lower_math.c, ...).
 * The rows are grouped by family, one X-macro per family below; the enum
 * GjIntrinsic, the lookup in intrinsics.c and the names gpujit/__init__.py
 * exports are all generated from them, so adding an intrinsic is one row
 * plus, at most, one lowering function (docs/internals.md, "Adding an
 * intrinsic").
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
struct GjLower;
struct GjIntrCall;

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
    GJ_NSREGS
} GjSreg;

/* How a call of an intrinsic is typed (typeinfer.c, call_type).  The arity
   (the row's min/max) is checked before the rule runs. */
typedef enum GjTypeRule {
    GJ_TR_VALUE,        /* not callable: a value (threadIdx, math.pi) or namespace */
    GJ_TR_FIXED,        /* scalar arguments -> the row's result type (syncthreads: None) */
    GJ_TR_ARG_TYPE,     /* -> the concrete type of argument `sub` ((mask, value, int) -> value) */
    GJ_TR_ARRAY_ELEM,   /* (array, index, value...) -> element type of the array */
    GJ_TR_RANGE,        /* integers -> range iterator of their promotion */
    GJ_TR_ABS,          /* scalar -> its magnitude's type (builtins keep literals weak) */
    GJ_TR_NP_ABS,       /* scalar -> its magnitude's concrete type */
    GJ_TR_MINMAX,       /* 2+ real scalars -> their promotion */
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

/* Lowers one call; `call` has the arguments (already in positional order),
   their types and the result type.  Returns the value, or NULL with a
   LOWERING diagnostic.  LLVMValueRef without including LLVM here. */
typedef struct LLVMOpaqueValue *(*GjIntrLowerFn)(struct GjLower *L, const struct GjIntrCall *call);

/* One row, as intrinsics.c stores it. */
typedef struct GjIntrinsicRow {
    const char *ns;           /* "builtins", "gpujit", "gpujit.atomic", "math", ... */
    const char *name;         /* "": no such function in this namespace */
    const char *qualname;     /* "gpujit.grid", "math.sqrt"; builtins bare: "range" */
    const char *params;       /* parameter names, "shape, dtype"; "" when it takes none
                                 by keyword */
    int min_args, max_args;   /* max -1: any number */
    GjTypeRule rule;
    const struct GjType *result;   /* FIXED, CONVERT: the result type; ARG_TYPE: NULL */
    int sub;                       /* what the rule or lowering function reads: ARG_TYPE:
                                      the argument giving the type; a dim3 object: its
                                      GjSreg; a family function: which member it is
                                      (gridsize: 1) */
    GjIntrLowerFn lower;           /* NULL for values */
    unsigned flags;                /* GJ_IF_* */
    const char *doc;               /* first line of the Python docstring */
} GjIntrinsicRow;

/* The family row lists.  A row is
     X(id, ns, name, params, min, max, rule, result, sub, lower, flags, doc)
   `lower` names a GjIntrLowerFn declared in lower_intr.h; `result` is a
   GjType singleton (types.h) or NULL. */

/* builtins and the numeric helpers of numpy/cmath (lower_math.c) */
#define GJ_INTR_BUILTIN_ROWS(X)                                                                \
    X(RANGE,  "builtins", "range",  "", 1, 3, GJ_TR_RANGE, NULL, 0, gj_lower_range, 0,          \
      "range(stop) / range(start, stop[, step])")                                            \
    X(ABS,    "builtins", "abs",    "", 1, 1, GJ_TR_ABS, NULL, 0, gj_lower_abs_call, 0, "absolute value") \
    X(MIN,    "builtins", "min",    "", 2, -1, GJ_TR_MINMAX, NULL, 0, gj_lower_minmax_call, 0,     \
      "smallest of 2+ scalars")                                                              \
    X(MAX,    "builtins", "max",    "", 2, -1, GJ_TR_MINMAX, NULL, 0, gj_lower_minmax_call, 0,     \
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

/* thread indexing and the block barrier (lower_thread.c) */
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
    X(DIM3_X, "dim3", "x", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "x component")            \
    X(DIM3_Y, "dim3", "y", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "y component")            \
    X(DIM3_Z, "dim3", "z", "", 0, 0, GJ_TR_VALUE, NULL, 0, NULL, 0, "z component")

/* memory spaces: gpujit.shared.array, gpujit.local.array, gpujit.const.array_like
   (lower_array.c) */
#define GJ_INTR_MEMORY_ROWS(X)

/* atomics: gpujit.atomic.* (lower_atomic.c) */
#define GJ_INTR_ATOMIC_ROWS(X)

/* warp primitives, fences, bit operations (lower_warp.c) */
#define GJ_INTR_WARP_ROWS(X)

/* print (lower_print.c); 16 arguments at most, as lower.c passes calls */
#define GJ_INTR_PRINT_ROWS(X)                                                                  \
    X(PRINT, "builtins", "print", "", 0, 16, GJ_TR_PRINT, &gj_ty_none, 0, gj_lower_print,       \
      GJ_IF_PRINTS, "print(*values): one line per thread, values separated by spaces")

#define GJ_INTRINSICS(X)                                                                       \
    GJ_INTR_BUILTIN_ROWS(X) GJ_INTR_THREAD_ROWS(X) GJ_INTR_MEMORY_ROWS(X)                      \
    GJ_INTR_ATOMIC_ROWS(X) GJ_INTR_WARP_ROWS(X) GJ_INTR_PRINT_ROWS(X) NP_SCALAR_TYPES(X)

/* NumPy's scalar types called as constructors: np.float32(x) converts x as
   NumPy's astype does (floats truncate toward zero, integers wrap). */
#define NP_SCALAR_TYPE(X, id, name)                                                        \
    X(NPTYPE_##id, "numpy", name, "", 1, 1, GJ_TR_NPTYPE, NULL, 0, gj_lower_convert, 0,       \
      "numpy." name "(x)")
/* np.complex64(re, im) as complex(re, im), in that dtype */
#define NP_COMPLEX_TYPE(X, id, name)                                                       \
    X(NPTYPE_##id, "numpy", name, "", 1, 2, GJ_TR_NPTYPE, NULL, 0, gj_lower_complex_ctor, 0,  \
      "numpy." name "(x) or numpy." name "(re, im)")
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

/* Functions and constants that math, numpy and cmath share, one row each:
   id, the name in math, numpy and cmath ("": not there), the number of
   arguments, how it is typed and lowered (GjMathKind), and the libdevice
   function (base name, no __nv_ and no f) or LLVM intrinsic that computes
   it.  Each row gives three intrinsics, GJ_INTR_MATH_<id>, GJ_INTR_NP_<id>
   and GJ_INTR_CMATH_<id>; an empty name is never looked up. */
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
    X(ASIN,     "asin",     "arcsin",   "",      1, GJ_MK_FLOAT,  "asin")                   \
    X(ACOS,     "acos",     "arccos",   "",      1, GJ_MK_FLOAT,  "acos")                   \
    X(ATAN,     "atan",     "arctan",   "",      1, GJ_MK_FLOAT,  "atan")                   \
    X(SINH,     "sinh",     "sinh",     "sinh",  1, GJ_MK_FLOAT,  "sinh")                   \
    X(COSH,     "cosh",     "cosh",     "cosh",  1, GJ_MK_FLOAT,  "cosh")                   \
    X(TANH,     "tanh",     "tanh",     "tanh",  1, GJ_MK_FLOAT,  "tanh")                   \
    X(ASINH,    "asinh",    "arcsinh",  "",      1, GJ_MK_FLOAT,  "asinh")                  \
    X(ACOSH,    "acosh",    "arccosh",  "",      1, GJ_MK_FLOAT,  "acosh")                  \
    X(ATANH,    "atanh",    "arctanh",  "",      1, GJ_MK_FLOAT,  "atanh")                  \
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

/* Constants of math, numpy and cmath: id, names as above, value. */
#define GJ_MATH_CONSTS(X)                                                      \
    X(PI,  "pi",  "pi",  "pi",  3.141592653589793)                             \
    X(E,   "e",   "e",   "e",   2.718281828459045)                             \
    X(TAU, "tau", "",    "tau", 6.283185307179586)                             \
    X(INF, "inf", "inf", "inf", (double)INFINITY)                              \
    X(NAN, "nan", "nan", "nan", (double)NAN)

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
#define X(id, m, np, cm, nargs, kind, impl) GJ_MF_##id,
    GJ_MATH_FUNCS(X)
#undef X
    GJ_NMATHFNS
} GjMathFn;

typedef enum GjMathConst {
#define X(id, m, np, cm, value) GJ_MC_##id,
    GJ_MATH_CONSTS(X)
#undef X
    GJ_NMATHCONSTS
} GjMathConst;

/* The module a math row's intrinsic belongs to. */
typedef enum GjMathNs { GJ_NS_MATH, GJ_NS_NUMPY, GJ_NS_CMATH } GjMathNs;

typedef enum GjIntrinsic {
#define X(name, ...) GJ_INTR_##name,
    GJ_INTRINSICS(X)
#undef X
#define X(id, m, np, cm, ...) GJ_INTR_MATH_##id, GJ_INTR_NP_##id, GJ_INTR_CMATH_##id,
    GJ_MATH_FUNCS(X)
    GJ_MATH_CONSTS(X)
#undef X
    GJ_NINTRINSICS
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
