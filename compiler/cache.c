/*
 * cache.c - the bytes of a persistent-cache entry (cache.h): the key
 * material of a compile and the packed result.
 *
 * The key is complete by construction: the compiler reads nothing but the
 * code view (pymodule has frozen every global, closure cell and default
 * into it, and built the views of the device functions called), the
 * options, libdevice, LLVM and the host it compiles for, so writing all of
 * them down, field by field, covers everything that changes the code.  Two
 * exceptions.  The view's instructions: a lookup is made before pymodule
 * reads them (through dis, which costs a hit more than all the rest), so
 * the key has instead the code object they are made of (every field of it,
 * GjCodeView.code_bytes), and the caller adds Python's exact version, of
 * which dis is part.  And libdevice, checked at unpacking instead: whether
 * a kernel links it is known only after compiling, and searching for it on
 * every lookup would cost a kernel without math functions its fastest
 * load.  An entry names the libdevice file it linked (or none), and is
 * used only while the search finds that same file.
 * (The view has no source text: a diagnostic reads its line when rendered,
 * and a compile with a diagnostic is never cached.)  The sizes of the
 * structs written are asserted below, so most fields added to one of them
 * break the build here until they are keyed (or packed).
 *
 * Every number is written little-endian at a fixed width and every string
 * with its length, so the material is the same on every run and no two
 * different inputs write the same bytes.
 */
#include "cache.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lower.h"

enum {
    KEY_VERSION = 4,    /* of the key material's layout, and of the CPU code's ABI (4: a
                           kernel without barriers runs a whole block per call) */
    PACK_VERSION = 6,   /* of gj_cache_pack's layout (6: GjErrorSite.unsigned_index) */
    VIEW_NEW = 1,       /* a code view follows */
    VIEW_SEEN = 2,      /* the index of a code view written before (recursion) */
};

/* GJ_CACHE_KEY, GJ_CACHE_RESULT: the structs as keyed and packed here.  A
   failure means a field was added: key it in put_view/put_global/put_const
   (or pack it in gj_cache_pack and gj_cache_unpack), then update the size.
   (A field that fits in a struct's padding does not change its size: the
   comments at the structs, not these, are the rule.) */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(GjCodeView) == 152, "a GjCodeView field is not in the cache key");
_Static_assert(sizeof(GjGlobal) == 96, "a GjGlobal field is not in the cache key");
_Static_assert(sizeof(GjConst) == 56, "a GjConst field is not in the cache key");
_Static_assert(sizeof(GjCallee) == 16, "a GjCallee field is not in the cache key");
_Static_assert(sizeof(GjConstArray) == 48, "a GjConstArray field is not in the cache key");
_Static_assert(sizeof(GjCompileResult) == 168, "a GjCompileResult field is not packed");
_Static_assert(sizeof(GjParamPlan) == 48, "a GjParamPlan field is not packed");
_Static_assert(sizeof(GjErrorSite) == 32, "a GjErrorSite field is not packed");
#endif

/* ---- writing ------------------------------------------------------------ */

void gj_buf_put(GjBuf *b, const void *data, size_t n) {
    if (b->failed || n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

void gj_buf_free(GjBuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

static void put_u64(GjBuf *b, uint64_t v) {
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    gj_buf_put(b, le, sizeof le);
}

void gj_buf_put_i64(GjBuf *b, int64_t v) { put_u64(b, (uint64_t)v); }

static void put_f64(GjBuf *b, double f) {   /* the bits: -0.0 and NaN payloads differ */
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    put_u64(b, u);
}

/* Bytes with their length; NULL as length -1. */
void gj_buf_put_blob(GjBuf *b, const void *data, size_t n) {
    gj_buf_put_i64(b, data ? (int64_t)n : -1);
    if (data)
        gj_buf_put(b, data, n);
}

void gj_buf_put_str(GjBuf *b, const char *s) { gj_buf_put_blob(b, s, s ? strlen(s) : 0); }

/* ---- the key ---------------------------------------------------------- */

typedef struct KeyWriter {
    GjCtx *c;
    GjBuf *out;
    const GjCodeView **views;   /* written so far; a view met again is its index */
    int32_t nviews, cap;
    int uncacheable;            /* a global known only by its type was met */
} KeyWriter;

static void put_view(KeyWriter *w, const GjCodeView *v);

static void put_const(GjBuf *b, const GjConst *k) {
    gj_buf_put_i64(b, k->kind);
    switch (k->kind) {
    case GJ_CONST_NONE: return;
    case GJ_CONST_BOOL:
    case GJ_CONST_INT:
        gj_buf_put_i64(b, k->i);
        gj_buf_put_str(b, k->s);   /* a NumPy scalar's dtype, or NULL: a weak literal */
        return;
    case GJ_CONST_FLOAT:
    case GJ_CONST_COMPLEX:
        put_f64(b, k->f);
        put_f64(b, k->kind == GJ_CONST_COMPLEX ? k->im : 0.0);
        gj_buf_put_str(b, k->s);
        return;
    case GJ_CONST_STR:
    case GJ_CONST_OTHER:   /* the compiler sees only the type's name */
        gj_buf_put_str(b, k->s);
        return;
    case GJ_CONST_TUPLE:
    case GJ_CONST_SLICE:   /* start, stop, step */
        gj_buf_put_i64(b, k->n);
        for (int32_t i = 0; i < k->n; i++)
            put_const(b, &k->items[i]);
        return;
    }
}

static void put_type(GjBuf *b, const GjType *t) {
    gj_buf_put_str(b, t ? t->name : NULL);   /* names are canonical: one per type */
}

static void put_array(KeyWriter *w, const GjConstArray *a) {
    GjBuf *b = w->out;
    gj_buf_put_str(b, a->dtype);
    gj_buf_put_i64(b, a->ndim);
    for (int32_t i = 0; i < a->ndim; i++) {
        gj_buf_put_i64(b, a->shape[i]);
        gj_buf_put_i64(b, a->strides[i]);
    }
    if (!a->data)   /* too big for constant memory: kept only for the error */
        w->uncacheable = 1;
    gj_buf_put_blob(b, a->data, a->nbytes);
}

static void put_global(KeyWriter *w, const GjGlobal *g) {
    GjBuf *b = w->out;
    gj_buf_put_str(b, g->key);
    gj_buf_put_i64(b, g->kind);
    switch (g->kind) {
    case GJ_GLOBAL_MISSING:
    case GJ_GLOBAL_OTHER:   /* an object the compiler knows by its type's name only */
        w->uncacheable = 1;
        return;
    case GJ_GLOBAL_MODULE:
    case GJ_GLOBAL_BUILTIN:
    case GJ_GLOBAL_INTRINSIC:
    case GJ_GLOBAL_EXCEPTION: gj_buf_put_str(b, g->name); return;
    case GJ_GLOBAL_CONST: put_const(b, &g->value); return;
    case GJ_GLOBAL_FUNCTION:
        gj_buf_put_str(b, g->name);
        gj_buf_put_i64(b, g->callee->inline_always);
        gj_buf_put_i64(b, g->callee->device);
        put_view(w, g->callee->code);
        return;
    case GJ_GLOBAL_ARRAY: put_array(w, g->array); return;
    }
}

/* Whether v was written before; if so its index is written instead. */
static int seen_view(KeyWriter *w, const GjCodeView *v) {
    for (int32_t i = 0; i < w->nviews; i++)
        if (w->views[i] == v) {
            gj_buf_put_i64(w->out, VIEW_SEEN);
            gj_buf_put_i64(w->out, i);
            return 1;
        }
    w->views = gj_arena_grow(&w->c->arena, w->views, &w->cap, w->nviews + 1, sizeof *w->views);
    if (!w->views) {
        w->out->failed = 1;
        return 1;
    }
    w->views[w->nviews++] = v;
    gj_buf_put_i64(w->out, VIEW_NEW);
    return 0;
}

static void put_view(KeyWriter *w, const GjCodeView *v) {
    GjBuf *b = w->out;
    if (seen_view(w, v))
        return;
    gj_buf_put_i64(b, v->py_major);
    gj_buf_put_i64(b, v->py_minor);
    gj_buf_put_str(b, v->name);
    gj_buf_put_str(b, v->qualname);
    gj_buf_put_str(b, v->filename);
    gj_buf_put_i64(b, v->firstlineno);
    gj_buf_put_i64(b, v->argcount);
    gj_buf_put_i64(b, v->kwonlyargcount);
    gj_buf_put_i64(b, v->flags);
    gj_buf_put_i64(b, v->nvarnames);
    for (int32_t i = 0; i < v->nvarnames; i++)
        gj_buf_put_str(b, v->varnames[i]);
    gj_buf_put_i64(b, v->ndefaults);
    for (int32_t i = 0; i < v->ndefaults; i++)
        put_const(b, &v->defaults[i]);
    if (!v->code_bytes)   /* a constant pymodule cannot write down */
        w->uncacheable = 1;
    gj_buf_put_blob(b, v->code_bytes, v->code_nbytes);   /* not instrs: see gj_cache_key */
    gj_buf_put_i64(b, v->argtypes != NULL);
    for (int32_t i = 0; v->argtypes && i < v->argcount; i++)
        put_type(b, v->argtypes[i]);
    put_type(b, v->rettype);
    gj_buf_put_str(b, v->signature);
    gj_buf_put_i64(b, v->nglobals);
    for (int32_t i = 0; i < v->nglobals; i++)
        put_global(w, &v->globals[i]);
}

/* A file by path, size and modification time (libdevice: another CUDA
   version is another file). */
static void put_file(GjBuf *b, const char *path) {
    struct stat s;
    gj_buf_put_str(b, path);
    if (!path || stat(path, &s) != 0) {
        gj_buf_put_i64(b, -1);
        return;
    }
    gj_buf_put_i64(b, (int64_t)s.st_size);
    gj_buf_put_i64(b, (int64_t)s.st_mtim.tv_sec);
    gj_buf_put_i64(b, (int64_t)s.st_mtim.tv_nsec);
}

/* GJ_CACHE_OPTIONS: the struct's bytes (gj_compile_options_default zeroed
   its padding), so that every value field is keyed, new ones included;
   the bytes of its pointers zeroed and what they point to keyed instead;
   requests that change no code cleared.  (A byte array, not a struct copy:
   storing to a struct's member leaves its padding unspecified.) */
static void put_options(GjBuf *b, const GjCompileOptions *opt) {
    unsigned char bytes[sizeof *opt];
    memcpy(bytes, opt, sizeof bytes);
#define CLEAR(field) memset(bytes + offsetof(GjCompileOptions, field), 0, sizeof opt->field)
    CLEAR(entry_name);
    CLEAR(libdevice);           /* an entry checks the file it linked (gj_cache_unpack) */
    CLEAR(find_libdevice);
    CLEAR(find_libdevice_arg);
    CLEAR(runtime_symbols);     /* the same functions in every process, at other addresses */
    CLEAR(nruntime_symbols);
    CLEAR(object_id);           /* derived from the key */
    CLEAR(want_llvm_ir);
#undef CLEAR
    gj_buf_put(b, bytes, sizeof bytes);
    gj_buf_put_str(b, opt->entry_name);
}

int gj_cache_key(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt, GjBuf *out) {
    gj_buf_put_i64(out, KEY_VERSION);
    gj_buf_put_str(out, gj_llvm_version());
    if (opt->target == GJ_TARGET_CPU) {
        const GjCpuHost *host = gj_cpujit_host(c);
        if (!host)
            return -1;
        gj_buf_put_str(out, host->key);
    }
    put_options(out, opt);
    KeyWriter w = {.c = c, .out = out};
    put_view(&w, code);
    if (out->failed) {
        gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
        return -1;
    }
    return w.uncacheable ? 0 : 1;
}

/* ---- packing a result --------------------------------------------------- */

void gj_cache_pack(const GjCompileResult *r, GjBuf *out) {
    gj_buf_put_i64(out, PACK_VERSION);
    gj_buf_put_str(out, r->kernel_name);
    gj_buf_put_str(out, r->ptx);
    gj_buf_put_str(out, r->llvm_ir);
    gj_buf_put_str(out, r->type_dump);
    gj_buf_put_str(out, r->return_type);
    gj_buf_put_str(out, r->cpu_symbol);
    gj_buf_put_i64(out, r->nparams);
    for (int i = 0; i < r->nparams; i++) {
        const GjParamPlan *p = &r->params[i];
        gj_buf_put_str(out, p->name);
        gj_buf_put_i64(out, p->is_array);
        gj_buf_put_i64(out, p->ndim);
        gj_buf_put_i64(out, p->written);
        gj_buf_put_str(out, p->dtype);
        gj_buf_put_i64(out, (int64_t)p->itemsize);
    }
    gj_buf_put_i64(out, r->nkernel_params);
    gj_buf_put_i64(out, (int64_t)r->shared_static_bytes);
    gj_buf_put_i64(out, (int64_t)r->local_bytes);
    gj_buf_put_i64(out, (int64_t)r->const_bytes);
    gj_buf_put_i64(out, r->dynamic_shared);
    gj_buf_put_i64(out, r->needs_fibers);
    gj_buf_put_i64(out, r->cpu_per_thread);
    gj_buf_put_i64(out, r->prints);
    gj_buf_put_i64(out, r->nerror_sites);
    for (int i = 0; i < r->nerror_sites; i++) {
        gj_buf_put_i64(out, r->error_sites[i].kind);
        gj_buf_put_i64(out, r->error_sites[i].axis);
        gj_buf_put_i64(out, r->error_sites[i].unsigned_index);
        gj_buf_put_str(out, r->error_sites[i].message);
        gj_buf_put_str(out, r->error_sites[i].exception);
    }
    gj_buf_put_blob(out, r->binary, r->binary_size);
    put_file(out, r->libdevice);
    /* not packed: cpu_fn and cpu_code, which loading the binary sets */
}

/* ---- unpacking ------------------------------------------------------------ */

typedef struct Reader {
    const unsigned char *p;
    size_t n, pos;
    int bad;   /* read past the end, or a value out of range */
} Reader;

static int64_t get_i64(Reader *r) {
    if (r->bad || r->n - r->pos < 8) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[r->pos + (size_t)i] << (8 * i);
    r->pos += 8;
    return (int64_t)v;
}

/* An int in [lo, hi]; out of range marks the reader bad. */
static int64_t get_range(Reader *r, int64_t lo, int64_t hi) {
    int64_t v = get_i64(r);
    if (v < lo || v > hi)
        r->bad = 1;
    return r->bad ? lo : v;
}

/* A malloc'd copy of put_blob's bytes, NUL-terminated; NULL for a NULL. */
static void *get_blob(Reader *r, size_t *size) {
    int64_t n = get_i64(r);
    *size = 0;
    if (r->bad || n < 0)
        return NULL;
    if ((uint64_t)n > r->n - r->pos) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p + r->pos, (size_t)n);
    s[n] = '\0';
    r->pos += (size_t)n;
    *size = (size_t)n;
    return s;
}

static char *get_str(Reader *r) {
    size_t n;
    char *s = get_blob(r, &n);
    if (s && strlen(s) != n)   /* a NUL inside: not a string we wrote */
        r->bad = 1;
    return s;
}

static void get_params(Reader *r, GjCompileResult *res) {
    res->nparams = (int)get_range(r, 0, 1 << 16);
    res->params = calloc((size_t)res->nparams + 1, sizeof *res->params);
    if (!res->params) {
        res->nparams = 0;
        r->bad = 1;
        return;
    }
    for (int i = 0; i < res->nparams && !r->bad; i++) {
        GjParamPlan *p = &res->params[i];
        p->name = get_str(r);
        p->is_array = (int)get_range(r, 0, 1);
        p->ndim = (int)get_range(r, 0, 64);
        p->written = (int)get_range(r, 0, 1);
        char *dtype = get_str(r);
        if (!dtype || strlen(dtype) >= sizeof p->dtype)
            r->bad = 1;
        else
            memcpy(p->dtype, dtype, strlen(dtype) + 1);
        free(dtype);
        p->itemsize = (size_t)get_range(r, 0, 64);
    }
}

static void get_error_sites(Reader *r, GjCompileResult *res) {
    int n = (int)get_range(r, 0, 1 << 20);
    if (n == 0)
        return;
    if (!(res->error_sites = calloc((size_t)n, sizeof *res->error_sites))) {
        r->bad = 1;
        return;
    }
    res->nerror_sites = n;
    for (int i = 0; i < n && !r->bad; i++) {
        GjErrorSite *site = &res->error_sites[i];
        site->kind = (GjErrorKind)get_range(r, 0, INT32_MAX);
        site->axis = (int)get_range(r, 0, INT32_MAX);
        site->unsigned_index = (int)get_range(r, 0, 1);
        if (!(site->message = get_str(r)))
            r->bad = 1;
        site->exception = get_str(r);   /* NULL but for raise sites */
    }
}

static void get_result(Reader *r, GjCompileResult *res) {
    if (get_i64(r) != PACK_VERSION)
        r->bad = 1;
    res->kernel_name = get_str(r);
    res->ptx = get_str(r);
    res->llvm_ir = get_str(r);
    res->type_dump = get_str(r);
    res->return_type = get_str(r);
    res->cpu_symbol = get_str(r);
    get_params(r, res);
    res->nkernel_params = (int)get_range(r, 0, 1 << 20);
    res->shared_static_bytes = (size_t)get_range(r, 0, INT32_MAX);
    res->local_bytes = (size_t)get_range(r, 0, INT64_MAX);
    res->const_bytes = (size_t)get_range(r, 0, INT64_MAX);
    res->dynamic_shared = (int)get_range(r, 0, 1);
    res->needs_fibers = (int)get_range(r, 0, 1);
    res->cpu_per_thread = (int)get_range(r, 0, 1);
    res->prints = (int)get_range(r, 0, 1);
    get_error_sites(r, res);
    res->binary = get_blob(r, &res->binary_size);
    res->libdevice = get_str(r);   /* put_file's bytes: compared when unpacked */
    if (get_i64(r) != -1) {
        get_i64(r);
        get_i64(r);
    }
    if (r->pos != r->n || !res->kernel_name || !res->type_dump || !res->return_type)
        r->bad = 1;
}

/* Whether the libdevice file the entry at data linked (put_file's bytes,
   which end it) is the one a compile would link now. */
static int same_libdevice(const GjCompileOptions *opt, const GjCompileResult *res,
                          const unsigned char *data, size_t n) {
    if (!res->libdevice)
        return 1;
    const char *now = opt->libdevice;
    if (!now && opt->find_libdevice)
        now = opt->find_libdevice(opt->find_libdevice_arg);
    GjBuf b = {0};
    put_file(&b, now);
    int same = !b.failed && b.len <= n && memcmp(b.data, data + n - b.len, b.len) == 0;
    gj_buf_free(&b);
    return same;
}

GjStatus gj_cache_unpack(GjCtx *c, const GjCompileOptions *opt, const void *data, size_t n,
                         GjCompileResult *out) {
    GjCompileResult res = {0};
    Reader r = {.p = data, .n = n};
    get_result(&r, &res);
    int cpu = opt->target == GJ_TARGET_CPU;
    if (r.bad || (cpu ? !res.cpu_symbol || !res.binary : !res.ptx)) {
        gj_result_free(&res);
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "malformed kernel cache entry");
    }
    if (!same_libdevice(opt, &res, data, n)) {
        gj_result_free(&res);
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1},
                        "the kernel cache entry linked another libdevice");
    }
    if (cpu && gj_cpujit_load(c, opt, res.binary, res.binary_size, res.cpu_symbol, &res.cpu_fn,
                              &res.cpu_code) != GJ_OK) {
        gj_result_free(&res);
        return GJ_ERR;
    }
    if (cpu) {   /* loaded: the copy is needed no more */
        free(res.binary);
        res.binary = NULL;
        res.binary_size = 0;
    }
    *out = res;
    return GJ_OK;
}
