"""`wattsim trace ...` as functions: import_power, import_train, check."""
from ._run import _command


def check(dir, **options):
    """`wattsim trace check DIR`: one row per GPU x workload x batch size
    (runs, reached, reach_rate, power_limits); the whole report in
    attrs["report"]."""
    return _command("trace-check", dict(options, dir=dir), table="check")


def import_power(*, gpu, epochs=None, out=None, **options):
    """`wattsim trace import power`: the rows of summary_power_GPU.csv
    (written into `out` only when given); warnings in attrs["warnings"].
    Takes the command's options by their names (gpu_cycle=3, columns=...,
    window="epoch_*", job="d/n/o", batch_size=..., steps_per_epoch=...,
    profile_steps=...); `epochs` may be left out for a GlobalPowerLimitOptimizer
    profile. A node of mixed GPU models: its MaxPower in attrs["max_power"]."""
    return _command("trace-import-power", dict(options, gpu=gpu, epochs=epochs, out=out),
                    table="rows")


def import_train(*, runs, target_metric, out=None, **options):
    """`wattsim trace import train`: the rows of summary_train.csv."""
    return _command("trace-import-train",
                    dict(options, runs=runs, target_metric=target_metric, out=out), table="rows")
