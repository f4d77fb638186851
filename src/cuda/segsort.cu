/*
 * segsort.cu - the CUDA segmented radix sort (the backend's segmented_sort
 * slot; kernels in segsort_kernels.cuh).
 *
 * Segments are sorted by whoever suits their length:
 *   up to 8 keys        8 lanes of a warp (warp_sort_kernel<.., 8, 1>)
 *   up to 16 keys       16 lanes (warp_sort_kernel<.., 16, 1>)
 *   up to 32 keys       a warp (warp_sort_kernel<.., 32, 1>)
 *   up to 64 keys       a warp, 2 keys a lane (warp_sort_kernel<.., 32, 2>;
 *                       not for values of V_BYTES)
 *   up to 128 keys      a warp, 4 keys a lane (warp_sort_kernel<.., 32, 4>;
 *                       not for values of V_BYTES)
 *   up to the small     a block of block_sort_policy(false), in shared
 *   block tile          memory
 *   up to the large     a block of block_sort_policy(true)
 *   block tile
 *   longer              the onesweep sort of sort.cu, one segment at a time
 * seg_classify_kernel puts every non-empty segment in its class's list on
 * the device (for the warp classes, its clamped begin and length in one
 * word); the warp and block kernels loop over their lists (they read
 * the list's length on the device, so nothing waits for the host). Then
 * the host reads back, in one copy, the number and bounds of the longest
 * segments and whether the offsets were valid: the call's one wait.
 *
 * Invalid offsets are reported (PARSUM_ERR_INVALID_ARGUMENT) after the work
 * is done; every kernel clamps each segment to [0, n) and treats a
 * decreasing pair as empty, so nothing outside the arrays is touched.
 */
#include "sort_host.h"

#include <stdlib.h>
#include <string.h>

using namespace parsum_sk;
using parsum_cu::carve;
using parsum_cu::round_up;

namespace {

/* Huge segments' bounds the host reads with the counts in the one copy;
 * more take a second copy. */
constexpr u32 HUGE_FIRST = 64;

/* The control block: counts, the bad flag, then the huge bounds. */
struct control {
    u32 counts[SC_COUNT];
    u32 bad;
    u32 pad[64 - SC_COUNT - 1];
    u64 huge[2 * HUGE_FIRST];
};

/* Dynamic shared memory of the small (large = false) or large block
 * sort of keys K and value mode V. */
template <class K, int V>
constexpr size_t seg_block_smem(bool large)
{
    return block_sort_smem((int)sizeof(K), V, block_sort_policy(large).block,
                           block_sort_policy(large).items);
}

/* The block sorts' shared memory allowed, and their grids: the resident
 * blocks or the segments, whichever are fewer. */
template <class K, int V>
parsum_status block_sort_grids(parsum_context *ctx, u64 nseg, u64 *gs,
                               u64 *gl)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    constexpr tile_policy PS = block_sort_policy(false);
    constexpr tile_policy PL = block_sort_policy(true);
    constexpr size_t smem_s = seg_block_smem<K, V>(false);
    constexpr size_t smem_l = seg_block_smem<K, V>(true);
    const void *ks =
        reinterpret_cast<const void *>(block_sort_kernel<K, V, PS.block, PS.items>);
    const void *kl =
        reinterpret_cast<const void *>(block_sort_kernel<K, V, PL.block, PL.items>);
    /* Asked once per device; also allows the kernels their dynamic
     * shared memory. */
    static parsum__cuda_occupancy_cache cache_s, cache_l;
    int per_s = 0, per_l = 0;
    parsum_status s =
        parsum__cuda_occupancy(ctx, cache_s, ks, PS.block, smem_s, &per_s);
    if (s == PARSUM_OK)
        s = parsum__cuda_occupancy(ctx, cache_l, kl, PL.block, smem_l,
                                   &per_l);
    if (s != PARSUM_OK)
        return s;
    *gs = (u64)per_s * st->sm_count;
    *gl = (u64)per_l * st->sm_count;
    *gs = *gs < nseg ? *gs : nseg;
    *gl = *gl < nseg ? *gl : nseg;
    return PARSUM_OK;
}

/* The size classes' kernels. None depends on another (only on the
 * classification before them), so they run on four streams - the
 * context's and three side streams - and each fills the others' tails
 * and launch gaps; the block sorts, a few long blocks, start first. */
template <class K, int V>
parsum_status launch_t(parsum_context *ctx, const cudaStream_t (&side)[3],
                       const ws_args &w, const bs_args &bs, const bs_args &bl,
                       u64 nseg)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    /* Warp sorts: 256-thread blocks looping over their class's list, as
     * many as are resident at once or as the segments need, whichever is
     * fewer: a grid of more than the resident blocks ran its last blocks
     * as a second wave after the first had done its share. Values of
     * V_BYTES do not fit the sorts of several keys a lane: their classes
     * are empty then (ca.limit), and not launched. */
    constexpr int NW = V != V_BYTES ? 5 : 3;
    const void *wk[5] = {
        reinterpret_cast<const void *>(warp_sort_kernel<K, V, 8, 1>),
        reinterpret_cast<const void *>(warp_sort_kernel<K, V, 16, 1>),
        reinterpret_cast<const void *>(warp_sort_kernel<K, V, 32, 1>),
        nullptr, nullptr};
    if constexpr (V != V_BYTES) {
        wk[3] = reinterpret_cast<const void *>(warp_sort_kernel<K, V, 32, 2>);
        wk[4] = reinterpret_cast<const void *>(warp_sort_kernel<K, V, 32, 4>);
    }
    const u64 per_block[5] = {256 / 8, 256 / 16, 256 / 32, 256 / 32, 256 / 32};
    unsigned wgrid[5] = {0, 0, 0, 0, 0};
    ws_args wa[5];
    static parsum__cuda_occupancy_cache wcache[5]; /* per device, kept */
    for (int c = 0; c < NW; ++c) {
        int per_sm = 0;
        parsum_status s =
            parsum__cuda_occupancy(ctx, wcache[c], wk[c], 256, 0, &per_sm);
        if (s != PARSUM_OK)
            return s;
        const u64 cap = (u64)per_sm * st->sm_count;
        const u64 g = (nseg + per_block[c] - 1) / per_block[c];
        wgrid[c] = (unsigned)(g < cap ? g : cap);
        wa[c] = w;
        wa[c].list = w.list + (u64)(SC_W8 + c) * nseg;
        wa[c].list_count = w.list_count + (SC_W8 + c);
    }

    constexpr tile_policy PS = block_sort_policy(false);
    constexpr tile_policy PL = block_sort_policy(true);
    constexpr size_t smem_s = seg_block_smem<K, V>(false);
    constexpr size_t smem_l = seg_block_smem<K, V>(true);
    u64 gs = 0, gl = 0;
    parsum_status s = block_sort_grids<K, V>(ctx, nseg, &gs, &gl);
    if (s != PARSUM_OK)
        return s;

    /* Classes by stream: the block sorts; 33-128 keys; 17-32 keys (the
     * most keys under random cuts); 1-16 keys. */
    cudaError_t e = cudaSuccess;
    auto note = [&](cudaError_t x) {
        if (e == cudaSuccess)
            e = x;
    };
    block_sort_kernel<K, V, PS.block, PS.items>
        <<<(unsigned)gs, PS.block, smem_s, side[2]>>>(bs);
    note(cudaGetLastError());
    block_sort_kernel<K, V, PL.block, PL.items>
        <<<(unsigned)gl, PL.block, smem_l, side[2]>>>(bl);
    note(cudaGetLastError());
    const cudaStream_t wstream[5] = {side[1], side[1], st->stream, side[0],
                                     side[0]};
    const int order[5] = {3, 2, 1, 0, 4};
    for (int k = 0; k < 5; ++k) {
        const int c = order[k];
        if (c >= NW)
            continue;
        void *args[1] = {&wa[c]};
        note(cudaLaunchKernel(wk[c], dim3(wgrid[c]), dim3(256), args, 0,
                              wstream[c]));
    }
    PARSUM_CUDA_TRY(ctx, e);
    return PARSUM_OK;
}

template <class K>
parsum_status launch_v(parsum_context *ctx, const cudaStream_t (&side)[3],
                       int v, const ws_args &w, const bs_args &bs,
                       const bs_args &bl, u64 nseg)
{
    switch (v) {
    case V_NONE: return launch_t<K, V_NONE>(ctx, side, w, bs, bl, nseg);
    case V_4: return launch_t<K, V_4>(ctx, side, w, bs, bl, nseg);
    case V_8: return launch_t<K, V_8>(ctx, side, w, bs, bl, nseg);
    default: return launch_t<K, V_BYTES>(ctx, side, w, bs, bl, nseg);
    }
}

/* Sorts the huge segments [b, e) listed in be (host memory). */
parsum_status sort_huge(parsum_context *ctx, const parsum__cuda_sort_job &all,
                        const u64 *be, u32 count, void *scratch)
{
    const size_t ks = parsum_dtype_size(all.key_dtype);
    const size_t vs = all.value_size;
    for (u32 i = 0; i < count; i++) {
        const u64 b = be[2 * i], e = be[2 * i + 1];
        parsum__cuda_sort_job j = all;
        j.keys_in = static_cast<const unsigned char *>(all.keys_in) + b * ks;
        j.keys_out = all.keys_out == nullptr
                         ? nullptr
                         : static_cast<unsigned char *>(all.keys_out) + b * ks;
        if (vs > 0) {
            j.values_in =
                static_cast<const unsigned char *>(all.values_in) + b * vs;
            j.values_out = static_cast<unsigned char *>(all.values_out) + b * vs;
        }
        j.n = e - b;
        parsum_status s = parsum__cuda_sort_run(ctx, j, scratch);
        if (s != PARSUM_OK)
            return s;
    }
    return PARSUM_OK;
}

/* Zeroes the control block and classifies the segments by length into
 * the lists (seg_classify_kernel), on the context's stream. */
parsum_status launch_classify(parsum_context *ctx, const parsum__sort_args *a,
                              int vmode, control *ctl, u64 *wlists,
                              u32 *blists, u64 *huge, u64 huge_cap)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const tile_policy PS = block_sort_policy(false);
    const tile_policy PL = block_sort_policy(true);
    const u64 nseg = a->num_segments;
    PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(ctl, 0, sizeof(control), st->stream));
    classify_args ca;
    ca.offsets = reinterpret_cast<const u64 *>(a->offsets);
    ca.num_segments = nseg;
    ca.n = a->n;
    ca.limit[SC_W8] = 8;
    ca.limit[SC_W16] = 16;
    ca.limit[SC_W32] = 32;
    /* Values of V_BYTES leave the classes of 2 and 4 keys a lane empty. */
    ca.limit[SC_W64] = vmode == V_BYTES ? 32 : 64;
    ca.limit[SC_W128] = vmode == V_BYTES ? 32 : 128; /* < 256: wlists */
    ca.limit[SC_BS] = (u32)PS.block * PS.items;
    ca.limit[SC_BL] = (u32)PL.block * PL.items;
    ca.wlists = wlists;
    ca.blists = blists;
    ca.counts = ctl->counts;
    ca.bad = &ctl->bad;
    ca.huge = huge;
    ca.huge_cap = huge_cap;
    ca.huge_first = ctl->huge;
    ca.huge_first_cap = HUGE_FIRST;
    /* Four turns of 32 segments a warp at least, their loads in flight
     * together. */
    seg_classify_kernel<<<parsum_cu::aux_grid(ctx, nseg, SC_WARPS * 32 * 4),
                          SC_WARPS * 32, 0, st->stream>>>(ca);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

/* The size classes' sorts of the segmented sort (launch_t), once the
 * classification has filled the lists. */
parsum_status launch_classes(parsum_context *ctx,
                             const cudaStream_t (&side)[3],
                             const parsum__cuda_sort_job &j, int v,
                             unsigned vword, const parsum__sort_args *a,
                             const u64 *wlists, const u32 *blists,
                             const control *ctl)
{
    const u64 nseg = a->num_segments;
    const key_order ko = parsum__cuda_sort_order(j);
    ws_args w = parsum__cuda_sort_args<ws_args>(j, ko, vword);
    w.list = wlists;
    w.list_count = ctl->counts;
    bs_args bs = parsum__cuda_sort_args<bs_args>(j, ko, vword);
    bs.offsets = reinterpret_cast<const u64 *>(a->offsets);
    bs.list = blists;
    bs.list_count = ctl->counts + SC_BS;
    bs.gen = 0;
    bs_args bl = bs;
    bl.list = blists + (u64)(SC_BL - SC_BS) * nseg;
    bl.list_count = ctl->counts + SC_BL;
    switch (parsum_dtype_size(j.key_dtype)) {
    case 1: return launch_v<uint8_t>(ctx, side, v, w, bs, bl, nseg);
    case 2: return launch_v<uint16_t>(ctx, side, v, w, bs, bl, nseg);
    case 4: return launch_v<u32>(ctx, side, v, w, bs, bl, nseg);
    default: return launch_v<u64>(ctx, side, v, w, bs, bl, nseg);
    }
}

/* The huge segments the classification found (h, read back; the bounds of
 * those past HUGE_FIRST still in huge on the device), sorted from the
 * host one after another. */
parsum_status sort_all_huge(parsum_context *ctx,
                            const parsum__cuda_sort_job &j, const control &h,
                            const u64 *huge, u64 huge_cap, u64 large,
                            void *sort_scratch)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u32 nhuge = h.counts[SC_HUGE];
    if (nhuge > huge_cap)
        return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                            "%s: %u segments above %llu keys, room for %llu",
                            st->api, nhuge, (unsigned long long)large,
                            (unsigned long long)huge_cap);
    if (nhuge == 0)
        return PARSUM_OK;
    parsum_status s = sort_huge(ctx, j, h.huge,
                                nhuge < HUGE_FIRST ? nhuge : HUGE_FIRST,
                                sort_scratch);
    if (s != PARSUM_OK || nhuge <= HUGE_FIRST)
        return s;
    const size_t rest = (size_t)(nhuge - HUGE_FIRST);
    u64 *be = static_cast<u64 *>(malloc(rest * 16));
    if (be == nullptr)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: %zu bytes of host memory", st->api, rest * 16);
    cudaError_t e = cudaMemcpyAsync(be, huge + 2 * HUGE_FIRST, rest * 16,
                                    cudaMemcpyDeviceToHost, st->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st->stream);
    if (e != cudaSuccess) {
        free(be);
        PARSUM_CUDA_TRY(ctx, e);
    }
    s = sort_huge(ctx, j, be, (u32)rest, sort_scratch);
    free(be);
    return s;
}

} /* namespace */

parsum_status parsum__cuda_segmented_sort(parsum_context *ctx,
                                          const parsum__sort_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (a->num_segments >= (size_t)UINT32_MAX)
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: %zu segments; the CUDA segmented sort "
                            "takes fewer than 2^32 - 1",
                            a->fn, a->num_segments);
    parsum__cuda_sort_job j;
    j.keys_in = a->keys_in;
    j.keys_out = a->keys_out;
    j.values_in = a->values_in;
    j.values_out = a->values_out;
    j.n = a->n;
    j.key_dtype = a->key_dtype;
    j.value_size = a->value_size;
    j.indices = false;
    j.descending = a->descending;
    j.begin_bit = a->begin_bit;
    j.end_bit = a->end_bit;
    s = parsum__cuda_sort_check(ctx, j, a->fn);
    if (s != PARSUM_OK)
        return s;
    const u64 nseg = a->num_segments;
    const u64 n = a->n;
    const tile_policy PL = block_sort_policy(true);
    const u64 large = (u64)PL.block * PL.items;
    /* Segments longer than the large block tile: at most n / (large + 1). */
    u64 huge_cap = n / (large + 1) + 1;
    if (huge_cap > nseg)
        huge_cap = nseg;
    /* The warp classes' lists of (begin, length) words, the block
     * classes' of segment numbers. */
    const size_t wlist_bytes = round_up((size_t)SC_BS * nseg * 8, 256);
    const size_t blist_bytes = round_up((size_t)(SC_HUGE - SC_BS) * nseg * 4, 256);
    const size_t list_bytes = wlist_bytes + blist_bytes;
    const size_t huge_bytes = round_up((size_t)huge_cap * 16, 256);
    const size_t sort_bytes =
        n > large ? parsum__cuda_sort_scratch_bytes(j) : 0;
    const size_t total =
        round_up(sizeof(control), 256) + list_bytes + huge_bytes + sort_bytes;
    carve cv = {static_cast<unsigned char *>(parsum__scratch(ctx, total,
                                                             a->fn)),
                0};
    if (cv.base == nullptr)
        return PARSUM_ERR_OUT_OF_MEMORY;
    control *ctl = static_cast<control *>(cv.take(sizeof(control)));
    u64 *wlists = static_cast<u64 *>(cv.take((size_t)SC_BS * nseg * 8));
    u32 *blists = static_cast<u32 *>(cv.take((size_t)(SC_HUGE - SC_BS) * nseg * 4));
    u64 *huge = static_cast<u64 *>(cv.take((size_t)huge_cap * 16));
    void *sort_scratch = sort_bytes > 0 ? cv.take(sort_bytes) : nullptr;

    unsigned vword;
    const int vmode = parsum__cuda_sort_vmode(j, &vword);
    s = launch_classify(ctx, a, vmode, ctl, wlists, blists, huge, huge_cap);
    if (s != PARSUM_OK)
        return s;

    /* The classes' kernels on four streams (launch_t); the counts, the
     * bad flag and the first huge bounds come back on side stream 2
     * before its block sorts start, into pinned memory, so the host has
     * them while the sorts run and does not wait for their end. */
    void *pinned = nullptr;
    s = parsum__cuda_pinned(ctx, sizeof(control), &pinned);
    if (s != PARSUM_OK)
        return s;
    cudaStream_t side[3];
    s = parsum__cuda_fork(ctx, 3, side);
    if (s != PARSUM_OK)
        return s;
    cudaError_t e = cudaMemcpyAsync(pinned, ctl, sizeof(control),
                                    cudaMemcpyDeviceToHost, side[2]);
    if (e == cudaSuccess)
        e = cudaEventRecord(st->pinned_ready, side[2]);
    s = e != cudaSuccess ? parsum__cuda_error(ctx, e, "cudaMemcpyAsync",
                                              __FILE__, __LINE__, __func__)
        : nseg > 0 ? launch_classes(ctx, side, j, vmode, vword, a, wlists,
                                    blists, ctl)
                   : PARSUM_OK;
    const parsum_status js = parsum__cuda_join(ctx, 3);
    if (s != PARSUM_OK)
        return s;
    if (js != PARSUM_OK)
        return js;
    PARSUM_CUDA_TRY(ctx, cudaEventSynchronize(st->pinned_ready));
    control h;
    memcpy(&h, pinned, sizeof h);
    s = sort_all_huge(ctx, j, h, huge, huge_cap, large, sort_scratch);
    if (s != PARSUM_OK)
        return s;
    if (h.bad) {
        /* The work ran on clamped segments; the caller may free the
         * buffers once told. */
        PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: offsets must be num_segments + 1 "
                            "non-decreasing values from 0 to n = %zu "
                            "(checked on the device; segments were clamped "
                            "to [0, n))",
                            a->fn, a->n);
    }
    return PARSUM_OK;
}
