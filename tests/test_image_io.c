/*
 * test_image_io.c - parsum_image_read and parsum_image_write (host only:
 * runs on a CPU context whatever PARSUM_TEST_BACKEND says).
 *
 *   round trips  PNG u8/u16 with 1-4 channels, PGM/PPM u8/u16, PFM f32
 *                with 1 and 3 channels (infinities, NaN, -0, subnormals
 *                kept bit for bit), Radiance HDR (RGBE: within 1/128 of
 *                the pixel's largest channel; flat and run-length widths),
 *                JPEG (lossy: small mean and maximum error on smooth
 *                images); every writer from packed and from pitched
 *                images (padding poisoned, so reading it would show)
 *   by hand      files written byte by byte: PFM rows bottom-up in both
 *                byte orders, PGM/PPM headers with comments, CR LF and
 *                maxval 15 / 255 / 1000
 *   opencv       files parsum writes read by cv2.imread, and files
 *                cv2.imwrite makes read by parsum (skipped without
 *                python3-opencv)
 *   errors       missing file and directory (IO), unknown extensions and
 *                dtype/channel counts a format cannot hold, descriptor
 *                errors, /dev/full (IO); truncations of valid files of
 *                every format at many lengths, garbage after every magic
 *                number, random byte changes in valid files, headers
 *                declaring huge images, bad maxval and PFM scales
 *                (BAD_FILE, never a crash)
 * Built without stb, PNG, JPEG and HDR must answer PARSUM_ERR_UNSUPPORTED.
 */
#include "test_image_io_util.h"

#include "io/image_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes im to <directory>/name, reads it back and compares exactly; returns
 * the number of mismatching samples. */
static size_t roundtrip_exact(const char *name, const parsum_image *im)
{
    char path[TIO_PATH_LEN], what[600];
    parsum_image back;
    TU_OK(parsum_image_write(tu_ctx, tio_path(name, path), im));
    TU_OK(parsum_image_read(tu_ctx, path, &back));
    tio_check_shape(&back, im->width, im->height, im->channels, im->dtype);
    snprintf(what, sizeof what, "%s (%zu x %zu x %d %s, pitch %zu)", name,
             im->width, im->height, im->channels,
             parsum_dtype_name(im->dtype), im->pitch);
    size_t bad = ti_compare(im, &back, NULL, NULL, what);
    parsum_image_free(tu_ctx, &back);
    assert_null(back.data);
    remove(path);
    return bad;
}

static const size_t shapes[][3] = {
    /* width, height, padding in samples */
    {1, 1, 0}, {7, 3, 0}, {33, 17, 3}, {64, 9, 1}, {1, 40, 2}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* Exact round trips of ext for the dtypes and channel counts given. */
static void roundtrips(const char *ext, const parsum_dtype *dts, size_t ndt,
                       const int *chs, size_t nch)
{
    size_t failures = 0;
    for (size_t di = 0; di < ndt; di++)
        for (size_t ci = 0; ci < nch; ci++)
            for (size_t s = 0; s < NSHAPES; s++)
                for (int smooth = 0; smooth < 2; smooth++) {
                    size_t pad = shapes[s][2] * parsum_dtype_size(dts[di]);
                    parsum_image im =
                        tio_image(shapes[s][0], shapes[s][1], chs[ci],
                                   dts[di], pad, smooth, s);
                    char name[32];
                    snprintf(name, sizeof name, "rt.%s", ext);
                    failures += roundtrip_exact(name, &im) != 0;
                    ti_host_free(&im);
                }
    assert_int_equal(failures, 0);
}

static void test_pnm_roundtrip(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_U16};
    roundtrips("pgm", dts, 2, (const int[]){1}, 1);
    roundtrips("ppm", dts, 2, (const int[]){3}, 1);
    roundtrips("PGM", dts, 2, (const int[]){1}, 1); /* case-insensitive */
}

static void test_pfm_roundtrip(void **state)
{
    (void)state;
    roundtrips("pfm", (const parsum_dtype[]){PARSUM_F32}, 1,
               (const int[]){1, 3}, 2);
    /* Values whose bits must survive. */
    static const float special[] = {INFINITY, -INFINITY, NAN,     -0.0f,
                                    1e-40f,   -3.4e38f,  1.0f / 3, 0.0f};
    parsum_image im = ti_host(4, 2, 1, PARSUM_F32, 8);
    for (int i = 0; i < 8; i++)
        memcpy(ti_at(&im, (size_t)i % 4, (size_t)i / 4, 0), &special[i], 4);
    assert_int_equal(roundtrip_exact("special.pfm", &im), 0);
    ti_host_free(&im);
}

/* A PFM file written byte by byte: rows bottom-up, either byte order. */
static void test_pfm_by_hand(void **state)
{
    (void)state;
    char path[TIO_PATH_LEN];
    unsigned char buf[64];
    /* Grey 2 x 3, little-endian: file rows hold 0 1 | 2 3 | 4 5 from the
     * bottom row up. */
    size_t n = (size_t)sprintf((char *)buf, "Pf\n2 3\n-1.0\n");
    for (int i = 0; i < 6; i++) {
        float v = (float)i;
        uint32_t bits;
        memcpy(&bits, &v, 4);
        for (int b = 0; b < 4; b++)
            buf[n++] = (unsigned char)(bits >> (8 * b));
    }
    tio_put(tio_path("hand_le.pfm", path), buf, n);
    parsum_image img;
    TU_OK(parsum_image_read(tu_ctx, path, &img));
    tio_check_shape(&img, 2, 3, 1, PARSUM_F32);
    const float *p = img.data;
    static const float want_le[6] = {4, 5, 2, 3, 0, 1};
    for (int i = 0; i < 6; i++)
        assert_true(p[i] == want_le[i]);
    parsum_image_free(tu_ctx, &img);
    /* RGB 1 x 2, big-endian (positive scale 2.5): bottom pixel (1, 2, 3),
     * top pixel (-4, 0.5, 1e6). */
    static const float vals[6] = {1, 2, 3, -4, 0.5f, 1e6f};
    n = (size_t)sprintf((char *)buf, "PF\n1 2\n2.5\n");
    for (int i = 0; i < 6; i++) {
        uint32_t bits;
        memcpy(&bits, &vals[i], 4);
        for (int b = 3; b >= 0; b--)
            buf[n++] = (unsigned char)(bits >> (8 * b));
    }
    tio_put(tio_path("hand_be.pfm", path), buf, n);
    TU_OK(parsum_image_read(tu_ctx, path, &img));
    tio_check_shape(&img, 1, 2, 3, PARSUM_F32);
    p = img.data;
    static const float want_be[6] = {-4, 0.5f, 1e6f, 1, 2, 3};
    for (int i = 0; i < 6; i++)
        assert_true(p[i] == want_be[i]);
    parsum_image_free(tu_ctx, &img);
    remove(path);
    remove(tio_path("hand_le.pfm", path));
}

static void test_pnm_by_hand(void **state)
{
    (void)state;
    parsum_image img;
    /* Comments, CR LF and tabs in the header; maxval 15 stays as stored. */
    static const char p5[] = "P5 # a comment\r\n# another\n3\t2\r\n15\n"
                             "\x00\x01\x0f\x07\x08\x09";
    TU_OK(tio_read_bytes("c.pgm", p5, sizeof p5 - 1, &img));
    tio_check_shape(&img, 3, 2, 1, PARSUM_U8);
    assert_memory_equal(img.data, "\x00\x01\x0f\x07\x08\x09", 6);
    parsum_image_free(tu_ctx, &img);
    /* maxval 1000: two bytes big-endian per sample. */
    static const char p6[] = "P6\n1 1\n1000\n\x03\xe8\x00\x01\x01\x00";
    TU_OK(tio_read_bytes("w.ppm", p6, sizeof p6 - 1, &img));
    tio_check_shape(&img, 1, 1, 3, PARSUM_U16);
    const uint16_t *q = img.data;
    assert_int_equal(q[0], 1000);
    assert_int_equal(q[1], 1);
    assert_int_equal(q[2], 256);
    parsum_image_free(tu_ctx, &img);
    /* maxval 255 and bytes after the raster (a second image) ignored. */
    static const char p5b[] = "P5\n2 1\n255\n\xff\x80P5\n1 1\n255\n\x01";
    TU_OK(tio_read_bytes("b.pgm", p5b, sizeof p5b - 1, &img));
    tio_check_shape(&img, 2, 1, 1, PARSUM_U8);
    assert_memory_equal(img.data, "\xff\x80", 2);
    parsum_image_free(tu_ctx, &img);
}

/* The memory entry point sees exactly what the file reader sees. */
static void test_read_mem(void **state)
{
    (void)state;
    char path[TIO_PATH_LEN];
    parsum_image im = tio_image(13, 5, 3, PARSUM_U16, 0, false, 7);
    TU_OK(parsum_image_write(tu_ctx, tio_path("mem.ppm", path), &im));
    size_t n;
    unsigned char *bytes = tio_get(path, &n);
    parsum_image a, b;
    TU_OK(parsum_image_read(tu_ctx, path, &a));
    TU_OK(parsum__image_read_mem(tu_ctx, bytes, n, &b));
    assert_int_equal(ti_compare(&a, &b, NULL, NULL, "memory vs file"), 0);
    parsum_image_free(tu_ctx, &a);
    parsum_image_free(tu_ctx, &b);
    assert_int_equal(parsum__image_read_mem(tu_ctx, bytes, n - 1, &b),
                     PARSUM_ERR_BAD_FILE);
    assert_null(b.data);
    free(bytes);
    ti_host_free(&im);
    remove(path);
}

#ifdef PARSUM_HAVE_STB
static void test_png_roundtrip(void **state)
{
    (void)state;
    roundtrips("png", (const parsum_dtype[]){PARSUM_U8, PARSUM_U16}, 2,
               (const int[]){1, 2, 3, 4}, 4);
}

/* RGBE keeps 8 bits of mantissa per channel under the pixel's shared
 * exponent, truncated: each channel is within 1/128 of the largest one. */
static double hdr_bound(const void *user, size_t x, size_t y, int c)
{
    const parsum_image *want = user;
    (void)c;
    double m = 0;
    for (int k = 0; k < 3; k++)
        m = fmax(m, fabs(tu_get(PARSUM_F32, ti_at(want, x, y, k), 0)));
    return m / 128;
}

static double const_bound(const void *user, size_t x, size_t y, int c)
{
    (void)x, (void)y, (void)c;
    return *(const double *)user;
}

static void test_hdr_roundtrip(void **state)
{
    (void)state;
    /* Widths below 8 are stored flat, 8 .. 32767 run-length encoded. */
    static const size_t sizes[][3] = {{5, 3, 0}, {40, 7, 2}, {300, 2, 1}};
    char path[TIO_PATH_LEN];
    size_t failures = 0;
    for (size_t s = 0; s < 3; s++)
        for (int smooth = 0; smooth < 2; smooth++) {
            parsum_image im = tio_image(sizes[s][0], sizes[s][1], 3,
                                        PARSUM_F32, sizes[s][2] * 4, smooth,
                                        s);
            /* RGBE holds no negative values: the magnitudes, some zeros. */
            for (size_t y = 0; y < im.height; y++)
                for (size_t x = 0; x < im.width * 3; x++) {
                    float *v = ti_at(&im, 0, y, 0);
                    v[x] = x % 7 == 3 ? 0.0f : fabsf(v[x]) / 100;
                }
            parsum_image back;
            TU_OK(parsum_image_write(tu_ctx, tio_path("rt.hdr", path), &im));
            TU_OK(parsum_image_read(tu_ctx, path, &back));
            tio_check_shape(&back, im.width, im.height, 3, PARSUM_F32);
            failures += ti_compare(&im, &back, hdr_bound, &im, "hdr") != 0;
            parsum_image_free(tu_ctx, &back);
            ti_host_free(&im);
        }
    remove(path);
    assert_int_equal(failures, 0);
}

/* Negative, NaN and infinite samples have no RGBE form: written as 0
 * (NaN, negatives) and as the largest value (infinity). */
static void test_hdr_special(void **state)
{
    (void)state;
    static const float v[9] = {-1.0f, NAN, INFINITY, 2.0f, 0.0f, -0.0f,
                               1e-30f, 3.0f, 5.0f};
    parsum_image im = {(void *)v, 3, 1, 0, 3, PARSUM_F32, PARSUM_MEM_HOST};
    char path[TIO_PATH_LEN];
    parsum_image back;
    TU_OK(parsum_image_write(tu_ctx, tio_path("sp.hdr", path), &im));
    TU_OK(parsum_image_read(tu_ctx, path, &back));
    const float *b = back.data;
    assert_true(b[0] == 0 && b[1] == 0 && b[2] > 1e37f && b[5] == 0);
    assert_true(fabsf(b[7] - 3.0f) <= 5.0f / 128 && b[8] == 5.0f);
    parsum_image_free(tu_ctx, &back);
    remove(path);
}

/* JPEG at quality 95 on smooth images: small errors. stb writes every
 * JPEG as YCbCr, so grey images come back with three equal channels and
 * alpha is dropped. */
static void test_jpeg_roundtrip(void **state)
{
    (void)state;
    char path[TIO_PATH_LEN];
    for (int ch = 1; ch <= 4; ch++) {
        parsum_image im = tio_image(45, 21, ch, PARSUM_U8, (size_t)ch, true,
                                    3);
        parsum_image back;
        TU_OK(parsum_image_write(tu_ctx, tio_path("rt.jpg", path), &im));
        TU_OK(parsum_image_read(tu_ctx, path, &back));
        tio_check_shape(&back, 45, 21, 3, PARSUM_U8);
        double sum = 0, worst = 0;
        for (size_t y = 0; y < 21; y++)
            for (size_t x = 0; x < 45; x++)
                for (int c = 0; c < 3; c++) {
                    int src = ch < 3 ? 0 : c;
                    double e = fabs(
                        (double)*(unsigned char *)ti_at(&im, x, y, src) -
                        (double)*(unsigned char *)ti_at(&back, x, y, c));
                    sum += e;
                    worst = fmax(worst, e);
                }
        double mean = sum / (45 * 21 * 3);
        if (mean > 1 || worst > 8)
            print_error("jpeg, %d channels: mean error %g, worst %g\n", ch,
                        mean, worst);
        assert_true(mean <= 1 && worst <= 8);
        parsum_image_free(tu_ctx, &back);
        ti_host_free(&im);
    }
    /* The extension in upper case and .jpeg. */
    parsum_image im = tio_image(8, 8, 3, PARSUM_U8, 0, true, 4);
    TU_OK(parsum_image_write(tu_ctx, tio_path("x.JPEG", path), &im));
    remove(path);
    remove(tio_path("rt.jpg", path));
    ti_host_free(&im);
}

/* ---- OpenCV as the oracle ------------------------------------------------ */

/* Runs tests/image_io_oracle.py (mode check or make) on a spec file;
 * returns its status (77: no python3-opencv). */
static int run_cv2(const char *mode, const char *spec)
{
    size_t n;
    char path[TIO_PATH_LEN];
    unsigned char *script = tio_get(PARSUM_IO_ORACLE, &n);
    script[n] = '\0';
    tio_put(tio_path("spec.txt", path), spec, strlen(spec));
    const char *args[] = {mode, path};
    int rc = ti_python_cv2((const char *)script, args, 2);
    remove(path);
    free(script);
    return rc;
}

/* Files parsum writes, read by OpenCV. */
static const struct {
    const char *name, *np;
    size_t w, h;
    int ch;
    parsum_dtype d;
    double tol;
} to_cv2[] = {
    {"a.png", "uint16", 29, 13, 4, PARSUM_U16, 0},
    {"b.png", "uint8", 31, 7, 1, PARSUM_U8, 0},
    {"c.png", "uint8", 16, 16, 3, PARSUM_U8, 0},
    {"d.pgm", "uint16", 9, 11, 1, PARSUM_U16, 0},
    {"e.ppm", "uint8", 10, 3, 3, PARSUM_U8, 0},
    {"f.pfm", "float32", 12, 5, 3, PARSUM_F32, 0},
    {"g.pfm", "float32", 5, 12, 1, PARSUM_F32, 0},
    {"h.hdr", "float32", 40, 6, 3, PARSUM_F32, -1.0 / 64},
    {"i.jpg", "uint8", 48, 32, 3, PARSUM_U8, 12},
};
#define NTO (sizeof to_cv2 / sizeof to_cv2[0])

static void test_opencv_reads_parsum(void **state)
{
    (void)state;
    char spec[NTO * 3 * TIO_PATH_LEN], path[TIO_PATH_LEN], raw[TIO_PATH_LEN];
    size_t at = 0;
    for (size_t i = 0; i < NTO; i++) {
        bool lossy = to_cv2[i].tol != 0;
        size_t size = parsum_dtype_size(to_cv2[i].d);
        parsum_image im = tio_image(to_cv2[i].w, to_cv2[i].h, to_cv2[i].ch,
                                    to_cv2[i].d, 2 * size, lossy, i);
        if (to_cv2[i].tol < 0) /* HDR: positive values */
            for (size_t y = 0; y < im.height; y++)
                for (size_t x = 0; x < im.width * 3; x++) {
                    float *v = ti_at(&im, 0, y, 0);
                    v[x] = fabsf(v[x]) + 0.25f;
                }
        TU_OK(parsum_image_write(tu_ctx, tio_path(to_cv2[i].name, path), &im));
        char rawname[32];
        snprintf(rawname, sizeof rawname, "%s.raw", to_cv2[i].name);
        FILE *f = fopen(tio_path(rawname, raw), "wb");
        assert_non_null(f);
        size_t row = im.width * (size_t)im.channels * size;
        for (size_t y = 0; y < im.height; y++)
            assert_int_equal(fwrite(ti_at(&im, 0, y, 0), 1, row, f), row);
        fclose(f);
        at += (size_t)snprintf(spec + at, sizeof spec - at,
                               "%s\t%s\t%zu\t%zu\t%d\t%s\t%g\n", path, raw,
                               im.width, im.height, im.channels, to_cv2[i].np,
                               to_cv2[i].tol);
        ti_host_free(&im);
    }
    int rc = run_cv2("check", spec);
    for (size_t i = 0; i < NTO; i++) {
        char rawname[32];
        snprintf(rawname, sizeof rawname, "%s.raw", to_cv2[i].name);
        remove(tio_path(to_cv2[i].name, path));
        remove(tio_path(rawname, raw));
    }
    if (rc == 77)
        skip();
    assert_int_equal(rc, 0);
}

/* Files OpenCV writes, read by parsum and compared with what OpenCV itself
 * decodes from them. */
static const struct {
    const char *name, *kind;
    size_t w, h;
    int ch;
    parsum_dtype d;
    double tol;
} from_cv2[] = {
    {"p.png", "png16", 23, 11, 3, PARSUM_U16, 0},
    {"q.png", "png8a", 17, 9, 4, PARSUM_U8, 0},
    {"r.ppm", "ppm8", 14, 6, 3, PARSUM_U8, 0},
    {"s.pgm", "pgm16", 8, 13, 1, PARSUM_U16, 0},
    {"t.jpg", "jpggrey", 40, 24, 1, PARSUM_U8, 3},
    {"u.pfm", "pfm3", 19, 4, 3, PARSUM_F32, 0},
    {"v.hdr", "hdr", 50, 5, 3, PARSUM_F32, -1},
};
#define NFROM (sizeof from_cv2 / sizeof from_cv2[0])

static void test_parsum_reads_opencv(void **state)
{
    (void)state;
    char spec[NFROM * 3 * TIO_PATH_LEN], path[TIO_PATH_LEN], raw[TIO_PATH_LEN];
    size_t at = 0;
    for (size_t i = 0; i < NFROM; i++) {
        char rawname[32];
        snprintf(rawname, sizeof rawname, "%s.raw", from_cv2[i].name);
        at += (size_t)snprintf(spec + at, sizeof spec - at,
                               "%s\t%s\t%zu\t%zu\t%s\n",
                               tio_path(from_cv2[i].name, path),
                               tio_path(rawname, raw), from_cv2[i].w,
                               from_cv2[i].h, from_cv2[i].kind);
    }
    int rc = run_cv2("make", spec);
    if (rc == 77)
        skip();
    assert_int_equal(rc, 0);
    size_t failures = 0;
    for (size_t i = 0; i < NFROM; i++) {
        char rawname[32];
        snprintf(rawname, sizeof rawname, "%s.raw", from_cv2[i].name);
        parsum_image got;
        tio_path(from_cv2[i].name, path);
        TU_OK(parsum_image_read(tu_ctx, path, &got));
        tio_check_shape(&got, from_cv2[i].w, from_cv2[i].h, from_cv2[i].ch,
                        from_cv2[i].d);
        size_t n;
        parsum_image want = got;
        want.data = tio_get(tio_path(rawname, raw), &n);
        assert_int_equal(n, got.pitch * got.height);
        /* Lossless formats exactly; JPEG within the tolerance (two IDCTs);
         * HDR as RGBE allows (OpenCV may round where stb truncates). */
        double tol = from_cv2[i].tol;
        ti_bound_fn fn = tol < 0 ? hdr_bound : tol > 0 ? const_bound : NULL;
        const void *user = tol < 0 ? (const void *)&want : (const void *)&tol;
        failures += ti_compare(&want, &got, fn, user, from_cv2[i].name) != 0;
        ti_host_free(&want);
        parsum_image_free(tu_ctx, &got);
        remove(path);
        remove(raw);
    }
    assert_int_equal(failures, 0);
}
#define STB_TESTS                                                            \
    cmocka_unit_test(test_png_roundtrip),                                    \
        cmocka_unit_test(test_hdr_roundtrip),                                \
        cmocka_unit_test(test_hdr_special),                                  \
        cmocka_unit_test(test_jpeg_roundtrip),                               \
        cmocka_unit_test(test_opencv_reads_parsum),                          \
        cmocka_unit_test(test_parsum_reads_opencv),
#else
/* Without stb: PNG, JPEG and HDR are unsupported, PNM and PFM still work. */
static void test_without_stb(void **state)
{
    (void)state;
    static const char *const names[] = {"x.png", "x.jpg", "x.hdr"};
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_U8, PARSUM_F32};
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n',
                                        0x1a, '\n'};
    static const unsigned char jpg[] = {0xFF, 0xD8, 0xFF, 0xD9};
    static const char hdr[] = "#?RADIANCE\n";
    char path[TIO_PATH_LEN];
    parsum_image img;
    for (int i = 0; i < 3; i++) {
        parsum_image im = tio_image(4, 4, 3, dts[i], 0, false, 1);
        assert_int_equal(parsum_image_write(tu_ctx, tio_path(names[i], path),
                                            &im),
                         PARSUM_ERR_UNSUPPORTED);
        ti_host_free(&im);
    }
    assert_int_equal(tio_read_bytes("a", png, sizeof png, &img),
                     PARSUM_ERR_UNSUPPORTED);
    assert_int_equal(tio_read_bytes("b", jpg, sizeof jpg, &img),
                     PARSUM_ERR_UNSUPPORTED);
    assert_int_equal(tio_read_bytes("c", hdr, sizeof hdr - 1, &img),
                     PARSUM_ERR_UNSUPPORTED);
    assert_non_null(strstr(parsum_last_error(tu_ctx), "without"));
}
#define STB_TESTS cmocka_unit_test(test_without_stb),
#endif

PARSUM_TEST_MAIN(test_image_io)
{
    tio_init("image_io");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pnm_roundtrip),
        cmocka_unit_test(test_pfm_roundtrip),
        cmocka_unit_test(test_pfm_by_hand),
        cmocka_unit_test(test_pnm_by_hand),
        cmocka_unit_test(test_read_mem),
        STB_TESTS
    };
    return tio_finish(TU_RUN("image_io", tests));
}
