/*
 * sort.cu - the CUDA radix sort: the backend's sort slot (parsum_sort,
 * parsum_sort_indices) and the one-array sort that the segmented sort
 * (segsort.cu) runs on its largest segments.
 *
 * Up to one block tile of keys (block_sort_policy(true): 4096 by default)
 * are sorted by a single block in shared memory (segsort_kernels.cuh):
 * one launch, no scratch. Larger inputs take the onesweep path of
 * sort_kernels.cuh: one zeroing memset, the histogram of every pass, the
 * plan, a copy kernel only when sorting in place, then one launch per
 * pass and portion, with the onesweep variant of variant_for. Nothing
 * waits for the host: which passes run and which buffers they use are
 * decided on the device by the plan kernel, and a skipped pass's launch
 * returns at once.
 *
 * Scratch (one parsum__scratch request per call): a second key buffer
 * (two when keys_out is NULL), a second value buffer, histograms, digit
 * bases, routes, and two look-back descriptor arrays (one 32-bit word per
 * digit and tile of the largest portion).
 */
#include "sort_os.cuh"

using namespace parsum_sk;
using namespace parsum_sortos;
using parsum_cu::aux_grid;
using parsum_cu::carve;
using parsum_cu::round_up;

namespace {

size_t key_bytes(const parsum__cuda_sort_job &j)
{
    return parsum_dtype_size(j.key_dtype);
}

/* PARSUM_SORT_VARIANT=<N>: run onesweep variant N (os_variant_of) for
 * every n where it is built for the layout; read once. Unset or out of
 * range: the default choice below. */
int forced_variant()
{
    static const int v =
        (int)parsum__cuda_env_int("PARSUM_SORT_VARIANT", 0, OS_VARIANTS - 1);
    return v;
}

/* 1: the onesweep look-back reads one descriptor a step, in the kernels
 * built so (variant 5's 4-byte keys: sort_os.cuh, passes_t); 0: the
 * variant's window (lbw). Measured at 2^28 keys (NOTES 11): one a
 * step makes a pass of 4-byte keys 2-3 % faster on an H100 (u32 keys
 * 1.01x -> 1.03-1.04x CUB, u32/u32 pairs 0.90-0.91x -> 0.93x) and u32
 * pairs on an H200 (1.06x -> 1.09x): such a pass is bound by memory, and
 * the window's extra loads are L2 traffic. 8-byte keys (u64 on the H200
 * 1.18x -> 1.14x) and sorts of up to 2^24 keys (2^20 keys; the 2^20-key
 * segments of a segmented sort) keep the wider window, whose walks cover
 * the tiles in flight in fewer round trips.
 * PARSUM_CUDA_SORT_LOOKBACK=1 (or 4) forces a window (tests, measurements). */
u32 lookback_one_step(u64 n, u64 ks)
{
    static const long forced =
        parsum__cuda_env_int("PARSUM_CUDA_SORT_LOOKBACK", 1, 4);
    if (forced > 0)
        return forced == 1 ? 1u : 0u;
    return ks <= 4 && n > ((u64)1 << 24) ? 1u : 0u;
}

int variant_for(const parsum__cuda_sort_job &j, int vmode)
{
    const int ks = (int)key_bytes(j);
    int var = forced_variant();
    if (var < 0)
        var = 5; /* measured fastest at 2^20 and 2^28 keys (NOTES 11) */
    return os_variant_built(var, ks, vmode) ? var : 0;
}

os_layout layout_for(const parsum__cuda_sort_job &j, int vmode, int var)
{
    const os_policy P = onesweep_policy((int)key_bytes(j), vmode, var);
    os_layout L;
    L.tile = (u64)P.block * (u64)P.items;
    const u64 chunk = L.tile * HIST_CHUNK_TILES;
    L.tiles_per_portion = PORTION_LIMIT / chunk * HIST_CHUNK_TILES;
    const u64 tiles = (j.n + L.tile - 1) / L.tile;
    L.portions = (u32)((tiles + L.tiles_per_portion - 1) / L.tiles_per_portion);
    L.max_tiles = (u32)(tiles < L.tiles_per_portion ? tiles
                                                    : L.tiles_per_portion);
    const size_t ks = key_bytes(j);
    L.desc = round_up((size_t)L.max_tiles * RADIX * 4, 256);
    L.zeroed = round_up((size_t)L.portions * MAX_PASSES * RADIX * 4, 256) +
               256 /* counters */ + L.desc;
    L.bytes = round_up(j.n * ks, 256) * (j.keys_out == nullptr ? 2 : 1) +
              round_up(j.n * j.value_size, 256) + L.zeroed + L.desc +
              round_up((size_t)MAX_PASSES * L.portions * RADIX * 8, 256) +
              round_up(MAX_PASSES * sizeof(route), 256) + 256 /* copy */;
    return L;
}

/* ------------------------------------------------------------------------ */
/* The small sort: one block                                                 */
/* ------------------------------------------------------------------------ */

template <class K, int V>
parsum_status small_t(parsum_context *ctx, const bs_args &a)
{
    constexpr tile_policy P = block_sort_policy(true);
    constexpr size_t smem =
        block_sort_smem((int)sizeof(K), V, P.block, P.items);
    const void *k =
        reinterpret_cast<const void *>(block_sort_kernel<K, V, P.block, P.items>);
    static parsum__cuda_occupancy_cache cache;
    int per_sm = 0;
    parsum_status s =
        parsum__cuda_occupancy(ctx, cache, k, P.block, smem, &per_sm);
    if (s != PARSUM_OK)
        return s;
    block_sort_kernel<K, V, P.block, P.items>
        <<<1, P.block, smem, parsum__cuda_st(ctx)->stream>>>(a);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class K>
parsum_status small_v(parsum_context *ctx, int v, const bs_args &a)
{
    switch (v) {
    case V_NONE: return small_t<K, V_NONE>(ctx, a);
    case V_4: return small_t<K, V_4>(ctx, a);
    case V_8: return small_t<K, V_8>(ctx, a);
    default: return small_t<K, V_BYTES>(ctx, a);
    }
}

/* ------------------------------------------------------------------------ */
/* Onesweep                                                                  */
/* ------------------------------------------------------------------------ */

template <class K>
parsum_status hist_t(parsum_context *ctx, const hist_args &h)
{
    const u64 nchunks = (h.n + h.chunk - 1) / h.chunk;
    const u64 cap = (u64)parsum__cuda_st(ctx)->sm_count * 4;
    const unsigned grid = (unsigned)(nchunks < cap ? nchunks : cap);
    if (h.ko.kc == KC_FLOAT)
        sort_hist_kernel<K, false>
            <<<grid, HIST_BLOCK, 0, parsum__cuda_st(ctx)->stream>>>(h);
    else
        sort_hist_kernel<K, true>
            <<<grid, HIST_BLOCK, 0, parsum__cuda_st(ctx)->stream>>>(h);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class K>
parsum_status passes_v(parsum_context *ctx, int v, const os_args &a,
                       const os_layout &L, u64 n)
{
    switch (v) {
    case V_NONE: return passes_t<K, V_NONE, 0>(ctx, a, L, n);
    case V_4: return passes_t<K, V_4, 0>(ctx, a, L, n);
    case V_8: return passes_t<K, V_8, 0>(ctx, a, L, n);
    default: return passes_t<K, V_BYTES, 0>(ctx, a, L, n);
    }
}

parsum_status passes_var(parsum_context *ctx, int var, int ks, int vmode,
                         const os_args &a, const os_layout &L, u64 n)
{
    switch (var) {
    case 1: return os_passes_var<1>(ctx, ks, vmode, a, L, n);
    case 2: return os_passes_var<2>(ctx, ks, vmode, a, L, n);
    case 3: return os_passes_var<3>(ctx, ks, vmode, a, L, n);
    case 4: return os_passes_var<4>(ctx, ks, vmode, a, L, n);
    case 5: return os_passes_var<5>(ctx, ks, vmode, a, L, n);
    default: break;
    }
    switch (ks) {
    case 1: return passes_v<uint8_t>(ctx, vmode, a, L, n);
    case 2: return passes_v<uint16_t>(ctx, vmode, a, L, n);
    case 4: return passes_v<u32>(ctx, vmode, a, L, n);
    default: return passes_v<u64>(ctx, vmode, a, L, n);
    }
}

parsum_status onesweep(parsum_context *ctx, const parsum__cuda_sort_job &j,
                       const key_order &ko, int vmode, u32 vword,
                       void *scratch)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const int var = variant_for(j, vmode);
    const os_layout L = layout_for(j, vmode, var);
    const size_t ks = key_bytes(j);
    carve cv = {static_cast<unsigned char *>(scratch), 0};
    void *ktmp = cv.take(j.n * ks);
    void *kout = j.keys_out != nullptr ? j.keys_out : cv.take(j.n * ks);
    void *vtmp = j.value_size > 0 ? cv.take(j.n * j.value_size) : nullptr;
    unsigned char *zero = static_cast<unsigned char *>(cv.take(L.zeroed));
    u32 *hist = reinterpret_cast<u32 *>(zero);
    u32 *counters = reinterpret_cast<u32 *>(
        zero + round_up((size_t)L.portions * MAX_PASSES * RADIX * 4, 256));
    u32 *desc0 = counters + 64;
    u32 *desc1 = static_cast<u32 *>(cv.take(L.desc));
    u64 *base = static_cast<u64 *>(
        cv.take((size_t)MAX_PASSES * L.portions * RADIX * 8));
    route *routes = static_cast<route *>(cv.take(MAX_PASSES * sizeof(route)));
    u32 *copy = static_cast<u32 *>(cv.take(2 * sizeof(u32)));

    PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(zero, 0, L.zeroed, st->stream));

    hist_args h;
    h.keys = j.keys_in;
    h.n = j.n;
    h.chunk = L.tile * HIST_CHUNK_TILES;
    h.portion_size = L.tiles_per_portion * L.tile;
    h.ko = ko;
    h.hist = hist;
    parsum_status s;
    switch (ks) {
    case 1: s = hist_t<uint8_t>(ctx, h); break;
    case 2: s = hist_t<uint16_t>(ctx, h); break;
    case 4: s = hist_t<u32>(ctx, h); break;
    default: s = hist_t<u64>(ctx, h); break;
    }
    if (s != PARSUM_OK)
        return s;

    const bool has_values = j.value_size > 0;
    plan_args pa;
    pa.hist = hist;
    pa.base = base;
    pa.routes = routes;
    pa.copy = copy;
    pa.n = j.n;
    pa.passes = ko.passes;
    pa.portions = L.portions;
    pa.k_inplace = j.keys_in == kout;
    pa.v_inplace = has_values && !j.indices && j.values_in == j.values_out;
    pa.has_values = has_values;
    pa.gen = j.indices;
    sort_plan_kernel<<<1, RADIX, 0, st->stream>>>(pa);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());

    /* Not in place, the only copy the plan can ask for is that of a call
     * whose passes are all skipped: the last pass's launches do it, and
     * the copy kernel is not launched. */
    const bool fold_copy = !pa.k_inplace && !pa.v_inplace;
    if (!fold_copy) {
        copy_args ca;
        ca.kin = j.keys_in;
        ca.ktmp = ktmp;
        ca.kout = kout;
        ca.vin = j.values_in;
        ca.vtmp = vtmp;
        ca.vout = j.values_out;
        ca.n = j.n;
        ca.ks = (u32)ks;
        ca.vs = (u32)j.value_size;
        ca.copy = copy;
        sort_copy_kernel<<<aux_grid(ctx, j.n, 1024), 256, 0, st->stream>>>(
            ca);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    }

    os_args a;
    a.kin = j.keys_in;
    a.ktmp = ktmp;
    a.kout = kout;
    a.vin = j.values_in;
    a.vtmp = vtmp;
    a.vout = j.values_out;
    a.max_tiles = L.max_tiles;
    a.portions = L.portions;
    a.ko = ko;
    a.vsize = (u32)j.value_size;
    a.vword = vword;
    a.base = base;
    a.routes = routes;
    a.desc[0] = desc0;
    a.desc[1] = desc1;
    a.counter[0] = counters;
    a.counter[1] = counters + 32; /* apart: another 128-byte line */
    a.fold_copy = fold_copy ? 1u : 0u;
    a.copy = copy;
    /* PARSUM_CUDA_SORT_POS32=0: the 64-bit positions of n > 2^32 at every
     * size, so that the tests reach that path without that many keys. */
    static const bool pos32_on = parsum__cuda_env_on("PARSUM_CUDA_SORT_POS32");
    a.pos32 = j.n <= ((u64)1 << 32) && pos32_on ? 1u : 0u;
    a.lbw = lookback_one_step(j.n, ks);
    return passes_var(ctx, var, (int)ks, vmode, a, L, j.n);
}

u32 key_class(parsum_dtype d)
{
    switch (d) {
    case PARSUM_I8:
    case PARSUM_I16:
    case PARSUM_I32:
    case PARSUM_I64: return KC_SIGNED;
    case PARSUM_F32:
    case PARSUM_F64: return KC_FLOAT;
    default: return KC_UNSIGNED;
    }
}

} /* namespace */

key_order parsum__cuda_sort_order(const parsum__cuda_sort_job &j)
{
    key_order ko;
    ko.kc = key_class(j.key_dtype);
    ko.begin_bit = j.begin_bit;
    ko.end_bit = j.end_bit;
    ko.descending = j.descending ? 1u : 0u;
    ko.passes = (j.end_bit - j.begin_bit + RADIX_BITS - 1) / RADIX_BITS;
    return ko;
}

int parsum__cuda_sort_vmode(const parsum__cuda_sort_job &j, unsigned *vword)
{
    *vword = 1;
    if (j.value_size == 0)
        return V_NONE;
    if (j.indices)
        return V_8;
    const uintptr_t al =
        (uintptr_t)j.values_in | (uintptr_t)j.values_out;
    if (j.value_size == 4 && al % 4 == 0)
        return V_4;
    if (j.value_size == 8 && al % 8 == 0)
        return V_8;
    unsigned w = 8;
    while (w > 1 && (j.value_size % w != 0 || al % w != 0))
        w >>= 1;
    *vword = w;
    return V_BYTES;
}

parsum_status parsum__cuda_sort_check(parsum_context *ctx,
                                      const parsum__cuda_sort_job &j,
                                      const char *fn)
{
    const size_t ks = key_bytes(j);
    if ((uintptr_t)j.keys_in % ks != 0 || (uintptr_t)j.keys_out % ks != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: the key arrays must be aligned to the %zu "
                            "bytes of %s on a CUDA context",
                            fn, ks, parsum_dtype_name(j.key_dtype));
    if (j.indices && (uintptr_t)j.values_out % 8 != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: perm must be aligned to 8 bytes", fn);
    return PARSUM_OK;
}

size_t parsum__cuda_sort_scratch_bytes(const parsum__cuda_sort_job &j)
{
    unsigned vword;
    const int v = parsum__cuda_sort_vmode(j, &vword);
    /* The most any variant needs, so that a larger n never gets less
     * whichever variant each n takes. */
    size_t most = 0;
    for (int var = 0; var < OS_VARIANTS; ++var)
        if (os_variant_built(var, (int)key_bytes(j), v)) {
            const size_t b = layout_for(j, v, var).bytes;
            most = b > most ? b : most;
        }
    return most;
}

bool parsum__cuda_sort_is_small(const parsum__cuda_sort_job &j)
{
    const tile_policy P = block_sort_policy(true);
    return j.n <= (size_t)P.block * (size_t)P.items;
}

parsum_status parsum__cuda_sort_run(parsum_context *ctx,
                                    const parsum__cuda_sort_job &j,
                                    void *scratch)
{
    const key_order ko = parsum__cuda_sort_order(j);
    unsigned vword;
    const int v = parsum__cuda_sort_vmode(j, &vword);
    if (parsum__cuda_sort_is_small(j)) {
        bs_args a = parsum__cuda_sort_args<bs_args>(j, ko, vword);
        a.offsets = nullptr;
        a.list = nullptr;
        a.list_count = nullptr;
        a.gen = j.indices ? 1u : 0u;
        switch (key_bytes(j)) {
        case 1: return small_v<uint8_t>(ctx, v, a);
        case 2: return small_v<uint16_t>(ctx, v, a);
        case 4: return small_v<u32>(ctx, v, a);
        default: return small_v<u64>(ctx, v, a);
        }
    }
    return onesweep(ctx, j, ko, v, vword, scratch);
}

parsum_status parsum__cuda_sort(parsum_context *ctx, const parsum__sort_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_sort_job j;
    j.keys_in = a->keys_in;
    j.keys_out = a->keys_out;
    j.values_in = a->values_in;
    j.values_out = a->values_out;
    j.n = a->n;
    j.key_dtype = a->key_dtype;
    j.value_size = a->value_size;
    j.indices = a->indices;
    j.descending = a->descending;
    j.begin_bit = a->begin_bit;
    j.end_bit = a->end_bit;
    s = parsum__cuda_sort_check(ctx, j, a->fn);
    if (s != PARSUM_OK)
        return s;
    void *scratch = nullptr;
    if (!parsum__cuda_sort_is_small(j)) {
        scratch = parsum__scratch(ctx, parsum__cuda_sort_scratch_bytes(j),
                                  a->fn);
        if (scratch == nullptr)
            return PARSUM_ERR_OUT_OF_MEMORY;
    }
    return parsum__cuda_sort_run(ctx, j, scratch);
}
