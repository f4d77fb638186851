/*
 * integral.c - summed-area tables on the CPU (parsum_integral), and the
 * channel means of PARSUM_INTEGRAL_OFFSET_MEAN.
 *
 * The table is built at memory speed: the source read from memory once,
 * the table written once. Rows are cut into bands of a height that depends
 * on the image only (image.c: parsum__image_band), and bands are processed
 * as a chained scan over rows (the scheme of scan.c, with a row of column
 * sums in place of a scalar): for band b a thread
 *   1. reads the band from memory and sums its columns (S_b, vertical adds)
 *      and turns them into their row prefix pS_b: the band's contribution
 *      to every table entry below it;
 *   2. waits for P_b, the table row just above the band (published by the
 *      band before), and publishes P_{b+1} = P_b + pS_b at once;
 *   3. walks the band again, now from its L2 cache: each row's prefix is
 *      added to the running table row, T[y] = T[y-1] + rowprefix(y),
 *      starting from P_b, and the row is written to the table (with
 *      non-temporal stores when the table is larger than the caches; by
 *      the AVX-512 row kernel itself for integer tables). Meanwhile the
 *      thread's next band, claimed before, is prefetched into L2, so that
 *      memory reads overlap the table's writes.
 * Integer tables run modulo 2^32 (U32) or 2^64 in any grouping, so their
 * bits equal the reference's. Float tables sum in float64; the grouping
 * (the bands and the P chain) depends on the image size only, so results
 * are the same for every thread count and instruction set.
 */
#include "../core/internal.h"
#include "cpu.h"
#include "image_kernels.h"
#include "sched.h"

#include <stdatomic.h>
#include <string.h>

#define ROUND64(x) (((x) + 63) & ~(size_t)63)

typedef struct integral_job {
    const parsum__integral_args *a;
    parsum__img_colsum_fn colsum;
    parsum__img_rowscan_fn rowscan;
    parsum__img_rowscan2_fn rowscan2; /* float tables; else NULL */
    parsum__img_prefix_fn prefix;
    parsum__stream_copy_fn stream_copy; /* NULL: plain stores */
    bool fused; /* the rowscan kernel may write the table itself */
    int acc;
    size_t n, accb, band, nbands;
    unsigned char *slots; /* per band: a flag line, then P_b */
    size_t slot_bytes;
    unsigned char *rows; /* per thread: S, 16-bit scratch, rowscan2's mid */
    size_t row_bytes, tmp_off, mid_off;
    const double *offrow; /* NULL, or the channel offsets per sample */
    atomic_size_t next;
} integral_job;

static atomic_int *slot_flag(const integral_job *j, size_t b)
{
    return (atomic_int *)(void *)(j->slots + b * j->slot_bytes);
}

static void *slot_row(const integral_job *j, size_t b)
{
    return j->slots + b * j->slot_bytes + 64;
}

static const void *src_row(const parsum_image *im, size_t y)
{
    return (const char *)im->data + y * im->pitch;
}

/* dst[i] = a[i] + b[i] for i < n, in the accumulator type. */
static void add_rows(void *dst, const void *a, const void *b, size_t n,
                     int acc)
{
    if (acc == PARSUM__ACC_U32) {
        uint32_t *d = dst;
        const uint32_t *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            d[i] = x[i] + y[i];
    } else if (acc == PARSUM__ACC_U64) {
        uint64_t *d = dst;
        const uint64_t *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            d[i] = x[i] + y[i];
    } else {
        double *d = dst;
        const double *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            d[i] = x[i] + y[i];
    }
}

/* Bytes: plain or non-temporal stores. */
static void put(const integral_job *j, void *dst, const void *src,
                size_t bytes)
{
    if (j->stream_copy != NULL)
        j->stream_copy(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

/* Where table row ty's sums start (after the default layout's zero
 * column, which this writes). */
static char *table_row(const integral_job *j, size_t ty)
{
    const parsum_image *t = &j->a->table;
    size_t ts = parsum_dtype_size(t->dtype);
    char *dst = (char *)t->data + ty * t->pitch;
    if (!j->a->inclusive) {
        memset(dst, 0, (size_t)t->channels * ts);
        dst += (size_t)t->channels * ts;
    }
    return dst;
}

/* The sums of the accumulator row P into dst (table_row). F32 tables get
 * each float64 sum rounded once. */
static void emit_row(const integral_job *j, char *dst, const void *P)
{
    const parsum_image *t = &j->a->table;
    size_t ts = parsum_dtype_size(t->dtype);
    if (t->dtype != PARSUM_F32) { /* same width as the accumulator */
        put(j, dst, P, j->n * ts);
        return;
    }
    float buf[1024];
    const double *p = P;
    for (size_t i = 0; i < j->n; i += 1024) {
        size_t m = j->n - i < 1024 ? j->n - i : 1024;
        for (size_t k = 0; k < m; k++)
            buf[k] = (float)p[i + k];
        put(j, dst + i * 4, buf, m * 4);
    }
}

static void emit_zero_row(const integral_job *j)
{
    const parsum_image *t = &j->a->table;
    memset(t->data, 0, t->width * (size_t)t->channels *
                           parsum_dtype_size(t->dtype));
}

/* Step 1: pS_b, the row prefix of the band's column sums, into S. */
static void band_sums(const integral_job *j, size_t y0, size_t y1, void *S,
                      void *tmp)
{
    memset(S, 0, j->n * j->accb);
    j->colsum(src_row(&j->a->src, y0), j->a->src.pitch, y1 - y0, S, j->n,
              j->offrow, tmp);
    j->prefix(S, S, j->n, j->a->src.channels);
}

/* Asks for row y of band `next` to be brought into the L2 cache while
 * this band's rows are scanned, so that the next band's first pass reads
 * from the cache and memory reads overlap the table's writes. */
static void prefetch_row(const integral_job *j, size_t next, size_t y)
{
    const parsum_image *s = &j->a->src;
    size_t ny = next * j->band + y;
    if (next >= j->nbands || ny >= s->height)
        return;
    const char *p = src_row(s, ny);
    size_t bytes = j->n * parsum_dtype_size(s->dtype);
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch(p + o, 0, 2);
}

/* Step 3 for rows [y0, y1) from P. Float tables take rows two at a time
 * (rowscan2: two chains of float adds; the same bits as one at a time),
 * mid holding the first row's sums. */
static void band_rows(const integral_job *j, size_t y0, size_t y1,
                      size_t next, void *P, void *mid)
{
    const parsum__integral_args *a = j->a;
    size_t pad = a->inclusive ? 0 : 1, b0 = y0;
    int C = a->src.channels;
    if (j->rowscan2 != NULL) {
        for (; y0 + 1 < y1; y0 += 2) {
            prefetch_row(j, next, y0 - b0);
            prefetch_row(j, next, y0 + 1 - b0);
            j->rowscan2(src_row(&a->src, y0), src_row(&a->src, y0 + 1), P,
                        mid, j->n, C, j->offrow);
            emit_row(j, table_row(j, y0 + pad), mid);
            emit_row(j, table_row(j, y0 + 1 + pad), P);
        }
    }
    for (size_t y = y0; y < y1; y++) {
        char *out = table_row(j, y + pad);
        prefetch_row(j, next, y - b0);
        if (!j->rowscan(src_row(&a->src, y), P, j->n, C, j->offrow,
                        j->fused ? out : NULL, j->stream_copy != NULL))
            emit_row(j, out, P);
    }
}

static void integral_band(integral_job *j, size_t b, size_t next, void *S,
                          void *tmp, void *mid)
{
    const parsum__integral_args *a = j->a;
    size_t y0 = b * j->band;
    size_t y1 = y0 + j->band < a->src.height ? y0 + j->band : a->src.height;
    size_t pad = a->inclusive ? 0 : 1;
    bool last = b + 1 == j->nbands;
    void *P = slot_row(j, b);
    if (!last)
        band_sums(j, y0, y1, S, tmp);
    if (b == 0)
        memset(P, 0, j->n * j->accb);
    else
        parsum__image_wait(slot_flag(j, b));
    if (!last) {
        add_rows(slot_row(j, b + 1), P, S, j->n, j->acc);
        atomic_store_explicit(slot_flag(j, b + 1), 1, memory_order_release);
    }
    if (b == 0 && pad)
        emit_zero_row(j);
    band_rows(j, y0, y1, next, P, mid);
}

static void integral_worker(void *arg, int tid, int nt)
{
    integral_job *j = arg;
    (void)nt;
    unsigned char *S = j->rows + (size_t)tid * j->row_bytes;
    /* The next band is claimed before this one is scanned, to prefetch it
     * (as scan.c): bands are still taken in increasing order, and the
     * lowest unfinished band never waits, so the chain cannot deadlock. */
    size_t b = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    while (b < j->nbands) {
        size_t next = atomic_fetch_add_explicit(&j->next, 1,
                                                memory_order_relaxed);
        integral_band(j, b, next, S, S + j->tmp_off, S + j->mid_off);
        b = next;
    }
    if (j->stream_copy != NULL) /* order the streamed stores */
        atomic_thread_fence(memory_order_seq_cst);
}

/* The accumulator of a table: U32 tables run in 32 bits, U64 and I64 in
 * 64, float tables in float64. */
static int table_acc(parsum_dtype t)
{
    return t == PARSUM_U32 ? PARSUM__ACC_U32
           : (t == PARSUM_U64 || t == PARSUM_I64) ? PARSUM__ACC_U64
                                                  : PARSUM__ACC_F64;
}

/* Carves the scratch arena for j (slots, per-thread rows, offsets). */
static parsum_status integral_scratch(parsum_context *ctx, integral_job *j,
                                      int nt, double **offrow)
{
    size_t row = ROUND64(j->n * j->accb), off = ROUND64(j->n * 8);
    size_t slots, rows, total;
    j->slot_bytes = 64 + row;
    j->tmp_off = row;
    j->mid_off = row + ROUND64(j->n * 2);
    j->row_bytes = j->mid_off + (j->rowscan2 != NULL ? row : 0);
    if (!parsum__mul_size(j->nbands, j->slot_bytes, &slots) ||
        !parsum__mul_size((size_t)nt, j->row_bytes, &rows) ||
        slots > (size_t)-1 - rows - off)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows size_t", j->a->fn);
    total = slots + rows + off;
    unsigned char *p = parsum__scratch(ctx, total, j->a->fn);
    if (p == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j->slots = p;
    j->rows = p + slots;
    *offrow = (double *)(void *)(p + slots + rows);
    for (size_t b = 0; b < j->nbands; b++)
        atomic_init(slot_flag(j, b), 0);
    return PARSUM_OK;
}

parsum_status parsum__cpu_integral(parsum_context *ctx,
                                   const parsum__integral_args *a)
{
    const parsum__cpu_image_kernels *k = parsum__cpu_image_kernels_get();
    const parsum_image *src = &a->src;
    integral_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.acc = table_acc(a->table.dtype);
    j.accb = parsum__acc_size(j.acc);
    j.n = src->width * (size_t)src->channels;
    int pix = parsum__pix_of(src->dtype);
    j.colsum = k->colsum[pix][j.acc][a->squared];
    j.rowscan = k->rowscan[pix][j.acc][a->squared];
    if (j.acc == PARSUM__ACC_F64)
        j.rowscan2 = k->rowscan2[pix][a->squared];
    j.prefix = k->prefix[j.acc];
    j.band = parsum__image_band(src->height,
                                j.n * parsum_dtype_size(src->dtype));
    j.nbands = (src->height + j.band - 1) / j.band;
    int nt = ctx->threads < 1 ? 1 : ctx->threads;
    if ((size_t)nt > j.nbands)
        nt = (int)j.nbands;
    double *offrow = NULL;
    parsum_status st = PARSUM_OK;
    if (a->offset_mean) /* first: it uses the scratch arena too */
        st = parsum__cpu_image_mean(ctx, src, a->offset);
    if (st == PARSUM_OK)
        st = integral_scratch(ctx, &j, nt, &offrow);
    if (st != PARSUM_OK)
        return st;
    if (a->offset != NULL) {
        for (size_t i = 0; i < j.n; i++)
            offrow[i] = a->offset[i % (size_t)src->channels];
        j.offrow = offrow;
    }
    size_t tbytes = a->table.height * a->table.pitch;
    if (tbytes >= parsum__cpu_stream_threshold())
        j.stream_copy = parsum__cpu_kernels_get()->sel->stream_copy;
    j.fused = j.acc != PARSUM__ACC_F64;
    atomic_init(&j.next, 0);
    parsum__sched_spmd(nt, integral_worker, &j);
    return PARSUM_OK;
}
