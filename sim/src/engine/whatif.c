/* What-if transforms and per-run accounting; see wattsim/whatif.h. */
#include "wattsim/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ws_whatif_free(ws_whatif *w)
{
    if (!w) return;
    if (w->has_carbon) ws_series_free(&w->carbon);
    if (w->has_price) ws_series_free(&w->price);
    free(w->tariff);
    for (size_t i = 0; i < w->n_carbon_files; i++) free(w->carbon_files[i]);
    free(w->carbon_files);
    memset(w, 0, sizeof *w);
}

int ws_whatif_active(const ws_whatif *w)
{
    return w && (ws_whatif_transforms(w) || w->has_carbon || w->has_price
                 || w->objective != WS_OBJ_ENERGY || w->every > 0 || w->defer > 0);
}

int ws_whatif_price_constant(const ws_whatif *w)
{
    return w && w->has_price && w->price.n == 1 && !strcmp(w->price.path, "constant");
}

int ws_whatif_transforms(const ws_whatif *w)
{
    return w && (w->power_cap > 0 || w->job_power_cap > 0 || w->input_stall > 0
                 || w->input_rate > 0);
}

int ws_whatif_accounts(const ws_whatif *w)
{
    return w && (w->has_carbon || w->has_price);
}

/* start must fall within series s (its first period). */
static int check_start(const ws_whatif *w, const ws_series *s, const char *where,
                       ws_error *err)
{
    if (w->start >= s->start && w->start < s->end) return 0;
    char a[32], b[32], t[32];
    ws_format_time(s->start, a, sizeof a);
    ws_format_time(s->end, b, sizeof b);
    ws_format_time(w->start, t, sizeof t);
    return ws_fail(err, "%s: start %s is outside the series %s (%s to %s)",
                   where ? where : "start", t, s->path, a, b);
}

int ws_whatif_load(ws_whatif *w, const ws_whatif_spec *spec,
                   const ws_csv_limits *lim, ws_error *err)
{
    memset(w, 0, sizeof *w);
    if (ws_whatif_spec_validate(spec, err)) return -1;
    w->where_cap = spec->where[WS_WI_POWER_CAP];
    if (spec->where[WS_WI_POWER_CAP]) w->power_cap = spec->power_cap;
    w->where_job_cap = spec->where[WS_WI_JOB_POWER_CAP];
    if (spec->where[WS_WI_JOB_POWER_CAP]) w->job_power_cap = spec->job_power_cap;
    if (spec->where[WS_WI_INPUT_STALL]) {
        w->input_stall = spec->input_stall;
        w->idle_power = spec->idle_power;
    }
    if (spec->where[WS_WI_INPUT_RATE]) {
        w->input_rate = spec->input_rate;
        w->samples_per_epoch = spec->samples_per_epoch;
        w->idle_power = spec->idle_power;
    }
    if (spec->carbon) {
        /* one file, or several joined in time order */
        const size_t n = 1 + spec->n_carbon_more;
        ws_series *parts = calloc(n, sizeof *parts);
        if (!parts) {
            ws_fail(err, "out of memory");
            goto fail;
        }
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++)
            rc = ws_series_load_basis(&parts[i], i ? spec->carbon_more[i - 1] : spec->carbon,
                                      WS_SERIES_CARBON, (ws_carbon_basis)spec->carbon_basis,
                                      lim, err);
        if (rc) {
            for (size_t i = 0; i < n; i++) ws_series_free(&parts[i]);
            free(parts);
            goto fail;
        }
        rc = ws_series_join(&w->carbon, parts, n, spec->where[WS_WI_CARBON], err);
        free(parts);
        if (rc) goto fail;
        w->has_carbon = 1;
        w->carbon_basis = spec->carbon_basis;
        if (n > 1) {
            if (!(w->carbon_files = calloc(n, sizeof *w->carbon_files))) {
                ws_fail(err, "out of memory");
                goto fail;
            }
            for (size_t i = 0; i < n; i++, w->n_carbon_files = i)
                if (!(w->carbon_files[i] = strdup(i ? spec->carbon_more[i - 1] : spec->carbon))) {
                    ws_fail(err, "out of memory");
                    goto fail;
                }
        }
    }
    /* The start first: an OpenEI tariff is laid out from it. */
    if (spec->start && ws_parse_time(spec->start, &w->start)) {
        ws_fail(err, "%s: start '%s' is not an ISO 8601 time", spec->where[WS_WI_START],
                spec->start);
        goto fail;
    }
    int tariff = 0;
    if (spec->price) {
        int rc;
        if (!isnan(spec->price_value)) {
            rc = ws_series_constant(&w->price, spec->price_value, err);
        } else {
            const int json = ws_series_is_json(spec->price, err);
            ws_tariff tf = {spec->start ? w->start : w->has_carbon ? w->carbon.start : NAN,
                            spec->price_tz, spec->price_label, spec->price_adjustments,
                            WS_BASIS_LIFECYCLE};
            tariff = json == 1;
            w->price_adjustments = spec->price_adjustments;
            if (tariff && !(w->tariff = calloc(1, sizeof *w->tariff))) {
                ws_fail(err, "out of memory");
                goto fail;
            }
            rc = json < 0 ? -1
               : json ? ws_series_load_tariff(&w->price, spec->price, &tf, w->tariff, lim, err)
               : ws_series_load(&w->price, spec->price, WS_SERIES_PRICE, lim, err);
        }
        if (rc) goto fail;
        w->has_price = 1;
    }
    const int price_file = w->has_price && isnan(spec->price_value);
    if (!spec->start)
        w->start = w->has_carbon ? w->carbon.start : price_file ? w->price.start : 0.0;
    if (!tariff && (spec->price_tz || spec->price_label || spec->where[WS_WI_PRICE_ADJ])) {
        ws_fail(err, "%s: %s is a CSV series, not an OpenEI tariff: %s applies to a tariff",
                spec->where[spec->price_tz ? WS_WI_PRICE_TZ : spec->price_label
                            ? WS_WI_PRICE_LABEL : WS_WI_PRICE_ADJ],
                spec->price, spec->price_tz ? "a time zone" : spec->price_label ? "a label"
                : "adj");
        goto fail;
    }
    if ((w->has_carbon && check_start(w, &w->carbon, spec->where[WS_WI_START], err))
        || (price_file && check_start(w, &w->price, spec->where[WS_WI_START], err)))
        goto fail;
    w->every = spec->every;
    w->defer = spec->defer_up_to;
    w->objective = !spec->objective || !strcmp(spec->objective, "energy") ? WS_OBJ_ENERGY
                 : !strcmp(spec->objective, "carbon") ? WS_OBJ_CARBON : WS_OBJ_PRICE;
    if (w->objective != WS_OBJ_ENERGY) {
        const ws_series *s = w->objective == WS_OBJ_CARBON ? &w->carbon : &w->price;
        double mean = ws_series_mean(s);
        if (!(mean > 0)) {
            ws_fail(err, "%s: objective %s needs a series whose mean is above 0"
                    " (%s is 0 throughout)", spec->where[WS_WI_OBJECTIVE],
                    spec->objective, s->path);
            goto fail;
        }
        w->k = 3.6e6 / mean;
    }
    w->defer_series = w->objective == WS_OBJ_CARBON ? &w->carbon
                    : w->objective == WS_OBJ_PRICE ? &w->price
                    : w->has_carbon ? &w->carbon : w->has_price ? &w->price : NULL;
    return 0;
fail:
    ws_whatif_free(w);
    return -1;
}

void ws_whatif_run(const ws_whatif *w, double clock, double energy_j,
                   double time_s, double eta, double max_power,
                   double *co2_g, double *usd, double *cost, int *wrapped)
{
    int wc = 0, wp = 0;
    *co2_g = w->has_carbon ? ws_series_amount(&w->carbon, clock, time_s, energy_j, &wc) : 0.0;
    *usd = w->has_price ? ws_series_amount(&w->price, clock, time_s, energy_j, &wp) : 0.0;
    /* A constant price has no end to wrap past. */
    *wrapped = wc || (wp && w->price.n > 1);
    if (w->objective != WS_OBJ_ENERGY) {
        double amount = w->objective == WS_OBJ_CARBON ? *co2_g : *usd;
        *cost = eta * amount * w->k + (1.0 - eta) * max_power * time_s;
    }
}

double ws_whatif_defer(const ws_whatif *w, double t, double dur)
{
    if (!w || !(w->defer > 0) || !w->defer_series || !(dur > 0)) return t;
    const ws_series *s = w->defer_series;
    const double end = t + w->defer;
    double best = t, least = ws_series_integral(s, t, dur, NULL);
    /* Candidates in increasing order from two sorted streams: boundaries
     * b in (t, end] and b - dur for boundaries b in (t + dur, end + dur]. */
    double b1 = ws_series_next_boundary(s, t), b2 = ws_series_next_boundary(s, t + dur);
    for (;;) {
        const double c1 = b1, c2 = b2 - dur;
        const double c = c1 < c2 ? c1 : c2;
        if (!(c <= end)) break;
        const double v = ws_series_integral(s, c, dur, NULL);
        if (v < least) {
            least = v;
            best = c;
        }
        if (c1 <= c2) b1 = ws_series_next_boundary(s, b1);
        if (c2 <= c1) b2 = ws_series_next_boundary(s, b2);
    }
    const double v = ws_series_integral(s, end, dur, NULL);
    if (v < least) best = end;
    return best;
}

void ws_whatif_rates(const ws_whatif *w, double clock, double *carbon_intensity,
                     double *price)
{
    *carbon_intensity = w->has_carbon ? ws_series_at(&w->carbon, clock) : NAN;
    *price = w->has_price ? ws_series_at(&w->price, clock) : NAN;
}

void ws_whatif_tariff_note(const ws_whatif *w, double peak_w, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    const ws_tariff_info *t = w ? w->tariff : NULL;
    if (!t || !w->has_price || !size) return;
    const double kw = peak_w / 1000;
#define ADD(...) do { if (n < size) n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__); } while (0)
    if (t->adj != 0) {
        ADD("%s%s: adj %g $/kWh on the rate %g of period %d is ignored, as Zeus ignores it",
            n ? "; " : "", w->price.path, t->adj, t->adj_rate, t->adj_period);
        if (t->adj_rate + t->adj > 0)
            ADD(" (the price is %.3g %% %s if it applies)",
                fabs(t->adj) / (t->adj_rate + t->adj) * 100, t->adj > 0 ? "low" : "high");
        ADD("; --price-adjustments include adds it");
    }
    if (t->tiered_periods > 0) {
        ADD("%s%s: %d period%s tiered: only the first tier's rate is used", n ? "; " : "",
            w->price.path, t->tiered_periods, t->tiered_periods > 1 ? "s are" : " is");
        if (t->tier_max > 0 && kw > 0)
            ADD(" (up to %g kWh a month, %.4g h at this job's peak of %.3g kW; past it up to"
                " %g $/kWh)", t->tier_max, t->tier_max / kw, kw, t->tier_top_rate);
        else
            ADD(" (later tiers up to %g $/kWh)", t->tier_top_rate);
    }
    if (t->has_demand)
        ADD("%s%s: demand charges up to %g $/kW a month %s: at this job's peak of %.3g kW up"
            " to $%.2f a month%s", n ? "; " : "", w->price.path, t->max_demand,
            w->demand_charge ? "are in usd (--demand-charge include)" : "are not in usd", kw,
            kw * t->max_demand, w->demand_charge ? "" : "; plan --demand-charge include adds"
            " them");
#undef ADD
}

void ws_whatif_demand_add(const ws_whatif *w, ws_demand_acc *acc, double a, double dur,
                          double power_w)
{
    const ws_tariff_info *t = w ? w->tariff : NULL;
    if (!t || !w->has_price || !(dur >= 0)) return;
    const ws_series *s = &w->price;
    const double period = s->end - s->start, end = a + dur;
    double u = a - s->start;
    if (u < 0) u = 0;
    for (double x = s->start + u; ; ) {
        const double lap = floor((x - s->start) / period);
        double h = floor((x - s->start - lap * period) / 3600);
        if (h >= (double)s->n) h = (double)s->n - 1;       /* rounding */
        const size_t i = (size_t)h;
        const double key = 1 + lap * t->n_billing + t->billing[i];
        if (!acc->any || key != acc->last_key) {
            acc->usd += power_w / 1000 * t->demand[t->month[i]];
            acc->last_key = key;
            acc->any = 1;
        }
        const double next = s->start + lap * period + (h + 1) * 3600;
        if (!(next < end) || !(next > x)) break;
        x = next;
    }
}

int ws_whatif_set_demand_charge(ws_whatif *w, const char *value, const char *opt,
                                ws_error *err)
{
    w->demand_charge = 0;
    if (!value) return 0;
    if (strcmp(value, "include") && strcmp(value, "ignore"))
        return ws_fail(err, "%s must be include or ignore, got '%.40s'", opt, value);
    if (!strcmp(value, "ignore")) return 0;
    if (!w->tariff)
        return ws_fail(err, "%s include: demand charges come with an OpenEI tariff: give one"
                       " with --price FILE.json", opt);
    if (!w->tariff->has_demand)
        return ws_fail(err, "%s include: %s has no demand charges (no flatdemandstructure"
                       " or demandratestructure with a rate above 0)", opt, w->price.path);
    w->demand_charge = 1;
    return 0;
}

void ws_whatif_describe(const ws_whatif *w, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
#define ADD(...) do { if (n < size) n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__); } while (0)
    if (w->power_cap > 0) ADD("%spower cap %g W", n ? "; " : "", w->power_cap);
    if (w->job_power_cap > 0) ADD("%sjob power cap %g W", n ? "; " : "", w->job_power_cap);
    if (w->input_stall > 0)
        ADD("%sinput stall %g at %g W idle", n ? "; " : "", w->input_stall, w->idle_power);
    if (w->input_rate > 0)
        ADD("%sinput %g samples/s, %g samples per epoch, %g W idle", n ? "; " : "",
            w->input_rate, w->samples_per_epoch, w->idle_power);
    char t[32];
    ws_format_time(w->start, t, sizeof t);
    if (w->has_carbon)
        ADD("%scarbon %s%s from %s", n ? "; " : "", w->carbon.path,
            w->carbon_basis == WS_BASIS_DIRECT ? " (direct basis)" : "", t);
    if (w->has_price) {
        if (ws_whatif_price_constant(w))
            ADD("%sprice %g $/kWh", n ? "; " : "", w->price.value[0]);
        else
            ADD("%sprice %s from %s", n ? "; " : "", w->price.path, t);
        if (w->tariff && w->price_adjustments) ADD(" with adj");
        if (w->demand_charge) ADD("; demand charges included");
    }
    if (w->objective != WS_OBJ_ENERGY)
        ADD("%sobjective %s", n ? "; " : "",
            w->objective == WS_OBJ_CARBON ? "carbon" : "price");
    if (w->every > 0) ADD("%severy %g h", n ? "; " : "", w->every / 3600);
    if (w->defer > 0) ADD("%sdefer up to %g h", n ? "; " : "", w->defer / 3600);
#undef ADD
}

/* ---------------------------------------------------------- the table */

static int copy_table(const ws_job_table *in, ws_job_table *out, ws_error *err)
{
    const ws_job *j = &in->job;
    const int nb = j->n_bs, nk = j->knob_start[nb], nr = j->run_start[nb];
    memset(out, 0, sizeof *out);
    out->workload = strdup(in->workload);
    out->gpu = strdup(in->gpu);
    /* NULL in a table a program built by hand (the job's 2.3 members) */
    out->dataset = in->dataset ? strdup(in->dataset) : NULL;
    out->network = in->network ? strdup(in->network) : NULL;
    out->optimizer = in->optimizer ? strdup(in->optimizer) : NULL;
    out->bs = malloc((size_t)(nb + 1) * sizeof *out->bs);
    out->knob_start = malloc((size_t)(nb + 1) * sizeof *out->knob_start);
    out->run_start = malloc((size_t)(nb + 1) * sizeof *out->run_start);
    out->knob_pl = malloc((size_t)(nk + 1) * sizeof *out->knob_pl);
    out->knob_time = malloc((size_t)(nk + 1) * sizeof *out->knob_time);
    out->knob_power = malloc((size_t)(nk + 1) * sizeof *out->knob_power);
    out->knob_line = malloc((size_t)(nk + 1) * sizeof *out->knob_line);
    out->knob_error = malloc((size_t)(nk + 1) * sizeof *out->knob_error);
    out->run_epoch = malloc((size_t)(nr + 1) * sizeof *out->run_epoch);
    if (!out->workload || !out->gpu || !out->bs || !out->knob_start || !out->run_start
        || !out->knob_pl || !out->knob_time || !out->knob_power || !out->knob_line
        || !out->knob_error || !out->run_epoch || (in->dataset && !out->dataset)
        || (in->network && !out->network) || (in->optimizer && !out->optimizer)) {
        ws_job_free(out);
        return ws_fail(err, "out of memory");
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether a knob of per-GPU limit pl is unavailable under the per-GPU cap
 * and the job's (both INFINITY when not given): exactly as the rules
 * read, pl > cap1 or gpus x pl > capj (products of small integers are
 * exact doubles). */
static int capped(int pl, double cap1, double capj, double gpus)
{
    return (double)pl > cap1 || gpus * (double)pl > capj;
}

int ws_whatif_apply(const ws_job_table *in, const ws_whatif *w,
                    ws_job_table *out, char *note, size_t note_size,
                    ws_error *err)
{
    const ws_job *j = &in->job;
    const double gpus = (double)ws_job_gpus(j);
    /* A knob is unavailable when its limit passes the per-GPU cap or its
     * GPUs' limits together pass the job's: one limit in W per GPU. */
    const double cap1 = w && w->power_cap > 0 ? w->power_cap : INFINITY;
    const double capj = w && w->job_power_cap > 0 ? w->job_power_cap : INFINITY;
    const double stall = w ? w->input_stall : 0.0;
    /* The wait for input: N / R seconds of delivery per epoch. */
    const double t_in = w && w->input_rate > 0 ? w->samples_per_epoch / w->input_rate : 0.0;
    const double idle = w ? w->idle_power * gpus : 0.0;
    /* The cap that binds, as the user gave it, for messages. */
    char what[128];
    const char *where;
    if (cap1 <= capj / gpus) {
        snprintf(what, sizeof what, "power cap %g W", cap1);
        where = w && w->where_cap ? w->where_cap : "power_cap";
    } else {
        if (gpus > 1)
            snprintf(what, sizeof what, "job power cap %g W (%g W per GPU of %g)", capj,
                     capj / gpus, gpus);
        else
            snprintf(what, sizeof what, "job power cap %g W", capj);
        where = w && w->where_job_cap ? w->where_job_cap : "job_power_cap";
    }
    if (note && note_size) note[0] = 0;
    if (copy_table(in, out, err)) return -1;

    /* b0 must keep a knob. */
    const int i0 = in->b0_index;
    if (capped(j->knob_pl[j->knob_start[i0]], cap1, capj, gpus)) {
        int lowest = j->knob_pl[j->knob_start[i0]];
        ws_job_free(out);
        return ws_fail(err, "%s: %s leaves the default batch size %d"
                       " of %s on %s no power limit (its lowest is %d W)",
                       where, what, j->b0, j->workload, j->gpu, lowest);
    }
    int nb = 0, nk = 0, nr = 0, dropped = 0;
    char gone[256] = "";
    size_t gl = 0;
    for (int i = 0; i < j->n_bs; i++) {
        const int k0 = j->knob_start[i], k1 = j->knob_start[i + 1];
        int kept = 0;
        for (int k = k0; k < k1; k++)
            kept += !capped(j->knob_pl[k], cap1, capj, gpus);
        if (!kept) {
            if (gl < sizeof gone)
                gl += (size_t)snprintf(gone + gl, sizeof gone - gl, "%s%d",
                                       dropped ? ", " : "", j->bs[i]);
            dropped++;
            continue;
        }
        if (i == i0) out->b0_index = nb;
        out->bs[nb] = j->bs[i];
        out->knob_start[nb] = nk;
        out->run_start[nb] = nr;
        for (int k = k0; k < k1; k++) {
            if (capped(j->knob_pl[k], cap1, capj, gpus)) continue;
            const double t = j->knob_time[k], p = j->knob_power[k];
            out->knob_pl[nk] = j->knob_pl[k];
            /* a table built by hand has no lines: its knobs' order */
            out->knob_line[nk] = in->knob_line ? in->knob_line[k] : k;
            /* relative to the measured energy: an input wait adds idle
             * energy the telemetry did not integrate, so it only bounds */
            out->knob_error[nk] = in->knob_error ? in->knob_error[k] : NAN;
            if (stall > 0) {
                const double t2 = t / (1.0 - stall);
                out->knob_time[nk] = t2;
                out->knob_power[nk] = (t * p + (t2 - t) * idle) / t2;
            } else if (t_in > t) {        /* input-bound: waits t_in - t */
                out->knob_time[nk] = t_in;
                out->knob_power[nk] = (t * p + (t_in - t) * idle) / t_in;
            } else {
                out->knob_time[nk] = t;
                out->knob_power[nk] = p;
            }
            nk++;
        }
        for (int r = j->run_start[i]; r < j->run_start[i + 1]; r++)
            out->run_epoch[nr++] = j->run_epoch[r];
        nb++;
    }
    out->knob_start[nb] = nk;
    out->run_start[nb] = nr;

    /* |P| of what is left, for the default number of recurrences. */
    int *pls = malloc((size_t)(nk + 1) * sizeof *pls);
    if (!pls) {
        ws_job_free(out);
        return ws_fail(err, "out of memory");
    }
    memcpy(pls, out->knob_pl, (size_t)nk * sizeof *pls);
    qsort(pls, (size_t)nk, sizeof *pls, cmp_int);
    int np = 0;
    for (int k = 0; k < nk; k++)
        if (k == 0 || pls[k] != pls[k - 1]) np++;
    free(pls);
    out->n_pl_distinct = np;
    out->default_recurrences = 2L * nb * np;

    out->job = *j;
    out->job.workload = out->workload;
    out->job.gpu = out->gpu;
    out->job.dataset = out->dataset;
    out->job.network = out->network;
    out->job.optimizer = out->optimizer;
    out->job.n_bs = nb;
    out->job.bs = out->bs;
    out->job.knob_start = out->knob_start;
    out->job.knob_pl = out->knob_pl;
    out->job.knob_time = out->knob_time;
    out->job.knob_power = out->knob_power;
    out->job.run_start = out->run_start;
    out->job.run_epoch = out->run_epoch;
    /* The profiling figures of what is left, as if the power trace had the
     * capped and stalled rows. */
    if (ws_job_profile(out, err)) {
        ws_job_free(out);
        return -1;
    }

    if (note && note_size) {
        size_t n = 0;
        const int old_pl = ws_job_max_pl(j, i0);
        const int new_pl = ws_job_max_pl(&out->job, out->b0_index);
        if (new_pl != old_pl)
            n += (size_t)snprintf(note, note_size, "%s: the default knob"
                                  " is now b0 %d at %d W (was %d W)", what, j->b0,
                                  new_pl, old_pl);
        if (dropped && n < note_size)
            snprintf(note + n, note_size - n, "%s%s: batch size%s %s"
                     " ha%s no power limit left and drop%s out", n ? "; " : "", what,
                     dropped > 1 ? "s" : "", gone, dropped > 1 ? "ve" : "s",
                     dropped > 1 ? "" : "s");
    }
    return 0;
}
