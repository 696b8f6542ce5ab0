/* SPDX-License-Identifier: MIT */
/* Compiled by compiles.sh as C99, C11, C++11, C++17 and CUDA: the
 * header must be warning-free under -Wall -Wextra -Werror -pedantic in each,
 * and usable (this touches each family so nothing is only parsed). */
#include <cuxfer.h>

int header_compile_probe(void);

int header_compile_probe(void)
{
    int n = 0;
    cudaError_t err = cuxfer_device_count(&n);
    if (err != cudaSuccess)
        return (int)err + (cuxfer_last_reason()[0] != '\0');
    return n;
}

#ifdef HEADER_COMPILE_MAIN
int main(void)
{
    return header_compile_probe() < 0;
}
#endif
