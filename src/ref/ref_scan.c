/* ref_scan.c - serial reduce and scan (see ref.h). The scan walks the
 * sequence in scan order (backwards for PARSUM_REVERSE) keeping a running
 * value `acc` that is always the left operand. */
#include "ref.h"

#include "../core/scalar_ops.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUILTIN 8

void parsum__ref_reduce(const void *in, size_t n, parsum_dtype dtype,
                        parsum_op op, void *result)
{
    size_t size = parsum_dtype_size(dtype);
    /* in[0] (+) ... (+) in[n-1], the identity only for n == 0: for floats
     * the identity is not exact (0.0 + -0.0 is +0.0; MIN(+inf, NaN) is
     * +inf where the NaN alone would stay NaN). */
    unsigned char acc[MAX_BUILTIN];
    const unsigned char *p = in;
    if (n == 0) {
        parsum_op_identity(dtype, op, result);
        return;
    }
    memcpy(acc, p, size);
    for (size_t i = 1; i < n; i++)
        parsum__combine_scalar(dtype, op, acc, p + i * size, acc);
    memcpy(result, acc, size);
}

void parsum__ref_scan(const void *in, void *out, size_t n,
                      parsum_dtype dtype, parsum_op op, unsigned flags)
{
    size_t size = parsum_dtype_size(dtype);
    const unsigned char *src = in;
    unsigned char *dst = out;
    bool exclusive = (flags & PARSUM_EXCLUSIVE) != 0;
    bool reverse = (flags & PARSUM_REVERSE) != 0;
    unsigned char acc[MAX_BUILTIN], x[MAX_BUILTIN];
    parsum_op_identity(dtype, op, acc);
    for (size_t k = 0; k < n; k++) {
        size_t i = reverse ? n - 1 - k : k;
        memcpy(x, src + i * size, size); /* read before an in-place write */
        /* The first element is copied, never combined with the identity
         * (for float SUM, 0.0 + -0.0 would turn -0.0 into +0.0), so that
         * an exclusive scan is exactly the inclusive one shifted. */
        if (exclusive)
            memcpy(dst + i * size, acc, size);
        if (k == 0)
            memcpy(acc, x, size);
        else
            parsum__combine_scalar(dtype, op, acc, x, acc);
        if (!exclusive)
            memcpy(dst + i * size, acc, size);
    }
}

void parsum__ref_reduce_custom(const void *in, size_t n,
                               const parsum_custom_op *op, void *result)
{
    /* result is the accumulator; combine may alias out and a. */
    const unsigned char *p = in;
    memcpy(result, op->identity, op->elem_size);
    for (size_t i = 0; i < n; i++)
        op->combine(result, p + i * op->elem_size, result, op->user);
}

parsum_status parsum__ref_scan_custom(const void *in, void *out, size_t n,
                                      const parsum_custom_op *op,
                                      unsigned flags)
{
    size_t size = op->elem_size;
    unsigned char *acc = malloc(2 * size);
    if (acc == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    unsigned char *x = acc + size;
    const unsigned char *src = in;
    unsigned char *dst = out;
    bool exclusive = (flags & PARSUM_EXCLUSIVE) != 0;
    bool reverse = (flags & PARSUM_REVERSE) != 0;
    memcpy(acc, op->identity, size);
    for (size_t k = 0; k < n; k++) {
        size_t i = reverse ? n - 1 - k : k;
        memcpy(x, src + i * size, size);
        if (exclusive)
            memcpy(dst + i * size, acc, size);
        if (k == 0)
            memcpy(acc, x, size);
        else
            op->combine(acc, x, acc, op->user);
        if (!exclusive)
            memcpy(dst + i * size, acc, size);
    }
    free(acc);
    return PARSUM_OK;
}
