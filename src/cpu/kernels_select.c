/*
 * kernels_select.c - the CPU backend's selection kernels: built-in
 * predicates and flag bytes turned into bit masks, and the compress that
 * moves the elements whose bit is set. Compiled once per instruction set
 * from this one source, like kernels.c (CMake builds it with
 * PARSUM_ISA=generic, avx2, avx512 and the matching -m flags); the
 * variant's table hangs off the kernels.c table (parsum__cpu_kernels.sel).
 *
 * Everything works on 64-element groups, one uint64_t of bits per group,
 * which is the currency of the selection code (select.c): a predicate is
 * a compare of whole vectors and one "move mask" per vector (no branch on
 * the data), and a compress takes a word of bits at a time:
 *  - AVX-512: vpcompressd/q in registers and one masked store of the
 *    packed lanes; 1- and 2-byte elements are widened to 32-bit lanes for
 *    the compress and narrowed again by the store (no VBMI2 needed),
 *    16-byte elements are compressed as pairs of 64-bit lanes;
 *  - elsewhere, a word that is all ones is one memcpy, a sparse word walks
 *    its set bits, and a dense one stores every element up to the word's
 *    last set bit, advancing the output by the element's bit (branch
 *    free). Stopping at the last set bit keeps every store inside the
 *    output's first m elements: neighbouring chunks written by other
 *    threads are never touched.
 */
#include "cpu.h"

#include <stdint.h>
#include <string.h>

#ifndef PARSUM_ISA
#error "compile kernels_select.c with -DPARSUM_ISA=<variant>"
#endif

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SEL_X86 1
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define VB 64
#elif defined(__AVX2__)
#define VB 32
#else
#define VB 16
#endif

/* Bytes of the lane mask types, by lane width. */
typedef int8_t m8 __attribute__((vector_size(VB)));
typedef int16_t m16 __attribute__((vector_size(VB)));
typedef int32_t m32 __attribute__((vector_size(VB)));
typedef int64_t m64 __attribute__((vector_size(VB)));

static size_t popcount64(uint64_t x)
{
#if defined(__POPCNT__)
    return (size_t)__builtin_popcountll(x);
#else
    x = x - (x >> 1 & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (size_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* ---- move masks: bit j = lane j is all ones (lanes are 0 or -1) -------- */

ALWAYS_INLINE uint64_t movemask8(m8 m)
{
#if VB == 64
    return (uint64_t)_mm512_movepi8_mask((__m512i)m);
#elif VB == 32
    return (uint32_t)_mm256_movemask_epi8((__m256i)m);
#elif defined(SEL_X86)
    return (uint32_t)_mm_movemask_epi8((__m128i)m);
#else
    uint64_t r = 0;
    for (int j = 0; j < VB; j++)
        r |= (uint64_t)(m[j] & 1) << j;
    return r;
#endif
}

ALWAYS_INLINE uint64_t movemask16(m16 m)
{
#if VB == 64
    return (uint32_t)_mm512_movepi16_mask((__m512i)m);
#elif VB == 32
    /* both bytes of a lane are equal: keep every other byte's bit */
    return _pext_u32((uint32_t)_mm256_movemask_epi8((__m256i)m), 0x55555555u);
#elif defined(SEL_X86)
    __m128i p = _mm_packs_epi16((__m128i)m, _mm_setzero_si128());
    return (uint32_t)_mm_movemask_epi8(p) & 0xFFu;
#else
    uint64_t r = 0;
    for (int j = 0; j < VB / 2; j++)
        r |= (uint64_t)(m[j] & 1) << j;
    return r;
#endif
}

ALWAYS_INLINE uint64_t movemask32(m32 m)
{
#if VB == 64
    return (uint16_t)_mm512_movepi32_mask((__m512i)m);
#elif VB == 32
    return (uint32_t)_mm256_movemask_ps((__m256)m);
#elif defined(SEL_X86)
    return (uint32_t)_mm_movemask_ps((__m128)m);
#else
    uint64_t r = 0;
    for (int j = 0; j < VB / 4; j++)
        r |= (uint64_t)(m[j] & 1) << j;
    return r;
#endif
}

ALWAYS_INLINE uint64_t movemask64(m64 m)
{
#if VB == 64
    return (uint8_t)_mm512_movepi64_mask((__m512i)m);
#elif VB == 32
    return (uint32_t)_mm256_movemask_pd((__m256d)m);
#elif defined(SEL_X86)
    return (uint32_t)_mm_movemask_pd((__m128d)m);
#else
    uint64_t r = 0;
    for (int j = 0; j < VB / 8; j++)
        r |= (uint64_t)(m[j] & 1) << j;
    return r;
#endif
}

/* ---- predicates: one instantiation per dtype --------------------------- */

#define T int8_t
#define UT uint8_t
#define SFX i8
#define ESZ 1
#include "kernels_select_type.inc"

#define T uint8_t
#define UT uint8_t
#define SFX u8
#define ESZ 1
#include "kernels_select_type.inc"

#define T int16_t
#define UT uint16_t
#define SFX i16
#define ESZ 2
#include "kernels_select_type.inc"

#define T uint16_t
#define UT uint16_t
#define SFX u16
#define ESZ 2
#include "kernels_select_type.inc"

#define T int32_t
#define UT uint32_t
#define SFX i32
#define ESZ 4
#include "kernels_select_type.inc"

#define T uint32_t
#define UT uint32_t
#define SFX u32
#define ESZ 4
#include "kernels_select_type.inc"

#define T int64_t
#define UT uint64_t
#define SFX i64
#define ESZ 8
#include "kernels_select_type.inc"

#define T uint64_t
#define UT uint64_t
#define SFX u64
#define ESZ 8
#include "kernels_select_type.inc"

#define T float
#define UT uint32_t
#define SFX f32
#define ESZ 4
#include "kernels_select_type.inc"

#define T double
#define UT uint64_t
#define SFX f64
#define ESZ 8
#include "kernels_select_type.inc"

/* ---- flag bytes ---------------------------------------------------------- */

/* 64 flag bytes as bits, set where the byte is not 0. */
ALWAYS_INLINE uint64_t bytes_word(const uint8_t *b)
{
#if VB == 64
    __m512i v = _mm512_loadu_si512((const void *)b);
    return (uint64_t)_mm512_test_epi8_mask(v, v);
#else
    uint64_t r = 0;
    m8 zero = {0};
#pragma GCC unroll 4
    for (int q = 0; q < 64 / VB; q++) {
        m8 v;
        memcpy(&v, b + VB * q, sizeof v);
        r |= movemask8((m8)(v == zero)) << (VB * q);
    }
    return ~r;
#endif
}

static size_t bytes_bits(const uint8_t *bytes, size_t count, uint64_t *bits)
{
    size_t full = count / 64, total = 0, rem = count % 64;
    for (size_t w = 0; w < full; w++) {
        uint64_t word = bytes_word(bytes + 64 * w);
        bits[w] = word;
        total += popcount64(word);
    }
    if (rem != 0) {
        uint8_t tmp[64] = {0};
        memcpy(tmp, bytes + 64 * full, rem);
        uint64_t word = bytes_word(tmp) & (((uint64_t)1 << rem) - 1);
        bits[full] = word;
        total += popcount64(word);
    }
    return total;
}

/* ---- compress ------------------------------------------------------------ */

/* Word w of bits, restricted to the first count elements. */
ALWAYS_INLINE uint64_t word_at(const uint64_t *bits, size_t w, size_t count)
{
    uint64_t b = bits[w];
    size_t left = count - 64 * w;
    return left < 64 ? b & (((uint64_t)1 << left) - 1) : b;
}

/* Sparse words walk their bits; below this many set bits of 64. */
#define SPARSE_BITS 16

/* The portable compress of one word of elements of ES bytes at s into d;
 * returns the count written (see the file comment). */
#define COMPRESS_WORD(ES, s, d, b)                                          \
    do {                                                                    \
        if (b == ~(uint64_t)0) {                                            \
            memcpy(d, s, 64 * (ES));                                        \
            m_ += 64;                                                       \
        } else if (popcount64(b) < SPARSE_BITS) {                           \
            for (uint64_t r_ = b; r_ != 0; r_ &= r_ - 1)                    \
                memcpy(d + (ES) * m_++,                                     \
                       s + (ES) * (size_t)__builtin_ctzll(r_), (ES));       \
        } else if (b != 0) {                                                \
            int last_ = 63 - __builtin_clzll(b);                            \
            for (int j_ = 0; j_ <= last_; j_++) {                           \
                memcpy(d + (ES) * m_, s + (ES) * (size_t)j_, (ES));         \
                m_ += (size_t)(b >> j_ & 1);                                \
            }                                                               \
        }                                                                   \
    } while (0)

/* Instantiated per element size, so that ES is a constant and each
 * memcpy one load and one store. */
#define DEFINE_COMPRESS_PORTABLE(name, ES)                                  \
    static size_t name(const void *src, const uint64_t *bits, size_t count, \
                       void *dst)                                           \
    {                                                                       \
        const unsigned char *s = (const unsigned char *)src;                \
        unsigned char *d = (unsigned char *)dst;                            \
        size_t m = 0;                                                       \
        for (size_t w = 0; w < (count + 63) / 64; w++) {                    \
            uint64_t b = word_at(bits, w, count);                           \
            size_t m_ = 0;                                                  \
            COMPRESS_WORD(ES, s + 64 * (ES) * w, d + (ES) * m, b);          \
            m += m_;                                                        \
        }                                                                   \
        return m;                                                           \
    }

#if VB == 64
/* AVX-512: compress 16 (or 8) lanes in registers, store the first c. One
 * word at a time; a partial last word has its missing lanes masked off
 * the load. WIDEN/NARROW_STORE move 1- and 2-byte elements through 32-bit
 * lanes. */
#define AVX512_COMPRESS(name, ES, LANES, KT, LOAD, COMPRESS, STORE)         \
    static size_t name(const void *src, const uint64_t *bits, size_t count, \
                       void *dst)                                           \
    {                                                                       \
        const unsigned char *s = (const unsigned char *)src;                \
        unsigned char *d = (unsigned char *)dst;                            \
        size_t m = 0;                                                       \
        for (size_t w = 0; w < (count + 63) / 64; w++) {                    \
            uint64_t b = word_at(bits, w, count);                           \
            size_t left = count - 64 * w;                                   \
            for (int q = 0; q < 64 / (LANES) && b != 0; q++) {             \
                KT k = (KT)(b >> ((LANES) * q) & LANE_MASK(LANES));         \
                if (k == 0)                                                 \
                    continue;                                               \
                size_t at = 64 * w + (size_t)(LANES) * (size_t)q;           \
                size_t in_ = left - (size_t)(LANES) * (size_t)q;            \
                KT valid = (KT)(in_ >= (LANES) ? LANE_MASK(LANES)           \
                                               : LANE_MASK(in_));           \
                __m512i v = LOAD(valid, s + (ES) * at);                     \
                int c = __builtin_popcountll((uint64_t)k);                  \
                STORE(d + (ES) * m, (KT)(((uint64_t)1 << c) - 1),           \
                      COMPRESS(k, v));                                      \
                m += (size_t)c;                                             \
            }                                                               \
        }                                                                   \
        return m;                                                           \
    }

#define LANE_MASK(c) ((((uint64_t)1) << (c)) - 1)
#define LOAD_W8(k, p)                                                       \
    _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8((__mmask16)(k), (p)))
#define LOAD_W16(k, p)                                                      \
    _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16((__mmask16)(k), (p)))
#define LOAD_32(k, p) _mm512_maskz_loadu_epi32((k), (p))
#define LOAD_64(k, p) _mm512_maskz_loadu_epi64((k), (p))
AVX512_COMPRESS(compress_1, 1, 16, __mmask16, LOAD_W8,
                _mm512_maskz_compress_epi32, _mm512_mask_cvtepi32_storeu_epi8)
AVX512_COMPRESS(compress_2, 2, 16, __mmask16, LOAD_W16,
                _mm512_maskz_compress_epi32, _mm512_mask_cvtepi32_storeu_epi16)
AVX512_COMPRESS(compress_4, 4, 16, __mmask16, LOAD_32,
                _mm512_maskz_compress_epi32, _mm512_mask_storeu_epi32)
AVX512_COMPRESS(compress_8, 8, 8, __mmask8, LOAD_64,
                _mm512_maskz_compress_epi64, _mm512_mask_storeu_epi64)

/* 16-byte elements: bit j of a nibble becomes bits 2j and 2j+1. */
static const uint8_t pair_bits[16] = {
    0x00, 0x03, 0x0C, 0x0F, 0x30, 0x33, 0x3C, 0x3F,
    0xC0, 0xC3, 0xCC, 0xCF, 0xF0, 0xF3, 0xFC, 0xFF};
#define LOAD_PAIRS(k, p) _mm512_maskz_loadu_epi64((__mmask8)pair_bits[k], (p))
#define COMPRESS_PAIRS(k, v) _mm512_maskz_compress_epi64((__mmask8)pair_bits[k], (v))
#define STORE_PAIRS(p, k, v) _mm512_mask_storeu_epi64((p), (__mmask8)pair_bits[k], (v))
AVX512_COMPRESS(compress_16, 16, 4, unsigned, LOAD_PAIRS, COMPRESS_PAIRS,
                STORE_PAIRS)
#else
DEFINE_COMPRESS_PORTABLE(compress_1, 1)
DEFINE_COMPRESS_PORTABLE(compress_2, 2)
DEFINE_COMPRESS_PORTABLE(compress_4, 4)
DEFINE_COMPRESS_PORTABLE(compress_8, 8)
DEFINE_COMPRESS_PORTABLE(compress_16, 16)
#endif

/* Positions: dst[m++] = base + i for every set bit i. */
static size_t compress_index(const uint64_t *bits, size_t count,
                             uint64_t base, uint64_t *dst)
{
    size_t m = 0;
    for (size_t w = 0; w < (count + 63) / 64; w++) {
        uint64_t b = word_at(bits, w, count);
        uint64_t at = base + 64 * (uint64_t)w;
#if VB == 64
        __m512i idx = _mm512_add_epi64(_mm512_set1_epi64((long long)at),
                                       _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        for (int q = 0; q < 8 && b != 0; q++) {
            __mmask8 k = (__mmask8)(b >> (8 * q));
            if (k != 0) {
                int c = __builtin_popcount(k);
                _mm512_mask_storeu_epi64(dst + m, (__mmask8)((1u << c) - 1),
                                         _mm512_maskz_compress_epi64(k, idx));
                m += (size_t)c;
            }
            idx = _mm512_add_epi64(idx, _mm512_set1_epi64(8));
        }
#else
        for (; b != 0; b &= b - 1)
            dst[m++] = at + (uint64_t)__builtin_ctzll(b);
#endif
    }
    return m;
}

/* ---- the table ----------------------------------------------------------- */

const parsum__cpu_select_kernels PARSUM__CAT(parsum__cpu_select_kernels_,
                                             PARSUM_ISA) = {
    {compress_1, compress_2, compress_4, compress_8, compress_16},
    compress_index,
    {pred_bits_i8, pred_bits_u8, pred_bits_i16, pred_bits_u16, pred_bits_i32,
     pred_bits_u32, pred_bits_i64, pred_bits_u64, pred_bits_f32,
     pred_bits_f64},
    bytes_bits,
};
