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
 *   as a file noted with ws_input_note*), even with --force, and never
 *   removed (ws_outfile_unlink); an output folder is never one of its
 *   input folders (ws_input_dir_note);
 * - every write, flush, fsync and close is checked; a failure is one line
 *   naming the file, and the destination is left as it was;
 * - a command writing into a folder holds an exclusive lock on
 *   FOLDER/.wattsim.lock (ws_outdir_lock) until it exits, and writes into
 *   it through the descriptor it opened then: a path "FOLDER/NAME" is
 *   created, renamed, made or unlinked relative to that descriptor
 *   (openat, renameat, mkdirat, unlinkat), the folders below it never
 *   through a symbolic link; any other path relative to the working folder
 *   the process started in (ws_outfile_init). Swapping the folder for a
 *   link, or a plugin's chdir(), does not move an output;
 * - with --force (or --resume), locking a folder first removes what a
 *   killed command left in it: NAME.tmpXXXXXX files and gnuplot's
 *   .wattsim-plot-XXXXXX folders, recognised by name, never followed;
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
    char *tmp;        /* the temporary's name, in the destination's folder */
    int update;       /* opened with ws_outfile_open_update */
    int dir;          /* the destination's folder, while tmp is set */
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

/* First thing in main (after ws_process_init): remember the working folder
 * by descriptor, so that relative paths mean the same whatever chdir()
 * happens later. Without it they are relative to the current folder. */
void ws_outfile_init(void);
/* The folder of `path`, resolved as outputs are (made when missing), as a
 * descriptor the caller closes; *name points to the last component in
 * path. -1 with err set. */
int ws_outfile_dir(const char *path, const char **name, ws_error *err);
/* Open an existing output-side file (a manifest, a journal) with `flags`
 * (O_RDONLY, O_WRONLY | O_APPEND...; never created), resolved as outputs
 * are, not through a symbolic link: a descriptor, or -1 with errno. */
int ws_outfile_openat(const char *path, int flags);
/* Remove an output-side file (a finished journal); 0 also when it does not
 * exist, else -1 with errno. */
int ws_outfile_unlink(const char *path);
/* The folder `dir` opened for reading its entries (the locked folder's own
 * descriptor when it is that one): a descriptor, or -1 with errno. */
int ws_outdir_open(const char *dir);
/* A scratch file in `dir` with no name (O_TMPFILE, else unlinked at once):
 * a read-write descriptor, or -1 with err set. */
int ws_outfile_scratch(const char *dir, ws_error *err);

/* A private folder .wattsim-plot-XXXXXX (mode 0700) beside `beside`, for a
 * program wattsim runs (gnuplot: it changes into `fd` and writes relative
 * names). Removed with what it holds by ws_private_remove, when the
 * process dies of a signal, or by a later --force/--resume. */
typedef struct ws_private {
    int dir;          /* the folder it is in */
    int fd;           /* the private folder */
    char name[32];
} ws_private;
int ws_private_make(ws_private *p, const char *beside, ws_error *err);
void ws_private_remove(ws_private *p);

/* --force for the rest of the process: replace files that existed before. */
void ws_outfile_set_force(int force);
/* Remember an input of the command, by path or open descriptor (thread
 * safe; unknown paths are ignored). */
void ws_input_note(const char *path);
void ws_input_note_fd(int fd);
/* Remember an input folder of the command (a merge's shard folders, the
 * folder of a journal given by name, the traces folder) by device and
 * inode, followed through links: ws_outdir_lock refuses an output folder
 * that is the same folder, however it is spelt (a link, "..", another
 * path), naming both, before it writes or removes anything, whatever
 * --force or --resume say. Call before ws_outdir_lock. Unknown paths are
 * ignored (a folder that does not exist cannot be the output either). */
void ws_input_dir_note(const char *dir);
/* 0 when `path` may be written now: it does not exist, or this command
 * wrote it, or --force was given; never when it is an input. -1 with err
 * set ("PATH: exists; pass --force ..." / "PATH: is an input of this
 * command ...") otherwise. */
int ws_outfile_check(const char *path, ws_error *err);
/* Record that this command has written `path` (it may rewrite it). */
void ws_outfile_mine(const char *path);
/* Make `dir` (as ws_mkdirs), open it, and hold an exclusive lock on
 * dir/.wattsim.lock until the process exits (the lock file holds "PID
 * HOST"; the descriptor is close-on-exec and closed in any forked child);
 * another command holding it is an error at once, naming its pid. From
 * then on paths below `dir` resolve from its descriptor. */
int ws_outdir_lock(const char *dir, ws_error *err);
/* After a failed command: remove the folders ws_mkdirs made (deepest
 * first) if they hold nothing but our lock file. */
void ws_outfile_cleanup(void);
/* The end of a command in a process that goes on (a library call,
 * wattsim/api.h): after ws_outfile_cleanup when it failed, release the
 * folder's lock and forget the command's inputs, outputs, folders and
 * --force, as the process's exit would. Outputs must be committed or
 * aborted before. */
void ws_outfile_end(int failed);
/* The process is dying (a fatal signal, SIGINT/SIGTERM, a policy's
 * exit()): hand the batches of ws_batchfiles to the kernel, delete the
 * temporaries of outputs not yet committed and gnuplot's private folders,
 * and remove the folders this command made if they hold nothing but its
 * lock file.
 * Async-signal-safe; a no-op in a forked child. */
void ws_outfile_abandon(void);
/*
 * An existing file appended to in batches (the sweep journal): records are
 * copied into a buffer of `cap` bytes, handed to the kernel in one write
 * when the next would not fit, when `seconds` have passed since the last
 * write (checked as records are added), at ws_batch_flush/close -- and
 * when the process dies of a signal or a policy's exit()
 * (ws_outfile_abandon): only a process killed outright (SIGKILL, the
 * machine) loses what waits, at most `seconds` of records. The kernel only
 * ever gets whole records, except that a write cut short by the process's
 * death may leave a last one incomplete. Calls on one batchfile must not
 * overlap (callers serialise them).
 */
typedef struct ws_batchfile {
    int fd;
    unsigned char *buf;
    size_t cap;
    size_t len;               /* bytes of whole records waiting (atomic) */
    int busy;                 /* a write of buf in progress (atomic) */
    double seconds, last;
} ws_batchfile;
/* Open `path` (resolved as outputs are; it must exist) for appending. */
int ws_batch_open(ws_batchfile *b, const char *path, size_t cap, double seconds, ws_error *err);
/* Add one record, given as two parts (na + nc bytes; c may be NULL when nc
 * is 0). 0, or -1 with errno on a write error. */
int ws_batch_add(ws_batchfile *b, const void *a, size_t na, const void *c, size_t nc);
int ws_batch_flush(ws_batchfile *b);
/* Flush and close: 0, or -1 with errno. */
int ws_batch_close(ws_batchfile *b);

/* Flush, check and close the results stream (the CLI's stdout,
 * ws_stdout_private) at the end of a command: 0, or -1 with err set. */
int ws_stdout_close(FILE *out, ws_error *err);

#endif
