/*
 * ref_histogram.c - the serial oracle of parsum_histogram: one sample at a
 * time, bins computed from the definition in parsum.h (exact 128-bit
 * integer arithmetic, the float64 formula, an upper-bound search of the
 * levels) without the backends' shared plan (hist_bins.h), so that a
 * mistake there shows up as a difference.
 */
#include "ref.h"

#include <string.h>

/* The sample widened as parsum_hist_bins says. */
typedef struct wide {
    int kind; /* 0 signed, 1 u64, 2 float */
    int64_t i;
    uint64_t u;
    double f;
} wide;

static wide widen(parsum_dtype d, const void *p)
{
    wide w = {0, 0, 0, 0.0};
    switch (d) {
    case PARSUM_I8: w.i = *(const int8_t *)p; break;
    case PARSUM_U8: w.i = *(const uint8_t *)p; break;
    case PARSUM_I16: w.i = *(const int16_t *)p; break;
    case PARSUM_U16: w.i = *(const uint16_t *)p; break;
    case PARSUM_I32: w.i = *(const int32_t *)p; break;
    case PARSUM_U32: w.i = *(const uint32_t *)p; break;
    case PARSUM_I64: w.i = *(const int64_t *)p; break;
    case PARSUM_U64: w.kind = 1; w.u = *(const uint64_t *)p; break;
    case PARSUM_F32: w.kind = 2; w.f = *(const float *)p; break;
    default: w.kind = 2; w.f = *(const double *)p; break;
    }
    return w;
}

/* -1 (below), 0 (equal), 1 (above): x against level i. */
static int cmp_level(const wide *x, const void *levels, size_t i)
{
    if (x->kind == 0) {
        int64_t l = ((const int64_t *)levels)[i];
        return x->i < l ? -1 : x->i > l;
    }
    if (x->kind == 1) {
        uint64_t l = ((const uint64_t *)levels)[i];
        return x->u < l ? -1 : x->u > l;
    }
    double l = ((const double *)levels)[i];
    return x->f < l ? -1 : x->f > l;
}

/* floor(d * m / r) for d < r, m <= 2^31: schoolbook long division of the
 * product, held as 32-bit digits, by r, one bit at a time. */
static uint64_t muldiv(uint64_t d, uint64_t m, uint64_t r)
{
    uint32_t dig[4] = {0, 0, 0, 0}; /* d * m, least significant first */
    uint64_t carry = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t t = (uint64_t)(uint32_t)(d >> (32 * i)) * m + carry;
        dig[i] = (uint32_t)t;
        carry = t >> 32;
    }
    dig[2] = (uint32_t)carry;
    dig[3] = (uint32_t)(carry >> 32);
    uint64_t q = 0, rem = 0;
    for (int bit = 127; bit >= 0; bit--) {
        /* rem < r <= 2^64 - 1: track the 65th bit separately */
        int top = (int)(rem >> 63);
        rem = (rem << 1) | ((dig[bit / 32] >> (bit % 32)) & 1u);
        q <<= 1;
        if (top || rem >= r) {
            rem -= r;
            q |= 1;
        }
    }
    return q;
}

int64_t parsum__ref_hist_bin(const parsum_hist_bins *b, parsum_dtype dtype,
                             const void *sample)
{
    wide x = widen(dtype, sample);
    if (b->levels != NULL) {
        if (x.kind == 2 && x.f != x.f)
            return -1;
        if (cmp_level(&x, b->levels, 0) < 0
            || cmp_level(&x, b->levels, b->nbins) >= 0)
            return -1;
        /* the first level above x, minus one */
        size_t lo = 0, hi = b->nbins; /* levels[lo] <= x < levels[hi] */
        while (lo + 1 < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_level(&x, b->levels, mid) >= 0)
                lo = mid;
            else
                hi = mid;
        }
        return (int64_t)lo;
    }
    if (x.kind == 2) {
        if (!(x.f >= b->lo.f64 && x.f < b->hi.f64))
            return -1;
        double s = (double)b->nbins / (b->hi.f64 - b->lo.f64);
        double t = (x.f - b->lo.f64) * s;
        return t >= (double)b->nbins ? (int64_t)b->nbins - 1 : (int64_t)t;
    }
    /* x - lo and hi - lo as unsigned 64-bit values (exact: both lie in
     * [0, 2^64)), then the quotient by long division of the 96-bit product
     * in 32-bit steps, without the backends' 128-bit helpers. */
    uint64_t d, range;
    if (x.kind == 1) {
        if (x.u < b->lo.u64 || x.u >= b->hi.u64)
            return -1;
        d = x.u - b->lo.u64;
        range = b->hi.u64 - b->lo.u64;
    } else {
        if (x.i < b->lo.i64 || x.i >= b->hi.i64)
            return -1;
        d = (uint64_t)x.i - (uint64_t)b->lo.i64;
        range = (uint64_t)b->hi.i64 - (uint64_t)b->lo.i64;
    }
    return (int64_t)muldiv(d, b->nbins, range);
}

void parsum__ref_histogram(const void *samples, size_t n,
                           const parsum_histogram_desc *d,
                           void *const counts[])
{
    size_t ss = parsum_dtype_size(d->sample_dtype);
    bool acc = (d->flags & PARSUM_HIST_ACCUMULATE) != 0;
    for (int c = 0; c < d->channels; c++) {
        if (counts[c] == NULL)
            continue;
        const parsum_hist_bins *b = &d->bins[c];
        if (!acc)
            memset(counts[c], 0,
                   b->nbins * parsum_dtype_size(d->count_dtype));
        for (size_t p = 0; p < n; p++) {
            const char *s = (const char *)samples
                            + (p * (size_t)d->channels + (size_t)c) * ss;
            int64_t bin = parsum__ref_hist_bin(b, d->sample_dtype, s);
            if (bin < 0)
                continue;
            if (d->count_dtype == PARSUM_U32)
                ((uint32_t *)counts[c])[bin]++;
            else
                ((uint64_t *)counts[c])[bin]++;
        }
    }
}
