/*
 * What made a study's JSON outputs (summary.json, sweep.json): the command
 * that gives their results, the config's sha256 and each trace file's
 * sha256, recorded as their "provenance" member. The CLI sets it once,
 * before any simulation runs and before the writers run; it holds for the
 * rest of the process (forked --isolate children included).
 *
 * The command is the command line without the options that change no
 * result (--out, --threads, --isolate, --resume, --force, ...: manifest.tsv
 * keeps the line as typed), with the config by its real path, so that the
 * outputs stay the same bytes whatever those options, the folder the
 * command ran from or how the sweep was sharded, resumed or merged.
 */
#ifndef WATTSIM_PROVENANCE_H
#define WATTSIM_PROVENANCE_H

#include <stddef.h>
#include <stdio.h>

#include "wattsim/error.h"

/* Record `command`, the config file `config` (its real path and sha256)
 * and, in the trace folder `traces`, summary_train and summary_power_<gpu>
 * of each of the n_gpus GPUs (each file's name and sha256; the folder by
 * its real path). Replaces what was recorded. 0, or -1 with err naming the
 * file that cannot be read. */
int ws_provenance_set(const char *command, const char *config, const char *traces,
                      char *const *gpus, size_t n_gpus, ws_error *err);

/* Forget it (then ws_jw_provenance writes nothing). */
void ws_provenance_clear(void);

/* The member "provenance": {"command": ..., "config": {"file": ...,
 * "sha256": ...}, "traces": {"folder": ..., "files": {NAME: SHA256, ...}}}
 * of w's object, or nothing when none was recorded (the library's own
 * calls). */
struct ws_jw;
void ws_jw_provenance(struct ws_jw *w);

#endif
