/*
 * pnm.c - binary PGM / PPM (netpbm P5, P6) and PFM (Pf, PF): readers and
 * writers.
 *
 * PGM/PPM (netpbm.sourceforge.net/doc/pgm.html, ppm.html): "P5" or "P6",
 * then width, height and maxval as decimal numbers separated by whitespace
 * (comments from '#' to the end of the line may appear between them),
 * exactly one whitespace byte, and the raster: rows top-down, samples of
 * one byte for maxval < 256 and two bytes big-endian otherwise. Samples
 * are returned as stored (not rescaled to the full range); one above
 * maxval makes the file corrupt.
 *
 * PFM (the format of Debevec's HDRShop, as netpbm documents it): "Pf"
 * (grey) or "PF" (RGB), width and height, a scale whose sign gives the byte
 * order (negative: little-endian), one whitespace byte, then 32-bit floats
 * with the rows stored bottom-up. parsum returns them top-down and writes
 * little-endian files with scale -1.0. The scale's magnitude is ignored, as
 * most readers do.
 *
 * Every number is checked while it is parsed, so a header cannot declare
 * more than 2^28 pixels or make a size computation overflow.
 */
#include "io/image_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Whitespace as netpbm defines it (no locale). */
static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
           c == '\r';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Skips a comment whose '#' was just read: up to and including the end of
 * the line. Returns false at the end of the data. */
static bool skip_comment(parsum__io_src *src)
{
    for (;;) {
        int c = parsum__io_getc(src);
        if (c < 0)
            return false;
        if (c == '\n' || c == '\r')
            return true;
    }
}

/* The first byte of the next token, after whitespace and comments; -1 at
 * the end of the data. */
static int token_start(parsum__io_src *src)
{
    for (;;) {
        int c = parsum__io_getc(src);
        if (c == '#') {
            if (!skip_comment(src))
                return -1;
        } else if (!is_space(c)) {
            return c;
        }
    }
}

/* Reads a header number `what` (decimal, at most max) into *value. A
 * number that is not `last` may end in whitespace or a comment; the last
 * one in exactly one whitespace byte, after which the raster starts. */
static parsum_status read_number(const parsum__io_job *job,
                                 parsum__io_src *src, const char *what,
                                 size_t max, bool last, size_t *value)
{
    int c = token_start(src);
    if (c < 0)
        return parsum__io_short(job, src, what);
    if (!is_digit(c))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "header: expected the %s (a decimal number) at "
                               "byte %zu, found 0x%02x",
                               what, src->pos - 1, (unsigned)c);
    size_t v = 0;
    while (is_digit(c)) {
        size_t d = (size_t)(c - '0');
        if (v > (max - d) / 10)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "header: the %s is larger than %zu", what,
                                   max);
        v = v * 10 + d;
        c = parsum__io_getc(src);
    }
    if (c < 0)
        return parsum__io_short(job, src, what);
    if (c == '#' && !last) {
        if (!skip_comment(src))
            return parsum__io_short(job, src, "a header comment");
    } else if (!is_space(c)) {
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "header: the %s is followed by byte 0x%02x "
                               "instead of whitespace",
                               what, (unsigned)c);
    }
    *value = v;
    return PARSUM_OK;
}

/* Reads the PFM scale: a decimal number ([+-]digits[.digits][e[+-]digits],
 * at least one digit), followed by one whitespace byte. Only its sign
 * matters, so it is checked by hand rather than with strtod, whose decimal
 * point depends on the locale. *little_endian: the scale is negative. */
static parsum_status read_scale(const parsum__io_job *job, parsum__io_src *src,
                                bool *little_endian)
{
    int c = token_start(src);
    bool negative = false, nonzero = false, ok;
    size_t digits = 0;
    if (c == '-' || c == '+') {
        negative = c == '-';
        c = parsum__io_getc(src);
    }
    for (; is_digit(c); c = parsum__io_getc(src)) {
        digits++;
        nonzero = nonzero || c != '0';
    }
    if (c == '.') {
        for (c = parsum__io_getc(src); is_digit(c); c = parsum__io_getc(src)) {
            digits++;
            nonzero = nonzero || c != '0';
        }
    }
    ok = digits > 0 && nonzero;
    if (ok && (c == 'e' || c == 'E')) {
        c = parsum__io_getc(src);
        if (c == '-' || c == '+')
            c = parsum__io_getc(src);
        ok = is_digit(c);
        while (is_digit(c))
            c = parsum__io_getc(src);
    }
    if (c < 0)
        return parsum__io_short(job, src, "the scale");
    if (!ok || !is_space(c))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "header: the scale is not a nonzero decimal "
                               "number followed by whitespace (byte %zu)",
                               src->pos - 1);
    *little_endian = negative;
    return PARSUM_OK;
}

/* Big-endian 16-bit samples to native ones, in place; checks them against
 * maxval. Returns the index of the first sample above maxval, or n. */
static size_t u16_from_be(unsigned char *p, size_t n, unsigned maxval)
{
    size_t bad = n;
    for (size_t i = 0; i < n; i++) {
        uint16_t v = (uint16_t)(p[2 * i] << 8 | p[2 * i + 1]);
        memcpy(p + 2 * i, &v, 2);
        if (v > maxval && bad == n)
            bad = i;
    }
    return bad;
}

/* Reads the P5/P6 raster after the header. */
static parsum_status read_pnm_raster(const parsum__io_job *job,
                                     parsum__io_src *src, size_t maxval,
                                     parsum_image *img)
{
    size_t samples = img->width * img->height * (size_t)img->channels;
    size_t bytes = img->pitch * img->height;
    unsigned char *p = img->data;
    if (parsum__io_read(src, p, bytes) < bytes)
        return parsum__io_short(job, src, "the raster");
    size_t bad = samples;
    if (img->dtype == PARSUM_U16) {
        bad = u16_from_be(p, samples, (unsigned)maxval);
    } else if (maxval < 255) {
        for (size_t i = 0; i < samples && bad == samples; i++)
            if (p[i] > maxval)
                bad = i;
    }
    if (bad < samples) {
        size_t pixel = bad / (size_t)img->channels;
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "sample %zu of pixel (%zu, %zu) is above "
                               "maxval %zu",
                               bad % (size_t)img->channels,
                               pixel % img->width, pixel / img->width, maxval);
    }
    return PARSUM_OK;
}

/* Reads the PFM raster: file row r is image row height - 1 - r. */
static parsum_status read_pfm_raster(const parsum__io_job *job,
                                     parsum__io_src *src, bool little_endian,
                                     parsum_image *img)
{
    size_t n = img->width * (size_t)img->channels;
    for (size_t r = 0; r < img->height; r++) {
        unsigned char *row = (unsigned char *)img->data +
                             (img->height - 1 - r) * img->pitch;
        if (parsum__io_read(src, row, img->pitch) < img->pitch)
            return parsum__io_short(job, src, "the raster");
        for (size_t i = 0; i < n; i++) {
            unsigned char *b = row + 4 * i;
            uint32_t bits;
            if (little_endian)
                bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
                       (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
            else
                bits = (uint32_t)b[3] | (uint32_t)b[2] << 8 |
                       (uint32_t)b[1] << 16 | (uint32_t)b[0] << 24;
            float v;
            memcpy(&v, &bits, 4);
            memcpy(b, &v, 4);
        }
    }
    return PARSUM_OK;
}

parsum_status parsum__pnm_read(const parsum__io_job *job, parsum__io_src *src,
                               int kind, parsum_image *img)
{
    int c = parsum__io_getc(src);
    if (c < 0)
        return parsum__io_short(job, src, "the header");
    if (!is_space(c))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "header: no whitespace after the magic "
                               "number P%c",
                               kind);
    bool pfm = kind == 'f' || kind == 'F';
    int channels = (kind == '5' || kind == 'f') ? 1 : 3;
    size_t width, height, maxval = 0;
    bool little_endian = false;
    PARSUM__CHECK(read_number(job, src, "width", PARSUM__IMAGE_MAX_PIXELS,
                              false, &width));
    PARSUM__CHECK(read_number(job, src, "height", PARSUM__IMAGE_MAX_PIXELS,
                              false, &height));
    if (pfm) {
        PARSUM__CHECK(read_scale(job, src, &little_endian));
    } else {
        PARSUM__CHECK(read_number(job, src, "maxval", 65535, true, &maxval));
        if (maxval == 0)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "header: maxval 0 (must be 1 to 65535)");
    }
    parsum_dtype dtype = pfm ? PARSUM_F32
                             : (maxval > 255 ? PARSUM_U16 : PARSUM_U8);
    PARSUM__CHECK(parsum__io_check_size(job, pfm ? "PFM" : "PGM/PPM", width,
                                        height));
    /* Known short data fail before the allocation (a header can ask for
     * gigabytes in a few bytes). At most 2^28 * 3 * 4 bytes: no overflow. */
    size_t need = width * height * (size_t)channels * parsum_dtype_size(dtype);
    size_t left;
    if (parsum__io_remaining(src, &left) && left < need)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "truncated: the raster needs %zu bytes, %zu "
                               "follow the header",
                               need, left);
    parsum_image out;
    PARSUM__CHECK(parsum__io_alloc_image(job, &out, width, height, channels,
                                         dtype));
    parsum_status st = pfm ? read_pfm_raster(job, src, little_endian, &out)
                           : read_pnm_raster(job, src, maxval, &out);
    if (st != PARSUM_OK) {
        parsum__host_free(out.data);
        return st;
    }
    *img = out;
    return PARSUM_OK;
}

/* ---- writing ------------------------------------------------------------ */

/* Writes the header text; formatted with %zu only, so no locale enters. */
static void write_header(parsum__io_sink *sink, const char *magic,
                         size_t width, size_t height, const char *last)
{
    char head[96];
    int n = snprintf(head, sizeof head, "%s\n%zu %zu\n%s\n", magic, width,
                     height, last);
    parsum__io_write(sink, head, (size_t)n);
}

parsum_status parsum__pnm_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink)
{
    bool wide = im->dtype == PARSUM_U16;
    write_header(sink, im->channels == 1 ? "P5" : "P6", im->width,
                 im->height, wide ? "65535" : "255");
    if (!wide) {
        for (size_t y = 0; y < im->height; y++)
            parsum__io_write(sink, im->data + y * im->pitch, im->row_bytes);
        return PARSUM_OK;
    }
    unsigned char *buf = malloc(im->row_bytes);
    if (buf == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "cannot allocate a row of %zu bytes",
                               im->row_bytes);
    size_t n = im->row_bytes / 2;
    for (size_t y = 0; y < im->height && sink->err == 0; y++) {
        const unsigned char *row = im->data + y * im->pitch;
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, row + 2 * i, 2);
            buf[2 * i] = (unsigned char)(v >> 8);
            buf[2 * i + 1] = (unsigned char)v;
        }
        parsum__io_write(sink, buf, im->row_bytes);
    }
    free(buf);
    return PARSUM_OK;
}

parsum_status parsum__pfm_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink)
{
    write_header(sink, im->channels == 1 ? "Pf" : "PF", im->width,
                 im->height, "-1.0");
    unsigned char *buf = malloc(im->row_bytes);
    if (buf == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "cannot allocate a row of %zu bytes",
                               im->row_bytes);
    size_t n = im->row_bytes / 4;
    for (size_t r = 0; r < im->height && sink->err == 0; r++) {
        const unsigned char *row = im->data + (im->height - 1 - r) * im->pitch;
        for (size_t i = 0; i < n; i++) {
            uint32_t bits;
            memcpy(&bits, row + 4 * i, 4);
            for (int b = 0; b < 4; b++)
                buf[4 * i + (size_t)b] = (unsigned char)(bits >> (8 * b));
        }
        parsum__io_write(sink, buf, im->row_bytes);
    }
    free(buf);
    return PARSUM_OK;
}
