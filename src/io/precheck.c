/*
 * precheck.c - what parsum verifies in a PNG, JPEG or Radiance HDR file
 * before stb_image sees it.
 *
 * stb_image (2.27) trusts its input more than parsum may: it allocates the
 * whole image from the header's size before reading any pixel data, and it
 * reads past the end of the data as zeros, so that a truncated JPEG or HDR
 * decodes "successfully" to a partly black image, and a truncated
 * run-length HDR scanline makes it loop forever (a run of length 0 never
 * advances; CVE-2021-42715). So each file is walked here first, without
 * decoding: its structure must be complete up to the end marker, and its
 * declared size must fit the 2^28-pixel cap and, for PNG, the compressed
 * data (deflate expands at most 1032:1). The walk also gives the size and
 * channel count the decoder will produce.
 *
 *   PNG   signature, IHDR, complete chunks up to IEND (www.w3.org/TR/png/)
 *   JPEG  SOI, marker segments, entropy-coded data up to EOI (ITU T.81,
 *         annex B), at least one scan (stb turns a frame without any
 *         into a grey image of the declared size), Huffman tables of at
 *         most 256 codes, defined before the scans that use them (stb
 *         2.27 writes past its arrays, or reads uninitialised ones,
 *         otherwise), at least a bit of coded data per block (stb decodes
 *         missing data as zeros); size and components from the first SOFn
 *   HDR   header lines, the "-Y h +X w" line, then every scanline as stb
 *         reads it: flat RGBE pixels, or new-style run-length encoding
 *         (four components, runs and dumps that must fill the width)
 */
#include "io/image_io.h"

#include <stdint.h>
#include <string.h>

/* zlib's bound on deflate's expansion ratio. */
#define DEFLATE_MAX_RATIO 1032u

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static size_t be16(const unsigned char *p)
{
    return (size_t)p[0] << 8 | p[1];
}

/* ---- PNG ---------------------------------------------------------------- */

/* Samples per pixel of PNG colour type ct in the file (-1: invalid), and
 * the decoded channels (palette entries are RGB). */
static int png_samples(int ct, int *channels)
{
    static const int samples[7] = {1, -1, 3, 1, 2, -1, 4};
    static const int decoded[7] = {1, -1, 3, 3, 2, -1, 4};
    if (ct < 0 || ct > 6 || samples[ct] < 0)
        return -1;
    *channels = decoded[ct];
    return samples[ct];
}

/* Walks the chunks after IHDR to IEND: *idat = bytes of image data,
 * *trns = a tRNS chunk was seen. Chunk CRCs are not checked (stb does not
 * either). */
static parsum_status png_chunks(const parsum__io_job *job,
                                const unsigned char *d, size_t size,
                                uint64_t *idat, bool *trns)
{
    size_t pos = 8;
    for (;;) {
        if (size - pos < 12)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated: the data end after %zu bytes "
                                   "%s",
                                   size,
                                   pos == size ? "without an IEND chunk"
                                               : "inside a chunk header");
        uint32_t len = be32(d + pos);
        const unsigned char *type = d + pos + 4;
        if (len > size - pos - 12)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated: chunk '%c%c%c%c' at byte %zu "
                                   "needs %u bytes, %zu are left",
                                   type[0] & 0x7f, type[1] & 0x7f,
                                   type[2] & 0x7f, type[3] & 0x7f, pos,
                                   (unsigned)len, size - pos - 12);
        if (memcmp(type, "IDAT", 4) == 0)
            *idat += len;
        else if (memcmp(type, "tRNS", 4) == 0)
            *trns = true;
        else if (memcmp(type, "IEND", 4) == 0)
            return PARSUM_OK;
        pos += 12 + (size_t)len;
    }
}

parsum_status parsum__png_check(const parsum__io_job *job,
                                const unsigned char *d, size_t size,
                                parsum__shape *shape)
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
    size_t width = be32(d + 16), height = be32(d + 20);
    int depth = d[24], channels = 0;
    int samples = png_samples(d[25], &channels);
    if (samples < 0)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "unknown PNG colour type %d", d[25]);
    PARSUM__CHECK(parsum__io_check_size(job, "PNG", width, height));
    uint64_t idat = 0;
    bool trns = false;
    PARSUM__CHECK(png_chunks(job, d, size, &idat, &trns));
    /* Filtered rows with a filter byte each (interlaced images need more). */
    uint64_t row = ((uint64_t)width * (uint64_t)samples * (uint64_t)depth +
                    7) / 8 + 1;
    uint64_t raw = row * height;
    if (idat * DEFLATE_MAX_RATIO + 1024 < raw)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "%llu bytes of compressed PNG data cannot "
                               "hold %zu x %zu pixels (%llu bytes inflated)",
                               (unsigned long long)idat, width, height,
                               (unsigned long long)raw);
    /* tRNS gives grey, RGB and palette images an alpha channel (stb). */
    if (trns && samples != 2 && samples != 4)
        channels++;
    shape->width = width;
    shape->height = height;
    shape->channels = channels;
    shape->dtype = depth == 16 ? PARSUM_U16 : PARSUM_U8;
    return PARSUM_OK;
}

/* ---- JPEG --------------------------------------------------------------- */

/* Start of frame markers: C0..CF except DHT (C4), JPG (C8) and DAC (CC). */
static bool is_sof(int m)
{
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* From pos inside entropy-coded data: the position of the next marker
 * (0xFF followed by neither 0x00, a stuffed byte, nor RST0..7), or size. */
static size_t jpeg_skip_scan(const unsigned char *d, size_t size, size_t pos)
{
    for (; pos + 1 < size; pos++) {
        if (d[pos] != 0xFF)
            continue;
        int n = d[pos + 1];
        if (n != 0x00 && n != 0xFF && !(n >= 0xD0 && n <= 0xD7))
            return pos;
    }
    return size;
}

/* What the walk over a JPEG has seen so far. */
typedef struct jpeg_walk {
    bool sof, sos, progressive;
    unsigned tables;    /* bit 4 * class + id: Huffman tables defined */
    uint64_t blocks;    /* 8 x 8 blocks of all components of the frame */
    uint64_t coded;     /* bytes of entropy-coded data of all scans */
    parsum__shape shape;
} jpeg_walk;

/* The frame header (SOFn, p: the n bytes after the length field): size,
 * components, and their blocks (each component's share of the image,
 * by its sampling factors 1..4, in 8 x 8 blocks). */
static bool jpeg_sof(jpeg_walk *w, int m, const unsigned char *p, size_t n)
{
    size_t nc = n >= 6 ? p[5] : 0, hmax = 1, vmax = 1;
    if (nc < 1 || n < 6 + 3 * nc)
        return false;
    for (size_t c = 0; c < nc; c++) {
        size_t h = p[7 + 3 * c] >> 4, v = p[7 + 3 * c] & 15;
        if (h < 1 || h > 4 || v < 1 || v > 4)
            return false;
        hmax = h > hmax ? h : hmax;
        vmax = v > vmax ? v : vmax;
    }
    w->shape.height = be16(p + 1);
    w->shape.width = be16(p + 3);
    w->shape.channels = nc == 1 ? 1 : 3;
    w->shape.dtype = PARSUM_U8;
    for (size_t c = 0; c < nc; c++) {
        size_t h = p[7 + 3 * c] >> 4, v = p[7 + 3 * c] & 15;
        uint64_t cw = (w->shape.width * h + hmax - 1) / hmax;
        uint64_t ch = (w->shape.height * v + vmax - 1) / vmax;
        w->blocks += ((cw + 7) / 8) * ((ch + 7) / 8);
    }
    w->progressive = m == 0xC2;
    w->sof = true;
    return true;
}

/* A DHT segment's tables (p: the n bytes after the length field): class
 * and id in range, at most 256 codes each (stb 2.27 writes past its
 * arrays for more), exactly filling the segment. Records them as defined. */
static bool jpeg_dht(jpeg_walk *w, const unsigned char *p, size_t n)
{
    while (n > 0) {
        if (n < 17 || (p[0] >> 4) > 1 || (p[0] & 15) > 3)
            return false;
        size_t codes = 0;
        for (int i = 1; i <= 16; i++)
            codes += p[i];
        if (codes > 256 || codes > n - 17)
            return false;
        w->tables |= 1u << (4 * (p[0] >> 4) + (p[0] & 15));
        p += 17 + codes;
        n -= 17 + codes;
    }
    return true;
}

/* An SOS segment (p: the n bytes after the length field): 1 to 4
 * components, and every Huffman table the scan decodes with defined
 * before it (stb 2.27 reads an undefined table's uninitialised memory and
 * runs off its end: found by fuzzing). Sequential scans use the DC and AC
 * tables, progressive ones the DC table in a first DC scan (Ss = 0,
 * Ah = 0) and the AC table in AC scans (Ss > 0). */
static bool jpeg_sos(const jpeg_walk *w, const unsigned char *p, size_t n)
{
    if (n < 1 || p[0] < 1 || p[0] > 4 || n != 4 + 2 * (size_t)p[0])
        return false;
    size_t ns = p[0];
    unsigned ss = p[1 + 2 * ns], ah = p[3 + 2 * ns] >> 4;
    bool dc = !w->progressive || (ss == 0 && ah == 0);
    bool ac = !w->progressive || ss > 0;
    for (size_t i = 0; i < ns; i++) {
        unsigned td = p[2 + 2 * i] >> 4, ta = p[2 + 2 * i] & 15;
        if (dc && (td > 3 || !(w->tables >> td & 1u)))
            return false;
        if (ac && (ta > 3 || !(w->tables >> (4 + ta) & 1u)))
            return false;
    }
    return true;
}

/* One marker segment: m, and len bytes from its length field at d. */
static parsum_status jpeg_segment(const parsum__io_job *job, jpeg_walk *w,
                                  int m, const unsigned char *d, size_t len,
                                  size_t pos)
{
    const char *bad = NULL;
    if (len < 2)
        bad = "segment length below 2";
    else if (m == 0xC4 && !jpeg_dht(w, d + 2, len - 2))
        bad = "bad Huffman table segment";
    else if (m == 0xDA && !jpeg_sos(w, d + 2, len - 2))
        bad = "bad scan header, or a scan using an undefined Huffman table";
    else if (is_sof(m) && !w->sof && !jpeg_sof(w, m, d + 2, len - 2))
        bad = "bad start-of-frame segment";
    if (bad != NULL)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "JPEG: %s (marker 0x%02x at byte %zu)", bad, m,
                               pos);
    w->sos = w->sos || m == 0xDA;
    return PARSUM_OK;
}

/* The checks at EOI: a frame and a scan, the pixel cap, and enough coded
 * data for every block. stb decodes missing data as zeros, so a few
 * hundred bytes could otherwise declare (and cost the time and memory of)
 * 10^8 pixels. Every block of a sequential frame is coded once with at
 * least a DC and an AC code, each at least one bit long; in a progressive
 * frame the first DC scans code each block with at least one bit. */
static parsum_status jpeg_complete(const parsum__io_job *job,
                                   const jpeg_walk *w, parsum__shape *shape)
{
    if (w->sof)
        PARSUM__CHECK(parsum__io_check_size(job, "JPEG", w->shape.width,
                                            w->shape.height));
    if (!w->sof || !w->sos)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "JPEG without a %s segment",
                               !w->sof ? "start-of-frame" : "start-of-scan");
    uint64_t bits = w->blocks * (w->progressive ? 1 : 2);
    if (w->coded * 8 < bits)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "JPEG: %llu bytes of coded data cannot hold "
                               "the %llu blocks of %zu x %zu pixels",
                               (unsigned long long)w->coded,
                               (unsigned long long)w->blocks, w->shape.width,
                               w->shape.height);
    *shape = w->shape;
    return PARSUM_OK;
}

parsum_status parsum__jpeg_check(const parsum__io_job *job,
                                 const unsigned char *d, size_t size,
                                 parsum__shape *shape)
{
    jpeg_walk w = {0};
    size_t pos = 2; /* after SOI, checked by the caller */
    for (;;) {
        if (pos < size && d[pos] != 0xFF)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "JPEG: expected a marker at byte %zu, "
                                   "found 0x%02x",
                                   pos, d[pos]);
        while (pos < size && d[pos] == 0xFF) /* fill bytes */
            pos++;
        int m = pos < size ? d[pos++] : -1;
        if (m == 0xD9) /* EOI */
            break;
        if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) /* no segment */
            continue;
        if (m < 0 || size - pos < 2 || be16(d + pos) > size - pos)
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated: the JPEG data end after %zu "
                                   "bytes without an EOI marker",
                                   size);
        size_t len = be16(d + pos);
        PARSUM__CHECK(jpeg_segment(job, &w, m, d + pos, len, pos - 1));
        pos += len;
        if (m == 0xDA) { /* the scan's entropy-coded data follow */
            size_t end = jpeg_skip_scan(d, size, pos);
            w.coded += end - pos;
            pos = end;
        }
    }
    return jpeg_complete(job, &w, shape);
}

/* ---- Radiance HDR ------------------------------------------------------- */

/* Longest header line: stb reads lines into a 1024-byte buffer and cuts
 * longer ones, so that it would see another line than parsum does. */
#define HDR_MAX_LINE 1000

/* The line starting at *pos (without its '\n'); *pos moves past it. False
 * when no '\n' ends it, and for a line that stb would read differently:
 * too long, or holding a NUL byte (stb's string functions stop there, so
 * that "\0..." is an empty line to it). */
static bool next_line(const unsigned char *d, size_t size, size_t *pos,
                      const char **line, size_t *len)
{
    const unsigned char *nl = memchr(d + *pos, '\n', size - *pos);
    if (nl == NULL)
        return false;
    *line = (const char *)d + *pos;
    *len = (size_t)(nl - (d + *pos));
    *pos += *len + 1;
    return *len <= HDR_MAX_LINE && memchr(*line, '\0', *len) == NULL;
}

/* Parses "-Y <height> +X <width>" (the orientation stb supports). */
static bool hdr_resolution(const char *s, size_t len, size_t *w, size_t *h)
{
    size_t v[2] = {0, 0}, i = 0;
    for (int k = 0; k < 2; k++) {
        const char *tag = k == 0 ? "-Y " : "+X ";
        while (k == 1 && i < len && s[i] == ' ')
            i++;
        if (len - i < 3 || memcmp(s + i, tag, 3) != 0)
            return false;
        i += 3;
        while (i < len && s[i] == ' ') /* stb reads it with strtol */
            i++;
        size_t digits = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            if (v[k] > PARSUM__IMAGE_MAX_PIXELS)
                return false;
            v[k] = v[k] * 10 + (size_t)(s[i] - '0');
        }
        if (digits == 0)
            return false;
    }
    *h = v[0];
    *w = v[1];
    return true;
}

/* Walks one run-length encoded scanline at *pos (its 4-byte head already
 * checked): four components, each of runs (count > 128, one value) and
 * dumps (count 1..128 bytes) filling exactly w values. */
static bool hdr_rle_line(const unsigned char *d, size_t size, size_t *pos,
                         size_t w)
{
    size_t p = *pos;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < w;) {
            if (p >= size)
                return false;
            size_t count = d[p++], bytes = 1;
            if (count > 128)
                count -= 128;
            else
                bytes = count;
            if (count == 0 || count > w - i || bytes > size - p)
                return false;
            p += bytes;
            i += count;
        }
    }
    *pos = p;
    return true;
}

/* Whether the pixel data at pos hold what stb reads: flat RGBE pixels
 * for widths outside 8..32767, else run-length scanlines; a scanline
 * whose head is not a run-length one makes stb read everything from
 * there on as flat pixels. */
static bool hdr_pixels(const unsigned char *d, size_t size, size_t pos,
                       size_t w, size_t h)
{
    if (w < 8 || w >= 32768)
        return size - pos >= w * h * 4;
    for (size_t y = 0; y < h; y++) {
        if (size - pos < 4)
            return false;
        const unsigned char *s = d + pos;
        if (s[0] != 2 || s[1] != 2 || (s[2] & 0x80))
            return size - pos >= w * h * 4;
        if (be16(s + 2) != w)
            return false;
        pos += 4;
        if (!hdr_rle_line(d, size, &pos, w))
            return false;
    }
    return true;
}

parsum_status parsum__hdr_check(const parsum__io_job *job,
                                const unsigned char *d, size_t size,
                                parsum__shape *shape)
{
    size_t pos = 0, len = 0, w = 0, h = 0;
    const char *line = NULL;
    bool format = false;
    if (!next_line(d, size, &pos, &line, &len))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "truncated or bad HDR header line");
    do {
        if (!next_line(d, size, &pos, &line, &len))
            return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                                   "truncated or bad HDR header (no empty "
                                   "line, a NUL byte or a line over %d "
                                   "bytes)",
                                   HDR_MAX_LINE);
        format = format || (len == 22 &&
                            memcmp(line, "FORMAT=32-bit_rle_rgbe", 22) == 0);
    } while (len > 0);
    if (!format)
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "HDR header without FORMAT=32-bit_rle_rgbe");
    if (!next_line(d, size, &pos, &line, &len) ||
        !hdr_resolution(line, len, &w, &h))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "HDR: no '-Y <height> +X <width>' line after "
                               "the header");
    PARSUM__CHECK(parsum__io_check_size(job, "HDR image", w, h));
    if (!hdr_pixels(d, size, pos, w, h))
        return parsum__io_fail(job, PARSUM_ERR_BAD_FILE,
                               "HDR pixel data truncated or corrupt (%zu x "
                               "%zu pixels from byte %zu)",
                               w, h, pos);
    shape->width = w;
    shape->height = h;
    shape->channels = 3;
    shape->dtype = PARSUM_F32;
    return PARSUM_OK;
}
