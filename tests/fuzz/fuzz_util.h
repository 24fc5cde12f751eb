/*
 * Shared by the libFuzzer harnesses: the readers take file paths, so each
 * input is written to a file first (a memfd for one file, a private
 * temporary folder for several), and every error they report must still
 * be one non-empty line, the project's rule for messages.
 */
#ifndef WS_FUZZ_UTIL_H
#define WS_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* memfd_create; the build defines it for every harness */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wattsim/error.h"

/* Limits small enough to keep executions fast; the limit code paths are
 * the same as with the defaults. */
#define FUZZ_MAX_LINE ((size_t)1 << 16)
#define FUZZ_MAX_BYTES ((size_t)1 << 20)

/* Replace the contents of fd by data. */
static inline void fuzz_put_fd(int fd, const uint8_t *data, size_t size)
{
    if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
}

/* A memfd reachable by path, created once per process. */
static inline const char *fuzz_memfd_path(int *fd)
{
    static char path[64];
    static int mfd = -1;
    if (mfd < 0) {
        mfd = memfd_create("fuzz", 0);
        if (mfd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    }
    *fd = mfd;
    return path;
}

static inline void fuzz_put_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) abort();
}

/* A failure must come with a one-line, non-empty message. */
static inline void fuzz_check_error(const ws_error *err)
{
    if (!err->msg[0] || strchr(err->msg, '\n')) abort();
}

#endif
