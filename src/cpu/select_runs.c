#define _POSIX_C_SOURCE 200809L
/*
 * select_runs.c - unique, unique by key and the two run-length encodings
 * on the CPU: all of them are a selection of the heads of runs of equal
 * consecutive keys (a key that differs, bit for bit, from the one before
 * it), so they share the chained one-pass scheme of select.c.
 *
 * Per chunk (the fixed grid of cpu.h, a multiple of 64 elements):
 *  1. head bits of the chunk's positions and of the position after it,
 *     from a comparison of every key with its predecessor (the key_diff
 *     kernels for 1, 2, 4 and 8 bytes; a comparison per key otherwise);
 *  2. the runs this call outputs: every head, or (non-trivial runs) the
 *     heads not followed by another head;
 *  3. the chain of run counts (select.c) gives the first output index;
 *  4. keys and values by compress; offsets are the heads' positions (the
 *     index compress); a length is the distance to the next head.
 * The next head of a chunk's last run may lie chunks away. Its length is
 * left open, with the run's index and position in the chunk's slot, and a
 * short serial pass afterwards closes it at the first head of a later
 * chunk (or at n).
 */
#include "../core/internal.h"
#include "cpu.h"
#include "sched.h"
#include "seg_common.h"

#include <string.h>

typedef struct runs_job {
    const parsum__runs_args *a;
    const parsum__cpu_select_kernels *k;
    parsum__key_diff_fn diff; /* NULL: keys of another size */
    const unsigned char *keys;
    size_t ks, n, chunk, nchunks, words;
    /* per chunk: flag, then (byte 8) runs up to its end, its first head
     * (SIZE_MAX: none) and its open run's index and position (index
     * SIZE_MAX: none) */
    unsigned char *slots;
    /* per thread: head bits and output bits, `words` words each, then
     * (stream) staging for a chunk's outputs, tmp_bytes in all */
    unsigned char *tmp;
    size_t tmp_bytes;
    int stream;
    atomic_size_t next;
} runs_job;

#define SLOT_BYTES 64
#define NONE SIZE_MAX

typedef struct runs_slot {
    size_t count, first, open_index, open_pos;
} runs_slot;

static runs_slot *slot_of(const runs_job *j, size_t c)
{
    return (runs_slot *)(void *)(j->slots + c * SLOT_BYTES + 8);
}

/* bits[i / 64] bit i % 64 = (a[i] != b[i]) for keys of any size. */
static void diff_any(const runs_job *j, const unsigned char *a,
                     const unsigned char *b, size_t count, uint64_t *bits)
{
    size_t ks = j->ks;
    for (size_t w = 0; w < (count + 63) / 64; w++) {
        size_t e = count - 64 * w < 64 ? count - 64 * w : 64;
        uint64_t r = 0;
        const unsigned char *x = a + 64 * w * ks, *y = b + 64 * w * ks;
        if (ks == 16) {
            for (size_t q = 0; q < e; q++) {
                uint64_t p[4];
                memcpy(p, x + 16 * q, 16);
                memcpy(p + 2, y + 16 * q, 16);
                r |= (uint64_t)(((p[0] ^ p[2]) | (p[1] ^ p[3])) != 0) << q;
            }
        } else {
            for (size_t q = 0; q < e; q++)
                r |= (uint64_t)(memcmp(x + q * ks, y + q * ks, ks) != 0)
                     << q;
        }
        bits[w] = r;
    }
}

static void shift_up1(uint64_t *w, size_t nw)
{
    for (size_t i = nw; i-- > 0;)
        w[i] = w[i] << 1 | (i > 0 ? w[i - 1] >> 63 : 0);
}

/* bits of the positions [lo, lo + count) (count >= 1, lo + count <= n +
 * 1): set where a run starts; position 0 and position n (one past the
 * last key, so that the last run ends) always do. */
static void run_heads(const runs_job *j, size_t lo, size_t count,
                      uint64_t *bits)
{
    size_t nw = (count + 63) / 64;
    size_t inner = lo + count > j->n ? count - 1 : count; /* below n */
    size_t skip = lo == 0; /* keys[-1] does not exist */
    memset(bits, 0, nw * sizeof *bits);
    if (inner > skip) {
        const unsigned char *k = j->keys + (lo + skip) * j->ks;
        if (j->diff != NULL)
            j->diff(k, k - j->ks, inner - skip, bits);
        else
            diff_any(j, k, k - j->ks, inner - skip, bits);
        if (skip)
            shift_up1(bits, nw);
    }
    if (lo == 0)
        bits[0] |= 1;
    if (inner < count)
        bits[inner / 64] |= (uint64_t)1 << (inner % 64);
}

/* Non-trivial runs: heads whose next position is no head. heads holds
 * len + 1 positions. */
static void nontrivial_bits(const uint64_t *heads, size_t len, uint64_t *out)
{
    size_t nw = (len + 63) / 64, hw = (len + 64) / 64;
    for (size_t w = 0; w < nw; w++)
        out[w] = heads[w] &
                 ~(heads[w] >> 1 | (w + 1 < hw ? heads[w + 1] << 63 : 0));
    if (len % 64 != 0)
        out[nw - 1] &= ((uint64_t)1 << (len % 64)) - 1;
}

/* Set bits among the first len of bits (others may be set). */
static size_t count_bits(const uint64_t *bits, size_t len)
{
    size_t c = 0;
    for (size_t w = 0; w < len / 64; w++)
        c += parsum__popcount64(bits[w]);
    if (len % 64 != 0)
        c += parsum__popcount64(bits[len / 64] &
                                (((uint64_t)1 << (len % 64)) - 1));
    return c;
}

/* The first set bit among the first len, or NONE. */
static size_t first_bit(const uint64_t *bits, size_t len)
{
    for (size_t w = 0; w < (len + 63) / 64; w++)
        if (bits[w] != 0) {
            size_t q = 64 * w + (size_t)__builtin_ctzll(bits[w]);
            return q < len ? q : NONE;
        }
    return NONE;
}

/* lengths[r] for the runs [r0, r0 + m) whose heads are at the positions
 * already stored there: the distance to the next one, for the last to
 * `end` (or left open, the position kept, when end is NONE). */
static void lengths_from_heads(uint64_t *p, size_t m, size_t end)
{
    for (size_t r = 0; r + 1 < m; r++)
        p[r] = p[r + 1] - p[r];
    if (end != NONE)
        p[m - 1] = (uint64_t)end - p[m - 1];
}

/* Non-trivial runs: lengths[0 ..) of the chunk's runs, by walking all
 * heads (a run ends where the next head, output or not, starts). Returns
 * the open run's position, or NONE. */
static size_t nontrivial_lengths(const uint64_t *heads, const uint64_t *out,
                                 size_t cb, size_t len, uint64_t *lengths)
{
    size_t r = 0, prev = NONE;
    int prev_out = 0;
    for (size_t w = 0; w < len / 64 + 1; w++) {
        for (uint64_t b = heads[w]; b != 0; b &= b - 1) {
            size_t q = 64 * w + (size_t)__builtin_ctzll(b);
            if (q > len)
                break;
            if (prev_out)
                lengths[r++] = (uint64_t)(q - prev);
            prev = q;
            prev_out = q < len && (out[w] >> (q % 64) & 1) != 0;
        }
    }
    return prev_out ? cb + prev : NONE;
}

/* Where a chunk's runs go, from its first run on: keys, values, lengths,
 * offsets (NULL: not wanted). */
typedef struct runs_out {
    unsigned char *k, *v;
    uint64_t *len, *off;
} runs_out;

/* The outputs from run r0 on. */
static runs_out runs_at(const runs_job *j, size_t r0)
{
    const parsum__runs_args *a = j->a;
    runs_out o = {NULL, NULL, NULL, NULL};
    if (a->keys_out != NULL)
        o.k = (unsigned char *)a->keys_out + r0 * j->ks;
    if (a->values_out != NULL)
        o.v = (unsigned char *)a->values_out + r0 * a->value_size;
    if (a->lengths != NULL)
        o.len = a->lengths + r0;
    if (a->offsets != NULL)
        o.off = a->offsets + r0;
    return o;
}

/* A thread's staging area, laid out like the outputs. */
static runs_out runs_staging(const runs_job *j, unsigned char *stage)
{
    const parsum__runs_args *a = j->a;
    runs_out o = runs_at(j, 0);
    size_t at = 0;
    o.k = o.k != NULL ? stage : NULL;
    at += PARSUM__ROUND64(j->chunk * j->ks);
    o.v = o.v != NULL ? stage + at : NULL;
    at += PARSUM__ROUND64(j->chunk * a->value_size);
    o.len = o.len != NULL ? (uint64_t *)(void *)(stage + at) : NULL;
    at += j->chunk * sizeof(uint64_t);
    o.off = o.off != NULL ? (uint64_t *)(void *)(stage + at) : NULL;
    return o;
}

/* The chunk's cnt runs to d (out: their heads); returns the position of
 * its last run if that one goes on past the chunk (its length is then
 * left open), else NONE. */
static size_t emit_runs(const runs_job *j, const uint64_t *heads,
                        const uint64_t *out, size_t cb, size_t len,
                        size_t cnt, runs_out d)
{
    const parsum__runs_args *a = j->a;
    if (d.k != NULL)
        parsum__compress_any(j->k, j->keys + cb * j->ks, out, len, d.k,
                             j->ks);
    if (d.v != NULL)
        parsum__compress_any(
            j->k, (const unsigned char *)a->values + cb * a->value_size, out,
            len, d.v, a->value_size);
    if (cnt == 0)
        return NONE;
    if (a->nontrivial) {
        j->k->compress_index(out, len, cb, d.off);
        return nontrivial_lengths(heads, out, cb, len, d.len);
    }
    if (d.len == NULL)
        return NONE;
    int closed = (heads[len / 64] >> (len % 64) & 1) != 0;
    j->k->compress_index(out, len, cb, d.len);
    size_t open_pos = closed ? NONE : (size_t)d.len[cnt - 1];
    lengths_from_heads(d.len, cnt, closed ? cb + len : NONE);
    return open_pos;
}

static void runs_chunk(runs_job *j, size_t c, uint64_t *heads,
                       uint64_t *outb, unsigned char *stage)
{
    const parsum__runs_args *a = j->a;
    size_t cb = c * j->chunk;
    size_t len = j->n - cb < j->chunk ? j->n - cb : j->chunk;
    run_heads(j, cb, len + 1, heads); /* bit len: the position after */
    const uint64_t *out = heads;
    if (a->nontrivial) {
        nontrivial_bits(heads, len, outb);
        out = outb;
    }
    size_t cnt = count_bits(out, len), first = first_bit(heads, len), r0 = 0;
    runs_slot *s = slot_of(j, c);
    if (c > 0) {
        parsum__slot_wait(j->slots, SLOT_BYTES, c - 1);
        r0 = slot_of(j, c - 1)->count;
    }
    s->count = r0 + cnt;
    parsum__slot_publish(j->slots, SLOT_BYTES, c);
    s->first = first != NONE ? cb + first : NONE;
    runs_out o = runs_at(j, r0);
    runs_out d = j->stream ? runs_staging(j, stage) : o;
    size_t open_pos = emit_runs(j, heads, out, cb, len, cnt, d);
    s->open_index = open_pos != NONE ? r0 + cnt - 1 : NONE;
    s->open_pos = open_pos;
    if (!j->stream || cnt == 0)
        return;
    /* out past the caches (the open length is fixed later, after a
     * fence) */
    if (o.k != NULL)
        j->k->stream_copy(o.k, d.k, cnt * j->ks);
    if (o.v != NULL)
        j->k->stream_copy(o.v, d.v, cnt * a->value_size);
    if (o.len != NULL)
        j->k->stream_copy(o.len, d.len, cnt * sizeof(uint64_t));
    if (o.off != NULL)
        j->k->stream_copy(o.off, d.off, cnt * sizeof(uint64_t));
}

static void runs_worker(void *arg, int tid, int nt)
{
    runs_job *j = arg;
    (void)nt;
    unsigned char *t = j->tmp + (size_t)tid * j->tmp_bytes;
    uint64_t *heads = (uint64_t *)(void *)t;
    uint64_t *outb = heads + j->words;
    unsigned char *stage = t + PARSUM__ROUND64(2 * j->words * 8);
    for (size_t c = atomic_fetch_add_explicit(&j->next, 1,
                                              memory_order_relaxed);
         c < j->nchunks;
         c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed))
        runs_chunk(j, c, heads, outb, stage);
    /* The streamed stores, visible before the open lengths are closed
     * and the call returns. */
    atomic_thread_fence(memory_order_seq_cst);
}

/* The runs left open: each ends at the first head of a later chunk, the
 * last one at n. */
static void close_runs(const runs_job *j)
{
    size_t open_index = NONE, open_pos = 0;
    for (size_t c = 0; c < j->nchunks; c++) {
        const runs_slot *s = slot_of(j, c);
        if (open_index != NONE && s->first != NONE) {
            j->a->lengths[open_index] = (uint64_t)(s->first - open_pos);
            open_index = NONE;
        }
        if (s->open_index != NONE) {
            open_index = s->open_index;
            open_pos = s->open_pos;
        }
    }
    if (open_index != NONE)
        j->a->lengths[open_index] = (uint64_t)(j->n - open_pos);
}

/* The public function that made the call, for messages. */
static const char *runs_fn(const parsum__runs_args *a)
{
    if (a->nontrivial)
        return "parsum_run_length_nontrivial";
    if (a->lengths != NULL)
        return "parsum_run_length_encode";
    return a->values != NULL ? "parsum_unique_by_key" : "parsum_unique";
}

parsum_status parsum__cpu_runs(parsum_context *ctx,
                               const parsum__runs_args *a)
{
    const char *fn = runs_fn(a);
    if (a->n == 0) {
        *a->num_runs = 0;
        return PARSUM_OK;
    }
    runs_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.k = parsum__cpu_kernels_get()->sel;
    j.keys = a->keys;
    j.ks = a->key_size;
    j.n = a->n;
    if (j.ks == 1 || j.ks == 2 || j.ks == 4 || j.ks == 8)
        j.diff = parsum__cpu_kernels_get()->key_diff[parsum__log2_size(j.ks)];
    size_t touched = j.ks + a->value_size + (a->keys_out != NULL ? j.ks : 0) +
                     (a->lengths != NULL ? 8 : 0);
    j.chunk = parsum__select_chunk(touched);
    j.nchunks = (j.n + j.chunk - 1) / j.chunk;
    j.words = j.chunk / 64 + 1; /* the position after the chunk too */
    int nt = parsum__seg_workers(ctx, j.nchunks);
    /* Stream when the outputs cannot stay in the cache anyway. */
    size_t out_es = (a->keys_out != NULL ? j.ks : 0) + a->value_size +
                    (a->lengths != NULL ? 8 : 0) + (a->offsets != NULL ? 8 : 0);
    j.stream = out_es > 0 && j.n >= parsum__cpu_stream_threshold() / out_es;
    j.tmp_bytes = PARSUM__ROUND64(2 * j.words * 8);
    if (j.stream)
        j.tmp_bytes += PARSUM__ROUND64(j.chunk * j.ks) +
                       PARSUM__ROUND64(j.chunk * a->value_size) +
                       2 * j.chunk * sizeof(uint64_t);
    size_t slots_bytes, tmp_bytes;
    if (!parsum__mul_size(j.nchunks, SLOT_BYTES, &slots_bytes) ||
        !parsum__mul_size((size_t)nt, j.tmp_bytes, &tmp_bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    unsigned char *scratch = parsum__scratch(ctx, slots_bytes + tmp_bytes, fn);
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j.slots = scratch;
    j.tmp = scratch + slots_bytes;
    for (size_t c = 0; c < j.nchunks; c++)
        atomic_init(parsum__slot_flag(j.slots, SLOT_BYTES, c), 0);
    atomic_init(&j.next, 0);
    parsum__sched_spmd(nt, runs_worker, &j);
    if (a->lengths != NULL)
        close_runs(&j);
    *a->num_runs = slot_of(&j, j.nchunks - 1)->count;
    return PARSUM_OK;
}
