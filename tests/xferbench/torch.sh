#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/xferbench-torch.py: its command line with no GPU and no PyTorch (a
# bad option, count or case is refused by name, status 2, before PyTorch
# is asked for; without PyTorch it says so and exits 77); where PyTorch
# and a GPU are both present, a short run prints every asked case with
# PyTorch's two routes, cuxfer's figure and their ratio, each result
# having matched the CPU's copy byte for byte.
: "${top_builddir:=.}" "${top_srcdir:=.}"
xb=$top_builddir/tools/xferbench
tb=$top_srcdir/tools/xferbench-torch.py
if [ ! -x "$xb" ]; then echo "1..0 # SKIP tools/xferbench not built"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "1..0 # SKIP python3 not found"; exit 0; fi
echo "1..9"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
run() { python3 "$tb" --xferbench "$xb" "$@" >"$tmp/out" 2>"$tmp/err"; }

python3 "$tb" --help >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && grep -q '^usage: xferbench-torch.py' "$tmp/out" && grep -q 'whole+gather' "$tmp/out"
point $? "--help: the routes and the usage, status 0 (got $rc)" "$tmp/out"

rejects() { # WHAT MESSAGE ARGS...: status 2, MESSAGE on stderr, nothing on stdout
    what=$1 msg=$2
    shift 2
    run "$@"
    rc=$?
    [ $rc = 2 ] && grep -qxF "xferbench-torch.py: $msg" "$tmp/err" && [ ! -s "$tmp/out" ]
    point $? "$what: status 2, '$msg' (got $rc)" "$tmp/err"
}
rejects "an unknown option" "unknown option --bogus (--help lists them)" --bogus
rejects "--reps 0" "--reps 0: not a count from 1 to 1000" --reps 0
rejects "a width that is not a number" "--widths 1,x: not a list of positive integers" --widths 1,x
rejects "a tile side xferbench has no case for" "--sides 7: xferbench has no such case" --sides 7,8

# xferbench's status 1 is a missed target (the figures stand) or bytes that
# differ (they do not): its notes on standard error (a strategy the runtime
# lacks: CUDA 11.8 has no copy kernel) are no failure, anything else is.
# A stand-in runs the real xferbench, then says $SAY and turns 0 into 1.
printf '#!/bin/sh\n"%s" "$@"; rc=$?\necho "$SAY" >&2\n[ $rc = 0 ] && exit 1\nexit $rc\n' \
    "$xb" >"$tmp/xb-says"
chmod +x "$tmp/xb-says"
SAY='xferbench: rois: kernel not measured: cuxfer_rois_create: the copy kernel needs CUDA 12.5' \
    python3 "$tb" --xferbench "$tmp/xb-says" --sides 8 --widths 1 --reps 3 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc != 1 ] && ! grep -q 'exit 1' "$tmp/err"
point $? "a missed target with only xferbench's notes said goes on (got $rc)" "$tmp/err"
SAY='xferbench: rois h2d 65536 of 8x8: data verification FAILED' \
    python3 "$tb" --xferbench "$tmp/xb-says" --sides 8 --widths 1 --reps 3 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q 'exit 1: xferbench: rois h2d 65536 of 8x8: data verification FAILED' "$tmp/err"
point $? "status 1 with a failure said is a failure, naming it (got $rc)" "$tmp/err"

# The run itself: 77 without PyTorch (or without a device for it), else
# the figures
run --sides 8,64 --widths 1,8 --reps 3
rc=$?
if ! python3 -c 'import torch' 2>/dev/null; then
    [ $rc = 77 ] && grep -q '^xferbench-torch.py: PyTorch is needed' "$tmp/err"
    point $? "without PyTorch: said, status 77 (got $rc)" "$tmp/err"
    skip_one "PyTorch not found"
    exit 0
fi
if [ $rc = 77 ] && [ -z "${CUXFER_REQUIRE_GPU:-}" ]; then
    skip_one "$(cat "$tmp/err")"
    skip_one "no CUDA device for PyTorch"
    exit 0
fi
[ $rc = 0 ] && [ ! -s "$tmp/err" ]
point $? "a short run: status 0, nothing on stderr (got $rc)" "$tmp/err"
# every case once, its three figures positive numbers, the ratio cuxfer /
# the best route as printed: to 3 decimals, so within 0.0005 and 1 % of
# the figures' own ratio (a runtime without the copy kernel, CUDA 11.8, has
# ratios of a few hundredths)
awk 'function num(x) { return x ~ /^[0-9]+\.[0-9]+$/ && x + 0 > 0 }
     /^(2d h2d rows|rois h2d) / { k = NF
         if (!num($(k-3)) || !num($(k-2)) || !num($(k-1)) || $k !~ /^[0-9]+\.[0-9][0-9][0-9]$/)
             bad = bad " " $0
         best = $(k-3) > $(k-2) ? $(k-3) : $(k-2)
         r = $(k-1) / best
         d = r - $k
         if (d < 0) d = -d
         if (d > 0.00051 + 0.01 * r) bad = bad " ratio:" $0
         seen[$0 ~ /^2d/ ? "r" $4 : "t" $5]++ }
     END { if (bad != "") { print "bad lines:" bad; exit 1 }
           exit !(seen["r1"] == 1 && seen["r8"] == 1 && seen["t8x8"] == 1 && seen["t64x64"] == 1) }' \
    "$tmp/out" >"$tmp/why" 2>&1
rc=$?
cat "$tmp/out" >>"$tmp/why"
point $rc "every asked case once: PyTorch's two routes, cuxfer, cuxfer / the best" "$tmp/why"
