/* test_image_io_util.c - see test_image_io_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "test_image_io_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

void tio_init(const char *program)
{
    setenv("PARSUM_TEST_BACKEND", "cpu", 1);
    tu_init(program);
    const char *dir = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/parsum_%s_XXXXXX",
             dir != NULL && *dir != '\0' ? dir : "/tmp", program);
    if (mkdtemp(tmpdir) == NULL) {
        perror(tmpdir);
        exit(1);
    }
}

int tio_finish(int rc)
{
    if (rmdir(tmpdir) != 0) {
        perror(tmpdir);
        rc = rc != 0 ? rc : 1;
    }
    return tu_finish(rc);
}

const char *tio_path(const char *name, char *buf)
{
    snprintf(buf, TIO_PATH_LEN, "%s/%s", tmpdir, name);
    return buf;
}

void tio_put(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

unsigned char *tio_get(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    unsigned char *p = tu_malloc((size_t)len + 1);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

parsum_status tio_read_bytes(const char *name, const void *data, size_t n,
                             parsum_image *img)
{
    char path[TIO_PATH_LEN];
    tio_put(tio_path(name, path), data, n);
    parsum_status st = parsum_image_read(tu_ctx, path, img);
    remove(path);
    return st;
}

parsum_image tio_image(size_t w, size_t h, int ch, parsum_dtype d, size_t pad,
                       bool smooth, uint64_t seed)
{
    parsum_image im = ti_host(w, h, ch, d, pad);
    tu_rng r = tu_rng_for(seed, w, h, (uint64_t)ch * 16 + (uint64_t)d);
    double hi = d == PARSUM_U8 ? 255 : d == PARSUM_U16 ? 65535 : 1000;
    ti_fill(&r, &im, d == PARSUM_F32 ? -1000 : 0, hi);
    for (size_t y = 0; smooth && y < h; y++)
        for (size_t x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                double v = hi * (0.5 + 0.4 * sin(0.11 * (double)x +
                                                 0.07 * (double)y + c));
                tu_set(d, ti_at(&im, x, y, c), 0, floor(v));
            }
    return im;
}

void tio_check_shape(const parsum_image *got, size_t w, size_t h, int ch,
                     parsum_dtype d)
{
    assert_non_null(got->data);
    assert_int_equal(got->width, w);
    assert_int_equal(got->height, h);
    assert_int_equal(got->channels, ch);
    assert_int_equal(got->dtype, d);
    assert_int_equal(got->where, PARSUM_MEM_HOST);
    assert_int_equal(got->pitch, w * (size_t)ch * parsum_dtype_size(d));
}
