/*
 * Test plugin: one file, several policies of a kind. BSOs "multi" (the
 * file's stem) and "multi_b"; PLOs "multi_x" and "multi_y" (neither is the
 * stem). Naming the file as a BSO picks "multi"; as a PLO it is ambiguous.
 */
#include <wattsim/policy.h>

static int m_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void m_destroy(void *state) {}
static int m_register(void *state, const ws_job *job) { return 0; }
static int m_predict(void *state, const ws_job *job, int *bs)
{
    *bs = job->b0;
    return 0;
}
static int m_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}
static int m_predict_pl(void *state, const ws_job *job, int bs, int *pl)
{
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    *pl = ws_job_max_pl(job, i);
    return 0;
}
static int m_observe_profile(void *state, const ws_job *job, int bs, int pl, double c)
{
    return 0;
}

#define BSO(id, nm)                                                     \
    static const ws_bso_type id = {                                     \
        .abi_version = WS_ABI_VERSION, .name = nm, .summary = nm,       \
        .create = m_create, .destroy = m_destroy,                       \
        .register_job = m_register, .predict = m_predict,               \
        .observe = m_observe}
#define PLO(id, nm)                                                     \
    static const ws_plo_type id = {                                     \
        .abi_version = WS_ABI_VERSION, .name = nm, .summary = nm,       \
        .create = m_create, .destroy = m_destroy,                       \
        .predict = m_predict_pl, .observe_profile = m_observe_profile}

BSO(bso_b, "multi_b");
BSO(bso_multi, "multi");
PLO(plo_x, "multi_x");
PLO(plo_y, "multi_y");

static const ws_bso_type *const bsos[] = {&bso_b, &bso_multi, NULL};
static const ws_plo_type *const plos[] = {&plo_x, &plo_y, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "multi", bsos, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
