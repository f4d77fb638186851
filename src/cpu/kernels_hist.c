/*
 * kernels_hist.c - the inner loops of the CPU histograms (cpu.h,
 * "histograms"; the drivers are in histogram.c), compiled once per
 * instruction set like kernels.c (CMake builds this file with
 * PARSUM_ISA=generic, avx2, avx512).
 *
 * A histogram is two loops here: the bin index of each sample (the ids
 * kernels, per dtype, through hist_bins.h, so every backend bins alike;
 * vectorized for the SHIFT mode), then the increments (count), kept apart
 * so that each loop is simple enough for the compiler and the increments
 * run without the bin arithmetic between them. Samples that fall in no
 * bin get the index nbins, a counter that exists in the private
 * histograms and is thrown away, so neither loop branches on them.
 *
 * The increments of one histogram form a chain through memory when
 * consecutive samples hit the same bin (a skewed input): each waits for
 * the previous store. Spreading consecutive samples over four copies of
 * the histogram makes four independent chains (the copies are summed
 * afterwards). Byte samples are counted by value (bytes), 256 counters per
 * copy, and binned only when the counts are combined.
 */
#include "../core/internal.h"
#include "cpu.h"

#include <string.h>

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define PARSUM__STR2(a) #a
#define PARSUM__STR(a) PARSUM__STR2(a)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define KIND_SIGNED 0
#define KIND_U64 1
#define KIND_FLOAT 2

#define T int8_t
#define SFX i8
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint8_t
#define SFX u8
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T int16_t
#define SFX i16
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint16_t
#define SFX u16
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T int32_t
#define SFX i32
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint32_t
#define SFX u32
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T int64_t
#define SFX i64
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint64_t
#define SFX u64
#define KIND KIND_U64
#define WIDE uint64_t
#define BIN_FN parsum__bin_u64
#include "kernels_hist_type.inc"
#define T float
#define SFX f32
#define KIND KIND_FLOAT
#define WIDE double
#define BIN_FN parsum__bin_f64
#include "kernels_hist_type.inc"
#define T double
#define SFX f64
#define KIND KIND_FLOAT
#define WIDE double
#define BIN_FN parsum__bin_f64
#include "kernels_hist_type.inc"

static void count_ids(const uint32_t *ids, size_t count, uint32_t *h,
                      size_t cs, unsigned copies)
{
    /* copies 1, 2 or 4: h0..h3 name the copy of samples 4i .. 4i + 3 */
    uint32_t *h0 = h, *h1 = h + (copies > 1 ? cs : 0);
    uint32_t *h2 = copies > 2 ? h + 2 * cs : h0;
    uint32_t *h3 = copies > 2 ? h + 3 * cs : h1;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        uint32_t b0 = ids[i], b1 = ids[i + 1], b2 = ids[i + 2],
                 b3 = ids[i + 3];
        h0[b0]++;
        h1[b1]++;
        h2[b2]++;
        h3[b3]++;
    }
    for (; i < count; i++)
        h0[ids[i]]++;
}

/* Byte i into copy i % C; C a constant, so the copy of every byte of an
 * unrolled step is known at compile time. */
ALWAYS_INLINE void bytes_by(const uint8_t *x, size_t len, uint32_t *h,
                            unsigned C)
{
    size_t i = 0;
    if (C == 4) {
        /* Four bytes per 32-bit load. */
        for (; i + 8 <= len; i += 8) {
            uint32_t w0, w1;
            memcpy(&w0, x + i, 4);
            memcpy(&w1, x + i + 4, 4);
            h[(w0 & 0xFF)]++;
            h[256 + (w0 >> 8 & 0xFF)]++;
            h[512 + (w0 >> 16 & 0xFF)]++;
            h[768 + (w0 >> 24)]++;
            h[(w1 & 0xFF)]++;
            h[256 + (w1 >> 8 & 0xFF)]++;
            h[512 + (w1 >> 16 & 0xFF)]++;
            h[768 + (w1 >> 24)]++;
        }
    } else {
        for (; i + C <= len; i += C)
            for (unsigned k = 0; k < C; k++)
                h[256 * k + x[i + k]]++;
    }
    /* i is a multiple of C here: byte i still goes to copy i % C */
    for (; i < len; i++)
        h[256 * (i % C) + x[i]]++;
}

static void count_bytes(const uint8_t *x, size_t len, uint32_t *h,
                        unsigned copies)
{
    if (copies == 4)
        bytes_by(x, len, h, 4);
    else
        bytes_by(x, len, h, 6);
}

const parsum__cpu_hist_kernels PARSUM__CAT(parsum__cpu_hist_kernels_,
                                           PARSUM_ISA) = {
    PARSUM__STR(PARSUM_ISA),
    {ids_i8, ids_u8, ids_i16, ids_u16, ids_i32, ids_u32, ids_i64, ids_u64,
     ids_f32, ids_f64},
    count_ids,
    count_bytes,
};
