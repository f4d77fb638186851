/*
 * png_write.c - PNG encoder for U8 and U16 images of 1 to 4 channels
 * (stb_image_write writes 8-bit PNG only, and parsum needs 16-bit too).
 *
 * PNG (ISO/IEC 15948, www.w3.org/TR/png/): the signature, then chunks of
 * length, type, data and CRC-32: IHDR (size, bit depth 8 or 16, colour
 * type grey / grey+alpha / RGB / RGBA, no interlace), IDAT (the zlib
 * stream of the filtered rows) and IEND. 16-bit samples are big-endian.
 * Each row gets the filter (none, sub, up, average, Paeth) with the least
 * sum of absolute filtered bytes, the heuristic the specification
 * recommends; deflate is stb_image_write's compressor (parsum__stb_deflate).
 */
#include "io/image_io.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* CRC-32 of the PNG specification (reflected polynomial 0xEDB88320). */
typedef struct crc_table {
    uint32_t t[256];
} crc_table;

static void crc_init(crc_table *c)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t v = n;
        for (int k = 0; k < 8; k++)
            v = (v & 1) ? 0xEDB88320u ^ (v >> 1) : v >> 1;
        c->t[n] = v;
    }
}

static uint32_t crc_update(const crc_table *c, uint32_t crc,
                           const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        crc = c->t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Writes one chunk: length, type, data, CRC of type and data. */
static void put_chunk(parsum__io_sink *sink, const crc_table *crc,
                      const char *type, const unsigned char *data,
                      uint32_t len)
{
    unsigned char head[8], tail[4];
    put_be32(head, len);
    memcpy(head + 4, type, 4);
    uint32_t c = crc_update(crc, 0xffffffffu, head + 4, 4);
    c = crc_update(crc, c, data, len);
    put_be32(tail, c ^ 0xffffffffu);
    parsum__io_write(sink, head, 8);
    parsum__io_write(sink, data, len);
    parsum__io_write(sink, tail, 4);
}

/* The Paeth predictor: of a (left), b (above), c (above left), the one
 * closest to a + b - c, ties to a, then b. */
static int paeth(int a, int b, int c)
{
    int p = a + b - c;
    int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Row cur (n bytes, bpp per pixel; prev the row above, zeros for the
 * first) filtered with filter f (0 none, 1 sub, 2 up, 3 average, 4 Paeth)
 * into out. The first pixel has no left neighbour (a = c = 0), so it gets
 * its own loop and the others run without a test. */
static void filter_into(int f, const unsigned char *cur,
                        const unsigned char *prev, size_t n, size_t bpp,
                        unsigned char *out)
{
    size_t k = bpp < n ? bpp : n, i;
    for (i = 0; i < k; i++) {
        int b = prev[i]; /* Paeth of (0, b, 0) is b */
        int pred = f == 2 || f == 4 ? b : f == 3 ? b / 2 : 0;
        out[i] = (unsigned char)(cur[i] - pred);
    }
    switch (f) {
    case 1:
        for (; i < n; i++)
            out[i] = (unsigned char)(cur[i] - cur[i - bpp]);
        break;
    case 2:
        for (; i < n; i++)
            out[i] = (unsigned char)(cur[i] - prev[i]);
        break;
    case 3:
        for (; i < n; i++)
            out[i] = (unsigned char)(cur[i] - (cur[i - bpp] + prev[i]) / 2);
        break;
    case 4:
        for (; i < n; i++)
            out[i] = (unsigned char)(cur[i] - paeth(cur[i - bpp], prev[i],
                                                    prev[i - bpp]));
        break;
    default:
        memcpy(out + i, cur + i, n - i);
    }
}

/* The specification's measure of a filtered row: the sum of its bytes
 * taken as signed magnitudes. */
static uint64_t row_cost(const unsigned char *p, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (uint64_t)abs((int)(signed char)p[i]);
    return sum;
}

/* Filters one row of n bytes into out (filter type byte first, then n
 * bytes) with the cheapest filter; cand is scratch of n bytes. */
static void filter_row(const unsigned char *cur, const unsigned char *prev,
                       size_t n, size_t bpp, unsigned char *out,
                       unsigned char *cand)
{
    uint64_t best = UINT64_MAX;
    for (int f = 0; f < 5; f++) {
        filter_into(f, cur, prev, n, bpp, cand);
        uint64_t cost = row_cost(cand, n);
        if (cost < best) {
            best = cost;
            out[0] = (unsigned char)f;
            memcpy(out + 1, cand, n);
        }
    }
}

/* Row y of im in PNG byte order: the image row itself for U8, a big-endian
 * copy in buf for U16. */
static const unsigned char *png_row(const parsum__io_image *im, size_t y,
                                    unsigned char *buf)
{
    const unsigned char *row = im->data + y * im->pitch;
    if (im->dtype == PARSUM_U8)
        return row;
    for (size_t i = 0; i < im->row_bytes / 2; i++) {
        uint16_t v;
        memcpy(&v, row + 2 * i, 2);
        buf[2 * i] = (unsigned char)(v >> 8);
        buf[2 * i + 1] = (unsigned char)v;
    }
    return buf;
}

/* All rows filtered into one malloc'd block of height * (row_bytes + 1). */
static unsigned char *filter_image(const parsum__io_image *im)
{
    size_t n = im->row_bytes, bpp = n / im->width;
    unsigned char *out = malloc(im->height * (n + 1));
    /* A row of zeros above the first, two big-endian rows for U16, and
     * the candidate filter's row. */
    unsigned char *scratch = calloc(4, n);
    if (out == NULL || scratch == NULL) {
        free(out);
        free(scratch);
        return NULL;
    }
    const unsigned char *prev = scratch;
    for (size_t y = 0; y < im->height; y++) {
        unsigned char *buf = scratch + n * (1 + y % 2);
        const unsigned char *cur = png_row(im, y, buf);
        filter_row(cur, prev, n, bpp, out + y * (n + 1), scratch + 3 * n);
        prev = cur;
    }
    free(scratch);
    return out;
}

parsum_status parsum__png_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    static const unsigned char colour_type[5] = {0, 0, 4, 2, 6};
    if (im->row_bytes + 1 > (size_t)INT_MAX / im->height)
        return parsum__io_fail(job, PARSUM_ERR_INVALID_ARGUMENT,
                               "%zu x %zu pixels of %zu bytes: the PNG "
                               "encoder takes at most %d bytes of rows",
                               im->width, im->height,
                               im->row_bytes / im->width, INT_MAX);
    unsigned char *rows = filter_image(im);
    size_t zlen = 0;
    unsigned char *z = NULL;
    if (rows != NULL)
        z = parsum__stb_deflate(rows, im->height * (im->row_bytes + 1),
                                &zlen);
    free(rows);
    if (z == NULL)
        return parsum__io_fail(job, PARSUM_ERR_OUT_OF_MEMORY,
                               "out of memory while compressing %zu x %zu "
                               "pixels",
                               im->width, im->height);
    crc_table crc;
    crc_init(&crc);
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)im->width);
    put_be32(ihdr + 4, (uint32_t)im->height);
    ihdr[8] = im->dtype == PARSUM_U16 ? 16 : 8;
    ihdr[9] = colour_type[im->channels];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive, no interlace */
    parsum__io_write(sink, sig, 8);
    put_chunk(sink, &crc, "IHDR", ihdr, 13);
    put_chunk(sink, &crc, "IDAT", z, (uint32_t)zlen);
    put_chunk(sink, &crc, "IEND", NULL, 0);
    free(z);
    return PARSUM_OK;
}
