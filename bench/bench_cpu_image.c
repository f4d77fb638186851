/*
 * bench_cpu_image.c - `parsum bench integral|boxfilter` on the CPU (see
 * bench_cpu.h).
 *
 * One round times, on the same buffers: parsum's call, a serial loop doing
 * the same (what a user writes without parsum: the row-prefix table of
 * OpenCV's integral; a separable running-sum box filter), a multi-threaded
 * memcpy and the same copy with non-temporal stores, each moving as many
 * bytes as the operation must (the table's bytes for the integral, the
 * image's for the box filter, half read and half written). Figures are
 * medians over the rounds, the cache evicted before each run when the
 * data do not fit in it; parsum's result is then checked against the
 * serial loop's (integers exactly, floats to a relative 1e-9, F32 outputs
 * to one unit in the last place).
 *
 * Images are square, W x W with W = sqrt(--n) (default 2^26: 8192 x 8192;
 * `sweep`: W = 1024 to 8192), one channel, random samples (any bits for integers, [0, 1) for
 * floats). Bytes each operation must move, and its GB/s:
 *   integral   src read + table written: 5 bytes per pixel for u8 -> u32
 *   boxfilter  src read + dst written: 2 bytes per pixel for u8
 * %copy = those GB/s over the faster copy's GB/s in the same run. The
 * OpenCV peer (bench/opencv_peer.cpp, parsum_bench_opencv) times
 * cv::integral and cv::blur against parsum on the same images.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu.h"
#include "bench_cpu_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NPARTS 4 /* parsum, serial, memcpy, stream copy */

/* One integral case: source and table dtypes, SQUARED. */
typedef struct int_pair {
    parsum_dtype src, table;
    int squared;
} int_pair;

typedef struct img_bench {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int integral, threads;
    size_t side;
    int_pair pair;              /* integral */
    size_t radius;              /* box filter: rx = ry */
    parsum_border border;       /* box filter */
    parsum_dtype dtype;         /* box filter */
    parsum_image src, out;      /* out: the table or the filtered image */
    size_t out_bytes, moved;    /* bytes of out; bytes the call moves */
    pb_scrub scrub;
} img_bench;

typedef struct img_result {
    double t[NPARTS];
    int reps;
    double check; /* largest relative difference (0 for exact) */
} img_result;

/* ---- serial loops ----------------------------------------------------- */

/* T[y + 1][x + 1] = T[y][x + 1] + the row prefix (OpenCV's layout). */
#define SERIAL_INTEGRAL(S, T, ACC)                                          \
    do {                                                                    \
        const char *s_ = (const char *)src->data;                           \
        char *t_ = (char *)tab->data;                                       \
        memset(t_, 0, (w + 1) * sizeof(T));                                 \
        for (size_t y = 0; y < h; y++) {                                    \
            const S *in_ = (const S *)(const void *)(s_ + y * src->pitch);  \
            const T *up_ = (const T *)(void *)(t_ + y * tab->pitch);        \
            T *row_ = (T *)(void *)(t_ + (y + 1) * tab->pitch);             \
            ACC run_ = 0;                                                   \
            row_[0] = 0;                                                    \
            for (size_t x = 0; x < w; x++) {                                \
                ACC v_ = (ACC)in_[x];                                       \
                run_ += sq ? v_ * v_ : v_;                                  \
                row_[x + 1] = (T)(up_[x + 1] + run_);                       \
            }                                                               \
        }                                                                   \
    } while (0)

static void serial_integral(const parsum_image *src, const parsum_image *tab,
                            int sq)
{
    size_t w = src->width, h = src->height;
    switch (src->dtype * 16 + tab->dtype) {
    case PARSUM_U8 * 16 + PARSUM_U32:
        SERIAL_INTEGRAL(uint8_t, uint32_t, uint32_t);
        break;
    case PARSUM_U8 * 16 + PARSUM_F64:
        SERIAL_INTEGRAL(uint8_t, double, double);
        break;
    case PARSUM_U16 * 16 + PARSUM_U64:
        SERIAL_INTEGRAL(uint16_t, uint64_t, uint64_t);
        break;
    case PARSUM_I32 * 16 + PARSUM_I64:
        SERIAL_INTEGRAL(int32_t, int64_t, int64_t);
        break;
    case PARSUM_F32 * 16 + PARSUM_F64:
        SERIAL_INTEGRAL(float, double, double);
        break;
    default:
        SERIAL_INTEGRAL(double, double, double);
        break;
    }
}

/* Source index of position i under border b, or -1 (ZERO outside). */
static int64_t border_index(int64_t i, int64_t n, parsum_border b)
{
    if (i >= 0 && i < n)
        return i;
    switch (b) {
    case PARSUM_BORDER_ZERO: return -1;
    case PARSUM_BORDER_CLAMP: return i < 0 ? 0 : n - 1;
    case PARSUM_BORDER_WRAP: return ((i % n) + n) % n;
    case PARSUM_BORDER_REFLECT: {
        int64_t p = 2 * n, k = ((i % p) + p) % p;
        return k < n ? k : p - 1 - k;
    }
    default: {
        if (n == 1)
            return 0;
        int64_t p = 2 * n - 2, k = ((i % p) + p) % p;
        return k < n ? k : p - k;
    }
    }
}

/* Running column sums V (add the row entering, drop the row leaving),
 * then a running window along each row over an index table. */
#define SERIAL_BOX(S, ACC, STORE)                                           \
    do {                                                                    \
        ACC *V_ = (ACC *)col;                                               \
        memset(V_, 0, w * sizeof *V_);                                      \
        for (int64_t e = -r; e <= r; e++) {                                 \
            int64_t m = border_index(e, (int64_t)h, b);                     \
            const S *in_ = m < 0 ? NULL : (const S *)row_at(src, (size_t)m); \
            for (size_t x = 0; in_ != NULL && x < w; x++)                   \
                V_[x] += (ACC)in_[x];                                       \
        }                                                                   \
        for (size_t y = 0; y < h; y++) {                                    \
            if (y > 0) {                                                    \
                int64_t mi = border_index((int64_t)y + r, (int64_t)h, b);   \
                int64_t mo = border_index((int64_t)y - 1 - r, (int64_t)h, b); \
                const S *a_ = mi < 0 ? NULL : (const S *)row_at(src, (size_t)mi); \
                const S *o_ = mo < 0 ? NULL : (const S *)row_at(src, (size_t)mo); \
                for (size_t x = 0; x < w; x++)                              \
                    V_[x] += (a_ ? (ACC)a_[x] : 0) - (o_ ? (ACC)o_[x] : 0); \
            }                                                               \
            S *d_ = (S *)row_at(dst, y);                                    \
            ACC s_ = 0;                                                     \
            for (int64_t k = 0; k < 2 * r + 1; k++)                         \
                s_ += xmap[k] < 0 ? 0 : V_[xmap[k]];                        \
            for (size_t x = 0; x < w; x++) {                                \
                STORE;                                                      \
                int64_t ni = xmap[(int64_t)x + 2 * r + 1], no = xmap[x];    \
                s_ += (ni < 0 ? 0 : V_[ni]) - (no < 0 ? 0 : V_[no]);        \
            }                                                               \
        }                                                                   \
    } while (0)

static void *row_at(const parsum_image *im, size_t y)
{
    return (char *)im->data + y * im->pitch;
}

/* floor((s + area / 2) / area). */
static int64_t round_mean(int64_t s, int64_t area)
{
    int64_t a = s + area / 2, q = a / area;
    return (a % area != 0 && a < 0) ? q - 1 : q;
}

static void serial_box(const parsum_image *src, const parsum_image *dst,
                       int64_t r, parsum_border b, void *col, int64_t *xmap)
{
    size_t w = src->width, h = src->height;
    int64_t area = (2 * r + 1) * (2 * r + 1);
    for (int64_t k = 0; k < (int64_t)w + 2 * r + 1; k++)
        xmap[k] = border_index(k - r, (int64_t)w, b);
    switch (src->dtype) {
    case PARSUM_U8:
        SERIAL_BOX(uint8_t, int64_t, d_[x] = (uint8_t)round_mean(s_, area));
        break;
    case PARSUM_U16:
        SERIAL_BOX(uint16_t, int64_t, d_[x] = (uint16_t)round_mean(s_, area));
        break;
    case PARSUM_I32:
        SERIAL_BOX(int32_t, int64_t, d_[x] = (int32_t)round_mean(s_, area));
        break;
    case PARSUM_F32:
        SERIAL_BOX(float, double, d_[x] = (float)(s_ / (double)area));
        break;
    default:
        SERIAL_BOX(double, double, d_[x] = s_ / (double)area);
        break;
    }
}

/* ---- the contestants ---------------------------------------------------- */

static int report_error(const img_bench *d, parsum_status st)
{
    fprintf(stderr, "parsum bench: %s: %s\n", parsum_status_name(st),
            parsum_last_error(d->ctx));
    return 1;
}

typedef struct serial_scratch {
    void *col;
    int64_t *xmap;
} serial_scratch;

static parsum_status run_parsum(img_bench *d)
{
    if (d->integral)
        return parsum_integral(d->ctx, &d->src, &d->out,
                               d->pair.squared ? PARSUM_INTEGRAL_SQUARED : 0,
                               NULL);
    return parsum_box_filter(d->ctx, &d->src, &d->out, d->radius, d->radius,
                             d->border);
}

static void run_serial(img_bench *d, serial_scratch *s)
{
    if (d->integral)
        serial_integral(&d->src, &d->out, d->pair.squared);
    else
        serial_box(&d->src, &d->out, (int64_t)d->radius, d->border, s->col,
                   s->xmap);
}

/* One round: t[k] for each part, in seconds. The copies move d->moved
 * bytes: half of them read from one half of out, written to the other. */
static int time_round(img_bench *d, serial_scratch *s, double t[NPARTS])
{
    size_t half = d->moved / 2 < d->out_bytes / 2 ? d->moved / 2
                                                  : d->out_bytes / 2;
    unsigned char *o = (unsigned char *)d->out.data;
    for (int k = 0; k < NPARTS; k++) {
        parsum_status st = PARSUM_OK;
        pb_scrub_run(&d->scrub, d->threads);
        double t0 = pb_now();
        switch (k) {
        case 0: st = run_parsum(d); break;
        case 1: run_serial(d, s); break;
        case 2: pb_copy(o + d->out_bytes - half, o, half, d->threads); break;
        default:
            pb_copy_stream(o + d->out_bytes - half, o, half, d->threads);
            break;
        }
        t[k] = pb_now() - t0;
        /* a copy of fewer bytes than moved (a small out): scale it */
        if (k >= 2 && 2 * half < d->moved)
            t[k] *= (double)d->moved / (double)(2 * half);
        if (st != PARSUM_OK)
            return report_error(d, st);
    }
    return 0;
}

static int measure(img_bench *d, serial_scratch *s, img_result *r)
{
    double t[NPARTS];
    if (time_round(d, s, t) != 0 || time_round(d, s, t) != 0)
        return 1;
    int reps = d->args->reps > 0 ? d->args->reps
                                 : pb_auto_reps(t[0] + t[1] + t[2] + t[3]);
    double *v = (double *)malloc(NPARTS * (size_t)reps * sizeof *v);
    if (v == NULL) {
        fprintf(stderr, "parsum bench: out of memory for %d timings\n", reps);
        return 1;
    }
    for (int i = 0; i < reps; i++) {
        if (time_round(d, s, t) != 0) {
            free(v);
            return 1;
        }
        for (int k = 0; k < NPARTS; k++)
            v[(size_t)k * (size_t)reps + (size_t)i] = t[k];
    }
    for (int k = 0; k < NPARTS; k++)
        r->t[k] = pb_median(v + (size_t)k * (size_t)reps, reps);
    r->reps = reps;
    free(v);
    return 0;
}

/* Sample i of out as a double. */
static double out_sample(const img_bench *d, size_t i)
{
    size_t w = d->out.width;
    const char *row = (const char *)row_at(&d->out, i / w);
    size_t x = i % w;
    switch (d->out.dtype) {
    case PARSUM_F32: return ((const float *)(const void *)row)[x];
    case PARSUM_F64: return ((const double *)(const void *)row)[x];
    default: return 0;
    }
}

/* parsum's out against the serial loop's: integers by checksum, floats by
 * a sample of 65536 entries (relative difference). */
static int verify(img_bench *d, serial_scratch *s, img_result *r)
{
    parsum_status st = run_parsum(d);
    if (st != PARSUM_OK)
        return report_error(d, st);
    int fl = d->out.dtype == PARSUM_F32 || d->out.dtype == PARSUM_F64;
    size_t count = d->out.width * d->out.height, step = count / 65536 + 1;
    uint64_t got = pb_checksum(d->out.data, d->out_bytes, d->threads);
    double *keep = (double *)malloc((count / step + 1) * sizeof *keep);
    if (keep == NULL)
        return 1;
    for (size_t i = 0, k = 0; fl && i < count; i += step)
        keep[k++] = out_sample(d, i);
    run_serial(d, s);
    r->check = 0;
    int bad = !fl && got != pb_checksum(d->out.data, d->out_bytes,
                                        d->threads);
    for (size_t i = 0, k = 0; fl && i < count; i += step, k++) {
        double want = out_sample(d, i);
        double e = fabs(keep[k] - want) / (fabs(want) > 1 ? fabs(want) : 1);
        r->check = e > r->check ? e : r->check;
    }
    free(keep);
    /* F32 outputs round two slightly different float64 sums: one unit in
     * the last place apart at most */
    double tol = d->out.dtype == PARSUM_F32 ? 0x1p-22 : 1e-9;
    if (bad || r->check > tol) {
        fprintf(stderr, "parsum bench %s: parsum's result differs from the "
                        "serial loop's (%s: %.3g)\n",
                d->args->what, bad ? "checksums" : "relative difference",
                r->check);
        return 1;
    }
    return 0;
}

/* ---- output ------------------------------------------------------------- */

static double gbs(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}

static const char *border_name(parsum_border b)
{
    static const char *const names[] = {"zero", "clamp", "reflect",
                                        "reflect101", "wrap"};
    return (unsigned)b <= PARSUM_BORDER_WRAP ? names[b] : "?";
}

static void case_name(const img_bench *d, char *buf, size_t len)
{
    if (d->integral)
        snprintf(buf, len, "%s->%s%s", parsum_dtype_name(d->pair.src),
                 parsum_dtype_name(d->pair.table),
                 d->pair.squared ? " sq" : "");
    else
        snprintf(buf, len, "%s r=%zu %s", parsum_dtype_name(d->dtype),
                 d->radius, border_name(d->border));
}

static void print_header(FILE *out, const img_bench *d)
{
    fprintf(out, "parsum bench %s: square images, one channel\n",
            d->args->what);
    fprintf(out, "backend cpu (%s), %d threads; Gpx/s = megapixels per ms; "
                 "%%copy = parsum GB/s / the faster copy's GB/s\n",
            pb_cpu_model(), d->threads);
    fprintf(out, "%-22s %6s %10s %7s %7s %10s %8s %8s %7s %5s %s\n", "case",
            "side", "parsum ms", "Gpx/s", "GB/s", "serial ms", "vs ser",
            "copy", "%copy", "reps", "check");
}

static void print_row(FILE *out, const img_bench *d, const img_result *r)
{
    char name[48];
    case_name(d, name, sizeof name);
    double px = (double)d->side * (double)d->side, mb = (double)d->moved;
    double cg = gbs(mb, r->t[2] < r->t[3] ? r->t[2] : r->t[3]);
    fprintf(out, "%-22s %6zu %10.3f %7.3f %7.2f %10.3f %7.2fx %8.2f %6.1f%% "
                 "%5d %s\n",
            name, d->side, r->t[0] * 1e3, px / r->t[0] * 1e-9,
            gbs(mb, r->t[0]), r->t[1] * 1e3,
            r->t[0] > 0 ? r->t[1] / r->t[0] : 0.0, cg,
            cg > 0 ? 100.0 * gbs(mb, r->t[0]) / cg : 0.0, r->reps,
            r->check == 0 ? "exact" : "close");
}

static void print_json(FILE *out, const img_bench *d, const img_result *r)
{
    char name[48];
    case_name(d, name, sizeof name);
    double px = (double)d->side * (double)d->side, mb = (double)d->moved;
    double cg = gbs(mb, r->t[2] < r->t[3] ? r->t[2] : r->t[3]);
    fprintf(out,
            "{\"what\":\"%s\",\"backend\":\"cpu\",\"cpu\":\"%s\","
            "\"case\":\"%s\",\"width\":%zu,\"height\":%zu,\"threads\":%d,"
            "\"reps\":%d,\"bytes\":%.0f,\"parsum_ms\":%.4f,"
            "\"parsum_gpxs\":%.4f,\"parsum_gbs\":%.3f,\"serial_ms\":%.4f,",
            d->args->what, pb_cpu_model(), name, d->side, d->side,
            d->threads, r->reps, mb, r->t[0] * 1e3, px / r->t[0] * 1e-9,
            gbs(mb, r->t[0]), r->t[1] * 1e3);
    fprintf(out,
            "\"copy_gbs\":%.3f,\"stream_copy_gbs\":%.3f,"
            "\"ratio_to_copy\":%.4f,\"speedup_vs_serial\":%.3f,"
            "\"max_rel_diff\":%.3g}\n",
            gbs(mb, r->t[2]), gbs(mb, r->t[3]),
            cg > 0 ? gbs(mb, r->t[0]) / cg : 0.0,
            r->t[0] > 0 ? r->t[1] / r->t[0] : 0.0, r->check);
}

/* ---- driver ------------------------------------------------------------- */

static void free_images(img_bench *d)
{
    parsum_image_free(d->ctx, &d->src);
    parsum_image_free(d->ctx, &d->out);
    pb_scrub_free(&d->scrub);
}

static int alloc_images(img_bench *d)
{
    size_t s = d->side, t = d->integral ? s + 1 : s;
    parsum_dtype sd = d->integral ? d->pair.src : d->dtype;
    parsum_dtype od = d->integral ? d->pair.table : d->dtype;
    parsum_status st = parsum_image_alloc(d->ctx, &d->src, s, s, 1, sd);
    if (st == PARSUM_OK)
        st = parsum_image_alloc(d->ctx, &d->out, t, t, 1, od);
    if (st != PARSUM_OK) {
        report_error(d, st);
        free_images(d);
        return 1;
    }
    size_t sb = s * s * parsum_dtype_size(sd);
    d->out_bytes = t * t * parsum_dtype_size(od);
    d->moved = sb + (d->integral ? d->out_bytes : sb);
    pb_fill_input(d->src.data, s * s, sd, PARSUM_SUM, d->threads);
    memset(d->out.data, 0, d->out_bytes); /* first touch */
    pb_scrub_init(&d->scrub, sb + d->out_bytes, d->threads);
    return 0;
}

static int bench_one(img_bench *d, FILE *out)
{
    img_result r;
    serial_scratch s = {NULL, NULL};
    memset(&r, 0, sizeof r);
    if (alloc_images(d) != 0)
        return 1;
    s.col = malloc(d->side * 8);
    s.xmap = (int64_t *)malloc((d->side + 2 * d->radius + 1) * 8);
    int rc = 1;
    if (s.col != NULL && s.xmap != NULL && measure(d, &s, &r) == 0 &&
        verify(d, &s, &r) == 0) {
        if (d->args->json)
            print_json(out, d, &r);
        else
            print_row(out, d, &r);
        fflush(out);
        rc = 0;
    }
    free(s.col);
    free(s.xmap);
    free_images(d);
    return rc;
}

/* The table a source dtype gets by default (exact for every size). */
static int_pair natural_pair(parsum_dtype src)
{
    int_pair p = {src, PARSUM_F64, 0};
    if (src == PARSUM_U8)
        p.table = PARSUM_U32;
    else if (src == PARSUM_U16)
        p.table = PARSUM_U64;
    else if (src == PARSUM_I32)
        p.table = PARSUM_I64;
    return p;
}

/* floor(sqrt(n)). */
static size_t isqrt(size_t n)
{
    size_t r = (size_t)sqrt((double)n);
    while (r * r > n)
        r--;
    while ((r + 1) * (r + 1) <= n)
        r++;
    return r;
}

static int bench_all(img_bench *d, FILE *out)
{
    static const size_t sweep[] = {1024, 2048, 4096, 8192};
    static const int_pair pairs[] = {{PARSUM_U8, PARSUM_U32, 0},
                                     {PARSUM_U8, PARSUM_F64, 1},
                                     {PARSUM_U16, PARSUM_U64, 0},
                                     {PARSUM_F32, PARSUM_F64, 0}};
    static const size_t radii[] = {1, 3, 7, 15};
    const parsum_bench_args *g = d->args;
    int all_types = (int)g->dtype < 0;
    size_t ncase = d->integral ? (all_types ? 4 : 1)
                               : (g->radius < 0 ? 4 : 1);
    size_t nsize = g->n == 0 ? 4 : 1;
    if (!g->json)
        print_header(out, d);
    for (size_t c = 0; c < ncase; c++)
        for (size_t z = 0; z < nsize; z++) {
            d->side = g->n == 0 ? sweep[z] : isqrt(g->n);
            if (d->integral)
                d->pair = all_types ? pairs[c] : natural_pair(g->dtype);
            d->dtype = all_types ? PARSUM_U8 : g->dtype;
            d->radius = g->radius < 0 ? radii[c] : (size_t)g->radius;
            d->border = (parsum_border)g->border;
            if (bench_one(d, out) != 0)
                return 1;
        }
    return 0;
}

int parsum_bench_cpu_image(const parsum_bench_args *args, FILE *out)
{
    img_bench d;
    memset(&d, 0, sizeof d);
    d.args = args;
    d.integral = strcmp(args->what, "integral") == 0;
    if (args->n > ((size_t)1 << 32)) {
        fprintf(stderr, "parsum bench %s: --n is the pixel count of a "
                        "square image, at most 2^32\n",
                args->what);
        return 2;
    }
    parsum_status st = parsum_context_create(&d.ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench: %s: cannot create a CPU context\n",
                parsum_status_name(st));
        return 1;
    }
    int rc = 1;
    st = parsum_context_set_threads(d.ctx, args->threads);
    if (st != PARSUM_OK) {
        report_error(&d, st);
    } else {
        d.threads = parsum_context_threads(d.ctx);
        rc = bench_all(&d, out);
    }
    parsum_context_destroy(d.ctx);
    return rc;
}
