#define _POSIX_C_SOURCE 200809L
/*
 * seg_reduce.c - segmented reduce over offsets and reduce by key on the
 * CPU.
 *
 * Both cut the elements, not the segments, into the fixed chunks of cpu.h,
 * so one huge segment and millions of tiny ones spread alike over the
 * threads. Within a chunk the runs (segments, or runs of equal keys) are
 * folded one of two ways, chosen from the chunk's run count (so from the
 * offsets or keys only, never from the thread count):
 *  - sparse chunks (runs of 64 elements or more on average): each run
 *    with the lane-parallel reduce_run kernel;
 *  - dense chunks: one segmented inclusive scan of the chunk into a
 *    per-thread buffer (the kernel of the segmented scan, kernels_seg.inc)
 *    and each run's fold read off at its last element, all at once by a
 *    vector compress of the scan with the runs' end bits. This costs a
 *    few vector operations per element whatever the run lengths, where a
 *    call or an unpredictable loop per run of 1-8 elements would cost tens
 *    of cycles per run.
 * Custom operators (segmented reduce only) take the sparse way, with a
 * plain loop per run.
 * A run that crosses chunk boundaries is folded per chunk and the pieces
 * are combined in chunk order: for the segmented reduce in a short serial
 * pass after the parallel one, for reduce by key through the chain of
 * scan.c (each chunk needs the number of runs before it anyway, to know
 * where its outputs go). Float results are thus deterministic: a fixed
 * order that depends on the offsets (keys) and n only.
 */
#include "../core/scalar_ops.h"
#include "cpu.h"
#include "sched.h"
#include "seg_common.h"

/* Fewer than this many elements per run on average: dense chunk. */
#define DENSE_RUN_LEN 64

/* ---- what both share --------------------------------------------------- */

typedef struct fold_ctx {
    size_t esize;
    parsum_dtype dtype;
    parsum_op op;
    parsum__reduce_run_fn reduce_run;
    parsum__seg_scan_fn seg_scan;
    parsum__compress_fn compress;
    const parsum_custom_op *cop;
    unsigned char identity[8]; /* built-in ops */
} fold_ctx;

static void fold_init(fold_ctx *f, parsum_dtype dtype, parsum_op op,
                      const parsum_custom_op *custom)
{
    memset(f, 0, sizeof *f);
    if (custom != NULL) {
        f->cop = custom;
        f->esize = custom->elem_size;
        return;
    }
    const parsum__cpu_kernels *k = parsum__cpu_kernels_get();
    f->esize = parsum_dtype_size(dtype);
    f->dtype = dtype;
    f->op = op;
    f->reduce_run = k->reduce_run[dtype][op];
    f->seg_scan = k->seg_scan_chunk[dtype][op];
    f->compress = k->sel->compress[parsum__log2_size(f->esize)];
    parsum_op_identity(dtype, op, f->identity);
}

static const void *identity_of(const fold_ctx *f)
{
    return f->cop != NULL ? f->cop->identity : (const void *)f->identity;
}

/* res = p[0] (+) ... (+) p[len-1], len >= 1; custom: in order. */
static void fold(const fold_ctx *f, const unsigned char *p, size_t len,
                 void *res)
{
    if (f->cop == NULL) {
        f->reduce_run(p, len, res);
        return;
    }
    memcpy(res, p, f->esize);
    for (size_t k = 1; k < len; k++)
        f->cop->combine(res, p + k * f->esize, res, f->cop->user);
}

static void combine(const fold_ctx *f, const void *a, const void *b,
                    void *out)
{
    if (f->cop != NULL)
        f->cop->combine(a, b, out, f->cop->user);
    else
        parsum__combine_scalar(f->dtype, f->op, a, b, out);
}

/* ends bit k = bits bit k + 1 over ceil(len / 64) words: "a run ends at k"
 * from "a run starts at k + 1". */
static void ends_of(const uint64_t *bits, size_t len, uint64_t *ends)
{
    size_t nw = (len + 63) / 64;
    for (size_t w = 0; w < nw; w++)
        ends[w] = bits[w] >> 1 | (w + 1 < nw ? bits[w + 1] << 63 : 0);
}

/* ---- segmented reduce ---------------------------------------------------- */

typedef struct sred_job {
    fold_ctx f;
    const unsigned char *in;
    unsigned char *out;
    const uint64_t *offsets;
    size_t nseg, n, chunk, nchunks;
    /* per chunk: the segment its first elements continue (SIZE_MAX:
     * none) and their fold, `stride` bytes apart */
    size_t *lead_seg;
    unsigned char *lead;
    size_t stride;
    /* per thread: start bits, end bits, byte scratch, a scanned chunk */
    unsigned char *tmp;
    size_t tmp_bytes, bits_bytes, mark_bytes;
} sred_job;

/* out[s] for s in [s0, s1 - 1) of a dense chunk with empty segments: the
 * scanned value at the segment's last element, or the identity. Branch
 * free per segment (a mispredicted branch would cost more than the rest),
 * with the element size fixed per loop. */
#define GATHER_LOOP(T)                                                      \
    do {                                                                    \
        T *out_ = (T *)(void *)j->out;                                      \
        const T *sc_ = (const T *)(const void *)sc;                         \
        T id_;                                                              \
        memcpy(&id_, f->identity, sizeof id_);                              \
        uint64_t prev = o[s0];                                              \
        for (size_t s = s0; s + 1 < s1; s++) {                              \
            uint64_t e = o[s + 1];                                          \
            T v = sc_[e > prev ? e - 1 - cb : 0];                           \
            out_[s] = e > prev ? v : id_;                                   \
            prev = e;                                                       \
        }                                                                   \
    } while (0)

/* Dense chunk [cb, cb + len): out[s] for the segments s0 .. s1-1 (s1 >
 * s0) that start in it, and the lead piece [cb, lead_end), from one
 * segmented scan into the thread's buffer; returns s1. Without empty
 * segments the starts are one bit each, and segment s's fold sits just
 * before the start of s + 1: one compress of the scan by the "ends" bits
 * writes them all. */
static size_t sred_dense(const sred_job *j, size_t cb, size_t len,
                         size_t s0, int last_chunk, size_t lead_end,
                         unsigned char *tmp)
{
    const fold_ctx *f = &j->f;
    size_t es = f->esize, ce = cb + len;
    uint64_t *bits = (uint64_t *)(void *)tmp;
    uint64_t *ends = (uint64_t *)(void *)(tmp + j->bits_bytes);
    unsigned char *mark = tmp + 2 * j->bits_bytes;
    unsigned char *sc = mark + j->mark_bytes;
    const uint64_t *o = j->offsets;
    size_t s1 = parsum__mark_offsets(o, j->nseg + 1, cb, ce, bits, mark, s0);
    if (last_chunk) /* with the empty segments at n */
        s1 = j->nseg;
    /* the thread's next chunk starts where this one ends: pull it toward
     * the cache meanwhile, as the segmented scan does */
    size_t pf_len = j->n - ce < j->chunk ? j->n - ce : j->chunk;
    f->seg_scan(j->in + cb * es, sc, len, bits, 0, 0, NULL, NULL, 0,
                j->in + ce * es, pf_len * es);
    if (lead_end > cb)
        memcpy(j->lead + (cb / j->chunk) * j->stride,
               sc + (lead_end - cb - 1) * es, es);
    if (parsum__count_heads(bits, len) == s1 - s0) {
        ends_of(bits, len, ends);
        if (lead_end > cb) /* the lead's end is not ours */
            ends[(lead_end - cb - 1) / 64] &=
                ~((uint64_t)1 << ((lead_end - cb - 1) % 64));
        f->compress(sc, ends, len, j->out + s0 * es);
    } else {
        switch (es) {
        case 1: GATHER_LOOP(uint8_t); break;
        case 2: GATHER_LOOP(uint16_t); break;
        case 4: GATHER_LOOP(uint32_t); break;
        default: GATHER_LOOP(uint64_t); break;
        }
    }
    /* the last one, which may go on past the chunk */
    size_t e = o[s1] < ce ? (size_t)o[s1] : ce;
    if (e > o[s1 - 1])
        memcpy(j->out + (s1 - 1) * es, sc + (e - 1 - cb) * es, es);
    else
        memcpy(j->out + (s1 - 1) * es, f->identity, es);
    return s1;
}
#undef GATHER_LOOP

/* Sparse chunk: one fold per piece; returns s1 as sred_dense. */
static size_t sred_sparse(const sred_job *j, size_t cb, size_t len,
                          size_t s0, int last_chunk, size_t lead_end)
{
    const fold_ctx *f = &j->f;
    size_t es = f->esize, ce = cb + len, s = s0;
    if (lead_end > cb)
        fold(f, j->in + cb * es, lead_end - cb,
             j->lead + (cb / j->chunk) * j->stride);
    for (; s < j->nseg && (last_chunk || j->offsets[s] < ce); s++) {
        size_t b = (size_t)j->offsets[s], e = (size_t)j->offsets[s + 1];
        e = e < ce ? e : ce;
        if (e > b)
            fold(f, j->in + b * es, e - b, j->out + s * es);
        else
            memcpy(j->out + s * es, identity_of(f), es);
    }
    return s;
}

/* Chunk c; *s0p is the first segment starting at or after the chunk's
 * first element, on return the next chunk's. */
static void sred_chunk(const sred_job *j, size_t c, size_t *s0p,
                       unsigned char *tmp)
{
    size_t cb = c * j->chunk, s0 = *s0p;
    size_t ce = cb + j->chunk < j->n ? cb + j->chunk : j->n;
    const uint64_t *o = j->offsets;
    int last_chunk = c + 1 == j->nchunks;
    /* Elements before the first start continue segment s0 - 1. */
    size_t lead_end = o[s0] < ce ? (size_t)o[s0] : ce;
    j->lead_seg[c] = lead_end > cb ? s0 - 1 : SIZE_MAX;
    /* Dense: more than one segment start per DENSE_RUN_LEN elements. */
    size_t probe = s0 + (ce - cb) / DENSE_RUN_LEN;
    if (j->f.cop == NULL && probe < j->nseg && o[probe] < ce)
        *s0p = sred_dense(j, cb, ce - cb, s0, last_chunk, lead_end, tmp);
    else
        *s0p = sred_sparse(j, cb, ce - cb, s0, last_chunk, lead_end);
}

static void sred_worker(void *arg, int tid, int nt)
{
    sred_job *j = arg;
    unsigned char *tmp = j->tmp + (size_t)tid * j->tmp_bytes;
    /* A static split: every chunk's work is independent, and a thread's
     * chunks are consecutive, so each chunk's first segment is where the
     * previous one's search ended. */
    size_t c0 = j->nchunks * (size_t)tid / (size_t)nt;
    size_t c1 = j->nchunks * (size_t)(tid + 1) / (size_t)nt;
    size_t cnt = j->nseg + 1, x = c0 * j->chunk;
    size_t s0 = parsum__lower_bound_near(
        j->offsets, cnt, x, parsum__offsets_guess(x, cnt, j->n));
    for (size_t c = c0; c < c1; c++)
        sred_chunk(j, c, &s0, tmp);
}

parsum_status parsum__cpu_seg_reduce(parsum_context *ctx, const void *in,
                                     void *out, const uint64_t *offsets,
                                     size_t num_segments, parsum_dtype dtype,
                                     parsum_op op,
                                     const parsum_custom_op *custom)
{
    const char *fn = custom != NULL ? "parsum_segmented_reduce_custom"
                                    : "parsum_segmented_reduce";
    sred_job j;
    memset(&j, 0, sizeof j);
    fold_init(&j.f, dtype, op, custom);
    size_t es = j.f.esize;
    j.in = in;
    j.out = out;
    j.offsets = offsets;
    j.nseg = num_segments;
    j.n = (size_t)offsets[num_segments];
    if (j.n == 0) { /* only empty segments */
        for (size_t s = 0; s < num_segments; s++)
            memcpy(j.out + s * es, identity_of(&j.f), es);
        return PARSUM_OK;
    }
    j.chunk = parsum__cpu_chunk_elems(es);
    j.nchunks = (j.n + j.chunk - 1) / j.chunk;
    int nt = parsum__seg_workers(ctx, j.nchunks);
    j.stride = PARSUM__ROUND64(es);
    j.bits_bytes = PARSUM__ROUND64((j.chunk / 64 + 1) * sizeof(uint64_t));
    j.mark_bytes = PARSUM__ROUND64(j.chunk) + 64;
    j.tmp_bytes = custom != NULL
                      ? 0
                      : 2 * j.bits_bytes + j.mark_bytes + j.chunk * es;
    size_t lead_bytes, seg_bytes, tmp_total;
    if (!parsum__mul_size(j.nchunks, j.stride, &lead_bytes) ||
        !parsum__mul_size(j.nchunks, sizeof(size_t), &seg_bytes) ||
        !parsum__mul_size((size_t)nt, PARSUM__ROUND64(j.tmp_bytes),
                          &tmp_total))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    j.tmp_bytes = PARSUM__ROUND64(j.tmp_bytes);
    seg_bytes = PARSUM__ROUND64(seg_bytes);
    unsigned char *scratch =
        parsum__scratch(ctx, lead_bytes + seg_bytes + tmp_total, fn);
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j.lead = scratch;
    j.lead_seg = (size_t *)(void *)(scratch + lead_bytes);
    j.tmp = scratch + lead_bytes + seg_bytes;
    parsum__sched_spmd(nt, sred_worker, &j);
    /* Segments spanning chunks: their pieces in chunk order. */
    for (size_t c = 1; c < j.nchunks; c++) {
        size_t s = j.lead_seg[c];
        if (s != SIZE_MAX)
            combine(&j.f, j.out + s * es, j.lead + c * j.stride,
                    j.out + s * es);
    }
    return PARSUM_OK;
}

/* ---- reduce by key ------------------------------------------------------- */

typedef struct rbk_job {
    fold_ctx f;
    const unsigned char *keys, *values;
    unsigned char *keys_out, *values_out;
    size_t n, ksize, chunk, nchunks;
    parsum__heads heads;
    /* per chunk: flag, runs started up to the chunk's end (byte 8), and
     * the fold of the run open at its end (byte 64) */
    unsigned char *slots;
    size_t slot_bytes;
    /* per thread: head bits, end bits, scanned chunk, fold */
    unsigned char *tmp;
    size_t tmp_bytes, bits_bytes;
    parsum__compress_fn compress_keys;
    atomic_size_t next;
} rbk_job;

static size_t *rbk_count(const rbk_job *j, size_t c)
{
    return (size_t *)(void *)(j->slots + c * j->slot_bytes + 8);
}

static unsigned char *rbk_value(const rbk_job *j, size_t c)
{
    return j->slots + c * j->slot_bytes + 64;
}

/* Heads of a chunk, in order: k, the head's position, and idx, its run's
 * index, for each; the body may `continue`. */
#define FOR_HEADS(bits, len, idx0, BODY)                                    \
    do {                                                                    \
        size_t idx = (idx0);                                                \
        for (size_t w_ = 0; w_ < ((len) + 63) / 64; w_++)                   \
            for (uint64_t b_ = (bits)[w_]; b_ != 0; b_ &= b_ - 1, idx++) {  \
                size_t k = 64 * w_ + (size_t)__builtin_ctzll(b_);           \
                BODY                                                        \
            }                                                               \
    } while (0)

/* The folds of the runs that end in chunk [cb, cb + len) (those before
 * its heads), from one segmented scan: the run before head k ends at
 * k - 1, so one compress of the scan by "ends" writes them in order. The
 * first may have started in an earlier chunk; its open fold vprev enters
 * the scan as the carry, or is the value itself when the chunk starts
 * with a head. */
static void rbk_dense(const rbk_job *j, size_t cb, size_t len,
                      const uint64_t *bits, uint64_t *ends, size_t first,
                      size_t rprev, const void *vprev, unsigned char *sc,
                      size_t next)
{
    size_t es = j->f.esize, pf_off = next * j->chunk, pf_len = 0;
    if (next < j->nchunks) /* the thread's next chunk, pulled in meanwhile */
        pf_len = j->n - pf_off < j->chunk ? j->n - pf_off : j->chunk;
    j->f.seg_scan(j->values + cb * es, sc, len, bits, 0, 0,
                  first > 0 ? vprev : NULL, NULL, 0,
                  j->values + (pf_len ? pf_off : 0) * es, pf_len * es);
    if (first == 0 && vprev != NULL)
        memcpy(j->values_out + (rprev - 1) * es, vprev, es);
    ends_of(bits, len, ends);
    j->f.compress(sc, ends, len,
                  j->values_out + (rprev - (first > 0)) * es);
}

/* The same with one fold per run (long runs). */
static void rbk_sparse(const rbk_job *j, size_t cb, size_t len,
                       const uint64_t *bits, size_t rprev, const void *vprev,
                       unsigned char *piece)
{
    size_t es = j->f.esize, prev = SIZE_MAX;
    FOR_HEADS(bits, len, rprev, {
        if (idx == 0) { /* the first run of all */
            prev = k;
            continue;
        }
        unsigned char *dst = j->values_out + (idx - 1) * es;
        if (prev != SIZE_MAX) {
            fold(&j->f, j->values + (cb + prev) * es, k - prev, dst);
        } else if (k > 0) {
            fold(&j->f, j->values + cb * es, k, piece);
            combine(&j->f, vprev, piece, dst);
        } else {
            memcpy(dst, vprev, es);
        }
        prev = k;
    });
}
#undef FOR_HEADS

static void rbk_chunk(rbk_job *j, size_t c, size_t next, unsigned char *tmp)
{
    size_t es = j->f.esize, cb = c * j->chunk, first = 0, lasth = 0;
    size_t len = cb + j->chunk < j->n ? j->chunk : j->n - cb;
    uint64_t *bits = (uint64_t *)(void *)tmp;
    uint64_t *ends = (uint64_t *)(void *)(tmp + j->bits_bytes);
    unsigned char *sc = tmp + 2 * j->bits_bytes;
    unsigned char *agg = sc + PARSUM__ROUND64(j->chunk * es);
    parsum__heads_chunk(&j->heads, cb, len, 0, bits, NULL);
    int has = parsum__find_heads(bits, len, &first, &lasth);
    size_t heads = parsum__count_heads(bits, len);
    /* the fold from the last head on, or of the whole chunk */
    fold(&j->f, j->values + (cb + lasth) * es, len - lasth, agg);
    size_t rprev = 0;
    const unsigned char *vprev = NULL;
    if (c > 0) {
        parsum__slot_wait(j->slots, j->slot_bytes, c - 1);
        rprev = *rbk_count(j, c - 1);
        vprev = rbk_value(j, c - 1);
    }
    *rbk_count(j, c) = rprev + heads;
    if (has)
        memcpy(rbk_value(j, c), agg, es);
    else /* c > 0: element 0 starts a run */
        combine(&j->f, vprev, agg, rbk_value(j, c));
    parsum__slot_publish(j->slots, j->slot_bytes, c);
    if (has) {
        j->compress_keys(j->keys + cb * j->ksize, bits, len,
                         j->keys_out + rprev * j->ksize);
        if (heads * DENSE_RUN_LEN > len)
            rbk_dense(j, cb, len, bits, ends, first, rprev, vprev, sc,
                      next);
        else
            rbk_sparse(j, cb, len, bits, rprev, vprev, sc);
    }
    if (c + 1 == j->nchunks) /* the last run ends with the input */
        memcpy(j->values_out + (rprev + heads - 1) * es, rbk_value(j, c),
               es);
}

static void rbk_worker(void *arg, int tid, int nt)
{
    rbk_job *j = arg;
    const int ahead = parsum__claim_ahead(nt);
    unsigned char *tmp = j->tmp + (size_t)tid * j->tmp_bytes;
    /* With few threads claimed one ahead to prefetch it, as in scan.c
     * (seg_common.h says why this cannot deadlock). */
    size_t c = parsum__claim(&j->next);
    while (c < j->nchunks) {
        size_t next = parsum__claim_next(&j->next, j->nchunks, ahead);
        rbk_chunk(j, c, next, tmp);
        c = parsum__claim_after(&j->next, next, ahead);
    }
}

parsum_status parsum__cpu_reduce_by_key(parsum_context *ctx,
                                        const void *keys_in,
                                        parsum_dtype key_dtype,
                                        const void *values_in, size_t n,
                                        parsum_dtype dtype, parsum_op op,
                                        void *keys_out, void *values_out,
                                        size_t *num_runs)
{
    static const char fn[] = "parsum_reduce_by_key";
    rbk_job j;
    memset(&j, 0, sizeof j);
    fold_init(&j.f, dtype, op, NULL);
    size_t es = j.f.esize;
    j.keys = keys_in;
    j.values = values_in;
    j.keys_out = keys_out;
    j.values_out = values_out;
    j.n = n;
    j.ksize = parsum_dtype_size(key_dtype);
    parsum__heads_init_keys(&j.heads, keys_in, key_dtype, n);
    j.chunk = parsum__cpu_chunk_elems(es);
    j.nchunks = (n + j.chunk - 1) / j.chunk;
    int nt = parsum__seg_workers(ctx, j.nchunks);
    j.slot_bytes = 64 + PARSUM__ROUND64(es);
    j.bits_bytes = PARSUM__ROUND64((j.chunk / 64 + 1) * sizeof(uint64_t));
    j.tmp_bytes = 2 * j.bits_bytes + PARSUM__ROUND64(j.chunk * es) +
                  PARSUM__ROUND64(es);
    j.compress_keys =
        parsum__cpu_kernels_get()->sel->compress[parsum__log2_size(j.ksize)];
    size_t slots_bytes, tmp_total;
    if (!parsum__mul_size(j.nchunks, j.slot_bytes, &slots_bytes) ||
        !parsum__mul_size((size_t)nt, j.tmp_bytes, &tmp_total))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows", fn);
    unsigned char *scratch = parsum__scratch(ctx, slots_bytes + tmp_total, fn);
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j.slots = scratch;
    j.tmp = scratch + slots_bytes;
    for (size_t c = 0; c < j.nchunks; c++)
        atomic_init(parsum__slot_flag(j.slots, j.slot_bytes, c), 0);
    atomic_init(&j.next, 0);
    parsum__sched_spmd(nt, rbk_worker, &j);
    *num_runs = *rbk_count(&j, j.nchunks - 1);
    return PARSUM_OK;
}
