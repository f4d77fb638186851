/* ref_segmented.c - serial segmented and keyed operations (see ref.h).
 * Every function first finds the segments (runs) one after the other and
 * then treats each as a separate array with the plain references of
 * ref_scan.c: parsum.h defines a segmented scan as exactly that. */
#include "ref.h"

#include <string.h>

bool parsum__ref_flag(const uint32_t *flags, size_t bit_offset, size_t i)
{
    size_t b = bit_offset + i;
    return ((flags[b / 32] >> (b % 32)) & 1u) != 0;
}

/* One end past the segment that starts at head h (< n): the next element
 * with a set head flag, or n. */
static size_t flags_segment_end(const parsum_segments *seg, size_t h,
                                size_t n)
{
    size_t e = h + 1;
    while (e < n && !parsum__ref_flag(seg->flags, seg->flags_bit_offset, e))
        e++;
    return e;
}

/* One end past the run of keys equal to keys[h]. */
static size_t key_run_end(const unsigned char *keys, size_t ks, size_t h,
                          size_t n)
{
    size_t e = h + 1;
    while (e < n && memcmp(keys + e * ks, keys + h * ks, ks) == 0)
        e++;
    return e;
}

static parsum_status scan_piece(const unsigned char *in, unsigned char *out,
                                size_t len, parsum_dtype dtype, parsum_op op,
                                const parsum_custom_op *custom,
                                unsigned flags)
{
    if (custom != NULL)
        return parsum__ref_scan_custom(in, out, len, custom, flags);
    parsum__ref_scan(in, out, len, dtype, op, flags);
    return PARSUM_OK;
}

parsum_status parsum__ref_seg_scan(const void *in, void *out, size_t n,
                                   parsum_dtype dtype, parsum_op op,
                                   const parsum_custom_op *custom,
                                   const parsum_segments *seg,
                                   unsigned flags)
{
    size_t size = custom != NULL ? custom->elem_size : parsum_dtype_size(dtype);
    const unsigned char *src = in;
    unsigned char *dst = out;
    parsum_status st = PARSUM_OK;
    if (seg->kind == PARSUM_SEG_OFFSETS) {
        for (size_t s = 0; s < seg->num_segments && st == PARSUM_OK; s++) {
            size_t h = (size_t)seg->offsets[s];
            size_t len = (size_t)(seg->offsets[s + 1] - seg->offsets[s]);
            st = scan_piece(src + h * size, dst + h * size, len, dtype, op,
                            custom, flags);
        }
        return st;
    }
    for (size_t h = 0; h < n && st == PARSUM_OK;) {
        size_t e = flags_segment_end(seg, h, n);
        st = scan_piece(src + h * size, dst + h * size, e - h, dtype, op,
                        custom, flags);
        h = e;
    }
    return st;
}

void parsum__ref_seg_reduce(const void *in, void *out,
                            const uint64_t *offsets, size_t num_segments,
                            parsum_dtype dtype, parsum_op op,
                            const parsum_custom_op *custom)
{
    size_t size = custom != NULL ? custom->elem_size : parsum_dtype_size(dtype);
    const unsigned char *src = in;
    unsigned char *dst = out;
    for (size_t s = 0; s < num_segments; s++) {
        const unsigned char *p = src + (size_t)offsets[s] * size;
        size_t len = (size_t)(offsets[s + 1] - offsets[s]);
        /* Both give the identity for an empty segment. */
        if (custom != NULL)
            parsum__ref_reduce_custom(p, len, custom, dst + s * size);
        else
            parsum__ref_reduce(p, len, dtype, op, dst + s * size);
    }
}

void parsum__ref_scan_by_key(const void *keys, parsum_dtype key_dtype,
                             const void *in, void *out, size_t n,
                             parsum_dtype dtype, parsum_op op,
                             unsigned flags)
{
    size_t ks = parsum_dtype_size(key_dtype), size = parsum_dtype_size(dtype);
    const unsigned char *src = in;
    unsigned char *dst = out;
    for (size_t h = 0; h < n;) {
        size_t e = key_run_end(keys, ks, h, n);
        parsum__ref_scan(src + h * size, dst + h * size, e - h, dtype, op,
                         flags);
        h = e;
    }
}

size_t parsum__ref_reduce_by_key(const void *keys_in, parsum_dtype key_dtype,
                                 const void *values_in, size_t n,
                                 parsum_dtype dtype, parsum_op op,
                                 void *keys_out, void *values_out)
{
    size_t ks = parsum_dtype_size(key_dtype), size = parsum_dtype_size(dtype);
    const unsigned char *keys = keys_in, *values = values_in;
    unsigned char *kout = keys_out, *vout = values_out;
    size_t runs = 0;
    for (size_t h = 0; h < n; runs++) {
        size_t e = key_run_end(keys, ks, h, n);
        memcpy(kout + runs * ks, keys + h * ks, ks);
        parsum__ref_reduce(values + h * size, e - h, dtype, op,
                           vout + runs * size);
        h = e;
    }
    return runs;
}

void parsum__ref_offsets_to_flags(const uint64_t *offsets,
                                  size_t num_segments, size_t n,
                                  uint32_t *flags)
{
    size_t words = n / 32 + (n % 32 != 0);
    memset(flags, 0, words * sizeof *flags);
    if (n == 0)
        return;
    flags[0] = 1u; /* element 0 always starts a segment */
    /* Empty segments at the end start at n: no element, no bit. */
    for (size_t s = 0; s < num_segments; s++)
        if (offsets[s] < n)
            flags[offsets[s] / 32] |= 1u << (offsets[s] % 32);
}

size_t parsum__ref_flags_to_offsets(const parsum_segments *seg, size_t n,
                                    uint64_t *offsets)
{
    size_t k = 0;
    offsets[0] = 0;
    if (n == 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if (parsum__ref_flag(seg->flags, seg->flags_bit_offset, i))
            offsets[++k] = i;
    offsets[++k] = n;
    return k;
}
