/*
 * libFuzzer harness for the report's reading of a reproduction folder
 * (sim/src/report/paper.c): comparison/history.csv, the file whose every
 * run paper.md's estimators reduce (sim/src/report/estimators.c), read
 * beside a fixed savings.csv of two jobs (V100 and A40 ImageNet, zeus+jit
 * against default+default at eta 0.5, beta 2) and, when the input's first
 * byte is odd, a fixed potential.csv. The rest of the input is
 * history.csv. A failure must be one line; on success paper.md is written
 * (to memory) and must hold no "nan" or "inf": a reader that lets a value
 * through that the estimators cannot carry is a bug.
 */
#include <sys/stat.h>

#include "fuzz_util.h"
#include "wattsim/paper.h"

static char dir[64], hist[128], pot[128];

/* The folder goes when the fuzzer exits. */
static void cleanup(void)
{
    char p[160];
    unlink(hist);
    unlink(pot);
    snprintf(p, sizeof p, "%s/comparison/savings.csv", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/comparison", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/potential", dir);
    rmdir(p);
    rmdir(dir);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fuzz_paper.XXXXXX");
    if (!mkdtemp(dir)) abort();
    char sub[128], path[160];
    snprintf(sub, sizeof sub, "%s/comparison", dir);
    if (mkdir(sub, 0700)) abort();
    snprintf(sub, sizeof sub, "%s/potential", dir);
    if (mkdir(sub, 0700)) abort();
    static const char savings[] =
        "policy,versus,gpu,workload,eta,beta,seeds,eta_saving_pct,eta_saving_lo,eta_saving_hi,"
        "tta_saving_pct,tta_saving_lo,tta_saving_hi,versus_index,gpu_index,workload_index,in_figure,"
        "eta_index,beta_index\n"
        "zeus+jit,default+default,v100,imagenet,0.5,2,2,14.8,14.3,15.2,-13.5,-14.0,-12.9,0,0,0,1,0,0\n"
        "zeus+jit,default+default,a40,imagenet,0.5,2,2,11.5,11.0,12.0,-9.5,-10.0,-9.0,0,1,0,1,0,0\n";
    snprintf(path, sizeof path, "%s/comparison/savings.csv", dir);
    fuzz_put_file(path, (const uint8_t *)savings, sizeof savings - 1);
    snprintf(hist, sizeof hist, "%s/comparison/history.csv", dir);
    snprintf(pot, sizeof pot, "%s/potential/potential.csv", dir);
    atexit(cleanup);
}

static void put_potential(int on)
{
    static const char potential[] =
        "gpu,workload,x,default_bs,default_pl,default_eta_j,best_bs,best_pl,best_eta_j,"
        "best_pct_of_default,saving_pct,gpu_index\n"
        "v100,imagenet,0,256,250,100,128,175,76,76.2,23.8,0\n"
        "a40,imagenet,0,256,300,100,128,200,80,80.6,19.4,1\n";
    if (on) fuzz_put_file(pot, (const uint8_t *)potential, sizeof potential - 1);
    else unlink(pot);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) setup();
    if (size < 1 || size > FUZZ_MAX_BYTES) return 0;
    put_potential(data[0] & 1);
    fuzz_put_file(hist, data + 1, size - 1);
    static ws_paper_numbers n;
    ws_error err = {{0}};
    if (ws_paper_numbers_read(dir, NULL, &n, &err)) {
        fuzz_check_error(&err);
        return 0;
    }
    char *md = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&md, &len);
    if (!f) abort();
    ws_paper_write_md(f, &n);
    if (fclose(f)) abort();
    if (strstr(md, "nan") || strstr(md, "inf")) {
        fprintf(stderr, "paper.md holds a non-finite number:\n%s\n", md);
        abort();
    }
    free(md);
    return 0;
}
