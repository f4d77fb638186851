/*
 * ref_sort.c - the reference sorts: a plain top-down merge sort of input
 * positions, which is stable by construction (ties keep the left run's
 * element first), then a gather of keys and values.
 */
#include "ref.h"

#include "core/internal.h"
#include "sort/sort_keys.h"

#include <stdlib.h>
#include <string.h>

/* The selected ordered bits of key i, flipped for descending order. */
static uint64_t sort_key(const void *keys, size_t i, const parsum_sort_desc *d)
{
    uint64_t k = 0;
    unsigned bits = 8u * (unsigned)parsum_dtype_size(d->key_dtype);
    switch (d->key_dtype) {
    case PARSUM_U8: k = ((const uint8_t *)keys)[i]; break;
    case PARSUM_I8: k = parsum__ord_i8(((const uint8_t *)keys)[i]); break;
    case PARSUM_U16: k = ((const uint16_t *)keys)[i]; break;
    case PARSUM_I16: k = parsum__ord_i16(((const uint16_t *)keys)[i]); break;
    case PARSUM_U32: k = ((const uint32_t *)keys)[i]; break;
    case PARSUM_I32: k = parsum__ord_i32(((const uint32_t *)keys)[i]); break;
    case PARSUM_F32: k = parsum__ord_f32(((const uint32_t *)keys)[i]); break;
    case PARSUM_U64: k = ((const uint64_t *)keys)[i]; break;
    case PARSUM_I64: k = parsum__ord_i64(((const uint64_t *)keys)[i]); break;
    case PARSUM_F64: k = parsum__ord_f64(((const uint64_t *)keys)[i]); break;
    }
    unsigned begin = d->begin_bit, end = d->end_bit;
    if (begin == 0 && end == 0)
        end = bits;
    k >>= begin;
    if (end - begin < 64)
        k &= (UINT64_C(1) << (end - begin)) - 1;
    if (d->flags & PARSUM_DESCENDING)
        k = ~k;
    return k;
}

typedef struct ord {
    uint64_t key;
    uint64_t pos;
} ord;

/* Stable merge sort of a[0 .. n) by key, tmp of n entries. */
static void merge_sort(ord *a, ord *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = a[j].key < a[i].key ? a[j++] : a[i++];
    while (i < h)
        tmp[o++] = a[i++];
    while (j < n)
        tmp[o++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

parsum_status parsum__ref_sort(const void *keys_in, const void *values_in,
                               void *keys_out, void *values_out,
                               uint64_t *perm, size_t n,
                               const parsum_sort_desc *desc,
                               const uint64_t *offsets, size_t num_segments)
{
    ord *a = malloc((n ? n : 1) * sizeof *a);
    ord *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (a == NULL || tmp == NULL) {
        free(a);
        free(tmp);
        return PARSUM_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (ord){sort_key(keys_in, i, desc), i};
    if (offsets == NULL)
        merge_sort(a, tmp, n);
    else
        for (size_t s = 0; s < num_segments; s++)
            merge_sort(a + offsets[s], tmp, offsets[s + 1] - offsets[s]);
    size_t ks = parsum_dtype_size(desc->key_dtype), vs = desc->value_size;
    for (size_t i = 0; i < n; i++) {
        size_t p = a[i].pos;
        if (perm != NULL)
            perm[i] = p;
        if (keys_out != NULL)
            memcpy((char *)keys_out + i * ks, (const char *)keys_in + p * ks,
                   ks);
        if (values_out != NULL && vs > 0)
            memcpy((char *)values_out + i * vs,
                   (const char *)values_in + p * vs, vs);
    }
    free(a);
    free(tmp);
    return PARSUM_OK;
}

/* Stable merge sort of positions by cmp over the elements of in. */
static void merge_sort_cmp(uint64_t *a, uint64_t *tmp, size_t n,
                           const char *in, const parsum_comparator *cmp)
{
    if (n < 2)
        return;
    size_t h = n / 2, es = cmp->elem_size;
    merge_sort_cmp(a, tmp, h, in, cmp);
    merge_sort_cmp(a + h, tmp, n - h, in, cmp);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = cmp->less(in + a[j] * es, in + a[i] * es, cmp->user)
                       ? a[j++]
                       : a[i++];
    while (i < h)
        tmp[o++] = a[i++];
    while (j < n)
        tmp[o++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

parsum_status parsum__ref_sort_custom(const void *in, void *out, size_t n,
                                      const parsum_comparator *cmp)
{
    size_t es = cmp->elem_size;
    if (n == 0)
        return PARSUM_OK;
    uint64_t *a = malloc(n * sizeof *a);
    uint64_t *tmp = malloc(n * sizeof *tmp);
    char *copy = malloc(n * es);
    if (a == NULL || tmp == NULL || copy == NULL) {
        free(a);
        free(tmp);
        free(copy);
        return PARSUM_ERR_OUT_OF_MEMORY;
    }
    memcpy(copy, in, n * es); /* out may be in */
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    merge_sort_cmp(a, tmp, n, copy, cmp);
    for (size_t i = 0; i < n; i++)
        memcpy((char *)out + i * es, copy + a[i] * es, es);
    free(a);
    free(tmp);
    free(copy);
    return PARSUM_OK;
}
