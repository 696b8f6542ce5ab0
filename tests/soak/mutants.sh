#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/soak/mutants.sh SRCDIR - the soak must be able to fail.  Each
# mutant below is a deliberately broken copy of include/cuxfer.h (one sed
# edit); the soak is built against it and run, and must fail.  Prints how
# fast each was caught; exits 1 when a mutant survives, when an edit no
# longer applies (the header changed: update the mutant), or when the
# unmutated build fails.  CPU mutants run the CPU-only soak; GPU mutants
# need a device and are skipped (said so) without one.  asan mutants are
# CPU mutants that change no answer, only read or write past a buffer:
# their soak is built with AddressSanitizer (-fsanitize=address), and they
# are skipped (said so) where CC has no working ASan or MUTANT_ASAN=0.
# The other CPU mutants are built without it: a build with ASan takes
# about twice as long, and the builds are nearly all of the time (every
# CPU mutant with ASan: 20 min against 12 for 80 of them, HACKING
# "Soak").  `make soak-mutants` runs it with the configured CC and CUDA
# flags.
# Environment: CC CFLAGS CPPFLAGS (CUDA's) LIBS; MUTANT_SECONDS (GPU runs, 120);
# MUTANT_MODES (which mutants: "cpu gpu", the default, or one of them; "cpu"
# takes the asan ones too); MUTANT_THREADS (host threads of the GPU soak,
# 1); MUTANT_ASAN (0: skip the asan mutants); ASAN_OPTIONS
# (protect_shadow_gap=0 is put first, as .ci/sanitize.sh does, for CUDA).
set -u
srcdir=${1:-.}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2}
CPPFLAGS=${CPPFLAGS:--isystem /usr/local/cuda/include}
LIBS=${LIBS:--L/usr/local/cuda/lib64 -lcudart -lpthread -lm}
secs=${MUTANT_SECONDS:-120}
modes=${MUTANT_MODES:-cpu gpu}
work=$(mktemp -d "${TMPDIR:-/tmp}/soak-mutants.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
ASAN_OPTIONS="protect_shadow_gap=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
asan=
if [ "${MUTANT_ASAN:-1}" != 0 ]; then
    printf 'int main(void) { return 0; }\n' >"$work/asan.c"
    # shellcheck disable=SC2086
    if $CC $CFLAGS -fsanitize=address -fno-omit-frame-pointer "$work/asan.c" \
        -o "$work/asan" >/dev/null 2>&1 && "$work/asan"; then
        asan='-fsanitize=address -fno-omit-frame-pointer'
    else
        echo "soak-mutants: $CC has no working -fsanitize=address: the asan mutants are skipped"
    fi
fi

# name|cpu, asan or gpu|sed script (applied to a copy of the header; '#'
# delimits; @I@ stands for the header's private prefix and @IU@ for its
# upper-case form, which tests name only in tests/state/internals.c:
# tests/header/public-names-only.sh).
# asan: a CPU mutant whose answers are right, which only ASan sees.
mutants='roi-bounds-off-by-one|cpu|s#if (end > v->width)$#if (end > v->width + 1)#
view-pitch-check-off-by-one|cpu|s#^    if (row > v->pitch)$#    if (row > v->pitch + 1)#
elem-size-check-removed|cpu|s#if (v->elem_size < 1 || v->elem_size > CUXFER_ELEM_MAX)#if (v->elem_size < 1)#
copy-overlap-off-by-one|cpu|s#if (d < s + bytes \&\& s < d + bytes)#if (d < s + bytes \&\& s + 1 < d + bytes)#
copy2d-overlap-reason-wrong-row|cpu|s#^            \*ilo = k + 1;#            *ilo = k + 2;#
copy2d-interleave-taken-for-disjoint|cpu|s#^            return 2;$#            return 0;#
view-at-ignores-elem-size|cpu|s#return (unsigned char \*)v->ptr + y \* v->pitch + x \* v->elem_size;#return (unsigned char *)v->ptr + y * v->pitch + x;#
rois-dense-capacity-off-by-one|cpu|s#if (sum > cap)#if (sum > cap + 1)#
overlap-equal-pitch-off-by-one|cpu|s#if (k < lo->h \&\& d - k \* lo->pitch < lo->w) {#if (k < lo->h \&\& d - k * lo->pitch + 1 < lo->w) {#
pool-wrap-reads-before-count|cpu|s#CUXFER_TRY(cuxfer_@I@_pool_count("cuxfer_stream_pool_wrap", count));#(void)0;#
max-pitch-bounds-dense-views|cpu|s#if (src->height <= 1 || (dst->pitch == row \&\& src->pitch == row))#if (src->height <= 1)#
policy-accepts-prefixes|cpu|s#if (!names\[i\]\[j\] \&\& !s\[j\])#if (!names[i][j])#
default-stream-policy-drops-allow|cpu|s#return p > 0 ? p : CUXFER_DEFAULT_STREAM_POLICY;#return p > 1 ? p : CUXFER_DEFAULT_STREAM_POLICY;#
pool-class-rounds-down|cpu|s#c = (n + step - 1) \& ~(step - 1);#c = n \& ~(step - 1);#
view-sub-hangs-on-x-1|cpu|s#CUXFER_TRY(cuxfer_view_check(v, "cuxfer_view_sub:"));#CUXFER_TRY(cuxfer_view_check(v, "cuxfer_view_sub:")); while (roi.x == 1) sched_yield();#
plan-choose-ignores-min-bytes|cpu|s#if (want == CUXFER_PLAN_DIRECT || total < p->tuning.min_bytes)#if (want == CUXFER_PLAN_DIRECT)#
calibrate-ready-check-removed|cpu|/^CUXFER_API cudaError_t cuxfer_plan2d_calibrate(/,/^}/s#if (!p || !p->ready)#if (!p)#
stager-slots-bound-off-by-one|cpu|s#if (o.slots < 1 || o.slots > CUXFER_STAGER_MAX_SLOTS)$#if (o.slots < 1 || o.slots > CUXFER_STAGER_MAX_SLOTS + 1)#
ring-slot-ms-leaves-ms|cpu|/^CUXFER_API cudaError_t cuxfer_ring_slot_ms(/,/^}/s#^        \*ms = 0.0f;#        (void)ms;#
managed-target-check-removed|cpu|s#^    if (target < CUXFER_CPU)$#    if (target < CUXFER_CPU - 1000)#
gbps-in-kilobytes|cpu|s#return ms > 0.0f ? (double)bytes / ((double)ms \* 1e6) : 0.0;#return ms > 0.0f ? (double)bytes / ((double)ms * 1e3) : 0.0;#
pool-destroy-refuses-zeroed|cpu|/^CUXFER_API cudaError_t cuxfer_stream_pool_destroy(cuxfer_stream_pool \*p)$/,/^}/s#^        return cudaSuccess;#        return cuxfer_@I@_fail(cudaErrorInvalidValue, "not created");#
view-init-kind-range-off-by-one|cpu|s#(int)kind > (int)CUXFER_MEMORY_MANAGED)#(int)kind > (int)CUXFER_MEMORY_MANAGED + 1)#
view-span-to-the-top-refused|cpu|s#if ((uintptr_t)v->ptr > UINTPTR_MAX - span)#if ((uintptr_t)v->ptr >= UINTPTR_MAX - span)#
sub-offset-overflow-unchecked|cpu|s#if (cuxfer_@I@_mul(roi.y, v->pitch, \&off) != 0 ||#if ((off = roi.y * v->pitch, 0) ||#
sub-keeps-owner-flags|cpu|s#^    sub->flags = 0;#    (void)sub;#
sub-null-unchecked|cpu|s#if (!sub)$#if (0)#
view-init-null-unchecked|cpu|/^CUXFER_API cudaError_t cuxfer_view_init(/,/^}/s#^    if (!v)$#    if (0)#
host-alloc-null-unchecked|cpu|/^CUXFER_API cudaError_t cuxfer_host_alloc(/,/^}/s#^    if (!p)$#    if (0)#
policy-parse-null-is-warn|cpu|/^CUXFER_API int cuxfer_pageable_policy_parse(/,/^}/s#^        return 0;#        return 2;#
view-check-null-unchecked|cpu|/^CUXFER_API cudaError_t cuxfer_@I@_view_check(/,/^}/s#^    if (!v)$#    if (0)#
sub-reason-names-height|cpu|s#exceeds view width %zu", end, v->width);#exceeds view width %zu", end, v->height);#
view-reason-drops-what|cpu|s#"%s%s%s elem_size %zu is outside 1..%d", \([A-Z_]*\),#"%.0s%.0s%.0selem_size %zu is outside 1..%d", \1,#
reason-cut-without-dots|cpu|s#memcpy(r + CUXFER_REASON_MAX - 4, "...", 4);#(void)r;#
host-alloc-takes-unknown-flag|cpu|s#cudaHostAllocWriteCombined;$#cudaHostAllocWriteCombined | 0x80u;#
copy-range-to-the-top-refused|cpu|s#if (d > UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)#if (d >= UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)#
copy2d-elem-sizes-unchecked|cpu|s#^        dst->elem_size != src->elem_size)$#        0)#
max-pitch-checks-one-row|cpu|s#if (src->height <= 1 || (dst->pitch == row \&\& src->pitch == row))#if (src->height < 1 || (dst->pitch == row \&\& src->pitch == row))#
max-pitch-refuses-the-bound|cpu|s#if (max_pitch \&\& v->pitch > max_pitch)#if (max_pitch \&\& v->pitch >= max_pitch)#
class-refuses-half-size-max|cpu|s#if (n == 0 || n > SIZE_MAX / 2) /\* no class#if (n == 0 || n >= SIZE_MAX / 2) /* no class#
plan-chunk-row-goes-direct|cpu|s#(p->opt.chunk_bytes \&\& row > p->opt.chunk_bytes))#(p->opt.chunk_bytes \&\& row >= p->opt.chunk_bytes))#
plan-ratio-bound-excluded|cpu|s#src->pitch <= p->tuning.max_ratio \* row)#src->pitch < p->tuning.max_ratio * row)#
plan-min-bytes-excluded|cpu|s#if (want == CUXFER_PLAN_DIRECT || total < p->tuning.min_bytes)#if (want == CUXFER_PLAN_DIRECT || total <= p->tuning.min_bytes)#
plan-span-row-bound-excluded|cpu|s#row <= p->tuning.span_max_row \&\&#row < p->tuning.span_max_row \&\&#
plan-slot-rounds-to-1k|cpu|s#size_t half = p->opt.chunk_bytes / 2 / 256 \* 256;#size_t half = p->opt.chunk_bytes / 2 / 1024 * 1024;#
rois-choose-takes-16-tiles-direct|cpu|s#if (n >= 16 \&\& total / n < p->opt.direct_tile_bytes)#if (n > 16 \&\& total / n < p->opt.direct_tile_bytes)#
rois-dir-unchecked|cpu|s#if (dir != CUXFER_ROIS_H2D \&\& dir != CUXFER_ROIS_D2H)$#if (0)#
rois-elem-sizes-unchecked|cpu|s#if (dense->elem_size != host->elem_size)$#if (0)#
rois-null-array-unchecked|cpu|s#if (!rois \&\& n)$#if (0)#
rois-total-written-to-null|cpu|s#^    if (total)$#    if (1)#
rois-offsets-overflow-unchecked|cpu|s#cuxfer_@I@_mul(b, elem_size, \&b) != 0 || cuxfer_@I@_add(sum, b, \&sum) != 0)#(b *= elem_size, sum += b, 0))#
rois-lattice-misses-shared-cell|cpu|s#if (\(c == CUXFER_[A-Z_]*OFF_GRID\) || cuxfer_@I@_bit_take(bits, c))#if (\1)#
rois-lattice-cell-ignores-height|cpu|s#if (r->width != g->w || r->height != g->h || #if (r->width != g->w || #
rois-lattice-cell-left-of-the-grid|cpu|s#r->x < g->ox || r->y < g->oy ||#r->x < g->ox \&\& r->y < g->oy ||#
rois-lattice-of-no-tile-reads-past|cpu|s#if (i == n || rois\[i\].x % rois\[i\].width > v->width#if (i == n \&\& rois[i].x % rois[i].width > v->width#
rois-strips-one-each|cpu|s#for (st = rois\[i\].x >> sw; st <= (rois\[i\].x + rois\[i\].width - 1) >> sw; ++st)#for (st = rois[i].x >> sw; st <= rois[i].x >> sw; ++st)#
team-takes-chunk-4095|cpu|s#if (\*chunk < 4096)#if (*chunk < 4095)#
team-threads-past-max|cpu|s#if (\*threads < 0 || \*threads > max)#if (*threads < 0 || *threads > max + 1)#
gbps-of-no-time-divides|cpu|s#return ms > 0.0f ? (double)bytes#return ms >= 0.0f ? (double)bytes#
ring-slots-bound-off-by-one|cpu|s#if (slots < 1 || slots > 1024)$#if (slots < 1 || slots > 1025)#
ring-takes-no-slots|cpu|s#if (slots < 1 || slots > 1024)$#if (slots < 0 || slots > 1024)#
ring-devices-null-unchecked|cpu|s#if (o.ndevices < 0 || (o.ndevices > 0 \&\& !o.devices))#if (o.ndevices < 0 || (o.ndevices < 0 \&\& !o.devices))#
ring-takes-device-minus-one|cpu|s#if (o.devices\[i\] < 0 || o.devices\[i\] >= #if (o.devices[i] < -1 || o.devices[i] >= #
view-alloc-device-elem-size-unbounded|cpu|/^CUXFER_API cudaError_t cuxfer_view_alloc_device(/,/^}/s#if (elem_size < 1 || elem_size > CUXFER_ELEM_MAX)#if (elem_size < 1)#
rois-overlap-reason-higher-first|cpu|s#size_t lo = a->i < bi ? a->i : bi, hi = a->i < bi ? bi : a->i;#size_t hi = a->i < bi ? a->i : bi, lo = a->i < bi ? bi : a->i;#
rois-exceeds-reason-dims-swapped|cpu|/exceeds the %zux%zu "$/,/host->width, host->height);$/s#host->width, host->height);$#host->height, host->width);#
pitch-reason-without-pitch|cpu|s#"exceeds pitch %zu", \([A-Z_]*\), row, v->width,#"exceeds pitch %zu", \1, row, v->width, v->elem_size, row); (void)(#
plan-refused-not-zeroed|cpu|/^CUXFER_API cudaError_t cuxfer_@I@_team_options(/,/^}/s#^        memset(obj, 0, size);#        (void)obj;#
pinned-pool-refusal-keeps-options|cpu|s#^    memset(p, 0, sizeof \*p); /\* and so it stays on a refusal \*/#    memset(p, 0, sizeof *p); if (opt) p->opt = *opt;#
wait-all-asks-for-nothing|cpu|s#^    if (!any) /\* nothing to wait for#    if (0) /* nothing to wait for#
pool-next-leaves-stream-set|cpu|s#^        \*s = NULL; /\* set on every path: no -Wmaybe-uninitialized after CUXFER_CHECK \*/#        (void)s;#
latch-expect-takes-unmade|cpu|/^CUXFER_API cudaError_t cuxfer_latch_expect(/,/^}/s#if (!l || !l->ready)#if (!l)#
pool-create-on-asks-device-first|cpu|s#CUXFER_TRY(cuxfer_@I@_pool_args("cuxfer_stream_pool_create_on", p, count, flags));#if (!p) return cudaErrorInvalidValue; memset(p, 0, sizeof *p);#
stager-create-ignores-refusal|cpu|/^CUXFER_API cudaError_t cuxfer_stager_create(/,/^}/s#CUXFER_TRY(cuxfer_stager_options_resolve(\&o, opt));#if (cuxfer_stager_options_resolve(\&o, opt) != cudaSuccess) o.slots = 1;#
rois-sort-skips-a-digit|cpu|s#sh += 11) {#sh += 22) {#
rois-strips-one-too-narrow|cpu|/^CUXFER_API int cuxfer_@I@_strip_width(/,/^}/s#^            return sw;#            return sw > 0 ? sw - 1 : sw;#
rois-strips-ignore-key-room|cpu|s#n, 64 - xbits - ybits - ib, \&sbits);#n, 64 + xbits - ybits - ib, \&sbits);#
rois-sort-ignores-first-key-top|cpu|/^CUXFER_API unsigned long long \*cuxfer_@I@_key_sort(/,/top |= r\[i\];/s#for (i = 0; i < n; ++i)$#for (i = 1; i < n; ++i)#
view-empty-needs-both-axes|cpu|s#^    if (v->width == 0 || v->height == 0)$#    if (v->width == 0 \&\& v->height == 0)#
view-at-takes-x-of-width|cpu|s#if (x >= v->width || y >= v->height) {#if (x > v->width || y >= v->height) {#
view-init-refuses-host-device|cpu|s#if (device < -1)$#if (device < 0)#
view-pitch-refused-as-invalid-value|cpu|s#^        return cuxfer_@I@_fail(cudaErrorInvalidPitchValue,#        return cuxfer_@I@_fail(cudaErrorInvalidValue,#
view-sub-keeps-height|cpu|s#^    sub->height = roi.height;#    sub->height = v->height;#
view-span-reason-names-width|cpu|s#CUXFER_@IU@_WHAT, v->height, v->pitch);#CUXFER_@IU@_WHAT, v->width, v->pitch);#
view-alloc-host-empty-left-to-host-alloc|cpu|/^CUXFER_API cudaError_t cuxfer_view_alloc_host(/,/^}/s#if (width == 0 || height == 0)#if (width == 0)#
view-alloc-device-height-0-unchecked|cpu|/^CUXFER_API cudaError_t cuxfer_view_alloc_device(/,/^}/s#if (width == 0 || height == 0)#if (width == 0)#
alloc-takes-elem-size-0|cpu|s#if (count == 0 || elem_size == 0)#if (count == 0)#
reason-shared-by-threads|cpu|s#if (!t || pthread_setspecific(s->thread_key, t) != 0) {#if (1) {#
reason-cut-a-byte-late|cpu|s#if (vsnprintf(r, CUXFER_REASON_MAX, fmt, ap) >= CUXFER_REASON_MAX)#if (vsnprintf(r, CUXFER_REASON_MAX, fmt, ap) > CUXFER_REASON_MAX)#
rois-check-clears-the-reason|cpu|/^CUXFER_API cudaError_t cuxfer_rois_check(/,/^}/s#^    void \*scratch = NULL;#    void *scratch = (cuxfer_clear_reason(), NULL);#
pageable-policy-drops-allow|cpu|s#return p > 0 ? p : CUXFER_PAGEABLE_POLICY;#return p > 1 ? p : CUXFER_PAGEABLE_POLICY;#
copy-of-no-bytes-goes-on|cpu|/^CUXFER_API cudaError_t cuxfer_@I@_copy(const char \*call, void \*dst/,/^}/s#^    if (bytes == 0)$#    if (0)#
copy2d-of-empty-views-goes-on|cpu|/^CUXFER_API cudaError_t cuxfer_@I@_copy2d(/,/^}/s#^    if (src->width == 0 || src->height == 0)$#    if (src->width == 0 \&\& src->height == 0)#
copy-wrap-check-skips-src|cpu|s#if (d > UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)#if (d > UINTPTR_MAX - bytes)#
copy-null-reason-names-the-other|cpu|s#dst ? "src" : "dst");#dst ? "dst" : "src");#
copy-overlap-reason-drops-bytes|cpu|s#^                                call, dst, src, bytes);#                                call, dst, src, (size_t)0);#
copy2d-heights-unchecked|cpu|s#dst->width != src->width || dst->height != src->height ||#dst->width != src->width ||#
copy2d-extents-reason-gives-dst-height-twice|cpu|s#^                                src->height, src->elem_size);#                                dst->height, src->elem_size);#
max-pitch-reason-names-the-other|cpu|s#v == dst ? "dst" : "src", v->pitch, max_pitch);#v == dst ? "src" : "dst", v->pitch, max_pitch);#
overlap-sweep-adjacent-rows-meet|cpu|s#if (as + ra.w <= bs)$#if (as + ra.w < bs)#
overlap-sweep-row-past-one-short|cpu|s#k = (size_t)(x - r->base - r->w) / r->pitch + 1;#k = (size_t)(x - r->base - r->w) / r->pitch;#
overlap-sweep-bound-halved|cpu|s#if (++steps > ((size_t)1 << 20)) {#if (++steps > ((size_t)1 << 19)) {#
rois-check-refuses-null-with-no-rois|cpu|s#^    if (!rois \&\& n)$#    if (!rois)#
rois-offsets-refuse-null-with-no-rois|cpu|s#if ((!rois \&\& n) || !off)#if (!rois || !off)#
rois-dense-capacity-ignores-height|cpu|s#cap = dense->width \* dense->elem_size \* dense->height;#cap = dense->width * dense->elem_size;#
rois-choose-mean-rounds-up|cpu|s#if (n >= 16 \&\& total / n < p->opt.direct_tile_bytes)#if (n >= 16 \&\& (total + n - 1) / n < p->opt.direct_tile_bytes)#
plan-choose-spans-pageable-source|cpu|s#int h2d = dev_dst \&\& src->kind == CUXFER_MEMORY_PINNED;#int h2d = dev_dst \&\& src->kind != CUXFER_MEMORY_DEVICE;#
prefetch-reason-swaps-null-and-0-bytes|cpu|s#p ? "bytes is 0" : "pointer is NULL");#p ? "pointer is NULL" : "bytes is 0");#
peer-enable-refuses-as-invalid-value|cpu|/^CUXFER_API cudaError_t cuxfer_peer_enable(/,/^}/s#return cuxfer_@I@_fail(cudaErrorInvalidDevice,#return cuxfer_@I@_fail(cudaErrorInvalidValue,#
stager-slot-bytes-refuses-the-minimum|cpu|s#if (o.slot_bytes < CUXFER_STAGER_MIN_SLOT_BYTES ||#if (o.slot_bytes <= CUXFER_STAGER_MIN_SLOT_BYTES ||#
stager-reason-names-the-bound|cpu|s#"cuxfer_stager_options: threads %d is outside 1..%d", o.threads,#"cuxfer_stager_options: threads %d is outside 1..%d", CUXFER_STAGER_MAX_THREADS + 0 * o.threads,#
pool-wrap-skips-the-first-stream|cpu|/^CUXFER_API cudaError_t cuxfer_stream_pool_wrap(/,/^}/s#for (i = 0; i < count; ++i)#for (i = 1; i < count; ++i)#
pool-create-on-takes-device-minus-one|cpu|s#^    if (device < 0)$#    if (device < -1)#
all-wait-reads-a-null-array-of-one|cpu|s#if (n < 0 || (n > 0 \&\& !waiters))#if (n < 0 || (n > 1 \&\& !waiters))#
all-wait-asks-for-nothing|cpu|s#if (!any || check_only)#if (check_only)#
timer-ms-refusal-leaves-zero|cpu|/^CUXFER_API cudaError_t cuxfer_timer_ms(/,/^    if (CUXFER_@IU@_UNLIKELY(!t || !ms))/s#^        \*ms = NAN;#        *ms = 0.0f;#
ring-takes-negative-ndevices|cpu|s#if (o.ndevices < 0 || (o.ndevices > 0 \&\& !o.devices))#if (o.ndevices > 0 \&\& !o.devices)#
ring-slot-ms-takes-unsubmitted|cpu|s#^    if (slot->uses == 0)$#    if (0)#
memkind-name-pinned-as-pageable|cpu|s#case CUXFER_MEMORY_PINNED: return "pinned host";#case CUXFER_MEMORY_PINNED: return "pageable host";#
clear-reason-keeps-it|cpu|s#cuxfer_@I@_thread_get()->reason\[0\] = .\\0.; }#(void)cuxfer_@I@_thread_get(); }#
pinned-acquire-refusal-leaves-the-block|cpu|s#^        memset(blk, 0, sizeof \*blk); /\* set on every path, refusals included \*/#        (void)blk; /* set on every path, refusals included */#
view-alloc-host-refusal-keeps-the-view|cpu|/^CUXFER_API cudaError_t cuxfer_view_alloc_host(/,/^}/s#^    memset(v, 0, sizeof \*v);#    (void)v;#
rois-lattice-bitmap-rounds-down|asan|s#g->words = (g->cols \* rows + 63) / 64;#g->words = g->cols * rows / 64;#
rois-strip-width-reads-past-n|asan|/^CUXFER_API int cuxfer_@I@_strip_width(/,/^}/s#for (i = 0; i < n; ++i)$#for (i = 0; i <= n; ++i)#
team-refuses-last-strategy|gpu|s#if (strategy < 0 || strategy > last)#if (strategy < 0 || strategy >= last)#
pool-release-forgets-its-event|gpu|s#CUXFER_TRY(cuxfer_@I@_pool_mark(b, in_use_by));#(void)0;#
span-skips-slot-wait|gpu|s#err = cudaStreamWaitEvent(s, p->ev_freed\[b\], 0);#err = cudaSuccess;#
calibrate-capture-check-removed|gpu|/^CUXFER_API cudaError_t cuxfer_@I@_plan_calibrate(/,/^}/s#if (cuxfer_@I@_stream_state(s, \&err) != [A-Z_]*UNCAPTURED)#if (0)#
rois-capture-check-removed|gpu|/^CUXFER_API cudaError_t cuxfer_@I@_rois_copy(/,/^}/s#CUXFER_TRY(cuxfer_@I@_stream_usable(call, "stream", s, \&cap));#CUXFER_TRY(cuxfer_@I@_stream_usable(call, "stream", s, \&cap)); if (cap > 0) cap = 0;#
ring-takes-a-foreign-slot|gpu|s#slot->index >= r->count || \&r->slots\[slot->index\] != slot)#slot->index >= r->count)#
ring-depth-bound-off-by-one|gpu|s#if (depth < 1 || depth > r->count)#if (depth < 1 || depth > r->count + 1)#
ring-stream-index-bound-off-by-one|gpu|/^CUXFER_API cudaError_t cuxfer_ring_stream(/,/^}/s#if (i < 0 || i >= r->count)#if (i < 0 || i > r->count)#
stager-options-refusal-keeps-out|cpu|s#^    memset(out, 0, sizeof \*out); /\* set on every path (after reading opt: out may be opt) \*/#    /* out kept */#
ring-submit-d2h-bound-off-by-one|gpu|s#(job->d2h_bytes \&\& (end_h > slot->host_bytes || end_d > slot->device_bytes))#(job->d2h_bytes \&\& (end_h > slot->host_bytes + 1 || end_d > slot->device_bytes + 1))#'

build() { # DIR [SANITIZER FLAGS]: the soak against DIR/include/cuxfer.h
    sh "$srcdir/tests/soak/api-names.sh" --c "$1/include/cuxfer.h" >"$1/include/soak-api.h" ||
        return 1
    # shellcheck disable=SC2086
    $CC $CFLAGS ${2:-} -std=c99 -D_POSIX_C_SOURCE=200809L -I"$1/include" -I"$srcdir/tests/lib" \
        -I"$srcdir/tests/soak" $CPPFLAGS "$srcdir/tests/soak/soak.c" "$srcdir/tests/soak/model.c" \
        "$srcdir/tests/soak/ops-cpu.c" "$srcdir/tests/soak/ops-gpu.c" "$srcdir/tests/soak/fault.c" \
        -o "$1/soak" $LIBS ${2:-} \
        >"$1/build.log" 2>&1
}
now() { date +%s.%N 2>/dev/null || date +%s; }
run() { # DIR MODE: 0 passed, else caught; the output in DIR/run.log
    (cd "$1" && if [ "$2" = cpu ]; then
        timeout 300 ./soak --cpu-only --seed 7 --steps 200000 --threads 2 --step-limit 2000
    else
        timeout $((secs + 120)) ./soak --seed 7 --seconds "$secs" --threads "${MUTANT_THREADS:-1}"
    fi) >"$1/run.log" 2>&1
}

# the unmutated soak, as each mode builds it and runs it (asan: the CPU
# soak with ASan, where the asan mutants run)
controls=$modes
case " $modes " in *" cpu "*) [ -n "$asan" ] && controls="$controls asan" ;; esac
gpu=0
for mode in $controls; do
    c=control-$mode
    mkdir -p "$work/$c/include"
    cp "$srcdir/include/cuxfer.h" "$work/$c/include/"
    if ! build "$work/$c" "$([ "$mode" = asan ] && echo "$asan")"; then
        cat "$work/$c/build.log"; echo "soak-mutants: the unmutated soak does not build"; exit 1
    fi
    if [ "$mode" = gpu ]; then
        (cd "$work/$c" && ./soak --steps 1) | grep -q '^1..0 # SKIP' && continue
        gpu=1
    fi
    if ! run "$work/$c" "$([ "$mode" = gpu ] && echo gpu || echo cpu)"; then
        tail -n 20 "$work/$c/run.log"
        echo "soak-mutants: the unmutated header fails the $mode soak"; exit 1
    fi
done

fail=0
printf '%s\n' "$mutants" | while IFS='|' read -r name mode script; do
    d="$work/$name"
    mkdir -p "$d/include"
    script=$(printf '%s\n' "$script" | sed "s/@I@/im""pl/g; s/@IU@/IM""PL/g")
    sed -e "$script" "$srcdir/include/cuxfer.h" >"$d/include/cuxfer.h"
    # every mutant's edit must still apply, whichever modes run now: a
    # GPU mutant gone stale is found by a CPU-only run too
    if cmp -s "$srcdir/include/cuxfer.h" "$d/include/cuxfer.h"; then
        echo "STALE    $name: the edit no longer applies to cuxfer.h"; echo x >>"$work/failed"; continue
    fi
    sanitize=
    if [ "$mode" = asan ]; then
        mode=cpu
        sanitize=$asan
        case " $modes " in *" cpu "*) [ -n "$asan" ] || { echo "SKIP     $name (needs ASan)"; continue; } ;; esac
    fi
    case " $modes " in *" $mode "*) ;; *) continue ;; esac
    if [ "$mode" = gpu ] && [ $gpu = 0 ]; then
        echo "SKIP     $name (needs a GPU)"; continue
    fi
    if ! build "$d" "$sanitize"; then
        echo "NOBUILD  $name"; tail -n 5 "$d/build.log"; echo x >>"$work/failed"; continue
    fi
    t0=$(now)
    if run "$d" "$mode"; then
        echo "SURVIVED $name ($mode soak passed)"; echo x >>"$work/failed"
    else
        t1=$(now)
        how=$(grep -m1 -E '^not ok|^Bail out|runtime error|AddressSanitizer' "$d/run.log" | cut -c1-160)
        printf 'CAUGHT   %s in %s s (%s): %s\n' "$name" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" "$mode" \
            "${how:-exit status}"
        grep -m2 '^#   ' "$d/run.log" | cut -c1-160
    fi
done
[ -f "$work/failed" ] && fail=1
exit $fail
