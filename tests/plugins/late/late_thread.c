/*
 * Test plugin: a thread that outlives the plugin's registry. Its entry
 * point starts (once) a detached thread that sleeps WS_LATE_THREAD_MS
 * (default 300) milliseconds and then runs its own code and writes its
 * own static data (late_thread_woke, read back by the test through
 * dlsym). wattsim keeps plugins mapped (RTLD_NODELETE): unmapping the
 * code under the thread would crash the process when it wakes. Its BSO
 * "late_thread" plays b0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../stub.h"

volatile int late_thread_woke;    /* read by the test after the thread's wake */
static volatile int counter;

static void *sleeper(void *arg)
{
    (void)arg;
    const char *ms = getenv("WS_LATE_THREAD_MS");
    long n = ms && *ms ? atol(ms) : 300;
    struct timespec t = {n / 1000, (n % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {}
    for (int i = 0; i < 1000; i++) counter++;       /* its own code, its own data */
    late_thread_woke = counter == 1000;
    return NULL;
}

static void start(void)
{
    pthread_t t;
    if (!pthread_create(&t, NULL, sleeper, NULL)) pthread_detach(t);
}

STUB_BSO(bso, "late_thread", NULL);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "late_thread", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)host_version;
    pthread_once(&once, start);
    return &plugin;
}
