#!/usr/bin/env python3
"""Check figures as a reviewer would, from what gnuplot drew.

For every figure NAME.gp with NAME.pdf beside it under the given folders
(what `scripts/reproduce-paper` writes), the script is run once more by
gnuplot, instrumented: after each `plot` command it prints the panel's
plot area on the page (GPVAL_TERM_*), its axis ranges (GPVAL_X/Y_MIN/MAX),
the extent of its data (GPVAL_DATA_*, which with fixed ranges counts only
the points inside them), its labels, key and objects (gnuplot's `show`),
and every curve's points with their error bars (`set table` + `replot`:
each point flagged inside or outside the ranges). The text of the figure
and where it is comes from NAME.pdf itself (`pdftotext -bbox`,
poppler-utils); the script draws the same page in both. The checks:

  page     every word lies inside the page; no two words overlap; no word
           is crossed by a plot's frame (a title struck through)
  axes     an axis with numeric tick labels has a label (its own, or the
           panel's beside it that shares the axis), found on the page, a
           y label no taller than its plot; at least three distinct
           labelled ticks on every axis that shows any (or none, when a
           panel sharing the axis shows them); tick labels do not touch or overlap; a linear axis
           spans at least MIN_SPAN of its values (a zoom into 0.5 % makes
           trivial differences look large); a cost axis is in
           J-equivalents, not J
  data     every point lies inside the plot area, and the ends of its error
           bars, and its marker is whole inside it (3.5 pt per unit of `ps`
           from the frame: a ps 1 marker is 7 pt across, measured); no key
           entry's marker (ps 1 or more) hidden under a later filled one
  key      every titled curve of a panel whose key is on (placed or `at`)
           has its text on the page, clear of the canvas' edge; an entry
           with a line sample draws a segment of it (a frontier of one knob
           is no line); a key with entries side by side puts each sample
           before its text (`Left reverse`), else a sample reads as the next
           entry's; a frame drawn over the data (a rectangle object) has
           a colour no data series of its panel has; error bars drawn means
           the page says what they are (a CI, ...)
  content  savings.*: every row of its data is drawn (a bar per row and
           metric), and the title claims one η, one β or "per ... GPU" only
           when that is what the data holds
  set      across every figure checked: a policy (its key entries' pair
           label, "grid+grid" read as "grid") has one colour

Usage: check_figures.py [--jobs N] [--only GLOB] [--keep DIR] DIR...
       check_figures.py --reproduce ROOT [--wattsim BIN] [--style SPEC] [--jobs N]
  --reproduce ROOT  first run ROOT/scripts/reproduce-paper --no-setup into
                    a scratch folder (removed afterwards), and `wattsim run`
                    of tests/figures/run-multi.yaml (several etas, seeds and
                    pairs) into its run/, then check them
  --style SPEC      with --reproduce: draw every figure in that style
                    (`--style size=12`: the layouts at a large font)
  --keep DIR        keep each figure's instrumented script and log there
Exit status: 0 when every figure passes, 1 when one fails, 2 on errors
(gnuplot or pdftotext missing, a script that does not run).
"""
import argparse
import concurrent.futures
import csv
import fnmatch
import html
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = 0.5             # pt: rounding of positions
MIN_SPAN = 0.05       # a linear axis spans at least 5 % of its largest value
MIN_TICKS = 3         # distinct labelled ticks on an axis with numbers
MARKER_PT = 3.5       # half a marker's side per unit of ps (measured: ps 1 = 7 pt)
FILLED = {5, 7, 9, 11, 13, 15}      # gnuplot's filled point types
POINT_STYLES = ("points", "linespoints", "errorbars", "xerrorbars", "yerrorbars",
                "xyerrorbars", "errorlines", "xerrorlines", "yerrorlines", "xyerrorlines")
ERROR_STYLES = ("errorbars", "errorlines")     # as suffixes of the style's name
NUMBER = re.compile(r"^[-−]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?[kMG%]?$|^∞$")

INSTRUMENT = r"""
print "WS-PANEL"
print sprintf("WS-TERM %.4f %.4f %.4f %.4f %g %g %g", GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, GPVAL_TERM_YMAX, GPVAL_TERM_XSIZE, GPVAL_TERM_YSIZE, GPVAL_TERM_SCALE)
print sprintf("WS-RANGE %.17g %.17g %.17g %.17g", GPVAL_X_MIN, GPVAL_X_MAX, GPVAL_Y_MIN, GPVAL_Y_MAX)
print sprintf("WS-DATA %.17g %.17g %.17g %.17g", GPVAL_DATA_X_MIN, GPVAL_DATA_X_MAX, GPVAL_DATA_Y_MIN, GPVAL_DATA_Y_MAX)
show logscale
show plot
show key
show xlabel
show ylabel
show title
show object
show border
set table $WS_TABLE
replot
unset table
print $WS_TABLE
undefine $WS_TABLE
print "WS-END"
"""


class Word:
    __slots__ = ("x0", "y0", "x1", "y1", "text", "used")

    def __init__(self, x0, y0, x1, y1, text):
        self.x0, self.y0, self.x1, self.y1, self.text = x0, y0, x1, y1, text
        self.used = False

    @property
    def h(self):
        return self.y1 - self.y0

    @property
    def w(self):
        return self.x1 - self.x0

    def __repr__(self):
        return "'%s' at (%.1f, %.1f)" % (self.text, self.x0, self.y0)


class Clause:
    def __init__(self, text):
        self.text = text
        m = re.search(r"\bwith\s+(\w+)", text)
        self.style = m.group(1) if m else "points"       # gnuplot's default for data
        m = re.search(r"\bpt\s+(\d+)", text)
        self.pt = int(m.group(1)) if m else 1
        m = re.search(r"\bps\s+([\d.]+)", text)
        self.ps = float(m.group(1)) if m else 1.0
        self.colours = [c.lower() for c in re.findall(r"rgb\s+['\"](#[0-9A-Fa-f]{6})['\"]", text)]
        self.iterated = bool(re.match(r"\s*for\s*\[", text))

    def has_points(self):
        return self.style in POINT_STYLES

    def has_errorbars(self):
        return self.style.endswith(ERROR_STYLES)


class Curve:
    def __init__(self):
        self.title, self.columns, self.rows, self.clause = "", [], [], None


class Panel:
    def __init__(self, idx):
        self.idx = idx
        self.curves, self.clauses, self.objects = [], [], []
        self.key_on = False
        self.key_horizontal = self.key_reversed = self.key_left = False
        self.xlabel = self.ylabel = self.title = ""
        self.xlog = self.ylog = False
        self.border = 31

    def name(self):
        return "panel %d%s" % (self.idx + 1, " (%s)" % self.title if self.title else "")


# ------------------------------------------------------------ gnuplot side

def split_top(s, sep=","):
    """Split s at `sep` outside quotes, parentheses and brackets."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def instrument(script):
    """The script with INSTRUMENT after every top-level plot command."""
    out, in_plot = [], False
    for line in script.split("\n"):
        out.append(line)
        if re.match(r"\s*plot\s", line):
            in_plot = True
        if in_plot and not line.rstrip().endswith("\\"):
            out.append(INSTRUMENT)
            in_plot = False
    return "\n".join(out)


def shown(text, what):
    m = re.search(r'\t%s is "((?:[^"\\]|\\.)*)"' % what, text)
    return m.group(1).replace('\\"', '"').replace("\\n", " ") if m else ""


def parse_panel(idx, text):
    p = Panel(idx)
    m = re.search(r"WS-TERM (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)", text)
    p.term = [float(v) for v in m.groups()[:4]]
    p.term_size = (float(m.group(5)) / float(m.group(7)), float(m.group(6)) / float(m.group(7)))
    m = re.search(r"WS-RANGE (\S+) (\S+) (\S+) (\S+)", text)
    p.xr = (float(m.group(1)), float(m.group(2)))
    p.yr = (float(m.group(3)), float(m.group(4)))
    m = re.search(r"WS-DATA (\S+) (\S+) (\S+) (\S+)", text)
    p.data = [float(v) for v in m.groups()]
    m = re.search(r"logscaling on\s+(.*)", text)
    scaled = m.group(1).split() if m else []
    p.xlog, p.ylog = "x" in scaled, "y" in scaled
    m = re.search(r"last plot command was: plot (.*)", text)
    p.command = m.group(1) if m else ""
    p.clauses = [Clause(c) for c in split_top(p.command)] if p.command else []
    # "key is ON, position: ..." or, placed with `at`, "key is at (...)"
    p.key_on = "key is ON" in text or "\tkey is at " in text
    p.key_horizontal = bool(re.search(r"key is ON, position:.*horizontal", text))
    p.key_reversed = bool(re.search(r"justified, reversed", text))
    p.key_left = "key is left justified" in text
    p.xlabel, p.ylabel, p.title = shown(text, "xlabel"), shown(text, "ylabel"), shown(text, "title")
    for m in re.finditer(r"\tobject\s+(\d+) .*?border rgb \"(#[0-9a-fA-F]{6})\"", text):
        p.objects.append((int(m.group(1)), m.group(2).lower()))
    m = re.search(r"border (\d+) \(0x", text)
    p.border = int(m.group(1)) if m else 31
    cur = None
    for line in text.split("\n"):
        m = re.match(r"# Curve (\d+) of (\d+)", line)
        if m:
            cur = Curve()
            p.curves.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r'# Curve title: "(.*)"', line)
        if m:
            cur.title = m.group(1)
        elif line.startswith("# "):
            cur.columns = line[2:].split()
        elif line.strip() and not line.startswith("#"):
            # gnuplot 5.4 leaves some columns of some styles (boxes, vectors)
            # empty: such a row keeps its in/out flag only
            f = line.split()
            vals = None
            if len(f) == len(cur.columns):
                try:
                    vals = [float(v) for v in f[:-1]]
                except ValueError:
                    pass                                  # labels: text columns
            cur.rows.append((vals, f[-1]))
    # curves to clauses: one each, an iterated clause (`for [...]`) as many
    # as are left over, shared evenly
    fixed = [c for c in p.clauses if not c.iterated]
    loops = [c for c in p.clauses if c.iterated]
    extra = len(p.curves) - len(fixed)
    if loops and extra >= 0 and extra % len(loops) == 0:
        each = extra // len(loops)
        k = 0
        for c in p.clauses:
            for _ in range(each if c.iterated else 1):
                p.curves[k].clause = c
                k += 1
    elif not loops and len(p.curves) == len(p.clauses):
        for cu, c in zip(p.curves, p.clauses):
            cu.clause = c
    return p


def run_gnuplot(gp_path, keep):
    """The instrumented run: the panels of the figure, in drawing order."""
    folder, name = os.path.split(gp_path)
    stem = name[:-3]
    with tempfile.TemporaryDirectory(prefix="ws-figcheck-") as tmp:
        script = instrument(open(gp_path, encoding="utf-8").read())
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
            f.write(script)
        os.symlink(os.path.abspath(os.path.join(folder, stem + ".csv")),
                   os.path.join(tmp, stem + ".csv"))
        r = subprocess.run(["gnuplot", "-e", "out='%s.pdf'" % stem, name], cwd=tmp,
                           capture_output=True, text=True, timeout=120)
        log = r.stdout + r.stderr
        if keep:
            shutil.copy(os.path.join(tmp, name), os.path.join(keep, stem + ".instrumented.gp"))
            with open(os.path.join(keep, stem + ".log"), "w", encoding="utf-8") as f:
                f.write(log)
        if r.returncode != 0:
            raise RuntimeError("%s: gnuplot failed: %s" % (gp_path, log.strip()[-300:]))
    chunks = log.split("WS-PANEL")[1:]
    return [parse_panel(i, c.split("WS-END")[0]) for i, c in enumerate(chunks)]


# ------------------------------------------------------------ pdf side

def pdf_words(pdf):
    r = subprocess.run(["pdftotext", "-bbox", pdf, "-"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise RuntimeError("%s: pdftotext failed: %s" % (pdf, r.stderr.strip()))
    m = re.search(r'<page width="([\d.]+)" height="([\d.]+)"', r.stdout)
    words = [Word(float(a), float(b), float(c), float(d), html.unescape(t))
             for a, b, c, d, t in re.findall(
                 r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">'
                 r'(.*?)</word>', r.stdout)]
    return float(m.group(1)), float(m.group(2)), words


def find_text(words, text, near=None):
    """The words showing `text` (whitespace-separated tokens, consecutive in
    pdftotext's order), nearest to `near` (x, y) when it occurs more than
    once; None when it is not on the page."""
    tokens = text.split()
    if not tokens:
        return None
    found = []
    for i in range(len(words) - len(tokens) + 1):
        if all(words[i + k].text == tokens[k] for k in range(len(tokens))):
            found.append(words[i:i + len(tokens)])
    if not found:
        # on several lines (a two-line label), its words anywhere, in order
        ws, start = [], 0
        for t in tokens:
            k = next((i for i in range(start, len(words)) if words[i].text == t), None)
            if k is None:
                return None
            ws.append(words[k])
            start = k + 1
        return ws
    if near is None or len(found) == 1:
        return found[0]

    def dist(ws):
        x = (min(w.x0 for w in ws) + max(w.x1 for w in ws)) / 2
        y = (min(w.y0 for w in ws) + max(w.y1 for w in ws)) / 2
        return math.hypot(x - near[0], y - near[1])
    return min(found, key=dist)


def box(ws):
    return (min(w.x0 for w in ws), min(w.y0 for w in ws), max(w.x1 for w in ws),
            max(w.y1 for w in ws))


# ------------------------------------------------------------ checks

class Figure:
    def __init__(self, gp_path, panels, page_w, page_h, words):
        self.gp_path, self.panels, self.words = gp_path, panels, words
        self.page_w, self.page_h = page_w, page_h
        self.problems = []
        # the figure's base font (its style's size, 8 pt by default): the
        # distances that find a panel's tick labels are in its ems
        self.em = 1.0
        try:
            with open(gp_path, encoding="utf-8") as f:
                m = re.search(r"noenhanced font '[^',]*,([0-9.]+)'", f.read())
            if m:
                self.em = float(m.group(1)) / 8
        except (OSError, ValueError):
            pass
        for p in panels:
            # the plot area on the page, y down as in pdftotext
            k = page_w / p.term_size[0]
            p.l, p.r = p.term[0] * k, p.term[1] * k
            p.t, p.b = page_h - p.term[3] * k, page_h - p.term[2] * k

    def fail(self, where, msg):
        self.problems.append("%s: %s" % (where, msg))

    def page_x(self, p, x):
        lo, hi = p.xr
        f = (math.log(x / lo) / math.log(hi / lo)) if p.xlog else (x - lo) / (hi - lo)
        return p.l + f * (p.r - p.l)

    def page_y(self, p, y):
        lo, hi = p.yr
        f = (math.log(y / lo) / math.log(hi / lo)) if p.ylog else (y - lo) / (hi - lo)
        return p.b - f * (p.b - p.t)

    # -- page
    def check_page(self):
        for w in self.words:
            if (w.x0 < -TOL or w.y0 < -TOL or w.x1 > self.page_w + TOL
                    or w.y1 > self.page_h + TOL):
                self.fail("page", "text %r runs off the %.0f x %.0f pt page"
                          % (w, self.page_w, self.page_h))
        ws = sorted(self.words, key=lambda w: w.x0)
        for i, a in enumerate(ws):
            for b in ws[i + 1:]:
                if b.x0 >= a.x1 - TOL:
                    break
                if a.used and b.used:
                    continue                      # tick labels: check_axes reports them
                ov_w = min(a.x1, b.x1) - max(a.x0, b.x0)
                ov_h = min(a.y1, b.y1) - max(a.y0, b.y0)
                if ov_w > TOL and ov_h > 0.3 * min(a.h, b.h):
                    self.fail("page", "text %r and %r overlap" % (a, b))
        for p in self.panels:
            edges = []
            if p.border & 1:
                edges.append(("h", p.b, p.l, p.r))
            if p.border & 4:
                edges.append(("h", p.t, p.l, p.r))
            if p.border & 2:
                edges.append(("v", p.l, p.t, p.b))
            if p.border & 8:
                edges.append(("v", p.r, p.t, p.b))
            for w in self.words:
                s = 0.1 * min(w.h, w.w)          # the room above capitals, below the baseline
                for kind, at, lo, hi in edges:
                    if kind == "h":
                        hit = (w.y0 + s < at < w.y1 - s and min(hi, w.x1) - max(lo, w.x0) > TOL)
                    else:
                        hit = (w.x0 + s < at < w.x1 - s and min(hi, w.y1) - max(lo, w.y0) > TOL)
                    if hit:
                        self.fail(p.name(), "text %r is crossed by the plot's frame" % w)
                        break

    # -- axes
    def tick_words(self, p, axis):
        near, side = 14 * self.em, 8 * self.em      # pt at 8 pt
        if axis == "x":
            ws = [w for w in self.words if p.b - TOL <= w.y0 <= p.b + near
                  and p.l - side <= (w.x0 + w.x1) / 2 <= p.r + side]
            return sorted(ws, key=lambda w: w.x0)
        ws = [w for w in self.words if p.l - near <= w.x1 <= p.l + TOL
              and p.t - side <= (w.y0 + w.y1) / 2 <= p.b + side and w.w >= 0.3 * w.h]
        return sorted(ws, key=lambda w: w.y0)

    def shares(self, p, q, axis):
        if axis == "x":
            return abs(p.l - q.l) < 2 and abs(p.r - q.r) < 2
        return abs(p.t - q.t) < 2 and abs(p.b - q.b) < 2

    def check_axes(self):
        ticks = {(p.idx, a): self.tick_words(p, a) for p in self.panels for a in "xy"}
        for p in self.panels:
            for axis in "xy":
                ws = ticks[(p.idx, axis)]
                numeric = [w for w in ws if NUMBER.match(w.text)]
                where = "%s, %s axis" % (p.name(), axis)
                if len(numeric) < max(1, len(ws) / 2):
                    continue                     # names (workloads): no numbers
                for w in ws:
                    w.used = True
                for w in ws:
                    if not NUMBER.match(w.text):
                        self.fail(where, "tick label %r is not one number: labels run"
                                  " into each other" % w)
                for a, b in zip(ws, ws[1:]):
                    gap = b.x0 - a.x1 if axis == "x" else b.y0 - a.y1
                    need = 0.3 * min(a.h, b.h) if axis == "x" else 0
                    if gap < need:
                        self.fail(where, "tick labels %r and %r %s (gap %.1f pt)"
                                  % (a, b, "overlap" if gap < 0 else "touch", gap))
                if len({w.text for w in numeric}) < MIN_TICKS:
                    self.fail(where, "%d distinct labelled tick(s) (%s): a reader cannot tell"
                              " the scale (is 1.2 to 1.8 a factor or a step?); %d at least"
                              % (len({w.text for w in numeric}),
                                 ", ".join(w.text for w in numeric), MIN_TICKS))
                label = p.xlabel if axis == "x" else p.ylabel
                if not label:
                    label = next((getattr(q, axis + "label") for q in self.panels
                                  if q is not p and self.shares(p, q, axis)
                                  and getattr(q, axis + "label")), "")
                    if not label:
                        self.fail(where, "numeric tick labels but no axis label (what,"
                                  " in which unit?)")
                    continue
                near = ((p.l + p.r) / 2, p.b + 20) if axis == "x" else (p.l - 30,
                                                                        (p.t + p.b) / 2)
                found = find_text(self.words, label, near)
                if not found:
                    self.fail(where, "the axis label '%s' is not on the page (clipped?)"
                              % label)
                    continue
                x0, y0, x1, y1 = box(found)
                if axis == "y" and y1 - y0 > (p.b - p.t) + TOL:
                    self.fail(where, "the label '%s' (%.0f pt) is taller than its plot"
                              " (%.0f pt)" % (label, y1 - y0, p.b - p.t))
                if re.search(r"\b(cost|regret)\b", label, re.I) and re.search(r"\((?:[kMG]?J)\)", label):
                    self.fail(where, "'%s': a cost (η·E + (1 − η)·MaxPower·T) is in"
                              " J-equivalents, not in J" % label)
            # no labels on an axis: fine when a panel sharing it shows them
            for axis in "xy":
                if ticks[(p.idx, axis)]:
                    continue
                others = [q for q in self.panels if q is not p and self.shares(p, q, axis)]
                if not any(len([w for w in ticks[(q.idx, axis)] if NUMBER.match(w.text)]) >= 2
                           or ticks[(q.idx, axis)] for q in others) and p.clauses:
                    self.fail("%s, %s axis" % (p.name(), axis),
                              "no labelled tick: the axis has no scale")
            for axis, lo, hi, log in (("x",) + p.xr + (p.xlog,), ("y",) + p.yr + (p.ylog,)):
                m = max(abs(lo), abs(hi))
                if not log and m > 0 and (hi - lo) / m < MIN_SPAN - 1e-9:
                    self.fail("%s, %s axis" % (p.name(), axis),
                              "spans %.6g to %.6g, %.1f %% of its values (under %.0f %%):"
                              " trivial differences look large"
                              % (lo, hi, 100 * (hi - lo) / m, 100 * MIN_SPAN))

    # -- data
    def check_data(self):
        for p in self.panels:
            if not p.clauses:
                continue
            dx0, dx1, dy0, dy1 = p.data
            sx, sy = (p.xr[1] - p.xr[0]) * 1e-9, (p.yr[1] - p.yr[0]) * 1e-9
            out = []
            if dx0 < p.xr[0] - abs(sx) or dx1 > p.xr[1] + abs(sx):
                out.append("x from %.6g to %.6g, the axis from %.6g to %.6g"
                           % (dx0, dx1, p.xr[0], p.xr[1]))
            if dy0 < p.yr[0] - abs(sy) or dy1 > p.yr[1] + abs(sy):
                out.append("y from %.6g to %.6g, the axis from %.6g to %.6g"
                           % (dy0, dy1, p.yr[0], p.yr[1]))
            for o in out:
                self.fail(p.name(), "data (error bars included) lie outside the plot: " + o)
            marks = []                           # (curve order, x, y, r, filled, titled)
            for k, cu in enumerate(p.curves):
                c = cu.clause
                if c is None or not c.has_points():
                    continue
                r = MARKER_PT * c.ps
                name = cu.title or "with %s pt %d" % (c.style, c.pt)
                outside, cut, bars = [], [], []
                # the ends of error bars: gnuplot's table gives them as columns
                ends = [(i, "x" if col.startswith("x") else "y") for i, col
                        in enumerate(cu.columns[:-1]) if col in ("xlow", "xhigh", "ylow", "yhigh")]
                for vals, kind in cu.rows:
                    if vals is None or kind not in "io":
                        continue
                    for i, axis in ends:
                        lo, hi = p.xr if axis == "x" else p.yr
                        slack = 1e-9 * (hi - lo)
                        if not lo - slack <= vals[i] <= hi + slack:
                            bars.append((vals, axis, vals[i], lo, hi))
                    if kind == "o":
                        outside.append(vals)
                        continue
                    x, y = self.page_x(p, vals[0]), self.page_y(p, vals[1])
                    room = min(x - p.l, p.r - x, y - p.t, p.b - y)
                    if room < r - TOL:
                        cut.append((vals, room))
                    marks.append((k, x, y, r, c.pt in FILLED, bool(cu.title), name))
                if outside:
                    self.fail(p.name(), "%d point(s) of '%s' lie outside the plot, e.g. at"
                              " (%.6g, %.6g)" % (len(outside), name, outside[0][0],
                                                 outside[0][1]))
                for vals, axis, end, lo, hi in bars[:3]:
                    self.fail(p.name(), "the error bar of '%s' at (%.6g, %.6g) runs out of the"
                              " plot: it reaches %s = %.6g, the axis %.6g to %.6g"
                              % (name, vals[0], vals[1], axis, end, lo, hi))
                for vals, room in cut[:3]:
                    self.fail(p.name(), "the marker of '%s' at (%.6g, %.6g) is cut by the"
                              " frame (%.1f pt of its %.1f pt radius inside)"
                              % (name, vals[0], vals[1], max(room, 0), r))
            # a key entry's marker (ps 1 or more) under a later filled marker
            reported = set()
            for a in marks:
                if not a[5] or a[3] < MARKER_PT - TOL or a[0] in reported:
                    continue
                for b in marks:
                    if b[0] > a[0] and b[4] and math.hypot(a[1] - b[1], a[2] - b[2]) + a[3] \
                            <= b[3] + 1.0:
                        self.fail(p.name(), "a marker of '%s' is hidden under a marker of a"
                                  " later curve" % a[6])
                        reported.add(a[0])
                        break

    # -- key, frames, error bars
    def check_key(self):
        any_errorbars = False
        for p in self.panels:
            any_errorbars |= any(c.has_errorbars() for c in p.clauses)
            if p.key_on:
                titles = [cu.title for cu in p.curves if cu.title]
                for t in titles:
                    found = find_text(self.words, t)
                    if not found:
                        self.fail(p.name(), "the key entry '%s' is not on the page (cut at"
                                  " the canvas' edge?)" % t)
                    elif (box(found)[2] > self.page_w - 1 or box(found)[0] < 1
                          or box(found)[1] < 1 or box(found)[3] > self.page_h - 1):
                        self.fail(p.name(), "the key entry '%s' reaches the canvas' edge"
                                  " (%.1f to %.1f of %.0f pt): the key is not inside it"
                                  % (t, box(found)[0], box(found)[2], self.page_w))
                # a key entry whose sample is a line promises one: a curve
                # `with lines` drawn through fewer than two points draws
                # nothing (a frontier of one knob)
                for cu in p.curves:
                    c = cu.clause
                    if not cu.title or c is None or c.style not in ("lines", "linespoints"):
                        continue
                    kinds = [kind for _, kind in cu.rows]
                    # gnuplot draws a segment with an end inside the plot
                    drawn = sum(1 for a, b in zip(kinds, kinds[1:])
                                if a in "io" and b in "io" and "i" in (a, b))
                    if not drawn:
                        self.fail(p.name(), "the key entry '%s' shows a line, and no segment"
                                  " of it is drawn (%d point(s) inside): an empty line in the"
                                  " key" % (cu.title, kinds.count("i")))
                if p.key_horizontal and len(titles) > 1 and not (p.key_reversed and p.key_left):
                    self.fail(p.name(), "a key with entries side by side draws each sample"
                              " after its text, so a sample reads as the next entry's: use"
                              " `Left reverse`")
            colours = {col for c in p.clauses for col in c.colours}
            for n, col in p.objects:
                if col in colours:
                    self.fail(p.name(), "the frame (object %d) has the colour of a data"
                              " series (%s): it reads as data" % (n, col))
        if any_errorbars:
            text = " ".join(w.text for w in self.words)
            if not re.search(r"\bCI\b|confidence|std|standard deviation|error bars?:", text):
                self.fail("key", "error bars are drawn but nothing on the page says what"
                          " they are (a 95 % CI over how many seeds?)")

    # -- content
    def check_savings(self):
        csv_path = self.gp_path[:-3] + ".csv"
        with open(csv_path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r.get("eta_saving_pct")]
        if not rows:
            return
        drawn = sum(1 for p in self.panels for cu in p.curves
                    if cu.clause is not None and cu.clause.style == "boxes"
                    for _, kind in cu.rows if kind == "i")
        if drawn != 2 * len(rows):
            self.fail("content", "%d bars drawn for the %d rows of %s (an ETA and a TTA bar"
                      " each): the figure leaves data out" % (drawn, len(rows),
                                                              os.path.basename(csv_path)))
        script = open(self.gp_path, encoding="utf-8").read()
        m = re.search(r"set multiplot .*?title '([^']*)'", script)
        title = m.group(1) if m else ""
        gpus = {r["gpu"] for r in rows}
        if len(gpus) == 1 and re.search(r"\bGPUs?\b", title) and "per" in title \
                and re.search(r"per [^(]*\bGPU", title):
            self.fail("content", "the title '%s' says per GPU; the figure has one GPU" % title)
        for sym, col in (("η", "eta"), ("β", "beta")):
            if len({r[col] for r in rows}) > 1 and re.search(r"%s = [-\d.]+[,;)]" % sym, title):
                self.fail("content", "the title '%s' gives one %s; the data hold %d"
                          % (title, sym, len({r[col] for r in rows})))

    def policy_colours(self):
        """{policy: colour} of the key entries naming a policy pair (its
        label, "grid+grid" read as "grid"), for the check across a set."""
        out = {}
        for p in self.panels:
            for cu in p.curves:
                c = cu.clause
                if not cu.title or c is None or not c.colours:
                    continue
                name = policy_of(cu.title)
                if name:
                    out.setdefault(name, c.colours[0])
        return out

    def run(self):
        self.check_axes()
        self.check_page()
        self.check_data()
        self.check_key()
        if os.path.basename(self.gp_path) == "savings.gp":
            self.check_savings()


POLICIES = {"default", "grid", "oracle", "zeus"}


def policy_of(title):
    """The policy pair a key entry names ("zeus+jit", "grid+grid settled ...",
    "default knob (192, 250 W)"), or None: its first word, when that is a
    pair's label (BSO+PLO, a pair of one policy read as that policy) or a
    built-in policy's name."""
    word = title.split()[0].rstrip(":,") if title.split() else ""
    if "+" in word:
        a, _, b = word.partition("+")
        return a if a == b else word
    return word if word in POLICIES else None


def check_colours(figures, base):
    """One policy, one colour across the whole set of figures: the
    problems, each naming the figures of each colour."""
    seen = {}                                     # policy -> colour -> [figure]
    for fig in figures:
        for name, colour in fig.policy_colours().items():
            seen.setdefault(name, {}).setdefault(colour, []).append(
                os.path.relpath(fig.gp_path[:-3], base))
    problems = []
    for name, colours in sorted(seen.items()):
        if len(colours) > 1:
            problems.append("policy '%s' has %d colours across the figures: %s" % (
                name, len(colours), "; ".join("%s in %s%s" % (c, ", ".join(f[:2]),
                                                                " ..." if len(f) > 2 else "")
                                               for c, f in sorted(colours.items()))))
    return problems


def check_one(gp_path, keep):
    panels = run_gnuplot(gp_path, keep)
    page_w, page_h, words = pdf_words(gp_path[:-3] + ".pdf")
    fig = Figure(gp_path, panels, page_w, page_h, words)
    fig.run()
    return fig


def figures_under(folders, only):
    found = []
    for top in folders:
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith(".gp") and os.path.exists(os.path.join(d, f[:-3] + ".pdf")):
                    path = os.path.join(d, f)
                    if not only or fnmatch.fnmatch(os.path.relpath(path, top), only):
                        found.append(path)
    return sorted(found)



def paper_md_copy(root, paper_md):
    """None when docs/commands.md shows paper.md as the reproduction wrote it
    (all but its title and first line, verbatim); else what differs."""
    with open(paper_md, encoding="utf-8") as f:
        lines = f.read().split("\n")
    body = "\n".join(lines[4:]).rstrip("\n") + "\n"
    with open(os.path.join(root, "docs", "commands.md"), encoding="utf-8") as f:
        doc = f.read()
    if body in doc:
        return None
    for line in body.split("\n"):
        if line and line not in doc:
            return "its copy of paper.md differs from the reproduction's; first line not shown: " + line[:160]
    return "its copy of paper.md differs from the reproduction's (order of lines)"

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--reproduce", metavar="ROOT")
    ap.add_argument("--wattsim", metavar="BIN")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", metavar="GLOB")
    ap.add_argument("--keep", metavar="DIR")
    ap.add_argument("--style", metavar="SPEC")
    a = ap.parse_args()
    for tool in ("gnuplot", "pdftotext"):
        if not shutil.which(tool):
            print("check_figures: %s not found (gnuplot-nox, poppler-utils)" % tool,
                  file=sys.stderr)
            return 2
    if bool(a.reproduce) == bool(a.folders):
        ap.error("give folders to check, or --reproduce ROOT")
    scratch = None
    copy_problem = None
    try:
        folders = a.folders
        if a.reproduce:
            scratch = tempfile.mkdtemp(prefix="ws-figures-")
            env = dict(os.environ)
            if a.wattsim:
                env["WS_WATTSIM"] = a.wattsim
            t0 = time.monotonic()
            r = subprocess.run([os.path.join(a.reproduce, "scripts", "reproduce-paper"),
                                "--no-setup", "--threads", "2", "--out",
                                os.path.join(scratch, "paper")]
                               + (["--style", a.style] if a.style else []), env=env,
                               capture_output=True, text=True)
            if r.returncode != 0:
                print("check_figures: scripts/reproduce-paper failed:\n" + r.stderr,
                      file=sys.stderr)
                return 2
            # `run`'s Pareto figures too, of a config with several etas,
            # seeds and pairs (one with a long label): what they show must
            # be said and their key must fit
            r = subprocess.run([env.get("WS_WATTSIM", os.path.join(a.reproduce, "build", "sim",
                                                                   "wattsim")),
                                "run", os.path.join(HERE, "run-multi.yaml"), "--out",
                                os.path.join(scratch, "paper", "run")]
                               + (["--set", "style=" + a.style] if a.style else []), env=env,
                               capture_output=True, text=True, cwd=a.reproduce)
            if r.returncode != 0:
                print("check_figures: wattsim run failed:\n" + r.stderr, file=sys.stderr)
                return 2
            run_dir = os.path.join(scratch, "paper", "run")
            for gp in sorted(f for f in os.listdir(run_dir) if f.endswith(".gp")):
                # `run` renders PNGs: the PDF the words are read from
                r = subprocess.run(["gnuplot", "-e", "out='%s.pdf'" % gp[:-3], gp], cwd=run_dir,
                                   capture_output=True, text=True, timeout=120)
                if r.returncode != 0:
                    print("check_figures: %s: gnuplot failed: %s" % (gp, r.stderr),
                          file=sys.stderr)
                    return 2
            print("reproduced the paper in %.1f s" % (time.monotonic() - t0))
            copy_problem = paper_md_copy(a.reproduce, os.path.join(scratch, "paper", "paper.md"))
            if copy_problem:
                print("docs/commands.md: %s" % copy_problem)
            folders = [os.path.join(scratch, "paper")]
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
        paths = figures_under(folders, a.only)
        if not paths:
            print("check_figures: no figure (NAME.gp with NAME.pdf) under %s"
                  % ", ".join(folders), file=sys.stderr)
            return 2
        t0 = time.monotonic()
        failed = 0
        base = folders[0] if len(folders) == 1 else "."
        figures = []
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
            for path, fig in zip(paths, pool.map(lambda p: check_one(p, a.keep), paths)):
                rel = os.path.relpath(path[:-3], base)
                for msg in fig.problems:
                    print("%s: %s" % (rel, msg))
                failed += bool(fig.problems)
                figures.append(fig)
        across = check_colours(figures, base)
        for msg in across:
            print("figure set: %s" % msg)
        print("%d figures checked in %.1f s, %d with problems%s"
              % (len(paths), time.monotonic() - t0, failed,
                 ", %d across the set" % len(across) if across else ""))
        return 1 if failed or across or copy_problem else 0
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print("check_figures: %s" % e, file=sys.stderr)
        return 2
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
