/*
 * Output formats: tables for people, CSV and JSON for scripts. Field names
 * are a contract (docs/outputs.md): fields may be added, never
 * renamed. Numbers are printed with %.17g in CSV and JSON (they read back
 * exactly) and rounded in tables, and are always finite (see ws_req).
 * Output is a pure function of its inputs.
 */
#ifndef WATTSIM_REPORT_H
#define WATTSIM_REPORT_H

#include <stdio.h>
#include "wattsim/csv.h"
#include "wattsim/engine.h"
#include "wattsim/pareto.h"
#include "wattsim/plan.h"
#include "wattsim/study.h"
#include "wattsim/whatif.h"

typedef enum ws_format { WS_FMT_TABLE, WS_FMT_CSV, WS_FMT_JSON } ws_format;

/* "table" | "csv" | "json" -> format; -1 if unknown. */
int ws_format_parse(const char *s);

/*
 * Numbers. Every number written is finite. NAN is "undefined by design" (a
 * CI of one seed, a mean over no successful seed, a knob no run reaches):
 * an empty CSV field, JSON null, "-" in a table. An infinity is a bug
 * (every input is bounded so that none can arise): it is written as if
 * undefined and recorded (ws_output_bad_number, wattsim/error.h), which
 * stops the output file's commit and fails the command with status 70.
 * ws_req(x) marks a value that is always defined: a NAN there is a bug too.
 * beta = inf (early stopping off) is an input and written as such.
 */
double ws_req(double x);
/* JSON is written through the JSON writer (wattsim/json_writer.h). */
/* ws_csv_str (a CSV field, quoted only when needed) is in wattsim/csv.h. */
/* A number for CSV: %.17g, nothing when undefined. */
void ws_csv_num(FILE *f, double x);
/* n numbers separated by commas (ws_csv_num each; required: ws_req each). */
void ws_csv_nums(FILE *f, size_t n, const double *x, int required);
/* beta for CSV: "inf" when early stopping is off. */
void ws_csv_beta(FILE *f, double beta);
/* A number for a table: `fmt` (one double conversion) into buf, or "-"
 * when undefined. Returns buf. */
const char *ws_tab(char *buf, size_t size, const char *fmt, double x);
/* The member "whatif": "..." of w's object when there are what-ifs; else
 * nothing. */
struct ws_jw;
void ws_jw_whatif(struct ws_jw *w, const ws_whatif *wi);
/* The member "allow_plugins": [DIR, ...]: the folders --allow-plugins let
 * a config load plugins from (wattsim/plugin.h), when there are any; then
 * "allow_python": [PACKAGE, ...] likewise for --allow-python. */
void ws_jw_allowed(struct ws_jw *w);
/* The versions (wattsim/version.h): "wattsim 0.2.0 (policy ABI 2.1,
 * random streams 2)", and the JSON member `"wattsim": {"version":
 * "0.2.0", "policy_abi": "2.1", "random_streams": 2}` of w's object. */
const char *ws_version_line(void);
void ws_jw_version(struct ws_jw *w);
/* "what-if: ...\n" (a table's line) when there are what-ifs; else nothing. */
void ws_table_whatif(FILE *f, const ws_whatif *wi);

/* "MaxPower M W: G GPUs per job at L W" (or, when `summed`, a node of
 * mixed models, "..., the sum of each one's own largest limit"): which
 * MaxPower the cost column weighs time by. */
void ws_maxpower_line(FILE *f, double max_power, int gpus, int summed);
/* A policy's identity on one table line, as sweep.csv records it:
 * "bso zeus{rounds=2,window=0} built-in sha256 1a2b3c4d5e6f" (ROLE
 * NAME{resolved parameters} FILE, sha256 cut to 12 hex digits; the JSON
 * and CSV outputs carry all 64). FILE is "built-in" or the policy's file;
 * a word with a blank, quote, backslash or control character is written
 * in double quotes with C escapes. No sha256 part when sha256 is "". */
void ws_table_policy(FILE *f, const char *role, const char *name, const char *params,
                     const char *file, const char *sha256);
/* The same without ROLE and the newline ("zeus{rounds=2,window=0}
 * built-in sha256 1a2b3c4d5e6f"): a cell of sweep.md's identity table. */
void ws_table_policy_words(FILE *f, const char *name, const char *params, const char *file,
                           const char *sha256);
/* The members "bso_params", ..., "plo_file" of w's object: a pair's
 * identity, the keys of simulate's JSON, of summary.json's cells and of
 * plan's policies. */
void ws_jw_identity(struct ws_jw *w, const ws_policy_prov *pv);
/* Both policies of a pair, bso then plo (ws_study_pair: study.h). */
void ws_table_identity(FILE *f, const ws_study_pair *pair);

/* Every report takes the what-ifs `wi` (NULL = none). With none, output
 * is exactly as without what-ifs. With some, a line (table) or a `whatif`
 * field (JSON, CSV) describes them, and with a carbon or price series,
 * gCO2eq and $ appear next to energy (co2_g, usd). */

/* simulate: one cell with its history. */
void ws_report_simulate(FILE *f, ws_format fmt, const ws_cell_result *r,
                        const char *bso, const char *plo,
                        const ws_run_record *hist, size_t n, const ws_whatif *wi);
/* simulate --keep-history: the same, with the simulation's status. JSON
 * adds "status" ("ok" or "failed") and "error" (null, or the one-line
 * error), and when it failed "failed_recurrence" and "failed_try" (r->tot's
 * fail_recurrence, fail_attempt); a failed one's table ends with a line
 * "failed in recurrence R, try T: ERROR". error NULL: it succeeded. */
void ws_report_simulate_status(FILE *f, ws_format fmt, const ws_cell_result *r,
                               const char *bso, const char *plo,
                               const ws_run_record *hist, size_t n, const ws_whatif *wi,
                               const char *error);

/* pareto: the knob landscape of one job. */
void ws_report_pareto(FILE *f, ws_format fmt, const ws_job *job,
                      const ws_pareto *p, const ws_whatif *wi);

/* run: per-cell results (csv/json) or a per-group summary (table). */
/* prov may be NULL (then no provenance columns/keys). A cell of a run
 * (cell.policy set) gives its own pair's names and provenance; bso, plo
 * and prov's values are for cells without (ws_policy_prov: study.h).
 * Returns 0, or -1 out of memory (the table, before printing anything). */
int ws_report_cells(FILE *f, ws_format fmt, const ws_cell_result *r, size_t n,
                    const char *bso, const char *plo, const ws_whatif *wi,
                    const ws_policy_prov *prov);

/* run: the history CSV, header then one line per run. */
void ws_report_history_header(FILE *f, const ws_whatif *wi);
void ws_report_history_row(FILE *f, const ws_cell *c, const ws_run_record *r,
                           const ws_whatif *wi);
/* --keep-history: the history CSV with two more columns, status and error.
 * A run's row ends ",ok,"; a failed simulation's last row has its cell,
 * the recurrence and try it stopped in (t->fail_recurrence,
 * t->fail_attempt; 0, 0 before the first), empty run columns, "failed"
 * and the one-line error. */
void ws_report_history_header_status(FILE *f, const ws_whatif *wi);
void ws_report_history_row_status(FILE *f, const ws_cell *c, const ws_run_record *r,
                                  const ws_whatif *wi);
void ws_report_history_failed(FILE *f, const ws_cell *c, const ws_sim_totals *t,
                              const ws_whatif *wi, const char *error);

/* plan: recommendation, savings and break-even (wattsim/plan.h). */
void ws_report_plan(FILE *f, ws_format fmt, const ws_plan *p, const ws_whatif *wi);
/* plan: cumulative cost saving by recurrence, per policy (mean and 95 %
 * band) and for the recommended knob from the start, titled with the
 * job's display names in `cat` (NULL, or a name not in it: the name as
 * given); IMAGE's .csv and .gp beside it, rendered by ws_plot_render. */
int ws_plot_plan(const char *image, const ws_plan *p, const ws_catalogue *cat, ws_error *err);

/* Nonzero when wi changes anything (a transform, a series or an
 * objective). */
int ws_report_has_whatif(const ws_whatif *wi);

#endif
