/* SPDX-License-Identifier: MIT */
/*
 * cuda-matrix-probe.c - built by .ci/cuda-matrix.sh against each CUDA
 * runtime of the matrix (as C99 and as C++11, gcc and clang), linked with
 * that runtime's libcudart and run.  It touches the functions whose code
 * differs between runtimes (cuxfer_prefetch and cuxfer_advise: a device
 * number up to 12, a cudaMemLocation from 13; cuxfer_host_register with
 * cudaHostRegisterReadOnly where the headers define it), so each
 * CUDART_VERSION branch is compiled and linked, and checks that a machine
 * without a GPU is reported cleanly.  Exit 0: all as expected.
 */
#include <cuxfer.h>

#include <stdio.h>

static int failures;

static void expect(int cond, const char *what)
{
    if (!cond) {
        printf("# probe: FAILED: %s (reason: %s)\n", what, cuxfer_last_reason());
        ++failures;
    }
}

int main(void)
{
    static unsigned char buf[64 * 48 * 4], dst[40 * 30 * 4];
    cuxfer_view img, roi, out;
    cuxfer_roi r;
    cudaError_t err;
    int n = -1, rt = 0;
    unsigned flags = cudaHostRegisterDefault;
    /* Without a driver every runtime call, cudaGetLastError included,
     * answers cudaErrorInsufficientDriver: the probe must add nothing. */
    cudaError_t baseline = cudaPeekAtLastError();

    /* 11.x answers cudaErrorInsufficientDriver here without a driver;
     * .ci/cuda-matrix.sh checks with ldd which libcudart was loaded. */
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess) {
        printf("# probe: CUDART_VERSION %d, libcudart reports %d\n", CUDART_VERSION, rt);
        expect(rt / 1000 == CUDART_VERSION / 1000, "header and libcudart majors agree");
    } else {
        printf("# probe: CUDART_VERSION %d, libcudart does not say without a driver\n",
               CUDART_VERSION);
    }

    err = cuxfer_device_count(&n);
    if (err == cudaSuccess) {
        printf("# probe: %d device(s)\n", n);
        expect(n > 0, "a successful count is at least 1");
    } else {
        printf("# probe: no device: %s: %s\n", cudaGetErrorName(err), cuxfer_last_reason());
        expect(n == 0, "count is 0 without a device");
        expect(err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice ||
                   err == cudaErrorStubLibrary,
               "no device is reported as no driver, no device or stub library");
        expect(cuxfer_last_reason()[0] != '\0', "the reason says why");
        expect(cudaGetLastError() == baseline, "no sticky error after the probe");
    }

    /* Views: pure CPU checks. */
    img.ptr = buf;
    img.pitch = 64 * 4;
    img.width = 64;
    img.height = 48;
    img.elem_size = 4;
    img.kind = CUXFER_MEMORY_UNKNOWN;
    img.device = -1;
    img.flags = 0;
    r.x = 10;
    r.y = 5;
    r.width = 40;
    r.height = 30;
    expect(cuxfer_view_sub(&img, r, &roi) == cudaSuccess, "an ROI inside the view");
    expect(roi.ptr == buf + 5 * 64 * 4 + 10 * 4, "the ROI's address");
    r.x = 30;
    expect(cuxfer_view_sub(&img, r, &out) == cudaErrorInvalidValue, "an ROI past the edge");
    out = roi;
    out.ptr = buf;
    out.pitch = 40 * 4;
    expect(cuxfer_copy2d_check(&out, &roi, 0) == cudaErrorInvalidValue,
           "a destination that overlaps the source");
    out.ptr = dst;
    expect(cuxfer_copy2d_check(&out, &roi, 0) == cudaSuccess, "equal extents copy");
    out.width = 39;
    expect(cuxfer_copy2d_check(&out, &roi, 0) == cudaErrorInvalidValue, "different extents");
    out.width = 40;
    out.pitch = 100;
    expect(cuxfer_copy2d_check(&out, &roi, 0) == cudaErrorInvalidPitchValue, "row above pitch");

    /* The version-dependent code: refused before any CUDA call on plain
     * host memory, but compiled and linked against this runtime. */
    expect(cuxfer_prefetch(buf, sizeof buf, CUXFER_CPU, (cudaStream_t)0) != cudaSuccess,
           "prefetch of host memory is refused");
    expect(cuxfer_advise(buf, sizeof buf, cudaMemAdviseSetReadMostly, 0) != cudaSuccess,
           "advise on host memory is refused");
#ifdef cudaHostRegisterReadOnly
    flags |= cudaHostRegisterReadOnly;
    printf("# probe: cudaHostRegisterReadOnly is defined\n");
#else
    printf("# probe: cudaHostRegisterReadOnly is not defined\n");
#endif
    err = cuxfer_host_register(buf, sizeof buf, flags);
    if (err == cudaSuccess)
        expect(cuxfer_host_unregister(buf) == cudaSuccess, "unregister");
    else
        printf("# probe: cuxfer_host_register: %s: %s\n", cudaGetErrorName(err),
               cuxfer_last_reason());
    (void)cudaGetLastError();
    return failures ? 1 : 0;
}
