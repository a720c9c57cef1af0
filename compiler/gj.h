/*
 * gj.h - what every stage of the compiler shares: the arena that owns a
 * compilation's memory, source locations, and diagnostics.
 *
 * A compilation (GjCtx) owns one arena; every IR node, type, constraint and
 * diagnostic of that compilation is allocated from it and freed with it.
 * Errors are data: a stage that fails records one GjDiag in the context
 * (the first error wins) and returns GJ_ERR; the boundary (pymodule/)
 * renders it once and maps its kind to a Python exception.
 *
 * No Python.h and no cuda.h here or anywhere under compiler/.
 */
#ifndef GJ_H
#define GJ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef enum GjStatus { GJ_OK = 0, GJ_ERR = -1 } GjStatus;

/* ---- arena ------------------------------------------------------------ */

typedef struct GjArenaChunk GjArenaChunk;
typedef struct GjArena {
    GjArenaChunk *head;   /* newest chunk first */
    size_t used;          /* bytes used in head */
    size_t cap;           /* bytes available in head */
} GjArena;

void gj_arena_init(GjArena *a);
void gj_arena_free(GjArena *a);              /* frees everything ever allocated */
void *gj_arena_alloc(GjArena *a, size_t n);  /* zeroed, 16-byte aligned; NULL only on OOM */
char *gj_arena_strdup(GjArena *a, const char *s);
char *gj_arena_printf(GjArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *gj_arena_vprintf(GjArena *a, const char *fmt, va_list ap);
/* Grows an arena-owned vector: *items has *len of elem_size, capacity *cap. */
void *gj_arena_grow(GjArena *a, void *items, int32_t *cap, int32_t need, size_t elem_size);

#define GJ_NEW(arena, T)      ((T *)gj_arena_alloc((arena), sizeof(T)))
#define GJ_NEW_N(arena, T, n) ((T *)gj_arena_alloc((arena), sizeof(T) * (size_t)(n)))

/* ---- locations -------------------------------------------------------- */

/* A span of Python source: 1-based line, 0-based UTF-8 columns (co_positions). */
typedef struct GjLoc {
    int32_t line;      /* 0 = unknown */
    int32_t col;       /* -1 = unknown */
    int32_t end_col;   /* -1 = unknown; same line as `line` when known */
} GjLoc;

/* ---- diagnostics ------------------------------------------------------ */

/* clang-format off */
#define GJ_DIAG_KINDS(X)                                                     \
    X(TYPING,      "typing error",      "TypingError")                        \
    X(UNSUPPORTED, "unsupported",       "UnsupportedError")                   \
    X(KERNEL_RETURN, "unsupported",     "KernelReturnError")                  \
    X(LOWERING,    "lowering error",    "LoweringError")                      \
    X(INTERNAL,    "internal error",    "InternalError")                      \
    X(WARNING,     "warning",           "GpujitWarning")   /* not an error: GjCtx.warnings */
/* clang-format on */

typedef enum GjDiagKind {
/* clang-format off */
#define X(name, text, pyexc) GJ_DIAG_##name,
    GJ_DIAG_KINDS(X)
#undef X
    GJ_DIAG_NKINDS
/* clang-format on */
} GjDiagKind;

struct GjCodeView;

typedef struct GjDiag {
    GjDiagKind kind;
    GjLoc loc;
    const struct GjCodeView *code;   /* the function loc is in (c->code when recorded) */
    const char *message;       /* arena-owned, no trailing newline */
    const char *notes[8];      /* "during: ..." lines, innermost first */
    int nnotes;
    struct GjDiag *next;       /* the next warning (GjCtx.warnings) */
} GjDiag;

const char *gj_diag_kind_text(GjDiagKind k);    /* "typing error" */
const char *gj_diag_kind_pyexc(GjDiagKind k);   /* "TypingError" */

/* ---- compilation context ---------------------------------------------- */

typedef struct GjTypes GjTypes;   /* interned composite types, see types.h */

typedef struct GjCtx {
    GjArena arena;
    GjDiag *diag;          /* first error, or NULL */
    GjDiag *warnings;      /* WARNING diagnostics, oldest first; a compile that
                              succeeds returns them too (pymodule warns) */
    GjTypes *types;        /* owned by the arena */
    const char *filename;  /* for rendering diagnostics */
    const char *funcname;
    int dump;              /* GJ_DUMP_* bit set: stages to print to stderr */
    int verify_ir;         /* run the IR verifier after each pass (irverify.c) */
    double mark_ms;        /* GJ_DUMP_TIMING: when the last stage ended (gj_timing) */
    const struct GjCodeView *code;   /* function being built/typed/lowered (kernel
                                        or device function), for diagnostics */
    struct GjSpec *specs;  /* device-function specialisations (devfunc.c) */
    int llvm_fatal;        /* LLVM stopped with a fatal error (llvmguard.h): this
                              compile's LLVM objects are leaked, never freed */
} GjCtx;

/* Stages that GPUJIT_DUMP can name ("bytecode,ir,types,llvm,ptx,asm" or "all"). */
enum {
    GJ_DUMP_BYTECODE = 1 << 0,
    GJ_DUMP_IR = 1 << 1,
    GJ_DUMP_TYPES = 1 << 2,
    GJ_DUMP_LLVM = 1 << 3,
    GJ_DUMP_PTX = 1 << 4,
    GJ_DUMP_TIMING = 1 << 5,   /* milliseconds per compile stage */
    GJ_DUMP_ASM = 1 << 6,   /* the CPU target's host assembly */
};
int gj_dump_parse(const char *spec);   /* NULL or "" -> 0 */
/* With GJ_DUMP_TIMING, prints "timing: <function>: <stage> <ms>" for the
   time since the previous call (or gj_ctx_init) to stderr. */
void gj_timing(GjCtx *c, const char *stage);

void gj_ctx_init(GjCtx *c);
void gj_ctx_free(GjCtx *c);

/* Records an error at loc unless one is already recorded; returns GJ_ERR. */
GjStatus gj_error(GjCtx *c, GjDiagKind kind, GjLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records a WARNING at loc (once per function, location and text); the
   compile goes on. */
void gj_warn(GjCtx *c, GjLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds a "during: ..." note to the recorded error (no-op without one). */
void gj_note(GjCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
