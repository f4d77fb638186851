/*
 * kernels_hist.c - the inner loops of the CPU histograms (cpu.h,
 * "histograms"; the drivers are in histogram.c), compiled once per
 * instruction set like kernels.c (CMake builds this file with
 * PARSUM_ISA=generic, avx2, avx512).
 *
 * Integer samples in the SHIFT bin mode are counted in one loop (shift:
 * bin and increment together, which costs fewer instructions per sample
 * than storing and reloading an index). Every other mode is two loops:
 * the bin index of each sample (ids, per dtype, through hist_bins.h, so
 * every backend bins alike; vectorized for SHIFT and FLOAT), then the
 * increments (count). Samples that fall in no bin get the index nbins, a
 * counter that exists in the private histograms and is thrown away, so no
 * loop branches on them.
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

/* Software prefetch this many bytes ahead of the samples being counted.
 * On the 2-core development machine the counting loops (about one cycle
 * per sample in the L1 cache) got only 60 % of the read bandwidth from
 * memory without it: the hardware prefetcher did not run far enough ahead
 * of a core that is busy with the increments. 2 KiB gave the most (4 KiB
 * about the same, 8 KiB less); prefetches never fault, so running past
 * the end of the samples is harmless. */
#define HIST_PF_BYTES 2048
#define HIST_PREFETCH(addr)                                                \
    __builtin_prefetch((const void *)((uintptr_t)(addr) + HIST_PF_BYTES), \
                       0, 0)

#define KIND_SIGNED 0
#define KIND_U64 1
#define KIND_FLOAT 2

#define T int8_t
#define SFX i8
#define TMIN INT8_MIN
#define TMAX INT8_MAX
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint8_t
#define SFX u8
#define TMIN 0
#define TMAX UINT8_MAX
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T int16_t
#define SFX i16
#define TMIN INT16_MIN
#define TMAX INT16_MAX
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint16_t
#define SFX u16
#define TMIN 0
#define TMAX UINT16_MAX
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T int32_t
#define SFX i32
#define TMIN INT32_MIN
#define TMAX INT32_MAX
#define KIND KIND_SIGNED
#define WIDE int64_t
#define BIN_FN parsum__bin_i64
#include "kernels_hist_type.inc"
#define T uint32_t
#define SFX u32
#define TMIN 0
#define TMAX UINT32_MAX
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
                      size_t cs, unsigned copies, const void *pf,
                      size_t pf_bytes)
{
    /* copies 1, 2 or 4: h0..h3 name the copy of samples 4i .. 4i + 3 */
    uint32_t *h0 = h, *h1 = h + (copies > 1 ? cs : 0);
    uint32_t *h2 = copies > 2 ? h + 2 * cs : h0;
    uint32_t *h3 = copies > 2 ? h + 3 * cs : h1;
    /* the next block's lines, spread evenly over the loop (the ids loop
     * that comes next then finds them in the cache) */
    const unsigned char *next = pf;
    size_t lines = (pf_bytes + 63) / 64, steps = count / 16;
    size_t per = steps ? (lines + steps - 1) / steps : 0, line = 0;
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        for (size_t k = 0; k < per && line < lines; k++, line++)
            __builtin_prefetch(next + 64 * line, 0, 3);
#pragma GCC unroll 4
        for (size_t k = 0; k < 16; k += 4) {
            uint32_t b0 = ids[i + k], b1 = ids[i + k + 1],
                     b2 = ids[i + k + 2], b3 = ids[i + k + 3];
            h0[b0]++;
            h1[b1]++;
            h2[b2]++;
            h3[b3]++;
        }
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
        /* Eight bytes per 64-bit load, 64 per step (one prefetch). */
        for (; i + 64 <= len; i += 64) {
            HIST_PREFETCH(x + i);
#pragma GCC unroll 8
            for (size_t k = 0; k < 64; k += 8) {
                uint64_t w;
                memcpy(&w, x + i + k, 8);
                h[(w & 0xFF)]++;
                h[256 + (w >> 8 & 0xFF)]++;
                h[512 + (w >> 16 & 0xFF)]++;
                h[768 + (w >> 24 & 0xFF)]++;
                h[(w >> 32 & 0xFF)]++;
                h[256 + (w >> 40 & 0xFF)]++;
                h[512 + (w >> 48 & 0xFF)]++;
                h[768 + (w >> 56)]++;
            }
        }
    } else {
        for (; i + 60 <= len; i += 60) { /* 60 = 10 x C (6): whole steps */
            HIST_PREFETCH(x + i);
            for (size_t k = 0; k < 60; k += C)
                for (unsigned c = 0; c < C; c++)
                    h[256 * c + x[i + k + c]]++;
        }
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
    {shift_i8, shift_u8, shift_i16, shift_u16, shift_i32, shift_u32,
     shift_i64, shift_u64, NULL, NULL},
    count_bytes,
};
