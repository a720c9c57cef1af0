/*
 * test_sha256.c - unit test of compiler/sha256.c.
 *
 * Built and run by meson (tests/c/meson.build, through sha256_cases.py).
 * Checks the examples of FIPS 180-4 (and its million 'a's), then each line of standard input, "<message in
 * hex> <SHA-256 in hex>" as Python's hashlib computed it, hashed in one
 * call and fed in pieces of several sizes (so every way a piece can meet a
 * 64-byte block boundary is taken).  Prints one line per failure and exits
 * 1 if there was any.
 */
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void hex(const unsigned char *d, char out[2 * GJ_SHA256_BYTES + 1]) {
    for (int i = 0; i < GJ_SHA256_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The digest of msg fed `piece` bytes at a time (0: in one call). */
static void digest_in_pieces(const unsigned char *msg, size_t n, size_t piece,
                             char out[2 * GJ_SHA256_BYTES + 1]) {
    unsigned char d[GJ_SHA256_BYTES];
    if (piece == 0) {
        gj_sha256_digest(msg, n, d);
    } else {
        GjSha256 s;
        gj_sha256_init(&s);
        for (size_t at = 0; at < n; at += piece)
            gj_sha256_update(&s, msg + at, n - at < piece ? n - at : piece);
        gj_sha256_final(&s, d);
    }
    hex(d, out);
}

static void check(const char *what, const unsigned char *msg, size_t n, const char *want) {
    static const size_t pieces[] = {0, 1, 3, 55, 56, 63, 64, 65, 127, 1000};
    char got[2 * GJ_SHA256_BYTES + 1];
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        digest_in_pieces(msg, n, pieces[i], got);
        if (strcmp(got, want) != 0) {
            failures++;
            fprintf(stderr, "FAIL %s (%zu bytes, pieces of %zu): %s, not %s\n", what, n, pieces[i],
                    got, want);
        }
    }
}

static void fips_examples(void) {
    const char *abc = "abc";
    check("FIPS 'abc'", (const unsigned char *)abc, 3,
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check("FIPS empty", (const unsigned char *)"", 0,
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check("FIPS two blocks", (const unsigned char *)two, strlen(two),
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    size_t n = 1000000;
    unsigned char *a = malloc(n);
    if (!a) {
        failures++;
        return;
    }
    memset(a, 'a', n);
    check("FIPS a million 'a'", a, n,
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static int nibble(int ch) {
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

int main(void) {
    fips_examples();
    size_t cap = 1 << 16, len = 0;
    char *line = malloc(cap);
    int cases = 0, ch;
    while (line && (ch = getchar()) != EOF) {
        if (ch != '\n') {
            if (len + 1 >= cap && !(line = realloc(line, cap *= 2)))
                break;
            line[len++] = (char)ch;
            continue;
        }
        line[len] = '\0';
        char *space = strchr(line, ' ');
        size_t n = space ? (size_t)(space - line) / 2 : 0;
        unsigned char *msg = malloc(n + 1);
        for (size_t i = 0; msg && space && i < n; i++)
            msg[i] = (unsigned char)(nibble(line[2 * i]) << 4 | nibble(line[2 * i + 1]));
        if (!space || !msg || strlen(space + 1) != 2 * GJ_SHA256_BYTES) {
            failures++;
            fprintf(stderr, "FAIL malformed input line %d\n", cases + 1);
        } else {
            check("hashlib's", msg, n, space + 1);
        }
        free(msg);
        cases++;
        len = 0;
    }
    free(line);
    if (cases == 0) {
        failures++;
        fprintf(stderr, "FAIL no cases on standard input\n");
    }
    printf("%d cases from hashlib, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
