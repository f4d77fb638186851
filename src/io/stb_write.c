/*
 * stb_write.c - JPEG and Radiance HDR encoding, and the deflate of the PNG
 * encoder, through stb_image_write (github.com/nothings/stb), compiled in
 * as stb_read.c compiles stb_image (static functions, nothing to link).
 *
 * Sanitized builds compile this file without the shift and signed-overflow
 * checks (src/CMakeLists.txt): stb_image_write 1.16's JPEG bit writer
 * shifts bits out of the top of an int, which is undefined behaviour that
 * every compiler turns into the intended wrap; only bits below those are
 * ever written out.
 */
#include "io/image_io.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
/* Not STBI_WRITE_NO_STDIO: in stb_image_write 1.16 it also drops the HDR
 * encoder. The file functions stay unused (static, so they cost nothing). */
#include <stb_image_write.h>

/* JPEG stores width and height in 16 bits. */
#define JPEG_MAX_SIDE 65535u
#define JPEG_QUALITY 95
/* stb_image_write's default effort (its stbi_write_png_compression_level). */
#define DEFLATE_EFFORT 8
/* The largest value RGBE holds: its exponent byte ends at 2^127. */
#define RGBE_MAX 1.7e38f

/* stb_image_write's output callback: everything goes through the sink. */
static void sink_func(void *context, void *data, int size)
{
    parsum__io_write(context, data, (size_t)size);
}

/* stb's JPEG and HDR encoders index samples with int. */
static parsum_status check_int_samples(const parsum__io_job *job,
                                       const parsum__io_image *im,
                                       const char *what)
{
    size_t limit = (size_t)INT_MAX / (size_t)im->channels;
    if (im->width > limit || im->height > limit / im->width)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "the %s encoder takes at most %d samples, not "
                               "%zu x %zu x %d",
                               what, INT_MAX, im->width, im->height,
                               im->channels);
    return PARSUM_OK;
}

/* The pixels of im packed (stb's JPEG encoder takes no pitch):
 * im's own memory when it is packed, else a malloc'd copy in *copy. */
static const void *packed_pixels(const parsum__io_job *job,
                                 const parsum__io_image *im, void **copy,
                                 parsum_status *st)
{
    *copy = NULL;
    *st = PARSUM_OK;
    if (im->pitch == im->row_bytes)
        return im->data;
    unsigned char *p = malloc(im->row_bytes * im->height);
    if (p == NULL) {
        *st = parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes to pack the rows",
                              im->row_bytes * im->height);
        return NULL;
    }
    for (size_t y = 0; y < im->height; y++)
        memcpy(p + y * im->row_bytes, im->data + y * im->pitch,
               im->row_bytes);
    *copy = p;
    return p;
}

parsum_status parsum__jpeg_write(const parsum__io_job *job,
                                 const parsum__io_image *im,
                                 parsum__io_sink *sink)
{
    if (im->width > JPEG_MAX_SIDE || im->height > JPEG_MAX_SIDE)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "JPEG holds at most %u x %u pixels, not "
                               "%zu x %zu",
                               JPEG_MAX_SIDE, JPEG_MAX_SIDE, im->width,
                               im->height);
    PARSUM__CHECK(check_int_samples(job, im, "JPEG"));
    void *copy;
    parsum_status st;
    const void *px = packed_pixels(job, im, &copy, &st);
    if (px == NULL)
        return st;
    int ok = stbi_write_jpg_to_func(sink_func, sink, (int)im->width,
                                    (int)im->height, im->channels, px,
                                    JPEG_QUALITY);
    free(copy);
    if (!ok)
        return parsum__io_fail(job, PARSUM_ERR_INTERNAL,
                               "the JPEG encoder refused the image");
    return PARSUM_OK;
}

parsum_status parsum__hdr_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink)
{
    PARSUM__CHECK(check_int_samples(job, im, "HDR"));
    /* RGBE has no sign, NaN or infinity, and stb converts such samples
     * with undefined float-to-byte casts: negative and NaN samples become
     * 0, larger ones RGBE_MAX, in a packed copy. */
    size_t n = im->width * 3;
    float *px = malloc(im->height * im->row_bytes);
    if (px == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "cannot allocate %zu bytes for the pixels",
                               im->height * im->row_bytes);
    for (size_t y = 0; y < im->height; y++) {
        memcpy(px + y * n, im->data + y * im->pitch, im->row_bytes);
        for (size_t i = y * n; i < (y + 1) * n; i++)
            px[i] = px[i] > 0 ? (px[i] < RGBE_MAX ? px[i] : RGBE_MAX) : 0.0f;
    }
    int ok = stbi_write_hdr_to_func(sink_func, sink, (int)im->width,
                                    (int)im->height, 3, px);
    free(px);
    if (!ok)
        return parsum__io_fail(job, PARSUM_ERR_INTERNAL,
                               "the HDR encoder refused the image");
    return PARSUM_OK;
}

unsigned char *parsum__stb_deflate(const unsigned char *data, size_t n,
                                   size_t *out_len)
{
    int len = 0;
    if (n > INT_MAX)
        return NULL;
    /* stb does not write through data; its signature lacks the const. */
    unsigned char *z = stbi_zlib_compress((unsigned char *)(uintptr_t)data,
                                          (int)n, &len, DEFLATE_EFFORT);
    if (z != NULL)
        *out_len = (size_t)len;
    return z;
}
