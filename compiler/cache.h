/*
 * cache.h - what the persistent kernel cache stores, as bytes: the key
 * material of a compile (everything its output depends on) and a compiled
 * result packed for a file and unpacked in another process.  The caller
 * (pymodule/cache.c) hashes the key, adds what only it knows (the device,
 * the jit options as Python gave them) and does the file I/O; nothing here
 * touches a cache file.
 */
#ifndef GJ_CACHE_H
#define GJ_CACHE_H

#include "compile.h"

/* A growable byte buffer (malloc'd); `failed` is set once a write ran out
   of memory, and later writes do nothing. */
typedef struct GjBuf {
    unsigned char *data;
    size_t len, cap;
    int failed;
} GjBuf;

void gj_buf_put(GjBuf *b, const void *data, size_t n);
void gj_buf_put_i64(GjBuf *b, int64_t v);       /* 8 bytes, little-endian */
void gj_buf_put_str(GjBuf *b, const char *s);   /* length-prefixed; NULL differs from "" */
void gj_buf_put_blob(GjBuf *b, const void *data, size_t n);   /* the same for bytes */
void gj_buf_free(GjBuf *b);

/* Appends the key material of compiling `code` (argtypes set; its
   instructions need not be read) with `opt`: the code view and the code
   views of the device functions it calls (every name, default and frozen
   global, and the code object itself, GjCodeView.code_bytes, which the
   instructions derive from), the argument types, the options
   (GJ_CACHE_OPTIONS), LLVM's version and, for the CPU target, the host
   CPU.  The caller adds Python's version.  Returns 1, or 0 when the compile
   must not be cached (a global the compiler knows only by its type, a code
   object pymodule could not write down), or -1 with c->diag set (no
   memory, no JIT). */
int gj_cache_key(GjCtx *c, const GjCodeView *code, const GjCompileOptions *opt, GjBuf *out);

/* Appends r, every field (GJ_CACHE_RESULT) and its binary, to out. */
void gj_cache_pack(const GjCompileResult *r, GjBuf *out);

/* Rebuilds a result from gj_cache_pack's bytes; for the CPU target loads
   its object file into the JIT (gj_cpujit_load).  GJ_ERR with c->diag set
   when the bytes are malformed or are not for opt->target, or name a
   libdevice file (path, size, modification time) other than the one opt
   names or opt->find_libdevice finds now; *out is then untouched. */
GjStatus gj_cache_unpack(GjCtx *c, const GjCompileOptions *opt, const void *data, size_t n,
                         GjCompileResult *out);

#endif
