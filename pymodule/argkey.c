/*
 * argkey.c - kernel argument types as type-key words (dispatcher.h), and back.
 *
 * A scalar or an array is one word (dtype, ndim, layout); a tuple is a
 * marker word with its length followed by its items' words, so nested
 * tuples nest.  The launcher writes the words from the arguments without
 * creating Python objects; dispatcher.c reads them back into compiler types
 * to compile a specialisation, and writes them from a signature's types.
 * The launch plan lists one parameter per scalar or array (a tuple's
 * leaves, depth-first), the order the launcher parses them in.
 */
#include "argkey.h"

#include <string.h>

#include "dispatcher.h"

static int dtype_id_of_type(const GjType *t) {
    for (int i = 0; i < GJ_DT_COUNT; i++)
        if (gj_py_dtypes[i].type == t)
            return i;
    return -1;
}

const GjType *gj_py_key_type(GjCtx *c, const uint32_t *key, int n, int *pos) {
    if (*pos >= n)
        goto malformed;
    uint32_t w = key[(*pos)++];
    if (GJ_KEY_IS_TUPLE(w)) {
        int m = GJ_KEY_TUPLE_LEN(w);
        const GjType **items = GJ_NEW_N(&c->arena, const GjType *, m > 0 ? m : 1);
        if (!items)
            return PyErr_NoMemory(), NULL;
        for (int k = 0; k < m; k++)
            if (!(items[k] = gj_py_key_type(c, key, n, pos)))
                return NULL;
        const GjType *t = gj_ty_tuple(c, items, m);
        return t ? t : (PyErr_NoMemory(), NULL);
    }
    if (GJ_KEY_DTYPE(w) >= GJ_DT_COUNT)
        goto malformed;
    const GjType *t = gj_py_dtypes[GJ_KEY_DTYPE(w)].type;
    if (GJ_KEY_IS_ARRAY(w) && !(t = gj_ty_array(c, t, GJ_KEY_NDIM(w), GJ_KEY_LAYOUT(w))))
        return PyErr_NoMemory(), NULL;
    return t;
malformed:
    PyErr_SetString(PyExc_TypeError, "malformed type key");
    return NULL;
}

int gj_py_key_words(const GjType *t, uint32_t *key, int max, int *pos) {
    if (*pos >= max) {
        PyErr_Format(PyExc_ValueError,
                     "the signature's arguments need more than %d type "
                     "words",
                     max);
        return -1;
    }
    if (t->kind == GJ_TK_TUPLE) {
        if (t->n > GJ_KEY_MAX_TUPLE) {
            PyErr_Format(PyExc_TypeError, "a tuple argument has at most %d items",
                         GJ_KEY_MAX_TUPLE);
            return -1;
        }
        key[(*pos)++] = GJ_KEY_TUPLE(t->n);
        for (int k = 0; k < t->n; k++)
            if (gj_py_key_words(t->elems[k], key, max, pos) < 0)
                return -1;
        return 0;
    }
    int arr = t->kind == GJ_TK_ARRAY;
    int id = dtype_id_of_type(arr ? t->dtype : t);
    if (id < 0) {
        PyErr_Format(PyExc_TypeError, "%s is not a kernel argument type", t->name);
        return -1;
    }
    key[(*pos)++] = GJ_KEY_WORD(id, arr ? t->ndim : 0, arr ? t->layout : 0, arr);
    return 0;
}

PyObject *gj_py_key_name(const uint32_t *key, int n, int *pos) {
    if (*pos >= n) {
        PyErr_SetString(PyExc_TypeError, "malformed type key");
        return NULL;
    }
    uint32_t w = key[(*pos)++];
    if (GJ_KEY_IS_TUPLE(w)) {
        PyObject *items = PyList_New(0), *sep = PyUnicode_FromString(", "), *r = NULL;
        for (int k = 0; items && sep && k < GJ_KEY_TUPLE_LEN(w); k++) {
            PyObject *item = gj_py_key_name(key, n, pos);
            if (!item || PyList_Append(items, item) < 0)
                Py_CLEAR(items);
            Py_XDECREF(item);
        }
        PyObject *joined = items && sep ? PyUnicode_Join(sep, items) : NULL;
        if (joined)
            r = PyUnicode_FromFormat("tuple(%U)", joined);
        Py_XDECREF(joined);
        Py_XDECREF(items);
        Py_XDECREF(sep);
        return r;
    }
    const char *dt = gj_py_dtypes[GJ_KEY_DTYPE(w)].name;
    if (!GJ_KEY_IS_ARRAY(w))
        return PyUnicode_FromString(dt);
    return PyUnicode_FromFormat("array(%s, %dd, %c)", dt, GJ_KEY_NDIM(w), (int)GJ_KEY_LAYOUT(w));
}

void gj_py_key_count(const uint32_t *key, int n, int *args, int *leaves, int *kernel_params) {
    int open = 0;   /* items still to come of the tuples being read */
    *args = *leaves = *kernel_params = 0;
    for (int i = 1; i < n; i++) {
        uint32_t w = key[i];
        if (open == 0)
            (*args)++;
        else
            open--;
        if (GJ_KEY_IS_TUPLE(w)) {
            open += GJ_KEY_TUPLE_LEN(w);
            continue;
        }
        (*leaves)++;
        *kernel_params += GJ_KEY_IS_ARRAY(w) ? 1 + 2 * GJ_KEY_NDIM(w) : 1;
    }
}
