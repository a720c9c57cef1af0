/*
 * cpujit.c - LLVM module -> machine code for the host CPU, through LLVM's
 * ORC JIT (LLJIT, C API).
 *
 * Input: the module lower.c built for the CPU target (target_cpu.c): an
 * internal kernel body and its wrapper `kernel_name` with the executor's
 * ABI (runtime/cpuexec.h), calls of libm and of the runtime's callbacks
 * (gj_cpu_barrier, ...).  Output: the
 * wrapper's address and the JIT resources holding it.
 *
 * Steps, in gj_cpujit_emit order: verify; give the wrapper a name of its own
 * (every kernel lives in LLJIT's one main JITDylib: "<kernel>.<n>", unique
 * in the process, or "<kernel>.<object_id>" for the persistent cache, the
 * same in every process) and internalise every other definition; a body
 * with loops of its own vectorised across threads (vectorize.h); O3 with a
 * target machine for the CPU cpuhost.c chooses (the host's name and
 * features unless GPUJIT_CPU_NAME or GPUJIT_CPU_FEATURES say otherwise, so
 * the code uses the host's vector units); masked memory operations behind a test of their
 * mask (cpu_fix.h); emit an object file ourselves and load it.
 * Loading (gj_cpujit_load, also how a cached object file from another
 * process comes in) adds the object to the JIT under a resource tracker of
 * its own, which gj_cpujit_release removes when the last result using it
 * goes.  The JIT resolves the runtime's
 * callbacks to the addresses the options' runtime_symbols table gives
 * (defined once, as absolute symbols: a statically linked gpujit hides them
 * from dlsym, and compiler/ does not include runtime/) and everything else
 * (libm, memset, libgcc helpers) by searching the process.
 *
 * Process-wide state is one struct (CpuJit) set up under pthread_once;
 * LLJIT is thread-safe, so compilations on several threads share it.
 */
#include "cpu_fix.h"
#include "cpuhost.h"
#include "llvmguard.h"
#include "lower.h"
#include "lower_error.h"
#include "vectorize.h"

#include <inttypes.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* An object file in the JIT, shared by every result that loaded its symbol
   (two kernels compiled from one cached entry). */
typedef struct LoadedObject {
    struct LoadedObject *next;
    char *symbol;
    LLVMOrcResourceTrackerRef rt;
    uint64_t addr;                 /* of symbol */
    int refs;
} LoadedObject;

typedef struct CpuJit {
    pthread_once_t once;
    LLVMOrcLLJITRef jit;           /* NULL if it could not be created */
    LLVMOrcJITDylibRef main;
    LLVMTargetRef target;
    char *triple;                  /* the host's (LLVMDisposeMessage) */
    GjCpuHost cpu;                 /* the CPU code is for (cpuhost.h) */
    char error[512];               /* why jit is NULL */
    GjDiagKind error_kind;         /* UNSUPPORTED: a CPU choice refused */
    atomic_uint_fast64_t next_id;  /* suffix of process-unique kernel names */
    pthread_mutex_t lock;          /* guards runtime_defined and objects */
    int runtime_defined;           /* the runtime symbols are in `main` */
    LoadedObject *objects;         /* loaded, by symbol */
} CpuJit;

static CpuJit cpu_jit = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

/* Swallows errors ORC reports outside a call (a failed materialisation also
   fails the lookup that asked for it, which is where we report it). */
static void ignore_error(void *ctx, LLVMErrorRef err) {
    (void)ctx;
    LLVMConsumeError(err);
}

static void set_error(CpuJit *j, const char *what, LLVMErrorRef err) {
    char *msg = err ? LLVMGetErrorMessage(err) : NULL;
    snprintf(j->error, sizeof j->error, "%s: %s", what, msg ? msg : "unknown error");
    if (msg)
        LLVMDisposeErrorMessage(msg);
}

static void init_jit(void) {
    CpuJit *j = &cpu_jit;
    char *msg = NULL;
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        snprintf(j->error, sizeof j->error, "LLVM has no code generator for this host");
        return;
    }
    j->error_kind = GJ_DIAG_INTERNAL;
    j->triple = LLVMGetDefaultTargetTriple();
    if (LLVMGetTargetFromTriple(j->triple, &j->target, &msg)) {
        snprintf(j->error, sizeof j->error, "no LLVM target for %s: %s", j->triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        j->target = NULL;
        return;
    }
    if (gj_cpuhost_choose(&j->cpu, j->target, j->triple, j->error, sizeof j->error) < 0) {
        j->error_kind = GJ_DIAG_UNSUPPORTED;
        return;
    }
    LLVMErrorRef err = LLVMOrcCreateLLJIT(&j->jit, LLVMOrcCreateLLJITBuilder());
    if (err) {
        set_error(j, "creating the JIT", err);
        j->jit = NULL;
        return;
    }
    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(j->jit), ignore_error,
                                            NULL);
    j->main = LLVMOrcLLJITGetMainJITDylib(j->jit);
    /* LLVM lowers a few operations (double -> half conversion, 128-bit
       division) to calls into the compiler's runtime library.  gpujit carries
       no compiler-rt, so GCC's libgcc_s (which has them, GCC 12+) is made
       visible to the process-wide symbol search below; the handle stays open
       for the life of the process, like the JIT. */
    (void)dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
    LLVMOrcDefinitionGeneratorRef gen;
    err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
    if (!err)
        LLVMOrcJITDylibAddGenerator(j->main, gen);
    if (err) {
        set_error(j, "setting up the JIT's symbols", err);
        LLVMConsumeError(LLVMOrcDisposeLLJIT(j->jit));
        j->jit = NULL;
    }
}

/* Why there is no JIT, as c's diagnostic. */
static GjStatus unavailable(GjCtx *c, const CpuJit *j) {
    return gj_error(c, j->error_kind, (GjLoc){0, -1, -1}, "CPU target unavailable: %s", j->error);
}

static GjStatus jit_error(GjCtx *c, const char *what, LLVMErrorRef err) {
    char *msg = LLVMGetErrorMessage(err);
    gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "CPU JIT: %s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return GJ_ERR;
}

/* Defines the runtime callbacks of kernel code (opt->runtime_symbols) as
   absolute symbols of the main JITDylib, on the first compile that passes
   them; every caller passes the same table. */
static GjStatus define_runtime(GjCtx *c, CpuJit *j, const GjCompileOptions *opt) {
    enum { MAX_SYMBOLS = 64 };
    LLVMOrcCSymbolMapPair syms[MAX_SYMBOLS];
    int n = opt->nruntime_symbols;
    if (n <= 0)
        return GJ_OK;
    if (n > MAX_SYMBOLS)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "too many runtime symbols");
    LLVMErrorRef err = NULL;
    pthread_mutex_lock(&j->lock);
    if (!j->runtime_defined) {
        for (int i = 0; i < n; i++)
            syms[i] = (LLVMOrcCSymbolMapPair){
                LLVMOrcLLJITMangleAndIntern(j->jit, opt->runtime_symbols[i].name),
                {(LLVMOrcExecutorAddress)(uintptr_t)opt->runtime_symbols[i].addr,
                 {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}};
        err = LLVMOrcJITDylibDefine(j->main, LLVMOrcAbsoluteSymbols(syms, (size_t)n));
        j->runtime_defined = !err;
    }
    pthread_mutex_unlock(&j->lock);
    return err ? jit_error(c, "defining the runtime's symbols", err) : GJ_OK;
}

/* A module must not reach the host code generator with NVPTX-only calls
   (an NVVM intrinsic aborts instruction selection; libdevice is not there):
   lowering code that bypasses target.h is reported, not run. */
static GjStatus check_host_calls(GjCtx *c, LLVMModuleRef mod) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (!LLVMIsDeclaration(fn) || !name)
            continue;
        if (strncmp(name, "llvm.nvvm.", 10) == 0 || strncmp(name, "__nv_", 5) == 0)
            return gj_error(c, GJ_DIAG_UNSUPPORTED, (GjLoc){0, -1, -1},
                            "%s is not implemented on the CPU target yet (run on a GPU: "
                            "GPUJIT_TARGET=cuda)",
                            name);
    }
    return GJ_OK;
}

/* Internal linkage for every definition but `keep`, so the objects of
   different kernels never define the same symbol. */
static void internalize(LLVMModuleRef mod, LLVMValueRef keep) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        if (fn != keep && !LLVMIsDeclaration(fn))
            LLVMSetLinkage(fn, LLVMInternalLinkage);
}

static char *copy_message(char *msg) {
    char *out = msg ? strdup(msg) : NULL;
    LLVMDisposeMessage(msg);
    return out;
}

/* The loaded object that defines `symbol`, or NULL; j->lock held. */
static LoadedObject *find_object(CpuJit *j, const char *symbol) {
    for (LoadedObject *o = j->objects; o; o = o->next)
        if (strcmp(o->symbol, symbol) == 0)
            return o;
    return NULL;
}

/* Adds obj (taken) to the JIT under a new resource tracker and looks up
   symbol, unless an object defining it is loaded already; j->lock held. */
static GjStatus add_object(GjCtx *c, CpuJit *j, LLVMMemoryBufferRef obj, const char *symbol,
                           LoadedObject **out) {
    if ((*out = find_object(j, symbol))) {
        LLVMDisposeMemoryBuffer(obj);
        (*out)->refs++;
        return GJ_OK;
    }
    LoadedObject *o = calloc(1, sizeof *o);
    if (!o || !(o->symbol = strdup(symbol))) {
        free(o);
        LLVMDisposeMemoryBuffer(obj);
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    }
    o->rt = LLVMOrcJITDylibCreateResourceTracker(j->main);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(j->jit, o->rt, obj);   /* takes obj */
    LLVMOrcExecutorAddress a = 0;
    if (!err)
        err = LLVMOrcLLJITLookup(j->jit, &a, symbol);
    if (err) {
        jit_error(c, "loading the kernel", err);
        LLVMConsumeError(LLVMOrcResourceTrackerRemove(o->rt));
        LLVMOrcReleaseResourceTracker(o->rt);
        free(o->symbol);
        free(o);
        return GJ_ERR;
    }
    o->addr = a;
    o->refs = 1;
    o->next = j->objects;
    j->objects = o;
    *out = o;
    return GJ_OK;
}

/* The one path into the JIT: obj (taken) loaded, *fn and *code set. */
static GjStatus load_buffer(GjCtx *c, const GjCompileOptions *opt, LLVMMemoryBufferRef obj,
                            const char *symbol, void **fn, void **code) {
    CpuJit *j = &cpu_jit;
    *fn = *code = NULL;
    pthread_once(&j->once, init_jit);
    if (!j->jit) {
        LLVMDisposeMemoryBuffer(obj);
        return unavailable(c, j);
    }
    if (define_runtime(c, j, opt) != GJ_OK) {
        LLVMDisposeMemoryBuffer(obj);
        return GJ_ERR;
    }
    LoadedObject *o;
    pthread_mutex_lock(&j->lock);
    GjStatus st = add_object(c, j, obj, symbol, &o);
    pthread_mutex_unlock(&j->lock);
    if (st != GJ_OK)
        return GJ_ERR;
    *fn = (void *)(uintptr_t)o->addr;
    *code = o;
    return GJ_OK;
}

GjStatus gj_cpujit_load(GjCtx *c, const GjCompileOptions *opt, const void *object, size_t size,
                        const char *symbol, void **fn, void **code) {
    LLVMMemoryBufferRef obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(object, size, symbol);
    if (!obj)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    return load_buffer(c, opt, obj, symbol, fn, code);
}

const GjCpuHost *gj_cpujit_host(GjCtx *c) {
    CpuJit *j = &cpu_jit;
    pthread_once(&j->once, init_jit);
    if (!j->jit) {
        unavailable(c, j);
        return NULL;
    }
    return &j->cpu;
}

/* GPUJIT_DUMP=asm: mod's host assembly on stderr, from a copy of it (code
   generation changes the module it runs on, and the object file must be
   made from the module as it is). */
static void dump_asm(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *name) {
    LLVMModuleRef copy = LLVMCloneModule(mod);
    char *msg = NULL;
    LLVMMemoryBufferRef text = NULL;
    if (copy && !LLVMTargetMachineEmitToMemoryBuffer(tm, copy, LLVMAssemblyFile, &msg, &text)) {
        fprintf(stderr, "---- asm: %s ----\n%.*s\n", name, (int)LLVMGetBufferSize(text),
                LLVMGetBufferStart(text));
        LLVMDisposeMemoryBuffer(text);
    } else {
        fprintf(stderr, "---- asm: %s: %s ----\n", name, msg ? msg : "no assembly");
    }
    LLVMDisposeMessage(msg);
    if (copy)
        LLVMDisposeModule(copy);
}

/* Object code for mod; with opt->object_id a copy of it in r->binary. */
static GjStatus emit_object(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm,
                            const GjCompileOptions *opt, LLVMMemoryBufferRef *obj,
                            GjCompileResult *r) {
    GjLlvmEmit e = {.tm = tm, .mod = mod, .kind = LLVMObjectFile};
    if (gj_llvm_guard(c, "host code generation", gj_llvm_emit, &e) != GJ_OK)
        return GJ_ERR;
    *obj = e.out;
    if (e.failed) {
        gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "CPU code generation failed: %s",
                 e.message ? e.message : "unknown error");
        LLVMDisposeMessage(e.message);
        return GJ_ERR;
    }
    if (!opt->object_id)
        return GJ_OK;
    r->binary_size = LLVMGetBufferSize(*obj);
    if (!(r->binary = malloc(r->binary_size ? r->binary_size : 1))) {
        LLVMDisposeMemoryBuffer(*obj);
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    }
    memcpy(r->binary, LLVMGetBufferStart(*obj), r->binary_size);
    return GJ_OK;
}

GjStatus gj_cpujit_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                        GjCompileResult *r) {
    CpuJit *j = &cpu_jit;
    pthread_once(&j->once, init_jit);
    if (!j->jit)
        return unavailable(c, j);
    if (gj_llvm_verify(c, mod, "after lowering") != GJ_OK || check_host_calls(c, mod) != GJ_OK)
        return GJ_ERR;
    LLVMValueRef wrapper = LLVMGetNamedFunction(mod, r->kernel_name);
    if (!wrapper)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "no kernel %s in the module",
                        r->kernel_name);
    char *name = opt->object_id
                     ? gj_arena_printf(&c->arena, "%s.%s", r->kernel_name, opt->object_id)
                     : gj_arena_printf(&c->arena, "%s.%" PRIuFAST64, r->kernel_name,
                                       atomic_fetch_add(&j->next_id, 1));
    if (!name || !(r->cpu_symbol = strdup(name)))
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    LLVMSetValueName2(wrapper, name, strlen(name));
    internalize(mod, wrapper);

    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        j->target, j->triple, j->cpu.cpu, j->cpu.features, gj_llvm_codegen_level(opt->opt_level),
        LLVMRelocPIC, LLVMCodeModelDefault);
    if (!tm)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1},
                        "no target machine for the host CPU");
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, layout);
    LLVMDisposeTargetData(layout);
    LLVMSetTarget(mod, j->triple);

    GjStatus st = GJ_OK;
    char *row = gj_arena_printf(&c->arena, "%s" GJ_CPU_ROW_SUFFIX, r->kernel_name);
    if (opt->opt_level > 0 && row) {
        st = gj_vec_row(c, mod, LLVMGetNamedFunction(mod, row), tm, j->cpu.vector_bits / 32);
        gj_timing(c, "vectorise");
    }
    if (st == GJ_OK)
        st = gj_llvm_optimise(c, mod, tm, opt->opt_level);
    if (st == GJ_OK) {
        gj_cpu_fix_module(mod, j->cpu.slow_masked_stores);
        gj_lower_drop_proved_sites(mod, r);
    }
    gj_timing(c, "optimise");
    if (st == GJ_OK)
        st = gj_llvm_verify(c, mod, "after optimisation");
    if (st == GJ_OK && opt->want_llvm_ir)
        r->llvm_ir = copy_message(LLVMPrintModuleToString(mod));
    if (st == GJ_OK && (c->dump & GJ_DUMP_ASM))
        dump_asm(mod, tm, name);
    LLVMMemoryBufferRef obj = NULL;
    if (st == GJ_OK)
        st = emit_object(c, mod, tm, opt, &obj, r);
    if (!c->llvm_fatal)
        LLVMDisposeTargetMachine(tm);
    gj_timing(c, "machine code");
    if (st == GJ_OK)
        st = load_buffer(c, opt, obj, name, &r->cpu_fn, &r->cpu_code);
    return st;   /* on failure gj_compile frees what r holds */
}

void gj_cpujit_release(void *code) {
    if (!code)
        return;
    CpuJit *j = &cpu_jit;
    LoadedObject *o = code;
    pthread_mutex_lock(&j->lock);
    /* under the lock: a load of the same symbol must not find it half gone */
    if (--o->refs == 0) {
        for (LoadedObject **p = &j->objects; *p; p = &(*p)->next)
            if (*p == o) {
                *p = o->next;
                break;
            }
        LLVMConsumeError(LLVMOrcResourceTrackerRemove(o->rt));
        LLVMOrcReleaseResourceTracker(o->rt);
        free(o->symbol);
        free(o);
    }
    pthread_mutex_unlock(&j->lock);
}
