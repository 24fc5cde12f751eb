/*
 * Internal (not installed): what the three parts of the config reader
 * share. config_yaml.c reads YAML text into a tree of nodes that remember
 * their line and column and holds the error, scalar and mapping helpers;
 * config_axes.c turns nodes into axes, workload specs and policy
 * references, config_policies.c into policy lists and pairs; config.c builds run configs (with --set) and the catalogue
 * on them (see config.c for how reading works). The helpers keep their
 * short names in the source; their symbols are ws_cfg_-prefixed.
 */
#ifndef WATTSIM_CONFIG_PARSE_H
#define WATTSIM_CONFIG_PARSE_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* strdup, strndup, strcasecmp */
#endif
#include "wattsim/config.h"
#include "wattsim/name.h"
#include "wattsim/series.h"
#include "wattsim/outfile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* A config is a few hundred bytes; the cap bounds the memory the tree of a
 * hostile or mistaken input (e.g. a huge trace file) can take. */
#define MAX_FILE_BYTES (1L << 20)
/* The schema nests 4 levels at most (bso: {params: {k: v}}); the cap keeps
 * the recursive tree builder and free far from the stack limit. */
#define MAX_DEPTH 32
#define MAX_SEEDS 1000000UL
/* Longest piece of user text quoted back in an error message. */
#define SHOW_MAX 40
#define SHOW_SIZE (4 * SHOW_MAX + 8)   /* each byte may become \xNN */

typedef enum { Y_SCALAR, Y_LIST, Y_MAP } ykind;

typedef struct ynode {
    ykind kind;
    bool plain;             /* unquoted scalar: only these can mean "nothing" */
    unsigned long line, col; /* 1-based */
    char *text;             /* scalar value, NUL-terminated (never has a NUL) */
    struct ynode **kids;    /* list items, or mapping key, value, key, value */
    size_t n;               /* number of kids (twice the pairs of a mapping) */
    size_t cap;
} ynode;

/* Where errors point: a file (FILE:LINE:COL) or a --set (no position). */
typedef struct ctx {
    const char *file;       /* config file, or NULL for a --set */
    const char *set_key;    /* the KEY of a --set, or NULL */
    size_t set_len;         /* length of the --set value */
    ws_error *err;
} ctx;

#define DESCRIBE_SIZE (SHOW_SIZE + 8)

/* A place in the YAML text: 1-based line and column, and the 0-based
 * offset that locates it within a one-line --set value. */
typedef struct pos {
    unsigned long line, col;
    size_t index;
} pos;

typedef struct keydef {
    const char *name;
    int id;
    bool listed;     /* shown in "expected one of" (plural spellings aren't) */
} keydef;

#define ynode_free ws_cfg_ynode_free
#define is_null ws_cfg_is_null
#define show_text ws_cfg_show_text
#define describe ws_cfg_describe
#define fail_at ws_cfg_fail_at
#define fail_oom ws_cfg_fail_oom
#define first_at ws_cfg_first_at
#define where_of ws_cfg_where_of
#define read_tree ws_cfg_read_tree
#define read_file_tree ws_cfg_read_file_tree
#define parse_real ws_cfg_parse_real
#define parse_ulong ws_cfg_parse_ulong
#define parse_int_in ws_cfg_parse_int_in
#define get_string ws_cfg_get_string
#define check_name ws_cfg_check_name
#define get_name ws_cfg_get_name
#define set_string ws_cfg_set_string
#define set_display ws_cfg_set_display
#define find_repeat ws_cfg_find_repeat
#define key_id ws_cfg_key_id
#define expected_list ws_cfg_expected_list
#define match_keys ws_cfg_match_keys
#define check_name_keys ws_cfg_check_name_keys
#define string_axis ws_cfg_string_axis
#define real_axis ws_cfg_real_axis
#define seed_axis ws_cfg_seed_axis
#define parse_spec ws_cfg_parse_spec
#define spec_free ws_cfg_spec_free
#define job_axis ws_cfg_job_axis
#define policy_free ws_cfg_policy_free
#define put_param ws_cfg_put_param
#define parse_params ws_cfg_parse_params
#define parse_policy ws_cfg_parse_policy
#define policy_same ws_cfg_policy_same
#define policy_list ws_cfg_policy_list
#define pair_free ws_cfg_pair_free
#define pair_list ws_cfg_pair_list

static inline size_t map_pairs(const ynode *m) { return m->n / 2; }
static inline const ynode *map_key(const ynode *m, size_t i) { return m->kids[2 * i]; }
static inline const ynode *map_val(const ynode *m, size_t i) { return m->kids[2 * i + 1]; }
static inline bool eta_ok(double v) { return v >= 0.0 && v <= 1.0; }
static inline bool beta_ok(double v) { return v > 0.0; }

void ynode_free(ynode *n);

bool is_null(const ynode *n);

const char *show_text(const char *s, char *buf, size_t size);

const char *describe(const ynode *n, char *buf, size_t size);

__attribute__((format(printf, 3, 4)))
int fail_at(const ctx *c, const ynode *n, const char *fmt, ...);

int fail_oom(const ctx *c);

const char *first_at(const ctx *c, const ynode *n, char *buf, size_t size);

char *where_of(const ctx *c, const ynode *n);

int read_tree(const ctx *c, const unsigned char *buf, size_t len,
                     ynode **root);

int read_file_tree(const ctx *c, ynode **root);

bool parse_real(const char *s, bool allow_inf, double *out);

bool parse_ulong(const char *s, unsigned long *out);

bool parse_int_in(const char *s, unsigned long lo, unsigned long hi,
                         unsigned long *out);

int get_string(const ctx *c, const ynode *n, const char *what, char **out);

int check_name(const ctx *c, const ynode *n, const char *what, const char *s);

int get_name(const ctx *c, const ynode *n, const char *what, char **out);

int set_string(const ctx *c, const ynode *n, const char *what, char **slot);

int set_display(const ctx *c, const ynode *n, const char *what, char **slot);

int find_repeat(const char *const *names, const double *reals, size_t n,
                       size_t *first, size_t *again);

int key_id(const keydef *defs, size_t ndefs, const char *name);

void expected_list(const keydef *defs, size_t ndefs, char *buf, size_t size);

int match_keys(const ctx *c, const ynode *m, const char *what,
                      const keydef *defs, size_t ndefs, size_t nids,
                      const ynode **keys, const ynode **vals);

int check_name_keys(const ctx *c, const ynode *m, const char *what);

int string_axis(const ctx *c, const ynode *n, const char *what,
                       char ***out, size_t *count);

int real_axis(const ctx *c, const ynode *n, const char *what,
                     const char *expect, bool allow_inf, bool (*ok)(double),
                     double **out, size_t *count);

int seed_axis(const ctx *c, const ynode *n, const char *what,
                     unsigned long **out, size_t *count);

int parse_spec(const ctx *c, const ynode *m, const char *what,
                      bool with_name, ws_workload_spec *s);

void spec_free(ws_workload_spec *s);

int job_axis(const ctx *c, const ynode *n, const char *what,
                    ws_workload_spec **out, size_t *count);

void policy_free(ws_policy_ref *p);

int put_param(const ctx *c, ws_policy_ref *p, const char *what,
                     const char *key, const ynode *k, const ynode *v);

int parse_params(const ctx *c, const ynode *m, const char *what,
                        ws_policy_ref *p);

int parse_policy(const ctx *c, const ynode *n, const char *what,
                        ws_policy_ref *p);

/* config_policies.c: `bso:`/`plo:` as lists and `policies:`. */
bool policy_same(const ws_policy_ref *a, const ws_policy_ref *b);
int policy_list(const ctx *c, const ynode *n, const char *what, ws_policy_ref **out,
                size_t *count);
void pair_free(ws_policy_pair_ref *p);
int pair_list(const ctx *c, const ynode *n, const char *what, ws_policy_pair_ref **out,
              size_t *count);

#endif
