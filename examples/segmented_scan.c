/*
 * segmented_scan.c - a segmented scan with packed head flags (the worked
 * example of the lecture notes), the same segments given as offsets for a
 * segmented reduce, and a reduce by key. Runs on the GPU when one is
 * present (PARSUM_BACKEND_AUTO), else on the CPU.
 */
#include <parsum.h>
#include <stdio.h>

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "%s: %s\n", parsum_status_name(st), parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(void)
{
    enum { N = 16, NSEG = 5 };
    const int32_t a[N] = {3, 1, 4, 1, 5, 2, 1, 3, 4, 0, 2, 6, 1, 0, 3, 4};
    /* Heads at elements 0, 3, 9, 11 and 12: bit i of word i / 32, least
     * significant bit first. */
    const uint32_t heads = (1u << 0) | (1u << 3) | (1u << 9) | (1u << 11) |
                           (1u << 12);
    const uint64_t offsets[NSEG + 1] = {0, 3, 9, 11, 12, 16};
    const uint32_t keys[N] = {7, 7, 7, 2, 2, 2, 2, 2, 2, 9, 9, 4, 5, 5, 5, 5};

    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_AUTO);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    /* Data live in the context's memory space (device memory on a GPU). */
    void *d_a = NULL, *d_out = NULL, *d_heads = NULL, *d_off = NULL,
         *d_keys = NULL, *d_kout = NULL;
    size_t *d_runs = NULL;
    st = parsum_alloc(ctx, &d_a, sizeof a);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &d_out, sizeof a);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &d_heads, sizeof heads);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &d_off, sizeof offsets);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &d_keys, sizeof keys);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &d_kout, sizeof keys);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, (void **)&d_runs, sizeof *d_runs);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, d_a, a, sizeof a, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, d_heads, &heads, sizeof heads,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, d_off, offsets, sizeof offsets,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, d_keys, keys, sizeof keys,
                         PARSUM_COPY_HOST_TO_CONTEXT);

    /* 1. Segmented scan with packed head flags. */
    parsum_segments seg = {PARSUM_SEG_FLAGS, d_heads, 0, NULL, 0};
    int32_t out[N];
    if (st == PARSUM_OK)
        st = parsum_segmented_scan(ctx, d_a, d_out, N, PARSUM_I32, PARSUM_SUM,
                                   &seg, PARSUM_INCLUSIVE);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, out, d_out, sizeof out,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("segmented scan:");
    for (int i = 0; i < N; i++)
        printf(" %d", (int)out[i]); /* 3 4 8 1 6 8 9 12 16 0 2 6 1 1 4 8 */
    printf("\n");

    /* 2. One total per segment, the segments given as offsets. */
    st = parsum_segmented_reduce(ctx, d_a, d_out, d_off, NSEG, PARSUM_I32,
                                 PARSUM_SUM);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, out, d_out, NSEG * sizeof out[0],
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("segment totals:");
    for (int i = 0; i < NSEG; i++)
        printf(" %d", (int)out[i]); /* 8 16 2 6 8 */
    printf("\n");

    /* 3. Reduce by key: runs of equal keys (the count may stay on the
     * device; here it is copied back). */
    uint32_t kout[N];
    size_t runs = 0;
    st = parsum_reduce_by_key(ctx, d_keys, PARSUM_U32, d_a, N, PARSUM_I32,
                              PARSUM_MAX, d_kout, d_out, d_runs);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, &runs, d_runs, sizeof runs,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, kout, d_kout, runs * sizeof kout[0],
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, out, d_out, runs * sizeof out[0],
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("max by key:");
    for (size_t r = 0; r < runs; r++)
        printf(" %u:%d", (unsigned)kout[r], (int)out[r]); /* 7:4 2:5 9:2 4:6 5:4 */
    printf("\n");

    parsum_free(ctx, d_a);
    parsum_free(ctx, d_out);
    parsum_free(ctx, d_heads);
    parsum_free(ctx, d_off);
    parsum_free(ctx, d_keys);
    parsum_free(ctx, d_kout);
    parsum_free(ctx, d_runs);
    parsum_context_destroy(ctx);
    return 0;
}
