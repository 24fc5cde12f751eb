/*
 * Input files: every file wattsim reads by name (traces, series, logs,
 * configs, catalogues, files it hashes) is opened here, and only when it
 * is a regular file. A folder, a FIFO, a device or a socket given where a
 * file belongs is refused at once with one line naming it -- never read
 * until memory runs out (/dev/zero), never waited on (a FIFO with no
 * writer: the open does not block, and the file type is checked on the
 * open descriptor, so the check and the read are of the same file).
 * Symbolic links to regular files are followed.
 */
#ifndef WATTSIM_INPUT_H
#define WATTSIM_INPUT_H

#include <stdio.h>
#include "wattsim/error.h"

/* A descriptor (O_CLOEXEC, blocking) of the regular file at `path`, or -1
 * with err set: "PATH: cannot open: REASON" or "PATH: not a regular file
 * (a folder); give a file". */
int ws_input_open(const char *path, ws_error *err);
/* The same as a stdio stream ("rb"), or NULL with err set. */
FILE *ws_input_fopen(const char *path, ws_error *err);

/* What a file of mode m is, for "not a regular file (...)": "a folder",
 * "a FIFO", "a character device", "a block device", "a socket". */
const char *ws_input_kind(unsigned int m);

#endif
