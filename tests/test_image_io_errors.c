/*
 * test_image_io_errors.c - what parsum_image_read and parsum_image_write
 * must refuse, and how (a status and a message, never a crash):
 *
 *   read       NULL arguments, a missing file and a directory (IO), empty
 *              and one-byte files, unknown and unsupported formats
 *   write      NULL arguments, every extension x dtype x channel count
 *              against the table of what each format holds, descriptor
 *              errors (no file is created for any of them), a missing
 *              directory and a full device (IO)
 *   truncated  valid files of every format cut at every length up to 100
 *              bytes and at 40 more up to the last byte: BAD_FILE, from
 *              memory and (every fifth) from a file
 *   corrupt    valid files with 1 to 4 random bytes changed: OK or
 *              BAD_FILE; random bytes after each magic number: BAD_FILE
 *   headers    huge declared sizes (over 2^28 pixels, numbers beyond
 *              size_t, sizes the data cannot hold), zero sizes, bad
 *              maxval, samples above maxval, bad PFM scales
 */
#define _POSIX_C_SOURCE 200809L
#include "test_image_io_util.h"

#include "io/image_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Asserts status st and a message that names the function. */
#define EXPECT(st, expr)                                                     \
    do {                                                                     \
        parsum_status e_ = (expr);                                           \
        if (e_ != (st)) {                                                    \
            print_error("%s:%d: %s: want %s, got %s (%s)\n", __FILE__,       \
                        __LINE__, #expr, parsum_status_name(st),             \
                        parsum_status_name(e_), parsum_last_error(tu_ctx));  \
            fail();                                                          \
        }                                                                    \
    } while (0)

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static void test_read_arguments(void **state)
{
    (void)state;
    char path[TIO_PATH_LEN];
    parsum_image img = {(void *)&img, 1, 1, 0, 1, PARSUM_U8, PARSUM_MEM_HOST};
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_read(NULL, "x.png", &img));
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_read(tu_ctx, "x.png", NULL));
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_read(tu_ctx, NULL, &img));
    assert_null(img.data); /* cleared on failure */
    EXPECT(PARSUM_ERR_NULL_POINTER,
           parsum__image_read_mem(tu_ctx, NULL, 3, &img));
    img.data = &img;
    EXPECT(PARSUM_ERR_IO,
           parsum_image_read(tu_ctx, tio_path("missing.png", path), &img));
    assert_null(img.data);
    assert_non_null(strstr(parsum_last_error(tu_ctx), "parsum_image_read"));
    assert_non_null(strstr(parsum_last_error(tu_ctx), path));
    /* A directory opens, but reading it fails. */
    tio_path("", path);
    EXPECT(PARSUM_ERR_IO, parsum_image_read(tu_ctx, path, &img));
}

static void test_read_formats(void **state)
{
    (void)state;
    static const char *const bad[] = {"",
                                      "P",
                                      "P2\n1 1\n255\n1\n",
                                      "P3\n1 1\n255\n1 2 3\n",
                                      "P1\n1 1\n1\n",
                                      "P4\n8 1\n\xff",
                                      "P7\nWIDTH 1\n",
                                      "BM6",
                                      "GIF89a"};
    parsum_image img;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT(PARSUM_ERR_BAD_FILE,
               tio_read_bytes("bad", bad[i], strlen(bad[i]), &img));
        assert_null(img.data);
    }
    assert_non_null(strstr(parsum_last_error(tu_ctx), "unknown format"));
}

static void test_write_arguments(void **state)
{
    (void)state;
    char path[TIO_PATH_LEN];
    uint16_t px[64] = {0};
    parsum_image ok = {px, 4, 2, 0, 1, PARSUM_U16, PARSUM_MEM_HOST};
    tio_path("w.pgm", path);
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_write(NULL, path, &ok));
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_write(tu_ctx, NULL, &ok));
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_write(tu_ctx, path, NULL));
    parsum_image b = ok;
    b.data = NULL;
    EXPECT(PARSUM_ERR_NULL_POINTER, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.where = PARSUM_MEM_DEVICE;
    EXPECT(PARSUM_ERR_WRONG_MEMORY_SPACE, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.dtype = (parsum_dtype)99;
    EXPECT(PARSUM_ERR_INVALID_DTYPE, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.width = 0;
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.height = 0;
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.channels = 0;
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.channels = 5;
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.pitch = 6; /* below the 8-byte row */
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.pitch = 9; /* not a multiple of the sample size */
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.data = (char *)px + 1; /* misaligned samples */
    EXPECT(PARSUM_ERR_INVALID_ARGUMENT, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.pitch = SIZE_MAX / 2 - 1, b.height = 3;
    EXPECT(PARSUM_ERR_OVERFLOW, parsum_image_write(tu_ctx, path, &b));
    b = ok, b.width = SIZE_MAX / 4 * 3;
    EXPECT(PARSUM_ERR_OVERFLOW, parsum_image_write(tu_ctx, path, &b));
    assert_false(exists(path));
    /* Extensions parsum does not write. */
    static const char *const names[] = {"x.bmp", "x", "x.", "d.png/x",
                                        "x.pngg", "x.tiff"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        EXPECT(PARSUM_ERR_INVALID_ARGUMENT,
               parsum_image_write(tu_ctx, tio_path(names[i], path), &ok));
        assert_false(exists(path));
    }
    /* The directory does not exist. */
    EXPECT(PARSUM_ERR_IO,
           parsum_image_write(tu_ctx, tio_path("no/such/dir.pgm", path), &ok));
    assert_non_null(strstr(parsum_last_error(tu_ctx), path));
}

/* What each extension holds, independently of the library's table. */
static bool holds(const char *ext, parsum_dtype d, int ch)
{
    bool u8 = d == PARSUM_U8, u16 = d == PARSUM_U16, f32 = d == PARSUM_F32;
    if (strcmp(ext, "png") == 0)
        return u8 || u16;
    if (strcmp(ext, "jpg") == 0 || strcmp(ext, "jpeg") == 0)
        return u8;
    if (strcmp(ext, "pgm") == 0)
        return (u8 || u16) && ch == 1;
    if (strcmp(ext, "ppm") == 0)
        return (u8 || u16) && ch == 3;
    if (strcmp(ext, "pfm") == 0)
        return f32 && (ch == 1 || ch == 3);
    return f32 && ch == 3; /* hdr */
}

static void test_write_format_table(void **state)
{
    (void)state;
    static const char *const exts[] = {"png", "jpg", "jpeg", "pgm",
                                       "ppm", "pfm", "hdr"};
    double px[4 * 3 * 4] = {0};
    size_t failures = 0;
    for (size_t e = 0; e < 7; e++)
        for (int d = 0; d < PARSUM_DTYPE_COUNT; d++)
            for (int ch = 1; ch <= 4; ch++) {
                char name[16], path[TIO_PATH_LEN];
                snprintf(name, sizeof name, "t.%s", exts[e]);
                parsum_image im = {px, 3, 4, 0, ch, (parsum_dtype)d,
                                   PARSUM_MEM_HOST};
                parsum_status want = PARSUM_ERR_INVALID_ARGUMENT;
                if (holds(exts[e], im.dtype, ch))
                    want = PARSUM_OK;
#ifndef PARSUM_HAVE_STB
                if (want == PARSUM_OK && e < 3)
                    want = PARSUM_ERR_UNSUPPORTED;
                if (want == PARSUM_OK && e == 6)
                    want = PARSUM_ERR_UNSUPPORTED;
#endif
                parsum_status st =
                    parsum_image_write(tu_ctx, tio_path(name, path), &im);
                if (st != want)
                    tu_report(&failures, "%s %s %d channels: want %s, got %s\n",
                              name, parsum_dtype_name(im.dtype), ch,
                              parsum_status_name(want),
                              parsum_status_name(st));
                if (st == PARSUM_OK)
                    remove(path);
                else if (exists(path))
                    tu_report(&failures, "%s: a file was left\n", name);
            }
    assert_int_equal(failures, 0);
}

/* Writing to a full device: the error shows when the data are flushed. */
static void test_write_full_device(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    static const char *const names[] = {"full.pgm", "full.pfm", "full.png",
                                        "full.jpg", "full.hdr"};
    float px[3 * 64 * 64] = {0};
    for (size_t i = 0; i < 5; i++) {
        char path[TIO_PATH_LEN];
        bool f32 = i == 1 || i == 4;
#ifndef PARSUM_HAVE_STB
        if (i >= 2)
            continue;
#endif
        parsum_image im = {px, 64, 64, 0, i == 0 || i == 1 ? 1 : 3,
                           f32 ? PARSUM_F32 : PARSUM_U8, PARSUM_MEM_HOST};
        assert_int_equal(symlink("/dev/full", tio_path(names[i], path)), 0);
        EXPECT(PARSUM_ERR_IO, parsum_image_write(tu_ctx, path, &im));
        assert_non_null(strstr(parsum_last_error(tu_ctx), "write failed"));
        assert_int_equal(remove(path), 0); /* the link, not the device */
    }
}

/* ---- damaged files ------------------------------------------------------ */

/* A valid file of each format, as bytes. */
typedef struct sample_file {
    const char *name;
    size_t w, h;
    int ch;
    parsum_dtype d;
} sample_file;

static const sample_file samples[] = {
    {"s1.pgm", 9, 7, 1, PARSUM_U8},   {"s2.ppm", 5, 4, 3, PARSUM_U16},
    {"s3.pfm", 6, 3, 3, PARSUM_F32},  {"s4.pfm", 4, 5, 1, PARSUM_F32},
#ifdef PARSUM_HAVE_STB
    {"s5.png", 20, 10, 3, PARSUM_U8}, {"s6.png", 7, 9, 1, PARSUM_U16},
    {"s7.png", 5, 5, 4, PARSUM_U8},   {"s8.jpg", 24, 17, 3, PARSUM_U8},
    {"s9.hdr", 5, 4, 3, PARSUM_F32},  {"sa.hdr", 40, 3, 3, PARSUM_F32},
#endif
};
#define NSAMPLES (sizeof samples / sizeof samples[0])

static unsigned char *sample_bytes(const sample_file *s, size_t *n)
{
    char path[TIO_PATH_LEN];
    parsum_image im = tio_image(s->w, s->h, s->ch, s->d, 0, true, 11);
    TU_OK(parsum_image_write(tu_ctx, tio_path(s->name, path), &im));
    ti_host_free(&im);
    unsigned char *p = tio_get(path, n);
    remove(path);
    return p;
}

static void test_truncated(void **state)
{
    (void)state;
    size_t failures = 0, cases = 0;
    for (size_t f = 0; f < NSAMPLES; f++) {
        size_t n;
        unsigned char *bytes = sample_bytes(&samples[f], &n);
        size_t cuts[160], ncut = 0;
        for (size_t c = 0; c < n && c <= 100; c++)
            cuts[ncut++] = c;
        for (size_t k = 1; k <= 40 && n > 101; k++)
            cuts[ncut++] = 101 + (n - 102) * k / 40; /* ends with n - 1 */
        for (size_t i = 0; i < ncut; i++) {
            parsum_image img;
            parsum_status st =
                i % 5 == 0
                    ? tio_read_bytes(samples[f].name, bytes, cuts[i], &img)
                    : parsum__image_read_mem(tu_ctx, bytes, cuts[i], &img);
            cases++;
            if (st != PARSUM_ERR_BAD_FILE)
                tu_report(&failures, "%s (%zu bytes) cut to %zu: %s: %s\n",
                          samples[f].name, n, cuts[i],
                          parsum_status_name(st), parsum_last_error(tu_ctx));
            parsum_image_free(tu_ctx, &img);
        }
        free(bytes);
    }
    print_message("%zu truncated files\n", cases);
    assert_int_equal(failures, 0);
}

static void test_corrupt_bytes(void **state)
{
    (void)state;
    size_t failures = 0, decoded = 0, refused = 0;
    for (size_t f = 0; f < NSAMPLES; f++) {
        size_t n;
        unsigned char *bytes = sample_bytes(&samples[f], &n);
        unsigned char *copy = tu_malloc(n);
        tu_rng r = tu_rng_for(f, 77, 0, 0);
        for (int v = 0; v < 300; v++) {
            memcpy(copy, bytes, n);
            int changes = 1 + (int)tu_below(&r, 4);
            for (int k = 0; k < changes; k++) {
                /* Mostly the first 64 bytes, where the headers are. */
                size_t at = tu_below(&r, 2) ? tu_below(&r, n < 64 ? n : 64)
                                            : tu_below(&r, n);
                copy[at] = (unsigned char)tu_next(&r);
            }
            parsum_image img;
            parsum_status st = parsum__image_read_mem(tu_ctx, copy, n, &img);
            if (st == PARSUM_OK) {
                decoded++;
                if (img.width * img.height > ((size_t)1 << 28) ||
                    img.channels < 1 || img.channels > 4)
                    tu_report(&failures, "%s variant %d: %zu x %zu x %d\n",
                              samples[f].name, v, img.width, img.height,
                              img.channels);
            } else if (st == PARSUM_ERR_BAD_FILE) {
                refused++;
            } else {
                tu_report(&failures, "%s variant %d: %s: %s\n",
                          samples[f].name, v, parsum_status_name(st),
                          parsum_last_error(tu_ctx));
            }
            parsum_image_free(tu_ctx, &img);
        }
        free(copy);
        free(bytes);
    }
    print_message("%zu decoded, %zu refused\n", decoded, refused);
    assert_int_equal(failures, 0);
}

static void test_garbage(void **state)
{
    (void)state;
    static const char *const magic[] = {"P5\n", "P6 ", "Pf\n", "PF\n",
                                        "\x89PNG\r\n\x1a\n", "\xff\xd8",
                                        "#?RADIANCE\n", ""};
    unsigned char buf[300];
    size_t failures = 0;
    for (size_t m = 0; m < sizeof magic / sizeof magic[0]; m++) {
        tu_rng r = tu_rng_for(m, 99, 0, 0);
        size_t k = strlen(magic[m]);
        memcpy(buf, magic[m], k);
        for (int v = 0; v < 100; v++) {
            size_t n = k + tu_below(&r, sizeof buf - k);
            for (size_t i = k; i < n; i++)
                buf[i] = (unsigned char)tu_next(&r);
            parsum_image img;
            parsum_status st = parsum__image_read_mem(tu_ctx, buf, n, &img);
#ifndef PARSUM_HAVE_STB
            if (m >= 4 && m <= 6 && st == PARSUM_ERR_UNSUPPORTED)
                continue;
#endif
            if (st != PARSUM_ERR_BAD_FILE)
                tu_report(&failures, "magic %zu, variant %d: %s\n", m, v,
                          parsum_status_name(st));
            parsum_image_free(tu_ctx, &img);
        }
    }
    assert_int_equal(failures, 0);
}

/* Each must fail with BAD_FILE and a message holding `why`. */
static const struct {
    const char *bytes;
    size_t n; /* 0: strlen */
    const char *why;
} bad_headers[] = {
    {"P5\n100000 100000\n255\n", 0, "2^28"},
    {"P6\n268435457 1\n255\n", 0, "larger than"},
    {"P5\n99999999999999999999999 1\n255\n", 0, "larger than"},
    {"P5\n16384 16384\n255\n0123456789", 0, "truncated"},
    {"P5\n0 5\n255\n", 0, "2^28"},
    {"Pf\n70000 70000\n-1\n", 0, "2^28"},
    {"P5\n1 1\n0\n", 0, "maxval"},
    {"P5\n1 1\n65536\n\0\0", 0, "larger than"},
    {"P5\n1 1\nabc\n\0", 0, "maxval"},
    {"P5\n1 1\n-1\n\0", 0, "maxval"},
    {"P5\n2 1\n15\n\x0f\x10", 0, "above maxval"},
    {"P5\n1 1\n1000\n\x03\xe9", 0, "above maxval"},
    {"P5\n1 1\n255x\0", 0, "whitespace"},
    {"P5x1 1 255\n\0", 0, "whitespace"},
    {"P5\n1\n", 0, "truncated"},
    {"Pf\n1 1\n0.0\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\nabc\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\n-\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\n1e\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\n+0\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\n1.5e+\n\0\0\0\0", 0, "scale"},
    {"Pf\n1 1\n-1.0\n\0\0\0", 0, "truncated"},
#ifdef PARSUM_HAVE_STB
    {"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n", 0,
     "2^28"},
    {"#?RADIANCE\n\n-Y 1 +X 1\n", 0, "FORMAT"},
    {"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+X 1 -Y 1\n\0\0\0\0", 0,
     "-Y"},
    /* SOF0 of 65535 x 65535, 3 components. */
    {"\xff\xd8\xff\xc0\0\x11\x08\xff\xff\xff\xff\x03\x01\x22\0\x02\x11\x01"
     "\x03\x11\x01\xff\xd9",
     23, "2^28"},
    {"\xff\xd8\xff\xd9", 4, "start-of-frame"},
    /* SOF0 of 8 x 8 grey, no scan. */
    {"\xff\xd8\xff\xc0\0\x0b\x08\0\x08\0\x08\x01\x01\x11\0\xff\xd9", 17,
     "start-of-scan"},
    {"\xff\xd8\xff\xc0\0\x01", 6, "segment length"},
#endif
};

static void test_bad_headers(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++) {
        size_t n = bad_headers[i].n ? bad_headers[i].n
                                    : strlen(bad_headers[i].bytes);
        parsum_image img;
        parsum_status st = tio_read_bytes("h", bad_headers[i].bytes, n, &img);
        const char *msg = parsum_last_error(tu_ctx);
        if (st != PARSUM_ERR_BAD_FILE || !strstr(msg, bad_headers[i].why))
            tu_report(&failures, "case %zu: %s: %s (want BAD_FILE and '%s')\n",
                      i, parsum_status_name(st), msg, bad_headers[i].why);
        parsum_image_free(tu_ctx, &img);
    }
    assert_int_equal(failures, 0);
}

#ifdef PARSUM_HAVE_STB
/* A PNG of IHDR (w, h, depth, colour type), one IDAT chunk of idat_len
 * bytes (zeros) and IEND; CRCs zero (not checked). Returns the length. */
static size_t make_png(unsigned char *p, uint32_t w, uint32_t h, int depth,
                       int ct, uint32_t idat_len)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    size_t n = 0;
    memcpy(p, sig, 8);
    n = 8;
    const char *types[3] = {"IHDR", "IDAT", "IEND"};
    uint32_t lens[3] = {13, idat_len, 0};
    for (int c = 0; c < 3; c++) {
        for (int b = 0; b < 4; b++)
            p[n++] = (unsigned char)(lens[c] >> (24 - 8 * b));
        memcpy(p + n, types[c], 4);
        n += 4;
        memset(p + n, 0, lens[c] + 4);
        if (c == 0)
            for (int b = 0; b < 4; b++) {
                p[n + (size_t)b] = (unsigned char)(w >> (24 - 8 * b));
                p[n + 4 + (size_t)b] = (unsigned char)(h >> (24 - 8 * b));
            }
        if (c == 0)
            p[n + 8] = (unsigned char)depth, p[n + 9] = (unsigned char)ct;
        n += lens[c] + 4;
    }
    return n;
}

static void test_bad_png_headers(void **state)
{
    (void)state;
    unsigned char buf[256];
    parsum_image img;
    /* Over 2^28 pixels, and none. */
    size_t n = make_png(buf, 100000, 100000, 8, 6, 10);
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    assert_non_null(strstr(parsum_last_error(tu_ctx), "2^28"));
    n = make_png(buf, 0, 1, 8, 0, 10);
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    assert_non_null(strstr(parsum_last_error(tu_ctx), "2^28"));
    /* 2^28 RGBA pixels (1 GiB) from 12 bytes of compressed data. */
    n = make_png(buf, 16384, 16384, 8, 6, 12);
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    assert_non_null(strstr(parsum_last_error(tu_ctx), "cannot hold"));
    /* Colour types 1, 5 and 7 do not exist; bit depth 3 neither. */
    static const int cts[3] = {1, 5, 7};
    for (int i = 0; i < 3; i++) {
        n = make_png(buf, 2, 2, 8, cts[i], 12);
        EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    }
    n = make_png(buf, 2, 2, 3, 0, 12);
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    /* Zeros are no zlib stream. */
    n = make_png(buf, 2, 2, 8, 0, 12);
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    /* A chunk longer than the file. */
    n = make_png(buf, 2, 2, 8, 0, 12);
    buf[33 + 3] = 200;
    EXPECT(PARSUM_ERR_BAD_FILE, tio_read_bytes("p", buf, n, &img));
    assert_non_null(strstr(parsum_last_error(tu_ctx), "truncated"));
}
/* A valid JPEG whose frame header claims 4000 x 4000 pixels: stb would
 * decode the missing blocks as zeros; too little coded data for them. */
static void test_jpeg_bomb(void **state)
{
    (void)state;
    size_t n;
    unsigned char *bytes = sample_bytes(&samples[7], &n);
    assert_string_equal(samples[7].name, "s8.jpg");
    unsigned char *sof = NULL;
    for (size_t i = 0; i + 9 < n && sof == NULL; i++)
        if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0)
            sof = bytes + i;
    assert_non_null(sof);
    parsum_image img;
    TU_OK(parsum__image_read_mem(tu_ctx, bytes, n, &img));
    parsum_image_free(tu_ctx, &img);
    sof[5] = sof[7] = 4000 >> 8; /* height, width */
    sof[6] = sof[8] = 4000 & 255;
    EXPECT(PARSUM_ERR_BAD_FILE, parsum__image_read_mem(tu_ctx, bytes, n, &img));
    assert_non_null(strstr(parsum_last_error(tu_ctx), "cannot hold"));
    free(bytes);
}
#define PNG_TESTS                                                            \
    cmocka_unit_test(test_bad_png_headers), cmocka_unit_test(test_jpeg_bomb),
#else
#define PNG_TESTS
#endif

/* PFM scales that are valid: only the sign matters. */
static void test_pfm_scales(void **state)
{
    (void)state;
    static const char *const scales[] = {"-1e0", ".5", "1.", "+2.5E-3",
                                         "-0.001", "7"};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "Pf\n1 1\n%s\n", scales[i]);
        memcpy(buf + n, "\0\0\x80\x3f", 4); /* 1.0f little-endian */
        if (scales[i][0] != '-')
            memcpy(buf + n, "\x3f\x80\0\0", 4); /* big-endian */
        parsum_image img;
        TU_OK(tio_read_bytes("s.pfm", buf, (size_t)n + 4, &img));
        assert_true(*(float *)img.data == 1.0f);
        parsum_image_free(tu_ctx, &img);
    }
}

PARSUM_TEST_MAIN(test_image_io_errors)
{
    tio_init("image_io_errors");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_arguments),
        cmocka_unit_test(test_read_formats),
        cmocka_unit_test(test_write_arguments),
        cmocka_unit_test(test_write_format_table),
        cmocka_unit_test(test_write_full_device),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_corrupt_bytes),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_pfm_scales),
        PNG_TESTS
    };
    return tio_finish(TU_RUN("image_io_errors", tests));
}
