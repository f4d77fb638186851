/*
 * segreduce.cu - launches the look-back-free segmented reduce
 * (segreduce_kernels.cuh) for the built-in dtypes and operators: one
 * kernel of G = (multiprocessors x SEGRED_BLOCKS_PER_SM) blocks, whatever
 * n and the segment lengths, with 12 to 16 bytes of carry per block in
 * the scratch arena. n = offsets[num_segments] is read by the kernel, so
 * nothing waits for the device.
 */
#include "segreduce.h"

#include "builtin_ops.cuh"
#include "segreduce_kernels.cuh"

#include <stdint.h>

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
    a.options = is_aligned(in, 16) ? parsum_k::OPT_VEC : 0u;
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
