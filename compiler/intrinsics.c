/*
 * intrinsics.c - name lookup in the intrinsics tables (intrinsics.h).
 *
 * The tables are small (a few hundred entries) and looked up once per
 * GLOBAL or GETATTR during typing, so a linear scan is the clearest choice.
 * The array below lists every intrinsic in GjIntrinsic's order: the main
 * table, then three entries (math, numpy, cmath) per math-table row; an
 * entry whose name is "" does not exist and is never found.
 */
#include "intrinsics.h"

#include <math.h>
#include <string.h>

typedef struct Entry {
    const char *ns;
    const char *name;       /* "": no such function in this namespace */
    const char *qualname;   /* "gpujit.grid", "math.sqrt"; builtins bare: "range" */
} Entry;

#define MATH_ENTRIES(id, m, np, cm, ...)                                               \
    {"math", m, "math." m}, {"numpy", np, "numpy." np}, {"cmath", cm, "cmath." cm},

static const Entry intrinsics[] = {
#define X(id, ns, pyname, doc) {ns, pyname, ns "." pyname},
    GJ_INTRINSICS(X)
#undef X
    GJ_MATH_FUNCS(MATH_ENTRIES)
    GJ_MATH_CONSTS(MATH_ENTRIES)
};

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

const char *gj_intrinsic_name(GjIntrinsic i) {
    if ((unsigned)i >= GJ_NINTRINSICS)
        return "?";
    const Entry *e = &intrinsics[i];
    return strcmp(e->ns, "builtins") == 0 ? e->name : e->qualname;
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
