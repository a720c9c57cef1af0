/*
 * codeview.h - GjCodeView, a plain-C copy of a Python code object.
 *
 * pymodule/codeview.c fills it from dis.get_instructions() (opname, arg,
 * argval, offset, positions, is_jump_target) plus co_varnames, the argument
 * count and every global the code reads, frozen.  Nothing here depends on
 * the Python version: instructions keep dis's opname strings, and compiler/bytecode.c
 * (the normaliser, the one file that knows versions) turns them into GjBcOp.
 * Everything is owned by the compilation's arena.
 */
#ifndef GJ_CODEVIEW_H
#define GJ_CODEVIEW_H

#include "gj.h"

struct GjType;

/* A compile-time constant: LOAD_CONST's argval, or a frozen global. */
typedef enum GjConstKind {
    GJ_CONST_NONE,     /* Python None */
    GJ_CONST_BOOL,     /* i is 0 or 1 */
    GJ_CONST_INT,      /* i; Python ints outside int64 are GJ_CONST_OTHER */
    GJ_CONST_FLOAT,    /* f */
    GJ_CONST_COMPLEX,  /* f + im j */
    GJ_CONST_STR,      /* s (names for LOAD_FAST etc., also str constants) */
    GJ_CONST_TUPLE,    /* items[0..n) */
    GJ_CONST_SLICE,    /* items[0..3): start, stop, step (None where omitted); s = "slice".
                          3.14 folds a[1:n:2]'s constant slice; bytecode.c rebuilds it */
    GJ_CONST_OTHER,    /* anything else; s = its Python type name */
} GjConstKind;

typedef struct GjConst GjConst;
struct GjConst {
    GjConstKind kind;
    int64_t i;
    double f;
    double im;         /* COMPLEX: the imaginary part (f is the real part) */
    const char *s;     /* STR, OTHER: see above.  BOOL/INT/FLOAT/COMPLEX: the NumPy dtype
                          name ("float32") of a NumPy scalar, a strong type;
                          NULL for a Python literal, which is weak (NEP 50) */
    GjConst *items;
    int32_t n;
};

/* One dis.Instruction. */
typedef struct GjInstr {
    const char *opname;   /* dis opname, e.g. "BINARY_OP" */
    int32_t arg;          /* raw oparg, -1 for None */
    GjConst argval;       /* dis argval: jump targets are GJ_CONST_INT offsets;
                             COMPARE_OP gives the operator as a string; a pair
                             of names (LOAD_FAST_LOAD_FAST) is a 2-tuple */
    int32_t offset;       /* byte offset */
    GjLoc loc;
    int is_jump_target;
} GjInstr;

/* What a global name (LOAD_GLOBAL) is bound to at compile time. */
typedef enum GjGlobalKind {
    GJ_GLOBAL_MISSING,    /* not in globals nor builtins */
    GJ_GLOBAL_MODULE,     /* name = "gpujit", "math", "numpy", "cmath", "operator" */
    GJ_GLOBAL_BUILTIN,    /* name = builtin's name: "range", "abs", ... */
    GJ_GLOBAL_INTRINSIC,  /* name = gpujit object's intrinsic name ("grid", "threadIdx") */
    GJ_GLOBAL_CONST,      /* value = frozen number/bool/tuple */
    GJ_GLOBAL_OTHER,      /* bound to something gpujit cannot use; name = type name */
    GJ_GLOBAL_FUNCTION,   /* a @gpujit.jit function: callee; name = its __name__ */
    GJ_GLOBAL_ARRAY,      /* a NumPy array, frozen into constant memory: array */
    GJ_GLOBAL_EXCEPTION,  /* an exception class defined at module level (a kernel can
                             raise it); name = "module:qualname", "builtins:ValueError" */
} GjGlobalKind;

/* The OTHER name of an exception class defined inside a function, which the
   host could not find by name to raise it. */
#define GJ_LOCAL_EXCEPTION_CLASS "exception class defined inside a function"

/* A module-level NumPy array frozen at compile time (GJ_GLOBAL_ARRAY): a
   C-contiguous copy of its bytes, placed in constant memory by lowering. */
typedef struct GjConstArray {
    const char *dtype;        /* NumPy dtype name, "float32" */
    int32_t ndim;             /* >= 1 */
    const int64_t *shape;     /* [ndim] */
    const int64_t *strides;   /* [ndim], bytes, C order */
    const void *data;         /* nbytes bytes, arena-owned */
    size_t nbytes;
} GjConstArray;

/* A @gpujit.jit function that a kernel calls (GJ_GLOBAL_FUNCTION). */
typedef struct GjCallee {
    const struct GjCodeView *code;   /* one view per function and compile: a
                                        recursive call points back at a caller's */
    int inline_always;               /* inline=True */
    int device;                      /* device=True; else a plain @jit function */
} GjCallee;

typedef struct GjGlobal {
    const char *key;      /* the global's name in the function ("np") */
    GjGlobalKind kind;
    const char *name;     /* what it is bound to, per kind ("numpy") */
    GjConst value;
    const GjCallee *callee;       /* FUNCTION */
    const GjConstArray *array;    /* ARRAY */
} GjGlobal;

/* Every field is in the persistent cache's key (grep tag GJ_CACHE_KEY,
   compiler/cache.c), as is every field of the structs above: a new one
   must be keyed there.  The source text is not in the view: only a
   diagnostic shows it, and the caller that renders one reads the line
   then (gj_diag_render_one). */
typedef struct GjCodeView {
    int py_major, py_minor;   /* e.g. 3, 12 */
    const char *name;         /* co_name */
    const char *qualname;
    const char *filename;     /* co_filename */
    int32_t firstlineno;

    int32_t argcount;         /* positional parameters; no *args, **kwargs, kw-only */
    int32_t kwonlyargcount;   /* co_kwonlyargcount; bytecode.c rejects > 0 */
    int32_t flags;            /* co_flags; bytecode.c rejects *args, **kwargs, generators */
    int32_t nvarnames;
    const char **varnames;    /* co_varnames: parameters first */
    int32_t ndefaults;        /* len(__defaults__): the last ndefaults parameters have one */
    const GjConst *defaults;  /* [ndefaults], frozen at compile time like globals; a
                                 value gpujit cannot use is OTHER (build.c reports it
                                 when a call needs it) */

    int32_t ninstrs;
    GjInstr *instrs;          /* from dis; pymodule reads them only when compiling */
    /* The code object as the persistent cache's key writes it (every field,
       constants included: pymodule/codeview.c), for the instructions, which
       derive from it and the Python version; NULL when a constant is of a
       kind it does not write (such a view is not cached). */
    const unsigned char *code_bytes;
    size_t code_nbytes;

    const struct GjType **argtypes;   /* [argcount], set by the caller */
    const struct GjType *rettype;     /* a device function's declared return
                                         type (signature), or NULL: inferred */
    const char *signature;            /* a device function's declared signature,
                                         "int32(int32, int32)", or NULL: devfunc.c
                                         specialises it for these types only */

    /* Every name LOAD_GLOBAL reads, resolved (frozen) by pymodule before the
       compile starts, so compiling needs no Python callbacks and no GIL. */
    int32_t nglobals;
    GjGlobal *globals;
} GjCodeView;

/* The binding of global `name`, or NULL when pymodule did not resolve it. */
const GjGlobal *gj_codeview_global(const GjCodeView *cv, const char *name);

#endif
