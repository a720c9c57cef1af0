/*
 * arena.c - the compilation context: its arena, its diagnostics and the
 * GPUJIT_DUMP stage selector (gj.h).
 *
 * The arena is a list of chunks, newest first; allocations are bumped out of
 * the head chunk, zeroed and 16-byte aligned, and a request larger than a
 * chunk gets a chunk of its own.  Nothing is freed before gj_arena_free(),
 * which releases every chunk at once: the whole compilation dies together.
 *
 * Diagnostics follow "the first error wins": gj_error() records a GjDiag
 * only when none is recorded yet, so a failure deep in a stage is not
 * overwritten by the knock-on errors of the stages that unwind it; callers
 * on the way out add "during: ..." context with gj_note().
 */
#include "gj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "codeview.h"
#include "types.h"

struct GjArenaChunk {
    GjArenaChunk *next;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

enum { CHUNK_SIZE = 64 * 1024, ALIGN = 16 };

void gj_arena_init(GjArena *a) {
    a->head = NULL;
    a->used = 0;
    a->cap = 0;
}

void gj_arena_free(GjArena *a) {
    GjArenaChunk *k = a->head;
    while (k) {
        GjArenaChunk *next = k->next;
        free(k);
        k = next;
    }
    gj_arena_init(a);
}

static GjArenaChunk *chunk_new(size_t cap) {
    GjArenaChunk *k = malloc(sizeof *k + cap);
    if (k)
        k->cap = cap;
    return k;
}

void *gj_arena_alloc(GjArena *a, size_t n) {
    size_t size = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (size == 0)
        size = ALIGN;
    if (a->head && a->cap - a->used >= size) {
        void *p = a->head->data + a->used;
        a->used += size;
        memset(p, 0, size);
        return p;
    }
    if (size > CHUNK_SIZE / 4) {
        /* A big block gets its own chunk behind the head, so the head's
           free space stays usable. */
        GjArenaChunk *k = chunk_new(size);
        if (!k)
            return NULL;
        if (a->head) {
            k->next = a->head->next;
            a->head->next = k;
        } else {
            k->next = NULL;
            a->head = k;
            a->used = size;
            a->cap = size;
        }
        memset(k->data, 0, size);
        return k->data;
    }
    GjArenaChunk *k = chunk_new(CHUNK_SIZE);
    if (!k)
        return NULL;
    k->next = a->head;
    a->head = k;
    a->used = size;
    a->cap = CHUNK_SIZE;
    memset(k->data, 0, size);
    return k->data;
}

char *gj_arena_strdup(GjArena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = gj_arena_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *gj_arena_vprintf(GjArena *a, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return gj_arena_strdup(a, fmt);
    char *p = gj_arena_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *gj_arena_printf(GjArena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = gj_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void *gj_arena_grow(GjArena *a, void *items, int32_t *cap, int32_t need, size_t elem_size) {
    if (need <= *cap)
        return items;
    int32_t ncap = *cap > 0 ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    void *p = gj_arena_alloc(a, (size_t)ncap * elem_size);
    if (!p)
        return NULL;
    if (items && *cap > 0)
        memcpy(p, items, (size_t)*cap * elem_size);
    *cap = ncap;
    return p;
}

/* ---- diagnostics ------------------------------------------------------ */

static const char *const diag_text[] = {
#define X(name, text, pyexc) text,
    GJ_DIAG_KINDS(X)
#undef X
};

static const char *const diag_pyexc[] = {
#define X(name, text, pyexc) pyexc,
    GJ_DIAG_KINDS(X)
#undef X
};

const char *gj_diag_kind_text(GjDiagKind k) {
    return (unsigned)k < GJ_DIAG_NKINDS ? diag_text[k] : "error";
}

const char *gj_diag_kind_pyexc(GjDiagKind k) {
    return (unsigned)k < GJ_DIAG_NKINDS ? diag_pyexc[k] : "InternalError";
}

/* Out of memory while reporting, the message falls back to a static one;
   the caller gets GJ_ERR either way. */
GjStatus gj_error(GjCtx *c, GjDiagKind kind, GjLoc loc, const char *fmt, ...) {
    if (c->diag)
        return GJ_ERR;
    GjDiag *d = GJ_NEW(&c->arena, GjDiag);
    if (!d)
        return GJ_ERR;
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&c->arena, fmt, ap);
    va_end(ap);
    d->kind = kind;
    d->loc = loc;
    d->code = c->code;
    d->message = msg ? msg : "out of memory while reporting an error";
    c->diag = d;
    return GJ_ERR;
}

static const char *code_file(const GjCodeView *code) {
    return code && code->filename ? code->filename : "";
}

/* A device function is built once per specialisation (each from its own
   copy of the code view), so the same warning can come several times: keep
   one per file, location and text. */
void gj_warn(GjCtx *c, GjLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = gj_arena_vprintf(&c->arena, fmt, ap);
    va_end(ap);
    GjDiag **tail = &c->warnings;
    for (; *tail; tail = &(*tail)->next) {
        const GjDiag *w = *tail;
        if (w->loc.line == loc.line && w->loc.col == loc.col && msg &&
            strcmp(w->message, msg) == 0 && strcmp(code_file(w->code), code_file(c->code)) == 0)
            return;
    }
    GjDiag *d = msg ? GJ_NEW(&c->arena, GjDiag) : NULL;
    if (!d)
        return;   /* out of memory: a warning is not worth failing for */
    *d = (GjDiag){.kind = GJ_DIAG_WARNING, .loc = loc, .code = c->code, .message = msg};
    *tail = d;
}

void gj_note(GjCtx *c, const char *fmt, ...) {
    GjDiag *d = c->diag;
    if (!d || d->nnotes >= (int)(sizeof d->notes / sizeof d->notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    char *note = gj_arena_vprintf(&c->arena, fmt, ap);
    va_end(ap);
    if (note)
        d->notes[d->nnotes++] = note;
}

/* ---- context ---------------------------------------------------------- */

void gj_ctx_init(GjCtx *c) {
    memset(c, 0, sizeof *c);
    gj_arena_init(&c->arena);
    gj_ty_init(c);
    c->dump = gj_dump_parse(getenv("GPUJIT_DUMP"));   /* stages to print to stderr */
    /* The IR verifier: on in debug builds, where a wrong pass should stop at
       once; in others only when asked, as it costs a walk of the IR per pass. */
    const char *verify = getenv("GPUJIT_VERIFY_IR");
#ifdef NDEBUG
    c->verify_ir = verify && strcmp(verify, "1") == 0;
#else
    c->verify_ir = !verify || strcmp(verify, "0") != 0;
#endif
    if (c->dump & GJ_DUMP_TIMING)
        gj_timing(c, NULL);
}

static double monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void gj_timing(GjCtx *c, const char *stage) {
    if (!(c->dump & GJ_DUMP_TIMING))
        return;
    double now = monotonic_ms();
    if (stage)
        fprintf(stderr, "timing: %s: %s %.3f ms\n", c->funcname ? c->funcname : "?", stage,
                now - c->mark_ms);
    c->mark_ms = now;
}

void gj_ctx_free(GjCtx *c) {
    gj_arena_free(&c->arena);
    c->diag = NULL;
    c->warnings = NULL;
    c->types = NULL;
}

/* ---- GPUJIT_DUMP ------------------------------------------------------ */

static const struct {
    const char *name;
    int bit;
} dump_stages[] = {
    {"bytecode", GJ_DUMP_BYTECODE},
    {"ir", GJ_DUMP_IR},
    {"types", GJ_DUMP_TYPES},
    {"llvm", GJ_DUMP_LLVM},
    {"ptx", GJ_DUMP_PTX},
    {"timing", GJ_DUMP_TIMING},
    {"asm", GJ_DUMP_ASM},
    {"all",
     GJ_DUMP_BYTECODE | GJ_DUMP_IR | GJ_DUMP_TYPES | GJ_DUMP_LLVM | GJ_DUMP_PTX | GJ_DUMP_ASM},
};

/* "ir,types" or "ir types"; unknown names are ignored, case does not matter. */
int gj_dump_parse(const char *spec) {
    int bits = 0;
    if (!spec)
        return 0;
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ", ;:");
        for (size_t i = 0; i < sizeof dump_stages / sizeof dump_stages[0]; i++) {
            if (n == strlen(dump_stages[i].name) && strncasecmp(p, dump_stages[i].name, n) == 0)
                bits |= dump_stages[i].bit;
        }
        p += n;
        if (*p)
            p++;
    }
    return bits;
}
