/* SPDX-License-Identifier: MIT */
/* A CUDA program built by nvcc with nothing but cuxfer's pkg-config flags
 * (tests/build/consumers.sh) or cuxfer::cuxfer (tests/build/cmake-consumer.sh).  Without
 * a device it prints the version and the reason and exits 0; with one it
 * round-trips 4 KiB through a kernel and checks every byte. */
#include <cuxfer.h>
#include <stdio.h>

__global__ void add_one(unsigned char *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned char)(p[i] + 1);
}

int main(void)
{
    enum { N = 4096 };
    int n = 0, bad = 0;
    unsigned char *h = NULL, *back = NULL, *d = NULL;
    cudaStream_t s;
    if (cuxfer_device_count(&n) != cudaSuccess || n == 0) {
        printf("cuxfer %s: no device: %s\n", CUXFER_VERSION_STRING, cuxfer_last_reason());
        return 0;
    }
    CUXFER_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUXFER_CHECK(cudaHostAlloc((void **)&h, N, cudaHostAllocDefault));
    CUXFER_CHECK(cudaHostAlloc((void **)&back, N, cudaHostAllocDefault));
    CUXFER_CHECK(cudaMalloc((void **)&d, N));
    for (int i = 0; i < N; ++i) {
        h[i] = (unsigned char)i;
        back[i] = 0xA5; /* poison: a copy that did not happen shows */
    }
    CUXFER_CHECK(cuxfer_copy_async(d, h, N, s));
    add_one<<<N / 256, 256, 0, s>>>(d, N);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_copy_async(back, d, N, s));
    CUXFER_CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; ++i)
        bad += back[i] != (unsigned char)(i + 1);
    printf("cuxfer %s: %d device(s), kernel round trip %s\n", CUXFER_VERSION_STRING, n,
           bad ? "WRONG" : "ok");
    cudaFree(d);
    cudaFreeHost(back);
    cudaFreeHost(h);
    cudaStreamDestroy(s);
    return bad ? 1 : 0;
}
