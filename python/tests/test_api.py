"""The package against the CLI: the same numbers for the same plan, the
same one-line messages for the bad-input catalogue, provenance that
matches the files read."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import pandas as pd
import pytest

import wattsim
from conftest import CLI, HERE, SRC, TRACES

BAD = os.path.join(SRC, "tests", "data", "bad")


def cli_json(*args):
    out = subprocess.run([CLI, *args, "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def test_simulate_equals_cli():
    df = wattsim.simulate(gpu="v100", workload="squad", eta=0.3, seed=7, recurrences=30,
                          power_cap=200)
    ref = cli_json("simulate", "--gpu", "v100", "--workload", "squad", "--eta", "0.3",
                   "--seed", "7", "--recurrences", "30", "--power-cap", "200")
    assert df.to_dict("records") == ref["history"]
    for k in ("energy_j", "time_s", "cost", "final_bs", "final_pl", "runs"):
        assert df.attrs[k] == ref[k]
    assert df.attrs["provenance"]["whatif"] == "power cap 200 W"


def test_pareto_equals_cli():
    df = wattsim.pareto(gpu="a40", workload="imagenet", eta=0.5)
    ref = cli_json("pareto", "--gpu", "a40", "--workload", "imagenet", "--eta", "0.5")
    # null (a knob that never reached the target) is NaN in a DataFrame
    # in the one vocabulary (docs/python.md, Columns): marks bool, the
    # knob's counts and mean epochs named apart from a run's
    want = pd.DataFrame(ref["knobs"]).rename(columns={"reached": "runs_reached",
                                                      "epochs": "epochs_mean"})
    for c in ("frontier", "default", "best", "jit"):
        want[c] = want[c].astype(bool)
    pd.testing.assert_frame_equal(df, want)
    assert df["tta_s"].isna().any()
    assert df["frontier"].sum() == sum(k["frontier"] for k in ref["knobs"]) > 0


def test_plan_equals_cli():
    df = wattsim.plan(gpu="v100", workload="cifar100", eta=0.5, seeds=4)
    ref = cli_json("plan", "--gpu", "v100", "--workload", "cifar100", "--eta", "0.5",
                   "--seeds", "4")
    assert df.attrs["recommended"] == ref["recommended"]
    assert list(df["policy"]) == [p["policy"] for p in ref["policies"]]
    assert list(df["break_even"]) == [p["break_even"]["median"] for p in ref["policies"]]


def test_sweep_equals_cli(tmp_path):
    res = wattsim.sweep(gpu="v100", workload=["cifar100", "squad"], eta=[0.3, 0.7],
                        seed=range(1, 4), threads=2, policies="zeus:jit,gts:jit")
    cfg = tmp_path / "plan.yaml"
    cfg.write_text("gpu: v100\nworkload: [cifar100, squad]\neta: [0.3, 0.7]\nseed: 1..3\n")
    subprocess.run([CLI, "sweep", str(cfg), "--threads", "2", "--policies", "zeus:jit,gts:jit",
                    "--out", str(tmp_path / "o"), "--no-plot", "--quiet"],
                   check=True, capture_output=True)
    with open(tmp_path / "o" / "sweep.json") as f:
        ref = json.load(f)
    assert len(res.cells) == len(ref["cells"]) == 16
    for row, cell in zip(res.cells.to_dict("records"), ref["cells"]):
        assert (row["policy"], row["workload"], row["eta"]) == (cell["policy"], cell["workload"],
                                                                cell["eta"])
        assert row["energy_j"] == cell["energy_j"]["mean"]
        assert [row["cost_lo"], row["cost_hi"]] == cell["cost"]["ci95"]


def test_history_csv_reads_back_to_the_bit():
    """A history's numbers come through CSV (%.17g): read back, they are the
    simulation's to the last bit, as simulate's JSON gives them (Python's
    json and float() round correctly; pandas' default CSV parser does not
    always: 50045.28998146072 for 50045.289981460715, seen on cifar100)."""
    res = wattsim.sweep(gpu="v100", workload=["cifar100"], eta=0.5, seed=1,
                        keep_history=True, policies="zeus:jit")
    h = res.history[res.history.policy == "zeus+jit"]
    df = wattsim.simulate(gpu="v100", workload="cifar100", eta=0.5, seed=1)
    assert len(h) == len(df) > 10
    assert h.energy_j.tolist() == df.energy_j.tolist()
    assert h.time_s.tolist() == df.time_s.tolist()
    assert h.cost.tolist() == df.cost.tolist()


def test_provenance_names_the_files_read():
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2)
    p = df.attrs["provenance"]
    assert p["api"] == wattsim.API_VERSION and p["wattsim"] == wattsim.version()[0]
    # the three versions, as the CLI says them (a seed's draws depend on the streams')
    v = subprocess.run([CLI, "--version"], check=True, capture_output=True, text=True).stdout
    assert v == "wattsim %s (policy ABI %s, random streams %d)\n" % (
        p["wattsim"], p["policy_abi"], p["random_streams"])
    files = p["traces"]["files"]
    for name in ("summary_train.csv", "summary_power_v100.csv"):
        path = os.path.join(p["traces"]["folder"], name)
        with open(path, "rb") as f:
            assert files[name] == hashlib.sha256(f.read()).hexdigest()
    assert p["policies"][0]["policy"] == "zeus+jit"
    assert p["options"] == [["gpu", "v100"], ["workload", "cifar100"], ["seed", "1"],
                            ["recurrences", "2"]]


def test_notes_are_warnings_and_attrs_not_the_processs_stderr(capfd):
    """A note the CLI prints on stderr (here: a power cap moved the default
    knob) reaches a notebook's cell: a WattsimWarning and attrs["notes"],
    and the library writes nothing on fd 2 (a notebook shows only Python's
    own sys.stderr)."""
    with pytest.warns(wattsim.WattsimWarning) as w:
        df = wattsim.simulate(gpu="v100", workload="squad", seed=1, recurrences=2,
                              power_cap=180)
    note = ("wattsim: note: squad on v100: power cap 180 W: the default knob is now b0 32"
            " at 175 W (was 250 W)")
    assert df.attrs["notes"] == [note] and [str(x.message) for x in w] == [note]
    cli = subprocess.run([CLI, "simulate", "--gpu", "v100", "--workload", "squad", "--seed",
                          "1", "--recurrences", "2", "--power-cap", "180", "--traces", TRACES],
                         capture_output=True, text=True)
    assert cli.returncode == 0 and cli.stderr == note + "\n"
    out, err = capfd.readouterr()
    assert err == ""
    # none: an empty list, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wattsim.simulate(gpu="v100", workload="squad", seed=1,
                                recurrences=2).attrs["notes"] == []


def test_provenance_hashes_the_series_read():
    """A carbon or price series is named with its sha256, as the traces
    are (hashed here by hashlib)."""
    series = os.path.join(SRC, "traces", "fetched", "carbon", "miso_mason_city_2022-10.csv")
    if not os.path.exists(series):
        pytest.skip("no carbon series fetched (scripts/fetch-traces)")
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2, carbon=series)
    with open(series, "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    assert df.attrs["provenance"]["series"] == {"carbon": {"path": series, "sha256": want}}
    assert "series" not in wattsim.simulate(gpu="v100", workload="cifar100", seed=1,
                                            recurrences=2).attrs["provenance"]
    # a constant price is no file: only the carbon series is hashed
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2,
                          price=0.12, carbon=series)
    assert df.attrs["provenance"]["series"] == {"carbon": {"path": series, "sha256": want}}


def _history(path, first_hour, n, kind="lifecycle"):
    """An Electricity Maps API history (GET /v3/carbon-intensity/history)
    of n hourly entries from 2022-10-20 plus first_hour, 300 + the hour."""
    import datetime
    t0 = datetime.datetime(2022, 10, 20, tzinfo=datetime.timezone.utc)
    h = [{"zone": "US-MIDW-MISO", "carbonIntensity": 300 + k,
          "datetime": (t0 + datetime.timedelta(hours=k)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
          "emissionFactorType": kind, "isEstimated": False, "estimationMethod": None}
         for k in range(first_hour, first_hour + n)]
    with open(path, "w") as f:
        json.dump({"zone": "US-MIDW-MISO", "history": h}, f)
    return path


def test_carbon_files_are_joined_and_each_is_hashed(tmp_path):
    """carbon=[a, b] joins Zeus's daily history files as --carbon a
    --carbon b does; the provenance lists each file with its sha256;
    carbon_basis is the CLI's --carbon-basis."""
    a = _history(str(tmp_path / "day1.json"), 0, 24)
    b = _history(str(tmp_path / "day2.json"), 22, 24)
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2,
                          carbon=[b, a])
    want = []
    for p in (b, a):
        with open(p, "rb") as f:
            want.append(hashlib.sha256(f.read()).hexdigest())
    assert df.attrs["provenance"]["series"] == {"carbon": {"path": [b, a], "sha256": want}}
    with pytest.raises(wattsim.InputError, match="emissionFactorType"):
        wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2, carbon=a,
                         carbon_basis="direct")
    c = _history(str(tmp_path / "day3.json"), 50, 24)
    with pytest.raises(wattsim.InputError, match="a gap of 4 h between the files"):
        wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2,
                         carbon=[a, b, c])


def test_plan_demand_charge_needs_a_tariff():
    """plan's demand_charge is the CLI's --demand-charge."""
    with pytest.raises(wattsim.InputError, match="demand charges come with an OpenEI tariff"):
        wattsim.plan(gpu="v100", workload="cifar100", recurrences=2, seeds=1, price=0.1,
                     demand_charge="include")


def test_simulate_carries_each_policys_identity():
    """simulate's attrs and --format json name each policy as sweep.csv
    does: parameters as resolved, the sha256 of its file (hashed here by
    hashlib), and where it came from ("built-in" for the policy folder)."""
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2,
                          bso_param=["window=3"])
    a = df.attrs
    assert a["bso_params"] == "rounds=2,window=3" and a["plo_params"] == ""
    assert a["bso_file"] == "built-in" and a["plo_file"] == "built-in"
    pol = a["provenance"]["policies"][0]
    for side in ("bso", "plo"):
        with open(pol[side + "_origin"], "rb") as f:
            assert a[side + "_sha256"] == hashlib.sha256(f.read()).hexdigest()
    j = cli_json("simulate", "--gpu", "v100", "--workload", "cifar100", "--recurrences", "2",
                 "--bso-param", "window=3")
    for k in ("bso_params", "bso_sha256", "bso_file", "plo_params", "plo_sha256", "plo_file"):
        assert j[k] == a[k]


def _unescape(word):
    """The catalogue's \\xHH (a byte) and \\\\ in a word; bytes that are
    not UTF-8 travel as surrogates (os.fsencode's convention)."""
    b = re.sub(rb"\\x([0-9A-Fa-f]{2})|\\\\",
               lambda m: bytes([int(m.group(1), 16)]) if m.group(1) else b"\\",
               word.encode())
    return b.decode("utf-8", "surrogateescape")


# The CLI's output options, dropped from a case (the functions write no
# file): the option and how many values it takes.
OUTPUT_OPTIONS = {"--out": 1, "--no-plot": 0, "--quiet": 0}
# Cases about the output folder, which the library does not write: a
# config's `out:` is not read, an existing folder is no error.
LIBRARY_ACCEPTS = {"yaml_out_absolute", "yaml_out_dotdot", "run_output_exists",
                   "plan_out_exists"}


def _catalogue_cases():
    """The catalogue's cases a function can run: pareto/simulate/plan/run/
    sweep/trace check, no generated input, no environment."""
    for case in sorted(os.listdir(BAD)):
        d = os.path.join(BAD, case)
        if not os.path.exists(os.path.join(d, "expected")) or os.path.exists(
                os.path.join(d, "gen")):
            continue
        with open(os.path.join(d, "cmd")) as f:
            words = [_unescape(w) for w in f.read().split()]
        if any(w in ("--format", "--plot", "--resume", "--shard", "--merge")
               or "=" in w.split("-")[0] for w in words):
            continue                  # the CLI's own options, environment
        kept = []
        while words:
            w = words.pop(0)
            if w in OUTPUT_OPTIONS:
                del words[:OUTPUT_OPTIONS[w]]
            else:
                kept.append(w)
        words = kept
        if case in LIBRARY_ACCEPTS:
            continue
        if words[:2] in (["wattsim", c] for c in ("pareto", "simulate", "plan", "run",
                                                   "sweep")) or \
                words[:3] == ["wattsim", "trace", "check"]:
            yield case, words


CASES = list(_catalogue_cases())


@pytest.mark.parametrize("case,words", CASES, ids=[c for c, _ in CASES])
def test_bad_input_catalogue(case, words, tmp_path, monkeypatch):
    shutil.copytree(os.path.join(BAD, "_fixture"), tmp_path, dirs_exist_ok=True)
    shutil.copytree(os.path.join(BAD, case), tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    with open(os.path.join(BAD, case, "expected")) as f:
        expected = f.read().rstrip("\n").replace("{dir}", os.path.realpath(tmp_path))
    # "wattsim: MSG" is MSG; a usage error "wattsim CMD: MSG (see 'wattsim
    # CMD --help')" is "CMD: MSG" (a function has no --help to point to)
    assert expected.startswith("wattsim")
    expected = re.sub(r" \(see 'wattsim [a-z ]+ --help'\)$", "", expected)
    expected = expected[len("wattsim: "):] if expected.startswith("wattsim: ") \
        else expected[len("wattsim "):]
    if words[1] == "trace":
        fn, args, opts = wattsim.trace.check, words[3:], {}
        opts["dir"] = args.pop(0)
    else:
        fn, args, opts = getattr(wattsim, words[1]), words[2:], {}
    config = []                       # run and sweep: the CONFIG operand
    while args:
        k = args.pop(0)
        if not k.startswith("--"):
            assert words[1] in ("run", "sweep") and not config
            config.append(k)
            continue
        k = k[2:].replace("-", "_")
        v = args.pop(0) if args and not args[0].startswith("--") else True
        if k in opts:                 # a repeated option (--set): one value each
            opts[k] = (opts[k] if isinstance(opts[k], list) else [opts[k]]) + [v]
        else:
            opts[k] = v
    with pytest.raises(wattsim.InputError) as e:
        if words[1] == "run":
            fn(*config, **opts)
        else:
            fn(**dict(opts, config=config[0]) if config else opts)
    assert str(e.value) == expected


def test_catalogue_cases_found():
    commands = {w[1] for _, w in CASES}
    assert commands == {"pareto", "simulate", "plan", "run", "sweep", "trace"}
    assert len(CASES) >= 180


def test_input_errors_name_the_option():
    with pytest.raises(wattsim.InputError, match=r"^--eta must be"):
        wattsim.simulate(workload="cifar100", eta=2)
    with pytest.raises(wattsim.InputError, match="unknown workload 'nope'"):
        wattsim.pareto(workload="nope")
    with pytest.raises(TypeError, match="unknown option 'etaa'"):
        wattsim.simulate(workload="cifar100", etaa=0.5)


EPOCHS = ("dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
          "d,n,o,8,200,1,2026-01-15T00:00:04.500,2026-01-15T00:00:08\n"
          "d,n,o,8,200,2,2026-01-15T00:00:01,2026-01-15T00:00:02.5\n"
          "d,n,o,8,250,1,2026-01-15T00:00:10,2026-01-15T00:00:20\n")


def test_trace_import_power_and_check(tmp_path):
    """tests/test_import.c's trapezoid: 100 W to 4 s, 200 W from 6 s, then
    its mirror image; the knob means by hand: (8, 200) 2.5 s at 158.75 W,
    (8, 250) 10 s at 150 W (limits the log's power.limit column agrees with,
    and no GPU above its limit)."""
    (tmp_path / "epochs.csv").write_text(EPOCHS)
    rows = ["timestamp, index, power.draw [W], power.limit [W]"]
    for t in range(21):           # the trapezoid and its mirror image (20 - t)
        m = 20 - t if t > 10 else t
        w = 100 if m <= 4 else 200 if m >= 6 else 100 + 50 * (m - 4)
        rows.append("2026/01/15 00:00:%02d.000, 0, %.2f W, %d.00 W" % (t, w, 200 if t < 10 else 250))
    (tmp_path / "nv.csv").write_text("\n".join(rows) + "\n")
    df = wattsim.trace.import_power(gpu="g", epochs=str(tmp_path / "epochs.csv"),
                                    nvidia_smi=str(tmp_path / "nv.csv"),
                                    out=str(tmp_path / "traces"))
    got = {(r["batch_size"], r["power_limit"]): (r["time_per_epoch"], r["average_power"])
           for r in df.to_dict("records")}
    assert got[(8, 200)] == pytest.approx((2.5, 158.75), rel=1e-9)
    assert got[(8, 250)] == pytest.approx((10, 150), rel=1e-9)
    assert df.attrs["written"] == str(tmp_path / "traces" / "summary_power_g.csv")
    subprocess.run([CLI, "trace", "import", "power", "--gpu", "g", "--epochs",
                    str(tmp_path / "epochs.csv"), "--nvidia-smi", str(tmp_path / "nv.csv"),
                    "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    assert (tmp_path / "traces" / "summary_power_g.csv").read_bytes() == \
        (tmp_path / "cli" / "summary_power_g.csv").read_bytes()
    with pytest.raises(wattsim.InputError, match=r"summary_power_g.csv: exists; pass --force"):
        wattsim.trace.import_power(gpu="g", epochs=str(tmp_path / "epochs.csv"),
                                   nvidia_smi=str(tmp_path / "nv.csv"),
                                   out=str(tmp_path / "traces"))
    t = wattsim.trace.check(TRACES)
    assert set(t["gpu"]) == {"a40", "p100", "rtx6000", "v100"}
    assert {"bs", "runs", "runs_reached", "power_limits"} <= set(t.columns)
    assert len(t.attrs["provenance"]["traces"]["files"]) == 5


TELEMETRY = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "telemetry")


def _epochs(tmp_path, text):
    (tmp_path / "epochs.csv").write_text(
        "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n" + text)
    return str(tmp_path / "epochs.csv")


def _knobs(df):
    return {(r["batch_size"], r["power_limit"]): (r["time_per_epoch"], r["average_power"])
            for r in df.to_dict("records")}


def test_trace_import_power_has_the_clis_options(tmp_path):
    """The library takes what `trace import power` takes (issue 28), with
    the numbers of tests/test_telemetry.c and test_import.c's by-hand
    cases: --gpu-cycle (3 GPUs without an index column, 600 W), --columns
    (a log without a header: 158.75 W and 150 W), --window as a pattern and
    as several names (200 W), a GlobalPowerLimitOptimizer profile with
    --job, --batch-size, --steps-per-epoch (150 W: 195 s, 278 W), and
    --profile-steps (80 steps: half as long an epoch); a mixed node's
    MaxPower (400 + 300 W)."""
    nv = os.path.join(TELEMETRY, "nvsmi_three_gpus_no_index.csv")
    ep = _epochs(tmp_path, "d,n,o,8,400,1,2026-01-15T00:00:02.2,2026-01-15T00:00:08.2\n")
    with pytest.raises(wattsim.InputError, match="pass --gpu-cycle N"):
        wattsim.trace.import_power(gpu="g", epochs=ep, nvidia_smi=nv)
    df = wattsim.trace.import_power(gpu="g", epochs=ep, nvidia_smi=nv, gpu_cycle=3)
    assert _knobs(df)[(8, 400)][1] == pytest.approx(600, rel=1e-12)
    assert list(df.attrs["gpus"]) == ["0", "1", "2"]
    with pytest.raises(wattsim.InputError, match=r"--gpu-cycle: expected the number of GPUs"):
        wattsim.trace.import_power(gpu="g", epochs=ep, nvidia_smi=nv, gpu_cycle="x")
    with pytest.raises(wattsim.InputError, match=r"--gpu-cycle: only nvidia-smi logs"):
        wattsim.trace.import_power(gpu="g", epochs=ep, dcgm=nv, gpu_cycle=3)

    ep = _epochs(tmp_path, EPOCHS.split("\n", 1)[1])
    rows = []
    for t in range(21):
        m = 20 - t if t > 10 else t
        w = 100 if m <= 4 else 200 if m >= 6 else 100 + 50 * (m - 4)
        rows.append("2026/01/15 00:00:%02d.000, 0, NVIDIA A100-SXM4-40GB, %.2f W, %d.00 W, 41"
                    % (t, w, 200 if t < 10 else 250))
    (tmp_path / "six.csv").write_text("\n".join(rows) + "\n")
    df = wattsim.trace.import_power(
        gpu="g", epochs=ep, nvidia_smi=str(tmp_path / "six.csv"),
        columns="timestamp,index,name,power.draw,power.limit,temperature.gpu")
    got = _knobs(df)
    assert got[(8, 200)] == pytest.approx((2.5, 158.75), rel=1e-9)
    assert got[(8, 250)] == pytest.approx((10, 150), rel=1e-9)

    zm = os.path.join(TELEMETRY, "zeusmon_epoch_names.csv")
    ep = _epochs(tmp_path, "d,n,o,8,300,1,1768435300,1768435360\n"
                           "d,n,o,8,300,2,1768435370,1768435430\n"
                           "d,n,o,8,300,3,1768435440,1768435500\n")
    for window in ("epoch_*", "epoch_1,epoch_2,epoch_3"):
        df = wattsim.trace.import_power(gpu="g", epochs=ep, zeus_monitor=zm, window=window)
        assert _knobs(df)[(8, 300)][1] == pytest.approx(200, rel=1e-12)
    with pytest.raises(wattsim.InputError, match=r"--window: only ZeusMonitor logs"):
        wattsim.trace.import_power(gpu="g", epochs=ep, nvidia_smi=nv, window="epoch_*")

    plo = os.path.join(TELEMETRY, "zeus_plo_2gpu.csv")
    df = wattsim.trace.import_power(gpu="g", zeus_monitor=plo, job="d/n/o", batch_size=128,
                                    steps_per_epoch=390, out=str(tmp_path / "plo"))
    got = _knobs(df)
    assert got[(128, 150)] == pytest.approx((195, 278), rel=1e-12)
    assert got[(128, 250)] == pytest.approx((156, 398), rel=1e-12)
    subprocess.run([CLI, "trace", "import", "power", "--gpu", "g", "--zeus-monitor", plo,
                    "--job", "d/n/o", "--batch-size", "128", "--steps-per-epoch", "390",
                    "--out", str(tmp_path / "plo-cli")], check=True, capture_output=True)
    assert (tmp_path / "plo" / "summary_power_g.csv").read_bytes() == \
        (tmp_path / "plo-cli" / "summary_power_g.csv").read_bytes()
    df = wattsim.trace.import_power(gpu="g", zeus_monitor=plo, job="d/n/o", batch_size=128,
                                    steps_per_epoch=390, profile_steps=80)
    assert _knobs(df)[(128, 150)] == pytest.approx((97.5, 278), rel=1e-12)
    with pytest.raises(wattsim.InputError, match=r"say what it measured"):
        wattsim.trace.import_power(gpu="g", zeus_monitor=plo)
    with pytest.raises(wattsim.InputError, match=r"--job: expected DATASET/NETWORK/OPTIMIZER"):
        wattsim.trace.import_power(gpu="g", zeus_monitor=plo, job="d/n", batch_size=128,
                                   steps_per_epoch=390)

    mixed = os.path.join(TELEMETRY, "nvsmi_mixed_two_limits.csv")
    ep = _epochs(tmp_path, "d,n,o,8,400,1,2026-01-15T00:00:02,2026-01-15T00:00:08\n")
    df = wattsim.trace.import_power(gpu="g", epochs=ep, nvidia_smi=mixed)
    assert df.attrs["max_power"] == 700
    assert _knobs(df)[(8, 400)][1] == pytest.approx(630, rel=1e-12)


def test_without_pandas():
    """The standard library alone: lists of dicts with attrs."""
    code = ("import sys; sys.modules['pandas'] = None; import wattsim;"
            "t = wattsim.simulate(workload='cifar100', seed=1, recurrences=3);"
            "print(type(t).__name__, len(t), sorted(t[0])[:3], t.attrs['provenance']['api'])")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.split()
    assert out == ["Table", "3", "['bs',", "'cost',", "'energy_j']", "1"]


def test_run_config_and_lists(tmp_path):
    cfg = tmp_path / "r.yaml"
    cfg.write_text("workload: cifar100\nrecurrences: 3\nseed: [1, 2]\n")
    cells, hist = wattsim.run(str(cfg))
    assert list(cells["seed"]) == [1, 2] and len(hist) == 6
    one = wattsim.simulate(workload="cifar100", recurrences=3, seed=2)
    assert list(hist[hist.seed == 2]["energy_j"]) == list(one["energy_j"])
    assert not any(tmp_path.glob("out*"))               # nothing written
    bso, plo = wattsim.policies_list()
    assert {"zeus", "gts", "default"} <= set(bso["name"]) and "jit" in set(plo["name"])
    assert wattsim.gpus() == ["a40", "p100", "rtx6000", "v100"]
    assert len(wattsim.workloads()) == 6


def test_workloads_name_the_metric_and_which_way_it_improves(tmp_path):
    """`wattsim list workloads` shows the target as "WER <= 40"; the
    package's table has the same two facts, as str columns ("" where the
    catalogue does not say, never NaN)."""
    w = wattsim.workloads().set_index("workload")
    assert (w.loc["librispeech", "metric"], w.loc["librispeech", "better"]) == ("WER", "lower")
    assert (w.loc["cifar100", "metric"], w.loc["cifar100", "better"]) == ("accuracy", "higher")
    assert (w.loc["squad", "metric"], w.loc["squad", "better"]) == ("F1", "higher")
    assert str(w["metric"].dtype) == str(w["better"].dtype) == "object"
    cat = tmp_path / "workloads.yaml"
    cat.write_text("gpus: [v100]\nworkloads:\n"
                   "  a: {dataset: cifar100, network: shufflenetv2, optimizer: adadelta,\n"
                   "      target_metric: 0.6, max_epochs: 100, b0: 1024}\n"
                   "  b: {dataset: cifar100, network: shufflenetv2, optimizer: adadelta,\n"
                   "      target_metric: 0.6, max_epochs: 100, b0: 1024, metric: top-1,\n"
                   "      better: higher}\n")
    w = wattsim.workloads(catalogue=str(cat))
    assert list(w["metric"]) == ["", "top-1"] and list(w["better"]) == ["", "higher"]
    assert str(w["metric"].dtype) == "object"
    # the CLI's table says the same
    out = subprocess.run([CLI, "list", "workloads",
                          "--catalogue", str(cat)], capture_output=True, text=True, check=True)
    assert re.search(r"^b .* top-1 >= 0\.6 ", out.stdout, re.M)


def test_package_version_is_the_library_version():
    """The package and the library it binds ship together (cmake --install
    installs both): one version, which moves with every ABI or stream
    change (docs/writing-a-policy.md)."""
    assert wattsim.__version__ == wattsim.version()[0]
    with open(os.path.join(SRC, "python", "pyproject.toml")) as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == wattsim.__version__
    with open(os.path.join(SRC, "python", "_build", "wattsim_build.py")) as f:
        assert '"wattsim", "%s"' % wattsim.__version__ in f.read()


def test_numpy_values_as_options():
    """What a notebook computes options with: numpy scalars (np.float64 is a
    float whose repr is "np.float64(0.3)" from numpy 2, as the subclass
    here), numpy arrays and pandas Series as axes; the same runs as the
    plain values give."""
    import numpy as np

    class F(float):                  # numpy 2's np.float64 repr
        def __repr__(self):
            return "np.float64(%s)" % float.__repr__(self)

    ref = wattsim.simulate(workload="squad", eta=0.3, seed=7, recurrences=5)
    for eta, seed in ((F(0.3), 7), (np.float64(0.3), np.int64(7))):
        df = wattsim.simulate(workload="squad", eta=eta, seed=seed, recurrences=5)
        pd.testing.assert_frame_equal(df, ref, check_exact=True)
        assert df.attrs["eta"] == 0.3 and df.attrs["seed"] == 7
    ref = wattsim.sweep(workload=["squad"], eta=[0.3, 0.7], seed=[1, 2], beta=[2])
    got = wattsim.sweep(workload=np.array(["squad"]), eta=np.linspace(0.3, 0.7, 2),
                        seed=np.arange(1, 3), beta=pd.Series([2.0]))
    pd.testing.assert_frame_equal(got.cells, ref.cells, check_exact=True)
    assert len(ref.cells) == 6 and list(ref.cells["eta"][:2]) == [0.3, 0.7]
