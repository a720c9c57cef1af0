/*
 * nvptx.c - LLVM module -> PTX text, through LLVM's NVPTX backend.
 *
 * Input: the module lower.c built (triple nvptx64-nvidia-cuda, one kernel
 * with the PTX kernel calling convention, libdevice functions declared but
 * not defined).  Output: malloc'd PTX, and optionally the optimised IR.
 *
 * Steps, in gj_nvptx_emit order: verify the module (a lowering bug becomes
 * an INTERNAL diagnostic, never an abort inside a pass); link libdevice if
 * the module calls any __nv_* function - pruned first to the functions the
 * kernel calls and what they call, then internalised, so O3 works on a
 * few functions rather than libdevice's ~500; run the new pass manager
 * with the target machine (its callbacks add NVVMReflect, which folds
 * libdevice's __nvvm_reflect("__CUDA_FTZ") from the nvvm-reflect-ftz flag);
 * rewrite what LLVM's NVPTX backend or ptxas would miscompile (nvptx_fix.c);
 * emit assembly.  The pass pipeline and code generation (for the CPU target
 * too) run inside gj_llvm_guard, so that an LLVM fatal error is a
 * diagnostic (llvmguard.h).
 *
 * Process-wide state is one struct (NvptxProcess): target registration
 * (under pthread_once) and the bytes of each libdevice.10.bc read (under a
 * mutex; the caller names the file in opt->libdevice, or opt->find_libdevice
 * does when first asked).  LLVM modules belong
 * to one LLVMContext, so the cached bytes are parsed into each kernel's own
 * context; only read-only data is shared between threads.
 */
#include "llvmguard.h"
#include "lower.h"
#include "lower_error.h"
#include "narrow.h"
#include "nvptx_fix.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* Everything nvptx.c keeps between compilations.  Written only inside the
   pthread_once routines, read-only afterwards. */
typedef struct NvptxProcess {
    pthread_once_t target_once;
    LLVMTargetRef target;          /* NULL if NVPTX is not registered */
    char *target_error;            /* LLVM's message when target is NULL */

    /* libdevice.10.bc files read so far, by path (opt->libdevice names one;
       the caller's search decides which): read once, then shared read-only. */
    pthread_mutex_t libdevice_lock;
    struct LibdeviceFile *libdevice_files;
} NvptxProcess;

static NvptxProcess nvptx_process = {
    .target_once = PTHREAD_ONCE_INIT,
    .libdevice_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- target ------------------------------------------------------------ */

static void init_target(void) {
    NvptxProcess *p = &nvptx_process;
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &p->target, &p->target_error))
        p->target = NULL;
}

/* The newest sm_XY and PTX ISA version each LLVM release's NVPTX backend
   knows (NVPTX.td); a newer LLVM than listed gets the last row. */
static const struct {
    unsigned llvm_major;
    int max_sm;
    int max_ptx;
} nvptx_limits[] = {
    {17, 90, 82},
    {18, 90, 83},
    {19, 90, 85},
};

static int nvptx_limit_row(void) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    int n = (int)(sizeof nvptx_limits / sizeof nvptx_limits[0]);
    for (int i = 0; i < n; i++)
        if (nvptx_limits[i].llvm_major >= major)
            return i;
    return n - 1;
}

int gj_nvptx_max_sm(void) { return nvptx_limits[nvptx_limit_row()].max_sm; }

LLVMCodeGenOptLevel gj_llvm_codegen_level(int opt_level) {
    switch (opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level) {   /* as gj_llvm_optimise */
    case 0: return LLVMCodeGenLevelNone;
    case 1: return LLVMCodeGenLevelLess;
    case 2: return LLVMCodeGenLevelDefault;
    default: return LLVMCodeGenLevelAggressive;
    }
}

/* A target machine for opt's compute capability, clamped to what LLVM knows. */
static LLVMTargetMachineRef create_target_machine(GjCtx *c, const GjCompileOptions *opt) {
    NvptxProcess *p = &nvptx_process;
    pthread_once(&p->target_once, init_target);
    if (!p->target) {
        gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "LLVM has no NVPTX target: %s",
                 p->target_error ? p->target_error : "not registered");
        return NULL;
    }
    int sm = opt->cc_major * 10 + opt->cc_minor;
    if (sm > gj_nvptx_max_sm())
        sm = gj_nvptx_max_sm();
    char cpu[16], features[16] = "";
    snprintf(cpu, sizeof cpu, "sm_%d", sm);
    if (opt->ptx_version > 0) {
        int ptx = opt->ptx_version;
        if (ptx > nvptx_limits[nvptx_limit_row()].max_ptx)
            ptx = nvptx_limits[nvptx_limit_row()].max_ptx;
        snprintf(features, sizeof features, "+ptx%d", ptx);
    }
    return LLVMCreateTargetMachine(p->target, NVPTX_TRIPLE, cpu, features,
                                   gj_llvm_codegen_level(opt->opt_level), LLVMRelocDefault,
                                   LLVMCodeModelDefault);
}

/* ---- LLVM diagnostics ---------------------------------------------------- */

/* While gj_nvptx_emit runs, the context's diagnostics come here instead of
   LLVM's default handler (which prints to stderr): the first error is kept,
   warnings and remarks are dropped. */
typedef struct DiagCapture {
    char *first_error;   /* LLVMDisposeMessage */
} DiagCapture;

static void capture_diag(LLVMDiagnosticInfoRef di, void *opaque) {
    DiagCapture *cap = opaque;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || cap->first_error)
        return;
    cap->first_error = LLVMGetDiagInfoDescription(di);
}

/* ---- libdevice ----------------------------------------------------------- */

typedef struct LibdeviceFile {
    struct LibdeviceFile *next;
    LLVMMemoryBufferRef bytes;
    char path[];
} LibdeviceFile;

/* The bytes of the libdevice at path, or NULL (*why: LLVM's message, malloc'd). */
static LLVMMemoryBufferRef read_libdevice(const char *path, char **why) {
    NvptxProcess *p = &nvptx_process;
    pthread_mutex_lock(&p->libdevice_lock);
    LibdeviceFile *f = p->libdevice_files;
    while (f && strcmp(f->path, path) != 0)
        f = f->next;
    if (!f) {
        LLVMMemoryBufferRef buf;
        char *msg = NULL;
        if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
            *why = strdup(msg ? msg : "cannot read the file");
            LLVMDisposeMessage(msg);
        } else if ((f = malloc(sizeof *f + strlen(path) + 1))) {
            f->bytes = buf;
            strcpy(f->path, path);
            f->next = p->libdevice_files;
            p->libdevice_files = f;
        } else {
            LLVMDisposeMemoryBuffer(buf);
            *why = strdup("out of memory");
        }
    }
    pthread_mutex_unlock(&p->libdevice_lock);
    return f ? f->bytes : NULL;
}

static int calls_libdevice(LLVMModuleRef mod) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (LLVMIsDeclaration(fn) && len > 5 && strncmp(name, "__nv_", 5) == 0)
            return 1;
    }
    return 0;
}

/* Whether function fn of lib is marked needed; marks it and what its body
   references (calls, function pointers), depth first. */
static void mark_needed(LLVMValueRef fn, LLVMValueRef *needed, int *n, int cap) {
    for (int i = 0; i < *n; i++)
        if (needed[i] == fn)
            return;
    if (*n >= cap)
        return;
    needed[(*n)++] = fn;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef ins = LLVMGetFirstInstruction(bb); ins;
             ins = LLVMGetNextInstruction(ins)) {
            int nops = LLVMGetNumOperands(ins);
            for (int k = 0; k < nops; k++) {
                LLVMValueRef op = LLVMGetOperand(ins, (unsigned)k);
                if (op && LLVMIsAFunction(op) && !LLVMIsDeclaration(op))
                    mark_needed(op, needed, n, cap);
            }
        }
}

/* Drops from lib every function that mod's __nv_* declarations do not
   reach, so linking and optimising touch only those (libdevice's functions
   call few others; its globals are small constant tables, left to O3). */
static void prune_libdevice(LLVMModuleRef mod, LLVMModuleRef lib) {
    enum { CAP = 1024 };
    LLVMValueRef needed[CAP];
    int n = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        LLVMValueRef def = LLVMIsDeclaration(fn) && len > 5 && strncmp(name, "__nv_", 5) == 0
                               ? LLVMGetNamedFunction(lib, name)
                               : NULL;
        if (def && !LLVMIsDeclaration(def))
            mark_needed(def, needed, &n, CAP);
    }
    if (n >= CAP)
        return;   /* keep everything rather than guess */
    for (LLVMValueRef fn = LLVMGetFirstFunction(lib); fn; fn = LLVMGetNextFunction(fn)) {
        int keep = 0;
        for (int i = 0; i < n && !keep; i++)
            keep = needed[i] == fn;
        if (keep || LLVMIsDeclaration(fn))
            continue;
        LLVMBasicBlockRef bb;   /* turn the definition into a declaration */
        while ((bb = LLVMGetFirstBasicBlock(fn)))
            LLVMDeleteBasicBlock(bb);
    }
    LLVMValueRef next;
    for (LLVMValueRef fn = LLVMGetFirstFunction(lib); fn; fn = next) {
        next = LLVMGetNextFunction(fn);
        if (LLVMIsDeclaration(fn) && !LLVMGetFirstUse(fn))
            LLVMDeleteFunction(fn);
    }
}

/* Links libdevice into mod and gives every definition except the kernel
   internal linkage, so O3's global optimisations drop unused ones. */
static GjStatus link_libdevice(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                               DiagCapture *cap, char **linked) {
    GjLoc noloc = {0, -1, -1};
    const char *path = opt->libdevice;
    if (!path && opt->find_libdevice)
        path = opt->find_libdevice(opt->find_libdevice_arg);
    if (!path)
        return gj_error(c, GJ_DIAG_LOWERING, noloc,
                        "this kernel calls math functions, which need NVIDIA's libdevice, and "
                        "none was found: pip install nvidia-nvvm (what `pip install "
                        "\"gpujit[cuda]\"` brings), install a CUDA toolkit (or set CUDA_HOME "
                        "to one), or set GPUJIT_LIBDEVICE to a libdevice.10.bc; "
                        "gpujit.libdevice_path() shows where gpujit looked");
    char *why = NULL;
    LLVMMemoryBufferRef bytes = read_libdevice(path, &why);
    if (!bytes) {
        gj_error(c, GJ_DIAG_LOWERING, noloc, "cannot read libdevice %s: %s", path,
                 why ? why : "out of memory");
        free(why);
        return GJ_ERR;
    }
    if (!(*linked = strdup(path)))
        return gj_error(c, GJ_DIAG_INTERNAL, noloc, "out of memory");
    LLVMModuleRef lib;
    if (LLVMParseBitcodeInContext2(LLVMGetModuleContext(mod), bytes, &lib))
        return gj_error(c, GJ_DIAG_LOWERING, noloc, "cannot read libdevice %s: %s", path,
                        cap->first_error ? cap->first_error : "bad bitcode");
    /* libdevice carries a generic triple and an older data layout; adopt the
       kernel's so the linker has nothing to warn about. */
    LLVMSetTarget(lib, LLVMGetTarget(mod));
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
    prune_libdevice(mod, lib);
    /* What the module exports (the kernel, or the device function that
       compile_ptx(device=True) compiles) stays external; libdevice's
       definitions become internal.  (Linking may replace a declaration's
       value, so the exported functions are remembered by name.) */
    int nexported = 0;
    const char *exported[4];
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        if (!LLVMIsDeclaration(fn) && LLVMGetLinkage(fn) == LLVMExternalLinkage &&
            nexported < (int)(sizeof exported / sizeof exported[0]))
            exported[nexported++] = gj_arena_strdup(&c->arena, LLVMGetValueName(fn));
    if (LLVMLinkModules2(mod, lib))   /* consumes lib */
        return gj_error(c, GJ_DIAG_INTERNAL, noloc, "linking libdevice failed: %s",
                        cap->first_error ? cap->first_error : "unknown error");

    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        int keep = LLVMIsDeclaration(fn) || LLVMGetFunctionCallConv(fn) == LLVMPTXKernelCallConv;
        for (int k = 0; k < nexported && !keep; k++)
            keep = exported[k] && strcmp(exported[k], LLVMGetValueName(fn)) == 0;
        if (!keep)
            LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && strcmp(LLVMGetValueName(g), GJ_ERROR_RECORD_SYMBOL) != 0)
            LLVMSetLinkage(g, LLVMInternalLinkage);   /* the host reads the error record */
    return GJ_OK;
}

/* ---- the stage ------------------------------------------------------------ */

static char *copy_buffer(LLVMMemoryBufferRef buf) {
    size_t n = LLVMGetBufferSize(buf);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, LLVMGetBufferStart(buf), n);
        s[n] = '\0';
    }
    return s;
}

static char *copy_llvm_message(char *msg) {
    char *s = strdup(msg ? msg : "");
    LLVMDisposeMessage(msg);
    return s;
}

/* Runs LLVM's verifier on mod; a failure is an INTERNAL diagnostic (a gpujit
   bug), never an abort.  `when` says which stage ("before optimisation"). */
GjStatus gj_llvm_verify(GjCtx *c, LLVMModuleRef mod, const char *when) {
    char *msg = NULL;
    if (!LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        LLVMDisposeMessage(msg);
        return GJ_OK;
    }
    gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "invalid LLVM IR %s: %s", when,
             msg ? msg : "");
    LLVMDisposeMessage(msg);
    return GJ_ERR;
}

/* LLVM's tuning options that gpujit sets, once per process, for both
   targets (its LLVM is its own: linked statically, symbols hidden).
   Partial unrolling up to 300 instructions, four times LLVM's NVPTX default
   of a quarter of the O3 threshold: the while loops of GPU kernels are
   unrolled as NVIDIA's NVVM unrolls them (the Mandelbrot loop 16 times, as
   nvcc -O3 does, instead of 4); on the host it applies only where the CPU's
   scheduling model enables partial unrolling. */
static pthread_once_t llvm_options_once = PTHREAD_ONCE_INIT;

static void set_llvm_options(void) {
    const char *argv[] = {"gpujit", "-unroll-partial-threshold=300"};
    LLVMParseCommandLineOptions((int)(sizeof argv / sizeof argv[0]), argv, NULL);
}

typedef struct RunPasses {
    LLVMModuleRef mod;
    LLVMTargetMachineRef tm;
    const char *pipeline;
    LLVMPassBuilderOptionsRef options;
    LLVMErrorRef err;
} RunPasses;

static GjStatus run_passes(void *arg) {   /* under gj_llvm_guard */
    RunPasses *r = arg;
    r->err = LLVMRunPasses(r->mod, r->pipeline, r->tm, r->options);
    return GJ_OK;
}

/* Runs the LLVM pass pipeline `pipeline` (the text opt -passes takes) with
   the target machine (so target passes such as NVVMReflect run); a failure
   is an INTERNAL diagnostic. */
GjStatus gj_llvm_run(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *pipeline) {
    pthread_once(&llvm_options_once, set_llvm_options);
    RunPasses r = {mod, tm, pipeline, LLVMCreatePassBuilderOptions(), NULL};
    if (gj_llvm_guard(c, "the LLVM pass pipeline", run_passes, &r) != GJ_OK)
        return GJ_ERR;   /* the options too are left to the leaked pass manager */
    LLVMDisposePassBuilderOptions(r.options);
    LLVMErrorRef err = r.err;
    if (!err)
        return GJ_OK;
    char *msg = LLVMGetErrorMessage(err);
    gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "LLVM pass pipeline %s failed: %s", pipeline,
             msg);
    LLVMDisposeErrorMessage(msg);
    return GJ_ERR;
}

/* LLVM's default<O0..O3> pipeline. */
GjStatus gj_llvm_optimise(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level) {
    char pipeline[32];
    int level = opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
    snprintf(pipeline, sizeof pipeline, "default<O%d>", level);
    return gj_llvm_run(c, mod, tm, pipeline);
}

GjStatus gj_llvm_emit(void *arg) {
    GjLlvmEmit *e = arg;
    e->failed = LLVMTargetMachineEmitToMemoryBuffer(e->tm, e->mod, e->kind, &e->message, &e->out);
    return GJ_OK;
}

static GjStatus emit_ptx(GjCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, char **ptx,
                         DiagCapture *cap) {
    GjLlvmEmit e = {.tm = tm, .mod = mod, .kind = LLVMAssemblyFile};
    if (gj_llvm_guard(c, "NVPTX code generation", gj_llvm_emit, &e) != GJ_OK)
        return GJ_ERR;
    char *msg = e.message;
    LLVMMemoryBufferRef buf = e.out;
    if (e.failed) {
        gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "PTX emission failed: %s",
                 cap->first_error ? cap->first_error
                 : msg            ? msg
                                  : "unknown error");
        LLVMDisposeMessage(msg);
        return GJ_ERR;
    }
    *ptx = copy_buffer(buf);
    LLVMDisposeMemoryBuffer(buf);
    if (*ptx)
        *ptx = gj_nvptx_fix_ptx(*ptx);
    if (!*ptx)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory for PTX");
    return GJ_OK;
}

/* ---- loads first ---------------------------------------------------------- */

/* Whether inst may write memory or have another effect a load must not
   pass: a store, an atomic, a fence, a volatile or atomic load, and any call
   but one of a function that touches no memory (memory(none): sqrt, the
   special registers, libdevice's arithmetic once inlined). */
static int orders_loads(LLVMValueRef inst, unsigned memory_kind) {
    if (LLVMIsALoadInst(inst))
        return LLVMGetVolatile(inst) || LLVMGetOrdering(inst) != LLVMAtomicOrderingNotAtomic;
    if (LLVMIsACallInst(inst)) {
        LLVMAttributeIndex at_fn = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
        LLVMValueRef fn = LLVMGetCalledValue(inst);
        LLVMAttributeRef a =
            fn && LLVMIsAFunction(fn) ? LLVMGetEnumAttributeAtIndex(fn, at_fn, memory_kind) : NULL;
        LLVMAttributeRef site = LLVMGetCallSiteEnumAttribute(inst, at_fn, memory_kind);
        return !((a && LLVMGetEnumAttributeValue(a) == 0) ||
                 (site && LLVMGetEnumAttributeValue(site) == 0));
    }
    return LLVMIsAStoreInst(inst) || LLVMIsAAtomicRMWInst(inst) || LLVMIsAAtomicCmpXchgInst(inst) ||
           LLVMIsAFenceInst(inst) || LLVMIsAVAArgInst(inst);
}

/* The instruction v must follow in block bb: the latest of its operands
   there, the last phi, or `floor` (NULL: the block's start), looking back
   from v. */
static LLVMValueRef must_follow(LLVMValueRef v, LLVMValueRef floor) {
    int n = LLVMGetNumOperands(v);
    for (LLVMValueRef i = LLVMGetPreviousInstruction(v); i && i != floor;
         i = LLVMGetPreviousInstruction(i)) {
        if (LLVMIsAPHINode(i) || LLVMIsALandingPadInst(i))
            return i;
        for (int k = 0; k < n; k++)
            if (LLVMGetOperand(v, (unsigned)k) == i)
                return i;
    }
    return floor;
}

/* Moves v to just after `after` (NULL: the block's start); a load goes
   behind the loads already placed right after `after`, so that loads with
   the same anchor keep their order (loads whose addresses moved up on
   their own each follow their address instead). */
static void move_after(LLVMBuilderRef b, LLVMBasicBlockRef bb, LLVMValueRef v, LLVMValueRef after) {
    LLVMValueRef at = after ? LLVMGetNextInstruction(after) : LLVMGetFirstInstruction(bb);
    while (LLVMIsALoadInst(v) && at != v && LLVMIsALoadInst(at))
        at = LLVMGetNextInstruction(at);
    if (at == v)
        return;
    LLVMInstructionRemoveFromParent(v);
    LLVMPositionBuilderBefore(b, at);
    LLVMInsertIntoBuilder(b, v);
}

/* Moves an address computation of block bb (address arithmetic: no memory,
   no effect) as early as its operands allow, its operands first. */
static void address_first(LLVMBuilderRef b, LLVMBasicBlockRef bb, LLVMValueRef v, int depth) {
    if (depth > 8 || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != bb ||
        !(LLVMIsAGetElementPtrInst(v) || LLVMIsACastInst(v) || LLVMIsABinaryOperator(v)))
        return;
    for (unsigned k = 0, n = (unsigned)LLVMGetNumOperands(v); k < n; k++)
        address_first(b, bb, LLVMGetOperand(v, k), depth + 1);
    move_after(b, bb, v, must_follow(v, NULL));
}

/* Whether inst becomes SASS with a branch in it (the slow paths of IEEE
   division and square root, integer division's subroutine): ptxas does not
   move a load above it. */
static int branches_in_sass(LLVMValueRef inst) {
    LLVMOpcode op = LLVMGetInstructionOpcode(inst);
    if (op == LLVMFDiv || op == LLVMFRem || op == LLVMUDiv || op == LLVMSDiv || op == LLVMURem ||
        op == LLVMSRem)
        return 1;
    LLVMValueRef fn = op == LLVMCall ? LLVMGetCalledValue(inst) : NULL;
    size_t n = 0;
    const char *name = fn && LLVMIsAFunction(fn) ? LLVMGetValueName2(fn, &n) : "";
    return strncmp(name, "llvm.sqrt.", 10) == 0 || strncmp(name, "llvm.nvvm.sqrt.", 15) == 0 ||
           strncmp(name, "llvm.nvvm.rcp.rn.", 17) == 0;
}

/* Moves each plain load of a block, with its address computation, up to
   just after the last instruction it must follow (orders_loads, or its
   address), behind the loads already there.  LLVM's NVPTX backend emits a
   block in IR order and ptxas does not move a load above the branches of
   sqrt.rn's or div.rn's slow paths, so `y = sqrt(t[i]); z = s[i] / x[i]`
   waited for t[i] before asking for s[i] and x[i]: a memory latency each
   instead of one for all (Black-Scholes ran 12% behind nvcc's code, which
   loads first).  Only blocks with such an instruction change: elsewhere
   ptxas orders a block's loads itself, and moving them there cost a
   reduction's unrolled loop 12% on the H200.  Everything moves within its
   block, and a load only past instructions that write no memory: the
   values computed are the same. */
static void loads_first(LLVMModuleRef mod) {
    const char memory[] = "memory";
    unsigned memory_kind = LLVMGetEnumAttributeKindForName(memory, sizeof memory - 1);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb;
             bb = LLVMGetNextBasicBlock(bb)) {
            int slow = 0;
            for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst && !slow;
                 inst = LLVMGetNextInstruction(inst))
                slow = branches_in_sass(inst);
            LLVMValueRef last = NULL;   /* the last instruction loads must follow */
            LLVMValueRef next;
            for (LLVMValueRef inst = slow ? LLVMGetFirstInstruction(bb) : NULL; inst; inst = next) {
                next = LLVMGetNextInstruction(inst);
                if (orders_loads(inst, memory_kind)) {
                    last = inst;
                } else if (LLVMIsALoadInst(inst)) {
                    address_first(b, bb, LLVMGetOperand(inst, 0), 0);
                    move_after(b, bb, inst, must_follow(inst, last));
                }
            }
        }
    LLVMDisposeBuilder(b);
}

/* Erases every llvm.assume (and its condition, if nothing else reads it)
   once the optimiser is done: code generation uses none, and an assumption
   copied into each iteration of an unrolled loop keeps that iteration's
   counter alive (boundscheck's `i < stop` of a range loop cost the
   histogram 9 instructions and 8 registers per 8 iterations). */
static void drop_assumptions(LLVMModuleRef mod) {
    unsigned assume = LLVMLookupIntrinsicID("llvm.assume", strlen("llvm.assume"));
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef inst = LLVMGetFirstInstruction(bb), next; inst; inst = next) {
                next = LLVMGetNextInstruction(inst);
                LLVMValueRef callee = LLVMIsACallInst(inst) ? LLVMGetCalledValue(inst) : NULL;
                if (!callee || !LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) != assume)
                    continue;
                LLVMValueRef cond = LLVMGetOperand(inst, 0);
                LLVMInstructionEraseFromParent(inst);
                /* cond comes before inst, so `next` stays valid */
                if (LLVMIsAInstruction(cond) && !LLVMGetFirstUse(cond))
                    LLVMInstructionEraseFromParent(cond);
            }
}

GjStatus gj_nvptx_emit(GjCtx *c, LLVMModuleRef mod, const GjCompileOptions *opt,
                       GjCompileResult *r) {
    r->ptx = r->llvm_ir = r->libdevice = NULL;
    if (gj_llvm_verify(c, mod, "after lowering") != GJ_OK)
        return GJ_ERR;

    LLVMTargetMachineRef tm = create_target_machine(c, opt);
    if (!tm)
        return GJ_ERR;
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, layout);
    LLVMDisposeTargetData(layout);
    LLVMSetTarget(mod, NVPTX_TRIPLE);

    LLVMContextRef llctx = LLVMGetModuleContext(mod);
    LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(llctx);
    void *old_handler_ctx = LLVMContextGetDiagnosticContext(llctx);
    DiagCapture cap = {0};
    LLVMContextSetDiagnosticHandler(llctx, capture_diag, &cap);

    GjStatus st = GJ_OK;
    LLVMMetadataRef ftz = LLVMValueAsMetadata(
        LLVMConstInt(LLVMInt32TypeInContext(llctx), (opt->fastmath & GJ_FM_FTZ) ? 1 : 0, 0));
    LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz",
                      strlen("nvvm-reflect-ftz"), ftz);
    if (calls_libdevice(mod))
        st = link_libdevice(c, mod, opt, &cap, &r->libdevice);
    gj_timing(c, "target machine, libdevice");
    if (st == GJ_OK)
        st = gj_llvm_optimise(c, mod, tm, opt->opt_level);
    if (st == GJ_OK) {
        gj_lower_drop_proved_sites(mod, r);   /* before code generation renames gj.report */
        drop_assumptions(mod);
        if (opt->opt_level > 0)
            gj_narrow_loop_counters(mod);
        gj_nvptx_fix_module(mod);
        if (opt->opt_level > 0)
            loads_first(mod);
        st = gj_llvm_verify(c, mod, "after optimisation");
    }
    gj_timing(c, "optimise");
    if (st == GJ_OK && opt->want_llvm_ir)
        r->llvm_ir = copy_llvm_message(LLVMPrintModuleToString(mod));
    if (st == GJ_OK)
        st = emit_ptx(c, mod, tm, &r->ptx, &cap);
    gj_timing(c, "NVPTX code generation");

    LLVMContextSetDiagnosticHandler(llctx, old_handler, old_handler_ctx);
    LLVMDisposeMessage(cap.first_error);
    if (!c->llvm_fatal)
        LLVMDisposeTargetMachine(tm);
    if (st != GJ_OK) {
        free(r->llvm_ir);
        free(r->libdevice);
        r->llvm_ir = r->libdevice = NULL;
    }
    return st;
}
