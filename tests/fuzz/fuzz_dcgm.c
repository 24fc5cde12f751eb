/*
 * libFuzzer harness for the DCGM (Prometheus range query JSON) reader
 * (sim/src/io/import_dcgm.c) and the series it builds: power samples or an
 * energy counter with resets; see fuzz_telemetry.h.
 */
#include "fuzz_telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_error err = {{0}};
    ws_telemetry t;
    ws_warnings w = {0};
    if (ws_import_dcgm(path, FUZZ_MAX_BYTES, &t, &w, &err)) fuzz_check_error(&err);
    else fuzz_telemetry_check(&t, &w);
    ws_telemetry_free(&t);
    ws_warnings_free(&w);
    return 0;
}
