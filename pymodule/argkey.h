/*
 * argkey.h - argument types as type-key words and back (argkey.c), and
 * their names as .signatures spells them.
 */
#ifndef GJ_PY_ARGKEY_H
#define GJ_PY_ARGKEY_H

#include "gjpy.h"

/* Argument types as key words.  The type of the argument whose
   words start at key[*pos] (key has n words), advancing *pos; NULL with a
   TypeError if the words are malformed. */
const GjType *gj_py_key_type(GjCtx *c, const uint32_t *key, int n, int *pos);

/* Appends argument type t's words at key[*pos] (room for max words); -1 with
   a TypeError if t cannot be a kernel argument. */
int gj_py_key_words(const GjType *t, uint32_t *key, int max, int *pos);

/* The name of the argument whose words start at key[*pos], as .signatures
   spells it ("float32", "array(float32, 2d, C)", "tuple(int64, float32)"),
   advancing *pos; NULL raised. */
PyObject *gj_py_key_name(const uint32_t *key, int n, int *pos);

/* Python arguments, scalars and arrays (the plan's parameters), and kernel
   parameters that key[1..n) describes. */
void gj_py_key_count(const uint32_t *key, int n, int *args, int *leaves, int *kernel_params);

#endif
