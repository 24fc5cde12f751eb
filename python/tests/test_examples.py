"""python/examples/tutorial.py runs as documented and draws its figures."""
import os
import subprocess
import sys

from conftest import HERE

EXAMPLE = os.path.join(os.path.dirname(HERE), "examples", "tutorial.py")


def test_tutorial_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE), MPLCONFIGDIR=str(tmp_path / "mpl"))
    r = subprocess.run([sys.executable, EXAMPLE, str(tmp_path / "out")], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "frontier of librispeech on v100: 9 of 105 knobs" in r.stdout
    assert "py-gaussiants+py-jit" in r.stdout and "py-epsilongreedy+py-jit" in r.stdout
    assert "plan: set bs 48 at 150 W" in r.stdout
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    for png in ("frontier.png", "policies.png", "plan.png"):
        assert (tmp_path / "out" / png).stat().st_size > 10000


def test_tutorial_notebook(tmp_path):
    """The same as a notebook, executed by Debian's jupyter-nbconvert (and
    python3-ipykernel) when they are installed."""
    import shutil
    import pytest
    if not shutil.which("jupyter-nbconvert"):
        pytest.skip("no jupyter-nbconvert (Debian: apt-get install jupyter-nbconvert"
                    " python3-ipykernel): the notebook is not executed")
    nb = os.path.join(os.path.dirname(HERE), "examples", "tutorial.ipynb")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE), MPLCONFIGDIR=str(tmp_path / "mpl"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    r = subprocess.run(["jupyter-nbconvert", "--to", "notebook", "--execute",
                        "--ExecutePreprocessor.timeout=600", "--output-dir", str(tmp_path), nb],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    import json
    with open(tmp_path / "tutorial.ipynb") as f:
        cells = json.load(f)["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 3
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "frontier of librispeech on v100: 9 of 105 knobs" in text
    assert "plan: set bs 48 at 150 W" in text


def notebook_cells():
    """The tutorial notebook's code cells, and a program that runs them (as
    JSON on its stdin) top to bottom in one interpreter, as a kernel does."""
    import json
    nb = os.path.join(os.path.dirname(HERE), "examples", "tutorial.ipynb")
    with open(nb) as f:
        cells = ["".join(c["source"]) for c in json.load(f)["cells"]
                 if c["cell_type"] == "code"]
    assert len(cells) >= 7
    code = ("import ast, json, sys\n"
            "try:\n"
            "    import matplotlib\n"
            "    matplotlib.use('Agg')\n"
            "    import matplotlib.pyplot as plt\n"
            "    stub = False\n"
            "except ImportError:\n"
            "    from unittest import mock\n"
            "    m = mock.MagicMock()\n"
            "    m.pyplot.subplots.side_effect = lambda *a, **k: (mock.MagicMock(),"
            " mock.MagicMock())\n"
            "    sys.modules.update({'matplotlib': m, 'matplotlib.pyplot': m.pyplot,"
            " 'matplotlib.ticker': m.ticker})\n"
            "    plt, stub = m.pyplot, True\n"
            "for src in json.load(sys.stdin):\n"
            "    tree = ast.parse(src)\n"
            "    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr)"
            " else None\n"
            "    exec(compile(tree, 'cell', 'exec'), globals())\n"
            "    if last is not None:\n"
            "        v = eval(compile(ast.Expression(last.value), 'cell', 'eval'), globals())\n"
            "        if v is not None: print(repr(v))\n"
            "print('figures', plt.subplots.call_count if stub else len(plt.get_fignums()))\n")
    return cells, code


def test_tutorial_notebook_code(tmp_path):
    """The notebook's code cells, top to bottom in one interpreter as a
    kernel runs them, always (jupyter-nbconvert above needs Debian packages
    that may be missing): the notebook cannot drift from the package
    unnoticed. Each cell's last expression is printed, as a notebook
    shows it. Without matplotlib, a stand-in records the plotting calls
    (the data each plot is drawn from is still computed)."""
    import json
    cells, code = notebook_cells()
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE), MPLCONFIGDIR=str(tmp_path / "mpl"),
               MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(cells),
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "frontier of librispeech on v100: 9 of 105 knobs" in r.stdout
    assert "plan: set bs 48 at 150 W" in r.stdout
    assert "py-gaussiants+py-jit" in r.stdout and "summary_power_v100.csv" in r.stdout
    assert r.stdout.splitlines()[-1] == "figures 3"
