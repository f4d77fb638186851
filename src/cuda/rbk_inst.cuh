/*
 * rbk_inst.cuh - instantiates rbk_pipe_kernel (reduce_by_key_pipe.cuh) of
 * one 4- or 8-byte dtype for every operator defined on it and both key
 * sizes, exported as a table indexed by parsum_op. CMake generates one
 * small .cu per dtype that defines the macros of kernels_inst.cuh and
 * includes this file.
 */
#include "cuda_internal.h"

#include "builtin_ops.cuh"
#include "reduce_by_key_pipe.cuh"

#define PARSUM_RBK_CAT2(a, b) a##b
#define PARSUM_RBK_CAT(a, b) PARSUM_RBK_CAT2(a, b)
#define PARSUM_RBK_TABLE PARSUM_RBK_CAT(parsum__cuda_rbk_, PARSUM_INST_NAME)

namespace {

typedef PARSUM_INST_T inst_t;
typedef PARSUM_INST_W inst_w;

/* The look-back as for the pipelined scans (kernels_inst.cuh): the
 * classic one where grouping cannot change a bit of the result (integer
 * operators, float MIN/MAX), its left fold for float SUM and PROD, which
 * is deterministic; (value, count) pairs of 4- and 8-byte values have
 * packed descriptors, as both need. */
template <template <class, class> class OP>
parsum__cuda_rbk_kernels make_rbk()
{
    typedef OP<inst_t, inst_w> op;
    typedef parsum_k::seg_pair<inst_t> pair;
    static_assert(parsum_k::packed_desc<pair>::value, "packed pairs");
    constexpr int LB = (PARSUM_INST_FLOAT && op::float_rounding) ? 3 : 2;
    return parsum__cuda_rbk_kernels{{
        (const void *)&parsum_k::rbk_pipe_kernel<inst_t, uint32_t, op, LB>,
        (const void *)&parsum_k::rbk_pipe_kernel<inst_t, uint64_t, op, LB>,
    }};
}

} /* namespace */

/* Indexed by parsum_op; bitwise slots are empty for floats. */
extern const parsum__cuda_rbk_kernels PARSUM_RBK_TABLE[PARSUM_OP_COUNT] = {
    make_rbk<parsum_k::op_sum>(),
    make_rbk<parsum_k::op_prod>(),
    make_rbk<parsum_k::op_min>(),
    make_rbk<parsum_k::op_max>(),
#if PARSUM_INST_FLOAT
    parsum__cuda_rbk_kernels{},
    parsum__cuda_rbk_kernels{},
    parsum__cuda_rbk_kernels{},
#else
    make_rbk<parsum_k::op_and>(),
    make_rbk<parsum_k::op_or>(),
    make_rbk<parsum_k::op_xor>(),
#endif
};
