/*
 * kernels_image_util.h - what the per-instruction-set image kernel files
 * (kernels_image.c, kernels_box.c) share: the variant's name and vector
 * intrinsics, and sample loads by kind. Included by those files only.
 */
#ifndef PARSUM_CPU_KERNELS_IMAGE_UTIL_H
#define PARSUM_CPU_KERNELS_IMAGE_UTIL_H

#include "image_kernels.h"

#include <stdint.h>
#include <string.h>

#ifndef PARSUM_ISA
#error "compile the image kernels with -DPARSUM_ISA=<variant>"
#endif

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define PARSUM__STR2(a) #a
#define PARSUM__STR(a) PARSUM__STR2(a)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#include <immintrin.h>
#define IMG_AVX512 1
#endif

enum { U8 = PARSUM__PIX_U8, U16 = PARSUM__PIX_U16, I32 = PARSUM__PIX_I32,
       F32 = PARSUM__PIX_F32, F64 = PARSUM__PIX_F64 };

/* Sample i of a row of kind pix: modulo 2^64 (I32 sign-extended) or as a
 * double. pix is a constant wherever these are inlined. */
ALWAYS_INLINE uint64_t ld_u(const void *p, size_t i, int pix)
{
    switch (pix) {
    case U8: return ((const uint8_t *)p)[i];
    case U16: return ((const uint16_t *)p)[i];
    default: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    }
}

ALWAYS_INLINE double ld_f(const void *p, size_t i, int pix)
{
    switch (pix) {
    case U8: return ((const uint8_t *)p)[i];
    case U16: return ((const uint16_t *)p)[i];
    case I32: return ((const int32_t *)p)[i];
    case F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

#endif
