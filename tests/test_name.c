/*
 * Safe names (wattsim/name.h): the set [A-Za-z0-9._+-], no leading dot,
 * 1 to 64 characters, and what the refusal says.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "wattsim/name.h"

static const char *why(const char *s)
{
    static char buf[64];
    return ws_name_check(s, buf, sizeof buf) ? buf : NULL;
}

Test(name, accepts_the_safe_set)
{
    cr_expect_null(why("cifar100"));
    cr_expect_null(why("rtx6000"));
    cr_expect_null(why("a.b_c+d-E9"));
    cr_expect_null(why("x.."));                  /* dots after the first are fine */
    char max[WS_NAME_MAX + 1];
    memset(max, 'a', WS_NAME_MAX);
    max[WS_NAME_MAX] = '\0';
    cr_expect_null(why(max));
}

Test(name, refuses_everything_else)
{
    cr_expect_str_eq(why(""), "is empty");
    cr_expect_str_eq(why(NULL), "is empty");
    cr_expect_str_eq(why("."), "starts with '.'");
    cr_expect_str_eq(why(".."), "starts with '.'");
    cr_expect_str_eq(why(".hidden"), "starts with '.'");
    cr_expect_str_eq(why("/../../x/data"), "contains '/'");
    cr_expect_str_eq(why("a/b"), "contains '/'");
    cr_expect_str_eq(why("x';system('touch PWNED');y='"), "contains a quote (')");
    cr_expect_str_eq(why("a b"), "contains byte 0x20");
    cr_expect_str_eq(why("a\nb"), "contains byte 0x0a");
    cr_expect_str_eq(why("a`b`"), "contains '`'");
    cr_expect_str_eq(why("a$b"), "contains '$'");
    cr_expect_str_eq(why("a\\b"), "contains '\\'");
    cr_expect_str_eq(why("é"), "contains byte 0xc3");
    char big[WS_NAME_MAX + 2];
    memset(big, 'a', WS_NAME_MAX + 1);
    big[WS_NAME_MAX + 1] = '\0';
    cr_expect_str_eq(why(big), "is longer than 64 characters");
}
