/*
 * intrinsics.h - the compile-time objects a kernel can name: builtins
 * (range, abs, ...), gpujit's kernel API (grid, threadIdx, ...) and math /
 * numpy functions.  One X-macro table gives each its enum member, the
 * namespace it lives in and its Python name; intrinsics.c looks names up in
 * it.  Typing (typeinfer.c) and lowering (lower.c) switch over GjIntrinsic.
 *
 * Namespaces: "builtins", "gpujit", "math", "numpy".  An attribute of a
 * dim3 object (threadIdx.x) is GJ_INTR_DIM3_X/Y/Z in namespace "dim3".
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
    X(MATH_SQRT,   "math",     "sqrt",        "correctly rounded square root")    \
    X(MATH_FABS,   "math",     "fabs",        "absolute value as float")          \
    X(MATH_FLOOR,  "math",     "floor",       "floor, as int64")                  \
    X(MATH_CEIL,   "math",     "ceil",        "ceiling, as int64")                \
    X(MATH_TRUNC,  "math",     "trunc",       "truncation, as int64")             \
    X(NP_SQRT,     "numpy",    "sqrt",        "square root, dtype kept")          \
    X(NP_ABS,      "numpy",    "abs",         "absolute value, dtype kept")       \
    X(NP_ABSOLUTE, "numpy",    "absolute",    "absolute value, dtype kept")

typedef enum GjIntrinsic {
#define X(name, ns, pyname, doc) GJ_INTR_##name,
    GJ_INTRINSICS(X)
#undef X
    GJ_NINTRINSICS
} GjIntrinsic;

/* The intrinsic called `name` in namespace `ns`, or -1. */
int gj_intrinsic_lookup(const char *ns, const char *name);
const char *gj_intrinsic_name(GjIntrinsic i);   /* "gpujit.grid" style */

#endif
