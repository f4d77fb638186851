/*
 * api_histogram.c - parsum_histogram (parsum.h, "Histograms"): checks of
 * every argument, each channel's bins turned into a parsum__hist_plan
 * (hist_bins.h), then dispatch. ATOMIC_GLOBAL, PRIVATIZED and AUTO go to
 * the backend's histogram slot; SORT_REDUCE_BY_KEY, the notes' third
 * method, is composed here from primitives every backend has: bin indices,
 * a stable LSD sort of them by one split per bit (the notes' radix sort),
 * run-length encoding, and the runs' lengths added to the counts.
 */
#include "../core/api_check.h"
#include "../core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHECK PARSUM__CHECK
#define MAX_BINS ((size_t)1 << 31)

/* Widened kinds of sample (hist_bins.h). */
typedef enum { KIND_SIGNED, KIND_U64, KIND_FLOAT } kind;

static kind kind_of(parsum_dtype d)
{
    if (d == PARSUM_U64)
        return KIND_U64;
    return parsum__dtype_is_float(d) ? KIND_FLOAT : KIND_SIGNED;
}

/* The even-bin plan of an integer channel: lo < hi in the widened type. */
static void plan_even_int(parsum__hist_plan *p, uint64_t lo, uint64_t hi)
{
    p->lo = lo;
    p->hi = hi;
    p->width = hi - lo; /* the unsigned difference, exact for both kinds */
    p->mode = PARSUM__BINS_DIV128;
    uint64_t w = p->width / p->nbins; /* bins of 2^s values: a shift */
    if (p->width % p->nbins == 0 && w != 0 && (w & (w - 1)) == 0) {
        p->mode = PARSUM__BINS_SHIFT;
        while (((uint64_t)1 << p->shift) != w)
            p->shift++;
        return;
    }
    if (p->width <= UINT64_MAX / p->nbins)
        p->mode = PARSUM__BINS_DIV64;
}

static parsum_status check_levels(parsum_context *ctx, const char *fn, int c,
                                  kind k, const void *levels, size_t nbins)
{
    for (size_t i = 0; i < nbins; i++) {
        bool ok;
        if (k == KIND_SIGNED)
            ok = ((const int64_t *)levels)[i] < ((const int64_t *)levels)[i + 1];
        else if (k == KIND_U64)
            ok = ((const uint64_t *)levels)[i] < ((const uint64_t *)levels)[i + 1];
        else
            ok = ((const double *)levels)[i] < ((const double *)levels)[i + 1];
        if (!ok)
            return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: bins[%d].levels[%zu] and [%zu] are not "
                                "strictly ascending (or one is NaN)",
                                fn, c, i, i + 1);
    }
    return PARSUM_OK;
}

/* Checks d->bins[c] and fills plan. */
static parsum_status make_plan(parsum_context *ctx, const char *fn, int c,
                               kind k, const parsum_hist_bins *b,
                               parsum__hist_plan *p)
{
    memset(p, 0, sizeof *p);
    if (b->nbins == 0 || b->nbins > MAX_BINS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: bins[%d].nbins = %zu; 1 to 2^31 bins are "
                            "supported",
                            fn, c, b->nbins);
    p->nbins = (uint32_t)b->nbins;
    p->is_unsigned = k == KIND_U64;
    if (b->levels != NULL) {
        p->mode = PARSUM__BINS_RANGE;
        p->levels = b->levels;
        return check_levels(ctx, fn, c, k, b->levels, b->nbins);
    }
    if (k == KIND_FLOAT) {
        double lo = b->lo.f64, hi = b->hi.f64;
        if (!(lo < hi) || !isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo))
            return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: bins[%d]: lo = %g, hi = %g; even bins "
                                "need finite lo < hi (with hi - lo finite)",
                                fn, c, lo, hi);
        p->mode = PARSUM__BINS_FLOAT;
        p->flo = lo;
        p->fhi = hi;
        p->scale = (double)b->nbins / (hi - lo);
        return PARSUM_OK;
    }
    bool ok = k == KIND_U64 ? b->lo.u64 < b->hi.u64 : b->lo.i64 < b->hi.i64;
    if (!ok)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: bins[%d]: lo must be below hi (read as %s)",
                            fn, c, k == KIND_U64 ? ".u64" : ".i64");
    if (k == KIND_U64)
        plan_even_int(p, b->lo.u64, b->hi.u64);
    else
        plan_even_int(p, (uint64_t)b->lo.i64, (uint64_t)b->hi.i64);
    return PARSUM_OK;
}

static parsum_status check_aligned(parsum_context *ctx, const char *fn,
                                   const char *what, const void *p,
                                   size_t align)
{
    if ((uintptr_t)p % align != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s is not aligned to its %zu-byte elements",
                            fn, what, align);
    return PARSUM_OK;
}

/* Everything but the data pointers: fills a. */
static parsum_status check_desc(parsum_context *ctx, const char *fn,
                                const parsum_histogram_desc *d,
                                parsum__hist_args *a)
{
    if (!parsum__dtype_valid(d->sample_dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: sample_dtype = %d is not a parsum_dtype", fn,
                            (int)d->sample_dtype);
    if (d->count_dtype != PARSUM_U32 && d->count_dtype != PARSUM_U64)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: count_dtype = %d; counts are PARSUM_U32 or "
                            "PARSUM_U64",
                            fn, (int)d->count_dtype);
    if (d->channels < 1 || d->channels > 4)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: channels = %d; 1 to 4 are supported", fn,
                            d->channels);
    if ((unsigned)d->strategy > PARSUM_HIST_SORT_REDUCE_BY_KEY)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: strategy = %d is not a parsum_hist_strategy",
                            fn, (int)d->strategy);
    if (d->flags & ~PARSUM_HIST_ACCUMULATE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: unknown flags 0x%x", fn,
                            d->flags & ~PARSUM_HIST_ACCUMULATE);
    a->dtype = d->sample_dtype;
    a->channels = d->channels;
    a->count_dtype = d->count_dtype;
    a->strategy = d->strategy;
    a->accumulate = (d->flags & PARSUM_HIST_ACCUMULATE) != 0;
    return PARSUM_OK;
}

/* The sample and count buffers: regions, alignment, disjointness. */
static parsum_status check_buffers(parsum_context *ctx, const char *fn,
                                   const void *samples, size_t n,
                                   const parsum_histogram_desc *d,
                                   void *const counts[], parsum__hist_args *a)
{
    size_t ss = parsum_dtype_size(d->sample_dtype), total, sbytes;
    size_t cs = parsum_dtype_size(d->count_dtype);
    if (!parsum__mul_size(n, (size_t)d->channels, &total))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: n = %zu pixels of %d channels overflow "
                            "size_t", fn, n, d->channels);
    CHECK(parsum__check_region(ctx, fn, "samples", samples, total, "n", ss,
                               &sbytes));
    CHECK(check_aligned(ctx, fn, "samples", samples, ss));
    size_t cbytes[4] = {0};
    int used = 0;
    for (int c = 0; c < d->channels; c++) {
        if (counts[c] == NULL)
            continue;
        used++;
        char what[24];
        snprintf(what, sizeof what, "counts[%d]", c);
        CHECK(parsum__check_region(ctx, fn, what, counts[c],
                                   d->bins[c].nbins, "nbins", cs, &cbytes[c]));
        CHECK(check_aligned(ctx, fn, what, counts[c], cs));
        CHECK(parsum__check_disjoint(ctx, fn, "samples", samples, sbytes,
                                     what, counts[c], cbytes[c], false));
        for (int e = 0; e < c; e++) {
            char ew[24];
            snprintf(ew, sizeof ew, "counts[%d]", e);
            CHECK(parsum__check_disjoint(ctx, fn, ew, counts[e], cbytes[e],
                                         what, counts[c], cbytes[c], false));
        }
        a->counts[c] = counts[c];
    }
    if (used == 0)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: every counts[c] is NULL", fn);
    a->samples = samples;
    a->n = n;
    return PARSUM_OK;
}

/* Bits that hold every value 0..nbins (nbins itself marks "no bin"). */
static unsigned id_bits(uint32_t nbins)
{
    unsigned b = 1;
    while (b < 32 && ((uint64_t)1 << b) <= nbins)
        b++;
    return b;
}

/* SORT_REDUCE_BY_KEY for channel c: ids -> LSD sort by one stable split
 * per bit (select slot, partition on BIT_CLEAR) -> runs -> counts. Buffers
 * from mem_alloc, not the scratch arena, which the slots called here use
 * themselves. */
static parsum_status sort_channel(parsum_context *ctx,
                                  const parsum__hist_args *a, int c)
{
    const parsum__backend *be = ctx->be;
    uint32_t nbins = a->plan[c].nbins;
    size_t n = a->n, nkeys = n < (size_t)nbins + 1 ? n : (size_t)nbins + 1;
    void *buf[4] = {NULL, NULL, NULL, NULL};
    if (n > (size_t)-1 / 8)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %zu bin indices overflow size_t", a->fn, n);
    size_t bytes[4] = {n * 4, n * 4, nkeys * 4, nkeys * 8};
    parsum_status st = PARSUM_OK;
    for (int i = 0; i < 4 && st == PARSUM_OK; i++)
        st = be->mem_alloc(ctx, &buf[i], bytes[i] ? bytes[i] : 8);
    size_t nruns = 0;
    if (st == PARSUM_OK && n > 0)
        st = be->hist_bin_ids(ctx, a, c, (uint32_t *)buf[0]);
    unsigned bits = id_bits(nbins);
    for (unsigned b = 0; st == PARSUM_OK && n > 0 && b < bits; b++) {
        parsum_selector sel;
        memset(&sel, 0, sizeof sel);
        sel.kind = PARSUM_SELECT_PREDICATE;
        sel.dtype = PARSUM_U32;
        sel.pred = PARSUM_PRED_BIT_CLEAR;
        sel.a.u32 = b;
        size_t kept = 0;
        parsum__select_args s;
        memset(&s, 0, sizeof s);
        s.fn = a->fn;
        s.sel = &sel;
        s.keys = buf[b & 1];
        s.key_size = 4;
        s.keys_out = buf[(b & 1) ^ 1];
        s.partition = true;
        s.n = n;
        s.counts = &kept;
        st = be->select(ctx, &s);
    }
    if (st == PARSUM_OK && n > 0) {
        parsum__runs_args r;
        memset(&r, 0, sizeof r);
        r.fn = a->fn;
        r.keys = buf[bits & 1];
        r.key_size = 4;
        r.keys_out = buf[2];
        r.lengths = (uint64_t *)buf[3];
        r.n = n;
        r.num_runs = &nruns;
        st = be->runs(ctx, &r);
    }
    if (st == PARSUM_OK)
        st = be->hist_add_runs(ctx, (const uint32_t *)buf[2],
                               (const uint64_t *)buf[3], nruns, nbins,
                               a->counts[c], a->count_dtype, a->accumulate);
    /* The frees must not overtake the queued work using the buffers. */
    if (be->synchronize != NULL) {
        parsum_status s2 = be->synchronize(ctx);
        if (st == PARSUM_OK)
            st = s2;
    }
    for (int i = 0; i < 4; i++)
        if (buf[i] != NULL)
            be->mem_free(ctx, buf[i]);
    return st;
}

PARSUM_API parsum_status parsum_histogram(parsum_context *ctx,
                                          const void *samples, size_t n,
                                          const parsum_histogram_desc *d,
                                          void *const counts[])
{
    static const char fn[] = "parsum_histogram";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (d == NULL || counts == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: %s is NULL",
                            fn, d == NULL ? "d" : "counts");
    parsum__hist_args a;
    memset(&a, 0, sizeof a);
    a.fn = fn;
    CHECK(check_desc(ctx, fn, d, &a));
    kind k = kind_of(d->sample_dtype);
    for (int c = 0; c < d->channels; c++)
        if (counts[c] != NULL)
            CHECK(make_plan(ctx, fn, c, k, &d->bins[c], &a.plan[c]));
    CHECK(check_buffers(ctx, fn, samples, n, d, counts, &a));
    const parsum__backend *be = ctx->be;
    if (a.strategy != PARSUM_HIST_SORT_REDUCE_BY_KEY) {
        if (be->histogram == NULL)
            return parsum__unsupported(ctx, fn);
        return be->histogram(ctx, &a);
    }
    if (be->hist_bin_ids == NULL || be->hist_add_runs == NULL
        || be->select == NULL || be->runs == NULL)
        return parsum__unsupported(ctx, fn);
    for (int c = 0; c < a.channels; c++)
        if (a.counts[c] != NULL)
            CHECK(sort_channel(ctx, &a, c));
    return PARSUM_OK;
}
