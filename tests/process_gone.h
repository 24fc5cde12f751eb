/* process_gone(pid): whether a process has ended, for tests that stop
 * wattsim and check that nothing it started survives. */
#ifndef WS_TEST_PROCESS_GONE_H
#define WS_TEST_PROCESS_GONE_H

#include <stdio.h>
#include <unistd.h>

/* Is the process gone (or a zombie nobody reaped yet)? Waits up to 3 s. */
static inline int process_gone(long pid)
{
    for (int i = 0; i < 300; i++) {
        char path[64], st = '?';
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) return 1;
        int n = fscanf(f, "%*d (%*[^)]) %c", &st);
        fclose(f);
        if (n == 1 && (st == 'Z' || st == 'X')) return 1;
        usleep(10000);
    }
    return 0;
}

#endif
