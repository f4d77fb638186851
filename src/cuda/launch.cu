/*
 * launch.cu - launching the scan and reduce kernels (*_kernels.cuh):
 * scratch layout, grid sizes, alignment checks, where a reduce result
 * goes; and the backend slots for the built-in dtypes, which pick a kernel
 * from the per-dtype tables. The custom-operator slots (custom.cu) use the
 * same launchers with kernels compiled by NVRTC.
 */
#include "cuda_internal.h"

#include "reduce_kernels.cuh"
#include "scan_kernels.cuh"

#include <math.h>
#include <string.h>

using parsum_cu::round_up;

namespace {

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

/* Tile-state layout for n elements of elem_size bytes whose kernel scans
 * values of scan_size bytes (the element, or a segmented pair):
 * [counter | agg descriptors | incl descriptors | (unpacked descriptors:)
 * agg statuses | incl statuses]. What holds statuses must be zeroed before
 * each launch: everything for packed descriptors, which carry their
 * status, else the counter and the status words; unless the scan tags
 * them with the call (tagged_kind). */
namespace {
struct state_layout {
    size_t tiles, desc, off_agg, off_incl, off_stat, bytes;
    bool packed;
};

/* seg: a segmented kernel, whose scan_size is its (value, flag) pair. */
state_layout layout_for(size_t elem_size, size_t scan_size, size_t n,
                        bool seg, size_t tile = 0)
{
    state_layout L;
    if (tile == 0)
        tile = parsum_k::scan_tile_elems(elem_size, seg);
    const size_t pv = seg ? elem_size : 0;
    const size_t desc = parsum_k::desc_bytes(scan_size, pv);
    L.tiles = n / tile + (n % tile != 0);
    L.desc = desc;
    L.packed = parsum_k::desc_packed(scan_size, pv);
    L.off_agg = 64;
    L.off_incl = round_up(L.off_agg + desc * L.tiles, 64);
    L.off_stat = round_up(L.off_incl + desc * L.tiles, 64);
    L.bytes = L.packed ? L.off_stat : L.off_stat + 8 * L.tiles;
    return L;
}
/* Whether the scan's tiles tag their descriptors with the call
 * (PARSUM_CUDA_SCAN_TAGS=0 in the environment: zero them before each
 * launch instead; for measurements and tests). */
bool scan_tags_on()
{
    static const bool on = parsum__cuda_env_on("PARSUM_CUDA_SCAN_TAGS");
    return on;
}

/* The tagged buffer (PARSUM__TAGGED_*) a scan with state layout L uses,
 * or -1 where it zeroes its state: one tile (no state), segmented and
 * keyed scans, state the caller gives, unpacked descriptors, a stream
 * that is capturing a graph. */
int tagged_kind(parsum_context *ctx, const state_layout &L, bool seg,
                bool caller_state)
{
    if (L.tiles <= 1 || seg || caller_state || !L.packed || !scan_tags_on() ||
        parsum__cuda_capturing(ctx))
        return -1;
    return L.desc == 8    ? PARSUM__TAGGED_DESC8
           : L.desc == 16 ? PARSUM__TAGGED_DESC16
                          : -1;
}
} /* namespace */

size_t parsum__cuda_scan_state_bytes(size_t elem_size, size_t scan_size,
                                     size_t n, bool seg, size_t tile)
{
    state_layout L = layout_for(elem_size, scan_size, n, seg, tile);
    return L.tiles > 1 ? L.bytes : 0;
}

parsum_status parsum__cuda_launch_scan(parsum_context *ctx,
                                       const parsum__cuda_launch *l,
                                       const parsum__cuda_scan_call *c)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t size = l->elem_size;
    parsum_status s = check_alignment(ctx, c->in, "in", l->elem_align);
    if (s == PARSUM_OK)
        s = check_alignment(ctx, c->out, "out", l->elem_align);
    if (s != PARSUM_OK)
        return s;

    const parsum_k::policy pol = parsum_k::policy_for(size);
    /* segmented: flags, or keys (reduce by key) */
    const bool seg = c->seg_flags != NULL || c->keys != NULL;
    const state_layout L = layout_for(size, c->scan_size, c->n, seg, c->tile);
    if (L.tiles > 0x7fffffffu)
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: n = %zu needs %zu tiles of %zu elements; the "
                            "CUDA scan supports at most 2^31 - 1 tiles",
                            st->api, c->n, L.tiles,
                            c->tile != 0
                                ? c->tile
                                : (size_t)parsum_k::scan_tile_elems(size, seg));
    size_t grid = L.tiles;
    if (c->pipe_blocks != NULL) {
        size_t cap = (size_t)*c->pipe_blocks * (size_t)st->sm_count;
        if (st->scan_blocks_cap != 0 && st->scan_blocks_cap < cap)
            cap = st->scan_blocks_cap;
        if (grid > cap)
            grid = cap;
    }
    unsigned char *scratch = static_cast<unsigned char *>(c->state);
    /* The plain scan's descriptors are tagged with the call instead of
     * zeroed (one launch fewer); segmented and keyed scans, whose state
     * the caller may carve or lay out otherwise, zero theirs. */
    const int tag_kind = tagged_kind(ctx, L, seg, c->state != NULL);
    unsigned tag = 0, tile_base = 0;
    if (tag_kind >= 0) {
        /* A pipelined block claims one number past the last tile. */
        const size_t claims = L.tiles + (c->pipe_blocks != NULL ? grid : 0);
        void *buf = NULL;
        parsum_status ts = parsum__cuda_tagged_status(
            ctx, tag_kind, L.bytes, (unsigned)claims, &buf, &tag, &tile_base);
        if (ts != PARSUM_OK)
            return ts;
        scratch = static_cast<unsigned char *>(buf);
    } else if (L.tiles > 1) {
        if (scratch == NULL)
            scratch = static_cast<unsigned char *>(
                parsum__scratch(ctx, L.bytes, st->api));
        if (scratch == NULL)
            return PARSUM_ERR_OUT_OF_MEMORY;
        if (L.packed) {
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch, 0, L.bytes,
                                                 st->stream));
        } else {
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch, 0, 64, st->stream));
            PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(scratch + L.off_stat, 0,
                                                 8 * L.tiles, st->stream));
        }
    }

    parsum_k::scan_args a;
    memset(&a, 0, sizeof a);
    a.in = c->in;
    a.out = c->out;
    a.n = c->n;
    a.num_tiles = (unsigned)L.tiles;
    a.options = 0;
    if (c->flags & PARSUM_EXCLUSIVE)
        a.options |= parsum_k::OPT_EXCLUSIVE;
    if (aligned(c->in, 16) && aligned(c->out, 16) &&
        (c->keys == NULL || aligned(c->keys, 16)))
        a.options |= parsum_k::OPT_VEC;
    if (scratch != NULL) {
        a.counter = reinterpret_cast<unsigned *>(scratch);
        a.agg = reinterpret_cast<unsigned *>(scratch + L.off_agg);
        a.incl = reinterpret_cast<unsigned *>(scratch + L.off_incl);
        a.agg_status = reinterpret_cast<unsigned *>(scratch + L.off_stat);
        a.incl_status = a.agg_status + L.tiles;
    }
    a.flags = c->seg_flags;
    a.flag_off = c->flag_off;
    a.map = c->map;
    a.map_on = c->map_on;
    a.keys = c->keys;
    a.keys_out = c->keys_out;
    a.key_size = c->key_size;
    a.total = c->total;
    a.out_count = c->out_count;
    a.tag = tag;
    a.tile_base = tile_base;

    void *args[] = {&a, const_cast<void *>(l->id), const_cast<void *>(l->pad)};
    const cudaError_t e =
        cudaLaunchKernel(c->kernel, dim3((unsigned)grid),
                         dim3((unsigned)pol.block), args, c->smem, st->stream);
    if (e != cudaSuccess && tag_kind >= 0)
        parsum__cuda_tagged_reset(ctx, tag_kind); /* the counter did not move */
    PARSUM_CUDA_TRY(ctx, e);
    return PARSUM_OK;
}

bool parsum__cuda_pipe_on(void)
{
    static const bool on = parsum__cuda_env_on("PARSUM_CUDA_SCAN_PIPE");
    return on;
}

parsum_status parsum__cuda_pick_pipe(parsum_context *ctx,
                                     const parsum__cuda_launch *l, int which,
                                     parsum__cuda_scan_call *c)
{
    const void *pipe = which == PARSUM__PIPE_FWD       ? l->k->pipe_fwd
                       : which == PARSUM__PIPE_REV     ? l->k->pipe_rev
                       : which == PARSUM__PIPE_SEG_FWD ? l->k->seg_pipe_fwd
                                                       : l->k->seg_pipe_rev;
    /* The pipelined kernel pays off once every block has several tiles;
     * it needs the tile counter, which a single tile goes without. The
     * environment variable PARSUM_CUDA_SCAN_PIPE=0 turns it off (for
     * measurements: bench/gpu_tune.sh). */
    const bool seg =
        which == PARSUM__PIPE_SEG_FWD || which == PARSUM__PIPE_SEG_REV;
    const size_t tile =
        (size_t)(seg ? l->k->seg_pipe_tile : l->k->pipe_tile);
    if (!parsum__cuda_pipe_on() || pipe == NULL || l->pipe_blocks == NULL ||
        c->n <= tile)
        return PARSUM_OK;
    int *nb = &l->pipe_blocks[which];
    if (*nb == 0) {
        int per_sm = 0;
        PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &per_sm, pipe,
                                 parsum_k::policy_for(l->elem_size).block, 0));
        *nb = per_sm > 0 ? per_sm : 1;
    }
    c->kernel = pipe;
    c->pipe_blocks = nb;
    c->tile = tile;
    return PARSUM_OK;
}

parsum_status parsum__cuda_run_scan(parsum_context *ctx,
                                    const parsum__cuda_launch *l,
                                    const void *in, void *out, size_t n,
                                    unsigned flags)
{
    parsum__cuda_scan_call c = {};
    const bool rev = (flags & PARSUM_REVERSE) != 0;
    c.kernel = rev ? l->k->scan_rev : l->k->scan_fwd;
    c.scan_size = l->elem_size;
    c.in = in;
    c.out = out;
    c.n = n;
    c.flags = flags;
    parsum_status s = parsum__cuda_pick_pipe(
        ctx, l, rev ? PARSUM__PIPE_REV : PARSUM__PIPE_FWD, &c);
    return s == PARSUM_OK ? parsum__cuda_launch_scan(ctx, l, &c) : s;
}

/* ------------------------------------------------------------------------ */
/* Reduce                                                                    */
/* ------------------------------------------------------------------------ */

/* Copies count device u64 counts from src to dst (size_t, host or device
 * memory of the context); waits for the copy only when dst is host
 * memory. */
parsum_status parsum__cuda_deliver_counts(parsum_context *ctx, size_t *dst,
                                          const unsigned long long *src,
                                          size_t count)
{
    static_assert(sizeof(size_t) == sizeof(unsigned long long),
                  "counts are copied as they are");
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    bool direct = false;
    parsum_status s = parsum__cuda_result_on_device(ctx, dst, &direct);
    if (s != PARSUM_OK)
        return s;
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, count * sizeof *dst,
                                         cudaMemcpyDefault, st->stream));
    if (!direct)
        PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    return PARSUM_OK;
}

/* count zero counts to dst (calls with n == 0). */
parsum_status parsum__cuda_deliver_zero(parsum_context *ctx, size_t *dst,
                                        size_t count)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    bool direct = false;
    parsum_status s = parsum__cuda_result_on_device(ctx, dst, &direct);
    if (s != PARSUM_OK)
        return s;
    if (direct)
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(dst, 0, count * sizeof *dst,
                                             st->stream));
    else
        for (size_t i = 0; i < count; ++i)
            dst[i] = 0;
    return PARSUM_OK;
}

/* Where the kernel may write a result element directly. */
parsum_status parsum__cuda_result_on_device(parsum_context *ctx,
                                            const void *result, bool *direct)
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
    parsum_status s = parsum__cuda_result_on_device(ctx, result, &direct);
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
void parsum__cuda_builtin_launch(parsum_context *ctx, parsum_dtype dtype,
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
    l->pipe_blocks = st->pipe_blocks[dtype][op];
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
    parsum__cuda_builtin_launch(ctx, dtype, op, &l, id, pad);
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
    parsum__cuda_builtin_launch(ctx, dtype, op, &l, id, pad);
    return parsum__cuda_run_reduce(ctx, &l, in, n, result);
}
