/*
 * ref_tonemap.c - serial float64 reference of parsum_tonemap, written from
 * parsum.h's description alone (it shares no code with src/hist/tonemap.c
 * or the backends' slots): luminance, log luminance in float64, the range,
 * the histogram over the closed range [lmin, lmax], Ward's ceiling, the
 * cumulative distribution and the mapping, one pixel after another.
 */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest sample value: integers are read as fractions of it. */
static double full_scale(parsum_dtype d)
{
    if (d == PARSUM_U8)
        return 255.0;
    if (d == PARSUM_U16)
        return 65535.0;
    return 1.0;
}

static double sample(const parsum_image *im, size_t x, size_t y, int c)
{
    return parsum__ref_sample_f64(im, x, y, c) / full_scale(im->dtype);
}

static double clip01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* Linear values of the colour samples of (x, y) (negatives as 0) and the
 * number of colour samples (1 or 3). */
static int colours(const parsum_image *im, size_t x, size_t y, double c[3])
{
    int nc = im->channels >= 3 ? 3 : 1;
    for (int k = 0; k < nc; k++) {
        double v = sample(im, x, y, k);
        c[k] = v > 0.0 ? v : 0.0;
    }
    return nc;
}

static double luminance(const double c[3], int nc)
{
    double l = nc == 3 ? 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] : c[0];
    return fmin(l, DBL_MAX);
}

static double srgb(double v)
{
    if (v <= 0.0031308)
        return 12.92 * v;
    return 1.055 * pow(v, 1.0 / 2.4) - 0.055;
}

static void store(const parsum_image *im, size_t x, size_t y, int c, double v)
{
    char *row = (char *)im->data + y * im->pitch;
    size_t i = x * (size_t)im->channels + (size_t)c;
    if (im->dtype == PARSUM_F32)
        ((float *)row)[i] = (float)v;
    else if (im->dtype == PARSUM_U8)
        ((uint8_t *)row)[i] = (uint8_t)floor(v * 255.0 + 0.5);
    else
        ((uint16_t *)row)[i] = (uint16_t)floor(v * 65535.0 + 0.5);
}

/* The paper's ceiling(): false when the total falls below the tolerance
 * (then linear). */
static bool ward_ceiling(double *h, size_t nb, double bin_width,
                         double log_contrast)
{
    double n = 0.0;
    for (size_t i = 0; i < nb; i++)
        n += h[i];
    double tol = 0.025 * n;
    bool go_on = true;
    while (go_on) {
        double total = 0.0, cut = 0.0;
        for (size_t i = 0; i < nb; i++)
            total += h[i];
        if (total < tol)
            return false;
        double ceiling = total * bin_width / log_contrast;
        for (size_t i = 0; i < nb; i++) {
            if (h[i] > ceiling) {
                cut += h[i] - ceiling;
                h[i] = ceiling;
            }
        }
        go_on = cut > tol;
    }
    return true;
}

parsum_status parsum__ref_tonemap(const parsum_image *src,
                                  const parsum_image *dst,
                                  const parsum_tonemap_params *p,
                                  uint64_t *first_bad)
{
    size_t w = src->width, h = src->height, n = w * h;
    size_t nb = p != NULL && p->nbins != 0 ? p->nbins : 1024;
    bool ward = p != NULL && (p->flags & PARSUM_TONEMAP_WARD) != 0;
    double minlum = p != NULL && p->min_luminance != 0.0 ? p->min_luminance
                                                         : 1e-9;
    double contrast = p != NULL && p->display_contrast != 0.0
                          ? p->display_contrast
                          : 100.0;
    *first_bad = UINT64_MAX;
    for (size_t y = 0; y < h && *first_bad == UINT64_MAX; y++)
        for (size_t x = 0; x < w && *first_bad == UINT64_MAX; x++)
            for (int c = 0; c < src->channels; c++)
                if (!isfinite(parsum__ref_sample_f64(src, x, y, c))) {
                    *first_bad = (uint64_t)y * w + x;
                    break;
                }
    if (*first_bad != UINT64_MAX)
        return PARSUM_ERR_INVALID_ARGUMENT;

    double *ll = (double *)malloc(n * sizeof *ll);
    double *hist = (double *)calloc(nb, sizeof *hist);
    double *cum = (double *)malloc((nb + 1) * sizeof *cum);
    double *ld = (double *)malloc((nb + 1) * sizeof *ld);
    if (ll == NULL || hist == NULL || cum == NULL || ld == NULL) {
        free(ll), free(hist), free(cum), free(ld);
        return PARSUM_ERR_OUT_OF_MEMORY;
    }
    /* Log luminance (NaN: black) and its range over non-black pixels. */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            double c[3];
            double lum = luminance(c, colours(src, x, y, c));
            double l = lum > minlum ? log10(lum) : NAN;
            ll[y * w + x] = l;
            if (!isnan(l)) {
                lo = fmin(lo, l);
                hi = fmax(hi, l);
            }
        }
    bool any = lo <= hi, constant = any && lo == hi, linear = false;
    double width = hi - lo;
    if (any && !constant) {
        for (size_t i = 0; i < n; i++) {
            if (isnan(ll[i]))
                continue;
            size_t b = (size_t)floor((ll[i] - lo) / width * (double)nb);
            hist[b < nb ? b : nb - 1] += 1.0;
        }
        if (ward)
            linear = !ward_ceiling(hist, nb, width / (double)nb,
                                   log10(contrast));
        cum[0] = 0.0;
        for (size_t i = 0; i < nb; i++)
            cum[i + 1] = cum[i] + hist[i];
        for (size_t i = 0; i <= nb; i++) {
            double pr = cum[i] / cum[nb];
            double edge_l = lo + width * (double)i / (double)nb;
            if (linear)
                ld[i] = pow(10.0, edge_l - hi);
            else
                ld[i] = ward ? pow(contrast, pr - 1.0) : pr;
        }
    }
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            double c[3];
            int nc = colours(src, x, y, c);
            double lum = luminance(c, nc), l = ll[y * w + x], d = 0.0;
            if (!isnan(l) && constant) {
                d = 1.0;
            } else if (!isnan(l)) {
                double t = (l - lo) / width * (double)nb;
                size_t b = (size_t)floor(t);
                if (b >= nb)
                    b = nb - 1;
                d = ld[b] + (ld[b + 1] - ld[b]) * (t - (double)b);
            }
            for (int k = 0; k < nc; k++) {
                double v = lum > 0.0 ? clip01(c[k] * d / lum) : 0.0;
                store(dst, x, y, k, dst->dtype == PARSUM_F32 ? v : srgb(v));
            }
            if (src->channels == 2 || src->channels == 4)
                store(dst, x, y, nc, clip01(sample(src, x, y, nc)));
        }
    free(ll), free(hist), free(cum), free(ld);
    return PARSUM_OK;
}
