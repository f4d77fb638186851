/*
 * histogram.cu - the CUDA side of parsum_histogram (histogram_kernels.cuh):
 * the backend's histogram, hist_bin_ids and hist_add_runs slots.
 *
 * Strategies (the measurements behind AUTO's choices: src/hist/README.md):
 *  - PRIVATIZED, AUTO: when the bins of every channel (plus a trash slot
 *    each) fit in SHARED_MAX bytes, one block-local histogram per block
 *    (hist_shared_kernel, replicated up to 32 times). Otherwise PRIVATIZED
 *    keeps K private copies in device memory (at most PRIVATE_BYTES in
 *    all) with warp-combined atomics, then adds them up; AUTO does the same
 *    while K >= AUTO_MIN_COPIES, else warp-combined atomics on the output.
 *    CUB keeps one copy per block instead, which is what makes its large
 *    histograms run out of memory.
 *  - ATOMIC_GLOBAL: one atomic per sample on the output (the notes' first
 *    method; slow when samples pile into few bins).
 */
#include "cuda_internal.h"

#include "histogram_kernels.cuh"

#include <string.h>

using parsum_cu::aux_grid;
using parsum_cu::carve;
using parsum_cu::round_up;
using parsum_h::kargs;
using parsum_h::u32;
using parsum_h::u64;

namespace {

constexpr int HBLOCK = 256;
/* Shared memory the replicated histogram may take per block: 48 KiB keeps
 * four blocks (1024 threads) on a multiprocessor, which the kernels that
 * compute bins need; the byte-valued kernel (mode 2) does nothing but
 * atomics, and gains more from copies than from threads: 72 KiB (RGBA u8:
 * 16 copies of 4 x 257 slots instead of 8; 1.59 x CUB instead of 1.27 x on
 * an H200, while f32 in 1024 bins lost a quarter of its speed at 72 KiB). */
constexpr size_t SHARED_TARGET = 48 * 1024;
constexpr size_t SHARED_TARGET_BYTES = 72 * 1024;
/* Beyond shared memory, AUTO keeps private copies in device memory while
 * at least 16 fit in PRIVATE_BYTES (65536 u32 bins: 2.8 ms for 2^28
 * samples against 3.5 ms with combined atomics on the output); with fewer
 * copies they only spread the atomics over more memory (2^24 bins: 14.1
 * ms with 4 copies, 8.6 ms on the output). */
constexpr u64 AUTO_MIN_COPIES = 16;
/* The largest block-local histogram (one copy per bin). */
constexpr size_t SHARED_MAX = 96 * 1024;
constexpr size_t PRIVATE_BYTES = (size_t)256 << 20;
constexpr u32 MAX_COPIES = 64;

/* The minimum of a signed integer type as int64 (0 for unsigned). */
int64_t type_min(parsum_dtype d)
{
    switch (d) {
    case PARSUM_I8: return INT8_MIN;
    case PARSUM_I16: return INT16_MIN;
    case PARSUM_I32: return INT32_MIN;
    default: return 0;
    }
}

/* The 32-bit fast path of histogram_kernels.cuh, when the plan allows it. */
parsum_h::fast_bins fast_for(parsum_dtype d, const parsum__hist_plan &p)
{
    parsum_h::fast_bins f = {0, 0, 0, 0, p.nbins};
    bool small = d == PARSUM_I8 || d == PARSUM_U8 || d == PARSUM_I16 ||
                 d == PARSUM_U16 || d == PARSUM_I32 || d == PARSUM_U32;
    if (!small || p.mode != PARSUM__BINS_SHIFT || p.shift >= 32)
        return f;
    int64_t lo_key = (int64_t)p.lo - type_min(d);
    int64_t hi_key = (int64_t)p.hi - type_min(d);
    if (lo_key < 0 || hi_key > ((int64_t)1 << 32))
        return f;
    f.on = 1;
    f.lo_key = (u32)lo_key;
    f.wm1 = (u32)(p.width - 1);
    f.shift = p.shift;
    return f;
}

/* Private copies of `total` slots of cs bytes that fit in PRIVATE_BYTES
 * (0 when not one does), before the clamp to 1..MAX_COPIES. */
u64 copies_fit(u64 total, size_t cs)
{
    return PRIVATE_BYTES / (total * cs);
}

u32 copies_for(u64 total, size_t cs)
{
    u64 k = copies_fit(total, cs);
    return (u32)(k < 1 ? 1 : k > MAX_COPIES ? MAX_COPIES : k);
}

/* Slots of channel c in the combined histogram (kargs.off/span): its bins
 * and a trash slot, or 3 for a channel not counted (histogram_kernels.cuh). */
u32 chan_span(const parsum__hist_args *a, int c)
{
    return a->counts[c] != NULL ? a->plan[c].nbins + 1 : 3;
}

size_t levels_bytes(const parsum__hist_args *a)
{
    size_t b = 0;
    for (int c = 0; c < a->channels; c++)
        if (a->counts[c] != NULL && a->plan[c].mode == PARSUM__BINS_RANGE)
            b += round_up(((size_t)a->plan[c].nbins + 1) * 8, 256);
    return b;
}

/* Everything but the strategy's fields; RANGE levels copied to the device. */
parsum_status fill_kargs(parsum_context *ctx, const parsum__hist_args *a,
                         kargs *L, carve *cv)
{
    memset(L, 0, sizeof *L);
    L->samples = a->samples;
    L->nel = (u64)a->n * (u64)a->channels;
    size_t ss = parsum_dtype_size(a->dtype);
    uintptr_t mis = (uintptr_t)a->samples % 16;
    L->head = mis == 0 ? 0 : (16 - mis) / ss;
    L->wide = a->count_dtype == PARSUM_U64;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    for (int c = 0; c < a->channels; c++) {
        L->off[c] = L->total;
        L->span[c] = chan_span(a, c);
        L->total += L->span[c];
        if (a->counts[c] == NULL) {
            /* not counted: every sample lands in slot 0 or 1 of 3 */
            parsum_h::fast_bins f = {1, 0, 0xFFFFFFFFu, 31, 2};
            L->fast[c] = f;
            continue;
        }
        L->active |= 1u << c;
        L->counts[c] = a->counts[c];
        L->plan[c] = a->plan[c];
        L->fast[c] = fast_for(a->dtype, a->plan[c]);
        if (a->plan[c].mode == PARSUM__BINS_RANGE) {
            size_t bytes = ((size_t)a->plan[c].nbins + 1) * 8;
            void *dev = cv->take(bytes);
            PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(dev, a->plan[c].levels, bytes,
                                                 cudaMemcpyHostToDevice,
                                                 st->stream));
            L->plan[c].levels = dev;
        }
    }
    return PARSUM_OK;
}

/* Scratch for the levels and `extra` bytes more (left in *cv), and L. */
parsum_status prepare(parsum_context *ctx, const parsum__hist_args *a,
                      size_t extra, kargs *L, carve *cv)
{
    size_t bytes = levels_bytes(a) + extra + 256;
    cv->base = static_cast<unsigned char *>(parsum__scratch(ctx, bytes, a->fn));
    cv->used = 0;
    if (cv->base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    return fill_kargs(ctx, a, L, cv);
}

/* Which shared kernel serves L (histogram_kernels.cuh): 2 when every
 * channel of 8-bit samples is counted with bin = key, 1 when every channel
 * is on the 32-bit fast path and vectors start at channel 0, else 0. */
int shared_mode(const parsum__hist_args *a, const kargs &L)
{
    size_t ss = parsum_dtype_size(a->dtype);
    if (a->channels == 3 || (16 / ss) % (size_t)a->channels != 0 ||
        L.head % (u64)a->channels != 0)
        return 0;
    bool ident = ss == 1;
    for (int c = 0; c < a->channels; c++) {
        if (!L.fast[c].on)
            return 0;
        if (!(L.active >> c & 1u) || L.fast[c].lo_key != 0 ||
            L.fast[c].wm1 != 255 || L.fast[c].shift != 0)
            ident = false;
    }
    return ident ? 2 : 1;
}


typedef void (*hist_fn)(kargs);

template <class T, int C>
hist_fn shared_kernel(int mode)
{
    if constexpr (parsum_h::key_of<T>::ok && C != 3) {
        if constexpr (sizeof(T) == 1)
            if (mode == 2)
                return parsum_h::hist_shared_kernel<T, C, 2>;
        if (mode >= 1)
            return parsum_h::hist_shared_kernel<T, C, 1>;
    }
    return parsum_h::hist_shared_kernel<T, C, 0>;
}

template <class T>
void kernels_for_c(int c, int mode, hist_fn *sh, hist_fn *gl)
{
    switch (c) {
    case 1: *sh = shared_kernel<T, 1>(mode); *gl = parsum_h::hist_global_kernel<T, 1>; break;
    case 2: *sh = shared_kernel<T, 2>(mode); *gl = parsum_h::hist_global_kernel<T, 2>; break;
    case 3: *sh = shared_kernel<T, 3>(mode); *gl = parsum_h::hist_global_kernel<T, 3>; break;
    default: *sh = shared_kernel<T, 4>(mode); *gl = parsum_h::hist_global_kernel<T, 4>; break;
    }
}

void kernels_for(parsum_dtype d, int c, int mode, hist_fn *sh, hist_fn *gl)
{
    switch (d) {
    case PARSUM_I8: kernels_for_c<int8_t>(c, mode, sh, gl); break;
    case PARSUM_U8: kernels_for_c<uint8_t>(c, mode, sh, gl); break;
    case PARSUM_I16: kernels_for_c<int16_t>(c, mode, sh, gl); break;
    case PARSUM_U16: kernels_for_c<uint16_t>(c, mode, sh, gl); break;
    case PARSUM_I32: kernels_for_c<int32_t>(c, mode, sh, gl); break;
    case PARSUM_U32: kernels_for_c<uint32_t>(c, mode, sh, gl); break;
    case PARSUM_I64: kernels_for_c<int64_t>(c, mode, sh, gl); break;
    case PARSUM_U64: kernels_for_c<uint64_t>(c, mode, sh, gl); break;
    case PARSUM_F32: kernels_for_c<float>(c, mode, sh, gl); break;
    default: kernels_for_c<double>(c, mode, sh, gl); break;
    }
}

/* Resident blocks per multiprocessor x multiprocessors, at most enough
 * blocks for 16-byte vectors at two per thread. */
parsum_status grid_for(parsum_context *ctx, hist_fn k, size_t smem, u64 nel,
                       size_t ss, unsigned *grid)
{
    int per_sm = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, (const void *)k, HBLOCK, smem));
    if (per_sm < 1)
        per_sm = 1;
    u64 want = (u64)parsum__cuda_st(ctx)->sm_count * (u64)per_sm;
    u64 need = (nel * ss / 16 + 2 * HBLOCK - 1) / (2 * HBLOCK);
    if (need < want)
        want = need > 0 ? need : 1;
    *grid = (unsigned)want;
    return PARSUM_OK;
}

parsum_status run_shared(parsum_context *ctx, const parsum__hist_args *a,
                         kargs &L, hist_fn k, size_t ss, int mode)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t target = mode == 2 ? SHARED_TARGET_BYTES : SHARED_TARGET;
    u32 rep = 32;
    while (rep > 1 && (size_t)L.total * rep * 4 > target)
        rep /= 2;
    L.rep = rep;
    while ((1u << L.rep_log) < rep)
        L.rep_log++;
    size_t smem = (size_t)L.total * rep * 4;
    PARSUM_CUDA_TRY(ctx, cudaFuncSetAttribute(
                             (const void *)k,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)(smem > 48 * 1024 ? smem : 48 * 1024)));
    unsigned grid = 0;
    parsum_status s = grid_for(ctx, k, smem, L.nel, ss, &grid);
    if (s != PARSUM_OK)
        return s;
    /* Shared counters are 32-bit: no block may see 2^32 samples. */
    if (L.nel / grid >= ((u64)1 << 32))
        return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                            "%s: %llu samples over %u blocks", a->fn,
                            (unsigned long long)L.nel, grid);
    k<<<grid, HBLOCK, smem, st->stream>>>(L);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

parsum_status run_global(parsum_context *ctx, kargs &L, hist_fn k,
                         size_t ss, bool privatized, bool aggregate, carve &cv)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    size_t cs = L.wide ? 8 : 4;
    L.aggregate = aggregate || privatized;
    if (privatized) {
        L.ncopies = copies_for(L.total, cs);
        size_t bytes = (size_t)L.ncopies * L.total * cs;
        L.copies = cv.take(bytes);
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(L.copies, 0, bytes, st->stream));
    }
    unsigned grid = 0;
    parsum_status s = grid_for(ctx, k, 0, L.nel, ss, &grid);
    if (s != PARSUM_OK)
        return s;
    k<<<grid, HBLOCK, 0, st->stream>>>(L);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    if (privatized) {
        parsum_h::hist_sum_copies_kernel<<<aux_grid(ctx, L.total, HBLOCK),
                                           HBLOCK, 0, st->stream>>>(L);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    }
    return PARSUM_OK;
}

} /* namespace */

parsum_status parsum__cuda_histogram(parsum_context *ctx,
                                     const parsum__hist_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    size_t cs = parsum_dtype_size(a->count_dtype);
    if (!a->accumulate)
        for (int c = 0; c < a->channels; c++)
            if (a->counts[c] != NULL)
                PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(
                                         a->counts[c], 0,
                                         (size_t)a->plan[c].nbins * cs,
                                         st->stream));
    if (a->n == 0)
        return PARSUM_OK;
    u64 total = 0; /* slots, as fill_kargs lays them out */
    for (int c = 0; c < a->channels; c++)
        total += chan_span(a, c);
    bool shared = a->strategy != PARSUM_HIST_ATOMIC_GLOBAL &&
                  total * 4 <= SHARED_MAX;
    bool privatized = !shared && a->strategy != PARSUM_HIST_ATOMIC_GLOBAL;
    if (privatized && a->strategy == PARSUM_HIST_AUTO &&
        copies_fit(total, cs) < AUTO_MIN_COPIES)
        privatized = false;
    bool aggregate = a->strategy == PARSUM_HIST_AUTO;
    size_t copy_bytes = 0;
    if (privatized) {
        copy_bytes = round_up((size_t)(copies_for(total, cs) * total * cs), 256);
    }
    kargs L;
    carve cv;
    s = prepare(ctx, a, copy_bytes, &L, &cv);
    if (s != PARSUM_OK)
        return s;
    hist_fn ksh = NULL, kgl = NULL;
    const int mode = shared_mode(a, L);
    kernels_for(a->dtype, a->channels, mode, &ksh, &kgl);
    size_t ss = parsum_dtype_size(a->dtype);
    if (shared)
        return run_shared(ctx, a, L, ksh, ss, mode);
    return run_global(ctx, L, kgl, ss, privatized, aggregate, cv);
}

namespace {

template <class T>
void launch_ids(parsum_context *ctx, const kargs &L, int c, int channels,
                size_t n, uint32_t *ids)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    parsum_h::hist_ids_kernel<T><<<aux_grid(ctx, n, HBLOCK), HBLOCK, 0,
                                   st->stream>>>(L, (u32)c, (u32)channels,
                                                 (u64)n, ids);
}

} /* namespace */

parsum_status parsum__cuda_hist_bin_ids(parsum_context *ctx,
                                        const parsum__hist_args *a, int c,
                                        uint32_t *ids)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    kargs L;
    carve cv;
    s = prepare(ctx, a, 0, &L, &cv);
    if (s != PARSUM_OK)
        return s;
    switch (a->dtype) {
    case PARSUM_I8: launch_ids<int8_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_U8: launch_ids<uint8_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_I16: launch_ids<int16_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_U16: launch_ids<uint16_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_I32: launch_ids<int32_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_U32: launch_ids<uint32_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_I64: launch_ids<int64_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_U64: launch_ids<uint64_t>(ctx, L, c, a->channels, a->n, ids); break;
    case PARSUM_F32: launch_ids<float>(ctx, L, c, a->channels, a->n, ids); break;
    default: launch_ids<double>(ctx, L, c, a->channels, a->n, ids); break;
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

parsum_status parsum__cuda_hist_add_runs(parsum_context *ctx,
                                         const uint32_t *keys,
                                         const uint64_t *lengths,
                                         size_t nruns, uint32_t nbins,
                                         void *counts, parsum_dtype count_dtype,
                                         bool accumulate)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_histogram");
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    size_t cs = parsum_dtype_size(count_dtype);
    if (!accumulate)
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, (size_t)nbins * cs,
                                             st->stream));
    if (nruns == 0)
        return PARSUM_OK;
    unsigned grid = aux_grid(ctx, nruns, HBLOCK);
    const u64 *len = reinterpret_cast<const u64 *>(lengths);
    if (count_dtype == PARSUM_U64)
        parsum_h::hist_add_runs_kernel<u64><<<grid, HBLOCK, 0, st->stream>>>(
            keys, len, nruns, nbins, static_cast<u64 *>(counts));
    else
        parsum_h::hist_add_runs_kernel<u32><<<grid, HBLOCK, 0, st->stream>>>(
            keys, len, nruns, nbins, static_cast<u32 *>(counts));
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}
