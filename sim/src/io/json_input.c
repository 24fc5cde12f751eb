/* A JSON input file, bounded and noted (wattsim/json_input.h). */
#include "wattsim/json_input.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/input.h"
#include "wattsim/infile.h"
#include "wattsim/outfile.h"

json_t *ws_json_input_load(const char *path, size_t max_bytes, ws_error *err)
{
    int fd = ws_infile_open_input(path, max_bytes, NULL, err);
    if (fd < 0) return NULL;
    json_error_t je;
    json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (!root) {
        if (je.line <= 0) ws_fail(err, "%s: %s", path, je.text);
        else ws_fail(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    return root;
}
