/*
 * segreduce.cu - the look-back-free segmented reduce of the built-in
 * dtypes and operators: its kernel (the pieces are in
 * segreduce_kernels.cuh, segreduce_warps.cuh, segreduce_stream.cuh,
 * segreduce_batches.cuh and segreduce_run.cuh)
 * and the launch: one kernel of G = (multiprocessors x
 * SEGRED_BLOCKS_PER_SM) blocks, whatever n and the segment lengths, with
 * 12 to 16 bytes of carry per block in the scratch arena. n =
 * offsets[num_segments] is read by the kernel, so nothing waits for the
 * device.
 */
#include "segreduce.h"

#include "builtin_ops.cuh"
#include "segreduce_kernels.cuh"
#include "segreduce_batches.cuh"
#include "segreduce_run.cuh"
#include "segreduce_stream.cuh"

#include <stdint.h>

namespace parsum_k {

/* The last block: block b's carry completes its first segment when b
 * ended it: out[s_b] = (carries of the blocks before b back to the last
 * one that ended a segment) (+) out[s_b]. */
template <class T, class C, class Op>
__device__ void segred_fixup(segred_smem<T> &sm, const segred_args &a,
                             T *out, const T &pad, const Op &op, int tid)
{
    const int lane = tid & 31, warp = tid >> 5;
    const u32 g = a.num_blocks;
    const u32 per = (g + C::BLOCK - 1) / C::BLOCK;
    u32 b0 = (u32)tid * per;
    b0 = b0 < g ? b0 : g;
    const u32 b1 = b0 + per < g ? b0 + per : g;
    T v = pad;
    bool f = false;
    for (u32 b = b0; b < b1; ++b) {
        const bool fb = (__ldcg(a.carry_seg + b) >> 63) != 0;
        const T vb = load_slot<T>(a.carry_val, b);
        v = fb ? vb : op(v, vb);
        f = f || fb;
    }
    T total;
    T p = segred_scan<T, C>(sm, v, f, pad, total, lane, warp, op);
    for (u32 b = b0; b < b1; ++b) {
        const u64 cs = __ldcg(a.carry_seg + b);
        const bool fb = (cs >> 63) != 0;
        const u64 s = cs & ~(1ull << 63);
        if (b > 0 && fb && s < a.nseg) {
            T o;
            if constexpr (sizeof(T) == 1) {
                const unsigned char r =
                    __ldcg(reinterpret_cast<const unsigned char *>(out + s));
                memcpy(&o, &r, 1);
            } else if constexpr (sizeof(T) == 2) {
                const unsigned short r =
                    __ldcg(reinterpret_cast<const unsigned short *>(out + s));
                memcpy(&o, &r, 2);
            } else if constexpr (sizeof(T) == 4) {
                const u32 r = __ldcg(reinterpret_cast<const u32 *>(out + s));
                memcpy(&o, &r, 4);
            } else {
                const u64 r = __ldcg(reinterpret_cast<const u64 *>(out + s));
                memcpy(&o, &r, 8);
            }
            out[s] = op(p, o);
        }
        const T vb = load_slot<T>(a.carry_val, b);
        p = fb ? vb : op(p, vb);
    }
}

/* The ways through a block's share [(s0, e0), (s1, e1)] other than the
 * tile walk: short segments one a thread (segreduce_warps.cuh) and, from
 * the first round with a long one, one stream a warp
 * (segreduce_stream.cuh); shares of short segments with a long one among
 * them (64 to 512 bytes a segment) streamed from the start; moderate
 * ones one a warp. PARSUM_CUDA_SEGRED_STREAM=0 gives the streams' work
 * back to the batches (segreduce_batches.cuh) and the tile walk, as
 * before them. Returns whether one was taken (the share is
 * then done and carry is the block's carry). Block-uniform. */
template <class T, class C, class Op>
__device__ __forceinline__ bool segred_other_ways(
    segred_smem<T> &sm, const segred_args &a, const T *in, T *out, u64 n,
    u64 s0, u64 e0, u64 s1, u64 e1, bool vec, const T &id, const T &pad,
    const Op &op, int tid, T &carry)
{
    const u64 nseg = a.nseg;
    if (segred_lanes_take<C>(s0, e0, s1, e1)) {
        u64 hs = 0;
        if (segred_lanes_fold<T, C, Op>(sm, a.offsets, in, out, nseg, s0,
                                        e0, s1, e1, id, pad, op, tid, carry,
                                        hs))
            return true;
        if ((a.options & OPT_SEGRED_STREAM) != 0u && s1 - hs < (1ull << 31))
            carry = segred_stream_call<T, C, Op>(a.offsets, in, out, n, nseg,
                                                 hs, e0, s1, e1, vec, id, pad,
                                                 tid);
        else
            carry = segred_batches<T, C, Op>(a.offsets, in, out, n, nseg, hs,
                                             e0, s1, e1, vec, id, pad, tid);
        return true;
    }
    if ((a.options & OPT_SEGRED_STREAM) != 0u &&
        segred_stream_take<C>(s0, e0, s1, e1)) {
        carry = segred_stream_call<T, C, Op>(a.offsets, in, out, n, nseg, s0,
                                             e0, s1, e1, vec, id, pad, tid);
        return true;
    }
    if (segred_warps_take<T, C>(sm, a.offsets, nseg, n, s0, e0, s1, e1,
                                tid)) {
        carry = segred_warps<T, C, Op>(sm, a.offsets, in, out, n, nseg, s0,
                                       e0, s1, e1, vec, id, pad, op, tid);
        return true;
    }
    return false;
}

/* The tile walk along the block's path from point k (cut w.st, w.et) to
 * k1: runs of tiles without a segment end reduced into w.carry, the
 * others by segred_tile; waits for its last asynchronous copies. */
template <class T, class C, class Op>
__device__ __forceinline__ void segred_walk_tiles(
    segred_smem<T> &sm, segred_walk<T> &w, const segred_args &a, const T *in,
    T *out, u64 n, u64 k, u64 k1, u64 s_end, bool vec, const T &id,
    const T &pad, const Op &op, int tid)
{
    const int lane = tid & 31, warp = tid >> 5;
    const u64 nseg = a.nseg;
    T facc = pad; /* this thread's part of a run of fast tiles */
    bool fpend = false;
    while (k < k1) {
        u64 kt1 = k1 - k > C::TC ? k + C::TC : k1;
        segred_use_window<T, C>(sm, w, a.offsets, nseg, n, s_end, tid);
        const u64 w0 = segred_wv(w.win, 0, n), w1 = segred_wv(w.win, 1, n);
        const u64 pend = w1 + C::W * (w.st + 1); /* past st's end */
        if (w.jmax == 0 || pend > kt1) {
            /* No segment ends in this tile, nor in the tiles after it up
             * to the one with st's end (or the share's end): one run,
             * folded as a stream (segreduce_run.cuh). */
            kt1 = w.jmax == 0 || pend > k1
                      ? k1
                      : k + (pend - k - 1) / C::TC * C::TC;
            const u64 q = w0 + C::W * w.st;
            u64 e1 = q <= kt1 ? w0 + (kt1 - q) : w0;
            e1 = e1 < w1 ? e1 : w1;
            /* Only invalid offsets clamp: the run's elements are at most
             * its path. */
            if (e1 > w.et && e1 - w.et > kt1 - k)
                e1 = w.et + (kt1 - k);
            if (e1 > w.et)
                facc = segred_run<T, C, Op>(sm, w, facc, in, w.et, e1, n, vec,
                                            pad, op, tid);
            fpend = true;
            w.et = e1;
        } else {
            if (fpend) {
                w.carry = op(w.carry, segred_block_reduce<T, C>(
                                          sm, facc, lane, warp, op));
                facc = pad;
                fpend = false;
            }
            kt1 = segred_tile<T, C>(sm, w, in, out, a.offsets, n, nseg, s_end,
                                    k, kt1, k1, vec, id, pad, op, tid);
        }
        k = kt1;
    }
    if (fpend)
        w.carry = op(w.carry,
                     segred_block_reduce<T, C>(sm, facc, lane, warp, op));
    if (w.pf_a0 != ~0ull)
        cp_async_wait_all(); /* no copy outlives the block */
}

template <class T, class Op>
__global__ void __launch_bounds__(segred_cfg<T>::BLOCK,
                                  SEGRED_BLOCKS_PER_SM)
    segred_kernel(segred_args a, T id, T pad)
{
    typedef segred_cfg<T> C;
    extern __shared__ __align__(16) unsigned char segred_dyn[];
    segred_smem<T> &sm = *reinterpret_cast<segred_smem<T> *>(segred_dyn);
    const Op op{};
    const int tid = (int)threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const T *in = static_cast<const T *>(a.in);
    T *out = static_cast<T *>(a.out);
    const u64 nseg = a.nseg;
    const u64 n = a.offsets[nseg];
    const u64 cost = n + C::W * nseg;
    const u64 g = a.num_blocks;
    const u64 per = (cost + g - 1) / g;
    const u64 b = blockIdx.x;
    const u64 k0 = b * per < cost ? b * per : cost;
    const u64 k1 = cost - k0 > per ? k0 + per : cost;
    const bool vec = (a.options & OPT_VEC) != 0u;

    if (warp < 2) {
        u64 s, e;
        segred_find<C>(a.offsets, nseg, n, warp == 0 ? k0 : k1, lane, s, e);
        if (lane == 0) {
            sm.bcast[2 * warp] = s;
            sm.bcast[2 * warp + 1] = e;
        }
    }
    __syncthreads();
    /* The other ways first; the walk's state exists only on the walk's
     * side, so that it holds no registers through them (with the walk's
     * state live across the batches, the 8-byte kernels' short-segment
     * rounds ran 10-12 % slower). */
    const u64 s_first = sm.bcast[0], s_end = sm.bcast[2];
    T carry = pad;
    if ((a.options & OPT_SEGRED_WARPS) == 0u ||
        !segred_other_ways<T, C, Op>(sm, a, in, out, n, s_first, sm.bcast[1],
                                     s_end, sm.bcast[3], vec, id, pad, op,
                                     tid, carry)) {
        segred_walk<T> w;
        w.st = s_first;
        w.et = sm.bcast[1];
        w.carry = pad;
        w.win_s = ~0ull;
        w.wjmax = 0;
        w.pf_jmax = 0;
        w.bits = 0;
        w.jmax = 0;
        w.win = sm.win[0];
        w.pf_a0 = ~0ull;
        segred_walk_tiles<T, C, Op>(sm, w, a, in, out, n, k0, k1, s_end, vec,
                                    id, pad, op, tid);
        carry = w.carry;
    }
    if (tid == 0) {
        a.carry_seg[b] = s_first | (s_end > s_first ? 1ull << 63 : 0ull);
        store_slot(a.carry_val, b, carry);
    }
    /* Every thread's writes of out before the count (cumulativity of the
     * fence across the barrier). */
    __threadfence();
    __syncthreads();
    if (tid == 0)
        sm.last = atomicAdd(a.counter, 1u) == a.num_blocks - 1u ? 1u : 0u;
    __syncthreads();
    if (sm.last == 0u)
        return;
    __threadfence();
    segred_fixup<T, C>(sm, a, out, pad, op, tid);
    if (tid == 0)
        *a.counter = 0u; /* ready for the next launch */
}

} /* namespace parsum_k */

namespace {

using parsum_k::segred_kernel;

template <class T, class W, bool FLOAT>
const void *kernel_for(parsum_op op)
{
    switch (op) {
    case PARSUM_SUM:
        return (const void *)&segred_kernel<T, parsum_k::op_sum<T, W>>;
    case PARSUM_PROD:
        return (const void *)&segred_kernel<T, parsum_k::op_prod<T, W>>;
    case PARSUM_MIN:
        return (const void *)&segred_kernel<T, parsum_k::op_min<T, W>>;
    case PARSUM_MAX:
        return (const void *)&segred_kernel<T, parsum_k::op_max<T, W>>;
    default:
        break;
    }
    if constexpr (!FLOAT) {
        switch (op) {
        case PARSUM_AND:
            return (const void *)&segred_kernel<T, parsum_k::op_and<T, W>>;
        case PARSUM_OR:
            return (const void *)&segred_kernel<T, parsum_k::op_or<T, W>>;
        case PARSUM_XOR:
            return (const void *)&segred_kernel<T, parsum_k::op_xor<T, W>>;
        default:
            break;
        }
    }
    return nullptr; /* the core rejects the other combinations */
}

/* The same element and arithmetic types as the scan kernels
 * (src/cuda/CMakeLists.txt). */
const void *segred_kernel_for(parsum_dtype dtype, parsum_op op)
{
    switch (dtype) {
    case PARSUM_I8:
        return kernel_for<int8_t, uint32_t, false>(op);
    case PARSUM_U8:
        return kernel_for<uint8_t, uint32_t, false>(op);
    case PARSUM_I16:
        return kernel_for<int16_t, uint32_t, false>(op);
    case PARSUM_U16:
        return kernel_for<uint16_t, uint32_t, false>(op);
    case PARSUM_I32:
        return kernel_for<int32_t, uint32_t, false>(op);
    case PARSUM_U32:
        return kernel_for<uint32_t, uint32_t, false>(op);
    case PARSUM_I64:
        return kernel_for<int64_t, uint64_t, false>(op);
    case PARSUM_U64:
        return kernel_for<uint64_t, uint64_t, false>(op);
    case PARSUM_F32:
        return kernel_for<float, float, true>(op);
    case PARSUM_F64:
        return kernel_for<double, double, true>(op);
    }
    return nullptr;
}

/* The kernel's shared memory (dynamic: above the 48 KB of static shared
 * memory for 4- and 8-byte values), which depends on the element size
 * alone. */
size_t segred_smem_bytes(size_t elem_size)
{
    switch (elem_size) {
    case 1:
        return sizeof(parsum_k::segred_smem<uint8_t>);
    case 2:
        return sizeof(parsum_k::segred_smem<uint16_t>);
    case 4:
        return sizeof(parsum_k::segred_smem<uint32_t>);
    default:
        return sizeof(parsum_k::segred_smem<uint64_t>);
    }
}

bool is_aligned(const void *p, size_t a)
{
    return (uintptr_t)p % a == 0;
}

/* PARSUM_CUDA_SEGRED_WARPS=0 keeps every block on the tile walk, off the
 * segment-a-warp and segment-a-thread folds (segreduce_warps.cuh;
 * measurements, tests of every path). */
bool segred_warps_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_SEGRED_WARPS");
}

} /* namespace */

parsum_status parsum__cuda_seg_reduce_builtin(parsum_context *ctx,
                                              const void *in, void *out,
                                              const uint64_t *offsets,
                                              size_t nseg, parsum_dtype dtype,
                                              parsum_op op)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    alignas(8) unsigned char id[8], pad[8];
    parsum__cuda_launch l;
    parsum__cuda_builtin_launch(ctx, dtype, op, &l, id, pad);
    const void *kernel = segred_kernel_for(dtype, op);
    if (kernel == nullptr)
        return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                            "%s: no segmented-reduce kernel for %s %s",
                            st->api, parsum_dtype_name(dtype),
                            parsum_op_name(op));
    const char *bad = !is_aligned(in, l.elem_align)    ? "in"
                      : !is_aligned(out, l.elem_align) ? "out"
                                                       : NULL;
    if (bad != NULL)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s = %p is not aligned to its element type "
                            "(%zu bytes), which the CUDA backend requires",
                            st->api, bad, bad[0] == 'i' ? in : out,
                            l.elem_align);

    const size_t g = (size_t)st->sm_count * parsum_k::SEGRED_BLOCKS_PER_SM;
    const size_t seg_bytes = parsum_cu::round_up(g * 8, 256);
    unsigned char *scratch = static_cast<unsigned char *>(parsum__scratch(
        ctx, seg_bytes + g * parsum_k::slot_bytes(l.elem_size), st->api));
    if (scratch == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;

    parsum_k::segred_args a;
    a.in = in;
    a.out = out;
    a.offsets = reinterpret_cast<const unsigned long long *>(offsets);
    a.nseg = nseg;
    a.num_blocks = (unsigned)g;
    a.options = (is_aligned(in, 16) ? parsum_k::OPT_VEC : 0u) |
                (segred_warps_on() ? parsum_k::OPT_SEGRED_WARPS : 0u) |
                (parsum__cuda_env_on("PARSUM_CUDA_SEGRED_STREAM")
                     ? parsum_k::OPT_SEGRED_STREAM
                     : 0u);
    a.carry_seg = reinterpret_cast<unsigned long long *>(scratch);
    a.carry_val = reinterpret_cast<unsigned *>(scratch + seg_bytes);
    a.counter = st->dev_counter; /* self-resetting, shared with the reduce */
    const size_t smem = segred_smem_bytes(l.elem_size);
    PARSUM_CUDA_TRY(ctx, cudaFuncSetAttribute(
                             kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem));
    void *args[] = {&a, id, pad};
    PARSUM_CUDA_TRY(ctx, cudaLaunchKernel(kernel, dim3((unsigned)g),
                                          dim3(parsum_k::segred_cfg<int>::BLOCK),
                                          args, smem, st->stream));
    return PARSUM_OK;
}
