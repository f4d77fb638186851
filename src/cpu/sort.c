/*
 * sort.c - parsum_sort and parsum_sort_indices on the CPU (the backend's
 * sort slot), and the sorts of one array that the segmented sort
 * (sort_seg.c) also uses. The inner loops are in sort_kernels.c.
 *
 * A stable LSD radix sort (the notes' "LSD radix sort" with counting sort
 * passes; digits of up to 11 bits instead of the notes' one-bit split):
 *   1. One read of the keys counts every digit at once, per block of the
 *      input (four blocks per thread, taken from a shared counter). A
 *      digit whose value is the same for every key would move nothing:
 *      its pass is skipped.
 *   2. Each remaining pass, least significant digit first: the blocks'
 *      counts of the digit (the first pass has them from step 1; later
 *      passes count their own source again, per block) give every block
 *      the positions of its elements: block b's elements of digit d go
 *      after all elements of smaller digits and after blocks < b's
 *      elements of digit d. Then each block scatters its elements in
 *      order, which makes the pass stable. Large arrays go through the
 *      write-combining scatter (sort_kernels.c), arrays in the cache
 *      through plain stores.
 * Keys move as their raw bits; every pass computes the ordered bits
 * (sort/sort_keys.h) again, so NaN payloads and signs survive.
 * The passes alternate between the output and a temporary so that the
 * last one lands in the output; an in-place sort with an odd number of
 * passes ends in the temporary and copies back. parsum_sort_indices
 * generates the positions in its first pass, and carries them as 32-bit
 * values between passes when they fit.
 *
 * Arrays beyond the cache whose top digit splits them into buckets of
 * which none holds a large share take one MSD pass first instead (see
 * "MSD first" below): the top digit's pass, then every bucket sorted by
 * the lower bits in the cache (split first into parts where it does not
 * fit a thread's local buffer). On the 2-core development machine this
 * took a third less CPU time than three 11-bit LSD passes over memory
 * for 2^26 random u32 keys (which were not bound by memory bandwidth but
 * by the scatter's stores to 2^11 places at once), and half for u64.
 *
 * Result: the one stable order, so the same bits for any thread count.
 * Small sorts run in the calling thread: a merge sort up to a few hundred
 * elements (sort_small.c), else the radix sort with one block.
 */
#include "sort_impl.h"

#include "../sort/sort_keys.h"
#include "sched.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Below this many elements one thread sorts: a parallel LSD sort costs
 * two fork-joins per pass and a prefix over every block's counters, and a
 * fork-join costs far more on a busy machine (2^17 u32 keys take about a
 * millisecond on one thread of the development machine). */
#define PAR_MIN ((size_t)1 << 17)
/* Elements each thread of a parallel sort should get at least. */
#define PER_THREAD ((size_t)1 << 15)
/* Sorts of fewer elements use 8-bit digits: 256 counters per digit to
 * clear and sum, against 2048 for 11 bits. */
#define WIDE_DIGITS_MIN ((size_t)1 << 12)
/* Copies (unsorted results, the copy back of an in-place sort) of more
 * bytes than this are split over the threads. */
#define COPY_PAR_BYTES ((size_t)1 << 20)

/* ---- key format and plan ------------------------------------------------- */

/* Digits over [begin, end), at most maxbits each, the wider ones at the
 * bottom (32 bits in 11, 11, 10). */
static void plan_digits(unsigned begin, unsigned end, unsigned maxbits,
                        parsum__sort_digits *dg)
{
    unsigned b = end - begin, p = (b + maxbits - 1) / maxbits, sh = begin;
    dg->count = p;
    for (unsigned j = 0; j < p; j++) {
        dg->bits[j] = b / p + (j < b % p);
        dg->shift[j] = sh;
        sh += dg->bits[j];
    }
}

static unsigned digit_bits(size_t m)
{
    return m < WIDE_DIGITS_MIN ? 8 : PARSUM__SORT_MAX_BITS;
}

/* The value mode of pass j of u. */
static int pass_vm(const parsum__sort_call *c, unsigned j, unsigned u)
{
    if (c->vm != PARSUM__SV_IDX64 || u == 1)
        return c->vm;
    if (!c->idx32)
        return j == 0 ? PARSUM__SV_IDX64 : PARSUM__SV_8;
    return j == 0       ? PARSUM__SV_IDX32
           : j == u - 1 ? PARSUM__SV_WIDEN
                        : PARSUM__SV_4;
}

int parsum__sort_threads(size_t n, int threads)
{
    if (n < PAR_MIN || threads <= 1)
        return 1;
    size_t want = n / PER_THREAD;
    return want < (size_t)threads ? (int)want : threads;
}

/* ---- copies ------------------------------------------------------------------ */

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
    uint64_t iota_base; /* src NULL: dst gets uint64_t base + i */
} copy_job;

static void copy_worker(void *arg, int tid, int nt)
{
    const copy_job *j = arg;
    if (j->src == NULL) {
        size_t b, e;
        parsum__sched_share(j->bytes / 8, tid, nt, &b, &e);
        uint64_t *d = (uint64_t *)(void *)j->dst;
        for (size_t i = b; i < e; i++)
            d[i] = j->iota_base + i;
        return;
    }
    size_t b, e;
    parsum__sched_share(j->bytes / 64, tid, nt, &b, &e);
    b *= 64;
    e = tid == nt - 1 ? j->bytes : e * 64;
    if (nt == 1 && j->bytes < COPY_PAR_BYTES)
        memcpy(j->dst + b, j->src + b, e - b);
    else
        parsum__cpu_kernels_get()->sel->stream_copy(j->dst + b, j->src + b,
                                                    e - b);
}

/* dst = src (bytes), or the positions base, base + 1 ... (src NULL), on
 * up to nt threads. */
static void copy_out(void *dst, const void *src, size_t bytes, uint64_t base,
                     int nt)
{
    copy_job j = {dst, src, bytes, base};
    if (bytes < COPY_PAR_BYTES)
        nt = 1;
    parsum__sched_spmd(nt, copy_worker, &j);
    atomic_thread_fence(memory_order_seq_cst); /* the streamed stores */
}

void parsum__sort_identity(const parsum__sort_call *c, size_t off, size_t m,
                           int nt)
{
    const parsum__sort_args *a = c->a;
    size_t kb = c->kb;
    if (a->keys_out != NULL && a->keys_out != a->keys_in)
        copy_out((char *)a->keys_out + off * kb,
                 (const char *)a->keys_in + off * kb, m * kb, 0, nt);
    if (c->vm == PARSUM__SV_IDX64)
        copy_out((uint64_t *)a->values_out + off, NULL, m * 8, off, nt);
    else if (c->vm != PARSUM__SV_NONE && a->values_out != a->values_in)
        copy_out((char *)a->values_out + off * c->vs,
                 (const char *)a->values_in + off * c->vs, m * c->vs, 0, nt);
}

/* ---- the radix sort of one array ------------------------------------------- */

typedef struct rjob {
    const parsum__sort_call *c;
    size_t off, m;
    int nb;
    parsum__sort_area *areas;
    parsum__sort_digits dg;
    const void *kin;
    const size_t *tot; /* the counts of every digit over all blocks */
    int nt;            /* threads; areas[0 .. nt) have their buffers */
    unsigned hist_from; /* step 1 counts the digits from this one on */
    size_t next;       /* the next block to take (atomic) */
    bool wc;
    /* the current pass */
    unsigned j;
    int vm;
    const void *src_k, *src_v;
    void *dst_k, *dst_v;
} rjob;

/* The next block for a worker, or -1 when all are taken. */
static int take_block(rjob *r)
{
    size_t b = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
    return b < (size_t)r->nb ? (int)b : -1;
}

/* Runs fn on the blocks of r on r->nt threads. */
static void run_blocks(rjob *r, void (*fn)(void *, int, int))
{
    r->next = 0;
    parsum__sched_spmd(r->nt, fn, r);
}

static void hist_worker(void *arg, int tid, int nt)
{
    rjob *r = arg;
    const parsum__sort_call *c = r->c;
    (void)tid;
    (void)nt;
    for (int b; (b = take_block(r)) >= 0;) {
        parsum__sort_area *ar = &r->areas[b];
        size_t lo, hi;
        parsum__sched_share(r->m, b, r->nb, &lo, &hi);
        parsum__sort_digits dg = {0, {0}, {0}};
        for (unsigned j = r->hist_from; j < r->dg.count; j++) {
            memset(ar->hist + (size_t)j * PARSUM__SORT_RADIX_MAX, 0,
                   sizeof(size_t) << r->dg.bits[j]);
            dg.shift[dg.count] = r->dg.shift[j];
            dg.bits[dg.count++] = r->dg.bits[j];
        }
        c->k->hist[c->kind](
            (const char *)r->kin + lo * c->kb, hi - lo, c->flip, &dg,
            ar->hist + (size_t)r->hist_from * PARSUM__SORT_RADIX_MAX);
    }
}

/* The blocks' counts of pass j's digit in its source. */
static void count_worker(void *arg, int tid, int nt)
{
    rjob *r = arg;
    const parsum__sort_call *c = r->c;
    parsum__sort_digits one = {1, {r->dg.shift[r->j]}, {r->dg.bits[r->j]}};
    (void)tid;
    (void)nt;
    for (int b; (b = take_block(r)) >= 0;) {
        parsum__sort_area *ar = &r->areas[b];
        size_t lo, hi;
        parsum__sched_share(r->m, b, r->nb, &lo, &hi);
        memset(ar->cnt, 0, sizeof(size_t) << one.bits[0]);
        c->k->hist[c->kind]((const char *)r->src_k + lo * c->kb, hi - lo,
                            c->flip, &one, ar->cnt);
    }
}

static void scatter_worker(void *arg, int tid, int nt)
{
    rjob *r = arg;
    const parsum__sort_call *c = r->c;
    parsum__sort_scatter_fn fn = r->wc ? c->k->scatter_wc[c->kind][r->vm]
                                       : c->k->scatter[c->kind][r->vm];
    (void)nt;
    for (int b; (b = take_block(r)) >= 0;) {
        parsum__sort_pass p;
        p.src_k = r->src_k;
        p.src_v = r->src_v;
        p.dst_k = r->dst_k;
        p.dst_v = r->dst_v;
        p.vs = c->vs;
        parsum__sched_share(r->m, b, r->nb, &p.lo, &p.hi);
        p.idx_base = r->off;
        p.flip = c->flip;
        p.shift = r->dg.shift[r->j];
        p.bits = r->dg.bits[r->j];
        p.pos = r->areas[b].pos;
        p.start = r->areas[b].start;
        p.stage = r->areas[tid].stage;
        fn(&p);
    }
}

/* Block b's positions for digit j: the digit's running sum over the
 * digit values, and within one value over the blocks. cnt(b) gives block
 * b's counts. */
static void positions(const rjob *r, unsigned j, bool first)
{
    size_t rad = (size_t)1 << r->dg.bits[j], s = 0;
    for (size_t d = 0; d < rad; d++)
        for (int b = 0; b < r->nb; b++) {
            const parsum__sort_area *ar = &r->areas[b];
            size_t cnt = first ? ar->hist[(size_t)j * PARSUM__SORT_RADIX_MAX + d]
                               : ar->cnt[d];
            ar->pos[d] = s;
            s += cnt;
        }
}

/* The sums over the blocks (with one block, its own counts) of the
 * digits step 1 counted, and which of them vary; returns how many do,
 * their indices in used[]. */
static unsigned used_digits(rjob *r, unsigned *used)
{
    const size_t *tot = r->areas[0].hist;
    if (r->nb > 1) {
        size_t *t = r->areas[0].tot;
        for (unsigned j = r->hist_from; j < r->dg.count; j++) {
            size_t base = (size_t)j * PARSUM__SORT_RADIX_MAX;
            size_t rad = (size_t)1 << r->dg.bits[j];
            for (size_t d = 0; d < rad; d++) {
                size_t s = 0;
                for (int b = 0; b < r->nb; b++)
                    s += r->areas[b].hist[base + d];
                t[base + d] = s;
            }
        }
        tot = t;
    }
    r->tot = tot;
    unsigned u = 0;
    for (unsigned j = r->hist_from; j < r->dg.count; j++) {
        const size_t *h = tot + (size_t)j * PARSUM__SORT_RADIX_MAX;
        size_t rad = (size_t)1 << r->dg.bits[j], d = 0;
        while (d < rad && h[d] == 0)
            d++;
        if (d == rad || h[d] != r->m)
            used[u++] = j;
    }
    return u;
}

/* The destinations dst[0 .. u) of the u passes over one array: input in,
 * result wanted in fin (NULL: not wanted, the last pass writes nothing),
 * temporaries t1 and t2 (t2 only when fin is NULL). Consecutive passes
 * alternate so that the last lands in fin; when fin is in (in place) and
 * u is odd, the first pass cannot write fin, and the result ends in t1.
 * Returns where the result ends. */
static void *chain(const void *in, void *fin, void *t1, void *t2, unsigned u,
                   void **dst)
{
    for (unsigned j = 0; j < u; j++) {
        if (fin == NULL)
            dst[j] = j == u - 1 ? NULL : (u - 2 - j) % 2 == 0 ? t1 : t2;
        else if (fin == in && u % 2 == 1)
            dst[j] = j % 2 == 0 ? t1 : fin;
        else
            dst[j] = (u - 1 - j) % 2 == 0 ? fin : t1;
    }
    return u == 0 ? fin : dst[u - 1];
}

/* The arrays of elements [off, off + m) of c's call. */
typedef struct span {
    const void *kin, *vin;
    void *kout, *vout, *kt1, *kt2, *vt;
} span;

static span span_of(const parsum__sort_call *c, size_t off)
{
    const parsum__sort_args *a = c->a;
    size_t kb = c->kb, vs = c->vs, tv = parsum__sort_temp_vs(c);
    span s;
    s.kin = (const char *)a->keys_in + off * kb;
    s.kout = a->keys_out ? (char *)a->keys_out + off * kb : NULL;
    s.vin = a->values_in ? (const char *)a->values_in + off * vs : NULL;
    s.vout = a->values_out ? (char *)a->values_out + off * vs : NULL;
    /* the tiny sorts have no scratch */
    s.kt1 = c->kt1 ? c->kt1 + off * kb : NULL;
    s.kt2 = c->kt2 ? c->kt2 + off * kb : NULL;
    s.vt = c->vt ? c->vt + off * tv : NULL;
    return s;
}

/* ---- MSD first: the top digit over memory, then each bucket in the cache -
 * An array that does not fit in the cache crosses memory once per LSD
 * pass. The MSD-first sort instead takes the most significant digit first
 * (a stable counting sort by it, into the temporary, write-combining),
 * and then sorts every bucket on its own by the remaining bits, least
 * significant first, between a thread's local buffer and the output: the
 * stable LSD sort of the bucket, in the cache. Stable as a whole, since
 * every step is; the array crosses memory about twice instead of once per
 * pass, and the bucket passes are plain stores to the cache. A digit that
 * is constant within a bucket is skipped there.
 * A bucket beyond the local buffer (2^18 keys of a 2^28-key array, say)
 * is split first by one more counting sort by its next few bits, from the
 * temporary to the output, by the thread that took it, into parts that
 * sort in the cache; a part still too big is split again (back to the
 * temporary, and so on). The extra pass over memory costs less than
 * sorting big buckets in the cache: on the 2-core development machine,
 * 2^28 u32 keys took 5.4 s of CPU time in three LSD passes, 7.0 s as
 * 2^11 buckets of 2^17 keys sorted in the cache, and 4.0 s as 2^10
 * buckets of 2^18 keys each split into parts of 2^12 keys (two 8-bit
 * passes). Hence the small local buffer (PARSUM__SORT_LOCAL_BYTES). The
 * sort takes this path only while no bucket holds a large share of the
 * array, so that the threads, taking buckets one at a time, stay busy to
 * the end. */

/* At most this many bits per split of a bucket (its part counts are on the
 * stack). */
#define SPLIT_MAX_BITS 8
/* A bucket may hold at most 1 / (MSD_SHARE x threads) of the array, unless
 * it fits a local buffer. */
#define MSD_SHARE 4

typedef struct bjob {
    const rjob *r;
    span s;
    const size_t *bstart; /* bucket b: [bstart[b], bstart[b + 1] or m) */
    size_t nbuckets;
    size_t next; /* the next bucket to take (atomic) */
    int vm_mid, vm_last; /* value modes of passes before the last, the last */
} bjob;

/* Where a range of a bucket is: elements [lo, lo + m) of the sort, in the
 * temporary (x) or in the output (!x); the bucket's elements are
 * [blo, blo + bm). */
typedef struct brange {
    size_t lo, m, blo, bm;
    bool x;
} brange;

/* The positions of digit j (one block: its counts h). */
static void prefix(const size_t *h, unsigned bits, size_t *pos)
{
    size_t s = 0;
    for (size_t d = 0; d < ((size_t)1 << bits); d++) {
        pos[d] = s;
        s += h[d];
    }
}

/* The keys and values of range g in the temporary (x) or the output. */
static unsigned char *range_k(const bjob *j, const brange *g, bool x)
{
    const parsum__sort_call *c = j->r->c;
    if (x)
        return c->kt1 + (j->r->off + g->lo) * c->kb;
    return (unsigned char *)j->s.kout + g->lo * c->kb;
}

/* The values of range g in the temporary (x) or the output. Positions
 * carried as uint32_t (idx32) that wait in the output sit in the upper
 * half of their bucket's part of it: a range's final, widened values then
 * cover only its own and those of ranges before it in the bucket (one
 * thread sorts the bucket's ranges in order). */
static unsigned char *range_v(const bjob *j, const brange *g, bool x)
{
    const parsum__sort_call *c = j->r->c;
    if (c->vm == PARSUM__SV_NONE)
        return NULL;
    if (x)
        return c->vt + (j->r->off + g->lo) * parsum__sort_temp_vs(c);
    unsigned char *o = (unsigned char *)j->s.vout;
    if (!c->idx32)
        return o + g->lo * c->vs;
    return o + 8 * g->blo + 4 * g->bm + 4 * (g->lo - g->blo);
}

/* The final values of range g in the output. */
static unsigned char *range_vfinal(const bjob *j, const brange *g)
{
    const parsum__sort_call *c = j->r->c;
    if (c->vm == PARSUM__SV_NONE)
        return NULL;
    return (unsigned char *)j->s.vout + g->lo * c->vs;
}

/* Range g to the output unchanged (every remaining digit constant in it),
 * positions widened if need be; waiting in the output already, they widen
 * front to back (value i's eight bytes cover no four-byte value after
 * i: range_v). */
static void range_finish(const bjob *j, const brange *g)
{
    const parsum__sort_call *c = j->r->c;
    const unsigned char *v = range_v(j, g, g->x);
    if (g->x) {
        memcpy(range_k(j, g, false), range_k(j, g, true), g->m * c->kb);
        if (v != NULL && !c->idx32)
            memcpy(range_vfinal(j, g), v, g->m * c->vs);
    }
    if (v == NULL || !c->idx32)
        return;
    uint64_t *o = (uint64_t *)(void *)range_vfinal(j, g);
    for (size_t i = 0; i < g->m; i++) {
        uint32_t w;
        memcpy(&w, v + 4 * i, 4);
        o[i] = w;
    }
}

/* Range g by the bits [begin, hb) in the cache, into the output: LSD
 * passes of digits of at most 8 bits (a pass then scatters to 256 places
 * in the L1 cache instead of 2048 in L2: more passes, each far cheaper),
 * alternating between the local buffer and the output so that the last
 * lands in the output. A range in the output whose pass count is odd is
 * first copied to the local buffer. */
static void range_cache_sort(const bjob *j, parsum__sort_area *ar,
                             const brange *g, unsigned hb)
{
    const parsum__sort_call *c = j->r->c;
    size_t m = g->m, kb = c->kb, tv = parsum__sort_temp_vs(c);
    parsum__sort_digits low;
    plan_digits(c->begin, hb, 8, &low);
    unsigned char *sk = range_k(j, g, g->x), *sv = range_v(j, g, g->x);
    for (unsigned d = 0; d < low.count; d++)
        memset(ar->hist + (size_t)d * PARSUM__SORT_RADIX_MAX, 0,
               sizeof(size_t) << low.bits[d]);
    c->k->hist[c->kind](sk, m, c->flip, &low, ar->hist);
    unsigned used[PARSUM__SORT_MAX_DIGITS], uu = 0;
    for (unsigned d = 0; d < low.count; d++) {
        const size_t *h = ar->hist + (size_t)d * PARSUM__SORT_RADIX_MAX;
        size_t x = 0, rad = (size_t)1 << low.bits[d];
        while (x < rad && h[x] == 0)
            x++;
        if (x == rad || h[x] != m)
            used[uu++] = d;
    }
    if (uu == 0) {
        range_finish(j, g);
        return;
    }
    unsigned char *lk = ar->local, *lv = ar->local + ar->local_cap * kb;
    unsigned char *ok = range_k(j, g, false), *ov = range_v(j, g, false);
    unsigned char *ovf = range_vfinal(j, g);
    if (!g->x && uu % 2 == 1) {
        memcpy(lk, sk, m * kb);
        if (sv != NULL)
            memcpy(lv, sv, m * tv);
        sk = lk;
        sv = sv != NULL ? lv : NULL;
    }
    for (unsigned p = 0; p < uu; p++) {
        bool to_out = (uu - 1 - p) % 2 == 0;
        parsum__sort_pass ps;
        memset(&ps, 0, sizeof ps);
        ps.src_k = sk;
        ps.src_v = sv;
        ps.dst_k = to_out ? ok : lk;
        ps.dst_v = sv == NULL ? NULL : !to_out ? lv : p == uu - 1 ? ovf : ov;
        ps.vs = c->vs;
        ps.hi = m;
        ps.flip = c->flip;
        ps.shift = low.shift[used[p]];
        ps.bits = low.bits[used[p]];
        ps.pos = ar->pos;
        prefix(ar->hist + (size_t)used[p] * PARSUM__SORT_RADIX_MAX, ps.bits,
               ar->pos);
        int vm = p == uu - 1 ? j->vm_last : j->vm_mid;
        c->k->scatter[c->kind][vm](&ps);
        sk = ps.dst_k;
        sv = ps.dst_v;
    }
}

static void range_sort(const bjob *j, parsum__sort_area *ar, const brange *g,
                       unsigned hb);

/* Bits of the split of a range of m elements below bit hb: enough for
 * parts of half a local buffer, rounded up so that the bits left are a
 * whole number of 8-bit cache passes where that costs at most
 * SPLIT_MAX_BITS. */
static unsigned split_bits(const parsum__sort_call *c, size_t m, size_t cap,
                           unsigned hb)
{
    unsigned avail = hb - c->begin, need = 1;
    while (need < SPLIT_MAX_BITS && (m >> need) > cap / 2)
        need++;
    if (need >= avail)
        return avail < SPLIT_MAX_BITS ? avail : SPLIT_MAX_BITS;
    unsigned round = avail - 8 * ((avail - need) / 8);
    return round <= SPLIT_MAX_BITS ? round : need;
}

/* Range g, too big for the local buffer: a counting sort by its bits
 * [hb - sb, hb) to the other place (temporary or output), then each part
 * by the bits below. A digit constant in the range moves nothing. */
static void range_split(const bjob *j, parsum__sort_area *ar,
                        const brange *g, unsigned hb)
{
    const parsum__sort_call *c = j->r->c;
    unsigned sb = split_bits(c, g->m, ar->local_cap, hb);
    size_t cnt[(size_t)1 << SPLIT_MAX_BITS], rad = (size_t)1 << sb;
    parsum__sort_digits one = {1, {hb - sb}, {sb}};
    memset(cnt, 0, sizeof(size_t) * rad);
    c->k->hist[c->kind](range_k(j, g, g->x), g->m, c->flip, &one, cnt);
    size_t d = 0;
    while (cnt[d] == 0)
        d++;
    if (cnt[d] == g->m) {
        range_sort(j, ar, g, hb - sb);
        return;
    }
    parsum__sort_pass ps;
    memset(&ps, 0, sizeof ps);
    ps.src_k = range_k(j, g, g->x);
    ps.src_v = range_v(j, g, g->x);
    ps.dst_k = range_k(j, g, !g->x);
    ps.dst_v = range_v(j, g, !g->x);
    ps.vs = c->vs;
    ps.hi = g->m;
    ps.flip = c->flip;
    ps.shift = hb - sb;
    ps.bits = sb;
    ps.pos = ar->pos;
    ps.start = ar->start;
    ps.stage = ar->stage;
    prefix(cnt, sb, ar->pos);
    c->k->scatter_wc[c->kind][j->vm_mid](&ps);
    brange part = {g->lo, 0, g->blo, g->bm, !g->x};
    for (d = 0; d < rad; part.lo += cnt[d++]) {
        part.m = cnt[d];
        if (part.m > 0)
            range_sort(j, ar, &part, hb - sb);
    }
}

/* Range g sorted by the bits [begin, hb) into the output. */
static void range_sort(const bjob *j, parsum__sort_area *ar, const brange *g,
                       unsigned hb)
{
    if (g->m <= ar->local_cap || hb == j->r->c->begin)
        range_cache_sort(j, ar, g, hb);
    else
        range_split(j, ar, g, hb);
}

static void bucket_worker(void *arg, int tid, int nt)
{
    bjob *j = arg;
    const rjob *r = j->r;
    unsigned hb = r->dg.shift[r->j];
    (void)nt;
    for (;;) {
        size_t b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (b >= j->nbuckets)
            break;
        size_t lo = j->bstart[b];
        size_t hi = b + 1 < j->nbuckets ? j->bstart[b + 1] : r->m;
        brange g = {lo, hi - lo, lo, hi - lo, true};
        if (hi > lo)
            range_sort(j, &r->areas[tid], &g, hb);
    }
}

/* Whether the MSD-first sort applies: data beyond the cache, at least two
 * passes, the keys wanted (the buckets move through the output), and no
 * bucket of the top digit beyond a local buffer and a share of the array
 * that would leave the other threads idle while one sorts it. */
static bool msd_fits(const rjob *r, unsigned top, unsigned u)
{
    const parsum__sort_call *c = r->c;
    if (!r->wc || u < 2 || c->a->keys_out == NULL || r->areas[0].local == NULL)
        return false;
    size_t cap = r->areas[0].local_cap;
    size_t share_max = r->m / (MSD_SHARE * (size_t)r->nt);
    size_t big = cap > share_max ? cap : share_max;
    const size_t *h = r->tot + (size_t)top * PARSUM__SORT_RADIX_MAX;
    for (size_t d = 0; d < ((size_t)1 << r->dg.bits[top]); d++)
        if (h[d] > big)
            return false;
    return true;
}

static void sort_msd_first(rjob *r, const span *s, unsigned top, unsigned u)
{
    const parsum__sort_call *c = r->c;
    bool values = c->vm != PARSUM__SV_NONE;
    /* the top digit: input -> temporary, by the blocks' counts of step 1 */
    r->j = top;
    r->vm = pass_vm(c, 0, u);
    r->src_k = s->kin;
    r->src_v = values ? s->vin : NULL;
    r->dst_k = s->kt1;
    r->dst_v = values ? s->vt : NULL;
    positions(r, top, true);
    run_blocks(r, scatter_worker);
    bjob j;
    memset(&j, 0, sizeof j);
    j.r = r;
    j.s = *s;
    /* a bucket's passes come after the top one: a middle pass's value
     * mode for all but its last, which writes the final values */
    j.vm_mid = pass_vm(c, 1, 3);
    j.vm_last = pass_vm(c, 2, 3);
    /* bucket starts in areas[0].cnt, which the buckets leave alone */
    size_t *bs = r->areas[0].cnt;
    j.nbuckets = (size_t)1 << r->dg.bits[top];
    prefix(r->tot + (size_t)top * PARSUM__SORT_RADIX_MAX, r->dg.bits[top], bs);
    j.bstart = bs;
    parsum__sched_spmd(r->nt, bucket_worker, &j);
}

/* The MSD-first sort needs step 1's counts of the top digit only (every
 * bucket counts its own lower digits): they alone are counted first, and
 * only when the top digit is constant or its buckets unfit does the sort
 * count the others (one read more). */
static bool try_msd_first(rjob *r, const span *s)
{
    unsigned top = r->dg.count - 1, used[PARSUM__SORT_MAX_DIGITS];
    r->hist_from = top;
    run_blocks(r, hist_worker);
    unsigned u = used_digits(r, used);
    r->hist_from = 0;
    if (u == 0 || !msd_fits(r, top, r->dg.count))
        return false;
    sort_msd_first(r, s, top, r->dg.count);
    return true;
}

void parsum__sort_radix(const parsum__sort_call *c, size_t off, size_t m,
                        int nt, parsum__sort_area *areas)
{
    rjob r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.off = off;
    r.m = m;
    r.nt = nt;
    r.nb = parsum__sort_blocks(nt);
    r.areas = areas;
    plan_digits(c->begin, c->end, digit_bits(m), &r.dg);
    span s = span_of(c, off);
    r.kin = s.kin;
    bool values = c->vm != PARSUM__SV_NONE;
    size_t bytes = m * (c->kb + (values ? c->vs : 0));
    r.wc = bytes > parsum__sort_wc_threshold();
    if (r.wc && r.dg.count >= 2 && c->a->keys_out != NULL &&
        areas[0].local != NULL && try_msd_first(&r, &s))
        return;
    run_blocks(&r, hist_worker);
    unsigned used[PARSUM__SORT_MAX_DIGITS];
    unsigned u = used_digits(&r, used);
    if (u == 0) {
        parsum__sort_identity(c, off, m, nt);
        return;
    }
    if (msd_fits(&r, used[u - 1], u)) {
        sort_msd_first(&r, &s, used[u - 1], u);
        return;
    }
    void *dk[PARSUM__SORT_MAX_DIGITS], *dv[PARSUM__SORT_MAX_DIGITS];
    void *kend = chain(s.kin, s.kout, s.kt1, s.kt2, u, dk);
    void *vend = NULL;
    if (values)
        vend = chain(s.vin, s.vout, s.vt, NULL, u, dv);
    for (unsigned p = 0; p < u; p++) {
        r.j = used[p];
        r.vm = pass_vm(c, p, u);
        r.src_k = p == 0 ? s.kin : dk[p - 1];
        r.src_v = !values ? NULL : p == 0 ? s.vin : dv[p - 1];
        r.dst_k = dk[p];
        r.dst_v = values ? dv[p] : NULL;
        /* with one block, its counts are the totals of step 1 */
        bool first = p == 0 || r.nb == 1;
        if (!first)
            run_blocks(&r, count_worker);
        positions(&r, r.j, first);
        run_blocks(&r, scatter_worker);
    }
    if (kend != s.kout)
        copy_out(s.kout, kend, m * c->kb, 0, nt);
    if (values && vend != s.vout)
        copy_out(s.vout, vend, m * c->vs, 0, nt);
}

/* ---- the slot ------------------------------------------------------------------ */

parsum_status parsum__cpu_sort(parsum_context *ctx, const parsum__sort_args *a)
{
    parsum__sort_call c;
    parsum__sort_call_init(ctx, &c, a, 0);
    if (a->n <= parsum__sort_small_max(&c)) { /* no scratch */
        parsum__sort_small(&c, 0, a->n);
        return PARSUM_OK;
    }
    int nt = parsum__sort_threads(a->n, ctx->threads);
    parsum_status st = parsum__sort_call_init(ctx, &c, a, nt);
    if (st != PARSUM_OK)
        return st;
    parsum__sort_radix(&c, 0, a->n, nt, c.areas);
    return PARSUM_OK;
}
