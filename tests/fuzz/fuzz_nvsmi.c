/*
 * libFuzzer harness for the nvidia-smi log reader (sim/src/io/import_nvsmi.c)
 * and the series it builds (import_telemetry.c): see fuzz_telemetry.h.
 */
#include "fuzz_telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_telemetry t;
    ws_warnings w = {0};
    if (ws_import_nvsmi(path, &lim, &t, &w, &err)) fuzz_check_error(&err);
    else fuzz_telemetry_check(&t, &w);
    ws_telemetry_free(&t);
    ws_warnings_free(&w);
    return 0;
}
