/* SPDX-License-Identifier: MIT */
/*
 * per-thread.c - tests/composition/matrix.c compiled with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM (what nvcc --default-stream per-thread
 * does for .cu files): in this translation unit stream 0 is the per-thread
 * default stream, so the "0" column must behave like cudaStreamPerThread -
 * cuxfer_graph_begin(0) must work, the pinned pool must gate reuse on 0,
 * and so on.  The macro must come before any CUDA header.
 */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include "matrix.c"
