/*
 * test_image_cpu_paths.c - the CPU backend's own paths of the image
 * functions (src/cpu/integral.c, box_filter.c, image.c, kernels_image.c),
 * against the serial references of src/ref:
 *   - the pieces: the exact divisions of the box filter (every sum of the
 *     16-bit path, the ends of the 32- and 64-bit ranges) and the border
 *     arithmetic (window sums of any reach against the border map); the
 *     row kernels of each instruction set are test_image_kernels.c's;
 *   - summed-area tables of every dtype pair, layout and SQUARED, 1 to 4
 *     channels, padded pitches, offsets and OFFSET_MEAN, sizes from 1 x 1
 *     up to several bands, band edges anywhere (PARSUM_CPU_IMAGE_BAND);
 *   - the box filter for every dtype and border, rx != ry, radii past the
 *     image, windows taller than BF_DIRECT_ROWS (the prefix set-up), each
 *     accumulator width (U8 in 16 bits, the areas whose 16-bit divisor
 *     fails, 32 and 64 bits) with sums at the top of their range;
 *   - box sums over many rectangles (the parallel loop);
 * each with 1, 2 and 3 threads, whose results must be the same bits
 * (float ones included: bands depend on the image only).
 *
 * Integer results must equal the reference's bits; float ones (float
 * samples, offsets) be within a rounding bound. CTest also runs this
 * program with PARSUM_CPU_STREAM_BYTES=0 (streamed table stores) and on
 * each forced instruction set.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "cpu/image_kernels.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int thread_counts[] = {1, 2, 3};
#define N_THREADS (sizeof thread_counts / sizeof thread_counts[0])

/* ---- images --------------------------------------------------------------- */

enum { FILL_UNIFORM, FILL_HIGH, FILL_SMALL };

/* A host image with pad spare samples per row, poisoned. */
static parsum_image make_image(size_t w, size_t h, int C, parsum_dtype d,
                               size_t pad)
{
    size_t ss = parsum_dtype_size(d);
    parsum_image im = {NULL, w, h, (w * (size_t)C + pad) * ss, C, d,
                       PARSUM_MEM_HOST};
    im.data = tu_malloc(im.pitch * h);
    memset(im.data, TU_POISON, im.pitch * h);
    return im;
}

static void *px(const parsum_image *im, size_t i, size_t y)
{
    return (char *)im->data + y * im->pitch +
           i * parsum_dtype_size(im->dtype);
}

/* UNIFORM: the dtype's range (floats in [-1, 1)); HIGH: mostly the
 * largest value (sums at the top of the accumulator); SMALL: |v| < 2^15
 * (I32 squares whose float64 sums stay exact). */
static void fill_image(parsum_image *im, tu_rng *r, int mode)
{
    size_t n = im->width * (size_t)im->channels;
    for (size_t y = 0; y < im->height; y++)
        for (size_t i = 0; i < n; i++) {
            uint64_t b = tu_next(r);
            bool high = mode == FILL_HIGH && b % 8 != 0;
            void *p = px(im, i, y);
            switch (im->dtype) {
            case PARSUM_U8: *(uint8_t *)p = high ? 255 : (uint8_t)b; break;
            case PARSUM_U16:
                *(uint16_t *)p = high ? 65535 : (uint16_t)b;
                break;
            case PARSUM_I32:
                *(int32_t *)p = mode == FILL_SMALL
                                    ? (int32_t)(b % 65536) - 32768
                                : high ? INT32_MAX
                                       : (int32_t)(uint32_t)b;
                break;
            case PARSUM_F32: *(float *)p = (float)(2 * tu_uniform(r) - 1); break;
            default: *(double *)p = 2 * tu_uniform(r) - 1; break;
            }
        }
}

static bool is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

/* Compares the rows of two images of the same shape: bits, or within
 * bound (absolute) plus an F32 rounding (2^-23 relative). Reports the
 * first mismatch; returns whether they agree. */
static bool same_image(const parsum_image *want, const parsum_image *got,
                       double bound, const char *what)
{
    size_t n = want->width * (size_t)want->channels;
    size_t ss = parsum_dtype_size(want->dtype);
    for (size_t y = 0; y < want->height; y++)
        for (size_t i = 0; i < n; i++) {
            const void *a = px(want, i, y), *b = px(got, i, y);
            if (memcmp(a, b, ss) == 0)
                continue;
            if (bound >= 0 && is_float(want->dtype)) {
                double va = want->dtype == PARSUM_F32 ? *(const float *)a
                                                      : *(const double *)a;
                double vb = want->dtype == PARSUM_F32 ? *(const float *)b
                                                      : *(const double *)b;
                double tol = bound + (want->dtype == PARSUM_F32
                                          ? fabs(va) * 0x1p-23
                                          : 0);
                if (fabs(va - vb) <= tol)
                    continue;
            }
            char fa[64], fb[64];
            print_message("  %s: sample %zu of row %zu: want %s, got %s\n",
                          what, i, y, tu_format(want->dtype, a, fa),
                          tu_format(want->dtype, b, fb));
            return false;
        }
    return true;
}

static void set_band(size_t rows)
{
    char buf[32];
    if (rows == 0) {
        unsetenv("PARSUM_CPU_IMAGE_BAND");
        return;
    }
    snprintf(buf, sizeof buf, "%zu", rows);
    setenv("PARSUM_CPU_IMAGE_BAND", buf, 1);
}

/* ---- the pieces ------------------------------------------------------------ */

/* Every sum of the 16-bit path for every area it takes, every sum of the
 * float32 path for a range of areas (U8 up to 127 x 127, U16 up to 63),
 * and the 32- and 64-bit double paths at the ends of their ranges and at
 * multiples of d. */
static void check_all_sums(const parsum__div *dv, uint64_t d, uint64_t smax,
                           int u16, size_t *failures)
{
    for (uint64_t s = 0; s <= smax; s++) {
        uint32_t q = u16 ? parsum__div_u16(dv, (uint32_t)s)
                         : parsum__div_u32(dv, (uint32_t)s);
        if (q != s / d) {
            tu_report(failures, "  %s path: %llu / %llu gives %u\n",
                      u16 ? "u16" : "f32", (unsigned long long)s,
                      (unsigned long long)d, q);
            return;
        }
    }
}

static void test_divisions(void **state)
{
    (void)state;
    size_t failures = 0;
    parsum__div dv;
    for (uint64_t d = 1; d < 256; d += 2) {
        uint64_t smax = 255 * d + d / 2;
        if (smax < 65536 && parsum__div_plan(&dv, d, smax, 255) &&
            dv.m16 != 0)
            check_all_sums(&dv, d, smax, 1, &failures);
    }
    static const uint64_t u8_areas[] = {9, 49, 203, 225, 245, 961, 3969,
                                        8191, 16129, 16383};
    for (size_t i = 0; i < sizeof u8_areas / sizeof u8_areas[0]; i++) {
        uint64_t d = u8_areas[i], smax = 255 * d + d / 2;
        parsum__div_plan(&dv, d, smax, 255);
        if (!dv.small)
            tu_report(&failures, "  area %llu: no float32 path\n",
                      (unsigned long long)d);
        check_all_sums(&dv, d, smax, 0, &failures);
    }
    for (uint64_t d = 1; d < 64; d += 2) {
        uint64_t smax = 65535 * d + d / 2;
        parsum__div_plan(&dv, d, smax, 65535);
        if (dv.small)
            check_all_sums(&dv, d, smax, 0, &failures);
    }
    tu_rng r = tu_rng_for(0xd1, 0, 0, 0);
    for (int t = 0; t < 2000; t++) {
        uint64_t d = (tu_next(&r) % (1u << (1 + t % 24))) | 1;
        uint64_t smax = (t % 2 ? 255 : 65535) * d + d / 2;
        if (smax >= (uint64_t)1 << 32)
            smax = ((uint64_t)1 << 32) - 1;
        parsum__div_plan(&dv, d, (uint64_t)1 << 40, 0); /* double paths */
        uint64_t k = smax / d;
        uint64_t probe[6] = {smax, smax - smax % d, k * d - 1,
                             tu_below(&r, smax + 1), d - 1, d};
        for (int p = 0; p < 6; p++) {
            uint64_t s = probe[p] > smax ? smax : probe[p];
            if (parsum__div_u32(&dv, (uint32_t)s) != s / d)
                tu_report(&failures, "  u32 path: %llu / %llu\n",
                          (unsigned long long)s, (unsigned long long)d);
            uint64_t s64 = s * 65537 + (uint64_t)p;
            if (parsum__div_u64(&dv, s64) != s64 / d)
                tu_report(&failures, "  u64 path: %llu / %llu\n",
                          (unsigned long long)s64, (unsigned long long)d);
            int64_t si = -(int64_t)s64;
            int64_t q = si / (int64_t)d - (si % (int64_t)d != 0);
            if (parsum__div_i64(&dv, (uint64_t)si) != q)
                tu_report(&failures, "  i64 path: %lld / %llu\n",
                          (long long)si, (unsigned long long)d);
        }
    }
    assert_int_equal(failures, 0);
}

/* F(b) - F(a) from the terms against sums over the border map. */
static void test_border_terms(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t n = 1; n <= 7; n++)
        for (int b = 0; b <= PARSUM_BORDER_WRAP; b++) {
            int64_t x[8], G[9] = {0};
            for (size_t i = 0; i < n; i++) {
                x[i] = (int64_t)(i * i * 7 + 3);
                G[i + 1] = G[i] + x[i];
            }
            for (int64_t j = -60; j <= 60; j++) {
                int64_t coef[4], f = 0, want = 0;
                size_t rr[4];
                int t = parsum__ext_terms(j, n, (parsum_border)b, coef, rr);
                for (int k = 0; k < t; k++)
                    f += coef[k] * G[rr[k]];
                for (int64_t i = j < 0 ? j : 0; i < (j < 0 ? 0 : j); i++) {
                    bool zero;
                    size_t m = parsum__border_map(i, n, (parsum_border)b,
                                                  &zero);
                    int64_t v = zero ? 0 : x[m];
                    want += j < 0 ? -v : v;
                }
                if (f != want)
                    tu_report(&failures, "  n=%zu border=%d F(%lld) = %lld, "
                              "want %lld\n", n, b, (long long)j, (long long)f,
                              (long long)want);
            }
        }
    assert_int_equal(failures, 0);
}

/* ---- summed-area tables ------------------------------------------------------- */

typedef struct int_case {
    size_t w, h, pad;
    int C;
    parsum_dtype sd, td;
    unsigned flags;
    int offset; /* 0 none, 1 given, 2 OFFSET_MEAN */
    size_t band; /* forced band height, 0 for the default */
} int_case;

static const char *int_name(const int_case *k, int threads, char *buf,
                            size_t len)
{
    snprintf(buf, len,
             "integral %zux%zu+%zu C=%d %s->%s flags=%u offset=%d band=%zu "
             "threads=%d",
             k->w, k->h, k->pad, k->C, parsum_dtype_name(k->sd),
             parsum_dtype_name(k->td), k->flags, k->offset, k->band, threads);
    return buf;
}

/* Entries are exact when integer samples are summed into an integer
 * table, or into a float one with exact float64 sums (no offset). */
static bool int_exact(const int_case *k)
{
    return !is_float(k->sd) && (!is_float(k->td) || k->offset == 0);
}

/* The largest |sample - offset| (squared for SQUARED): float table
 * entries are sums of at most (w + 1)(h + 1) such terms, and their
 * rounding error is relative to that. */
static double max_term(const parsum_image *src, bool sq, const double *off)
{
    double m = 0;
    for (size_t y = 0; y < src->height; y++)
        for (size_t x = 0; x < src->width; x++)
            for (int c = 0; c < src->channels; c++) {
                double v = parsum__ref_sample_f64(src, x, y, c);
                v = fabs(v - (off ? off[c] : 0));
                m = fmax(m, sq ? v * v : v);
            }
    return m;
}

static void integral_case(const int_case *k, size_t *failures)
{
    int inc = (k->flags & PARSUM_INTEGRAL_INCLUSIVE) != 0;
    bool sq = (k->flags & PARSUM_INTEGRAL_SQUARED) != 0;
    size_t tw = k->w + (size_t)!inc, th = k->h + (size_t)!inc;
    parsum_image src = make_image(k->w, k->h, k->C, k->sd, k->pad);
    parsum_image want = make_image(tw, th, k->C, k->td, k->pad);
    parsum_image got = make_image(tw, th, k->C, k->td, k->pad);
    parsum_image first = make_image(tw, th, k->C, k->td, k->pad);
    tu_rng r = tu_rng_for(k->w * 131 + k->h, (uint64_t)k->sd * 16 + k->td,
                          (uint64_t)k->C * 8 + k->flags, k->pad);
    fill_image(&src, &r, k->sd == PARSUM_I32 && sq && is_float(k->td)
                             ? FILL_SMALL
                             : FILL_UNIFORM);
    double off[4] = {0.25, -3.5, 100.0, 7.125}, mean_ref[4], off1[4];
    char name[200];
    set_band(k->band);
    for (size_t t = 0; t < N_THREADS; t++) {
        unsigned flags = k->flags | (k->offset == 2 ? PARSUM_INTEGRAL_OFFSET_MEAN
                                                    : 0);
        double o[4];
        memcpy(o, off, sizeof o);
        int_name(k, thread_counts[t], name, sizeof name);
        TU_OK(parsum_context_set_threads(tu_ctx, thread_counts[t]));
        memset(got.data, TU_POISON, got.pitch * got.height);
        TU_OK(parsum_integral(tu_ctx, &src, &got, flags,
                              k->offset ? o : NULL));
        if (t == 0) {
            if (k->offset == 2) { /* parsum's mean against the reference */
                parsum__ref_image_mean(&src, mean_ref);
                for (int c = 0; c < k->C; c++)
                    if (fabs(o[c] - mean_ref[c]) >
                        (int_exact(k) || !is_float(k->sd)
                             ? 0
                             : 1e-13 * (1 + fabs(mean_ref[c]))))
                        tu_report(failures, "  %s: mean %d is %.17g, want "
                                  "%.17g\n", name, c, o[c], mean_ref[c]);
            }
            memcpy(off1, o, sizeof o);
            assert_int_equal(parsum__ref_integral(&src, &want, inc, sq,
                                                  k->offset ? o : NULL),
                             PARSUM_OK);
            double scale = (double)(k->w + 1) * (double)(k->h + 1) *
                           max_term(&src, sq, k->offset ? o : NULL);
            if (!same_image(&want, &got, int_exact(k) ? -1 : 1e-13 * scale,
                            name))
                tu_report(failures, "  %s: differs from the reference\n",
                          name);
            memcpy(first.data, got.data, got.pitch * got.height);
        } else if (memcmp(o, off1, (size_t)k->C * sizeof *o) != 0 ||
                   !same_image(&first, &got, -1, name)) {
            tu_report(failures, "  %s: not the bits of 1 thread\n", name);
        }
    }
    set_band(0);
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    free(src.data);
    free(want.data);
    free(got.data);
    free(first.data);
}

static const parsum_dtype src_dtypes[] = {PARSUM_U8, PARSUM_U16, PARSUM_I32,
                                          PARSUM_F32, PARSUM_F64};
static const parsum_dtype table_dtypes[] = {PARSUM_U32, PARSUM_U64,
                                            PARSUM_I64, PARSUM_F32,
                                            PARSUM_F64};

/* Every dtype pair, layout, SQUARED and channel count on small images
 * (one band, several, a row, a column), with padded rows. */
static void test_integral_pairs(void **state)
{
    (void)state;
    static const size_t sizes[][3] = {{1, 1, 0}, {1, 9, 1}, {13, 1, 0},
                                      {37, 29, 3}};
    size_t failures = 0;
    for (size_t s = 0; s < 5; s++)
        for (size_t t = 0; t < 5; t++) {
            if (is_float(src_dtypes[s]) && !is_float(table_dtypes[t]))
                continue;
            for (unsigned f = 0; f < 4; f++)
                for (int C = 1; C <= 4; C++)
                    for (size_t z = 0; z < 4; z++) {
                        int_case k = {sizes[z][0], sizes[z][1], sizes[z][2],
                                      C, src_dtypes[s], table_dtypes[t], f,
                                      0, z == 3 ? 4 : 0};
                        integral_case(&k, &failures);
                    }
        }
    assert_int_equal(failures, 0);
}

/* Offsets given and computed, into both float tables. */
static void test_integral_offsets(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t s = 0; s < 5; s++)
        for (int tf = 0; tf < 2; tf++)
            for (unsigned f = 0; f < 4; f++)
                for (int o = 1; o <= 2; o++) {
                    int_case k = {45, 38, 2, 1 + (int)(s + f) % 4,
                                  src_dtypes[s],
                                  tf ? PARSUM_F64 : PARSUM_F32, f, o,
                                  o == 2 ? 5 : 0};
                    integral_case(&k, &failures);
                }
    assert_int_equal(failures, 0);
}

/* Band edges everywhere (forced heights 1, 2, 3, 7, 16: rows alone and in
 * pairs) and the natural bands of larger images (1023 x 769 u8: three
 * bands, the last short; float rows of 256 pixels or more). */
static void test_integral_bands(void **state)
{
    (void)state;
    static const size_t bands[] = {1, 2, 3, 7, 16};
    size_t failures = 0;
    for (size_t b = 0; b < 5; b++)
        for (int C = 1; C <= 4; C += 3) {
            int_case k = {61, 47, 5, C, PARSUM_U16, PARSUM_U32,
                          PARSUM_INTEGRAL_SQUARED, 0, bands[b]};
            integral_case(&k, &failures);
            int_case kf = {61, 47, 0, C, PARSUM_F32, PARSUM_F64, 0, 2,
                           bands[b]};
            integral_case(&kf, &failures);
        }
    static const int_case big[] = {
        {1023, 769, 0, 1, PARSUM_U8, PARSUM_U32, 0, 0, 0},
        {300, 97, 1, 3, PARSUM_F32, PARSUM_F64, PARSUM_INTEGRAL_SQUARED, 2,
         0},
        {1023, 769, 7, 3, PARSUM_U8, PARSUM_U32, PARSUM_INTEGRAL_SQUARED, 0,
         0},
        {777, 301, 1, 4, PARSUM_U16, PARSUM_I64, PARSUM_INTEGRAL_INCLUSIVE,
         0, 0},
        {513, 400, 0, 2, PARSUM_I32, PARSUM_U64, PARSUM_INTEGRAL_SQUARED, 0,
         0},
        {640, 480, 0, 1, PARSUM_U8, PARSUM_F64, 0, 0, 0},
        {700, 500, 3, 1, PARSUM_F32, PARSUM_F32, 0, 2, 0},
        {300, 2000, 0, 2, PARSUM_F64, PARSUM_F64, PARSUM_INTEGRAL_SQUARED,
         1, 0},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        if (!tu_quick || i < 4)
            integral_case(&big[i], &failures);
    assert_int_equal(failures, 0);
}

/* ---- box sums --------------------------------------------------------------- */

static void test_box_sums(void **state)
{
    (void)state;
    size_t failures = 0, nrect = 5000;
    parsum_rect *rects = tu_malloc(nrect * sizeof *rects);
    tu_rng r = tu_rng_for(0xb0, 0, 0, 0);
    for (size_t i = 0; i < nrect; i++) {
        rects[i].x = tu_below(&r, 60);
        rects[i].y = tu_below(&r, 50);
        rects[i].width = i % 97 == 0 ? UINT64_MAX : tu_below(&r, 40);
        rects[i].height = tu_below(&r, 45);
    }
    for (int tt = 0; tt < 3; tt++) {
        parsum_dtype td = tt == 0 ? PARSUM_U32 : tt == 1 ? PARSUM_I64
                                                         : PARSUM_F64;
        unsigned flags = tt == 1 ? PARSUM_INTEGRAL_INCLUSIVE : 0;
        int C = 1 + tt;
        parsum_image src = make_image(53, 41, C, PARSUM_U16, 1);
        parsum_image tab = make_image(53 + (tt != 1), 41 + (tt != 1), C, td, 0);
        fill_image(&src, &r, FILL_UNIFORM);
        double off[3] = {1, 2, 3};
        TU_OK(parsum_integral(tu_ctx, &src, &tab, flags,
                              tt == 2 ? off : NULL));
        size_t ob = nrect * (size_t)C * 8;
        unsigned char *want = tu_malloc(ob), *got = tu_malloc(ob);
        for (int means = 0; means < 2; means++) {
            parsum__ref_box_sums(&tab, tt == 1, means, false,
                                 tt == 2 ? off : NULL, rects, nrect, want);
            for (size_t t = 0; t < N_THREADS; t++) {
                TU_OK(parsum_context_set_threads(tu_ctx, thread_counts[t]));
                memset(got, TU_POISON, ob);
                if (means)
                    TU_OK(parsum_integral_box_means(
                        tu_ctx, &tab, flags, tt == 2 ? off : NULL, rects,
                        nrect, (double *)(void *)got));
                else
                    TU_OK(parsum_integral_box_sums(tu_ctx, &tab, flags,
                                                   tt == 2 ? off : NULL,
                                                   rects, nrect, got));
                size_t bytes = nrect * (size_t)C *
                               (means || tt == 2 ? 8 : parsum_dtype_size(td));
                for (size_t i = 0; i < bytes; i += 8)
                    if (memcmp(want + i, got + i,
                               bytes - i < 8 ? bytes - i : 8) != 0 &&
                        !(means && isnan(*(double *)(void *)(want + i)) &&
                          isnan(*(double *)(void *)(got + i)))) {
                        tu_report(&failures, "  box %s %s threads=%d: byte "
                                  "%zu differs\n", means ? "means" : "sums",
                                  parsum_dtype_name(td), thread_counts[t], i);
                        break;
                    }
            }
        }
        TU_OK(parsum_context_set_threads(tu_ctx, 0));
        free(want);
        free(got);
        free(src.data);
        free(tab.data);
    }
    free(rects);
    assert_int_equal(failures, 0);
}

/* ---- box filter --------------------------------------------------------------- */

typedef struct bf_case {
    size_t w, h, pad;
    int C;
    parsum_dtype d;
    size_t rx, ry;
    int border; /* -1: every border */
    int fill;
    size_t band;
} bf_case;

static void box_case(const bf_case *k, parsum_border border, size_t *failures)
{
    parsum_image src = make_image(k->w, k->h, k->C, k->d, k->pad);
    parsum_image want = make_image(k->w, k->h, k->C, k->d, k->pad);
    parsum_image got = make_image(k->w, k->h, k->C, k->d, k->pad);
    parsum_image first = make_image(k->w, k->h, k->C, k->d, k->pad);
    tu_rng r = tu_rng_for(k->w * 131 + k->h, (uint64_t)k->d * 16 + border,
                          k->rx * 4099 + k->ry, (uint64_t)k->C);
    fill_image(&src, &r, k->fill);
    parsum__ref_box_filter(&src, &want, k->rx, k->ry, border);
    char name[200];
    set_band(k->band);
    for (size_t t = 0; t < N_THREADS; t++) {
        snprintf(name, sizeof name,
                 "box %zux%zu+%zu C=%d %s r=%zux%zu border=%d fill=%d "
                 "band=%zu threads=%d",
                 k->w, k->h, k->pad, k->C, parsum_dtype_name(k->d), k->rx,
                 k->ry, (int)border, k->fill, k->band, thread_counts[t]);
        TU_OK(parsum_context_set_threads(tu_ctx, thread_counts[t]));
        memset(got.data, TU_POISON, got.pitch * got.height);
        TU_OK(parsum_box_filter(tu_ctx, &src, &got, k->rx, k->ry, border));
        if (t == 0) {
            if (!same_image(&want, &got, is_float(k->d) ? 1e-10 : -1, name))
                tu_report(failures, "  %s: differs from the reference\n",
                          name);
            memcpy(first.data, got.data, got.pitch * got.height);
        } else if (!same_image(&first, &got, -1, name)) {
            tu_report(failures, "  %s: not the bits of 1 thread\n", name);
        }
    }
    set_band(0);
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    free(src.data);
    free(want.data);
    free(got.data);
    free(first.data);
}

static void box_cases(const bf_case *k, size_t count, size_t *failures)
{
    for (size_t i = 0; i < count; i++) {
        if (k[i].border >= 0) {
            box_case(&k[i], (parsum_border)k[i].border, failures);
            continue;
        }
        for (int b = 0; b <= PARSUM_BORDER_WRAP; b++)
            box_case(&k[i], (parsum_border)b, failures);
    }
}

/* Every dtype, border and channel count; radii 0 to past the image. */
static void test_box_small(void **state)
{
    (void)state;
    static const size_t radii[][2] = {{0, 0}, {1, 1}, {2, 1}, {0, 3},
                                      {3, 0}, {5, 7}, {40, 2}, {3, 50}};
    size_t failures = 0;
    for (size_t d = 0; d < 5; d++)
        for (int C = 1; C <= 4; C++)
            for (size_t q = 0; q < 8; q++) {
                bf_case k = {29 + (size_t)C, 23, (size_t)C % 3, C,
                             src_dtypes[d], radii[q][0], radii[q][1], -1,
                             FILL_UNIFORM, 0};
                box_cases(&k, 1, &failures);
            }
    static const bf_case thin[] = {
        {1, 1, 0, 1, PARSUM_U8, 2, 3, -1, FILL_UNIFORM, 0},
        {1, 17, 1, 2, PARSUM_U16, 1, 4, -1, FILL_UNIFORM, 0},
        {19, 1, 0, 3, PARSUM_F32, 6, 1, -1, FILL_UNIFORM, 0},
        {2, 2, 0, 4, PARSUM_I32, 3, 3, -1, FILL_UNIFORM, 0},
    };
    box_cases(thin, 4, &failures);
    assert_int_equal(failures, 0);
}

/* Band edges anywhere; windows taller than BF_DIRECT_ROWS (set up from
 * column prefixes), with and without forced bands. */
static void test_box_bands(void **state)
{
    (void)state;
    static const bf_case k[] = {
        {37, 41, 2, 1, PARSUM_U8, 2, 3, -1, FILL_UNIFORM, 1},
        {37, 41, 0, 3, PARSUM_U8, 1, 5, -1, FILL_UNIFORM, 3},
        {37, 41, 0, 2, PARSUM_F64, 2, 4, -1, FILL_UNIFORM, 7},
        {33, 150, 1, 1, PARSUM_U8, 1, 2, -1, FILL_UNIFORM, 0},
        {15, 40, 0, 1, PARSUM_U16, 1, 130, -1, FILL_UNIFORM, 0},
        {15, 40, 0, 2, PARSUM_F32, 2, 140, -1, FILL_UNIFORM, 0},
        {9, 300, 0, 1, PARSUM_I32, 1, 129, -1, FILL_UNIFORM, 0},
        {9, 300, 1, 1, PARSUM_U8, 0, 200, -1, FILL_UNIFORM, 9},
        {12, 17, 0, 1, PARSUM_F64, 1, 300, -1, FILL_UNIFORM, 4},
    };
    size_t failures = 0;
    box_cases(k, sizeof k / sizeof k[0], &failures);
    assert_int_equal(failures, 0);
}

/* Each accumulator width with sums at the top of its range: U8 in 16 bits
 * (area 225; 255 is the largest), areas whose 16-bit multiplier fails
 * (203, 245: 32 bits), U8 and U16 in 32 bits near 2^32 / max (U16: area
 * 3 x 21845 = 65535), and in 64 bits past it. */
static void test_box_accumulators(void **state)
{
    (void)state;
    static const bf_case k[] = {
        {40, 33, 0, 1, PARSUM_U8, 7, 7, -1, FILL_HIGH, 0},
        {40, 33, 0, 2, PARSUM_U8, 2, 25, -1, FILL_HIGH, 0},
        {40, 33, 1, 1, PARSUM_U8, 3, 14, -1, FILL_HIGH, 0},
        {40, 33, 0, 1, PARSUM_U8, 17, 3, -1, FILL_HIGH, 0},
        {40, 33, 0, 1, PARSUM_U8, 8, 8, -1, FILL_HIGH, 0},
        {3, 4, 0, 1, PARSUM_U16, 1, 10922, 3, FILL_HIGH, 0},
        {9, 7, 0, 1, PARSUM_U16, 130, 130, 1, FILL_HIGH, 0},
        {2, 3, 0, 1, PARSUM_U8, 2100, 2100, 4, FILL_HIGH, 0},
        {6, 5, 0, 1, PARSUM_I32, 40, 40, 2, FILL_HIGH, 0},
        {6, 5, 0, 1, PARSUM_I32, 40, 40, 4, FILL_UNIFORM, 0},
    };
    size_t failures = 0;
    box_cases(k, sizeof k / sizeof k[0], &failures);
    assert_int_equal(failures, 0);
}

/* Larger images: several natural bands, the interior kernels at length,
 * float rows long enough for the four-chain prefix. */
static void test_box_large(void **state)
{
    (void)state;
    static const bf_case k[] = {
        {517, 300, 3, 1, PARSUM_U8, 1, 1, -1, FILL_UNIFORM, 0},
        {300, 70, 1, 3, PARSUM_F64, 2, 3, -1, FILL_UNIFORM, 0},
        {300, 301, 0, 3, PARSUM_U8, 3, 2, 3, FILL_UNIFORM, 0},
        {263, 200, 0, 1, PARSUM_U8, 15, 15, 1, FILL_HIGH, 0},
        {250, 170, 2, 2, PARSUM_U16, 4, 6, 0, FILL_UNIFORM, 0},
        {200, 180, 0, 4, PARSUM_F32, 2, 3, 4, FILL_UNIFORM, 0},
    };
    size_t failures = 0;
    box_cases(k, tu_quick ? 4 : sizeof k / sizeof k[0], &failures);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_divisions),
    cmocka_unit_test(test_border_terms),
    cmocka_unit_test(test_integral_pairs),
    cmocka_unit_test(test_integral_offsets),
    cmocka_unit_test(test_integral_bands),
    cmocka_unit_test(test_box_sums),
    cmocka_unit_test(test_box_small),
    cmocka_unit_test(test_box_bands),
    cmocka_unit_test(test_box_accumulators),
    cmocka_unit_test(test_box_large),
};

PARSUM_TEST_MAIN(test_image_cpu_paths)
{
    tu_init("test_image_cpu_paths");
    if (tu_backend != PARSUM_BACKEND_CPU)
        return tu_finish(TU_SKIP_EXIT); /* CPU internals only */
    return tu_finish(TU_RUN("test_image_cpu_paths", tests));
}
