#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xferbench-torch.py - what a PyTorch user's own routes reach on
xferbench's many-tile and narrow-row cases, beside cuxfer's figure for the
same case, measured by xferbench in the same run.

  tiles  N random distinct cells of one pinned 8192x8192 RGBA8 image to a
         dense (N, side, side, 4) tensor on the GPU (xferbench's `rois h2d`
         cases: the same image, counts and sides):
           whole+gather  the whole image over (non_blocking), then one
                         gather on the GPU (advanced indexing)
           cpu-gather    one gather on the CPU, then .to('cuda')
  rows   the first W bytes of each row of a pinned (h, 2W) uint8 matrix to
         a dense (h, W) tensor on the GPU (xferbench's `2d h2d rows W B`
         cases with --rows-dense: pitch 2 x W, 4 MiB of rows up to 4 bytes,
         128 MiB from 8; cuxfer's figure is the planner's):
           view.to       the strided view's .to('cuda', non_blocking=True)
           whole+slice   the whole matrix over, then .contiguous() of the
                         slice on the GPU

GB/s of the tiles' or rows' own bytes, medians of --reps, each timed on the
host from an idle device to the result on the device.  Every route's first
result, in device memory filled with 0xa5 just before, is compared byte for
byte with a copy the CPU makes tile by tile (row by row).

    tools/xferbench-torch.py                       # xferbench, then PyTorch
    tools/xferbench-torch.py --sides 8,64 --widths 8 --reps 5

Exit status: 0, 1 when a result differs or xferbench fails, 2 for a bad
option or device number, 77 when PyTorch or a CUDA device is missing.
"""
import csv
import io
import os
import re
import statistics
import subprocess
import sys
import time

PROG = "xferbench-torch.py"
IMAGE = (8192, 8192, 4)  # xferbench's ROIS_W, ROIS_H, ROIS_E
TILE = re.compile(r"rois h2d (\d+) of (\d+)x\2$")
ROW = re.compile(r"2d h2d rows (\d+) B$")
WIDTHS = "1,2,4,8,16,64,256"


def usage(code):
    print(__doc__.split("\n\n")[0] if code else __doc__, file=sys.stderr if code else sys.stdout)
    print("usage: %s [--xferbench PATH] [--sides LIST] [--widths LIST]\n"
          "          [--reps N] [--device N]" % PROG, file=sys.stderr if code else sys.stdout)
    sys.exit(code)


def fail(msg, code=1):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(code)


def int_list(opt, text):
    try:
        v = [int(x) for x in text.split(",")]
    except ValueError:
        v = []
    if not v or min(v) < 1:
        fail("%s %s: not a list of positive integers" % (opt, text), 2)
    return v


def options(argv):
    o = {"xferbench": None, "sides": None, "widths": int_list("--widths", WIDTHS),
         "reps": 15, "device": 0}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            usage(0)
        if a not in ("--xferbench", "--sides", "--widths", "--reps", "--device"):
            fail("unknown option %s (--help lists them)" % a, 2)
        if i + 1 == len(argv):
            fail("%s needs a value" % a, 2)
        v = argv[i + 1]
        if a in ("--sides", "--widths"):
            o[a[2:]] = int_list(a, v)
        elif a == "--reps":
            if not v.isdigit() or not 1 <= int(v) <= 1000:
                fail("--reps %s: not a count from 1 to 1000" % v, 2)
            o["reps"] = int(v)
        elif a == "--device":
            if not v.isdigit():
                fail("--device %s: not a device number" % v, 2)
            o["device"] = int(v)
        else:
            o[a[2:]] = v
        i += 2
    return o


def xferbench_path(given):
    if given:
        return given
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xferbench")
    return here if os.access(here, os.X_OK) else "xferbench"


# What xferbench says on standard error that is no failure: a strategy the
# runtime lacks (the copy kernel needs CUDA 12.5), the ring's stand-in.
NOTE = re.compile(r"xferbench: (rois: \w+ not measured: |ring: spin kernel unavailable )")


def run_xferbench(path, device, args):
    """xferbench's output for `args` (its --list, or a run's CSV)."""
    try:
        p = subprocess.run([path, "--device", str(device)] + args, capture_output=True, text=True)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    said = [line for line in p.stderr.splitlines() if line.strip() and not NOTE.match(line)]
    if p.returncode != 0 and (p.returncode != 1 or said):
        # 1 with nothing but notes said: a target missed, the figures stand
        fail("%s %s: exit %d: %s" % (path, " ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def cases(o):
    """[(kind, name, n or W, side or 0)] in xferbench's order."""
    listed = run_xferbench(xferbench_path(o["xferbench"]), o["device"],
                           ["--list", "--only", "rois h2d", "--only", "2d h2d"]).split("\n")
    out = []
    for name in listed:
        t, r = TILE.match(name), ROW.match(name)
        if t and (o["sides"] is None or int(t.group(2)) in o["sides"]):
            out.append(("tiles", name, int(t.group(1)), int(t.group(2))))
        elif r and int(r.group(1)) in o["widths"]:
            out.append(("rows", name, int(r.group(1)), 0))
    for kind, want, have in (("tiles", o["sides"] or [], [c[3] for c in out]),
                             ("rows", o["widths"], [c[2] for c in out if c[0] == "rows"])):
        missing = [str(x) for x in want if x not in have]
        if missing:
            fail("--%s %s: xferbench has no such case" % ("sides" if kind == "tiles" else "widths",
                                                          ",".join(missing)), 2)
    return out


def cuxfer_figures(o, todo):
    """cuxfer's GB/s of each case, by name, from xferbench's CSV."""
    args = ["--csv", "--rows-dense"]
    for _, name, _, _ in todo:
        args += ["--only", name]
    text = run_xferbench(xferbench_path(o["xferbench"]), o["device"], args)
    fig = {}
    for row in csv.DictReader(io.StringIO(text)):
        case = row.get("case", "")
        for _, name, _, _ in todo:
            # the plan under test: "NAME (strategy)" for tiles, "NAME planner" for rows
            if re.fullmatch(re.escape(name) + r" (\(\w+\)|planner)", case):
                fig[name] = float(row["cuxfer"])
    return fig


def routes_gbps(torch, dev, routes, ref, what, noun, reps):
    """GB/s of ref's bytes by each (name, fn) of routes: the median of reps
    host-timed runs, after one run whose result lands on device memory just
    filled with 0xa5 and must equal ref byte for byte."""
    r = {}
    for route, fn in routes:
        p = torch.full(ref.shape, 0xa5, dtype=torch.uint8, device=dev)
        torch.cuda.synchronize()
        del p  # back to the caching allocator: the next result of its size lands on it
        out = fn()
        torch.cuda.synchronize()
        if out.shape != ref.shape or not torch.equal(out.cpu(), ref):
            fail("%s, %s: the %s on the GPU differ from the CPU's copy" % (what, route, noun))
        del out
        v = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = fn()
            torch.cuda.synchronize()
            v.append(time.perf_counter() - t0)
            del out
        r[route] = ref.numel() / statistics.median(v) / 1e9
    return r


def bench_tiles(torch, dev, img, n, side, reps):
    cells = IMAGE[0] // side
    g = torch.Generator().manual_seed(side)
    pick = torch.randperm(cells * cells, generator=g)[:n]
    cy, cx = pick // cells, pick % cells
    shape = (cells, cells, side, side, IMAGE[2])
    stride = (side * IMAGE[1] * IMAGE[2], side * IMAGE[2], IMAGE[1] * IMAGE[2], IMAGE[2], 1)
    ref = torch.empty((n, side, side, IMAGE[2]), dtype=torch.uint8)
    for i, (y, x) in enumerate(zip(cy.tolist(), cx.tolist())):
        ref[i] = img[y * side:(y + 1) * side, x * side:(x + 1) * side]
    gy, gx = cy.to(dev), cx.to(dev)

    def whole():
        d = img.to(dev, non_blocking=True)
        return d.as_strided(shape, stride)[gy, gx]

    def cpu():
        return img.as_strided(shape, stride)[cy, cx].to(dev)

    return routes_gbps(torch, dev, (("whole+gather", whole), ("cpu-gather", cpu)), ref,
                       "%d of %dx%d" % (n, side, side), "tiles", reps)


def bench_rows(torch, dev, w, reps):
    h = (4 << 20 if w <= 4 else 128 << 20) // w  # xferbench's rows
    m = torch.empty((h, 2 * w), dtype=torch.uint8).pin_memory()
    m.copy_(torch.randint(0, 256, (h, 2 * w), dtype=torch.uint8, generator=torch.Generator()
                          .manual_seed(w)))
    ref = torch.empty((h, w), dtype=torch.uint8)
    for x in range(w):  # column by column: not the routes' own copy
        ref[:, x] = m[:, x]

    return routes_gbps(torch, dev,
                       (("view.to", lambda: m[:, :w].to(dev, non_blocking=True)),
                        ("whole+slice",
                         lambda: m.to(dev, non_blocking=True)[:, :w].contiguous())),
                       ref, "rows of %d B" % w, "rows", reps)


def main():
    o = options(sys.argv[1:])
    todo = cases(o)  # the cases named before PyTorch is needed
    try:
        import torch
    except ImportError as e:
        fail("PyTorch is needed (%s)" % e, 77)
    if not torch.cuda.is_available():
        fail("no CUDA device for PyTorch", 77)
    if o["device"] >= torch.cuda.device_count():
        fail("--device %d: only %d device(s)" % (o["device"], torch.cuda.device_count()), 2)
    fig = cuxfer_figures(o, todo)  # first: xferbench's process has the GPU to itself
    missing = [name for _, name, _, _ in todo if name not in fig]
    if missing:
        fail("no cuxfer figure for %s in xferbench's output" % ", ".join(missing))
    dev = torch.device("cuda", o["device"])
    torch.cuda.set_device(dev)
    print("%s: PyTorch %s, device %d %s, %d reps, %d CPU threads; cuxfer: xferbench, the same run"
          % (PROG, torch.__version__, o["device"], torch.cuda.get_device_name(dev), o["reps"],
             torch.get_num_threads()))
    img = None
    head = None
    for kind, name, k, side in todo:
        if kind == "tiles":
            if img is None:
                img = torch.randint(0, 256, IMAGE, dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(31)).pin_memory()
            r = bench_tiles(torch, dev, img, k, side, o["reps"])
        else:
            r = bench_rows(torch, dev, k, o["reps"])
        if head != kind:
            head = kind
            print("%-26s %12s %12s %10s %12s" % ("GB/s", *r.keys(), "cuxfer", "cuxfer/best"))
        print("%-26s %12.3f %12.3f %10.3f %12.3f"
              % (name, *r.values(), fig[name], fig[name] / max(r.values())))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
