/*
 * sort_custom.c - the CPU backend's comparison-sort slots (internal.h,
 * parsum__qsort_args) for the iterative quicksort of src/sort/quicksort.c:
 * pivots and classes, the stable three-way scatter, and the small sort
 * that finishes short partitions.
 *
 * The element loops are balanced by elements, not by partitions: the m
 * active elements are cut into blocks of BLOCK, and a block finds its
 * first partition by binary search in the offsets, then walks on. So one
 * huge partition and a hundred thousand small ones keep every thread
 * equally busy. The comparator is called from several threads at once, as
 * parsum.h allows.
 */
#include "core/internal.h"
#include "cpu.h"
#include "sched.h"

#include <string.h>

/* Active elements per task: enough to amortise the binary search and the
 * task, few enough that the last round's stragglers stay short. */
#define BLOCK 4096

#define PACKED_LESS (UINT64_C(1) << 32)
#define PACKED_EQ_MASK UINT64_C(0xffffffff)

/* The partition holding active index j: the last s with off[s] <= j
 * (partitions are never empty, so it is unique). */
static size_t seg_of(const uint64_t *off, size_t nseg, uint64_t j)
{
    size_t lo = 0, hi = nseg;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (off[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Constant sizes let the compiler turn the common copies into moves. */
static inline void copy_elem(void *d, const void *s, size_t es)
{
    switch (es) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 12: memcpy(d, s, 12); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, es); break;
    }
}

static size_t blocks_of(size_t m)
{
    return m / BLOCK + (m % BLOCK != 0);
}

/* ---- pivots and classes ------------------------------------------------- */

static void pivot_body(void *arg, size_t s)
{
    const parsum__qsort_args *a = arg;
    const char *src = a->src;
    size_t es = a->cmp->elem_size;
    parsum_less_fn less = a->cmp->less;
    void *user = a->cmp->user;
    char *to = (char *)a->pivots + s * es;
    if (a->reuse[s] != UINT64_MAX) {
        memcpy(to, (const char *)a->prev_pivots + a->reuse[s] * es, es);
        return;
    }
    uint64_t x = a->sample[3 * s], y = a->sample[3 * s + 1],
             z = a->sample[3 * s + 2];
    if (less(src + y * es, src + x * es, user)) {
        uint64_t t = x;
        x = y;
        y = t;
    }
    /* Now x <= y; the median is y unless z is below it. */
    if (less(src + z * es, src + y * es, user))
        y = less(src + z * es, src + x * es, user) ? x : z;
    memcpy(to, src + y * es, es);
}

static void classify_body(void *arg, size_t b)
{
    const parsum__qsort_args *a = arg;
    const char *src = a->src;
    size_t es = a->cmp->elem_size;
    parsum_less_fn less = a->cmp->less;
    void *user = a->cmp->user;
    const uint64_t *off = a->act_off;
    uint64_t j = (uint64_t)b * BLOCK, j1 = j + BLOCK;
    if (j1 > a->m)
        j1 = a->m;
    for (size_t s = seg_of(off, a->nseg, j); j < j1; s++) {
        uint64_t end = off[s + 1] < j1 ? off[s + 1] : j1;
        const char *p = (const char *)a->pivots + s * es;
        const char *x = src + (a->start[s] + (j - off[s])) * es;
        bool eq_split = a->reuse[s] != UINT64_MAX;
        for (; j < end; j++, x += es) {
            bool lt = !eq_split && less(x, p, user);
            bool eq = eq_split && !less(p, x, user);
            if (a->cnt_eq != NULL) {
                a->cnt[j] = lt;
                a->cnt_eq[j] = eq;
            } else {
                a->cnt[j] = lt ? PACKED_LESS : (uint64_t)eq;
            }
        }
    }
}

parsum_status parsum__cpu_qsort_classify(parsum_context *ctx,
                                         const parsum__qsort_args *a)
{
    parsum__sched_parallel_for(ctx->threads, a->nseg, pivot_body, (void *)a);
    parsum__sched_parallel_for(ctx->threads, blocks_of(a->m), classify_body,
                               (void *)a);
    return PARSUM_OK;
}

/* ---- the three-way split ------------------------------------------------ */

/* Inclusive less and equal counts of active index j (both arrays'
 * layouts, internal.h). */
static inline void counts_at(const parsum__qsort_args *a, uint64_t j,
                             uint64_t *lt, uint64_t *eq)
{
    if (a->cnt_eq != NULL) {
        *lt = a->cnt[j];
        *eq = a->cnt_eq[j];
    } else {
        *lt = a->cnt[j] >> 32;
        *eq = a->cnt[j] & PACKED_EQ_MASK;
    }
}

static void scatter_body(void *arg, size_t b)
{
    const parsum__qsort_args *a = arg;
    const char *src = a->src;
    char *dst = a->dst;
    /* Equal elements may go to fin at once unless fin is being read. */
    char *eq_to = a->fin == a->src ? dst : a->fin;
    size_t es = a->cmp->elem_size;
    const uint64_t *off = a->act_off;
    uint64_t j = (uint64_t)b * BLOCK, j1 = j + BLOCK;
    if (j1 > a->m)
        j1 = a->m;
    for (size_t s = seg_of(off, a->nseg, j); j < j1; s++) {
        uint64_t end = off[s + 1] < j1 ? off[s + 1] : j1, first = off[s];
        uint64_t base = a->start[s], tl, te, plt = 0, peq = 0;
        counts_at(a, off[s + 1] - 1, &tl, &te);
        if (j > first)
            counts_at(a, j - 1, &plt, &peq);
        const char *x = src + (base + (j - first)) * es;
        for (; j < end; j++, x += es) {
            uint64_t lt, eq;
            counts_at(a, j, &lt, &eq);
            /* Selects, not branches: the class is as unpredictable as the
             * data, and a mispredicted branch per element costs more than
             * the move. */
            uint64_t pos = base + tl + te + (j - first - lt - eq);
            char *to = dst;
            pos = eq != peq ? base + tl + eq - 1 : pos;
            to = eq != peq ? eq_to : to;
            pos = lt != plt ? base + lt - 1 : pos;
            copy_elem(to + pos * es, x, es);
            plt = lt;
            peq = eq;
        }
        if (end == off[s + 1]) {
            a->totals[2 * s] = tl;
            a->totals[2 * s + 1] = te;
        }
    }
}

static void equal_body(void *arg, size_t s)
{
    const parsum__qsort_args *a = arg;
    size_t es = a->cmp->elem_size;
    uint64_t at = a->start[s] + a->totals[2 * s];
    memcpy((char *)a->fin + at * es, (const char *)a->dst + at * es,
           a->totals[2 * s + 1] * es);
}

parsum_status parsum__cpu_qsort_scatter(parsum_context *ctx,
                                        const parsum__qsort_args *a)
{
    parsum__sched_parallel_for(ctx->threads, blocks_of(a->m), scatter_body,
                               (void *)a);
    if (a->fin == a->src)
        parsum__sched_parallel_for(ctx->threads, a->nseg, equal_body,
                                   (void *)a);
    return PARSUM_OK;
}

/* ---- the small sort ----------------------------------------------------- */

/* Binary insertion sort of one part: each element goes after the equal
 * ones already placed (upper bound), which keeps the sort stable and
 * spends about log2(len!) comparisons, the fewest for a costly order. */
static void finish_body(void *arg, size_t k)
{
    const parsum__qsort_args *a = arg;
    size_t es = a->cmp->elem_size;
    parsum_less_fn less = a->cmp->less;
    void *user = a->cmp->user;
    uint64_t b = a->parts[2 * k], len = a->parts[2 * k + 1];
    const char *from = (const char *)a->src + b * es;
    char *to = (char *)a->dst + b * es;
    _Alignas(64) unsigned char hold[PARSUM_CUSTOM_MAX_ELEM_SIZE];
    for (uint64_t i = 0; i < len; i++) {
        const void *x = from + i * es;
        if (from == to) { /* in place: the shift below overwrites it */
            memcpy(hold, x, es);
            x = hold;
        }
        uint64_t lo = 0, hi = i;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (less(x, to + mid * es, user))
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(to + (lo + 1) * es, to + lo * es, (i - lo) * es);
        copy_elem(to + lo * es, x, es);
    }
}

parsum_status parsum__cpu_qsort_finish(parsum_context *ctx,
                                       const parsum__qsort_args *a)
{
    parsum__sched_parallel_for(ctx->threads, a->nparts, finish_body,
                               (void *)a);
    return PARSUM_OK;
}
