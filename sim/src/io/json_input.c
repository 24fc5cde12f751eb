/* A JSON input file, bounded and noted (wattsim/json_input.h). */
#include "wattsim/json_input.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/input.h"
#include "wattsim/outfile.h"

json_t *ws_json_input_load(const char *path, size_t max_bytes, ws_error *err)
{
    int fd = ws_input_open(path, err);       /* a regular file only */
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        ws_fail(err, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (max_bytes && (unsigned long long)st.st_size > max_bytes) {
        ws_fail(err, "%s: %lld bytes, more than the limit of %zu (--max-trace-bytes /"
                " WATTSIM_MAX_TRACE_BYTES)", path, (long long)st.st_size, max_bytes);
        close(fd);
        return NULL;
    }
    ws_input_note_fd(fd);                    /* no output of this command may replace it */
    json_error_t je;
    json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (!root) {
        if (je.line <= 0) ws_fail(err, "%s: %s", path, je.text);
        else ws_fail(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    return root;
}
