#define _POSIX_C_SOURCE 200809L
/*
 * scan.c - reduce and scan on the CPU.
 *
 * Reduce: the input is cut into fixed-size chunks (cpu.h); threads reduce
 * chunks independently into an array, which is then folded in chunk order.
 *
 * Scan: one pass over memory, as a chained scan over cache-sized chunks.
 * Threads claim chunks in scan order from a shared counter. For each chunk
 * a thread (1) reads the chunk once from memory, computing its aggregate,
 * (2) waits until the previous chunk has published its inclusive prefix
 * P(c-1) and publishes P(c) = P(c-1) (+) agg(c) at once, so the next
 * thread waits as little as possible, and (3) scans the chunk, now in its
 * L2 cache, from the carry P(c-1), writing P(c) as its last inclusive
 * element. Each element is read from memory once and written once, the
 * floor for a scan (ParlayLib's reduce-then-scan reads twice). P(c) is
 * always combined in the same order whatever the timing, so results are
 * identical for any thread count, floats included: the chained form of
 * the decoupled look-back of Merrill & Garland (2016), which on a CPU
 * loses nothing because the chain's latency per chunk (a cache line
 * passed between cores) is small next to the time a chunk takes.
 */
#include "../core/internal.h"
#include "../core/scalar_ops.h"
#include "cpu.h"
#include "sched.h"
#include "seg_common.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


size_t parsum__cpu_stream_threshold(void)
{
    /* Benign race: every thread computes the same value. */
    static volatile size_t cached;
    static volatile int known;
    if (!known) {
        const char *env = getenv("PARSUM_CPU_STREAM_BYTES");
        long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
        l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        /* In and out together past half the cache: it will not hold them. */
        size_t t = l3 > 0 ? (size_t)l3 / 4 : (size_t)8 << 20;
        if (env != NULL && *env != '\0') /* tests force the streamed paths */
            t = (size_t)strtoull(env, NULL, 0);
        cached = t;
        known = 1;
    }
    return cached;
}

size_t parsum__cpu_chunk_elems(size_t elem_size)
{
    size_t c = PARSUM__CPU_CHUNK_BYTES / elem_size;
    return c > 0 ? c : 1;
}

/* Threads for a job of nchunks chunks: one per 4 chunks at most, so that
 * inputs below half a megabyte run on the calling thread (a parallel
 * region costs more than it saves there, and far more on a busy machine).
 * The result does not depend on it. */
static int worker_count(const parsum_context *ctx, size_t nchunks)
{
    size_t most = nchunks / 4 > 0 ? nchunks / 4 : 1;
    return (size_t)ctx->threads < most ? ctx->threads : (int)most;
}

/* ---- the chained-scan driver --------------------------------------------- */

typedef struct scan_job {
    const unsigned char *in;
    unsigned char *out;
    size_t n, esize, chunk, nchunks;
    int reverse, exclusive, stream;
    parsum_dtype dtype; /* built-in path */
    parsum_op op;
    parsum__reduce_run_fn reduce_run;
    parsum__scan_chunk_fn scan_chunk;
    const parsum_custom_op *cop; /* custom path when not NULL */
    unsigned char *slots;        /* per chunk: flag, then P(c) */
    size_t slot_bytes;
    unsigned char *tmp; /* per thread: agg + custom-op scratch */
    size_t tmp_bytes;
    atomic_size_t next; /* next chunk to claim */
} scan_job;

static unsigned char *slot_value(const scan_job *j, size_t c)
{
    return j->slots + c * j->slot_bytes + 64;
}

/* Memory range of chunk c (in scan order): [*off, *off + *len). */
static void chunk_range(const scan_job *j, size_t c, size_t *off, size_t *len)
{
    size_t b = c * j->chunk;
    size_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
    *len = e - b;
    *off = j->reverse ? j->n - e : b;
}

static void combine(const scan_job *j, const void *a, const void *b, void *out)
{
    if (j->cop != NULL)
        j->cop->combine(a, b, out, j->cop->user);
    else
        parsum__combine_scalar(j->dtype, j->op, a, b, out);
}

/* Custom operators: plain loops over a chunk in scan order. */
static void custom_chunk_agg(const scan_job *j, const unsigned char *p,
                             size_t len, void *agg)
{
    size_t s = j->esize;
    memcpy(agg, p + (j->reverse ? len - 1 : 0) * s, s);
    for (size_t k = 1; k < len; k++) {
        size_t m = j->reverse ? len - 1 - k : k;
        j->cop->combine(agg, p + m * s, agg, j->cop->user);
    }
}

/* out = carry (+) in[0] (+) ... in scan order; the last inclusive output
 * is the published prefix (see scan_op in kernels_type.inc). */
static void custom_chunk_scan(const scan_job *j, const unsigned char *in,
                              unsigned char *out, size_t len,
                              const void *carry, const void *last,
                              unsigned char *acc)
{
    size_t s = j->esize;
    unsigned char *x = acc + PARSUM__ROUND64(s);
    for (size_t k = 0; k < len; k++) {
        size_t m = j->reverse ? len - 1 - k : k;
        memcpy(x, in + m * s, s);
        if (k == 0 && carry == NULL) {
            memcpy(out + m * s, j->exclusive ? j->cop->identity : x, s);
            memcpy(acc, x, s);
            continue;
        }
        if (k == 0)
            memcpy(acc, carry, s);
        if (j->exclusive) {
            memcpy(out + m * s, acc, s);
            j->cop->combine(acc, x, acc, j->cop->user);
        } else {
            j->cop->combine(acc, x, acc, j->cop->user);
            memcpy(out + m * s, k + 1 == len ? last : acc, s);
        }
    }
}

static void scan_worker(void *arg, int tid, int nt)
{
    scan_job *j = arg;
    const int ahead = parsum__claim_ahead(nt);
    size_t s = j->esize;
    unsigned char *agg = j->tmp + (size_t)tid * j->tmp_bytes; /* 1 elem */
    unsigned char *work = agg + PARSUM__ROUND64(s); /* custom: 2 elements */
    /* Chunks in increasing order (seg_common.h), with few threads each
     * thread's next one claimed before it scans the current one, to
     * prefetch it (parsum__claim_ahead); a thread the OS preempts delays
     * the chain once, not in every round. */
    size_t c = parsum__claim(&j->next);
    while (c < j->nchunks) {
        size_t next = parsum__claim_next(&j->next, j->nchunks, ahead);
        size_t off, len;
        chunk_range(j, c, &off, &len);
        const unsigned char *in = j->in + off * s;
        unsigned char *out = j->out + off * s;

        /* (1) the one read of the chunk from memory: its aggregate */
        if (j->cop != NULL)
            custom_chunk_agg(j, in, len, agg);
        else /* built-in ops commute: memory order is fine */
            j->reduce_run(in, len, agg);

        /* (2) chain: P(c) = P(c-1) (+) agg(c), published before the scan */
        const void *carry = NULL;
        if (c > 0) {
            parsum__slot_wait(j->slots, j->slot_bytes, c - 1);
            carry = slot_value(j, c - 1);
            combine(j, carry, agg, slot_value(j, c));
        } else {
            memcpy(slot_value(j, c), agg, s);
        }
        parsum__slot_publish(j->slots, j->slot_bytes, c);

        /* (3) scan the chunk, now in L2, from the carry P(c-1), while the
         * next chunk is prefetched */
        const unsigned char *pf = NULL;
        size_t pf_bytes = 0;
        if (next < j->nchunks) {
            size_t poff, plen;
            chunk_range(j, next, &poff, &plen);
            pf = j->in + poff * s;
            pf_bytes = plen * s;
        }
        if (j->cop != NULL)
            custom_chunk_scan(j, in, out, len, carry, slot_value(j, c), work);
        else
            j->scan_chunk(in, out, len, j->reverse, j->exclusive, carry,
                          slot_value(j, c), j->stream, pf, pf_bytes);
        c = parsum__claim_after(&j->next, next, ahead);
    }
}

static parsum_status run_scan(parsum_context *ctx, scan_job *j,
                              const char *fn)
{
    j->chunk = parsum__cpu_chunk_elems(j->esize);
    j->nchunks = (j->n + j->chunk - 1) / j->chunk;
    int nt = worker_count(ctx, j->nchunks);
    j->slot_bytes = 64 + PARSUM__ROUND64(j->esize);
    j->tmp_bytes = 3 * PARSUM__ROUND64(j->esize) + 64;
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
    parsum__sched_spmd(nt, scan_worker, j);
    return PARSUM_OK;
}

parsum_status parsum__cpu_scan(parsum_context *ctx, const void *in, void *out,
                               size_t n, parsum_dtype dtype, parsum_op op,
                               unsigned flags)
{
    const parsum__cpu_kernels *k = parsum__cpu_kernels_get();
    scan_job j = {0};
    j.in = in;
    j.out = out;
    j.n = n;
    j.esize = parsum_dtype_size(dtype);
    j.reverse = (flags & PARSUM_REVERSE) != 0;
    j.exclusive = (flags & PARSUM_EXCLUSIVE) != 0;
    j.dtype = dtype;
    j.op = op;
    j.reduce_run = k->reduce_run[dtype][op];
    j.scan_chunk = k->scan_chunk[dtype][op];
    /* In place, the lines are already cached: ordinary stores are free. */
    j.stream = in != out && n * j.esize >= parsum__cpu_stream_threshold();
    return run_scan(ctx, &j, "parsum_scan");
}

parsum_status parsum__cpu_scan_custom(parsum_context *ctx, const void *in,
                                      void *out, size_t n,
                                      const parsum_custom_op *op,
                                      unsigned flags)
{
    scan_job j = {0};
    j.in = in;
    j.out = out;
    j.n = n;
    j.esize = op->elem_size;
    j.reverse = (flags & PARSUM_REVERSE) != 0;
    j.exclusive = (flags & PARSUM_EXCLUSIVE) != 0;
    j.cop = op;
    return run_scan(ctx, &j, "parsum_scan_custom");
}

/* ---- reduce ---------------------------------------------------------------- */

typedef struct reduce_job {
    const unsigned char *in;
    size_t n, esize, chunk;
    parsum__reduce_run_fn run;
    const parsum_custom_op *cop;
    unsigned char *partial; /* one element per chunk, `stride` apart */
    size_t stride;
} reduce_job;

static void reduce_chunk(void *arg, size_t c)
{
    const reduce_job *j = arg;
    size_t b = c * j->chunk;
    size_t len = b + j->chunk < j->n ? j->chunk : j->n - b;
    const unsigned char *p = j->in + b * j->esize;
    unsigned char *res = j->partial + c * j->stride;
    if (j->cop == NULL) {
        j->run(p, len, res);
        return;
    }
    memcpy(res, j->cop->identity, j->esize);
    for (size_t k = 0; k < len; k++)
        j->cop->combine(res, p + k * j->esize, res, j->cop->user);
}

static parsum_status run_reduce(parsum_context *ctx, reduce_job *j,
                                void *result, const char *fn,
                                parsum_dtype dtype, parsum_op op)
{
    j->chunk = parsum__cpu_chunk_elems(j->esize);
    size_t nchunks = (j->n + j->chunk - 1) / j->chunk;
    /* Built-in results are packed (the final fold is a vector kernel);
     * custom ones 64-byte aligned for the callback. */
    j->stride = j->cop == NULL ? j->esize : PARSUM__ROUND64(j->esize);
    if (nchunks == 0) {
        if (j->cop != NULL)
            memcpy(result, j->cop->identity, j->esize);
        else
            parsum_op_identity(dtype, op, result);
        return PARSUM_OK;
    }
    size_t bytes;
    if (!parsum__mul_size(nchunks, j->stride, &bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    j->partial = parsum__scratch(ctx, PARSUM__ROUND64(bytes) + PARSUM__ROUND64(j->esize), fn);
    if (j->partial == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    int nt = worker_count(ctx, nchunks);
    parsum__sched_parallel_for(nt, nchunks, reduce_chunk, j);
    /* Fold the chunk results, in a fixed order, into a 64-byte aligned
     * slot after them. Built-in ops: the lane-parallel kernel over the
     * dense partials (thousands of them for large n); custom: in order. */
    unsigned char *acc = j->partial + PARSUM__ROUND64(nchunks * j->stride);
    if (j->cop == NULL) {
        j->run(j->partial, nchunks, acc);
    } else {
        memcpy(acc, j->partial, j->esize);
        for (size_t c = 1; c < nchunks; c++)
            j->cop->combine(acc, j->partial + c * j->stride, acc,
                            j->cop->user);
    }
    memcpy(result, acc, j->esize);
    return PARSUM_OK;
}

parsum_status parsum__cpu_reduce(parsum_context *ctx, const void *in,
                                 size_t n, parsum_dtype dtype, parsum_op op,
                                 void *result)
{
    reduce_job j = {0};
    j.in = in;
    j.n = n;
    j.esize = parsum_dtype_size(dtype);
    j.run = parsum__cpu_kernels_get()->reduce_run[dtype][op];
    return run_reduce(ctx, &j, result, "parsum_reduce", dtype, op);
}

parsum_status parsum__cpu_reduce_custom(parsum_context *ctx, const void *in,
                                        size_t n, const parsum_custom_op *op,
                                        void *result)
{
    reduce_job j = {0};
    j.in = in;
    j.n = n;
    j.esize = op->elem_size;
    j.cop = op;
    return run_reduce(ctx, &j, result, "parsum_reduce_custom", PARSUM_I8,
                      PARSUM_SUM);
}
