/*
 * types.c - gpujit's types (types.h): scalar singletons, the per-compilation
 * intern table for composite types, NumPy 2 / NEP 50 promotion, and the
 * numba-style signature parser.
 *
 * Promotion is decided in one place, gj_ty_promote(), from each scalar's
 * category (bool < integer < float < complex) and width; the rules are
 * NumPy's np.result_type for two strong types and NEP 50's for weak Python
 * literals (checked pair by pair against NumPy 2: recheck after a change).
 *
 * Composite types are interned: gj_ty_array() etc. return the one GjType
 * for given components, so every comparison in the compiler is `==`.
 */
#include "types.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "intrinsics.h"

/* ---- scalar singletons ------------------------------------------------ */

#define SCALAR(var, k, b, nm) const GjType var = {.kind = k, .bits = b, .name = nm}
SCALAR(gj_ty_none, GJ_TK_NONE, 0, "none");
SCALAR(gj_ty_bool, GJ_TK_BOOL, 8, "bool");
SCALAR(gj_ty_int8, GJ_TK_INT, 8, "int8");
SCALAR(gj_ty_int16, GJ_TK_INT, 16, "int16");
SCALAR(gj_ty_int32, GJ_TK_INT, 32, "int32");
SCALAR(gj_ty_int64, GJ_TK_INT, 64, "int64");
SCALAR(gj_ty_uint8, GJ_TK_UINT, 8, "uint8");
SCALAR(gj_ty_uint16, GJ_TK_UINT, 16, "uint16");
SCALAR(gj_ty_uint32, GJ_TK_UINT, 32, "uint32");
SCALAR(gj_ty_uint64, GJ_TK_UINT, 64, "uint64");
SCALAR(gj_ty_float16, GJ_TK_FLOAT, 16, "float16");
SCALAR(gj_ty_float32, GJ_TK_FLOAT, 32, "float32");
SCALAR(gj_ty_float64, GJ_TK_FLOAT, 64, "float64");
SCALAR(gj_ty_complex64, GJ_TK_COMPLEX, 64, "complex64");
SCALAR(gj_ty_complex128, GJ_TK_COMPLEX, 128, "complex128");
SCALAR(gj_ty_weak_int, GJ_TK_WEAK_INT, 64, "int literal");
SCALAR(gj_ty_weak_float, GJ_TK_WEAK_FLOAT, 64, "float literal");
SCALAR(gj_ty_weak_complex, GJ_TK_WEAK_COMPLEX, 128, "complex literal");
#undef SCALAR

/* Every spelling gj_ty_from_name() accepts: NumPy names and character
   codes, numba's short names (f4, i8) and a few C-ish aliases. */
static const struct {
    const char *name;
    const GjType *type;
} scalar_names[] = {
    {"bool", &gj_ty_bool},
    {"bool_", &gj_ty_bool},
    {"boolean", &gj_ty_bool},
    {"b1", &gj_ty_bool},
    {"?", &gj_ty_bool},
    {"int8", &gj_ty_int8},
    {"i1", &gj_ty_int8},
    {"b", &gj_ty_int8},
    {"int16", &gj_ty_int16},
    {"i2", &gj_ty_int16},
    {"h", &gj_ty_int16},
    {"int32", &gj_ty_int32},
    {"i4", &gj_ty_int32},
    {"i", &gj_ty_int32},
    {"intc", &gj_ty_int32},
    {"int64", &gj_ty_int64},
    {"i8", &gj_ty_int64},
    {"l", &gj_ty_int64},
    {"q", &gj_ty_int64},
    {"intp", &gj_ty_int64},
    {"int_", &gj_ty_int64},
    {"uint8", &gj_ty_uint8},
    {"u1", &gj_ty_uint8},
    {"B", &gj_ty_uint8},
    {"uint16", &gj_ty_uint16},
    {"u2", &gj_ty_uint16},
    {"H", &gj_ty_uint16},
    {"uint32", &gj_ty_uint32},
    {"u4", &gj_ty_uint32},
    {"I", &gj_ty_uint32},
    {"uintc", &gj_ty_uint32},
    {"uint64", &gj_ty_uint64},
    {"u8", &gj_ty_uint64},
    {"L", &gj_ty_uint64},
    {"Q", &gj_ty_uint64},
    {"uintp", &gj_ty_uint64},
    {"float16", &gj_ty_float16},
    {"f2", &gj_ty_float16},
    {"e", &gj_ty_float16},
    {"half", &gj_ty_float16},
    {"float32", &gj_ty_float32},
    {"f4", &gj_ty_float32},
    {"f", &gj_ty_float32},
    {"single", &gj_ty_float32},
    {"float64", &gj_ty_float64},
    {"f8", &gj_ty_float64},
    {"d", &gj_ty_float64},
    {"double", &gj_ty_float64},
    {"complex64", &gj_ty_complex64},
    {"c8", &gj_ty_complex64},
    {"F", &gj_ty_complex64},
    {"complex128", &gj_ty_complex128},
    {"c16", &gj_ty_complex128},
    {"D", &gj_ty_complex128},
};

/* A byte-order prefix ("<f4", "|b1", "=i8") is accepted and ignored: gpujit
   only targets little-endian devices and the caller checks the byte order. */
const GjType *gj_ty_from_name(const char *name) {
    if (!name)
        return NULL;
    if ((name[0] == '<' || name[0] == '=' || name[0] == '|') && name[1])
        name++;
    for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++) {
        if (strcmp(name, scalar_names[i].name) == 0)
            return scalar_names[i].type;
    }
    return NULL;
}

/* ---- interning -------------------------------------------------------- */

struct GjTypes {
    const GjType **items;
    int32_t n, cap;
};

void gj_ty_init(GjCtx *c) { c->types = GJ_NEW(&c->arena, GjTypes); }

static int same_type(const GjType *a, const GjType *b) {
    if (a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim ||
        a->layout != b->layout || a->n != b->n || a->intrinsic != b->intrinsic ||
        a->addrspace != b->addrspace || a->callee != b->callee)
        return 0;
    for (int i = 0; i < a->n; i++) {
        if (a->elems[i] != b->elems[i])
            return 0;
    }
    if (a->kind == GJ_TK_MODULE)
        return strcmp(a->name, b->name) == 0;
    if (a->kind == GJ_TK_STR)
        return strcmp(a->text, b->text) == 0;
    return 1;
}

/* Returns the interned copy of *key, copying it (and its elems) into the
   arena the first time; key->name is only computed for new types. */
static const GjType *intern(GjCtx *c, const GjType *key, const char *name) {
    GjTypes *tab = c->types;
    if (!tab)
        return NULL;
    for (int32_t i = 0; i < tab->n; i++) {
        if (same_type(tab->items[i], key))
            return tab->items[i];
    }
    GjType *t = GJ_NEW(&c->arena, GjType);
    const GjType **items =
        gj_arena_grow(&c->arena, tab->items, &tab->cap, tab->n + 1, sizeof *tab->items);
    if (!t || !items || !name)
        return NULL;
    *t = *key;
    t->name = name;
    if (key->n > 0) {
        const GjType **elems = GJ_NEW_N(&c->arena, const GjType *, key->n);
        if (!elems)
            return NULL;
        memcpy(elems, key->elems, sizeof *elems * (size_t)key->n);
        t->elems = elems;
    }
    tab->items = items;
    tab->items[tab->n++] = t;
    return t;
}

const GjType *gj_ty_array(GjCtx *c, const GjType *dtype, int ndim, GjLayout layout) {
    GjType key = {.kind = GJ_TK_ARRAY, .dtype = dtype, .ndim = ndim, .layout = layout};
    char *name = gj_arena_printf(&c->arena, "array(%s, %dd, %c)", dtype->name, ndim, (char)layout);
    return intern(c, &key, name);
}

/* Names a type list "(a, b)" style into the arena: "tuple(int64, int64)". */
static char *list_name(GjCtx *c, const char *head, const GjType *const *elems, int n) {
    size_t len = strlen(head) + 3;
    for (int i = 0; i < n; i++)
        len += strlen(elems[i]->name) + 2;
    char *s = gj_arena_alloc(&c->arena, len);
    if (!s)
        return NULL;
    strcpy(s, head);
    strcat(s, "(");
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(s, ", ");
        strcat(s, elems[i]->name);
    }
    strcat(s, ")");
    return s;
}

const GjType *gj_ty_tuple(GjCtx *c, const GjType *const *elems, int n) {
    GjType key = {.kind = GJ_TK_TUPLE, .n = n, .elems = (const GjType **)elems};
    return intern(c, &key, list_name(c, "tuple", elems, n));
}

const GjType *gj_ty_range_iter(GjCtx *c, const GjType *int_type) {
    const GjType *elems[1] = {int_type};
    GjType key = {.kind = GJ_TK_RANGE_ITER, .n = 1, .elems = elems};
    return intern(c, &key, list_name(c, "range_iter", elems, 1));
}

const GjType *gj_ty_slice(GjCtx *c, const GjType *start, const GjType *stop, const GjType *step) {
    const GjType *elems[3] = {start, stop, step};
    GjType key = {.kind = GJ_TK_SLICE, .n = 3, .elems = elems};
    return intern(c, &key, list_name(c, "slice", elems, 3));
}

const GjType *gj_ty_tuple_iter(GjCtx *c, const GjType *tuple, const GjType *elem) {
    const GjType *elems[2] = {elem, tuple};
    GjType key = {.kind = GJ_TK_TUPLE_ITER, .n = 2, .elems = elems};
    return intern(c, &key, gj_arena_printf(&c->arena, "tuple_iter(%s)", tuple->name));
}

const GjType *gj_ty_array_iter(GjCtx *c, const GjType *array, const GjType *elem) {
    const GjType *elems[2] = {elem, array};
    GjType key = {.kind = GJ_TK_ARRAY_ITER, .n = 2, .elems = elems};
    return intern(c, &key, gj_arena_printf(&c->arena, "array_iter(%s)", array->name));
}

const GjType *gj_ty_zip_iter(GjCtx *c, const GjType *const *iters, int n) {
    GjType key = {.kind = GJ_TK_ZIP_ITER, .n = n, .elems = (const GjType **)iters};
    return intern(c, &key, list_name(c, "zip", iters, n));
}

const GjType *gj_ty_dim3(GjCtx *c, int intrinsic) {
    GjType key = {.kind = GJ_TK_DIM3, .intrinsic = intrinsic};
    return intern(
        c, &key, gj_arena_printf(&c->arena, "dim3(%s)", gj_intrinsic_name((GjIntrinsic)intrinsic)));
}

const GjType *gj_ty_module(GjCtx *c, const char *name) {
    GjType key = {.kind = GJ_TK_MODULE, .name = name};   /* named "math", not "module(math)" */
    return intern(c, &key, gj_arena_strdup(&c->arena, name));
}

const GjType *gj_ty_str(GjCtx *c, const char *text) {
    GjType key = {.kind = GJ_TK_STR, .text = text};
    GjType *t = (GjType *)intern(c, &key, "str");
    if (t && t->text == text)   /* new: the type owns its text */
        t->text = gj_arena_strdup(&c->arena, text);
    return t && t->text ? t : NULL;
}

/* Named as Python shows the object: "function(range)", "function(math.sqrt)". */
const GjType *gj_ty_callable(GjCtx *c, int intrinsic) {
    GjType key = {.kind = GJ_TK_CALLABLE, .intrinsic = intrinsic};
    const char *name = gj_intrinsic_name((GjIntrinsic)intrinsic);
    if (strncmp(name, "builtins.", 9) == 0)
        name += 9;
    return intern(c, &key, gj_arena_printf(&c->arena, "function(%s)", name));
}

const GjType *gj_ty_array_in(GjCtx *c, const GjType *t, GjAddrSpace as) {
    static const char *const prefix[GJ_NADDRSPACES] = {
        [GJ_AS_GLOBAL] = "",
        [GJ_AS_SHARED] = "shared ",
        [GJ_AS_LOCAL] = "local ",
        [GJ_AS_CONST] = "readonly ",
    };
    if (t->kind != GJ_TK_ARRAY || t->addrspace == as)
        return t;
    const GjType *global = gj_ty_array(c, t->dtype, t->ndim, t->layout);
    if (!global || as == GJ_AS_GLOBAL)
        return global;
    GjType key = *global;
    key.addrspace = as;
    return intern(c, &key, gj_arena_printf(&c->arena, "%s%s", prefix[as], global->name));
}

const GjType *gj_ty_function(GjCtx *c, const struct GjCallee *callee, const char *name) {
    GjType key = {.kind = GJ_TK_CALLABLE, .intrinsic = -1, .callee = callee};
    return intern(c, &key, gj_arena_printf(&c->arena, "function(%s)", name ? name : "?"));
}

/* ---- predicates ------------------------------------------------------- */

int gj_ty_is_scalar(const GjType *t) {
    switch (t->kind) {
    case GJ_TK_BOOL:
    case GJ_TK_INT:
    case GJ_TK_UINT:
    case GJ_TK_FLOAT:
    case GJ_TK_COMPLEX:
    case GJ_TK_WEAK_INT:
    case GJ_TK_WEAK_FLOAT:
    case GJ_TK_WEAK_COMPLEX: return 1;
    case GJ_TK_NONE:
    case GJ_TK_ARRAY:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: return 0;
    }
    return 0;
}

int gj_ty_is_integer(const GjType *t) {
    return t->kind == GJ_TK_INT || t->kind == GJ_TK_UINT || t->kind == GJ_TK_WEAK_INT;
}

int gj_ty_is_float(const GjType *t) {
    return t->kind == GJ_TK_FLOAT || t->kind == GJ_TK_WEAK_FLOAT;
}

int gj_ty_is_weak(const GjType *t) {
    return t->kind == GJ_TK_WEAK_INT || t->kind == GJ_TK_WEAK_FLOAT ||
           t->kind == GJ_TK_WEAK_COMPLEX;
}

size_t gj_ty_itemsize(const GjType *t) {
    return gj_ty_is_scalar(t) ? (size_t)gj_ty_concrete(t)->bits / 8 : 0;
}

const GjType *gj_ty_concrete(const GjType *t) {
    switch (t->kind) {
    case GJ_TK_WEAK_INT: return &gj_ty_int64;
    case GJ_TK_WEAK_FLOAT: return &gj_ty_float64;
    case GJ_TK_WEAK_COMPLEX: return &gj_ty_complex128;
    case GJ_TK_NONE:
    case GJ_TK_BOOL:
    case GJ_TK_INT:
    case GJ_TK_UINT:
    case GJ_TK_FLOAT:
    case GJ_TK_COMPLEX:
    case GJ_TK_ARRAY:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: break;
    }
    return t;
}

/* ---- promotion (NumPy 2, NEP 50) -------------------------------------- */

/* Category of a scalar: the order in which NumPy's kinds absorb each other. */
enum { CAT_BOOL, CAT_INT, CAT_FLOAT, CAT_COMPLEX };

static int category(const GjType *t) {
    switch (t->kind) {
    case GJ_TK_BOOL: return CAT_BOOL;
    case GJ_TK_INT:
    case GJ_TK_UINT:
    case GJ_TK_WEAK_INT: return CAT_INT;
    case GJ_TK_FLOAT:
    case GJ_TK_WEAK_FLOAT: return CAT_FLOAT;
    case GJ_TK_COMPLEX:
    case GJ_TK_WEAK_COMPLEX: return CAT_COMPLEX;
    case GJ_TK_NONE:
    case GJ_TK_ARRAY:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: break;
    }
    return -1;
}

const GjType *gj_ty_int(int bits, int is_signed) {
    switch (bits) {
    case 8: return is_signed ? &gj_ty_int8 : &gj_ty_uint8;
    case 16: return is_signed ? &gj_ty_int16 : &gj_ty_uint16;
    case 32: return is_signed ? &gj_ty_int32 : &gj_ty_uint32;
    default: return is_signed ? &gj_ty_int64 : &gj_ty_uint64;
    }
}

static const GjType *float_type(int bits) {
    return bits <= 16 ? &gj_ty_float16 : bits <= 32 ? &gj_ty_float32 : &gj_ty_float64;
}

static const GjType *complex_type(int bits) {
    return bits <= 64 ? &gj_ty_complex64 : &gj_ty_complex128;
}

static int max_int(int a, int b) { return a > b ? a : b; }

/* The float width that holds every value of an integer of `bits` the way
   NumPy decides it: int8 -> float16, int16 -> float32, int32/int64 -> float64. */
static int float_bits_for_int(int bits) { return bits >= 32 ? 64 : 2 * bits; }

/* np.result_type for two strong scalars, a's category <= b's. */
static const GjType *promote_strong(const GjType *a, const GjType *b) {
    switch (category(b) * 4 + category(a)) {
    case CAT_BOOL * 4 + CAT_BOOL: return &gj_ty_bool;
    case CAT_INT * 4 + CAT_BOOL:
    case CAT_FLOAT * 4 + CAT_BOOL:
    case CAT_COMPLEX * 4 + CAT_BOOL: return b;
    case CAT_INT * 4 + CAT_INT:
        if (a->kind == b->kind)
            return gj_ty_int(max_int(a->bits, b->bits), a->kind == GJ_TK_INT);
        {
            const GjType *s = a->kind == GJ_TK_INT ? a : b, *u = a->kind == GJ_TK_INT ? b : a;
            if (s->bits > u->bits)
                return s;
            return u->bits < 64 ? gj_ty_int(2 * u->bits, 1) : &gj_ty_float64;
        }
    case CAT_FLOAT * 4 + CAT_INT: return float_type(max_int(b->bits, float_bits_for_int(a->bits)));
    case CAT_COMPLEX * 4 + CAT_INT:
        return complex_type(max_int(b->bits, 2 * float_bits_for_int(a->bits)));
    case CAT_FLOAT * 4 + CAT_FLOAT: return float_type(max_int(a->bits, b->bits));
    case CAT_COMPLEX * 4 + CAT_FLOAT: return complex_type(max_int(b->bits, 2 * a->bits));
    case CAT_COMPLEX * 4 + CAT_COMPLEX: return complex_type(max_int(a->bits, b->bits));
    default: return NULL;
    }
}

/* NEP 50: a weak literal w meets a strong scalar s.  The literal takes s's
   type when s's category can hold it; otherwise the result is the default
   type of the literal's category, sized up to hold s (float32 + 1j is
   complex64, int8 + 1.0 is float64). */
static const GjType *promote_weak(const GjType *w, const GjType *s) {
    if (category(s) >= category(w))
        return s;
    switch (w->kind) {
    case GJ_TK_WEAK_INT: return &gj_ty_int64;               /* s is bool */
    case GJ_TK_WEAK_FLOAT: return &gj_ty_float64;             /* s is bool or an integer */
    case GJ_TK_WEAK_COMPLEX:
        if (category(s) == CAT_FLOAT)
            return complex_type(2 * s->bits);
        return &gj_ty_complex128;
    case GJ_TK_NONE:
    case GJ_TK_BOOL:
    case GJ_TK_INT:
    case GJ_TK_UINT:
    case GJ_TK_FLOAT:
    case GJ_TK_COMPLEX:
    case GJ_TK_ARRAY:
    case GJ_TK_TUPLE:
    case GJ_TK_RANGE_ITER:
    case GJ_TK_DIM3:
    case GJ_TK_MODULE:
    case GJ_TK_CALLABLE:
    case GJ_TK_SLICE:
    case GJ_TK_TUPLE_ITER:
    case GJ_TK_STR:
    case GJ_TK_ARRAY_ITER:
    case GJ_TK_ZIP_ITER: break;
    }
    return NULL;
}

const GjType *gj_ty_promote(const GjType *a, const GjType *b) {
    if (!a || !b || !gj_ty_is_scalar(a) || !gj_ty_is_scalar(b))
        return NULL;
    if (a == b)
        return a;
    int wa = gj_ty_is_weak(a), wb = gj_ty_is_weak(b);
    if (wa && wb)
        return category(a) >= category(b) ? a : b;
    if (wa)
        return promote_weak(a, b);
    if (wb)
        return promote_weak(b, a);
    return category(a) <= category(b) ? promote_strong(a, b) : promote_strong(b, a);
}

/* NULL on either side means "not known yet" and yields the other side, so
   type inference can fold a variable's stores starting from nothing. */
const GjType *gj_ty_unify(const GjType *a, const GjType *b) {
    if (!a)
        return b;
    if (!b || a == b)
        return a;
    return gj_ty_promote(a, b);
}

/* ---- numba-style signatures ------------------------------------------- */

/* signature := [type] "(" [type {"," type}] ")"
   type      := name ["[" dim {"," dim} "]"] | tuple
   dim       := ":" | "::1"        -- "::1" last: C layout, first: F, none: A
   tuple     := "UniTuple(" type ("," | "x") count ")"       -- numba's spellings
              | ("Tuple" | "tuple") "(" ["("] type {"," type} [")"] ")" */
typedef struct SigParser {
    GjCtx *c;
    const char *sig;
    const char *p;
} SigParser;

static void skip_space(SigParser *s) {
    while (isspace((unsigned char)*s->p))
        s->p++;
}

static GjStatus sig_error(SigParser *s, const char *what) {
    return gj_error(s->c, GJ_DIAG_TYPING, (GjLoc){0, -1, -1},
                    "invalid signature '%s': %s at column %d", s->sig, what,
                    (int)(s->p - s->sig) + 1);
}

static int accept(SigParser *s, char ch) {
    skip_space(s);
    if (*s->p != ch)
        return 0;
    s->p++;
    return 1;
}

/* Parses the "[...]" after a dtype into an array type. */
static GjStatus parse_dims(SigParser *s, const GjType *dtype, const GjType **out) {
    int ndim = 0, contiguous_at = -1;
    do {
        if (!accept(s, ':'))
            return sig_error(s, "expected ':' in array dimensions");
        if (accept(s, ':')) {
            skip_space(s);
            if (*s->p != '1')
                return sig_error(s, "expected '::1' (only unit-stride dimensions can be marked)");
            s->p++;
            if (contiguous_at >= 0)
                return sig_error(s, "only one dimension can be '::1'");
            contiguous_at = ndim;
        }
        ndim++;
    } while (accept(s, ','));
    if (!accept(s, ']'))
        return sig_error(s, "expected ']'");
    if (ndim > GJ_TY_MAX_NDIM)
        return sig_error(s, "an array has at most 8 dimensions");
    GjLayout layout = GJ_LAYOUT_A;
    if (contiguous_at == ndim - 1)
        layout = GJ_LAYOUT_C;
    else if (contiguous_at == 0)
        layout = GJ_LAYOUT_F;
    else if (contiguous_at > 0)
        return sig_error(s, "'::1' must mark the first or the last dimension");
    *out = gj_ty_array(s->c, dtype, ndim, layout);
    return *out ? GJ_OK : sig_error(s, "out of memory");
}

static GjStatus parse_type(SigParser *s, int allow_void, const GjType **out);

/* The rest of UniTuple(t, n) after "UniTuple(". */
static GjStatus parse_unituple(SigParser *s, const GjType **out) {
    const GjType *t, *items[64];
    if (parse_type(s, 0, &t) != GJ_OK)
        return GJ_ERR;
    skip_space(s);
    if (!accept(s, ',') && *s->p++ != 'x')
        return sig_error(s, "expected ',' and a count in UniTuple(type, count)");
    skip_space(s);
    char *end;
    long n = strtol(s->p, &end, 10);
    if (end == s->p || n < 0 || n > 64)
        return sig_error(s, "expected a count from 0 to 64 in UniTuple(type, count)");
    s->p = end;
    if (!accept(s, ')'))
        return sig_error(s, "expected ')'");
    for (long k = 0; k < n; k++)
        items[k] = t;
    *out = gj_ty_tuple(s->c, items, (int)n);
    return *out ? GJ_OK : sig_error(s, "out of memory");
}

/* The rest of Tuple((a, b)) or Tuple(a, b) after "Tuple(". */
static GjStatus parse_tuple(SigParser *s, const GjType **out) {
    const GjType *items[64];
    int n = 0, inner = accept(s, '(');
    if (!accept(s, ')')) {
        do {
            if (n == 64)
                return sig_error(s, "a tuple has at most 64 items");
            if (parse_type(s, 0, &items[n++]) != GJ_OK)
                return GJ_ERR;
        } while (accept(s, ',') && !(inner && (skip_space(s), *s->p == ')')));
        if (!accept(s, ')'))
            return sig_error(s, "expected ')' after the tuple's types");
    }
    if (inner && !accept(s, ')'))
        return sig_error(s, "expected ')'");
    *out = gj_ty_tuple(s->c, items, n);
    return *out ? GJ_OK : sig_error(s, "out of memory");
}

/* Parses one type; `allow_void` for the return position. */
static GjStatus parse_type(SigParser *s, int allow_void, const GjType **out) {
    skip_space(s);
    const char *start = s->p;
    while (isalnum((unsigned char)*s->p) || *s->p == '_')
        s->p++;
    size_t n = (size_t)(s->p - start);
    if (n == 0)
        return sig_error(s, "expected a type name");
    char name[32];
    if (n >= sizeof name) {
        s->p = start;
        return sig_error(s, "type name too long");
    }
    memcpy(name, start, n);
    name[n] = '\0';
    if (allow_void && (strcmp(name, "void") == 0 || strcmp(name, "none") == 0)) {
        *out = &gj_ty_none;
        return GJ_OK;
    }
    if (strcmp(name, "UniTuple") == 0 && accept(s, '('))
        return parse_unituple(s, out);
    if ((strcmp(name, "Tuple") == 0 || strcmp(name, "tuple") == 0) && accept(s, '('))
        return parse_tuple(s, out);
    const GjType *t = gj_ty_from_name(name);
    if (!t) {
        s->p = start;
        return gj_error(s->c, GJ_DIAG_TYPING, (GjLoc){0, -1, -1},
                        "invalid signature '%s': unknown type '%s' (expected e.g. float32, "
                        "int64, f4, bool, or an array such as float32[:])",
                        s->sig, name);
    }
    if (accept(s, '['))
        return parse_dims(s, t, out);
    *out = t;
    return GJ_OK;
}

GjStatus gj_ty_parse_signature(GjCtx *c, const char *sig, const GjType ***args, int *nargs,
                               const GjType **ret) {
    SigParser s = {c, sig, sig};
    const GjType *r = NULL;
    skip_space(&s);
    if (*s.p != '(' && parse_type(&s, 1, &r) != GJ_OK)
        return GJ_ERR;
    if (!accept(&s, '('))
        return sig_error(&s, "expected '('");
    int32_t n = 0, cap = 0;
    const GjType **list = NULL;
    if (!accept(&s, ')')) {
        int closed = 0;   /* the ')' after a trailing comma, "(f4,)", as Python allows */
        do {
            const GjType *t;
            if (parse_type(&s, 0, &t) != GJ_OK)
                return GJ_ERR;
            list = gj_arena_grow(&c->arena, list, &cap, n + 1, sizeof *list);
            if (!list)
                return sig_error(&s, "out of memory");
            list[n++] = t;
        } while (accept(&s, ',') && !(closed = accept(&s, ')')));
        if (!closed && !accept(&s, ')'))
            return sig_error(&s, "expected ',' or ')'");
    }
    skip_space(&s);
    if (*s.p)
        return sig_error(&s, "unexpected text after ')'");
    *args = list;
    *nargs = n;
    *ret = r;
    return GJ_OK;
}
