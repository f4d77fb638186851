/*
 * quicksort.c - the iterative quicksort of the lecture notes (seed 002,
 * "Iterative solution"): instead of recursing, every round splits all
 * unfinished partitions at once, each around its own pivot, with
 * segmented prefix sums whose segments are the partitions.
 *
 * One round, over the m elements of the nseg active partitions laid end to
 * end (internal.h, parsum__qsort_args):
 *   1. qsort_classify  each partition takes the median of three positions
 *                      drawn here from a fixed seed as its pivot, and each
 *                      element is classed "less than it or not" with one
 *                      comparison, as a 0/1 count packed in a u64 (less in
 *                      the high half, equal in the low one)
 *   2. seg_scan        inclusive segmented sums of those counts (the
 *                      backend's own segmented scan, CSR offsets): the
 *                      rank of each element within its class and partition
 *   3. qsort_scatter   the stable three-way split: less, then equal, then
 *                      greater, each in input order
 *   4. here            parts of at most PARSUM__QSORT_SMALL elements go to
 *   5. qsort_finish    a stable small sort into out; larger ones are the
 *                      next round's partitions.
 * Duplicates: a split with nothing less than the pivot means the pivot is
 * the partition's smallest value. The next round then splits the same
 * partition "equal to that pivot or greater", again with one comparison
 * per element; the equal part is done (it goes straight to out). That is
 * pdqsort's answer to many equal keys, and it keeps every element at one
 * comparison per round where a three-way split would need two for half of
 * them (about 1.2 n log2 n comparisons for distinct keys instead of 1.8).
 * A stable split and a stable finishing sort make a stable sort. A
 * partition shrinks at least every second round (an "equal" round keeps
 * the pivot's own element at least); with random pivots the expected
 * number of rounds is O(log n) and the expected comparisons O(n log n),
 * whatever the input order (sorted, reversed; all equal: two rounds). The
 * seed is fixed, so the pivots, the rounds and the result are the same
 * every run; an input built against this seed can still make the rounds
 * linear (as for any quicksort with known pivots).
 *
 * Partitions of 2^32 or more elements overflow a packed count; rounds that
 * have one keep the less and equal counts in two arrays and scan twice
 * ("wide"; PARSUM__QSORT_WIDE_ENV forces that for the tests).
 *
 * Buffers: out and one temporary of n elements take turns as the split's
 * destination; the partition lists are built on the host each round (a
 * few dozen bytes per partition cross to a GPU and back, and one totals
 * read per round synchronizes it). Everything comes from mem_alloc, not
 * the scratch arena, which the segmented scan uses itself.
 */
#include "sort/quicksort.h"

#include <stdlib.h>
#include <string.h>

#define SMALL PARSUM__QSORT_SMALL
#define SEED UINT64_C(0x5eed0f9a4b1c7d23)

/* splitmix64's finalizer: consecutive inputs give unrelated outputs. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* One partition list: start[nseg], off[nseg + 1], sample[3 * nseg] and
 * reuse[nseg] (internal.h) packed one after the other, so one copy moves
 * them all. */
typedef struct seg_list {
    uint64_t *base;
    size_t nseg;
} seg_list;

static uint64_t *list_start(const seg_list *l) { return l->base; }
static uint64_t *list_off(const seg_list *l) { return l->base + l->nseg; }
static uint64_t *list_sample(const seg_list *l)
{
    return l->base + 2 * l->nseg + 1;
}
static uint64_t *list_reuse(const seg_list *l)
{
    return l->base + 5 * l->nseg + 1;
}
static size_t list_words(size_t nseg) { return 6 * nseg + 1; }

#define NO_REUSE UINT64_MAX

typedef struct plan {
    parsum_context *ctx;
    const char *fn;
    const parsum_comparator *cmp;
    size_t n, es, maxseg;
    bool force_wide;
    void *ctx_block;  /* context space: tmp, cnt, cnt_eq, seg, ... */
    uint64_t *host;   /* host: two lists, totals, parts, next's columns */
    void *tmp;
    uint64_t *cnt, *cnt_eq, *seg_d, *totals_d, *parts_d;
    void *pivots[2]; /* pivot values of even and odd rounds */
    seg_list cur, next;
    uint64_t *totals, *parts, *next_len, *next_reuse;
} plan;

static parsum_status overflow(plan *p)
{
    return parsum__fail(p->ctx, PARSUM_ERR_OVERFLOW,
                        "%s: the work buffers of %zu elements of %zu bytes "
                        "overflow size_t",
                        p->fn, p->n, p->es);
}

/* Adds a 64-byte aligned piece of `bytes` to *total; its offset in *at. */
static bool take(size_t *total, size_t bytes, size_t *at)
{
    size_t aligned = (*total + 63) & ~(size_t)63;
    if (aligned < *total || aligned + bytes < aligned)
        return false;
    *at = aligned;
    *total = aligned + bytes;
    return true;
}

static parsum_status plan_alloc(plan *p)
{
    size_t n = p->n, ms = p->maxseg, words = list_words(ms);
    bool wide = p->force_wide || n > UINT32_MAX;
    size_t tmp_b, cnt_b, total = 0, at[8];
    /* maxseg <= n / 33: pivot values fit in size_t when tmp does. */
    if (!parsum__mul_size(n, p->es, &tmp_b) ||
        !parsum__mul_size(n, sizeof(uint64_t), &cnt_b) ||
        !take(&total, tmp_b, &at[0]) || !take(&total, cnt_b, &at[1]) ||
        !take(&total, wide ? cnt_b : 0, &at[2]) ||
        !take(&total, words * 8, &at[3]) ||
        !take(&total, ms * p->es, &at[4]) ||
        !take(&total, ms * p->es, &at[5]) ||
        !take(&total, ms * 16, &at[6]) || !take(&total, ms * 32, &at[7]))
        return overflow(p);
    p->host = parsum__host_alloc((2 * words + 8 * ms) * sizeof(uint64_t));
    if (p->host == NULL)
        return parsum__fail(p->ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: out of host memory for %zu partitions",
                            p->fn, ms);
    parsum_status st = p->ctx->be->mem_alloc(p->ctx, &p->ctx_block, total);
    if (st != PARSUM_OK)
        return parsum__fail(p->ctx, st,
                            "%s: could not allocate %zu bytes of work memory "
                            "for %zu elements of %zu bytes",
                            p->fn, total, n, p->es);
    char *b = p->ctx_block;
    p->tmp = b + at[0];
    p->cnt = (uint64_t *)(b + at[1]);
    p->cnt_eq = wide ? (uint64_t *)(b + at[2]) : NULL;
    p->seg_d = (uint64_t *)(b + at[3]);
    p->pivots[0] = b + at[4];
    p->pivots[1] = b + at[5];
    p->totals_d = (uint64_t *)(b + at[6]);
    p->parts_d = (uint64_t *)(b + at[7]);
    p->cur.base = p->host;
    p->next.base = p->host + words;
    p->totals = p->host + 2 * words;
    p->parts = p->totals + 2 * ms;
    p->next_len = p->parts + 4 * ms;
    p->next_reuse = p->next_len + ms;
    return PARSUM_OK;
}

static void plan_free(plan *p)
{
    const parsum__backend *be = p->ctx->be;
    if (p->ctx_block != NULL) {
        /* The free must not overtake queued work that uses the block. */
        if (be->synchronize != NULL)
            (void)be->synchronize(p->ctx);
        be->mem_free(p->ctx, p->ctx_block);
    }
    parsum__host_free(p->host);
}

/* Sorts the nparts parts listed in p->parts from src into out. */
static parsum_status finish(plan *p, const void *src, void *out,
                            size_t nparts)
{
    if (nparts == 0)
        return PARSUM_OK;
    parsum_context *ctx = p->ctx;
    parsum_status st =
        ctx->be->mem_copy(ctx, p->parts_d, p->parts,
                          nparts * 2 * sizeof(uint64_t),
                          PARSUM_COPY_HOST_TO_CONTEXT);
    if (st != PARSUM_OK)
        return st;
    parsum__qsort_args a;
    memset(&a, 0, sizeof a);
    a.fn = p->fn;
    a.cmp = p->cmp;
    a.src = src;
    a.dst = out;
    a.parts = p->parts_d;
    a.nparts = nparts;
    return ctx->be->qsort_finish(ctx, &a);
}

/* Draws the pivot candidates of the current partitions for round r and
 * sends the list to the context; returns whether a partition is too long
 * for packed counts. */
static parsum_status upload_list(plan *p, uint64_t round, bool *wide)
{
    const seg_list *l = &p->cur;
    const uint64_t *start = list_start(l), *off = list_off(l);
    uint64_t *sample = list_sample(l);
    bool long_seg = false;
    for (size_t s = 0; s < l->nseg; s++) {
        uint64_t len = off[s + 1] - off[s];
        long_seg |= len > UINT32_MAX;
        for (unsigned k = 0; k < 3; k++)
            sample[3 * s + k] =
                start[s] + mix(SEED + mix(round * 4 + k) + start[s]) % len;
    }
    *wide = long_seg || p->force_wide;
    return p->ctx->be->mem_copy(p->ctx, p->seg_d, l->base,
                                list_words(l->nseg) * sizeof(uint64_t),
                                PARSUM_COPY_HOST_TO_CONTEXT);
}

/* Appends part [b, b + len) to the next list (reuse: internal.h) or to
 * the small parts. */
static void add_part(plan *p, uint64_t b, uint64_t len, uint64_t reuse,
                     size_t *nparts)
{
    if (len > SMALL) {
        seg_list *nx = &p->next;
        nx->base[nx->nseg] = b; /* the starts are the list's first column */
        p->next_len[nx->nseg] = len;
        p->next_reuse[nx->nseg] = reuse;
        nx->nseg++;
    } else if (len > 0) {
        p->parts[2 * *nparts] = b;
        p->parts[2 * *nparts + 1] = len;
        (*nparts)++;
    }
}

/* From the split totals: the next round's partitions and this round's
 * small parts. */
static parsum_status next_list(plan *p, size_t *nparts)
{
    const seg_list *l = &p->cur;
    const uint64_t *start = list_start(l), *off = list_off(l);
    const uint64_t *reuse = list_reuse(l);
    p->next.nseg = 0;
    *nparts = 0;
    for (size_t s = 0; s < l->nseg; s++) {
        uint64_t len = off[s + 1] - off[s];
        uint64_t lt = p->totals[2 * s], eq = p->totals[2 * s + 1];
        /* Under a strict weak order a pivot is not less than itself, so a
         * "less" split leaves it out of the less part and an "equal" split
         * finds it equal. */
        bool eq_split = reuse[s] != NO_REUSE;
        if (lt + eq > len || (eq_split ? eq == 0 : lt == len))
            return parsum__fail(p->ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: cmp is not a strict weak order (a "
                                "pivot compared less than itself)",
                                p->fn);
        if (!eq_split && lt == 0) { /* the pivot is the smallest value */
            add_part(p, start[s], len, s, nparts);
            continue;
        }
        add_part(p, start[s], lt, NO_REUSE, nparts);
        add_part(p, start[s] + lt + eq, len - lt - eq, NO_REUSE, nparts);
    }
    seg_list *nx = &p->next;
    uint64_t *noff = list_off(nx), acc = 0;
    for (size_t s = 0; s < nx->nseg; s++) {
        noff[s] = acc;
        acc += p->next_len[s];
        list_reuse(nx)[s] = p->next_reuse[s];
    }
    noff[nx->nseg] = acc;
    return PARSUM_OK;
}

/* One round over the current list: src -> dst (equal parts -> out), then
 * the small parts into out. */
static parsum_status round_once(plan *p, uint64_t round, const void *src,
                                void *dst, void *out, size_t *nparts)
{
    parsum_context *ctx = p->ctx;
    const parsum__backend *be = ctx->be;
    size_t nseg = p->cur.nseg;
    bool wide = false;
    parsum_status st = upload_list(p, round, &wide);
    if (st != PARSUM_OK)
        return st;
    parsum__qsort_args a;
    memset(&a, 0, sizeof a);
    a.fn = p->fn;
    a.cmp = p->cmp;
    a.src = src;
    a.dst = dst;
    a.fin = out;
    a.start = p->seg_d;
    a.act_off = p->seg_d + nseg;
    a.sample = p->seg_d + 2 * nseg + 1;
    a.reuse = p->seg_d + 5 * nseg + 1;
    a.nseg = nseg;
    a.m = list_off(&p->cur)[nseg];
    /* reuse indices point into the previous round's pivots. */
    a.pivots = p->pivots[round & 1];
    a.prev_pivots = p->pivots[(round + 1) & 1];
    a.cnt = p->cnt;
    a.cnt_eq = wide ? p->cnt_eq : NULL;
    a.totals = p->totals_d;
    parsum_segments seg = {PARSUM_SEG_OFFSETS, NULL, 0, a.act_off, nseg};
    st = be->qsort_classify(ctx, &a);
    if (st == PARSUM_OK)
        st = be->seg_scan(ctx, a.cnt, a.cnt, a.m, PARSUM_U64, PARSUM_SUM,
                          NULL, &seg, 0);
    if (st == PARSUM_OK && wide)
        st = be->seg_scan(ctx, a.cnt_eq, a.cnt_eq, a.m, PARSUM_U64,
                          PARSUM_SUM, NULL, &seg, 0);
    if (st == PARSUM_OK)
        st = be->qsort_scatter(ctx, &a);
    if (st == PARSUM_OK)
        st = be->mem_copy(ctx, p->totals, p->totals_d,
                          2 * nseg * sizeof(uint64_t),
                          PARSUM_COPY_CONTEXT_TO_HOST);
    if (st == PARSUM_OK)
        st = next_list(p, nparts);
    if (st == PARSUM_OK)
        st = finish(p, dst, out, *nparts);
    return st;
}

static parsum_status run_rounds(plan *p, const void *in, void *out,
                                parsum__qsort_stats *stats)
{
    p->cur.nseg = 1;
    list_start(&p->cur)[0] = 0;
    list_off(&p->cur)[0] = 0;
    list_off(&p->cur)[1] = p->n;
    list_reuse(&p->cur)[0] = NO_REUSE;
    const void *src = in;
    for (uint64_t round = 0; p->cur.nseg > 0; round++) {
        /* out and tmp take turns; in is only ever read. */
        void *dst = src == p->tmp ? out : p->tmp;
        size_t nparts = 0;
        if (p->cur.nseg > stats->max_segments)
            stats->max_segments = p->cur.nseg;
        parsum_status st = round_once(p, round, src, dst, out, &nparts);
        if (st != PARSUM_OK)
            return st;
        stats->rounds++;
        stats->small_parts += nparts;
        seg_list t = p->cur;
        p->cur = p->next;
        p->next = t;
        src = dst;
    }
    return PARSUM_OK;
}

/* n <= SMALL: one part, sorted straight from in; no work buffers. */
static parsum_status sort_small_input(plan *p, const void *in, void *out)
{
    parsum_context *ctx = p->ctx;
    uint64_t part[2] = {0, p->n};
    void *dev = NULL;
    parsum_status st = ctx->be->mem_alloc(ctx, &dev, sizeof part);
    if (st != PARSUM_OK)
        return st;
    p->parts = part;
    p->parts_d = dev;
    st = finish(p, in, out, 1);
    if (ctx->be->synchronize != NULL)
        (void)ctx->be->synchronize(ctx);
    ctx->be->mem_free(ctx, dev);
    return st;
}

parsum_status parsum__quicksort(parsum_context *ctx, const char *fn,
                                const void *in, void *out, size_t n,
                                const parsum_comparator *cmp,
                                parsum__qsort_stats *stats)
{
    parsum__qsort_stats local;
    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    plan p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.fn = fn;
    p.cmp = cmp;
    p.n = n;
    p.es = cmp->elem_size;
    p.maxseg = n / (SMALL + 1) > 0 ? n / (SMALL + 1) : 1;
    const char *w = getenv(PARSUM__QSORT_WIDE_ENV);
    p.force_wide = w != NULL && strcmp(w, "1") == 0;
    if (n <= SMALL) {
        stats->small_parts = 1;
        return sort_small_input(&p, in, out);
    }
    parsum_status st = plan_alloc(&p);
    if (st == PARSUM_OK)
        st = run_rounds(&p, in, out, stats);
    plan_free(&p);
    return st;
}
