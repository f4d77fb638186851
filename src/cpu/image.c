/*
 * image.c - what the CPU image code shares (the row-kernel table of the
 * instruction set in use, band heights, the chain's wait, channel means)
 * and the box sums of parsum_integral_box_sums / _box_means, which are
 * independent per rectangle: a parallel for over groups of rectangles,
 * each computed exactly as the reference does (same four entries, same
 * order of operations), so the results equal its bits.
 *
 * The table (integral.c) and the box filter (box_filter.c) have files of
 * their own.
 */
#define _POSIX_C_SOURCE 200809L
#include "../core/internal.h"
#include "../ref/ref.h"
#include "cpu.h"
#include "image_kernels.h"
#include "sched.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#define ROUND64(x) (((x) + 63) & ~(size_t)63)

#ifdef PARSUM_ISA_HAVE_generic
extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_generic;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_avx2;
#endif
#ifdef PARSUM_ISA_HAVE_avx512
extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_avx512;
#endif

/* The variant isa.c chose for the other kernels (PARSUM_CPU_ISA applies
 * here too), so one switch forces every path. */
const parsum__cpu_image_kernels *parsum__cpu_image_kernels_get(void)
{
    const char *isa = parsum__cpu_kernels_get()->isa;
#ifdef PARSUM_ISA_HAVE_avx512
    if (strcmp(isa, "avx512") == 0)
        return &parsum__cpu_image_kernels_avx512;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
    if (strcmp(isa, "avx2") == 0)
        return &parsum__cpu_image_kernels_avx2;
#endif
    (void)isa;
    return &parsum__cpu_image_kernels_generic;
}

size_t parsum__image_band_forced(void)
{
    const char *env = getenv("PARSUM_CPU_IMAGE_BAND");
    if (env == NULL || *env == '\0')
        return 0;
    return (size_t)strtoull(env, NULL, 0);
}

size_t parsum__image_band(size_t height, size_t row_bytes)
{
    size_t h = parsum__image_band_forced();
    if (h == 0) {
        h = row_bytes == 0 ? height
                           : (PARSUM__IMAGE_BAND_BYTES + row_bytes - 1) /
                                 row_bytes;
        if (h < 16)
            h = 16;
    }
    return h < height ? h : (height > 0 ? height : 1);
}

void parsum__image_wait(atomic_int *flag)
{
    unsigned spins = 0;
    while (atomic_load_explicit(flag, memory_order_acquire) == 0) {
        if (++spins < 256)
            CPU_RELAX();
        else
            sched_yield(); /* more threads than cores: let the producer run */
    }
}

/* ---- channel means -------------------------------------------------------- */

typedef struct mean_job {
    const parsum_image *src;
    parsum__img_colsum_fn colsum;
    size_t n, band, nbands;
    unsigned char *rows;
    size_t row_bytes;
    double *part; /* per band: one sum per channel */
    atomic_size_t next;
} mean_job;

static void mean_worker(void *arg, int tid, int nt)
{
    mean_job *j = arg;
    const parsum_image *s = j->src;
    size_t C = (size_t)s->channels;
    double *acc = (double *)(void *)(j->rows + (size_t)tid * j->row_bytes);
    (void)nt;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&j->next, 1,
                                             memory_order_relaxed);
        if (b >= j->nbands)
            break;
        size_t y0 = b * j->band, y1 = y0 + j->band;
        if (y1 > s->height)
            y1 = s->height;
        memset(acc, 0, j->n * sizeof *acc);
        j->colsum((const char *)s->data + y0 * s->pitch, s->pitch, y1 - y0,
                  acc, j->n, NULL, NULL);
        for (size_t c = 0; c < C; c++) {
            double t = 0;
            for (size_t i = c; i < j->n; i += C)
                t += acc[i];
            j->part[b * C + c] = t;
        }
    }
}

parsum_status parsum__cpu_image_mean(parsum_context *ctx,
                                     const parsum_image *src, double *mean)
{
    static const char fn[] = "parsum_integral";
    const parsum__cpu_image_kernels *k = parsum__cpu_image_kernels_get();
    mean_job j;
    memset(&j, 0, sizeof j);
    j.src = src;
    j.n = src->width * (size_t)src->channels;
    j.colsum = k->colsum[parsum__pix_of(src->dtype)][PARSUM__ACC_F64][0];
    j.band = parsum__image_band(src->height,
                                j.n * parsum_dtype_size(src->dtype));
    j.nbands = (src->height + j.band - 1) / j.band;
    int nt = ctx->threads < 1 ? 1 : ctx->threads;
    if ((size_t)nt > j.nbands)
        nt = (int)j.nbands;
    j.row_bytes = ROUND64(j.n * sizeof(double));
    size_t part = ROUND64(j.nbands * (size_t)src->channels * sizeof(double));
    unsigned char *p =
        parsum__scratch(ctx, part + (size_t)nt * j.row_bytes, fn);
    if (p == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j.part = (double *)(void *)p;
    j.rows = p + part;
    atomic_init(&j.next, 0);
    parsum__sched_spmd(nt, mean_worker, &j);
    double count = (double)src->width * (double)src->height;
    for (int c = 0; c < src->channels; c++) {
        double t = 0;
        for (size_t b = 0; b < j.nbands; b++)
            t += j.part[b * (size_t)src->channels + (size_t)c];
        mean[c] = t / count;
    }
    return PARSUM_OK;
}

/* ---- box sums ------------------------------------------------------------- */

/* Four table entries per rectangle: the reference's loop is already the
 * whole work, so each task runs it on a chunk of the rectangles. */
#define BOX_CHUNK 1024 /* rectangles per task */

static void box_chunk(void *arg, size_t i)
{
    const parsum__box_sums_args *a = arg;
    size_t r0 = i * BOX_CHUNK, r1 = r0 + BOX_CHUNK;
    if (r1 > a->nrect)
        r1 = a->nrect;
    bool ftab = a->table.dtype == PARSUM_F32 || a->table.dtype == PARSUM_F64;
    size_t osz = a->means || ftab ? sizeof(double)
                                  : parsum_dtype_size(a->table.dtype);
    parsum__ref_box_sums(&a->table, a->inclusive, a->means, a->squared,
                         a->offset, a->rects + r0, r1 - r0,
                         (char *)a->out + r0 * (size_t)a->table.channels * osz);
}

parsum_status parsum__cpu_box_sums(parsum_context *ctx,
                                   const parsum__box_sums_args *a)
{
    size_t chunks = (a->nrect + BOX_CHUNK - 1) / BOX_CHUNK;
    parsum__sched_parallel_for(ctx->threads, chunks, box_chunk, (void *)a);
    return PARSUM_OK;
}
