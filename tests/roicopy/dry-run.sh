#!/bin/sh
# SPDX-License-Identifier: MIT
# --dry-run prints the plan - geometry, ROI, element size, source pitch,
# the device pitch estimate, bytes, bands, output - computed on the CPU
# alone: it succeeds with every CUDA device hidden and writes nothing.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

plan_has "8-bit PGM, ROI, 4 bands" "input:    $SAMPLES/gray-97x61.pgm (pgm, 97x61, 1 channel x 1 byte, maxval 255)
roi:      40x30+10+5
element:  1 byte (1 per pixel)
source:   pitch 97 bytes (the full input row), ROI at byte offset 495
device:   pitch 512 bytes (an estimate: cudaMallocPitch decides), 30 rows
bytes:    1200 each way (40 bytes x 30 rows), 1 time
bands:    4 (up one stream, down another): rows 0-6 rows 7-14 rows 15-21 rows 22-29
output:   $OUT/new.pgm (pgm)
host:     pinned" \
    --roi 40x30+10+5 --streams 4 "$SAMPLES/gray-97x61.pgm" "$OUT/new.pgm"
plan_has "16-bit PGM, whole image by default" "(pgm, 61x47, 1 channel x 2 bytes, maxval 65535)
roi:      61x47+0+0
element:  2 bytes (1 per pixel)
source:   pitch 122 bytes
bytes:    5734 each way (122 bytes x 47 rows)
bands:    1 (up one stream, down another): rows 0-46" \
    "$SAMPLES/gray16-61x47.pgm" "$OUT/new.pgm"
plan_has "RGBA PAM to raw, tupltype shown, canvas placement" "(pam, 64x48, 4 channels x 1 byte, maxval 255, tupltype RGB_ALPHA)
element:  4 bytes (1 per pixel)
canvas:   300x200, ROI placed at 100,50
device:   pitch 1536 bytes (an estimate: cudaMallocPitch decides), 200 rows
source:   pitch 256 bytes (the full input row), ROI at byte offset 1044
output:   $OUT/new.raw (raw)" \
    --format raw --roi 16x8+5+4 --place 100,50 --canvas 300x200 "$SAMPLES/rgba-64x48.pam" "$OUT/new.raw"
plan_has "raw input, pageable, more streams than rows" "(raw, 45x33, 3 channels x 1 byte, maxval 255)
host:     pageable (malloc)
bands:    2 (up one stream, down another): rows 0-0 rows 1-1" \
    --raw 45x33x3 --pageable --roi 45x2+0+31 --streams 9 "$SAMPLES/rgb-45x33x3.raw" "$OUT/new.raw"
"$MKSAMPLES" image pam 5x3x40 65535 7 "$T/wide.pam" &&
plan_has "pixels wider than 64 bytes travel as 2-byte elements" "(pam, 5x3, 40 channels x 2 bytes, maxval 65535)
element:  2 bytes (40 per pixel)
bytes:    400 each way (400 bytes x 1 rows)" \
    --roi 5x1+0+2 "$T/wide.pam" "$OUT/new.pam"
plan_has "several inputs: a ring, one output per input in DIR" "pipeline: 3 frames through a ring of 3 slots
frame 2:
output:   $OUT/gray-97x61.pam (pam, GRAYSCALE)
output:   $OUT/rgb-80x60.pam (pam, RGB)" \
    --format pam --roi 8x8+1+1 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" "$SAMPLES/gray16-61x47.pgm" -o "$OUT"
plan_has "--devices: bands round robin, each device's share" "bands:    3 (up one stream, down another): rows 0-9 rows 10-19 rows 20-29
band 0:   rows 0-9 on device 0 (400 bytes each way)
band 1:   rows 10-19 on device 1 (400 bytes each way)
band 2:   rows 20-29 on device 0 (400 bytes each way)
device 0: 2 bands, 20 rows, 800 bytes each way
device 1: 1 band, 10 rows, 400 bytes each way" \
    --devices 0,1 --streams 3 --roi 40x30+10+5 "$SAMPLES/gray-97x61.pgm" "$OUT/new.pgm"
plan_has "--devices: one band per device by default, any order" "bands:    4 (up one stream, down another): rows 0-11 rows 12-23 rows 24-35 rows 36-47
band 0:   rows 0-11 on device 3 (3072 bytes each way)
band 3:   rows 36-47 on device 2 (3072 bytes each way)
device 3: 1 band, 12 rows, 3072 bytes each way
device 2: 1 band, 12 rows, 3072 bytes each way" \
    --devices 3,1,0,2 "$SAMPLES/rgba-64x48.pam" "$OUT/new.pam"
plan_has "--devices: a device without a band when the ROI is short" "bands:    1 (up one stream, down another): rows 0-0
band 0:   rows 0-0 on device 0 (5 bytes each way)
device 1: no band (the ROI has fewer rows than there are devices)" \
    --devices 0,1 --roi 5x1+1+1 "$SAMPLES/gray-97x61.pgm" "$OUT/new.pgm"
plan_has "--devices with several inputs: ring slots over the devices" "pipeline: 3 frames through a ring of 4 slots
slot 0:   device 0, 1 frame
slot 1:   device 1, 1 frame
slot 2:   device 0, 1 frame
slot 3:   device 1, 0 frames
device 0: 2 slots, 2 frames, 192 bytes each way
device 1: 2 slots, 1 frame, 192 bytes each way
frame 1:  slot 1 on device 1
frame 2:  slot 2 on device 0" \
    --format pam --roi 8x8+1+1 --devices 0,1 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" "$SAMPLES/gray16-61x47.pgm" -o "$OUT"
plan_has "--pageable with several inputs: frames one at a time, banded by --streams" "pipeline: 2 frames, one at a time (--pageable: the ring needs pinned memory)
bands:    3 (up one stream, down another): rows 0-1 rows 2-4 rows 5-7" \
    --pageable --streams 3 --roi 8x8+1+1 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
# A pinned ROI of 32 MiB: four bands of 8 MiB by default; --streams and
# --pageable keep their own count.
{ printf 'P5\n4096 8192\n255\n'; head -c 33554432 /dev/zero; } >"$T/big.pgm"
plan_has "a big ROI: bands of 8 MiB by default" "bands:    4 (up one stream, down another): rows 0-2047 rows 2048-4095 rows 4096-6143 rows 6144-8191" \
    "$T/big.pgm" "$OUT/new.pgm"
plan_has "a big ROI: --streams 2 is two bands" "bands:    2 (up one stream, down another): rows 0-4095 rows 4096-8191" \
    --streams 2 "$T/big.pgm" "$OUT/new.pgm"
plan_has "a big ROI: --pageable stays one band" "bands:    1 (up one stream, down another): rows 0-8191" \
    --pageable "$T/big.pgm" "$OUT/new.pgm"
plan_has "a ROI just under 16 MiB: one band" "bands:    1 (up one stream, down another): rows 0-4094" \
    --roi 4096x4095 "$T/big.pgm" "$OUT/new.pgm"
plan_has "--repeat shows in the bytes line" "1200 each way (40 bytes x 30 rows), 5 times" \
    --repeat 5 --roi 40x30 "$SAMPLES/gray-97x61.pgm" "$OUT/new.pgm"
finish
