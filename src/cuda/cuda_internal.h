/*
 * cuda_internal.h - what the files of the CUDA backend share: the backend
 * state hung on parsum_context::backend_state, error reporting with the
 * call site, the device scope, the kernel tables of the built-in dtypes and
 * the launchers that the built-in and the custom (NVRTC) paths share.
 * C++ (CUDA) only.
 */
#ifndef PARSUM_CUDA_INTERNAL_H
#define PARSUM_CUDA_INTERNAL_H

#include "../core/internal.h"

#include <cuda_runtime.h>

/* The kernels of one (element type, operator): forward scan, reverse scan,
 * reduce. Each is a __global__ function's address (built-in dtypes) or a
 * cudaKernel_t from a library compiled by NVRTC (custom operators); both
 * are accepted by cudaLaunchKernel and the occupancy calculator. */
struct parsum__cuda_kernels {
    const void *scan_fwd;
    const void *scan_rev;
    const void *reduce;
};

/* src/cuda/kernels_<dtype>.cu (generated), indexed by parsum_op. */
extern const parsum__cuda_kernels parsum__cuda_kernels_i8[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_u8[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_i16[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_u16[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_i32[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_u32[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_i64[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_u64[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_f32[PARSUM_OP_COUNT];
extern const parsum__cuda_kernels parsum__cuda_kernels_f64[PARSUM_OP_COUNT];

struct parsum__cuda_module; /* a compiled custom operator (custom.cu) */

struct parsum__cuda_state {
    int device;           /* CUDA device ordinal */
    cudaStream_t stream;  /* where all work is enqueued; 0 = legacy default */
    int sm_count;         /* multiprocessors of the device */
    int cc_major, cc_minor;
    unsigned *dev_counter; /* reduce: blocks finished (self-resetting) */
    void *dev_result;      /* reduce: result staging for a host result */
    const char *api;       /* public function being served, for messages */
    /* Reduce grid size per (dtype, op): multiprocessors x resident blocks
     * of the kernel; 0 until first needed. */
    int reduce_grid[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
    parsum__cuda_module *modules; /* custom operators, most recent first */
    int module_count;
};

static inline parsum__cuda_state *parsum__cuda_st(parsum_context *ctx)
{
    return static_cast<parsum__cuda_state *>(ctx->backend_state);
}

/* Records "<api>: <error name> (<error string>) from <call> at
 * <file>:<line> in <function>" on ctx, clears the runtime's last error where
 * it is not sticky, and returns the matching status (OUT_OF_MEMORY,
 * NO_DEVICE or CUDA). */
parsum_status parsum__cuda_error(parsum_context *ctx, cudaError_t err,
                                 const char *call, const char *file, int line,
                                 const char *func);

/* Every runtime call goes through this. */
#define PARSUM_CUDA_TRY(ctx, call)                                         \
    do {                                                                   \
        cudaError_t e_ = (call);                                           \
        if (e_ != cudaSuccess)                                             \
            return parsum__cuda_error((ctx), e_, #call, __FILE__, __LINE__, \
                                      __func__);                           \
    } while (0)

/* "src/cuda/backend.cu" from a full path, for messages. */
const char *parsum__cuda_short_file(const char *file);

/* Makes the context's device current while the object lives and gives the
 * calling thread its previous device back afterwards, so that parsum never
 * changes the caller's CUDA state. */
class parsum__cuda_scope {
public:
    parsum__cuda_scope() : prev_(-1), st_(NULL), api_(NULL) {}
    ~parsum__cuda_scope()
    {
        if (prev_ >= 0)
            (void)cudaSetDevice(prev_);
        if (st_ != NULL)
            st_->api = api_;
    }
    parsum__cuda_scope(const parsum__cuda_scope &) = delete;
    parsum__cuda_scope &operator=(const parsum__cuda_scope &) = delete;
    /* api: the public function's name, used in error messages until the
     * scope ends (scopes nest: parsum_scan growing its scratch arena frees
     * the old one through mem_free, which has a scope of its own). */
    parsum_status enter(parsum_context *ctx, const char *api);

private:
    int prev_;
    parsum__cuda_state *st_;
    const char *api_;
};

/* One operator ready to launch: its kernels, element size and alignment,
 * identity (exclusive scans, empty reduces) and padding (an identity bit
 * for bit, see scan_kernels.cuh), both host memory of elem_size bytes, and
 * where its reduce grid size is cached. */
struct parsum__cuda_launch {
    const parsum__cuda_kernels *k;
    size_t elem_size;
    size_t elem_align;
    const void *id;
    const void *pad;
    int *reduce_grid;
};

/* Launchers (launch.cu). Arguments were validated by the core; n > 0 for
 * the scan. */
parsum_status parsum__cuda_run_scan(parsum_context *ctx,
                                    const parsum__cuda_launch *l,
                                    const void *in, void *out, size_t n,
                                    unsigned flags);
parsum_status parsum__cuda_run_reduce(parsum_context *ctx,
                                      const parsum__cuda_launch *l,
                                      const void *in, size_t n, void *result);

/* Backend slots (launch.cu for built-in dtypes, custom.cu for custom
 * operators). */
parsum_status parsum__cuda_reduce(parsum_context *ctx, const void *in,
                                  size_t n, parsum_dtype dtype, parsum_op op,
                                  void *result);
parsum_status parsum__cuda_scan(parsum_context *ctx, const void *in, void *out,
                                size_t n, parsum_dtype dtype, parsum_op op,
                                unsigned flags);
parsum_status parsum__cuda_reduce_custom(parsum_context *ctx, const void *in,
                                         size_t n, const parsum_custom_op *op,
                                         void *result);
parsum_status parsum__cuda_scan_custom(parsum_context *ctx, const void *in,
                                       void *out, size_t n,
                                       const parsum_custom_op *op,
                                       unsigned flags);

/* Unloads every compiled custom operator of st (custom.cu). The caller has
 * made st's device current and synchronized its stream. */
void parsum__cuda_modules_free(parsum__cuda_state *st);

#endif /* PARSUM_CUDA_INTERNAL_H */
