/*
 * test_box_filter.c - parsum_box_filter against the serial reference
 * (src/ref/ref_image.c: each window summed directly) and against OpenCV's
 * cv2.blur as an outside oracle.
 *
 *   reference  every dtype x border mode, radii 0 .. larger than the
 *              image, rx != ry, 1-4 channels, sizes 1 x 1, 1 x N, N x 1,
 *              odd sizes and 1023 x 769, rows with padding; integer means
 *              exact (floor((sum + area / 2) / area)), float ones within
 *              their rounding
 *   opencv     cv2.blur on u8 RGB and f32 images for the four borders it
 *              shares (CONSTANT = ZERO, REPLICATE = CLAMP, REFLECT,
 *              REFLECT_101); OpenCV rounds u8 means its own way, so they
 *              may differ by 1
 *   errors     dtype, shape, border, radius and overlap rules
 */
#include "test_image_util.h"

#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const border_names[] = {"zero", "clamp", "reflect",
                                           "reflect101", "wrap"};

static double fbound(const void *user, size_t x, size_t y, int c)
{
    (void)x, (void)y, (void)c;
    return *(const double *)user;
}

/* The box filter of host image h on the context (source row padding pad
 * bytes, destination dpad) against the reference. */
static size_t run_case_pads(const parsum_image *h, size_t rx, size_t ry,
                            parsum_border border, size_t pad, size_t dpad,
                            const char *what)
{
    parsum_image want = ti_host(h->width, h->height, h->channels, h->dtype, 0);
    parsum_image got = ti_host(h->width, h->height, h->channels, h->dtype,
                               parsum_dtype_size(h->dtype));
    parsum_image d = ti_to_ctx(h, pad), dd = ti_ctx_like(h, dpad);
    TU_OK(parsum_box_filter(tu_ctx, &d, &dd, rx, ry, border));
    ti_from_ctx(&got, &dd);
    parsum__ref_box_filter(h, &want, rx, ry, border);
    double b = h->dtype == PARSUM_F32 ? 2e-6 : 1e-12;
    size_t bad = ti_compare(&want, &got, tu_is_float(h->dtype) ? fbound : NULL,
                            &b, what);
    if (!ti_padding_intact(&got))
        bad++, print_error("%s: row padding written\n", what);
    ti_ctx_free(&d);
    ti_ctx_free(&dd);
    ti_host_free(&want);
    ti_host_free(&got);
    return bad;
}

static size_t run_case(const parsum_image *h, size_t rx, size_t ry,
                       parsum_border border, size_t pad, const char *what)
{
    return run_case_pads(h, rx, ry, border, pad, 2 * pad, what);
}


static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_U16, PARSUM_I32,
                                   PARSUM_F32, PARSUM_F64};

static void test_reference(void **state)
{
    (void)state;
    static const size_t sizes[][2] = {{1, 1}, {300, 1}, {1, 211}, {37, 23},
                                      {130, 67}, {5, 3}};
    static const size_t radii[][2] = {{0, 0}, {1, 1}, {2, 5}, {7, 3},
                                      {15, 15}, {40, 1}, {0, 9}};
    size_t failures = 0, ncase = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t di = 0; di < 5; di++)
            for (int bo = 0; bo < 5; bo++)
                for (size_t ri = 0; ri < sizeof radii / sizeof *radii; ri++) {
                    int ch = 1 + (int)(ncase++ % 4);
                    parsum_dtype dt = dts[di];
                    tu_rng r = tu_rng_for(s, dt, (uint64_t)bo, ri);
                    parsum_image h = ti_host(sizes[s][0], sizes[s][1], ch, dt,
                                             s % 2 ? parsum_dtype_size(dt) : 0);
                    double lo, hi;
                    ti_range(dt, &lo, &hi);
                    ti_fill(&r, &h, lo, hi);
                    char what[160];
                    snprintf(what, sizeof what,
                             "box %s %zux%zu ch %d r %zu,%zu %s",
                             parsum_dtype_name(dt), h.width, h.height, ch,
                             radii[ri][0], radii[ri][1], border_names[bo]);
                    if (run_case(&h, radii[ri][0], radii[ri][1],
                                 (parsum_border)bo, s % 3 ? 8 : 0, what))
                        tu_report(&failures, "%s failed", what);
                    ti_host_free(&h);
                }
    assert_int_equal(failures, 0);
}

static void test_large(void **state)
{
    (void)state;
    static const struct { size_t w, h, rx, ry; parsum_dtype d; int ch; parsum_border b; } cases[] = {
        {1023, 769, 15, 15, PARSUM_U8, 1, PARSUM_BORDER_REFLECT_101},
        {2048, 64, 3, 3, PARSUM_U8, 4, PARSUM_BORDER_CLAMP},
        {700, 300, 5, 2, PARSUM_U16, 3, PARSUM_BORDER_WRAP},
        {700, 300, 4, 6, PARSUM_F32, 1, PARSUM_BORDER_ZERO},
        {513, 257, 9, 1, PARSUM_I32, 2, PARSUM_BORDER_REFLECT},
    };
    size_t failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (tu_quick && i == 0)
            continue;
        tu_rng r = tu_rng_for(23, i, 0, 0);
        parsum_image h = ti_host(cases[i].w, cases[i].h, cases[i].ch,
                                 cases[i].d, 0);
        double lo, hi;
        ti_range(cases[i].d, &lo, &hi);
        ti_fill(&r, &h, lo, hi);
        char what[128];
        snprintf(what, sizeof what, "box %s %zux%zu r %zu,%zu %s",
                 parsum_dtype_name(cases[i].d), h.width, h.height,
                 cases[i].rx, cases[i].ry, border_names[cases[i].b]);
        if (run_case(&h, cases[i].rx, cases[i].ry, cases[i].b, 0, what))
            tu_report(&failures, "%s failed", what);
        ti_host_free(&h);
    }
    assert_int_equal(failures, 0);
}

/* One-channel U8 images at least 256 wide with radii up to 127, the case
 * the GPU takes through its own kernel when rows are 4-byte aligned:
 * strips of 512 loaded columns, full and partial, the first and last strip
 * through the border rule, bands in both directions; all 255 for the
 * largest window sums (255 * 255^2); rows 4-byte aligned and not (the
 * general kernel then), source and destination alike. */
static void test_u8_strips(void **state)
{
    (void)state;
    static const size_t widths[] = {256, 259, 480, 483, 997, 2100};
    static const size_t heights[] = {1, 6, 131};
    static const size_t radii[][2] = {{0, 0},   {1, 1},    {15, 15},
                                      {127, 127}, {127, 0}, {0, 127},
                                      {64, 3},  {2, 70}};
    size_t failures = 0, ncase = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (size_t hi = 0; hi < sizeof heights / sizeof *heights; hi++)
            for (int fill = 0; fill < 2; fill++) {
                const size_t w = widths[wi], h = heights[hi];
                if (tu_quick && fill && hi != 2)
                    continue;
                parsum_image im = ti_host(w, h, 1, PARSUM_U8, 0);
                tu_rng r = tu_rng_for(97, wi, hi, (uint64_t)fill);
                if (fill)
                    memset(im.data, 255, im.pitch * h);
                else
                    ti_fill(&r, &im, 0, 255);
                for (size_t ri = 0; ri < sizeof radii / sizeof *radii; ri++)
                    for (int bo = 0; bo < 5; bo++) {
                        /* The reference's work, h (w + 2 rx) (2 ry + 1) +
                         * h w (2 rx + 1), kept below ~2 * 10^7 a case. */
                        const size_t rx = radii[ri][0], ry = radii[ri][1];
                        if (h * (w + 2 * rx) * (2 * rx + 2 * ry + 2) >
                            (tu_quick ? 5000000u : 20000000u))
                            continue;
                        /* Mostly aligned rows; every seventh case not. */
                        const bool al = ncase++ % 7 != 0;
                        const size_t pad =
                            al ? ti_pad_to(w, 4, 4 * (ncase % 3))
                               : ti_pad_to(w, 4, 1);
                        const size_t dpad = al ? ti_pad_to(w, 4, 0) : 0;
                        char what[160];
                        snprintf(what, sizeof what,
                                 "box u8 %zux%zu %s r %zu,%zu %s pitch %zu/%zu",
                                 w, h, fill ? "all 255" : "random", rx, ry,
                                 border_names[bo],
                                 w + pad, w + dpad);
                        if (run_case_pads(&im, rx, ry, (parsum_border)bo, pad,
                                          dpad, what))
                            tu_report(&failures, "%s failed", what);
                    }
                ti_host_free(&im);
            }
    assert_int_equal(failures, 0);
}

/* cv2.blur with each shared border: argv = in out w h ch depth kx ky
 * border; writes the result raw. */
static const char cv_code[] =
    "import sys, numpy as np, cv2\n"
    "w, h, ch = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])\n"
    "dt = np.uint8 if sys.argv[6] == 'u8' else np.float32\n"
    "img = np.fromfile(sys.argv[1], dtype=dt).reshape(h, w, ch)\n"
    "b = {'zero': cv2.BORDER_CONSTANT, 'clamp': cv2.BORDER_REPLICATE,\n"
    "     'reflect': cv2.BORDER_REFLECT, 'reflect101': cv2.BORDER_REFLECT_101}[sys.argv[9]]\n"
    "out = cv2.blur(img, (int(sys.argv[7]), int(sys.argv[8])), borderType=b)\n"
    "out.reshape(h, w, ch).astype(dt).tofile(sys.argv[2])\n";

static void opencv_case(parsum_dtype dt, int ch, size_t rx, size_t ry,
                        parsum_border bo, size_t *failures)
{
    size_t w = 211, h = 157, ss = parsum_dtype_size(dt);
    size_t bytes = w * h * (size_t)ch * ss;
    tu_rng r = tu_rng_for(29, dt, rx, (uint64_t)bo);
    parsum_image img = ti_host(w, h, ch, dt, 0);
    ti_fill(&r, &img, dt == PARSUM_U8 ? 0 : -1, dt == PARSUM_U8 ? 255 : 1);
    char in[256], out[256], a[6][32];
    ti_tmpname(in, sizeof in, "cvb_in");
    ti_tmpname(out, sizeof out, "cvb_out");
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(img.data, 1, bytes, f), bytes);
    fclose(f);
    snprintf(a[0], 32, "%zu", w);
    snprintf(a[1], 32, "%zu", h);
    snprintf(a[2], 32, "%d", ch);
    snprintf(a[3], 32, "%s", dt == PARSUM_U8 ? "u8" : "f32");
    snprintf(a[4], 32, "%zu", 2 * rx + 1);
    snprintf(a[5], 32, "%zu", 2 * ry + 1);
    const char *args[] = {in, out, a[0], a[1], a[2], a[3], a[4], a[5],
                          border_names[bo]};
    int rc = ti_python_cv2(cv_code, args, 9);
    remove(in);
    if (rc == 77) {
        remove(out);
        ti_host_free(&img);
        skip();
    }
    assert_int_equal(rc, 0);
    parsum_image want = ti_host(w, h, ch, dt, 0), got = ti_host(w, h, ch, dt, 0);
    f = fopen(out, "rb");
    assert_non_null(f);
    assert_int_equal(fread(want.data, 1, bytes, f), bytes);
    fclose(f);
    remove(out);
    parsum_image d = ti_to_ctx(&img, 0), dd = ti_ctx_like(&img, 0);
    TU_OK(parsum_box_filter(tu_ctx, &d, &dd, rx, ry, bo));
    ti_from_ctx(&got, &dd);
    size_t bad = 0;
    for (size_t i = 0; i < w * h * (size_t)ch; i++) {
        double x = tu_get(dt, want.data, i), y = tu_get(dt, got.data, i);
        double tol = dt == PARSUM_U8 ? 1 : 1e-5;
        if (fabs(x - y) > tol && bad++ < TU_MAX_REPORTS)
            print_error("cv2.blur %s r %zu,%zu %s: sample %zu: cv2 %g, parsum "
                        "%g\n",
                        parsum_dtype_name(dt), rx, ry, border_names[bo], i, x,
                        y);
    }
    if (bad)
        tu_report(failures, "cv2.blur %s %s: %zu samples differ",
                  parsum_dtype_name(dt), border_names[bo], bad);
    ti_ctx_free(&d);
    ti_ctx_free(&dd);
    ti_host_free(&img);
    ti_host_free(&want);
    ti_host_free(&got);
}

static void test_opencv(void **state)
{
    (void)state;
    size_t failures = 0;
    for (int bo = 0; bo < 4; bo++) {
        opencv_case(PARSUM_U8, 3, 3, 2, (parsum_border)bo, &failures);
        opencv_case(PARSUM_U8, 1, 7, 7, (parsum_border)bo, &failures);
        opencv_case(PARSUM_F32, 1, 2, 4, (parsum_border)bo, &failures);
    }
    assert_int_equal(failures, 0);
}


static void test_errors(void **state)
{
    (void)state;
    parsum_image h = ti_host(8, 6, 2, PARSUM_U8, 0);
    memset(h.data, 3, 96);
    parsum_image s = ti_to_ctx(&h, 0), d = ti_ctx_like(&h, 0), b;
    TU_OK(parsum_box_filter(tu_ctx, &s, &d, 1, 2, PARSUM_BORDER_CLAMP));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_box_filter(NULL, &s, &d, 1, 1, 0));
    TI_EXPECT(PARSUM_ERR_NULL_POINTER, parsum_box_filter(tu_ctx, &s, NULL, 1, 1, 0));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s, &d, 1, 1, (parsum_border)5));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s, &d, (1u << 14) + 1, 1, 0));
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s, &s, 1, 1, 0));
    b = d; b.width = 7;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s, &b, 1, 1, 0));
    b = d; b.channels = 1;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s, &b, 1, 1, 0));
    b = d; b.dtype = PARSUM_I8;
    parsum_image s8 = s; s8.dtype = PARSUM_I8;
    TI_EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_box_filter(tu_ctx, &s8, &b, 1, 1, 0));
    b = d; b.height = 3; b.data = (char *)s.data + 16; b.pitch = 16;
    parsum_image s3 = s; s3.height = 3;
    TI_EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_box_filter(tu_ctx, &s3, &b, 1, 1, 0));
    b = s; b.where = tu_backend == PARSUM_BACKEND_CUDA ? PARSUM_MEM_HOST : PARSUM_MEM_DEVICE;
    TI_EXPECT(PARSUM_ERR_WRONG_MEMORY_SPACE, parsum_box_filter(tu_ctx, &b, &d, 1, 1, 0));
    /* Radius 16384 on a tiny image is valid: the border rule repeats. */
    TU_OK(parsum_box_filter(tu_ctx, &s, &d, 1u << 14, 0, PARSUM_BORDER_WRAP));
    unsigned char out[96];
    ti_from_ctx(&(parsum_image){out, 8, 6, 0, 2, PARSUM_U8, PARSUM_MEM_HOST}, &d);
    for (int i = 0; i < 96; i++)
        assert_int_equal(out[i], 3);
    ti_ctx_free(&s);
    ti_ctx_free(&d);
    ti_host_free(&h);
}

PARSUM_TEST_MAIN(test_box_filter)
{
    tu_init("box_filter");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_u8_strips),
        cmocka_unit_test(test_opencv),
        cmocka_unit_test(test_errors),
    };
    return tu_finish(TU_RUN("box_filter", tests));
}
