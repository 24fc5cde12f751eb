/*
 * libFuzzer harness for the config -> file name -> gnuplot script path
 * (issue 7): the input bytes are a job name, written into an inline `job`
 * of a run config as a YAML double-quoted string (every byte escaped, so
 * any byte string reaches the reader). A name the reader accepts must be a
 * safe name (wattsim/name.h); the figure paths built from it the way `run`
 * builds them (OUT/pareto-GPU-NAME.{png,csv,gp}) must stay directly inside
 * OUT; and the gnuplot script written for it (preamble, title and a label
 * carrying the name; the raw input bytes too, which must never reach a
 * script unescaped) must have the same statements as the script for a
 * plain name: only the contents of single-quoted strings and comments may
 * differ, so no input adds a command (`system`, a backquote, a new line).
 */
#include "fuzz_util.h"
#include "wattsim/config.h"
#include "wattsim/name.h"
#include "wattsim/plot.h"

#define OUT "out"

/* The script for `name` (a figure of it) with `raw` also in a label. */
static char *script(const char *name, const char *raw)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) abort();
    char image[WS_NAME_MAX + 64], title[512];
    snprintf(image, sizeof image, "pareto-g1-%s.png", name);
    snprintf(title, sizeof title, "%s on g1: time vs energy", name);
    ws_plot_preamble(f, image, 800, 600, title);
    fputs("set label 3 ", f);
    ws_plot_str(f, raw);
    fputs(" at 1,2\nset label 4 '", f);
    ws_plot_chars(f, raw);
    fputs(": 1, 2 W' at 1,2\nplot data using 1:2 title 'knobs'\n", f);
    if (fclose(f)) abort();
    return buf;
}

/* The statements of a script: comment lines and the contents of
 * single-quoted strings blanked. A quote inside a string would end it
 * early, which this would expose as a changed skeleton. */
static void skeleton(char *s)
{
    int in_quote = 0, comment = 0, line_start = 1;
    char *w = s;
    for (char *p = s; *p; p++) {
        if (line_start && *p == '#' && !in_quote) comment = 1;
        line_start = 0;
        if (*p == '\n') {
            if (in_quote) abort();          /* a string spans lines: injected */
            comment = 0;
            line_start = 1;
            *w++ = '\n';
            continue;
        }
        if (comment) continue;
        if (*p == '\'') { in_quote = !in_quote; *w++ = '\''; continue; }
        if (!in_quote) *w++ = *p;
    }
    *w = '\0';
}

/* The script for (name, raw) has the statements of the plain script. */
static void check_script(const char *name, const char *raw)
{
    char *got = script(name, raw), *want = script("x", "x");
    skeleton(got);
    skeleton(want);
    if (strcmp(got, want)) abort();
    free(got);
    free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 512) return 0;
    /* Any text, accepted as a name or not, is escaped into a script. */
    char *raw = malloc(size + 1);
    if (!raw) abort();
    memcpy(raw, data, size);
    raw[size] = '\0';
    check_script("x", raw);
    free(raw);

    /* The config: the name as a YAML double-quoted string, byte by byte. */
    size_t cap = 256 + 4 * size;
    char *yaml = malloc(cap);
    if (!yaml) abort();
    size_t n = (size_t)snprintf(yaml, cap, "gpu: g1\nout: " OUT "\njob: {name: \"");
    for (size_t i = 0; i < size; i++) n += (size_t)snprintf(yaml + n, cap - n, "\\x%02x", data[i]);
    n += (size_t)snprintf(yaml + n, cap - n, "\", dataset: d, network: n, optimizer: o,"
                          " target_metric: 0.5, max_epochs: 10, b0: 16}\n");
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, (const uint8_t *)yaml, n);
    free(yaml);

    ws_error err = {{0}};
    ws_run_config cfg;
    ws_run_config_init(&cfg);
    if (ws_run_config_load(path, &cfg, &err) || ws_run_config_validate(&cfg, &err)) {
        fuzz_check_error(&err);
        ws_run_config_free(&cfg);
        return 0;
    }
    if (cfg.n_jobs != 1) abort();
    const char *name = cfg.jobs[0].name;
    char why[64];
    if (ws_name_check(name, why, sizeof why)) abort();      /* accepted: safe */

    /* The paths `run` derives: directly inside OUT, nothing else. */
    static const char *ext[] = {".png", ".csv", ".gp"};
    for (int i = 0; i < 3; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/pareto-%s-%s%s", OUT, cfg.gpus[0], name, ext[i]);
        const char *base = p + strlen(OUT) + 1;
        if (strncmp(p, OUT "/", strlen(OUT) + 1) || strchr(base, '/') || base[0] == '.')
            abort();
        char *sib = ws_plot_sibling(p, ext[(i + 1) % 3]);
        if (!sib || strncmp(sib, OUT "/", strlen(OUT) + 1) || strchr(sib + strlen(OUT) + 1, '/'))
            abort();
        free(sib);
    }
    /* The accepted name in the figure's file names, title and label. */
    check_script(name, name);
    ws_run_config_free(&cfg);
    return 0;
}
