/*
 * Output files that are never left half-written: data goes to a temporary
 * file in the destination folder, renamed over the destination only when
 * complete (rename is atomic within a file system). Abandoning, or the
 * process dying, leaves the destination as it was.
 *
 * The rules every command follows (one place, here):
 * - nothing that existed before the command is replaced without --force
 *   (ws_outfile_set_force); files this command wrote itself may be
 *   rewritten (a manifest, a journal);
 * - an output is never one of the command's inputs (same device and inode
 *   as a file noted with ws_input_note*), even with --force;
 * - every write, flush, fsync and close is checked; a failure is one line
 *   naming the file, and the destination is left as it was;
 * - a command writing into a folder holds an exclusive lock on
 *   FOLDER/.wattsim.lock (ws_outdir_lock) until it exits;
 * - folders made for a command that then fails are removed again
 *   (ws_outfile_cleanup), and so are unfinished temporaries and empty
 *   folders when the process dies of a signal or a policy's exit()
 *   (ws_outfile_abandon).
 */
#ifndef WATTSIM_OUTFILE_H
#define WATTSIM_OUTFILE_H

#include <stdio.h>
#include "wattsim/error.h"

typedef struct ws_outfile {
    FILE *f;
    char *path;       /* destination */
    char *tmp;        /* temporary beside it */
    int update;       /* opened with ws_outfile_open_update */
} ws_outfile;

/* Create folders of `path` as needed and open a temporary beside it.
 * Refuses (err set) when `path` may not be written (ws_outfile_check). */
int ws_outfile_open(ws_outfile *o, const char *path, ws_error *err);
/* As ws_outfile_open, for a file that is an index shared by commands (the
 * manifest.tsv of a folder): it may be rewritten without --force, but is
 * still never an input. */
int ws_outfile_open_update(ws_outfile *o, const char *path, ws_error *err);
/* Flush, fsync, close and rename into place. */
int ws_outfile_commit(ws_outfile *o, ws_error *err);
/* Close and delete the temporary (safe on a zeroed or committed struct). */
void ws_outfile_abort(ws_outfile *o);

/* mkdir -p; folders it makes are remembered for ws_outfile_cleanup. */
int ws_mkdirs(const char *dir, ws_error *err);

/* --force for the rest of the process: replace files that existed before. */
void ws_outfile_set_force(int force);
/* Remember an input of the command, by path or open descriptor (thread
 * safe; unknown paths are ignored). */
void ws_input_note(const char *path);
void ws_input_note_fd(int fd);
/* 0 when `path` may be written now: it does not exist, or this command
 * wrote it, or --force was given; never when it is an input. -1 with err
 * set ("PATH: exists; pass --force ..." / "PATH: is an input of this
 * command ...") otherwise. */
int ws_outfile_check(const char *path, ws_error *err);
/* Record that this command has written `path` (it may rewrite it). */
void ws_outfile_mine(const char *path);
/* Make `dir` (as ws_mkdirs) and hold an exclusive lock on dir/.wattsim.lock
 * until the process exits; another command holding it is an error at once. */
int ws_outdir_lock(const char *dir, ws_error *err);
/* After a failed command: remove the folders ws_mkdirs made (deepest
 * first) if they hold nothing but our lock file. */
void ws_outfile_cleanup(void);
/* The process is dying (a fatal signal, SIGINT/SIGTERM, a policy's
 * exit()): delete the temporaries of outputs not yet committed and remove
 * the folders this command made if they hold nothing but its lock file.
 * Async-signal-safe; a no-op in a forked child. */
void ws_outfile_abandon(void);
/* Flush and check stdout at the end of a command: 0, or -1 with err set. */
int ws_stdout_close(ws_error *err);

#endif
