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

/* Reads of a long run prefetch this many bytes ahead, line by line: the
 * hardware prefetcher alone leaves the loads of a predicate (a dozen
 * instructions per line) short of the bandwidth of a plain read, and
 * 8-16 KiB ahead closes most of the gap (measured on the 2-core
 * development machine: 29 -> 23 ms for 2^26 i32, a plain read 22 ms).
 * The prefetches run past the end of the range: the callers hand the
 * kernels a chunk a piece at a time, and a prefetch never faults. */
#define PF_AHEAD 8192

/* The `lines` cache lines PF_AHEAD bytes after p (as an integer: the
 * address may lie past the array). */
ALWAYS_INLINE void prefetch_ahead(const unsigned char *p, size_t lines)
{
    for (size_t q = 0; q < lines; q++)
        __builtin_prefetch(
            (const void *)((uintptr_t)p + PF_AHEAD + 64 * q), 0, 3);
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

/* One word: the elements (ES bytes each) of the 64 at s whose bit in b is
 * set, to d; `left` is how many of the 64 exist (bits beyond are clear).
 * Returns the count written. ES is a constant in every use, so each
 * memcpy is one load and one store. */
ALWAYS_INLINE size_t word_portable(const unsigned char *s, uint64_t b,
                                   unsigned char *d, size_t ES)
{
    size_t m = 0;
    if (b == ~(uint64_t)0) {
        memcpy(d, s, 64 * ES);
        return 64;
    }
    if (parsum__popcount64(b) < SPARSE_BITS) {
        for (; b != 0; b &= b - 1)
            memcpy(d + ES * m++, s + ES * (size_t)__builtin_ctzll(b), ES);
        return m;
    }
    int last = b != 0 ? 63 - __builtin_clzll(b) : -1;
    for (int j = 0; j <= last; j++) {
        memcpy(d + ES * m, s + ES * (size_t)j, ES);
        m += (size_t)(b >> j & 1);
    }
    return m;
}

#if VB == 64
/* AVX-512: 16 (or 8) lanes compressed in registers, the first c stored
 * with a mask; the load is masked to the lanes that exist. 1- and 2-byte
 * elements go through 32-bit lanes (widened by the load, narrowed by the
 * store), 16-byte elements as pairs of 64-bit lanes. */
#define LANE_MASK(c) ((((uint64_t)1) << (c)) - 1)
#define AVX512_WORD(name, ES, LANES, KT, LOAD, COMPRESS, STORE)             \
    ALWAYS_INLINE size_t name(const unsigned char *s, uint64_t b,           \
                              size_t left, unsigned char *d)                \
    {                                                                       \
        size_t m = 0;                                                       \
        for (int q = 0; q < 64 / (LANES) && b != 0; q++) {                  \
            KT k = (KT)(b >> ((LANES) * q) & LANE_MASK(LANES));             \
            if (k == 0)                                                     \
                continue;                                                   \
            size_t in_ = left - (size_t)(LANES) * (size_t)q;                \
            KT valid = (KT)(in_ >= (LANES) ? LANE_MASK(LANES)               \
                                           : LANE_MASK(in_));               \
            __m512i v = LOAD(valid, s + (ES) * (LANES) * (size_t)q);        \
            int c = __builtin_popcountll((uint64_t)k);                      \
            STORE(d + (ES) * m, (KT)LANE_MASK(c), COMPRESS(k, v));          \
            m += (size_t)c;                                                 \
        }                                                                   \
        return m;                                                           \
    }
#define LOAD_W8(k, p)                                                       \
    _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8((__mmask16)(k), (p)))
#define LOAD_W16(k, p)                                                      \
    _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16((__mmask16)(k), (p)))
#define LOAD_32(k, p) _mm512_maskz_loadu_epi32((k), (p))
#define LOAD_64(k, p) _mm512_maskz_loadu_epi64((k), (p))
/* 16-byte elements: bit j of a nibble becomes bits 2j and 2j+1. */
static const uint8_t pair_bits[16] = {
    0x00, 0x03, 0x0C, 0x0F, 0x30, 0x33, 0x3C, 0x3F,
    0xC0, 0xC3, 0xCC, 0xCF, 0xF0, 0xF3, 0xFC, 0xFF};
#define LOAD_PAIRS(k, p) _mm512_maskz_loadu_epi64((__mmask8)pair_bits[k], (p))
#define COMPRESS_PAIRS(k, v)                                                \
    _mm512_maskz_compress_epi64((__mmask8)pair_bits[k], (v))
#define STORE_PAIRS(p, k, v)                                                \
    _mm512_mask_storeu_epi64((p), (__mmask8)pair_bits[k], (v))
AVX512_WORD(word_1, 1, 16, __mmask16, LOAD_W8, _mm512_maskz_compress_epi32,
            _mm512_mask_cvtepi32_storeu_epi8)
AVX512_WORD(word_2, 2, 16, __mmask16, LOAD_W16, _mm512_maskz_compress_epi32,
            _mm512_mask_cvtepi32_storeu_epi16)
AVX512_WORD(word_4, 4, 16, __mmask16, LOAD_32, _mm512_maskz_compress_epi32,
            _mm512_mask_storeu_epi32)
AVX512_WORD(word_8, 8, 8, __mmask8, LOAD_64, _mm512_maskz_compress_epi64,
            _mm512_mask_storeu_epi64)
AVX512_WORD(word_16, 16, 4, unsigned, LOAD_PAIRS, COMPRESS_PAIRS,
            STORE_PAIRS)
#else
#define PORTABLE_WORD(name, ES)                                             \
    ALWAYS_INLINE size_t name(const unsigned char *s, uint64_t b,           \
                              size_t left, unsigned char *d)                \
    {                                                                       \
        (void)left; /* bits beyond it are clear: nothing read there */      \
        return word_portable(s, b, d, (ES));                                \
    }
PORTABLE_WORD(word_1, 1)
PORTABLE_WORD(word_2, 2)
PORTABLE_WORD(word_4, 4)
PORTABLE_WORD(word_8, 8)
PORTABLE_WORD(word_16, 16)
#endif

/* The kernels: a word at a time, prefetching the source ahead (it comes
 * from memory when flags select: keys and values not read before). */
#define DEFINE_COMPRESS(name, ES, WORD)                                     \
    static size_t name(const void *src, const uint64_t *bits, size_t count, \
                       void *dst)                                           \
    {                                                                       \
        const unsigned char *s = (const unsigned char *)src;                \
        unsigned char *d = (unsigned char *)dst;                            \
        size_t m = 0;                                                       \
        for (size_t w = 0; w < (count + 63) / 64; w++) {                    \
            prefetch_ahead(s + 64 * (ES) * w, (ES));                        \
            m += WORD(s + 64 * (ES) * w, word_at(bits, w, count),           \
                      count - 64 * w, d + (ES) * m);                        \
        }                                                                   \
        return m;                                                           \
    }
DEFINE_COMPRESS(compress_1, 1, word_1)
DEFINE_COMPRESS(compress_2, 2, word_2)
DEFINE_COMPRESS(compress_4, 4, word_4)
DEFINE_COMPRESS(compress_8, 8, word_8)
DEFINE_COMPRESS(compress_16, 16, word_16)

/* ---- streaming out ------------------------------------------------------ */

/* memcpy(dst, src, bytes) whose whole 64-byte lines of dst are written
 * with non-temporal stores (no read for ownership of lines that are
 * overwritten anyway), the partial lines at either end with ordinary
 * stores: those may share a line with a neighbouring thread's output.
 * No fence here: one per thread at the end of its work is enough, and
 * a fence after every piece would wait for each to drain. */
/* One 64-byte line from s (any alignment) to d (64-byte aligned) with
 * non-temporal stores; a plain copy where there are none. */
ALWAYS_INLINE void stream_line(unsigned char *d, const unsigned char *s)
{
#if defined(SEL_X86) && VB == 64
    _mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
#elif defined(SEL_X86) && VB == 32
    for (int q = 0; q < 2; q++)
        _mm256_stream_si256(
            (__m256i *)(void *)(d + 32 * q),
            _mm256_loadu_si256((const __m256i *)(const void *)(s + 32 * q)));
#elif defined(SEL_X86)
    for (int q = 0; q < 4; q++)
        _mm_stream_si128(
            (__m128i *)(void *)(d + 16 * q),
            _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * q)));
#else
    memcpy(d, s, 64);
#endif
}

/* Lines [from, to) of a stream task. */
ALWAYS_INLINE void task_lines(const parsum__stream_task *t, size_t from,
                              size_t to)
{
    for (size_t i = from; i < to; i++)
        stream_line(t->dst + 64 * i, t->src + 64 * i);
}

static void stream_copy(void *dst, const void *src, size_t bytes)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t head = (64 - (uintptr_t)d % 64) % 64;
    head = head < bytes ? head : bytes;
    memcpy(d, s, head);
    parsum__stream_task t = {d + head, s + head, (bytes - head) / 64};
    task_lines(&t, 0, t.lines);
    memcpy(d + head + 64 * t.lines, s + head + 64 * t.lines,
           (bytes - head) % 64);
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
        prefetch_ahead(bytes + 64 * w, 1);
        uint64_t word = bytes_word(bytes + 64 * w);
        bits[w] = word;
        total += parsum__popcount64(word);
    }
    if (rem != 0) {
        uint8_t tmp[64] = {0};
        memcpy(tmp, bytes + 64 * full, rem);
        uint64_t word = bytes_word(tmp) & (((uint64_t)1 << rem) - 1);
        bits[full] = word;
        total += parsum__popcount64(word);
    }
    return total;
}

/* Positions: dst[m++] = base + i for every set bit i. */
static size_t compress_index(const uint64_t *bits, size_t count,
                             uint64_t base, uint64_t *dst)
{
    size_t m = 0;
    for (size_t w = 0; w < (count + 63) / 64; w++) {
        uint64_t b = word_at(bits, w, count);
        uint64_t at = base + 64 * (uint64_t)w;
#if VB == 64
        __m512i idx =
            _mm512_add_epi64(_mm512_set1_epi64((long long)at),
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
    {pred_select_i8, pred_select_u8, pred_select_i16, pred_select_u16,
     pred_select_i32, pred_select_u32, pred_select_i64, pred_select_u64,
     pred_select_f32, pred_select_f64},
    bytes_bits,
    stream_copy,
    {pred_partition_i8, pred_partition_u8, pred_partition_i16,
     pred_partition_u16, pred_partition_i32, pred_partition_u32,
     pred_partition_i64, pred_partition_u64, pred_partition_f32,
     pred_partition_f64},
};
