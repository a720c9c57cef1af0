/*
 * cpuprint.c - CUDA's device-side vprintf for the CPU target
 * (gj_cpu_vprintf, cpuexec.h): what print() in a kernel calls.
 *
 * The format is read as CUDA's printf reads it, each argument from the
 * argument buffer at its natural alignment; each conversion is handed to
 * the C library's snprintf.  The whole line is built first (on the stack
 * while short), then written to fd 1 with one write(2) under a process
 * lock, so lines of different threads never interleave, whichever worker
 * or fiber prints them.
 */
#include "cpuexec.h"
#include "cpuexec_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line at a time, process-wide (re-made in a fork() child). */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

void gj_cpu_print_after_fork(void) { pthread_mutex_init(&print_lock, NULL); }

/* The line being formatted: on the caller's stack while it is short. */
typedef struct Line {
    char *p;
    size_t len, cap;
    int heap, oom;
} Line;

static void put(Line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Line *l, const char *fmt, ...) {
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(l->p + l->len, l->cap - l->len, fmt, ap);
    if (n >= 0 && (size_t)n >= l->cap - l->len) {
        size_t cap = (l->len + (size_t)n + 1) * 2;
        char *p = l->heap ? realloc(l->p, cap) : malloc(cap);
        if (p && !l->heap)
            memcpy(p, l->p, l->len);
        if (p) {
            l->p = p;
            l->cap = cap;
            l->heap = 1;
            n = vsnprintf(l->p + l->len, l->cap - l->len, fmt, again);
        } else {
            n = -1;
        }
    }
    if (n < 0)
        l->oom = 1;
    else
        l->len += (size_t)n;
    va_end(again);
    va_end(ap);
}

/* The next argument of `size` bytes, at its natural alignment; 0 without
   an argument buffer. */
static int fetch(const unsigned char *args, size_t *off, size_t size, void *out) {
    if (!args)
        return 0;
    *off = (*off + size - 1) & ~(size - 1);
    memcpy(out, args + *off, size);
    *off += size;
    return 1;
}

/* A field width or precision at *pp: digits, or '*' taking an int
   argument.  Returns whether there is one, its value in *v (clamped to
   keep lines sane). */
static int field(const char **pp, const unsigned char *args, size_t *off, int32_t *nargs, long *v) {
    const char *p = *pp;
    *v = 0;
    if (*p == '*') {
        int32_t x = 0;
        if (fetch(args, off, 4, &x))
            ++*nargs;
        *v = x < -(1 << 20) ? -(1L << 20) : x > 1 << 20 ? 1L << 20 : x;
        *pp = p + 1;
        return 1;
    }
    for (; *p >= '0' && *p <= '9'; p++)
        *v = *v * 10 + (*p - '0') < 1L << 20 ? *v * 10 + (*p - '0') : 1L << 20;
    int any = p != *pp;
    *pp = p;
    return any;
}

/* Formats the conversion at p (just after its '%') into l; returns where
   the format goes on.  An unknown conversion is copied as it stands. */
static const char *convert(Line *l, const char *p, const unsigned char *args, size_t *off,
                           int32_t *nargs) {
    const char *start = p - 1;
    char spec[48] = "%";
    size_t n = 1;
    for (; *p && strchr("-+ #0", *p); p++)
        if (n < 8)
            spec[n++] = *p;
    long width, prec = -1;
    int has_width = field(&p, args, off, nargs, &width);
    if (*p == '.') {
        p++;
        field(&p, args, off, nargs, &prec);   /* none ("%.f") is 0; negative, as if absent */
    }
    int longs = 0, shorts = 0;
    for (; *p && strchr("hlLqjzt", *p); p++) {
        shorts += *p == 'h';
        longs += *p != 'h';
    }
    char conv = *p;
    if (!conv || !strchr("diouxXcspfFeEgGaA", conv) || !args) {
        p += conv != 0;
        put(l, "%.*s", (int)(p - start), start);
        return p;
    }
    p++;
    if (has_width)
        n += (size_t)snprintf(spec + n, sizeof spec - n, "%ld", width);
    if (prec >= 0)
        n += (size_t)snprintf(spec + n, sizeof spec - n, ".%ld", prec);
    int is_int = strchr("diouxX", conv) != NULL;
    if (is_int && longs)
        n += (size_t)snprintf(spec + n, sizeof spec - n, "ll");
    else if (is_int && shorts)
        n += (size_t)snprintf(spec + n, sizeof spec - n, "%s", shorts > 1 ? "hh" : "h");
    spec[n++] = conv;
    spec[n] = '\0';
    ++*nargs;
    if (is_int && longs) {
        uint64_t v = 0;
        fetch(args, off, 8, &v);
        put(l, spec, (long long)v);
    } else if (is_int || conv == 'c') {
        int32_t v = 0;
        fetch(args, off, 4, &v);
        put(l, spec, v);
    } else if (conv == 's' || conv == 'p') {
        uint64_t v = 0;
        fetch(args, off, 8, &v);
        const void *ptr = (const void *)(uintptr_t)v;
        put(l, spec, conv == 's' && !ptr ? "(null)" : ptr);
    } else {
        double v = 0;
        fetch(args, off, 8, &v);
        put(l, spec, v);
    }
    return p;
}

int32_t gj_cpu_vprintf(const char *format, const void *args) {
    if (!format)
        return -1;
    char stack[256];
    Line l = {.p = stack, .cap = sizeof stack};
    size_t off = 0;
    int32_t nargs = 0;
    for (const char *p = format; *p && !l.oom;) {
        size_t k = strcspn(p, "%");
        if (k) {
            put(&l, "%.*s", (int)k, p);
            p += k;
        } else if (p[1] == '%') {
            put(&l, "%%");
            p += 2;
        } else {
            p = convert(&l, p + 1, args, &off, &nargs);
        }
    }
    int32_t rc = l.oom ? -2 : nargs;
    /* One write(2) of the whole line under a process lock, after what C's
       stdio holds: lines of different threads never interleave. */
    pthread_mutex_lock(&print_lock);
    fflush(stdout);
    for (size_t done = 0; rc >= 0 && done < l.len;) {
        ssize_t w = write(STDOUT_FILENO, l.p + done, l.len - done);
        if (w > 0)
            done += (size_t)w;
        else if (!(w < 0 && errno == EINTR))
            rc = -2;
    }
    pthread_mutex_unlock(&print_lock);
    if (l.heap)
        free(l.p);
    return rc;
}
