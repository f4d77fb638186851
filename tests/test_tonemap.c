/*
 * test_tonemap.c - parsum_tonemap against the float64 serial reference
 * (src/ref/ref_tonemap.c) and against properties that need no reference.
 *
 *   reference    a generated HDR image (a gradient over 6 decades of
 *                luminance with colour, black pixels, a few very bright
 *                ones, negative samples), 1-4 channels, src f32 / f64 /
 *                u8 / u16, dst u8 / u16 (within one u8 step) and f32
 *                (within a small bound), with and without Ward, several
 *                bin counts, pitched images on both sides, a 1 x N and an
 *                N x 1 image
 *   equalise     a grey ramp uniform in log luminance maps to about its
 *                rank (histogram equalisation), without the reference
 *   ward linear  a scene of one decade on a 100:1 display: Ward's ceiling
 *                gives up and the mapping is L / Lmax
 *   special      constant and all-black images (values computed here),
 *                negative samples equal to zeros, alpha copied and
 *                clipped, determinism (two runs bit-identical)
 *   cpu vs cuda  on a CUDA context, the same scene tone-mapped by a CPU
 *                context too: the two within one u8 step of each other
 *   bad pixels   NaN and infinite samples (alpha too) named by position
 *   errors       every argument rule
 */
#include "test_image_util.h"

#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(const parsum_image *im, size_t x, size_t y, int c, double v)
{
    tu_set(im->dtype, ti_at(im, x, y, c), 0, v);
}

static double get(const parsum_image *im, size_t x, size_t y, int c)
{
    return tu_get(im->dtype, ti_at(im, x, y, c), 0);
}

/* The test scene: luminance 10^-3 .. 10^3 along x, colour changing along
 * y, every 13th pixel black, every 101st a bright 10^5 spot, one pixel in
 * 29 with a negative colour sample, alpha from -0.2 to 1.2 (clipped). For
 * integer dtypes the same shape scaled into their range (an LDR image). */
static void fill_scene(const parsum_image *im)
{
    const size_t w = im->width, h = im->height;
    const bool flt = tu_is_float(im->dtype);
    const double full = im->dtype == PARSUM_U8 ? 255.0 : 65535.0;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            size_t i = y * w + x;
            double u = w > 1 ? (double)x / (double)(w - 1) : 0.5;
            double v = h > 1 ? (double)y / (double)(h - 1) : 0.5;
            double base = flt ? pow(10.0, -3.0 + 6.0 * u) : u * u * full;
            double rgb[3] = {base * (0.3 + 0.7 * v), base * (1.0 - 0.5 * v),
                             base * (0.2 + 0.8 * (1.0 - v))};
            if (i % 13 == 5)
                rgb[0] = rgb[1] = rgb[2] = 0.0;
            if (i % 101 == 7 && flt)
                rgb[0] = rgb[1] = rgb[2] = 1e5;
            if (i % 29 == 3)
                rgb[1] = flt ? -rgb[1] : 0.0;
            if (!flt)
                for (int k = 0; k < 3; k++)
                    rgb[k] = floor(rgb[k] < full ? rgb[k] : full);
            int nc = im->channels >= 3 ? 3 : 1;
            for (int k = 0; k < nc; k++)
                put(im, x, y, k, nc == 3 ? rgb[k] : rgb[1]);
            if (im->channels == 2 || im->channels == 4) {
                double a = -0.2 + 1.4 * (double)((x + y) % 8) / 7.0;
                put(im, x, y, nc, flt ? a : floor(fmin(fmax(a, 0), 1) * full));
            }
        }
}

/* Counts a failure, printing only the first few. */
static void report(size_t *fails, const char *what, size_t x, size_t y,
                   double got, double want)
{
    if ((*fails)++ < TU_MAX_REPORTS)
        print_error("%s: (x %zu, y %zu) = %g, want %g\n", what, x, y, got,
                    want);
}

/* Tone-maps host image h on the context (src with padding spad, dst with
 * padding dpad) into a new host image of dtype dt. */
static parsum_image run_tonemap(const parsum_image *h, parsum_dtype dt,
                                const parsum_tonemap_params *p, size_t spad,
                                size_t dpad)
{
    parsum_image got = ti_host(h->width, h->height, h->channels, dt,
                               parsum_dtype_size(dt));
    parsum_image d = ti_to_ctx(h, spad), dd = ti_ctx_like(&got, dpad);
    TU_OK(parsum_tonemap(tu_ctx, &d, &dd, p));
    ti_from_ctx(&got, &dd);
    ti_ctx_free(&d);
    ti_ctx_free(&dd);
    return got;
}

/* One case against the reference; returns the mismatches. */
static size_t check_case(const parsum_image *h, parsum_dtype dt,
                         const parsum_tonemap_params *p, size_t spad,
                         size_t dpad, const char *what, double *worst)
{
    parsum_image want = ti_host(h->width, h->height, h->channels, dt, 0);
    uint64_t bad = 0;
    assert_int_equal(parsum__ref_tonemap(h, &want, p, &bad), PARSUM_OK);
    parsum_image got = run_tonemap(h, dt, p, spad, dpad);
    double bound = dt == PARSUM_U8 ? 1.0 : dt == PARSUM_U16 ? 257.0 : 1e-4;
    size_t fails = 0;
    for (size_t y = 0; y < h->height; y++)
        for (size_t x = 0; x < h->width; x++)
            for (int c = 0; c < h->channels; c++) {
                double g = get(&got, x, y, c), wv = get(&want, x, y, c);
                double e = fabs(g - wv);
                if (e > *worst)
                    *worst = e;
                if (!(e <= bound) && fails++ < TU_MAX_REPORTS)
                    print_error("%s: (x %zu, y %zu, c %d): want %g, got %g "
                                "(bound %g)\n",
                                what, x, y, c, wv, g, bound);
            }
    if (!ti_padding_intact(&got))
        fails++, print_error("%s: row padding written\n", what);
    ti_host_free(&want);
    ti_host_free(&got);
    return fails;
}

static void test_reference(void **state)
{
    (void)state;
    static const size_t sizes[][2] = {{97, 61}, {1, 300}, {257, 1}, {33, 20}};
    static const parsum_dtype sdts[] = {PARSUM_F32, PARSUM_F64, PARSUM_U8,
                                        PARSUM_U16};
    static const parsum_dtype ddts[] = {PARSUM_U8, PARSUM_U16, PARSUM_F32};
    static const size_t bins[] = {0, 1, 7, 256};
    size_t fails = 0, ncase = 0;
    double worst[3] = {0, 0, 0};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t si = 0; si < 4; si++)
            for (int ch = 1; ch <= 4; ch++)
                for (int ward = 0; ward < 2; ward++) {
                    parsum_dtype sd = sdts[si];
                    size_t ss = parsum_dtype_size(sd);
                    parsum_image h = ti_host(sizes[s][0], sizes[s][1], ch, sd,
                                             (ncase % 3) * ss);
                    fill_scene(&h);
                    for (size_t di = 0; di < 3; di++) {
                        parsum_tonemap_params p = {
                            bins[(ncase + di) % 4],
                            ward ? PARSUM_TONEMAP_WARD : 0u, 0.0,
                            ncase % 2 ? 0.0 : 300.0};
                        char what[160];
                        snprintf(what, sizeof what,
                                 "tonemap %zu x %zu x %d %s -> %s, %s, "
                                 "nbins %zu, contrast %g",
                                 h.width, h.height, ch, parsum_dtype_name(sd),
                                 parsum_dtype_name(ddts[di]),
                                 ward ? "ward" : "plain", p.nbins,
                                 p.display_contrast);
                        size_t sp = (ncase % 2) * ss * 3;
                        size_t dp = ((ncase + 1) % 2) *
                                    parsum_dtype_size(ddts[di]) * 5;
                        fails += check_case(&h, ddts[di], &p, sp, dp, what,
                                            &worst[di]);
                    }
                    ncase++;
                    ti_host_free(&h);
                }
    printf("largest difference from the reference: u8 %g, u16 %g, f32 %g\n",
           worst[0], worst[1], worst[2]);
    assert_int_equal(fails, 0);
}

/* A grey ramp, strictly increasing and uniform in log luminance: plain
 * equalisation maps pixel i of N to about i / (N - 1). */
static void test_equalise(void **state)
{
    (void)state;
    const size_t n = 4000;
    parsum_image h = ti_host(n, 1, 1, PARSUM_F32, 0);
    for (size_t i = 0; i < n; i++)
        put(&h, i, 0, 0, pow(10.0, -4.0 + 8.0 * (double)i / (double)(n - 1)));
    parsum_tonemap_params p = {1000, 0, 0.0, 0.0};
    parsum_image got = run_tonemap(&h, PARSUM_F32, &p, 0, 0);
    size_t fails = 0;
    for (size_t i = 0; i < n; i++) {
        double want = (double)i / (double)(n - 1), v = get(&got, i, 0, 0);
        if (fabs(v - want) > 2e-3)
            report(&fails, "equalise", i, 0, v, want);
    }
    ti_host_free(&got);
    ti_host_free(&h);
    assert_int_equal(fails, 0);
}

/* A scene of 0.3 decades (a factor 2) on a 1000:1 display: the ceilings
 * of all bins add up to a tenth of the total, so each round of Ward's
 * trimming keeps at most a tenth of the histogram, and after two rounds
 * it is below the 2.5 % tolerance: Ward gives up and maps linearly,
 * Ld = L / Lmax. */
static void test_ward_linear(void **state)
{
    (void)state;
    const size_t w = 50, hgt = 40;
    parsum_image h = ti_host(w, hgt, 1, PARSUM_F64, 0);
    tu_rng r = tu_rng_for(77, 1, 2, 3);
    double lmax = 0;
    for (size_t y = 0; y < hgt; y++)
        for (size_t x = 0; x < w; x++) {
            double l = 2.0 * pow(10.0, 0.3 * tu_uniform(&r));
            put(&h, x, y, 0, l);
            lmax = fmax(lmax, l);
        }
    parsum_tonemap_params p = {0, PARSUM_TONEMAP_WARD, 0.0, 1000.0};
    parsum_image got = run_tonemap(&h, PARSUM_F32, &p, 0, 0);
    size_t fails = 0;
    for (size_t y = 0; y < hgt; y++)
        for (size_t x = 0; x < w; x++) {
            double want = get(&h, x, y, 0) / lmax, v = get(&got, x, y, 0);
            if (fabs(v - want) > 1e-5)
                report(&fails, "ward linear", x, y, v, want);
        }
    ti_host_free(&got);
    ti_host_free(&h);
    assert_int_equal(fails, 0);
}

/* Constant images: every non-black pixel gets Ld = 1, colours c / L. */
static void test_constant(void **state)
{
    (void)state;
    const double rgb[3] = {0.25, 0.5, 0.125};
    const double lum = 0.2126 * 0.25 + 0.7152 * 0.5 + 0.0722 * 0.125;
    size_t fails = 0;
    for (int ch = 1; ch <= 4; ch++)
        for (int ward = 0; ward < 2; ward++) {
            parsum_image h = ti_host(9, 7, ch, PARSUM_F32, 4);
            int nc = ch >= 3 ? 3 : 1;
            for (size_t y = 0; y < 7; y++)
                for (size_t x = 0; x < 9; x++) {
                    for (int k = 0; k < nc; k++)
                        put(&h, x, y, k, (x + y) % 4 == 1 ? 0.0
                                         : nc == 3 ? 40.0 * rgb[k] : 40.0);
                    if (nc < ch)
                        put(&h, x, y, nc, 0.5);
                }
            parsum_tonemap_params p = {0, ward ? PARSUM_TONEMAP_WARD : 0u, 0,
                                       0};
            parsum_image got = run_tonemap(&h, PARSUM_F32, &p, 8, 0);
            for (size_t y = 0; y < 7; y++)
                for (size_t x = 0; x < 9; x++) {
                    for (int k = 0; k < nc; k++) {
                        double want = (x + y) % 4 == 1 ? 0.0
                                      : nc == 3 ? fmin(rgb[k] / lum, 1.0)
                                                : 1.0;
                        if (fabs(get(&got, x, y, k) - want) > 1e-6)
                            report(&fails, "constant", x, y, get(&got, x, y, k), want);
                    }
                    if (nc < ch && get(&got, x, y, nc) != 0.5)
                        report(&fails, "constant: alpha", x, y, get(&got, x, y, nc), 0.5);
                }
            ti_host_free(&got);
            ti_host_free(&h);
        }
    assert_int_equal(fails, 0);
}

/* All black (zeros, negatives, luminance at min_luminance): every colour
 * 0, alpha copied (scaled to u8, clipped). */
static void test_black(void **state)
{
    (void)state;
    parsum_image h = ti_host(13, 5, 4, PARSUM_F32, 0);
    for (size_t y = 0; y < 5; y++)
        for (size_t x = 0; x < 13; x++) {
            for (int k = 0; k < 3; k++)
                put(&h, x, y, k, x % 3 == 0 ? 0.0 : x % 3 == 1 ? -5.0 : 1e-3);
            put(&h, x, y, 3, (double)x / 8.0 - 0.25);
        }
    parsum_tonemap_params p = {0, 0, 2e-3, 0};
    size_t fails = 0;
    for (int ward = 0; ward < 2; ward++) {
        p.flags = ward ? PARSUM_TONEMAP_WARD : 0u;
        parsum_image got = run_tonemap(&h, PARSUM_U8, &p, 0, 12);
        for (size_t y = 0; y < 5; y++)
            for (size_t x = 0; x < 13; x++) {
                for (int k = 0; k < 3; k++)
                    if (get(&got, x, y, k) != 0)
                        report(&fails, "black", x, y, get(&got, x, y, k), 0.0);
                double a = fmin(fmax((double)x / 8.0 - 0.25, 0.0), 1.0);
                if (get(&got, x, y, 3) != floor(a * 255.0 + 0.5))
                    report(&fails, "black: alpha", x, y, get(&got, x, y, 3),
                           floor(a * 255.0 + 0.5));
            }
        ti_host_free(&got);
    }
    ti_host_free(&h);
    assert_int_equal(fails, 0);
}

/* Negative samples count as 0: bit-identical to the image with zeros.
 * And two runs give the same bits. */
static void test_negative_and_determinism(void **state)
{
    (void)state;
    size_t fails = 0;
    for (int ward = 0; ward < 2; ward++) {
        parsum_image h = ti_host(64, 48, 3, PARSUM_F32, 0);
        parsum_image z = ti_host(64, 48, 3, PARSUM_F32, 0);
        fill_scene(&h);
        fill_scene(&z);
        for (size_t y = 0; y < 48; y++)
            for (size_t x = 0; x < 64; x++)
                for (int k = 0; k < 3; k++)
                    if (get(&z, x, y, k) < 0)
                        put(&z, x, y, k, 0.0);
        parsum_tonemap_params p = {0, ward ? PARSUM_TONEMAP_WARD : 0u, 0, 0};
        parsum_image a = run_tonemap(&h, PARSUM_U16, &p, 0, 0);
        parsum_image b = run_tonemap(&z, PARSUM_U16, &p, 4, 2);
        parsum_image c = run_tonemap(&h, PARSUM_U16, &p, 0, 0);
        fails += ti_compare(&a, &b, NULL, NULL, "negative samples as zeros");
        fails += ti_compare(&a, &c, NULL, NULL, "two runs");
        ti_host_free(&a);
        ti_host_free(&b);
        ti_host_free(&c);
        ti_host_free(&h);
        ti_host_free(&z);
    }
    assert_int_equal(fails, 0);
}

/* NaN or infinity in any sample, alpha included: INVALID_ARGUMENT naming
 * the first such pixel (row-major). */
/* The CUDA result against the CPU backend's on the same scene (each is
 * also checked against the reference above; this checks them directly). */
static void test_cpu_vs_cuda(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CUDA)
        skip();
    parsum_context *cpu = NULL;
    assert_int_equal(parsum_context_create(&cpu, PARSUM_BACKEND_CPU),
                     PARSUM_OK);
    size_t fails = 0;
    for (int ward = 0; ward < 2; ward++) {
        parsum_image h = ti_host(640, 480, 3, PARSUM_F32, 0);
        fill_scene(&h);
        parsum_tonemap_params p = {1024, ward ? PARSUM_TONEMAP_WARD : 0u,
                                   0.0, 0.0};
        parsum_image on_cpu = ti_host(h.width, h.height, 3, PARSUM_U8, 0);
        assert_int_equal(parsum_tonemap(cpu, &h, &on_cpu, &p), PARSUM_OK);
        parsum_image on_gpu = run_tonemap(&h, PARSUM_U8, &p, 0, 0);
        for (size_t y = 0; y < h.height; y++)
            for (size_t x = 0; x < h.width; x++)
                for (int c = 0; c < 3; c++) {
                    double a = get(&on_cpu, x, y, c), b = get(&on_gpu, x, y, c);
                    if (fabs(a - b) > 1.0)
                        report(&fails, ward ? "cpu vs cuda, ward" : "cpu vs cuda",
                               x, y, b, a);
                }
        ti_host_free(&h);
        ti_host_free(&on_cpu);
        ti_host_free(&on_gpu);
    }
    parsum_context_destroy(cpu);
    assert_int_equal(fails, 0);
}

static void test_bad_pixels(void **state)
{
    (void)state;
    static const struct {
        int ch, c;
        size_t x, y;
        double v;
        parsum_dtype dt;
    } cases[] = {{3, 1, 5, 3, NAN, PARSUM_F32},
                 {1, 0, 0, 0, INFINITY, PARSUM_F64},
                 {4, 3, 16, 9, NAN, PARSUM_F32},
                 {2, 0, 2, 7, -INFINITY, PARSUM_F64},
                 {3, 2, 16, 9, -INFINITY, PARSUM_F32}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        parsum_image h = ti_host(17, 10, cases[i].ch, cases[i].dt, 0);
        fill_scene(&h);
        put(&h, cases[i].x, cases[i].y, cases[i].c, cases[i].v);
        /* A later bad pixel, which must not be the one named. */
        put(&h, 16, 9, 0, NAN);
        parsum_image hd = ti_host(17, 10, cases[i].ch, PARSUM_U8, 0);
        parsum_image d = ti_to_ctx(&h, 0), dd = ti_ctx_like(&hd, 0);
        TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT,
                  parsum_tonemap(tu_ctx, &d, &dd, NULL));
        char want[64];
        snprintf(want, sizeof want, "(x %zu, y %zu)", cases[i].x, cases[i].y);
        if (strstr(parsum_last_error(tu_ctx), want) == NULL) {
            print_error("bad pixel case %zu: message '%s' does not name %s\n",
                        i, parsum_last_error(tu_ctx), want);
            fail();
        }
        uint64_t bad = 0;
        assert_int_equal(parsum__ref_tonemap(&h, &hd, NULL, &bad),
                         PARSUM_ERR_INVALID_ARGUMENT);
        assert_int_equal(bad, cases[i].y * 17 + cases[i].x);
        ti_ctx_free(&d);
        ti_ctx_free(&dd);
        ti_host_free(&hd);
        ti_host_free(&h);
    }
}

static void test_errors(void **state)
{
    (void)state;
    parsum_image hs = ti_host(8, 6, 3, PARSUM_F32, 0);
    fill_scene(&hs);
    parsum_image hd = ti_host(8, 6, 3, PARSUM_U8, 0);
    parsum_image s = ti_to_ctx(&hs, 0), d = ti_ctx_like(&hd, 0), b;
    parsum_tonemap_params p = {0, 0, 0, 0};
    TI_EXPECT(PARSUM_OK, parsum_tonemap(tu_ctx, &s, &d, &p));
    TI_EXPECT(PARSUM_OK, parsum_tonemap(tu_ctx, &s, &d, NULL));
    assert_int_equal(parsum_tonemap(NULL, &s, &d, NULL),
                     PARSUM_ERR_NULL_POINTER);
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_tonemap(tu_ctx, NULL, &d, NULL));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_tonemap(tu_ctx, &s, NULL, NULL));
    b = s; b.data = NULL;
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_tonemap(tu_ctx, &b, &d, NULL));
    /* dtypes */
    b = s; b.dtype = PARSUM_I32;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_tonemap(tu_ctx, &b, &d, NULL));
    b = s; b.dtype = (parsum_dtype)99;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_tonemap(tu_ctx, &b, &d, NULL));
    b = d; b.dtype = PARSUM_F64; b.width = b.height = 1; b.pitch = 0;
    parsum_image s2 = s; s2.width = s2.height = 1; /* b fits in d */
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_tonemap(tu_ctx, &s2, &b, NULL));
    b = d; b.dtype = PARSUM_I8;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_tonemap(tu_ctx, &s, &b, NULL));
    /* shapes */
    b = d; b.width = 7;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &b, NULL));
    b = d; b.height = 5;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &b, NULL));
    b = d; b.channels = 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &b, NULL));
    b = d; b.channels = 5;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &b, NULL));
    b = s; b.width = 0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &b, &d, NULL));
    b = s; b.pitch = 5;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &b, &d, NULL));
    /* parameters */
    parsum_tonemap_params q = p;
    q.nbins = ((size_t)1 << 20) + 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q.nbins = (size_t)1 << 20;
    TI_EXPECT(PARSUM_OK, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.flags = 2;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.min_luminance = -1e-3;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.min_luminance = NAN;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.min_luminance = INFINITY;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.display_contrast = 1.0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.display_contrast = -100.0;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.display_contrast = NAN;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    q = p; q.display_contrast = INFINITY;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &d, &q));
    /* overlap: dst over src's own pixels */
    b = s; b.dtype = PARSUM_U8; b.pitch = s.pitch;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_tonemap(tu_ctx, &s, &b, NULL));
    /* memory space */
    b = s; b.where = tu_backend == PARSUM_BACKEND_CUDA ? PARSUM_MEM_HOST
                                                      : PARSUM_MEM_DEVICE;
    TI_EXPECT(PARSUM_ERR_WRONG_MEMORY_SPACE,
              parsum_tonemap(tu_ctx, &b, &d, NULL));
    b = d; b.where = tu_backend == PARSUM_BACKEND_CUDA ? PARSUM_MEM_HOST
                                                      : PARSUM_MEM_DEVICE;
    TI_EXPECT(PARSUM_ERR_WRONG_MEMORY_SPACE,
              parsum_tonemap(tu_ctx, &s, &b, NULL));
    /* The context still works after every error. */
    TI_EXPECT(PARSUM_OK, parsum_tonemap(tu_ctx, &s, &d, NULL));
    ti_ctx_free(&s);
    ti_ctx_free(&d);
    ti_host_free(&hs);
    ti_host_free(&hd);
}

PARSUM_TEST_MAIN(test_tonemap)
{
    tu_init("tonemap");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_equalise),
        cmocka_unit_test(test_ward_linear),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_black),
        cmocka_unit_test(test_negative_and_determinism),
        cmocka_unit_test(test_cpu_vs_cuda),
        cmocka_unit_test(test_bad_pixels),
        cmocka_unit_test(test_errors),
    };
    return tu_finish(TU_RUN("tonemap", tests));
}
