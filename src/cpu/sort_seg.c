/*
 * sort_seg.c - parsum_segmented_sort on the CPU (the backend's
 * segmented_sort slot): every segment sorted on its own by the sorts of
 * sort.c, which see a segment as the elements [off, off + m) of the
 * call's arrays and of its temporaries.
 *
 * Two kinds of segment:
 *   - big ones (each more than a quarter of one thread's share of the
 *     elements, and large enough for several threads): one after another,
 *     each by the parallel radix sort on all threads;
 *   - the rest in parallel, each by one thread: the small sorts of
 *     sort_small.c up to a few hundred elements, the radix sort with one
 *     block (and that thread's scratch) for the others. Threads take chunks of the elements from a shared counter
 *     and sort the segments that start in their chunk, so that neither
 *     many small segments nor a few medium ones leave a thread idle.
 * The offsets are checked by the core before this runs (CPU contexts).
 * Each segment's result is the one stable order, whatever thread sorted
 * it, so the output does not depend on the thread count.
 */
#include "sort_impl.h"

#include "sched.h"

#include <string.h>

/* Elements per chunk handed out to the threads. */
#define SEG_CHUNK ((size_t)1 << 14)

typedef struct seg_job {
    const parsum__sort_call *c;
    const uint64_t *off;
    size_t nseg, n;
    int threads;
    size_t next; /* the next chunk's first element (atomic) */
    /* big segments, found by the workers (at most 4 x threads + 1) */
    size_t *big;
    size_t nbig; /* atomic */
    size_t big_cap;
} seg_job;

/* A segment for all threads: worth several of them, and big enough that
 * sorting it in one thread would leave the others waiting at the end. */
static bool is_big(const seg_job *j, size_t m)
{
    return j->threads > 1 && parsum__sort_threads(m, j->threads) > 1 &&
           m > j->n / (4 * (size_t)j->threads);
}

static void one_segment(const seg_job *j, int tid, size_t b, size_t m)
{
    const parsum__sort_call *c = j->c;
    if (m <= parsum__sort_small_max(c))
        parsum__sort_small(c, b, m);
    else
        parsum__sort_radix(c, b, m, 1, &c->areas[tid]);
}

static void seg_worker(void *arg, int tid, int nt)
{
    seg_job *j = arg;
    (void)nt;
    for (;;) {
        size_t c0 = __atomic_fetch_add(&j->next, SEG_CHUNK, __ATOMIC_RELAXED);
        if (c0 >= j->n)
            break;
        size_t c1 = c0 + (SEG_CHUNK < j->n - c0 ? SEG_CHUNK : j->n - c0);
        /* the segments that start in [c0, c1) */
        size_t s = parsum__lower_bound(j->off, j->nseg, c0);
        for (; s < j->nseg && j->off[s] < c1; s++) {
            size_t b = j->off[s], m = j->off[s + 1] - b;
            if (m == 0)
                continue;
            if (is_big(j, m)) {
                size_t at = __atomic_fetch_add(&j->nbig, 1, __ATOMIC_RELAXED);
                j->big[at] = s;
                continue;
            }
            one_segment(j, tid, b, m);
        }
    }
}

parsum_status parsum__cpu_segmented_sort(parsum_context *ctx,
                                         const parsum__sort_args *a)
{
    parsum__sort_call c;
    int threads = ctx->threads;
    parsum_status st = parsum__sort_call_init(ctx, &c, a, threads);
    if (st != PARSUM_OK)
        return st;
    seg_job j;
    memset(&j, 0, sizeof j);
    j.c = &c;
    j.off = a->offsets;
    j.nseg = a->num_segments;
    j.n = a->n;
    j.threads = threads;
    /* big segments exceed n / (4 threads): fewer than 4 x threads of them */
    size_t big[4 * 64 + 1];
    j.big = big;
    j.big_cap = sizeof big / sizeof *big;
    if ((size_t)threads * 4 + 1 > j.big_cap)
        j.threads = (int)((j.big_cap - 1) / 4);
    int nt = threads;
    if ((size_t)nt > (j.n + SEG_CHUNK - 1) / SEG_CHUNK)
        nt = (int)((j.n + SEG_CHUNK - 1) / SEG_CHUNK);
    parsum__sched_spmd(nt, seg_worker, &j);
    for (size_t i = 0; i < j.nbig; i++) {
        size_t s = big[i], b = a->offsets[s], m = a->offsets[s + 1] - b;
        parsum__sort_radix(&c, b, m, parsum__sort_threads(m, threads),
                           c.areas);
    }
    return PARSUM_OK;
}
