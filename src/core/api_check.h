/*
 * api_check.h - the argument checks that several public API files share
 * (defined in api_scan.c and api_segmented.c), so that each rule and its message exist once.
 * Every check records a message naming the function `fn` and the argument,
 * and returns the status the public function must return.
 */
#ifndef PARSUM_API_CHECK_H
#define PARSUM_API_CHECK_H

#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* dtype and op known, and op defined on dtype. */
parsum_status parsum__check_dtype_op(parsum_context *ctx, const char *fn,
                                     parsum_dtype dtype, parsum_op op);
/* Scan flags: only PARSUM_EXCLUSIVE and PARSUM_REVERSE bits. */
parsum_status parsum__check_scan_flags(parsum_context *ctx, const char *fn,
                                       unsigned flags);
/* A custom operator: not NULL, elem_size in range, identity and (on a CPU
 * context) combine present. */
parsum_status parsum__check_custom(parsum_context *ctx, const char *fn,
                                   const parsum_custom_op *op);

/* One buffer `what` of `count` elements of `size` bytes (`count_name`
 * names the count in messages, e.g. "n"): the byte count must not
 * overflow, p may be NULL only for count == 0, the buffer may not wrap
 * around the address space, and p must be in the context's memory space.
 * Stores the byte count in *bytes. */
parsum_status parsum__check_region(parsum_context *ctx, const char *fn,
                                   const char *what, const void *p,
                                   size_t count, const char *count_name,
                                   size_t size, size_t *bytes);
/* Buffers a (abytes) and b (bbytes) must not share a byte; with
 * allow_equal, a == b is accepted too (in place). Empty buffers never
 * overlap. The message names b as the offending argument. */
parsum_status parsum__check_disjoint(parsum_context *ctx, const char *fn,
                                     const char *a_what, const void *a,
                                     size_t abytes, const char *b_what,
                                     const void *b, size_t bbytes,
                                     bool allow_equal);
/* in and out of a scan: n elements of size bytes each, identical (in
 * place) or disjoint (has_out false: in only). */
parsum_status parsum__check_buffers(parsum_context *ctx, const char *fn,
                                    const void *in, void *out, size_t n,
                                    size_t size, bool has_out);

/* A CSR offsets array `what` of nseg + 1 values (nseg_name names nseg):
 * not NULL (read even when nseg is 0), its size and memory space. */
parsum_status parsum__check_offsets_ptr(parsum_context *ctx, const char *fn,
                                        const char *what,
                                        const uint64_t *offsets, size_t nseg,
                                        const char *nseg_name, size_t *bytes);
/* Its values, in host memory: offsets[0] == 0, non-decreasing and (want_n)
 * offsets[nseg] == n. *last receives offsets[nseg]. */
parsum_status parsum__check_offsets_values(parsum_context *ctx,
                                           const char *fn, const char *what,
                                           const uint64_t *offsets,
                                           size_t nseg, bool want_n, size_t n,
                                           uint64_t *last);

/* PARSUM_ERR_UNSUPPORTED for a NULL backend slot. */
parsum_status parsum__unsupported(parsum_context *ctx, const char *fn);

#define PARSUM__CHECK(expr)                 \
    do {                                    \
        parsum_status st_ = (expr);         \
        if (st_ != PARSUM_OK)               \
            return st_;                     \
    } while (0)

#endif
