/*
 * SHA-256 against the FIPS 180-4 / NIST example vectors, fed whole and in
 * odd-sized pieces (the buffering across 64-byte blocks is where bugs hide),
 * and the file helper against the same digest.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "wattsim/sha256.h"

static void hex_of(const char *msg, size_t n, size_t piece, char out[65])
{
    ws_sha256 s;
    ws_sha256_init(&s);
    for (size_t i = 0; i < n; i += piece)
        ws_sha256_update(&s, msg + i, n - i < piece ? n - i : piece);
    unsigned char d[32];
    ws_sha256_final(&s, d);
    ws_sha256_hex(d, out);
}

Test(sha256, nist_vectors)
{
    static const struct { const char *msg, *hex; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t piece = 1; piece <= 65; piece += 7) {
            char out[65];
            hex_of(v[i].msg, strlen(v[i].msg), piece, out);
            cr_expect_str_eq(out, v[i].hex, "vector %zu, pieces of %zu", i, piece);
        }
}

Test(sha256, million_a)
{
    static char a[1000];
    memset(a, 'a', sizeof a);
    ws_sha256 s;
    ws_sha256_init(&s);
    for (int i = 0; i < 1000; i++) ws_sha256_update(&s, a, sizeof a);
    unsigned char d[32];
    char out[65];
    ws_sha256_final(&s, d);
    ws_sha256_hex(d, out);
    cr_expect_str_eq(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, file_and_missing_file)
{
    char path[] = "/tmp/ws-sha256-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    cr_assert_eq(fputs("abc", f) >= 0, 1);
    cr_assert_eq(fclose(f), 0);
    char out[65];
    ws_error err = {{0}};
    cr_assert_eq(ws_sha256_file(path, out, &err), 0, "%s", err.msg);
    cr_expect_str_eq(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    remove(path);
    cr_expect_eq(ws_sha256_file(path, out, &err), -1);
    cr_expect(strstr(err.msg, path) != NULL, "error names the file: %s", err.msg);
}
