/*
 * Output files that are never left half-written: data goes to a temporary
 * file in the destination folder, renamed over the destination only when
 * complete (rename is atomic within a file system). Abandoning, or the
 * process dying, leaves the destination as it was.
 */
#ifndef WATTSIM_OUTFILE_H
#define WATTSIM_OUTFILE_H

#include <stdio.h>
#include "wattsim/error.h"

typedef struct ws_outfile {
    FILE *f;
    char *path;       /* destination */
    char *tmp;        /* temporary beside it */
} ws_outfile;

/* Create folders of `path` as needed and open a temporary beside it. */
int ws_outfile_open(ws_outfile *o, const char *path, ws_error *err);
/* Flush, close and rename into place. */
int ws_outfile_commit(ws_outfile *o, ws_error *err);
/* Close and delete the temporary (safe on a zeroed or committed struct). */
void ws_outfile_abort(ws_outfile *o);

/* mkdir -p. */
int ws_mkdirs(const char *dir, ws_error *err);

#endif
