#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xferbench-plot.py - bandwidth against row width, as an SVG, from
`xferbench --csv` (stdin or a file).  No plotting library needed.

    tools/xferbench --only 2d --csv > rows.csv
    tools/xferbench-plot.py rows.csv > doc/rows.svg
"""
import csv
import math
import re
import sys


def load(f):
    series = {}  # (direction, method) -> {width: GB/s}
    for row in csv.DictReader(f):
        m = re.match(r"2d (h2d|d2h) rows (\d+) B (copy2d|planner)", row["case"])
        if not m:
            continue
        d, w, kind = m.group(1), int(m.group(2)), m.group(3)
        series.setdefault((d, "raw cudaMemcpy2DAsync"), {})[w] = float(row["raw"])
        name = "cuxfer_copy2d_async" if kind == "copy2d" else "cuxfer planner"
        series.setdefault((d, name), {})[w] = float(row["cuxfer"])
    return series


def svg(series):
    W, H, L, R, T, B = 760, 420, 60, 190, 30, 50
    widths = sorted({w for s in series.values() for w in s})
    top = max(v for s in series.values() for v in s.values()) * 1.05
    x0, x1 = math.log2(widths[0]), math.log2(widths[-1])

    def X(w):
        return L + (math.log2(w) - x0) / (x1 - x0) * (W - L - R)

    def Y(v):
        return T + (1 - v / top) * (H - T - B)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="13">2D copies, strided side pitch = 2 x row: '
           'GB/s of ROI bytes</text>' % L]
    for g in range(0, int(top) + 1, 10):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (L, W - R, Y(g), Y(g)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (L - 5, Y(g) + 4, g))
    for w in widths:
        label = "%d" % w if w < 1024 else ("%dK" % (w // 1024) if w < 1 << 20 else "1M")
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (X(w), H - B + 16, label))
    out.append('<text x="%d" y="%d" text-anchor="middle">row width (bytes)</text>'
               % ((L + W - R) // 2, H - 12))
    colours = {"raw cudaMemcpy2DAsync": "#888", "cuxfer_copy2d_async": "#1f77b4",
               "cuxfer planner": "#d62728"}
    ly = T + 10
    for (d, name), pts in sorted(series.items()):
        dash = "" if d == "h2d" else ' stroke-dasharray="5,3"'
        path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", X(w), Y(v))
                        for i, (w, v) in enumerate(sorted(pts.items())))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                   % (path, colours.get(name, "black"), dash))
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (W - R + 10, W - R + 35, ly, ly, colours.get(name, "black"), dash))
        out.append('<text x="%d" y="%d">%s %s</text>' % (W - R + 40, ly + 4, d, name))
        ly += 18
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    f = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    series = load(f)
    if not series:
        sys.exit("xferbench-plot.py: no '2d ... rows' cases in the input")
    sys.stdout.write(svg(series))


if __name__ == "__main__":
    main()
