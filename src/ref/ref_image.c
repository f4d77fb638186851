/*
 * ref_image.c - serial references of the image functions (parsum.h,
 * "Images"): summed-area tables, box sums and the box filter, written as
 * the header defines them, one sample at a time. Integer tables use
 * uint64_t arithmetic modulo 2^64, truncated to the table's width on store
 * (so U32 tables wrap as documented); float tables sum in float64. The box
 * filter sums each window directly, so it is an independent check of the
 * fast running-sum versions.
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sample c of pixel (x, y). */
static const char *px(const parsum_image *im, size_t x, size_t y, int c)
{
    size_t ss = parsum_dtype_size(im->dtype);
    return (const char *)im->data + y * im->pitch +
           (x * (size_t)im->channels + (size_t)c) * ss;
}

double parsum__ref_sample_f64(const parsum_image *im, size_t x, size_t y,
                              int c)
{
    const char *p = px(im, x, y, c);
    switch (im->dtype) {
    case PARSUM_I8: return *(const int8_t *)p;
    case PARSUM_U8: return *(const uint8_t *)p;
    case PARSUM_I16: return *(const int16_t *)p;
    case PARSUM_U16: return *(const uint16_t *)p;
    case PARSUM_I32: return *(const int32_t *)p;
    case PARSUM_U32: return *(const uint32_t *)p;
    case PARSUM_I64: return (double)*(const int64_t *)p;
    case PARSUM_U64: return (double)*(const uint64_t *)p;
    case PARSUM_F32: return *(const float *)p;
    case PARSUM_F64: return *(const double *)p;
    }
    return 0;
}

/* Integer samples as int64 (I32 negatives sign-extended). */
int64_t parsum__ref_sample_i64(const parsum_image *im, size_t x, size_t y,
                               int c)
{
    const char *p = px(im, x, y, c);
    switch (im->dtype) {
    case PARSUM_I8: return *(const int8_t *)p;
    case PARSUM_U8: return *(const uint8_t *)p;
    case PARSUM_I16: return *(const int16_t *)p;
    case PARSUM_U16: return *(const uint16_t *)p;
    case PARSUM_I32: return *(const int32_t *)p;
    case PARSUM_U32: return *(const uint32_t *)p;
    case PARSUM_I64: return *(const int64_t *)p;
    case PARSUM_U64: return (int64_t)*(const uint64_t *)p;
    default: return 0;
    }
}

static void store_u64(const parsum_image *t, size_t x, size_t y, int c,
                      uint64_t v)
{
    char *p = (char *)px(t, x, y, c);
    switch (t->dtype) {
    case PARSUM_U32: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
    case PARSUM_U64:
    case PARSUM_I64: memcpy(p, &v, 8); break;
    default: break;
    }
}

static void store_f64(const parsum_image *t, size_t x, size_t y, int c,
                      double v)
{
    char *p = (char *)px(t, x, y, c);
    if (t->dtype == PARSUM_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

void parsum__ref_image_mean(const parsum_image *src, double *mean)
{
    for (int c = 0; c < src->channels; c++) {
        double s = 0;
        for (size_t y = 0; y < src->height; y++)
            for (size_t x = 0; x < src->width; x++)
                s += parsum__ref_sample_f64(src, x, y, c);
        mean[c] = s / ((double)src->width * (double)src->height);
    }
}

/* The table of one channel: T(y, x) = T(y-1, x) + rowsum(y, 0..x), the
 * running column sums kept beside the table (float tables store rounded
 * entries, and the next row must not add the rounding). */
static void integral_channel(const parsum_image *src, const parsum_image *t,
                             bool inclusive, bool squared,
                             const double *offset, int c, uint64_t *colu,
                             double *colf)
{
    bool ftab = t->dtype == PARSUM_F32 || t->dtype == PARSUM_F64;
    size_t w = src->width, pad = inclusive ? 0 : 1;
    memset(colu, 0, w * sizeof *colu);
    memset(colf, 0, w * sizeof *colf);
    if (!inclusive) {
        for (size_t x = 0; x <= w; x++)
            ftab ? store_f64(t, x, 0, c, 0) : store_u64(t, x, 0, c, 0);
    }
    for (size_t y = 0; y < src->height; y++) {
        uint64_t ru = 0;
        double rf = 0;
        if (!inclusive)
            ftab ? store_f64(t, 0, y + 1, c, 0) : store_u64(t, 0, y + 1, c, 0);
        for (size_t x = 0; x < w; x++) {
            if (ftab) {
                double v = parsum__ref_sample_f64(src, x, y, c);
                if (offset)
                    v -= offset[c];
                rf += squared ? v * v : v;
                colf[x] += rf;
                store_f64(t, x + pad, y + pad, c, colf[x]);
            } else {
                uint64_t v = (uint64_t)parsum__ref_sample_i64(src, x, y, c);
                ru += squared ? v * v : v;
                colu[x] += ru;
                store_u64(t, x + pad, y + pad, c, colu[x]);
            }
        }
    }
}

parsum_status parsum__ref_integral(const parsum_image *src,
                                   const parsum_image *table, bool inclusive,
                                   bool squared, const double *offset)
{
    uint64_t *colu = malloc(src->width * sizeof *colu);
    double *colf = malloc(src->width * sizeof *colf);
    if (colu == NULL || colf == NULL) {
        free(colu);
        free(colf);
        return PARSUM_ERR_OUT_OF_MEMORY;
    }
    for (int c = 0; c < src->channels; c++)
        integral_channel(src, table, inclusive, squared, offset, c, colu,
                         colf);
    free(colu);
    free(colf);
    return PARSUM_OK;
}

/* Table entry T(i, j) in the default layout's coordinates: the sum over
 * rows < i, columns < j (the INCLUSIVE layout has no zero row/column). */
static uint64_t entry_u(const parsum_image *t, bool inclusive, size_t i,
                        size_t j, int c)
{
    if (inclusive && (i == 0 || j == 0))
        return 0;
    const char *p = px(t, inclusive ? j - 1 : j, inclusive ? i - 1 : i, c);
    if (t->dtype == PARSUM_U32) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static double entry_f(const parsum_image *t, bool inclusive, size_t i,
                      size_t j, int c)
{
    if (inclusive && (i == 0 || j == 0))
        return 0;
    return parsum__ref_sample_f64(t, inclusive ? j - 1 : j,
                                  inclusive ? i - 1 : i, c);
}

/* [lo, hi) of a rectangle side clipped to [0, n). */
static void clip(uint64_t at, uint64_t len, size_t n, size_t *lo, size_t *hi)
{
    *lo = at < n ? (size_t)at : n;
    *hi = len < n - *lo ? *lo + (size_t)len : n;
}

void parsum__ref_box_sums(const parsum_image *table, bool inclusive,
                          bool means, bool squared, const double *offset,
                          const parsum_rect *rects, size_t nrect, void *out)
{
    size_t w = inclusive ? table->width : table->width - 1;
    size_t h = inclusive ? table->height : table->height - 1;
    bool ftab = table->dtype == PARSUM_F32 || table->dtype == PARSUM_F64;
    int ch = table->channels;
    for (size_t r = 0; r < nrect; r++) {
        size_t x0, x1, y0, y1;
        clip(rects[r].x, rects[r].width, w, &x0, &x1);
        clip(rects[r].y, rects[r].height, h, &y0, &y1);
        double area = (double)(x1 - x0) * (double)(y1 - y0);
        for (int c = 0; c < ch; c++) {
            size_t o = r * (size_t)ch + (size_t)c;
            if (ftab) {
                double s = entry_f(table, inclusive, y1, x1, c) -
                           entry_f(table, inclusive, y0, x1, c) -
                           entry_f(table, inclusive, y1, x0, c) +
                           entry_f(table, inclusive, y0, x0, c);
                if (area == 0)
                    s = 0;
                if (offset && !squared)
                    s += offset[c] * area;
                ((double *)out)[o] = means ? s / area : s;
                continue;
            }
            uint64_t s = entry_u(table, inclusive, y1, x1, c) -
                         entry_u(table, inclusive, y0, x1, c) -
                         entry_u(table, inclusive, y1, x0, c) +
                         entry_u(table, inclusive, y0, x0, c);
            if (table->dtype == PARSUM_U32)
                s = (uint32_t)s;
            if (means) {
                double v = table->dtype == PARSUM_I64 ? (double)(int64_t)s
                                                      : (double)s;
                ((double *)out)[o] = v / area;
            } else if (table->dtype == PARSUM_U32) {
                ((uint32_t *)out)[o] = (uint32_t)s;
            } else {
                ((uint64_t *)out)[o] = s;
            }
        }
    }
}

size_t parsum__ref_border_index(int64_t i, size_t n, parsum_border border,
                                bool *zero)
{
    int64_t m = (int64_t)n;
    *zero = false;
    if (i >= 0 && i < m)
        return (size_t)i;
    switch (border) {
    case PARSUM_BORDER_ZERO:
        *zero = true;
        return 0;
    case PARSUM_BORDER_CLAMP:
        return i < 0 ? 0 : n - 1;
    case PARSUM_BORDER_WRAP:
        return (size_t)(((i % m) + m) % m);
    case PARSUM_BORDER_REFLECT: {
        /* Period 2n: abc|cba|abc ... */
        int64_t p = 2 * m, k = ((i % p) + p) % p;
        return (size_t)(k < m ? k : p - 1 - k);
    }
    case PARSUM_BORDER_REFLECT_101: {
        if (m == 1)
            return 0;
        /* Period 2n - 2: abcd|cb|abcd ... */
        int64_t p = 2 * m - 2, k = ((i % p) + p) % p;
        return (size_t)(k < m ? k : p - k);
    }
    }
    return 0;
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static void store_mean(const parsum_image *dst, size_t x, size_t y, int c,
                       int64_t isum, double fsum, int64_t area)
{
    char *p = (char *)px(dst, x, y, c);
    int64_t q = floor_div(isum + area / 2, area);
    switch (dst->dtype) {
    case PARSUM_U8: { uint8_t v = (uint8_t)q; memcpy(p, &v, 1); break; }
    case PARSUM_U16: { uint16_t v = (uint16_t)q; memcpy(p, &v, 2); break; }
    case PARSUM_I32: { int32_t v = (int32_t)q; memcpy(p, &v, 4); break; }
    case PARSUM_F32: { float v = (float)(fsum / (double)area); memcpy(p, &v, 4); break; }
    case PARSUM_F64: { double v = fsum / (double)area; memcpy(p, &v, 8); break; }
    default: break;
    }
}

/* Separable: for each output row, the window's column sums over the
 * virtual columns x - rx .. x + rx of every x (each through the border
 * rule), then their sum along the row. O(w h (rx + ry)) work, so the
 * tests can check radii up to the GPU kernels' limits on real widths. */
void parsum__ref_box_filter(const parsum_image *src, const parsum_image *dst,
                            size_t rx, size_t ry, parsum_border border)
{
    bool fl = src->dtype == PARSUM_F32 || src->dtype == PARSUM_F64;
    int64_t area = (int64_t)(2 * rx + 1) * (int64_t)(2 * ry + 1);
    const size_t vw = src->width + 2 * rx; /* virtual columns -rx .. w+rx-1 */
    int64_t *icol = malloc(vw * sizeof *icol);
    double *fcol = malloc(vw * sizeof *fcol);
    if (icol == NULL || fcol == NULL)
        abort();
    for (size_t y = 0; y < src->height; y++)
        for (int c = 0; c < src->channels; c++) {
            for (size_t v = 0; v < vw; v++) {
                bool zx, zy;
                size_t sx = parsum__ref_border_index((int64_t)v - (int64_t)rx,
                                                     src->width, border, &zx);
                icol[v] = 0;
                fcol[v] = 0;
                if (zx)
                    continue;
                for (int64_t dy = -(int64_t)ry; dy <= (int64_t)ry; dy++) {
                    size_t sy = parsum__ref_border_index((int64_t)y + dy,
                                                         src->height, border,
                                                         &zy);
                    if (zy)
                        continue;
                    if (fl)
                        fcol[v] += parsum__ref_sample_f64(src, sx, sy, c);
                    else
                        icol[v] += parsum__ref_sample_i64(src, sx, sy, c);
                }
            }
            for (size_t x = 0; x < src->width; x++) {
                int64_t is = 0;
                double fs = 0;
                for (size_t v = x; v <= x + 2 * rx; v++) {
                    is += icol[v];
                    fs += fcol[v];
                }
                store_mean(dst, x, y, c, is, fs, area);
            }
        }
    free(icol);
    free(fcol);
}
