/*
 * The options of `trace import power`, one definition for the CLI
 * (cli_trace.c) and the library API (trace-import-power, api_commands.c):
 * both collect the options as typed into a ws_power_args, and this file
 * judges them (ws_power_args_judge: each value, then which go together)
 * and runs the import they ask for (ws_power_args_import: read the log,
 * select its GPUs, then either Zeus's GlobalPowerLimitOptimizer profile,
 * whose windows are the knobs, or the epochs of EPOCHS.csv). Messages name
 * the option as typed; the caller prefixes its command and writes nothing
 * before the import succeeded.
 */
#include "wattsim/import.h"
#include "wattsim/name.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A positive finite number, else the message `what` naming s. */
static int pos_num(const char *opt, const char *what, const char *s, double *v,
                   ws_error *err)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || !isfinite(*v) || !(*v > 0))
        return ws_fail(err, "%s: expected %s, got '%s'", opt, what, s);
    return 0;
}

/* "0,1,2" -> the ids, in a malloc'd copy. */
static int split_ids(const char *list, ws_power_job *j, ws_error *err)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    if (!(j->ids_copy = strdup(list)) || !(j->ids = calloc(cap, sizeof *j->ids)))
        return ws_fail(err, "out of memory");
    char *save = NULL;
    for (char *t = strtok_r(j->ids_copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        j->ids[j->n_ids++] = t;
    if (!j->n_ids) return ws_fail(err, "--gpus: expected a list like 0,1, got '%s'", list);
    return 0;
}

/* --job DATASET/NETWORK/OPTIMIZER into j->plo, split in j->job_copy. */
static int split_job(const char *job, ws_power_job *j, ws_error *err)
{
    char why[64];
    if (!(j->job_copy = strdup(job))) return ws_fail(err, "out of memory");
    char *a = strchr(j->job_copy, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (!b || strchr(b + 1, '/'))
        return ws_fail(err, "--job: expected DATASET/NETWORK/OPTIMIZER, got '%s'", job);
    *a = *b = '\0';
    j->plo.dataset = j->job_copy;
    j->plo.network = a + 1;
    j->plo.optimizer = b + 1;
    if (ws_name_check(j->plo.dataset, why, sizeof why)
        || ws_label_check(j->plo.network, why, sizeof why)
        || ws_label_check(j->plo.optimizer, why, sizeof why))
        return ws_fail(err, "--job: '%s': the dataset must be a safe name (" WS_NAME_RULE
                       "), the network and optimizer labels", job);
    return 0;
}

/* Each value, as the options' order in the help. */
static int judge_values(const ws_power_args *a, ws_power_job *j, ws_error *err)
{
    ws_power_import *in = &j->in;
    if (a->log_tz && ws_parse_log_tz(a->log_tz, &in->tz_offset, &in->log_zone))
        return ws_fail(err, "--log-tz: expected an IANA zone such as America/New_York (it"
                       " follows summer time), or +HH:MM, -HH:MM or UTC, got '%s'", a->log_tz);
    if (a->epochs_tz) {
        if (ws_parse_tz(a->epochs_tz, &in->epochs_tz))
            return ws_fail(err, "--epochs-tz: expected +HH:MM or -HH:MM, got '%s'",
                           a->epochs_tz);
        in->epochs_tz_set = 1;
    }
    double v;
    if (a->batch_size) {
        if (pos_num("--batch-size", "a positive whole number", a->batch_size, &v, err))
            return -1;
        if (v != floor(v) || v > 1 << 30)
            return ws_fail(err, "--batch-size: expected a positive whole number, got '%s'",
                           a->batch_size);
        j->plo.bs = (int)v;
    }
    if ((a->steps_per_epoch && pos_num("--steps-per-epoch", "a positive number",
                                       a->steps_per_epoch, &j->plo.steps_per_epoch, err))
        || (a->profile_steps && pos_num("--profile-steps", "a positive number",
                                        a->profile_steps, &j->plo.profile_steps, err)))
        return -1;
    if (a->gpu_cycle) {
        char *end;
        long n = strtol(a->gpu_cycle, &end, 10);
        if (end == a->gpu_cycle || *end || n < 1 || n > 4096)
            return ws_fail(err, "--gpu-cycle: expected the number of GPUs (1 to 4096), got"
                           " '%s'", a->gpu_cycle);
        j->gpu_cycle = (int)n;
    }
    if (a->window && !*a->window) return ws_fail(err, "--window: expected a window name");
    in->window = a->window;
    if ((a->max_gap && pos_num("--max-gap", "a positive number", a->max_gap, &in->max_gap,
                               err))
        || (a->match_tolerance && pos_num("--match-tolerance", "positive seconds",
                                          a->match_tolerance, &in->match_tolerance, err)))
        return -1;
    return 0;
}

int ws_power_args_judge(const ws_power_args *a, ws_power_job *j, ws_error *err)
{
    memset(j, 0, sizeof *j);
    j->in.max_gap = WS_DEFAULT_MAX_GAP;
    j->in.match_tolerance = 1;
    j->plo.profile_steps = WS_PLO_PROFILE_STEPS;
    if (judge_values(a, j, err)) return -1;
    const int zeus = a->kind == WS_LOG_ZEUS, nvsmi = a->kind == WS_LOG_NVSMI;
    char why[64];
    if (!a->gpu) return ws_fail(err, "needs --gpu NAME");
    if (ws_name_check(a->gpu, why, sizeof why))      /* it names summary_power_NAME.csv */
        return ws_fail(err, "--gpu: '%s' is not a safe name (" WS_NAME_RULE ")", a->gpu);
    if (!a->epochs && !zeus) return ws_fail(err, "needs --epochs EPOCHS.csv");
    if ((j->plo.bs || j->plo.steps_per_epoch || a->job) && !zeus)
        return ws_fail(err, "--batch-size, --steps-per-epoch and --job: only for a"
                       " GlobalPowerLimitOptimizer profile (--zeus-monitor)");
    if (a->epochs && (j->plo.bs || a->job))
        return ws_fail(err, "--batch-size and --job name what --epochs already says: give"
                       " one or the other");
    if (a->job && split_job(a->job, j, err)) return -1;
    if (!a->log) return ws_fail(err, "needs --nvidia-smi LOG, --dcgm FILE or --zeus-monitor LOG");
    if (a->log_tz && !nvsmi)
        return ws_fail(err, "--log-tz: DCGM and ZeusMonitor logs are in Unix time (UTC) and"
                       " need no zone; for EPOCHS.csv times written without a zone, pass"
                       " --epochs-tz +HH:MM");
    if (a->columns && !nvsmi)
        return ws_fail(err, "--columns: only nvidia-smi logs (--nvidia-smi) are written"
                       " without a header");
    if (j->gpu_cycle && !nvsmi)
        return ws_fail(err, "--gpu-cycle: only nvidia-smi logs (--nvidia-smi) are written"
                       " without a GPU column");
    if (a->window && !zeus)
        return ws_fail(err, "--window: only ZeusMonitor logs (--zeus-monitor) have named"
                       " windows");
    if (a->gpus && split_ids(a->gpus, j, err)) return -1;
    j->in.log_has_clock = nvsmi && !j->in.log_zone;     /* a zone makes it UTC */
    return 0;
}

int ws_power_args_import(const ws_power_args *a, ws_power_job *j, const ws_csv_limits *lim,
                         ws_warnings *w, ws_error *err)
{
    ws_power_import *in = &j->in;
    ws_telemetry *tel = &j->tel;
    in->epochs_path = a->epochs;
    in->tel = tel;
    in->lim = lim;
    const ws_nvsmi_opts nv = {a->columns, in->log_zone, j->gpu_cycle};
    int r = a->kind == WS_LOG_NVSMI ? ws_import_nvsmi_opts(a->log, lim, &nv, tel, w, err)
          : a->kind == WS_LOG_DCGM ? ws_import_dcgm(a->log, lim->max_bytes ? lim->max_bytes
                                                    : WS_CSV_MAX_BYTES_DEFAULT, tel, w, err)
          : ws_import_zeusmon(a->log, lim, tel, w, err);
    if (r) return -1;
    if (tel->utc && a->log_tz)
        return ws_fail(err, "--log-tz: %s is zeus_monitor's power log, whose times are UTC:"
                       " it needs no zone (for EPOCHS.csv times written without one, pass"
                       " --epochs-tz)", a->log);
    if (tel->utc) in->log_has_clock = 0;
    if (ws_telemetry_select(tel, j->ids, j->n_ids, "--gpus", err)
        || ws_telemetry_prepare(tel, w, err))
        return -1;
    /* Zeus's GlobalPowerLimitOptimizer profile: its windows are the knobs. */
    j->is_plo = a->kind == WS_LOG_ZEUS && tel->kind == WS_TEL_WINDOWS && !in->window
                && ws_plo_detect(tel);
    if (!j->is_plo && !a->epochs) {
        ws_fail(err, "needs --epochs EPOCHS.csv (only a GlobalPowerLimitOptimizer profile,"
                " windows named " WS_PLO_WINDOW "<W>, can do without)");
        return 1;
    }
    if (!j->is_plo && (j->plo.bs || j->plo.steps_per_epoch || a->job)) {
        ws_fail(err, "--batch-size, --steps-per-epoch and --job: %s has no"
                " GlobalPowerLimitOptimizer profile (windows named " WS_PLO_WINDOW "<W>)",
                a->log);
        return 1;
    }
    if (j->is_plo && !a->epochs && !(j->plo.bs && a->job)) {
        ws_fail(err, "%s is a GlobalPowerLimitOptimizer profile: say what it measured, with"
                " --epochs EPOCHS.csv of the run, or --job D/N/O, --batch-size B and"
                " --steps-per-epoch S", a->log);
        return 1;
    }
    j->plo.tel = tel;
    j->plo.epochs = a->epochs ? in : NULL;
    return j->is_plo ? ws_import_plo(&j->plo, &j->table, w, err)
                     : ws_import_power(in, &j->table, w, err);
}

void ws_power_job_free(ws_power_job *j)
{
    if (!j) return;
    ws_power_table_free(&j->table);
    ws_telemetry_free(&j->tel);
    free(j->ids);
    free(j->ids_copy);
    free(j->job_copy);
    memset(j, 0, sizeof *j);
}
