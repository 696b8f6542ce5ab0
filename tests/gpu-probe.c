/* The GPU gate of the shell tests (tests/roicopy-gpu.sh): prints nothing
 * and exits 0 when a device is there; prints "1..0 # SKIP no CUDA device:
 * <reason>" and exits 0 when there is none; bails (non-zero) when
 * CUXFER_REQUIRE_GPU asks for a device that is missing.  gpu_require()
 * makes the decision, as in every C GPU test. */
#include "gpu.h"

int main(void)
{
    gpu_require(1);
    return 0;
}
