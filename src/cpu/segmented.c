#define _POSIX_C_SOURCE 200809L
/*
 * segmented.c - segmented scan (packed flags or offsets) and scan by key
 * on the CPU.
 *
 * The same one-pass chained scan as scan.c, over the same fixed chunks
 * claimed in order, with segments. What a chunk passes on is the prefix
 * of the segment still open at its end: for a chunk with a head, the fold
 * of its elements from its last head on, which needs nothing from earlier
 * chunks, so the chunk publishes it at once and the chain never waits on
 * such chunks; for a chunk without a head, the previous prefix combined
 * with the chunk's fold, exactly as in the plain scan. The carry from the
 * previous chunk flows only into the elements before the chunk's first
 * head. Per chunk:
 *   1. the chunk's heads in scan order into a per-thread bit buffer
 *      (seg_bits.c: from flags, offsets or keys);
 *   2. with heads: fold the tail from the last head, publish; without:
 *      fold the chunk, wait for the previous prefix, publish the sum;
 *   3. scan the chunk: the plain scan_chunk kernel when it has no head,
 *      else the segmented kernel (kernels_seg.inc), with the carry only if
 *      its first element is no head (waiting for it then).
 * Everything a chunk computes depends on the chunk grid and the data only,
 * so results are bit-identical for any thread count, floats included. An
 * inclusive scan writes the published prefix as the chunk's last element,
 * so that an exclusive scan is the inclusive one shifted, bit for bit.
 */
#include "../core/scalar_ops.h"
#include "cpu.h"
#include "sched.h"
#include "seg_common.h"

typedef struct seg_job {
    const unsigned char *in;
    unsigned char *out;
    size_t n, esize, chunk, nchunks;
    int reverse, exclusive, stream;
    parsum_dtype dtype; /* built-in path */
    parsum_op op;
    parsum__reduce_run_fn reduce_run;
    parsum__scan_chunk_fn scan_chunk;
    parsum__seg_scan_fn seg_scan;
    const parsum_custom_op *cop; /* custom path when not NULL */
    parsum__heads heads;
    unsigned char *slots; /* per chunk: flag, then P(c) at byte 64 */
    size_t slot_bytes;
    /* per thread: head bits, byte scratch (offsets), agg, custom scratch */
    unsigned char *tmp;
    size_t tmp_bytes, bits_bytes, mark_bytes;
    atomic_size_t next;
} seg_job;

static unsigned char *slot_value(const seg_job *j, size_t c)
{
    return j->slots + c * j->slot_bytes + 64;
}

static void chunk_range(const seg_job *j, size_t c, size_t *off, size_t *len)
{
    size_t b = c * j->chunk;
    size_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
    *len = e - b;
    *off = j->reverse ? j->n - e : b;
}

static void combine(const seg_job *j, const void *a, const void *b, void *out)
{
    if (j->cop != NULL)
        j->cop->combine(a, b, out, j->cop->user);
    else
        parsum__combine_scalar(j->dtype, j->op, a, b, out);
}

/* Fold of len elements at p (memory), in scan order for custom operators
 * (built-in ones commute, so the lane kernel's memory order is fine). */
static void fold(const seg_job *j, const unsigned char *p, size_t len,
                 void *res)
{
    if (j->cop == NULL) {
        j->reduce_run(p, len, res);
        return;
    }
    size_t s = j->esize;
    memcpy(res, p + (j->reverse ? len - 1 : 0) * s, s);
    for (size_t k = 1; k < len; k++) {
        size_t m = j->reverse ? len - 1 - k : k;
        j->cop->combine(res, p + m * s, res, j->cop->user);
    }
}

/* Custom operators: the segmented scan as a plain loop in scan order.
 * sbits NULL: no head in the chunk. */
static void custom_seg_scan(const seg_job *j, const unsigned char *in,
                            unsigned char *out, size_t len,
                            const uint64_t *sbits, const void *carry,
                            const void *last, unsigned char *acc)
{
    size_t s = j->esize;
    unsigned char *x = acc + PARSUM__ROUND64(s);
    for (size_t k = 0; k < len; k++) {
        size_t m = j->reverse ? len - 1 - k : k;
        int head = sbits != NULL && (sbits[k / 64] >> (k % 64) & 1) != 0;
        memcpy(x, in + m * s, s);
        if (head || (k == 0 && carry == NULL)) {
            memcpy(out + m * s, j->exclusive ? j->cop->identity : x, s);
            memcpy(acc, x, s);
        } else {
            if (k == 0)
                memcpy(acc, carry, s);
            if (j->exclusive)
                memcpy(out + m * s, acc, s);
            j->cop->combine(acc, x, acc, j->cop->user);
            if (!j->exclusive)
                memcpy(out + m * s, acc, s);
        }
        if (!j->exclusive && k + 1 == len)
            memcpy(out + m * s, last, s);
    }
}

/* Steps 2 and 3 of the file comment for chunk c; `next` is the chunk this
 * thread takes after it (prefetched while c is scanned; nchunks: none).
 * Returns whether the chunk holds a head. */
static int seg_chunk(seg_job *j, size_t c, size_t next, unsigned char *tmp)
{
    size_t s = j->esize, off, len, first = 0, lasth = 0;
    chunk_range(j, c, &off, &len);
    uint64_t *sbits = (uint64_t *)(void *)tmp;
    unsigned char *mark = tmp + j->bits_bytes;
    unsigned char *agg = mark + j->mark_bytes;
    unsigned char *work = agg + PARSUM__ROUND64(s);
    const unsigned char *in = j->in + off * s;
    unsigned char *out = j->out + off * s;
    parsum__heads_chunk(&j->heads, off, len, j->reverse, sbits,
                        j->mark_bytes != 0 ? mark : NULL);
    int has = parsum__find_heads(sbits, len, &first, &lasth);
    const void *carry = NULL;
    if (has) {
        /* scan positions [lasth, len) */
        fold(j, j->reverse ? in : in + lasth * s, len - lasth,
             slot_value(j, c));
        parsum__slot_publish(j->slots, j->slot_bytes, c);
        if (first > 0) {
            parsum__slot_wait(j->slots, j->slot_bytes, c - 1);
            carry = slot_value(j, c - 1);
        }
    } else { /* c > 0: the first element of the whole scan is a head */
        fold(j, in, len, agg);
        parsum__slot_wait(j->slots, j->slot_bytes, c - 1);
        carry = slot_value(j, c - 1);
        combine(j, carry, agg, slot_value(j, c));
        parsum__slot_publish(j->slots, j->slot_bytes, c);
    }
    const unsigned char *pf = NULL;
    size_t pf_bytes = 0;
    if (next < j->nchunks) {
        size_t poff, plen;
        chunk_range(j, next, &poff, &plen);
        pf = j->in + poff * s;
        pf_bytes = plen * s;
    }
    if (j->cop != NULL)
        custom_seg_scan(j, in, out, len, has ? sbits : NULL, carry,
                        slot_value(j, c), work);
    else if (has)
        j->seg_scan(in, out, len, sbits, j->reverse, j->exclusive, carry,
                    slot_value(j, c), j->stream, pf, pf_bytes);
    else
        j->scan_chunk(in, out, len, j->reverse, j->exclusive, carry,
                      slot_value(j, c), j->stream, pf, pf_bytes);
    return has;
}

static void seg_worker(void *arg, int tid, int nt)
{
    seg_job *j = arg;
    unsigned char *tmp = j->tmp + (size_t)tid * j->tmp_bytes;
    /* Claim order and deadlock freedom: as in scan.c. A chunk with a head
     * publishes its prefix before it waits for anything, so claiming one
     * ahead (to prefetch it) costs the chain nothing there, and it was
     * faster on 16 cores too (2^28 i32, runs of 1-8, 16 threads: 22.3-22.9
     * ms claimed at start against 17.5-18.1 ms; bench/RESULTS.md). Chunks
     * without a head chain like the plain scan's, whose many threads claim
     * when they start (parsum__claim_ahead): after a chunk without a head
     * the next is claimed the same way. 16 threads, 2^28 i32, three rounds
     * against always one ahead: one segment 0.85-0.90 -> 0.93-0.94 of the
     * plain scan's speed, power law 1.01 -> 0.89-0.92, the others alike,
     * the worst case 0.85 -> 0.89 (issue 4 asks 0.85 for every one). The
     * claim order never changes a result. */
    int ahead = 1;
    size_t c = parsum__claim(&j->next);
    while (c < j->nchunks) {
        size_t next = parsum__claim_next(&j->next, j->nchunks, ahead);
        int has = seg_chunk(j, c, next, tmp);
        c = parsum__claim_after(&j->next, next, ahead);
        ahead = has || parsum__claim_ahead(nt);
    }
}

static parsum_status run_seg_scan(parsum_context *ctx, seg_job *j,
                                  const char *fn)
{
    j->chunk = parsum__cpu_chunk_elems(j->esize);
    j->nchunks = (j->n + j->chunk - 1) / j->chunk;
    int nt = parsum__seg_workers(ctx, j->nchunks);
    j->slot_bytes = 64 + PARSUM__ROUND64(j->esize);
    j->bits_bytes = PARSUM__ROUND64((j->chunk / 64 + 1) * sizeof(uint64_t));
    j->mark_bytes = j->heads.kind == PARSUM__HEADS_OFFSETS
                        ? PARSUM__ROUND64(j->chunk) + 64
                        : 0;
    j->tmp_bytes =
        j->bits_bytes + j->mark_bytes + 3 * PARSUM__ROUND64(j->esize);
    size_t slots_bytes, tmp_total;
    if (!parsum__mul_size(j->nchunks, j->slot_bytes, &slots_bytes) ||
        !parsum__mul_size((size_t)nt, j->tmp_bytes, &tmp_total))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    unsigned char *scratch = parsum__scratch(ctx, slots_bytes + tmp_total, fn);
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j->slots = scratch;
    j->tmp = scratch + slots_bytes;
    for (size_t c = 0; c < j->nchunks; c++)
        atomic_init(parsum__slot_flag(j->slots, j->slot_bytes, c), 0);
    atomic_init(&j->next, 0);
    parsum__sched_spmd(nt, seg_worker, j);
    return PARSUM_OK;
}

/* The job fields shared by both entry points. */
static void init_job(seg_job *j, const void *in, void *out, size_t n,
                     parsum_dtype dtype, parsum_op op,
                     const parsum_custom_op *custom, unsigned flags)
{
    memset(j, 0, sizeof *j);
    j->in = in;
    j->out = out;
    j->n = n;
    j->reverse = (flags & PARSUM_REVERSE) != 0;
    j->exclusive = (flags & PARSUM_EXCLUSIVE) != 0;
    if (custom != NULL) {
        j->cop = custom;
        j->esize = custom->elem_size;
        return;
    }
    const parsum__cpu_kernels *k = parsum__cpu_kernels_get();
    j->esize = parsum_dtype_size(dtype);
    j->dtype = dtype;
    j->op = op;
    j->reduce_run = k->reduce_run[dtype][op];
    j->scan_chunk = k->scan_chunk[dtype][op];
    j->seg_scan = k->seg_scan_chunk[dtype][op];
    /* As in scan.c: stream large out-of-place outputs past the caches. */
    j->stream = in != out && n * j->esize >= parsum__cpu_stream_threshold();
}

parsum_status parsum__cpu_seg_scan(parsum_context *ctx, const void *in,
                                   void *out, size_t n, parsum_dtype dtype,
                                   parsum_op op,
                                   const parsum_custom_op *custom,
                                   const parsum_segments *seg, unsigned flags)
{
    seg_job j;
    init_job(&j, in, out, n, dtype, op, custom, flags);
    parsum__heads_init_segments(&j.heads, seg, n);
    return run_seg_scan(ctx, &j,
                        custom != NULL ? "parsum_segmented_scan_custom"
                                       : "parsum_segmented_scan");
}

parsum_status parsum__cpu_scan_by_key(parsum_context *ctx, const void *keys,
                                      parsum_dtype key_dtype, const void *in,
                                      void *out, size_t n, parsum_dtype dtype,
                                      parsum_op op, unsigned flags)
{
    seg_job j;
    init_job(&j, in, out, n, dtype, op, NULL, flags);
    parsum__heads_init_keys(&j.heads, keys, key_dtype, n);
    return run_seg_scan(ctx, &j, "parsum_scan_by_key");
}
