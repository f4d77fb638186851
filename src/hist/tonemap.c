/*
 * tonemap.c - parsum_tonemap (parsum.h, "Histograms and tone mapping"):
 * histogram equalisation of an HDR image's log luminance, optionally with
 * Ward's histogram adjustment, composed from primitives as in the notes
 * (seed 001: "reduce, scan and histogram"):
 *
 *   tonemap_lum slot   log10 luminance per pixel, NaN for black pixels,
 *                      and the first pixel with a NaN / infinite sample
 *   reduce slot        lmin, lmax (F32 MIN / MAX ignore the NaNs)
 *   parsum_histogram   counts of the log luminance, nbins even bins over
 *                      [lmin, hi), hi = the next float64 above lmax, so
 *                      lmax itself is counted (in the last bin)
 *   host               Ward's ceiling (Ward Larson, Rushmeier and Piatko,
 *                      "A Visibility Matching Tone Reproduction Operator
 *                      for High Dynamic Range Scenes", IEEE TVCG 3(4),
 *                      1997, section 4): nbins numbers, not worth a kernel
 *   scan slot          exclusive sum of the (adjusted) counts: the
 *                      cumulative distribution at the bin edges
 *   host               the display luminance at the nbins + 1 bin edges
 *   tonemap_map slot   every pixel through that table, interpolated within
 *                      its bin, colours scaled by Ld / L, encoded for dst
 *
 * Buffers come from the backend's mem_alloc, not from the scratch arena,
 * which the reduce, scan and histogram steps use themselves.
 */
#include "../core/api_check.h"
#include "../core/internal.h"
#include "../image/image_check.h"

#include <math.h>
#include <string.h>

#define CHECK PARSUM__CHECK
#define TM_MAX_BINS ((size_t)1 << 20)
#define TM_DEFAULT_BINS 1024
#define TM_DEFAULT_MIN_LUMINANCE 1e-9
#define TM_DEFAULT_CONTRAST 100.0
#define WARD_TOLERANCE 0.025 /* of the non-black pixel count */

/* The buffers of one call: context memory, then host memory. */
typedef struct tm_bufs {
    float *loglum;    /* n log luminances */
    uint64_t *counts; /* nbins */
    double *hist;     /* nbins (adjusted) counts as float64 */
    double *cdf;      /* nbins: exclusive scan of hist */
    double *edges;    /* nbins + 1 display luminances */
    uint64_t *h_counts;
    double *h_hist, *h_cdf, *h_edges;
} tm_bufs;

static void free_bufs(parsum_context *ctx, tm_bufs *b)
{
    const parsum__backend *be = ctx->be;
    void *dev[] = {b->loglum, b->counts, b->hist, b->cdf, b->edges};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i] != NULL)
            be->mem_free(ctx, dev[i]);
    parsum__host_free(b->h_counts);
    parsum__host_free(b->h_hist);
    parsum__host_free(b->h_cdf);
    parsum__host_free(b->h_edges);
}

static parsum_status host_alloc(parsum_context *ctx, const char *fn,
                                void **p, size_t bytes)
{
    *p = parsum__host_alloc(bytes);
    if (*p == NULL)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: could not allocate %zu bytes of host memory",
                            fn, bytes);
    return PARSUM_OK;
}

/* Ward's histogram adjustment of h[0..nbins-1] (bin width dl in log10
 * units) for a display of log10 contrast log_c, as the paper's
 * ceiling(): with tolerance = 2.5 % of the original total, repeat { T =
 * the current total; if T < tolerance, give up; cut every bin above
 * T dl / log_c to it } until the cuts add up to at most the tolerance.
 * Each round that goes on removes more than the tolerance, so there are at
 * most 40 rounds. Returns false when it gives up: the scene's range is
 * smaller than the display's and the paper maps linearly instead. */
static bool ward_adjust(double *h, size_t nbins, double dl, double log_c)
{
    double total = 0;
    for (size_t i = 0; i < nbins; i++)
        total += h[i];
    const double tolerance = WARD_TOLERANCE * total;
    for (;;) {
        double t = 0, trimmed = 0;
        for (size_t i = 0; i < nbins; i++)
            t += h[i];
        if (t < tolerance)
            return false;
        const double ceiling = t * dl / log_c;
        for (size_t i = 0; i < nbins; i++)
            if (h[i] > ceiling) {
                trimmed += h[i] - ceiling;
                h[i] = ceiling;
            }
        if (trimmed <= tolerance)
            return true;
    }
}

/* Steps 3-5 for an image with lmin < lmax: histogram, Ward, scan, table
 * (into b->h_edges, nbins + 1 values). */
static parsum_status edge_table(parsum_context *ctx,
                                const parsum__tonemap_args *a,
                                const parsum_tonemap_params *p, double lmax,
                                double hi, tm_bufs *b)
{
    const parsum__backend *be = ctx->be;
    const char *fn = a->fn;
    const size_t nb = a->nbins, n = a->src.width * a->src.height;
    CHECK(be->mem_alloc(ctx, (void **)&b->counts, nb * sizeof(uint64_t)));
    CHECK(be->mem_alloc(ctx, (void **)&b->hist, nb * sizeof(double)));
    CHECK(be->mem_alloc(ctx, (void **)&b->cdf, nb * sizeof(double)));
    CHECK(host_alloc(ctx, fn, (void **)&b->h_counts, nb * sizeof(uint64_t)));
    CHECK(host_alloc(ctx, fn, (void **)&b->h_hist, nb * sizeof(double)));
    CHECK(host_alloc(ctx, fn, (void **)&b->h_cdf, nb * sizeof(double)));

    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.sample_dtype = PARSUM_F32;
    d.channels = 1;
    d.count_dtype = PARSUM_U64;
    d.strategy = PARSUM_HIST_AUTO;
    d.bins[0].nbins = nb;
    d.bins[0].lo.f64 = a->lmin;
    d.bins[0].hi.f64 = hi;
    void *const counts[1] = {b->counts};
    CHECK(parsum_histogram(ctx, b->loglum, n, &d, counts));
    CHECK(be->mem_copy(ctx, b->h_counts, b->counts, nb * sizeof(uint64_t),
                       PARSUM_COPY_CONTEXT_TO_HOST));
    for (size_t i = 0; i < nb; i++)
        b->h_hist[i] = (double)b->h_counts[i];

    const bool ward = (p->flags & PARSUM_TONEMAP_WARD) != 0;
    const double log_c = log10(p->display_contrast);
    const double dl = 1.0 / a->scale; /* bin width in log10 units */
    if (ward && !ward_adjust(b->h_hist, nb, dl, log_c)) {
        /* Linear: Ld = L / Lmax at the edges' log luminance (the last
         * edge lies at hi, just above lmax: capped at 1). */
        for (size_t i = 0; i <= nb; i++) {
            double e = pow(10.0, a->lmin + (double)i * dl - lmax);
            b->h_edges[i] = e < 1.0 ? e : 1.0;
        }
        return PARSUM_OK;
    }
    CHECK(be->mem_copy(ctx, b->hist, b->h_hist, nb * sizeof(double),
                       PARSUM_COPY_HOST_TO_CONTEXT));
    CHECK(be->scan(ctx, b->hist, b->cdf, nb, PARSUM_F64, PARSUM_SUM,
                   PARSUM_EXCLUSIVE));
    CHECK(be->mem_copy(ctx, b->h_cdf, b->cdf, nb * sizeof(double),
                       PARSUM_COPY_CONTEXT_TO_HOST));
    const double total = b->h_cdf[nb - 1] + b->h_hist[nb - 1];
    for (size_t i = 0; i <= nb; i++) {
        double pr = i < nb ? b->h_cdf[i] / total : 1.0;
        b->h_edges[i] = ward ? pow(p->display_contrast, pr - 1.0) : pr;
    }
    return PARSUM_OK;
}

/* The pipeline on validated arguments; every buffer in *b. */
static parsum_status pipeline(parsum_context *ctx, parsum__tonemap_args *a,
                              const parsum_tonemap_params *p, tm_bufs *b)
{
    const parsum__backend *be = ctx->be;
    const char *fn = a->fn;
    const size_t n = a->src.width * a->src.height;
    CHECK(be->mem_alloc(ctx, (void **)&b->loglum, n * sizeof(float)));

    /* 1. Log luminance; NaN / infinite samples are the caller's error. */
    uint64_t bad = UINT64_MAX;
    a->loglum = b->loglum;
    a->first_bad = &bad;
    CHECK(be->tonemap_lum(ctx, a));
    if (bad != UINT64_MAX)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: src pixel (x %zu, y %zu) has a NaN or "
                            "infinite sample",
                            fn, (size_t)(bad % a->src.width),
                            (size_t)(bad / a->src.width));

    /* 2. Range of the non-black pixels. */
    float lmin = 0, lmax = 0;
    CHECK(be->reduce(ctx, b->loglum, n, PARSUM_F32, PARSUM_MIN, &lmin));
    CHECK(be->reduce(ctx, b->loglum, n, PARSUM_F32, PARSUM_MAX, &lmax));

    /* 3-5. The display luminance at the bin edges. An all-black image
     * needs no table (every pixel maps to 0); a constant one maps every
     * non-black pixel to 1 through a one-bin table of ones. */
    CHECK(host_alloc(ctx, fn, (void **)&b->h_edges,
                     (a->nbins + 1) * sizeof(double)));
    if (isnan(lmin) || lmin == lmax) {
        a->nbins = 1;
        a->lmin = isnan(lmin) ? 0.0 : (double)lmin;
        a->scale = 0.0;
        b->h_edges[0] = b->h_edges[1] = isnan(lmin) ? 0.0 : 1.0;
    } else {
        double hi = nextafter((double)lmax, INFINITY);
        a->lmin = (double)lmin;
        a->scale = (double)a->nbins / (hi - a->lmin); /* as the histogram */
        CHECK(edge_table(ctx, a, p, (double)lmax, hi, b));
    }
    size_t eb = (a->nbins + 1) * sizeof(double);
    CHECK(be->mem_alloc(ctx, (void **)&b->edges, eb));
    CHECK(be->mem_copy(ctx, b->edges, b->h_edges, eb,
                       PARSUM_COPY_HOST_TO_CONTEXT));

    /* 6. Every pixel through the table. */
    a->ld_edges = b->edges;
    return be->tonemap_map(ctx, a);
}

static bool src_dtype_ok(parsum_dtype d)
{
    return d == PARSUM_U8 || d == PARSUM_U16 || d == PARSUM_F32 ||
           d == PARSUM_F64;
}

static bool dst_dtype_ok(parsum_dtype d)
{
    return d == PARSUM_U8 || d == PARSUM_U16 || d == PARSUM_F32;
}

/* The parameters with defaults filled in, checked. */
static parsum_status check_params(parsum_context *ctx, const char *fn,
                                  const parsum_tonemap_params *p,
                                  parsum_tonemap_params *out)
{
    parsum_tonemap_params q = {0, 0, 0.0, 0.0};
    if (p != NULL)
        q = *p;
    if (q.flags & ~PARSUM_TONEMAP_WARD)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: unknown flags 0x%x", fn,
                            q.flags & ~PARSUM_TONEMAP_WARD);
    if (q.nbins == 0)
        q.nbins = TM_DEFAULT_BINS;
    if (q.nbins > TM_MAX_BINS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: nbins = %zu; 1 to 2^20 bins (0: 1024)", fn,
                            q.nbins);
    if (!(q.min_luminance >= 0.0) || !isfinite(q.min_luminance))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: min_luminance = %g; it must be finite and "
                            ">= 0 (0: 1e-9)",
                            fn, q.min_luminance);
    if (q.min_luminance == 0.0)
        q.min_luminance = TM_DEFAULT_MIN_LUMINANCE;
    if (q.display_contrast == 0.0)
        q.display_contrast = TM_DEFAULT_CONTRAST;
    if (!(q.display_contrast > 1.0) || !isfinite(q.display_contrast))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: display_contrast = %g; it must be finite "
                            "and > 1 (0: 100)",
                            fn, q.display_contrast);
    *out = q;
    return PARSUM_OK;
}

PARSUM_API parsum_status parsum_tonemap(parsum_context *ctx,
                                        const parsum_image *src,
                                        const parsum_image *dst,
                                        const parsum_tonemap_params *p)
{
    static const char fn[] = "parsum_tonemap";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__tonemap_args a;
    memset(&a, 0, sizeof a);
    a.fn = fn;
    size_t se = 0, de = 0, bytes = 0;
    CHECK(parsum__check_image(ctx, fn, "src", src, true, &a.src, &se));
    CHECK(parsum__check_image(ctx, fn, "dst", dst, true, &a.dst, &de));
    if (!src_dtype_ok(a.src.dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: src->dtype is %s; u8, u16, f32 or f64", fn,
                            parsum_dtype_name(a.src.dtype));
    if (!dst_dtype_ok(a.dst.dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: dst->dtype is %s; u8, u16 or f32", fn,
                            parsum_dtype_name(a.dst.dtype));
    if (a.dst.width != a.src.width || a.dst.height != a.src.height ||
        a.dst.channels != a.src.channels)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: dst is %zu x %zu with %d channels; src is "
                            "%zu x %zu with %d",
                            fn, a.dst.width, a.dst.height, a.dst.channels,
                            a.src.width, a.src.height, a.src.channels);
    parsum_tonemap_params prm = {0, 0, 0.0, 0.0};
    CHECK(check_params(ctx, fn, p, &prm));
    CHECK(parsum__check_disjoint(ctx, fn, "src", a.src.data, se, "dst",
                                 a.dst.data, de, false));
    if (!parsum__mul_size(a.src.width, a.src.height, &bytes) ||
        !parsum__mul_size(bytes, sizeof(float), &bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %zu x %zu log luminances overflow size_t",
                            fn, a.src.width, a.src.height);
    const parsum__backend *be = ctx->be;
    if (be->tonemap_lum == NULL || be->tonemap_map == NULL ||
        be->reduce == NULL || be->scan == NULL)
        return parsum__unsupported(ctx, fn);
    a.min_luminance = prm.min_luminance;
    a.nbins = prm.nbins;

    tm_bufs b;
    memset(&b, 0, sizeof b);
    parsum_status st = pipeline(ctx, &a, &prm, &b);
    /* The frees must not overtake queued work that uses the buffers. */
    if (be->synchronize != NULL) {
        parsum_status s2 = be->synchronize(ctx);
        if (st == PARSUM_OK)
            st = s2;
    }
    free_bufs(ctx, &b);
    return st;
}
