/*
 * wattsim serve: argument parsing only; the server is sim/src/serve/
 * (built when libmicrohttpd and SQLite were found: WS_SERVE).
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "wattsim/error.h"
#include "wattsim/plugin.h"
#include "cli_serve.h"
#ifdef WS_HAVE_SERVE
#include "serve.h"
#endif

static const char *SERVE_HELP =
    "usage: wattsim serve --db FILE [--listen HOST:PORT]\n"
    "                     [--bso SPEC | --bso PREFIX=SPEC ...]\n"
    "                     [--allow-plugins DIR] [--allow-python PKG]\n"
    "                     [--sync normal|full] [--max-connections N]\n"
    "                     [--timeout SECONDS] [--threads N] [--cache-jobs N]\n"
    "                     [--quiet]\n"
    "\n"
    "Serve Zeus's batch-size optimizer REST API (POST /jobs, GET /jobs/batch_size,\n"
    "POST /report, PATCH /trials, DELETE /jobs) to training scripts that use\n"
    "zeus.optimizer.batch_size.client.BatchSizeOptimizer, with Zeus's server's\n"
    "decisions, its state in a SQLite file. Also GET /healthz and GET /metrics\n"
    "(Prometheus text). See docs/serve.md.\n"
    "\n"
    "  --db FILE            the database (created when new; refused when it is\n"
    "                       another program's, or used by another server)\n"
    "  --listen HOST:PORT   numeric address and port (default 127.0.0.1:8000;\n"
    "                       [::1]:8000 for IPv6; port 0: any free port)\n"
    "  --bso SPEC           the policy: zeus (Zeus's server's, the default) or any\n"
    "                       wattsim BSO as simulate --bso names it (gts, FILE.so,\n"
    "                       py:MODULE:CLASS); PREFIX=SPEC for the jobs whose id\n"
    "                       starts so (repeatable; the longest prefix wins)\n"
    "  --allow-plugins DIR  --bso may name a .so in DIR (repeatable)\n"
    "  --allow-python PKG   --bso may name py: classes of package PKG (repeatable)\n"
    "  --sync normal|full   normal (default) survives a crash of the server, full\n"
    "                       also a power loss\n"
    "  --max-connections N  at once (default 256)\n"
    "  --timeout SECONDS    an idle connection is closed (default 30)\n"
    "  --threads N          threads answering requests (default 2)\n"
    "  --cache-jobs N       jobs kept in memory with their policy state\n"
    "                       (default 8192; more are read from the database)\n"
    "  --quiet              no access-log line per request on stderr\n"
    "\n"
    "SIGTERM or SIGINT: stop accepting, finish the requests in flight, close the\n"
    "database.\n";

/* "HOST:PORT" or "[V6]:PORT" -> host (into buf) and port. */
static int parse_listen(const char *s, char *host, size_t n, int *port)
{
    const char *colon;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':' || (size_t)(end - s - 1) >= n) return -1;
        memcpy(host, s + 1, (size_t)(end - s - 1));
        host[end - s - 1] = 0;
        colon = end + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= n || colon == s) return -1;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = 0;
    }
    char *e;
    const long p = strtol(colon + 1, &e, 10);
    if (!colon[1] || *e || p < 0 || p > 65535) return -1;
    *port = (int)p;
    unsigned char a[16];
    return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1 ? 0 : -1;
}

static int positive(const char *opt, const char *v, int *out)
{
    char *e;
    const long x = strtol(v, &e, 10);
    if (!*v || *e || x < 1 || x > 100000) return ws_cli_usage("serve", opt, v);
    *out = (int)x;
    return 0;
}

int ws_cmd_serve(int argc, char **argv)
{
    enum { O_DB = 1000, O_LISTEN, O_BSO, O_SYNC, O_MAXC, O_TIMEOUT, O_THREADS, O_QUIET, O_ALLOW, O_ALLOW_PY, O_CACHE };
    static const struct option opts[] = {
        {"db", required_argument, 0, O_DB},           {"listen", required_argument, 0, O_LISTEN},
        {"bso", required_argument, 0, O_BSO},         {"sync", required_argument, 0, O_SYNC},
        {"max-connections", required_argument, 0, O_MAXC},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"threads", required_argument, 0, O_THREADS},
        {"quiet", no_argument, 0, O_QUIET},           {"help", no_argument, 0, 'h'},
        {"allow-plugins", required_argument, 0, O_ALLOW},
        {"allow-python", required_argument, 0, O_ALLOW_PY},
        {"cache-jobs", required_argument, 0, O_CACHE},
        {0, 0, 0, 0}};
    static char host[128];
    const char *db = NULL;
    int port = 8000, sync_full = 0, maxc = 256, timeout = 30, threads = 2, quiet = 0, cache = 8192;
    snprintf(host, sizeof host, "127.0.0.1");
    const char *bso[64];
    int n_bso = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(SERVE_HELP, ws_cli_out);
            return 0;
        case O_DB:
            db = optarg;
            break;
        case O_LISTEN:
            if (parse_listen(optarg, host, sizeof host, &port) != 0)
                return ws_cli_usage("serve", "--listen must be HOST:PORT with a numeric address, e.g."
                                    " 127.0.0.1:8000, not '%s'", optarg);
            break;
        case O_BSO:
            if (n_bso == (int)(sizeof bso / sizeof *bso))
                return ws_cli_usage("serve", "--bso is given more than 64 times (%s)", optarg);
            bso[n_bso++] = optarg;
            break;
        case O_ALLOW:
        case O_ALLOW_PY: {
            ws_error e;
            if ((c == O_ALLOW ? ws_plugin_allow_dir(optarg, &e) : ws_plugin_allow_python(optarg, &e)) != 0)
                return ws_cli_usage("serve", "%s", e.msg);
            break;
        }
        case O_SYNC:
            if (!strcmp(optarg, "full")) sync_full = 1;
            else if (!strcmp(optarg, "normal")) sync_full = 0;
            else return ws_cli_usage("serve", "--sync must be normal or full, not '%s'", optarg);
            break;
        case O_MAXC:
            if (positive("--max-connections must be an integer in 1..100000, not '%s'", optarg, &maxc))
                return WS_EXIT_USAGE;
            break;
        case O_TIMEOUT:
            if (positive("--timeout must be seconds in 1..100000, not '%s'", optarg, &timeout))
                return WS_EXIT_USAGE;
            break;
        case O_THREADS:
            if (positive("--threads must be an integer in 1..100000, not '%s'", optarg, &threads))
                return WS_EXIT_USAGE;
            if (threads > 64) return ws_cli_usage("serve", "--threads must be at most 64, not '%s'", optarg);
            break;
        case O_CACHE:
            if (positive("--cache-jobs must be an integer in 1..100000, not '%s'", optarg, &cache))
                return WS_EXIT_USAGE;
            break;
        case O_QUIET:
            quiet = 1;
            break;
        default:
            return ws_cli_bad_option("serve", argv, c);
        }
    }
    if (optind < argc) return ws_cli_usage("serve", "unexpected argument '%s'", argv[optind]);
    if (!db) return ws_cli_usage("serve", "--db FILE is required%s", "");
#ifdef WS_HAVE_SERVE
    for (int i = 0; i < n_bso; i++) {
        char err[1024];
        if (ws_serve_policy_add(bso[i], err, sizeof err) != 0) {
            ws_serve_policy_reset();
            return ws_cli_usage("serve", "%s", err);
        }
    }
    ws_serve_config cfg = {.host = host, .port = port, .db = db, .sync_full = sync_full,
                           .max_connections = maxc, .timeout_s = timeout, .threads = threads,
                           .access_log = !quiet, .cache_jobs = cache};
    const int rc = ws_serve_main(&cfg);
    ws_serve_policy_reset();
    return rc;
#else
    (void)bso, (void)n_bso;
    (void)sync_full, (void)maxc, (void)timeout, (void)threads, (void)quiet, (void)port, (void)cache;
    fputs("wattsim: serve: this wattsim was built without it (libmicrohttpd and SQLite were not found);"
          " install libmicrohttpd-dev and libsqlite3-dev and rebuild\n", stderr);
    return WS_EXIT_USAGE;
#endif
}
