/*
 * select_compact.c - the selection examples of the lecture notes: stream
 * compaction of the nonzero values (parsum_select with a predicate), the
 * upper/lower case separation of a string (parsum_partition, stable, and
 * parsum_partition_unstable in one pass), one
 * pass of radix sort (parsum_split_by_bit on bit 0) and a run-length
 * encoding. Runs on the GPU when one is present (PARSUM_BACKEND_AUTO),
 * else on the CPU; data and counts go through the context's memory.
 */
#include <parsum.h>
#include <stdio.h>
#include <string.h>

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "%s: %s\n", parsum_status_name(st), parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(void)
{
    const int32_t a[16] = {0, 7, 0, 0, 4, 0, 1, 0, 0, 0, 8, 4, 0, 0, 6, 0};
    const char text[] = "aPreREcFIoXoSUIMS";
    const uint32_t keys[8] = {4, 7, 2, 6, 1, 5, 1, 0}; /* 100 111 010 ... */
    const char runs[] = "aaabccddddde";
    enum { NT = sizeof text - 1, NR = sizeof runs - 1 };

    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_AUTO);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    /* One context buffer for every input and one for every output; the
     * counts come back in host memory (the call then waits for them). */
    unsigned char *in = NULL, *out = NULL;
    uint64_t *len = NULL;
    st = parsum_alloc(ctx, (void **)&in, 256);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, (void **)&out, 256);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, (void **)&len, NR * sizeof *len);
    if (st != PARSUM_OK)
        return fail(ctx, st);

    /* 1. Keep x > 0. */
    parsum_selector positive = {0};
    positive.kind = PARSUM_SELECT_PREDICATE;
    positive.dtype = PARSUM_I32;
    positive.pred = PARSUM_PRED_GT;
    positive.a.i32 = 0;
    int32_t kept[16];
    size_t k = 0;
    st = parsum_copy(ctx, in, a, sizeof a, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_select(ctx, in, out, 16, sizeof(int32_t), &positive, &k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, kept, out, k * sizeof *kept,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("compacted:");
    for (size_t i = 0; i < k; i++)
        printf(" %d", (int)kept[i]);
    printf("\n");

    /* 2. Upper case ('A' <= c < 'Z' + 1) first, each group in order. */
    parsum_selector upper = {0};
    upper.kind = PARSUM_SELECT_PREDICATE;
    upper.dtype = PARSUM_U8;
    upper.pred = PARSUM_PRED_IN_RANGE;
    upper.a.u8 = 'A';
    upper.b.u8 = 'Z' + 1;
    char sep[NT + 1] = {0};
    st = parsum_copy(ctx, in, text, NT, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_partition(ctx, in, out, NT, 1, &upper, &k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, sep, out, NT, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("separated: %.*s %s\n", (int)k, sep, sep + k);
    /* The same in one pass when the order of the rest does not matter
     * (CUB's partition): the lower case ones come reversed. */
    st = parsum_partition_unstable(ctx, in, out, NT, 1, &upper, &k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, sep, out, NT, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("in one pass: %.*s %s\n", (int)k, sep, sep + k);

    /* 3. The split of radix sort: bit 0 clear first, stable. */
    uint32_t split[8];
    st = parsum_copy(ctx, in, keys, sizeof keys, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_split_by_bit(ctx, in, NULL, out, NULL, 8, PARSUM_U32, 0,
                                 0, &k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, split, out, sizeof split,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("split by bit 0 (%zu zeros):", k);
    for (int i = 0; i < 8; i++)
        printf(" %u", (unsigned)split[i]);
    printf("\n");

    /* 4. Run-length encoding: each run's character and length. */
    char chars[NR];
    uint64_t lengths[NR];
    st = parsum_copy(ctx, in, runs, NR, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_run_length_encode(ctx, in, NR, 1, out, len, &k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, chars, out, k, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, lengths, len, k * sizeof *lengths,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("runs of %s:", runs);
    for (size_t r = 0; r < k; r++)
        printf(" %c%llu", chars[r], (unsigned long long)lengths[r]);
    printf("\n");

    parsum_free(ctx, in);
    parsum_free(ctx, out);
    parsum_free(ctx, len);
    parsum_context_destroy(ctx);
    return 0;
}
