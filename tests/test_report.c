/*
 * The run table's "final bs (seeds)" column (report.c): per group of seeds,
 * the final batch sizes with their counts, most frequent first, ties to the
 * smaller size, at most four, stopping at a negative size (no final size).
 * Counted by sorting the group's sizes; checked here on groups built by
 * hand against counts done by hand, and on a large group, whose count the
 * old pairwise loop made quadratic.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/report.h"
#include "wattsim/study.h"

/* The table's one data line for a group of cells with these final sizes,
 * its "final bs (seeds)" field (after the two spaces that open it). */
static char *final_column(const int *final_bs, size_t n)
{
    ws_cell_result *r = calloc(n, sizeof *r);
    cr_assert_not_null(r);
    for (size_t i = 0; i < n; i++) {
        r[i].cell = (ws_cell){i, "v100", "cifar100", 0.5, 2.0, i + 1, 0, NULL};
        r[i].recurrences = 10;
        r[i].tot.final_bs = final_bs[i];
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(ws_report_cells(f, WS_FMT_TABLE, r, n, "zeus", "jit", NULL, NULL), 0);
    cr_assert_eq(fclose(f), 0);
    free(r);
    /* the last line is the group's; its column follows "  " after runs */
    char *line = strstr(buf, "\nv100");
    cr_assert_not_null(line, "%s", buf);
    char *col = strstr(line, "  ");
    while (col && strstr(col + 1, "  ")) col = strstr(col + 1, "  ");
    cr_assert_not_null(col, "%s", line);
    char *out = strdup(col + 2);
    out[strcspn(out, "\n")] = '\0';
    free(buf);
    return out;
}

static void expect_column(const int *bs, size_t n, const char *want)
{
    char *got = final_column(bs, n);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(report, final_sizes_most_frequent_first)
{
    const int a[] = {32, 64, 32, 128, 64, 32};
    expect_column(a, 6, "32 (3), 64 (2), 128 (1)");
}

Test(report, final_sizes_ties_go_to_the_smaller)
{
    const int a[] = {256, 8, 64, 256, 8, 64, 32};
    expect_column(a, 7, "8 (2), 64 (2), 256 (2), 32 (1)");
}

Test(report, final_sizes_at_most_four)
{
    const int a[] = {1, 2, 3, 4, 5, 5, 6};
    expect_column(a, 7, "5 (2), 1 (1), 2 (1), 3 (1)");
}

Test(report, final_sizes_stop_at_a_negative_one)
{
    /* -1 (no final size) is the most frequent: nothing listed */
    const int a[] = {-1, -1, 16};
    expect_column(a, 3, "");
    /* after 16, the next most frequent is -1: the list stops there */
    const int b[] = {16, 16, 16, -1, -1, 8};
    expect_column(b, 6, "16 (3)");
}

Test(report, final_sizes_of_a_large_group)
{
    /* 200,704 seeds in blocks of 28, in which size s (1 to 7) appears s
     * times: 7 most often (7 per block), then 6, 5 and 4. */
    enum { N = 200704 };        /* 7168 blocks of 28 */
    int *a = malloc(N * sizeof *a);
    cr_assert_not_null(a);
    size_t n = 0;
    for (size_t blk = 0; blk < N / 28; blk++)
        for (int s = 1; s <= 7; s++)
            for (int k = 0; k < s; k++) a[n++] = s;
    cr_assert_eq(n, N);
    expect_column(a, n, "7 (50176), 6 (43008), 5 (35840), 4 (28672)");
    free(a);
}
