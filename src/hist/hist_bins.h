/*
 * hist_bins.h - which bin a sample falls into (parsum.h, parsum_hist_bins),
 * in one place for the CPU and CUDA backends so that both count exactly
 * the same way. The core turns each channel's bins into a parsum__hist_plan
 * once per call (api_histogram.c); the functions below are what the
 * kernels run per sample, so the common cases are cheap: a shift for even
 * integer bins whose width is a power of two (U8 in 256 bins, U32 in 1024
 * bins over [0, 2^32)), one 64-bit division otherwise, one float64
 * multiply for floats, a binary search for range bins.
 *
 * Samples are first widened: int64 for I8..U32 and I64 (compared signed),
 * uint64 for U64, double for F32/F64, the types of lo, hi and the levels.
 */
#ifndef PARSUM_HIST_BINS_H
#define PARSUM_HIST_BINS_H

#include <stdint.h>

#ifdef __CUDACC__
#define PARSUM__HD __host__ __device__ __forceinline__
#else
#define PARSUM__HD static inline
#endif

#define PARSUM__BIN_NONE 0xFFFFFFFFu

enum parsum__bin_mode {
    PARSUM__BINS_SHIFT = 0,  /* integer, hi - lo = nbins << shift */
    PARSUM__BINS_DIV64 = 1,  /* integer, (hi - lo) * nbins < 2^64 */
    PARSUM__BINS_DIV128 = 2, /* integer, wider products */
    PARSUM__BINS_FLOAT = 3,  /* F32/F64 even bins */
    PARSUM__BINS_RANGE = 4   /* levels, any kind */
};

typedef struct parsum__hist_plan {
    uint32_t nbins;
    uint32_t mode;  /* parsum__bin_mode */
    uint32_t shift; /* SHIFT */
    uint32_t is_unsigned; /* integer kind: U64 samples (uint64 compares) */
    uint64_t lo, hi; /* integer even bins: the int64 / uint64 bits */
    uint64_t width;  /* hi - lo (as unsigned) */
    double flo, fhi, scale; /* FLOAT: lo, hi, nbins / (hi - lo) */
    /* RANGE: nbins + 1 ascending int64_t / uint64_t / double levels. The
     * core passes host memory; a backend whose kernels cannot read host
     * memory swaps in its own copy. */
    const void *levels;
} parsum__hist_plan;

/* 64 x 64 -> 128-bit product, as (hi, lo) words. */
PARSUM__HD void parsum__mul128(uint64_t a, uint64_t b, uint64_t *hi,
                               uint64_t *lo)
{
#if defined(__CUDA_ARCH__)
    *hi = __umul64hi(a, b);
    *lo = a * b;
#elif defined(__SIZEOF_INT128__)
    __extension__ unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else /* 32-bit limbs */
    uint64_t al = a & 0xFFFFFFFFu, ah = a >> 32;
    uint64_t bl = b & 0xFFFFFFFFu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
    *lo = (mid << 32) | (ll & 0xFFFFFFFFu);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

/* a <= b for 128-bit values given as (hi, lo) pairs. */
PARSUM__HD int parsum__le128(uint64_t ah, uint64_t al, uint64_t bh,
                             uint64_t bl)
{
    return ah < bh || (ah == bh && al <= bl);
}

/* floor(d * nbins / width) for d < width, when d * nbins may not fit in 64
 * bits: a float64 estimate, then corrected with exact 128-bit products
 * (the estimate is off by at most one or two: nbins <= 2^31). */
PARSUM__HD uint32_t parsum__bin_div128(uint64_t d, uint32_t nbins,
                                       uint64_t width)
{
    double est = (double)d * ((double)nbins / (double)width);
    uint64_t q = est <= 0.0 ? 0 : (uint64_t)est;
    if (q > nbins - 1u)
        q = nbins - 1u;
    uint64_t nh, nl, ph, pl;
    parsum__mul128(d, nbins, &nh, &nl);
    for (;;) { /* q * width > d * nbins: too big */
        parsum__mul128(q, width, &ph, &pl);
        if (q == 0 || parsum__le128(ph, pl, nh, nl))
            break;
        q--;
    }
    while (q + 1 < nbins) { /* (q + 1) * width <= d * nbins: too small */
        parsum__mul128(q + 1, width, &ph, &pl);
        if (!parsum__le128(ph, pl, nh, nl))
            break;
        q++;
    }
    return (uint32_t)q;
}

/* The bin of an integer sample from its offset d = x - lo (x in range). */
PARSUM__HD uint32_t parsum__bin_offset(const parsum__hist_plan *p,
                                       uint64_t d)
{
    if (p->mode == PARSUM__BINS_SHIFT)
        return (uint32_t)(d >> p->shift);
    if (p->mode == PARSUM__BINS_DIV64)
        return (uint32_t)(d * p->nbins / p->width);
    return parsum__bin_div128(d, p->nbins, p->width);
}

/* Range bins: the i with levels[i] <= x < levels[i + 1], by bisection. */
#define PARSUM__BIN_SEARCH(T, levels, nbins, x)                          \
    do {                                                                 \
        const T *lv_ = (const T *)(levels);                              \
        if (!((x) >= lv_[0] && (x) < lv_[nbins]))                        \
            return PARSUM__BIN_NONE;                                     \
        uint32_t a_ = 0, b_ = (nbins); /* lv_[a_] <= x < lv_[b_] */       \
        while (b_ - a_ > 1) {                                            \
            uint32_t m_ = a_ + (b_ - a_) / 2;                            \
            if (lv_[m_] <= (x))                                          \
                a_ = m_;                                                 \
            else                                                         \
                b_ = m_;                                                 \
        }                                                                \
        return a_;                                                       \
    } while (0)

/* Bin of a signed-kind integer sample (I8..U32, I64), or BIN_NONE. */
PARSUM__HD uint32_t parsum__bin_i64(const parsum__hist_plan *p, int64_t x)
{
    if (p->mode == PARSUM__BINS_RANGE)
        PARSUM__BIN_SEARCH(int64_t, p->levels, p->nbins, x);
    if (x < (int64_t)p->lo || x >= (int64_t)p->hi)
        return PARSUM__BIN_NONE;
    return parsum__bin_offset(p, (uint64_t)x - p->lo);
}

/* Bin of a U64 sample, or BIN_NONE. */
PARSUM__HD uint32_t parsum__bin_u64(const parsum__hist_plan *p, uint64_t x)
{
    if (p->mode == PARSUM__BINS_RANGE)
        PARSUM__BIN_SEARCH(uint64_t, p->levels, p->nbins, x);
    if (x < p->lo || x >= p->hi)
        return PARSUM__BIN_NONE;
    return parsum__bin_offset(p, x - p->lo);
}

/* Bin of a float sample (F32 widened exactly), or BIN_NONE (NaN too). */
PARSUM__HD uint32_t parsum__bin_f64(const parsum__hist_plan *p, double x)
{
    if (p->mode == PARSUM__BINS_RANGE)
        PARSUM__BIN_SEARCH(double, p->levels, p->nbins, x);
    if (!(x >= p->flo && x < p->fhi))
        return PARSUM__BIN_NONE;
    double t = (x - p->flo) * p->scale;
    uint32_t b = t >= (double)p->nbins ? p->nbins - 1u : (uint32_t)t;
    return b;
}

#endif
