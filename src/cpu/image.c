/*
 * image.c - the CPU backend's image slots (summed-area tables, box sums,
 * box filter).
 */
#include "../core/internal.h"
#include "../ref/ref.h"
#include "cpu.h"

parsum_status parsum__cpu_integral(parsum_context *ctx,
                                   const parsum__integral_args *a)
{
    if (a->offset_mean)
        parsum__ref_image_mean(&a->src, a->offset);
    if (parsum__ref_integral(&a->src, &a->table, a->inclusive, a->squared,
                             a->offset) != PARSUM_OK)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: no memory for two rows of column sums",
                            a->fn);
    return PARSUM_OK;
}

parsum_status parsum__cpu_box_sums(parsum_context *ctx,
                                   const parsum__box_sums_args *a)
{
    (void)ctx;
    parsum__ref_box_sums(&a->table, a->inclusive, a->means, a->squared,
                         a->offset, a->rects, a->nrect, a->out);
    return PARSUM_OK;
}

parsum_status parsum__cpu_box_filter(parsum_context *ctx,
                                     const parsum__box_filter_args *a)
{
    (void)ctx;
    parsum__ref_box_filter(&a->src, &a->dst, a->rx, a->ry, a->border);
    return PARSUM_OK;
}
