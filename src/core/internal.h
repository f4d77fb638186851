/*
 * internal.h - what the layers of parsum share and users never see: the
 * context, the backend dispatch table, error reporting and the scratch
 * arena. Public functions validate their arguments (src/core/api_*.c) and
 * then call the context's backend through parsum__backend; backends trust
 * their arguments and never call back into the public API.
 */
#ifndef PARSUM_INTERNAL_H
#define PARSUM_INTERNAL_H

#include "parsum.h"
#include "hist/hist_bins.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARSUM__ERRMSG_LEN 512
#define PARSUM__ALIGN 64

/* Arguments of the backend's select slot, validated by the core. One slot
 * serves select, select_by_key, select_indices, partition(_by_key),
 * partition3 and split_by_bit:
 *   - sel selects on keys (n elements of key_size bytes; keys may be NULL
 *     only for BYTES/BITS selectors); sel2 != NULL only for partition3.
 *     BITS selectors come with bit_offset < 32 (bits advanced by words).
 *   - values (value_size bytes each) may be NULL (value_size 0).
 *   - keys_out, values_out, indices_out: each NULL when not wanted.
 *   - partition false: the selected elements are packed at the start of
 *     each output, in order. partition true: after them come the rejected
 *     ones in order (partition3: the ones sel2 selects, then the rest).
 *     reverse_rest (two-way partition only): the rejected ones in reverse
 *     input order instead, element i of them at n - 1 - (its rank among
 *     the rejected), so that their place does not depend on the total.
 *   - counts: 1 value (2 for partition3) in host memory, or on a CUDA
 *     context possibly device memory (the backend finds out). */
typedef struct parsum__select_args {
    const char *fn; /* the public function, for messages */
    const parsum_selector *sel;
    const parsum_selector *sel2;
    const void *keys;
    size_t key_size;
    const void *values;
    size_t value_size;
    void *keys_out;
    void *values_out;
    uint64_t *indices_out;
    bool partition;
    bool reverse_rest;
    size_t n;
    size_t *counts;
} parsum__select_args;

/* Image slots (parsum.h, "Images"). Descriptors come validated, with pitch
 * resolved (never 0) and in the backend's space (HOST images on a CPU
 * context, DEVICE on a CUDA one). */
typedef struct parsum__integral_args {
    const char *fn;
    parsum_image src;
    parsum_image table;
    bool inclusive; /* PARSUM_INTEGRAL_INCLUSIVE layout */
    bool squared;   /* sums of squares */
    /* NULL, or src.channels doubles in host memory: subtract offset[c]
     * from each sample before squaring / summing. With offset_mean the
     * backend first stores each channel's float64 mean there (sum in a
     * fixed order, so deterministic). */
    double *offset;
    bool offset_mean;
} parsum__integral_args;

/* Box sums or means from a table: rects (nrect, context space), out in the
 * context space (table dtype for integer tables, else float64; means:
 * float64). The rectangles are not validated (they may live on the
 * device): the backend clips them to the image of table (table size minus
 * one in the default layout). */
typedef struct parsum__box_sums_args {
    const char *fn;
    parsum_image table;
    bool inclusive;
    bool means;
    bool squared; /* a SQUARED table: the offset is not added back */
    const double *offset; /* NULL or table.channels values, host memory */
    const parsum_rect *rects;
    size_t nrect;
    void *out;
} parsum__box_sums_args;

typedef struct parsum__box_filter_args {
    const char *fn;
    parsum_image src;
    parsum_image dst; /* same size, channels, dtype; disjoint from src */
    size_t rx, ry;    /* <= 2^20 */
    parsum_border border;
} parsum__box_filter_args;

/* Arguments of the backend's runs slot (unique, unique_by_key, run-length
 * encodings): runs of bitwise-equal consecutive keys.
 *   nontrivial false: for every run r, keys_out[r] = its first key,
 *     values_out[r] = that key's value, lengths[r] = its length (each
 *     output NULL when not wanted).
 *   nontrivial true: only runs of length >= 2, offsets[r] = position of
 *     the first element and lengths[r] (both given).
 *   *num_runs as counts above. */
typedef struct parsum__runs_args {
    const char *fn; /* the public function, for messages */
    const void *keys;
    size_t key_size;
    const void *values;
    size_t value_size;
    void *keys_out;
    void *values_out;
    uint64_t *lengths;
    uint64_t *offsets;
    bool nontrivial;
    size_t n;
    size_t *num_runs;
} parsum__runs_args;

/* Arguments of the backend's histogram slots (parsum.h, "Histograms"),
 * validated: samples n pixels of `channels` samples of dtype; plan[c] and
 * counts[c] for each channel (counts[c] NULL: channel skipped). The slot
 * `histogram` serves AUTO (the backend picks), ATOMIC_GLOBAL and
 * PRIVATIZED; the core composes SORT_REDUCE_BY_KEY from hist_bin_ids, the
 * select slot (split by bit), the runs slot and hist_add_runs. Levels of
 * RANGE plans are in host memory. */
typedef struct parsum__hist_args {
    const char *fn;
    const void *samples;
    size_t n;
    parsum_dtype dtype;
    int channels;
    parsum_dtype count_dtype; /* U32 or U64 */
    parsum_hist_strategy strategy;
    bool accumulate;
    parsum__hist_plan plan[4];
    void *counts[4];
} parsum__hist_args;

/* Arguments of the backend's tone-mapping slots (parsum_tonemap; the
 * pipeline they are steps of is src/hist/tonemap.c). Images validated, in
 * the context's space.
 *   tonemap_lum: loglum[y * width + x] = log10 of the pixel's luminance,
 *     NaN for a black pixel (L <= min_luminance; negative samples count as
 *     0); *first_bad (host) = y * width + x of the first pixel with a NaN
 *     or infinite sample (alpha included), or UINT64_MAX.
 *   tonemap_map: each pixel's display luminance Ld from its loglum l:
 *     t = (l - lmin) * scale clamped to [0, nbins], i = floor(t) (nbins - 1
 *     at t = nbins), Ld = ld_edges[i] + (ld_edges[i + 1] - ld_edges[i]) *
 *     (t - i); black pixels Ld = 0. Writes dst as parsum_tonemap says. */
typedef struct parsum__tonemap_args {
    const char *fn;
    parsum_image src;
    parsum_image dst;
    float *loglum;           /* width * height, context space */
    double min_luminance;
    uint64_t *first_bad;     /* lum: host */
    const double *ld_edges;  /* map: nbins + 1 values, context space */
    size_t nbins;
    double lmin, scale;
} parsum__tonemap_args;

/* Arguments of the backend's radix sort slots (parsum_sort,
 * parsum_sort_indices, parsum_segmented_sort), validated by src/sort:
 *   - keys_in: n keys of key_dtype. keys_out: n keys, may equal keys_in (in
 *     place; no other overlap), or NULL when only values are wanted (then
 *     value_size > 0).
 *   - value_size 0: no values. Else values_in / values_out of value_size
 *     (1..16) bytes each, values_out may equal values_in. indices: values_in
 *     is NULL, value_size is 8 and values_out receives the uint64_t input
 *     positions.
 *   - Keys order by their ordered bits (parsum.h, "Sorting"), only bits
 *     [begin_bit, end_bit) counted (resolved: begin_bit < end_bit <= key
 *     bits); descending reverses the order; always stable.
 *   - segmented_sort only: offsets (num_segments + 1 values, context space)
 *     are checked on the host for a CPU context; a CUDA backend must stay
 *     within the arrays whatever they hold.
 *   - Scratch from parsum__scratch (may hold a previous call's data). */
typedef struct parsum__sort_args {
    const char *fn;
    const void *keys_in;
    void *keys_out;
    const void *values_in;
    void *values_out;
    size_t value_size;
    bool indices;
    size_t n;
    parsum_dtype key_dtype;
    bool descending;
    unsigned begin_bit, end_bit;
    const uint64_t *offsets;
    size_t num_segments;
} parsum__sort_args;

/* Arguments of the backend's comparison-sort slots (parsum_sort_custom;
 * the round loop that calls them is src/sort/quicksort.c). A round works on
 * nseg "active" segments: segment s is the len = act_off[s + 1] -
 * act_off[s] (> 1) elements at src[start[s] ..]; laid end to end they are
 * the m = act_off[nseg] active elements, element j of which is "active
 * index" j. Every array lives in the context's space.
 *   qsort_classify: first each segment's pivot p, copied to pivots[s]
 *     (nseg values of elem_size bytes): with reuse[s] == UINT64_MAX, the
 *     median under cmp of src[sample[3s]], src[sample[3s + 1]],
 *     src[sample[3s + 2]] (ties: any of the equal ones), and the segment
 *     is split "less than p or not"; otherwise p = prev_pivots[reuse[s]]
 *     (the previous round's pivot of the same elements, none of which was
 *     less than it), and the segment is split "equal to p or greater".
 *     Then for each active index j, with x its element: cnt[j] = 2^32 if
 *     x < p (less), 1 if x is equal (reused pivot, not p < x), else 0; wide
 *     (cnt_eq != NULL): cnt[j] = [less] and cnt_eq[j] = [equal] instead.
 *     One comparison per element either way.
 *   (the core then makes cnt, and cnt_eq, inclusive segmented sums)
 *   qsort_scatter: the stable three-way split. With L and E the segment's
 *     totals of less and equal elements (packed: high and low 32 bits),
 *     moves the less elements to dst[start ..], the equal ones to
 *     fin[start + L ..] and the greater ones to dst[start + L + E ..], each
 *     group in input order; writes totals[2s] = L, totals[2s + 1] = E.
 *     dst != src; fin is dst, src (then the equal elements may be written
 *     only once every read of src is done) or a third buffer.
 *   qsort_finish: sorts each part k (src[parts[2k] ..], parts[2k + 1] <=
 *     PARSUM__QSORT_SMALL elements) stably by cmp into the same positions
 *     of dst; dst may be src (in place). start, act_off, nseg unused. */
#define PARSUM__QSORT_SMALL 32

typedef struct parsum__qsort_args {
    const char *fn;
    const parsum_comparator *cmp;
    const void *src;
    void *dst;
    void *fin;
    const uint64_t *start;
    const uint64_t *act_off;
    const uint64_t *sample;
    const uint64_t *reuse;
    size_t nseg;
    size_t m;
    const void *prev_pivots;
    void *pivots;
    uint64_t *cnt;
    uint64_t *cnt_eq;
    uint64_t *totals;
    const uint64_t *parts;
    size_t nparts;
} parsum__qsort_args;

/* One backend = one table. A NULL slot means "not supported here" and the
 * core answers PARSUM_ERR_UNSUPPORTED without calling it. */
typedef struct parsum__backend {
    const char *name;
    parsum_status (*reduce)(parsum_context *ctx, const void *in, size_t n,
                            parsum_dtype dtype, parsum_op op, void *result);
    parsum_status (*scan)(parsum_context *ctx, const void *in, void *out,
                          size_t n, parsum_dtype dtype, parsum_op op,
                          unsigned flags);
    parsum_status (*reduce_custom)(parsum_context *ctx, const void *in,
                                   size_t n, const parsum_custom_op *op,
                                   void *result);
    parsum_status (*scan_custom)(parsum_context *ctx, const void *in,
                                 void *out, size_t n,
                                 const parsum_custom_op *op, unsigned flags);
    /* Segmented and keyed operations (parsum.h). The core has validated
     * every argument; for PARSUM_SEG_FLAGS it passes seg with
     * flags_bit_offset < 32 (flags advanced by whole words), and on a
     * CPU context it has checked the offsets. custom == NULL selects the
     * built-in (dtype, op); otherwise dtype and op are meaningless. */
    parsum_status (*seg_scan)(parsum_context *ctx, const void *in, void *out,
                              size_t n, parsum_dtype dtype, parsum_op op,
                              const parsum_custom_op *custom,
                              const parsum_segments *seg, unsigned flags);
    parsum_status (*seg_reduce)(parsum_context *ctx, const void *in,
                                void *out, const uint64_t *offsets,
                                size_t num_segments, parsum_dtype dtype,
                                parsum_op op, const parsum_custom_op *custom);
    parsum_status (*scan_by_key)(parsum_context *ctx, const void *keys,
                                 parsum_dtype key_dtype, const void *in,
                                 void *out, size_t n, parsum_dtype dtype,
                                 parsum_op op, unsigned flags);
    parsum_status (*reduce_by_key)(parsum_context *ctx, const void *keys_in,
                                   parsum_dtype key_dtype,
                                   const void *values_in, size_t n,
                                   parsum_dtype dtype, parsum_op op,
                                   void *keys_out, void *values_out,
                                   size_t *num_runs);
    parsum_status (*offsets_to_flags)(parsum_context *ctx,
                                      const uint64_t *offsets,
                                      size_t num_segments, size_t n,
                                      uint32_t *flags);
    parsum_status (*flags_to_offsets)(parsum_context *ctx,
                                      const parsum_segments *seg, size_t n,
                                      uint64_t *offsets,
                                      size_t *num_segments);
    /* Selection family (parsum.h, "Selection, partition, unique ..."):
     * see parsum__select_args and parsum__runs_args below. */
    parsum_status (*select)(parsum_context *ctx,
                            const struct parsum__select_args *a);
    parsum_status (*runs)(parsum_context *ctx,
                          const struct parsum__runs_args *a);
    /* Images: see parsum__integral_args etc. above. */
    parsum_status (*integral)(parsum_context *ctx,
                              const struct parsum__integral_args *a);
    parsum_status (*box_sums)(parsum_context *ctx,
                              const struct parsum__box_sums_args *a);
    parsum_status (*box_filter)(parsum_context *ctx,
                                const struct parsum__box_filter_args *a);
    /* Histograms: see parsum__hist_args. hist_bin_ids writes, for channel
     * c, ids[p] = the bin of pixel p's sample or plan[c].nbins when it
     * falls in none (n ids, context space). hist_add_runs sets counts
     * (nbins of count_dtype) to zero unless accumulate, then adds
     * lengths[r] to counts[keys[r]] for each r < nruns with keys[r] <
     * nbins (keys distinct; all arrays in context space). */
    parsum_status (*histogram)(parsum_context *ctx,
                               const struct parsum__hist_args *a);
    parsum_status (*hist_bin_ids)(parsum_context *ctx,
                                  const struct parsum__hist_args *a, int c,
                                  uint32_t *ids);
    parsum_status (*hist_add_runs)(parsum_context *ctx, const uint32_t *keys,
                                   const uint64_t *lengths, size_t nruns,
                                   uint32_t nbins, void *counts,
                                   parsum_dtype count_dtype, bool accumulate);
    /* Tone mapping: see parsum__tonemap_args. */
    parsum_status (*tonemap_lum)(parsum_context *ctx,
                                 const struct parsum__tonemap_args *a);
    parsum_status (*tonemap_map)(parsum_context *ctx,
                                 const struct parsum__tonemap_args *a);
    /* Sorting: see parsum__sort_args. */
    parsum_status (*sort)(parsum_context *ctx,
                          const struct parsum__sort_args *a);
    parsum_status (*segmented_sort)(parsum_context *ctx,
                                    const struct parsum__sort_args *a);
    /* Comparison sort: see parsum__qsort_args. */
    parsum_status (*qsort_classify)(parsum_context *ctx,
                                    const struct parsum__qsort_args *a);
    parsum_status (*qsort_scatter)(parsum_context *ctx,
                                   const struct parsum__qsort_args *a);
    parsum_status (*qsort_finish)(parsum_context *ctx,
                                  const struct parsum__qsort_args *a);
    /* Memory of the backend's space. */
    parsum_status (*mem_alloc)(parsum_context *ctx, void **ptr, size_t bytes);
    void (*mem_free)(parsum_context *ctx, void *ptr);
    parsum_status (*mem_copy)(parsum_context *ctx, void *dst, const void *src,
                              size_t bytes, parsum_copy_kind kind);
    /* rows rows of row_bytes bytes each, pitched on both sides; waits for
     * the copy to finish. */
    parsum_status (*mem_copy2d)(parsum_context *ctx, void *dst,
                                size_t dst_pitch, const void *src,
                                size_t src_pitch, size_t row_bytes,
                                size_t rows, parsum_copy_kind kind);
    parsum_status (*synchronize)(parsum_context *ctx);
    /* Checks that p lies in the backend's memory space (NULL: anything
     * goes). Sets the error message itself when it fails. */
    parsum_status (*check_pointer)(parsum_context *ctx, const void *p,
                                   const char *fn, const char *what);
    /* Backend state teardown (may be NULL). */
    void (*destroy)(parsum_context *ctx);
} parsum__backend;

struct parsum_context {
    parsum_backend kind;
    const parsum__backend *be;
    int threads;        /* resolved CPU thread count, >= 1 */
    int threads_asked;  /* 0 = default */

    /* Scratch arena: one block grown on demand (owned), or the caller's
     * workspace while it is large enough. */
    void *arena;
    size_t arena_bytes;
    void *user_ws;
    size_t user_ws_bytes;

    void *backend_state; /* e.g. the CUDA stream, device, module cache */

    char errmsg[PARSUM__ERRMSG_LEN];
};

/* Records a formatted message on ctx (if not NULL) and returns status. */
parsum_status parsum__fail(parsum_context *ctx, parsum_status status,
                           const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Returns at least `bytes` bytes of 64-byte aligned scratch memory in the
 * context's space, valid until the next scratch call on ctx. On failure
 * records a message naming fn and returns NULL. */
void *parsum__scratch(parsum_context *ctx, size_t bytes, const char *fn);

/* Generic host allocation helpers (aligned, NULL-safe free). */
void *parsum__host_alloc(size_t bytes);
void parsum__host_free(void *p);

/* Overflow-checked multiplication: returns false on overflow. */
static inline bool parsum__mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > (size_t)-1 / b)
        return false;
    *out = a * b;
    return true;
}

/* Backend tables. */
extern const parsum__backend parsum__cpu_backend;
#ifdef PARSUM_HAVE_CUDA
extern const parsum__backend parsum__cuda_backend;
/* Creates the CUDA backend state on ctx (device, stream). */
parsum_status parsum__cuda_init(parsum_context *ctx);
/* True when the CUDA runtime sees at least one device. */
bool parsum__cuda_available(void);
#endif

/* Default CPU thread count: OMP_NUM_THREADS if set, else online CPUs. */
int parsum__default_threads(void);

/* Dtype/op tables (src/core/types.c). */
bool parsum__dtype_valid(parsum_dtype d);
bool parsum__dtype_is_float(parsum_dtype d);
bool parsum__op_valid(parsum_op op);

#ifdef __cplusplus
}
#endif

#endif /* PARSUM_INTERNAL_H */
