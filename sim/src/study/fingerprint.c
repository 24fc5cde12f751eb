/*
 * A sweep's fingerprint (see sweep_run.h): one sha256 over everything that
 * decides the results, and the same bytes hashed by what they are
 * ("parts"): the random streams, each pair's policies and parameters, each
 * policy's file, each axis, the what-ifs, each job's tables. The whole
 * decides whether a journal (or a shard, or an MPI rank) is of this plan;
 * the parts, with a short readable value each (a plugin's sha256, the
 * parameters, a what-if's setting), say what differs when it is not.
 *
 * The bytes fed to the whole are those of wattsim 1's fingerprint, in the
 * same order: journals stay valid. A few parts are "notes": hashed on
 * their own and not into the whole (the list of pairs, the what-if
 * transforms as given), so that a change they explain is named by the
 * option that made it, not by the job tables it changed.
 *
 * The parts travel encoded (ws_sweep_fp_encode) in a journal's header and
 * between MPI ranks:
 *      u32  number of parts
 *      per part: sha256 (32 bytes), u16 length + name, u16 length + value
 *      u32  CRC-32 (zlib) of all the above
 * in native byte order, like the journal's records.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "sweep_run.h"
#include "wattsim/rng.h"
#include "wattsim/series.h"
#include "wattsim/sha256.h"
#include "wattsim/version.h"

typedef struct fp_ctx {
    ws_sha256 all;
    ws_sweep_fp *fp;
    ws_sha256 *part;
    size_t cur;                /* the part being fed */
    int note;                  /* it is a note: not fed to the whole */
} fp_ctx;

static void hash_bytes(fp_ctx *h, const void *p, size_t n)
{
    if (!h->note) ws_sha256_update(&h->all, p, n);
    ws_sha256_update(&h->part[h->cur], p, n);
}

static void hash_str(fp_ctx *h, const char *s)
{
    hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Start feeding part k, named by the printf format; note: not into the
 * whole. */
static void part_v(fp_ctx *h, size_t k, int note, const char *fmt, va_list ap)
{
    vsnprintf(h->fp->part[k].what, sizeof h->fp->part[k].what, fmt, ap);
    h->cur = k;
    h->note = note;
}

static void part(fp_ctx *h, size_t k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void part(fp_ctx *h, size_t k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    part_v(h, k, 0, fmt, ap);
    va_end(ap);
}

static void note(fp_ctx *h, size_t k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(fp_ctx *h, size_t k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    part_v(h, k, 1, fmt, ap);
    va_end(ap);
}

/* Append to the current part's value (cut with "..." when it is full). */
static void value(fp_ctx *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void value(fp_ctx *h, const char *fmt, ...)
{
    char *v = h->fp->part[h->cur].value;
    const size_t cap = sizeof h->fp->part[h->cur].value;
    size_t n = strlen(v);
    if (n + 4 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(v + n, cap - n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= cap - n) memcpy(v + cap - 4, "...", 4);
}

static void hash_params(fp_ctx *h, const ws_policy_ref *ref, const char *name)
{
    if (!ref->name || strcmp(ref->name, name)) { hash_str(h, "-"); return; }
    for (size_t k = 0; k < ref->n_params; k++) {
        hash_str(h, ref->params[k].key);
        hash_str(h, ref->params[k].value);
    }
}

/* The sha256 of the file a policy was loaded from (built-ins are files
 * too): a rebuilt plugin is another plan. Its value: "sha256 HEX". */
static int hash_policy_file(fp_ctx *h, const ws_registry *reg, const void *type, int bso,
                            ws_error *err)
{
    size_t n = bso ? ws_registry_n_bso(reg) : ws_registry_n_plo(reg);
    for (size_t i = 0; i < n; i++) {
        const void *t = bso ? (const void *)ws_registry_bso_at(reg, i)
                            : (const void *)ws_registry_plo_at(reg, i);
        if (t != type) continue;
        const char *path = bso ? ws_registry_bso_file(reg, i) : ws_registry_plo_file(reg, i);
        char hex[65];
        /* a provided policy (py:): the sha256 of its Python source */
        if (ws_registry_serial(reg, type)) {
            if (ws_registry_sha256((ws_registry *)reg, type, hex, err)) return -1;
            hash_str(h, path);
            hash_str(h, hex);
        } else {
            if (ws_sha256_file(path, hex, err)) return -1;
            hash_str(h, hex);
        }
        value(h, "sha256 %s", hex);
        return 0;
    }
    hash_str(h, "(not from a file)");
    value(h, "(not from a file)");
    return 0;
}

void ws_sweep_fp_free(ws_sweep_fp *fp)
{
    free(fp->part);
    memset(fp, 0, sizeof *fp);
}

/* A list of n numbers as a part's value: "0.25,0.5" (cut when long). */
static void value_doubles(fp_ctx *h, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) value(h, "%s%.15g", i ? "," : "", x[i]);
}

int ws_sweep_fingerprint(const ws_sweep *s, const ws_run_config *cfg, const ws_registry *reg,
                         const ws_sweep_policy *pol, ws_sweep_fp *fp, ws_error *err)
{
    const size_t n_jobs = s->n_gpus * s->n_work;
    /* Parts in the order a difference is looked for: what a user changes
     * (streams, pairs, each pair's parameters and files, axes, what-ifs)
     * before what it changes (the job tables). */
    const size_t P_STREAMS = 0, P_PAIRS = 1, P_PAIR = 2, P_AXES = P_PAIR + 3 * s->n_pairs,
                 P_WHATIF = P_AXES + 6, P_JOBS = P_WHATIF + 6;
    memset(fp, 0, sizeof *fp);
    fp->n = P_JOBS + n_jobs;
    fp->part = calloc(fp->n, sizeof *fp->part);
    fp_ctx h = {.fp = fp, .part = calloc(fp->n, sizeof(ws_sha256))};
    if (!fp->part || !h.part) {
        free(h.part);
        ws_sweep_fp_free(fp);
        return ws_fail(err, "out of memory");
    }
    ws_sha256_init(&h.all);
    for (size_t k = 0; k < fp->n; k++) ws_sha256_init(&h.part[k]);
    part(&h, P_STREAMS, "the random streams");
    hash_str(&h, "wattsim sweep plan 2");
    /* The random streams the simulations draw from: a journal of another
     * stream version holds other runs for the same seeds. */
    char streams[32];
    snprintf(streams, sizeof streams, "streams %d", WS_STREAM_VERSION);
    hash_str(&h, streams);
    value(&h, "random streams %d (wattsim %s)", WS_STREAM_VERSION, WATTSIM_VERSION);
    /* A note: which pairs, in which order (a pair added or removed). */
    note(&h, P_PAIRS, "the policy pairs");
    for (size_t p = 0; p < s->n_pairs; p++) {
        hash_str(&h, s->pairs[p].label);
        value(&h, "%s%s", p ? ", " : "", s->pairs[p].label);
    }
    for (size_t p = 0; p < s->n_pairs; p++) {
        const ws_policy_pair *q = &s->pairs[p];
        part(&h, P_PAIR + 3 * p, "the parameters of pair %s", q->label);
        hash_str(&h, q->bso);
        hash_str(&h, q->plo);
        hash_str(&h, q->label);
        hash_params(&h, &cfg->bso, q->bso);
        hash_params(&h, &cfg->plo, q->plo);
        /* The parameters as resolved, whether from the config or --policies. */
        hash_str(&h, q->bso_params ? q->bso_params : "");
        hash_str(&h, q->plo_params ? q->plo_params : "");
        value(&h, "%s{%s}+%s{%s}", q->bso, q->bso_params ? q->bso_params : "", q->plo,
              q->plo_params ? q->plo_params : "");
        part(&h, P_PAIR + 3 * p + 1, "the plugin file of bso %s", q->bso);
        if (hash_policy_file(&h, reg, pol[p].bt, 1, err)) goto fail;
        part(&h, P_PAIR + 3 * p + 2, "the plugin file of plo %s", q->plo);
        if (hash_policy_file(&h, reg, pol[p].pt, 0, err)) goto fail;
    }
    part(&h, P_AXES, "the GPUs");
    for (size_t g = 0; g < s->n_gpus; g++) {
        hash_str(&h, s->gpus[g]);
        value(&h, "%s%s", g ? "," : "", s->gpus[g]);
    }
    part(&h, P_AXES + 1, "the workloads");
    for (size_t w = 0; w < s->n_work; w++) {
        hash_str(&h, s->work[w]);
        value(&h, "%s%s", w ? "," : "", s->work[w]);
    }
    part(&h, P_AXES + 2, "the eta values");
    hash_bytes(&h, s->etas, s->n_etas * sizeof *s->etas);
    value_doubles(&h, s->etas, s->n_etas);
    part(&h, P_AXES + 3, "the beta values");
    hash_bytes(&h, s->betas, s->n_betas * sizeof *s->betas);
    value_doubles(&h, s->betas, s->n_betas);
    part(&h, P_AXES + 4, "the seeds");
    hash_bytes(&h, s->seeds, s->n_seeds * sizeof *s->seeds);
    value(&h, "%zu seeds, %lu to %lu", s->n_seeds, s->n_seeds ? s->seeds[0] : 0,
          s->n_seeds ? s->seeds[s->n_seeds - 1] : 0);
    part(&h, P_AXES + 5, "the command (sweep or curves)");
    hash_bytes(&h, &s->curves, sizeof s->curves);
    value(&h, "%s", s->curves ? "curves" : "sweep");
    /* What-ifs. The transforms (cap, stall, input rate) are in the job
     * tables; a note names them as options. The series, start, objective
     * and schedule are hashed here, and nothing without them. */
    const ws_whatif *wi = s->whatif;
    note(&h, P_WHATIF, "the what-if transforms (--power-cap, --job-power-cap, --input-stall,"
         " --input-rate, --idle-power)");
    if (wi && ws_whatif_transforms(wi)) {
        const double t[6] = {wi->power_cap, wi->job_power_cap, wi->input_stall,
                             wi->input_rate, wi->samples_per_epoch, wi->idle_power};
        hash_bytes(&h, t, sizeof t);
        static const char *const name[6] = {"power cap %g W", "job power cap %g W",
                                            "input stall %g", "input rate %g samples/s",
                                            "%g samples per epoch", "idle power %g W"};
        for (int k = 0, any = 0; k < 6; k++) {
            if (t[k] <= 0) continue;
            if (any++) value(&h, ", ");
            value(&h, name[k], t[k]);
        }
    } else {
        value(&h, "none");
    }
    const int accounts = wi && (ws_whatif_accounts(wi) || wi->objective != WS_OBJ_ENERGY);
    part(&h, P_WHATIF + 4, "the objective (--objective)");
    if (accounts) hash_str(&h, "whatif");
    const ws_series *ser[2] = {wi && wi->has_carbon ? &wi->carbon : NULL,
                               wi && wi->has_price ? &wi->price : NULL};
    for (int q = 0; q < 2 && accounts; q++) {
        part(&h, P_WHATIF + 1 + q, q ? "the price (--price)" : "the carbon series (--carbon)");
        if (!ser[q]) {
            value(&h, "none");
            /* the whole's marker of a missing series, kept out of the
             * series' part: adding a price is not a carbon change */
            h.cur = P_WHATIF + 4;
            hash_str(&h, "-");
            continue;
        }
        hash_bytes(&h, ser[q]->t0, ser[q]->n * sizeof *ser[q]->t0);
        hash_bytes(&h, ser[q]->value, ser[q]->n * sizeof *ser[q]->value);
        hash_bytes(&h, &ser[q]->end, sizeof ser[q]->end);
        if (ser[q]->n == 1 && ser[q]->path && !strcmp(ser[q]->path, "constant"))
            value(&h, "%g $/kWh", ser[q]->value[0]);
        else
            value(&h, "%s, %zu values", ser[q]->path ? ser[q]->path : "", (size_t)ser[q]->n);
    }
    if (!accounts) {
        part(&h, P_WHATIF + 1, "the carbon series (--carbon)");
        value(&h, "none");
        part(&h, P_WHATIF + 2, "the price (--price)");
        value(&h, "none");
    }
    part(&h, P_WHATIF + 3, "the start (--start)");
    if (accounts) {
        char t[32];
        hash_bytes(&h, &wi->start, sizeof wi->start);
        ws_format_time(wi->start, t, sizeof t);
        value(&h, "%s", t);
    } else {
        value(&h, "none");
    }
    part(&h, P_WHATIF + 4, "the objective (--objective)");
    if (accounts) hash_bytes(&h, &wi->objective, sizeof wi->objective);
    value(&h, "%s", !wi || wi->objective == WS_OBJ_ENERGY ? "energy"
                    : wi->objective == WS_OBJ_CARBON ? "carbon" : "price");
    part(&h, P_WHATIF + 5, "the schedule (--every, --defer-up-to)");
    /* only with a schedule: journals without one keep their prints */
    if (accounts && (wi->every > 0 || wi->defer > 0)) {
        hash_str(&h, "schedule");
        hash_bytes(&h, &wi->every, sizeof wi->every);
        hash_bytes(&h, &wi->defer, sizeof wi->defer);
        value(&h, "every %g s, defer up to %g s", wi->every, wi->defer);
    } else {
        value(&h, "none");
    }
    /* The numbers the simulations read, as resolved: a changed trace, or
     * anything that changes a job's tables, changes the plan. */
    for (size_t j = 0; j < n_jobs; j++) {
        const ws_job *job = &s->jobs[j].job;
        part(&h, P_JOBS + j, "the traces (or recurrences) of %s/%s",
             s->gpus[j / s->n_work], s->work[j % s->n_work]);
        hash_bytes(&h, &s->recurrences[j], sizeof s->recurrences[j]);
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
        /* a drifting job's phases (none: the bytes of a job before drift) */
        const ws_job_table *jt = &s->jobs[j];
        for (size_t k = 0; k < jt->n_phases; k++) {
            const ws_job *ph = &jt->phase[k].job;
            hash_bytes(&h, &jt->phase_from[k], sizeof jt->phase_from[k]);
            hash_bytes(&h, ph->knob_time, nk * sizeof *ph->knob_time);
            hash_bytes(&h, ph->knob_power, nk * sizeof *ph->knob_power);
            hash_bytes(&h, ph->run_start, (size_t)(ph->n_bs + 1) * sizeof *ph->run_start);
            hash_bytes(&h, ph->run_epoch,
                       (size_t)ph->run_start[ph->n_bs] * sizeof *ph->run_epoch);
        }
        if (jt->n_phases)
            value(&h, "%ld recurrences, %d batch sizes, %zu knobs, %zu phases (drift)",
                  s->recurrences[j], job->n_bs, nk, jt->n_phases + 1);
        else
            value(&h, "%ld recurrences, %d batch sizes, %zu knobs", s->recurrences[j],
                  job->n_bs, nk);
    }
    ws_sha256_final(&h.all, fp->all);
    for (size_t k = 0; k < fp->n; k++) ws_sha256_final(&h.part[k], fp->part[k].sha);
    free(h.part);
    return 0;
fail:
    free(h.part);
    ws_sweep_fp_free(fp);
    return -1;
}

/* ------------------------------------------------------------ encoding */

static int put(FILE *f, const void *p, size_t n, uLong *crc)
{
    *crc = crc32(*crc, p, (uInt)n);
    return fwrite(p, 1, n, f) != n;
}

int ws_sweep_fp_encode(const ws_sweep_fp *fp, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f) return -1;
    uLong crc = crc32(0L, Z_NULL, 0);
    uint32_t n = (uint32_t)fp->n;
    int bad = fp->n > UINT32_MAX || put(f, &n, 4, &crc);
    for (size_t k = 0; k < fp->n && !bad; k++) {
        const struct ws_sweep_fp_part *p = &fp->part[k];
        uint16_t lw = (uint16_t)strlen(p->what), lv = (uint16_t)strlen(p->value);
        bad = put(f, p->sha, 32, &crc) || put(f, &lw, 2, &crc) || put(f, p->what, lw, &crc)
              || put(f, &lv, 2, &crc) || put(f, p->value, lv, &crc);
    }
    uint32_t c = (uint32_t)crc;
    if (!bad) bad = fwrite(&c, 1, 4, f) != 4;
    if (fclose(f) || bad) {
        free(*buf);
        *buf = NULL;
        return -1;
    }
    return 0;
}

/* Copy a string of n bytes at *p (within end) into dst (cap bytes), one
 * line of text; 0, or -1 when it does not fit or is not one line. The
 * strings end up in an error message on a terminal: a journal from a
 * received folder must not carry escape sequences there, so any control
 * character makes the header damaged (its refusal then names no part). */
static int take_str(const unsigned char **p, const unsigned char *end, char *dst, size_t cap)
{
    uint16_t n;
    if (end - *p < 2) return -1;
    memcpy(&n, *p, 2);
    *p += 2;
    if ((size_t)(end - *p) < n || n >= cap) return -1;
    memcpy(dst, *p, n);
    dst[n] = '\0';
    *p += n;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f) return -1;
    return 0;
}

int ws_sweep_fp_decode(const void *buf, size_t len, ws_sweep_fp *fp)
{
    const unsigned char *p = buf, *end = p + len;
    uint32_t n, crc;
    memset(fp, 0, sizeof *fp);
    if (len < 8) return -1;
    memcpy(&crc, end - 4, 4);
    end -= 4;
    if (crc != (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)(end - p))) return -1;
    memcpy(&n, p, 4);
    p += 4;
    /* each part takes at least 36 bytes: no count the bytes cannot hold */
    if ((size_t)n > (size_t)(end - p) / 36) return -1;
    fp->part = calloc(n ? n : 1, sizeof *fp->part);
    if (!fp->part) return -1;
    fp->n = n;
    for (size_t k = 0; k < n; k++) {
        struct ws_sweep_fp_part *q = &fp->part[k];
        if (end - p < 32) goto bad;
        memcpy(q->sha, p, 32);
        p += 32;
        if (take_str(&p, end, q->what, sizeof q->what)
            || take_str(&p, end, q->value, sizeof q->value))
            goto bad;
    }
    if (p != end) goto bad;
    return 0;
bad:
    ws_sweep_fp_free(fp);
    return -1;
}

/* ------------------------------------------------------------ differences */

/* A part's value in a message: a sha256 cut to 12 digits (enough to tell
 * two builds apart; sweep.csv has the whole). */
static void shown(const char *v, char *out, size_t cap)
{
    if (!strncmp(v, "sha256 ", 7) && strlen(v) == 7 + 64)
        snprintf(out, cap, "sha256 %.12s...", v + 7);
    else
        snprintf(out, cap, "%s", v[0] ? v : "(none)");
}

int ws_sweep_fp_diff(const ws_sweep_fp *then, const ws_sweep_fp *now, const char *then_where,
                     const char *now_where, char *buf, size_t size)
{
    /* Both lists come from the same layout: the first part that differs
     * (a note first, when a note explains it). Parts after a layout change
     * (another number of pairs, GPUs or workloads) are not compared: the
     * part that changed the layout comes before them. */
    for (size_t k = 0; k < then->n && k < now->n; k++) {
        const struct ws_sweep_fp_part *a = &then->part[k], *b = &now->part[k];
        if (strcmp(a->what, b->what)) break;
        if (!memcmp(a->sha, b->sha, 32)) continue;
        char va[160], vb[160];
        shown(a->value, va, sizeof va);
        shown(b->value, vb, sizeof vb);
        if (!strcmp(va, vb)) {
            /* the same readable value (a cut list, a series' file edited
             * in place): the part's own hashes tell them apart */
            char ha[65], hb[65];
            ws_sha256_hex(a->sha, ha);
            ws_sha256_hex(b->sha, hb);
            snprintf(va + strlen(va), sizeof va - strlen(va), ", hash %.12s...", ha);
            snprintf(vb + strlen(vb), sizeof vb - strlen(vb), ", hash %.12s...", hb);
        }
        snprintf(buf, size, "%s changed (%s %s; %s %s)", a->what, va, then_where, vb, now_where);
        return 1;
    }
    return 0;
}
