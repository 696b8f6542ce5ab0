#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/xferbench-plot.py draws the row-width and tile-size curves against
# the link from xferbench's CSV or JSON, with no GPU and no plotting
# library.  The input is made from the names `xferbench --list` prints and
# the suffixes its rows add, so a renamed case breaks this test before it
# breaks a plot.
: "${top_builddir:=.}" "${top_srcdir:=.}"
xb=$top_builddir/tools/xferbench
plot=$top_srcdir/tools/xferbench-plot.py
if [ ! -x "$xb" ]; then echo "1..0 # SKIP tools/xferbench not built"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..0 # SKIP python3 not found"; exit 0; fi
echo "1..6"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

# A sweep's CSV: every case of --list with the rows xferbench prints for it
# (figures made up: GB/s rising with the size), fields with commas quoted
# as xferbench quotes them
"$xb" --list --only rois --only 2d --only enqueue-8t >"$tmp/list" || exit 1
awk 'BEGIN { print "case,unit,raw,raw_cv,cuxfer,cuxfer_cv,ratio,target,verdict" }
/^h2d-1d$/ { print "h2d-1d pinned,GB/s,55.5,0.01,55.4,0.01,1.0,>=0.99x,PASS" }
/^d2h-1d$/ { print "d2h-1d pinned,GB/s,55.3,0.01,55.2,0.01,1.0,>=0.99x,PASS" }
/^enqueue-8t$/ { print "\"enqueue-8t 8 threads, 16 bufs each (cost)\",us,2.1,0,2.2,0,1.05,<=1.10x,PASS" }
/^2d / { w = $4; v = 10 + log(w); printf "%s copy2d,GB/s,%g,0,%g,0,1,-,-\n", $0, v, v
         printf "%s planner,GB/s,%g,0,%g,0,1,\">=0.98x,cv<=5%%\",PASS\n", $0, v, v + 5 }
/^rois / { v = 1 + log($3 + 1)
           printf "%s (kernel),GB/s,%g,0,%g,0,1,-,-\n", $0, v / 4, v
           printf "%s forced direct,GB/s,%g,0,%g,0,1,info,-\n", $0, v / 4, v / 4
           printf "%s forced gather,GB/s,%g,0,%g,0,1,info,-\n", $0, v / 4, v / 2
           printf "%s forced kernel,GB/s,%g,0,%g,0,1,info,-\n", $0, v / 4, v
           printf "%s auto vs best (kernel),GB/s,%g,0,%g,0,1,>=0.97x,PASS\n", $0, v, v
           printf "%s of link,GB/s,55.5,0,%g,0,1,>=0.85x,MISS\n", $0, v }' \
    "$tmp/list" >"$tmp/sweep.csv"

python3 "$plot" "$tmp/sweep.csv" >"$tmp/sweep.svg" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
    "$tmp/sweep.svg" 2>>"$tmp/err"
point $? "a sweep's CSV gives well-formed SVG (status $rc)" "$tmp/err"

# Both charts, the link in each, and 6 row curves + 10 tile curves
grep -q 'row width (bytes)' "$tmp/sweep.svg" && grep -q 'tile side (pixels)' "$tmp/sweep.svg" &&
    [ "$(grep -c '>h2d 1D link 55.5<' "$tmp/sweep.svg")" = 2 ] &&
    [ "$(grep -c '<path ' "$tmp/sweep.svg")" = 16 ]
point $? "row-width and tile-size charts, each with the link, 16 curves" "$tmp/sweep.svg"

# The plan's upload curve has a point for every tile side the sweep listed,
# and the mixed case is noted
sides=$(grep -c '^rois h2d [0-9]* of ' "$tmp/list")
python3 - "$tmp/sweep.svg" "$sides" <<'PY' && grep -q '>h2d mixed 8-256: ' "$tmp/sweep.svg"
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
kids = list(root)
# the legend line before "h2d cuxfer_rois" has the curve's colour: the path
# drawn just before that legend entry is the curve
for i, k in enumerate(kids):
    if k.tag == ns + "text" and k.text == "h2d cuxfer_rois":
        path = kids[i - 2]
        points = path.get("d").count("L") + 1
        sys.exit(0 if points == int(sys.argv[2]) else "%d points" % points)
sys.exit("no h2d cuxfer_rois curve")
PY
point $? "the plan's upload curve has all $sides tile sides; mixed sizes noted"

# The same run as JSON (numbers as numbers, as xferbench --json writes
# them) draws the same picture
python3 - "$tmp/sweep.csv" >"$tmp/sweep.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    for k in ("raw", "raw_cv", "cuxfer", "cuxfer_cv", "ratio"):
        r[k] = float(r[k])
json.dump(rows, sys.stdout, indent=1)
PY
python3 "$plot" "$tmp/sweep.json" >"$tmp/json.svg" 2>"$tmp/err" && cmp -s "$tmp/sweep.svg" "$tmp/json.svg"
point $? "--json output draws the same SVG as --csv" "$tmp/err"

# Nothing to draw, or not xferbench's output: one clear line, status 1
printf 'case,unit,raw,raw_cv,cuxfer,cuxfer_cv,ratio,target,verdict\npool 1 MiB,us,900,0,0.06,0,0,<=0.25us,PASS\n' |
    python3 "$plot" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
    grep -q "^xferbench-plot.py: no '2d ... rows' or 'rois ... of NxN' cases" "$tmp/err"
point $? "no curve in the input: one line naming what is missing, status 1 (got $rc)" "$tmp/err"
printf 'not a table\n1,2\n' | python3 "$plot" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
    grep -q '^xferbench-plot.py: stdin: not xferbench --csv or --json output' "$tmp/err"
point $? "input that is not xferbench's: one line, no traceback, status 1 (got $rc)" "$tmp/err"
