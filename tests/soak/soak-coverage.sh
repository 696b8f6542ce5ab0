#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/soak/soak-coverage.sh SOAK-ARGS... - runs tests/soak/soak with
# SOAK-ARGS (soak-cpu.sh and soak-gpu.sh call it) and holds the calls it
# counted, one count per public function of include/cuxfer.h, against the
# header (TAP):
#   1. the soak passed;
#   2. it counted exactly the header's public functions, as
#      tests/soak/api-names.sh lists them from the header now (the list is
#      never written here: a function added to the header is in it);
#   3. every name of GPU_ONLY below is a public function;
#   4. with --cpu-only, every public function but those of GPU_ONLY was
#      called, and none of GPU_ONLY (it belongs off the list then); on a
#      device, every public function was called.
# Without a device the GPU soak's skip is passed on.
: "${top_srcdir:=$(dirname "$0")/../..}"
: "${top_builddir:=.}"
. "$top_srcdir/tests/lib/tap.sh"

# The public functions only the GPU mode reaches: they allocate, free or
# register memory, create, use or wait for streams, events, graphs and
# host threads, or ask the runtime about a pointer or a device, even on
# an object never created.  The CPU mode runs what the kit decides before
# it needs a device: arithmetic, argument checks and refusals, option
# resolution, the destroys and queries of objects never created, and the
# refusals of every other call on them (a pool's lease, a ring's slot, a
# latch armed: ops-cpu.c, op_unmade).
GPU_ONLY='
cuxfer_device_count cuxfer_memory_kind cuxfer_host_is_pinned cuxfer_managed_concurrent
cuxfer_device_max_pitch
cuxfer_view_wrap
cuxfer_host_free cuxfer_host_register cuxfer_host_unregister cuxfer_device_free
cuxfer_managed_alloc cuxfer_managed_free
cuxfer_stream_pool_sync
cuxfer_timer_create cuxfer_timer_create_with
cuxfer_stream_wait
cuxfer_event_pool_create cuxfer_event_pool_next cuxfer_event_pool_destroy
cuxfer_on_complete cuxfer_stream_is_capturing cuxfer_on_done
cuxfer_latch_init cuxfer_latch_init_on
cuxfer_ring_drain
cuxfer_graph_begin cuxfer_graph_end
'

cpu=0
for a in "$@"; do
    [ "$a" = --cpu-only ] && cpu=1
done
"$top_builddir/tests/soak/soak" "$@" >"$T/soak.out" 2>"$T/soak.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^1\.\.0 # SKIP' "$T/soak.out"; then
    grep '^1\.\.0 # SKIP' "$T/soak.out"
    exit 0
fi
sh "$top_srcdir/tests/soak/api-names.sh" "$top_srcdir/include/cuxfer.h" >"$T/header" || {
    echo "Bail out! tests/soak/api-names.sh found no public functions in include/cuxfer.h"
    exit 1
}
awk '$1 == "#" && $2 == "call" { print $3, $4 }' "$T/soak.out" >"$T/counts"

# 1. the soak's own verdict; the rest of its report (the counts too) as
# diagnostics, a bail-out as it is
sed -e '/^1\.\.1$/d' -e '/^ok 1 /d' -e '/^Bail out!/b' -e '/^#/b' -e 's/^/# /' "$T/soak.out"
if [ "$rc" = 0 ] && grep -q '^ok 1 ' "$T/soak.out"; then
    pass "$(sed -n 's/^ok 1 - //p' "$T/soak.out")"
else
    fail "the soak (tests/soak/soak $*) exited $rc"
    diag_file "$T/soak.err"
fi

# 2. the soak's functions are the header's
cut -d' ' -f1 "$T/counts" >"$T/soak-names"
if cmp -s "$T/header" "$T/soak-names"; then
    pass "the soak counts the header's $(wc -l <"$T/header" | tr -d ' ') public functions"
else
    fail "the soak counts other functions than the header declares (rebuild it?)"
    diff "$T/header" "$T/soak-names" | sed 's/^/#   /' | head -20
fi

# 3. GPU_ONLY names public functions
bad=
for f in $GPU_ONLY; do
    grep -qx "$f" "$T/header" || bad="$bad $f"
done
if [ -z "$bad" ]; then
    pass "GPU_ONLY names $(echo $GPU_ONLY | wc -w | tr -d ' ') public functions"
else
    fail "GPU_ONLY names functions the header does not declare:$bad"
fi

# 4. every function called (on the CPU: but GPU_ONLY's, and none of them)
missed= stale=
while read -r f n; do
    case " $(echo $GPU_ONLY) " in
    *" $f "*) gpu_only=1 ;;
    *) gpu_only=0 ;;
    esac
    if [ "$cpu" = 1 ] && [ "$gpu_only" = 1 ]; then
        [ "$n" -gt 0 ] && stale="$stale $f"
    elif ! [ "$n" -gt 0 ]; then
        missed="$missed $f"
    fi
done <"$T/counts"
if [ "$cpu" = 1 ]; then
    what="every public function but GPU_ONLY's is called in the CPU mode, and none of GPU_ONLY's"
else
    what="every public function is called on the device"
fi
if [ -z "$missed$stale" ] && [ -s "$T/counts" ]; then
    pass "$what"
else
    fail "$what"
    [ -n "$missed" ] && echo "#   never called:$missed"
    [ -n "$stale" ] && echo "#   called, yet on GPU_ONLY (take them off):$stale"
fi
finish
