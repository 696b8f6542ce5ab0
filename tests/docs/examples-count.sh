#!/bin/sh
# SPDX-License-Identifier: MIT
# The ports of NVIDIA's cuda-samples in examples/ stay shorter than the
# originals: their transfer statements (.ci/count-transfer-statements.py
# says what counts) are at most 0.80 of the originals' in all.  The
# originals' counts were taken with the same script from
# github.com/NVIDIA/cuda-samples (Samples/0_Introduction): asyncAPI 16,
# simpleStreams 36, simpleCallback 9, simpleMultiCopy 40.  To count them again: .ci/count-transfer-statements.py --pairs
# ORIGINAL PORT ...
: "${top_srcdir:=.}"
count="$top_srcdir/.ci/count-transfer-statements.py"
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 not found"
    exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
total=0
for pair in async-api:16 simple-streams:36 simple-callback:9 simple-multi-copy:40; do
    name=${pair%%:*} orig=${pair#*:}
    n=$(python3 "$count" "$top_srcdir/examples/$name.cu" | awk '{ print $1 }')
    total=$((total + n))
    if [ -n "$n" ] && [ "$n" -le "$orig" ]; then
        pass "$name: $n transfer statements (the original: $orig)"
    else
        fail "$name: ${n:-no count} transfer statements, more than the original's $orig"
    fi
done
# 0.80 of the originals' 101 statements: 80.
if [ "$total" -le 80 ]; then
    pass "the four ports: $total transfer statements, at most 0.80 of the originals' 101"
else
    fail "the four ports: $total transfer statements, more than 0.80 of the originals' 101"
fi
# The rule is the same for both sides: peer access and helper_cuda's launch
# check count on the raw side as cuxfer_peer_enable and CUXFER_CHECK_LAUNCH
# do on cuxfer's; device queries count on neither.
cat >"$T/raw.cu" <<'EOF'
int main(void) {
    int n, can;
    cudaGetDeviceCount(&n);
    cudaDeviceCanAccessPeer(&can, 0, 1);
    checkCudaErrors(cudaDeviceEnablePeerAccess(1, 0));
    k<<<1, 1>>>();
    getLastCudaError("k");
}
EOF
cat >"$T/kit.cu" <<'EOF'
int main(void) {
    int n = cuxfer_device_count(), c = cuxfer_managed_concurrent(0);
    CUXFER_CHECK(cuxfer_peer_enable(0, 1));
    k<<<1, 1>>>();
    CUXFER_CHECK_LAUNCH();
}
EOF
raw=$(python3 "$count" "$T/raw.cu" | awk '{ print $1 }')
kit=$(python3 "$count" "$T/kit.cu" | awk '{ print $1 }')
[ "$raw" = 3 ] && [ "$kit" = 2 ]
point $? "peer access and launch checks count on both sides, device queries on neither (raw $raw of 3, cuxfer $kit of 2)"
finish 6
