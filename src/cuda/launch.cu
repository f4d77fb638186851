/*
 * launch.cu - launching the scan and reduce kernels of scan_kernels.cuh:
 * scratch layout, grid sizes, alignment checks, where a reduce result
 * goes; and the backend slots for the built-in dtypes, which pick a kernel
 * from the per-dtype tables. The custom-operator slots (custom.cu) use the
 * same launchers with kernels compiled by NVRTC.
 */
#include "cuda_internal.h"

#include "scan_kernels.cuh"

#include <math.h>
#include <string.h>

namespace {

size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

bool aligned(const void *p, size_t a)
{
    return (reinterpret_cast<uintptr_t>(p) % a) == 0;
}

parsum_status check_alignment(parsum_context *ctx, const void *p,
                              const char *what, size_t align)
{
    if (align > 1 && !aligned(p, align))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s = %p is not aligned to its element type "
                            "(%zu bytes), which the CUDA backend requires",
                            parsum__cuda_st(ctx)->api, what, p, align);
    return PARSUM_OK;
}

} /* namespace */

/* ------------------------------------------------------------------------ */
/* Scan                                                                      */
/* ------------------------------------------------------------------------ */

parsum_status parsum__cuda_run_scan(parsum_context *ctx,
                                    const parsum__cuda_launch *l,
                                    const void *in, void *out, size_t n,
                                    unsigned flags)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t size = l->elem_size;
    parsum_status s = check_alignment(ctx, in, "in", l->elem_align);
    if (s == PARSUM_OK)
        s = check_alignment(ctx, out, "out", l->elem_align);
    if (s != PARSUM_OK)
        return s;

    const parsum_k::policy pol = parsum_k::policy_for(size);
    const size_t tile = parsum_k::scan_tile_elems(size);
    const size_t tiles = n / tile + (n % tile != 0);
    if (tiles > 0x7fffffffu)
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: n = %zu needs %zu tiles of %zu elements; the "
                            "CUDA scan supports at most 2^31 - 1 tiles",
                            st->api, n, tiles, tile);

    /* Scratch: [counter | agg descriptors | incl descriptors | (unpacked
     * descriptors:) agg statuses | incl statuses]. What holds statuses is
     * zeroed: everything for packed descriptors, which carry their status,
     * else the counter and the status words. */
    const bool packed = parsum_k::desc_packed(size);
    const size_t desc = parsum_k::desc_bytes(size);
    const size_t off_agg = 64;
    const size_t off_incl = round_up(off_agg + desc * tiles, 64);
    const size_t off_stat = round_up(off_incl + desc * tiles, 64);
    const size_t bytes = packed ? off_stat : off_stat + 8 * tiles;
    unsigned char *scratch = NULL;
    if (tiles > 1) {
        scratch = static_cast<unsigned char *>(
            parsum__scratch(ctx, bytes, st->api));
        if (scratch == NULL)
            return PARSUM_ERR_OUT_OF_MEMORY;
        if (packed) {
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch, 0, bytes,
                                                 st->stream));
        } else {
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch, 0, 64, st->stream));
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch + off_stat, 0,
                                                 8 * tiles, st->stream));
        }
    }

    parsum_k::scan_args a;
    a.in = in;
    a.out = out;
    a.n = n;
    a.num_tiles = (unsigned)tiles;
    a.options = 0;
    if (flags & PARSUM_EXCLUSIVE)
        a.options |= parsum_k::OPT_EXCLUSIVE;
    if (aligned(in, 16) && aligned(out, 16))
        a.options |= parsum_k::OPT_VEC;
    a.counter = reinterpret_cast<unsigned *>(scratch);
    a.agg = reinterpret_cast<unsigned *>(scratch + off_agg);
    a.incl = reinterpret_cast<unsigned *>(scratch + off_incl);
    a.agg_status = reinterpret_cast<unsigned *>(scratch + off_stat);
    a.incl_status = a.agg_status + tiles;

    const void *kernel =
        (flags & PARSUM_REVERSE) ? l->k->scan_rev : l->k->scan_fwd;
    void *args[] = {&a, const_cast<void *>(l->id), const_cast<void *>(l->pad)};
    PARSUM_CUDA_TRY(ctx, cudaLaunchKernel(kernel, dim3((unsigned)tiles),
                                          dim3((unsigned)pol.block), args, 0,
                                          st->stream));
    return PARSUM_OK;
}

/* ------------------------------------------------------------------------ */
/* Reduce                                                                    */
/* ------------------------------------------------------------------------ */

/* Where the kernel may write a result element directly. */
static parsum_status result_on_device(parsum_context *ctx, const void *result,
                                      bool *direct)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaPointerAttributes attr;
    PARSUM_CUDA_TRY(ctx, cudaPointerGetAttributes(&attr, result));
    *direct = attr.type == cudaMemoryTypeManaged ||
              (attr.type == cudaMemoryTypeDevice && attr.device == st->device);
    if (attr.type == cudaMemoryTypeDevice && attr.device != st->device)
        return parsum__fail(ctx, PARSUM_ERR_WRONG_MEMORY_SPACE,
                            "%s: result = %p is memory of CUDA device %d, but "
                            "the context works on device %d",
                            st->api, result, attr.device, st->device);
    return PARSUM_OK;
}

parsum_status parsum__cuda_run_reduce(parsum_context *ctx,
                                      const parsum__cuda_launch *l,
                                      const void *in, size_t n, void *result)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t size = l->elem_size;
    bool direct = false;
    parsum_status s = result_on_device(ctx, result, &direct);
    if (s != PARSUM_OK)
        return s;

    if (n == 0) { /* the identity */
        if (direct)
            PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(result, l->id, size,
                                                 cudaMemcpyHostToDevice,
                                                 st->stream));
        else
            memcpy(result, l->id, size);
        return PARSUM_OK;
    }
    s = check_alignment(ctx, in, "in", l->elem_align);
    if (s != PARSUM_OK)
        return s;

    const parsum_k::policy pol = parsum_k::policy_for(size);
    const size_t warps = (size_t)pol.rblock / 32;
    const size_t wt = parsum_k::reduce_warp_tile_elems(size);
    if (*l->reduce_grid == 0) {
        int per_sm = 0;
        PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &per_sm, l->k->reduce, pol.rblock, 0));
        *l->reduce_grid = (per_sm > 0 ? per_sm : 1) * st->sm_count;
    }
    /* G blocks of `warps` warps, at most one warp per warp tile; see
     * reduce_kernel for which tiles each warp folds. The grouping depends
     * on n and G only. */
    const size_t warp_tiles = n / wt + (n % wt != 0);
    size_t grid = (warp_tiles + warps - 1) / warps;
    if (grid > (size_t)*l->reduce_grid)
        grid = (size_t)*l->reduce_grid;
    size_t per_warp = (warp_tiles + grid * warps - 1) / (grid * warps);

    parsum_k::reduce_args a;
    a.in = in;
    a.n = n;
    a.tiles_per_warp = per_warp;
    a.num_blocks = (unsigned)grid;
    a.options = aligned(in, 16) ? parsum_k::OPT_VEC : 0u;
    a.partials = NULL;
    a.counter = st->dev_counter;
    a.result = direct ? result : st->dev_result;
    if (grid > 1) {
        a.partials = static_cast<unsigned *>(parsum__scratch(
            ctx, grid * parsum_k::slot_bytes(size), st->api));
        if (a.partials == NULL)
            return PARSUM_ERR_OUT_OF_MEMORY;
    }
    void *args[] = {&a, const_cast<void *>(l->pad)};
    PARSUM_CUDA_TRY(ctx, cudaLaunchKernel(l->k->reduce, dim3((unsigned)grid),
                                          dim3((unsigned)pol.rblock), args, 0,
                                          st->stream));
    if (!direct) {
        PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(result, st->dev_result, size,
                                             cudaMemcpyDeviceToHost,
                                             st->stream));
        PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    }
    return PARSUM_OK;
}

/* ------------------------------------------------------------------------ */
/* Built-in dtypes                                                           */
/* ------------------------------------------------------------------------ */

static const parsum__cuda_kernels *builtin_kernels(parsum_dtype dtype,
                                                   parsum_op op)
{
    static const parsum__cuda_kernels *const tables[PARSUM_DTYPE_COUNT] = {
        parsum__cuda_kernels_i8,  parsum__cuda_kernels_u8,
        parsum__cuda_kernels_i16, parsum__cuda_kernels_u16,
        parsum__cuda_kernels_i32, parsum__cuda_kernels_u32,
        parsum__cuda_kernels_i64, parsum__cuda_kernels_u64,
        parsum__cuda_kernels_f32, parsum__cuda_kernels_f64,
    };
    return &tables[dtype][op];
}

/* Fills l for a built-in (dtype, op). id and pad must hold 8 bytes. The
 * kernels fill empty positions with pad, which must be an identity bit for
 * bit (pad (+) x == x (+) pad == x for every x, so that padding never
 * changes a result): the identity for integers and float products, -0.0
 * for float sums (+0.0 + -0.0 would be +0.0), a NaN for float min/max (the
 * operators skip a NaN operand, while +inf would swallow an all-NaN run,
 * whose documented result is NaN). */
static void builtin_launch(parsum_context *ctx, parsum_dtype dtype,
                           parsum_op op, parsum__cuda_launch *l,
                           unsigned char *id, unsigned char *pad)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    l->k = builtin_kernels(dtype, op);
    l->elem_size = parsum_dtype_size(dtype);
    l->elem_align = l->elem_size;
    (void)parsum_op_identity(dtype, op, id);
    memcpy(pad, id, 8);
    if (dtype == PARSUM_F32 || dtype == PARSUM_F64) {
        if (op == PARSUM_SUM) {
            if (dtype == PARSUM_F32) {
                float z = -0.0f;
                memcpy(pad, &z, 4);
            } else {
                double z = -0.0;
                memcpy(pad, &z, 8);
            }
        } else if (op == PARSUM_MIN || op == PARSUM_MAX) {
            if (dtype == PARSUM_F32) {
                float q = NAN;
                memcpy(pad, &q, 4);
            } else {
                double q = NAN;
                memcpy(pad, &q, 8);
            }
        }
    }
    l->id = id;
    l->pad = pad;
    l->reduce_grid = &st->reduce_grid[dtype][op];
}

parsum_status parsum__cuda_scan(parsum_context *ctx, const void *in, void *out,
                                size_t n, parsum_dtype dtype, parsum_op op,
                                unsigned flags)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_scan");
    if (s != PARSUM_OK)
        return s;
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    builtin_launch(ctx, dtype, op, &l, id, pad);
    return parsum__cuda_run_scan(ctx, &l, in, out, n, flags);
}

parsum_status parsum__cuda_reduce(parsum_context *ctx, const void *in,
                                  size_t n, parsum_dtype dtype, parsum_op op,
                                  void *result)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_reduce");
    if (s != PARSUM_OK)
        return s;
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    builtin_launch(ctx, dtype, op, &l, id, pad);
    return parsum__cuda_run_reduce(ctx, &l, in, n, result);
}
