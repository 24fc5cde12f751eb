#!/usr/bin/python3
"""Every JSON wattsim writes parses as strict JSON (RFC 8259: no NaN,
Infinity, raw control bytes, bad escapes), from the CLI (simulate, pareto,
plan, run's summary.json, sweep's sweep.json, trace check, groups replay,
wattsim-bench --json) and from the
library API (ws_api_run: simulate, pareto, plan, run, sweep, trace-check,
trace-import-power, trace-import-train, workloads, gpus, policies), including hostile strings: a trace folder
whose name holds a quote, a backslash, a newline, a tab and a control
byte, and a what-if series file whose name holds a quote and a backslash
(options refuse control bytes), must come back, parsed, as the same bytes.

usage: check_json_outputs.py SOURCE_DIR WATTSIM_BINARY LIBWATTSIM_SO
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC, CLI, LIB = (os.path.abspath(a) for a in sys.argv[1:4])
FIX = os.path.join(SRC, "tests", "data", "bad", "_fixture")
EM = os.path.join(SRC, "tests", "data", "bad", "ok_whatif_carbon_em_json", "em.json")
HOSTILE = 'h"q\\b\nn\tt\x01c'     # a trace folder's name
HOSTILE_SERIES = 'h"q\\b'          # options refuse control bytes: a series file's
failures = []
checked = 0


def strict(text, what):
    """Parse text as strict JSON; return the value or None (recorded)."""
    global checked

    def bad_constant(name):
        raise ValueError(f"non-standard constant {name}")
    try:
        value = json.loads(text, parse_constant=bad_constant)   # strict=True: no raw control bytes
    except ValueError as e:
        failures.append(f"{what}: not strict JSON: {e}")
        return None
    checked += 1
    return value


def find_strings(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            out.append(k)
            find_strings(x, out)
    elif isinstance(v, list):
        for x in v:
            find_strings(x, out)
    return out


def expect_hostile(v, what, name=HOSTILE_SERIES):
    if v is not None and not any(name in s for s in find_strings(v, [])):
        failures.append(f"{what}: the hostile name does not come back intact")


tmp = tempfile.mkdtemp(prefix="ws-json-")
try:
    # a trace folder and a series file with hostile names
    hdir = os.path.join(tmp, HOSTILE)
    shutil.copytree(FIX, hdir)
    hem = os.path.join(tmp, HOSTILE_SERIES + ".json")
    shutil.copy(EM, hem)
    cfg = os.path.join(tmp, "sweep.yaml")
    with open(cfg, "w") as f:
        f.write("gpu: g1\nworkload: w\nseeds: 1\nrecurrences: 4\nbso: [zeus, default]\nplo: [jit]\n")
    env = dict(os.environ, WATTSIM_QUIET="1")
    common = ["--traces", hdir, "--catalogue", os.path.join(hdir, "workloads.yaml"),
              "--gpu", "g1", "--workload", "w"]
    whatif = ["--carbon", hem, "--objective", "carbon"]

    def cli(args, what, hostile=True, outfile=None):
        r = subprocess.run([CLI] + args, cwd=tmp, env=env, capture_output=True)
        if r.returncode not in (0, 1):
            failures.append(f"{what}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
            return None
        text = open(outfile, "rb").read() if outfile else r.stdout
        v = strict(text.decode(), what)
        if hostile:
            expect_hostile(v, what)
        return v

    cli(["simulate"] + common + whatif + ["--format", "json"], "simulate")
    cli(["simulate"] + common + ["--beta", "inf", "--format", "json"], "simulate --beta inf", False)
    cli(["pareto"] + common + whatif + ["--format", "json"], "pareto")
    cli(["plan"] + common + whatif + ["--every", "24h", "--defer", "6h", "--seeds", "1",
                                      "--format", "json"], "plan")
    out = os.path.join(tmp, "run")
    cli(["run", os.path.join(hdir, "run.yaml"), "--traces", hdir, "--catalogue",
         os.path.join(hdir, "workloads.yaml"), "--carbon", hem, "--objective", "carbon",
         "--format", "json", "--out", out], "run (stdout)")
    if os.path.exists(os.path.join(out, "summary.json")):
        strict(open(os.path.join(out, "summary.json")).read(), "run's summary.json")
    else:
        failures.append("run wrote no summary.json")
    out = os.path.join(tmp, "sweep")
    subprocess.run([CLI, "sweep", cfg, "--traces", hdir, "--catalogue",
                    os.path.join(hdir, "workloads.yaml"), "--carbon", hem, "--objective",
                    "carbon", "--out", out], cwd=tmp, env=env, capture_output=True)
    if os.path.exists(os.path.join(out, "sweep.json")):
        v = strict(open(os.path.join(out, "sweep.json")).read(), "sweep.json")
        expect_hostile(v, "sweep.json")
    else:
        failures.append("sweep wrote no sweep.json")
    gcsv = os.path.join(tmp, "groups.csv")
    subprocess.run([CLI, "groups", "synth", "--catalogue", os.path.join(SRC, "configs",
                    "workloads.yaml"), "--groups", "2", "--jobs-per-group", "2", "--datasets",
                    "cifar100", "--out", gcsv], cwd=tmp, env=env, capture_output=True)
    cli(["groups", "replay", "--traces", os.path.join(SRC, "traces", "fetched", "zeus-nsdi23"),
         "--catalogue", os.path.join(SRC, "configs", "workloads.yaml"), "--trace", gcsv,
         "--format", "json"], "groups replay", False)
    # wattsim-bench --json, the engine alone on a few seeds
    bench = os.path.join(os.path.dirname(CLI), "wattsim-bench")
    bjson = os.path.join(tmp, "bench.json")
    r = subprocess.run([bench, "--seeds", "2", "--no-sweeps", "--no-readers", "--traces",
                        os.path.join(SRC, "traces", "fetched", "zeus-nsdi23"), "--catalogue",
                        os.path.join(SRC, "configs", "workloads.yaml"), "--json", bjson],
                       cwd=tmp, env=env, capture_output=True)
    if r.returncode or not os.path.exists(bjson):
        failures.append(f"wattsim-bench: exit {r.returncode}")
    else:
        strict(open(bjson).read(), "wattsim-bench --json")
    v = cli(["trace", "check", hdir, "--format", "json"], "trace check")
    expect_hostile(v, "trace check", HOSTILE)

    # the library API
    lib = ctypes.CDLL(LIB)
    lib.ws_api_call_new.restype = ctypes.c_void_p
    lib.ws_api_call_new.argtypes = [ctypes.c_char_p]
    lib.ws_api_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.ws_api_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_void_p)]
    lib.ws_api_error.restype = ctypes.c_char_p
    lib.ws_api_error.argtypes = [ctypes.c_void_p]
    lib.ws_api_free.argtypes = [ctypes.c_void_p]
    lib.ws_api_call_free.argtypes = [ctypes.c_void_p]

    def api(command, options, what, hostile=HOSTILE_SERIES):
        c = lib.ws_api_call_new(command.encode())
        for k, val in options:
            if lib.ws_api_set(c, k.encode(), val.encode()) != 0:
                failures.append(f"{what}: option {k}: {lib.ws_api_error(c)}")
        out = ctypes.c_void_p()
        rc = lib.ws_api_run(c, None, ctypes.byref(out))
        if rc != 0 or not out.value:
            failures.append(f"{what}: status {rc}: {lib.ws_api_error(c)}")
        else:
            v = strict(ctypes.string_at(out.value).decode(), what)
            if hostile:
                expect_hostile(v, what, hostile)
            lib.ws_api_free(out)
        lib.ws_api_call_free(c)

    aopt = [("traces", hdir), ("catalogue", os.path.join(hdir, "workloads.yaml")),
            ("gpu", "g1"), ("workload", "w"), ("carbon", hem), ("objective", "carbon")]
    api("simulate", aopt, "api simulate")
    api("pareto", aopt, "api pareto")
    api("plan", aopt + [("every", "24h"), ("seeds", "1")], "api plan")
    api("run", aopt[:2] + aopt[4:] + [("config", os.path.join(hdir, "run.yaml"))], "api run")
    api("sweep", aopt[:2] + aopt[4:] + [("config", cfg)], "api sweep")
    api("trace-check", [("dir", hdir)], "api trace-check", HOSTILE)
    api("workloads", [("catalogue", os.path.join(hdir, "workloads.yaml"))], "api workloads",
        HOSTILE)
    api("gpus", [("traces", hdir)], "api gpus", HOSTILE)
    api("policies", [], "api policies", None)
    # trace import (python/tests/test_api.py's trapezoid; test_import.c's runs)
    ep = os.path.join(hdir, "epochs.csv")
    with open(ep, "w") as f:
        f.write("dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
                "d,n,o,8,200,1,2026-01-15T00:00:04.500,2026-01-15T00:00:08\n"
                "d,n,o,8,250,1,2026-01-15T00:00:10,2026-01-15T00:00:20\n")
    nv = os.path.join(hdir, "nv.csv")
    with open(nv, "w") as f:
        f.write("timestamp, index, power.draw [W], power.limit [W]\n")
        for t in range(21):
            f.write("2026/01/15 00:00:%02d.000, 0, 150.00 W, %d.00 W\n" % (t, 200 if t < 10 else 250))
    runs = os.path.join(hdir, "m.csv")
    with open(runs, "w") as f:
        f.write("dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric\n"
                "d,n,o,8,0.1,1,1,0.5\nd,n,o,8,0.1,1,2,0.9\nd,n,o,16,0.1,1,1,0.91\n")
    api("trace-import-power", [("gpu", "g"), ("epochs", ep), ("nvidia-smi", nv)],
        "api trace-import-power", HOSTILE)
    api("trace-import-train", [("runs", runs), ("target-metric", "0.9")],
        "api trace-import-train", HOSTILE)
    # a run whose simulation fails, with its history kept
    fail = os.path.join(tmp, "fail.yaml")
    with open(fail, "w") as f:
        f.write("gpu: g1\nworkload: w\nseed: 2\nrecurrences: 4\n")
    api("run", aopt[:2] + [("config", fail), ("keep-history", "1")], "api run (failed)", None)
finally:
    shutil.rmtree(tmp)

for f in failures:
    print("FAIL:", f)
print(f"{checked} JSON documents parsed strictly, {len(failures)} failures")
sys.exit(1 if failures else 0)
