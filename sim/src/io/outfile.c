/* Atomic output files and the rules of every command's outputs; see
 * wattsim/outfile.h. The rules need process-wide state (inputs seen, files
 * written, folders made, --force), kept here behind one mutex. */
#define _GNU_SOURCE
#include "wattsim/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;

typedef struct id_set {
    file_id *v;
    size_t n, cap;
} id_set;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static id_set inputs, mine;
static char **made;                 /* folders ws_mkdirs created, in order */
static size_t n_made;
static int force;

/*
 * What a dying process must not leave behind: the temporaries of the
 * outputs being written, and the folders made for them. A fatal signal or
 * a policy's exit() (ws_outfile_abandon) cannot take locks or read heap
 * memory another thread may be freeing, so both are kept, in addition to
 * the lists above, in fixed slots: a path is copied in first, then the
 * slot marked used (release order); the handler reads only used slots.
 * Only the process that registered them acts on them (a forked --isolate
 * child inherits the slots but not the files' ownership).
 */
#define SLOTS 64
#define SLOT_PATH 4096
static char tmp_slot[SLOTS][SLOT_PATH], dir_slot[SLOTS][SLOT_PATH];
static int tmp_used[SLOTS], dir_used[SLOTS];
static pid_t slot_owner;

static int slot_put(char (*slot)[SLOT_PATH], int *used, const char *path)
{
    size_t n = strlen(path);
    if (n + sizeof "/.wattsim.lock" > SLOT_PATH) return -1;
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < SLOTS && __atomic_load_n(&used[k], __ATOMIC_ACQUIRE)) k++;
    if (k < SLOTS) {
        memcpy(slot[k], path, n + 1);
        slot_owner = getpid();
        __atomic_store_n(&used[k], 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return k < SLOTS ? k : -1;
}

/* With `lock` held. */
static void slot_drop_locked(char (*slot)[SLOT_PATH], int *used, const char *path)
{
    for (int k = 0; k < SLOTS; k++)
        if (__atomic_load_n(&used[k], __ATOMIC_ACQUIRE) && !strcmp(slot[k], path)) {
            __atomic_store_n(&used[k], 0, __ATOMIC_RELEASE);
            break;
        }
}

static void slot_drop(char (*slot)[SLOT_PATH], int *used, const char *path)
{
    pthread_mutex_lock(&lock);
    slot_drop_locked(slot, used, path);
    pthread_mutex_unlock(&lock);
}

void ws_outfile_abandon(void)
{
    if (getpid() != slot_owner) return;
    for (int k = 0; k < SLOTS; k++)
        if (__atomic_load_n(&tmp_used[k], __ATOMIC_ACQUIRE)) unlink(tmp_slot[k]);
    /* deepest first: folders were made parents first */
    for (int k = SLOTS; k-- > 0;)
        if (__atomic_load_n(&dir_used[k], __ATOMIC_ACQUIRE)) {
            char p[SLOT_PATH];
            size_t n = strlen(dir_slot[k]);
            memcpy(p, dir_slot[k], n);
            memcpy(p + n, "/.wattsim.lock", sizeof "/.wattsim.lock");
            if (rmdir(dir_slot[k]) == 0 || unlink(p) != 0) continue;
            /* it held our lock; anything else (a journal) keeps it, and the
             * lock file is put back, as a finished command leaves it */
            if (rmdir(dir_slot[k]) != 0) {
                int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0) close(fd);
            }
        }
}

static void set_add(id_set *s, const struct stat *st)
{
    pthread_mutex_lock(&lock);
    int have = 0;
    for (size_t i = 0; i < s->n && !have; i++)
        have = s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino;
    if (!have && s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        file_id *v = realloc(s->v, cap * sizeof *v);
        if (v) { s->v = v; s->cap = cap; }
    }
    if (!have && s->n < s->cap) s->v[s->n++] = (file_id){st->st_dev, st->st_ino};
    pthread_mutex_unlock(&lock);
}

static int set_has(id_set *s, const struct stat *st)
{
    pthread_mutex_lock(&lock);
    int have = 0;
    for (size_t i = 0; i < s->n && !have; i++)
        have = s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino;
    pthread_mutex_unlock(&lock);
    return have;
}

void ws_outfile_set_force(int f) { force = f; }

void ws_input_note(const char *path)
{
    struct stat st;
    if (path && stat(path, &st) == 0) set_add(&inputs, &st);
}

void ws_input_note_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) set_add(&inputs, &st);
}

void ws_outfile_mine(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) set_add(&mine, &st);
}

static int check(const char *path, int update, ws_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (set_has(&inputs, &st))
        return ws_fail(err, "%s: is an input of this command; an output never replaces an"
                       " input (even with --force): write elsewhere", path);
    if (update || force || set_has(&mine, &st)) return 0;
    return ws_fail(err, "%s: exists; pass --force to replace it, or write elsewhere", path);
}

int ws_outfile_check(const char *path, ws_error *err) { return check(path, 0, err); }

int ws_mkdirs(const char *dir, ws_error *err)
{
    char *p = strdup(dir);
    if (!p) return ws_fail(err, "out of memory");
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) == 0) {
                pthread_mutex_lock(&lock);
                char **m = realloc(made, (n_made + 1) * sizeof *m);
                if (m) {
                    made = m;
                    if ((made[n_made] = strdup(p))) n_made++;
                }
                pthread_mutex_unlock(&lock);
                slot_put(dir_slot, dir_used, p);
            } else if (errno != EEXIST) {
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

static int open_out(ws_outfile *o, const char *path, int update, ws_error *err)
{
    memset(o, 0, sizeof *o);
    if (check(path, update, err)) return -1;
    o->update = update;
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
    slot_put(tmp_slot, tmp_used, o->tmp);
    fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        ws_outfile_abort(o);
        return ws_fail(err, "%s: cannot open: %s", path, strerror(errno));
    }
    return 0;
}

int ws_outfile_open(ws_outfile *o, const char *path, ws_error *err)
{
    return open_out(o, path, 0, err);
}

int ws_outfile_open_update(ws_outfile *o, const char *path, ws_error *err)
{
    return open_out(o, path, 1, err);
}

int ws_outfile_commit(ws_outfile *o, ws_error *err)
{
    /* The first failure's errno: a stream error, the flush (ENOSPC shows
     * here for buffered data), fsync (delayed allocation), then close. */
    int e = 0;
    if (ferror(o->f)) e = errno ? errno : EIO;
    if (fflush(o->f) != 0 && !e) e = errno;
    if (fsync(fileno(o->f)) != 0 && !e && errno != EINVAL) e = errno;
    if (fclose(o->f) != 0 && !e) e = errno;
    o->f = NULL;
    if (e) {
        ws_fail(err, "%s: write failed: %s", o->path, strerror(e));
        ws_outfile_abort(o);
        return -1;
    }
    /* A non-finite number met by a writer (wattsim/error.h): a bug, and
     * no file holding it (or a blank in its place) is put in place. */
    if (ws_output_check(o->path, err)) {
        ws_outfile_abort(o);
        return -1;
    }
    /* The destination may have appeared meanwhile (another process). */
    if (check(o->path, o->update, err)) {
        ws_outfile_abort(o);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        ws_fail(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
        ws_outfile_abort(o);
        return -1;
    }
    slot_drop(tmp_slot, tmp_used, o->tmp);
    ws_outfile_mine(o->path);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return 0;
}

void ws_outfile_abort(ws_outfile *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp) {
        unlink(o->tmp);
        slot_drop(tmp_slot, tmp_used, o->tmp);
    }
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

int ws_outdir_lock(const char *dir, ws_error *err)
{
    if (ws_mkdirs(dir, err)) return -1;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/.wattsim.lock", dir) >= sizeof path)
        return ws_fail(err, "%s: path too long", dir);
    /* Kept open (close-on-exec) until the process exits: the lock with it. */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return ws_fail(err, "%s: cannot open the folder's lock: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return ws_fail(err, "%s: another wattsim command is writing into this folder"
                           " (it holds %s); wait for it to finish or use another folder",
                           dir, path);
        return ws_fail(err, "%s: cannot lock: %s", path, strerror(e));
    }
    return 0;
}

void ws_outfile_cleanup(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = n_made; i-- > 0;) {
        char path[4096];
        snprintf(path, sizeof path, "%s/.wattsim.lock", made[i]);
        unlink(path);
        rmdir(made[i]);           /* only if empty */
        slot_drop_locked(dir_slot, dir_used, made[i]);
        free(made[i]);
    }
    free(made);
    made = NULL;
    n_made = 0;
    pthread_mutex_unlock(&lock);
}

int ws_stdout_close(ws_error *err)
{
    int e = ferror(stdout) ? (errno ? errno : EIO) : 0;
    if (fflush(stdout) != 0 && !e) e = errno;
    if (fclose(stdout) != 0 && !e && errno != EBADF) e = errno;
    if (e) return ws_fail(err, "standard output: write failed: %s", strerror(e));
    return 0;
}
