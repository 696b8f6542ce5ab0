#!/bin/sh
# SPDX-License-Identifier: MIT
# The soak's watchdog, without a device: a step past --step-limit fails
# the run as a HANG that names it; with --hang-hold the soak then says
# whether the step ended late (slow) or was still running when the hold
# ran out (stuck).  --stall makes a step slow on purpose.
. "${top_srcdir:-.}/tests/lib/tap.sh"
soak="$(cd "${top_builddir:-.}" && pwd)/tests/soak/soak"

# soak_run STATUS DESC ARGS...: a short CPU soak must exit with STATUS;
# its output is left in $T/out
soak_run() {
    want=$1 desc=$2
    shift 2
    (cd "$T" && "$soak" --cpu-only --seed 3 --steps 40 --threads 2 --record /dev/null "$@") \
        >"$T/out" 2>&1
    got=$?
    if [ "$got" = "$want" ]; then
        pass "$desc: exit $got"
    else
        fail "$desc: exit $got, not $want"
        diag_file "$T/out"
    fi
}
# has DESC ERE: the last run's output matches
has() {
    if grep -Eq "$2" "$T/out"; then pass "$1"; else fail "$1"; diag_file "$T/out"; fi
}
lacks() {
    if grep -Eq "$2" "$T/out"; then fail "$1"; diag_file "$T/out"; else pass "$1"; fi
}

soak_run 0 "a stall below the limit" --stall 5:200 --step-limit 5000
lacks "no HANG reported" 'HANG'

soak_run 3 "a stall past the limit" --stall 5:3000 --step-limit 300
has "the HANG names the seed, thread and step" \
    '^not ok 1 - soak: HANG: seed 3 thread 0 step 5 op [a-z0-9_-]+ ran [0-9]+ ms \(bound 300 ms\)'
lacks "no hold without --hang-hold" 'holding pid'

soak_run 3 "a slow step, held" --stall 5:1500 --step-limit 300 --hang-hold 20
has "the hold prints the pid" '^# holding pid [0-9]+ for 20 s'
has "the step is told slow, not stuck" '^# the step ended after [0-9]+ ms: slow, not stuck'
ms=$(sed -n 's/^# the step ended after \([0-9]*\) ms.*/\1/p' "$T/out")
if [ "${ms:-0}" -ge 1400 ]; then
    pass "it ended after the stall ($ms ms)"
else
    fail "it ended after ${ms:-?} ms, before the 1500 ms stall"
fi

soak_run 3 "a step that outlasts the hold" --stall 5:8000 --step-limit 300 --hang-hold 1
has "the step is told still running" '^# the step still runs after [0-9]+ ms'
lacks "and not slow" 'slow, not stuck'

soak_run 2 "--stall without :MS is refused" --stall 5
has "the refusal names the value" 'soak: --stall 5 is not STEP:MS'
finish
