/*
 * libFuzzer harness for the decoder of a journal header's named parts
 * (ws_sweep_fp_decode, sim/src/study/fingerprint.c). The parts come from a
 * journal on disk, possibly of a received folder, or from another MPI
 * rank; their strings end up in a refusal printed on a terminal. So any
 * bytes must decode or be refused, never crash, read past the buffer or
 * allocate what the bytes cannot hold, and what decodes must be what
 * encodes back to the same bytes, with every string one line of text.
 *
 * The bytes end with a CRC-32 over the rest, which random bytes almost
 * never match: the first input byte chooses whether the harness appends
 * the right CRC to the rest (to explore the parts) or hands the rest over
 * as it is (to exercise the check itself).
 */
#include <zlib.h>

#include "fuzz_util.h"
#include "sweep_run.h"

/* What a decoded part must be: strings within their fields, no control
 * character (the decoder's promise: a message quoting them stays one
 * line and drives no terminal). */
static void check_str(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap) abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    int with_crc = data[0] & 1;
    data++;
    size--;
    uint8_t *buf = malloc(size + 4);
    if (!buf) abort();
    if (size) memcpy(buf, data, size);
    size_t len = size;
    if (with_crc) {
        uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)size);
        memcpy(buf + size, &c, 4);
        len += 4;
    }
    ws_sweep_fp fp;
    if (ws_sweep_fp_decode(buf, len, &fp)) {
        /* refused: nothing is left allocated or claimed */
        if (fp.part || fp.n) abort();
        free(buf);
        return 0;
    }
    for (size_t k = 0; k < fp.n; k++) {
        check_str(fp.part[k].what, sizeof fp.part[k].what);
        check_str(fp.part[k].value, sizeof fp.part[k].value);
    }
    /* the layout has one spelling: encoding what decoded gives the bytes */
    char *again = NULL;
    size_t again_len = 0;
    if (ws_sweep_fp_encode(&fp, &again, &again_len)) abort();
    if (again_len != len || memcmp(again, buf, len)) abort();
    free(again);
    /* a refusal built from it is one line: against itself nothing differs;
     * against a copy with each part's hash changed, the first part is
     * named (when there is one) */
    char what[512];
    if (ws_sweep_fp_diff(&fp, &fp, "in the journal", "here", what, sizeof what)) abort();
    ws_sweep_fp other = fp;
    other.part = NULL;
    if (fp.n) {
        other.part = malloc(fp.n * sizeof *other.part);
        if (!other.part) abort();
        memcpy(other.part, fp.part, fp.n * sizeof *other.part);
        for (size_t k = 0; k < fp.n; k++) other.part[k].sha[0] ^= 1;
        if (!ws_sweep_fp_diff(&fp, &other, "in the journal", "here", what, sizeof what))
            abort();
        if (!what[0] || strchr(what, '\n') || !strstr(what, fp.part[0].what)) abort();
    }
    free(other.part);
    ws_sweep_fp_free(&fp);
    free(buf);
    return 0;
}
