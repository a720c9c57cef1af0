/*
 * frontend.h - the front end, once: code view -> typed IR.
 *
 * gj_front_end() runs every pass before lowering, in order, for the
 * compile's own function (compile.c) and each device-function
 * specialisation (devfunc.c) alike:
 *
 *     decode (bytecode.c) -> build (build.c) -> definite assignment
 *         (defassign.c) -> type inference (typeinfer.c)
 *
 * verifying the IR after each pass that makes or changes it (irverify.c,
 * when c->verify_ir) and printing the GPUJIT_DUMP stages bytecode, ir and
 * types to stderr.  Nothing else runs these passes or prints these stages.
 */
#ifndef GJ_FRONTEND_H
#define GJ_FRONTEND_H

#include "ir.h"

/* Typed IR of code (its argtypes set) in *out.  self is the specialisation
   being compiled: busy while typed, so a call back to it is recursion, and
   self->f the function once built; NULL when nothing can call it.  Only the
   compile's own function (self->callee NULL) marks GPUJIT_DUMP timing. */
GjStatus gj_front_end(GjCtx *c, const GjCodeView *code, int is_device, GjSpec *self, GjFunc **out);

#endif
