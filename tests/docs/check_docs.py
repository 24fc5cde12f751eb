#!/usr/bin/env python3
"""Run every `$ wattsim ...` example of README.md and docs/*.md against the
output it shows, so that the manual cannot drift from the code.

An example is a fenced code block (``` without a language, or ```console)
whose first line starts with `$ `. Each line starting with `$ ` is a command
(a trailing backslash continues it on the next line); the lines up to the
next command are its expected output, stdout and stderr as a terminal shows
them (the command runs on a pseudo-terminal, with WATTSIM_QUIET=1 so that no
progress bar is drawn). A block whose commands do not involve wattsim or a
project script is still run (it may set up files for the next one).

Every markdown file runs in its own scratch folder, its blocks in order
(later blocks see the files earlier ones wrote), with the repository's
configs/, traces/, tests/, scripts/, policies/, python/ and build/ reachable under
the same relative names, and build/sim first on PATH. The repository
itself is never written.

The scratch build/ is the build as the quick start makes it (scripts/demo,
scripts/setup: -DWS_TESTS=OFF): the build under test without what only the
test suite builds (build/tests/, build/Testing/, ctest's files), so that an
example naming a test plugin (build/tests/plugins/X.so) fails here as it
fails for a reader. The manual's plugins are in build/examples/. The build
is reused, not made twice: a -DWS_TESTS=OFF build differs from a
-DWS_TESTS=ON one by those entries only (CMakeLists.txt adds tests/ last).

Conventions of the manual, declared here:
- `$ cat NAME` of a file the repository does not have *defines* NAME: its
  shown output is written to NAME in the scratch folder before it runs.
- `$ cd DIR` changes the folder, and `$ export NAME=VALUE ...` the
  environment, for the following commands of the file (each command runs
  in its own shell, started in that folder with that environment).
- `$ echo $?` prints the exit status of the previous command.
- A command killed by a signal is followed by the line an interactive bash
  prints for it (`Segmentation fault`, `Aborted`, with ` (core dumped)`
  when a core was dumped; none for SIGINT and SIGPIPE), as a terminal shows
  it: a transcript shows that line too (`Segmentation fault…` matches with
  or without a core, which depends on `ulimit -c`).
Normalisations (the only ones):
- trailing white space of every line is ignored, and CR LF is LF;
- in a shown line, `…` matches any run of characters within the line
  (e.g. a path: `/…/build/tests/plugins/capped.so`);
- in a shown line, `<sha256>` matches a sha256 as outputs print it, 12 or
  64 lowercase hex digits, and nothing else (a plugin's hash depends on
  the build; numbers of results are never masked);
- a shown line that is only `...` matches any number of lines (none too).
Relative links and images must lead to an existing file and heading.
A block preceded by `<!-- docs-test: skip REASON -->` is not run; the test
lists every skipped block with its reason, and README.md may skip none.

Usage: check_docs.py [--root DIR] [--build DIR] [--list] [--verbose]
                     [--show FILE] [FILE...]
  --list     list the examples (file, line, command) and the skipped blocks
  --show     print what every command of FILE really prints (to update it)
Exit status: 0 if every example matched, 1 otherwise, 2 on usage errors.
"""
import argparse
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LINKED = ["configs", "traces", "tests", "scripts", "policies", "sim", "build", "python"]
TIMEOUT = 300          # s per command
SKIP_RE = re.compile(r"<!--\s*docs-test:\s*skip\s+(.+?)\s*-->")


class Command:
    def __init__(self, line, text, expected):
        self.line = line            # 1-based line of the `$` in the file
        self.text = text            # the command, continuation lines joined
        self.expected = expected    # list of lines


class Block:
    def __init__(self, path, line, commands, skip):
        self.path, self.line, self.commands, self.skip = path, line, commands, skip


def parse(path):
    """The example blocks of a markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i, pending_skip = [], 0, None
    while i < len(lines):
        m = SKIP_RE.search(lines[i])
        if m:
            pending_skip = m.group(1)
            i += 1
            continue
        fence = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if not fence:
            if lines[i].strip():
                pending_skip = None if not lines[i].lstrip().startswith("<!--") else pending_skip
            i += 1
            continue
        indent, lang = fence.group(1), fence.group(2)
        j = i + 1
        body = []
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        start = i + 2                       # 1-based line of the body's first line
        i = j + 1
        if lang not in ("", "console") or not body or not body[0].startswith("$ "):
            pending_skip = None
            continue
        commands, k = [], 0
        while k < len(body):
            if not body[k].startswith("$ "):
                k += 1
                continue
            line = start + k
            text = body[k][2:]
            while text.endswith("\\") and k + 1 < len(body):
                k += 1
                text = text[:-1] + " " + body[k].strip()
            k += 1
            expected = []
            while k < len(body) and not body[k].startswith("$ "):
                expected.append(body[k])
                k += 1
            while expected and not expected[-1].strip():
                expected.pop()
            commands.append(Command(line, text, expected))
        blocks.append(Block(path, start - 1, commands, pending_skip))
        pending_skip = None
    return blocks


def slug(heading):
    """GitHub's anchor for a heading."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def check_links(path, root):
    """Relative links and images of a markdown file that lead nowhere."""
    bad = []
    text = open(path, encoding="utf-8").read()
    for n, line in enumerate(text.split("\n"), 1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue                      # http:, https:, mailto:
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append(f"{os.path.relpath(path, root)}:{n}: link to {target}: no such file")
                continue
            if anchor and dest.endswith(".md"):
                heads = [slug(h) for h in re.findall(r"^#+\s+(.*)$",
                                                     open(dest, encoding="utf-8").read(), re.M)]
                if anchor not in heads:
                    bad.append(f"{os.path.relpath(path, root)}:{n}: link to {target}: no such heading")
    return bad


SHA256 = "<sha256>"


def line_matches(shown, real):
    if "…" not in shown and SHA256 not in shown:
        return shown == real
    pattern = "(?:[0-9a-f]{64}|[0-9a-f]{12})".join(
        ".*".join(re.escape(p) for p in piece.split("…")) for piece in shown.split(SHA256))
    return re.fullmatch(pattern, real) is not None


def matches(shown, real):
    """Whether the real lines match the shown ones (with `...` lines)."""
    shown = [s.rstrip() for s in shown]
    real = [r.rstrip() for r in real]
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(shown):
            r = j == len(real)
        elif shown[i].strip() == "...":
            r = m(i + 1, j) or (j < len(real) and m(i, j + 1))
        else:
            r = j < len(real) and line_matches(shown[i], real[j]) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    sys.setrecursionlimit(max(10000, 4 * (len(shown) + len(real)) + 100))
    return m(0, 0)


def run_pty(cmd, cwd, env):
    """Run `cmd` with bash on a pseudo-terminal; (status, output lines)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    out, deadline = b"", time.monotonic() + TIMEOUT
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            os.close(master)
            return None, out.decode("utf-8", "replace").split("\n")
        r, _, _ = select.select([master], [], [], min(left, 1.0))
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:             # EIO: every writer has closed
                chunk = b""
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None and not r:
            # the process ended; drain what is left
            continue
    os.close(master)
    _, raw = os.waitpid(p.pid, 0)
    p.returncode = 0                # reaped here: Popen must not wait again
    text = out.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if os.WIFSIGNALED(raw):
        sig = os.WTERMSIG(raw)
        status = 128 + sig
        if sig not in (signal.SIGINT, signal.SIGPIPE):
            # what an interactive bash prints after a job a signal killed
            lines.append(signal.strsignal(sig) + (" (core dumped)" if os.WCOREDUMP(raw) else ""))
    else:
        status = os.WEXITSTATUS(raw)
    return status, lines


# What a -DWS_TESTS=ON build has at its top that the quick start's
# -DWS_TESTS=OFF build has not.
TEST_ONLY = {"tests", "Testing", "CTestTestfile.cmake", "DartConfiguration.tcl"}


def quickstart_build(build, d):
    """build/ as the quick start makes it: a folder of links to the entries of
    the build under test, less those of the test suite."""
    os.mkdir(d)
    for name in sorted(os.listdir(build)):
        if name not in TEST_ONLY:
            os.symlink(os.path.join(build, name), os.path.join(d, name))


def scratch(root, build):
    d = tempfile.mkdtemp(prefix="wattsim-docs-")
    for name in LINKED:
        if name == "build":
            quickstart_build(build, os.path.join(d, name))
            continue
        src = os.path.join(root, name)
        if os.path.exists(src):
            os.symlink(src, os.path.join(d, name))
    return d


def main():
    ap = argparse.ArgumentParser(add_help=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--build", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build or os.path.join(root, "build"))
    files = a.files or ([os.path.join(root, "README.md")]
                        + sorted(os.path.join(root, "docs", f)
                                 for f in os.listdir(os.path.join(root, "docs"))
                                 if f.endswith(".md")))
    if not os.access(os.path.join(build, "sim", "wattsim"), os.X_OK):
        print(f"check_docs: no {build}/sim/wattsim: build first", file=sys.stderr)
        return 2

    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "sim") + os.pathsep + env.get("PATH", "")
    # scripts that run wattsim themselves (zeus-compare, reproduce-paper) take
    # it from WS_WATTSIM: the build under test, not necessarily build/
    env["WS_WATTSIM"] = os.path.join(build, "sim", "wattsim")
    env["WATTSIM_QUIET"] = "1"
    env["LC_ALL"] = "C.UTF-8"
    env["TERM"] = "dumb"
    env["COLUMNS"] = "200"
    for k in ("WATTSIM_TRACES", "WATTSIM_CATALOGUE", "WATTSIM_POLICY_DIR"):
        env.pop(k, None)            # the manual's examples run as a user's would

    failures, ran, skipped = 0, 0, []
    for path in files:
        for b in check_links(path, root):
            print(b)
            failures += 1
    for path in files:
        rel = os.path.relpath(path, root)
        blocks = parse(path)
        if a.list:
            for b in blocks:
                for c in b.commands:
                    print(f"{rel}:{c.line}: {'SKIP ' if b.skip else ''}$ {c.text}")
        todo = [b for b in blocks if not b.skip]
        for b in blocks:
            if b.skip:
                skipped.append((rel, b.line, b.skip))
        if a.list or not todo:
            continue
        work = scratch(root, build)
        cwd, last, env0 = work, 0, env
        env = dict(env0)
        try:
            for b in todo:
                for c in b.commands:
                    text = c.text.strip()
                    m = re.fullmatch(r"cd\s+(\S+)(\s+#.*)?", text)
                    if m:
                        cwd = os.path.normpath(os.path.join(cwd, m.group(1)))
                        if not os.path.realpath(cwd).startswith(os.path.realpath(work)):
                            print(f"{rel}:{c.line}: cd leaves the scratch folder"
                                  " (into the repository?): copy what it needs instead")
                            failures += 1
                            break
                        continue
                    if re.match(r"export\s", text):
                        r = subprocess.run(["bash", "-c", text + " && env -0"], cwd=cwd,
                                           env=env, capture_output=True)
                        if r.returncode:
                            print(f"{rel}:{c.line}: failed: $ {c.text}")
                            failures += 1
                            break
                        env = dict(kv.split("=", 1) for kv in
                                   r.stdout.decode().split("\0") if "=" in kv)
                        last = 0
                        continue
                    if text == "echo $?":
                        status, real = 0, [str(last)]
                    else:
                        m = re.fullmatch(r"cat\s+([\w./-]+)", text)
                        if m and not os.path.lexists(os.path.join(cwd, m.group(1))):
                            target = os.path.join(cwd, m.group(1))
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            with open(target, "w", encoding="utf-8") as f:
                                f.write("\n".join(c.expected) + "\n")
                        status, real = run_pty(c.text, cwd, env)
                        last = status if status is not None else 124
                    ran += 1
                    if a.show:
                        print(f"==> {rel}:{c.line}: $ {c.text}  [exit {last}]")
                        print("\n".join(real))
                        continue
                    if status is None:
                        failures += 1
                        print(f"{rel}:{c.line}: timed out after {TIMEOUT} s: $ {c.text}")
                        continue
                    if not matches(c.expected, real):
                        failures += 1
                        print(f"{rel}:{c.line}: output differs: $ {c.text}  [exit {last}]")
                        import difflib
                        for d in difflib.unified_diff([s.rstrip() for s in c.expected],
                                                      [r.rstrip() for r in real],
                                                      "shown", "real", lineterm="", n=2):
                            print("    " + d)
                    elif a.verbose:
                        print(f"{rel}:{c.line}: ok: $ {c.text}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
            env = env0

    for rel, line, why in skipped:
        print(f"{rel}:{line}: skipped: {why}")
    bad_skips = [s for s in skipped if s[0] == "README.md"]
    for rel, line, why in bad_skips:
        print(f"{rel}:{line}: README.md may not skip an example")
    if a.list or a.show:
        return 0
    print(f"check_docs: {ran} commands run, {failures} differ, {len(skipped)} blocks skipped")
    return 1 if failures or bad_skips else 0


if __name__ == "__main__":
    sys.exit(main())
