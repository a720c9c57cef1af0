/*
 * sha256.h - SHA-256 (FIPS 180-4), for the persistent kernel cache: the
 * key of an entry and the checksum of its contents.  Here rather than
 * through Python's hashlib, whose import (OpenSSL) costs a new process's
 * first cached launch more than the rest of the lookup.
 * tests/c/test_sha256.c checks it against FIPS's examples and hashlib.
 */
#ifndef GJ_SHA256_H
#define GJ_SHA256_H

#include <stddef.h>
#include <stdint.h>

enum { GJ_SHA256_BYTES = 32 };

typedef struct GjSha256 {
    uint32_t h[8];           /* the state */
    uint64_t nbytes;         /* hashed so far */
    unsigned char block[64]; /* the partial block, nbytes % 64 of it used */
} GjSha256;

void gj_sha256_init(GjSha256 *s);
void gj_sha256_update(GjSha256 *s, const void *data, size_t n);
void gj_sha256_final(GjSha256 *s, unsigned char digest[GJ_SHA256_BYTES]);
/* The digest of data[0..n) in one call. */
void gj_sha256_digest(const void *data, size_t n, unsigned char digest[GJ_SHA256_BYTES]);

#endif
