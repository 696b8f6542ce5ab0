/* SPDX-License-Identifier: MIT */
/* Built only with the flags of `pkg-config --cflags --libs cuxfer`: proves
 * the installed header, .pc file and CUDA flags are enough. */
#include <cuxfer.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
    cudaError_t err = cuxfer_device_count(&n);
    printf("cuxfer %s: %d device(s)%s%s\n", CUXFER_VERSION_STRING, n,
           err == cudaSuccess ? "" : ": ", err == cudaSuccess ? "" : cuxfer_last_reason());
    return 0;
}
