/*
 * cpuhost.h - the CPU that the CPU target compiles for (cpuhost.c): the
 * host's own, or the one GPUJIT_CPU_NAME and GPUJIT_CPU_FEATURES choose,
 * and what its vector units are.
 */
#ifndef GJ_CPUHOST_H
#define GJ_CPUHOST_H

#include <stddef.h>

#include <llvm-c/TargetMachine.h>

/* Vector instruction sets, in order: on x86 a later one runs the code of an
   earlier one. */
typedef enum GjCpuIsa {
    GJ_ISA_OTHER,    /* not x86 (NEON, ...): vectors of 128 bits assumed */
    GJ_ISA_SSE,      /* 128-bit vectors */
    GJ_ISA_AVX,      /* 256-bit float vectors, 128-bit integer ones */
    GJ_ISA_AVX2,     /* 256-bit float and integer vectors */
    GJ_ISA_AVX512,   /* 512-bit vectors and mask registers */
} GjCpuIsa;

typedef struct GjCpuHost {
    char *cpu;             /* the LLVM CPU name code is compiled for */
    char *features;        /* its LLVM feature string ("" for a named CPU's own) */
    char *key;             /* "triple cpu features": what an object file relies on */
    const char *chosen_by; /* "host", or the variables that chose (below) */
    GjCpuIsa isa;
    char isa_name[24];     /* "avx512", "avx2", "avx", "sse"; else the triple's arch */
    unsigned vector_bits;  /* the widest vectors of float32 the code computes on */
    int slow_masked_stores;   /* its masked stores are microcode (cpu_fix.c) */
    char *host_cpu;        /* the host's own LLVM CPU name and instruction set */
    char host_isa_name[24];
} GjCpuHost;

/* Fills h for `target` (of `triple`): the host's CPU name and features,
   unless GPUJIT_CPU_NAME names an LLVM CPU (with that CPU's features) or
   GPUJIT_CPU_FEATURES appends LLVM features ("-avx512f", "+avx2,-fma").  A
   choice the host cannot run (a later instruction set, a feature the host
   has off) or a malformed feature list is refused: -1, with why[size]
   saying so.  0 when done; -1 with why set also when out of memory or when
   LLVM has no target machine for the choice.  The strings are malloc'd and
   live as long as the process's JIT. */
int gj_cpuhost_choose(GjCpuHost *h, LLVMTargetRef target, const char *triple, char *why,
                      size_t size);

#endif
