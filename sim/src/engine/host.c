/*
 * The policy host's calls, out of line (see host.h): the error lines of a
 * failing call, a wrong batch size or a wrong power limit (cold, noinline,
 * so the engine's loop carries no formatting), and a PLO's observe_run.
 * With host.h this is what the engine calls into; plugin.c, which creates,
 * frees and guards instances, builds on both and is never called by them.
 */
#include "wattsim/plugin.h"

#include "guard.h"
#include "host.h"

int ws_host_failed(instance *in, const char *call, int rc, ws_error *err)
{
    if (in->hc.last_error[0])
        return ws_fail(err, "%s: %s failed: %s", in->who, call, in->hc.last_error);
    return ws_fail(err, "%s: %s failed (returned %d)", in->who, call, rc);
}

int ws_host_bad_bs(const ws_bso *b, const ws_job *job, int bs, ws_error *err)
{
    return ws_fail(err, "%s: predict returned batch size %d, which is not"
                   " one of the job's %d batch sizes (%d..%d)", b->in.who,
                   bs, job->n_bs, job->bs[0], job->bs[job->n_bs - 1]);
}

int ws_host_bad_pl(const ws_plo *p, const ws_job *job, int i, int pl, ws_error *err)
{
    return ws_fail(err, "%s: predict(bs %d) returned power limit %d W, which"
                   " was not measured for that batch size (%d..%d W)", p->in.who,
                   job->bs[i], pl, job->knob_pl[job->knob_start[i]],
                   job->knob_pl[job->knob_start[i + 1] - 1]);
}

int ws_host_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                            int pl, double cost, int reached, ws_error *err)
{
    ws_guard_call_enter(p->in.who, "observe_run");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_run_fn, p->t->observe_run)(p->in.state, job, bs, pl, cost,
                                                           reached)
                   : p->t->observe_run(p->in.state, job, ctx, bs, pl, cost, reached);
    ws_guard_call_leave();
    return rc ? ws_host_failed(&p->in, "observe_run", rc, err) : 0;
}
