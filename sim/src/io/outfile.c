/* The atomic file writer and the rules of every command's outputs; see
 * wattsim/outfile.h. The rules need process-wide state (inputs seen, files
 * written, folders made, --force, the locked folder), kept here behind one
 * mutex. The output folder's lock (ws_outdir_lock, the input folders, the
 * end of a command) is outdir.c, on top of this file: it reaches this
 * state through outfile_private.h, and nothing here calls it.
 *
 * Paths become descriptors here, once. A path below the locked output
 * folder (ws_outdir_lock: "DIR/NAME", DIR spelt as the command was given
 * it) is resolved from the folder's descriptor, opened when it was locked,
 * its sub-folders without following symbolic links; any other path from
 * the descriptor of the working folder the process started in
 * (ws_outfile_init). Every create, write, rename, mkdir and unlink is then
 * an *at() call on the folder's descriptor: swapping the folder for a
 * symbolic link while the command runs, or a plugin's chdir(), changes
 * nothing about where the outputs go.
 *
 * Map, in file order:
 *   state        the process-wide sets (inputs seen, files written,
 *                folders made) under one mutex; the fixed slots a fatal
 *                signal may read (ws_outfile_abandon)
 *   paths        a path to a folder descriptor and a name (open_parent:
 *                below the locked folder without following links, else
 *                from the starting folder); ws_outfile_openat/unlink,
 *                ws_outdir_open
 *   rules        an output never replaces an input of the command, even
 *                with --force, and an existing file only with --force or
 *                when this command wrote it (ws_input_note*,
 *                ws_outfile_check, ws_mkdirs)
 *   files        atomic files: a private temporary, renamed over the
 *                target at ws_outfile_commit, removed at abort
 *   private      private folders beside an output (gnuplot's scratch)
 *   stdout       ws_stdout_close
 *   batched      appends in batches by size and age (ws_batch_*: the
 *                sweep's journal)
 *   for the lock what outdir.c reads and sets of the state above
 *                (outfile_private.h)
 */
#define _GNU_SOURCE
#include "wattsim/outfile.h"
#include "wattsim/name.h"
#include "outfile_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;

typedef struct id_set {
    file_id *v;
    size_t n, cap;
} id_set;

/* A folder this command made: its parent's descriptor and its name. */
typedef struct made_dir {
    int parent;
    char *name, *path;
} made_dir;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static id_set inputs, mine;
static made_dir *made;             /* folders this command created, in order */
static size_t n_made;
static int force;
static int cwd_fd = AT_FDCWD;      /* the working folder at the start */
static int root_fd = -1;           /* the locked output folder */
static char *root;                 /* its path, without trailing slashes */
static size_t root_len;

/*
 * What a dying process must not leave behind: the temporaries of the
 * outputs being written, gnuplot's private folders, and the folders made
 * for them. A fatal signal or a policy's exit() (ws_outfile_abandon)
 * cannot take locks or read heap memory another thread may be freeing, so
 * they are kept, in addition to the lists above, in fixed slots: a folder
 * descriptor and a name, copied in first, then the slot marked used
 * (release order); the handler reads only used slots. Only the process
 * that registered them acts on them (a forked --isolate child inherits the
 * slots but not the files' ownership).
 */
#define SLOTS 64
#define SLOT_NAME 256
typedef struct slot {
    int used;                      /* atomic */
    int dir;                       /* the folder holding `name` */
    char name[SLOT_NAME];
} slot;
static slot tmp_slot[SLOTS], dir_slot[SLOTS], priv_slot[SLOTS];
static pid_t slot_owner;

static int slot_put(slot *s, int dir, const char *name)
{
    size_t n = strlen(name);
    if (n >= SLOT_NAME) return -1;
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < SLOTS && __atomic_load_n(&s[k].used, __ATOMIC_ACQUIRE)) k++;
    if (k < SLOTS) {
        memcpy(s[k].name, name, n + 1);
        s[k].dir = dir;
        slot_owner = getpid();
        __atomic_store_n(&s[k].used, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return k < SLOTS ? k : -1;
}

/* With `lock` held. */
static void slot_drop_locked(slot *s, int dir, const char *name)
{
    for (int k = 0; k < SLOTS; k++)
        if (__atomic_load_n(&s[k].used, __ATOMIC_ACQUIRE) && s[k].dir == dir
            && !strcmp(s[k].name, name)) {
            __atomic_store_n(&s[k].used, 0, __ATOMIC_RELEASE);
            break;
        }
}

static void slot_drop(slot *s, int dir, const char *name)
{
    pthread_mutex_lock(&lock);
    slot_drop_locked(s, dir, name);
    pthread_mutex_unlock(&lock);
}

/* Remove everything but sub-folders from the folder open at fd, without
 * following anything (unlinkat removes a symbolic link itself). Reads the
 * entries with getdents64 into a stack buffer: async-signal-safe. */
static void empty_dir(int fd)
{
    struct dirent64_raw {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
    };
    _Alignas(8) char buf[4096];
    for (int round = 0; round < 64; round++) {
        if (lseek(fd, 0, SEEK_SET) < 0) return;
        int removed = 0;
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long at = 0; at < n;) {
                const struct dirent64_raw *d = (const void *)(buf + at);
                at += d->reclen;
                if (!strcmp(d->name, ".") || !strcmp(d->name, "..") || d->type == DT_DIR)
                    continue;
                removed += unlinkat(fd, d->name, 0) == 0;
            }
        }
        if (!removed) return;          /* unlinking while reading may skip some */
    }
}

/* Remove the private folder `name` in dir with what it holds. */
void ws_outfile_remove_private(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    empty_dir(fd);
    close(fd);
    unlinkat(dir, name, AT_REMOVEDIR);
}

static int batch_write(ws_batchfile *b);
#define BATCHES 8
static ws_batchfile *batch_slot[BATCHES];

void ws_outfile_abandon(void)
{
    if (getpid() != slot_owner) return;
    /* what a journal has waiting: records of finished work, kept */
    for (int k = 0; k < BATCHES; k++) {
        ws_batchfile *b = __atomic_load_n(&batch_slot[k], __ATOMIC_ACQUIRE);
        if (b) batch_write(b);
    }
    for (int k = 0; k < SLOTS; k++)
        if (__atomic_load_n(&tmp_slot[k].used, __ATOMIC_ACQUIRE))
            unlinkat(tmp_slot[k].dir, tmp_slot[k].name, 0);
    for (int k = 0; k < SLOTS; k++)
        if (__atomic_load_n(&priv_slot[k].used, __ATOMIC_ACQUIRE))
            ws_outfile_remove_private(priv_slot[k].dir, priv_slot[k].name);
    /* deepest first: folders were made parents first */
    for (int k = SLOTS; k-- > 0;) {
        slot *s = &dir_slot[k];
        if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE)) continue;
        if (unlinkat(s->dir, s->name, AT_REMOVEDIR) == 0) continue;
        int fd = openat(s->dir, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        /* it held our lock; anything else (a journal) keeps it, and the
         * lock file is put back, as a finished command leaves it */
        if (unlinkat(fd, ".wattsim.lock", 0) == 0
            && unlinkat(s->dir, s->name, AT_REMOVEDIR) != 0) {
            int l = openat(fd, ".wattsim.lock", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (l >= 0) close(l);
        }
        close(fd);
    }
}

/* ------------------------------------------------------------ paths */

void ws_outfile_init(void)
{
    if (cwd_fd != AT_FDCWD) return;
    int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) cwd_fd = fd;
}

/* `dir` is the locked folder, as the command named it. */
static int is_root(const char *dir)
{
    if (root_fd < 0 || strncmp(dir, root, root_len)) return 0;
    const char *p = dir + root_len;
    while (*p == '/') p++;
    return !*p && (dir[root_len] == '/' || !dir[root_len]);
}

/* The part of `path` below the locked folder, or NULL when it is not below
 * it (or steps out of it with "..", or names "." in it). */
static const char *below_root(const char *path)
{
    if (root_fd < 0 || strncmp(path, root, root_len)) return NULL;
    const char *p = path + root_len;
    if (*p != '/' && !(root_len == 1 && root[0] == '/')) return NULL;
    while (*p == '/') p++;
    if (!*p) return NULL;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return NULL;
        c += n;
        while (*c == '/') c++;
    }
    return p;
}

static int remember_made(int parent, const char *name, const char *path)
{
    int dup_fd = fcntl(parent, F_DUPFD_CLOEXEC, 3);
    if (dup_fd < 0) return -1;
    pthread_mutex_lock(&lock);
    made_dir *m = realloc(made, (n_made + 1) * sizeof *m);
    if (m) {
        made = m;
        made[n_made] = (made_dir){dup_fd, strdup(name), strdup(path)};
        if (made[n_made].name && made[n_made].path) n_made++;
        else {
            free(made[n_made].name);
            free(made[n_made].path);
            m = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!m) { close(dup_fd); return -1; }
    slot_put(dir_slot, dup_fd, name);
    return 0;
}

/*
 * Open the folder `rel` (relative to `start`; "" is start itself) as a
 * descriptor, making the missing folders when `create`. Below the locked
 * folder (nofollow) no component may be a symbolic link. `shown` is the
 * path as the user knows it, for messages; `rel` is its tail. Returns the
 * descriptor, or -1 with err set.
 */
static int open_dirs(int start, const char *rel, int create, int nofollow, const char *shown,
                     ws_error *err)
{
    /* O_PATH: a folder is only ever a dirfd here (no read permission needed) */
    const int flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    int fd = rel[0] == '/' ? open("/", flags) : openat(start, ".", flags);
    if (fd < 0) return ws_fail(err, "%s: cannot open the folder: %s", shown, strerror(errno));
    size_t skip = strlen(shown) - strlen(rel);     /* shown = prefix + rel */
    const char *c = rel;
    while (*c == '/') c++;
    while (*c) {
        size_t n = strcspn(c, "/");
        const int len = (int)(skip + (size_t)(c - rel) + n);   /* of shown, to here */
        char name[NAME_MAX + 1];
        if (n > NAME_MAX) {
            close(fd);
            return ws_fail(err, "%.*s: name too long", len, shown);
        }
        memcpy(name, c, n);
        name[n] = '\0';
        int next = openat(fd, name, flags | (nofollow ? O_NOFOLLOW : 0));
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, name, 0777) == 0) {
                char *p = strndup(shown, (size_t)len);
                if (p) remember_made(fd, name, p);
                free(p);
            } else if (errno != EEXIST) {
                int e = errno;
                close(fd);
                return ws_fail(err, "%.*s: cannot create folder: %s", len, shown, strerror(e));
            }
            next = openat(fd, name, flags | O_NOFOLLOW);     /* made here: never a link */
        }
        if (next < 0) {
            int e = errno;
            struct stat st;
            int link = (e == ELOOP || e == ENOTDIR)
                       && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
            close(fd);
            if (link)
                return ws_fail(err, "%.*s: is a symbolic link; outputs are not written through"
                               " links inside the output folder", len, shown);
            if (e == ENOTDIR) return ws_fail(err, "%.*s: not a folder", len, shown);
            return ws_fail(err, "%.*s: cannot open the folder: %s", len, shown, strerror(e));
        }
        close(fd);
        fd = next;
        c += n;
        while (*c == '/') c++;
    }
    return fd;
}

/* The folder of `path` (as open_dirs) and where its last component starts
 * in path; -1 with err when it cannot be opened (or made). */
static int open_parent(const char *path, int create, const char **name, ws_error *err)
{
    const char *rel = below_root(path);
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!**name) return ws_fail(err, "%s: not a file name", path);
    if (rel) {
        /* the folders between the locked one and the file */
        char *dirs = strndup(rel, (size_t)(*name - rel));
        if (!dirs) return ws_fail(err, "out of memory");
        char *shown = strndup(path, (size_t)(*name - path));
        int fd = shown ? open_dirs(root_fd, dirs, create, 1, shown, err)
                       : ws_fail(err, "out of memory");
        free(dirs);
        free(shown);
        return fd;
    }
    if (!slash) return open_dirs(cwd_fd, "", 0, 0, ".", err);
    char *dirs = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dirs) return ws_fail(err, "out of memory");
    int fd = open_dirs(cwd_fd, dirs, create, 0, dirs, err);
    free(dirs);
    return fd;
}

int ws_outfile_dir(const char *path, const char **name, ws_error *err)
{
    return open_parent(path, 1, name, err);
}

int ws_outfile_openat(const char *path, int flags)
{
    const char *name;
    int dir = open_parent(path, 0, &name, NULL);
    if (dir < 0) return -1;
    int fd = openat(dir, name, (flags & ~O_CREAT) | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(dir);
    errno = e;
    return fd;
}

static int set_has(id_set *s, const struct stat *st);

int ws_outfile_unlink(const char *path)
{
    const char *name;
    int dir = open_parent(path, 0, &name, NULL);
    if (dir < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && set_has(&inputs, &st)) {
        close(dir);                /* an input is never removed */
        errno = EPERM;
        return -1;
    }
    int rc = unlinkat(dir, name, 0);
    int e = errno;
    close(dir);
    errno = e;
    return rc && e != ENOENT ? -1 : 0;
}

int ws_outdir_open(const char *dir)
{
    if (is_root(dir)) return openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return openat(cwd_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* ------------------------------------------------------------ rules */

/* An output's path is printed and becomes folders' and files' names: no
 * control characters in it, whichever option or key named it (the options
 * say so first, naming themselves: this is the rule for every other way). */
static int path_ok(const char *path, ws_error *err)
{
    char why[64];
    if (!ws_path_check(path, why, sizeof why)) return 0;
    return ws_fail(err, "%s: an output's path %s; it is printed and made a file's or folder's"
                   " name: " WS_PATH_RULE, path, why);
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
    if (path && fstatat(cwd_fd, path, &st, 0) == 0)
        set_add(&inputs, &st);
}

void ws_input_note_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) set_add(&inputs, &st);
}

/* stat of `name` in the folder dir (following a link: a link to an input
 * is refused as the input would be). */
static int stat_at(int dir, const char *name, struct stat *st)
{
    return fstatat(dir, name, st, 0);
}

void ws_outfile_mine(const char *path)
{
    const char *name;
    int dir = open_parent(path, 0, &name, NULL);
    struct stat st;
    if (dir >= 0 && stat_at(dir, name, &st) == 0) set_add(&mine, &st);
    if (dir >= 0) close(dir);
}

static int check_at(int dir, const char *name, const char *path, int update, ws_error *err)
{
    struct stat st;
    if (stat_at(dir, name, &st) != 0) return 0;
    if (set_has(&inputs, &st))
        return ws_fail(err, "%s: is an input of this command; an output never replaces an"
                       " input (even with --force): write elsewhere", path);
    if (update || force || set_has(&mine, &st)) return 0;
    return ws_fail(err, "%s: exists; pass --force to replace it, or write elsewhere", path);
}

int ws_outfile_check(const char *path, ws_error *err)
{
    const char *name;
    ws_error ignored;
    int dir = open_parent(path, 0, &name, &ignored);
    if (dir < 0) return 0;          /* no folder yet: nothing to replace */
    int rc = check_at(dir, name, path, 0, err);
    close(dir);
    return rc;
}

int ws_mkdirs(const char *dir, ws_error *err)
{
    if (is_root(dir)) return 0;          /* made, and opened, when it was locked */
    if (path_ok(dir, err)) return -1;
    const char *rel = below_root(dir);
    int fd = rel ? open_dirs(root_fd, rel, 1, 1, dir, err) : open_dirs(cwd_fd, dir, 1, 0, dir, err);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* ------------------------------------------------------------ files */

/* prefix + six of [A-Za-z0-9] (as mkstemp's) into buf: a new one at each
 * call and attempt. -1 when it does not fit. */
static int random_name(const char *prefix, char *buf, size_t size, int attempt)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40)
                 ^ __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED)
                 ^ (uint64_t)attempt * 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 29;
    size_t n = strlen(prefix);
    if (n + 7 > size) return -1;
    memcpy(buf, prefix, n);
    for (int k = 0; k < 6; k++) {
        buf[n + (size_t)k] = chars[x % 62];
        x /= 62;
    }
    buf[n + 6] = '\0';
    return 0;
}

/* A fresh temporary NAME.tmpXXXXXX in dir (the six characters as
 * mkstemp's, which is how a later --force or --resume recognises a
 * leftover); its name goes to tmp, and into a slot (when slots) BEFORE
 * the file exists: a stop signal between the two would otherwise leave
 * the file behind. A name that exists already (EEXIST) is dropped again;
 * should the signal come in that instant, what the handler removes is a
 * leftover temporary of this locked folder, which --force removes too. */
static int make_tmp(int dir, const char *name, char *tmp, size_t size, int mode, slot *slots)
{
    char prefix[NAME_MAX + 8];
    if ((size_t)snprintf(prefix, sizeof prefix, "%s.tmp", name) >= sizeof prefix) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        if (random_name(prefix, tmp, size, attempt)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        /* full slots (64 outputs open at once): unguarded, as before */
        int k = slots ? slot_put(slots, dir, tmp) : -1;
        int fd = openat(dir, tmp, mode | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        int e = errno;
        if (k >= 0) slot_drop(slots, dir, tmp);
        errno = e;
        if (e != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

static int open_out(ws_outfile *o, const char *path, int update, ws_error *err)
{
    memset(o, 0, sizeof *o);
    o->dir = -1;
    if (path_ok(path, err)) return -1;
    const char *name;
    int dir = open_parent(path, 1, &name, err);
    if (dir < 0) return -1;
    if (check_at(dir, name, path, update, err)) { close(dir); return -1; }
    o->update = update;
    o->path = strdup(path);
    size_t n = strlen(name) + 16;
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        close(dir);
        ws_outfile_abort(o);
        return ws_fail(err, "out of memory");
    }
    int fd = make_tmp(dir, name, o->tmp, n, O_WRONLY, tmp_slot);
    if (fd < 0) {
        ws_fail(err, "%s: cannot create: %s", path, strerror(errno));
        close(dir);
        free(o->tmp);
        o->tmp = NULL;
        ws_outfile_abort(o);
        return -1;
    }
    o->dir = dir;                  /* its slot: taken by make_tmp */
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
    /* The first failure's errno: the flush (ENOSPC, EFBIG show here, also
     * for a stream that failed before: what it could not write is written
     * again, failing the same way), a stream error without one (EIO),
     * fsync (delayed allocation), then close. errno from an earlier failed
     * write is long gone by now. */
    int e = 0, had_error = ferror(o->f);
    if (fflush(o->f) != 0) e = errno;
    if (had_error && !e) e = EIO;
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
    const char *slash = strrchr(o->path, '/');
    const char *name = slash ? slash + 1 : o->path;
    /* The destination may have appeared meanwhile (another process). */
    if (check_at(o->dir, name, o->path, o->update, err)) {
        ws_outfile_abort(o);
        return -1;
    }
    if (renameat(o->dir, o->tmp, o->dir, name) != 0) {
        ws_fail(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
        ws_outfile_abort(o);
        return -1;
    }
    slot_drop(tmp_slot, o->dir, o->tmp);
    struct stat st;
    if (stat_at(o->dir, name, &st) == 0) set_add(&mine, &st);
    close(o->dir);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    o->dir = -1;
    return 0;
}

void ws_outfile_abort(ws_outfile *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp && o->dir >= 0) {
        unlinkat(o->dir, o->tmp, 0);
        slot_drop(tmp_slot, o->dir, o->tmp);
    }
    if (o->tmp && o->dir >= 0) close(o->dir);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    o->dir = -1;
}

int ws_outfile_scratch(const char *dir, ws_error *err)
{
    int d = ws_outdir_open(dir);
    if (d < 0) return ws_fail(err, "%s: cannot open the folder: %s", dir, strerror(errno));
    /* No name at all where the file system allows it: nothing can be left. */
    int fd = openat(d, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        char tmp[64];
        fd = make_tmp(d, ".wattsim-spill", tmp, sizeof tmp, O_RDWR, NULL);
        if (fd >= 0) unlinkat(d, tmp, 0);      /* gone when the process ends, however */
    }
    int e = errno;
    close(d);
    if (fd < 0)
        return ws_fail(err, "%s: cannot create a scratch file there: %s", dir, strerror(e));
    return fd;
}

/* ------------------------------------------------------------ private folders */

int ws_private_make(ws_private *p, const char *beside, ws_error *err)
{
    const char *name;
    p->fd = -1;
    p->name[0] = '\0';
    if ((p->dir = open_parent(beside, 1, &name, err)) < 0) return -1;
    char tmp[sizeof p->name];
    int e = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        /* make_tmp's random name, as a folder: .wattsim-plot-XXXXXX */
        if (random_name(".wattsim-plot-", tmp, sizeof tmp, attempt)) { e = ENAMETOOLONG; break; }
        if (mkdirat(p->dir, tmp, 0700) == 0) {
            memcpy(p->name, tmp, sizeof tmp);
            slot_put(priv_slot, p->dir, p->name);
            p->fd = openat(p->dir, p->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (p->fd >= 0) return 0;
            e = errno;
            break;
        }
        if ((e = errno) != EEXIST) break;
    }
    ws_private_remove(p);
    return ws_fail(err, "%s: cannot make a private folder for gnuplot: %s", beside, strerror(e));
}

void ws_private_remove(ws_private *p)
{
    if (p->fd >= 0) close(p->fd);
    if (p->dir >= 0 && p->name[0]) {
        ws_outfile_remove_private(p->dir, p->name);
        slot_drop(priv_slot, p->dir, p->name);
    }
    if (p->dir >= 0) close(p->dir);
    p->dir = p->fd = -1;
    p->name[0] = '\0';
}

/* ------------------------------------------------------------ stdout */

int ws_stdout_close(FILE *out, ws_error *err)
{
    int e = ferror(out) ? (errno ? errno : EIO) : 0;
    if (fflush(out) != 0 && !e) e = errno;
    if (fclose(out) != 0 && !e && errno != EBADF) e = errno;
    if (e) return ws_fail(err, "standard output: write failed: %s", strerror(e));
    return 0;
}

/* ------------------------------------------------------------ batched appends */

/* Hand what waits to the kernel: whole records only (len is published
 * after a record is complete). `busy` keeps a signal handler and a flush
 * from writing the same bytes twice. Async-signal-safe. */
static int batch_write(ws_batchfile *b)
{
    if (__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQ_REL)) return 0;
    size_t n = __atomic_load_n(&b->len, __ATOMIC_ACQUIRE), done = 0;
    int rc = 0;
    while (done < n) {
        ssize_t w = write(b->fd, b->buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    if (!rc) __atomic_store_n(&b->len, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
    return rc;
}

static double coarse_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int ws_batch_open(ws_batchfile *b, const char *path, size_t cap, double seconds, ws_error *err)
{
    memset(b, 0, sizeof *b);
    b->fd = ws_outfile_openat(path, O_WRONLY | O_APPEND);
    if (b->fd < 0) return ws_fail(err, "%s: cannot append: %s", path, strerror(errno));
    b->buf = malloc(cap);
    if (!b->buf) {
        close(b->fd);
        b->fd = -1;
        return ws_fail(err, "out of memory");
    }
    b->cap = cap;
    b->seconds = seconds;
    b->last = coarse_now();
    pthread_mutex_lock(&lock);
    for (int k = 0; k < BATCHES; k++)
        if (!__atomic_load_n(&batch_slot[k], __ATOMIC_ACQUIRE)) {
            slot_owner = getpid();
            __atomic_store_n(&batch_slot[k], b, __ATOMIC_RELEASE);
            break;
        }
    pthread_mutex_unlock(&lock);
    return 0;
}

int ws_batch_add(ws_batchfile *b, const void *a, size_t na, const void *c, size_t nc)
{
    size_t len = __atomic_load_n(&b->len, __ATOMIC_RELAXED);
    if (len + na + nc > b->cap) {
        if (batch_write(b)) return -1;
        len = 0;
    }
    if (na + nc > b->cap) {
        /* longer than a batch: on its own (the two parts in one write) */
        unsigned char *one = malloc(na + nc);
        if (!one) return -1;
        memcpy(one, a, na);
        if (nc) memcpy(one + na, c, nc);
        size_t done = 0;
        int rc = 0;
        while (done < na + nc && !rc) {
            ssize_t w = write(b->fd, one + done, na + nc - done);
            if (w > 0) done += (size_t)w;
            else if (!(w < 0 && errno == EINTR)) rc = -1;
        }
        free(one);
        return rc;
    }
    memcpy(b->buf + len, a, na);
    if (nc) memcpy(b->buf + len + na, c, nc);
    __atomic_store_n(&b->len, len + na + nc, __ATOMIC_RELEASE);   /* a whole record */
    double t = coarse_now();
    if (t - b->last < b->seconds) return 0;
    b->last = t;
    return batch_write(b);
}

int ws_batch_flush(ws_batchfile *b)
{
    return b->buf ? batch_write(b) : 0;
}

int ws_batch_close(ws_batchfile *b)
{
    int rc = ws_batch_flush(b);
    pthread_mutex_lock(&lock);
    for (int k = 0; k < BATCHES; k++)
        if (__atomic_load_n(&batch_slot[k], __ATOMIC_ACQUIRE) == b)
            __atomic_store_n(&batch_slot[k], NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    if (b->fd >= 0 && close(b->fd) && !rc) rc = -1;
    free(b->buf);
    memset(b, 0, sizeof *b);
    b->fd = -1;
    return rc;
}

/* ------------------------------------------------------------ for the lock */

int ws_outfile_cwd(void) { return cwd_fd; }

int ws_outfile_forced(void) { return force; }

size_t ws_outfile_n_made(void)
{
    pthread_mutex_lock(&lock);
    size_t n = n_made;
    pthread_mutex_unlock(&lock);
    return n;
}

void ws_outfile_set_root(char *r, int fd)
{
    pthread_mutex_lock(&lock);
    free(root);
    root = r;
    root_len = strlen(r);
    root_fd = fd;
    pthread_mutex_unlock(&lock);
}

int ws_outfile_root_fd(void)
{
    pthread_mutex_lock(&lock);
    int fd = root_fd;
    pthread_mutex_unlock(&lock);
    return fd;
}

void ws_outfile_remove_made(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = n_made; i-- > 0;) {
        made_dir *m = &made[i];
        int fd = openat(m->parent, m->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            unlinkat(fd, ".wattsim.lock", 0);
            close(fd);
        }
        unlinkat(m->parent, m->name, AT_REMOVEDIR);      /* only if empty */
        slot_drop_locked(dir_slot, m->parent, m->name);
        close(m->parent);
        free(m->name);
        free(m->path);
    }
    free(made);
    made = NULL;
    n_made = 0;
    pthread_mutex_unlock(&lock);
}

void ws_outfile_release(void)
{
    pthread_mutex_lock(&lock);
    /* made folders that stay are no longer this command's to remove */
    for (size_t i = 0; i < n_made; i++) {
        slot_drop_locked(dir_slot, made[i].parent, made[i].name);
        close(made[i].parent);
        free(made[i].name);
        free(made[i].path);
    }
    free(made);
    made = NULL;
    n_made = 0;
    if (root_fd >= 0) close(root_fd);
    root_fd = -1;
    free(root);
    root = NULL;
    root_len = 0;
    free(inputs.v);
    free(mine.v);
    inputs = mine = (id_set){0};
    force = 0;
    pthread_mutex_unlock(&lock);
}
