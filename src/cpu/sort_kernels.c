/*
 * sort_kernels.c - the inner loops of the CPU radix sort (cpu.h, "radix
 * sort"; the drivers are sort.c and sort_seg.c), compiled once per
 * instruction set like kernels_hist.c (CMake builds this file with
 * PARSUM_ISA=generic, avx2, avx512).
 *
 * Per key kind (sort_kernels_type.inc): the digit histograms of a block of
 * keys, all digits in one read, and the scatter of one LSD pass, once with
 * plain stores and once through write-combining buffers, each specialised
 * for every value mode (keys only, 4-, 8-, 16-byte values, any size, and
 * the generated positions of parsum_sort_indices), so that the per-element
 * work has no branches on the value size.
 *
 * Write combining (the software kind, as in Satish et al., "Fast sort on
 * CPUs and GPUs", and Polychroniou and Ross, "A comprehensive study of
 * main-memory partitioning", SIGMOD 2014): a pass with 2^11 digit values
 * writes to 2^11 places at once. Plain stores then miss the TLB and read
 * every destination line for ownership before overwriting it. Staging each
 * digit's elements in a line-sized group in the cache and writing a full
 * group with non-temporal stores touches each destination page once per
 * group and never reads the destination.
 */
#include "../core/internal.h"
#include "../sort/sort_keys.h"
#include "cpu.h"

#include <stdint.h>
#include <string.h>

#ifndef PARSUM_ISA
#error "compile sort_kernels.c with -DPARSUM_ISA=<variant>"
#endif

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define PARSUM__STR2(a) #a
#define PARSUM__STR(a) PARSUM__STR2(a)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SORT_X86 1
#endif

/* Software prefetch distance of the sequential reads. The scatter is
 * busy with its stores, and the hardware prefetcher alone did not run far
 * enough ahead of it (the histogram kernels found the same, see
 * kernels_hist.c). Prefetches never fault, so running past the end of an
 * array is harmless. */
#define SORT_PF_BYTES 2048
#define SORT_PREFETCH(addr)                                               \
    __builtin_prefetch((const void *)((uintptr_t)(addr) + SORT_PF_BYTES), \
                       0, 0)

/* lines 64-byte lines from src to dst (both 64-byte aligned) with
 * non-temporal stores. */
ALWAYS_INLINE void nt_lines(void *dst, const void *src, size_t lines)
{
#if defined(__AVX512F__)
    for (size_t l = 0; l < lines; l++)
        _mm512_stream_si512((__m512i *)dst + l,
                            _mm512_load_si512((const __m512i *)src + l));
#elif defined(__AVX__)
    for (size_t l = 0; l < 2 * lines; l++)
        _mm256_stream_si256((__m256i *)dst + l,
                            _mm256_load_si256((const __m256i *)src + l));
#elif defined(SORT_X86)
    for (size_t l = 0; l < 4 * lines; l++)
        _mm_stream_si128((__m128i *)dst + l,
                         _mm_load_si128((const __m128i *)src + l));
#else
    memcpy(dst, src, 64 * lines);
#endif
}

/* bytes from src (any alignment) to dst (any alignment): non-temporal
 * stores for the destination's whole lines, plain ones for the partial
 * lines at the ends (which may hold a neighbour's elements). */
static void put_bytes(unsigned char *dst, const unsigned char *src,
                      size_t bytes)
{
    size_t head = (64 - (uintptr_t)dst % 64) % 64;
    if (head > bytes)
        head = bytes;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    bytes -= head;
    size_t lines = bytes / 64;
    for (size_t l = 0; l < lines; l++) {
#if defined(__AVX512F__)
        _mm512_stream_si512((__m512i *)(dst + 64 * l),
                            _mm512_loadu_si512(src + 64 * l));
#elif defined(SORT_X86)
        for (int h = 0; h < 4; h++)
            _mm_stream_si128((__m128i *)(dst + 64 * l + 16 * h),
                             _mm_loadu_si128((const __m128i *)(src + 64 * l
                                                               + 16 * h)));
#else
        memcpy(dst + 64 * l, src + 64 * l, 64);
#endif
    }
    memcpy(dst + 64 * lines, src + 64 * lines, bytes % 64);
}

ALWAYS_INLINE void store_fence(void)
{
#if defined(SORT_X86)
    _mm_sfence();
#endif
}

/* parsum__sort_vout and parsum__sort_group of cpu.h as expressions the
 * compiler folds for a constant mode. */
ALWAYS_INLINE size_t vout_of(int VM, size_t vs)
{
    return VM == PARSUM__SV_NONE                              ? 0
           : VM == PARSUM__SV_4 || VM == PARSUM__SV_IDX32     ? 4
           : VM == PARSUM__SV_16                              ? 16
           : VM == PARSUM__SV_ANY                             ? vs
                                                              : 8;
}

ALWAYS_INLINE size_t group_of(size_t kb, int VM)
{
    size_t vb = VM == PARSUM__SV_ANY ? 0 : vout_of(VM, 0);
    return 64 / (vb != 0 && vb < kb ? vb : kb);
}

/* A value of 1 to 16 bytes: a few fixed-size copies, whose branches go the
 * same way for a whole pass. */
ALWAYS_INLINE void copy_any(unsigned char *d, const unsigned char *s,
                            size_t vs)
{
    if (vs == 16) {
        memcpy(d, s, 16);
        return;
    }
    size_t o = 0;
    if (vs & 8) {
        memcpy(d, s, 8);
        o = 8;
    }
    if (vs & 4) {
        memcpy(d + o, s + o, 4);
        o += 4;
    }
    if (vs & 2) {
        memcpy(d + o, s + o, 2);
        o += 2;
    }
    if (vs & 1)
        d[o] = s[o];
}

/* Value i of the source into dst (VO bytes), by mode. */
ALWAYS_INLINE void load_value(int VM, unsigned char *dst,
                              const unsigned char *sv, size_t i, size_t vs,
                              uint64_t base)
{
    switch (VM) {
    case PARSUM__SV_4:
        memcpy(dst, sv + 4 * i, 4);
        break;
    case PARSUM__SV_8:
        memcpy(dst, sv + 8 * i, 8);
        break;
    case PARSUM__SV_16:
        memcpy(dst, sv + 16 * i, 16);
        break;
    case PARSUM__SV_ANY:
        copy_any(dst, sv + vs * i, vs);
        break;
    case PARSUM__SV_IDX64: {
        uint64_t v = base + i;
        memcpy(dst, &v, 8);
        break;
    }
    case PARSUM__SV_IDX32: {
        uint32_t v = (uint32_t)(base + i);
        memcpy(dst, &v, 4);
        break;
    }
    case PARSUM__SV_WIDEN: {
        uint32_t w;
        memcpy(&w, sv + 4 * i, 4);
        uint64_t v = w;
        memcpy(dst, &v, 8);
        break;
    }
    default:
        break;
    }
}

/* Where a write-combining scatter writes: groups of E elements whose
 * positions p satisfy (p + aoff) % E == 0 start a line of the array the
 * groups are aligned to (the one with more bytes per group); the other is
 * written with non-temporal stores too when its groups happen to be
 * aligned as well (kal, val), else through put_bytes. */
typedef struct wc_out {
    unsigned char *dk, *dv;
    size_t kb, vo, e, aoff;
    int kal, val;
} wc_out;

static void wc_out_init(wc_out *w, const parsum__sort_pass *p, size_t kb,
                        size_t vo, size_t e)
{
    w->dk = p->dst_k;
    w->dv = vo ? p->dst_v : NULL;
    w->kb = kb;
    w->vo = vo;
    w->e = e;
    uintptr_t ka = (uintptr_t)w->dk, va = (uintptr_t)w->dv;
    int kok = w->dk != NULL && ka % kb == 0;
    int vok = w->dv != NULL && vo != 0 && (vo & (vo - 1)) == 0 && va % vo == 0
              && e * vo % 64 == 0;
    w->aoff = 0;
    if (vok && (vo > kb || !kok))
        w->aoff = (va / vo) % e;
    else if (kok)
        w->aoff = (ka / kb) % e;
    w->kal = kok && (ka / kb) % e == w->aoff;
    w->val = vok && (va / vo) % e == w->aoff;
}

/* Elements [from, to) (shifted positions, all in the group that starts at
 * g) from the staging group wk / wv to the destination, plain stores: a
 * group's first part or its rest at the end of the pass. */
static void wc_put_part(const wc_out *w, const unsigned char *wk,
                        const unsigned char *wv, size_t g, size_t from,
                        size_t to)
{
    size_t a = from - g, cnt = to - from, at = from - w->aoff;
    if (w->dk != NULL)
        memcpy(w->dk + at * w->kb, wk + a * w->kb, cnt * w->kb);
    if (w->dv != NULL)
        memcpy(w->dv + at * w->vo, wv + a * w->vo, cnt * w->vo);
}

/* A full group (E elements at shifted position g) to memory. */
ALWAYS_INLINE void wc_put_full(const wc_out *w, const unsigned char *wk,
                               const unsigned char *wv, size_t g, size_t KB,
                               size_t VO, size_t E)
{
    size_t at = g - w->aoff;
    if (w->dk != NULL) {
        if (w->kal)
            nt_lines(w->dk + at * KB, wk, E * KB / 64);
        else
            put_bytes(w->dk + at * KB, wk, E * KB);
    }
    if (VO != 0) {
        if (w->val)
            nt_lines(w->dv + at * VO, wv, E * VO / 64);
        else
            put_bytes(w->dv + at * VO, wv, E * VO);
    }
}

#define KFLT_NONE 0
#define KFLT_32 32
#define KFLT_64 64

#define KT uint8_t
#define SFX u8
#define KFLT KFLT_NONE
#include "sort_kernels_type.inc"
#define KT uint16_t
#define SFX u16
#define KFLT KFLT_NONE
#include "sort_kernels_type.inc"
#define KT uint32_t
#define SFX u32
#define KFLT KFLT_NONE
#include "sort_kernels_type.inc"
#define KT uint64_t
#define SFX u64
#define KFLT KFLT_NONE
#include "sort_kernels_type.inc"
#define KT uint32_t
#define SFX f32
#define KFLT KFLT_32
#include "sort_kernels_type.inc"
#define KT uint64_t
#define SFX f64
#define KFLT KFLT_64
#include "sort_kernels_type.inc"

#define MODES(pre, sfx)                                                     \
    {                                                                       \
        pre##_none_##sfx, pre##_v4_##sfx, pre##_v8_##sfx, pre##_v16_##sfx,  \
            pre##_any_##sfx, pre##_idx64_##sfx, pre##_idx32_##sfx,          \
            pre##_widen_##sfx                                               \
    }

const parsum__cpu_sort_kernels PARSUM__CAT(parsum__cpu_sort_kernels_,
                                           PARSUM_ISA) = {
    PARSUM__STR(PARSUM_ISA),
    {hist_u8, hist_u16, hist_u32, hist_u64, hist_f32, hist_f64},
    {MODES(wc, u8), MODES(wc, u16), MODES(wc, u32), MODES(wc, u64),
     MODES(wc, f32), MODES(wc, f64)},
    {MODES(direct, u8), MODES(direct, u16), MODES(direct, u32),
     MODES(direct, u64), MODES(direct, f32), MODES(direct, f64)},
};
