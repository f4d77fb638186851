/*
 * stb_codec.c - PNG, JPEG and Radiance HDR through stb_image and
 * stb_image_write (github.com/nothings/stb; Debian's libstb-dev).
 *
 * The header-only implementations are compiled into this file rather than
 * linked from libstb: their functions become static (nothing clashes with a
 * user's own copy of stb, and users of libparsum.a need no extra library),
 * only the PNG, JPEG and HDR decoders are built (so a GIF or BMP file can
 * never reach stb), and sanitizer and fuzzer builds instrument the decoder
 * code too, which is the code most exposed to hostile files.
 *
 * Before stb decodes, parsum reads the header itself: the 2^28-pixel cap is
 * enforced before any allocation, and for PNG a walk over the chunks
 * (signature, IHDR, every chunk complete, IEND present) fixes the channel
 * count and rejects files whose compressed data are too short to inflate
 * to the declared size (deflate expands at most 1032:1), because stb
 * allocates the full image before it inflates anything.
 */
#include "io/image_io.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* stb_image 2.27 declares functions it never defines (with STB_IMAGE_STATIC:
 * static prototypes without bodies), which GCC reports at the end of the
 * file, outside any push/pop: so this file goes without the warning. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_HDR
#define STBI_NO_STDIO
/* Our own pixel cap (checked first) is the binding limit, not stb's. */
#define STBI_MAX_DIMENSIONS (1 << 28)
#include <stb_image.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
/* Not STBI_WRITE_NO_STDIO: in stb_image_write 1.16 it also drops the HDR
 * encoder. The file functions stay unused (static, so they cost nothing). */
#include <stb_image_write.h>

/* zlib's bound on deflate's expansion ratio. */
#define DEFLATE_MAX_RATIO 1032u
/* JPEG stores width and height in 16 bits. */
#define JPEG_MAX_SIDE 65535u
#define JPEG_QUALITY 95
/* stb_image_write's default effort (its stbi_write_png_compression_level). */
#define DEFLATE_EFFORT 8

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* What the PNG header and chunk walk tell. */
typedef struct png_facts {
    uint32_t width, height;
    int depth;        /* bits per sample in the file: 1 to 16 */
    int file_samples; /* samples per pixel in the file (palette: 1) */
    int channels;     /* decoded channels: tRNS adds alpha */
    uint64_t idat;    /* bytes of compressed image data */
} png_facts;

/* Samples per pixel of PNG colour type ct (-1: invalid), and channels
 * after decoding (palette entries are RGB). */
static int png_samples(int ct, int *channels)
{
    static const int samples[7] = {1, -1, 3, 1, 2, -1, 4};
    static const int decoded[7] = {1, -1, 3, 3, 2, -1, 4};
    if (ct < 0 || ct > 6 || samples[ct] < 0)
        return -1;
    *channels = decoded[ct];
    return samples[ct];
}

/* Checks the signature and IHDR, walks the chunks to IEND and sums the
 * IDAT lengths. Chunk CRCs are not checked (stb does not either). */
static parsum_status png_scan(const parsum__io_job *job,
                              const unsigned char *d, size_t size,
                              png_facts *f)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    if (size < 8 || memcmp(d, sig, 8) != 0)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE, "%s PNG signature",
                               size < 8 ? "truncated" : "bad");
    if (size < 8 + 8 + 13 + 4)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "truncated: %zu bytes, no complete IHDR chunk",
                               size);
    if (be32(d + 8) != 13 || memcmp(d + 12, "IHDR", 4) != 0)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "the first PNG chunk is not a 13-byte IHDR");
    f->width = be32(d + 16);
    f->height = be32(d + 20);
    f->depth = d[24];
    f->file_samples = png_samples(d[25], &f->channels);
    if (f->file_samples < 0)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "unknown PNG colour type %d", d[25]);
    f->idat = 0;
    bool trns = false;
    size_t pos = 8;
    for (;;) {
        if (size - pos < 12)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated: the data end after %zu bytes "
                                   "%s",
                                   size, pos == size ? "without an IEND chunk"
                                                     : "inside a chunk header");
        uint32_t len = be32(d + pos);
        const unsigned char *type = d + pos + 4;
        if (len > size - pos - 12)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated: chunk '%c%c%c%c' at byte %zu "
                                   "needs %u bytes, %zu are left",
                                   type[0] & 0x7f, type[1] & 0x7f,
                                   type[2] & 0x7f, type[3] & 0x7f, pos, len,
                                   size - pos - 12);
        if (memcmp(type, "IDAT", 4) == 0)
            f->idat += len;
        else if (memcmp(type, "tRNS", 4) == 0)
            trns = true;
        else if (memcmp(type, "IEND", 4) == 0)
            break;
        pos += 12 + (size_t)len;
    }
    if (trns && f->channels < 4 && f->file_samples != 2)
        f->channels++;
    return PARSUM_OK;
}

/* The PNG checks before decoding: pixel cap, and enough compressed data. */
static parsum_status png_precheck(const parsum__io_job *job,
                                  const unsigned char *data, size_t size,
                                  png_facts *f)
{
    PARSUM__CHECK(png_scan(job, data, size, f));
    if (f->width == 0 || f->height == 0 ||
        f->width > PARSUM__IMAGE_MAX_PIXELS / f->height)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "PNG of %u x %u pixels (parsum reads 1 to "
                               "2^28 pixels)",
                               f->width, f->height);
    /* Filtered rows, one filter byte each; interlaced images need more. */
    uint64_t row = ((uint64_t)f->width * (uint64_t)f->file_samples *
                        (uint64_t)f->depth + 7) / 8 + 1;
    uint64_t raw = row * f->height;
    if (f->idat * DEFLATE_MAX_RATIO + 1024 < raw)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "%llu bytes of compressed PNG data cannot "
                               "hold %u x %u pixels (%llu bytes inflated)",
                               (unsigned long long)f->idat, f->width,
                               f->height, (unsigned long long)raw);
    return PARSUM_OK;
}

/* The size, channels and dtype stb will decode to, checked against the
 * pixel cap before stb allocates. */
static parsum_status stb_shape(const parsum__io_job *job,
                               parsum__stb_format format,
                               const unsigned char *data, int len,
                               int *channels, parsum_dtype *dtype)
{
    if (format == PARSUM__STB_PNG) {
        png_facts f = {0};
        PARSUM__CHECK(png_precheck(job, data, (size_t)len, &f));
        *channels = f.channels;
        *dtype = f.depth == 16 ? PARSUM_U16 : PARSUM_U8;
        return PARSUM_OK;
    }
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, len, &w, &h, &comp))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE, "%s header: %s",
                               format == PARSUM__STB_JPEG ? "JPEG" : "HDR",
                               stbi_failure_reason());
    if (w <= 0 || h <= 0 ||
        (size_t)w > PARSUM__IMAGE_MAX_PIXELS / (size_t)h)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "image of %d x %d pixels (parsum reads 1 to "
                               "2^28 pixels)",
                               w, h);
    *channels = format == PARSUM__STB_HDR ? 3 : comp;
    *dtype = format == PARSUM__STB_HDR ? PARSUM_F32 : PARSUM_U8;
    return PARSUM_OK;
}

parsum_status parsum__stb_read(const parsum__io_job *job,
                               parsum__stb_format format,
                               const unsigned char *data, size_t size,
                               parsum_image *img)
{
    int len = (int)size; /* the caller keeps size <= INT_MAX */
    int channels = 0;
    parsum_dtype dtype = PARSUM_U8;
    PARSUM__CHECK(stb_shape(job, format, data, len, &channels, &dtype));
    int w = 0, h = 0, comp = 0;
    void *pixels;
    if (dtype == PARSUM_F32)
        pixels = stbi_loadf_from_memory(data, len, &w, &h, &comp, channels);
    else if (dtype == PARSUM_U16)
        pixels = stbi_load_16_from_memory(data, len, &w, &h, &comp,
                                          channels);
    else
        pixels = stbi_load_from_memory(data, len, &w, &h, &comp, channels);
    if (pixels == NULL) {
        const char *why = stbi_failure_reason();
        bool oom = why != NULL && strcmp(why, "outofmem") == 0;
        return parsum__io_fail(job,
                               oom ? PARSUM_ERR_OUT_OF_MEMORY
                                   : PARSUM_ERR_BAD_FILE,
                               "decoding failed: %s",
                               why != NULL ? why : "(no reason given)");
    }
    parsum_image out;
    parsum_status st = parsum__io_alloc_image(job, &out, (size_t)w,
                                              (size_t)h, channels, dtype);
    if (st == PARSUM_OK) {
        memcpy(out.data, pixels, out.pitch * out.height);
        *img = out;
    }
    stbi_image_free(pixels);
    return st;
}

/* ---- writing ------------------------------------------------------------ */

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

/* The pixels of im packed (stb's JPEG and HDR encoders take no pitch):
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
    void *copy;
    parsum_status st;
    const void *px = packed_pixels(job, im, &copy, &st);
    if (px == NULL)
        return st;
    int ok = stbi_write_hdr_to_func(sink_func, sink, (int)im->width,
                                    (int)im->height, im->channels, px);
    free(copy);
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
