/*
 * intrinsics.h - the compile-time objects a kernel can name: builtins
 * (range, abs, ...), gpujit's kernel API (grid, threadIdx, ...) and math /
 * numpy functions.  One X-macro table gives each its enum member, the
 * namespace it lives in and its Python name; intrinsics.c looks names up in
 * it.  Typing (typeinfer.c) and lowering (lower.c) switch over GjIntrinsic.
 *
 * Namespaces: "builtins", "gpujit", "math", "numpy", "cmath".  An attribute
 * of a dim3 object (threadIdx.x) is GJ_INTR_DIM3_X/Y/Z in namespace "dim3";
 * a method of a number (z.conjugate) is in namespace "method".  The math
 * functions and constants that math, numpy and cmath share come from one
 * more table (GJ_MATH_FUNCS, GJ_MATH_CONSTS), one row per function, which
 * also says how each is typed and which libdevice function computes it.
 */
#ifndef GJ_INTRINSICS_H
#define GJ_INTRINSICS_H

#define GJ_INTRINSICS(X)                                                          \
    X(RANGE,       "builtins", "range",       "range(stop) / range(start, stop[, step])") \
    X(ABS,         "builtins", "abs",         "absolute value")                  \
    X(MIN,         "builtins", "min",         "smallest of 2+ scalars")           \
    X(MAX,         "builtins", "max",         "largest of 2+ scalars")            \
    X(LEN,         "builtins", "len",         "length of the first axis")         \
    X(INT,         "builtins", "int",         "convert to int64 (truncates)")     \
    X(FLOAT,       "builtins", "float",       "convert to float64")               \
    X(BOOL,        "builtins", "bool",        "truth value")                      \
    X(GRID,        "gpujit",   "grid",        "absolute thread index, grid(1..3)") \
    X(GRIDSIZE,    "gpujit",   "gridsize",    "threads in the grid, gridsize(1..3)") \
    X(THREADIDX,   "gpujit",   "threadIdx",   "thread index within the block")    \
    X(BLOCKIDX,    "gpujit",   "blockIdx",    "block index within the grid")      \
    X(BLOCKDIM,    "gpujit",   "blockDim",    "threads per block")                \
    X(GRIDDIM,     "gpujit",   "gridDim",     "blocks per grid")                  \
    X(SYNCTHREADS, "gpujit",   "syncthreads", "block-wide barrier")               \
    X(DIM3_X,      "dim3",     "x",           "x component")                      \
    X(DIM3_Y,      "dim3",     "y",           "y component")                      \
    X(DIM3_Z,      "dim3",     "z",           "z component")                      \
    X(ROUND,       "builtins", "round",       "round half to even: int64, or a float with ndigits") \
    X(POW,         "builtins", "pow",         "pow(a, b) is a ** b")             \
    X(DIVMOD,      "builtins", "divmod",      "(a // b, a % b)")                 \
    X(COMPLEX,     "builtins", "complex",     "complex(re[, im]): complex128")   \
    X(NP_ABS,      "numpy",    "abs",         "absolute value, dtype kept")       \
    X(NP_ABSOLUTE, "numpy",    "absolute",    "absolute value, dtype kept")       \
    X(NP_REAL,     "numpy",    "real",        "real part")                        \
    X(NP_IMAG,     "numpy",    "imag",        "imaginary part")                   \
    X(NP_CONJ,     "numpy",    "conj",        "complex conjugate")                \
    X(NP_CONJUGATE,"numpy",    "conjugate",   "complex conjugate")                \
    X(CMATH_PHASE, "cmath",    "phase",       "argument of a complex number")     \
    X(CMATH_POLAR, "cmath",    "polar",       "(abs(z), phase(z))")               \
    X(CMATH_RECT,  "cmath",    "rect",        "r * (cos(phi) + sin(phi) j)")      \
    X(METHOD_CONJUGATE, "method", "conjugate", "x.conjugate() of a number")       \
    NP_SCALAR_TYPES(X)

/* NumPy's scalar types called as constructors: np.float32(x) converts x as
   NumPy's astype does (floats truncate toward zero, integers wrap). */
#define NP_SCALAR_TYPE(X, id, name) X(NPTYPE_##id, "numpy", name, "numpy." name "(x)")
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
    NP_SCALAR_TYPE(X, COMPLEX64, "complex64") NP_SCALAR_TYPE(X, COMPLEX128, "complex128")

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
#define X(name, ns, pyname, doc) GJ_INTR_##name,
    GJ_INTRINSICS(X)
#undef X
#define X(id, m, np, cm, ...) GJ_INTR_MATH_##id, GJ_INTR_NP_##id, GJ_INTR_CMATH_##id,
    GJ_MATH_FUNCS(X)
    GJ_MATH_CONSTS(X)
#undef X
    GJ_NINTRINSICS
} GjIntrinsic;

/* Case labels for every table-made intrinsic, for exhaustive switches:
   `GJ_INTR_TABLE_CASES: return by_table(...)`. */
#define GJ_INTR_CASE3(id, ...) case GJ_INTR_MATH_##id: case GJ_INTR_NP_##id: case GJ_INTR_CMATH_##id:
#define GJ_INTR_CASE1(id, ...) case GJ_INTR_##id:
#define GJ_INTR_MATH_CASES GJ_MATH_FUNCS(GJ_INTR_CASE3)
#define GJ_INTR_CONST_CASES GJ_MATH_CONSTS(GJ_INTR_CASE3)
#define GJ_INTR_NPTYPE_CASES NP_SCALAR_TYPES(GJ_INTR_CASE1)

/* The intrinsic called `name` in namespace `ns`, or -1. */
int gj_intrinsic_lookup(const char *ns, const char *name);
const char *gj_intrinsic_name(GjIntrinsic i);   /* "gpujit.grid" style */

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
