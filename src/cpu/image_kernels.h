/*
 * image_kernels.h - what the CPU image code (integral.c, box_filter.c,
 * image.c) shares with its row kernels (kernels_image.c, compiled once per
 * instruction set like kernels.c): the kernel table, the border
 * arithmetic and the exact integer division of the box filter.
 *
 * Rows are handled as n = width * channels interleaved samples; a prefix
 * "with stride C" sums the samples of one channel (i, i - C, i - 2C ...).
 *
 * Border arithmetic. Every window sum along one direction is a difference
 * F(b) - F(a) of the prefix sums F of the border-extended sequence (any
 * integer a <= b, however far outside). For each border F(j) is a short
 * integer combination of the in-range prefix sums G(r) = x[0] + ... +
 * x[r-1], 0 <= r <= n, because the extension is periodic (WRAP: period n;
 * REFLECT: 2n; REFLECT_101: 2n - 2) or constant (CLAMP, ZERO) beyond the
 * edges. parsum__ext_terms gives that combination, so a window of any
 * radius costs a few terms, whatever its size (the notes' summed-area
 * differences, seed 003, extended to the border rules of parsum.h).
 */
#ifndef PARSUM_CPU_IMAGE_KERNELS_H
#define PARSUM_CPU_IMAGE_KERNELS_H

#include "parsum.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Accumulator kinds: the type running sums are kept in. Integer kinds
 * compute modulo 2^bits (a sum that fits comes out exact, and differences
 * of wrapped prefixes are exact when the true difference fits). */
typedef enum parsum__acc {
    PARSUM__ACC_U16 = 0,
    PARSUM__ACC_U32 = 1,
    PARSUM__ACC_U64 = 2,
    PARSUM__ACC_F64 = 3,
    PARSUM__ACC_COUNT = 4
} parsum__acc;

/* Source sample kinds of the image functions, in this order. */
typedef enum parsum__pix {
    PARSUM__PIX_U8 = 0,
    PARSUM__PIX_U16 = 1,
    PARSUM__PIX_I32 = 2,
    PARSUM__PIX_F32 = 3,
    PARSUM__PIX_F64 = 4,
    PARSUM__PIX_COUNT = 5
} parsum__pix;

static inline int parsum__pix_of(parsum_dtype d)
{
    switch (d) {
    case PARSUM_U8: return PARSUM__PIX_U8;
    case PARSUM_U16: return PARSUM__PIX_U16;
    case PARSUM_I32: return PARSUM__PIX_I32;
    case PARSUM_F32: return PARSUM__PIX_F32;
    default: return PARSUM__PIX_F64;
    }
}

static inline size_t parsum__acc_size(int acc)
{
    return acc == PARSUM__ACC_U16 ? 2 : acc == PARSUM__ACC_U32 ? 4 : 8;
}

/* Exact integer means: q = floor(s / d) for s = window sum + d / 2 (the
 * header's rounding, half up), by multiplication only.
 *   U16 accumulators (s < 2^16): q = ((s * m16) >> 16) >> k16, where
 *     m16 = ceil(2^(16 + k16) / d) is chosen by parsum__div_plan so that
 *     s_max * (m16 * d - 2^(16 + k16)) < 2^(16 + k16): then for s = q d + r
 *     the error term r + s e / 2^(16+k16) stays below d, and the quotient
 *     is exact for every s <= s_max (Granlund and Montgomery, "Division by
 *     invariant integers using multiplication", PLDI 1994, thm. 4.2).
 *   U32 accumulators, small sums (s < 2^24 and (q_max + 1) d <= 2^22):
 *     q = trunc(s * inv_f) in float32, inv_f = 1/d rounded up to a float
 *     (checked exactly: inv_f * d >= 1 in double). The product is never
 *     below q (as below) and stays under q + 1 because the excess of
 *     inv_f (< 2^-23) and the rounding (2^-24) add less than
 *     (q + 1) * 1.5 * 2^-23 < 1/d.
 *   U32 accumulators (s < 2^32): q = trunc(s * inv_up), inv_up = 1/d
 *     rounded up to a double. s * inv_up >= s / d >= q, and rounding is
 *     monotone, so the product is never below q; it stays below q + 1
 *     because s / d <= q + 1 - 1/d and inv_up's excess (at most 2^-51
 *     relative) and the product's rounding add less than (q + 1) * 2^-50
 *     < 1/d (here (q + 1) d < 2^33).
 *   U64 and signed sums: the same estimate, then one correction against
 *     the exact remainder s - q d (the estimate is off by at most one for
 *     quotients below 2^40); anything else takes a real division. */
typedef struct parsum__div {
    uint64_t d;    /* the window area */
    uint64_t half; /* d / 2 */
    double inv_up; /* 1 / d rounded up */
    uint32_t m16;  /* U16 path: multiplier (0: no U16 path) */
    int k16;       /* U16 path: shift after the high half */
    float inv_f;   /* 1 / d rounded up to a float */
    bool small;    /* U32 sums take the float32 division */
} parsum__div;

/* Fills *dv for area d, sums s <= s_max and quotients <= q_max. Returns
 * false when s_max < 2^16 but no 16-bit multiplier is exact up to s_max
 * (the U16 path is then not available). */
static inline bool parsum__div_plan(parsum__div *dv, uint64_t d,
                                    uint64_t s_max, uint64_t q_max)
{
    float f = (float)(1.0 / (double)d);
    while ((double)f * (double)d < 1.0) /* exact: 24 x 24 bits */
        f = nextafterf(f, INFINITY);
    dv->inv_f = f;
    dv->small = s_max < ((uint64_t)1 << 24) &&
                (q_max + 1) * d <= ((uint64_t)1 << 22);
    uint64_t s_max16 = s_max < 65536 ? s_max : 0;
    dv->d = d;
    dv->half = d / 2;
    /* At most two units in the last place above 1/d (none for powers of
     * two, whose reciprocal is exact). */
    dv->inv_up = (d & (d - 1)) == 0 ? 1.0 / (double)d
                                    : nextafter(1.0 / (double)d, INFINITY);
    dv->m16 = 0;
    dv->k16 = 0;
    if (s_max16 == 0)
        return true;
    for (int k = 0; k < 16; k++) {
        uint64_t p = (uint64_t)1 << (16 + k);
        uint64_t m = (p + d - 1) / d;
        if (m >= 65536)
            break;
        if (s_max16 * (m * d - p) < p) {
            dv->m16 = (uint32_t)m;
            dv->k16 = k;
            return true;
        }
    }
    return false;
}

static inline uint32_t parsum__div_u16(const parsum__div *dv, uint32_t s)
{
    return ((s * dv->m16) >> 16) >> dv->k16;
}

static inline uint32_t parsum__div_u32(const parsum__div *dv, uint32_t s)
{
    if (dv->small)
        return (uint32_t)((float)s * dv->inv_f);
    return (uint32_t)((double)s * dv->inv_up);
}

static inline uint64_t parsum__div_u64(const parsum__div *dv, uint64_t s)
{
    uint64_t q = (uint64_t)((double)s * dv->inv_up);
    if (q * dv->d > s) /* never wraps: q <= s / d + 1 */
        q--;
    else if (s - q * dv->d >= dv->d)
        q++;
    if (q * dv->d > s || s - q * dv->d >= dv->d)
        q = s / dv->d;
    return q;
}

/* floor(s / d) for a signed s (two's complement in u). */
static inline int64_t parsum__div_i64(const parsum__div *dv, uint64_t u)
{
    int64_t s = (int64_t)u, d = (int64_t)dv->d;
    int64_t q = (int64_t)floor((double)s * dv->inv_up);
    int64_t r = (int64_t)(u - (uint64_t)q * (uint64_t)d);
    if (r < 0 && r >= -d) {
        q--;
        r += d;
    } else if (r >= d && r < 2 * d) {
        q++;
        r -= d;
    }
    if (r < 0 || r >= d) { /* estimate far off: sums that wrapped */
        q = s / d;
        if (s % d != 0 && s < 0)
            q--;
    }
    return q;
}

/* The terms of F(j) = sum_k coef[k] * G(r[k]) (see the file comment) for
 * a sequence of n >= 1 elements under border b; returns their count (at
 * most 4). G(0) = 0 terms may appear. */
static inline int parsum__ext_terms(int64_t j, size_t n, parsum_border b,
                                    int64_t coef[4], size_t r[4])
{
    int64_t m = (int64_t)n;
    if (j >= 0 && j <= m) {
        coef[0] = 1;
        r[0] = (size_t)j;
        return 1;
    }
    switch (b) {
    case PARSUM_BORDER_ZERO:
        coef[0] = 1;
        r[0] = j < 0 ? 0 : n;
        return 1;
    case PARSUM_BORDER_CLAMP:
        if (j < 0) { /* -j copies of x[0] = G(1), subtracted */
            coef[0] = j;
            r[0] = 1;
            return 1;
        }
        /* G(n) + (j - n) * (G(n) - G(n - 1)) */
        coef[0] = 1 + (j - m);
        r[0] = n;
        coef[1] = -(j - m);
        r[1] = n - 1;
        return 2;
    case PARSUM_BORDER_WRAP: {
        int64_t q = j / m, t = j % m;
        if (t < 0) {
            t += m;
            q--;
        }
        coef[0] = q;
        r[0] = n;
        coef[1] = 1;
        r[1] = (size_t)t;
        return 2;
    }
    case PARSUM_BORDER_REFLECT: {
        /* period abc|cba: E(t) = G(t) for t <= n, 2 G(n) - G(2n - t)
         * after; a whole period sums to 2 G(n). */
        int64_t p = 2 * m, q = j / p, t = j % p;
        if (t < 0) {
            t += p;
            q--;
        }
        if (t <= m) {
            coef[0] = 2 * q;
            r[0] = n;
            coef[1] = 1;
            r[1] = (size_t)t;
        } else {
            coef[0] = 2 * q + 2;
            r[0] = n;
            coef[1] = -1;
            r[1] = (size_t)(p - t);
        }
        return 2;
    }
    case PARSUM_BORDER_REFLECT_101: {
        if (m == 1) { /* every position is x[0] */
            coef[0] = j;
            r[0] = 1;
            return 1;
        }
        /* period abcd|cb: E(t) = G(t) for t <= n, G(n) + G(n - 1) -
         * G(2n - 1 - t) after; a period sums to G(n) + G(n-1) - G(1). */
        int64_t p = 2 * m - 2, q = j / p, t = j % p;
        if (t < 0) {
            t += p;
            q--;
        }
        coef[0] = q;
        r[0] = n;
        coef[1] = q;
        r[1] = n - 1;
        coef[2] = -q;
        r[2] = 1;
        if (t <= m) {
            coef[3] = 1;
            r[3] = (size_t)t;
        } else {
            coef[0]++;
            coef[1]++;
            coef[3] = -1;
            r[3] = (size_t)(2 * m - 1 - t);
        }
        return 4;
    }
    }
    return 0;
}

/* Source index of extended position i (0 <= result < n), as parsum.h's
 * border table; *zero for ZERO borders outside. */
static inline size_t parsum__border_map(int64_t i, size_t n, parsum_border b,
                                        bool *zero)
{
    int64_t m = (int64_t)n, p, k;
    *zero = false;
    if (i >= 0 && i < m)
        return (size_t)i;
    switch (b) {
    case PARSUM_BORDER_ZERO:
        *zero = true;
        return 0;
    case PARSUM_BORDER_CLAMP:
        return i < 0 ? 0 : n - 1;
    case PARSUM_BORDER_WRAP:
        return (size_t)(((i % m) + m) % m);
    case PARSUM_BORDER_REFLECT:
        p = 2 * m;
        k = ((i % p) + p) % p;
        return (size_t)(k < m ? k : p - 1 - k);
    case PARSUM_BORDER_REFLECT_101:
        if (m == 1)
            return 0;
        p = 2 * m - 2;
        k = ((i % p) + p) % p;
        return (size_t)(k < m ? k : p - k);
    }
    return 0;
}

/* ---- the kernel table ---------------------------------------------------- */

/* Summed-area tables. f(v) is the sample as the accumulator sees it: the
 * integer modulo 2^bits (I32 sign-extended), or for F64 accumulators the
 * sample as a double minus off[i] (when off is not NULL; off has n
 * entries, the channel's offset at each sample), squared when asked.
 *  colsum: acc[i] += f(src[r][i]) for the rows r < rows (row r at src + r
 *      * pitch), i < n; tmp: scratch of n 16-bit values.
 *  rowscan: acc[i] += f(src[i]) + f(src[i - C]) + ... (the row's prefix
 *      with stride C), i < n. F64: one sequential sum per channel, so the
 *      rounding is the same in every instruction set. When out is not
 *      NULL, a kernel may also write the new acc to out (the table row, in
 *      the accumulator's type), with non-temporal stores if stream (not
 *      fenced); it returns 1 if it did, 0 if the caller must.
 *  rowscan2 (F64 accumulators): two rows, src0 then src1: mid = acc
 *      after src0, acc after both; bit for bit two rowscan calls (two
 *      chains of float adds in flight instead of one).
 *  prefix: out[i] = in[i] + in[i - C] + ... in the accumulator type, i < n;
 *      in == out allowed. F64: four chains over quarters of the row for
 *      rows of 256 pixels or more (kernels_image.c), else sequential; the
 *      grouping depends on n and C only. */
typedef void (*parsum__img_colsum_fn)(const void *src, size_t pitch,
                                      size_t rows, void *acc, size_t n,
                                      const double *off, void *tmp);
typedef int (*parsum__img_rowscan_fn)(const void *src, void *acc, size_t n,
                                      int channels, const double *off,
                                      void *out, int stream);
typedef void (*parsum__img_rowscan2_fn)(const void *src0, const void *src1,
                                        double *acc, double *mid, size_t n,
                                        int channels, const double *off);
typedef void (*parsum__img_prefix_fn)(const void *in, void *out, size_t n,
                                      int channels);
/* Box filter.
 *  vupd: V[i] += f(in[i]) - f(out[i]) (f: the sample, no offset); in or
 *      out may be NULL (nothing added or subtracted).
 *  vaxpy: V[i] += coef * f(src[i]) (integers modulo 2^bits; F64: coef
 *      converted to double).
 *  interior: dst[j] = the rounded mean of the window sum Q[j + a] - Q[j -
 *      b] for j < count (Q an accumulator row, dst of the image's dtype;
 *      integers: parsum__div, floats: sum / d rounded once). */
typedef void (*parsum__img_vupd_fn)(void *V, const void *in, const void *out,
                                    size_t n);
typedef void (*parsum__img_vaxpy_fn)(void *V, const void *src, size_t n,
                                     int64_t coef);
typedef void (*parsum__img_interior_fn)(const void *Q, void *dst,
                                        size_t count, size_t a, size_t b,
                                        const parsum__div *dv);

/* [pix][acc]: U8 with U16, U32, U64; U16 with U32, U64; I32 with U64;
 * F32 and F64 with F64 (NULL elsewhere). */
typedef struct parsum__cpu_box_kernels {
    parsum__img_vupd_fn vupd[PARSUM__PIX_COUNT][PARSUM__ACC_COUNT];
    parsum__img_vaxpy_fn vaxpy[PARSUM__PIX_COUNT][PARSUM__ACC_COUNT];
    parsum__img_interior_fn interior[PARSUM__PIX_COUNT][PARSUM__ACC_COUNT];
} parsum__cpu_box_kernels;

typedef struct parsum__cpu_image_kernels {
    const char *isa;
    /* [pix][acc][squared]; NULL where the pair is not used (float samples
     * need F64; U16 accumulators are the box filter's). */
    parsum__img_colsum_fn colsum[PARSUM__PIX_COUNT][PARSUM__ACC_COUNT][2];
    parsum__img_rowscan_fn rowscan[PARSUM__PIX_COUNT][PARSUM__ACC_COUNT][2];
    parsum__img_rowscan2_fn rowscan2[PARSUM__PIX_COUNT][2]; /* [pix][sq] */
    parsum__img_prefix_fn prefix[PARSUM__ACC_COUNT];
    const parsum__cpu_box_kernels *box; /* the same instruction set's */
} parsum__cpu_image_kernels;

/* The table of the instruction set parsum__cpu_kernels_get() uses. */
const parsum__cpu_image_kernels *parsum__cpu_image_kernels_get(void);

/* ---- driver helpers (image.c) -------------------------------------------- */

/* Rows per band for an image of `height` rows of row_bytes source bytes:
 * about PARSUM__IMAGE_BAND_BYTES of source (a band stays in a core's L2
 * cache between the passes over it), at least 16 rows, or the value of
 * env PARSUM_CPU_IMAGE_BAND when set (tests use it to put band edges
 * anywhere). Depends on the image only, never on the thread count: float
 * results are grouped by bands. */
#ifndef PARSUM__IMAGE_BAND_BYTES
#define PARSUM__IMAGE_BAND_BYTES ((size_t)256 * 1024)
#endif
size_t parsum__image_band(size_t height, size_t row_bytes);
/* The forced band height of env PARSUM_CPU_IMAGE_BAND, or 0. */
size_t parsum__image_band_forced(void);

/* Spins (then yields) until *flag is set; acquire. */
void parsum__image_wait(atomic_int *flag);

/* mean[c] = the float64 mean of channel c of src: per band, column sums
 * then a sequential sum per channel; the bands' sums added in band order
 * (the same bits for every thread count). */
parsum_status parsum__cpu_image_mean(parsum_context *ctx,
                                     const parsum_image *src, double *mean);

#endif
