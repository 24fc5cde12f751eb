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
