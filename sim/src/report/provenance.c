/*
 * The provenance member of summary.json and sweep.json (wattsim/
 * provenance.h): one record per process, set by the CLI before the study
 * runs, written by the JSON writers. The sha256 of the config and of the
 * trace files are taken when it is set: the files the study then reads.
 */
#include "wattsim/provenance.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/report.h"
#include "wattsim/json_writer.h"
#include "wattsim/sha256.h"
#include "wattsim/trace.h"

typedef struct named_sha {
    char *name;
    char sha[65];
} named_sha;

static struct {
    int set;
    char *command, *config, *traces;
    char config_sha[65];
    named_sha *files;
    size_t n_files;
} prov;

void ws_provenance_clear(void)
{
    free(prov.command);
    free(prov.config);
    free(prov.traces);
    for (size_t i = 0; i < prov.n_files; i++) free(prov.files[i].name);
    free(prov.files);
    memset(&prov, 0, sizeof prov);
}

/* The trace NAME of folder dir, hashed, as the next file. */
static int add_trace(const char *dir, const char *name, ws_error *err)
{
    char *path = ws_trace_path(dir, name, err);
    if (!path) return -1;
    named_sha *f = &prov.files[prov.n_files];
    const char *base = strrchr(path, '/');
    f->name = strdup(base ? base + 1 : path);
    int rc = f->name ? ws_sha256_file(path, f->sha, err) : ws_fail(err, "out of memory");
    free(path);
    if (f->name) prov.n_files++;
    return rc;
}

int ws_provenance_set(const char *command, const char *config, const char *traces,
                      char *const *gpus, size_t n_gpus, ws_error *err)
{
    ws_provenance_clear();
    char *cfg_real = realpath(config, NULL), *tr_real = realpath(traces, NULL);
    prov.command = strdup(command);
    prov.config = cfg_real ? cfg_real : strdup(config);
    prov.traces = tr_real ? tr_real : strdup(traces);
    prov.files = calloc(n_gpus + 1, sizeof *prov.files);
    if (!prov.command || !prov.config || !prov.traces || !prov.files) {
        ws_provenance_clear();
        return ws_fail(err, "out of memory");
    }
    int rc = ws_sha256_file(config, prov.config_sha, err)
             || add_trace(traces, "summary_train", err);
    char name[PATH_MAX];
    for (size_t i = 0; i < n_gpus && !rc; i++) {
        snprintf(name, sizeof name, "summary_power_%s", gpus[i]);
        rc = add_trace(traces, name, err);
    }
    if (rc) {
        ws_provenance_clear();
        return -1;
    }
    prov.set = 1;
    return 0;
}

void ws_jw_provenance(ws_jw *w)
{
    if (!prov.set) return;
    ws_jw_key(w, "provenance");
    ws_jw_begin_object(w);
    ws_jw_kstring(w, "command", prov.command);
    ws_jw_key(w, "config");
    ws_jw_begin_object(w);
    ws_jw_kstring(w, "file", prov.config);
    ws_jw_kstring(w, "sha256", prov.config_sha);
    ws_jw_end_object(w);
    ws_jw_key(w, "traces");
    ws_jw_begin_object(w);
    ws_jw_kstring(w, "folder", prov.traces);
    ws_jw_key(w, "files");
    ws_jw_begin_object(w);
    for (size_t i = 0; i < prov.n_files; i++)
        ws_jw_kstring(w, prov.files[i].name, prov.files[i].sha);
    ws_jw_end_object(w);
    ws_jw_end_object(w);
    ws_jw_end_object(w);
}

