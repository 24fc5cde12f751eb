/*
 * Group traces and their replay; see wattsim/group.h.
 *
 * The replay reproduces Simulator.simulate_one_alibaba_group of the
 * published Zeus simulator (zeus._legacy.simulate):
 *  - Arrivals are the trace's rows, in start order. At an arrival at time
 *    t, every in-flight submission with end <= t completes, in (end,
 *    submission order) order: the BSO observes its unscaled cost and
 *    whether it reached; one that reached lowers min_cost to its own cost
 *    (not the sum of its chain, unlike the sequential engine) and makes its
 *    batch size the best known; one that failed is resubmitted at its end
 *    with the same wall duration. The retry may end before t itself, so
 *    completion goes on from the earliest end again.
 *  - A submission (arrival or retry) started while others are in flight
 *    uses the best known batch size and the PLO's power limit for it;
 *    otherwise bso.predict, plo.predict and JIT profiling, as in the
 *    sequential engine. Its outcome (one random draw, the epoch budget from
 *    beta * min_cost at that moment) is computed when it starts.
 *  - A submission whose budget is 0 never ran: its energy, time and cost
 *    are 0, the BSO observes cost 0 and reached = 0 (zeus_cost(0, 0) in the
 *    Python, where the sequential engine reports 100 * beta * min_cost), it
 *    is not recorded, and it is retried like any failure.
 *  - History energy and time are scaled by the row's runtime_ratio.
 *  - After the last arrival, everything in flight completes (t = inf).
 *  - With an environment (ws_group_env, not in the Python): the policies'
 *    carbon intensity and price are the series' rates at the start of the
 *    submission they choose for or learn from; a run's grams and dollars
 *    are ws_whatif_run of its scaled energy and duration from its start.
 * Two differences, both where the Python would not give an answer: a
 * concurrent submission whose best-known size has no power limit yet is
 * profiled just in time (the Python asserts), and a chain of WS_MAX_TRIES
 * submissions that never reaches is an error (the Python loops forever).
 *
 * In-flight submissions sit in a binary min-heap keyed on (end, sequence
 * number): ties end in submission order, as Python's stable sort of its
 * append-ordered list does. At most one submission per trace row is in
 * flight, so the pool and the heap are sized once and the event loop does
 * not allocate.
 */
#include "wattsim/group.h"
#include "wattsim/rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "run.h"

/* ------------------------------------------------------------ parsing */

enum { C_GROUP, C_START, C_END, C_DATASET, C_RATIO, C_N };
static const char *const COLS[C_N] = {"group", "start_time", "end_time",
                                      "dataset", "runtime_ratio"};

typedef struct raw_row {
    char *group;
    const ws_workload_spec *spec;
    ws_group_row r;
} raw_row;

static int num_field(ws_csv *c, const char *s, const char *col, double *out,
                     ws_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0')
        return ws_fail(err, "%s:%ld: %s '%s' is not a number", ws_csv_path(c),
                       ws_csv_line(c), col, s);
    if (!isfinite(x))
        return ws_fail(err, "%s:%ld: %s '%s' is not a finite number",
                       ws_csv_path(c), ws_csv_line(c), col, s);
    /* A plain decimal as pandas reads it (the paper's script reads group
     * files with pd.read_csv); its value can be one unit in the last place
     * from strtod's, so it is checked for finiteness again. */
    if (ws_csv_is_decimal(s) && !isfinite(x = ws_pd_strtod(s)))
        return ws_fail(err, "%s:%ld: %s '%s' is not a finite number",
                       ws_csv_path(c), ws_csv_line(c), col, s);
    *out = x;
    return 0;
}

/* The catalogue entry for a dataset: the entry of that name, else the
 * first whose dataset column matches. */
static const ws_workload_spec *find_dataset(const ws_catalogue *cat,
                                            const char *ds)
{
    const ws_workload_spec *w = ws_catalogue_find(cat, ds);
    if (w) return w;
    for (size_t i = 0; i < cat->n; i++)
        if (!strcmp(cat->items[i].dataset, ds)) return &cat->items[i];
    return NULL;
}

static int cmp_raw(const void *a, const void *b)
{
    const raw_row *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (c) return c;
    return (x->r.line > y->r.line) - (x->r.line < y->r.line);
}

static int read_header(ws_csv *c, int col[C_N], ws_error *err)
{
    int rc = ws_csv_next(c, err);
    if (rc < 0) return -1;
    if (rc == 0)
        return ws_fail(err, "%s:1: empty file; expected the header %s,%s,%s,%s,%s",
                       ws_csv_path(c), COLS[0], COLS[1], COLS[2], COLS[3], COLS[4]);
    for (int j = 0; j < C_N; j++) col[j] = -1;
    for (size_t i = 0; i < ws_csv_nfields(c); i++) {
        const char *h = ws_csv_field(c, i);
        int j = 0;
        while (j < C_N && strcmp(h, COLS[j])) j++;
        if (j == C_N)
            return ws_fail(err, "%s:%ld: unknown column '%s' (a group trace has"
                           " group,start_time,end_time,dataset,runtime_ratio)",
                           ws_csv_path(c), ws_csv_line(c), h);
        if (col[j] >= 0)
            return ws_fail(err, "%s:%ld: duplicate column '%s'", ws_csv_path(c),
                           ws_csv_line(c), h);
        col[j] = (int)i;
    }
    for (int j = 0; j < C_N; j++)
        if (col[j] < 0)
            return ws_fail(err, "%s:%ld: missing column '%s' (a group trace has"
                           " group,start_time,end_time,dataset,runtime_ratio)",
                           ws_csv_path(c), ws_csv_line(c), COLS[j]);
    return 0;
}

static int read_row(ws_csv *c, const int col[C_N], const ws_catalogue *cat,
                    raw_row *row, ws_error *err)
{
    const char *path = ws_csv_path(c);
    const long line = ws_csv_line(c);
    if (ws_csv_nfields(c) != C_N)
        return ws_fail(err, "%s:%ld: %zu fields, expected %d", path, line,
                       ws_csv_nfields(c), C_N);
    const char *g = ws_csv_field(c, (size_t)col[C_GROUP]);
    if (!*g) return ws_fail(err, "%s:%ld: empty group name", path, line);
    ws_group_row r = {.line = line};
    if (num_field(c, ws_csv_field(c, (size_t)col[C_START]), "start_time", &r.start, err)
        || num_field(c, ws_csv_field(c, (size_t)col[C_END]), "end_time", &r.end, err)
        || num_field(c, ws_csv_field(c, (size_t)col[C_RATIO]), "runtime_ratio", &r.ratio,
                     err))
        return -1;
    if (r.end < r.start)
        return ws_fail(err, "%s:%ld: end_time %.17g is before start_time %.17g",
                       path, line, r.end, r.start);
    if (!(r.ratio > 0))
        return ws_fail(err, "%s:%ld: runtime_ratio %.17g must be > 0", path, line,
                       r.ratio);
    if (r.ratio > WS_GROUP_MAX_RATIO)
        return ws_fail(err, "%s:%ld: runtime_ratio %.17g must be at most 1e6 (bounded so"
                       " that energies and costs stay finite)", path, line, r.ratio);
    if (fabs(r.start) > WS_GROUP_MAX_TIME || fabs(r.end) > WS_GROUP_MAX_TIME)
        return ws_fail(err, "%s:%ld: start_time and end_time must be within +-1e15 s,"
                       " got %.17g and %.17g", path, line, r.start, r.end);
    const char *ds = ws_csv_field(c, (size_t)col[C_DATASET]);
    const ws_workload_spec *spec = find_dataset(cat, ds);
    if (!spec) {
        char list[512] = "";
        for (size_t i = 0; i < cat->n; i++) {
            strncat(list, cat->items[i].name, sizeof list - strlen(list) - 1);
            if (i + 1 < cat->n) strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        return ws_fail(err, "%s:%ld: unknown dataset '%s' (the catalogue has: %s)",
                       path, line, ds, list);
    }
    row->group = strdup(g);
    if (!row->group) return ws_fail(err, "out of memory");
    row->spec = spec;
    row->r = r;
    return 0;
}

/* Checks that need a whole group; reports the earliest offending line. */
static int check_groups(const char *path, const ws_group_trace *t,
                        const raw_row *raw, ws_error *err)
{
    long bad = 0;
    ws_error first = {{0}};
    size_t k = 0;
    for (size_t gi = 0; gi < t->n; gi++) {
        const ws_group *g = &t->groups[gi];
        for (size_t j = 1; j < g->n; j++, k++) {
            const raw_row *a = &raw[k], *b = &raw[k + 1];
            long line = b->r.line;
            if (bad && line >= bad) continue;
            if (b->spec != a->spec) {
                bad = line;
                ws_fail(&first, "%s:%ld: group '%s' has dataset '%s' here but '%s'"
                        " at line %ld; a group is one job", path, line, g->name,
                        b->spec->name, a->spec->name, a->r.line);
            } else if (b->r.start < a->r.start) {
                bad = line;
                ws_fail(&first, "%s:%ld: group '%s' starts at %.17g, before its"
                        " previous row (line %ld, start %.17g); rows of a group must"
                        " be in start order", path, line, g->name, b->r.start,
                        a->r.line, a->r.start);
            }
        }
        k++;
    }
    if (!bad) return 0;
    if (err) *err = first;
    return -1;
}

int ws_group_trace_load(const char *path, const ws_catalogue *cat,
                        const ws_csv_limits *lim, ws_group_trace *out,
                        ws_error *err)
{
    memset(out, 0, sizeof *out);
    raw_row *raw = NULL;
    size_t n = 0, cap = 0;
    int rc = -1, col[C_N];
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    if (!(out->path = strdup(path))) { ws_fail(err, "out of memory"); goto out; }
    if (read_header(c, col, err)) goto out;
    const long header_line = ws_csv_line(c);
    for (;;) {
        int r = ws_csv_next(c, err);
        if (r < 0) goto out;
        if (r == 0) break;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            raw_row *q = realloc(raw, nc * sizeof *q);
            if (!q) { ws_fail(err, "out of memory"); goto out; }
            raw = q;
            cap = nc;
        }
        if (read_row(c, col, cat, &raw[n], err)) goto out;
        n++;
    }
    if (n == 0) {
        ws_fail(err, "%s:%ld: no rows after the header", path, header_line);
        goto out;
    }
    /* Group as pandas' groupby does: by name, rows in file order. */
    qsort(raw, n, sizeof *raw, cmp_raw);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(raw[i].group, raw[i - 1].group)) ng++;
    out->groups = calloc(ng, sizeof *out->groups);
    if (!out->groups) { ws_fail(err, "out of memory"); goto out; }
    for (size_t i = 0, gi = 0; i < n; gi++) {
        size_t j = i;
        while (j < n && !strcmp(raw[j].group, raw[i].group)) j++;
        ws_group *g = &out->groups[gi];
        out->n = gi + 1;
        g->rows = malloc((j - i) * sizeof *g->rows);
        if (!g->rows) { ws_fail(err, "out of memory"); goto out; }
        g->name = raw[i].group;
        raw[i].group = NULL;               /* moved; the others are freed */
        g->spec = raw[i].spec;
        g->n = j - i;
        for (size_t q = i; q < j; q++) g->rows[q - i] = raw[q].r;
        i = j;
    }
    out->n_rows = n;
    /* check_groups reads group names from the groups, rows from raw. */
    if (check_groups(path, out, raw, err)) goto out;
    rc = 0;
out:
    for (size_t i = 0; i < n; i++) free(raw[i].group);
    free(raw);
    ws_csv_close(c);
    if (rc) ws_group_trace_free(out);
    return rc;
}

void ws_group_trace_free(ws_group_trace *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->groups[i].name);
        free(t->groups[i].rows);
    }
    free(t->groups);
    free(t->path);
    memset(t, 0, sizeof *t);
}

double ws_group_trace_t0(const ws_group_trace *t)
{
    double t0 = INFINITY;
    for (size_t i = 0; i < t->n; i++)
        if (t->groups[i].n && t->groups[i].rows[0].start < t0) t0 = t->groups[i].rows[0].start;
    return isinf(t0) ? 0.0 : t0;
}

unsigned long ws_group_seed(const char *name)
{
    return (unsigned long)adler32(adler32(0L, Z_NULL, 0), (const Bytef *)name,
                                  (uInt)strlen(name));
}

/* ------------------------------------------------------------ replay */

typedef struct sub {
    double start, end, ratio;
    long seq;                  /* submission order: heap tie-break */
    long row;                  /* 1-based trace row that began the chain */
    int attempt;
    int concurrent;
    ws_outcome o;
} sub;

typedef struct replay {
    const ws_job *job;
    ws_bso *bso;
    ws_plo *plo;
    ws_rng rng;                /* np.random.default_rng(seed) */
    sub *pool;
    int *free_slots, n_free;
    int *heap, n_heap;         /* slot indices, min-heap on (end, seq) */
    long seq;
    double min_cost;
    int best_i;                /* best known batch-size index */
    ws_group_sink sink;
    void *ctx;
    const ws_whatif *wi;       /* NULL: no environment */
    double t0;                 /* trace time of wi->start */
    ws_group_totals tot;
    ws_ctx pctx;               /* the policies' call context */
} replay;

static int sub_less(const replay *s, int a, int b)
{
    const sub *x = &s->pool[a], *y = &s->pool[b];
    if (x->end != y->end) return x->end < y->end;
    return x->seq < y->seq;
}

static void heap_push(replay *s, int slot)
{
    int p = s->n_heap++;
    while (p > 0) {
        int up = (p - 1) / 2;
        if (!sub_less(s, slot, s->heap[up])) break;
        s->heap[p] = s->heap[up];
        p = up;
    }
    s->heap[p] = slot;
}

static int heap_pop(replay *s)
{
    int top = s->heap[0], last = s->heap[--s->n_heap], p = 0;
    for (;;) {
        int c = 2 * p + 1;
        if (c >= s->n_heap) break;
        if (c + 1 < s->n_heap && sub_less(s, s->heap[c + 1], s->heap[c])) c++;
        if (!sub_less(s, s->heap[c], last)) break;
        s->heap[p] = s->heap[c];
        p = c;
    }
    if (s->n_heap > 0) s->heap[p] = last;
    return top;
}

/* The policies' carbon intensity and price at trace time t (NAN without
 * a series). */
static void env_at(replay *s, double t)
{
    if (s->wi) ws_whatif_rates(s->wi, s->wi->start + (t - s->t0), &s->pctx.carbon_intensity,
                               &s->pctx.price);
}

/* Start a submission over [start, end]: choose its knobs and compute what
 * it will do. */
static int submit(replay *s, double start, double end, double ratio, long row,
                  int attempt, ws_error *err)
{
    const ws_job *job = s->job;
    int i, k, profiled;
    const int concurrent = s->n_heap > 0;
    s->pctx.recurrence = row;
    s->pctx.attempt = attempt;
    ws_ctx_clear_run(&s->pctx);
    env_at(s, start);
    if (concurrent) {
        i = s->best_i;
    } else if (ws_bso_predict(s->bso, job, &s->pctx, &i, err)) {
        return -1;
    }
    if (ws_run_power_limit(job, s->plo, &s->pctx, i, &k, &profiled, err)) return -1;
    int slot = s->free_slots[--s->n_free];
    sub *u = &s->pool[slot];
    *u = (sub){start, end, ratio, s->seq++, row, attempt, concurrent, {0}};
    ws_run_outcome(job, &s->rng, i, k, profiled, s->min_cost, &u->o);
    heap_push(s, slot);
    s->tot.submissions++;
    s->tot.concurrent += concurrent;
    return 0;
}

/* Complete the earliest-ending in-flight submission. */
static int complete(replay *s, ws_error *err)
{
    const ws_job *job = s->job;
    const int slot = heap_pop(s);
    const sub u = s->pool[slot];
    s->free_slots[s->n_free++] = slot;
    const ws_outcome *o = &u.o;
    s->pctx.recurrence = u.row;
    s->pctx.attempt = u.attempt;
    ws_run_ctx(&s->pctx, job, o);
    env_at(s, u.start);
    if (ws_bso_observe(s->bso, job, &s->pctx, o->bs, o->cost, o->reached, err)) return -1;
    if (o->ran) {
        if (ws_plo_observe_run(s->plo, job, &s->pctx, o->bs, o->pl, o->cost, o->reached, err))
            return -1;
        const double E = o->energy_j * u.ratio, T = o->time_s * u.ratio;
        const double cost = job->eta * E + (1.0 - job->eta) * job->max_power * T;
        s->tot.energy_j += E;
        s->tot.time_s += T;
        s->tot.cost += cost;
        s->tot.runs++;
        double co2 = 0, usd = 0, start_s = 0, objective_cost = cost;
        int wrapped = 0;
        if (s->wi) {
            /* objective_cost is the energy cost: the objective is energy */
            start_s = u.start - s->t0;
            ws_whatif_run(s->wi, s->wi->start + start_s, E, T, job->eta, job->max_power,
                          &co2, &usd, &objective_cost, &wrapped);
            s->tot.co2_g += co2;
            s->tot.usd += usd;
            s->tot.wrapped += wrapped;
        }
        if (s->sink) {
            ws_group_record r = {{u.row, u.attempt, o->bs, o->pl, E, T, cost,
                                  o->epochs, o->reached, o->profiled, co2, usd, start_s,
                                  wrapped},
                                 u.start, u.end, u.ratio, u.concurrent};
            if (s->sink(s->ctx, &r)) return -1;
        }
    } else {
        s->tot.skipped++;
    }
    if (o->reached) {
        if (s->min_cost > o->cost) {
            s->min_cost = o->cost;
            s->best_i = o->i;
        }
        s->tot.final_bs = o->bs;
        s->tot.final_pl = o->pl;
        return 0;
    }
    if (u.attempt >= WS_MAX_TRIES)
        return ws_fail(err, "%s on %s: the submission of trace row %ld did not"
                       " reach the target metric in %d tries", job->workload,
                       job->gpu, u.row, WS_MAX_TRIES);
    s->tot.retries++;
    /* Same wall duration, starting when the failed one ended. */
    return submit(s, u.end, u.end + (u.end - u.start), u.ratio, u.row,
                  u.attempt + 1, err);
}

int ws_group_simulate(const ws_job *job, ws_bso *bso, ws_plo *plo,
                      const ws_group *g, unsigned long seed, const ws_group_env *env,
                      ws_group_sink sink, void *ctx, ws_group_totals *out,
                      ws_error *err)
{
    ws_job cj = *job;
    cj.concurrent = 1;
    const ws_whatif *wi = env && ws_whatif_active(env->wi) ? env->wi : NULL;
    replay s = {.job = &cj, .bso = bso, .plo = plo, .min_cost = INFINITY,
                .best_i = ws_job_bs_index(job, job->b0), .sink = sink, .ctx = ctx,
                .wi = wi, .t0 = env ? env->t0 : 0.0};
    s.tot.final_bs = s.tot.final_pl = -1;
    int rc = -1;
    const size_t n = g->n ? g->n : 1;
    ws_rng_seed(&s.rng, seed);
    s.pool = malloc(n * sizeof *s.pool);
    s.free_slots = malloc(n * sizeof *s.free_slots);
    s.heap = malloc(n * sizeof *s.heap);
    if (!s.pool || !s.free_slots || !s.heap) {
        ws_fail(err, "out of memory");
        goto out;
    }
    if (s.best_i < 0) {
        ws_fail(err, "%s on %s: b0 %d is not a batch size of the job", job->workload,
                job->gpu, job->b0);
        goto out;
    }
    if (wi && wi->objective != WS_OBJ_ENERGY) {
        ws_fail(err, "group replay weighs energy only: objective %s is not supported",
                wi->objective == WS_OBJ_CARBON ? "carbon" : "price");
        goto out;
    }
    if (wi && (wi->every > 0 || wi->defer > 0)) {
        ws_fail(err, "group replay follows the trace's submission times: %s does not apply",
                wi->every > 0 ? "--every" : "--defer-up-to");
        goto out;
    }
    /* Slots handed out lowest first (popped from the end). */
    for (size_t i = 0; i < n; i++) s.free_slots[i] = (int)(n - 1 - i);
    s.n_free = (int)n;

    ws_ctx_init(&s.pctx, (long)g->n);
    if (ws_bso_register(bso, &cj, &s.pctx, err) || ws_plo_register(plo, &cj, &s.pctx, err))
        goto out;
    for (size_t r = 0; r < g->n; r++) {
        const ws_group_row *row = &g->rows[r];
        while (s.n_heap > 0 && s.pool[s.heap[0]].end <= row->start)
            if (complete(&s, err)) goto out;
        if (submit(&s, row->start, row->end, row->ratio, (long)r + 1, 1, err)) goto out;
    }
    while (s.n_heap > 0)
        if (complete(&s, err)) goto out;
    rc = 0;
out:
    free(s.pool);
    free(s.free_slots);
    free(s.heap);
    if (out) *out = s.tot;
    return rc;
}

/* ------------------------------------------------------------ synth */

int ws_group_synth(FILE *f, const ws_group_synth_params *p, long *overlapping,
                   ws_error *err)
{
    if (p->groups < 1 || p->jobs_per_group < 1 || !(p->overlap >= 0 && p->overlap <= 1)
        || !(p->ratio_sigma >= 0) || !(p->mean_gap_s > 0) || p->n_datasets < 1)
        return ws_fail(err, "group synth: invalid parameters");
    ws_rng rng;
    const double sigma = p->ratio_sigma, mean_ms = p->mean_gap_s * 1000.0;
    long n_overlap = 0;
    fputs("group,start_time,end_time,dataset,runtime_ratio\n", f);
    for (long g = 0; g < p->groups; g++) {
        ws_rng_seed_spawn(&rng, p->seed, 16u + (uint32_t)g);
        const char *ds = p->datasets[(size_t)g % p->n_datasets];
        /* Times in whole milliseconds: exact in the file and when compared. */
        long long next = llround(mean_ms * ws_rng_standard_exponential_inv(&rng));
        for (long j = 0; j < p->jobs_per_group; j++) {
            const long long start = next;
            /* Every submission draws the same four numbers, whatever the
             * branch, so one choice never shifts the others' draws. */
            const long long gap = llround(mean_ms * ws_rng_standard_exponential_inv(&rng));
            const int ov = ws_rng_random(&rng) < p->overlap;
            const double u = ws_rng_random(&rng);
            double ratio = ws_rng_lognormal(&rng, -0.5 * sigma * sigma, sigma);
            next = start + gap;
            long long end;
            if (ov) {
                end = start + llround((double)gap * (1.1 + 0.9 * u));
                if (end <= next) end = next + 1;   /* strictly after: overlaps */
            } else {
                end = start + llround((double)gap * (0.1 + 0.8 * u));
                if (end > next) end = next;
            }
            if (j + 1 < p->jobs_per_group) n_overlap += end > next;
            if (ratio < 1e-6) ratio = 1e-6;        /* stays > 0 when printed */
            fprintf(f, "synth-%04ld,%lld.%03lld,%lld.%03lld,%s,%.6f\n", g + 1,
                    start / 1000, start % 1000, end / 1000, end % 1000, ds, ratio);
        }
    }
    if (overlapping) *overlapping = n_overlap;
    return 0;
}
