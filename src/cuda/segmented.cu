/*
 * segmented.cu - segmented scan and reduce, scan and reduce by key, and the
 * conversions between head flags and offsets, on the GPU.
 *
 * Everything runs through one representation: packed head flags (one bit
 * per element, parsum.h). Offsets are turned into flags (n / 8 bytes
 * written and read once, a small price next to the values), keys too; then
 * the scan kernel of scan_kernels.cuh scans (value, flag) pairs in one pass
 * with its decoupled look-back. Reduce by key, and the segmented reduce of
 * a custom operator, are that same pass in "reduce" mode, which writes
 * each run's total to the run's slot instead of writing every prefix:
 * balanced by elements, so a million tiny segments and one huge one cost
 * the same per element. Empty segments get the identity from a pass over
 * the offsets; when there are any, a map from run rank to segment index
 * (the positions of the non-empty segments) is built on the device. The
 * segmented reduce of the built-in operators needs none of this: it is
 * one pass without look-back (segreduce.cu); nor does reduce by key of 4-
 * and 8-byte values and keys, one pass over keys and values
 * (reduce_by_key_pipe.cuh).
 */
#include "cuda_internal.h"

#include <type_traits>

#include "reduce_by_key_pipe.cuh"
#include "scan_kernels.cuh"
#include "segreduce.h"

#include <string.h>

using parsum_k::u32;
using parsum_k::u64;

using parsum_cu::aux_grid;
using parsum_cu::carve;
using parsum_cu::round_up;

namespace {

constexpr int AUX_BLOCK = 256;
constexpr int AUX_WARPS = AUX_BLOCK / 32;
constexpr int KEYS_WORDS = 8; /* keys_to_flags_kernel: flag words a step */
/* Elements per warp in the head-counting kernels: 32 lanes x 32 bits. */
constexpr u64 CHUNK = 1024;

/* parsum.h speaks uint64_t (unsigned long here), the kernels unsigned long
 * long: the same 64-bit integers. */
static_assert(sizeof(uint64_t) == sizeof(u64), "64-bit offsets");
const u64 *as_u64(const uint64_t *p)
{
    return reinterpret_cast<const u64 *>(p);
}
u64 *as_u64(uint64_t *p)
{
    return reinterpret_cast<u64 *>(p);
}


/* 32 flags starting at element e (a multiple of 32) of flags whose element
 * 0 is bit off (< 32); bits of elements >= n are cleared; element 0 counts
 * as a head when force_first. */
__device__ __forceinline__ u32 flag_word(const u32 *flags, u64 off, u64 n,
                                         u64 e, bool force_first)
{
    const u64 w = (off + e) >> 5;
    const u64 last = (off + n - 1) >> 5;
    u64 lo = flags[w];
    u64 hi = (off != 0 && w + 1 <= last) ? flags[w + 1] : 0ull;
    u32 bits = (u32)(((hi << 32) | lo) >> off);
    if (n - e < 32)
        bits &= (1u << (u32)(n - e)) - 1u;
    if (e == 0 && force_first)
        bits |= 1u;
    return bits;
}

__global__ void offsets_to_flags_kernel(const u64 *offsets, u64 nseg, u64 n,
                                        u32 *flags)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x; s < nseg;
         s += stride) {
        const u64 o = offsets[s];
        /* The head of a non-empty segment; offsets past n (invalid
         * input) touch nothing. Sorted offsets put the heads of nearby
         * segments into the same word: the lanes that share one combine
         * their bits and one of them writes (one atomic per word and warp
         * instead of one per segment). */
        const bool set = o < n && offsets[s + 1] > o;
        const u32 bit = set ? 1u << (o & 31) : 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        const u64 word = set ? o >> 5 : ~0ull;
        const unsigned peers = __match_any_sync(__activemask(), word);
        const u32 bits = __reduce_or_sync(peers, bit);
        if (set && (int)(threadIdx.x & 31) == __ffs(peers) - 1)
            atomicOr(&flags[word], bits);
#else
        if (set)
            atomicOr(&flags[o >> 5], bit);
#endif
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicOr(&flags[0], 1u);
}

/* flags[w] = heads of elements 32w .. 32w + 31: element i starts a run when
 * i == 0 or keys[i] != keys[i - 1]. Whole words, bits past n clear. */
template <class K>
__global__ void keys_to_flags_kernel(const K *keys, u64 n, u32 *flags)
{
    /* KEYS_WORDS flag words per warp and step, all their keys loaded
     * before the first is compared: one 128-byte load a warp at a time
     * (the first version) left the memory system idle. A key's
     * predecessor comes from the lane before it (lane 0 loads its own). */
    constexpr int U = KEYS_WORDS;
    typedef typename std::conditional<sizeof(K) <= 4, u32, u64>::type W;
    const int lane = (int)(threadIdx.x & 31);
    const u64 words = (n + 31) / 32;
    const u64 steps = (words + U - 1) / U;
    const u64 nwarps = (u64)gridDim.x * AUX_WARPS;
    for (u64 g = (u64)blockIdx.x * AUX_WARPS + (threadIdx.x >> 5); g < steps;
         g += nwarps) {
        W k[U], p[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const u64 i = (g * U + (u64)u) * 32 + (u64)lane;
            k[u] = i < n ? (W)keys[i] : (W)0;
            p[u] = (lane == 0 && i > 0 && i - 1 < n) ? (W)keys[i - 1] : (W)0;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const u64 w = g * U + (u64)u;
            const u64 i = w * 32 + (u64)lane;
            const W before = __shfl_up_sync(0xffffffffu, k[u], 1);
            const bool h = i < n && (i == 0 || k[u] != (lane ? before : p[u]));
            const u32 b = __ballot_sync(0xffffffffu, h);
            if (lane == 0 && w < words)
                flags[w] = b;
        }
    }
}

/* counts[c] = set flags among elements [CHUNK c, CHUNK (c + 1)), one warp
 * per chunk. Does nothing when on != NULL and *on == 0. */
__global__ void count_flags_kernel(const u32 *flags, u64 off, u64 n,
                                   bool force_first, const u32 *on,
                                   u64 *counts)
{
    if (on != nullptr && *on == 0u)
        return;
    const int lane = (int)(threadIdx.x & 31);
    const u64 chunks = (n + CHUNK - 1) / CHUNK;
    const u64 nwarps = (u64)gridDim.x * AUX_WARPS;
    for (u64 c = (u64)blockIdx.x * AUX_WARPS + (threadIdx.x >> 5); c < chunks;
         c += nwarps) {
        const u64 e = c * CHUNK + 32u * (u64)lane;
        u32 cnt = e < n ? __popc(flag_word(flags, off, n, e, force_first)) : 0;
        for (int d = 16; d > 0; d >>= 1)
            cnt += __shfl_down_sync(0xffffffffu, cnt, d);
        if (lane == 0)
            counts[c] = cnt;
    }
}

/* Writes the index of every set flag in order: the one of rank r to
 * pos[r], given base[c] = the set flags before chunk c (an exclusive scan
 * of count_flags_kernel's counts); then pos[total] = end_value and
 * *total_out = total (when not NULL). */
__global__ void scatter_flags_kernel(const u32 *flags, u64 off, u64 n,
                                     bool force_first, const u32 *on,
                                     const u64 *base, u64 *pos, u64 end_value,
                                     u64 *total_out)
{
    if (on != nullptr && *on == 0u)
        return;
    const int lane = (int)(threadIdx.x & 31);
    const u64 chunks = (n + CHUNK - 1) / CHUNK;
    const u64 nwarps = (u64)gridDim.x * AUX_WARPS;
    for (u64 c = (u64)blockIdx.x * AUX_WARPS + (threadIdx.x >> 5); c < chunks;
         c += nwarps) {
        const u64 e = c * CHUNK + 32u * (u64)lane;
        u32 bits = e < n ? flag_word(flags, off, n, e, force_first) : 0u;
        const u32 cnt = __popc(bits);
        u32 incl = cnt;
        for (int d = 1; d < 32; d <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d)
                incl += o;
        }
        u64 p = base[c] + (incl - cnt);
        while (bits != 0u) {
            const int b = __ffs(bits) - 1;
            pos[p++] = e + (u64)b;
            bits &= bits - 1u;
        }
        if (c == chunks - 1 && lane == 31) {
            pos[p] = end_value;
            if (total_out != nullptr)
                *total_out = p;
        }
    }
}

/* Segments s with offsets[s] == offsets[s + 1] get the identity (elem_size
 * bytes at id); bit s of nonempty is set for the others; *has_empty
 * becomes 1 if any segment is empty. One warp per 32 segments. */
__global__ void empty_segments_kernel(const u64 *offsets, u64 nseg,
                                      unsigned char *out, u64 elem_size,
                                      const unsigned char *id, u32 *nonempty,
                                      u32 *has_empty)
{
    const int lane = (int)(threadIdx.x & 31);
    const u64 words = (nseg + 31) / 32;
    const u64 nwarps = (u64)gridDim.x * AUX_WARPS;
    for (u64 w = (u64)blockIdx.x * AUX_WARPS + (threadIdx.x >> 5); w < words;
         w += nwarps) {
        const u64 s = w * 32 + (u64)lane;
        bool empty = false;
        if (s < nseg) {
            empty = offsets[s] == offsets[s + 1];
            if (empty)
                for (u64 b = 0; b < elem_size; ++b)
                    out[s * elem_size + b] = id[b];
        }
        const u32 ne = __ballot_sync(0xffffffffu, s < nseg && !empty);
        const u32 em = __ballot_sync(0xffffffffu, empty);
        if (lane == 0) {
            nonempty[w] = ne;
            if (em != 0u)
                atomicOr(has_empty, 1u);
        }
    }
}

/* ---- host side ---------------------------------------------------------- */


/* sizeof(seg_pair<T>) for an element of `size` bytes aligned to `align`. */
size_t pair_size(size_t size, size_t align)
{
    const size_t a = align > 4 ? align : 4;
    return round_up(round_up(size, 4) + 4, a);
}

size_t flag_words(size_t n)
{
    return (n + 31) / 32;
}

/* The operator to launch: built-in (custom == NULL) or compiled. */
parsum_status get_launch(parsum_context *ctx, parsum_dtype dtype,
                         parsum_op op, const parsum_custom_op *custom,
                         parsum__cuda_launch *l, unsigned char *id,
                         unsigned char *pad)
{
    if (custom != NULL)
        return parsum__cuda_custom_launch(ctx, custom, l);
    parsum__cuda_builtin_launch(ctx, dtype, op, l, id, pad);
    return PARSUM_OK;
}

/* Packed flags of the offsets (flag_words(n) words at flags). */
parsum_status launch_offsets_to_flags(parsum_context *ctx,
                                      const uint64_t *offsets, size_t nseg,
                                      size_t n, uint32_t *flags)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(flags, 0, flag_words(n) * 4,
                                         st->stream));
    offsets_to_flags_kernel<<<aux_grid(ctx, nseg, AUX_BLOCK), AUX_BLOCK, 0,
                              st->stream>>>(as_u64(offsets), nseg, n, flags);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

parsum_status launch_keys_to_flags(parsum_context *ctx, const void *keys,
                                   parsum_dtype key_dtype, size_t n,
                                   uint32_t *flags)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const unsigned grid =
        aux_grid(ctx, (flag_words(n) + KEYS_WORDS - 1) / KEYS_WORDS, AUX_WARPS);
    switch (parsum_dtype_size(key_dtype)) {
    case 1:
        keys_to_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
            static_cast<const unsigned char *>(keys), n, flags);
        break;
    case 2:
        keys_to_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
            static_cast<const unsigned short *>(keys), n, flags);
        break;
    case 4:
        keys_to_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
            static_cast<const u32 *>(keys), n, flags);
        break;
    default:
        keys_to_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
            static_cast<const u64 *>(keys), n, flags);
        break;
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

/* Scratch for select_flags over n flags. */
size_t select_scratch_bytes(size_t n)
{
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    return round_up(chunks * 8, 256) +
           round_up(parsum__cuda_scan_state_bytes(8, 8, chunks, false), 256);
}

/* pos[r] = index of the set flag of rank r, pos[total] = end_value,
 * *total_out = total (device memory, may be NULL); skipped on the device
 * when on != NULL and *on == 0. n > 0. */
parsum_status select_flags(parsum_context *ctx, carve *cv, const u32 *flags,
                           u64 off, size_t n, bool force_first, const u32 *on,
                           u64 *pos, u64 end_value, u64 *total_out)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    u64 *counts = static_cast<u64 *>(cv->take(chunks * 8));
    void *state = cv->take(parsum__cuda_scan_state_bytes(8, 8, chunks, false));
    const unsigned grid = aux_grid(ctx, chunks, AUX_WARPS);
    count_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
        flags, off, n, force_first, on, counts);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    parsum__cuda_builtin_launch(ctx, PARSUM_U64, PARSUM_SUM, &l, id, pad);
    parsum__cuda_scan_call c = {};
    c.kernel = l.k->scan_fwd;
    c.scan_size = 8;
    c.in = counts;
    c.out = counts;
    c.n = chunks;
    c.flags = PARSUM_EXCLUSIVE;
    c.state = state;
    parsum_status s = parsum__cuda_launch_scan(ctx, &l, &c);
    if (s != PARSUM_OK)
        return s;
    scatter_flags_kernel<<<grid, AUX_BLOCK, 0, st->stream>>>(
        flags, off, n, force_first, on, counts, pos, end_value, total_out);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

/* The segmented scan of in under l with head flags (n > 0). */
parsum_status run_seg_scan(parsum_context *ctx, const parsum__cuda_launch *l,
                           const void *in, void *out, size_t n,
                           const uint32_t *flags, uint64_t flag_off,
                           unsigned scan_flags, void *state)
{
    parsum__cuda_scan_call c = {};
    const bool rev = (scan_flags & PARSUM_REVERSE) != 0;
    c.kernel = rev ? l->k->seg_rev : l->k->seg_fwd;
    c.scan_size = pair_size(l->elem_size, l->elem_align);
    c.in = in;
    c.out = out;
    c.n = n;
    c.flags = scan_flags;
    c.seg_flags = flags;
    c.flag_off = flag_off;
    c.state = state;
    parsum_status s = parsum__cuda_pick_pipe(
        ctx, l, rev ? PARSUM__PIPE_SEG_REV : PARSUM__PIPE_SEG_FWD, &c);
    return s == PARSUM_OK ? parsum__cuda_launch_scan(ctx, l, &c) : s;
}

/* For the smaller of the tiles of scan_kernel and of the pipelined kernel
 * (more tiles, more state), either of which may run. */
size_t seg_state_bytes(const parsum__cuda_launch *l, size_t n)
{
    size_t tile = (size_t)parsum_k::scan_tile_elems(l->elem_size, true);
    const size_t pt = (size_t)l->k->seg_pipe_tile;
    if (l->k->seg_pipe_fwd != NULL && pt != 0 && pt < tile)
        tile = pt;
    return parsum__cuda_scan_state_bytes(
        l->elem_size, pair_size(l->elem_size, l->elem_align), n, true, tile);
}

} /* namespace */

/* ---- backend slots ------------------------------------------------------ */

parsum_status parsum__cuda_seg_scan(parsum_context *ctx, const void *in,
                                    void *out, size_t n, parsum_dtype dtype,
                                    parsum_op op,
                                    const parsum_custom_op *custom,
                                    const parsum_segments *seg,
                                    unsigned flags)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, custom ? "parsum_segmented_scan_custom"
                                              : "parsum_segmented_scan");
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    if (s == PARSUM_OK)
        s = get_launch(ctx, dtype, op, custom, &l, id, pad);
    if (s != PARSUM_OK || n == 0)
        return s;
    const bool from_offsets = seg->kind == PARSUM_SEG_OFFSETS;
    const size_t flag_bytes = from_offsets ? flag_words(n) * 4 : 0;
    const size_t state_bytes = seg_state_bytes(&l, n);
    carve cv = {static_cast<unsigned char *>(parsum__scratch(
                    ctx, round_up(flag_bytes, 256) + state_bytes + 256,
                    parsum__cuda_st(ctx)->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    const uint32_t *fl = seg->flags;
    uint64_t off = seg->flags_bit_offset;
    if (from_offsets) {
        uint32_t *f = static_cast<uint32_t *>(cv.take(flag_bytes));
        s = launch_offsets_to_flags(ctx, seg->offsets, seg->num_segments, n,
                                    f);
        if (s != PARSUM_OK)
            return s;
        fl = f;
        off = 0;
    }
    return run_seg_scan(ctx, &l, in, out, n, fl, off, flags,
                        state_bytes ? cv.take(state_bytes) : NULL);
}

parsum_status parsum__cuda_scan_by_key(parsum_context *ctx, const void *keys,
                                       parsum_dtype key_dtype, const void *in,
                                       void *out, size_t n, parsum_dtype dtype,
                                       parsum_op op, unsigned flags)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_scan_by_key");
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    if (s != PARSUM_OK || n == 0)
        return s;
    parsum__cuda_builtin_launch(ctx, dtype, op, &l, id, pad);
    const size_t flag_bytes = flag_words(n) * 4;
    const size_t state_bytes = seg_state_bytes(&l, n);
    carve cv = {static_cast<unsigned char *>(parsum__scratch(
                    ctx, round_up(flag_bytes, 256) + state_bytes + 256,
                    parsum__cuda_st(ctx)->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    uint32_t *f = static_cast<uint32_t *>(cv.take(flag_bytes));
    s = launch_keys_to_flags(ctx, keys, key_dtype, n, f);
    if (s != PARSUM_OK)
        return s;
    return run_seg_scan(ctx, &l, in, out, n, f, 0, flags,
                        state_bytes ? cv.take(state_bytes) : NULL);
}

/* The reduce-mode pass: run totals of `in` (heads in flags) to out[rank]
 * (or out[map[rank]] when *map_on), keys of the runs to keys_out, the run
 * count to *total. n > 0. */
static parsum_status run_seg_reduce(parsum_context *ctx,
                                    const parsum__cuda_launch *l,
                                    const void *in, void *out, size_t n,
                                    const uint32_t *flags,
                                    const parsum__cuda_scan_call *extra,
                                    void *state)
{
    parsum__cuda_scan_call c = *extra;
    c.kernel = l->k->seg_reduce;
    c.scan_size = pair_size(l->elem_size, l->elem_align);
    c.in = in;
    c.out = out;
    c.n = n;
    c.flags = 0;
    c.seg_flags = flags;
    c.flag_off = 0;
    c.state = state;
    return parsum__cuda_launch_scan(ctx, l, &c);
}

parsum_status parsum__cuda_seg_reduce(parsum_context *ctx, const void *in,
                                      void *out, const uint64_t *offsets,
                                      size_t nseg, parsum_dtype dtype,
                                      parsum_op op,
                                      const parsum_custom_op *custom)
{
    parsum__cuda_scope scope;
    parsum_status s =
        scope.enter(ctx, custom ? "parsum_segmented_reduce_custom"
                                : "parsum_segmented_reduce");
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    if (s == PARSUM_OK)
        s = get_launch(ctx, dtype, op, custom, &l, id, pad);
    if (s != PARSUM_OK || nseg == 0)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (nseg >= ((size_t)1 << 32))
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: num_segments = %zu; the CUDA backend reduces "
                            "at most 2^32 - 1 segments per call",
                            st->api, nseg);
    /* Built-in operators: one pass without look-back (segreduce.cu). */
    if (custom == NULL)
        return parsum__cuda_seg_reduce_builtin(ctx, in, out, offsets, nseg,
                                               dtype, op);
    /* Custom operators: the scan kernel in reduce mode. n = offsets[nseg]
     * sizes its grid: read back (one synchronization). */
    uint64_t n64 = 0;
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(&n64, offsets + nseg, sizeof n64,
                                         cudaMemcpyDefault, st->stream));
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    const size_t n = (size_t)n64;
    const size_t es = l.elem_size;
    const size_t words_n = flag_words(n), words_s = flag_words(nseg);
    const size_t state_bytes = n > 0 ? seg_state_bytes(&l, n) : 0;
    const size_t bytes = round_up(es, 256) + 256 + round_up(words_s * 4, 256) +
                         round_up(words_n * 4, 256) + round_up(nseg * 8 + 8, 256) +
                         select_scratch_bytes(nseg) + state_bytes + 256;
    carve cv = {static_cast<unsigned char *>(
                    parsum__scratch(ctx, bytes, st->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    unsigned char *d_id = static_cast<unsigned char *>(cv.take(es));
    u32 *has_empty = static_cast<u32 *>(cv.take(4));
    u32 *nonempty = static_cast<u32 *>(cv.take(words_s * 4));
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(d_id, l.id, es,
                                         cudaMemcpyHostToDevice, st->stream));
    PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(has_empty, 0, 4, st->stream));
    empty_segments_kernel<<<aux_grid(ctx, words_s, AUX_WARPS), AUX_BLOCK, 0,
                            st->stream>>>(as_u64(offsets), nseg,
                                          static_cast<unsigned char *>(out),
                                          es, d_id, nonempty, has_empty);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    if (n == 0)
        return PARSUM_OK;
    /* Run rank -> segment, used by the device only if a segment is empty. */
    u64 *map = static_cast<u64 *>(cv.take(nseg * 8 + 8));
    s = select_flags(ctx, &cv, nonempty, 0, nseg, false, has_empty, map, nseg,
                     NULL);
    if (s != PARSUM_OK)
        return s;
    u32 *flags = static_cast<u32 *>(cv.take(words_n * 4));
    s = launch_offsets_to_flags(ctx, offsets, nseg, n, flags);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_scan_call extra = {};
    extra.map = map;
    extra.map_on = has_empty;
    extra.out_count = nseg;
    return run_seg_reduce(ctx, &l, in, out, n, flags, &extra,
                          state_bytes ? cv.take(state_bytes) : NULL);
}

/* The one-pass reduce by key (rbk_pipe_kernel) of (dtype, op) for keys
 * of key_size bytes; NULL where there is none (1- and 2-byte values or
 * keys: those take keys to flags and scan_kernel's reduce mode). */
static const void *rbk_kernel(parsum_dtype dtype, parsum_op op,
                              size_t key_size)
{
    const parsum__cuda_rbk_kernels *t;
    switch (dtype) {
    case PARSUM_I32: t = parsum__cuda_rbk_i32; break;
    case PARSUM_U32: t = parsum__cuda_rbk_u32; break;
    case PARSUM_I64: t = parsum__cuda_rbk_i64; break;
    case PARSUM_U64: t = parsum__cuda_rbk_u64; break;
    case PARSUM_F32: t = parsum__cuda_rbk_f32; break;
    case PARSUM_F64: t = parsum__cuda_rbk_f64; break;
    default: return NULL;
    }
    if (key_size != 4 && key_size != 8)
        return NULL;
    return t[op].k[key_size == 8];
}

/* Reduce by key in one pass over keys and values (n fills more than one
 * of the kernel's tiles). */
static parsum_status run_rbk_pipe(parsum_context *ctx,
                                  const parsum__cuda_launch *l,
                                  const void *kernel, parsum_dtype dtype,
                                  parsum_op op, parsum__cuda_scan_call *c)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const size_t smem = (size_t)parsum_k::rbk_smem_bytes(l->elem_size,
                                                          c->key_size);
    int *nb = &st->rbk_blocks[dtype][op][c->key_size == 8];
    if (*nb == 0) {
        PARSUM_CUDA_TRY(ctx, cudaFuncSetAttribute(
                                 kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem));
        int per_sm = 0;
        PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &per_sm, kernel,
                                 parsum_k::policy_for(l->elem_size).block,
                                 smem));
        *nb = per_sm > 0 ? per_sm : 1;
    }
    c->kernel = kernel;
    c->pipe_blocks = nb;
    c->tile = (size_t)parsum_k::rbk_tile_elems(l->elem_size);
    c->smem = smem;
    return parsum__cuda_launch_scan(ctx, l, c);
}

parsum_status parsum__cuda_reduce_by_key(
    parsum_context *ctx, const void *keys_in, parsum_dtype key_dtype,
    const void *values_in, size_t n, parsum_dtype dtype, parsum_op op,
    void *keys_out, void *values_out, size_t *num_runs)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_reduce_by_key");
    if (s != PARSUM_OK)
        return s;
    if (n == 0)
        return parsum__cuda_deliver_zero(ctx, num_runs, 1);
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (n >= ((size_t)1 << 32))
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: n = %zu; the CUDA backend reduces by key at "
                            "most 2^32 - 1 elements per call",
                            st->api, n);
    const size_t ks = parsum_dtype_size(key_dtype);
    const void *const kp[2] = {keys_in, keys_out};
    for (int i = 0; i < 2; ++i)
        if (reinterpret_cast<uintptr_t>(kp[i]) % ks != 0)
            return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: %s = %p is not aligned to its key type "
                                "(%zu bytes), which the CUDA backend "
                                "requires",
                                st->api, i ? "keys_out" : "keys_in", kp[i],
                                ks);
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    parsum__cuda_builtin_launch(ctx, dtype, op, &l, id, pad);
    /* One pass where the kernel exists and n fills more than one of its
     * tiles; else keys to flags, then scan_kernel in reduce mode. */
    const void *fused = rbk_kernel(dtype, op, ks);
    const bool one_pass = fused != NULL && parsum__cuda_pipe_on() &&
                          n > (size_t)parsum_k::rbk_tile_elems(l.elem_size);
    const size_t flag_bytes = one_pass ? 0 : flag_words(n) * 4;
    const size_t state_bytes = seg_state_bytes(&l, n);
    carve cv = {static_cast<unsigned char *>(parsum__scratch(
                    ctx, round_up(flag_bytes, 256) + 256 + state_bytes + 256,
                    st->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    uint32_t *f = static_cast<uint32_t *>(cv.take(flag_bytes));
    u64 *total = static_cast<u64 *>(cv.take(8));
    parsum__cuda_scan_call extra = {};
    extra.keys = keys_in;
    extra.keys_out = keys_out;
    extra.key_size = (unsigned)ks;
    extra.total = total;
    void *state = state_bytes ? cv.take(state_bytes) : NULL;
    if (one_pass) {
        extra.scan_size = pair_size(l.elem_size, l.elem_align);
        extra.in = values_in;
        extra.out = values_out;
        extra.n = n;
        extra.state = state;
        s = run_rbk_pipe(ctx, &l, fused, dtype, op, &extra);
    } else {
        extra.out_count = n;
        s = launch_keys_to_flags(ctx, keys_in, key_dtype, n, f);
        if (s == PARSUM_OK)
            s = run_seg_reduce(ctx, &l, values_in, values_out, n, f, &extra,
                               state);
    }
    if (s != PARSUM_OK)
        return s;
    return parsum__cuda_deliver_counts(ctx, num_runs, total, 1);
}

parsum_status parsum__cuda_offsets_to_flags(parsum_context *ctx,
                                            const uint64_t *offsets,
                                            size_t nseg, size_t n,
                                            uint32_t *flags)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_offsets_to_flags");
    if (s != PARSUM_OK || n == 0)
        return s;
    return launch_offsets_to_flags(ctx, offsets, nseg, n, flags);
}

parsum_status parsum__cuda_flags_to_offsets(parsum_context *ctx,
                                            const parsum_segments *seg,
                                            size_t n, uint64_t *offsets,
                                            size_t *num_segments)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_flags_to_offsets");
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (n == 0) {
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(offsets, 0, 8, st->stream));
        return parsum__cuda_deliver_zero(ctx, num_segments, 1);
    }
    carve cv = {static_cast<unsigned char *>(parsum__scratch(
                    ctx, select_scratch_bytes(n) + 512, st->api)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    u64 *total = static_cast<u64 *>(cv.take(8));
    s = select_flags(ctx, &cv, seg->flags, seg->flags_bit_offset, n, true,
                     NULL, as_u64(offsets), n, total);
    if (s != PARSUM_OK)
        return s;
    return parsum__cuda_deliver_counts(ctx, num_segments, total, 1);
}
