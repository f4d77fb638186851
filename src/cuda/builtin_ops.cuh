/*
 * builtin_ops.cuh - the built-in operators as device functors, with exactly
 * the meaning of src/core/scalar_ops.h (the CPU and reference backends use
 * those macros; these are the same expressions). a is always the earlier
 * operand. float_rounding: on floats, the result depends on how operands are
 * grouped (the scan then needs its deterministic look-back). W is the type the arithmetic is done in: unsigned and at least
 * as wide as int for integers (wrap-around, never undefined behaviour), T
 * itself for floats. Compiled by nvcc only (NVRTC never sees built-ins).
 */
#ifndef PARSUM_CUDA_BUILTIN_OPS_CUH
#define PARSUM_CUDA_BUILTIN_OPS_CUH

namespace parsum_k {

template <class T, class W>
struct op_sum {
    static constexpr bool float_rounding = true;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (T)((W)a + (W)b);
    }
};

template <class T, class W>
struct op_prod {
    static constexpr bool float_rounding = true;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (T)((W)a * (W)b);
    }
};

/* "b wins only if strictly better, or if a is NaN" (a != a is false for
 * integers and compiles away). */
template <class T, class W>
struct op_min {
    static constexpr bool float_rounding = false;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (b < a || a != a) ? b : a;
    }
};

template <class T, class W>
struct op_max {
    static constexpr bool float_rounding = false;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (b > a || a != a) ? b : a;
    }
};

template <class T, class W>
struct op_and {
    static constexpr bool float_rounding = false;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (T)(a & b);
    }
};

template <class T, class W>
struct op_or {
    static constexpr bool float_rounding = false;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (T)(a | b);
    }
};

template <class T, class W>
struct op_xor {
    static constexpr bool float_rounding = false;
    __device__ __forceinline__ T operator()(const T &a, const T &b) const
    {
        return (T)(a ^ b);
    }
};

} /* namespace parsum_k */

#endif
