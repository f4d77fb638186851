/* test_image_util.c - see test_image_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "test_image_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t rowb(const parsum_image *im)
{
    return im->width * (size_t)im->channels * parsum_dtype_size(im->dtype);
}

parsum_image ti_host(size_t w, size_t h, int ch, parsum_dtype d, size_t pad)
{
    parsum_image im = {NULL, w, h, 0, ch, d, PARSUM_MEM_HOST};
    im.pitch = rowb(&im) + pad;
    im.data = tu_malloc(im.pitch * h);
    memset(im.data, TU_POISON, im.pitch * h);
    return im;
}

void ti_host_free(parsum_image *im)
{
    free(im->data);
    im->data = NULL;
}

void *ti_at(const parsum_image *im, size_t x, size_t y, int c)
{
    return (char *)im->data + y * im->pitch +
           (x * (size_t)im->channels + (size_t)c) *
               parsum_dtype_size(im->dtype);
}

void ti_fill(tu_rng *r, const parsum_image *im, double lo, double hi)
{
    for (size_t y = 0; y < im->height; y++)
        for (size_t x = 0; x < im->width * (size_t)im->channels; x++) {
            double v;
            if (tu_is_float(im->dtype))
                v = lo + (hi - lo) * tu_uniform(r);
            else
                v = lo + (double)tu_below(r, (uint64_t)(hi - lo) + 1);
            tu_set(im->dtype, (char *)im->data + y * im->pitch, x, v);
        }
}

parsum_image ti_ctx_like(const parsum_image *like, size_t pad)
{
    parsum_image d = *like;
    d.where = tu_backend == PARSUM_BACKEND_CUDA ? PARSUM_MEM_DEVICE
                                                : PARSUM_MEM_HOST;
    d.pitch = rowb(like) + pad;
    d.data = tu_dev_alloc(d.pitch * d.height);
    tu_dev_poison(d.data, d.pitch * d.height);
    return d;
}

parsum_image ti_to_ctx(const parsum_image *h, size_t pad)
{
    parsum_image d = ti_ctx_like(h, pad);
    TU_OK(parsum_image_copy(tu_ctx, &d, h));
    return d;
}

void ti_from_ctx(const parsum_image *h, const parsum_image *d)
{
    TU_OK(parsum_synchronize(tu_ctx));
    TU_OK(parsum_image_copy(tu_ctx, h, d));
}

void ti_ctx_free(parsum_image *im)
{
    tu_dev_free(im->data);
    im->data = NULL;
}

size_t ti_compare(const parsum_image *want, const parsum_image *got,
                  ti_bound_fn bound, const void *user, const char *what)
{
    size_t bad = 0;
    for (size_t y = 0; y < want->height; y++) {
        if (memcmp(ti_at(want, 0, y, 0), ti_at(got, 0, y, 0), rowb(want)) == 0)
            continue; /* the common case, fast */
        for (size_t x = 0; x < want->width; x++)
            for (int c = 0; c < want->channels; c++) {
                const void *a = ti_at(want, x, y, c), *b = ti_at(got, x, y, c);
                double bd = bound ? bound(user, x, y, c) : -1;
                if (tu_equal1(want->dtype, a, b, bd))
                    continue;
                if (bad++ < TU_MAX_REPORTS) {
                    char s1[64], s2[64];
                    print_error("%s: (x %zu, y %zu, c %d): want %s, got %s "
                                "(bound %g)\n",
                                what, x, y, c, tu_format(want->dtype, a, s1),
                                tu_format(want->dtype, b, s2), bd);
                }
            }
    }
    if (bad > TU_MAX_REPORTS)
        print_error("%s: %zu mismatches in all\n", what, bad);
    return bad;
}

bool ti_padding_intact(const parsum_image *h)
{
    size_t rb = rowb(h);
    for (size_t y = 0; y < h->height; y++)
        for (size_t b = rb; b < h->pitch; b++)
            if (((unsigned char *)h->data)[y * h->pitch + b] != TU_POISON)
                return false;
    return true;
}

void ti_tmpname(char *buf, size_t len, const char *stem)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/parsum_%s_XXXXXX", dir ? dir : "/tmp", stem);
    int fd = mkstemp(buf);
    if (fd < 0) {
        print_error("mkstemp(%s) failed\n", buf);
        fail();
    }
    close(fd);
}

int ti_python_cv2(const char *code, const char *const *args, int nargs)
{
    if (system("/usr/bin/python3 -c 'import cv2, numpy' >/dev/null 2>&1") != 0)
        return 77;
    char script[256];
    ti_tmpname(script, sizeof script, "cv2_script");
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fputs(code, f);
    fclose(f);
    char cmd[4096];
    int at = snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", script);
    for (int i = 0; i < nargs && at < (int)sizeof cmd; i++)
        at += snprintf(cmd + at, sizeof cmd - (size_t)at, " '%s'", args[i]);
    int rc = system(cmd);
    remove(script);
    return rc == 0 ? 0 : (rc == -1 ? 1 : WEXITSTATUS(rc) == 77 ? 1 : WEXITSTATUS(rc));
}

size_t ti_pad_to(size_t b, size_t a, size_t extra)
{
    return (a - b % a) % a + extra;
}

void ti_range(parsum_dtype d, double *lo, double *hi)
{
    switch (d) {
    case PARSUM_U8: *lo = 0; *hi = 255; break;
    case PARSUM_U16: *lo = 0; *hi = 65535; break;
    case PARSUM_I32: *lo = -2147483648.0; *hi = 2147483647.0; break;
    default: *lo = -1; *hi = 1; break;
    }
}
