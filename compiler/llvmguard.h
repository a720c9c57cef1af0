/*
 * llvmguard.h - LLVM's fatal errors as diagnostics instead of the end of
 * the process (llvmguard.c; docs/internals/kernel-code.md, "LLVM's fatal errors").
 *
 * LLVM reports what it cannot do in code generation (an instruction it
 * cannot select, a symbol it cannot print) with report_fatal_error, which
 * calls the handler installed with LLVMInstallFatalErrorHandler and then
 * exits: the handler must not return.  gpujit's handler jumps (longjmp)
 * back to the innermost gj_llvm_guard of its thread, which records an
 * INTERNAL diagnostic with LLVM's message and sets c->llvm_fatal.  The
 * frames it jumps over are not unwound, so after that the compile's LLVM
 * objects (module, context, target machine) are in an unknown state and are
 * leaked, never freed or used again (the callers check c->llvm_fatal).
 *
 * Only LLVM calls that hold no lock and run no one-time initialisation of
 * gpujit's may be guarded (a jump would leave it held or unfinished): the
 * pass pipeline and code generation, not the JIT's loading of an object.  A
 * fatal error outside a guard keeps LLVM's behaviour: its "LLVM ERROR:"
 * message on stderr, then exit(1).
 */
#ifndef GJ_LLVMGUARD_H
#define GJ_LLVMGUARD_H

#include "gj.h"

/* Runs fn(arg) and returns its status; if LLVM reports a fatal error in it,
   returns GJ_ERR with an INTERNAL diagnostic ("LLVM stopped with a fatal
   error in <what>: <LLVM's message>") and c->llvm_fatal set. */
GjStatus gj_llvm_guard(GjCtx *c, const char *what, GjStatus (*fn)(void *arg), void *arg);

#endif
