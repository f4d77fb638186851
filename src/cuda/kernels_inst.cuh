/*
 * kernels_inst.cuh - instantiates the scan and reduce kernels of one
 * built-in dtype for every operator defined on it, and exports their
 * addresses as a table indexed by parsum_op. CMake generates one small .cu
 * per dtype that defines the macros below and includes this file, so the
 * ten dtypes compile in parallel:
 *   PARSUM_INST_T      element type (int32_t, double, ...)
 *   PARSUM_INST_W      arithmetic type (uint32_t, uint64_t, or T for floats)
 *   PARSUM_INST_NAME   table suffix (i32, f64, ...)
 *   PARSUM_INST_FLOAT  1 for floats (no bitwise operators)
 */
#include "cuda_internal.h"

#include "builtin_ops.cuh"
#include "reduce_kernels.cuh"
#include "scan_kernels.cuh"
#include "scan_seg_pipe.cuh"

#define PARSUM_INST_CAT2(a, b) a##b
#define PARSUM_INST_CAT(a, b) PARSUM_INST_CAT2(a, b)
#define PARSUM_INST_TABLE PARSUM_INST_CAT(parsum__cuda_kernels_, PARSUM_INST_NAME)

namespace {

typedef PARSUM_INST_T inst_t;
typedef PARSUM_INST_W inst_w;

/* Which look-back the scan uses (lookback.cuh): the classic one, whose
 * grouping depends on timing, wherever the grouping cannot change a bit of
 * the result: integer operators (wrapping arithmetic and bitwise operators
 * are exactly associative) and float MIN/MAX (a selection of one operand
 * with a fixed rule for ties and NaNs, hence exactly associative too).
 * Float SUM and PROD take a deterministic one: plain f32 scans the
 * left fold by groups (lookback_gleft), f64 and
 * scan_kernel's segmented scans the two-level look-back (the pipelined
 * segmented scan: seg_pipe_lookback below).
 * PARSUM_K_LOOKBACK forces one for tuning runs (0: none, timing only). */
/* Whether plain scans have scan_pipe_kernel (tiles pipelined two per
 * block) besides scan_kernel (one tile per block); launch.cu picks. */
#ifndef PARSUM_K_PIPE
#define PARSUM_K_PIPE 1
#endif
#ifndef PARSUM_K_LOOKBACK
#define PARSUM_K_LOOKBACK (-1)
#endif
/* f32 SUM and PROD: the left fold by groups (4), or per tile (3). */
#ifndef PARSUM_K_F32_LOOKBACK
#define PARSUM_K_F32_LOOKBACK 4
#endif
template <template <class, class> class OP, class S>
constexpr int lookback_for()
{
    if (PARSUM_K_LOOKBACK >= 0)
        return PARSUM_K_LOOKBACK;
    /* f32 takes the left fold by groups (and with it the pipelined
     * kernel: 1.16x CUB at 2^28 on an H200, against 1.13x for the left
     * fold by tiles and 0.88x for the two-level one); f64 and segmented
     * pairs keep the
     * two-level one: f64's pipelined tiles hold 3072 elements, and the
     * left fold through 87k of them measured 0.58-0.83x CUB against
     * 0.90-0.92x, on (f64, flag) pairs 0.45x against 0.66x (NOTES.md
     * section 3). */
    if (PARSUM_INST_FLOAT && OP<inst_t, inst_w>::float_rounding)
        return sizeof(S) > 4 ? 1 : PARSUM_K_F32_LOOKBACK;
    /* The classic look-back needs packed descriptors. */
    return parsum_k::packed_desc<S>::value ? 2 : 1;
}

/* The look-back of the pipelined segmented scan (scan_seg_pipe_kernel):
 * as scan_kernel's, except that f32 SUM and PROD take the left fold there
 * (deterministic as well; in that kernel a tile with a head publishes its
 * inclusive prefix at once, so the folds stay short unless segments are
 * long). H200, 2^28: f32 73-81 % of copy against 57 % for scan_kernel's
 * two-level look-back, but 54 % for one segment of n; f64 pairs through
 * the left fold fell to 28 % for one segment (48 % two-level), so f64
 * keeps scan_kernel (bench/RESULTS.md). */
template <template <class, class> class OP, class S>
constexpr int seg_pipe_lookback()
{
    if (PARSUM_K_LOOKBACK < 0 && PARSUM_INST_FLOAT &&
        OP<inst_t, inst_w>::float_rounding && sizeof(inst_t) <= 4)
        return parsum_k::lookback_det<S>();
    return lookback_for<OP, S>();
}

/* The pipelined scan wherever a classic look-back (plain or folded from
 * the left) serves: it needs a look-back that waits only for tiles
 * already claimed, which the two-level one does not promise. */
template <class op, bool REV, int LB>
const void *pipe_kernel()
{
    if constexpr (PARSUM_K_PIPE && LB >= 2 && LB <= 4)
        return (const void *)&parsum_k::scan_pipe_kernel<inst_t, op, REV, LB>;
    else
        return nullptr;
}

/* The same for segmented scans with head flags (scan_seg_pipe_kernel). */
template <class op, bool REV, int LB>
const void *seg_pipe_kernel()
{
    if constexpr (PARSUM_K_PIPE && (LB == 2 || LB == 3))
        return (const void *)&parsum_k::scan_seg_pipe_kernel<inst_t, op, REV,
                                                             LB>;
    else
        return nullptr;
}

template <template <class, class> class OP>
parsum__cuda_kernels make_kernels()
{
    typedef OP<inst_t, inst_w> op;
    typedef parsum_k::seg_pair<inst_t> pair;
    constexpr int LB = lookback_for<OP, inst_t>();
    constexpr int LBS = lookback_for<OP, pair>();
    constexpr int LBSP = seg_pipe_lookback<OP, pair>();
    using parsum_k::scan_kernel;
    using parsum_k::seg_reduce_flags;
    using parsum_k::seg_scan_flags;
    return parsum__cuda_kernels{
        (const void *)&scan_kernel<inst_t, op, false, LB>,
        (const void *)&scan_kernel<inst_t, op, true, LB>,
        /* The built-in operators are commutative (in value, for float
         * min/max), so the reduce need not keep sequence order. */
        (const void *)&parsum_k::reduce_kernel<inst_t, op, false>,
        (const void *)&scan_kernel<inst_t, op, false, LBS, seg_scan_flags>,
        (const void *)&scan_kernel<inst_t, op, true, LBS, seg_scan_flags>,
        (const void *)&scan_kernel<inst_t, op, false, LBS, seg_reduce_flags>,
        pipe_kernel<op, false, LB>(),
        pipe_kernel<op, true, LB>(),
        parsum_k::pipe_tile_elems(sizeof(inst_t)),
        seg_pipe_kernel<op, false, LBSP>(),
        seg_pipe_kernel<op, true, LBSP>(),
        parsum_k::seg_pipe_tile_elems(sizeof(inst_t)),
    };
}

} /* namespace */

/* Indexed by parsum_op; bitwise slots are empty for floats (the core
 * rejects those combinations before a backend is called). */
extern const parsum__cuda_kernels PARSUM_INST_TABLE[PARSUM_OP_COUNT] = {
    make_kernels<parsum_k::op_sum>(),
    make_kernels<parsum_k::op_prod>(),
    make_kernels<parsum_k::op_min>(),
    make_kernels<parsum_k::op_max>(),
#if PARSUM_INST_FLOAT
    parsum__cuda_kernels{},
    parsum__cuda_kernels{},
    parsum__cuda_kernels{},
#else
    make_kernels<parsum_k::op_and>(),
    make_kernels<parsum_k::op_or>(),
    make_kernels<parsum_k::op_xor>(),
#endif
};
