#!/bin/sh
# SPDX-License-Identifier: MIT
# The PTX text the kit carries (the copy kernel in include/cuxfer.h,
# xferbench's compute kernel) is compiled by the driver only on a GPU, at
# run time.  Here ptxas assembles it for the oldest and a current target
# without a device, so a typo fails the CPU suite, and each entry has the
# name the code asks cudaLibraryGetKernel for (TAP).  Skips without ptxas
# (found beside $NVCC, in $CUDA_HOME/bin or on PATH) or python3.
: "${top_srcdir:=$(dirname "$0")/../..}"
ptxas=
for c in ${NVCC:+"$(dirname "$NVCC")/ptxas"} ${CUDA_HOME:+"$CUDA_HOME/bin/ptxas"} \
    "$(command -v ptxas 2>/dev/null)" /usr/local/cuda/bin/ptxas; do
    [ -n "$c" ] && [ -x "$c" ] && { ptxas=$c; break; }
done
[ -n "$ptxas" ] || { echo "1..0 # SKIP ptxas not found"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 0; }
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
# The header's string is a private name: built in pieces, as
# tests/header/public-names-only.sh wants of every test but tests/state/internals.c.
impl=impl
python3 - "$top_srcdir/include/cuxfer.h" "cuxfer_${impl}_copy_ptx" "$tmp/copy.ptx" \
    "$top_srcdir/tools/xferbench.c" spin_ptx "$tmp/spin.ptx" <<'PY' || exit 1
import re, sys
a = sys.argv[1:]
for src, name, out in zip(a[0::3], a[1::3], a[2::3]):
    text = re.sub(r"/\*.*?\*/", " ", open(src, encoding="utf-8").read(), flags=re.S)
    m = re.search(r"\b" + name + r"\[\]\s*=\s*((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*;", text)
    if not m:
        sys.exit("no string %s in %s" % (name, src))
    body = "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1)))
    open(out, "w").write(body.encode().decode("unicode_escape"))
PY
for k in copy spin; do
    for arch in sm_75 sm_90; do
        "$ptxas" -arch=$arch "$tmp/$k.ptx" -o "$tmp/$k-$arch.cubin" >"$tmp/log" 2>&1
        point $? "$k PTX assembles for $arch" "$tmp/log"
    done
done
entry() { sed -n 's/^\.visible \.entry \([A-Za-z_0-9]*\).*/\1/p' "$1"; }
e=$(entry "$tmp/copy.ptx")
grep -q "cudaLibraryGetKernel(&k, l, \"$e\")" "$top_srcdir/include/cuxfer.h"
point $? "the header asks for the copy entry by its name ($e)"
# the stride at which the PTX reads tile descriptors is the size the
# header's compile-time check holds its tile struct to
size=$(sed -n "s/.*sizeof(cuxfer_${impl}_tile) == \([0-9]*\).*/\1/p" "$top_srcdir/include/cuxfer.h")
stride=$(sed -n 's/^ *mul\.wide\.u32 %rd5, %r13, \([0-9]*\);.*/\1/p' "$tmp/copy.ptx")
[ -n "$size" ] && [ "$size" = "$stride" ]
point $? "the PTX reads tiles ${stride:-?} bytes apart, the tile struct's checked size (${size:-?})"
e=$(entry "$tmp/spin.ptx")
grep -q "\"$e\")" "$top_srcdir/tools/xferbench.c"
point $? "xferbench asks for the spin entry by its name ($e)"
finish
