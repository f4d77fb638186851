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
 * reduce, and the segmented ones (scan with head flags forward and
 * reverse, reduce by head flags; NULL where not built). Each is a __global__ function's address (built-in dtypes) or a
 * cudaKernel_t from a library compiled by NVRTC (custom operators); both
 * are accepted by cudaLaunchKernel and the occupancy calculator. */
struct parsum__cuda_kernels {
    const void *scan_fwd;
    const void *scan_rev;
    const void *reduce;
    const void *seg_fwd;
    const void *seg_rev;
    const void *seg_reduce;
    /* The pipelined plain scans (scan_pipe_kernel); NULL: use scan_fwd /
     * scan_rev. */
    const void *pipe_fwd;
    const void *pipe_rev;
    unsigned long long pipe_tile; /* elements per tile of the pipe kernels */
    /* The pipelined segmented scans with head flags (scan_seg_pipe_kernel,
     * tiles of seg_pipe_tile elements); NULL: use seg_fwd / seg_rev. */
    const void *seg_pipe_fwd;
    const void *seg_pipe_rev;
    unsigned long long seg_pipe_tile;
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

/* The one-pass reduce by key (rbk_pipe_kernel, reduce_by_key_pipe.cuh) of
 * one (value dtype, operator): k[0] for 4-byte keys, k[1] for 8-byte keys;
 * NULL where not built. src/cuda/rbk_<dtype>.cu (generated), 4- and 8-byte
 * value dtypes only, indexed by parsum_op. */
struct parsum__cuda_rbk_kernels {
    const void *k[2];
};
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_i32[PARSUM_OP_COUNT];
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_u32[PARSUM_OP_COUNT];
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_i64[PARSUM_OP_COUNT];
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_u64[PARSUM_OP_COUNT];
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_f32[PARSUM_OP_COUNT];
extern const parsum__cuda_rbk_kernels parsum__cuda_rbk_f64[PARSUM_OP_COUNT];

struct parsum__cuda_module; /* a compiled custom operator (custom.cu) */
struct parsum__cuda_cmp_module; /* a compiled comparator (sort_custom.cu) */
struct parsum__cuda_pred_module; /* a compiled predicate (select_custom.cu) */

/* Layouts of tagged look-back state (parsum__cuda_tagged_status): the
 * u8 summed-area table's status words, and the plain scan's packed
 * descriptors of 8 and of 16 bytes (status word first). */
enum {
    PARSUM__TAGGED_SAT = 0,
    PARSUM__TAGGED_DESC8 = 1,
    PARSUM__TAGGED_DESC16 = 2,
    PARSUM__TAGGED_COUNT = 3
};

/* One tagged buffer: its memory, size, the last call's number (0: zero
 * the buffer before the next call) and the claims its counter has handed
 * out since it was zeroed. */
struct parsum__cuda_tagged {
    void *buf;
    size_t bytes;
    unsigned call;
    unsigned claimed;
};

/* Side streams a context keeps (parsum__cuda_fork). */
#define PARSUM__CUDA_SIDE_MAX 3

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
    /* Resident blocks per multiprocessor of the pipelined scans, per
     * (dtype, op, kernel: PARSUM__PIPE_*); 0 until first needed. */
    int pipe_blocks[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT][4];
    /* The same for rbk_pipe_kernel, per key size (4, 8 bytes); its
     * dynamic shared memory is allowed when the entry is set. */
    int rbk_blocks[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT][2];
    /* PARSUM_CUDA_SCAN_BLOCKS as the context was set up on its device: a
     * cap on the pipelined scan's grid (0: none). A test knob
     * (test_determinism): a different grid moves every tile's look-back,
     * which must never move a result bit. */
    size_t scan_blocks_cap;
    parsum__cuda_module *modules; /* custom operators, most recent first */
    int module_count;
    parsum__cuda_cmp_module *cmp_modules; /* comparators, the same way */
    int cmp_module_count;
    parsum__cuda_pred_module *pred_modules; /* custom predicates, too */
    int pred_module_count;
    /* Look-back status words that calls tag instead of zeroing
     * (parsum__cuda_tagged_status), one buffer per layout
     * (PARSUM__TAGGED_*). */
    parsum__cuda_tagged tagged[PARSUM__TAGGED_COUNT];
    /* Side streams (non-blocking) and their events, created when first
     * needed (parsum__cuda_fork); side_count of them exist. */
    cudaStream_t side[PARSUM__CUDA_SIDE_MAX];
    cudaEvent_t side_done[PARSUM__CUDA_SIDE_MAX];
    cudaEvent_t fork_event;
    int side_count;
    /* Pinned host memory for small results a call reads back without
     * waiting for the rest of its work (parsum__cuda_pinned), and the
     * event that says when the copy into it is done. */
    void *pinned;
    size_t pinned_bytes;
    cudaEvent_t pinned_ready;
};

/* At least `bytes` of the context's pinned host memory in *p (kept until
 * the context goes or moves to another device; one call's at a time),
 * and st->pinned_ready, an event to record after the copy into it. */
parsum_status parsum__cuda_pinned(parsum_context *ctx, size_t bytes, void **p);

/* Kernels of one call that do not depend on each other, run on side
 * streams so that each fills the others' tails (the segmented sort's
 * size classes): parsum__cuda_fork makes side streams 0 .. n - 1
 * (n <= PARSUM__CUDA_SIDE_MAX) wait for everything enqueued so far on the
 * context's stream and returns them in side[]; parsum__cuda_join makes the
 * context's stream wait for everything enqueued on them since. A call
 * that forks joins before it returns, on every path, so that the
 * context's stream alone says when its work is done (and a stream being
 * captured into a graph ends the capture with every branch joined). */
parsum_status parsum__cuda_fork(parsum_context *ctx, int n,
                                cudaStream_t *side);
parsum_status parsum__cuda_join(parsum_context *ctx, int n);

/* Status words for a look-back kernel that tags them with the call, so
 * that no memset has to run before it (a launch of its own on the
 * stream: about 1 us on an H200, 0.8 % of an 8192^2 u8 summed-area
 * table). `which` names the layout (PARSUM__TAGGED_*): a buffer only ever
 * holds words of one layout, so a word where a call expects a status was
 * written as a status, never as a value that might happen to look like
 * one. *buf gets `bytes` bytes (zero-filled when allocated, and again
 * every 2^30 calls: the tags' range), the tile counter at its start; *tag:
 * this call's number times 4, which the kernel ORs into every status word
 * it writes (bits 0 and 1 hold the status) and requires of every word it
 * reads; *tile_base: what the counter, never reset in between, holds when
 * the kernel starts, given that its blocks add exactly `claims` to it in
 * all. Words left by other calls carry other tags, so they read as
 * unpublished. The buffer is the context's own: nothing else writes it.
 * A failed launch must call parsum__cuda_tagged_reset. */
parsum_status parsum__cuda_tagged_status(parsum_context *ctx, int which,
                                         size_t bytes, unsigned claims,
                                         void **buf, unsigned *tag,
                                         unsigned *tile_base);
void parsum__cuda_tagged_reset(parsum_context *ctx, int which);
/* Whether the context's stream is capturing into a CUDA graph (or cannot
 * tell): a captured call must zero its look-back state in the captured
 * work, since a replay reuses the call's tag and tile_base. */
bool parsum__cuda_capturing(parsum_context *ctx);
/* A measurement switch of the environment: false when the variable
 * `name` is "0", true otherwise (unset included). The switches choose
 * between kernels for measurements and for tests of every path. */
bool parsum__cuda_env_on(const char *name);
/* An integer switch of the environment: the value of `name` if it is a
 * whole decimal integer in [lo, hi], else -1 (unset included). */
long parsum__cuda_env_int(const char *name, long lo, long hi);

static inline parsum__cuda_state *parsum__cuda_st(parsum_context *ctx)
{
    return static_cast<parsum__cuda_state *>(ctx->backend_state);
}

/* Small host helpers the .cu files share. */
namespace parsum_cu {

/* x rounded up to a multiple of a. */
inline size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Grid for a grid-stride kernel over `items` items handled `per_block`
 * at a time: enough blocks to fill the device (16 per multiprocessor),
 * no more than needed, at least one. */
inline unsigned aux_grid(parsum_context *ctx, unsigned long long items,
                         unsigned long long per_block)
{
    unsigned long long want = (items + per_block - 1) / per_block;
    const unsigned long long cap =
        (unsigned long long)parsum__cuda_st(ctx)->sm_count * 16;
    if (want > cap)
        want = cap;
    return (unsigned)(want > 0 ? want : 1);
}

/* A bump allocator over one block of the context's scratch arena: the
 * steps of one call need several buffers alive at once. Every piece is
 * 256-byte aligned. */
struct carve {
    unsigned char *base;
    size_t used;
    void *take(size_t bytes)
    {
        void *p = base + used;
        used += round_up(bytes, 256);
        return p;
    }
};

} /* namespace parsum_cu */

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
    /* [4], indexed by PARSUM__PIPE_*; NULL: no pipelined scan */
    int *pipe_blocks;
};

/* Which pipelined scan kernel a pipe_blocks entry is for. */
enum {
    PARSUM__PIPE_FWD = 0,
    PARSUM__PIPE_REV = 1,
    PARSUM__PIPE_SEG_FWD = 2,
    PARSUM__PIPE_SEG_REV = 3
};

/* One launch of a scan kernel, plain or segmented (launch.cu). */
struct parsum__cuda_scan_call {
    const void *kernel;
    /* A scan_pipe_kernel: the grid is at most the resident blocks
     * (*pipe_blocks per multiprocessor), not one block per tile. */
    const int *pipe_blocks;
    size_t tile; /* elements per tile of a pipe kernel (0: scan_kernel's) */
    size_t scan_size; /* bytes the kernel scans per element: the element,
                         or its segmented pair (parsum__cuda_pair_size) */
    const void *in;
    void *out;
    size_t n; /* > 0 */
    unsigned flags;
    /* Segmented kernels (see parsum_k::scan_args; its integer types). */
    const unsigned *seg_flags;
    unsigned long long flag_off;
    const unsigned long long *map;
    const unsigned *map_on;
    const void *keys;
    void *keys_out;
    unsigned key_size;
    unsigned long long *total;
    unsigned long long out_count;
    /* Tile state: parsum__cuda_scan_state_bytes() bytes of device memory,
     * or NULL to take the context's scratch arena. */
    void *state;
    size_t smem; /* dynamic shared memory of the kernel, bytes */
};
/* seg: for a segmented kernel (scan_size its pair's size); tile: its
 * tile's elements (0: scan_kernel's). */
size_t parsum__cuda_scan_state_bytes(size_t elem_size, size_t scan_size,
                                     size_t n, bool seg, size_t tile = 0);
parsum_status parsum__cuda_launch_scan(parsum_context *ctx,
                                       const parsum__cuda_launch *l,
                                       const parsum__cuda_scan_call *c);
/* Sends c (n and the scan kernel set) to l's pipelined kernel `which`
 * (PARSUM__PIPE_*) where l has it and n fills more than one of its tiles;
 * leaves c as it is otherwise. */
parsum_status parsum__cuda_pick_pipe(parsum_context *ctx,
                                     const parsum__cuda_launch *l, int which,
                                     parsum__cuda_scan_call *c);
/* Whether the pipelined scan kernels are on (PARSUM_CUDA_SCAN_PIPE, a
 * measurement switch: "0" turns them off). */
bool parsum__cuda_pipe_on(void);
/* Whether a result pointer is device (or managed) memory of the context's
 * device, which a kernel may write; errors for another device's memory. */
parsum_status parsum__cuda_result_on_device(parsum_context *ctx,
                                            const void *result, bool *direct);
/* Fills l for a built-in (dtype, op); id and pad: 8 bytes each. */
void parsum__cuda_builtin_launch(parsum_context *ctx, parsum_dtype dtype,
                                 parsum_op op, parsum__cuda_launch *l,
                                 unsigned char *id, unsigned char *pad);

/* Counts computed on the device (u64) to a caller's size_t pointer(s):
 * host memory (the call waits) or device memory (it does not). */
parsum_status parsum__cuda_deliver_counts(parsum_context *ctx, size_t *dst,
                                          const unsigned long long *src,
                                          size_t count);
parsum_status parsum__cuda_deliver_zero(parsum_context *ctx, size_t *dst,
                                        size_t count);
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

/* Compiles (or finds in the cache) the custom operator and fills l
 * (custom.cu); l->id and l->pad point into op. */
parsum_status parsum__cuda_custom_launch(parsum_context *ctx,
                                        const parsum_custom_op *op,
                                        parsum__cuda_launch *l);

/* Segmented and keyed operations (segmented.cu). */
parsum_status parsum__cuda_seg_scan(parsum_context *ctx, const void *in,
                                    void *out, size_t n, parsum_dtype dtype,
                                    parsum_op op,
                                    const parsum_custom_op *custom,
                                    const parsum_segments *seg,
                                    unsigned flags);
parsum_status parsum__cuda_seg_reduce(parsum_context *ctx, const void *in,
                                      void *out, const uint64_t *offsets,
                                      size_t num_segments, parsum_dtype dtype,
                                      parsum_op op,
                                      const parsum_custom_op *custom);
parsum_status parsum__cuda_scan_by_key(parsum_context *ctx, const void *keys,
                                       parsum_dtype key_dtype, const void *in,
                                       void *out, size_t n, parsum_dtype dtype,
                                       parsum_op op, unsigned flags);
parsum_status parsum__cuda_reduce_by_key(
    parsum_context *ctx, const void *keys_in, parsum_dtype key_dtype,
    const void *values_in, size_t n, parsum_dtype dtype, parsum_op op,
    void *keys_out, void *values_out, size_t *num_runs);
parsum_status parsum__cuda_offsets_to_flags(parsum_context *ctx,
                                            const uint64_t *offsets,
                                            size_t num_segments, size_t n,
                                            uint32_t *flags);
parsum_status parsum__cuda_flags_to_offsets(parsum_context *ctx,
                                            const parsum_segments *seg,
                                            size_t n, uint64_t *offsets,
                                            size_t *num_segments);

/* Selection family (select.cu). */
parsum_status parsum__cuda_select(parsum_context *ctx,
                                  const parsum__select_args *a);
parsum_status parsum__cuda_runs(parsum_context *ctx,
                                const parsum__runs_args *a);
/* Images (image.cu). */
parsum_status parsum__cuda_integral(parsum_context *ctx,
                                    const struct parsum__integral_args *a);
parsum_status parsum__cuda_box_sums(parsum_context *ctx,
                                    const struct parsum__box_sums_args *a);
parsum_status parsum__cuda_box_filter(parsum_context *ctx,
                                      const struct parsum__box_filter_args *a);
/* Tone mapping (tonemap.cu). */
parsum_status parsum__cuda_tonemap_lum(parsum_context *ctx,
                                       const struct parsum__tonemap_args *a);
parsum_status parsum__cuda_tonemap_map(parsum_context *ctx,
                                       const struct parsum__tonemap_args *a);

/* Histograms (histogram.cu). */
parsum_status parsum__cuda_histogram(parsum_context *ctx,
                                     const struct parsum__hist_args *a);
parsum_status parsum__cuda_hist_bin_ids(parsum_context *ctx,
                                        const struct parsum__hist_args *a,
                                        int c, uint32_t *ids);
parsum_status parsum__cuda_hist_add_runs(parsum_context *ctx,
                                         const uint32_t *keys,
                                         const uint64_t *lengths,
                                         size_t nruns, uint32_t nbins,
                                         void *counts, parsum_dtype count_dtype,
                                         bool accumulate);

/* Radix sorts (sort.cu, segsort.cu). */
parsum_status parsum__cuda_sort(parsum_context *ctx,
                                const struct parsum__sort_args *a);
parsum_status parsum__cuda_segmented_sort(parsum_context *ctx,
                                          const struct parsum__sort_args *a);

/* Unloads every compiled custom operator, comparator and predicate of st
 * (custom.cu).
 * The caller has made st's device current and synchronized its stream. */
void parsum__cuda_modules_free(parsum__cuda_state *st);

/* A malloc'ed copy of s (NULL when out of memory): the source strings the
 * caches of compiled operators, comparators and predicates keep as keys
 * (custom.cu). */
char *parsum__cuda_strdup(const char *s);

/* Run-time compilation shared by custom operators and comparators
 * (custom.cu): compiles src with NVRTC for the context's device (SASS, or
 * PTX the driver finishes), loads it into *lib and resolves the count <=
 * PARSUM__CUDA_MAX_NVRTC_KERNELS name expressions exprs into k. what names
 * the user's code in a compile error ("the comparator"), which carries
 * NVRTC's log. */
#define PARSUM__CUDA_MAX_NVRTC_KERNELS 8
parsum_status parsum__cuda_nvrtc_load(parsum_context *ctx, const char *src,
                                      const char *what,
                                      const char *const *exprs, int count,
                                      cudaLibrary_t *lib, cudaKernel_t *k);
/* The value of the extern "C" unsigned long long `name` of lib. */
parsum_status parsum__cuda_library_u64(parsum_context *ctx, cudaLibrary_t lib,
                                       const char *name,
                                       unsigned long long *value);

/* Comparison sort (sort_custom.cu): the slots, and the comparator cache's
 * teardown (called by parsum__cuda_modules_free). */
parsum_status parsum__cuda_qsort_classify(parsum_context *ctx,
                                          const parsum__qsort_args *a);
parsum_status parsum__cuda_qsort_scatter(parsum_context *ctx,
                                         const parsum__qsort_args *a);
parsum_status parsum__cuda_qsort_finish(parsum_context *ctx,
                                        const parsum__qsort_args *a);
void parsum__cuda_cmp_modules_free(parsum__cuda_state *st);

/* Custom predicates (select_custom.cu): compiles cp (or finds it in the
 * cache) for keys of key_size bytes, checks that keys is aligned for its
 * type, and for n > 0 enqueues the evaluation of the predicate over the n
 * keys into bits: (n + 31) / 32 words of device memory, bit i of word
 * i / 32 (LSB first) set when key i is selected, as PARSUM_SELECT_BITS
 * reads them. Also the predicate cache's teardown (called by
 * parsum__cuda_modules_free). */
parsum_status parsum__cuda_pred_bits(parsum_context *ctx,
                                     const parsum_custom_pred *cp,
                                     const void *keys, size_t n,
                                     size_t key_size, uint32_t *bits);
void parsum__cuda_pred_modules_free(parsum__cuda_state *st);

#endif /* PARSUM_CUDA_INTERNAL_H */
