/*
 * llvmguard.c - LLVM's fatal errors as diagnostics (llvmguard.h says how,
 * docs/internals/kernel-code.md says why this is safe enough and where it stops).
 *
 * State: LLVM's handler takes no argument, so the guard it returns to is
 * thread-local (each thread compiles on its own); the handler is installed
 * once per process, as the targets' process-wide structs are set up.
 */
#include "llvmguard.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>

#include <llvm-c/ErrorHandling.h>

typedef struct Guard {
    struct Guard *outer;    /* the guard this one is inside, or NULL */
    jmp_buf jump;
} Guard;

static _Thread_local Guard *innermost;
/* LLVM's message, copied by the handler: thread storage, not the guard's
   (an automatic object written after setjmp is indeterminate after the
   jump, C11 7.13.2.1). */
static _Thread_local char fatal_message[1024];

static void on_fatal_error(const char *reason) {
    Guard *g = innermost;
    if (!g) {   /* not inside gpujit's compile: what LLVM would print, then its exit */
        fprintf(stderr, "LLVM ERROR: %s\n", reason);
        return;
    }
    snprintf(fatal_message, sizeof fatal_message, "%s", reason);
    innermost = g->outer;
    longjmp(g->jump, 1);
}

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void install(void) { LLVMInstallFatalErrorHandler(on_fatal_error); }

GjStatus gj_llvm_guard(GjCtx *c, const char *what, GjStatus (*fn)(void *arg), void *arg) {
    pthread_once(&install_once, install);
    Guard g = {.outer = innermost};
    if (setjmp(g.jump)) {
        c->llvm_fatal = 1;
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1},
                        "LLVM stopped with a fatal error in %s: %s (gpujit goes on, leaving "
                        "this compile's LLVM memory unfreed)",
                        what, fatal_message);
    }
    innermost = &g;
    GjStatus st = fn(arg);
    innermost = g.outer;
    return st;
}
