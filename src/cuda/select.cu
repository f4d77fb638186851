/*
 * select.cu - the CUDA side of the selection family (parsum.h, "Selection,
 * partition, unique and run-length encoding"): the backend's select and
 * runs slots on top of select_tile_kernel (select_tile.cuh) and, for the
 * three-way partition and keys of several words, select_kernel
 * (select_kernels.cuh).
 *
 *  - select / select_by_key / select_indices: one pass, G = 1.
 *  - partition, partition_by_key, split_by_bit: a count pass (per-tile
 *    counts and the total), then the pass with G = 2. partition3: the
 *    same with G = 3 on select_kernel. partition_unstable(_by_key): the
 *    pass with G = 2 alone (ka.rev), the rest reversed from the end.
 *  - unique (by key): G = 1 with the run-head selector.
 *  - run-length encode: select_tile_kernel writes the lengths, all but
 *    each tile's last, which run_fix_kernel finishes; on select_kernel
 *    the heads' positions go to lengths and two small kernels turn them
 *    into differences in place.
 *  - non-trivial runs: the starts of runs of length >= 2 to offsets, their
 *    ends to lengths (two passes), then lengths = end - start + 1.
 *  - custom predicates: select_custom.cu evaluates them into packed bits
 *    in scratch first; the pass then reads those as a BITS selector.
 */
#include "cuda_internal.h"

#include "select_tile.cuh"

#include <string.h>

using parsum_k::u32;
using parsum_k::u64;

using parsum_cu::aux_grid;
using parsum_cu::carve;
using parsum_cu::round_up;

namespace {

constexpr int AUX_BLOCK = 256;
/* Run positions per block of the in-place difference kernels. */
constexpr u64 DIFF_CHUNK = (u64)AUX_BLOCK * 8;

/* The word an element of `size` bytes is moved in: the largest of 16, 8,
 * 4, 2, 1 bytes that divides size and the alignment of every pointer. */
u32 word_for(size_t size, const void *p, const void *q)
{
    for (u32 w = 16; w > 1; w /= 2) {
        if (size % w != 0)
            continue;
        if (p != NULL && (uintptr_t)p % w != 0)
            continue;
        if (q != NULL && (uintptr_t)q % w != 0)
            continue;
        return w;
    }
    return 1;
}

parsum_k::sel_desc device_selector(const parsum_selector *s)
{
    parsum_k::sel_desc d;
    memset(&d, 0, sizeof d);
    d.kind = (u32)s->kind;
    d.pred = (u32)s->pred;
    d.dtype = (u32)s->dtype;
    d.bit = s->a.u32;
    memcpy(&d.a, &s->a, parsum_dtype_size(s->dtype));
    memcpy(&d.b, &s->b, parsum_dtype_size(s->dtype));
    d.bytes = s->bytes;
    d.bits = s->bits;
    d.bit_off = s->bit_offset;
    return d;
}

parsum_k::sel_desc run_selector(u32 kind)
{
    parsum_k::sel_desc d;
    memset(&d, 0, sizeof d);
    d.kind = kind;
    return d;
}

typedef void (*select_fn)(parsum_k::select_kargs);
typedef void (*count_fn)(parsum_k::select_kargs, u64 *);

template <int KS, int G>
void kernels_of(select_fn *k, count_fn *cnt)
{
    *k = parsum_k::select_kernel<KS, G>;
    *cnt = parsum_k::select_count_kernel<KS, G>;
}

template <int G>
void kernels_g(int ks, select_fn *k, count_fn *cnt)
{
    switch (ks) {
    case 1: kernels_of<1, G>(k, cnt); break;
    case 2: kernels_of<2, G>(k, cnt); break;
    case 4: kernels_of<4, G>(k, cnt); break;
    case 8: kernels_of<8, G>(k, cnt); break;
    default: kernels_of<0, G>(k, cnt); break;
    }
}

/* Scratch of one pass: [tile counter | descriptors (16 bytes per tile)].
 * The counts live apart (see counts_bytes). */
size_t pass_state_bytes(u64 tiles)
{
    return 64 + 16 * tiles;
}

/* The selector reads the keys (a predicate, a run boundary). */
bool reads_keys(const parsum_k::sel_desc &s)
{
    return s.kind == parsum_k::SK_PRED || s.kind >= parsum_k::SK_HEAD;
}

typedef void (*tile_fn)(parsum_k::select_kargs);

template <int KS>
void tile_kernels_of(int G, bool rev, tile_fn *k, count_fn *cnt)
{
    *k = G == 1 ? parsum_k::select_tile_kernel<KS, 1, false>
         : rev  ? parsum_k::select_tile_kernel<KS, 2, true>
                : parsum_k::select_tile_kernel<KS, 2, false>;
    *cnt = parsum_k::select_tile_count_kernel<KS>;
}

/* Points ka at the pass state (tile counter, then the look-back
 * descriptors) and zeroes it and the two totals. */
cudaError_t init_pass(parsum_context *ctx, parsum_k::select_kargs *ka,
                      u64 tiles, void *state, u64 *totals)
{
    cudaStream_t s = parsum__cuda_st(ctx)->stream;
    ka->num_tiles = (u32)tiles;
    ka->counter = static_cast<u32 *>(state);
    ka->desc = reinterpret_cast<u32 *>(static_cast<unsigned char *>(state) +
                                       64);
    cudaError_t e = cudaMemsetAsync(state, 0, pass_state_bytes(tiles), s);
    return e != cudaSuccess ? e
                            : cudaMemsetAsync(totals, 0, 2 * sizeof(u64), s);
}

/* Runs select_tile_kernel (G = 1 or 2) with keys of ks bytes in
 * registers (0: none); arguments as run_pass. */
parsum_status run_tile_pass(parsum_context *ctx, parsum_k::select_kargs ka,
                            int G, int ks, void *state, u64 *totals)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u64 tile = parsum_k::st_tile(ks);
    const u64 tiles = (ka.n + tile - 1) / tile;
    tile_fn k;
    count_fn cnt;
    const bool rev = ka.rev != 0u;
    switch (ks) {
    case 1: tile_kernels_of<1>(G, rev, &k, &cnt); break;
    case 2: tile_kernels_of<2>(G, rev, &k, &cnt); break;
    case 4: tile_kernels_of<4>(G, rev, &k, &cnt); break;
    case 8: tile_kernels_of<8>(G, rev, &k, &cnt); break;
    default: tile_kernels_of<0>(G, rev, &k, &cnt); break;
    }
    PARSUM_CUDA_TRY(ctx, init_pass(ctx, &ka, tiles, state, totals));
    if (G == 2 && !rev) {
        cnt<<<aux_grid(ctx, tiles, 1), parsum_k::ST_BLOCK, 0, st->stream>>>(
            ka, totals);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
        ka.totals = totals;
    } else {
        ka.count_out = totals;
    }
    /* Resident blocks only: each claims tiles until none is left. */
    int per_sm = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, k, parsum_k::ST_BLOCK, 0));
    u64 grid = (u64)(per_sm > 0 ? per_sm : 1) * (u64)st->sm_count;
    if (grid > tiles)
        grid = tiles;
    k<<<(unsigned)grid, parsum_k::ST_BLOCK, 0, st->stream>>>(ka);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

/* select_tile_kernel serves one or two groups; it holds keys in
 * registers when they are one aligned word (needed by a predicate or a
 * run boundary, or staged for the output), and moves other keys only as
 * the payload of flags. Returns the bytes of the keys it holds (0: none),
 * or -1 where select_kernel runs instead. */
int tile_keys(const parsum_k::select_kargs &ka, int G)
{
    /* PARSUM_CUDA_SELECT_TILE=0 in the environment runs select_kernel for
     * everything (for measurements against the first design). */
    static const bool tile_on =
        parsum__cuda_env_on("PARSUM_CUDA_SELECT_TILE");
    if (!tile_on)
        return -1;
    const bool word_keys = ka.keys != NULL && ka.key_word == ka.key_size &&
                           (ka.key_size == 1 || ka.key_size == 2 ||
                            ka.key_size == 4 || ka.key_size == 8);
    if (G > 2 || (!word_keys && reads_keys(ka.s0)))
        return -1;
    return word_keys && (reads_keys(ka.s0) || ka.keys_out != NULL)
               ? (int)ka.key_size
               : 0;
}

/* Runs the pass of G groups over ka (n, keys, selectors, outputs set;
 * state and counts filled here). totals: 2 u64 of device scratch that
 * receive the group totals (G >= 2) or, in totals[0], the selected count
 * (G == 1). state: pass_state_bytes of device scratch for SEL_TILE tiles
 * (select_tile_kernel's tiles are no smaller). */
parsum_status run_pass(parsum_context *ctx, parsum_k::select_kargs ka, int G,
                       void *state, u64 *totals)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u64 tiles = (ka.n + parsum_k::SEL_TILE - 1) / parsum_k::SEL_TILE;
    if (tiles > 0x7fffffffull)
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: n = %llu needs more than 2^31 - 1 tiles",
                            st->api, (unsigned long long)ka.n);
    const int tks = tile_keys(ka, G);
    if (tks >= 0)
        return run_tile_pass(ctx, ka, G, tks, state, totals);
    /* select_kernel: the three-way partition, and run boundaries of keys
     * of several words. Keys loaded into registers (its KS): for a
     * predicate, and for run boundaries of single-word keys. */
    int ks = 0;
    if (ka.s0.kind == parsum_k::SK_PRED ||
        (G == 3 && ka.s1.kind == parsum_k::SK_PRED))
        ks = (int)ka.key_size;
    else if (ka.s0.kind >= parsum_k::SK_HEAD && ka.key_word == ka.key_size &&
             ka.key_size <= 8)
        ks = (int)ka.key_size;
    select_fn k;
    count_fn cnt;
    if (G == 1)
        kernels_g<1>(ks, &k, &cnt);
    else if (G == 2)
        kernels_g<2>(ks, &k, &cnt);
    else
        kernels_g<3>(ks, &k, &cnt);

    PARSUM_CUDA_TRY(ctx, init_pass(ctx, &ka, tiles, state, totals));
    if (G >= 2 && ka.rev == 0u) {
        cnt<<<aux_grid(ctx, tiles, 1), parsum_k::SEL_BLOCK, 0, st->stream>>>(
            ka, totals);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
        ka.totals = totals;
    } else {
        ka.count_out = totals;
    }
    k<<<(unsigned)tiles, parsum_k::SEL_BLOCK, 0, st->stream>>>(ka);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

/* Device scratch of a call: the look-back state of one pass over n
 * elements (reused by a second pass), 4 u64 counts, and `extra` bytes. */
struct pass_scratch {
    void *state;
    u64 *counts;
    void *extra;
};

parsum_status take_scratch(parsum_context *ctx, size_t n, size_t extra,
                           pass_scratch *ps)
{
    const u64 tiles = (n + parsum_k::SEL_TILE - 1) / parsum_k::SEL_TILE;
    const size_t sb = pass_state_bytes(tiles);
    carve cv = {static_cast<unsigned char *>(parsum__scratch(
                    ctx, round_up(sb, 256) + 256 + round_up(extra, 256),
                    parsum__cuda_st(ctx)->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    ps->state = cv.take(sb);
    ps->counts = static_cast<u64 *>(cv.take(4 * sizeof(u64)));
    ps->extra = cv.take(extra);
    return PARSUM_OK;
}

/* Predicate keys are read as their dtype: they must be aligned to it. */
parsum_status check_pred_keys(parsum_context *ctx, const parsum_selector *s,
                              const void *keys, size_t key_size)
{
    if (s == NULL || s->kind != PARSUM_SELECT_PREDICATE)
        return PARSUM_OK;
    if ((uintptr_t)keys % key_size != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: the keys (%p) are not aligned to their "
                            "dtype (%zu bytes), which the CUDA backend "
                            "requires for a predicate",
                            parsum__cuda_st(ctx)->api, keys, key_size);
    return PARSUM_OK;
}

/* ---- run-length helpers ------------------------------------------------- */

/* bnd[b] = pos[(b + 1) * DIFF_CHUNK], or n past the last run (count runs
 * at pos, *count read on the device). */
__global__ void run_bounds_kernel(const u64 *pos, const u64 *count, u64 n,
                                  u64 *bnd)
{
    const u64 k = *count;
    const u64 chunks = (k + DIFF_CHUNK - 1) / DIFF_CHUNK;
    for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < chunks;
         b += (u64)gridDim.x * blockDim.x) {
        const u64 r = (b + 1) * DIFF_CHUNK;
        bnd[b] = r < k ? pos[r] : n;
    }
}

/* pos[r] = pos[r + 1] - pos[r] (pos[k] = n) in place: a block reads its
 * whole chunk (and the saved first position of the next) before writing. */
__global__ void run_lengths_kernel(u64 *pos, const u64 *count, u64 n,
                                   const u64 *bnd)
{
    constexpr int ITEMS = (int)(DIFF_CHUNK / AUX_BLOCK);
    const u64 k = *count;
    const u64 chunks = (k + DIFF_CHUNK - 1) / DIFF_CHUNK;
    for (u64 b = blockIdx.x; b < chunks; b += gridDim.x) {
        u64 len[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const u64 r = b * DIFF_CHUNK + (u64)i * AUX_BLOCK + threadIdx.x;
            len[i] = 0;
            if (r < k) {
                const u64 next = r + 1 == (b + 1) * DIFF_CHUNK ? bnd[b]
                                 : r + 1 < k                  ? pos[r + 1]
                                                              : n;
                len[i] = next - pos[r];
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const u64 r = b * DIFF_CHUNK + (u64)i * AUX_BLOCK + threadIdx.x;
            if (r < k)
                pos[r] = len[i];
        }
        __syncthreads();
    }
}

/* lengths[r] = lengths[r] (a run's last position) - offsets[r] + 1. */
__global__ void run_spans_kernel(const u64 *offsets, u64 *lengths,
                                 const u64 *count)
{
    const u64 k = *count;
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r < k;
         r += (u64)gridDim.x * blockDim.x)
        lengths[r] = lengths[r] - offsets[r] + 1u;
}

/* Finishes the lengths of select_tile_kernel's run pass: the last run of
 * each tile holds its start; the next run starts at the first run of a
 * later tile (first: rank, start per tile) or at n. */
__global__ void run_fix_kernel(const u64 *first, u64 tiles, u64 *len,
                               const u64 *count, u64 n)
{
    const u64 i0 = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (u64 t = i0; t < tiles; t += (u64)gridDim.x * blockDim.x) {
        const u64 r = first[2 * t];
        if (r != ~0ull && r > 0)
            len[r - 1] = first[2 * t + 1] - len[r - 1];
    }
    if (i0 == 0) {
        const u64 k = *count;
        if (k > 0)
            len[k - 1] = n - len[k - 1];
    }
}

/* Scratch bytes of one custom selector's bit array, rounded to 256 so
 * that a second array after it is aligned as carve aligns the first. */
size_t custom_bits_bytes(size_t n)
{
    return round_up((n + 31) / 32 * sizeof(u32), 256);
}

/* Replaces each custom selector of s0, s1 (NULL: none) by a BITS one
 * over the predicate's verdicts, written to bits_mem (room for one
 * custom_bits_bytes(n) array per custom selector). With n == 0 (bits_mem
 * NULL) the predicates are only compiled and checked, so that a broken
 * one is reported whatever the size of the call, as custom operators
 * are. */
parsum_status custom_to_bits(parsum_context *ctx, const parsum__select_args *a,
                             parsum_selector *s0, parsum_selector *s1,
                             void *bits_mem)
{
    parsum_selector *sel[2] = {s0, s1};
    unsigned char *next = static_cast<unsigned char *>(bits_mem);
    for (int i = 0; i < 2; ++i) {
        if (sel[i] == NULL || sel[i]->kind != PARSUM_SELECT_CUSTOM)
            continue;
        uint32_t *bits = reinterpret_cast<uint32_t *>(next);
        parsum_status s = parsum__cuda_pred_bits(
            ctx, sel[i]->custom, a->keys, a->n, a->key_size, bits);
        if (s != PARSUM_OK)
            return s;
        sel[i]->kind = PARSUM_SELECT_BITS;
        sel[i]->bits = bits;
        sel[i]->bit_offset = 0;
        if (next != NULL)
            next += custom_bits_bytes(a->n);
    }
    return PARSUM_OK;
}

parsum_k::select_kargs base_args(size_t n, const void *keys, size_t key_size,
                                 const void *keys_out, const void *values,
                                 size_t value_size, const void *values_out)
{
    parsum_k::select_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.n = n;
    ka.keys = keys;
    ka.key_size = (u32)key_size;
    ka.key_word = word_for(key_size, keys, keys_out);
    ka.values = values;
    ka.value_size = (u32)value_size;
    ka.value_word = word_for(value_size, values, values_out);
    return ka;
}

} /* namespace */

/* ---- backend slots ------------------------------------------------------ */

parsum_status parsum__cuda_select(parsum_context *ctx,
                                  const parsum__select_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn ? a->fn : "parsum_select");
    if (s != PARSUM_OK)
        return s;
    const int G = a->sel2 != NULL ? 3 : a->partition ? 2 : 1;
    parsum_selector sel = *a->sel, sel2 = {};
    parsum_selector *sel2p = NULL;
    if (a->sel2 != NULL) {
        sel2 = *a->sel2;
        sel2p = &sel2;
    }
    const int ncustom = (sel.kind == PARSUM_SELECT_CUSTOM) +
                        (sel2p != NULL && sel2.kind == PARSUM_SELECT_CUSTOM);
    if (G == 3 && a->n >= (1ull << 32))
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: n = %zu; a three-way partition on a CUDA "
                            "context handles fewer than 2^32 elements",
                            parsum__cuda_st(ctx)->api, a->n);
    s = check_pred_keys(ctx, a->sel, a->keys, a->key_size);
    if (s == PARSUM_OK)
        s = check_pred_keys(ctx, a->sel2, a->keys, a->key_size);
    if (s != PARSUM_OK)
        return s;
    if (a->n == 0) {
        s = custom_to_bits(ctx, a, &sel, sel2p, NULL);
        return s != PARSUM_OK ? s
                              : parsum__cuda_deliver_zero(ctx, a->counts,
                                                          G == 3 ? 2 : 1);
    }

    pass_scratch ps;
    s = take_scratch(ctx, a->n, (size_t)ncustom * custom_bits_bytes(a->n),
                     &ps);
    if (s == PARSUM_OK && ncustom > 0)
        s = custom_to_bits(ctx, a, &sel, sel2p, ps.extra);
    if (s != PARSUM_OK)
        return s;
    parsum_k::select_kargs ka =
        base_args(a->n, a->keys, a->key_size, a->keys_out, a->values,
                  a->value_size, a->values_out);
    ka.s0 = device_selector(&sel);
    if (sel2p != NULL)
        ka.s1 = device_selector(sel2p);
    ka.keys_out = a->keys_out;
    ka.values_out = a->values_out;
    ka.idx_out = reinterpret_cast<u64 *>(a->indices_out);
    ka.rev = G == 2 && a->reverse_rest ? 1u : 0u;
    s = run_pass(ctx, ka, G, ps.state, ps.counts);
    if (s != PARSUM_OK)
        return s;
    return parsum__cuda_deliver_counts(ctx, a->counts, ps.counts,
                                       G == 3 ? 2 : 1);
}

parsum_status parsum__cuda_runs(parsum_context *ctx,
                                const parsum__runs_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn ? a->fn : "parsum_unique");
    if (s != PARSUM_OK)
        return s;
    if (a->n == 0)
        return parsum__cuda_deliver_zero(ctx, a->num_runs, 1);
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u64 chunks = (a->n + DIFF_CHUNK - 1) / DIFF_CHUNK;
    /* extra: the chunk bounds of run_lengths_kernel, or two u64 per tile
     * for run_fix_kernel (tiles no smaller than SEL_TILE) */
    const u64 sel_tiles = (a->n + parsum_k::SEL_TILE - 1) / parsum_k::SEL_TILE;
    const u64 extra = chunks * 8 > sel_tiles * 16 ? chunks * 8 : sel_tiles * 16;
    pass_scratch ps;
    s = take_scratch(ctx, a->n, a->nontrivial ? 0 : extra, &ps);
    if (s != PARSUM_OK)
        return s;
    parsum_k::select_kargs ka =
        base_args(a->n, a->keys, a->key_size, a->keys_out, a->values,
                  a->value_size, a->values_out);
    u64 *count = ps.counts; /* counts[0]: the runs; [2]: the second pass */
    if (!a->nontrivial) {
        ka.s0 = run_selector(parsum_k::SK_HEAD);
        ka.keys_out = a->keys_out;
        ka.values_out = a->values_out;
        ka.idx_out = reinterpret_cast<u64 *>(a->lengths);
        const int tks = tile_keys(ka, 1);
        if (tks >= 0 && a->lengths != NULL)
            ka.run_first = static_cast<u64 *>(ps.extra);
        s = run_pass(ctx, ka, 1, ps.state, count);
        if (s != PARSUM_OK || a->lengths == NULL)
            return s != PARSUM_OK
                       ? s
                       : parsum__cuda_deliver_counts(ctx, a->num_runs, count,
                                                     1);
        u64 *pos = reinterpret_cast<u64 *>(a->lengths);
        if (ka.run_first != NULL) {
            const u64 tiles = (a->n + parsum_k::st_tile(tks) - 1) /
                              parsum_k::st_tile(tks);
            run_fix_kernel<<<aux_grid(ctx, tiles, AUX_BLOCK), AUX_BLOCK, 0,
                             st->stream>>>(ka.run_first, tiles, pos, count,
                                           a->n);
            PARSUM_CUDA_TRY(ctx, cudaGetLastError());
            return parsum__cuda_deliver_counts(ctx, a->num_runs, count, 1);
        }
        u64 *b = static_cast<u64 *>(ps.extra);
        run_bounds_kernel<<<aux_grid(ctx, chunks, AUX_BLOCK), AUX_BLOCK, 0,
                            st->stream>>>(pos, count, a->n, b);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
        run_lengths_kernel<<<aux_grid(ctx, chunks, 1), AUX_BLOCK, 0,
                             st->stream>>>(pos, count, a->n, b);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    } else {
        ka.s0 = run_selector(parsum_k::SK_NT_HEAD);
        ka.idx_out = reinterpret_cast<u64 *>(a->offsets);
        s = run_pass(ctx, ka, 1, ps.state, count);
        if (s != PARSUM_OK)
            return s;
        ka.s0 = run_selector(parsum_k::SK_NT_TAIL);
        ka.idx_out = reinterpret_cast<u64 *>(a->lengths);
        s = run_pass(ctx, ka, 1, ps.state, count + 2);
        if (s != PARSUM_OK)
            return s;
        run_spans_kernel<<<aux_grid(ctx, a->n / 2 + 1, AUX_BLOCK), AUX_BLOCK,
                           0, st->stream>>>(
            reinterpret_cast<const u64 *>(a->offsets),
            reinterpret_cast<u64 *>(a->lengths), count);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    }
    return parsum__cuda_deliver_counts(ctx, a->num_runs, count, 1);
}
