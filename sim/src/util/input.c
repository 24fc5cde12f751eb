/* Opening input files, regular ones only; see wattsim/input.h. */
#define _GNU_SOURCE
#include "wattsim/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *ws_input_kind(unsigned int m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

int ws_input_open(const char *path, ws_error *err)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return ws_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ws_fail(err, "%s: cannot open: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ws_fail(err, "%s: not a regular file (%s); give a file", path,
                       ws_input_kind(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return ws_fail(err, "%s: cannot open: %s", path, strerror(e));
    }
    return fd;
}

FILE *ws_input_fopen(const char *path, ws_error *err)
{
    int fd = ws_input_open(path, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        ws_fail(err, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
