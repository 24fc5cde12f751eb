/* The JSON writer (wattsim/json_writer.h): layout, RFC 8259 escaping,
 * numbers that read back, non-finite numbers never written, nesting
 * errors caught. Expected texts written by hand. */
#include "wattsim/json_writer.h"
#include "wattsim/error.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static FILE *f;
static char *buf;
static size_t len;

static void setup(void) { f = open_memstream(&buf, &len); cr_assert(f); }
static void teardown(void) { free(buf); }
static const char *text(void) { fflush(f); return buf; }

TestSuite(json_writer, .init = setup, .fini = teardown);

Test(json_writer, layout)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_object(&w);
    ws_jw_kstring(&w, "gpu", "v100");
    ws_jw_kint(&w, "b0", -3);
    ws_jw_kbool(&w, "ok", 1);
    ws_jw_key(&w, "none"); ws_jw_null(&w);
    ws_jw_key(&w, "seed"); ws_jw_uint(&w, 18446744073709551615ull);
    ws_jw_key(&w, "l");
    ws_jw_begin_array_lines(&w);
    ws_jw_begin_object(&w); ws_jw_kint(&w, "a", 1); ws_jw_end_object(&w);
    ws_jw_begin_object(&w); ws_jw_kint(&w, "a", 2); ws_jw_end_object(&w);
    ws_jw_end_array(&w);
    ws_jw_key(&w, "e"); ws_jw_begin_array_lines(&w); ws_jw_end_array(&w);
    ws_jw_key(&w, "f"); ws_jw_begin_array(&w); ws_jw_int(&w, 1); ws_jw_int(&w, 2);
    ws_jw_end_array(&w);
    ws_jw_end_object(&w);
    ws_jw_newline(&w);
    cr_expect_eq(ws_jw_error(&w), 0);
    cr_expect_str_eq(text(), "{\"gpu\": \"v100\", \"b0\": -3, \"ok\": true, \"none\": null, "
                     "\"seed\": 18446744073709551615, \"l\": [\n  {\"a\": 1},\n  {\"a\": 2}\n], "
                     "\"e\": [], \"f\": [1, 2]}\n");
}

Test(json_writer, rows_and_raw)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_object(&w);
    ws_jw_key(&w, "rows");
    ws_jw_begin_array_rows(&w);
    ws_jw_int(&w, 1);
    ws_jw_int(&w, 2);
    ws_jw_end_array(&w);
    ws_jw_key(&w, "result");
    ws_jw_raw(&w, "{\"a\": [1]}\n", 11);
    ws_jw_key(&w, "ext");
    ws_jw_raw(&w, NULL, 0);            /* written by other code */
    fputs("true", f);
    ws_jw_end_object(&w);
    cr_expect_eq(ws_jw_error(&w), 0);
    cr_expect_str_eq(text(), "{\"rows\": [\n  1,\n  2], \"result\": {\"a\": [1]}\n, "
                     "\"ext\": true}");
}

Test(json_writer, fixed_and_g)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_array(&w);
    ws_jw_fixed(&w, 2, 355.956);
    ws_jw_fixed(&w, 0, 2809327.4);
    ws_jw_g(&w, 0.5);
    ws_jw_fixed(&w, 3, NAN);            /* 0/0: null */
    ws_jw_end_array(&w);
    cr_expect_str_eq(text(), "[355.96, 2809327, 0.5, null]");
}

Test(json_writer, escaping)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_array(&w);
    ws_jw_string(&w, "a\"b\\c\x01\n\x1f\x7f\xc3\xa9");
    ws_jw_string(&w, NULL);
    ws_jw_end_array(&w);
    cr_expect_eq(ws_jw_error(&w), 0);
    cr_expect_str_eq(text(), "[\"a\\\"b\\\\c\\u0001\\u000a\\u001f\x7f\xc3\xa9\", null]");
}

Test(json_writer, numbers)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_array(&w);
    ws_jw_number(&w, 0.5);
    ws_jw_number(&w, 0.1);
    ws_jw_number(&w, 250);
    ws_jw_number(&w, -1e300);
    ws_jw_number(&w, NAN);          /* not defined: null */
    ws_jw_end_array(&w);
    cr_expect_str_eq(text(), "[0.5, 0.10000000000000001, 250, -1.0000000000000001e+300, null]");
    cr_expect_eq(strtod("0.10000000000000001", NULL), 0.1);
    ws_error err;
    cr_expect_eq(ws_output_check("x", &err), 0, "NaN is null by design, not an error");
}

Test(json_writer, infinity_is_null_and_an_error)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_number(&w, INFINITY);
    cr_expect_str_eq(text(), "null");
    ws_error err;
    cr_expect_neq(ws_output_check("out.json", &err), 0, "an infinity fails the command");
}

Test(json_writer, nesting_errors)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_key(&w, "k");                     /* a key outside an object */
    cr_expect_neq(ws_jw_error(&w), 0);
    ws_jw_init(&w, f);
    ws_jw_begin_object(&w);
    ws_jw_int(&w, 1);                       /* a value without a key */
    cr_expect_neq(ws_jw_error(&w), 0);
    ws_jw_init(&w, f);
    ws_jw_begin_array(&w);
    ws_jw_end_object(&w);                   /* the wrong end */
    cr_expect_neq(ws_jw_error(&w), 0);
    ws_jw_init(&w, f);
    ws_jw_end_array(&w);                    /* an end without a begin */
    cr_expect_neq(ws_jw_error(&w), 0);
}
