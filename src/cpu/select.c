#define _POSIX_C_SOURCE 200809L
/*
 * select.c - stream compaction (select, select by key, select indices),
 * stable partition, three-way partition and the split by bit on the CPU.
 *
 * Compaction is a scan of the selection flags followed by a scatter (the
 * notes: "where do I start writing my data?"). Here the flags are bits,
 * 64 to a word, made a chunk at a time into a small per-thread buffer by
 * the kernels of kernels_select.c (a vector compare and move mask per
 * vector for a predicate, a test per 64 bytes for flag bytes, a word
 * extraction for packed bits), and the scatter is a compress of the chunk
 * by those bits. The chunks are the fixed grid of cpu.h, a multiple of 64
 * elements and independent of the thread count, so the output is the
 * same for any number of threads (it is exact: nothing is combined).
 *
 * Select: one pass over memory, a chained scan of the chunks' counts as in
 * scan.c. A thread claims the next chunk, makes its bits (reading the
 * chunk from memory once) and counts them, waits for the previous chunk's
 * running count P(c-1), publishes P(c) = P(c-1) + its count, and
 * compresses the chunk, now in its cache, to out + P(c-1). Only a count
 * travels along the chain, and it is ready before the compress starts, so
 * a thread waits for little more than a cache line to arrive.
 *
 * Partition (two and three groups): the place of the rejected elements
 * depends on the total number selected, so a first pass counts every
 * chunk's groups (reading the flags or the keys), a short serial pass
 * turns the counts into starting positions, and a second pass makes the
 * bits again and compresses each group of each chunk to its place; every
 * group keeps input order. The split by bit is a partition with the core's
 * BIT_CLEAR predicate.
 */
#include "../core/internal.h"
#include "cpu.h"
#include "sched.h"
#include "seg_common.h"

#include <string.h>

/* Groups of a partition3. */
#define MAX_GROUPS 3

size_t parsum__select_chunk(size_t bytes)
{
    size_t c = PARSUM__CPU_CHUNK_BYTES / (bytes > 0 ? bytes : 1) / 64 * 64;
    return c > 64 ? c : 64;
}

size_t parsum__compress_any(const parsum__cpu_select_kernels *k,
                            const void *src, const uint64_t *bits,
                            size_t count, void *dst, size_t es)
{
    if (es == 1 || es == 2 || es == 4 || es == 8 || es == 16)
        return k->compress[es == 16 ? 4 : parsum__log2_size(es)](src, bits,
                                                                  count, dst);
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t m = 0;
    for (size_t w = 0; w < (count + 63) / 64; w++) {
        uint64_t b = bits[w];
        if (count - 64 * w < 64)
            b &= ((uint64_t)1 << (count - 64 * w)) - 1;
        for (; b != 0; b &= b - 1, m++)
            memcpy(d + m * es, s + (64 * w + (size_t)__builtin_ctzll(b)) * es,
                   es);
    }
    return m;
}

/* ---- selectors: the bits of a range of elements ------------------------ */

typedef struct sel_src {
    parsum_select_kind kind;
    const uint8_t *bytes;
    const uint32_t *words;     /* BITS, from the core: bit_offset < 32 */
    size_t bit_offset, nwords;
    const unsigned char *keys; /* PREDICATE, CUSTOM */
    size_t ksize;
    parsum_pred pred;
    parsum_scalar a, b;
    parsum__pred_bits_fn pred_bits;
    parsum__bytes_bits_fn bytes_bits;
    const parsum_custom_pred *custom;
} sel_src;

static void sel_src_init(sel_src *s, const parsum_selector *sel,
                         const void *keys, size_t ksize, size_t n,
                         const parsum__cpu_select_kernels *k)
{
    memset(s, 0, sizeof *s);
    s->kind = sel->kind;
    s->bytes = sel->bytes;
    s->words = sel->bits;
    s->bit_offset = sel->bit_offset;
    s->nwords = n > 0 ? (sel->bit_offset + n - 1) / 32 + 1 : 0;
    s->keys = keys;
    s->ksize = ksize;
    s->pred = sel->pred;
    s->a = sel->a;
    s->b = sel->b;
    if (sel->kind == PARSUM_SELECT_PREDICATE)
        s->pred_bits = k->pred_bits[sel->dtype];
    s->bytes_bits = k->bytes_bits;
    s->custom = sel->custom;
}

/* Custom predicates: one call per element, 64 to a word. */
static size_t custom_bits(const sel_src *s, size_t off, size_t len,
                          uint64_t *bits)
{
    const unsigned char *x = s->keys + off * s->ksize;
    size_t total = 0;
    for (size_t w = 0; w < (len + 63) / 64; w++) {
        size_t e = len - 64 * w < 64 ? len - 64 * w : 64;
        uint64_t r = 0;
        for (size_t j = 0; j < e; j++)
            r |= (uint64_t)(s->custom->pred(x + (64 * w + j) * s->ksize,
                                            s->custom->user) != 0)
                 << j;
        bits[w] = r;
        total += parsum__popcount64(r);
    }
    return total;
}

/* bits of the elements [off, off + len) (ceil(len / 64) words, bits above
 * len clear); returns how many are set. */
static size_t sel_bits(const sel_src *s, size_t off, size_t len,
                       uint64_t *bits)
{
    switch (s->kind) {
    case PARSUM_SELECT_BYTES:
        return s->bytes_bits(s->bytes + off, len, bits);
    case PARSUM_SELECT_BITS:
        parsum__flags_extract(s->words, s->nwords, s->bit_offset + off, len,
                              bits);
        return parsum__count_heads(bits, len);
    case PARSUM_SELECT_PREDICATE:
        return s->pred_bits(s->keys + off * s->ksize, len, s->pred, &s->a,
                            &s->b, bits);
    default:
        return custom_bits(s, off, len, bits);
    }
}

/* ---- the job ------------------------------------------------------------ */

typedef struct sel_job {
    const parsum__select_args *a;
    const parsum__cpu_select_kernels *k;
    sel_src s1, s2;
    int groups; /* 1 select, 2 partition, 3 partition3 */
    size_t n, chunk, nchunks, words;
    /* select: the chain, a slot per chunk (flag, running count at 8) */
    unsigned char *slots;
    /* partition: per chunk and group its count, then where it goes */
    size_t *counts;
    /* per thread: `groups` bit buffers of `words` words */
    uint64_t *tmp;
    atomic_size_t next;
} sel_job;

#define SLOT_BYTES 64

static size_t *slot_count(const sel_job *j, size_t c)
{
    return (size_t *)(void *)(j->slots + c * SLOT_BYTES + 8);
}

static size_t chunk_len(const sel_job *j, size_t c)
{
    size_t off = c * j->chunk;
    return j->n - off < j->chunk ? j->n - off : j->chunk;
}

/* The elements of [off, off + len) whose bit is set, to output position
 * `at` of every output the call has. */
static void move(const sel_job *j, const uint64_t *bits, size_t off,
                 size_t len, size_t at)
{
    const parsum__select_args *a = j->a;
    if (a->keys_out != NULL)
        parsum__compress_any(j->k, (const unsigned char *)a->keys +
                                       off * a->key_size,
                             bits, len,
                             (unsigned char *)a->keys_out + at * a->key_size,
                             a->key_size);
    if (a->values_out != NULL)
        parsum__compress_any(j->k, (const unsigned char *)a->values +
                                       off * a->value_size,
                             bits, len,
                             (unsigned char *)a->values_out +
                                 at * a->value_size,
                             a->value_size);
    if (a->indices_out != NULL)
        j->k->compress_index(bits, len, (uint64_t)off, a->indices_out + at);
}

/* The bits of every group of chunk c into g[0 .. groups) and their
 * counts: the selected, then (partition3) those the second selector takes
 * among the rest, then the rest. */
static void group_bits(const sel_job *j, size_t c, uint64_t *g[MAX_GROUPS],
                       size_t cnt[MAX_GROUPS])
{
    size_t off = c * j->chunk, len = chunk_len(j, c);
    size_t nw = (len + 63) / 64;
    cnt[0] = sel_bits(&j->s1, off, len, g[0]);
    if (j->groups == 1)
        return;
    uint64_t *rest = g[j->groups - 1];
    if (j->groups == 3) {
        (void)sel_bits(&j->s2, off, len, g[1]);
        cnt[1] = 0;
        for (size_t w = 0; w < nw; w++) {
            g[1][w] &= ~g[0][w];
            cnt[1] += parsum__popcount64(g[1][w]);
        }
    }
    for (size_t w = 0; w < nw; w++)
        rest[w] = ~(g[0][w] | (j->groups == 3 ? g[1][w] : 0));
    if (len % 64 != 0)
        rest[nw - 1] &= ((uint64_t)1 << (len % 64)) - 1;
    cnt[j->groups - 1] = len - cnt[0] - (j->groups == 3 ? cnt[1] : 0);
}

static void thread_bufs(const sel_job *j, int tid, uint64_t *g[MAX_GROUPS])
{
    uint64_t *t = j->tmp + (size_t)tid * (size_t)j->groups * j->words;
    for (int q = 0; q < MAX_GROUPS; q++)
        g[q] = q < j->groups ? t + (size_t)q * j->words : NULL;
}

/* ---- select: one chained pass ------------------------------------------ */

static void select_worker(void *arg, int tid, int nt)
{
    sel_job *j = arg;
    (void)nt;
    uint64_t *g[MAX_GROUPS];
    size_t cnt[MAX_GROUPS];
    thread_bufs(j, tid, g);
    /* Chunks are claimed in order: a chunk waits only for lower ones,
     * all held by running threads (scan.c). */
    for (size_t c = atomic_fetch_add_explicit(&j->next, 1,
                                              memory_order_relaxed);
         c < j->nchunks;
         c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed)) {
        group_bits(j, c, g, cnt);
        size_t before = 0;
        if (c > 0) {
            parsum__slot_wait(j->slots, SLOT_BYTES, c - 1);
            before = *slot_count(j, c - 1);
        }
        *slot_count(j, c) = before + cnt[0];
        parsum__slot_publish(j->slots, SLOT_BYTES, c);
        move(j, g[0], c * j->chunk, chunk_len(j, c), before);
    }
}

/* ---- partition: count, place, move ------------------------------------- */

/* A thread's share of the chunks: consecutive, the same split for both
 * passes (each chunk's work is the same size). */
static void share(const sel_job *j, int tid, int nt, size_t *c0, size_t *c1)
{
    *c0 = j->nchunks * (size_t)tid / (size_t)nt;
    *c1 = j->nchunks * (size_t)(tid + 1) / (size_t)nt;
}

static void count_worker(void *arg, int tid, int nt)
{
    sel_job *j = arg;
    uint64_t *g[MAX_GROUPS];
    size_t cnt[MAX_GROUPS], c0, c1;
    thread_bufs(j, tid, g);
    share(j, tid, nt, &c0, &c1);
    for (size_t c = c0; c < c1; c++) {
        group_bits(j, c, g, cnt);
        for (int q = 0; q < j->groups; q++)
            j->counts[c * MAX_GROUPS + (size_t)q] = cnt[q];
    }
}

static void place_worker(void *arg, int tid, int nt)
{
    sel_job *j = arg;
    uint64_t *g[MAX_GROUPS];
    size_t cnt[MAX_GROUPS], c0, c1;
    thread_bufs(j, tid, g);
    share(j, tid, nt, &c0, &c1);
    for (size_t c = c0; c < c1; c++) {
        group_bits(j, c, g, cnt);
        for (int q = 0; q < j->groups; q++)
            move(j, g[q], c * j->chunk, chunk_len(j, c),
                 j->counts[c * MAX_GROUPS + (size_t)q]);
    }
}

/* Counts to output positions: group q of chunk c goes after every
 * earlier group and after group q of the earlier chunks. Writes the sizes
 * of all groups but the last to the call's counts. */
static void place_groups(sel_job *j)
{
    size_t base = 0;
    for (int q = 0; q < j->groups; q++) {
        size_t at = base;
        for (size_t c = 0; c < j->nchunks; c++) {
            size_t *p = &j->counts[c * MAX_GROUPS + (size_t)q];
            size_t cnt = *p;
            *p = at;
            at += cnt;
        }
        if (q + 1 < j->groups)
            j->a->counts[q] = at - base;
        base = at;
    }
}

/* ---- the slot ------------------------------------------------------------ */

/* Bytes of memory an element touches: what the chunk size is made for. */
static size_t touched(const parsum__select_args *a)
{
    size_t b = a->value_size;
    if (a->keys_out != NULL || a->sel->kind >= PARSUM_SELECT_PREDICATE)
        b += a->key_size;
    if (a->indices_out != NULL)
        b += sizeof(uint64_t);
    if (a->sel->kind == PARSUM_SELECT_BYTES)
        b += 1;
    return b;
}

/* The public function that made the call, for messages. */
static const char *select_fn(const parsum__select_args *a)
{
    if (a->sel2 != NULL)
        return "parsum_partition3";
    if (a->partition)
        return a->values != NULL ? "parsum_partition_by_key"
                                 : "parsum_partition";
    if (a->indices_out != NULL)
        return "parsum_select_indices";
    return a->values != NULL ? "parsum_select_by_key" : "parsum_select";
}

static parsum_status job_init(parsum_context *ctx, sel_job *j,
                              const parsum__select_args *a, int *nt)
{
    const char *fn = select_fn(a);
    memset(j, 0, sizeof *j);
    j->a = a;
    j->k = parsum__cpu_kernels_get()->sel;
    j->groups = a->sel2 != NULL ? 3 : a->partition ? 2 : 1;
    j->n = a->n;
    j->chunk = parsum__select_chunk(touched(a));
    j->nchunks = (a->n + j->chunk - 1) / j->chunk;
    j->words = j->chunk / 64;
    sel_src_init(&j->s1, a->sel, a->keys, a->key_size, a->n, j->k);
    if (a->sel2 != NULL)
        sel_src_init(&j->s2, a->sel2, a->keys, a->key_size, a->n, j->k);
    *nt = parsum__seg_workers(ctx, j->nchunks);
    size_t per_chunk = j->groups == 1 ? SLOT_BYTES : MAX_GROUPS * sizeof(size_t);
    size_t tmp_words = (size_t)*nt * (size_t)j->groups * j->words;
    size_t meta, tmp_bytes;
    if (!parsum__mul_size(j->nchunks, per_chunk, &meta) ||
        !parsum__mul_size(tmp_words, sizeof(uint64_t), &tmp_bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    meta = PARSUM__ROUND64(meta);
    unsigned char *scratch = parsum__scratch(ctx, meta + tmp_bytes, fn);
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j->slots = scratch;
    j->counts = (size_t *)(void *)scratch;
    j->tmp = (uint64_t *)(void *)(scratch + meta);
    return PARSUM_OK;
}

parsum_status parsum__cpu_select(parsum_context *ctx,
                                 const parsum__select_args *a)
{
    if (a->n == 0) {
        a->counts[0] = 0;
        if (a->sel2 != NULL)
            a->counts[1] = 0;
        return PARSUM_OK;
    }
    sel_job j;
    int nt;
    parsum_status st = job_init(ctx, &j, a, &nt);
    if (st != PARSUM_OK)
        return st;
    if (j.groups == 1) {
        for (size_t c = 0; c < j.nchunks; c++)
            atomic_init(parsum__slot_flag(j.slots, SLOT_BYTES, c), 0);
        atomic_init(&j.next, 0);
        parsum__sched_spmd(nt, select_worker, &j);
        a->counts[0] = *slot_count(&j, j.nchunks - 1);
        return PARSUM_OK;
    }
    parsum__sched_spmd(nt, count_worker, &j);
    place_groups(&j);
    parsum__sched_spmd(nt, place_worker, &j);
    return PARSUM_OK;
}
