/* api_segmented.c - argument checking for the segmented and keyed
 * operations (parsum.h, "Segmented and keyed operations"), then dispatch
 * to the context's backend. The rules shared with plain scan and reduce
 * come from api_check.h; this file adds the segment descriptions, keys and
 * the extra buffers.
 *
 * Offsets are values in the context's memory space. On a CPU context that
 * is host memory, so the core reads and checks them here (one pass, 8
 * bytes per segment, split over the context's threads); a CUDA context
 * would need a device-to-host copy and a synchronization for that, which
 * parsum.h rules out, so there only the pointers are checked. */
#include "api_check.h"
#include "../cpu/sched.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>

#define CHECK PARSUM__CHECK

/* Offsets are scanned for a decrease this many at a time: the inner loop
 * has no early exit, so it vectorizes; the exact index is searched only
 * in a block known to hold one. */
#define OFFSET_BLOCK 4096

static bool host_offsets(const parsum_context *ctx)
{
    return ctx->kind == PARSUM_BACKEND_CPU;
}

/* The offsets array itself: not NULL (num_segments + 1 values are read
 * even when num_segments is 0), its size, its memory space. */
parsum_status parsum__check_offsets_ptr(parsum_context *ctx, const char *fn,
                                        const char *what,
                                        const uint64_t *offsets, size_t nseg,
                                        const char *nseg_name, size_t *bytes)
{
    if (offsets == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s is NULL (%s + 1 offsets are always read)",
                            fn, what, nseg_name);
    if (nseg == SIZE_MAX)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s = %zu: %s + 1 offsets overflow size_t",
                            fn, nseg_name, nseg, nseg_name);
    char count_name[64];
    snprintf(count_name, sizeof count_name, "%s + 1", nseg_name);
    return parsum__check_region(ctx, fn, what, offsets, nseg + 1, count_name,
                                sizeof(uint64_t), bytes);
}

/* Index of the first s in (i0, i1] with offsets[s] < offsets[s - 1], or
 * 0 if there is none. Branch-free blocks, so that the common case (no
 * decrease) vectorizes. */
static size_t first_decrease_in(const uint64_t *offsets, size_t i0,
                                size_t i1)
{
    for (size_t i = i0; i < i1; i += OFFSET_BLOCK) {
        size_t end = i1 - i > OFFSET_BLOCK ? i + OFFSET_BLOCK : i1;
        unsigned bad = 0;
        for (size_t k = i; k < end; k++)
            bad |= offsets[k + 1] < offsets[k];
        if (!bad)
            continue;
        for (size_t k = i; k < end; k++)
            if (offsets[k + 1] < offsets[k])
                return k + 1;
    }
    return 0;
}

/* The check in parts, on the context's threads: a serial pass over
 * 2^26 offsets (512 MB) took about as long as the whole segmented reduce
 * of one element per segment on the 2-core development machine. */
#define OFFSET_PARTS_MAX 256
#define OFFSET_PAR_MIN ((size_t)1 << 20) /* offsets per call to go parallel */
typedef struct decrease_job {
    const uint64_t *offsets;
    size_t nseg, parts;
    size_t found[OFFSET_PARTS_MAX];
} decrease_job;

static void decrease_part(void *arg, size_t p)
{
    decrease_job *j = (decrease_job *)arg;
    size_t i0, i1;
    parsum__sched_share(j->nseg, (int)p, (int)j->parts, &i0, &i1);
    j->found[p] = i0 < i1 ? first_decrease_in(j->offsets, i0, i1) : 0;
}

/* Index of the first s in [1, nseg] with offsets[s] < offsets[s - 1], or
 * 0 if there is none. */
static size_t first_decrease(const parsum_context *ctx,
                             const uint64_t *offsets, size_t nseg)
{
    int nt = ctx->threads;
    if (nt <= 1 || nseg < OFFSET_PAR_MIN)
        return first_decrease_in(offsets, 0, nseg);
    decrease_job j;
    j.offsets = offsets;
    j.nseg = nseg;
    j.parts = (size_t)nt * 4 < OFFSET_PARTS_MAX ? (size_t)nt * 4
                                                : OFFSET_PARTS_MAX;
    parsum__sched_parallel_for(nt, j.parts, decrease_part, &j);
    for (size_t p = 0; p < j.parts; p++) /* parts in order: the first */
        if (j.found[p] != 0)
            return j.found[p];
    return 0;
}

/* Host offsets: offsets[0] == 0, non-decreasing, and (want_n) the last one
 * equal to n. *last receives offsets[nseg]. */
parsum_status parsum__check_offsets_values(parsum_context *ctx, const char *fn,
                                           const char *what,
                                           const uint64_t *offsets,
                                           size_t nseg, bool want_n, size_t n,
                                           uint64_t *last)
{
    if (offsets[0] != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s[0] = %" PRIu64 "; offsets must start at "
                            "0",
                            fn, what, offsets[0]);
    size_t s = first_decrease(ctx, offsets, nseg);
    if (s != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s[%zu] = %" PRIu64 " is less than %s[%zu] "
                            "= %" PRIu64 "; offsets must be non-decreasing",
                            fn, what, s, offsets[s], what, s - 1,
                            offsets[s - 1]);
    if (want_n && offsets[nseg] != (uint64_t)n)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s[%zu] = %" PRIu64 " but n = %zu; the last "
                            "offset must equal n",
                            fn, what, nseg, offsets[nseg], n);
    *last = offsets[nseg];
    return PARSUM_OK;
}

/* Packed flags of n elements: the words actually read start at word
 * flags_bit_offset / 32, so the backend gets flags advanced to it and a
 * bit offset below 32 (internal.h). *words_bytes: the bytes read. */
static parsum_status check_flags_desc(parsum_context *ctx, const char *fn,
                                      const parsum_segments *seg, size_t n,
                                      parsum_segments *norm,
                                      size_t *words_bytes)
{
    *norm = *seg;
    norm->flags_bit_offset = seg->flags_bit_offset % 32;
    *words_bytes = 0;
    if (n == 0)
        return PARSUM_OK; /* nothing is read: flags may be NULL */
    if (seg->flags == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: seg->flags is NULL but n = %zu", fn, n);
    size_t skip = seg->flags_bit_offset / 32, bit = norm->flags_bit_offset;
    /* ceil((bit + n) / 32) without overflowing bit + n. */
    size_t words = (n - 1) / 32 + (bit + (n - 1) % 32) / 32 + 1;
    if (skip > ((uintptr_t)-1 - (uintptr_t)seg->flags) / sizeof(uint32_t))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: seg->flags_bit_offset = %zu points past the "
                            "end of the address space",
                            fn, seg->flags_bit_offset);
    norm->flags = seg->flags + skip;
    return parsum__check_region(ctx, fn, "seg->flags", norm->flags, words,
                                "the flag word count",
                                sizeof(uint32_t), words_bytes);
}

/* A segment description of n elements. norm is what the backend gets;
 * desc/desc_bytes the memory the description occupies (for overlap). */
static parsum_status check_segments(parsum_context *ctx, const char *fn,
                                    const parsum_segments *seg, size_t n,
                                    parsum_segments *norm, const char **desc,
                                    size_t *desc_bytes)
{
    if (seg == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: seg is NULL",
                            fn);
    if (seg->kind == PARSUM_SEG_FLAGS) {
        *desc = "seg->flags";
        return check_flags_desc(ctx, fn, seg, n, norm, desc_bytes);
    }
    if (seg->kind != PARSUM_SEG_OFFSETS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: seg->kind = %d is not a parsum_seg_kind "
                            "(PARSUM_SEG_FLAGS or PARSUM_SEG_OFFSETS)",
                            fn, (int)seg->kind);
    *norm = *seg;
    *desc = "seg->offsets";
    CHECK(parsum__check_offsets_ptr(ctx, fn, "seg->offsets", seg->offsets,
                                    seg->num_segments, "seg->num_segments",
                                    desc_bytes));
    uint64_t last;
    if (host_offsets(ctx))
        return parsum__check_offsets_values(ctx, fn, "seg->offsets", seg->offsets,
                                            seg->num_segments, true, n, &last);
    return PARSUM_OK;
}

static const void *desc_ptr(const parsum_segments *norm)
{
    return norm->kind == PARSUM_SEG_FLAGS ? (const void *)norm->flags
                                          : (const void *)norm->offsets;
}

/* Both segmented scans once the operator is checked (custom NULL: the
 * built-in dtype and op). */
static parsum_status seg_scan(parsum_context *ctx, const char *fn,
                              const void *in, void *out, size_t n,
                              parsum_dtype dtype, parsum_op op,
                              const parsum_custom_op *custom,
                              const parsum_segments *seg, unsigned flags)
{
    size_t size = custom != NULL ? custom->elem_size : parsum_dtype_size(dtype);
    CHECK(parsum__check_scan_flags(ctx, fn, flags));
    CHECK(parsum__check_buffers(ctx, fn, in, out, n, size, true));
    parsum_segments norm;
    const char *desc = NULL;
    size_t desc_bytes = 0;
    CHECK(check_segments(ctx, fn, seg, n, &norm, &desc, &desc_bytes));
    /* A backend reads the segments while it writes out. */
    CHECK(parsum__check_disjoint(ctx, fn, desc, desc_ptr(&norm), desc_bytes,
                                 "out", out, n * size, false));
    if (ctx->be->seg_scan == NULL)
        return parsum__unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->seg_scan(ctx, in, out, n, dtype, op, custom, &norm, flags);
}

parsum_status parsum_segmented_scan(parsum_context *ctx, const void *in,
                                    void *out, size_t n, parsum_dtype dtype,
                                    parsum_op op, const parsum_segments *seg,
                                    unsigned flags)
{
    static const char fn[] = "parsum_segmented_scan";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    return seg_scan(ctx, fn, in, out, n, dtype, op, NULL, seg, flags);
}

parsum_status parsum_segmented_scan_custom(parsum_context *ctx,
                                           const void *in, void *out,
                                           size_t n,
                                           const parsum_custom_op *op,
                                           const parsum_segments *seg,
                                           unsigned flags)
{
    static const char fn[] = "parsum_segmented_scan_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(parsum__check_custom(ctx, fn, op));
    return seg_scan(ctx, fn, in, out, n, PARSUM_U8, PARSUM_SUM, op, seg,
                    flags);
}

/* The input of a segmented reduce: offsets[num_segments] elements. On a
 * CPU context that count is known; elsewhere it lies in device memory, so
 * in must not be NULL when there are segments (all of them being empty
 * cannot be told), and only its first element is known to be read. */
static parsum_status check_reduce_input(parsum_context *ctx, const char *fn,
                                        const void *in,
                                        const uint64_t *offsets, size_t nseg,
                                        size_t size, size_t *in_bytes)
{
    if (!host_offsets(ctx)) {
        if (in == NULL && nseg > 0)
            return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                                "%s: in is NULL but num_segments = %zu",
                                fn, nseg);
        *in_bytes = in == NULL ? 0 : size;
        if (in != NULL && ctx->be->check_pointer != NULL)
            return ctx->be->check_pointer(ctx, in, fn, "in");
        return PARSUM_OK;
    }
    uint64_t n;
    CHECK(parsum__check_offsets_values(ctx, fn, "offsets", offsets, nseg, false, 0,
                                       &n));
    if (n > SIZE_MAX)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: offsets[num_segments] = %" PRIu64 " elements "
                            "do not fit in size_t",
                            fn, n);
    return parsum__check_region(ctx, fn, "in", in, (size_t)n,
                                "offsets[num_segments]", size, in_bytes);
}

static parsum_status seg_reduce(parsum_context *ctx, const char *fn,
                                const void *in, void *out,
                                const uint64_t *offsets, size_t nseg,
                                parsum_dtype dtype, parsum_op op,
                                const parsum_custom_op *custom)
{
    size_t size = custom != NULL ? custom->elem_size : parsum_dtype_size(dtype);
    size_t off_bytes = 0, out_bytes = 0, in_bytes = 0;
    CHECK(parsum__check_offsets_ptr(ctx, fn, "offsets", offsets, nseg, "num_segments",
                                    &off_bytes));
    CHECK(parsum__check_region(ctx, fn, "out", out, nseg, "num_segments",
                               size, &out_bytes));
    CHECK(check_reduce_input(ctx, fn, in, offsets, nseg, size, &in_bytes));
    CHECK(parsum__check_disjoint(ctx, fn, "in", in, in_bytes, "out", out,
                                 out_bytes, false));
    CHECK(parsum__check_disjoint(ctx, fn, "offsets", offsets, off_bytes,
                                 "out", out, out_bytes, false));
    if (ctx->be->seg_reduce == NULL)
        return parsum__unsupported(ctx, fn);
    if (nseg == 0)
        return PARSUM_OK;
    return ctx->be->seg_reduce(ctx, in, out, offsets, nseg, dtype, op,
                               custom);
}

parsum_status parsum_segmented_reduce(parsum_context *ctx, const void *in,
                                      void *out, const uint64_t *offsets,
                                      size_t num_segments, parsum_dtype dtype,
                                      parsum_op op)
{
    static const char fn[] = "parsum_segmented_reduce";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    return seg_reduce(ctx, fn, in, out, offsets, num_segments, dtype, op,
                      NULL);
}

parsum_status parsum_segmented_reduce_custom(parsum_context *ctx,
                                             const void *in, void *out,
                                             const uint64_t *offsets,
                                             size_t num_segments,
                                             const parsum_custom_op *op)
{
    static const char fn[] = "parsum_segmented_reduce_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(parsum__check_custom(ctx, fn, op));
    return seg_reduce(ctx, fn, in, out, offsets, num_segments, PARSUM_U8,
                      PARSUM_SUM, op);
}

/* Keys are compared bit for bit, which is equality only for integers. */
static parsum_status check_key_dtype(parsum_context *ctx, const char *fn,
                                     parsum_dtype key_dtype)
{
    if (!parsum__dtype_valid(key_dtype) || parsum__dtype_is_float(key_dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: key_dtype = %d is not an integer "
                            "parsum_dtype (PARSUM_I8 .. PARSUM_U64)",
                            fn, (int)key_dtype);
    return PARSUM_OK;
}

parsum_status parsum_scan_by_key(parsum_context *ctx, const void *keys,
                                 parsum_dtype key_dtype, const void *in,
                                 void *out, size_t n, parsum_dtype dtype,
                                 parsum_op op, unsigned flags)
{
    static const char fn[] = "parsum_scan_by_key";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_key_dtype(ctx, fn, key_dtype));
    CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    CHECK(parsum__check_scan_flags(ctx, fn, flags));
    size_t size = parsum_dtype_size(dtype), key_bytes = 0;
    CHECK(parsum__check_buffers(ctx, fn, in, out, n, size, true));
    CHECK(parsum__check_region(ctx, fn, "keys", keys, n, "n",
                               parsum_dtype_size(key_dtype), &key_bytes));
    CHECK(parsum__check_disjoint(ctx, fn, "keys", keys, key_bytes, "out", out,
                                 n * size, false));
    if (ctx->be->scan_by_key == NULL)
        return parsum__unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->scan_by_key(ctx, keys, key_dtype, in, out, n, dtype, op,
                                flags);
}

/* reduce_by_key's four buffers of n elements: each valid, and every
 * output disjoint from every other buffer. */
static parsum_status check_by_key_buffers(parsum_context *ctx, const char *fn,
                                          const void *const p[4], size_t n,
                                          size_t key_size, size_t value_size)
{
    static const char *const names[4] = {"keys_in", "values_in", "keys_out",
                                         "values_out"};
    size_t bytes[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        CHECK(parsum__check_region(ctx, fn, names[i], p[i], n, "n",
                                   i % 2 == 0 ? key_size : value_size,
                                   &bytes[i]));
    for (int out = 2; out < 4; out++)
        for (int other = 0; other < out; other++)
            CHECK(parsum__check_disjoint(ctx, fn, names[other], p[other],
                                         bytes[other], names[out], p[out],
                                         bytes[out], false));
    return PARSUM_OK;
}

parsum_status parsum_reduce_by_key(parsum_context *ctx, const void *keys_in,
                                   parsum_dtype key_dtype,
                                   const void *values_in, size_t n,
                                   parsum_dtype dtype, parsum_op op,
                                   void *keys_out, void *values_out,
                                   size_t *num_runs)
{
    static const char fn[] = "parsum_reduce_by_key";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_key_dtype(ctx, fn, key_dtype));
    CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    if (num_runs == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: num_runs is NULL", fn);
    const void *const bufs[4] = {keys_in, values_in, keys_out, values_out};
    CHECK(check_by_key_buffers(ctx, fn, bufs, n, parsum_dtype_size(key_dtype),
                               parsum_dtype_size(dtype)));
    if (ctx->be->reduce_by_key == NULL)
        return parsum__unsupported(ctx, fn);
    /* num_runs is host memory on a CPU context only. */
    if (n == 0 && ctx->kind == PARSUM_BACKEND_CPU) {
        *num_runs = 0;
        return PARSUM_OK;
    }
    return ctx->be->reduce_by_key(ctx, keys_in, key_dtype, values_in, n,
                                  dtype, op, keys_out, values_out, num_runs);
}

parsum_status parsum_offsets_to_flags(parsum_context *ctx,
                                      const uint64_t *offsets,
                                      size_t num_segments, size_t n,
                                      uint32_t *flags)
{
    static const char fn[] = "parsum_offsets_to_flags";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    size_t off_bytes = 0, flag_bytes = 0;
    CHECK(parsum__check_offsets_ptr(ctx, fn, "offsets", offsets, num_segments,
                                    "num_segments", &off_bytes));
    CHECK(parsum__check_region(ctx, fn, "flags", flags,
                               n / 32 + (n % 32 != 0), "ceil(n / 32)",
                               sizeof(uint32_t), &flag_bytes));
    uint64_t last;
    if (host_offsets(ctx))
        CHECK(parsum__check_offsets_values(ctx, fn, "offsets", offsets, num_segments,
                                           true, n, &last));
    CHECK(parsum__check_disjoint(ctx, fn, "offsets", offsets, off_bytes,
                                 "flags", flags, flag_bytes, false));
    if (ctx->be->offsets_to_flags == NULL)
        return parsum__unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->offsets_to_flags(ctx, offsets, num_segments, n, flags);
}

parsum_status parsum_flags_to_offsets(parsum_context *ctx,
                                      const parsum_segments *seg, size_t n,
                                      uint64_t *offsets, size_t *num_segments)
{
    static const char fn[] = "parsum_flags_to_offsets";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (seg == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: seg is NULL",
                            fn);
    if (seg->kind != PARSUM_SEG_FLAGS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: seg->kind = %d; only PARSUM_SEG_FLAGS "
                            "segments are converted",
                            fn, (int)seg->kind);
    parsum_segments norm;
    size_t flag_bytes = 0, off_bytes = 0;
    CHECK(check_flags_desc(ctx, fn, seg, n, &norm, &flag_bytes));
    if (num_segments == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: num_segments is NULL", fn);
    if (n == SIZE_MAX)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: n = %zu: n + 1 offsets overflow size_t", fn,
                            n);
    CHECK(parsum__check_region(ctx, fn, "offsets", offsets, n + 1, "n + 1",
                               sizeof(uint64_t), &off_bytes));
    CHECK(parsum__check_disjoint(ctx, fn, "seg->flags", norm.flags,
                                 flag_bytes, "offsets", offsets, off_bytes,
                                 false));
    if (ctx->be->flags_to_offsets == NULL)
        return parsum__unsupported(ctx, fn);
    /* Host memory on a CPU context only (*num_segments, offsets). */
    if (n == 0 && ctx->kind == PARSUM_BACKEND_CPU) {
        offsets[0] = 0;
        *num_segments = 0;
        return PARSUM_OK;
    }
    return ctx->be->flags_to_offsets(ctx, &norm, n, offsets, num_segments);
}
