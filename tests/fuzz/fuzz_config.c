/*
 * libFuzzer harness for the YAML readers (sim/src/io/config.c): the input is
 * read as a run config (then validated) and as a workload catalogue, and
 * its text up to the first NUL is applied as a `--set` assignment.
 */
#include "fuzz_util.h"
#include "wattsim/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);

    ws_error err = {{0}};
    ws_run_config cfg;
    ws_run_config_init(&cfg);
    if (ws_run_config_load(path, &cfg, &err) || ws_run_config_validate(&cfg, &err)) {
        fuzz_check_error(&err);
    } else {
        /* Every pair of a valid config names both policies. */
        for (size_t i = 0; i < ws_run_config_n_pairs(&cfg); i++) {
            const ws_policy_ref *b, *p;
            ws_run_config_pair(&cfg, i, &b, &p);
            if (!b->name || !b->name[0] || !p->name || !p->name[0]) __builtin_trap();
        }
    }
    ws_run_config_free(&cfg);

    err.msg[0] = '\0';
    ws_catalogue cat = {0};
    if (ws_catalogue_load(path, &cat, &err)) {
        fuzz_check_error(&err);
    } else {
        for (size_t i = 0; i < cat.n; i++) {
            const ws_workload_spec *w = &cat.items[i];
            if (!ws_catalogue_find(&cat, w->name) || w->max_epochs <= 0 || w->b0 <= 0)
                abort();
        }
    }
    ws_catalogue_free(&cat);

    if (size < 4096) {
        char *s = malloc(size + 1);
        if (!s) abort();
        memcpy(s, data, size);
        s[size] = '\0';
        err.msg[0] = '\0';
        ws_run_config_init(&cfg);
        if (ws_run_config_set(&cfg, s, &err)) fuzz_check_error(&err);
        ws_run_config_free(&cfg);
        free(s);
    }
    return 0;
}
