/*
 * cachefile.c - the persistent cache's files as a lookup sees them: where
 * they live, this build's identity and the hash that makes a key, the
 * checks an entry must pass, and the header a store writes (its contract
 * is in cachefile.h).  In C, so that a hit imports nothing: hashlib loads
 * OpenSSL, and gpujit/_cache.py, which writes the files, caps their total
 * size and lists them, is imported only by a store.
 *
 *     def directory():                    # gj_py_cache_directory
 *         return GPUJIT_CACHE_DIR or $XDG_CACHE_HOME/gpujit or ~/.cache/gpujit
 *     def key(material):                  # gj_py_cache_key
 *         return sha256(identity() + material).hexdigest()
 *     def read(key):                      # gj_py_cache_read
 *         f = open(directory()/(key + ".gjk"), O_NOFOLLOW)   # regular, ours
 *         magic, format, k, n, checksum, payload = parse(f.read())
 *         if (magic, format, k, n) == (MAGIC, FORMAT, key, len(payload))
 *                 and sha256(payload) == checksum:
 *             touch(f); return payload        # used now: evicted last
 *
 * An entry file: "GPUJITK\0", the format (u32), the key (32 bytes), the
 * payload's length (u64) and SHA-256 (32 bytes), little-endian, then the
 * payload (compiler/cache.c's packed result).
 */
#include "cachefile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "dispatcher.h"

enum {
    FORMAT = 1,         /* of the header; the payload carries its own version */
    HEADER_BYTES = 8 + 4 + GJ_SHA256_BYTES + 8 + GJ_SHA256_BYTES,
};
static const char MAGIC[8] = "GPUJITK";   /* and its NUL */
static const char SUFFIX[] = ".gjk";

/* Whether text, after white space, is one of words (any case) and only
   white space follows. */
static int env_word(const char *text, const char *const *words, size_t nwords) {
    for (size_t i = 0; i < nwords; i++) {
        size_t n = strlen(words[i]);
        if (strncasecmp(text, words[i], n) == 0) {
            const char *rest = text + n;
            while (*rest == ' ' || (*rest >= '\t' && *rest <= '\r'))
                rest++;
            if (!*rest)
                return 1;
        }
    }
    return 0;
}

int gj_py_cache_enabled(int flag) {
    const char *env = getenv("GPUJIT_CACHE");
    while (env && (*env == ' ' || (*env >= '\t' && *env <= '\r')))
        env++;
    if (!env || !*env)
        return flag != 0;
    static const char *const off[] = {"0", "false", "no", "off"};
    static const char *const on[] = {"1", "true", "yes", "on"};
    if (env_word(env, off, sizeof off / sizeof off[0]))
        return 0;
    if (env_word(env, on, sizeof on / sizeof on[0]))
        return 1;
    static int warned;   /* once a process, under the GIL */
    if (!warned) {
        warned = 1;
        if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                             "GPUJIT_CACHE='%s' is not 1, true, yes "
                             "or on, nor 0, false, no or off: ignored (jit(cache=...) "
                             "decides)",
                             env) < 0)
            return -1;
    }
    return flag != 0;
}

/* getenv(name) as a str (the file-system encoding, as os.environ decodes
   it), or NULL without an exception when unset or empty. */
static PyObject *env_str(const char *name) {
    const char *v = getenv(name);
    return v && *v ? PyUnicode_DecodeFSDefault(v) : NULL;
}

PyObject *gj_py_cache_directory(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *path = PyImport_ImportModule("os.path");
    PyObject *dir = NULL, *base = NULL, *home = NULL;
    PyObject *explicit = path ? env_str("GPUJIT_CACHE_DIR") : NULL;
    if (explicit) {
        PyObject *user = PyObject_CallMethod(path, "expanduser", "O", explicit);
        dir = user ? PyObject_CallMethod(path, "abspath", "O", user) : NULL;
        Py_XDECREF(user);
    } else if (path && !PyErr_Occurred()) {
        if (!(base = env_str("XDG_CACHE_HOME")) && !PyErr_Occurred()) {
            home = PyObject_CallMethod(path, "expanduser", "s", "~");
            base = home ? PyObject_CallMethod(path, "join", "Os", home, ".cache") : NULL;
        }
        dir = base ? PyObject_CallMethod(path, "join", "Os", base, "gpujit") : NULL;
    }
    Py_XDECREF(path);
    Py_XDECREF(explicit);
    Py_XDECREF(base);
    Py_XDECREF(home);
    return dir;
}

/* What makes this build's code its own, once per process in st: gpujit's
   version, the extension's file (path, size, modification time: a rebuilt
   gpujit never loads another build's code), the header's format and
   Python's exact version (dis, which makes the instructions of the code
   bytes the key holds, is part of it).  -1 raised. */
static int identity(GjPyState *st) {
    if (st->cache_identity)
        return 0;
    PyObject *pkg = PyImport_ImportModule("gpujit");
    PyObject *ext = pkg ? PyImport_ImportModule("gpujit._gpujit") : NULL;
    PyObject *version = pkg ? PyObject_GetAttrString(pkg, "__version__") : NULL;
    PyObject *file = ext ? PyObject_GetAttrString(ext, "__file__") : NULL;
    PyObject *path = NULL;
    const char *v = version ? PyUnicode_AsUTF8AndSize(version, NULL) : NULL;
    struct stat s;
    if (v && file && PyUnicode_FSConverter(file, &path)) {
        if (stat(PyBytes_AsString(path), &s) != 0) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, file);
        } else {
            GjBuf b = {0};
            gj_buf_put_str(&b, "gpujit");
            gj_buf_put_str(&b, v);
            gj_buf_put_str(&b, PyBytes_AsString(path));
            gj_buf_put_i64(&b, (int64_t)s.st_size);
            gj_buf_put_i64(&b, (int64_t)s.st_mtim.tv_sec);
            gj_buf_put_i64(&b, (int64_t)s.st_mtim.tv_nsec);
            gj_buf_put_i64(&b, FORMAT);
            gj_buf_put_i64(&b, (int64_t)Py_Version);
            st->cache_identity =
                b.failed ? PyErr_NoMemory()
                         : PyBytes_FromStringAndSize((const char *)b.data, (Py_ssize_t)b.len);
            gj_buf_free(&b);
        }
    }
    Py_XDECREF(pkg);
    Py_XDECREF(ext);
    Py_XDECREF(version);
    Py_XDECREF(file);
    Py_XDECREF(path);
    return st->cache_identity ? 0 : -1;
}

int gj_py_cache_key(GjPyState *st, const GjBuf *material, char key[GJ_CACHE_KEY_LEN + 1]) {
    if (identity(st) < 0)
        return -1;
    char *id;
    Py_ssize_t n;
    PyBytes_AsStringAndSize(st->cache_identity, &id, &n);
    unsigned char digest[GJ_SHA256_BYTES];
    GjSha256 h;
    gj_sha256_init(&h);
    gj_sha256_update(&h, id, (size_t)n);
    gj_sha256_update(&h, material->data, material->len);
    gj_sha256_final(&h, digest);
    for (int i = 0; i < GJ_SHA256_BYTES; i++) {
        key[2 * i] = "0123456789abcdef"[digest[i] >> 4];
        key[2 * i + 1] = "0123456789abcdef"[digest[i] & 15];
    }
    key[GJ_CACHE_KEY_LEN] = '\0';
    return 0;
}

/* The digest a key spells in hex. */
static void key_digest(const char *key, unsigned char digest[GJ_SHA256_BYTES]) {
    for (int i = 0; i < GJ_SHA256_BYTES; i++) {
        int hi = key[2 * i], lo = key[2 * i + 1];
        hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
        lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
        digest[i] = (unsigned char)(hi << 4 | lo);
    }
}

/* The path of key's entry (file-system bytes, a new reference); NULL raised. */
static PyObject *entry_path(const char *key) {
    PyObject *dir = gj_py_cache_directory(NULL, NULL);
    PyObject *name = dir ? PyUnicode_FromFormat("%U/%s%s", dir, key, SUFFIX) : NULL;
    PyObject *path = NULL;
    if (name && !PyUnicode_FSConverter(name, &path))
        path = NULL;
    Py_XDECREF(dir);
    Py_XDECREF(name);
    return path;
}

static uint64_t get_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* All of fd's n bytes into buf: 1, or 0 when they could not be read. */
static int read_all(int fd, unsigned char *buf, size_t n) {
    while (n > 0) {
        ssize_t got = read(fd, buf, n);
        if (got <= 0)
            return 0;
        buf += got;
        n -= (size_t)got;
    }
    return 1;
}

/* The payload of the entry file at path when it is this user's regular
   file, whole and digest's (malloc'd, *n bytes), else NULL.  Touches a
   file it returns.  Without the GIL. */
static unsigned char *read_entry(const char *path, const unsigned char digest[GJ_SHA256_BYTES],
                                 size_t *n) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat s;
    unsigned char *data = NULL;
    int ok = fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && s.st_uid == geteuid() &&
             s.st_size >= HEADER_BYTES && (data = malloc((size_t)s.st_size)) &&
             read_all(fd, data, (size_t)s.st_size);
    size_t size = ok ? (size_t)s.st_size - HEADER_BYTES : 0;
    const unsigned char *h = data;
    unsigned char checksum[GJ_SHA256_BYTES];
    ok = ok && memcmp(h, MAGIC, 8) == 0 && get_le(h + 8, 4) == FORMAT &&
         memcmp(h + 12, digest, GJ_SHA256_BYTES) == 0 &&
         get_le(h + 12 + GJ_SHA256_BYTES, 8) == size;
    if (ok) {
        gj_sha256_digest(data + HEADER_BYTES, size, checksum);
        ok = memcmp(h + 20 + GJ_SHA256_BYTES, checksum, GJ_SHA256_BYTES) == 0;
    }
    if (ok) {
        futimens(fd, NULL);   /* used now: evicted last (a failure only ages it) */
        memmove(data, data + HEADER_BYTES, size);
        *n = size;
    } else {
        free(data);
        data = NULL;
    }
    close(fd);
    return data;
}

int gj_py_cache_read(const char *key, unsigned char **payload, size_t *n) {
    PyObject *path = entry_path(key);
    if (!path)
        return -1;
    unsigned char digest[GJ_SHA256_BYTES];
    key_digest(key, digest);
    Py_BEGIN_ALLOW_THREADS *payload = read_entry(PyBytes_AsString(path), digest, n);
    Py_END_ALLOW_THREADS Py_DECREF(path);
    return *payload != NULL;
}

int gj_py_cache_discard(const char *key) {
    PyObject *path = entry_path(key);
    if (path)
        unlink(PyBytes_AsString(path));   /* gone already: as well */
    Py_XDECREF(path);
    return path ? 0 : -1;
}

PyObject *gj_py_cache_entry(const char *key, const void *payload, size_t n) {
    unsigned char h[HEADER_BYTES];
    memcpy(h, MAGIC, 8);
    for (int i = 0; i < 4; i++)
        h[8 + i] = (unsigned char)((unsigned)FORMAT >> (8 * i));
    key_digest(key, h + 12);
    for (int i = 0; i < 8; i++)
        h[12 + GJ_SHA256_BYTES + i] = (unsigned char)((uint64_t)n >> (8 * i));
    gj_sha256_digest(payload, n, h + 20 + GJ_SHA256_BYTES);
    PyObject *entry = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(HEADER_BYTES + n));
    if (entry) {
        memcpy(PyBytes_AsString(entry), h, HEADER_BYTES);
        memcpy(PyBytes_AsString(entry) + HEADER_BYTES, payload, n);
    }
    return entry;
}

PyObject *gj_py_cache_counts(PyObject *module, PyObject *unused) {
    (void)unused;
    GjPyState *st = PyModule_GetState(module);
    return Py_BuildValue("(nn)", st->cache_hits, st->cache_misses);
}
