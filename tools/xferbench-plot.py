#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xferbench-plot.py - xferbench's shape curves as one SVG, from
`xferbench --csv` or `--json` (a file, or stdin).  No plotting library
needed: the SVG is written by hand.

Draws what the input holds, one chart each:
  rows   GB/s against row width (the `2d` cases): raw cudaMemcpy2DAsync,
         cuxfer_copy2d_async and the planner, each direction;
  tiles  GB/s against tile side (the `rois` cases): the per-tile loop, the
         plan under test, each strategy forced and the copy kernel alone
         (KERNEL's ceiling on the host), each direction;
both against the 1D link of the same run (the h2d-1d and d2h-1d raw
figures, which xferbench measures whenever those cases run).

    tools/xferbench --only 2d --csv > rows.csv
    tools/xferbench-plot.py rows.csv > doc/rows.svg
    tools/xferbench --only rois --only 2d --only banded --csv > shapes.csv
    tools/xferbench-plot.py shapes.csv > doc/shapes.svg
"""
import csv
import io
import json
import math
import re
import sys

ROW = re.compile(r"2d (h2d|d2h) rows (\d+) B (copy2d|planner)$")
TILE = re.compile(r"rois (h2d|d2h) \d+ of (\d+)x\d+ (?:\((\w+)\)|forced (\w+))$")
KALONE = re.compile(r"rois (h2d|d2h) \d+ of (\d+)x\d+ vs kernel alone$")
MIXED = re.compile(r"rois (h2d|d2h) \d+ mixed (\S+) \((\w+)\)$")
LINK = re.compile(r"(h2d|d2h)-1d pinned$")


def rows_of(text):
    """The rows of xferbench's CSV or JSON output, as dicts."""
    if text.lstrip().startswith("["):
        return json.loads(text)
    return list(csv.DictReader(io.StringIO(text)))


def load(text):
    rows, tiles, link, mixed = {}, {}, {}, {}
    for row in rows_of(text):
        name = row["case"]
        if not (ROW.match(name) or TILE.match(name) or KALONE.match(name)
                or MIXED.match(name) or LINK.match(name)):
            continue  # rows this plot does not draw, whatever they hold
        raw, cux = float(row["raw"]), float(row["cuxfer"])
        m = ROW.match(name)
        if m:
            d, w, kind = m.group(1), int(m.group(2)), m.group(3)
            rows.setdefault((d, "raw cudaMemcpy2DAsync"), {})[w] = raw
            label = "cuxfer_copy2d_async" if kind == "copy2d" else "cuxfer planner"
            rows.setdefault((d, label), {})[w] = cux
            continue
        m = TILE.match(name)
        if m:
            d, side = m.group(1), int(m.group(2))
            tiles.setdefault((d, "raw loop"), {})[side] = raw
            if m.group(3):  # the plan under test, named for its choice
                tiles.setdefault((d, "cuxfer_rois"), {})[side] = cux
            else:
                tiles.setdefault((d, "forced " + m.group(4)), {})[side] = cux
            continue
        m = KALONE.match(name)
        if m:  # its raw column: the copy kernel alone, KERNEL's ceiling
            tiles.setdefault((m.group(1), "kernel alone"), {})[int(m.group(2))] = raw
            continue
        m = MIXED.match(name)
        if m:
            mixed[m.group(1)] = (m.group(2), cux)
            continue
        m = LINK.match(name)
        if m:
            link[m.group(1)] = raw
    return rows, tiles, link, mixed


COLOURS = {"raw cudaMemcpy2DAsync": "#888", "raw loop": "#888",
           "cuxfer_copy2d_async": "#1f77b4", "cuxfer planner": "#d62728",
           "cuxfer_rois": "#d62728", "forced direct": "#2ca02c",
           "forced gather": "#9467bd", "forced kernel": "#ff7f0e",
           "kernel alone": "#8c564b"}
W, H, L, R, T, B = 760, 420, 60, 200, 30, 50


def size_label(v):
    if v < 1024:
        return "%d" % v
    return "%dK" % (v // 1024) if v < 1 << 20 else "%dM" % (v >> 20)


def chart(series, link, title, xlabel, notes, y0):
    """One chart at vertical offset y0: log2 x, linear GB/s, link lines."""
    xs = sorted({x for s in series.values() for x in s})
    top = max([v for s in series.values() for v in s.values()] + list(link.values())) * 1.05
    x0, x1 = math.log2(xs[0]), math.log2(xs[-1])
    span = (x1 - x0) or 1.0

    def X(x):
        return L + (math.log2(x) - x0) / span * (W - L - R)

    def Y(v):
        return y0 + T + (1 - v / top) * (H - T - B)

    out = ['<text x="%d" y="%d" font-size="13">%s</text>' % (L, y0 + 18, title)]
    step = 10 if top < 150 else 20
    for g in range(0, int(top) + 1, step):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (L, W - R, Y(g), Y(g)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (L - 5, Y(g) + 4, g))
    for x in xs:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (X(x), y0 + H - B + 16, size_label(x)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
               % ((L + W - R) // 2, y0 + H - 12, xlabel))
    ly = y0 + T + 10
    for d in sorted(link):
        dash = "" if d == "h2d" else ' stroke-dasharray="5,3"'
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="black" '
                   'stroke-width="1"%s/>' % (L, W - R, Y(link[d]), Y(link[d]), dash))
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"%s/>'
                   % (W - R + 10, W - R + 35, ly, ly, dash))
        out.append('<text x="%d" y="%d">%s 1D link %.1f</text>' % (W - R + 40, ly + 4, d, link[d]))
        ly += 18
    for (d, name), pts in sorted(series.items()):
        colour = COLOURS.get(name, "black")
        dash = "" if d == "h2d" else ' stroke-dasharray="5,3"'
        path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", X(x), Y(v))
                        for i, (x, v) in enumerate(sorted(pts.items())))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                   % (path, colour, dash))
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (W - R + 10, W - R + 35, ly, ly, colour, dash))
        out.append('<text x="%d" y="%d">%s %s</text>' % (W - R + 40, ly + 4, d, name))
        ly += 18
    for note in notes:
        out.append('<text x="%d" y="%d">%s</text>' % (W - R + 10, ly + 4, note))
        ly += 18
    return out


def svg(rows, tiles, link, mixed):
    charts = []
    if rows:
        charts.append((rows, "2D copies, strided side pitch = 2 x row: GB/s of ROI bytes",
                       "row width (bytes)", []))
    if tiles:
        notes = ["%s mixed %s: %.1f" % (d, m[0], m[1]) for d, m in sorted(mixed.items())]
        charts.append((tiles, "Tiles of an 8192x8192 RGBA8 image: GB/s of tile bytes",
                       "tile side (pixels)", notes))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (W, H * len(charts)),
           '<rect width="100%" height="100%" fill="white"/>']
    for i, (series, title, xlabel, notes) in enumerate(charts):
        out += chart(series, link, title, xlabel, notes, i * H)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        sys.stdout.write(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    try:
        text = open(sys.argv[1]).read() if len(sys.argv) == 2 else sys.stdin.read()
        rows, tiles, link, mixed = load(text)
    except (OSError, ValueError, KeyError) as e:
        sys.exit("xferbench-plot.py: %s: not xferbench --csv or --json output (%s)"
                 % (sys.argv[1] if len(sys.argv) == 2 else "stdin", e))
    if not rows and not tiles:
        sys.exit("xferbench-plot.py: no '2d ... rows' or 'rois ... of NxN' cases in the "
                 "input (run xferbench --only 2d --only rois --csv)")
    sys.stdout.write(svg(rows, tiles, link, mixed))


if __name__ == "__main__":
    main()
