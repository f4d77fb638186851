/*
 * segreduce_run.cuh - the segmented reduce's fold of a run of elements
 * without a segment end (inside one long segment): the block's threads
 * each fold their own 16-byte vectors, and the vectors come through
 * shared memory by asynchronous copies, one stage of BLOCK x R vectors
 * ahead of the one being folded.
 *
 * Why not straight into registers, as the tiles without an end were
 * folded before: a tile of 16 KB a block, loaded into registers and then
 * folded, leaves the block with nothing in flight while it folds and
 * waits, and the kernel's 80 registers hold no second tile (nine vectors
 * a thread made ptxas spill). Copies hold no registers, so the next
 * stage is in flight while this one is folded. One segment of 8-byte
 * values: 55-64 % of the read bound with the register tiles, 87-94 %
 * this way (H200, 2^28; src/cuda/NOTES.md section 8, "Runs without an
 * end, streamed").
 *
 * Each warp copies into, and reads from, only its own part of sm.x (the
 * 32 piece slots of its threads, segred_tile_pieces), and each thread
 * reads only the vectors it copied itself, so no barrier stands between
 * the copies and the folds: a thread's cp.async.wait_group makes its own
 * copies visible to it. Pieces copied ahead into those slots are waited
 * for by every lane, and a __syncwarp orders those waits before the
 * run's first copies.
 */
#ifndef PARSUM_SEGREDUCE_RUN_CUH
#define PARSUM_SEGREDUCE_RUN_CUH

#include "segreduce_kernels.cuh"

namespace parsum_k {

#if defined(__CUDACC__)

/* How the tile walk folds a run without an end: 0 tile by tile into
 * registers (segred_fast), 1 the staged copies inline, 2 out of line
 * (registers of their own). PARSUM_K_SEGRED_RUN forces one for
 * measurements. Out of line for 8-byte values, inline for the others.
 * H200, against the tile-by-tile fold in the same call: inline, the
 * 8-byte kernels' one-segment-a-thread rounds lost 5-10 points of the
 * read bound (ptxas allocates the whole kernel differently), out of line
 * they kept or gained them; for 4-byte values out of line was no better
 * on the single segment at 2^28 (i32 80-89 % against 80-85 %, f32 80-85
 * % against 85-93 %). */
template <class T>
__host__ __device__ constexpr int segred_run_mode()
{
#ifdef PARSUM_K_SEGRED_RUN
    return PARSUM_K_SEGRED_RUN;
#else
    return sizeof(T) == 8 ? 2 : 1;
#endif
}

/* Vectors a thread copies a stage: the tile walk's IPT elements. Two
 * stages of a warp fit its piece slots. */
template <class T, class C>
struct segred_run_cfg {
    static constexpr u32 R = C::IPT / C::V;
    static constexpr u32 STAGE = (u32)C::BLOCK * R; /* vectors */
    static constexpr u32 WBYTES = 2u * R * 32u * 16u;
    static_assert(WBYTES <= 32u * C::RSTRIDE,
                  "two stages of a warp fit its piece slots");
};

/* Where this thread's vectors of stage i go in the warp's part wb
 * (buffer i % 2, row r at 512 r bytes), and the index of its row r. */
template <class T, class C>
__device__ __forceinline__ u32 segred_run_slot(u64 i, int tid)
{
    return (u32)(i & 1u) * (segred_run_cfg<T, C>::R * 512u) +
           ((u32)tid & 31u) * 16u;
}

template <class T, class C>
__device__ __forceinline__ u64 segred_run_vi(u64 i, u32 r, int tid)
{
    return i * segred_run_cfg<T, C>::STAGE + (u64)r * C::BLOCK + (u64)tid;
}

/* Copies stage i (vectors i STAGE + r BLOCK + tid below nvec, from
 * element a0) into buffer i % 2 of the warp's part wb; commits a group.
 * A vector that n cuts is loaded and stored (see segred_pieces_fill). */
template <class T, class C>
__device__ __forceinline__ void segred_run_copy(unsigned char *wb,
                                                const T *in, u64 a0,
                                                u64 nvec, u64 i, u64 n,
                                                const T &pad, int tid)
{
    unsigned char *dst = wb + segred_run_slot<T, C>(i, tid);
#pragma unroll
    for (u32 r = 0; r < segred_run_cfg<T, C>::R; ++r) {
        const u64 vi = segred_run_vi<T, C>(i, r, tid);
        if (vi >= nvec)
            break;
        const u64 p = a0 + vi * C::V;
        if (p + C::V <= n)
            cp_async<16>(dst + r * 512u, in + p);
        else
            *reinterpret_cast<vec16 *>(dst + r * 512u) =
                segred_load<T, C>(in, p, n, true, pad);
    }
    cp_async_commit();
}

/* acc (+) this thread's elements of stage i that lie in [e0, e1). */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_run_fold(const unsigned char *wb, T acc,
                                             u64 a0, u64 nvec, u64 i, u64 e0,
                                             u64 e1, const Op &op, int tid)
{
    const unsigned char *src = wb + segred_run_slot<T, C>(i, tid);
#pragma unroll
    for (u32 r = 0; r < segred_run_cfg<T, C>::R; ++r) {
        const u64 vi = segred_run_vi<T, C>(i, r, tid);
        if (vi >= nvec)
            break;
        acc = segred_fold_vec<T, C>(
            acc, *reinterpret_cast<const vec16 *>(src + r * 512u),
            a0 + vi * C::V, e0, e1, op);
    }
    return acc;
}

/* acc (+) this thread's elements of [e0, e1) (e1 <= n) of a 16-byte
 * aligned input, stage by stage; block-uniform arguments, no barrier.
 * The caller has waited for every copy of its own into the warp's piece
 * slots (x: sm.x). The grouping is a function of e0 and e1 alone. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_run_body(unsigned char *x, T acc,
                                             const T *in, u64 e0, u64 e1,
                                             u64 n, const T &pad,
                                             const Op &op, int tid)
{
    typedef segred_run_cfg<T, C> RC;
    unsigned char *wb = x + (u32)(tid >> 5) * (32u * C::RSTRIDE);
    const u64 a0 = e0 - e0 % C::V;
    const u64 nvec = (e1 - a0 + C::V - 1) / C::V;
    const u64 nst = (nvec + RC::STAGE - 1) / RC::STAGE;
    segred_run_copy<T, C>(wb, in, a0, nvec, 0, n, pad, tid);
    for (u64 i = 0; i < nst; ++i) {
        if (i + 1 < nst) {
            segred_run_copy<T, C>(wb, in, a0, nvec, i + 1, n, pad, tid);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        acc = segred_run_fold<T, C, Op>(wb, acc, a0, nvec, i, e0, e1, op,
                                        tid);
    }
    return acc;
}

template <class T, class C, class Op>
__device__ __noinline__ T segred_run_call(T acc, const T *in, u64 e0, u64 e1,
                                          u64 n, T pad, int tid)
{
    extern __shared__ __align__(16) unsigned char segred_dyn[];
    segred_smem<T> &sm = *reinterpret_cast<segred_smem<T> *>(segred_dyn);
    const Op op{};
    return segred_run_body<T, C, Op>(reinterpret_cast<unsigned char *>(sm.x),
                                     acc, in, e0, e1, n, pad, op, tid);
}

/* The tile walk's fold of a run [e0, e1) without an end into this
 * thread's acc: staged copies for a 16-byte-aligned input (vec), tile by
 * tile into registers otherwise. Pieces copied ahead into sm.x (w.pf_a0)
 * are waited for and dropped first: the run reuses their slots.
 * Block-uniform. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_run(segred_smem<T> &sm,
                                        segred_walk<T> &w, T acc, const T *in,
                                        u64 e0, u64 e1, u64 n, bool vec,
                                        const T &pad, const Op &op, int tid)
{
    constexpr int mode = segred_run_mode<T>();
    if (mode == 0 || !vec)
        return segred_fast_range<T, C>(acc, in, e0, e1, n, vec, pad, op, tid);
    if (w.pf_a0 != ~0ull) {
        /* The pieces' copies are lane-interleaved (segred_pieces_fill): a
         * lane's slot may be the target of another lane's copy, so every
         * lane's wait comes before any lane's new copies. */
        cp_async_wait_all();
        __syncwarp();
        w.pf_a0 = ~0ull;
    }
    if constexpr (mode == 2)
        return segred_run_call<T, C, Op>(acc, in, e0, e1, n, pad, tid);
    else
        return segred_run_body<T, C, Op>(
            reinterpret_cast<unsigned char *>(sm.x), acc, in, e0, e1, n, pad,
            op, tid);
}

#endif /* __CUDACC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SEGREDUCE_RUN_CUH */
