/*
 * lower_error.h - run-time checks that report an error to the host
 * (lower_error.c): error sites, the checks that branch to them, and the
 * launch plan's copy of the sites.  The sites of a module's functions share
 * one list, owned by gj_lower_kernel (L->errors).
 */
#ifndef GJ_LOWER_ERROR_H
#define GJ_LOWER_ERROR_H

#include "lower_base.h"

/* One error site of a module, in index order. */
typedef struct GjErrorSiteIR {
    GjErrorKind kind;
    int axis;                     /* GJ_ERROR_INDEX */
    int unsigned_index;           /* GjErrorSite.unsigned_index */
    const char *message;          /* in the arena */
    const char *exception;        /* GJ_ERROR_RAISE: "module:qualname"; else NULL */
} GjErrorSiteIR;

typedef struct GjErrorSites {
    GjErrorSiteIR *sites;
    int32_t n, cap;
} GjErrorSites;

/* One index of an access, for gj_lower_check_bounds (i64 values). */
typedef struct GjIndexCheck {
    LLVMValueRef index;           /* as written (reported) */
    LLVMValueRef wrapped;         /* a negative one plus the extent (checked) */
    LLVMValueRef extent;
    int axis;
    int is_unsigned;              /* of an unsigned type: reported as a uint64 */
} GjIndexCheck;

/* A new error site at L->loc: its kind, the exception class of a raise
   ("module:qualname", else NULL), the axis of an index, and the printf-style
   text that the message ends with (then the file and line); its index, or
   -1 with a diag. */
int32_t gj_lower_error_site(GjLower *L, GjErrorKind kind, const char *exception, int axis,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Records site with values a and b (i64, or NULL for 0) in the error record,
   unless another thread came first; the builder goes on in a new block. */
GjStatus gj_lower_report(GjLower *L, int32_t site, LLVMValueRef a, LLVMValueRef b);
/* br ok, then, unlikely, with weights that lay the unlikely block out of line. */
void gj_lower_branch_unlikely(GjLower *L, LLVMValueRef ok, LLVMBasicBlockRef then,
                              LLVMBasicBlockRef unlikely);
/* A run-time check at L->loc (debug builds): where `ok` (i1) is false, the
   thread records error site (kind, the printf-style message) with values a
   and b (i64, or NULL for 0) in the error record, unless another thread
   came first; both paths go on in a new block, where the builder is left. */
GjStatus gj_lower_check(GjLower *L, LLVMValueRef ok, GjErrorKind kind, LLVMValueRef a,
                        LLVMValueRef b, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* boundscheck: the thread goes on (in a new block) where each of the n
   indices is in [0, extent) after wrapping; where one is not, it reports a
   site of `kind` (GJ_ERROR_INDEX, GJ_ERROR_TUPLE_INDEX) for the first such
   axis, naming `subject` ("array 'a'"), and ends (gj_lower_end_thread). */
GjStatus gj_lower_check_bounds(GjLower *L, const char *subject, GjErrorKind kind, int n,
                               const GjIndexCheck *ix);
/* Copies the module's sites into plan (malloc-owned). */
GjStatus gj_lower_error_sites(GjLower *L, GjCompileResult *plan);

/* After the last optimisation, before code generation (which may rename
   the function: NVPTX makes gj.report gj_$_report): where no call of the
   module's reporting function (lower_error.c's gj.report) is left, LLVM
   proved every check and removed it, so no site can fail: plan's error
   sites are freed and its count made 0, and a launch of the kernel neither
   waits for it nor reads its record. */
void gj_lower_drop_proved_sites(LLVMModuleRef mod, GjCompileResult *plan);

#endif
