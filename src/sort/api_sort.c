/*
 * api_sort.c - parsum_sort, parsum_sort_indices and parsum_segmented_sort:
 * argument checks, then the backend's radix sort slots (parsum.h,
 * "Sorting"; the backends' strategies are in src/sort/README.md).
 */
#include "core/api_check.h"
#include "core/internal.h"

#include <string.h>

#define CHECK PARSUM__CHECK

/* The buffers of one call, for the overlap rule: an output may equal its
 * own input (in place) and must be apart from everything else. */
typedef struct sort_buf {
    const char *what;
    const void *p;
    size_t bytes;
    int in_place_of; /* index of the input it may equal, or -1 */
    bool out;
} sort_buf;

static parsum_status check_desc(parsum_context *ctx, const char *fn,
                                const parsum_sort_desc *desc,
                                parsum__sort_args *a)
{
    if (desc == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: desc is NULL",
                            fn);
    if (!parsum__dtype_valid(desc->key_dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: desc->key_dtype = %d is not a parsum_dtype",
                            fn, (int)desc->key_dtype);
    if (desc->value_size > PARSUM_SORT_MAX_VALUE_SIZE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: desc->value_size = %zu; values of at most "
                            "%d bytes can be sorted (move larger ones with "
                            "parsum_sort_indices)",
                            fn, desc->value_size, PARSUM_SORT_MAX_VALUE_SIZE);
    if ((desc->flags & ~PARSUM_DESCENDING) != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: desc->flags = 0x%x has bits other than "
                            "PARSUM_DESCENDING",
                            fn, desc->flags);
    unsigned kbits = 8u * (unsigned)parsum_dtype_size(desc->key_dtype);
    unsigned begin = desc->begin_bit, end = desc->end_bit;
    if (begin == 0 && end == 0)
        end = kbits;
    if (!(begin < end && end <= kbits))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: bit range [desc->begin_bit, desc->end_bit) "
                            "= [%u, %u) is not a non-empty range of the %u "
                            "bits of %s (or 0, 0 for all)",
                            fn, desc->begin_bit, desc->end_bit, kbits,
                            parsum_dtype_name(desc->key_dtype));
    a->fn = fn;
    a->key_dtype = desc->key_dtype;
    a->value_size = desc->value_size;
    a->descending = (desc->flags & PARSUM_DESCENDING) != 0;
    a->begin_bit = begin;
    a->end_bit = end;
    return PARSUM_OK;
}

/* Registers buffer `what` (count elements of size bytes; NULL allowed only
 * when count is 0) after the size, NULL and memory-space checks. */
static parsum_status add_buf(parsum_context *ctx, const char *fn,
                             sort_buf *bufs, int *nb, const char *what,
                             const void *p, size_t count, size_t size,
                             int in_place_of, bool out)
{
    size_t bytes = 0;
    CHECK(parsum__check_region(ctx, fn, what, p, count, "n", size, &bytes));
    bufs[*nb] = (sort_buf){what, p, bytes, in_place_of, out};
    (*nb)++;
    return PARSUM_OK;
}

static parsum_status check_overlaps(parsum_context *ctx, const char *fn,
                                    const sort_buf *bufs, int nb)
{
    for (int i = 0; i < nb; i++) {
        if (!bufs[i].out)
            continue;
        for (int k = 0; k < nb; k++) {
            if (k == i || (bufs[k].out && k > i))
                continue; /* each pair of outputs once */
            CHECK(parsum__check_disjoint(ctx, fn, bufs[k].what, bufs[k].p,
                                         bufs[k].bytes, bufs[i].what,
                                         bufs[i].p, bufs[i].bytes,
                                         bufs[i].in_place_of == k));
        }
    }
    return PARSUM_OK;
}

/* The key and value buffers of every sort (indices: values_out is perm). */
static parsum_status check_data(parsum_context *ctx, const char *fn,
                                parsum__sort_args *a, sort_buf *bufs, int *nb)
{
    size_t ks = parsum_dtype_size(a->key_dtype);
    size_t n = a->n;
    bool values = a->value_size > 0;
    CHECK(add_buf(ctx, fn, bufs, nb, "keys_in", a->keys_in, n, ks, -1,
                  false));
    if (a->indices) {
        if (a->values_out == NULL && n > 0)
            return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                                "%s: perm is NULL with n = %zu", fn, n);
        CHECK(add_buf(ctx, fn, bufs, nb, "perm", a->values_out, n,
                      sizeof(uint64_t), -1, true));
    } else if (values) {
        int vin = *nb;
        CHECK(add_buf(ctx, fn, bufs, nb, "values_in", a->values_in, n,
                      a->value_size, -1, false));
        CHECK(add_buf(ctx, fn, bufs, nb, "values_out", a->values_out, n,
                      a->value_size, vin, true));
    }
    /* keys_out may be left out when something else is written. */
    if (a->keys_out != NULL || !values)
        CHECK(add_buf(ctx, fn, bufs, nb, "keys_out", a->keys_out, n, ks, 0,
                      true));
    return PARSUM_OK;
}

static parsum_status run(parsum_context *ctx, const parsum__sort_args *a,
                         const sort_buf *bufs, int nb, bool segmented)
{
    CHECK(check_overlaps(ctx, a->fn, bufs, nb));
    if (a->n == 0)
        return PARSUM_OK;
    parsum_status (*slot)(parsum_context *, const parsum__sort_args *) =
        segmented ? ctx->be->segmented_sort : ctx->be->sort;
    if (slot == NULL)
        return parsum__unsupported(ctx, a->fn);
    return slot(ctx, a);
}

/* The checks parsum_sort and parsum_segmented_sort share: the descriptor,
 * then keys and values (registered in bufs for the overlap rule). */
static parsum_status keys_values(parsum_context *ctx, const char *fn,
                                 const void *keys_in, const void *values_in,
                                 void *keys_out, void *values_out, size_t n,
                                 const parsum_sort_desc *desc,
                                 parsum__sort_args *a, sort_buf *bufs,
                                 int *nb)
{
    memset(a, 0, sizeof *a);
    CHECK(check_desc(ctx, fn, desc, a));
    a->n = n;
    a->keys_in = keys_in;
    a->keys_out = keys_out;
    if (a->value_size > 0) {
        a->values_in = values_in;
        a->values_out = values_out;
    }
    return check_data(ctx, fn, a, bufs, nb);
}

parsum_status parsum_sort(parsum_context *ctx, const void *keys_in,
                          const void *values_in, void *keys_out,
                          void *values_out, size_t n,
                          const parsum_sort_desc *desc)
{
    static const char fn[] = "parsum_sort";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__sort_args a;
    sort_buf bufs[4];
    int nb = 0;
    CHECK(keys_values(ctx, fn, keys_in, values_in, keys_out, values_out, n,
                      desc, &a, bufs, &nb));
    return run(ctx, &a, bufs, nb, false);
}

parsum_status parsum_sort_indices(parsum_context *ctx, const void *keys_in,
                                  void *keys_out, uint64_t *perm, size_t n,
                                  const parsum_sort_desc *desc)
{
    static const char fn[] = "parsum_sort_indices";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__sort_args a;
    memset(&a, 0, sizeof a);
    CHECK(check_desc(ctx, fn, desc, &a));
    if (a.value_size != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: desc->value_size = %zu; the permutation is "
                            "the only value here (set it to 0)",
                            fn, a.value_size);
    a.n = n;
    a.keys_in = keys_in;
    a.keys_out = keys_out;
    a.indices = true;
    a.values_out = perm;
    a.value_size = sizeof(uint64_t);
    sort_buf bufs[4];
    int nb = 0;
    CHECK(check_data(ctx, fn, &a, bufs, &nb));
    return run(ctx, &a, bufs, nb, false);
}

parsum_status parsum_segmented_sort(parsum_context *ctx, const void *keys_in,
                                    const void *values_in, void *keys_out,
                                    void *values_out, size_t n,
                                    const uint64_t *offsets,
                                    size_t num_segments,
                                    const parsum_sort_desc *desc)
{
    static const char fn[] = "parsum_segmented_sort";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__sort_args a;
    sort_buf bufs[5];
    int nb = 0;
    CHECK(keys_values(ctx, fn, keys_in, values_in, keys_out, values_out, n,
                      desc, &a, bufs, &nb));
    a.offsets = offsets;
    a.num_segments = num_segments;
    size_t off_bytes = 0;
    CHECK(parsum__check_offsets_ptr(ctx, fn, "offsets", offsets,
                                    num_segments, "num_segments",
                                    &off_bytes));
    bufs[nb++] = (sort_buf){"offsets", offsets, off_bytes, -1, false};
    if (ctx->kind == PARSUM_BACKEND_CPU) {
        uint64_t last;
        CHECK(parsum__check_offsets_values(ctx, fn, "offsets", offsets,
                                           num_segments, true, n, &last));
    }
    return run(ctx, &a, bufs, nb, true);
}
