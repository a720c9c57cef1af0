/*
 * intrinsics.c - the intrinsic table (intrinsics.h) and lookup in it.
 *
 * The tables are small (a few hundred entries) and looked up once per
 * GLOBAL or GETATTR during typing, so a linear scan is the clearest choice.
 * The array below holds every row in GjIntrinsic's order: the family
 * tables, then three rows (math, numpy, cmath) per math-table row; a row
 * whose name is "" does not exist and is never found.
 */
#include "intrinsics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define ROW(id, ns, name, params, lo, hi, rule, result, sub, lower, flags, doc) \
    {ns, name, ns "." name, params, lo, hi, rule, result, sub, flags, doc},
#define MATH_ROWS(id, m, np, cm, nargs, kind, impl)                               \
    {"math", m, "math." m, "", nargs, nargs, GJ_TR_MATH, NULL, 0, 0, ""},         \
        {"numpy", np, "numpy." np, "", nargs, nargs, GJ_TR_MATH, NULL, 0, 0, ""}, \
        {"cmath", cm, "cmath." cm, "", nargs, nargs, GJ_TR_MATH, NULL, 0, 0, ""},
#define CONST_ROWS(id, m, np, cm, value)                                   \
    {"math", m, "math." m, "", 0, 0, GJ_TR_VALUE, NULL, 0, 0, ""},         \
        {"numpy", np, "numpy." np, "", 0, 0, GJ_TR_VALUE, NULL, 0, 0, ""}, \
        {"cmath", cm, "cmath." cm, "", 0, 0, GJ_TR_VALUE, NULL, 0, 0, ""},

static const GjIntrinsicRow intrinsics[] = {GJ_INTRINSICS(ROW) GJ_MATH_FUNCS(MATH_ROWS)
                                                GJ_MATH_CONSTS(CONST_ROWS)};

_Static_assert(sizeof intrinsics / sizeof intrinsics[0] == GJ_NINTRINSICS,
               "one row per GjIntrinsic");

enum {
#define X(id, ...) +1
    NCORE = 0 GJ_INTRINSICS(X),
#undef X
    NMATH_INTRINSICS = 3 * GJ_NMATHFNS,
};

static const struct {
    GjMathKind kind;
    int nargs;
    const char *impl;
} math_fns[] = {
#define X(id, m, np, cm, nargs, kind, impl) {kind, nargs, impl},
    GJ_MATH_FUNCS(X)
#undef X
};

static const double math_consts[] = {
#define X(id, m, np, cm, value) value,
    GJ_MATH_CONSTS(X)
#undef X
};

int gj_intrinsic_lookup(const char *ns, const char *name) {
    if (!ns || !name)
        return -1;
    for (int i = 0; i < GJ_NINTRINSICS; i++) {
        if (intrinsics[i].name[0] && strcmp(intrinsics[i].ns, ns) == 0 &&
            strcmp(intrinsics[i].name, name) == 0)
            return i;
    }
    return -1;
}

int gj_intrinsic_lookup_qualified(const char *qualname) {
    const char *dot = strrchr(qualname, '.');
    if (!dot)
        return -1;
    char ns[64];
    size_t n = (size_t)(dot - qualname);
    if (n >= sizeof ns)
        return -1;
    memcpy(ns, qualname, n);
    ns[n] = '\0';
    return gj_intrinsic_lookup(strcmp(ns, "np") == 0 ? "numpy" : ns, dot + 1);
}

int gj_intrinsic_is_namespace(const char *ns) {
    for (int i = 0; i < GJ_NINTRINSICS; i++)
        if (intrinsics[i].name[0] && strcmp(intrinsics[i].ns, ns) == 0)
            return 1;
    return 0;
}

const char *gj_intrinsic_name(GjIntrinsic i) {
    if ((unsigned)i >= GJ_NINTRINSICS)
        return "?";
    const GjIntrinsicRow *e = &intrinsics[i];
    return strcmp(e->ns, "builtins") == 0 ? e->name : e->qualname;
}

const GjIntrinsicRow *gj_intrinsic_row(GjIntrinsic i) { return &intrinsics[i]; }

/* The text of parameter k in params "a, b, c=1" ("c=1"), its length in *len;
   NULL if there is none. */
static const char *param_text(GjIntrinsic i, int k, size_t *len) {
    const char *p = intrinsics[i].params;
    for (int j = 0; *p && j < k; j++) {
        p += strcspn(p, ",");
        p += strspn(p, ", ");
    }
    *len = strcspn(p, ",");
    return *p ? p : NULL;
}

int gj_intrinsic_param_index(GjIntrinsic i, const char *name) {
    size_t len = strlen(name), n;
    const char *p;
    for (int k = 0; (p = param_text(i, k, &n)) != NULL; k++)
        if (strcspn(p, ",=") == len && strncmp(p, name, len) == 0)
            return k;
    return -1;
}

int gj_intrinsic_param_default(GjIntrinsic i, int k, long long *value) {
    size_t n;
    const char *p = param_text(i, k, &n);
    size_t name_len = p ? strcspn(p, ",=") : 0;
    if (!p || name_len == n)
        return 0;
    *value = strtoll(p + name_len + 1, NULL, 0);
    return 1;
}

int gj_intrinsic_is_value(GjIntrinsic i) {
    double value;
    const GjIntrinsicRow *r = &intrinsics[i];
    return gj_intrinsic_constant(i, &value) || (r->rule == GJ_TR_VALUE && r->result);
}

int gj_intrinsic_math_fn(GjIntrinsic i, GjMathNs *ns) {
    if ((int)i < NCORE || (int)i >= NCORE + NMATH_INTRINSICS)
        return -1;
    if (ns)
        *ns = (GjMathNs)(((int)i - NCORE) % 3);
    return ((int)i - NCORE) / 3;
}

GjMathKind gj_math_kind(GjMathFn f) { return math_fns[f].kind; }
int gj_math_nargs(GjMathFn f) { return math_fns[f].nargs; }
const char *gj_math_impl(GjMathFn f) { return math_fns[f].impl; }

int gj_math_has_complex(GjMathFn f) {
    return intrinsics[NCORE + 3 * (int)f + GJ_NS_CMATH].name[0] != '\0';
}

int gj_intrinsic_constant(GjIntrinsic i, double *value) {
    int k = (int)i - NCORE - NMATH_INTRINSICS;
    if (k < 0 || k >= 3 * GJ_NMATHCONSTS)
        return 0;
    *value = math_consts[k / 3];
    return 1;
}

const char *gj_intrinsic_np_type(GjIntrinsic i) {
    /* NP_SCALAR_TYPES closes the main table */
    if ((int)i < (int)GJ_INTR_NPTYPE_BOOL || (int)i >= NCORE)
        return NULL;
    return intrinsics[i].name;
}
