/* backend.c - the CPU backend's dispatch table and its memory functions
 * (host memory: aligned malloc, memcpy). */
#include "../core/internal.h"
#include "cpu.h"

#include <string.h>

static parsum_status cpu_alloc(parsum_context *ctx, void **ptr, size_t bytes)
{
    *ptr = parsum__host_alloc(bytes);
    if (*ptr == NULL)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "parsum_alloc: could not allocate %zu bytes of "
                            "host memory",
                            bytes);
    return PARSUM_OK;
}

static void cpu_free(parsum_context *ctx, void *ptr)
{
    (void)ctx;
    parsum__host_free(ptr);
}

static parsum_status cpu_copy(parsum_context *ctx, void *dst, const void *src,
                              size_t bytes, parsum_copy_kind kind)
{
    (void)ctx;
    (void)kind; /* every kind is host to host on the CPU */
    memmove(dst, src, bytes);
    return PARSUM_OK;
}

static parsum_status cpu_copy2d(parsum_context *ctx, void *dst,
                                size_t dst_pitch, const void *src,
                                size_t src_pitch, size_t row_bytes,
                                size_t rows, parsum_copy_kind kind)
{
    (void)ctx;
    (void)kind;
    for (size_t y = 0; y < rows; y++)
        memmove((char *)dst + y * dst_pitch, (const char *)src + y * src_pitch,
                row_bytes);
    return PARSUM_OK;
}

const parsum__backend parsum__cpu_backend = {
    .name = "cpu",
    .reduce = parsum__cpu_reduce,
    .scan = parsum__cpu_scan,
    .reduce_custom = parsum__cpu_reduce_custom,
    .scan_custom = parsum__cpu_scan_custom,
    .seg_scan = parsum__cpu_seg_scan,
    .seg_reduce = parsum__cpu_seg_reduce,
    .scan_by_key = parsum__cpu_scan_by_key,
    .reduce_by_key = parsum__cpu_reduce_by_key,
    .offsets_to_flags = parsum__cpu_offsets_to_flags,
    .flags_to_offsets = parsum__cpu_flags_to_offsets,
    .select = parsum__cpu_select,
    .runs = parsum__cpu_runs,
    .integral = parsum__cpu_integral,
    .box_sums = parsum__cpu_box_sums,
    .box_filter = parsum__cpu_box_filter,
    .histogram = parsum__cpu_histogram,
    .hist_bin_ids = parsum__cpu_hist_bin_ids,
    .hist_add_runs = parsum__cpu_hist_add_runs,
    .tonemap_lum = parsum__cpu_tonemap_lum,
    .tonemap_map = parsum__cpu_tonemap_map,
    .sort = parsum__cpu_sort,
    .segmented_sort = parsum__cpu_segmented_sort,
    .qsort_classify = parsum__cpu_qsort_classify,
    .qsort_scatter = parsum__cpu_qsort_scatter,
    .qsort_finish = parsum__cpu_qsort_finish,
    .mem_alloc = cpu_alloc,
    .mem_free = cpu_free,
    .mem_copy = cpu_copy,
    .mem_copy2d = cpu_copy2d,
    .synchronize = NULL,
    .check_pointer = NULL,
    .destroy = NULL,
};
