/*
 * box_filter.c - the mean (box) filter on the CPU (parsum_box_filter), at
 * a cost per pixel that does not depend on the radius.
 *
 * Output rows are cut into bands (a height that depends on the image and
 * the radius only, never on the thread count); threads take bands. In a
 * band, V holds the running sums of each column over the window rows
 * (mapped through the border rule): set up once at the band's first row,
 * then one row added and one removed per output row (McDonnell, "Box-
 * filtering techniques", CGIP 1981; the running-sum form OpenCV uses). Per
 * output row, Q = the row prefix of V, and each window sum is a difference
 * of two Q entries: in the interior a vectorized pass (Q[x + rx + 1] -
 * Q[x - rx] and the division), at the edges the border arithmetic of
 * image_kernels.h, which handles windows of any width in a few terms.
 *
 * The first V of a band sums its 2 ry + 1 window rows directly when that
 * is at most BF_DIRECT_ROWS rows (bands are then at least four windows
 * high). Taller windows use the same border arithmetic vertically: the
 * column prefix sums P at every band start come from one parallel pass of
 * column sums and a short chain over the bands, and any window's column
 * sums are a few combinations of P rows and partial bands.
 *
 * Integer images: sums modulo 2^16, 2^32 or 2^64, the narrowest that holds
 * max_sample * area + area / 2 (U8 with areas up to 255 in 16 bits, U8 and
 * U16 in 32 bits while that is below 2^32), and exact multiplicative
 * division (image_kernels.h): the results are the reference's bits.
 *
 * Float images: sums in float64, then one rounding of sum / area (and of
 * the F32 conversion). With u = 2^-53, the computed window sum differs
 * from the exact one by at most (n_v + n_h) u A (first order; recursive
 * summation, Higham, "Accuracy and Stability of Numerical Algorithms",
 * 4.2), where n_v <= 2 ry + 2 band + 1 adds made a column sum (its set-up
 * and the running updates of the band; tall windows: up to 8 terms of
 * column prefixes of up to `height` rows each, times their periods), n_h
 * <= width + 8 adds made a row prefix or an edge's terms, and A is the sum
 * of |sample| over every sample those adds went through (the rows of the
 * band's windows, all columns). For samples of one sign and similar size
 * the mean is thus within about (2 ry + 2 band + width) u of relative
 * error, far below F32's rounding; large cancellations lose as in any
 * running sum.
 * Results depend on the image, radius and border only: the same bits for
 * every thread count and instruction set.
 */
#include "../core/internal.h"
#include "cpu.h"
#include "image_kernels.h"
#include "sched.h"

#include <stdatomic.h>
#include <string.h>

#define ROUND64(x) (((x) + 63) & ~(size_t)63)

/* Windows of up to this many rows set V up directly. */
#define BF_DIRECT_ROWS 256
/* Smallest band height (rows); direct setups use at least four times the
 * window, so that setting V up costs at most an eighth of the running
 * updates (two rows per output row). */
#define BF_BAND_ROWS 64

/* An edge pixel's window sum F(x + rx + 1) - F(x - rx) as a combination
 * of Q entries (parsum__ext_terms, equal entries merged): computed once
 * per call, since it depends on the column only. */
typedef struct bf_edge {
    size_t x;
    int nterms;
    int64_t coef[8];
    size_t r[8];
} bf_edge;

typedef struct bf_job {
    const parsum__box_filter_args *a;
    int pix, acc, C;
    size_t n, accb, w, h, band, nbands;
    bool tall; /* window set up from the column prefixes P */
    unsigned char *P; /* tall: nbands + 1 rows: P[b] = column sums above
                         band b */
    unsigned char *rows; /* per thread: V, then Q */
    size_t row_bytes, q_off;
    bf_edge *edges; /* the columns whose windows reach past the row */
    size_t nedges, xa, xb; /* interior columns: [xa, xb) */
    parsum__div dv;
    parsum__img_vupd_fn vupd;
    parsum__img_vaxpy_fn vaxpy;
    parsum__img_prefix_fn prefix;
    parsum__img_interior_fn interior;
    atomic_size_t next;
} bf_job;

static const void *src_row(const bf_job *j, size_t y)
{
    return (const char *)j->a->src.data + y * j->a->src.pitch;
}

/* The source row of extended row e, or NULL (ZERO border outside). */
static const void *ext_row(const bf_job *j, int64_t e, size_t *idx)
{
    bool zero;
    size_t m = parsum__border_map(e, j->h, j->a->border, &zero);
    *idx = m;
    return zero ? NULL : src_row(j, m);
}

static void *p_row(const bf_job *j, size_t b)
{
    return j->P + b * ROUND64(j->n * j->accb);
}

/* V += coef * R for an accumulator row R. */
static void row_axpy(const bf_job *j, void *V, const void *R, int64_t coef)
{
    size_t n = j->n;
    uint64_t k = (uint64_t)coef;
    switch (j->acc) {
    case PARSUM__ACC_U16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)V)[i] = (uint16_t)(((uint16_t *)V)[i] +
                                            k * ((const uint16_t *)R)[i]);
        break;
    case PARSUM__ACC_U32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)V)[i] += (uint32_t)k * ((const uint32_t *)R)[i];
        break;
    case PARSUM__ACC_U64:
        for (size_t i = 0; i < n; i++)
            ((uint64_t *)V)[i] += k * ((const uint64_t *)R)[i];
        break;
    default:
        for (size_t i = 0; i < n; i++)
            ((double *)V)[i] += (double)coef * ((const double *)R)[i];
        break;
    }
}

/* ---- setting up the column sums of a band's first row -------------------- */

static void setup_direct(const bf_job *j, size_t y0, void *V)
{
    int64_t ry = (int64_t)j->a->ry, y = (int64_t)y0;
    size_t idx;
    memset(V, 0, j->n * j->accb);
    for (int64_t e = y - ry; e <= y + ry; e++) {
        const void *r = ext_row(j, e, &idx);
        if (r != NULL)
            j->vaxpy(V, r, j->n, 1);
    }
}

/* V = F(y0 + ry + 1) - F(y0 - ry) over rows, each F(j) a few terms
 * coef * G(r), G(r) = P[r / band] + the rows from that band's start to r. */
static void setup_tall(const bf_job *j, size_t y0, void *V)
{
    int64_t coef[8], ry = (int64_t)j->a->ry;
    size_t r[8];
    int t = parsum__ext_terms((int64_t)y0 + ry + 1, j->h, j->a->border, coef,
                              r);
    int u = parsum__ext_terms((int64_t)y0 - ry, j->h, j->a->border,
                              coef + t, r + t);
    for (int k = t; k < t + u; k++)
        coef[k] = -coef[k];
    memset(V, 0, j->n * j->accb);
    for (int k = 0; k < t + u; k++) {
        for (int l = k + 1; l < t + u; l++) /* one pass per distinct r */
            if (r[l] == r[k] && coef[l] != 0) {
                coef[k] += coef[l];
                coef[l] = 0;
            }
        if (coef[k] == 0 || r[k] == 0)
            continue;
        size_t b = r[k] / j->band;
        row_axpy(j, V, p_row(j, b), coef[k]);
        for (size_t yy = b * j->band; yy < r[k]; yy++)
            j->vaxpy(V, src_row(j, yy), j->n, coef[k]);
    }
}

/* Column sums of every band into P[b + 1], then P[b + 1] += P[b]. */
static void tall_worker(void *arg, int tid, int nt)
{
    bf_job *j = arg;
    (void)tid;
    (void)nt;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&j->next, 1,
                                             memory_order_relaxed);
        if (b >= j->nbands)
            break;
        size_t y0 = b * j->band, y1 = y0 + j->band;
        void *S = p_row(j, b + 1);
        memset(S, 0, j->n * j->accb);
        for (size_t y = y0; y < y1 && y < j->h; y++)
            j->vaxpy(S, src_row(j, y), j->n, 1);
    }
}

static void tall_prefix(bf_job *j, int nt)
{
    atomic_store(&j->next, 0);
    parsum__sched_spmd(nt, tall_worker, j);
    memset(p_row(j, 0), 0, j->n * j->accb);
    for (size_t b = 0; b < j->nbands; b++)
        row_axpy(j, p_row(j, b + 1), p_row(j, b), 1);
}

/* ---- one output row -------------------------------------------------------- */

/* Q entry i as an integer (modulo the accumulator's width) or a double. */
static uint64_t q_u(const bf_job *j, const void *Q, size_t i)
{
    switch (j->acc) {
    case PARSUM__ACC_U16: return ((const uint16_t *)Q)[i];
    case PARSUM__ACC_U32: return ((const uint32_t *)Q)[i];
    default: return ((const uint64_t *)Q)[i];
    }
}

/* Sample i of the output row from the window sum s. */
static void store_int(const bf_job *j, void *dst, size_t i, uint64_t s)
{
    const parsum__div *dv = &j->dv;
    uint64_t q;
    s += dv->half;
    if (j->acc == PARSUM__ACC_U16)
        q = parsum__div_u16(dv, (uint32_t)(s & 0xFFFF));
    else if (j->acc == PARSUM__ACC_U32)
        q = parsum__div_u32(dv, (uint32_t)s);
    else if (j->pix == PARSUM__PIX_I32)
        q = (uint64_t)parsum__div_i64(dv, s);
    else
        q = parsum__div_u64(dv, s);
    switch (j->pix) {
    case PARSUM__PIX_U8: ((uint8_t *)dst)[i] = (uint8_t)q; break;
    case PARSUM__PIX_U16: ((uint16_t *)dst)[i] = (uint16_t)q; break;
    default: ((int32_t *)dst)[i] = (int32_t)(int64_t)q; break;
    }
}

/* The terms of edge pixel x; merged, zero terms and G(0) dropped. */
static void edge_terms(const bf_job *j, size_t x, bf_edge *e)
{
    int64_t coef[8], rx = (int64_t)j->a->rx;
    size_t r[8];
    int t = parsum__ext_terms((int64_t)x + rx + 1, j->w, j->a->border, coef,
                              r);
    int u = parsum__ext_terms((int64_t)x - rx, j->w, j->a->border, coef + t,
                              r + t);
    for (int k = t; k < t + u; k++)
        coef[k] = -coef[k];
    e->x = x;
    e->nterms = 0;
    for (int k = 0; k < t + u; k++) {
        for (int l = k + 1; l < t + u; l++)
            if (r[l] == r[k] && coef[l] != 0) {
                coef[k] += coef[l];
                coef[l] = 0;
            }
        if (coef[k] != 0 && r[k] != 0) {
            e->coef[e->nterms] = coef[k];
            e->r[e->nterms++] = r[k];
        }
    }
}

/* Pixel e->x of an edge (a window reaching past the row's ends). */
static void edge_pixel(const bf_job *j, const void *Q, void *dst,
                       const bf_edge *e)
{
    size_t C = (size_t)j->C;
    for (size_t c = 0; c < C; c++) {
        size_t i = e->x * C + c;
        if (j->acc == PARSUM__ACC_F64) {
            const double *q = Q;
            double f = 0;
            for (int k = 0; k < e->nterms; k++)
                f += (double)e->coef[k] * q[e->r[k] * C + c];
            double m = f / (double)j->dv.d;
            if (j->pix == PARSUM__PIX_F32)
                ((float *)dst)[i] = (float)m;
            else
                ((double *)dst)[i] = m;
            continue;
        }
        uint64_t s = 0;
        for (int k = 0; k < e->nterms; k++)
            s += (uint64_t)e->coef[k] * q_u(j, Q, e->r[k] * C + c);
        store_int(j, dst, i, s);
    }
}

/* Output row y from the column sums V; Q is scratch of n + C entries. */
static void row_out(const bf_job *j, size_t y, const void *V, void *Q)
{
    const parsum_image *d = &j->a->dst;
    size_t C = (size_t)j->C, rx = j->a->rx, ds = parsum_dtype_size(d->dtype);
    char *dst = (char *)d->data + y * d->pitch;
    memset(Q, 0, C * j->accb);
    j->prefix(V, (char *)Q + C * j->accb, j->n, j->C);
    if (j->xb > j->xa)
        j->interior((const char *)Q + j->xa * C * j->accb,
                    dst + j->xa * C * ds, (j->xb - j->xa) * C, (rx + 1) * C,
                    rx * C, &j->dv);
    for (size_t e = 0; e < j->nedges; e++)
        edge_pixel(j, Q, dst, &j->edges[e]);
}

/* Asks for the source row that enters the window `ahead` output rows from
 * now to be brought into L2: the rows enter one per output row, each read
 * from memory for the first time, and the hardware prefetcher does not
 * run ahead of a stream across rows. */
static void prefetch_entering(const bf_job *j, size_t y, size_t ahead)
{
    size_t idx;
    const char *p = ext_row(j, (int64_t)(y + ahead + j->a->ry), &idx);
    size_t bytes = j->n * parsum_dtype_size(j->a->src.dtype);
    for (size_t o = 0; p != NULL && o < bytes; o += 64)
        __builtin_prefetch(p + o, 0, 2);
}

static void bf_band(const bf_job *j, size_t b, void *V, void *Q)
{
    int64_t ry = (int64_t)j->a->ry;
    size_t y0 = b * j->band, y1 = y0 + j->band < j->h ? y0 + j->band : j->h;
    if (j->tall)
        setup_tall(j, y0, V);
    else
        setup_direct(j, y0, V);
    for (size_t y = y0; y < y1; y++) {
        if (y + 2 < y1)
            prefetch_entering(j, y, 2);
        if (y > y0) { /* the window moves down one row */
            size_t in_i, out_i;
            const void *in = ext_row(j, (int64_t)y + ry, &in_i);
            const void *out = ext_row(j, (int64_t)y - 1 - ry, &out_i);
            if (in == NULL || out == NULL || in_i != out_i)
                j->vupd(V, in, out, j->n);
        }
        row_out(j, y, V, Q);
    }
}

static void bf_worker(void *arg, int tid, int nt)
{
    bf_job *j = arg;
    (void)nt;
    unsigned char *V = j->rows + (size_t)tid * j->row_bytes;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&j->next, 1,
                                             memory_order_relaxed);
        if (b >= j->nbands)
            break;
        bf_band(j, b, V, V + j->q_off);
    }
}

/* ---- set-up ----------------------------------------------------------------- */

/* The narrowest exact accumulator (see the file comment) and the division
 * plan for it. */
static int choose_acc(int pix, uint64_t area, parsum__div *dv)
{
    uint64_t qmax = pix == PARSUM__PIX_U8 ? 255 : 65535;
    uint64_t smax = qmax * area + area / 2;
    switch (pix) {
    case PARSUM__PIX_U8:
    case PARSUM__PIX_U16:
        if (parsum__div_plan(dv, area, smax, qmax) && smax < 65536 &&
            pix == PARSUM__PIX_U8) /* U16 images never sum in 16 bits */
            return PARSUM__ACC_U16;
        return smax < ((uint64_t)1 << 32) ? PARSUM__ACC_U32
                                          : PARSUM__ACC_U64;
    default: /* signed or float sums: only inv_up is used */
        parsum__div_plan(dv, area, UINT64_MAX, 0);
        return pix == PARSUM__PIX_I32 ? PARSUM__ACC_U64 : PARSUM__ACC_F64;
    }
}

static parsum_status bf_scratch(parsum_context *ctx, bf_job *j, int nt)
{
    size_t row = ROUND64(j->n * j->accb);
    size_t qrow = ROUND64((j->n + (size_t)j->C) * j->accb);
    size_t per = row + qrow, rows, prows = 0;
    size_t ebytes = ROUND64(j->nedges * sizeof(bf_edge));
    j->row_bytes = per;
    j->q_off = row;
    if (!parsum__mul_size((size_t)nt, per, &rows) ||
        (j->tall && !parsum__mul_size(j->nbands + 1, row, &prows)) ||
        rows > (size_t)-1 - prows - ebytes)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: scratch size overflows size_t", j->a->fn);
    unsigned char *p = parsum__scratch(ctx, rows + prows + ebytes, j->a->fn);
    if (p == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j->rows = p;
    j->P = p + rows;
    j->edges = (bf_edge *)(void *)(p + rows + prows);
    size_t e = 0;
    for (size_t x = 0; x < j->w; x++)
        if (x < j->xa || x >= j->xb)
            edge_terms(j, x, &j->edges[e++]);
    return PARSUM_OK;
}

parsum_status parsum__cpu_box_filter(parsum_context *ctx,
                                     const parsum__box_filter_args *a)
{
    const parsum__cpu_image_kernels *k = parsum__cpu_image_kernels_get();
    bf_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.w = a->src.width;
    j.h = a->src.height;
    j.C = a->src.channels;
    j.n = j.w * (size_t)j.C;
    j.pix = parsum__pix_of(a->src.dtype);
    uint64_t area = (2 * (uint64_t)a->rx + 1) * (2 * (uint64_t)a->ry + 1);
    j.acc = choose_acc(j.pix, area, &j.dv);
    j.accb = parsum__acc_size(j.acc);
    j.vupd = k->box->vupd[j.pix][j.acc];
    j.vaxpy = k->box->vaxpy[j.pix][j.acc];
    j.prefix = k->prefix[j.acc];
    j.interior = k->box->interior[j.pix][j.acc];
    size_t win = 2 * a->ry + 1, band = parsum__image_band_forced();
    j.tall = win > BF_DIRECT_ROWS;
    if (band == 0)
        band = j.tall || 4 * win < BF_BAND_ROWS ? BF_BAND_ROWS : 4 * win;
    j.band = band < j.h ? band : j.h;
    j.nbands = (j.h + j.band - 1) / j.band;
    int nt = ctx->threads < 1 ? 1 : ctx->threads;
    if ((size_t)nt > j.nbands)
        nt = (int)j.nbands;
    j.xa = j.xb = 0;
    if (j.w > 2 * a->rx) {
        j.xa = a->rx;
        j.xb = j.w - a->rx;
    }
    j.nedges = j.w - (j.xb - j.xa);
    parsum_status st = bf_scratch(ctx, &j, nt);
    if (st != PARSUM_OK)
        return st;
    if (j.tall)
        tall_prefix(&j, nt);
    atomic_store(&j.next, 0);
    parsum__sched_spmd(nt, bf_worker, &j);
    return PARSUM_OK;
}
