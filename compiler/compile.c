/*
 * compile.c - the compiler's driver (compile.h): runs the passes in order on
 * one code object and one argument-type signature, and copies out what
 * outlives the compilation (PTX, the launch plan, the inspect_types text).
 *
 * gj_compile() lists the pipeline, one pass a line with what it requires:
 * the front end (frontend.h's gj_front_end, which lists its own passes and
 * is the one that device functions go through too), the written-arrays
 * analysis, then lowering and code generation.  Each pass records a
 * diagnostic in the GjCtx and returns GJ_ERR on failure, and nothing of a
 * failed compile reaches the caller's GjCompileResult.  GPUJIT_DUMP stages
 * (c->dump) are printed to stderr by the pass lists, never by a pass:
 * bytecode, ir and types by frontend.c, llvm and ptx here.
 *
 * gj_diag_render_one() turns a diagnostic into compiler-style text:
 *
 *     kernel.py:12:9: typing error: cannot assign float literal to 'v', ...
 *         v = 1.5
 *         ^~~~~~~
 *     during: typing of assignment to 'v' at kernel.py:12
 */
#include "compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "frontend.h"
#include "ir.h"
#include "lower.h"

void gj_compile_options_default(GjCompileOptions *o) {
    memset(o, 0, sizeof *o);   /* padding too: see GJ_CACHE_OPTIONS */
    o->cc_major = 9;
    o->cc_minor = 0;
    o->opt_level = 3;
    o->contract = 1;
    o->cpu_thread_loops = 1;
}

/* The version gpujit was built against; the shared libLLVM's soname pins the
   major version, so it is also the one loaded. */
const char *gj_llvm_version(void) { return LLVM_VERSION_STRING; }

GjStatus gj_cpu_info(GjCtx *c, GjCpuInfo *out) {
    const GjCpuHost *h = gj_cpujit_host(c);
    if (!h)
        return GJ_ERR;
    *out = (GjCpuInfo){.cpu = h->cpu,
                       .features = h->features,
                       .isa = h->isa_name,
                       .chosen_by = h->chosen_by,
                       .vector_bits = h->vector_bits,
                       .slow_masked_stores = h->slow_masked_stores,
                       .host_cpu = h->host_cpu,
                       .host_isa = h->host_isa_name};
    return GJ_OK;
}

void gj_result_free(GjCompileResult *r) {
    for (int i = 0; r->params && i < r->nparams; i++)
        free((char *)r->params[i].name);
    free(r->params);
    for (int i = 0; r->error_sites && i < r->nerror_sites; i++) {
        free(r->error_sites[i].message);
        free(r->error_sites[i].exception);
    }
    free(r->error_sites);
    free(r->kernel_name);
    free(r->ptx);
    free(r->llvm_ir);
    free(r->type_dump);
    free(r->return_type);
    free(r->cpu_symbol);
    free(r->binary);
    free(r->libdevice);
    gj_cpujit_release(r->cpu_code);
    memset(r, 0, sizeof *r);
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* The exported function's symbol: the C ABI's name, or "_gj_" + the
   qualname (symbol.h). */
static char *kernel_name(const GjCodeView *code, const GjCompileOptions *opt) {
    if (opt->entry_name)
        return xstrdup(opt->entry_name);
    const char *q = code->qualname ? code->qualname : code->name ? code->name : "kernel";
    return gj_sym_of_python_name("_gj_", q);
}

/* Scalars and arrays in a value of type t: 1, or a tuple's leaves (nested
   tuples flattened depth-first). */
static int leaf_count(const GjType *t) {
    if (t->kind != GJ_TK_TUPLE)
        return 1;
    int n = 0;
    for (int k = 0; k < t->n; k++)
        n += leaf_count(t->elems[k]);
    return n;
}

/* Plans the leaves of one parameter `name` of type t from r->params[r->nparams]
   on: a tuple's items as "name[0]", "name[1][0]"... */
static GjStatus plan_param(GjCtx *c, GjCompileResult *r, const char *name, const GjType *t,
                           GjLoc loc) {
    if (t->kind == GJ_TK_TUPLE) {
        for (int k = 0; k < t->n; k++) {
            char item[200];
            snprintf(item, sizeof item, "%s[%d]", name, k);
            if (plan_param(c, r, item, t->elems[k], loc) != GJ_OK)
                return GJ_ERR;
        }
        return GJ_OK;
    }
    GjParamPlan *p = &r->params[r->nparams++];
    if (!(p->name = xstrdup(name)))
        return gj_error(c, GJ_DIAG_INTERNAL, loc, "out of memory");
    const GjType *scalar = t->kind == GJ_TK_ARRAY ? t->dtype : gj_ty_concrete(t);
    if (!gj_ty_is_scalar(scalar))
        return gj_error(c, GJ_DIAG_UNSUPPORTED, loc, "parameter '%s' of type %s is not supported",
                        name, t->name);
    p->is_array = t->kind == GJ_TK_ARRAY;
    p->ndim = p->is_array ? t->ndim : 0;
    snprintf(p->dtype, sizeof p->dtype, "%s", scalar->name);
    p->itemsize = gj_ty_itemsize(scalar);
    r->nkernel_params += p->is_array ? 1 + 2 * p->ndim : 1;
    return GJ_OK;
}

/* The launch plan's parameter layout (compile.h's kernel parameter ABI):
   one entry per scalar or array, tuples flattened. */
static GjStatus plan_params(GjCtx *c, const GjCodeView *code, GjCompileResult *r) {
    GjLoc loc = {code->firstlineno, -1, -1};
    int leaves = 0;
    for (int32_t i = 0; i < code->argcount; i++) {
        const char *name = i < code->nvarnames ? code->varnames[i] : "?";
        if (!code->argtypes || !code->argtypes[i])
            return gj_error(c, GJ_DIAG_INTERNAL, loc, "no type given for parameter '%s'", name);
        leaves += leaf_count(code->argtypes[i]);
    }
    r->params = calloc((size_t)(leaves > 0 ? leaves : 1), sizeof *r->params);
    if (!r->params)
        return gj_error(c, GJ_DIAG_INTERNAL, loc, "out of memory");
    for (int32_t i = 0; i < code->argcount; i++)
        if (plan_param(c, r, i < code->nvarnames ? code->varnames[i] : "?", code->argtypes[i],
                       loc) != GJ_OK)
            return GJ_ERR;
    return GJ_OK;
}

/* inspect_types() text: each Python variable and its type, then the typed IR. */
static char *type_dump(const GjFunc *f) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    for (int32_t v = 0; v < f->nvars; v++) {
        if (f->vars[v].kind != GJ_VAR_STACK && f->vars[v].type)
            fprintf(out, "%s: %s\n", f->vars[v].name, f->vars[v].type->name);
    }
    fprintf(out, "\n");
    gj_ir_dump(f, out);
    fclose(out);
    return text;
}

static GjStatus lower_and_emit(GjCtx *c, GjFunc *f, const GjCompileOptions *opt,
                               GjCompileResult *r) {
    LLVMContextRef llctx = LLVMContextCreate();
    LLVMModuleRef mod = NULL;
    GjCompileOptions o = *opt;
    o.want_llvm_ir = opt->want_llvm_ir || (c->dump & GJ_DUMP_LLVM);
    if (o.target == GJ_TARGET_CPU)
        o.lineinfo = 0;   /* .loc directives are for PTX consumers */

    GjStatus st = gj_lower_kernel(c, f, &o, r->kernel_name, llctx, &mod, r);
    gj_timing(c, "lower");
    if (st == GJ_OK && o.target == GJ_TARGET_CPU)
        st = gj_cpujit_emit(c, mod, &o, r);
    else if (st == GJ_OK)
        st = gj_nvptx_emit(c, mod, &o, r);
    if (!c->llvm_fatal) {   /* else leaked, as LLVM's fatal error left them (llvmguard.h) */
        if (mod)
            LLVMDisposeModule(mod);
        LLVMContextDispose(llctx);
    }
    gj_timing(c, o.target == GJ_TARGET_CPU ? "host code (JIT)" : "LLVM module freed");

    if (st == GJ_OK && (c->dump & GJ_DUMP_LLVM) && r->llvm_ir)
        fprintf(stderr, "---- llvm: %s ----\n%s\n", r->kernel_name, r->llvm_ir);
    if (st == GJ_OK && (c->dump & GJ_DUMP_PTX) && r->ptx)
        fprintf(stderr, "---- ptx: %s ----\n%s\n", r->kernel_name, r->ptx);
    if (!opt->want_llvm_ir) {
        free(r->llvm_ir);
        r->llvm_ir = NULL;
    }
    return st;
}

/* Which array parameters the kernel may write (effects.c), into the plan;
   a tuple parameter that may be written marks each of its arrays. */
static GjStatus written_params(GjCtx *c, GjFunc *f, GjCompileResult *r) {
    char *written = GJ_NEW_N(&c->arena, char, f->code->argcount + 1);
    if (!written)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    if (gj_effects_written(c, f, written) != GJ_OK)
        return GJ_ERR;
    for (int i = 0, leaf = 0; i < f->code->argcount; i++) {
        int n = leaf_count(f->code->argtypes[i]);
        for (int k = 0; k < n && leaf < r->nparams; k++, leaf++)
            r->params[leaf].written = written[i] && (n == 1 || r->params[leaf].is_array);
    }
    return GJ_OK;
}

/* The compile's own function through the front end; it is in the
   specialisation table, busy while typed, so a device function calling it
   back is reported as recursion (devfunc.c). */
static GjStatus front_end(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt,
                          GjFunc **f) {
    GjSpec *root = GJ_NEW(&c->arena, GjSpec);
    if (!root)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    *root = (GjSpec){.next = c->specs};
    c->specs = root;
    return gj_front_end(c, code, opt->device, root, f);
}

/* What the result says of the function besides its code: the exported
   name, the inspect_types text, the return type. */
static GjStatus describe(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt,
                         const GjFunc *f, GjCompileResult *r) {
    const char *bad_name = opt->entry_name ? gj_sym_c_name_problem(opt->entry_name) : NULL;
    if (bad_name)   /* the caller's to check (compile_ptx's ValueError): PTX could not say it */
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "entry name '%s' %s",
                        opt->entry_name, bad_name);
    if (!(r->kernel_name = kernel_name(code, opt)) || !(r->type_dump = type_dump(f)) ||
        !(r->return_type = xstrdup(f->ret_type->name)))
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    return GJ_OK;
}

GjStatus gj_compile(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt,
                    GjCompileResult *out) {
    GjCompileResult r = {0};
    GjFunc *f = NULL;
    if (!c->filename)
        c->filename = code->filename;
    if (!c->funcname)
        c->funcname = code->qualname ? code->qualname : code->name;
    c->code = code;

    /* The pipeline, one pass a line, each with what it requires. */
    if (plan_params(c, code, &r) != GJ_OK)       /* require argtypes; -> parameter ABI */
        goto fail;
    gj_timing(c, "code view");                   /* the caller's, until now */
    if (front_end(c, code, opt, &f) != GJ_OK)    /* -> typed IR, callees' too (frontend.h) */
        goto fail;
    if (written_params(c, f, &r) != GJ_OK)       /* require types; -> arrays written */
        goto fail;
    if (describe(c, code, opt, f, &r) != GJ_OK)  /* require types; -> name, inspect_types */
        goto fail;
    if (lower_and_emit(c, f, opt, &r) != GJ_OK)  /* require types, calls' specs; -> LLVM, */
        goto fail;                               /*   then PTX or host code */
    *out = r;
    return GJ_OK;

fail:
    if (!c->diag)
        gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1},
                 "compilation failed without a diagnostic");
    gj_result_free(&r);
    return GJ_ERR;
}

/* ---- rendering diagnostics -------------------------------------------- */

/* Prints the source line and a caret under loc's columns (UTF-8 byte
   offsets; the caret counts characters, and keeps tabs so it lines up). */
static void render_caret(FILE *out, const char *text, GjLoc loc) {
    size_t len = strcspn(text, "\r\n");
    fprintf(out, "    %.*s\n", (int)len, text);
    if (loc.col < 0 || (size_t)loc.col > len)
        return;
    size_t end = loc.end_col > loc.col && (size_t)loc.end_col <= len ? (size_t)loc.end_col
                                                                     : (size_t)loc.col + 1;
    fprintf(out, "    ");
    for (size_t i = 0; i < (size_t)loc.col; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch & 0xC0) != 0x80)
            fputc(ch == '\t' ? '\t' : ' ', out);
    }
    fputc('^', out);
    for (size_t i = (size_t)loc.col + 1; i < end; i++) {
        if (((unsigned char)text[i] & 0xC0) != 0x80)
            fputc('~', out);
    }
    fputc('\n', out);
}

const char *gj_diag_file(const GjCtx *c, const GjDiag *d, const GjCodeView *code) {
    if (d->code)   /* the error is in a device function the kernel calls */
        code = d->code;
    return code && code->filename ? code->filename : c->filename;
}

char *gj_diag_render_one(const GjCtx *c, const GjDiag *d, const GjCodeView *code, const char *src) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    const char *file = gj_diag_file(c, d, code);
    if (file && d->loc.line > 0 && d->loc.col >= 0)
        fprintf(out, "%s:%d:%d: ", file, d->loc.line, d->loc.col + 1);
    else if (file && d->loc.line > 0)
        fprintf(out, "%s:%d: ", file, d->loc.line);
    else if (file)
        fprintf(out, "%s: ", file);
    fprintf(out, "%s: %s\n", gj_diag_kind_text(d->kind), d->message);
    if (src && d->loc.line > 0)
        render_caret(out, src, d->loc);
    for (int i = 0; i < d->nnotes; i++) {
        const char *note = d->notes[i];
        fprintf(out, "%s%s\n", strncmp(note, "during", 6) == 0 ? "" : "during: ", note);
    }
    fclose(out);
    /* No trailing newline: the text becomes an exception message. */
    if (text && len > 0 && text[len - 1] == '\n')
        text[len - 1] = '\0';
    return text;
}
