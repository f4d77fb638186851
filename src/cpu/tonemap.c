/*
 * tonemap.c - the CPU backend's tone-mapping slots (parsum__tonemap_args in
 * src/core/internal.h; the pipeline is src/hist/tonemap.c): the log
 * luminance of every pixel, and the mapping of every pixel through the
 * display-luminance table. Both are one pass over the image, rows split
 * over the threads; the per-pixel formulas are src/hist/tonemap_px.h,
 * shared with the CUDA backend.
 */
#include "../core/internal.h"
#include "../hist/tonemap_px.h"
#include "cpu.h"
#include "sched.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Sample i of a row of dtype d as a double (the dtypes parsum_tonemap
 * accepts for src: U8, U16, F32, F64). */
static inline double load(const void *row, parsum_dtype d, size_t i)
{
    switch (d) {
    case PARSUM_U8: return ((const uint8_t *)row)[i];
    case PARSUM_U16: return ((const uint16_t *)row)[i];
    case PARSUM_F32: return ((const float *)row)[i];
    default: return ((const double *)row)[i];
    }
}

static double max_of(parsum_dtype d)
{
    return d == PARSUM_U8 ? 255.0 : d == PARSUM_U16 ? 65535.0 : 1.0;
}

static int is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

/* ---- log luminance ------------------------------------------------------ */

typedef struct lum_job {
    const parsum__tonemap_args *a;
    uint64_t *bad; /* per thread: its first bad pixel, or UINT64_MAX */
} lum_job;

/* Rows [y0, y1): loglum, and the first pixel with a NaN or infinite
 * sample (rows in order, so the first one met is the smallest index). */
static uint64_t lum_rows(const parsum__tonemap_args *a, size_t y0, size_t y1)
{
    const parsum_image *s = &a->src;
    const int ch = s->channels, nc = parsum__tm_colours(ch);
    const double mx = max_of(s->dtype);
    const int check = is_float(s->dtype);
    uint64_t first = UINT64_MAX;
    for (size_t y = y0; y < y1; y++) {
        const char *row = (const char *)s->data + y * s->pitch;
        float *out = a->loglum + y * s->width;
        for (size_t x = 0; x < s->width; x++) {
            double c[3];
            int ok = 1;
            for (int k = 0; k < nc; k++)
                c[k] = load(row, s->dtype, x * (size_t)ch + (size_t)k);
            if (check) {
                for (int k = 0; k < ch; k++)
                    ok &= isfinite(load(row, s->dtype, x * (size_t)ch +
                                                           (size_t)k)) != 0;
                if (!ok && first == UINT64_MAX)
                    first = (uint64_t)y * s->width + x;
            }
            for (int k = 0; k < nc; k++)
                c[k] = parsum__tm_colour(ok ? c[k] : 0.0, mx);
            out[x] = parsum__tm_loglum(parsum__tm_luminance(c, nc),
                                       a->min_luminance);
        }
    }
    return first;
}

static void lum_body(void *arg, int tid, int nt)
{
    lum_job *j = (lum_job *)arg;
    size_t h = j->a->src.height;
    size_t y0 = h * (size_t)tid / (size_t)nt;
    size_t y1 = h * (size_t)(tid + 1) / (size_t)nt;
    j->bad[tid] = lum_rows(j->a, y0, y1);
}

parsum_status parsum__cpu_tonemap_lum(parsum_context *ctx,
                                      const parsum__tonemap_args *a)
{
    int nt = ctx->threads;
    if ((size_t)nt > a->src.height)
        nt = (int)a->src.height;
    if (nt < 1)
        nt = 1;
    uint64_t *bad = (uint64_t *)parsum__host_alloc((size_t)nt * sizeof *bad);
    if (bad == NULL)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: out of host memory", a->fn);
    for (int t = 0; t < nt; t++)
        bad[t] = UINT64_MAX;
    lum_job j = {a, bad};
    parsum__sched_spmd(nt, lum_body, &j);
    /* spmd splits the rows over the threads it actually starts (nt or
     * fewer); the slots of threads not started keep UINT64_MAX. */
    uint64_t first = UINT64_MAX;
    for (int t = 0; t < nt; t++)
        if (bad[t] < first)
            first = bad[t];
    *a->first_bad = first;
    parsum__host_free(bad);
    return PARSUM_OK;
}

/* ---- mapping -------------------------------------------------------------- */

static void map_row(void *arg, size_t y)
{
    const parsum__tonemap_args *a = (const parsum__tonemap_args *)arg;
    const parsum_image *s = &a->src, *d = &a->dst;
    const int ch = s->channels, nc = parsum__tm_colours(ch);
    const int alpha = parsum__tm_has_alpha(ch);
    const double mx = max_of(s->dtype), dmx = max_of(d->dtype);
    const char *row = (const char *)s->data + y * s->pitch;
    char *drow = (char *)d->data + y * d->pitch;
    const float *ll = a->loglum + y * s->width;
    for (size_t x = 0; x < s->width; x++) {
        size_t base = x * (size_t)ch;
        double c[3], v[4];
        for (int k = 0; k < nc; k++)
            c[k] = parsum__tm_colour(load(row, s->dtype, base + (size_t)k),
                                     mx);
        double lum = parsum__tm_luminance(c, nc);
        double ld = isnan(ll[x]) ? 0.0
                                 : parsum__tm_ld(ll[x], a->ld_edges, a->nbins,
                                                 a->lmin, a->scale);
        for (int k = 0; k < nc; k++)
            v[k] = parsum__tm_scale(c[k], lum, ld);
        if (alpha)
            v[nc] = parsum__tm_alpha(
                load(row, s->dtype, base + (size_t)nc), mx);
        for (int k = 0; k < ch; k++) {
            int is_alpha = alpha && k == nc;
            switch (d->dtype) {
            case PARSUM_F32:
                ((float *)drow)[base + (size_t)k] = (float)v[k];
                break;
            case PARSUM_U8:
                ((uint8_t *)drow)[base + (size_t)k] = (uint8_t)
                    parsum__tm_quantize(is_alpha ? v[k]
                                                 : parsum__tm_srgb(v[k]),
                                        dmx);
                break;
            default:
                ((uint16_t *)drow)[base + (size_t)k] = (uint16_t)
                    parsum__tm_quantize(is_alpha ? v[k]
                                                 : parsum__tm_srgb(v[k]),
                                        dmx);
                break;
            }
        }
    }
}

parsum_status parsum__cpu_tonemap_map(parsum_context *ctx,
                                      const parsum__tonemap_args *a)
{
    parsum__sched_parallel_for(ctx->threads, a->src.height, map_row,
                               (void *)a);
    return PARSUM_OK;
}
