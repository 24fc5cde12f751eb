"""The three ways to use the package: the build tree (every other test),
`cmake --install` (the library found relative to the package), and
`pip install ./python` offline into a virtual environment."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, HERE

PY = os.path.dirname(HERE)
CODE = ("import wattsim, wattsim._lib as l; df = wattsim.simulate(workload='cifar100', seed=1,"
        " recurrences=3); print(l.lib().path); print(len(df))")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("WATTSIM_LIB", "PYTHONPATH")}
    env.update(extra)
    return env


def test_cmake_install(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix), "--component",
                    "Unspecified"], check=True, capture_output=True)
    init = list(prefix.glob("lib*/**/wattsim/_installed.py"))
    assert len(init) == 1
    out = subprocess.run([sys.executable, "-c", CODE], check=True, capture_output=True,
                         text=True, cwd=tmp_path,
                         env=clean_env(PYTHONPATH=str(init[0].parent.parent))).stdout.split()
    assert out[0].startswith(str(prefix)) and out[1] == "3"


@pytest.mark.skipif(subprocess.run([sys.executable, "-m", "venv", "--help"],
                                   capture_output=True).returncode != 0,
                    reason="no venv module (Debian: apt-get install python3-venv)")
def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, capture_output=True)
    src = tmp_path / "src"
    shutil.copytree(PY, src, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", str(src)],
                       capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    out = subprocess.run([str(venv / "bin" / "python"), "-c", CODE], check=True,
                         capture_output=True, text=True, cwd=tmp_path,
                         env=clean_env(WATTSIM_LIB=os.path.join(BUILD, "sim", "libwattsim.so"))
                         ).stdout.split()
    assert out == [os.path.join(BUILD, "sim", "libwattsim.so"), "3"]


@pytest.mark.skipif(subprocess.run([sys.executable, "-m", "venv", "--help"],
                                   capture_output=True).returncode != 0,
                    reason="no venv module (Debian: apt-get install python3-venv)")
def test_cmake_install_prefix_given_at_install_time(tmp_path):
    """`cmake --install --prefix P` puts the package in P's site folder as
    /usr/bin/python3's sysconfig names it for P (P/lib/python3.X/site-packages),
    whatever prefix the build was configured with; a venv made at P finds
    it with no PYTHONPATH, and the tutorial notebook runs there."""
    import json
    import sysconfig
    from test_examples import notebook_cells
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, capture_output=True)
    r = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(venv), "--component",
                        "Unspecified"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    site = sysconfig.get_path("purelib", "posix_prefix", {"base": str(venv),
                                                         "platbase": str(venv)})
    assert os.path.isfile(os.path.join(site, "wattsim", "_installed.py"))
    # the bridge finds that package through python-site beside it (a
    # py: policy run by the installed wattsim imports wattsim._bridge)
    bridges = venv / "lib" / "wattsim" / "bridges"
    rel = (bridges / "python-site").read_text().strip()
    assert os.path.realpath(bridges / rel) == os.path.realpath(site), rel
    assert os.path.isfile(os.path.join(bridges, rel, "wattsim", "_bridge.py"))
    cells, code = notebook_cells()
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], input=json.dumps(cells),
                       capture_output=True, text=True, cwd=tmp_path,
                       env=clean_env(MPLCONFIGDIR=str(tmp_path / "mpl"), MPLBACKEND="Agg"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "frontier of librispeech on v100: 9 of 105 knobs" in r.stdout
    assert "plan: set bs 48 at 150 W" in r.stdout
    assert r.stdout.splitlines()[-1] == "figures 3"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", CODE], check=True,
                         capture_output=True, text=True, cwd=tmp_path,
                         env=clean_env()).stdout.split()
    assert out == [str(venv / "lib" / "libwattsim.so"), "3"]
