/*
 * symbol.c - the names of Python functions in LLVM modules (symbol.h says
 * which names a module holds and why they never collide).
 */
#include "symbol.h"

#include <stdlib.h>
#include <string.h>

static int ident_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

char *gj_sym_of_python_name(const char *prefix, const char *name) {
    size_t np = strlen(prefix), n = strlen(name);
    char *s = malloc(np + n + 1);
    if (!s)
        return NULL;
    memcpy(s, prefix, np);
    for (size_t i = 0; i < n; i++)   /* byte by byte: UTF-8 is never kept */
        s[np + i] = ident_char(name[i]) ? name[i] : '_';
    s[np + n] = '\0';
    return s;
}

const char *gj_sym_c_name_problem(const char *name) {
    if (!name[0])
        return "is empty";
    if (name[0] >= '0' && name[0] <= '9')
        return "starts with a digit";
    if (strcmp(name, "_") == 0)
        return "is a lone '_', which PTX does not take as a name";
    for (const char *p = name; *p; p++)
        if (!ident_char(*p))
            return "has a character other than ASCII letters, digits and '_' (a C ABI name is "
                   "a C identifier)";
    /* what gpujit's PTX calls (target_nvptx.c's vprintf_name and math_name) */
    if (strcmp(name, "vprintf") == 0)
        return "is CUDA's vprintf, which gpujit's PTX calls for print()";
    if (strncmp(name, "__nv_", 5) == 0)
        return "starts with __nv_, as libdevice's functions, which gpujit's PTX calls";
    return NULL;
}
