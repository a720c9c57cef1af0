/*
 * cpuhost.c - the CPU that the CPU target's code is for, and its vectors.
 *
 * By default the host's: LLVMGetHostCPUName and LLVMGetHostCPUFeatures (a
 * complete list: +f or -f for each feature LLVM detects on the host).  Two
 * variables change it, read once, when the JIT starts (the process's first
 * CPU compile or cache lookup): GPUJIT_CPU_NAME=haswell compiles for that
 * LLVM CPU with its own features ("host" is the default), and
 * GPUJIT_CPU_FEATURES=-avx512f appends LLVM features to the host's or the
 * named CPU's (LLVM applies them in order, and turning one off turns off
 * those that imply it).  The result keys the persistent cache
 * (GjCpuHost.key, cache.c), so an object file made for one choice is never
 * loaded for another.  It is how to compile as an AVX2 host would on an
 * AVX-512 one (benchmarks/README.md), or the same code on mixed machines.
 *
 * What the choice's vectors are: the host's feature list says (+avx512f
 * with 512-bit registers, +avx2, +avx), but LLVM's C API says nothing of a
 * named CPU's features, so for a choice the code generator is asked.  A
 * probe module adds two 512-bit vectors of floats and two of 32-bit
 * integers, and the x86 registers its assembly names tell the instruction
 * set: zmm, AVX-512; ymm for both, AVX2; ymm for the floats alone, AVX;
 * else SSE.  (It costs about 3 ms, most of it LLVM's code generator
 * starting, which a process that loads its kernels from the persistent
 * cache never pays otherwise; so the host's own choice is not probed.)
 * vectorize.c takes its width from that.
 *
 * Code the host cannot run must not be made (a kernel would die of SIGILL):
 * a choice of a later instruction set than the host's, or a feature list
 * turning on what the host has off, is refused.  What a named CPU has
 * beyond its instruction set (AVX-512 VNNI of a later CPU on an earlier
 * AVX-512 host) is not known here, and docs/language.md says so.  Nor must
 * LLVM abort, as it does (report_fatal_error) for x86-64 code on a CPU
 * without 64-bit mode (a 32-bit one, or a name it does not know: it prints
 * "'name' is not a recognized processor" and takes no features) or without
 * SSE registers for float arguments: a named CPU gets +64bit (x86-64 turns
 * SSE2 on with it), and a feature list turning off 64bit, sse or sse2 is
 * refused.
 */
#include "cpuhost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

static const char *const isa_names[] = {
    [GJ_ISA_SSE] = "sse",
    [GJ_ISA_AVX] = "avx",
    [GJ_ISA_AVX2] = "avx2",
    [GJ_ISA_AVX512] = "avx512",
};

static char *dup_message(char *msg) {
    char *out = strdup(msg ? msg : "");
    LLVMDisposeMessage(msg);
    return out;
}

/* Adds void name(ptr p, ptr q) { *p = *p + *q } on 16 lanes of elem. */
static void add_probe(LLVMModuleRef m, LLVMBuilderRef b, const char *name, LLVMTypeRef elem,
                      int is_float) {
    LLVMContextRef ctx = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
    LLVMTypeRef params[2] = {ptr, ptr};
    LLVMValueRef fn =
        LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(ctx), params, 2, 0));
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, ""));
    LLVMTypeRef vec = LLVMVectorType(elem, 16);
    LLVMValueRef x = LLVMBuildLoad2(b, vec, LLVMGetParam(fn, 0), "");
    LLVMValueRef y = LLVMBuildLoad2(b, vec, LLVMGetParam(fn, 1), "");
    LLVMBuildStore(b, is_float ? LLVMBuildFAdd(b, x, y, "") : LLVMBuildAdd(b, x, y, ""),
                   LLVMGetParam(fn, 0));
    LLVMBuildRetVoid(b);
}

/* Whether a line of text[0, n) holds both `op` and `reg`. */
static int line_with(const char *text, size_t n, const char *op, const char *reg) {
    for (const char *line = text, *end = text + n; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t len = eol ? (size_t)(eol - line) : (size_t)(end - line);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        if ((!op || strstr(buf, op)) && strstr(buf, reg))
            return 1;
        line += len + 1;
    }
    return 0;
}

/* Whether the comma-separated list holds `item` (n bytes) as one entry. */
static int list_has(const char *list, const char *item, size_t n) {
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, item, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The instruction set of a complete feature list (the host's). */
static GjCpuIsa isa_of_features(const char *features) {
    if (list_has(features, "+avx512f", 8) && !list_has(features, "-evex512", 8))
        return GJ_ISA_AVX512;   /* without -evex512: LLVM before 18 had none */
    if (list_has(features, "+avx2", 5))
        return GJ_ISA_AVX2;
    return list_has(features, "+avx", 4) ? GJ_ISA_AVX : GJ_ISA_SSE;
}

static int is_x86_64(const char *triple) { return strncmp(triple, "x86_64", 6) == 0; }

/* The instruction set code for (cpu, features) uses: the probe's assembly
   (GJ_ISA_OTHER off x86-64).  1 when it uses no SSE register (x87 floats),
   -1 when LLVM cannot make it, else 0. */
static int probe_isa(LLVMTargetRef target, const char *triple, const char *cpu,
                     const char *features, GjCpuIsa *isa) {
    *isa = GJ_ISA_OTHER;
    if (!is_x86_64(triple))
        return 0;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        target, triple, cpu, features, LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelDefault);
    if (!tm)
        return -1;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("gj_probe", ctx);
    LLVMSetTarget(m, triple);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    add_probe(m, b, "gj_probe_float", LLVMFloatTypeInContext(ctx), 1);
    add_probe(m, b, "gj_probe_int", LLVMInt32TypeInContext(ctx), 0);
    LLVMDisposeBuilder(b);
    char *msg = NULL;
    LLVMMemoryBufferRef out = NULL;
    int rc = LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMAssemblyFile, &msg, &out) ? -1 : 0;
    LLVMDisposeMessage(msg);
    if (rc == 0) {
        const char *text = LLVMGetBufferStart(out);
        size_t n = LLVMGetBufferSize(out), split = n;
        for (size_t k = 0; k + 13 <= n; k++)   /* the integer function's label */
            if (memcmp(text + k, "gj_probe_int:", 13) == 0) {
                split = k;
                break;
            }
        if (line_with(text, split, NULL, "%zmm"))
            *isa = GJ_ISA_AVX512;
        else if (line_with(text + split, n - split, "paddd", "%ymm"))
            *isa = GJ_ISA_AVX2;
        else if (line_with(text, split, NULL, "%ymm"))
            *isa = GJ_ISA_AVX;
        else if (line_with(text, split, NULL, "%xmm"))
            *isa = GJ_ISA_SSE;
        else
            rc = 1;   /* x87 */
        LLVMDisposeMemoryBuffer(out);
    }
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
    LLVMDisposeTargetMachine(tm);
    return rc;
}

static void isa_name(char *out, size_t size, GjCpuIsa isa, const char *triple) {
    if (isa != GJ_ISA_OTHER)
        snprintf(out, size, "%s", isa_names[isa]);
    else
        snprintf(out, size, "%.*s", (int)strcspn(triple, "-"), triple);
}

/* Checks GPUJIT_CPU_FEATURES: +f or -f entries, none turning on a feature
   the host has off, and on x86-64 none turning off what its code needs
   (LLVM would abort: no 64-bit mode, float arguments without SSE
   registers).  0, or -1 with why set. */
static int check_features(const char *extra, const char *host, int x86_64, char *why, size_t size) {
    static const char *const needed[] = {"-64bit", "-sse", "-sse2"};
    for (const char *p = extra; *p;) {
        size_t len = strcspn(p, ",");
        size_t name = len ? strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789.-_") : 0;
        if (len < 2 || (p[0] != '+' && p[0] != '-') || name != len - 1) {
            snprintf(why, size,
                     "GPUJIT_CPU_FEATURES='%s' is not a list of LLVM features "
                     "such as '-avx512f' or '+avx2,-fma'",
                     extra);
            return -1;
        }
        for (size_t k = 0; x86_64 && k < sizeof needed / sizeof needed[0]; k++)
            if (len == strlen(needed[k]) && strncmp(p, needed[k], len) == 0) {
                snprintf(why, size,
                         "GPUJIT_CPU_FEATURES='%s' turns off %s, which x86-64 "
                         "code needs",
                         extra, needed[k] + 1);
                return -1;
            }
        char off[128];
        snprintf(off, sizeof off, "-%.*s", (int)(len - 1), p + 1);
        if (p[0] == '+' && len < sizeof off && list_has(host, off, len)) {
            snprintf(why, size,
                     "GPUJIT_CPU_FEATURES='%s' turns on %.*s, which this host "
                     "lacks",
                     extra, (int)(len - 1), p + 1);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Whether code for cpu, of instruction set isa, has masked stores that run
   as microcode: AVX's and AVX2's VMASKMOVPS/VPMASKMOVD (AVX-512 masks with
   mask registers) on AMD's cores (LLVM's names bdver*, btver*, znver*:
   Bulldozer, Jaguar, Zen), and on the generic levels (x86-64-v3, ...),
   which may run on them.  LLVM's own tuning makes the same call since 2026
   (Zen 1 to 3 and x86-64-v3, llvm-project PR 214187); Intel's AVX2 cores
   store a masked vector a cycle. */
static int slow_masked_stores(const char *cpu, GjCpuIsa isa) {
    static const char *const prefixes[] = {"znver", "bdver", "btver", "x86-64", "generic"};
    for (size_t k = 0;
         (isa == GJ_ISA_AVX || isa == GJ_ISA_AVX2) && k < sizeof prefixes / sizeof prefixes[0]; k++)
        if (strncmp(cpu, prefixes[k], strlen(prefixes[k])) == 0)
            return 1;
    return 0;
}

static void out_of_memory(char *why, size_t size) { snprintf(why, size, "out of memory"); }

int gj_cpuhost_choose(GjCpuHost *h, LLVMTargetRef target, const char *triple, char *why,
                      size_t size) {
    memset(h, 0, sizeof *h);
    char *host_features = dup_message(LLVMGetHostCPUFeatures());
    h->host_cpu = dup_message(LLVMGetHostCPUName());
    const char *name = getenv("GPUJIT_CPU_NAME");
    const char *extra = getenv("GPUJIT_CPU_FEATURES");
    int named = name && *name && strcmp(name, "host") != 0;
    int appended = extra && *extra;
    int rc = -1;
    GjCpuIsa host_isa;
    const char *base;
    size_t n;
    int probed;
    if (!host_features || !h->host_cpu) {
        out_of_memory(why, size);
        goto done;
    }
    if (appended && check_features(extra, host_features, is_x86_64(triple), why, size) < 0)
        goto done;
    /* a named CPU's own features, but 64-bit mode whatever it is: LLVM aborts
       on a CPU without it (a 32-bit one, or a name it does not know) */
    base = !named ? host_features : is_x86_64(triple) ? "+64bit" : "";
    n = strlen(base) + (appended ? strlen(extra) + 1 : 0) + 1;
    h->cpu = strdup(named ? name : h->host_cpu);
    h->features = malloc(n);
    if (!h->cpu || !h->features) {
        out_of_memory(why, size);
        goto done;
    }
    snprintf(h->features, n, "%s%s%s", base, appended && *base ? "," : "", appended ? extra : "");
    h->chosen_by = named && appended ? "GPUJIT_CPU_NAME, GPUJIT_CPU_FEATURES"
                   : named           ? "GPUJIT_CPU_NAME"
                   : appended        ? "GPUJIT_CPU_FEATURES"
                                     : "host";
    n = strlen(triple) + strlen(h->cpu) + strlen(h->features) + 3;
    if (!(h->key = malloc(n))) {
        out_of_memory(why, size);
        goto done;
    }
    snprintf(h->key, n, "%s %s %s", triple, h->cpu, h->features);

    host_isa = is_x86_64(triple) ? isa_of_features(host_features) : GJ_ISA_OTHER;
    h->isa = host_isa;
    probed = named || appended ? probe_isa(target, triple, h->cpu, h->features, &h->isa) : 0;
    if (probed != 0) {
        snprintf(why, size,
                 "LLVM cannot compile x86-64 vector code for the CPU %s "
                 "(features '%s')",
                 h->cpu, h->features);
        goto done;
    }
    isa_name(h->isa_name, sizeof h->isa_name, h->isa, triple);
    isa_name(h->host_isa_name, sizeof h->host_isa_name, host_isa, triple);
    h->vector_bits = h->isa == GJ_ISA_AVX512 ? 512 : h->isa >= GJ_ISA_AVX ? 256 : 128;
    h->slow_masked_stores = slow_masked_stores(h->cpu, h->isa);
    if (h->isa > host_isa)
        snprintf(why, size,
                 "%s chooses code for %s (%s), which this host (%s, %s) cannot "
                 "run",
                 h->chosen_by, h->cpu, h->isa_name, h->host_cpu, h->host_isa_name);
    else
        rc = 0;
done:
    free(host_features);
    return rc;
}
