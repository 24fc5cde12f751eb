/*
 * Reading a file of a folder someone else filled (a results folder
 * received from a colleague or a cluster) without letting the folder
 * choose what is read: only a regular file that is really in the folder
 * (a single name, opened relative to the folder's descriptor, no symbolic
 * link followed), never a FIFO (it would block), a device (/dev/zero
 * never ends) or a socket, and at most a given number of bytes.
 */
#ifndef WATTSIM_INFILE_H
#define WATTSIM_INFILE_H

#include <stddef.h>

#include "wattsim/error.h"

/* What ws_infile_read_at and ws_infile_check_at found. */
enum { WS_INFILE_OK = 0, WS_INFILE_MISSING = 1, WS_INFILE_REFUSED = -1 };

/* Whether NAME (one file name: no '/', not "." or "..") in the folder
 * dirfd is a regular file, without following a symbolic link or opening
 * it. WS_INFILE_OK; WS_INFILE_MISSING when there is nothing of that name;
 * WS_INFILE_REFUSED with why ("a symbolic link", "a FIFO", ...) else. */
int ws_infile_check_at(int dirfd, const char *name, char *why, size_t why_size);

/* Read NAME of the folder dirfd whole: a regular file, not a symbolic
 * link, at most max bytes. Opened without following a link and without
 * blocking (O_NOFOLLOW | O_NONBLOCK), its type then checked on the open
 * descriptor, so a file swapped after the check is not read either.
 * WS_INFILE_OK with *out (malloc'd, NUL-terminated; the file may hold
 * NULs: use *len) and *len; WS_INFILE_MISSING; or WS_INFILE_REFUSED with
 * why (its type, "larger than N bytes", or the read error). */
int ws_infile_read_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                      char *why, size_t why_size);

/* Open the subfolder NAME of dirfd (O_DIRECTORY, no link followed): its
 * descriptor (O_CLOEXEC), or -1 with why set and errno ENOENT (nothing of
 * that name), ELOOP (a symbolic link, whatever it points to), ENOTDIR
 * (something else) or the error of the open. */
int ws_infile_dir_at(int dirfd, const char *name, char *why, size_t why_size);

/* Open PATH to read as an input of this command: a regular file
 * (ws_input_open's rule), at most max_bytes long (0: no limit; the limit
 * is --max-trace-bytes / WATTSIM_MAX_TRACE_BYTES), noted so that no output
 * of the command may replace it (ws_input_note_fd). Its size goes to
 * *size when size is not NULL. The descriptor, or -1 with err set. */
int ws_infile_open_input(const char *path, size_t max_bytes, size_t *size, ws_error *err);

#endif
