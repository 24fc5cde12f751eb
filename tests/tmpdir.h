/*
 * A temporary folder per test, for suites whose tests write small files:
 * tmpdir_make() in the suite's .init, tmpdir_remove() in its .fini (it
 * removes the files written there and the folder).
 */
#ifndef WS_TEST_TMPDIR_H
#define WS_TEST_TMPDIR_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[64];

/* template: e.g. "/tmp/wscsv.XXXXXX". */
static inline void tmpdir_make(const char *template)
{
    snprintf(tmp, sizeof tmp, "%s", template);
    cr_assert_not_null(mkdtemp(tmp), "mkdtemp failed");
}

static inline void tmpdir_remove(void)
{
    DIR *d = opendir(tmp);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmp);
}

/* "<tmp>/<name>" in a static buffer (one at a time). */
static inline const char *tp(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    return p;
}

/* Write text to <tmp>/<name>. */
static inline void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tp(name), "wb");
    cr_assert_not_null(f, "cannot write %s", tp(name));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

#endif
