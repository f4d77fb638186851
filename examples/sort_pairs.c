/*
 * sort_pairs.c - radix sorting with parsum: the eight 3-bit keys of the
 * radix sort notes with their positions as values (stable: the two 1s keep
 * their order), the same keys descending, the sorting permutation of a few
 * floats (-0.0 before +0.0, NaN last) and a segmented sort of scores by
 * group. Runs on the GPU when one is present (PARSUM_BACKEND_AUTO), else on
 * the CPU; data go through the context's memory.
 */
#include <parsum.h>
#include <math.h>
#include <stdio.h>

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "%s: %s\n", parsum_status_name(st), parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(void)
{
    const uint32_t keys[8] = {4, 7, 2, 6, 1, 5, 1, 0};
    const uint32_t vals[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const float temps[6] = {21.5f, -0.0f, NAN, 0.0f, -4.0f, 21.5f};
    /* three groups of scores: [0, 3), [3, 3) (empty), [3, 7) */
    const uint16_t scores[7] = {30, 10, 20, 9, 7, 8, 7};
    const uint64_t groups[4] = {0, 3, 3, 7};

    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_AUTO);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    void *k = NULL, *v = NULL, *off = NULL;
    uint64_t *perm = NULL;
    st = parsum_alloc(ctx, &k, 64);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &v, 64);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &off, sizeof groups);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, (void **)&perm, 8 * sizeof *perm);
    if (st != PARSUM_OK)
        return fail(ctx, st);

    /* 1. Keys with values, in place, ascending then descending. */
    uint32_t ks[8], vs[8];
    parsum_sort_desc d = {.key_dtype = PARSUM_U32, .value_size = 4};
    for (int pass = 0; pass < 2 && st == PARSUM_OK; pass++) {
        d.flags = pass ? PARSUM_DESCENDING : 0;
        st = parsum_copy(ctx, k, keys, sizeof keys, PARSUM_COPY_HOST_TO_CONTEXT);
        if (st == PARSUM_OK)
            st = parsum_copy(ctx, v, vals, sizeof vals,
                             PARSUM_COPY_HOST_TO_CONTEXT);
        if (st == PARSUM_OK)
            st = parsum_sort(ctx, k, v, k, v, 8, &d);
        if (st == PARSUM_OK)
            st = parsum_copy(ctx, ks, k, sizeof ks, PARSUM_COPY_CONTEXT_TO_HOST);
        if (st == PARSUM_OK)
            st = parsum_copy(ctx, vs, v, sizeof vs, PARSUM_COPY_CONTEXT_TO_HOST);
        if (st != PARSUM_OK)
            break;
        printf("%s:", pass ? "descending" : "ascending");
        for (int i = 0; i < 8; i++)
            printf(" %u:%u", ks[i], vs[i]);
        printf("\n");
    }
    if (st != PARSUM_OK)
        return fail(ctx, st);

    /* 2. The permutation that sorts the floats. */
    uint64_t p[6];
    parsum_sort_desc fd = {.key_dtype = PARSUM_F32};
    st = parsum_copy(ctx, k, temps, sizeof temps, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_sort_indices(ctx, k, NULL, perm, 6, &fd);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, p, perm, sizeof p, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("order of the floats:");
    for (int i = 0; i < 6; i++)
        printf(" %g", temps[p[i]]);
    printf("\n");

    /* 3. Each group's scores, highest first. */
    uint16_t s[7];
    parsum_sort_desc sd = {.key_dtype = PARSUM_U16, .flags = PARSUM_DESCENDING};
    st = parsum_copy(ctx, k, scores, sizeof scores, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, off, groups, sizeof groups,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_segmented_sort(ctx, k, NULL, k, NULL, 7, off, 3, &sd);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, s, k, sizeof s, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("scores by group:");
    for (int i = 0; i < 7; i++)
        printf("%s %u", i == 0 || i == 3 ? (i ? " |" : "") : "", s[i]);
    printf("\n");

    parsum_free(ctx, k);
    parsum_free(ctx, v);
    parsum_free(ctx, off);
    parsum_free(ctx, perm);
    parsum_context_destroy(ctx);
    return 0;
}
