/*
 * specialize.c - making a specialisation's code: compiled now, or loaded
 * from the persistent cache, and on a GPU its module loaded from the cubin
 * the cache keeps.  The dispatcher (dispatcher.c) and compile_ptx()
 * (compileptx.c) call in; nothing here calls back into them.
 *
 *     def options(d, device):                  # gj_py_target_options
 *         return d's jit options for the device's cc and driver (or the CPU)
 *     def compile(d, view, options, device):   # gj_py_cache_compile
 *         return fetch(...) or store(..., gj_py_run_compile(instructions(view)))
 *     def fetch(d, view, options, device):     # the view has no instructions yet
 *         if not enabled(d.cache): return None
 *         material = key(view, options)        # compiler/cache.c
 *                    + repr(sorted(d.jit_options)) + device's cc and driver
 *         key = sha256(identity + material)    # cachefile.c, as the rest of a lookup
 *         payload = read(key)                  # file checks, LRU touch
 *         return unpack(payload) if payload else None
 *     def store(key, result):                  # gj_py_cache_store
 *         _cache.store(key, entry(key, pack(result)))   # temp file + rename, eviction
 *     def module_load(entry):                  # gj_py_cache_module_load (GPU)
 *         return load(entry.cubin) or load(link(entry.ptx)) or load(entry.ptx)
 *
 * Only a new specialisation gets here; a launch that finds its entry never
 * does.  A lookup runs before the view's instructions are read (dis costs
 * a hit more than everything else) and calls no Python module of gpujit's:
 * cachefile.c reads the files, compiler/cache.c owns the bytes, and
 * gpujit/_cache.py is imported by a store only.  A compile whose key
 * cannot be made, or whose entry does not unpack, is simply compiled (and
 * stored again).
 */
#include "specialize.h"

#include <stdlib.h>
#include <string.h>

#include "cachefile.h"
#include "codeview_py.h"
#include "dispatcher.h"
#include "module.h"

/* ---- compiling ------------------------------------------------------------- */

enum { LLVM19_SM90_PTX = 78 };   /* PTX ISA LLVM 19 emits by default for sm_90 */

/* Highest PTX ISA version (e.g. 85 = 8.5) a driver of version `v` accepts. */
static int driver_max_ptx(int v) {
    static const struct {
        int driver, ptx;
    } table[] = {
        {13000, 90}, {12090, 88}, {12080, 87}, {12070, 86}, {12060, 85}, {12050, 85},
        {12040, 84}, {12030, 83}, {12020, 82}, {12010, 81}, {12000, 80},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (v >= table[i].driver)
            return table[i].ptx;
    return 78;
}

/* Compile options for device `ordinal` (the defaults, sm_90, without a GPU;
   the host CPU for GJ_EXEC_HOST). */
void gj_py_target_options(GjPyState *st, const GjDispatcher *d, int ordinal, GjCompileOptions *o) {
    gj_compile_options_default(o);
    o->fastmath = d ? d->fastmath : 0;
    o->contract = d ? d->contract : 1;
    o->lineinfo = d ? d->lineinfo : 0;
    o->debug = d ? d->debug : 0;
    o->boundscheck = d ? d->boundscheck : 0;
    o->opt_level = d && !d->opt ? 0 : 3;
    o->want_llvm_ir = 1;
    if (d) {
        o->max_threads = d->launch_bounds[0];
        o->min_blocks = d->launch_bounds[1];
        o->max_cluster = d->launch_bounds[2];
        o->max_registers = d->max_registers;
    }
    if (ordinal == GJ_EXEC_HOST) {
        o->target = GJ_TARGET_CPU;
        o->runtime_symbols = st->kernel_symbols;
        o->nruntime_symbols = st->nkernel_symbols;
        return;
    }
    GjDeviceInfo info;
    GjExecError err;
    if (!gj_exec_gpu_available() || gj_exec_device_info(ordinal, &info, &err) != GJ_EXEC_OK)
        return;
    o->cc_major = info.cc_major;
    o->cc_minor = info.cc_minor;
    int max_sm = gj_nvptx_max_sm();
    if (max_sm > 0 && info.cc_major * 10 + info.cc_minor > max_sm) {
        o->cc_major = max_sm / 10;
        o->cc_minor = max_sm % 10;
    }
    /* LLVM's default PTX version is fine for every CUDA 12+ driver; only ask
       for an older one when the driver could not load the default. */
    int version = 0;
    gj_exec_driver_version(&version, &err);
    int max_ptx = driver_max_ptx(version);
    if (max_ptx < LLVM19_SM90_PTX)
        o->ptx_version = max_ptx;
}

PyObject *gj_py_signature_tuple(const GjCodeView *cv) {
    PyObject *sig = PyTuple_New(cv->argcount);
    for (int i = 0; sig && i < cv->argcount; i++) {
        PyObject *name = PyUnicode_FromString(cv->argtypes[i]->name);
        if (!name || PyTuple_SetItem(sig, i, name) < 0)
            Py_CLEAR(sig);
    }
    return sig;
}

int gj_py_run_compile(GjPyState *st, GjCtx *ctx, GjCodeView *cv, const GjCompileOptions *opt,
                      GjCompileResult *res, PyObject **sig, int warn) {
    GjCompileOptions with = *opt;
    const GjCompileOptions *o = &with;
    if (o->target == GJ_TARGET_NVPTX && !with.libdevice) {
        with.find_libdevice = gj_py_find_libdevice;
        with.find_libdevice_arg = st;
    }
    if (!(*sig = gj_py_signature_tuple(cv)))
        return -1;
    GjStatus rc;
    Py_BEGIN_ALLOW_THREADS rc = gj_compile(ctx, cv, o, res);
    Py_END_ALLOW_THREADS if (rc != GJ_OK) {
        Py_CLEAR(*sig);
        if (!PyErr_Occurred())   /* else the libdevice search's own exception */
            gj_py_raise_diag(st, ctx, cv);
        return -1;
    }
    if (warn && gj_py_warn_diags(st, ctx, cv) < 0) {   /* -W error: no result */
        Py_CLEAR(*sig);
        gj_result_free(res);
        return -1;
    }
    return 0;
}

/* ---- the persistent cache ---------------------------------------------------- */

/* gpujit._cache.store(key, entry), the one call into it: a store is
   rare, so its import costs a lookup nothing.  -1 raised. */
static int call_store(const char *key, PyObject *entry) {
    PyObject *mod = PyImport_ImportModule("gpujit._cache");
    PyObject *r = mod ? PyObject_CallMethod(mod, "store", "sO", key, entry) : NULL;
    Py_XDECREF(mod);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* The options jit() gave the Dispatcher, as repr(sorted(items)): an option
   added to jit later is keyed with no change here.  -1 raised. */
static int put_jit_options(GjDispatcher *d, GjBuf *b) {
    PyObject *items = d->jit_options ? PyDict_Items(d->jit_options) : PyList_New(0);
    PyObject *text = items && PyList_Sort(items) == 0 ? PyObject_Repr(items) : NULL;
    const char *s = text ? PyUnicode_AsUTF8AndSize(text, NULL) : NULL;
    if (s)
        gj_buf_put_str(b, s);
    Py_XDECREF(items);
    Py_XDECREF(text);
    return s ? 0 : -1;
}

/* The device's compute capability and the driver's version (a cubin is
   SASS for one architecture, made by one driver's compiler): 1, or 0 when
   there is no GPU to ask (PTX compiled for inspection is not cached). */
static int put_device(GjBuf *b, int device) {
    gj_buf_put_i64(b, device == GJ_EXEC_HOST);
    if (device == GJ_EXEC_HOST)
        return 1;
    GjDeviceInfo info;
    GjExecError err;
    int version;
    if (!gj_exec_gpu_available() || gj_exec_device_info(device, &info, &err) != GJ_EXEC_OK ||
        gj_exec_driver_version(&version, &err) != GJ_EXEC_OK)
        return 0;
    gj_buf_put_i64(b, info.cc_major);
    gj_buf_put_i64(b, info.cc_minor);
    gj_buf_put_i64(b, version);
    return 1;
}

/* The key of compiling cv with o on `device` for d: 1 and key filled, 0
   when the compile is not to be cached, -1 raised. */
static int make_key(GjPyState *st, GjDispatcher *d, const GjCodeView *cv, const GjCompileOptions *o,
                    int device, char key[GJ_CACHE_KEY_LEN + 1]) {
    GjCtx kc;   /* its own: a failure here must not become the compile's error */
    GjBuf b = {0};
    gj_ctx_init(&kc);
    /* no key (out of memory, no JIT): not cached; the compile says why */
    int rc = gj_cache_key(&kc, cv, o, &b) > 0;
    gj_ctx_free(&kc);
    if (rc && put_jit_options(d, &b) < 0)
        rc = -1;
    if (rc > 0)
        rc = put_device(&b, device) && !b.failed;
    if (rc > 0 && gj_py_cache_key(st, &b, key) < 0) {
        PyErr_Clear();   /* no identity (the extension's file gone in an upgrade): not cached */
        rc = 0;
    }
    gj_buf_free(&b);
    return rc;
}

/* Rebuilds res from key's entry, payload[0..n): 1, or 0 (after removing
   the file) when it does not unpack; -1 raised. */
static int unpack(const GjCompileOptions *o, const unsigned char *payload, size_t n,
                  const char *key, GjCompileResult *res) {
    GjCtx uc;
    gj_ctx_init(&uc);
    GjStatus st;
    Py_BEGIN_ALLOW_THREADS   /* loading an object file into the JIT links it */
        st = gj_cache_unpack(&uc, o, payload, n, res);
    Py_END_ALLOW_THREADS gj_ctx_free(&uc);
    if (st == GJ_OK)
        return 1;
    if (PyErr_Occurred())   /* the libdevice search's own exception */
        return -1;
    return gj_py_cache_discard(key) < 0 ? -1 : 0;
}

/* Looks up the compile of cv with o on `device` for d: 1 when found (*res
   filled, its code loaded), 0 when not; -1 raised.  key gets the entry's
   key, or "" when this compile is not cached (caching off, GPUJIT_DUMP
   showing stages, no GPU to key a cubin by).  A hit is a line of
   GPUJIT_DUMP=timing.  Only an entry that linked libdevice searches for it
   (gj_cache_unpack), so a kernel without math functions never does. */
static int fetch(GjPyState *st, GjDispatcher *d, GjCtx *ctx, const GjCodeView *cv,
                 GjCompileOptions *o, int device, GjCompileResult *res,
                 char key[GJ_CACHE_KEY_LEN + 1]) {
    key[0] = '\0';
    if (ctx->dump & ~GJ_DUMP_TIMING)   /* GPUJIT_DUMP shows a compile's stages: compile */
        return 0;
    int enabled = gj_py_cache_enabled(d->cache);
    if (enabled <= 0)
        return enabled;
    ctx->funcname = cv->qualname ? cv->qualname : cv->name;   /* GPUJIT_DUMP=timing's lines */
    gj_timing(ctx, "code view");
    int rc = make_key(st, d, cv, o, device, key);
    if (rc <= 0) {
        key[0] = '\0';
        return rc;
    }
    gj_timing(ctx, "cache key");
    unsigned char *payload = NULL;
    size_t n = 0;
    rc = gj_py_cache_read(key, &payload, &n);
    gj_timing(ctx, "cache file");
    if (rc > 0) {
        rc = unpack(o, payload, n, key, res);
        free(payload);
    }
    if (rc < 0) {
        key[0] = '\0';
        return -1;
    }
    if (rc > 0) {   /* GPUJIT_DUMP=timing: a hit has no compile stages to time */
        st->cache_hits++;
        gj_timing(ctx, "cache entry unpacked");
    } else {
        st->cache_misses++;
    }
    return rc;
}

static void drop_binary(GjCompileResult *r) {
    free(r->binary);
    r->binary = NULL;
    r->binary_size = 0;
}

PyObject *gj_py_cache_jit_options(PyObject *kw) {
    PyObject *options = kw ? PyDict_Copy(kw) : PyDict_New();
    const char *drop[] = {"func", "cache"};
    for (size_t i = 0; options && i < sizeof drop / sizeof drop[0]; i++)
        if (PyDict_GetItemString(options, drop[i]) && PyDict_DelItemString(options, drop[i]) < 0)
            Py_CLEAR(options);
    return options;
}

int gj_py_cache_compile(GjPyState *st, GjDispatcher *d, GjCtx *ctx, GjCodeView *cv,
                        GjPyViews *views, GjCompileOptions *o, GjEntry *e, int warn) {
    int hit = fetch(st, d, ctx, cv, o, (int)e->key[0], &e->res, e->cache_key);
    if (hit < 0)
        return -1;
    if (hit)
        return (e->sig = gj_py_signature_tuple(cv)) ? 0 : -1;
    if (o->target == GJ_TARGET_CPU && e->cache_key[0])
        o->object_id = e->cache_key;   /* the symbol every process gives it */
    if (gj_py_codeview_instructions(views) < 0 ||
        gj_py_run_compile(st, ctx, cv, o, &e->res, &e->sig, warn) < 0)
        return -1;
    if (ctx->warnings)   /* not stored, so its warnings show every time */
        e->cache_key[0] = '\0';
    return o->target == GJ_TARGET_CPU && e->cache_key[0] ? gj_py_cache_store(e->cache_key, &e->res)
                                                         : 0;
}

int gj_py_cache_store(const char *key, GjCompileResult *res) {
    GjBuf b = {0};
    gj_cache_pack(res, &b);
    drop_binary(res);   /* loaded already: only the file needs it */
    PyObject *entry = b.failed ? PyErr_NoMemory() : gj_py_cache_entry(key, b.data, b.len);
    gj_buf_free(&b);
    int rc = entry ? call_store(key, entry) : -1;
    Py_XDECREF(entry);
    return rc;
}

GjExecStatus gj_py_cache_module_load(GjEntry *e, int lineinfo, int *store, GjExecError *err) {
    GjCompileResult *r = &e->res;
    int device = (int)e->key[0];
    GjExecStatus st = r->binary ? gj_exec_module_load(device, r->binary, lineinfo, &e->module, err)
                                : GJ_EXEC_ERROR;
    if (st != GJ_EXEC_OK && e->cache_key[0]) {   /* link (again) for the cache */
        drop_binary(r);
        st = gj_exec_link_ptx(device, r->ptx, lineinfo, &r->binary, &r->binary_size, err);
        if (st == GJ_EXEC_OK)
            st = gj_exec_module_load(device, r->binary, lineinfo, &e->module, err);
        *store = st == GJ_EXEC_OK;
    }
    if (st != GJ_EXEC_OK)   /* as without the cache; its error is the one reported */
        st = gj_exec_module_load(device, r->ptx, lineinfo, &e->module, err);
    if (!*store)
        drop_binary(r);
    return st;
}
