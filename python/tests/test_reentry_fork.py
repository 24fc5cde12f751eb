"""Calls that would wait forever (docs/safety.md, "Re-entrancy and fork"):
a call from a thread that works for the running call (a sweep's worker
running policy code) and any call in a process forked while another
thread was inside a call fail at once; a call from an unrelated thread
waits its turn. Each case runs in a child Python with a time limit: on a
library that hangs, the test fails, it does not hang."""
import os
import signal
import subprocess
import sys
import textwrap

from conftest import HERE

LIMIT = 120   # seconds; each case takes about one


def run(code):
    """The script's stdout lines (after the package is imported); fails the
    test when it does not end in LIMIT seconds. The script leads its own
    process group, killed whole when the time is up or the script ends: a
    hung forked child of it is not left behind."""
    prelude = "import sys; sys.path.insert(0, %r); import conftest, wattsim\n" % HERE
    p = subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        out, err = None, None
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if out is None:
            p.communicate()
    assert out is not None, "hung: no answer in %d s" % LIMIT
    assert p.returncode == 0, err
    return out.splitlines()


POLICY = """
import threading, time
main = threading.get_ident()

class Policy(wattsim.BatchSizeOptimizer):
    def register_job(self, job, batch_sizes):
        pass
    def predict(self, job):
        act(self)
        return job.default_bs
    def observe(self, job, batch_size, cost, converged):
        pass
"""


def test_a_call_from_a_sweeps_worker_fails_at_once():
    """Policy code on a worker thread of sweep(threads=2) calls simulate:
    the worker is not the calling thread, and the lock the calling thread
    holds until the workers end would have made it wait for ever."""
    out = run(POLICY + """
seen = []
def act(self):
    if seen:
        return
    try:
        wattsim.simulate(workload="cifar100", seed=1, recurrences=2)
        seen.append("returned")
    except Exception as e:
        seen.append("%s %s %s" % (threading.get_ident() != main, type(e).__name__, e))
wattsim.sweep(workload="cifar100", seed=range(1, 3), recurrences=2, threads=2,
              policies=[(Policy(), "jit")])
print(seen[0])
""")
    assert out == ["True TypeError simulate: called from inside another wattsim call (a policy"
                   " or hook of it, on any of its threads); make the call after it returns"]


def test_a_call_from_an_unrelated_thread_waits_its_turn():
    """A thread of the program's own (started before the call, not by its
    policy) calls simulate while a sweep runs: it waits, then succeeds."""
    out = run(POLICY + """
running, acts, order = threading.Event(), [], []
def act(self):
    running.set()
    acts.append(time.monotonic())
    time.sleep(0.02)
def other():
    running.wait(60)
    start = time.monotonic()
    r = wattsim.simulate(workload="cifar100", seed=1, recurrences=2)
    order.append((start, time.monotonic(), r.attrs["final_bs"]))
t = threading.Thread(target=other)
t.start()
wattsim.sweep(workload="cifar100", seed=range(1, 7), recurrences=3, threads=2,
              policies=[(Policy(), "jit")])
t.join(60)
(start, end, bs), = order
print(start < acts[-1] < end, bs)
""")
    # the other thread's call began while the sweep's policy still ran and
    # ended after its last call (it waited), with its own result
    assert out == ["True 512"]


def test_a_process_forked_during_anothers_call_fails_at_once():
    """multiprocessing's fork start method while another thread is inside a
    sweep: the child inherits the run lock held by a thread it does not
    have. Its calls fail at once, saying why; the parent's call goes on."""
    out = run(POLICY + """
import multiprocessing as mp
inside, release = threading.Event(), threading.Event()
def act(self):
    inside.set()
    release.wait(60)
def child(q):
    t = time.monotonic()
    for _ in range(2):   # the second as the first: the mark stays
        try:
            wattsim.simulate(workload="cifar100", seed=1, recurrences=2)
            q.put("returned")
        except Exception as e:
            q.put("%s %s" % (type(e).__name__, e))
    q.put(time.monotonic() - t < 5)
res = []
t = threading.Thread(target=lambda: res.append(wattsim.sweep(
    workload="cifar100", seed=[1], recurrences=2, threads=2, policies=[(Policy(), "jit")])))
t.start()
inside.wait(60)
ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start()
got = [q.get(timeout=60) for _ in range(3)]
p.join(60)
release.set()
t.join(60)
print(got[0])
print(got[0] == got[1], got[2], p.exitcode, len(res))
# and the parent, after its call: calls as before
print(wattsim.simulate(workload="cifar100", seed=1, recurrences=2).attrs["final_bs"])
""")
    assert out == [
        "TypeError simulate: this process was forked while another thread was inside a"
        " wattsim call, so the library's state here is that call's, half-way; make wattsim"
        " calls in the parent, or start this process without fork (multiprocessing's 'spawn'"
        " or 'forkserver')",
        "True True 0 1", "512"]


def test_a_process_forked_between_calls_calls_as_usual():
    out = run("""
import multiprocessing as mp
wattsim.simulate(workload="cifar100", seed=1, recurrences=2)
def child(q):
    q.put(wattsim.simulate(workload="cifar100", seed=1, recurrences=2).attrs["final_bs"])
ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start()
print(q.get(timeout=60))
p.join(60)
print(p.exitcode)
""")
    assert out == ["512", "0"]
