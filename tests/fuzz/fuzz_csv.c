/*
 * libFuzzer harness for the CSV reader (sim/src/io/csv.c): any bytes, plain
 * or gzip, must give records or a one-line error, never a crash, a hang or
 * a sanitizer report.
 */
#include "fuzz_util.h"
#include "wattsim/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_csv *c = ws_csv_open(path, &lim, &err);
    if (!c) {
        fuzz_check_error(&err);
        return 0;
    }
    int r;
    long last = 0;
    while ((r = ws_csv_next(c, &err)) == 1) {
        size_t n = ws_csv_nfields(c);
        if (n == 0) abort();
        size_t total = 0;
        for (size_t i = 0; i < n; i++) total += strlen(ws_csv_field(c, i));
        if (total > lim.max_line) abort();          /* the limit holds */
        if (ws_csv_line(c) <= last) abort();        /* lines go forward */
        last = ws_csv_line(c);
    }
    if (r < 0) fuzz_check_error(&err);
    ws_csv_close(c);
    return 0;
}
