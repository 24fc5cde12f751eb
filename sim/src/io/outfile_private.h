/*
 * What the output folder's lock (outdir.c) needs of the atomic file
 * writer (outfile.c), whose process-wide state it shares: the starting
 * folder, the locked folder's path and descriptor, --force, the folders
 * made, and the removal of a private folder. Private to io/; the writer
 * never calls the lock (the arrow runs outdir.c -> outfile.c).
 */
#ifndef WATTSIM_OUTFILE_PRIVATE_H
#define WATTSIM_OUTFILE_PRIVATE_H

#include <stddef.h>

/* The descriptor of the working folder the process started in
 * (ws_outfile_init), or AT_FDCWD before it. */
int ws_outfile_cwd(void);
/* Whether --force is set (ws_outfile_set_force). */
int ws_outfile_forced(void);
/* How many folders this command has made so far (ws_mkdirs). */
size_t ws_outfile_n_made(void);
/* Paths below `root` (malloc'd, without trailing slashes, owned from now
 * on) resolve from `fd`: the folder ws_outdir_lock locked. An earlier
 * descriptor stays open (as its lock). */
void ws_outfile_set_root(char *root, int fd);
/* The locked folder's descriptor, or -1. */
int ws_outfile_root_fd(void);
/* Remove the folder `name` in dir (a private folder) with the files it
 * holds; async-signal-safe. */
void ws_outfile_remove_private(int dir, const char *name);
/* After a failed command: remove the folders this command made, deepest
 * first, each only when empty (but for a lock file of ours). */
void ws_outfile_remove_made(void);
/* The writer's part of the end of a command: forget the made folders
 * (they stay), close the locked folder's descriptor, forget the inputs,
 * the files written and --force. */
void ws_outfile_release(void);

#endif
