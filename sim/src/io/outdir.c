/*
 * The output folder's lock and the rules about folders; see
 * wattsim/outfile.h. A command writing into FOLDER holds an exclusive
 * flock on FOLDER/.wattsim.lock until it ends, so that two commands never
 * write into one folder; an output folder is never one of the command's
 * input folders. This file sits on the atomic file writer (outfile.c,
 * whose state it reaches through outfile_private.h); the writer never
 * calls it.
 *
 * Map, in file order:
 *   state         the command's input folders, the lock file's descriptor
 *                 and whether this command created it, under one mutex
 *                 (taken before the writer's, never inside it)
 *   input folders ws_input_dir_note; not_an_input_dir (ws_outdir_lock
 *                 refuses an output folder that is an input folder)
 *   the lock      a forked child does not keep it (close_lock_in_child);
 *                 who holds it (holder); the leftovers of a killed run,
 *                 by name (clean_leftovers); ws_outdir_lock: make and open
 *                 the folder, take the lock, hand the folder to the writer
 *   the end       ws_outfile_cleanup (after a failure: the lock file this
 *                 command created, the folders it made) and ws_outfile_end
 *                 (release everything for the next command in the process)
 */
#define _GNU_SOURCE
#include "wattsim/outfile.h"
#include "outfile_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ state */

/* An input folder: its identity and its path as the user gave it. */
typedef struct in_dir {
    dev_t dev;
    ino_t ino;
    char *path;
} in_dir;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static in_dir *in_dirs;            /* the command's input folders */
static size_t n_in_dirs;
static int lock_fd = -1;           /* the .wattsim.lock, held until exit */
static int lock_made;              /* this command created that file */

/* ------------------------------------------------------------ input folders */

void ws_input_dir_note(const char *dir)
{
    struct stat st;
    char *p = dir ? strdup(dir) : NULL;
    if (!p || fstatat(ws_outfile_cwd(), dir, &st, 0) != 0 || !S_ISDIR(st.st_mode)) {
        free(p);
        return;
    }
    pthread_mutex_lock(&mu);
    in_dir *v = realloc(in_dirs, (n_in_dirs + 1) * sizeof *v);
    if (v) {
        in_dirs = v;
        in_dirs[n_in_dirs++] = (in_dir){st.st_dev, st.st_ino, p};
    } else {
        free(p);
    }
    pthread_mutex_unlock(&mu);
}

/* 0 when the folder `dir` (followed through links, "..", anything the
 * kernel resolves) is none of the input folders or does not exist; else
 * -1 with err naming both. */
static int not_an_input_dir(const char *dir, ws_error *err)
{
    struct stat st;
    if (fstatat(ws_outfile_cwd(), dir, &st, 0) != 0) return 0;
    pthread_mutex_lock(&mu);
    const char *same = NULL;
    for (size_t i = 0; i < n_in_dirs && !same; i++)
        if (in_dirs[i].dev == st.st_dev && in_dirs[i].ino == st.st_ino)
            same = in_dirs[i].path;
    char *copy = same ? strdup(same) : NULL;
    pthread_mutex_unlock(&mu);
    if (!same) return 0;
    ws_fail(err, "%s: is the input folder %s (the same folder); an output folder is never one of"
            " the command's input folders, even with --force or --resume: write elsewhere",
            dir, copy ? copy : "given");
    free(copy);
    return -1;
}

/* ------------------------------------------------------------ the lock */

static void close_lock_in_child(void)
{
    /* A process a plugin forks must not keep the folder locked after
     * wattsim ends (flock belongs to the open file, which it would share). */
    if (lock_fd >= 0) close(lock_fd);
    lock_fd = -1;
}

static void atfork_once(void) { pthread_atfork(NULL, NULL, close_lock_in_child); }

/* "another wattsim command (pid N[ on HOST])": who holds the lock, as it
 * wrote itself into the lock file. */
static void holder(int fd, char *buf, size_t size)
{
    char text[300] = "", here[256] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    long pid = 0;
    char host[256] = "";
    int got = sscanf(text, "%ld %255s", &pid, host);
    gethostname(here, sizeof here - 1);
    for (char *c = host; *c; c++)
        if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) *c = '?';
    if (got >= 1 && pid > 0)
        snprintf(buf, size, "another wattsim command (pid %ld%s%s) is running and writing into"
                 " it", pid, got == 2 && strcmp(host, here) ? " on " : "",
                 got == 2 && strcmp(host, here) ? host : "");
    else
        snprintf(buf, size, "another wattsim command is running and writing into it");
}

/* Tidy up what a command killed with SIGKILL (or a crashed machine) left
 * in dir: its temporaries (NAME.tmpXXXXXX, .wattsim-spill.tmpXXXXXX among
 * them: not symbolic links, not folders), and gnuplot's private folders (.wattsim-plot-XXXXXX)
 * with what they hold. Only those, recognised by name, in this folder, and
 * never through a symbolic link (a link of such a name is removed, not
 * followed). Called with the folder locked and --force or --resume, when
 * a lock file was there already (a wattsim command wrote here before). */
static int six_alnum(const char *s)
{
    for (int k = 0; k < 6; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')
              || (s[k] >= '0' && s[k] <= '9')))
            return 0;
    return s[6] == '\0';
}

static void clean_leftovers(int dir)
{
    int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    /* Names first, then removals: readdir after an unlink may skip. */
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *s = e->d_name;
        size_t len = strlen(s);
        int plot = !strncmp(s, ".wattsim-plot-", 14) && six_alnum(s + 14);
        int tmp = len > 10 && !memcmp(s + len - 10, ".tmp", 4) && six_alnum(s + len - 6);
        if (!plot && !tmp) continue;
        char **m = realloc(names, (n + 1) * sizeof *m);
        if (!m) break;
        names = m;
        if ((names[n] = strdup(s))) n++;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (fstatat(dir, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISDIR(st.st_mode) && !strncmp(names[i], ".wattsim-plot-", 14))
                ws_outfile_remove_private(dir, names[i]);
            else if (!S_ISDIR(st.st_mode))
                unlinkat(dir, names[i], 0);
        }
        free(names[i]);
    }
    free(names);
}

int ws_outdir_lock(const char *dir, ws_error *err)
{
    /* The folder itself: made here (never then through a link), or as the
     * user's path names it; from now on only its descriptor is used. */
    if (not_an_input_dir(dir, err)) return -1;
    size_t before = ws_outfile_n_made();
    if (ws_mkdirs(dir, err)) return -1;
    const int made_it = ws_outfile_n_made() > before;
    int fd = openat(ws_outfile_cwd(), dir,
                    O_PATH | O_DIRECTORY | O_CLOEXEC | (made_it ? O_NOFOLLOW : 0));
    if (fd < 0) return ws_fail(err, "%s: cannot open the folder: %s", dir, strerror(errno));
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/.wattsim.lock", dir) >= sizeof path) {
        close(fd);
        return ws_fail(err, "%s: path too long", dir);
    }
    /* Kept open (close-on-exec, and closed in forked children) until the
     * process exits: the lock with it. */
    int made_lock = 1;
    int lfd = openat(fd, ".wattsim.lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lfd < 0 && errno == EEXIST) {
        made_lock = 0;
        lfd = openat(fd, ".wattsim.lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    }
    if (lfd < 0) {
        int e = errno;
        close(fd);
        return ws_fail(err, "%s: cannot open the folder's lock: %s", path, strerror(e));
    }
    if (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[400];
        if (e == EWOULDBLOCK) holder(lfd, who, sizeof who);
        close(lfd);
        close(fd);
        if (e == EWOULDBLOCK)
            return ws_fail(err, "%s: %s (it holds %s); wait for it to finish or use another"
                           " folder", dir, who, path);
        return ws_fail(err, "%s: cannot lock: %s", path, strerror(e));
    }
    /* Who holds it, for the message of a command that finds it taken (a
     * failure to write this is harmless: the lock is the flock). */
    char me[300], host[256] = "";
    gethostname(host, sizeof host - 1);
    int n = snprintf(me, sizeof me, "%ld %s\n", (long)getpid(), host[0] ? host : "-");
    if (ftruncate(lfd, 0) == 0 && n > 0) (void)!pwrite(lfd, me, (size_t)n, 0);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, atfork_once);
    char *r = strdup(dir);
    if (r) {
        size_t len = strlen(r);
        while (len > 1 && r[len - 1] == '/') r[--len] = '\0';
        ws_outfile_set_root(r, fd);     /* an earlier one stays open, as its lock */
        pthread_mutex_lock(&mu);
        lock_fd = lfd;
        lock_made = made_lock;
        pthread_mutex_unlock(&mu);
    }
    if (!r) return ws_fail(err, "out of memory");
    /* Only in a folder a wattsim command locked before (a killed one leaves
     * its lock file): nowhere else can there be a temporary of ours. */
    if (ws_outfile_forced() && !made_lock) clean_leftovers(fd);
    return 0;
}

void ws_outfile_cleanup(void)
{
    pthread_mutex_lock(&mu);
    /* the lock file this command created in a folder it did not make */
    int root_fd = ws_outfile_root_fd();
    if (lock_made && root_fd >= 0) unlinkat(root_fd, ".wattsim.lock", 0);
    lock_made = 0;
    pthread_mutex_unlock(&mu);
    ws_outfile_remove_made();
}

void ws_outfile_end(int failed)
{
    if (failed) ws_outfile_cleanup();
    pthread_mutex_lock(&mu);
    if (lock_fd >= 0) close(lock_fd);      /* the flock goes with it */
    lock_fd = -1;
    lock_made = 0;
    for (size_t i = 0; i < n_in_dirs; i++) free(in_dirs[i].path);
    free(in_dirs);
    in_dirs = NULL;
    n_in_dirs = 0;
    pthread_mutex_unlock(&mu);
    ws_outfile_release();
}
