/* Atomic output files; see wattsim/outfile.h. */
#include "wattsim/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ws_mkdirs(const char *dir, ws_error *err)
{
    char *p = strdup(dir);
    if (!p) return ws_fail(err, "out of memory");
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                ws_fail(err, "%s: cannot create folder: %s", p, strerror(e));
                free(p);
                return -1;
            }
            *s = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(p);
        return ws_fail(err, "%s: not a folder", dir);
    }
    free(p);
    return 0;
}

int ws_outfile_open(ws_outfile *o, const char *path, ws_error *err)
{
    memset(o, 0, sizeof *o);
    o->path = strdup(path);
    size_t n = strlen(path) + 16;
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        ws_outfile_abort(o);
        return ws_fail(err, "out of memory");
    }
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = strndup(path, (size_t)(slash - path));
        int rc = dir ? ws_mkdirs(dir, err) : ws_fail(err, "out of memory");
        free(dir);
        if (rc) { ws_outfile_abort(o); return -1; }
    }
    snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        ws_fail(err, "%s: cannot create: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        ws_outfile_abort(o);
        return -1;
    }
    fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        ws_outfile_abort(o);
        return ws_fail(err, "%s: cannot open: %s", path, strerror(errno));
    }
    return 0;
}

int ws_outfile_commit(ws_outfile *o, ws_error *err)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0) bad = 1;
    o->f = NULL;
    if (bad) {
        ws_fail(err, "%s: write failed: %s", o->path, strerror(errno));
        ws_outfile_abort(o);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        ws_fail(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
        ws_outfile_abort(o);
        return -1;
    }
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return 0;
}

void ws_outfile_abort(ws_outfile *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}
