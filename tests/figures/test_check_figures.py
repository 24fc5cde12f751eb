#!/usr/bin/env python3
"""The figure checker (check_figures.py) against figures made to fail it.

Issue 30 listed figures a reviewer rejects that the checker let through:
a key cut at the canvas' edge, an axis with two labels, one policy in two
colours across a set of figures, a key entry promising a frontier line
that has one point. Each is drawn here by a small gnuplot script, rendered
to PDF, checked, and the checker must name the problem; a clean figure
must pass. Needs gnuplot and pdftotext, as the checker does.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_figures as cf  # noqa: E402

HEAD = """set terminal pdfcairo size 4in,3in font 'Helvetica,8'
if (!exists("out")) out = 'x.pdf'
set output out
stem = ARG0[1:strlen(ARG0)-3]
data = stem.'.csv'
set datafile separator ','
set xlabel 'TTA (h)' offset 0,-0.8
set bmargin 4
set ylabel 'ETA (MJ)'
set xrange [0:10]
set yrange [0:10]
"""

FIGURES = {
    # passes: three labels an axis, its key inside, a frontier of 3 points
    "clean": (HEAD + "set xtics 0,2,10\nset ytics 0,2,10\nset key top right\n"
              "plot data using 1:2 with lines lc rgb '#000000' title 'Pareto frontier', "
              "data using 1:2 with points pt 7 lc rgb '#0072B2' title 'zeus+jit'\n",
              "2,8\n5,4\n8,2\n"),
    # the key at the right edge, a long entry: cut
    "key_cut": (HEAD + "set xtics 0,2,10\nset ytics 0,2,10\nset rmargin at screen 0.5\n"
                "set key at screen 0.8, screen 0.9 left top\n"
                "plot data using 1:2 with points pt 7 lc rgb '#0072B2'"
                " title 'zeus{window=0}+jit settled, seed 1 (12, 250 W) and more text'\n",
                "2,8\n5,4\n"),
    # a y axis of two labels
    "two_ticks": (HEAD + "set xtics 0,2,10\nset ytics (0, 10)\nunset key\n"
                  "plot data using 1:2 with points pt 7 lc rgb '#0072B2' notitle\n",
                  "2,8\n5,4\n"),
    # a frontier of one knob, its key entry a line
    "one_knob": (HEAD + "set xtics 0,2,10\nset ytics 0,2,10\nset key top right\n"
                 "plot data using 1:2 with lines lc rgb '#000000' title 'Pareto frontier'\n",
                 "5,4\n"),
    # the same policy in another colour than in "clean"
    "other_colour": (HEAD + "set xtics 0,2,10\nset ytics 0,2,10\nset key top right\n"
                     "plot data using 1:2 with points pt 7 lc rgb '#009E73' title 'zeus+jit'\n",
                     "2,8\n5,4\n"),
}


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="ws-checkcheck-") as tmp:
        figs = {}
        for name, (script, rows) in FIGURES.items():
            gp = os.path.join(tmp, name + ".gp")
            with open(gp, "w", encoding="utf-8") as f:
                f.write(script)
            with open(os.path.join(tmp, name + ".csv"), "w", encoding="utf-8") as f:
                f.write(rows)
            subprocess.run(["gnuplot", "-e", "out='%s.pdf'" % name, name + ".gp"], cwd=tmp,
                           check=True, capture_output=True)
            figs[name] = cf.check_one(gp, None)

        def expect(name, words):
            probs = figs[name].problems
            if not any(all(w in p for w in words) for p in probs):
                failures.append("%s: expected a problem with %s, got %s" % (name, words, probs))

        if figs["clean"].problems:
            failures.append("clean: expected none, got %s" % figs["clean"].problems)
        expect("key_cut", ["key entry", "zeus{window=0}+jit"])
        expect("two_ticks", ["y axis", "2 distinct labelled tick"])
        expect("one_knob", ["Pareto frontier", "no segment"])
        across = cf.check_colours([figs["clean"], figs["other_colour"]], tmp)
        if not (len(across) == 1 and "'zeus+jit' has 2 colours" in across[0]
                and "#0072b2 in clean" in across[0] and "#009e73 in other_colour" in across[0]):
            failures.append("colours across the set: %s" % across)
        if cf.check_colours([figs["clean"], figs["key_cut"]], tmp):
            failures.append("one colour in both: no problem expected")
        # how a key entry names its policy
        for title, want in (("grid+grid", "grid"), ("default knob (192, 250 W)", "default"),
                            ("zeus{window=10}+jit settled (2 knobs)", "zeus{window=10}+jit"),
                            ("least cost, η = 0.5", None), ("oracle+oracle", "oracle")):
            if cf.policy_of(title) != want:
                failures.append("policy_of(%r) = %r, not %r" % (title, cf.policy_of(title), want))
    for f in failures:
        print("FAIL " + f)
    print("%d checks of the checker failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
