/*
 * api_sort_custom.c - parsum_sort_custom: argument checks (parsum.h,
 * "Sorting"), then the iterative quicksort of src/sort/quicksort.c, which
 * composes the backend's comparison-sort slots with its segmented scan.
 */
#include "core/api_check.h"
#include "core/internal.h"
#include "sort/quicksort.h"

#include <string.h>

#define CHECK PARSUM__CHECK

/* The comparator's fields the context's backend needs. */
static parsum_status check_comparator(parsum_context *ctx, const char *fn,
                                      const parsum_comparator *cmp)
{
    if (cmp == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: cmp is NULL",
                            fn);
    if (cmp->elem_size == 0 || cmp->elem_size > PARSUM_CUSTOM_MAX_ELEM_SIZE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: cmp->elem_size = %zu is outside 1..%d", fn,
                            cmp->elem_size, PARSUM_CUSTOM_MAX_ELEM_SIZE);
    if (ctx->kind == PARSUM_BACKEND_CPU && cmp->less == NULL)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: cmp->less is NULL (the CPU backend needs "
                            "the C callback)",
                            fn);
    if (ctx->kind == PARSUM_BACKEND_CUDA) {
        /* cuda_type NULL reads as "" (a built-in type), as for custom
         * operators; cuda_user NULL is an order that reads nothing else. */
        const char *missing = cmp->cuda_type_name == NULL ? "cuda_type_name"
                              : cmp->cuda_less == NULL    ? "cuda_less"
                                                          : NULL;
        if (missing != NULL)
            return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: cmp->%s is NULL; a CUDA context needs "
                                "the order as CUDA source (cuda_type, "
                                "cuda_type_name, cuda_less)",
                                fn, missing);
        if (cmp->elem_size > PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE)
            return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                                "%s: cmp->elem_size = %zu; elements sorted "
                                "on a CUDA context may have at most %d bytes",
                                fn, cmp->elem_size,
                                PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE);
    }
    return PARSUM_OK;
}

parsum_status parsum_sort_custom(parsum_context *ctx, const void *in,
                                 void *out, size_t n,
                                 const parsum_comparator *cmp)
{
    static const char fn[] = "parsum_sort_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_comparator(ctx, fn, cmp));
    CHECK(parsum__check_buffers(ctx, fn, in, out, n, cmp->elem_size, true));
    if (n == 0)
        return PARSUM_OK;
    const parsum__backend *be = ctx->be;
    if (be->qsort_classify == NULL || be->qsort_scatter == NULL ||
        be->qsort_finish == NULL || be->seg_scan == NULL)
        return parsum__unsupported(ctx, fn);
    return parsum__quicksort(ctx, fn, in, out, n, cmp, NULL);
}
