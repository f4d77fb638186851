/*
 * kernels.c - the CPU backend's inner loops for every dtype x op, written
 * once in plain C and compiled once per instruction set (CMake builds this
 * file with PARSUM_ISA=generic, avx2, avx512 and the matching -m flags).
 * Integer results are the same in every variant. Float reductions use a
 * fixed lane count (same bits everywhere); float scans use the variant's
 * vector width as block width, so they are bit-identical for any thread
 * count within a variant (FMA contraction is off for the whole build).
 *
 * kernels_type.inc holds the loops, written for one element type T; it is
 * included once per dtype below. Each loop takes the operator as a
 * compile-time constant (always-inline helpers called from a switch), so
 * the compiler emits one specialised loop per (dtype, op).
 */
#include "cpu.h"

#include "../core/scalar_ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef PARSUM_ISA
#error "compile kernels.c with -DPARSUM_ISA=<variant>"
#endif

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define PARSUM__STR2(a) #a
#define PARSUM__STR(a) PARSUM__STR2(a)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Vector width of this variant, in bytes (see kernels_type.inc). */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define PARSUM__VEC_BYTES 64
#elif defined(__AVX2__)
#define PARSUM__VEC_BYTES 32
#else
#define PARSUM__VEC_BYTES 16
#endif

/* Bytes of independent accumulators in a reduction (the lane count fixes
 * float rounding, so it is the same in every variant). */
#ifndef PARSUM__REDUCE_LANE_BYTES
#define PARSUM__REDUCE_LANE_BYTES 128
#endif

/* Scans prefetch the thread's next chunk: this many cache lines per line
 * written (0 turns it off; 1, 2 and off measured in bench/RESULTS.md). */
#ifndef PARSUM__PREFETCH
#define PARSUM__PREFETCH 1
#endif

/* Non-temporal stores of one vector (x86 only; elsewhere plain stores). */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARSUM__HAVE_STREAM 1
#if PARSUM__VEC_BYTES == 64
#define PARSUM__STREAM(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#elif PARSUM__VEC_BYTES == 32
#define PARSUM__STREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (__m256i)(v))
#else
#define PARSUM__STREAM(p, v) _mm_stream_si128((__m128i *)(void *)(p), (__m128i)(v))
#endif
#define PARSUM__STREAM_FENCE() _mm_sfence()
#endif

/* A vector of the variant's width as 4-byte lanes: streamed stores are cut
 * across blocks in 4-byte units whatever the element (kernels_type.inc,
 * FN(sink)). A shuffle by an index known only at run time is one or two
 * instructions for 4-byte lanes from AVX2 on (vpermd, vpermt2d), but for
 * 1-byte lanes it needs AVX-512 VBMI, which the variants do not assume
 * (GCC expands it into dozens of inserts and extracts). */
typedef uint32_t parsum__v32 __attribute__((vector_size(PARSUM__VEC_BYTES)));
typedef int32_t parsum__v32_idx __attribute__((vector_size(PARSUM__VEC_BYTES)));
enum { PARSUM__V32_LANES = PARSUM__VEC_BYTES / 4 };


/* One include per dtype: T is the element, W the scalar arithmetic type,
 * VT the vector lane type (unsigned for integers: defined wrap-around),
 * MT the signed integer of T's width (masks, shuffle indices), TMIN/TMAX
 * the identities of MAX/MIN, SFX the name suffix. */
#define T int8_t
#define VT uint8_t
#define MT int8_t
#define W uint32_t
#define TMIN INT8_MIN
#define TMAX INT8_MAX
#define SFX i8
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint8_t
#define VT uint8_t
#define MT int8_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT8_MAX
#define SFX u8
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int16_t
#define VT uint16_t
#define MT int16_t
#define W uint32_t
#define TMIN INT16_MIN
#define TMAX INT16_MAX
#define SFX i16
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint16_t
#define VT uint16_t
#define MT int16_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT16_MAX
#define SFX u16
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int32_t
#define VT uint32_t
#define MT int32_t
#define W uint32_t
#define TMIN INT32_MIN
#define TMAX INT32_MAX
#define SFX i32
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint32_t
#define VT uint32_t
#define MT int32_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT32_MAX
#define SFX u32
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int64_t
#define VT uint64_t
#define MT int64_t
#define W uint64_t
#define TMIN INT64_MIN
#define TMAX INT64_MAX
#define SFX i64
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint64_t
#define VT uint64_t
#define MT int64_t
#define W uint64_t
#define TMIN 0
#define TMAX UINT64_MAX
#define SFX u64
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T float
#define VT float
#define MT int32_t
#define W float
#define TMIN (-INFINITY)
#define TMAX INFINITY
#define SFX f32
#define IS_FLOAT 1
#include "kernels_type.inc"

#define T double
#define VT double
#define MT int64_t
#define W double
#define TMIN (-(double)INFINITY)
#define TMAX ((double)INFINITY)
#define SFX f64
#define IS_FLOAT 1
#include "kernels_type.inc"

/* ---- key comparison (scan_by_key, reduce_by_key) ----------------------
 * bits[i / 64] bit i % 64 = (a[i] != b[i]) for i < count, bits above count
 * in the last word cleared; 64 keys per output word. The vector variants
 * compare a word's worth of keys at a time and assemble the compare masks;
 * the scalar loop does the tail (and everything in the generic variant). */
#define KEY_DIFF_TAIL(KT)                                                   \
    do {                                                                    \
        const KT *pa_ = (const KT *)a, *pb_ = (const KT *)b;                \
        for (; i < count; i += 64) {                                        \
            uint64_t w_ = 0;                                                \
            size_t e_ = count - i < 64 ? count - i : 64;                    \
            for (size_t j_ = 0; j_ < e_; j_++)                              \
                w_ |= (uint64_t)(pa_[i + j_] != pb_[i + j_]) << j_;         \
            bits[i / 64] = w_;                                              \
        }                                                                   \
    } while (0)

#if defined(__AVX512BW__) && defined(__AVX512F__)
#define KEY_DIFF_WORD(bits_per_vec, CMP, esz)                               \
    do {                                                                    \
        const unsigned char *pa_ = (const unsigned char *)a + i * (esz);    \
        const unsigned char *pb_ = (const unsigned char *)b + i * (esz);    \
        uint64_t w_ = 0;                                                    \
        for (int q_ = 0; q_ < 64 / (bits_per_vec); q_++)                    \
            w_ |= (uint64_t)CMP(_mm512_loadu_si512(pa_ + 64 * q_),          \
                                _mm512_loadu_si512(pb_ + 64 * q_))          \
                  << ((bits_per_vec) * q_);                                 \
        bits[i / 64] = w_;                                                  \
    } while (0)
#define KD1 KEY_DIFF_WORD(64, _mm512_cmpneq_epi8_mask, 1)
#define KD2 KEY_DIFF_WORD(32, _mm512_cmpneq_epi16_mask, 2)
#define KD4 KEY_DIFF_WORD(16, _mm512_cmpneq_epi32_mask, 4)
#define KD8 KEY_DIFF_WORD(8, _mm512_cmpneq_epi64_mask, 8)
#elif defined(__AVX2__) && defined(__BMI2__)
/* movemask gives one bit per byte (epi8) or per 4/8-byte lane (ps/pd);
 * 2-byte lanes keep every other byte bit (pext). Equal lanes set bits, so
 * the word is inverted at the end. */
#define EQ1(x, y)                                                           \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)))
#define LOAD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define EQ2(x, y)                                                           \
    ((uint64_t)_pext_u32((uint32_t)_mm256_movemask_epi8(                   \
                             _mm256_cmpeq_epi16(x, y)),                     \
                         0x55555555u))
#define EQ4(x, y)                                                           \
    ((uint64_t)(uint32_t)_mm256_movemask_ps(                               \
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(x, y))))
#define EQ8(x, y)                                                           \
    ((uint64_t)(uint32_t)_mm256_movemask_pd(                               \
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(x, y))))
#define KEY_DIFF_WORD(bits_per_vec, EQ, esz)                                \
    do {                                                                    \
        const unsigned char *pa_ = (const unsigned char *)a + i * (esz);    \
        const unsigned char *pb_ = (const unsigned char *)b + i * (esz);    \
        uint64_t w_ = 0;                                                    \
        for (int q_ = 0; q_ < 64 / (bits_per_vec); q_++)                    \
            w_ |= EQ(LOAD256(pa_ + 32 * q_), LOAD256(pb_ + 32 * q_))        \
                  << ((bits_per_vec) * q_);                                 \
        bits[i / 64] = ~w_;                                                 \
    } while (0)
#define KD1 KEY_DIFF_WORD(32, EQ1, 1)
#define KD2 KEY_DIFF_WORD(16, EQ2, 2)
#define KD4 KEY_DIFF_WORD(8, EQ4, 4)
#define KD8 KEY_DIFF_WORD(4, EQ8, 8)
#endif

#define DEFINE_KEY_DIFF(name, KT, KD)                                       \
    static void name(const void *a, const void *b, size_t count,            \
                     uint64_t *bits)                                        \
    {                                                                       \
        size_t i = 0;                                                       \
        KEY_DIFF_FULL(KD);                                                  \
        KEY_DIFF_TAIL(KT);                                                  \
    }
#ifdef KEY_DIFF_WORD
#define KEY_DIFF_FULL(KD)                                                   \
    for (; i + 64 <= count; i += 64)                                        \
    KD
#else
#define KEY_DIFF_FULL(KD) ((void)0)
#endif
DEFINE_KEY_DIFF(key_diff_1, uint8_t, KD1)
DEFINE_KEY_DIFF(key_diff_2, uint16_t, KD2)
DEFINE_KEY_DIFF(key_diff_4, uint32_t, KD4)
DEFINE_KEY_DIFF(key_diff_8, uint64_t, KD8)

/* The selection kernels of the same instruction set (kernels_select.c,
 * built once per variant like this file). */
extern const parsum__cpu_select_kernels
    PARSUM__CAT(parsum__cpu_select_kernels_, PARSUM_ISA);

/* The table: rows in parsum_dtype order, columns in parsum_op order;
 * floats have no bitwise slots. */
#define ROW_INT(kind, sfx)                                                  \
    {kind##_##sfx##_sum, kind##_##sfx##_prod, kind##_##sfx##_min,            \
     kind##_##sfx##_max, kind##_##sfx##_and,  kind##_##sfx##_or,             \
     kind##_##sfx##_xor}
#define ROW_FLT(kind, sfx)                                                  \
    {kind##_##sfx##_sum, kind##_##sfx##_prod, kind##_##sfx##_min,            \
     kind##_##sfx##_max, NULL, NULL, NULL}
#define TABLE(kind)                                                         \
    {ROW_INT(kind, i8),  ROW_INT(kind, u8),  ROW_INT(kind, i16),             \
     ROW_INT(kind, u16), ROW_INT(kind, i32), ROW_INT(kind, u32),             \
     ROW_INT(kind, i64), ROW_INT(kind, u64), ROW_FLT(kind, f32),             \
     ROW_FLT(kind, f64)}

const parsum__cpu_kernels PARSUM__CAT(parsum__cpu_kernels_, PARSUM_ISA) = {
    PARSUM__STR(PARSUM_ISA),
    TABLE(reduce_run),
    TABLE(scan_chunk),
    TABLE(seg_scan_chunk),
    {key_diff_1, key_diff_2, key_diff_4, key_diff_8},
    &PARSUM__CAT(parsum__cpu_select_kernels_, PARSUM_ISA),
};
