/* Reading files of a folder someone else filled; see wattsim/infile.h. */
#define _GNU_SOURCE   /* O_NOFOLLOW, O_DIRECTORY, O_CLOEXEC, fstatat */
#include "wattsim/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/input.h"
#include "wattsim/outfile.h"

static int one_name(const char *name)
{
    return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static const char *type_of(mode_t m)
{
    return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder"
         : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device"
         : "not a regular file";
}

int ws_infile_check_at(int dirfd, const char *name, char *why, size_t why_size)
{
    struct stat st;
    if (!one_name(name)) {
        snprintf(why, why_size, "not a file name in the folder");
        return WS_INFILE_REFUSED;
    }
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return WS_INFILE_MISSING;
        snprintf(why, why_size, "cannot read: %s", strerror(errno));
        return WS_INFILE_REFUSED;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s", type_of(st.st_mode));
        return WS_INFILE_REFUSED;
    }
    return WS_INFILE_OK;
}

int ws_infile_read_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                      char *why, size_t why_size)
{
    *out = NULL;
    *len = 0;
    /* The type first, without opening: opening some devices acts. */
    int rc = ws_infile_check_at(dirfd, name, why, why_size);
    if (rc != WS_INFILE_OK) return rc;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT) return WS_INFILE_MISSING;
        snprintf(why, why_size, "%s", errno == ELOOP ? "a symbolic link"
                                                     : strerror(errno));
        return WS_INFILE_REFUSED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fstat(fd, &st) != 0) snprintf(why, why_size, "cannot read: %s", strerror(errno));
        else snprintf(why, why_size, "%s", type_of(st.st_mode));
        close(fd);
        return WS_INFILE_REFUSED;
    }
    if ((unsigned long long)st.st_size > max) {
        snprintf(why, why_size, "larger than %zu bytes", max);
        close(fd);
        return WS_INFILE_REFUSED;
    }
    /* The size may change while we read: never past max + 1 bytes. */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *s = malloc(cap + 1);
    while (s) {
        if (n == cap) {
            if (cap > max) break;
            size_t grow = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *t = realloc(s, grow + 1);
            if (!t) { free(s); s = NULL; break; }
            s = t;
            cap = grow;
        }
        ssize_t r = read(fd, s + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, why_size, "cannot read: %s", strerror(errno));
            free(s);
            close(fd);
            return WS_INFILE_REFUSED;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!s) {
        snprintf(why, why_size, "out of memory");
        return WS_INFILE_REFUSED;
    }
    if (n > max) {
        snprintf(why, why_size, "larger than %zu bytes", max);
        free(s);
        return WS_INFILE_REFUSED;
    }
    s[n] = '\0';
    *out = s;
    *len = n;
    return WS_INFILE_OK;
}

int ws_infile_dir_at(int dirfd, const char *name, char *why, size_t why_size)
{
    struct stat st;
    if (!one_name(name)) {
        snprintf(why, why_size, "not a folder name");
        errno = EINVAL;
        return -1;
    }
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int e = errno;
        snprintf(why, why_size, "cannot read: %s", strerror(e));
        errno = e;
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "%s", type_of(st.st_mode));
        errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
        return -1;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, why_size, "%s", e == ELOOP || e == ENOTDIR ? "not a folder"
                                                                 : strerror(e));
        errno = e == ENOENT ? ENOENT : e;
    }
    return fd;
}

int ws_infile_open_input(const char *path, size_t max_bytes, size_t *size, ws_error *err)
{
    int fd = ws_input_open(path, err);       /* a regular file only */
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        ws_fail(err, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (max_bytes && (unsigned long long)st.st_size > max_bytes) {
        ws_fail(err, "%s: %lld bytes, more than the limit of %zu (--max-trace-bytes /"
                " WATTSIM_MAX_TRACE_BYTES)", path, (long long)st.st_size, max_bytes);
        close(fd);
        return -1;
    }
    ws_input_note_fd(fd);                    /* no output of this command may replace it */
    if (size) *size = (size_t)st.st_size;
    return fd;
}
