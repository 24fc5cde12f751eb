/*
 * Test helpers for files the CLI wrote: the whole text of a file, and a
 * small CSV table (header + rows of strings) with lookup by column name.
 * Every failure is a Criterion assertion.
 */
#ifndef WS_TEST_TABLE_H
#define WS_TEST_TABLE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/csv.h"

/* The whole file, NUL-terminated; its length in *len (binary files). */
static inline char *slurp_n(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

static inline char *slurp(const char *path) { return slurp_n(path, NULL); }

/* A small table read from CSV: header + rows of strings. */
typedef struct table {
    char **hdr;
    size_t nh;
    char ***rows;
    size_t n;
} table;

static inline table read_table(const char *path)
{
    ws_error err = {{0}};
    ws_csv *c = ws_csv_open(path, NULL, &err);
    cr_assert_not_null(c, "%s", err.msg);
    table t = {0};
    int r;
    while ((r = ws_csv_next(c, &err)) == 1) {
        size_t nf = ws_csv_nfields(c);
        char **row = calloc(nf + 1, sizeof *row);
        for (size_t i = 0; i < nf; i++) row[i] = strdup(ws_csv_field(c, i));
        if (!t.hdr) { t.hdr = row; t.nh = nf; continue; }
        t.rows = realloc(t.rows, (t.n + 1) * sizeof *t.rows);
        t.rows[t.n++] = row;
    }
    cr_assert_eq(r, 0, "%s", err.msg);
    ws_csv_close(c);
    return t;
}

static inline size_t col(const table *t, const char *name)
{
    for (size_t i = 0; i < t->nh; i++)
        if (!strcmp(t->hdr[i], name)) return i;
    cr_assert_fail("no column %s", name);
    return 0;
}

static inline double num(const table *t, size_t row, const char *name)
{
    const char *s = t->rows[row][col(t, name)];
    return *s ? strtod(s, NULL) : NAN;
}

static inline const char *str(const table *t, size_t row, const char *name)
{
    return t->rows[row][col(t, name)];
}

static inline void free_table(table *t)
{
    for (size_t r = 0; r <= t->n; r++) {
        char **row = r ? t->rows[r - 1] : t->hdr;
        for (size_t i = 0; row && row[i]; i++) free(row[i]);
        free(row);
    }
    free(t->rows);
}

#endif
