/*
 * test_image_kernels.c - the CPU backend's image row kernels
 * (src/cpu/kernels_image.c) of every instruction set this processor runs
 * (AVX2, AVX-512) against the generic ones: the summed-area rows and the
 * box filter's window and division kernels, for every sample and
 * accumulator type, lengths around the vector widths and 1 to 4
 * channels. Split from test_image_cpu_paths.c, which tests the paths
 * that call these kernels against the serial references.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "cpu/image_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the row kernels of every instruction set ------------------------------ */

extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_generic;
#if defined(__x86_64__)
extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_avx2;
extern const parsum__cpu_image_kernels parsum__cpu_image_kernels_avx512;
#endif

/* The variants this processor runs besides generic (the reference here). */
static size_t other_variants(const parsum__cpu_image_kernels **v)
{
    size_t k = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        v[k++] = &parsum__cpu_image_kernels_avx2;
    if (__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        v[k++] = &parsum__cpu_image_kernels_avx512;
#else
    (void)v;
#endif
    return k;
}

static void fill_bytes(tu_rng *r, void *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *)p)[i] = (unsigned char)tu_next(r);
}

/* Float samples must be finite for bitwise comparisons to mean much. */
static void fill_samples(tu_rng *r, void *p, size_t count, int pix)
{
    fill_bytes(r, p, count * 8);
    for (size_t i = 0; pix >= PARSUM__PIX_F32 && i < count; i++) {
        double v = 2 * tu_uniform(r) - 1;
        if (pix == PARSUM__PIX_F32)
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
}

#define KMAX 300 /* samples per row */

/* A row of prefix sums of samples of kind pix in accumulator type acc
 * (what the interior kernels take: their window sums are in range). */
static void fill_prefix(tu_rng *r, void *p, size_t count, int pix, int acc)
{
    uint64_t u = 0;
    double f = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t b = tu_next(r);
        uint64_t x = pix == PARSUM__PIX_U8    ? (uint8_t)b
                     : pix == PARSUM__PIX_U16 ? (uint16_t)b
                                              : (uint64_t)(int64_t)(int32_t)b;
        u += x;
        f += 2 * tu_uniform(r) - 1;
        switch (acc) {
        case PARSUM__ACC_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
        case PARSUM__ACC_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
        case PARSUM__ACC_U64: ((uint64_t *)p)[i] = u; break;
        default: ((double *)p)[i] = f; break;
        }
    }
}

typedef struct kbuf {
    unsigned char src[3][KMAX * 8 + 64], acc[KMAX * 8], out[KMAX * 8 + 64];
    unsigned char mid[KMAX * 8], tmp[KMAX * 2];
    double off[KMAX];
} kbuf;

/* The summed-area kernels of v against generic's: the accumulators (and a
 * fused table row, at every misalignment) bit for bit. */
static void kernels_integral(const parsum__cpu_image_kernels *v, tu_rng *r,
                             size_t n, int C, size_t *failures)
{
    const parsum__cpu_image_kernels *g = &parsum__cpu_image_kernels_generic;
    static kbuf a, b;
    static const size_t pix_size[] = {1, 2, 4, 4, 8};
    for (int pix = 0; pix < PARSUM__PIX_COUNT; pix++)
        for (int acc = PARSUM__ACC_U32; acc <= PARSUM__ACC_F64; acc++)
            for (int sq = 0; sq < 2; sq++) {
                if (v->colsum[pix][acc][sq] == NULL)
                    continue;
                size_t ab = n * parsum__acc_size(acc), pitch = KMAX * 8 + 64;
                size_t shift = tu_below(r, 8) * parsum__acc_size(acc) % 64;
                const double *off = acc == PARSUM__ACC_F64 && tu_below(r, 2)
                                        ? a.off
                                        : NULL;
                for (int k = 0; k < 3; k++)
                    fill_samples(r, a.src[k], KMAX, pix);
                fill_samples(r, a.acc, KMAX, acc == PARSUM__ACC_F64 ? 4 : 0);
                fill_samples(r, a.off, KMAX, PARSUM__PIX_F64);
                memcpy(&b, &a, sizeof a);
                g->colsum[pix][acc][sq](a.src, pitch, 3, a.acc, n, off, a.tmp);
                v->colsum[pix][acc][sq](b.src, pitch, 3, b.acc, n, off, b.tmp);
                int stream = (int)tu_below(r, 2);
                g->rowscan[pix][acc][sq](a.src[1], a.acc, n, C, off, NULL, 0);
                int w = v->rowscan[pix][acc][sq](b.src[1], b.acc, n, C, off,
                                                 b.out + shift, stream);
                bool bad = memcmp(a.acc, b.acc, ab) != 0 ||
                           (w && memcmp(b.out + shift, b.acc, ab) != 0);
                if (acc == PARSUM__ACC_F64) {
                    g->rowscan2[pix][sq](a.src[0], a.src[2], (double *)a.acc,
                                         (double *)a.mid, n, C, off);
                    v->rowscan2[pix][sq](b.src[0], b.src[2], (double *)b.acc,
                                         (double *)b.mid, n, C, off);
                    bad = bad || memcmp(a.acc, b.acc, ab) != 0 ||
                          memcmp(a.mid, b.mid, ab) != 0;
                }
                if (bad)
                    tu_report(failures, "  %s kernels: pix %d (%zu bytes) acc "
                              "%d sq %d n=%zu C=%d stream=%d: not generic's "
                              "bits\n", v->isa, pix, pix_size[pix], acc, sq,
                              n, C, stream);
            }
}

/* The prefix and box filter kernels of v against generic's. */
static void kernels_box(const parsum__cpu_image_kernels *v, tu_rng *r,
                        size_t n, int C, size_t *failures)
{
    const parsum__cpu_image_kernels *g = &parsum__cpu_image_kernels_generic;
    static kbuf a, b;
    for (int acc = 0; acc < PARSUM__ACC_COUNT; acc++) {
        size_t ab = n * parsum__acc_size(acc);
        fill_samples(r, a.acc, KMAX, acc == PARSUM__ACC_F64 ? 4 : 0);
        memcpy(&b, &a, sizeof a);
        g->prefix[acc](a.acc, a.mid, n, C);
        v->prefix[acc](b.acc, b.mid, n, C);
        if (memcmp(a.mid, b.mid, ab) != 0)
            tu_report(failures, "  %s prefix acc %d n=%zu C=%d\n", v->isa,
                      acc, n, C);
    }
    for (int pix = 0; pix < PARSUM__PIX_COUNT; pix++)
        for (int acc = 0; acc < PARSUM__ACC_COUNT; acc++) {
            if (v->box->vupd[pix][acc] == NULL)
                continue;
            size_t ab = n * parsum__acc_size(acc), pb = n * 8;
            for (int k = 0; k < 2; k++)
                fill_samples(r, a.src[k], KMAX, pix);
            fill_samples(r, a.acc, KMAX, acc == PARSUM__ACC_F64 ? 4 : 0);
            fill_prefix(r, a.mid, KMAX, pix, acc);
            memcpy(&b, &a, sizeof a);
            int64_t coef = (int64_t)tu_below(r, 9) - 4;
            g->box->vupd[pix][acc](a.acc, a.src[0], a.src[1], n);
            v->box->vupd[pix][acc](b.acc, b.src[0], b.src[1], n);
            g->box->vaxpy[pix][acc](a.acc, a.src[1], n, coef);
            v->box->vaxpy[pix][acc](b.acc, b.src[1], n, coef);
            /* any window: Q[j + 2] - Q[j - 1] of the mid row, area 9 */
            parsum__div dv;
            uint64_t qmax = pix == PARSUM__PIX_U8 ? 255 : 65535;
            parsum__div_plan(&dv, 9, qmax * 9 + 4, qmax);
            size_t cnt = n > 3 ? n - 3 : 0;
            g->box->interior[pix][acc](a.mid + parsum__acc_size(acc), a.out,
                                  cnt, 2, 1, &dv);
            v->box->interior[pix][acc](b.mid + parsum__acc_size(acc), b.out,
                                  cnt, 2, 1, &dv);
            if (memcmp(a.acc, b.acc, ab) != 0 ||
                memcmp(a.out, b.out, cnt * 8 < pb ? cnt * 8 : pb) != 0)
                tu_report(failures, "  %s box kernels pix %d acc %d n=%zu\n",
                          v->isa, pix, acc, n);
        }
}

/* Every kernel of every variant the processor runs gives generic's bits:
 * integers as exact sums must, and the float kernels are written as
 * scalar code of one order in every variant. Lengths around the vector
 * widths, every channel count. */
static void test_kernel_variants(void **state)
{
    (void)state;
    const parsum__cpu_image_kernels *v[2];
    size_t nv = other_variants(v), failures = 0;
    tu_rng r = tu_rng_for(0x4b, 0, 0, 0);
    if (nv == 0)
        print_message("  (only the generic kernels run here)\n");
    for (size_t k = 0; k < nv; k++)
        for (int C = 1; C <= 4; C++)
            for (size_t w = 1; w * (size_t)C <= KMAX; w += 1 + w / 4) {
                kernels_integral(v[k], &r, w * (size_t)C, C, &failures);
                kernels_box(v[k], &r, w * (size_t)C, C, &failures);
            }
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kernel_variants),
};

PARSUM_TEST_MAIN(test_image_kernels)
{
    tu_init("test_image_kernels");
    if (tu_backend != PARSUM_BACKEND_CPU)
        return tu_finish(TU_SKIP_EXIT); /* CPU internals only */
    return tu_finish(TU_RUN("test_image_kernels", tests));
}
