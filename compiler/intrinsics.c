/*
 * intrinsics.c - name lookup in the intrinsics table (intrinsics.h).
 *
 * The table is small (a few dozen entries) and looked up once per GLOBAL or
 * GETATTR during typing, so a linear scan is the clearest choice.
 */
#include "intrinsics.h"

#include <string.h>

static const struct {
    const char *ns;
    const char *name;
    const char *qualname;   /* "gpujit.grid", "math.sqrt"; builtins bare: "range" */
} intrinsics[] = {
#define X(id, ns, pyname, doc) {ns, pyname, ns "." pyname},
    GJ_INTRINSICS(X)
#undef X
};

int gj_intrinsic_lookup(const char *ns, const char *name) {
    if (!ns || !name)
        return -1;
    for (int i = 0; i < GJ_NINTRINSICS; i++) {
        if (strcmp(intrinsics[i].ns, ns) == 0 && strcmp(intrinsics[i].name, name) == 0)
            return i;
    }
    return -1;
}

const char *gj_intrinsic_name(GjIntrinsic i) {
    if ((unsigned)i >= GJ_NINTRINSICS)
        return "?";
    return strcmp(intrinsics[i].ns, "builtins") == 0 ? intrinsics[i].name : intrinsics[i].qualname;
}
