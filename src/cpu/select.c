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
 * Outputs too large for the cache are written with non-temporal stores
 * (no read for ownership of lines that are overwritten anyway): elements
 * are compressed into a per-thread staging buffer and copied out from
 * there. The commonest case, a built-in predicate on the keys alone, is
 * fused: 64 keys are tested and compressed at once into the staging
 * buffer, and the previous chunk's staged output is streamed out by the
 * same loop, so that a thread reads and writes memory at the same time.
 *
 * Partition (two and three groups): the place of the rejected elements
 * depends on the total number selected, so a first pass counts every
 * chunk's groups (reading the flags or the keys), a short serial pass
 * turns the counts into starting positions, and a second pass makes the
 * bits again and compresses each group of each chunk to its place; every
 * group keeps input order. The split by bit is a partition with the core's
 * BIT_CLEAR predicate. parsum_partition_unstable puts the rejected ones in
 * reverse order from the end, so their place needs only the count of
 * selected elements before the chunk: it runs select's chained pass, the
 * chunk's rejected elements reversed in the staging area and copied below
 * n - (rejected before the chunk).
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
    /* one pass along the chain of counts: select, partition_unstable */
    int chained;
    size_t n, chunk, nchunks, words;
    /* select: the chain, a slot per chunk (flag, running count at 8) */
    unsigned char *slots;
    /* partition: per chunk and group its count, then where it goes */
    size_t *counts;
    /* per thread: `groups` bit buffers of `words` words, then (stream)
     * staging for a chunk's worth of every output, `stage_bytes` in all */
    uint64_t *tmp;
    size_t tmp_bytes, stage_bytes;
    int stream;
    /* select by a predicate, keys only, streamed: keys tested and
     * compressed in one read (else NULL) */
    parsum__pred_select_fn fused;
    /* partition_unstable by a predicate, keys only: both groups staged in
     * one read of the keys (else NULL) */
    parsum__pred_partition_fn fused_part;
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

/* Where a chunk's selected elements go: one pointer per output. */
typedef struct outp {
    unsigned char *k, *v;
    uint64_t *i;
} outp;

/* The outputs from element position `at` on. */
static outp outputs_at(const sel_job *j, size_t at)
{
    const parsum__select_args *a = j->a;
    outp o = {NULL, NULL, NULL};
    if (a->keys_out != NULL)
        o.k = (unsigned char *)a->keys_out + at * a->key_size;
    if (a->values_out != NULL)
        o.v = (unsigned char *)a->values_out + at * a->value_size;
    if (a->indices_out != NULL)
        o.i = a->indices_out + at;
    return o;
}

/* The staging area of a thread, laid out like the outputs. */
static outp staging(const sel_job *j, unsigned char *stage)
{
    const parsum__select_args *a = j->a;
    outp o = {NULL, NULL, NULL};
    size_t at = 0;
    if (a->keys_out != NULL) {
        o.k = stage;
        at += PARSUM__ROUND64(j->chunk * a->key_size);
    }
    if (a->values_out != NULL) {
        o.v = stage + at;
        at += PARSUM__ROUND64(j->chunk * a->value_size);
    }
    if (a->indices_out != NULL)
        o.i = (uint64_t *)(void *)(stage + at);
    return o;
}

/* The first bytes of every array chunk `next` reads, pulled toward the
 * cache while this chunk is moved (the partition's passes, where a thread
 * knows its next chunk): the kernels prefetch ahead as they read, which
 * leaves only a chunk's start to cover (the hardware prefetchers do not
 * cross into another thread's chunk). */
#define HEAD_BYTES 8192

static void prefetch_head(const void *p, size_t bytes)
{
    bytes = bytes < HEAD_BYTES ? bytes : HEAD_BYTES;
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch((const unsigned char *)p + o, 0, 2);
}

static void prefetch_chunk(const sel_job *j, size_t c)
{
    const parsum__select_args *a = j->a;
    size_t off = c * j->chunk, len = chunk_len(j, c);
    if (a->keys_out != NULL || j->s1.kind >= PARSUM_SELECT_PREDICATE)
        prefetch_head((const unsigned char *)a->keys + off * a->key_size,
                      len * a->key_size);
    if (a->values_out != NULL)
        prefetch_head((const unsigned char *)a->values + off * a->value_size,
                      len * a->value_size);
    if (j->s1.kind == PARSUM_SELECT_BYTES)
        prefetch_head(j->s1.bytes + off, len);
}

/* Elements [off, off + len) whose bit is set (bits of that range), to
 * the outputs d; returns their count. */
static size_t compress_range(const sel_job *j, const uint64_t *bits,
                             size_t off, size_t len, outp d)
{
    const parsum__select_args *a = j->a;
    size_t m = 0;
    if (d.k != NULL)
        m = parsum__compress_any(
            j->k, (const unsigned char *)a->keys + off * a->key_size, bits,
            len, d.k, a->key_size);
    if (d.v != NULL)
        m = parsum__compress_any(
            j->k, (const unsigned char *)a->values + off * a->value_size,
            bits, len, d.v, a->value_size);
    if (d.i != NULL)
        m = j->k->compress_index(bits, len, (uint64_t)off, d.i);
    return m;
}

/* Streamed moves go a piece at a time (elements, a multiple of 64):
 * compressed into the thread's staging area, then out with streaming
 * stores, so that the staged piece is still in the first-level cache when
 * it is written out (8 KiB of 4-byte elements) and the writes alternate
 * with the reads at a fine grain (the kernels prefetch across pieces). */
#define PIECE 2048

/* The elements of chunk c whose bit is set in bits[q], to output
 * position at[q] of every output the call has, for each group q <
 * groups: through the staging area and streaming stores when the outputs
 * are large, else directly. The start of chunk `next` (nchunks: none) is
 * prefetched first. */
static void move(const sel_job *j, uint64_t *const *bits, int groups,
                 size_t c, size_t next, const size_t *at,
                 unsigned char *stage)
{
    const parsum__select_args *a = j->a;
    size_t off = c * j->chunk, len = chunk_len(j, c);
    if (next < j->nchunks)
        prefetch_chunk(j, next);
    outp o[MAX_GROUPS];
    for (int q = 0; q < groups; q++)
        o[q] = outputs_at(j, at[q]);
    if (!j->stream) {
        for (int q = 0; q < groups; q++)
            (void)compress_range(j, bits[q], off, len, o[q]);
        return;
    }
    outp d = staging(j, stage);
    for (size_t s = 0; s < len; s += PIECE)
        for (int q = 0; q < groups; q++) {
            size_t l = len - s < PIECE ? len - s : PIECE;
            size_t m = compress_range(j, bits[q] + s / 64, off + s, l, d);
            if (o[q].k != NULL) {
                j->k->stream_copy(o[q].k, d.k, m * a->key_size);
                o[q].k += m * a->key_size;
            }
            if (o[q].v != NULL) {
                j->k->stream_copy(o[q].v, d.v, m * a->value_size);
                o[q].v += m * a->value_size;
            }
            if (o[q].i != NULL) {
                j->k->stream_copy(o[q].i, d.i, m * sizeof(uint64_t));
                o[q].i += m;
            }
        }
}

/* Reverses m elements of es bytes in place (the staged rejected elements
 * of parsum_partition_unstable). Sizes 1, 2, 4, 8 as words; others byte
 * by byte. */
static void reverse_elems(unsigned char *p, size_t m, size_t es)
{
#define PARSUM__REVERSE_AS(TY)                                              \
    do {                                                                    \
        for (size_t i = 0, k = m - 1; i < k; i++, k--) {                    \
            TY x, y;                                                        \
            memcpy(&x, p + i * sizeof(TY), sizeof(TY));                     \
            memcpy(&y, p + k * sizeof(TY), sizeof(TY));                     \
            memcpy(p + i * sizeof(TY), &y, sizeof(TY));                     \
            memcpy(p + k * sizeof(TY), &x, sizeof(TY));                     \
        }                                                                   \
    } while (0)
    if (m < 2)
        return;
    switch (es) {
    case 1: PARSUM__REVERSE_AS(uint8_t); return;
    case 2: PARSUM__REVERSE_AS(uint16_t); return;
    case 4: PARSUM__REVERSE_AS(uint32_t); return;
    case 8: PARSUM__REVERSE_AS(uint64_t); return;
    default: break;
    }
#undef PARSUM__REVERSE_AS
    for (size_t i = 0, k = m - 1; i < k; i++, k--)
        for (size_t b = 0; b < es; b++) {
            unsigned char t = p[i * es + b];
            p[i * es + b] = p[k * es + b];
            p[k * es + b] = t;
        }
}

/* bytes staged at src to dst: streamed when the outputs are large. */
static void put_staged(const sel_job *j, unsigned char *dst,
                       const unsigned char *src, size_t bytes)
{
    if (j->stream)
        j->k->stream_copy(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

/* m staged elements of es bytes at d, reversed, to the m places below
 * *o (which moves down past them). */
static void put_reversed(const sel_job *j, unsigned char **o,
                         unsigned char *d, size_t m, size_t es)
{
    *o -= m * es;
    reverse_elems(d, m, es);
    put_staged(j, *o, d, m * es);
}

/* parsum_partition_unstable's rejected elements of chunk c (bits: the
 * chunk's rest), reversed, to the output positions just below `end`: a
 * piece at a time through the staging area, reversed there, then copied
 * out (streamed when the outputs are large). */
static void move_reversed(const sel_job *j, const uint64_t *bits, size_t c,
                          size_t end, unsigned char *stage)
{
    const parsum__select_args *a = j->a;
    size_t off = c * j->chunk, len = chunk_len(j, c);
    outp d = staging(j, stage), o = outputs_at(j, end);
    for (size_t s = 0; s < len; s += PIECE) {
        size_t l = len - s < PIECE ? len - s : PIECE;
        size_t m = compress_range(j, bits + s / 64, off + s, l, d);
        if (o.k != NULL)
            put_reversed(j, &o.k, d.k, m, a->key_size);
        if (o.v != NULL)
            put_reversed(j, &o.v, d.v, m, a->value_size);
    }
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

/* A thread's bit buffers; returns its staging area. */
static unsigned char *thread_bufs(const sel_job *j, int tid,
                                  uint64_t *g[MAX_GROUPS])
{
    unsigned char *base =
        (unsigned char *)j->tmp + (size_t)tid * j->tmp_bytes;
    uint64_t *t = (uint64_t *)(void *)base;
    for (int q = 0; q < MAX_GROUPS; q++)
        g[q] = q < j->groups ? t + (size_t)q * j->words : NULL;
    return base + PARSUM__ROUND64((size_t)j->groups * j->words * 8);
}

/* ---- select: one chained pass ------------------------------------------ */

/* Chunks of the chained pass are claimed when a thread is about to read
 * them (parsum__claim), at any thread count. Claiming a chunk ahead (to
 * prefetch its start) made the chain wait: a chunk claimed early is read
 * only after its thread's current chunk is moved, and every later chunk
 * waits for its count. On a 16-core Xeon (select, 2^28 u32 at 50 %, 16
 * threads) each thread waited 5.5-7.8 ms of a 20-27 ms call that way;
 * claimed when started, 1.5 ms (bench/RESULTS.md). Select prefetched only
 * a chunk's first 8 KiB, so claiming ahead bought nothing on few threads
 * either (2 cores: the same time; 4 threads: 71.5-75 % of copy claimed at
 * start, 71-72 % ahead). */

/* The count of chunk c's selected elements: makes them wait for the
 * previous chunk's running count, publishes its own and returns where
 * they go. */
static size_t chain(sel_job *j, size_t c, size_t cnt)
{
    size_t before = 0;
    if (c > 0) {
        parsum__slot_wait(j->slots, SLOT_BYTES, c - 1);
        before = *slot_count(j, c - 1);
    }
    *slot_count(j, c) = before + cnt;
    parsum__slot_publish(j->slots, SLOT_BYTES, c);
    return before;
}

/* The fused form of a streamed select by a predicate on the keys alone.
 * Chunk c's keys that pass go to a staging buffer as they are tested (one
 * read of the chunk); then the chain gives their place; they go out to
 * memory while the thread's next chunk is tested (the kernel streams them
 * a share after every 64 keys), so that one thread reads and writes
 * memory at the same time instead of in turns. Two staging buffers
 * alternate. */
typedef struct pending {
    const unsigned char *stage;
    unsigned char *dst;
    size_t bytes;
} pending;

/* The ordinary stores of p's partial lines at either end (a neighbouring
 * chunk's thread writes the rest of them); returns the whole lines in
 * between, to stream. */
static parsum__stream_task split_lines(const pending *p)
{
    if (p->bytes == 0) {
        parsum__stream_task none = {NULL, NULL, 0};
        return none;
    }
    size_t head = (64 - (uintptr_t)p->dst % 64) % 64;
    head = head < p->bytes ? head : p->bytes;
    parsum__stream_task t = {p->dst + head, p->stage + head,
                             (p->bytes - head) / 64};
    size_t tail = (p->bytes - head) % 64, at = head + 64 * t.lines;
    memcpy(p->dst, p->stage, head);
    memcpy(p->dst + at, p->stage + at, tail);
    return t;
}

static void fused_worker(sel_job *j, unsigned char *stage)
{
    const parsum__select_args *a = j->a;
    size_t ks = a->key_size;
    unsigned char *buf[2] = {stage, stage + j->stage_bytes};
    pending prev = {NULL, NULL, 0};
    int cur = 0;
    for (size_t c = parsum__claim(&j->next); c < j->nchunks;
         c = parsum__claim(&j->next)) {
        parsum__stream_task t = split_lines(&prev);
        size_t m = j->fused((const unsigned char *)a->keys + c * j->chunk * ks,
                            chunk_len(j, c), j->s1.pred, &j->s1.a, &j->s1.b,
                            buf[cur], &t);
        size_t at = chain(j, c, m);
        prev.stage = buf[cur];
        prev.dst = (unsigned char *)a->keys_out + at * ks;
        prev.bytes = m * ks;
        cur ^= 1;
    }
    if (prev.bytes > 0)
        j->k->stream_copy(prev.dst, prev.stage, prev.bytes);
}

/* partition_unstable by a built-in predicate on the keys alone: each
 * chunk's keys tested once, the selected and the rejected ones compressed
 * into two staging buffers as they are tested; the chain gives the
 * selected their place, the rejected go reversed below n - (rejected
 * before the chunk). */
static void fused_partition_worker(sel_job *j, unsigned char *stage)
{
    const parsum__select_args *a = j->a;
    size_t ks = a->key_size;
    unsigned char *kept = stage, *rest = stage + j->stage_bytes;
    unsigned char *out = (unsigned char *)a->keys_out;
    for (size_t c = parsum__claim(&j->next); c < j->nchunks;
         c = parsum__claim(&j->next)) {
        size_t nrest = 0;
        size_t m = j->fused_part(
            (const unsigned char *)a->keys + c * j->chunk * ks,
            chunk_len(j, c), j->s1.pred, &j->s1.a, &j->s1.b, kept, rest,
            &nrest);
        size_t at = chain(j, c, m);
        put_staged(j, out + at * ks, kept, m * ks);
        unsigned char *o = out + (j->n - (c * j->chunk - at)) * ks;
        put_reversed(j, &o, rest, nrest, ks);
    }
}

static void select_worker(void *arg, int tid, int nt)
{
    sel_job *j = arg;
    (void)nt;
    uint64_t *g[MAX_GROUPS];
    size_t cnt[MAX_GROUPS];
    unsigned char *stage = thread_bufs(j, tid, g);
    /* Chunks are claimed in order (parsum__claim): a chunk waits only for
     * lower ones, all held by running threads; the output of a thread's
     * chunk may go out after the thread has claimed later ones, but
     * nothing waits for it. */
    if (j->fused != NULL || j->fused_part != NULL) {
        if (j->fused != NULL)
            fused_worker(j, stage);
        else
            fused_partition_worker(j, stage);
        atomic_thread_fence(memory_order_seq_cst);
        return;
    }
    for (size_t c = parsum__claim(&j->next); c < j->nchunks;
         c = parsum__claim(&j->next)) {
        group_bits(j, c, g, cnt);
        size_t at = chain(j, c, cnt[0]);
        move(j, g, 1, c, j->nchunks, &at, stage);
        /* partition_unstable: the rejected before this chunk are the
         * elements before it minus the selected, counted from n down */
        if (j->a->reverse_rest)
            move_reversed(j, g[1], c, j->n - (c * j->chunk - at), stage);
    }
    /* The streamed stores, visible before the call returns. */
    atomic_thread_fence(memory_order_seq_cst);
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
        if (c + 1 < c1) /* the kernels prefetch up to the chunk's end */
            prefetch_chunk(j, c + 1);
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
    unsigned char *stage = thread_bufs(j, tid, g);
    share(j, tid, nt, &c0, &c1);
    for (size_t c = c0; c < c1; c++) {
        group_bits(j, c, g, cnt);
        move(j, g, j->groups, c, c + 1 < c1 ? c + 1 : j->nchunks,
             &j->counts[c * MAX_GROUPS], stage);
    }
    atomic_thread_fence(memory_order_seq_cst); /* the streamed stores */
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
    if (a->partition && a->reverse_rest)
        return a->values != NULL ? "parsum_partition_unstable_by_key"
                                 : "parsum_partition_unstable";
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
    /* Stream when the outputs cannot stay in the cache anyway. */
    size_t out_es = (a->keys_out != NULL ? a->key_size : 0) + a->value_size +
                    (a->indices_out != NULL ? sizeof(uint64_t) : 0);
    j->stream =
        out_es > 0 && a->n >= parsum__cpu_stream_threshold() / out_es;
    /* partition_unstable reverses its rejected elements in the staging
     * area, streamed or not */
    j->chained = j->groups == 1 || a->reverse_rest;
    j->stage_bytes = j->stream || a->reverse_rest
                         ? PARSUM__ROUND64(j->chunk * a->key_size) +
                               PARSUM__ROUND64(j->chunk * a->value_size) +
                               j->chunk * sizeof(uint64_t)
                         : 0;
    /* The fused select, for any thread count (16-core Xeon, 2^28 u32 at
     * 50 %, % of copy fused / two-step: 4 threads 72-75 / 57-60, 8
     * threads 63-72 / 67-69, 16 threads 69-77 / 71-72; bench/RESULTS.md;
     * with chunks claimed a chunk ahead it had stopped scaling at 8). */
    if (j->stream && j->groups == 1 &&
        a->sel->kind == PARSUM_SELECT_PREDICATE &&
        a->values_out == NULL && a->indices_out == NULL)
        j->fused = j->k->pred_select[a->sel->dtype];
    if (a->reverse_rest && a->sel->kind == PARSUM_SELECT_PREDICATE &&
        a->keys_out != NULL && a->values_out == NULL)
        j->fused_part = j->k->pred_partition[a->sel->dtype];
    j->stage_bytes = PARSUM__ROUND64(j->stage_bytes);
    /* the fused select alternates two staging buffers; the fused
     * partition stages its two groups in two */
    j->tmp_bytes = PARSUM__ROUND64((size_t)j->groups * j->words * 8) +
                   (j->fused != NULL || j->fused_part != NULL ? 2 : 1) *
                       j->stage_bytes;
    size_t per_chunk = j->chained ? SLOT_BYTES : MAX_GROUPS * sizeof(size_t);
    size_t meta, tmp_bytes;
    if (!parsum__mul_size(j->nchunks, per_chunk, &meta) ||
        !parsum__mul_size((size_t)*nt, j->tmp_bytes, &tmp_bytes))
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
    if (j.chained) {
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
