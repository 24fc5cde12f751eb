/*
 * libFuzzer harness for the group-trace reader (sim/src/study/group.c), with a
 * small fixed catalogue whose datasets the inputs may name.
 */
#include "fuzz_util.h"
#include "wattsim/group.h"

#define SPEC(n, net, opt, target, epochs, bs0)                                        \
    {.name = n, .dataset = n, .network = net, .optimizer = opt, .target_metric = target, \
     .max_epochs = epochs, .b0 = bs0}
static ws_workload_spec items[] = {
    SPEC("cifar100", "shufflenetv2", "adadelta", 0.6, 100, 1024),
    SPEC("imagenet", "resnet50", "adadelta", 0.65, 100, 256),
    SPEC("librispeech", "deepspeech2", "adamw", 40.0, 50, 192),
};
static char *gpus[] = {"v100"};
static const ws_catalogue cat = {.items = items, .n = 3, .gpus = gpus, .n_gpus = 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_group_trace t = {0};
    if (ws_group_trace_load(path, &cat, &lim, &t, &err)) {
        fuzz_check_error(&err);
    } else {
        size_t rows = 0;
        for (size_t g = 0; g < t.n; g++) {
            if (g && strcmp(t.groups[g - 1].name, t.groups[g].name) >= 0) abort();
            for (size_t i = 0; i < t.groups[g].n; i++) {
                const ws_group_row *r = &t.groups[g].rows[i];
                if (!(r->end >= r->start) || !(r->ratio > 0)) abort();
                if (i && r->start < t.groups[g].rows[i - 1].start) abort();
            }
            rows += t.groups[g].n;
        }
        if (rows != t.n_rows) abort();
    }
    ws_group_trace_free(&t);
    return 0;
}
