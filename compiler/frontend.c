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

GjStatus gj_front_end(GjCtx *c, const GjCodeView *code, int is_device, GjSpec *self, GjFunc **out) {
    GjBcCode bc;
    GjFunc *f = NULL;
    *out = NULL;
    /* require: code->argtypes for every parameter */
    if (gj_bc_decode(c, code, &bc) != GJ_OK)                    /* dis -> instructions */
        return GJ_ERR;
    dump_bytecode(c, code, &bc);
    if (gj_build_func(c, code, &bc, &f) != GJ_OK ||            /* -> IR: blocks, temps */
        gj_ir_verify(c, f, "build") != GJ_OK)
        return GJ_ERR;
    dump_ir(c, GJ_DUMP_IR, code->name, f);
    if (gj_check_assigned(c, f) != GJ_OK ||                    /* require: IR; reads */
        gj_ir_verify(c, f, "definite assignment") != GJ_OK)    /*   of locals checked */
        return GJ_ERR;
    mark(c, self, "build");
    f->is_device = is_device;
    if (self) {
        self->f = f;
        self->busy = 1;
    }
    GjStatus st = gj_infer_func(c, f);                         /* require: IR -> types, */
    if (self)                                                  /*   calls' specialisations */
        self->busy = 0;
    if (st != GJ_OK || gj_ir_verify(c, f, "type inference") != GJ_OK)
        return GJ_ERR;
    dump_ir(c, GJ_DUMP_TYPES, qualname(code), f);
    mark(c, self, "infer");
    *out = f;
    return GJ_OK;
}
