/*
 * cachefile.h - the persistent cache's entry files (cachefile.c): the
 * directory, this build's identity, keys, reading and checking an entry,
 * the header of one to store, and the hit and miss counts.
 */
#ifndef GJ_PY_CACHEFILE_H
#define GJ_PY_CACHEFILE_H

#include "dispatcher.h"
#include "cache.h"

/* Whether to cache a kernel whose
   jit(cache=...) is flag: GPUJIT_CACHE overrides it when set (1, true, yes
   or on caches every kernel, 0, false, no or off none; another value is
   ignored with a RuntimeWarning, once); -1 raised (the warning an error). */
int gj_py_cache_enabled(int flag);

/* _gpujit._cache_directory(): the directory, a str; NULL raised. */
PyObject *gj_py_cache_directory(PyObject *module, PyObject *unused);

/* The key of material: SHA-256, in hex, of this build's identity (st)
   and material.  -1 raised. */
int gj_py_cache_key(GjPyState *st, const GjBuf *material, char key[GJ_CACHE_KEY_LEN + 1]);

/* key's entry, when its file is this user's, whole and key's: 1 and
   *payload (malloc'd, *n bytes), touched so it is evicted last; 0 when
   there is none to use; -1 raised (no directory can be named). */
int gj_py_cache_read(const char *key, unsigned char **payload, size_t *n);

/* Removes key's entry file, if any.  -1 raised. */
int gj_py_cache_discard(const char *key);

/* The bytes of key's entry file holding payload (header and payload);
   NULL raised. */
PyObject *gj_py_cache_entry(const char *key, const void *payload, size_t n);

/* _gpujit._cache_counts(): (hits, misses) of this process. */
PyObject *gj_py_cache_counts(PyObject *module, PyObject *unused);

#endif
