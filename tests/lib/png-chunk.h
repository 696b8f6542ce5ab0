/* SPDX-License-Identifier: MIT */
/*
 * png-chunk.h - for the tests that forge or cut PNG chunks by hand
 * (tests/png-io.c, tests/codec-tool.c): big-endian 32-bit fields and the
 * chunk CRC (CRC-32 of the type and data, as the PNG specification
 * defines it), written here rather than taken from zlib so that the
 * tests check libpng against an independent computation.
 */
#ifndef CUXFER_TESTS_PNG_CHUNK_H
#define CUXFER_TESTS_PNG_CHUNK_H
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PNG_CHUNK_UNUSED __attribute__((unused))
#else
#define PNG_CHUNK_UNUSED
#endif

static PNG_CHUNK_UNUSED uint32_t png_crc32(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; ++i) {
        c ^= p[i];
        for (k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static PNG_CHUNK_UNUSED uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static PNG_CHUNK_UNUSED void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}
#endif
