/*
 * test_integral.c - parsum_integral and the box sums against the serial
 * reference (src/ref/ref_image.c), against sums taken directly from the
 * image, and against OpenCV's cv2.integral as an outside oracle.
 *
 *   notes      the 4 x 4 example of the notes (seed 000)
 *   reference  every source x table dtype pair, both layouts, squared,
 *              1-4 channels, sizes 1 x 1, 1 x N, N x 1, odd sizes, 1023 x
 *              769, 4096 x 4096 and sizes of several 1024-pixel strips,
 *              rows with padding (pitch > width);
 *              integer results exact, float ones within their rounding
 *   u8 tiles   one-channel U8 -> U32 with aligned table rows (the GPU's
 *              own kernel for them): partial strips and bands, all-255
 *              images, image rows aligned to 4 and to 16 bytes
 *   offset     given offsets and OFFSET_MEAN; the signed-offset table's
 *              box-sum error measured against the plain F32 table's
 *   box sums   clipped, empty and outside rectangles, sums and means, a
 *              U32 table that wraps around and still gives exact sums
 *   opencv     cv2.integral (sum and squared sum) on the same image
 *   errors     every descriptor field and every rule of the header
 */
#include "test_image_util.h"

#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_f(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}


/* Bound of a float table entry: the float64 error of a sum of |terms| in
 * another grouping, plus the final rounding to F32. */
typedef struct fbound {
    parsum_image abs; /* F64 table of the |terms| */
    bool f32;
} fbound;

static double entry_bound(const void *user, size_t x, size_t y, int c)
{
    const fbound *b = user;
    double a = *(const double *)ti_at(&b->abs, x, y, c);
    double rel = b->f32 ? ldexp(1, -23)
                        : ldexp(1, -50) * (double)(b->abs.width + b->abs.height);
    return a * rel + 1e-300;
}

/* The F64 table of |sample - offset| (squared: its square). */
static parsum_image abs_table(const parsum_image *src, const parsum_image *tab,
                              bool incl, bool sq, const double *off)
{
    parsum_image a = ti_host(src->width, src->height, src->channels,
                             PARSUM_F64, 0);
    for (size_t y = 0; y < src->height; y++)
        for (size_t x = 0; x < src->width; x++)
            for (int c = 0; c < src->channels; c++) {
                double v = parsum__ref_sample_f64(src, x, y, c) -
                           (off ? off[c] : 0);
                *(double *)ti_at(&a, x, y, c) = sq ? v * v : fabs(v);
            }
    parsum_image t = ti_host(tab->width, tab->height, tab->channels,
                             PARSUM_F64, 0);
    assert_int_equal(parsum__ref_integral(&a, &t, incl, false, NULL),
                     PARSUM_OK);
    ti_host_free(&a);
    return t;
}

/* One case: src (host, copied to rows of pad bytes more) through the
 * context into a table of tdt (rows of tpad bytes more); compared with the
 * reference. Returns the mismatch count. */
static size_t run_case_pitch(const parsum_image *src, parsum_dtype tdt,
                             unsigned flags, double *offset, size_t pad,
                             size_t tpad, const char *what)
{
    bool incl = flags & PARSUM_INTEGRAL_INCLUSIVE;
    bool sq = flags & PARSUM_INTEGRAL_SQUARED;
    size_t p = incl ? 0 : 1;
    parsum_image want = ti_host(src->width + p, src->height + p,
                                src->channels, tdt, 0);
    parsum_image got = ti_host(src->width + p, src->height + p,
                               src->channels, tdt, 2 * parsum_dtype_size(tdt));
    parsum_image dsrc = ti_to_ctx(src, pad);
    parsum_image dtab = ti_ctx_like(&got, tpad);
    TU_OK(parsum_integral(tu_ctx, &dsrc, &dtab, flags, offset));
    ti_from_ctx(&got, &dtab);
    double refmean[4];
    const double *off = offset;
    if (flags & PARSUM_INTEGRAL_OFFSET_MEAN) {
        parsum__ref_image_mean(src, refmean);
        for (int c = 0; c < src->channels; c++)
            if (fabs(refmean[c] - offset[c]) > 1e-12 * (1 + fabs(refmean[c])))
                print_error("%s: mean of channel %d: want %.17g got %.17g\n",
                            what, c, refmean[c], offset[c]);
    }
    assert_int_equal(parsum__ref_integral(src, &want, incl, sq, off),
                     PARSUM_OK);
    bool exact = !is_f(tdt) ||
                 (!is_f(src->dtype) && !(src->dtype == PARSUM_I32 && sq) &&
                  off == NULL);
    size_t bad;
    if (exact) {
        bad = ti_compare(&want, &got, NULL, NULL, what);
    } else {
        fbound b = {abs_table(src, &want, incl, sq, off), tdt == PARSUM_F32};
        bad = ti_compare(&want, &got, entry_bound, &b, what);
        ti_host_free(&b.abs);
    }
    if (!ti_padding_intact(&got))
        bad += 1, print_error("%s: the table's row padding was written\n",
                              what);
    ti_ctx_free(&dsrc);
    ti_ctx_free(&dtab);
    ti_host_free(&want);
    ti_host_free(&got);
    return bad;
}

/* run_case_pitch with table rows 3 samples longer (not 16-byte aligned). */
static size_t run_case(const parsum_image *src, parsum_dtype tdt,
                       unsigned flags, double *offset, size_t pad,
                       const char *what)
{
    return run_case_pitch(src, tdt, flags, offset, pad,
                          3 * parsum_dtype_size(tdt), what);
}

static const parsum_dtype src_dts[] = {PARSUM_U8, PARSUM_U16, PARSUM_I32,
                                       PARSUM_F32, PARSUM_F64};
static const parsum_dtype tab_dts[] = {PARSUM_U32, PARSUM_U64, PARSUM_I64,
                                       PARSUM_F32, PARSUM_F64};

static void test_notes_example(void **state)
{
    (void)state;
    static const uint8_t img[16] = {2, 1, 0, 0, 0, 1, 2, 0,
                                    1, 2, 1, 0, 1, 1, 0, 2};
    /* Worked by hand: row prefix sums, then running column sums. */
    static const uint32_t sat[16] = {2, 3, 3,  3,  2, 4, 6,  6,
                                     3, 7, 10, 10, 4, 9, 12, 14};
    parsum_image h = ti_host(4, 4, 1, PARSUM_U8, 0);
    memcpy(h.data, img, 16);
    for (int layout = 0; layout < 2; layout++) {
        size_t p = layout ? 0 : 1;
        parsum_image t = ti_host(4 + p, 4 + p, 1, PARSUM_U32, 0);
        parsum_image d = ti_to_ctx(&h, 0), dt = ti_ctx_like(&t, 0);
        TU_OK(parsum_integral(tu_ctx, &d, &dt,
                              layout ? PARSUM_INTEGRAL_INCLUSIVE : 0, NULL));
        ti_from_ctx(&t, &dt);
        for (size_t y = 0; y < 4 + p; y++)
            for (size_t x = 0; x < 4 + p; x++) {
                uint32_t want = (p && (x == 0 || y == 0))
                                    ? 0
                                    : sat[(y - p) * 4 + (x - p)];
                assert_int_equal(*(uint32_t *)ti_at(&t, x, y, 0), want);
            }
        ti_ctx_free(&d);
        ti_ctx_free(&dt);
        ti_host_free(&t);
    }
    ti_host_free(&h);
}

static void test_reference(void **state)
{
    (void)state;
    static const size_t sizes[][2] = {{1, 1}, {1000, 1}, {1, 777}, {37, 23},
                                      {130, 67}, {257, 5}};
    size_t failures = 0, ncase = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t si = 0; si < 5; si++)
            for (size_t ti = 0; ti < 5; ti++) {
                parsum_dtype sd = src_dts[si], td = tab_dts[ti];
                if (is_f(sd) && !is_f(td))
                    continue;
                for (unsigned flags = 0; flags < 4; flags++) {
                    int ch = 1 + (int)(ncase++ % 4);
                    tu_rng r = tu_rng_for(s, sd, td, flags);
                    parsum_image h = ti_host(sizes[s][0], sizes[s][1], ch, sd,
                                             s % 2 ? parsum_dtype_size(sd) : 0);
                    double lo, hi;
                    ti_range(sd, &lo, &hi);
                    ti_fill(&r, &h, lo, hi);
                    char what[160];
                    snprintf(what, sizeof what,
                             "integral %s -> %s %zux%zu ch %d flags %u",
                             parsum_dtype_name(sd), parsum_dtype_name(td),
                             h.width, h.height, ch, flags);
                    if (run_case(&h, td, flags, NULL, s % 3 ? 16 : 0, what))
                        tu_report(&failures, "%s failed", what);
                    ti_host_free(&h);
                }
            }
    assert_int_equal(failures, 0);
}

static void test_large(void **state)
{
    (void)state;
    static const struct { size_t w, h; parsum_dtype s, t; int ch; } cases[] = {
        {1023, 769, PARSUM_U8, PARSUM_U32, 1},
        {1023, 769, PARSUM_U16, PARSUM_U64, 3},
        {1023, 769, PARSUM_F32, PARSUM_F64, 1},
        {1023, 769, PARSUM_I32, PARSUM_I64, 2},
        {4096, 4096, PARSUM_U8, PARSUM_U32, 1},
        {4096, 4096, PARSUM_F32, PARSUM_F32, 1},
        /* Several strips of 1024 pixels, the last one partial, and many
         * bands: the GPU's tiles meet on every side. */
        {2500, 300, PARSUM_U8, PARSUM_U32, 4},
        {2049, 701, PARSUM_U16, PARSUM_U64, 3},
        {3001, 129, PARSUM_I32, PARSUM_I64, 2},
        {1025, 1000, PARSUM_U8, PARSUM_U32, 1},
        {5000, 97, PARSUM_F32, PARSUM_F64, 2},
    };
    size_t failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (tu_quick && cases[i].w > 2000 && cases[i].s == PARSUM_F32)
            continue;
        tu_rng r = tu_rng_for(77, i, 0, 0);
        parsum_image h = ti_host(cases[i].w, cases[i].h, cases[i].ch,
                                 cases[i].s, 0);
        double lo, hi;
        ti_range(cases[i].s, &lo, &hi);
        ti_fill(&r, &h, lo, hi);
        for (unsigned flags = 0; flags < 2; flags++) {
            char what[128];
            snprintf(what, sizeof what, "integral %s -> %s %zux%zu flags %u",
                     parsum_dtype_name(cases[i].s),
                     parsum_dtype_name(cases[i].t), h.width, h.height, flags);
            if (run_case(&h, cases[i].t, flags, NULL, 0, what))
                tu_report(&failures, "%s failed", what);
        }
        ti_host_free(&h);
    }
    assert_int_equal(failures, 0);
}

/* One-channel U8 images into U32 tables with 16-byte aligned rows, the
 * case the GPU takes through its own kernels: strips of 1024 pixels full
 * and partial, bands of 64 rows full and partial, image rows aligned
 * to 16 bytes and to 4 only, random pixels and all 255 (the largest of
 * the partial sums those kernels keep in 16 bits); more than 32 strips
 * and more than 256 bands (the carry step's loops go round again). */
static void test_u8_tiles(void **state)
{
    (void)state;
    static const size_t sizes[][2] = {
        {1, 1},     {5, 9},     {1023, 64}, {1024, 65}, {1025, 63},
        {2048, 8},  {3001, 129}, {130, 700}, {4100, 300}, {1, 1000},
        {1000, 1},  {2052, 520}, {33797, 3}, {70, 17000}};
    size_t failures = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int fill = 0; fill < 2; fill++) {
            const size_t w = sizes[i][0], h = sizes[i][1];
            parsum_image im = ti_host(w, h, 1, PARSUM_U8, 0);
            tu_rng r = tu_rng_for(91, i, fill, 0);
            if (fill)
                memset(im.data, 255, im.pitch * h);
            else
                ti_fill(&r, &im, 0, 255);
            for (unsigned flags = 0; flags < 2; flags++)
                for (int a16 = 0; a16 < 2; a16++) {
                    size_t p = flags ? 0 : 1;
                    size_t pad = a16 ? ti_pad_to(w, 16, 0)
                                     : ti_pad_to(w, 4, 4);
                    size_t tpad = ti_pad_to((w + p) * 4, 16, 16);
                    char what[128];
                    snprintf(what, sizeof what,
                             "integral u8 -> u32 %zux%zu %s flags %u row "
                             "pitch %zu",
                             w, h, fill ? "all 255" : "random", flags, w + pad);
                    if (run_case_pitch(&im, PARSUM_U32, flags, NULL, pad, tpad,
                                       what))
                        tu_report(&failures, "%s failed", what);
                }
            ti_host_free(&im);
        }
    assert_int_equal(failures, 0);
}

static void test_offset(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t si = 0; si < 5; si++)
        for (int tf = 0; tf < 2; tf++)
            for (unsigned sq = 0; sq < 2; sq++)
                for (int given = 0; given < 2; given++) {
                    parsum_dtype sd = src_dts[si];
                    parsum_dtype td = tf ? PARSUM_F64 : PARSUM_F32;
                    tu_rng r = tu_rng_for(5, si, (uint64_t)tf, sq);
                    int ch = 1 + (int)(si % 4);
                    parsum_image h = ti_host(97, 41, ch, sd, 0);
                    double lo, hi;
                    ti_range(sd, &lo, &hi);
                    ti_fill(&r, &h, lo, hi);
                    double off[4] = {0.25 * hi, -3.5, 1e3, 7};
                    unsigned flags = (sq ? PARSUM_INTEGRAL_SQUARED : 0) |
                                     (given ? 0 : PARSUM_INTEGRAL_OFFSET_MEAN);
                    char what[128];
                    snprintf(what, sizeof what,
                             "offset %s -> %s squared %u %s",
                             parsum_dtype_name(sd), parsum_dtype_name(td), sq,
                             given ? "given" : "mean");
                    if (run_case(&h, td, flags, off, 0, what))
                        tu_report(&failures, "%s failed", what);
                    ti_host_free(&h);
                }
    assert_int_equal(failures, 0);
}

/* Direct sums of src over the clipped rectangle, modulo 2^64 and in
 * float64. */
static void direct_sum(const parsum_image *src, parsum_rect rc, int c,
                       bool sq, uint64_t *su, double *sf, double *area)
{
    uint64_t x0 = rc.x < src->width ? rc.x : src->width;
    uint64_t y0 = rc.y < src->height ? rc.y : src->height;
    uint64_t x1 = rc.width > src->width - x0 ? src->width : x0 + rc.width;
    uint64_t y1 = rc.height > src->height - y0 ? src->height : y0 + rc.height;
    *su = 0;
    *sf = 0;
    *area = (double)(x1 - x0) * (double)(y1 - y0);
    for (uint64_t y = y0; y < y1; y++)
        for (uint64_t x = x0; x < x1; x++) {
            uint64_t v = (uint64_t)parsum__ref_sample_i64(src, x, y, c);
            double f = parsum__ref_sample_f64(src, x, y, c);
            *su += sq ? v * v : v;
            *sf += sq ? f * f : f;
        }
}

static parsum_rect random_rect(tu_rng *r, size_t w, size_t h)
{
    parsum_rect rc;
    rc.x = tu_below(r, w + 3);
    rc.y = tu_below(r, h + 3);
    rc.width = tu_below(r, w + 2);
    rc.height = tu_below(r, h + 2);
    if (tu_below(r, 16) == 0)
        rc.width = UINT64_MAX - tu_below(r, 4); /* clipping without overflow */
    return rc;
}

static size_t check_box_sums(const parsum_image *src, parsum_dtype td,
                             unsigned flags, size_t nrect, tu_rng *r)
{
    bool incl = flags & PARSUM_INTEGRAL_INCLUSIVE;
    bool sq = flags & PARSUM_INTEGRAL_SQUARED;
    size_t p = incl ? 0 : 1, ch = (size_t)src->channels, bad = 0;
    parsum_image tab = ti_host(src->width + p, src->height + p, src->channels,
                               td, 0);
    parsum_image dsrc = ti_to_ctx(src, 0), dtab = ti_ctx_like(&tab, 0);
    TU_OK(parsum_integral(tu_ctx, &dsrc, &dtab, flags, NULL));
    parsum_rect *rects = tu_malloc(nrect * sizeof *rects);
    for (size_t i = 0; i < nrect; i++)
        rects[i] = random_rect(r, src->width, src->height);
    size_t osz = is_f(td) ? 8 : parsum_dtype_size(td);
    void *drects = tu_dev_alloc(nrect * sizeof *rects);
    void *dsum = tu_dev_alloc(nrect * ch * osz), *dmean = tu_dev_alloc(nrect * ch * 8);
    tu_upload(drects, rects, nrect * sizeof *rects);
    TU_OK(parsum_integral_box_sums(tu_ctx, &dtab, flags, NULL, drects, nrect,
                                   dsum));
    TU_OK(parsum_integral_box_means(tu_ctx, &dtab, flags, NULL, drects, nrect,
                                    dmean));
    unsigned char *sums = tu_malloc(nrect * ch * osz);
    double *means = tu_malloc(nrect * ch * 8);
    tu_download(sums, dsum, nrect * ch * osz);
    tu_download(means, dmean, nrect * ch * 8);
    /* F32 entries carry 2^-24 of their size, up to the image's total. */
    double total[4];
    for (size_t c = 0; c < ch; c++) {
        uint64_t tu;
        double ta;
        direct_sum(src, (parsum_rect){0, 0, UINT64_MAX, UINT64_MAX}, (int)c,
                   sq, &tu, &total[c], &ta);
    }
    for (size_t i = 0; i < nrect; i++)
        for (size_t c = 0; c < ch; c++) {
            uint64_t su;
            double sf, area;
            direct_sum(src, rects[i], (int)c, sq, &su, &sf, &area);
            size_t o = i * ch + c;
            bool ok;
            double gotmean = means[o], wantmean;
            if (is_f(td)) {
                double g = ((double *)sums)[o];
                double tol = td == PARSUM_F32 ? ldexp(total[c], -21)
                                              : 1e-12 * (1 + total[c]);
                ok = fabs(g - sf) <= tol;
                wantmean = sf / area;
            } else if (td == PARSUM_U32) {
                ok = ((uint32_t *)sums)[o] == (uint32_t)su;
                wantmean = (double)(uint32_t)su / area;
            } else {
                ok = ((uint64_t *)sums)[o] == su;
                wantmean = (td == PARSUM_I64 ? (double)(int64_t)su : (double)su) / area;
            }
            bool mok = area == 0 ? isnan(gotmean)
                                 : fabs(gotmean - wantmean) <=
                                       (is_f(td) ? ldexp(total[c], -21) / area
                                                 : 1e-12 * fabs(wantmean));
            if ((!ok || !mok) && bad++ < TU_MAX_REPORTS)
                print_error("box sums %s -> %s flags %u rect %zu (%llu %llu "
                            "%llu %llu) c %zu: sum %s, mean %g want %g\n",
                            parsum_dtype_name(src->dtype),
                            parsum_dtype_name(td), flags, i,
                            (unsigned long long)rects[i].x,
                            (unsigned long long)rects[i].y,
                            (unsigned long long)rects[i].width,
                            (unsigned long long)rects[i].height, c,
                            ok ? "ok" : "WRONG", gotmean, wantmean);
        }
    tu_dev_free(drects);
    tu_dev_free(dsum);
    tu_dev_free(dmean);
    free(rects);
    free(sums);
    free(means);
    ti_ctx_free(&dsrc);
    ti_ctx_free(&dtab);
    ti_host_free(&tab);
    return bad;
}

static void test_box_sums(void **state)
{
    (void)state;
    size_t failures = 0;
    /* u16 300 x 300: sums reach 5.9e9 > 2^32, so the U32 table wraps. */
    for (size_t ti = 0; ti < 5; ti++)
        for (unsigned flags = 0; flags < 4; flags++) {
            tu_rng r = tu_rng_for(9, ti, flags, 0);
            parsum_image h = ti_host(300, 300, 1 + (int)(flags % 3),
                                     PARSUM_U16, 0);
            ti_fill(&r, &h, 60000, 65535);
            if (check_box_sums(&h, tab_dts[ti], flags, 400, &r))
                tu_report(&failures, "box sums u16 -> %s flags %u",
                          parsum_dtype_name(tab_dts[ti]), flags);
            ti_host_free(&h);
        }
    assert_int_equal(failures, 0);
}

/* The signed offset (notes, seed 000): an F32 table of a u8 image holds
 * entries up to 2^29, so four-corner box sums lose the low bits; with the
 * mean subtracted the entries stay near zero. Both errors are measured
 * against exact sums; the offset one must be smaller. */
static void test_offset_precision(void **state)
{
    (void)state;
    tu_rng r = tu_rng_for(11, 0, 0, 0);
    size_t w = 2048, hgt = 2048, nrect = 512;
    parsum_image h = ti_host(w, hgt, 1, PARSUM_U8, 0);
    ti_fill(&r, &h, 0, 255);
    parsum_image tab = ti_host(w + 1, hgt + 1, 1, PARSUM_F32, 0);
    parsum_image dsrc = ti_to_ctx(&h, 0), dtab = ti_ctx_like(&tab, 0);
    parsum_rect *rects = tu_malloc(nrect * sizeof *rects);
    double *want = tu_malloc(nrect * 8), *got = tu_malloc(nrect * 8);
    for (size_t i = 0; i < nrect; i++) {
        rects[i] = (parsum_rect){w / 2 + tu_below(&r, w / 2 - 20),
                                 hgt / 2 + tu_below(&r, hgt / 2 - 20),
                                 1 + tu_below(&r, 16), 1 + tu_below(&r, 16)};
        uint64_t su;
        double area;
        direct_sum(&h, rects[i], 0, false, &su, &want[i], &area);
    }
    void *drects = tu_dev_alloc(nrect * sizeof *rects), *dout = tu_dev_alloc(nrect * 8);
    tu_upload(drects, rects, nrect * sizeof *rects);
    double err[2] = {0, 0}, mean = 0;
    for (int with = 0; with < 2; with++) {
        unsigned flags = with ? PARSUM_INTEGRAL_OFFSET_MEAN : 0;
        TU_OK(parsum_integral(tu_ctx, &dsrc, &dtab, flags, with ? &mean : NULL));
        TU_OK(parsum_integral_box_sums(tu_ctx, &dtab, flags,
                                       with ? &mean : NULL, drects, nrect, dout));
        tu_download(got, dout, nrect * 8);
        for (size_t i = 0; i < nrect; i++)
            err[with] = fmax(err[with], fabs(got[i] - want[i]));
    }
    printf("F32 table of a %zux%zu u8 image, small boxes in the far quadrant: "
           "max |error| %.4g plain, %.4g with the mean offset (mean %.3f)\n",
           w, hgt, err[0], err[1], mean);
    assert_true(err[0] > 0);
    assert_true(err[1] < err[0]);
    tu_dev_free(drects);
    tu_dev_free(dout);
    free(rects);
    free(want);
    free(got);
    ti_ctx_free(&dsrc);
    ti_ctx_free(&dtab);
    ti_host_free(&h);
    ti_host_free(&tab);
}

/* cv2.integral of a u8 image: the int32 sum table (as our U32 one, bit
 * for bit: both are the sums modulo 2^32) and the float64 squared sums. */
static void test_opencv(void **state)
{
    (void)state;
    static const char code[] =
        "import sys, numpy as np, cv2\n"
        "w, h = int(sys.argv[3]), int(sys.argv[4])\n"
        "img = np.fromfile(sys.argv[1], dtype=np.uint8).reshape(h, w)\n"
        "s, sq = cv2.integral2(img, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)\n"
        "with open(sys.argv[2], 'wb') as f:\n"
        "    f.write(s.astype(np.uint32).tobytes()); f.write(sq.tobytes())\n";
    size_t w = 333, h = 217;
    tu_rng r = tu_rng_for(13, 0, 0, 0);
    parsum_image img = ti_host(w, h, 1, PARSUM_U8, 0);
    ti_fill(&r, &img, 0, 255);
    char in[256], out[256], ws[32], hs[32];
    ti_tmpname(in, sizeof in, "cv_in");
    ti_tmpname(out, sizeof out, "cv_out");
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(img.data, 1, w * h, f), w * h);
    fclose(f);
    snprintf(ws, sizeof ws, "%zu", w);
    snprintf(hs, sizeof hs, "%zu", h);
    const char *args[] = {in, out, ws, hs};
    int rc = ti_python_cv2(code, args, 4);
    remove(in);
    if (rc == 77) {
        remove(out);
        skip();
    }
    assert_int_equal(rc, 0);
    size_t n = (w + 1) * (h + 1);
    unsigned char *cv = tu_malloc(n * 12);
    f = fopen(out, "rb");
    assert_non_null(f);
    assert_int_equal(fread(cv, 1, n * 12, f), n * 12);
    fclose(f);
    remove(out);
    parsum_image sum = ti_host(w + 1, h + 1, 1, PARSUM_U32, 0);
    parsum_image sq = ti_host(w + 1, h + 1, 1, PARSUM_F64, 0);
    parsum_image want_sum = sum, want_sq = sq;
    want_sum.data = cv;
    want_sq.data = cv + n * 4;
    parsum_image d = ti_to_ctx(&img, 0);
    parsum_image ds = ti_ctx_like(&sum, 0), dq = ti_ctx_like(&sq, 0);
    TU_OK(parsum_integral(tu_ctx, &d, &ds, 0, NULL));
    TU_OK(parsum_integral(tu_ctx, &d, &dq, PARSUM_INTEGRAL_SQUARED, NULL));
    ti_from_ctx(&sum, &ds);
    ti_from_ctx(&sq, &dq);
    assert_int_equal(ti_compare(&want_sum, &sum, NULL, NULL, "cv2 sum"), 0);
    assert_int_equal(ti_compare(&want_sq, &sq, NULL, NULL, "cv2 sqsum"), 0);
    ti_ctx_free(&d);
    ti_ctx_free(&ds);
    ti_ctx_free(&dq);
    ti_host_free(&img);
    ti_host_free(&sum);
    ti_host_free(&sq);
    free(cv);
}

/* Float tables: the same bits on every run (and, on the CPU, for every
 * thread count). */
static void test_determinism(void **state)
{
    (void)state;
    tu_rng r = tu_rng_for(17, 0, 0, 0);
    parsum_image h = ti_host(1531, 413, 2, PARSUM_F32, 0);
    ti_fill(&r, &h, -1, 1);
    parsum_image t0 = ti_host(1532, 414, 2, PARSUM_F32, 0);
    parsum_image t1 = ti_host(1532, 414, 2, PARSUM_F32, 0);
    parsum_image d = ti_to_ctx(&h, 0), dt = ti_ctx_like(&t0, 0);
    TU_OK(parsum_integral(tu_ctx, &d, &dt, 0, NULL));
    ti_from_ctx(&t0, &dt);
    int threads = tu_backend == PARSUM_BACKEND_CPU ? 3 : 1;
    for (int t = 1; t <= threads; t++) {
        if (tu_backend == PARSUM_BACKEND_CPU)
            TU_OK(parsum_context_set_threads(tu_ctx, t));
        tu_dev_poison(dt.data, dt.pitch * dt.height);
        TU_OK(parsum_integral(tu_ctx, &d, &dt, 0, NULL));
        ti_from_ctx(&t1, &dt);
        assert_int_equal(ti_compare(&t0, &t1, NULL, NULL, "rerun"), 0);
    }
    if (tu_backend == PARSUM_BACKEND_CPU)
        TU_OK(parsum_context_set_threads(tu_ctx, 0));
    ti_ctx_free(&d);
    ti_ctx_free(&dt);
    ti_host_free(&h);
    ti_host_free(&t0);
    ti_host_free(&t1);
}


static void test_errors(void **state)
{
    (void)state;
    parsum_image h = ti_host(8, 6, 1, PARSUM_U8, 0);
    memset(h.data, 1, 48);
    parsum_image s = ti_to_ctx(&h, 0);
    parsum_image tt = ti_host(9, 7, 1, PARSUM_U32, 0);
    parsum_image t = ti_ctx_like(&tt, 0), b;
    TU_OK(parsum_integral(tu_ctx, &s, &t, 0, NULL));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral(NULL, &s, &t, 0, NULL));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral(tu_ctx, NULL, &t, 0, NULL));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral(tu_ctx, &s, NULL, 0, NULL));
    b = s; b.data = NULL;
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.channels = 5;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.channels = 0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.width = 0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.pitch = 7;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = t; b.pitch = 9 * 4 + 2; /* not a multiple of the sample */
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &b, 0, NULL));
    b = t; b.data = (char *)t.data + 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &b, 0, NULL));
    b = s; b.dtype = (parsum_dtype)42;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.dtype = PARSUM_I8;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = t; b.dtype = PARSUM_I32;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_integral(tu_ctx, &s, &b, 0, NULL));
    b = s; b.dtype = PARSUM_F32; b.width = 2; /* f32 image, u32 table */
    b.pitch = 8;
    parsum_image t2 = t; t2.width = 3;
    TI_EXPECT(PARSUM_ERR_DTYPE_OP_MISMATCH, parsum_integral(tu_ctx, &b, &t2, 0, NULL));
    b = s; b.where = (parsum_memspace)7;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = s; b.where = tu_backend == PARSUM_BACKEND_CUDA ? PARSUM_MEM_HOST : PARSUM_MEM_DEVICE;
    TI_EXPECT(PARSUM_ERR_WRONG_MEMORY_SPACE, parsum_integral(tu_ctx, &b, &t, 0, NULL));
    b = t; b.width = 8; /* inclusive size for the default layout */
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &b, 0, NULL));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &t, PARSUM_INTEGRAL_INCLUSIVE, NULL));
    b = t; b.channels = 2;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &b, 0, NULL));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &t, 64, NULL));
    double off = 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &s, &t, 0, &off));
    b = t; b.dtype = PARSUM_F32;
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral(tu_ctx, &s, &b, PARSUM_INTEGRAL_OFFSET_MEAN, NULL));
    /* The table over the image: overlapping memory. */
    char *buf = tu_dev_alloc(512);
    b = s; b.data = buf;
    parsum_image bt = t; bt.data = buf + 8; bt.pitch = 0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral(tu_ctx, &b, &bt, 0, NULL));
    tu_dev_free(buf);
    parsum_rect rc = {0, 0, 2, 2};
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral_box_sums(tu_ctx, &t, 0, NULL, NULL, 1, t.data));
    void *drc = tu_dev_alloc(sizeof rc), *dout = tu_dev_alloc(64);
    tu_upload(drc, &rc, sizeof rc);
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_integral_box_means(tu_ctx, &t, 0, NULL, drc, 1, NULL));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral_box_sums(tu_ctx, &t, 8, NULL, drc, 1, dout));
    b = t; b.width = 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_integral_box_sums(tu_ctx, &b, 0, NULL, drc, 1, dout));
    TU_OK(parsum_integral_box_sums(tu_ctx, &t, 0, NULL, drc, 1, dout));
    uint32_t four = 0;
    tu_download(&four, dout, 4);
    assert_int_equal(four, 4);
    TU_OK(parsum_integral_box_sums(tu_ctx, &t, 0, NULL, NULL, 0, NULL));
    tu_dev_free(drc);
    tu_dev_free(dout);
    ti_ctx_free(&s);
    ti_ctx_free(&t);
    ti_host_free(&h);
    ti_host_free(&tt);
}

PARSUM_TEST_MAIN(test_integral)
{
    tu_init("integral");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes_example),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_u8_tiles),
        cmocka_unit_test(test_offset),
        cmocka_unit_test(test_box_sums),
        cmocka_unit_test(test_offset_precision),
        cmocka_unit_test(test_opencv),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_errors),
    };
    return tu_finish(TU_RUN("integral", tests));
}
