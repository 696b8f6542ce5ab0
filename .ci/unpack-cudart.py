# SPDX-License-Identifier: MIT
"""Unpack the CUDA runtime headers and libcudart of NVIDIA's wheels.

usage: python3 .ci/unpack-cudart.py DEST WHEEL...

Writes DEST/include (the runtime's headers, and only crt/ from the nvcc
wheels) and DEST/lib/libcudart.so*.  Called by cudart_fetch in
.ci/cudart-wheels.sh, which .ci/cuda-matrix.sh (the header matrix) and
.ci/gpu-runtimes.sh (the GPU suite on older runtimes) share.
"""
import os
import shutil
import sys
import zipfile

dst, wheels = sys.argv[1], sys.argv[2:]
for whl in wheels:
    with zipfile.ZipFile(whl) as z:
        for m in z.namelist():
            parts = m.split("/")
            if m.endswith("/") or len(parts) < 4 or parts[0] != "nvidia":
                continue
            if parts[2] == "include" and m.endswith((".h", ".hpp")):
                if "nvcc" in parts[1] and parts[3] != "crt":
                    continue
                out = os.path.join(dst, "include", *parts[3:])
            elif parts[2] == "lib" and parts[3].startswith("libcudart.so"):
                out = os.path.join(dst, "lib", parts[3])
            else:
                continue
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(m) as f, open(out, "wb") as g:
                shutil.copyfileobj(f, g)
