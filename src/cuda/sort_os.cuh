/*
 * sort_os.cuh - the host side of the onesweep passes, shared by sort.cu
 * (variant 0, every key and value layout) and sort_var<N>.cu (variant N
 * of os_variant_of, for the layouts of os_variant_built). Each variant
 * lives in its own file so that they compile in parallel.
 */
#ifndef PARSUM_CUDA_SORT_OS_CUH
#define PARSUM_CUDA_SORT_OS_CUH

#include "sort_host.h"

namespace parsum_sortos {

using namespace parsum_sk;

/* The sizes of the onesweep path's scratch for one job and variant. */
struct os_layout {
    u64 tile;
    u64 tiles_per_portion;
    u32 portions;
    u32 max_tiles;
    size_t zeroed; /* hist + counters + descriptors 0, memset per call */
    size_t desc;   /* one descriptor array */
    size_t bytes;  /* everything */
};


/* Every pass and portion of one sort, launched with variant VAR (KD and
 * LBW: as onesweep_kernel's). */
template <class K, int V, int VAR, int KD, int LBW>
parsum_status launch_passes(parsum_context *ctx, os_args a,
                            const os_layout &L, u64 n)
{
    constexpr os_policy P = onesweep_policy((int)sizeof(K), V, VAR);
    constexpr size_t smem = onesweep_smem((int)sizeof(K), V, P.block, P.items,
                                          P.match);
    const void *k =
        reinterpret_cast<const void *>(onesweep_kernel<K, V, VAR, KD, LBW>);
    static parsum__cuda_occupancy_cache cache;
    int per_sm = 0;
    parsum_status s =
        parsum__cuda_occupancy(ctx, cache, k, P.block, smem, &per_sm);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u64 resident = (u64)per_sm * (u64)st->sm_count;
    const u64 portion_keys = L.tiles_per_portion * L.tile;
    for (u32 p = 0; p < a.ko.passes; ++p) {
        for (u32 q = 0; q < L.portions; ++q) {
            a.pass = p;
            a.portion = q;
            a.first = (u64)q * portion_keys;
            a.count = n - a.first < portion_keys ? n - a.first : portion_keys;
            a.num_tiles = (u32)((a.count + L.tile - 1) / L.tile);
            const unsigned grid =
                (unsigned)(a.num_tiles < resident ? a.num_tiles : resident);
            onesweep_kernel<K, V, VAR, KD, LBW>
                <<<grid, P.block, smem, st->stream>>>(a);
            PARSUM_CUDA_TRY(ctx, cudaGetLastError());
        }
    }
    return PARSUM_OK;
}

/* The passes with the policy's look-back window, or with one descriptor
 * a step where the host asks for it (a.lbw == 1: sort.cu,
 * lookback_one_step) and such kernels are built: variant 5's 4-byte keys
 * only, the layouts measured faster so. The window is a template
 * parameter, not a run-time one: a run-time window cost the u32 keys'
 * 56-register kernel more spills and 3-4 % on an H100. */
template <class K, int V, int VAR, int KD = 0>
parsum_status passes_t(parsum_context *ctx, const os_args &a,
                       const os_layout &L, u64 n)
{
    constexpr int W = onesweep_policy((int)sizeof(K), V, VAR).lbw;
    if constexpr (VAR == 5 && W > 1 && sizeof(K) <= 4)
        if (a.lbw == 1u)
            return launch_passes<K, V, VAR, KD, 1>(ctx, a, L, n);
    return launch_passes<K, V, VAR, KD, W>(ctx, a, L, n);
}

/* Variant VAR's passes, KD as onesweep_kernel's, for a layout that
 * os_variant_built(VAR, ..) accepts. */
template <int VAR, int KD>
parsum_status os_passes_layout(parsum_context *ctx, int ks, int vmode,
                               const os_args &a, const os_layout &L, u64 n)
{
    if (ks == 4 && vmode == V_NONE)
        return passes_t<u32, V_NONE, VAR, KD>(ctx, a, L, n);
    if (ks == 4 && vmode == V_4)
        return passes_t<u32, V_4, VAR, KD>(ctx, a, L, n);
    if (ks == 8 && vmode == V_NONE)
        return passes_t<u64, V_NONE, VAR, KD>(ctx, a, L, n);
    return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                        "%s: onesweep variant %d is not built for %d-byte "
                        "keys with value mode %d",
                        parsum__cuda_st(ctx)->api, VAR, ks, vmode);
}

/* Variant VAR's passes. The default variant also has integer-key kernels
 * (two instructions a digit instead of about eight; NOTES 11); the
 * others, there for comparisons, are built for the general digit only. */
template <int VAR>
parsum_status os_passes_var(parsum_context *ctx, int ks, int vmode,
                            const os_args &a, const os_layout &L, u64 n)
{
    if constexpr (VAR == 5)
        if (a.ko.kc != KC_FLOAT)
            return os_passes_layout<VAR, 1>(ctx, ks, vmode, a, L, n);
    return os_passes_layout<VAR, 0>(ctx, ks, vmode, a, L, n);
}

/* Defined in sort_var<N>.cu. */
extern template parsum_status os_passes_var<1>(parsum_context *, int, int,
                                               const os_args &,
                                               const os_layout &, u64);
extern template parsum_status os_passes_var<2>(parsum_context *, int, int,
                                               const os_args &,
                                               const os_layout &, u64);
extern template parsum_status os_passes_var<3>(parsum_context *, int, int,
                                               const os_args &,
                                               const os_layout &, u64);
extern template parsum_status os_passes_var<4>(parsum_context *, int, int,
                                               const os_args &,
                                               const os_layout &, u64);
extern template parsum_status os_passes_var<5>(parsum_context *, int, int,
                                               const os_args &,
                                               const os_layout &, u64);

} /* namespace parsum_sortos */

#endif
