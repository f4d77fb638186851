/*
 * image_io.c - parsum_image_read and parsum_image_write: argument and
 * descriptor checks, the format choice (by content when reading, by the
 * file name's extension when writing), and the byte sources and sinks the
 * format files share (image_io.h).
 *
 * A file is read once, front to back: the first two bytes choose the
 * format; PGM/PPM/PFM are parsed straight from the file (the raster goes
 * directly into the image), while PNG, JPEG and HDR are read whole into
 * memory for stb. parsum__image_read_mem runs the same parsers on a memory
 * block, which is what the fuzz target feeds.
 */
#include "io/image_io.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define READ_FN "parsum_image_read"
#define WRITE_FN "parsum_image_write"

/* ---- messages, sources, sinks ----------------------------------------- */

parsum_status parsum__io_fail(const parsum__io_job *job, parsum_status st,
                              const char *fmt, ...)
{
    char reason[PARSUM__ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return parsum__fail(job->ctx, st, "%s: '%s': %s", job->fn, job->name,
                        reason);
}

size_t parsum__io_read(parsum__io_src *src, void *dst, size_t n)
{
    size_t got;
    if (src->file != NULL) {
        got = fread(dst, 1, n, src->file);
        if (got < n && ferror(src->file))
            src->read_error = true;
    } else {
        size_t left = src->size - src->pos;
        got = n < left ? n : left;
        if (got > 0)
            memcpy(dst, src->mem + src->pos, got);
    }
    src->pos += got;
    return got;
}

bool parsum__io_remaining(parsum__io_src *src, size_t *left)
{
    if (src->file == NULL) {
        *left = src->size - src->pos;
        return true;
    }
    long here = ftell(src->file);
    if (here < 0 || fseek(src->file, 0, SEEK_END) != 0)
        return false;
    long end = ftell(src->file);
    if (fseek(src->file, here, SEEK_SET) != 0) {
        src->read_error = true; /* the position is lost */
        return false;
    }
    *left = end > here ? (size_t)(end - here) : 0;
    return true;
}

int parsum__io_getc(parsum__io_src *src)
{
    unsigned char c;
    return parsum__io_read(src, &c, 1) == 1 ? c : -1;
}

parsum_status parsum__io_short(const parsum__io_job *job,
                               const parsum__io_src *src, const char *what)
{
    if (src->read_error)
        return parsum__io_fail(job, PARSUM_ERR_IO,
                               "read error after %zu bytes (in %s)", src->pos,
                               what);
    return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                           "truncated: the data end after %zu bytes, in %s",
                           src->pos, what);
}

void parsum__io_write(parsum__io_sink *sink, const void *p, size_t n)
{
    if (sink->err != 0 || n == 0)
        return;
    errno = 0;
    if (fwrite(p, 1, n, sink->file) != n)
        sink->err = errno != 0 ? errno : EIO;
}

parsum_status parsum__io_check_size(const parsum__io_job *job,
                                    const char *what, size_t width,
                                    size_t height)
{
    if (width == 0 || height == 0 ||
        width > PARSUM__IMAGE_MAX_PIXELS / height)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "%s of %zu x %zu pixels (parsum reads 1 to "
                               "2^28 pixels)",
                               what, width, height);
    return PARSUM_OK;
}

parsum_status parsum__io_alloc_image(const parsum__io_job *job,
                                     parsum_image *img, size_t width,
                                     size_t height, int channels,
                                     parsum_dtype dtype)
{
    PARSUM__CHECK(parsum__io_check_size(job, "image", width, height));
    /* At most 2^28 pixels * 4 channels * 8 bytes: no overflow. */
    size_t row = width * (size_t)channels * parsum_dtype_size(dtype);
    void *p = parsum__host_alloc(row * height);
    if (p == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "cannot allocate %zu bytes for %zu x %zu "
                               "pixels",
                               row * height, width, height);
    img->data = p;
    img->width = width;
    img->height = height;
    img->pitch = row;
    img->channels = channels;
    img->dtype = dtype;
    img->where = PARSUM_MEM_HOST;
    return PARSUM_OK;
}

/* ---- reading ------------------------------------------------------------ */

#ifdef PARSUM_HAVE_STB
/* Largest input that stb's decoders take (they count bytes in int). */
#define STB_MAX_INPUT ((size_t)INT_MAX)

/* Reads the rest of a file into a malloc'd block after the `have` bytes
 * already consumed (copied from head). */
static parsum_status slurp_file(const parsum__io_job *job,
                                parsum__io_src *src, const unsigned char *head,
                                size_t have, unsigned char **data,
                                size_t *size)
{
    size_t cap = 1 << 16, len = have;
    unsigned char *buf = malloc(cap);
    if (buf == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "cannot allocate a read buffer");
    memcpy(buf, head, have);
    for (;;) {
        if (len == cap) {
            if (cap > STB_MAX_INPUT) {
                free(buf);
                return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                       "file longer than the %zu bytes the "
                                       "decoder takes",
                                       STB_MAX_INPUT);
            }
            unsigned char *bigger = realloc(buf, 2 * cap);
            if (bigger == NULL) {
                free(buf);
                return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                                       "cannot allocate %zu bytes to read "
                                       "the file",
                                       2 * cap);
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = parsum__io_read(src, buf + len, cap - len);
        len += got;
        if (got == 0)
            break;
    }
    if (src->read_error || len > STB_MAX_INPUT) {
        free(buf);
        if (src->read_error)
            return parsum__io_short(job, src, "the image data");
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "file of %zu bytes, longer than the %zu the "
                               "decoder takes",
                               len, STB_MAX_INPUT);
    }
    *data = buf;
    *size = len;
    return PARSUM_OK;
}

/* Hands the whole input to stb: a memory source as it is, a file after
 * reading it. */
static parsum_status read_stb(const parsum__io_job *job, parsum__io_src *src,
                              parsum__stb_format format,
                              const unsigned char *magic, parsum_image *img)
{
    if (src->file == NULL) {
        if (src->size > STB_MAX_INPUT)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "input longer than the %zu bytes the "
                                   "decoder takes",
                                   STB_MAX_INPUT);
        return parsum__stb_read(job, format, src->mem, src->size, img);
    }
    unsigned char *data = NULL;
    size_t size = 0;
    parsum_status st = slurp_file(job, src, magic, 2, &data, &size);
    if (st == PARSUM_OK) {
        st = parsum__stb_read(job, format, data, size, img);
        free(data);
    }
    return st;
}
#endif

/* Chooses the decoder from the first two bytes. */
static parsum_status read_any(const parsum__io_job *job, parsum__io_src *src,
                              parsum_image *img)
{
    unsigned char m[2];
    size_t got = parsum__io_read(src, m, 2);
    if (got < 2) {
        if (src->read_error)
            return parsum__io_short(job, src, "the format signature");
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "%s: no image format is that short",
                               got == 0 ? "empty" : "one byte long");
    }
    if (m[0] == 'P' && (m[1] == '5' || m[1] == '6' || m[1] == 'f' ||
                        m[1] == 'F'))
        return parsum__pnm_read(job, src, m[1], img);
    if (m[0] == 'P' && m[1] >= '1' && m[1] <= '7')
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "netpbm format P%c is not supported (only "
                               "binary PGM P5, PPM P6 and PFM)",
                               m[1]);
    /* In the order of parsum__stb_format. */
    static const struct {
        unsigned char m0, m1;
        const char *name;
    } stb_formats[3] = {
        {0x89, 'P', "PNG"}, {0xFF, 0xD8, "JPEG"}, {'#', '?', "Radiance HDR"}};
    for (int f = 0; f < 3; f++) {
        if (m[0] != stb_formats[f].m0 || m[1] != stb_formats[f].m1)
            continue;
#ifdef PARSUM_HAVE_STB
        return read_stb(job, src, (parsum__stb_format)f, m, img);
#else
        return parsum__io_fail(job, PARSUM_ERR_UNSUPPORTED,
                               "%s needs stb_image, and parsum was built "
                               "without it",
                               stb_formats[f].name);
#endif
    }
    return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                           "unknown format (first bytes 0x%02x 0x%02x; "
                           "parsum reads PNG, JPEG, PGM/PPM, PFM and "
                           "Radiance HDR)",
                           m[0], m[1]);
}

/* Common start of both readers: the arguments, *img cleared. */
static parsum_status read_args(parsum_context *ctx, const void *source,
                               const char *what, parsum_image *img)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (img == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            READ_FN ": img is NULL");
    memset(img, 0, sizeof *img);
    if (source == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            READ_FN ": %s is NULL", what);
    return PARSUM_OK;
}

parsum_status parsum_image_read(parsum_context *ctx, const char *path,
                                parsum_image *img)
{
    PARSUM__CHECK(read_args(ctx, path, "path", img));
    parsum__io_job job = {ctx, READ_FN, path};
    parsum__io_src src = {0};
    errno = 0;
    src.file = fopen(path, "rb");
    if (src.file == NULL)
        return parsum__io_fail(&job, PARSUM_ERR_IO, "cannot open: %s",
                               errno != 0 ? strerror(errno) : "fopen failed");
    parsum_status st = read_any(&job, &src, img);
    fclose(src.file); /* read only: nothing to lose if closing fails */
    return st;
}

parsum_status parsum__image_read_mem(parsum_context *ctx, const void *data,
                                     size_t size, parsum_image *img)
{
    PARSUM__CHECK(read_args(ctx, data, "data", img));
    parsum__io_job job = {ctx, READ_FN, "<memory>"};
    parsum__io_src src = {0};
    src.mem = data;
    src.size = size;
    return read_any(&job, &src, img);
}

/* ---- writing ------------------------------------------------------------ */

typedef enum out_format {
    OUT_PNG,
    OUT_JPEG,
    OUT_PGM,
    OUT_PPM,
    OUT_PFM,
    OUT_HDR,
    OUT_UNKNOWN
} out_format;

/* What each format holds: dtype bits (1u << dtype) and channel counts
 * (bit c for c channels). */
static const struct {
    const char *ext;
    out_format format;
    unsigned dtypes;
    unsigned channels;
    const char *holds; /* for messages */
} out_formats[] = {
    {"png", OUT_PNG, 1u << PARSUM_U8 | 1u << PARSUM_U16, 0x1e,
     "u8 or u16 samples, 1 to 4 channels"},
    {"jpg", OUT_JPEG, 1u << PARSUM_U8, 0x1e, "u8 samples, 1 to 4 channels"},
    {"jpeg", OUT_JPEG, 1u << PARSUM_U8, 0x1e, "u8 samples, 1 to 4 channels"},
    {"pgm", OUT_PGM, 1u << PARSUM_U8 | 1u << PARSUM_U16, 0x02,
     "u8 or u16 samples, 1 channel"},
    {"ppm", OUT_PPM, 1u << PARSUM_U8 | 1u << PARSUM_U16, 0x08,
     "u8 or u16 samples, 3 channels"},
    {"pfm", OUT_PFM, 1u << PARSUM_F32, 0x0a, "f32 samples, 1 or 3 channels"},
    {"hdr", OUT_HDR, 1u << PARSUM_F32, 0x08, "f32 samples, 3 channels"},
};

/* The entry of out_formats for path's extension (case-insensitive), or -1. */
static int out_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot == NULL || (slash != NULL && dot < slash))
        return -1;
    char ext[8];
    size_t n = strlen(dot + 1);
    if (n == 0 || n >= sizeof ext)
        return -1;
    for (size_t i = 0; i <= n; i++) {
        char c = dot[1 + i];
        ext[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    for (size_t i = 0; i < sizeof out_formats / sizeof out_formats[0]; i++)
        if (strcmp(ext, out_formats[i].ext) == 0)
            return (int)i;
    return -1;
}

/* Checks every field of the descriptor (parsum.h, parsum_image) for an
 * image the host can read, and resolves its pitch. */
static parsum_status check_image(const parsum__io_job *job,
                                 const parsum_image *img,
                                 parsum__io_image *out)
{
    if (img == NULL || img->data == NULL)
        return parsum__io_fail(job, PARSUM_ERR_NULL_POINTER, "%s is NULL",
                               img == NULL ? "img" : "img->data");
    if (img->where != PARSUM_MEM_HOST)
        return parsum__io_fail(job, PARSUM_ERR_WRONG_MEMORY_SPACE,
                               "img->where = %d: only host images can be "
                               "written (parsum_image_copy one to the host)",
                               (int)img->where);
    if (!parsum__dtype_valid(img->dtype))
        return parsum__io_fail(job, PARSUM_ERR_INVALID_DTYPE,
                               "img->dtype = %d is not a parsum_dtype",
                               (int)img->dtype);
    if (img->width == 0 || img->height == 0 || img->channels < 1 ||
        img->channels > 4)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "image of %zu x %zu pixels of %d channels "
                               "(needs width, height >= 1, channels 1 to 4)",
                               img->width, img->height, img->channels);
    size_t size = parsum_dtype_size(img->dtype), row, last;
    if (!parsum__mul_size(img->width, (size_t)img->channels * size, &row))
        return parsum__io_fail(job, PARSUM_ERR_OVERFLOW,
                               "a row of %zu pixels overflows size_t",
                               img->width);
    size_t pitch = img->pitch != 0 ? img->pitch : row;
    if (pitch < row || pitch % size != 0)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "img->pitch = %zu: needs 0 or a multiple of "
                               "%zu that is at least the row size %zu",
                               img->pitch, size, row);
    if ((uintptr_t)img->data % size != 0)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "img->data %p is not aligned to its %zu-byte "
                               "samples",
                               img->data, size);
    if (!parsum__mul_size(pitch, img->height - 1, &last) ||
        last > SIZE_MAX - row ||
        (uintptr_t)img->data > UINTPTR_MAX - (last + row))
        return parsum__io_fail(job, PARSUM_ERR_OVERFLOW,
                               "%zu rows of pitch %zu pass the end of the "
                               "address space",
                               img->height, pitch);
    out->data = img->data;
    out->width = img->width;
    out->height = img->height;
    out->pitch = pitch;
    out->row_bytes = row;
    out->channels = img->channels;
    out->dtype = img->dtype;
    return PARSUM_OK;
}

/* Runs the encoder of the format on an open file. */
static parsum_status encode(const parsum__io_job *job, out_format format,
                            const parsum__io_image *im, parsum__io_sink *sink)
{
    switch (format) {
    case OUT_PGM:
    case OUT_PPM:
        return parsum__pnm_write(job, im, sink);
    case OUT_PFM:
        return parsum__pfm_write(job, im, sink);
#ifdef PARSUM_HAVE_STB
    case OUT_PNG:
        return parsum__png_write(job, im, sink);
    case OUT_JPEG:
        return parsum__jpeg_write(job, im, sink);
    case OUT_HDR:
        return parsum__hdr_write(job, im, sink);
#endif
    default:
        return parsum__io_fail(job, PARSUM_ERR_INTERNAL,
                               "no encoder for format %d", (int)format);
    }
}

/* Opens the file, encodes, and reports the first write error (including
 * one that only shows when the buffered data are flushed at close). */
static parsum_status write_file(const parsum__io_job *job, out_format format,
                                const parsum__io_image *im)
{
    parsum__io_sink sink = {0};
    errno = 0;
    sink.file = fopen(job->name, "wb");
    if (sink.file == NULL)
        return parsum__io_fail(job, PARSUM_ERR_IO, "cannot create: %s",
                               errno != 0 ? strerror(errno) : "fopen failed");
    parsum_status st = encode(job, format, im, &sink);
    errno = 0;
    if (fclose(sink.file) != 0 && sink.err == 0)
        sink.err = errno != 0 ? errno : EIO;
    if (st == PARSUM_OK && sink.err != 0)
        st = parsum__io_fail(job, PARSUM_ERR_IO, "write failed: %s",
                             strerror(sink.err));
    return st;
}

parsum_status parsum_image_write(parsum_context *ctx, const char *path,
                                 const parsum_image *img)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (path == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            WRITE_FN ": path is NULL");
    parsum__io_job job = {ctx, WRITE_FN, path};
    int f = out_format_of(path);
    if (f < 0)
        return parsum__io_fail(&job, PARSUM_ERR_INVALID_ARGUMENT,
                               "unknown extension (use .png, .jpg, .jpeg, "
                               ".pgm, .ppm, .pfm or .hdr)");
    parsum__io_image im;
    PARSUM__CHECK(check_image(&job, img, &im));
    if (!(out_formats[f].dtypes >> im.dtype & 1u) ||
        !(out_formats[f].channels >> im.channels & 1u))
        return parsum__io_fail(&job, PARSUM_ERR_INVALID_ARGUMENT,
                               ".%s holds %s, not %s samples with %d "
                               "channels",
                               out_formats[f].ext, out_formats[f].holds,
                               parsum_dtype_name(im.dtype), im.channels);
#ifndef PARSUM_HAVE_STB
    if (out_formats[f].format == OUT_PNG ||
        out_formats[f].format == OUT_JPEG || out_formats[f].format == OUT_HDR)
        return parsum__io_fail(&job, PARSUM_ERR_UNSUPPORTED,
                               ".%s needs stb_image_write, and parsum was "
                               "built without it",
                               out_formats[f].ext);
#endif
    return write_file(&job, out_formats[f].format, &im);
}
