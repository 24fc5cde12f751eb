/*
 * The text record of one sweep simulation and the sweep journal built from
 * it (see sweep_run.h). The same line travels over an isolated child's pipe
 * and into the journal, so there is one encoder and one parser. Doubles are
 * written with %a: exact, so a resumed or isolated result is bit-identical
 * to one computed in process.
 *
 * Journal file: a header line
 *     wattsim-journal 1 plan=<16 hex digits> sims=<N>
 * then one record line per finished simulation, in completion order,
 * flushed as it is written; a last line without '\n' (the process died
 * while writing it) is ignored.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_run.h"
#include "wattsim/outfile.h"

/* ------------------------------------------------------------ records */

int ws_sweep_record_write(FILE *f, const ws_sweep *s, size_t i)
{
    const ws_sweep_sim *m = &s->sims[i];
    if (m->failed) return fprintf(f, "%zu failed %s\n", i, m->error ? m->error : "");
    int rc = fprintf(f, "%zu ok %a %a %a %ld %ld %ld %d %d %ld", i, m->tot.energy_j,
                     m->tot.time_s, m->tot.cost, m->tot.runs, m->tot.recurrences,
                     m->tot.skipped, m->tot.final_bs, m->tot.final_pl, m->recurrences);
    const double *arr[3] = {m->rec_energy, m->rec_time, m->rec_cost};
    for (int a = 0; a < 3 && rc >= 0; a++)
        for (long r = 0; r < m->recurrences && rc >= 0; r++) rc = fprintf(f, " %a", arr[a][r]);
    if (rc >= 0) rc = fputc('\n', f) == EOF ? -1 : 0;
    return rc;
}

/* Next space-separated token; NULL at the end. */
static char *token(char **p)
{
    while (**p == ' ') (*p)++;
    if (!**p) return NULL;
    char *t = *p;
    while (**p && **p != ' ') (*p)++;
    if (**p) *(*p)++ = '\0';
    return t;
}

static int to_double(char **p, double *x)
{
    char *t = token(p), *end;
    if (!t) return -1;
    errno = 0;
    *x = strtod(t, &end);
    return *end || errno == ERANGE ? -1 : 0;
}

static int to_long(char **p, long *x)
{
    char *t = token(p), *end;
    if (!t) return -1;
    errno = 0;
    *x = strtol(t, &end, 10);
    return *end || errno ? -1 : 0;
}

int ws_sweep_record_parse(ws_sweep *s, char *line, int apply, size_t *idx, int *ok,
                          ws_error *err)
{
    char *p = line;
    long i;
    if (to_long(&p, &i) || i < 0 || (size_t)i >= s->n_sims)
        return ws_fail(err, "no simulation index of this plan at the start of the record");
    char *kind = token(&p);
    *idx = (size_t)i;
    if (kind && !strcmp(kind, "failed")) {
        while (*p == ' ') p++;
        *ok = 0;
        if (apply) ws_sweep_sim_fail(&s->sims[i], p);
        return 0;
    }
    if (!kind || strcmp(kind, "ok")) return ws_fail(err, "simulation %ld: neither 'ok' nor 'failed'", i);
    ws_sweep_sim *m = &s->sims[i];
    ws_sim_totals t = {0};
    long fbs, fpl, R;
    if (to_double(&p, &t.energy_j) || to_double(&p, &t.time_s) || to_double(&p, &t.cost)
        || to_long(&p, &t.runs) || to_long(&p, &t.recurrences) || to_long(&p, &t.skipped)
        || to_long(&p, &fbs) || to_long(&p, &fpl) || to_long(&p, &R))
        return ws_fail(err, "simulation %ld: bad or missing totals", i);
    if (R != m->recurrences)
        return ws_fail(err, "simulation %ld: %ld recurrences, the plan has %ld", i, R,
                       m->recurrences);
    t.final_bs = (int)fbs;
    t.final_pl = (int)fpl;
    double *arr[3] = {m->rec_energy, m->rec_time, m->rec_cost};
    /* Parse into the sim only when applying; otherwise into a scratch value. */
    for (int a = 0; a < 3; a++)
        for (long r = 0; r < R; r++) {
            double x;
            if (to_double(&p, &x))
                return ws_fail(err, "simulation %ld: %ld per-recurrence values, expected %ld", i,
                               a * R + r, 3 * R);
            if (apply) arr[a][r] = x;
        }
    if (token(&p)) return ws_fail(err, "simulation %ld: extra values after the record", i);
    *ok = 1;
    if (apply) {
        m->tot = t;
        m->failed = 0;
        free(m->error);
        m->error = NULL;
    }
    return 0;
}

/* ------------------------------------------------------------ fingerprint */

/* FNV-1a, 64 bits: the fingerprint only has to tell plans apart. */
typedef struct hasher { uint64_t h; } hasher;

static void hash_bytes(hasher *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h->h ^= b[i];
        h->h *= 1099511628211ULL;
    }
}

static void hash_str(hasher *h, const char *s)
{
    hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static void hash_params(hasher *h, const ws_policy_ref *ref, const char *name)
{
    if (!ref->name || strcmp(ref->name, name)) { hash_str(h, "-"); return; }
    for (size_t k = 0; k < ref->n_params; k++) {
        hash_str(h, ref->params[k].key);
        hash_str(h, ref->params[k].value);
    }
}

uint64_t ws_sweep_fingerprint(const ws_sweep *s, const ws_run_config *cfg)
{
    hasher h = {14695981039346656037ULL};
    hash_str(&h, "wattsim sweep plan 1");
    for (size_t p = 0; p < s->n_pairs; p++) {
        hash_str(&h, s->pairs[p].bso);
        hash_str(&h, s->pairs[p].plo);
        hash_str(&h, s->pairs[p].label);
        hash_params(&h, &cfg->bso, s->pairs[p].bso);
        hash_params(&h, &cfg->plo, s->pairs[p].plo);
    }
    for (size_t g = 0; g < s->n_gpus; g++) hash_str(&h, s->gpus[g]);
    for (size_t w = 0; w < s->n_work; w++) hash_str(&h, s->work[w]);
    hash_bytes(&h, s->etas, s->n_etas * sizeof *s->etas);
    hash_bytes(&h, s->betas, s->n_betas * sizeof *s->betas);
    hash_bytes(&h, s->seeds, s->n_seeds * sizeof *s->seeds);
    /* The numbers the simulations read: a changed trace changes the plan. */
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++) {
        const ws_job *job = &s->jobs[j].job;
        hash_bytes(&h, &job->max_power, sizeof job->max_power);
        hash_bytes(&h, &job->max_epochs, sizeof job->max_epochs);
        hash_bytes(&h, &job->b0, sizeof job->b0);
        hash_bytes(&h, &job->n_bs, sizeof job->n_bs);
        hash_bytes(&h, job->bs, (size_t)job->n_bs * sizeof *job->bs);
        hash_bytes(&h, job->knob_start, (size_t)(job->n_bs + 1) * sizeof *job->knob_start);
        size_t nk = (size_t)job->knob_start[job->n_bs];
        hash_bytes(&h, job->knob_pl, nk * sizeof *job->knob_pl);
        hash_bytes(&h, job->knob_time, nk * sizeof *job->knob_time);
        hash_bytes(&h, job->knob_power, nk * sizeof *job->knob_power);
        hash_bytes(&h, job->run_start, (size_t)(job->n_bs + 1) * sizeof *job->run_start);
        hash_bytes(&h, job->run_epoch,
                   (size_t)job->run_start[job->n_bs] * sizeof *job->run_epoch);
    }
    for (size_t i = 0; i < s->n_sims; i += s->n_seeds)
        hash_bytes(&h, &s->sims[i].recurrences, sizeof s->sims[i].recurrences);
    /* What-ifs: cap and stall are in the tables above; the series, start
     * and objective here (nothing is hashed without them). */
    const ws_whatif *wi = s->whatif;
    if (wi && (ws_whatif_accounts(wi) || wi->objective != WS_OBJ_ENERGY)) {
        const ws_series *ser[2] = {wi->has_carbon ? &wi->carbon : NULL,
                                   wi->has_price ? &wi->price : NULL};
        hash_str(&h, "whatif");
        for (int q = 0; q < 2; q++) {
            if (!ser[q]) { hash_str(&h, "-"); continue; }
            hash_bytes(&h, ser[q]->t0, ser[q]->n * sizeof *ser[q]->t0);
            hash_bytes(&h, ser[q]->value, ser[q]->n * sizeof *ser[q]->value);
            hash_bytes(&h, &ser[q]->end, sizeof ser[q]->end);
        }
        hash_bytes(&h, &wi->start, sizeof wi->start);
        hash_bytes(&h, &wi->objective, sizeof wi->objective);
    }
    return h.h;
}

/* ------------------------------------------------------------ journal */

static int header(FILE *f, uint64_t fp, const ws_sweep *s)
{
    return fprintf(f, "wattsim-journal 1 plan=%016" PRIx64 " sims=%zu\n", fp, s->n_sims);
}

/* Read an existing journal into s (successes only; failed simulations
 * run again, their state is reset by ws_sweep_run_sim); 1 when there is
 * none. */
static int load(const char *path, ws_sweep *s, uint64_t fp, unsigned char *todo,
                ws_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        return ws_fail(err, "%s: cannot read the journal: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long no = 0;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        no++;
        if (line[n - 1] != '\n') break;        /* cut short by a crash: ignore */
        line[n - 1] = '\0';
        if (no == 1) {
            uint64_t got;
            size_t sims;
            if (sscanf(line, "wattsim-journal 1 plan=%" SCNx64 " sims=%zu", &got, &sims) != 2) {
                rc = ws_fail(err, "%s:1: not a wattsim sweep journal", path);
                break;
            }
            if (got != fp || sims != s->n_sims) {
                rc = ws_fail(err, "%s:1: the journal is of another plan (fingerprint %016" PRIx64
                             ", %zu simulations; this sweep: %016" PRIx64 ", %zu): pass --force"
                             " without --resume to start over", path, got, sims, fp, s->n_sims);
                break;
            }
            continue;
        }
        size_t i;
        int ok;
        if (ws_sweep_record_parse(s, line, 1, &i, &ok, err)) {
            rc = ws_fail_prefix(err, "%s:%ld", path, no);
            break;
        }
        todo[i] = !ok;
    }
    if (!rc && no == 0) rc = ws_fail(err, "%s: the journal is empty", path);
    free(line);
    fclose(f);
    return rc;
}

int ws_journal_start(ws_journal *j, const char *path, ws_sweep *s, uint64_t fp, int resume,
                     unsigned char *todo, size_t *n_reused, ws_error *err)
{
    j->f = NULL;
    j->path = path;
    *n_reused = 0;
    if (resume) {
        int rc = load(path, s, fp, todo, err);
        if (rc < 0) return rc;
    }
    /* Rewrite it whole and atomically (a crash now keeps the old one), with
     * only what is reused, then append to it. */
    ws_outfile of = {0};
    if (ws_outfile_open(&of, path, err)) return -1;
    int bad = header(of.f, fp, s) < 0;
    for (size_t i = 0; !bad && i < s->n_sims; i++)
        if (!todo[i]) {
            bad = ws_sweep_record_write(of.f, s, i) < 0;
            ++*n_reused;
        }
    if (bad) {
        ws_outfile_abort(&of);
        return ws_fail(err, "%s: cannot write the journal: %s", path, strerror(errno));
    }
    if (ws_outfile_commit(&of, err)) return -1;
    j->f = fopen(path, "a");
    if (!j->f) return ws_fail(err, "%s: cannot append to the journal: %s", path, strerror(errno));
    return 0;
}

int ws_journal_add(ws_journal *j, const ws_sweep *s, size_t i)
{
    if (!j->f) return 0;
    /* fflush hands the line to the kernel: it survives this process dying. */
    return ws_sweep_record_write(j->f, s, i) < 0 || fflush(j->f) ? -1 : 0;
}

void ws_journal_close(ws_journal *j)
{
    if (j->f) fclose(j->f);
    j->f = NULL;
}
