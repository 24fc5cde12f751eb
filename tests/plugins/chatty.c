/*
 * Test plugin: a BSO "chatty" whose first create starts a thread that
 * prints to stdout until the process ends -- through stdio (printf, flushed
 * each line) and straight to descriptor 1 (write) -- as a progress bar or
 * a logging thread a policy starts would, before, while and after its
 * instances exist. Then it plays b0. wattsim's results must not get a byte
 * of it (issue 26: `simulate --format json` came out invalid). The thread
 * outlives the instances, so the plugin keeps itself loaded (RTLD_NODELETE):
 * unloading it under the running thread would crash the process.
 */
#define _GNU_SOURCE                /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "stub.h"

static int talking;              /* the thread has printed its first lines */

static void *chatter(void *arg)
{
    (void)arg;
    for (unsigned long n = 0;; n++) {
        printf("chatty: tick %lu\n", n);
        fflush(stdout);
        (void)!write(1, "chatty: raw\n", 12);
        __atomic_store_n(&talking, 1, __ATOMIC_RELEASE);
        sched_yield();
    }
    return NULL;
}

static int started;             /* 1, or -1 when the thread could not start */

static void start(void)
{
    Dl_info self;
    if (!dladdr((void *)chatter, &self) || !self.dli_fname
        || !dlopen(self.dli_fname, RTLD_NOW | RTLD_NODELETE)) {
        started = -1;
        return;
    }
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &a, chatter, NULL) ? -1 : 1;
    pthread_attr_destroy(&a);
    /* create returns once the thread is talking: it surely prints from
     * then on, during the simulation and after it. */
    while (started > 0 && !__atomic_load_n(&talking, __ATOMIC_ACQUIRE)) usleep(100);
}

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, start);
    return started < 0 ? -1 : 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "chatty", .summary = "test",
    .create = c_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = stub_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "chatty", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
