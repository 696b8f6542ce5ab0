/* SPDX-License-Identifier: MIT */
/* The GPU gate of the shell tests (tests/roicopy/gpu.sh,
 * tests/roicopy/multi-gpu.sh): `gpu-probe [N]` prints nothing and exits 0
 * when at least N devices (default 1) are there; prints "1..0 # SKIP no
 * CUDA device: <reason>" or "1..0 # SKIP needs N GPUs" and exits 0 when
 * not; bails (non-zero) when CUXFER_REQUIRE_GPU asks for devices that are
 * missing.  gpu_require() makes the decision, as in every C GPU test. */
#include "gpu.h"

int main(int argc, char **argv)
{
    int need = 1;
    if (argc > 1) {
        char *end = NULL;
        long v = strtol(argv[1], &end, 10);
        if (argc > 2 || end == argv[1] || *end || v < 1 || v > 1024)
            bail("usage: gpu-probe [N], N a device count from 1 to 1024");
        need = (int)v;
    }
    gpu_require(need);
    return 0;
}
