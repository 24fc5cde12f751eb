/*
 * Tests of the configuration module (sim/src/io/config.c): good configs parse
 * into every field, each class of error gives its exact one-line message
 * with the right LINE:COL, --set overrides, and no input crashes or leaks
 * (run under ASan to check the latter).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkstemp, fdopen */
#endif
#include <criterion/criterion.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/config.h"

#ifndef WS_SOURCE_DIR
#define WS_SOURCE_DIR "."
#endif
#define DATA WS_SOURCE_DIR "/tests/data/config/"

/* ------------------------------------------------------------ helpers */

static char tmp_path[64];

/* Write `len` bytes to a fresh temporary file; its path is tmp_path. */
static const char *write_tmp(const char *text, size_t len)
{
    strcpy(tmp_path, "/tmp/ws_test_config_XXXXXX");
    int fd = mkstemp(tmp_path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return tmp_path;
}

/* Load a run config from `path` on top of the defaults; expect failure with
 * the message PATH followed by `rest` (e.g. ":3:6: eta must ..."). The
 * config must be unchanged and freeable. */
static void expect_load_error(const char *path, const char *rest)
{
    ws_run_config cfg;
    ws_error err = { "" };
    char want[WS_ERROR_MAX];
    ws_run_config_init(&cfg);
    cr_expect_neq(ws_run_config_load(path, &cfg, &err), 0,
                  "%s loaded but should fail with%s", path, rest);
    snprintf(want, sizeof want, "%s%s", path, rest);
    cr_expect_str_eq(err.msg, want);
    cr_expect_str_eq(cfg.path, "", "failed load changed the config");
    cr_expect_eq(cfg.n_etas, 1);
    cr_expect_eq(cfg.etas[0], 0.5);
    ws_run_config_free(&cfg);
}

static void expect_data_error(const char *name, const char *rest)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", DATA, name);
    expect_load_error(path, rest);
}

static void expect_text_error(const char *yaml, const char *rest)
{
    const char *path = write_tmp(yaml, strlen(yaml));
    expect_load_error(path, rest);
    unlink(path);
}

static void load_data(const char *name, ws_run_config *cfg)
{
    char path[512];
    ws_error err = { "" };
    snprintf(path, sizeof path, "%s%s", DATA, name);
    ws_run_config_init(cfg);
    cr_assert_eq(ws_run_config_load(path, cfg, &err), 0, "%s: %s", name, err.msg);
    cr_assert_str_eq(cfg->path, path);
}

static void set_ok(ws_run_config *cfg, const char *assignment)
{
    ws_error err = { "" };
    cr_assert_eq(ws_run_config_set(cfg, assignment, &err), 0, "--set %s: %s",
                 assignment, err.msg);
}

static void expect_set_error(const char *assignment, const char *want)
{
    ws_run_config cfg;
    ws_error err = { "" };
    ws_run_config_init(&cfg);
    cr_expect_neq(ws_run_config_set(&cfg, assignment, &err), 0,
                  "--set %s should fail", assignment);
    cr_expect_str_eq(err.msg, want);
    cr_expect_eq(cfg.n_etas, 1);
    cr_expect_eq(cfg.etas[0], 0.5);
    cr_expect_str_eq(cfg.bso.name, "zeus");
    ws_run_config_free(&cfg);
}

static void expect_job(const ws_workload_spec *j, const char *name,
                       const char *dataset, const char *network,
                       const char *optimizer, double target, int epochs, int b0)
{
    cr_expect_str_eq(j->name, name);
    cr_expect_str_eq(j->dataset, dataset);
    cr_expect_str_eq(j->network, network);
    cr_expect_str_eq(j->optimizer, optimizer);
    cr_expect_eq(j->target_metric, target, "%s target %g", name, j->target_metric);
    cr_expect_eq(j->max_epochs, epochs);
    cr_expect_eq(j->b0, b0);
}

static void expect_param(const ws_param_raw *p, const char *key,
                         const char *value, const char *where)
{
    cr_expect_str_eq(p->key, key);
    cr_expect_str_eq(p->value, value);
    cr_expect_str_eq(p->where, where);
}

/* ---------------------------------------------------------- good configs */

Test(run_config, init_defaults)
{
    ws_run_config cfg;
    ws_run_config_init(&cfg);
    cr_expect_str_eq(cfg.path, "");
    cr_assert_eq(cfg.n_gpus, 1);
    cr_expect_str_eq(cfg.gpus[0], "v100");
    cr_expect_eq(cfg.n_workloads, 0);
    cr_expect_eq(cfg.n_jobs, 0);
    cr_assert_eq(cfg.n_etas, 1);
    cr_expect_eq(cfg.etas[0], 0.5);
    cr_assert_eq(cfg.n_betas, 1);
    cr_expect_eq(cfg.betas[0], 2.0);
    cr_assert_eq(cfg.n_seeds, 1);
    cr_expect_eq(cfg.seeds[0], 1);
    cr_expect_eq(cfg.recurrences, 0);
    cr_expect_str_eq(cfg.bso.name, "zeus");
    cr_expect_str_eq(cfg.bso.where, "default");
    cr_expect_eq(cfg.bso.n_params, 0);
    cr_expect_str_eq(cfg.plo.name, "jit");
    cr_expect_null(cfg.out_dir);
    cr_expect_null(cfg.traces);
    cr_expect_null(cfg.format);
    ws_run_config_free(&cfg);
    ws_run_config_free(&cfg);      /* free zeroes, so twice is harmless */
}

Test(run_config, every_key_in_list_form)
{
    ws_run_config cfg;
    const char *f = DATA "full.yaml";
    char where[512];
    load_data("full.yaml", &cfg);

    cr_assert_eq(cfg.n_gpus, 2);
    cr_expect_str_eq(cfg.gpus[0], "v100");
    cr_expect_str_eq(cfg.gpus[1], "a40");
    cr_assert_eq(cfg.n_workloads, 2);
    cr_expect_str_eq(cfg.workloads[0], "librispeech");
    cr_expect_str_eq(cfg.workloads[1], "cifar100");
    cr_assert_eq(cfg.n_jobs, 2);
    expect_job(&cfg.jobs[0], "tiny", "cifar10", "resnet18", "sgd", 0.9, 20, 128);
    expect_job(&cfg.jobs[1], "mnist", "mnist", "lenet", "adam", 0.99, 5, 64);
    cr_assert_eq(cfg.n_etas, 3);
    cr_expect_eq(cfg.etas[0], 0.0);
    cr_expect_eq(cfg.etas[1], 0.5);
    cr_expect_eq(cfg.etas[2], 1.0);
    cr_assert_eq(cfg.n_betas, 3);
    cr_expect_eq(cfg.betas[0], 2.0);
    cr_expect_eq(cfg.betas[1], 3.5);
    cr_expect(isinf(cfg.betas[2]) && cfg.betas[2] > 0);
    cr_assert_eq(cfg.n_seeds, 4);
    cr_expect_eq(cfg.seeds[0], 1);
    cr_expect_eq(cfg.seeds[1], 2);
    cr_expect_eq(cfg.seeds[2], 3);
    cr_expect_eq(cfg.seeds[3], 10);
    cr_expect_eq(cfg.recurrences, 40);

    cr_expect_str_eq(cfg.bso.name, "zeus");
    snprintf(where, sizeof where, "%s:18:9", f);
    cr_expect_str_eq(cfg.bso.where, where);
    cr_assert_eq(cfg.bso.n_params, 3);
    snprintf(where, sizeof where, "%s:20:13", f);
    expect_param(&cfg.bso.params[0], "window", "10", where);
    snprintf(where, sizeof where, "%s:21:12", f);
    expect_param(&cfg.bso.params[1], "prior", "0.5", where);
    snprintf(where, sizeof where, "%s:22:11", f);
    expect_param(&cfg.bso.params[2], "mode", "fast", where);
    cr_expect_str_eq(cfg.plo.name, "./policies/myplo.so");
    snprintf(where, sizeof where, "%s:23:13", f);
    cr_expect_str_eq(cfg.plo.where, where);
    cr_expect_eq(cfg.plo.n_params, 0);

    cr_expect_str_eq(cfg.out_dir, "out/full");
    cr_expect_str_eq(cfg.traces, "/data/traces");
    cr_expect_str_eq(cfg.format, "csv");
    ws_error err;
    cr_expect_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    ws_run_config_free(&cfg);
}

Test(run_config, singular_forms)
{
    ws_run_config cfg;
    char where[512];
    load_data("singular.yaml", &cfg);
    cr_assert_eq(cfg.n_gpus, 1);
    cr_expect_str_eq(cfg.gpus[0], "a40");
    cr_assert_eq(cfg.n_workloads, 1);
    cr_expect_str_eq(cfg.workloads[0], "squad");
    cr_assert_eq(cfg.n_jobs, 1);
    /* name defaults to the dataset */
    expect_job(&cfg.jobs[0], "imdb", "imdb", "lstm", "adam", 0.8, 3, 32);
    cr_assert_eq(cfg.n_seeds, 1);
    cr_expect_eq(cfg.seeds[0], 7);
    cr_assert_eq(cfg.n_betas, 1);
    cr_expect(isinf(cfg.betas[0]));
    cr_expect_str_eq(cfg.plo.name, "jit");
    snprintf(where, sizeof where, "%s:12:6", DATA "singular.yaml");
    cr_expect_str_eq(cfg.plo.where, where);
    /* keys not in the file keep their defaults */
    cr_expect_eq(cfg.etas[0], 0.5);
    cr_expect_str_eq(cfg.bso.name, "zeus");
    cr_expect_str_eq(cfg.bso.where, "default");
    cr_expect_eq(cfg.recurrences, 0);
    ws_run_config_free(&cfg);
}

Test(run_config, minimal_keeps_defaults)
{
    ws_run_config cfg;
    load_data("minimal.yaml", &cfg);
    cr_assert_eq(cfg.n_workloads, 1);
    cr_expect_str_eq(cfg.workloads[0], "librispeech");
    cr_expect_str_eq(cfg.gpus[0], "v100");
    cr_expect_eq(cfg.n_etas, 1);
    cr_expect_eq(cfg.betas[0], 2.0);
    cr_expect_eq(cfg.seeds[0], 1);
    cr_expect_null(cfg.out_dir);
    ws_run_config_free(&cfg);
}

Test(run_config, load_applies_on_top_of_earlier_values)
{
    ws_run_config cfg;
    ws_error err;
    ws_run_config_init(&cfg);
    set_ok(&cfg, "eta=0.25");
    set_ok(&cfg, "gpu=a40");
    cr_assert_eq(ws_run_config_load(DATA "singular.yaml", &cfg, &err), 0, "%s", err.msg);
    cr_expect_eq(cfg.etas[0], 0.25);             /* not in the file */
    cr_expect_str_eq(cfg.gpus[0], "a40");        /* in the file */
    ws_run_config_free(&cfg);
}

Test(run_config, default_yaml)
{
    ws_run_config cfg;
    ws_error err;
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_load(WS_SOURCE_DIR "/configs/default.yaml", &cfg, &err),
                 0, "%s", err.msg);
    cr_assert_eq(cfg.n_gpus, 1);
    cr_expect_str_eq(cfg.gpus[0], "v100");
    cr_assert_eq(cfg.n_workloads, 1);
    cr_expect_str_eq(cfg.workloads[0], "librispeech");
    cr_expect_eq(cfg.n_jobs, 0);
    cr_expect_eq(cfg.etas[0], 0.5);
    cr_expect_eq(cfg.betas[0], 2.0);
    cr_expect_eq(cfg.seeds[0], 1);
    cr_expect_eq(cfg.recurrences, 0);
    cr_expect_str_eq(cfg.bso.name, "zeus");
    cr_expect_str_eq(cfg.plo.name, "jit");
    cr_expect_str_eq(cfg.out_dir, "out/default");
    cr_expect_str_eq(cfg.format, "table");
    cr_expect_null(cfg.traces);
    cr_expect_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    ws_run_config_free(&cfg);
}

Test(run_config, seeds)
{
    ws_run_config cfg;
    ws_run_config_init(&cfg);
    set_ok(&cfg, "seeds=1..100");
    cr_assert_eq(cfg.n_seeds, 100);
    for (size_t i = 0; i < 100; i++) cr_expect_eq(cfg.seeds[i], i + 1);
    set_ok(&cfg, "seed=5..5");
    cr_assert_eq(cfg.n_seeds, 1);
    cr_expect_eq(cfg.seeds[0], 5);
    set_ok(&cfg, "seeds=[0, 3..4, +9]");
    cr_assert_eq(cfg.n_seeds, 4);
    cr_expect_eq(cfg.seeds[0], 0);
    cr_expect_eq(cfg.seeds[1], 3);
    cr_expect_eq(cfg.seeds[2], 4);
    cr_expect_eq(cfg.seeds[3], 9);
    set_ok(&cfg, "seeds=0..999999");               /* the most allowed */
    cr_assert_eq(cfg.n_seeds, 1000000);
    cr_expect_eq(cfg.seeds[999999], 999999);
    set_ok(&cfg, "seed=18446744073709551615");
    cr_expect_eq(cfg.seeds[0], 18446744073709551615UL);
    ws_run_config_free(&cfg);

    expect_set_error("seeds=0..1000000",
                     "--set seeds: seeds range \"0..1000000\" holds more than 1000000 seeds");
    expect_set_error("seeds=[0..999999, 1000000]",
                     "--set seeds: seeds lists more than 1000000 seeds in all");
    expect_set_error("seeds=5..1",
                     "--set seeds: seeds range \"5..1\" is empty: A must be <= B");
    expect_set_error("seeds=[1..5, 3]", "--set seeds: seed 3 is listed twice in seeds");
    expect_set_error("seed=1..", "--set seed: seed must be a non-negative integer "
                     "or a range \"A..B\", got \"1..\"");
    expect_set_error("seed=-1..3", "--set seed: seed must be a non-negative integer "
                     "or a range \"A..B\", got \"-1..3\"");
    expect_set_error("seed=18446744073709551616", "--set seed: seed must be a "
                     "non-negative integer or a range \"A..B\", got "
                     "\"18446744073709551616\"");
}

/* ------------------------------------------------------------- catalogue */

Test(catalogue, workloads_yaml)
{
    ws_catalogue cat;
    ws_error err;
    cr_assert_eq(ws_catalogue_load(WS_SOURCE_DIR "/configs/workloads.yaml", &cat, &err),
                 0, "%s", err.msg);
    cr_assert_eq(cat.n_gpus, 4);
    cr_expect_str_eq(cat.gpus[0], "v100");
    cr_expect_str_eq(cat.gpus[1], "a40");
    cr_expect_str_eq(cat.gpus[2], "p100");
    cr_expect_str_eq(cat.gpus[3], "rtx6000");
    cr_assert_eq(cat.n, 6);
    expect_job(ws_catalogue_find(&cat, "cifar100"), "cifar100", "cifar100",
               "shufflenetv2", "adadelta", 0.6, 100, 1024);
    expect_job(ws_catalogue_find(&cat, "imagenet"), "imagenet", "imagenet",
               "resnet50", "adadelta", 0.65, 100, 256);
    expect_job(ws_catalogue_find(&cat, "squad"), "squad", "squad",
               "bert_base_uncased", "adamw", 84.0, 6, 32);
    expect_job(ws_catalogue_find(&cat, "librispeech"), "librispeech",
               "librispeech", "deepspeech2", "adamw", 40.0, 16, 256);
    expect_job(ws_catalogue_find(&cat, "movielens-1m"), "movielens-1m",
               "movielens-1m", "ncf", "adam", 0.41, 100, 1024);
    expect_job(ws_catalogue_find(&cat, "sentiment140"), "sentiment140",
               "sentiment140", "bert_base_uncased", "adamw", 0.84, 10, 128);
    cr_expect_null(ws_catalogue_find(&cat, "mnist"));
    cr_expect_null(ws_catalogue_find(&cat, NULL));
    cr_expect_null(ws_catalogue_find(NULL, "squad"));
    /* display names for figures, and the fallback to the key */
    cr_expect_str_eq(ws_catalogue_workload_display(&cat, "librispeech"),
                     "DeepSpeech2 / LibriSpeech");
    cr_expect_str_eq(ws_catalogue_workload_display(&cat, "mnist"), "mnist");
    cr_expect_str_eq(ws_catalogue_workload_display(NULL, "squad"), "squad");
    cr_expect_str_eq(ws_catalogue_gpu_display(&cat, "rtx6000"), "RTX 6000");
    cr_expect_str_eq(ws_catalogue_gpu_display(&cat, "v100"), "V100");
    cr_expect_str_eq(ws_catalogue_gpu_display(&cat, "h100"), "h100");
    ws_catalogue_free(&cat);
    ws_catalogue_free(&cat);
}

Test(catalogue, display_optional)
{
    ws_catalogue cat;
    ws_error err = { "" };
    const char *yaml = "gpus: [a, b]\ngpu_display: {b: \"GPU B\"}\n"
                                 "workloads: {x: {dataset: d, network: n, optimizer: o, "
                                 "target_metric: 1, max_epochs: 2, b0: 3, display: \"N / D\"},"
                                 " y: {dataset: d, network: n, optimizer: o, "
                                 "target_metric: 1, max_epochs: 2, b0: 3}}\n";
    const char *path = write_tmp(yaml, strlen(yaml));
    cr_assert_eq(ws_catalogue_load(path, &cat, &err), 0, "%s", err.msg);
    cr_expect_str_eq(ws_catalogue_workload_display(&cat, "x"), "N / D");
    cr_expect_str_eq(ws_catalogue_workload_display(&cat, "y"), "y");
    cr_expect_str_eq(ws_catalogue_gpu_display(&cat, "a"), "a");
    cr_expect_str_eq(ws_catalogue_gpu_display(&cat, "b"), "GPU B");
    ws_catalogue_free(&cat);
    unlink(path);
}

static void expect_catalogue_error(const char *yaml, const char *rest)
{
    ws_catalogue cat;
    ws_error err = { "" };
    char want[WS_ERROR_MAX];
    const char *path = write_tmp(yaml, strlen(yaml));
    cr_expect_neq(ws_catalogue_load(path, &cat, &err), 0, "should fail:%s", rest);
    snprintf(want, sizeof want, "%s%s", path, rest);
    cr_expect_str_eq(err.msg, want);
    cr_expect_eq(cat.n, 0);                       /* failed: left empty */
    cr_expect_null(cat.items);
    ws_catalogue_free(&cat);
    unlink(path);
}

#define W1 "{dataset: d, network: n, optimizer: o, target_metric: 1, max_epochs: 2, b0: 3}"

Test(catalogue, errors)
{
    expect_catalogue_error("gpus: [a]\n", ":1:1: the catalogue is missing key 'workloads'");
    expect_catalogue_error("gpus: [a, b, a]\nworkloads: {x: " W1 "}\n",
                           ":1:14: gpus 'a' is listed twice (first at 1:8)");
    expect_catalogue_error("gpus: [a]\nworkloads:\n  x: " W1 "\n  x: " W1 "\n",
                           ":4:3: duplicate key 'x' in workloads (first at 3:3)");
    expect_catalogue_error("gpus: [a]\nworkloads:\n  x: {dataset: d}\n",
                           ":3:6: workloads.x is missing key 'network'");
    expect_catalogue_error("gpus: [a]\nworkloads:\n  x: {dataset: d, network: n, "
                           "optimizer: o, target_metric: 1, max_epochs: 0, b0: 3}\n",
                           ":3:75: workloads.x.max_epochs must be a positive integer, got \"0\"");
    expect_catalogue_error("gpus: [a]\nworkloads:\n  x: {name: y, dataset: d}\n",
                           ":3:7: unknown key 'name' in workloads.x (expected one of: "
                           "dataset, network, optimizer, target_metric, max_epochs, b0, display,"
                           " gpus_per_job, metric, better, drift)");
    expect_catalogue_error("gpus: [a]\nworkloads: []\n",
                           ":2:12: workloads must be a mapping of workload names to "
                           "{dataset, network, ...}, got an empty list");
    expect_catalogue_error("gpus: [a]\nworkloads: {x: " W1 "}\nbatch: 4\n",
                           ":3:1: unknown key 'batch' in the catalogue (expected one of: "
                           "gpus, workloads, gpu_display)");
    expect_catalogue_error("", ": empty config");
    expect_catalogue_error("gpus: [a]\ngpu_display: {b: B}\nworkloads: {x: " W1 "}\n",
                           ":2:15: gpu_display: 'b' is not one of gpus");
    expect_catalogue_error("gpus: [a]\ngpu_display: [a]\nworkloads: {x: " W1 "}\n",
                           ":2:14: gpu_display must be a mapping of GPU names to display"
                           " names, got a list");
    expect_catalogue_error("gpus: [a]\ngpu_display: {a: \"x\\ty\"}\nworkloads: {x: " W1 "}\n",
                           ":2:18: gpu_display.a must not contain control characters (byte 2)");
    expect_catalogue_error("gpus: [a]\nworkloads: {x: {dataset: d, network: n, optimizer: o, "
                           "target_metric: 1, max_epochs: 2, b0: 3, display: \"\"}}\n",
                           ":2:104: workloads.x.display must be a non-empty string, got \"\"");

    ws_catalogue cat;
    ws_error err;
    cr_expect_neq(ws_catalogue_load(DATA "no-such-file.yaml", &cat, &err), 0);
    cr_expect_str_eq(err.msg, DATA "no-such-file.yaml: cannot open: No such file or directory");
    ws_catalogue_free(&cat);
}

/* --------------------------------------------------- file-level errors */

Test(errors, file_level)
{
    expect_load_error(DATA "no-such-file.yaml",
                      ": cannot open: No such file or directory");
    expect_load_error(DATA, ": not a regular file (a folder); give a file");
    expect_data_error("empty.yaml", ": empty config");
    expect_data_error("comments.yaml", ": empty config");
    expect_data_error("empty_doc.yaml", ": empty config");
    expect_data_error("list_root.yaml",
                      ":1:1: the config must be a mapping with keys gpu, workload, job, "
                      "eta, beta, seed, recurrences, bso, plo, policies, out, traces, format, power_cap, input_stall, idle_power, carbon, start, price, objective, price_tz, price_label, every, defer_up_to, job_power_cap, input_rate, samples_per_epoch, carbon_basis, price_adjustments, style, got a list");
    expect_data_error("two_docs.yaml",
                      ":2:1: a second YAML document ('---'); a config is one document");
}

Test(errors, keys)
{
    expect_data_error("unknown_key.yaml",
                      ":2:1: unknown key 'etaa' (expected one of: gpu, workload, job, eta, "
                      "beta, seed, recurrences, bso, plo, policies, out, traces, format, power_cap, input_stall, idle_power, carbon, start, price, objective, price_tz, price_label, every, defer_up_to, job_power_cap, input_rate, samples_per_epoch, carbon_basis, price_adjustments, style)");
    expect_data_error("dup_key.yaml", ":4:1: duplicate key 'eta' (first at 2:1)");
    expect_data_error("dup_plural.yaml",
                      ":3:1: duplicate key 'seeds': 'seed' means the same (first at 2:1)");
    expect_text_error("workload: w\ngpus: [a]\ngpu: b\n",
                      ":3:1: duplicate key 'gpu': 'gpus' means the same (first at 2:1)");
    expect_text_error("? [a]\n: 1\n", ":1:3: keys must be strings, got a list");
}

Test(errors, yaml_text)
{
    expect_data_error("bad_eta.yaml", ":3:6: eta must be a number in [0, 1], got \"abc\"");
    expect_data_error("syntax.yaml",
                      ":3:5: YAML syntax error: did not find expected ',' or ']' "
                      "(while parsing a flow sequence at 2:6)");
    expect_text_error("workload: w\n\tgpu: a\n",
                      ":2:1: YAML syntax error: found a tab character that violates "
                      "indentation (while scanning a plain scalar at 1:11)");
    expect_text_error("workload: w\ngpu: a: b\n",
                      ":2:7: YAML syntax error: mapping values are not allowed in this context");
    expect_data_error("not_utf8.yaml",
                      ":2:7: invalid leading UTF-8 octet (byte 0xFF): the text must be UTF-8");
    expect_text_error("workload: a\x01" "b\n",
                      ":1:12: control characters are not allowed (U+0001)");
    expect_data_error("nul.yaml", ":1:11: text contains a NUL character (\\0)");
    expect_data_error("anchor.yaml",
                      ":2:6: YAML anchors are not supported (found '&g'); write the "
                      "value out in full");
    expect_data_error("alias.yaml",
                      ":2:6: YAML aliases are not supported (found '*g'); write the "
                      "value out in full");
    /* The classic alias bomb stops at its first anchor. */
    expect_text_error("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
                      ":1:4: YAML anchors are not supported (found '&a'); write the "
                      "value out in full");
    /* A UTF-8 byte-order mark is fine. */
    expect_text_error("\xef\xbb\xbfworkload: w\neta: x\n",
                      ":2:6: eta must be a number in [0, 1], got \"x\"");
}

Test(errors, nesting_and_size_limits)
{
    char deep[256] = "workload: ";
    for (int i = 0; i < 40; i++) strcat(deep, "[");
    for (int i = 0; i < 40; i++) strcat(deep, "]");
    strcat(deep, "\n");
    expect_text_error(deep, ":1:42: nested more than 32 levels deep");

    size_t big = (1u << 20) + 10;
    char *text = malloc(big);
    cr_assert(text);
    memset(text, '#', big);
    text[big - 1] = '\n';
    const char *path = write_tmp(text, big);
    free(text);
    expect_load_error(path, ": larger than 1024 KiB, too large for a config file");
    unlink(path);
}

/* One value error per entry: YAML text and the message after the path. */
static const char *const value_errors[][2] = {
    { "workload: w\neta: 1.5\n", ":2:6: eta must be a number in [0, 1], got \"1.5\"" },
    { "workload: w\neta: -0.1\n", ":2:6: eta must be a number in [0, 1], got \"-0.1\"" },
    { "workload: w\neta: nan\n", ":2:6: eta must be a number in [0, 1], got \"nan\"" },
    { "workload: w\neta: .inf\n", ":2:6: eta must be a number in [0, 1], got \".inf\"" },
    { "workload: w\neta: 0.5x\n", ":2:6: eta must be a number in [0, 1], got \"0.5x\"" },
    { "workload: w\neta: 0x1p-1\n", ":2:6: eta must be a number in [0, 1], got \"0x1p-1\"" },
    { "workload: w\neta: \" 0.5\"\n", ":2:6: eta must be a number in [0, 1], got \" 0.5\"" },
    { "workload: w\neta:\n", ":2:5: eta must be a number in [0, 1], got nothing" },
    { "workload: w\neta: {a: 1}\n",
      ":2:6: eta must be a number in [0, 1] or a list of them, got a mapping" },
    { "workload: w\neta: []\n",
      ":2:6: eta must be a number in [0, 1] or a list of them, got an empty list" },
    { "workload: w\neta: [0.5, [1]]\n", ":2:12: eta must be a number in [0, 1], got a list" },
    { "workload: w\neta: [0.5, 0.50]\n", ":2:12: eta 0.50 is listed twice (first at 2:7)" },
    { "workload: w\nbeta: 0\n", ":2:7: beta must be a number > 0 or .inf, got \"0\"" },
    { "workload: w\nbeta: -.inf\n", ":2:7: beta must be a number > 0 or .inf, got \"-.inf\"" },
    { "workload: w\nbeta: [2, NaN]\n", ":2:11: beta must be a number > 0 or .inf, got \"NaN\"" },
    { "workload: w\nbeta: 1e999\n", ":2:7: beta must be a number > 0 or .inf, got \"1e999\"" },
    { "workload: w\nseed: -1\n",
      ":2:7: seed must be a non-negative integer or a range \"A..B\", got \"-1\"" },
    { "workload: w\nseed: 1.5\n",
      ":2:7: seed must be a non-negative integer or a range \"A..B\", got \"1.5\"" },
    { "workload: w\nseeds: [1, 1]\n", ":2:8: seed 1 is listed twice in seeds" },
    { "workload: w\nrecurrences: 0\n",
      ":2:14: recurrences must be an integer in 1..10000000 or 'default', got \"0\"" },
    { "workload: w\nrecurrences: sometimes\n",
      ":2:14: recurrences must be an integer in 1..10000000 or 'default', got \"sometimes\"" },
    { "workload: w\nformat: xml\n",
      ":2:9: format must be one of table, csv, json, got \"xml\"" },
    { "workload: w\ngpu: {a: 1}\n",
      ":2:6: gpu must be a non-empty string or a list of them, got a mapping" },
    { "workload: w\ngpu: ''\n", ":2:6: gpu must be a non-empty string, got \"\"" },
    { "workload: w\ngpus: [v100, a40, v100]\n",
      ":2:19: gpus 'v100' is listed twice (first at 2:8)" },
    { "workload: [a, b, a]\n", ":1:18: workload 'a' is listed twice (first at 1:12)" },
    { "workload: w\nout: [a]\n", ":2:6: out must be a non-empty string, got a list" },
    { "workload: w\ntraces:\n", ":2:8: traces must be a non-empty string, got nothing" },
    { "workload: w\nbso: [[a]]\n",
      ":2:7: bso must be a policy name or a mapping {name, params}, got a list" },
    { "workload: w\nbso: {params: {}}\n", ":2:6: bso is missing key 'name'" },
    { "workload: w\nplo: {name: jit, foo: 1}\n",
      ":2:18: unknown key 'foo' in plo (expected one of: name, params)" },
    { "workload: w\nbso: {name: z, params: [1]}\n",
      ":2:24: bso.params must be a mapping, got a list" },
    { "workload: w\nbso: {name: z, params: {w: [1]}}\n",
      ":2:28: bso.params.w must be a single value, got a list" },
    { "workload: w\nbso: {name: z, params: {w: }}\n",
      ":2:28: bso.params.w must be a single value, got nothing" },
    { "workload: w\nbso: {name: z, params: {w: 1, w: 2}}\n",
      ":2:31: duplicate key 'w' in bso.params (first at 2:25)" },
    { "workload: w\nbso: {name: z, params: {a.b: 1}}\n",
      ":2:25: bso.params: bad parameter name 'a.b' (use letters, digits, '_' and '-')" },
    { "workload: w\nbso:\n  name: ''\n", ":3:9: bso.name must be a non-empty string, got \"\"" },
    { "job: x\n",
      ":1:6: job must be a mapping {name, dataset, network, optimizer, target_metric, "
      "max_epochs, b0} or a list of them, got \"x\"" },
    { "job:\n  dataset: d\n  network: n\n  optimizer: o\n  target_metric: 1\n  max_epochs: 2\n",
      ":2:3: job is missing key 'b0'" },
    { "job: {dataset: d, network: n, optimizer: o, target_metric: 1, max_epochs: 2, b0: 0}\n",
      ":1:82: job.b0 must be a positive integer, got \"0\"" },
    { "job: {dataset: d, network: n, optimizer: o, target_metric: hi, max_epochs: 2, b0: 1}\n",
      ":1:60: job.target_metric must be a number, got \"hi\"" },
    { "job: {dataset: d, network: n, optimizer: o, target_metric: 1, max_epochs: 2, b0: 1, lr: 3}\n",
      ":1:85: unknown key 'lr' in job (expected one of: name, dataset, network, optimizer, "
      "target_metric, max_epochs, b0, display, gpus_per_job, metric, better, drift)" },
    { "jobs:\n  - {dataset: d, network: n, optimizer: o, target_metric: 1, max_epochs: 2, b0: 1}\n"
      "  - {dataset: d, network: m, optimizer: o, target_metric: 1, max_epochs: 2, b0: 1}\n",
      ":3:5: jobs 'd' is listed twice (first at 2:5)" },
};

Test(errors, values)
{
    for (size_t i = 0; i < sizeof value_errors / sizeof *value_errors; i++)
        expect_text_error(value_errors[i][0], value_errors[i][1]);
}

/* ---------------------------------------------------------------- --set */

Test(set, overrides_replace_axes)
{
    ws_run_config cfg;
    load_data("full.yaml", &cfg);
    set_ok(&cfg, "eta=[0.3,0.5]");
    cr_assert_eq(cfg.n_etas, 2);
    cr_expect_eq(cfg.etas[0], 0.3);
    cr_expect_eq(cfg.etas[1], 0.5);
    set_ok(&cfg, "gpu=a40");
    cr_assert_eq(cfg.n_gpus, 1);
    cr_expect_str_eq(cfg.gpus[0], "a40");
    set_ok(&cfg, " beta = .inf");
    cr_assert_eq(cfg.n_betas, 1);
    cr_expect(isinf(cfg.betas[0]));
    set_ok(&cfg, "workloads=[squad]");
    cr_assert_eq(cfg.n_workloads, 1);
    cr_expect_str_eq(cfg.workloads[0], "squad");
    set_ok(&cfg, "job={dataset: x, network: y, optimizer: z, target_metric: 1, "
                 "max_epochs: 2, b0: 3}");
    cr_assert_eq(cfg.n_jobs, 1);
    expect_job(&cfg.jobs[0], "x", "x", "y", "z", 1.0, 2, 3);
    cr_expect_eq(cfg.jobs[0].gpus_per_job, 0, "not given: the trace's, else 1");
    set_ok(&cfg, "job={dataset: x, network: y, optimizer: z, target_metric: 1, "
                 "max_epochs: 2, b0: 3, gpus_per_job: 8}");
    cr_expect_eq(cfg.jobs[0].gpus_per_job, 8);
    set_ok(&cfg, "recurrences=default");
    cr_expect_eq(cfg.recurrences, 0);
    set_ok(&cfg, "recurrences=12");
    cr_expect_eq(cfg.recurrences, 12);
    set_ok(&cfg, "format=json");
    cr_expect_str_eq(cfg.format, "json");
    set_ok(&cfg, "out='out/with spaces # not a comment'");
    cr_expect_str_eq(cfg.out_dir, "out/with spaces # not a comment");
    set_ok(&cfg, "traces=/t # a comment");
    cr_expect_str_eq(cfg.traces, "/t");
    /* --set does not change where the config came from */
    cr_expect_str_eq(cfg.path, DATA "full.yaml");
    ws_error err;
    cr_expect_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    ws_run_config_free(&cfg);
}

Test(set, policies)
{
    ws_run_config cfg;
    char where[512];
    load_data("full.yaml", &cfg);

    set_ok(&cfg, "bso.params.window=5");          /* replaces the file's value */
    set_ok(&cfg, "bso.params.new-one='x y'");     /* adds one */
    cr_assert_eq(cfg.bso.n_params, 4);
    expect_param(&cfg.bso.params[0], "window", "5", "--set");
    snprintf(where, sizeof where, "%s:21:12", DATA "full.yaml");
    expect_param(&cfg.bso.params[1], "prior", "0.5", where);
    expect_param(&cfg.bso.params[3], "new-one", "x y", "--set");

    set_ok(&cfg, "bso.name=grid");                /* keeps the params */
    cr_expect_str_eq(cfg.bso.name, "grid");
    cr_expect_str_eq(cfg.bso.where, "--set");
    cr_expect_eq(cfg.bso.n_params, 4);

    set_ok(&cfg, "bso.params={a: 1}");            /* replaces all params */
    cr_assert_eq(cfg.bso.n_params, 1);
    expect_param(&cfg.bso.params[0], "a", "1", "--set");

    set_ok(&cfg, "plo.params.step=25");
    cr_assert_eq(cfg.plo.n_params, 1);
    expect_param(&cfg.plo.params[0], "step", "25", "--set");
    set_ok(&cfg, "plo=jit");                      /* the whole policy */
    cr_expect_str_eq(cfg.plo.name, "jit");
    cr_expect_str_eq(cfg.plo.where, "--set");
    cr_expect_eq(cfg.plo.n_params, 0);

    set_ok(&cfg, "bso={name: zeus, params: {window: 3}}");
    cr_expect_str_eq(cfg.bso.name, "zeus");
    cr_assert_eq(cfg.bso.n_params, 1);
    expect_param(&cfg.bso.params[0], "window", "3", "--set");
    ws_run_config_free(&cfg);
}

Test(set, errors)
{
    expect_set_error("etaa=1",
                     "--set etaa: unknown key 'etaa' (expected one of: gpu, workload, job, "
                     "eta, beta, seed, recurrences, bso, plo, policies, out, traces, format, power_cap, input_stall, idle_power, carbon, start, price, objective, price_tz, price_label, every, defer_up_to, job_power_cap, input_rate, samples_per_epoch, carbon_basis, price_adjustments, style, "
                     "bso.name, bso.params.NAME, plo.name, plo.params.NAME)");
    expect_set_error("bso.params.=1",
                     "--set bso.params.: unknown key 'bso.params.' (expected one of: gpu, "
                     "workload, job, eta, beta, seed, recurrences, bso, plo, policies, out, traces, "
                     "format, power_cap, input_stall, idle_power, carbon, start, price, objective, price_tz, price_label, every, defer_up_to, job_power_cap, input_rate, samples_per_epoch, carbon_basis, price_adjustments, style, bso.name, bso.params.NAME, plo.name, plo.params.NAME)");
    /* the key is checked before the value */
    expect_set_error("etaa=[1",
                     "--set etaa: unknown key 'etaa' (expected one of: gpu, workload, job, "
                     "eta, beta, seed, recurrences, bso, plo, policies, out, traces, format, power_cap, input_stall, idle_power, carbon, start, price, objective, price_tz, price_label, every, defer_up_to, job_power_cap, input_rate, samples_per_epoch, carbon_basis, price_adjustments, style, "
                     "bso.name, bso.params.NAME, plo.name, plo.params.NAME)");
    expect_set_error("eta", "--set eta: expected KEY=VALUE");
    expect_set_error("=0.5", "--set =0.5: expected KEY=VALUE");
    expect_set_error("eta=2", "--set eta: eta must be a number in [0, 1], got \"2\"");
    expect_set_error("eta=", "--set eta: eta must be a number in [0, 1], got nothing");
    expect_set_error("eta=[0.3,0.3]", "--set eta: eta 0.3 is listed twice");
    expect_set_error("eta=[0.3", "--set eta: at the end of the value: YAML syntax error: "
                     "did not find expected ',' or ']' (while parsing a flow sequence)");
    expect_set_error("gpu=a: b: c", "--set gpu: value column 5: YAML syntax error: "
                     "mapping values are not allowed in this context");
    expect_set_error("gpu=*x", "--set gpu: value column 1: YAML aliases are not "
                     "supported (found '*x'); write the value out in full");
    expect_set_error("gpu=a\xff", "--set gpu: value column 2: invalid leading UTF-8 "
                     "octet (byte 0xFF): the text must be UTF-8");
    expect_set_error("bso.params.a.b=1", "--set bso.params.a.b: bso.params: bad parameter "
                     "name 'a.b' (use letters, digits, '_' and '-')");
    expect_set_error("bso.params.x=[1]",
                     "--set bso.params.x: bso.params.x must be a single value, got a list");
    expect_set_error("bso.name=", "--set bso.name: bso.name must be a non-empty string, "
                     "got nothing");
    expect_set_error("bso={name: a, foo: 1}",
                     "--set bso: unknown key 'foo' in bso (expected one of: name, params)");
    expect_set_error("format=xml",
                     "--set format: format must be one of table, csv, json, got \"xml\"");

    ws_error err;
    ws_run_config cfg;
    ws_run_config_init(&cfg);
    cr_expect_neq(ws_run_config_set(&cfg, NULL, &err), 0);
    cr_expect_str_eq(err.msg, "--set: expected KEY=VALUE");
    ws_run_config_free(&cfg);
}

/* ------------------------------------------------------------- validate */

Test(validate, checks)
{
    ws_run_config cfg;
    ws_error err;
    ws_run_config_init(&cfg);
    cr_expect_neq(ws_run_config_validate(&cfg, &err), 0);
    cr_expect_str_eq(err.msg, "no workload to run: give 'workload' (a name from the "
                     "catalogue) or an inline 'job'");
    set_ok(&cfg, "workload=librispeech");
    cr_expect_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    set_ok(&cfg, "job={name: librispeech, dataset: l, network: n, optimizer: o, "
                 "target_metric: 1, max_epochs: 1, b0: 1}");
    cr_expect_neq(ws_run_config_validate(&cfg, &err), 0);
    cr_expect_str_eq(err.msg, "workload 'librispeech' is given both as a workload and "
                     "as a job name; rename the job");
    set_ok(&cfg, "job={name: mine, dataset: l, network: n, optimizer: o, "
                 "target_metric: 1, max_epochs: 1, b0: 1}");
    cr_expect_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    /* a struct filled by hand is checked too */
    cfg.etas[0] = 2.0;
    cr_expect_neq(ws_run_config_validate(&cfg, &err), 0);
    cr_expect_str_eq(err.msg, "eta 2 is not in [0, 1]");
    ws_run_config_free(&cfg);

    /* errors name the config file once one was loaded */
    const char *path = write_tmp("gpu: a40\n", 9);
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_load(path, &cfg, &err), 0, "%s", err.msg);
    cr_expect_neq(ws_run_config_validate(&cfg, &err), 0);
    char want[WS_ERROR_MAX];
    snprintf(want, sizeof want, "%s: no workload to run: give 'workload' (a name from "
             "the catalogue) or an inline 'job'", path);
    cr_expect_str_eq(err.msg, want);
    ws_run_config_free(&cfg);
    unlink(path);
}

/* ------------------------------------------------------------ robustness */

/* Mutated copies of good configs must load or fail with one line naming the
 * file, never crash or leak (ASan), and a failure must leave the config as
 * it was. */
static void mutate_and_load(const char *seed_path, bool catalogue, unsigned rounds)
{
    static const char specials[] = "[]{}:,&*!|>-#'\"\\\n\t ?%@`.~0123456789\xff\xc3\x80";
    FILE *f = fopen(seed_path, "rb");
    cr_assert(f, "%s", seed_path);
    char orig[8192];
    size_t olen = fread(orig, 1, sizeof orig, f);
    fclose(f);

    unsigned long rng = 12345;
    char buf[3 * sizeof orig];
    for (unsigned round = 0; round < rounds; round++) {
        size_t len = olen;
        memcpy(buf, orig, olen);
        int edits = 1 + (int)(round % 4);
        for (int e = 0; e < edits && len > 1; e++) {
            rng = rng * 6364136223846793005UL + 1442695040888963407UL;
            size_t at = (size_t)(rng >> 33) % len;
            unsigned op = (unsigned)(rng >> 20) % 4;
            char ch = specials[(rng >> 40) % (sizeof specials - 1)];
            if (op == 0) {                                /* overwrite */
                buf[at] = ch;
            } else if (op == 1 && len < sizeof buf - 1) {  /* insert */
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = ch;
                len++;
            } else if (op == 2) {                         /* delete a run */
                size_t n = 1 + (rng >> 50) % 16;
                if (n > len - at) n = len - at;
                memmove(buf + at, buf + at + n, len - at - n);
                len -= n;
            } else if (len + 64 < sizeof buf) {            /* duplicate a run */
                size_t n = 1 + (rng >> 50) % 64;
                if (n > len - at) n = len - at;
                memmove(buf + at + n, buf + at, len - at);
                len += n;
            }
        }
        const char *path = write_tmp(buf, len);
        ws_error err = { "" };
        if (catalogue) {
            ws_catalogue cat;
            if (ws_catalogue_load(path, &cat, &err) != 0) {
                cr_expect_eq(cat.n, 0);
                cr_expect_eq(strncmp(err.msg, path, strlen(path)), 0, "%s", err.msg);
            }
            ws_catalogue_free(&cat);
        } else {
            ws_run_config cfg;
            ws_run_config_init(&cfg);
            if (ws_run_config_load(path, &cfg, &err) != 0) {
                cr_expect_str_eq(cfg.path, "");
                cr_expect_eq(strncmp(err.msg, path, strlen(path)), 0, "%s", err.msg);
            } else {
                ws_run_config_validate(&cfg, &err);
            }
            ws_run_config_free(&cfg);
        }
        cr_expect_null(strchr(err.msg, '\n'));
        unlink(path);
    }
}

Test(robustness, mutated_run_configs)
{
    mutate_and_load(DATA "full.yaml", false, 1500);
}

Test(robustness, mutated_catalogues)
{
    mutate_and_load(WS_SOURCE_DIR "/configs/workloads.yaml", true, 1000);
}

Test(robustness, odd_set_assignments)
{
    static const char *const odd[] = {
        "", "=", "==", "eta==", "eta=[", "eta=]", "eta={", "eta=- a", "eta=|",
        "eta=>\n 1", "eta=---", "eta=...", "eta=%YAML 1.1\n--- 1", "eta=!!float 0.5",
        "seeds=..", "seeds=1....2", "bso.params.x={a: b}", "bso.params=", "bso.params=~",
        "plo.params.x=\"\\0\"", "job=[]", "job=[{}]", "job={name: }", "gpu=[[[[[[]]]]]]",
        "gpu=\x01", "gpu=\"\xc3\"", "x.y.z=1", "bso.=1", "bso.name.x=1",
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        ws_run_config cfg;
        ws_error err = { "" };
        ws_run_config_init(&cfg);
        if (ws_run_config_set(&cfg, odd[i], &err) != 0) {
            cr_expect_eq(strncmp(err.msg, "--set ", 6), 0, "%s -> %s", odd[i], err.msg);
            cr_expect_null(strchr(err.msg, '\n'));
        }
        ws_run_config_free(&cfg);
    }
}

/* A plan's size is counted before anything is allocated for it: over
 * WS_MAX_PLAN_SIMS, or past what a size_t holds, it is refused with the
 * file, the size and the axes (issue 18). */
Test(config, plan_size_is_refused_before_allocation)
{
    ws_run_config c = {0};
    c.path = "big.yaml";
    c.n_gpus = 2, c.n_workloads = 3, c.n_etas = 5, c.n_betas = 7, c.n_seeds = 1000000;
    size_t n = 0;
    ws_error err = {{0}};
    cr_expect_eq(ws_run_config_plan_size(&c, 4, &n, &err), 0);
    cr_expect_eq(n, (size_t)4 * 2 * 3 * 5 * 7 * 1000000);
    cr_expect_eq(ws_run_config_plan_size(&c, 5, &n, &err), -1);
    cr_expect_str_eq(err.msg, "big.yaml: the run plan is 1050000000 simulations (5 policy pairs"
                              " x 2 gpus x 3 workloads x 5 etas x 7 betas x 1000000 seeds), more"
                              " than the 1000000000 one plan may hold; shrink an axis or split"
                              " the plan into several configs");
    c.n_etas = c.n_betas = (size_t)1 << 40;          /* overflows a size_t */
    cr_expect_eq(ws_run_config_plan_size(&c, 1, &n, &err), -1);
    cr_expect_eq(n, SIZE_MAX);
    cr_expect(strstr(err.msg, "the run plan is 7.25e+30 simulations (1 policy pairs"), "%s",
              err.msg);
}
