/*
 * frontend.c - the front end's pass list (frontend.h): one code view in, its
 * typed IR out, in the caller's GjCtx (arena, interned types, first error).
 *
 * Each pass states what it requires; after each pass that makes or changes
 * IR the verifier checks ir.h's invariants for it (a no-op unless
 * c->verify_ir), and the stage it produced is dumped here, so a pass never
 * prints.  Type inference may re-enter gj_front_end, through devfunc.c, for
 * the device functions a call reaches; a specialisation is busy meanwhile.
 */
#include "frontend.h"

#include <stdio.h>

#include "bytecode.h"

static const char *qualname(const GjCodeView *code) {
    return code->qualname ? code->qualname : code->name;
}

/* GPUJIT_DUMP's stages of the front end, as each pass leaves them. */
static void dump_bytecode(const GjCtx *c, const GjCodeView *code, const GjBcCode *bc) {
    if (!(c->dump & GJ_DUMP_BYTECODE))
        return;
    fprintf(stderr, "--- bytecode of %s (Python %d.%d) ---\n", code->name, code->py_major,
            code->py_minor);
    gj_bc_dump(bc, stderr);
}

static void dump_ir(const GjCtx *c, int stage, const char *header, const GjFunc *f) {
    if (!(c->dump & stage))
        return;
    if (stage == GJ_DUMP_IR)
        fprintf(stderr, "--- IR of %s ---\n", header);
    else
        fprintf(stderr, "---- types: %s ----\n", header);
    gj_ir_dump(f, stderr);   /* with types once inferred */
}

static void mark(GjCtx *c, const GjSpec *self, const char *stage) {
    if (!self || !self->callee)   /* a device function's time is its caller's */
        gj_timing(c, stage);
}

/* Type inference of f, self (when there is one) busy meanwhile, so that a
   call reaching it again is found to be recursion. */
static GjStatus infer(GjCtx *c, GjFunc *f, int is_device, GjSpec *self) {
    f->is_device = is_device;
    if (!self)
        return gj_infer_func(c, f);
    self->f = f;
    self->busy = 1;
    GjStatus st = gj_infer_func(c, f);
    self->busy = 0;
    return st;
}

GjStatus gj_front_end(GjCtx *c, const GjCodeView *code, int is_device, GjSpec *self, GjFunc **out) {
    GjBcCode bc;
    GjFunc *f = NULL;
    *out = NULL;
    /* The passes, one a line, each with what it requires and makes. */
    if (gj_bc_decode(c, code, &bc) != GJ_OK)              /* require argtypes; -> instructions */
        return GJ_ERR;
    dump_bytecode(c, code, &bc);
    if (gj_build_func(c, code, &bc, &f) != GJ_OK ||       /* require instructions; -> IR */
        gj_ir_verify(c, f, "build") != GJ_OK)
        return GJ_ERR;
    dump_ir(c, GJ_DUMP_IR, code->name, f);
    if (gj_check_assigned(c, f) != GJ_OK ||               /* require IR; -> reads checked */
        gj_ir_verify(c, f, "definite assignment") != GJ_OK)
        return GJ_ERR;
    mark(c, self, "build");
    if (infer(c, f, is_device, self) != GJ_OK ||          /* require IR; -> types, calls' specs */
        gj_ir_verify(c, f, "type inference") != GJ_OK)
        return GJ_ERR;
    dump_ir(c, GJ_DUMP_TYPES, qualname(code), f);
    mark(c, self, "infer");
    *out = f;
    return GJ_OK;
}
