#!/bin/bash
# SPDX-License-Identifier: MIT
# .ci/gpu-suite.sh - everything a GPU machine should run for cuxfer, in one
# call, within a time budget, leaving its logs behind even when a phase is
# cut short.  Usage:
#
#     bash .ci/gpu-suite.sh LOGDIR [PHASE...]
#
# PHASEs (default: all, in this order):
#   build     bootstrap, configure, make, build the tests
#   suite     CUXFER_REQUIRE_GPU=N make check (N = the GPUs present, 1 or 2)
#   runtimes  .ci/gpu-runtimes.sh run .rt (the C suite on CUDA 11.8 / 12.9;
#             needs the runtimes unpacked in .rt by `... fetch .rt`)
#   sanitize  make check-sanitizer over the composition and pool tests and the soak
#   soak      tests/soak/soak, a random seed (GPU_SUITE_SOAK_SEED to repeat
#             one), 4 threads, GPU_SUITE_SOAK_SECONDS (default 40); a
#             failure's replay file is kept as LOGDIR/soak.replay
#   bench     xferbench's targets (the whole table) and tools/roicopy-bench
#
# Every phase runs under `timeout -k` (GPU_SUITE_PHASE_SECONDS, default
# 240), writes LOGDIR/PHASE.log and appends a one-line result to
# LOGDIR/summary.txt, and LOGDIR/logs.tgz is rewritten after each phase, so
# a caller killed at its own limit still has everything before.  No phase
# runs in the background: a `wait` would also wait for process
# substitutions and can hang the script.
set -u
[ $# -ge 1 ] || { echo "usage: $0 LOGDIR [PHASE...]" >&2; exit 2; }
out=$1
shift
phases=${*:-build suite runtimes sanitize soak bench}
limit=${GPU_SUITE_PHASE_SECONDS:-240}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out/tests" || exit 1
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$out/summary.txt"; }
pack() { tar czf "$out/logs.tgz.new" -C "$out" --exclude=logs.tgz --exclude=logs.tgz.new . 2>/dev/null &&
             mv "$out/logs.tgz.new" "$out/logs.tgz"; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 2 ] && req=2 || req=1
export CUXFER_REQUIRE_GPU=$req CUXFER_TEST_TIMEOUT=${CUXFER_TEST_TIMEOUT:-180}
jobs=$(nproc 2>/dev/null || echo 4)

run_phase() { # NAME COMMAND...
    name=$1
    shift
    say "$name: start"
    timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && say "$name: CUT at ${limit}s" || say "$name: rc=$rc"
    pack
    return $rc
}

for phase in $phases; do
    case $phase in
    build)
        run_phase build sh -c "./bootstrap && ./configure --with-cuda=\${CUDA_HOME:-/usr/local/cuda} &&
            make -j$jobs && make -j$jobs check TESTS=" || exit 1 ;;
    suite)
        run_phase suite make -j"$jobs" check
        for f in tests/*.log tests/*/*.log; do
            [ -f "$f" ] && mkdir -p "$out/${f%/*}" && cp "$f" "$out/$f"
        done
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$out/suite.log" | tee -a "$out/summary.txt"
        grep -E '^(FAIL|ERROR)' "$out/suite.log" | head -40 | tee -a "$out/summary.txt"
        pack ;;
    runtimes)
        MAKEFLAGS_CHECK=-j$jobs run_phase runtimes sh .ci/gpu-runtimes.sh run .rt
        grep -E '^(ok|not ok)' "$out/runtimes.log" | tee -a "$out/summary.txt"
        pack ;;
    sanitize)
        run_phase sanitize make check-sanitizer SANITIZER_TESTS='tests/composition/foreign-capture tests/composition/pool-planner tests/streams/stream-wait-capture tests/rois/roundtrip tests/soak/soak'
        grep -E '^(PASS|FAIL|SKIP)' "$out/sanitize.log" | tail -20 | tee -a "$out/summary.txt"
        pack ;;
    soak)
        seed=${GPU_SUITE_SOAK_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
        say "soak: seed $seed"
        run_phase soak ./tests/soak/soak --seed "$seed" --seconds "${GPU_SUITE_SOAK_SECONDS:-40}" \
            --threads 4 --record "$out/soak.replay"
        grep -E '^(ok|not ok|Bail out)|^soak:' "$out/soak.log" | tee -a "$out/summary.txt"
        pack ;;
    bench)
        run_phase xferbench ./tools/xferbench
        grep -E 'PASS|MISS|missed' "$out/xferbench.log" | tee -a "$out/summary.txt"
        run_phase roicopy-bench python3 tools/roicopy-bench --roicopy tools/roicopy
        tail -15 "$out/roicopy-bench.log" | tee -a "$out/summary.txt"
        pack ;;
    *)
        echo "$0: unknown phase $phase" >&2
        exit 2 ;;
    esac
done
say done
pack
