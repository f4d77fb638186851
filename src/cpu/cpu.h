/*
 * cpu.h - internals of the CPU backend shared by its files and the tests.
 *
 * Chunking. Every CPU algorithm cuts its input into chunks of a fixed
 * number of bytes (PARSUM__CPU_CHUNK_BYTES / element size elements) that
 * does not depend on the thread count; chunk results are combined in chunk
 * order. That is what makes float results bit-identical for any number of
 * threads. A chunk is small enough to stay in a core's L2 cache between
 * the two passes a scan makes over it.
 */
#ifndef PARSUM_CPU_H
#define PARSUM_CPU_H

#include "parsum.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Set bits of x. The generic build has no popcnt instruction, and
 * __builtin_popcountll would then call libgcc for every word. */
static inline size_t parsum__popcount64(uint64_t x)
{
#if defined(__POPCNT__)
    return (size_t)__builtin_popcountll(x);
#else
    x = x - (x >> 1 & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (size_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* A build-time knob for tuning runs; changing it changes float rounding. */
#ifndef PARSUM__CPU_CHUNK_BYTES
#define PARSUM__CPU_CHUNK_BYTES ((size_t)128 * 1024)
#endif

/* Output bytes above which an out-of-place scan (or a selection) streams
 * its stores past the caches: a quarter of the last-level cache (sysconf),
 * 8 MiB if unknown; env PARSUM_CPU_STREAM_BYTES sets it (0: always), so
 * that the tests run the streamed paths on small inputs. */
size_t parsum__cpu_stream_threshold(void);

/* Elements per chunk for an element size (also for custom operators). */
size_t parsum__cpu_chunk_elems(size_t elem_size);

/* Per (dtype, op) kernels, type-erased. `len` >= 1 unless stated.
 *  reduce_run: *result = p[0] (+) ... (+) p[len-1] in a fixed lane order,
 *      len >= 1 (the lanes start from exact identities, see FN(pad)).
 *  scan_chunk: scans one chunk given the base pointers of its memory
 *      range; carry is the exclusive prefix from earlier chunks, or NULL
 *      for the first chunk of the scan; last is the chunk's inclusive
 *      prefix as the chain published it, written as the final element of
 *      an inclusive scan; stream asks for non-temporal stores; pf and
 *      pf_bytes name memory to prefetch meanwhile (the next chunk this
 *      thread will read; pf_bytes 0 for none). */
typedef void (*parsum__reduce_run_fn)(const void *p, size_t len,
                                      void *result);
typedef void (*parsum__scan_chunk_fn)(const void *in, void *out, size_t len,
                                      int reverse, int exclusive,
                                      const void *carry, const void *last,
                                      int stream, const void *pf,
                                      size_t pf_bytes);

/* Segmented kernels (segmented.c and friends).
 *  seg_scan_chunk: scan_chunk with segments. sbits are the chunk's head
 *      flags in scan order: bit k % 64 of sbits[k / 64] is set when the
 *      k-th element in scan order (in[k], or in[len-1-k] for a reverse
 *      scan) starts a segment in the scan's direction; bits at and above
 *      len are ignored. carry enters the elements before the first head
 *      (NULL: none; the exact-identity pad stands in, so a chunk whose
 *      first element is no head then gets the plain partial scan).
 *      last, if not NULL, replaces the final inclusive output (the prefix
 *      the chain published, as for scan_chunk); NULL writes the computed
 *      value.
 *  key_diff[log2(key size)]: bits[i / 64] bit i % 64 = (a[i] != b[i]) bit
 *      for bit, for i < count, where a and b point to count keys (usually
 *      one key apart); the last word's bits above count are cleared.
 *  compress: see parsum__cpu_select_kernels. */
typedef void (*parsum__seg_scan_fn)(const void *in, void *out, size_t len,
                                    const uint64_t *sbits, int reverse,
                                    int exclusive, const void *carry,
                                    const void *last, int stream,
                                    const void *pf, size_t pf_bytes);
typedef void (*parsum__key_diff_fn)(const void *a, const void *b,
                                    size_t count, uint64_t *bits);
typedef size_t (*parsum__compress_fn)(const void *src, const uint64_t *bits,
                                      size_t count, void *dst);

/* Selection kernels (kernels_select.c, one table per instruction set).
 * Bits: bit i % 64 of bits[i / 64] belongs to element i.
 *  compress[log2(element size)], sizes 1, 2, 4, 8 and 16: dst[0 .. m) =
 *      the elements src[i], i < count, whose bit is set, in order; bits at
 *      and above count are ignored. Returns m and writes nothing past
 *      dst[m - 1], so threads may fill neighbouring parts of one output.
 *  compress_index: dst[0 .. m) = base + i for the set bits i < count.
 *  pred_bits[dtype]: bit i = pred(keys[i]) for i < count (parsum_pred on
 *      dtype with the constants a and b; a->u32 is the bit of BIT_SET and
 *      BIT_CLEAR); writes ceil(count / 64) words, the bits above count
 *      cleared, and returns the number of set bits.
 *  pred_select[dtype]: the keys for which pred holds, compressed to
 *      dst[0 .. m) in one read of the keys (each 64 compressed as soon as
 *      they are tested); returns m. Writes nothing past dst[m - 1].
 *      Meanwhile it streams the lines of task t out (t NULL: none), a
 *      share after every 64 keys, so that one thread reads and writes
 *      memory at the same time (the previous chunk's output).
 *  pred_partition[dtype]: pred_select's keys to dst and, in the same
 *      read, the others to rdst (in input order; their count to *nrest);
 *      returns the count of the first. Nothing written past either end.
 *  bytes_bits: bit i = (bytes[i] != 0), as pred_bits.
 *  stream_copy: memcpy to memory that is not read soon, with
 *      non-temporal stores for the destination's whole cache lines (the
 *      partial lines at its ends with ordinary stores, so a neighbouring
 *      thread may write the rest of them). Not fenced: the caller issues
 *      a full fence (atomic_thread_fence) before the data are used. */
typedef size_t (*parsum__compress_index_fn)(const uint64_t *bits,
                                            size_t count, uint64_t base,
                                            uint64_t *dst);
typedef size_t (*parsum__pred_bits_fn)(const void *keys, size_t count,
                                       parsum_pred pred,
                                       const parsum_scalar *a,
                                       const parsum_scalar *b,
                                       uint64_t *bits);
/* lines 64-byte lines from src (any alignment) to dst (64-byte
 * aligned) with non-temporal stores. */
typedef struct parsum__stream_task {
    unsigned char *dst;
    const unsigned char *src;
    size_t lines;
} parsum__stream_task;
typedef size_t (*parsum__pred_select_fn)(const void *keys, size_t count,
                                         parsum_pred pred,
                                         const parsum_scalar *a,
                                         const parsum_scalar *b, void *dst,
                                         const parsum__stream_task *t);
typedef size_t (*parsum__pred_partition_fn)(const void *keys, size_t count,
                                            parsum_pred pred,
                                            const parsum_scalar *a,
                                            const parsum_scalar *b,
                                            void *dst, void *rdst,
                                            size_t *nrest);
typedef size_t (*parsum__bytes_bits_fn)(const uint8_t *bytes, size_t count,
                                        uint64_t *bits);
typedef void (*parsum__stream_copy_fn)(void *dst, const void *src,
                                       size_t bytes);

typedef struct parsum__cpu_select_kernels {
    parsum__compress_fn compress[5];
    parsum__compress_index_fn compress_index;
    parsum__pred_bits_fn pred_bits[PARSUM_DTYPE_COUNT];
    parsum__pred_select_fn pred_select[PARSUM_DTYPE_COUNT];
    parsum__bytes_bits_fn bytes_bits;
    parsum__stream_copy_fn stream_copy;
    parsum__pred_partition_fn pred_partition[PARSUM_DTYPE_COUNT];
} parsum__cpu_select_kernels;

typedef struct parsum__cpu_kernels {
    const char *isa;
    parsum__reduce_run_fn reduce_run[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
    parsum__scan_chunk_fn scan_chunk[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
    parsum__seg_scan_fn seg_scan_chunk[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
    parsum__key_diff_fn key_diff[4];
    const parsum__cpu_select_kernels *sel; /* the same instruction set's */
} parsum__cpu_kernels;

/* The kernel table of the instruction set in use: the best the processor
 * supports, or the one named by env PARSUM_CPU_ISA (generic, avx2,
 * avx512) if it is built in and supported. */
const parsum__cpu_kernels *parsum__cpu_kernels_get(void);

parsum_status parsum__cpu_reduce(parsum_context *ctx, const void *in,
                                 size_t n, parsum_dtype dtype, parsum_op op,
                                 void *result);
parsum_status parsum__cpu_scan(parsum_context *ctx, const void *in,
                               void *out, size_t n, parsum_dtype dtype,
                               parsum_op op, unsigned flags);
parsum_status parsum__cpu_reduce_custom(parsum_context *ctx, const void *in,
                                        size_t n, const parsum_custom_op *op,
                                        void *result);
parsum_status parsum__cpu_scan_custom(parsum_context *ctx, const void *in,
                                      void *out, size_t n,
                                      const parsum_custom_op *op,
                                      unsigned flags);

/* ---- segmented and keyed operations (seg_bits.c, segmented.c,
 * seg_reduce.c) ---------------------------------------------------------- */

/* Where a segmented operation's heads come from. */
typedef enum parsum__heads_kind {
    PARSUM__HEADS_FLAGS,
    PARSUM__HEADS_OFFSETS,
    PARSUM__HEADS_KEYS
} parsum__heads_kind;

typedef struct parsum__heads {
    parsum__heads_kind kind;
    size_t n;
    const uint32_t *flags;   /* FLAGS */
    size_t bit_offset;       /* FLAGS: bit of element 0 */
    size_t flag_words;       /* FLAGS: words that may be read */
    const uint64_t *offsets; /* OFFSETS: num_segments + 1 values */
    size_t num_segments;
    const unsigned char *keys; /* KEYS: n keys of key_size bytes */
    size_t key_size;
    parsum__key_diff_fn key_diff;
} parsum__heads;

/* Heads of n elements from a (validated) segment description, or from
 * runs of equal keys. */
void parsum__heads_init_segments(parsum__heads *h, const parsum_segments *seg,
                                 size_t n);
void parsum__heads_init_keys(parsum__heads *h, const void *keys,
                             parsum_dtype key_dtype, size_t n);

/* The scan-order head bits (see parsum__seg_scan_fn) of the elements
 * [off, off + len) into sbits, ceil(len / 64) words, bits above len
 * cleared. Element 0 always starts a segment (forward); element n-1
 * always ends one (reverse: starts it in scan order). Reads the flags,
 * offsets (one binary search, then the offsets inside the range) or keys
 * of the range only (and one key or flag beside it). bytes: scratch of
 * len rounded up to 64 bytes for offsets (see parsum__mark_offsets), or
 * NULL. */
void parsum__heads_chunk(const parsum__heads *h, size_t off, size_t len,
                         int reverse, uint64_t *sbits, unsigned char *bytes);

/* 64 flag bits from bit pos of a packed flag array of which only
 * flags[0 .. nwords) may be read (the missing words read as 0). */
uint64_t parsum__flags_get64(const uint32_t *flags, size_t nwords,
                             size_t pos);
/* dst = count bits of a packed flag array from bit pos, one uint64_t per
 * 64 (the higher bits of the last word cleared); flags[0 .. nwords) may
 * be read. */
void parsum__flags_extract(const uint32_t *flags, size_t nwords, size_t pos,
                           size_t count, uint64_t *dst);
/* The first index i in [0, count) with v[i] >= x (v non-decreasing), or
 * count. _near searches outward from the index guess, in O(log of the
 * distance): a chunk's first offset is found in a few probes from a good
 * guess instead of log2(segments) cache misses. */
size_t parsum__lower_bound(const uint64_t *v, size_t count, uint64_t x);
size_t parsum__lower_bound_near(const uint64_t *v, size_t count, uint64_t x,
                                size_t guess);
/* Where x would sit among count offsets from 0 to n, were the segments
 * of equal length: the guess for _near. */
size_t parsum__offsets_guess(uint64_t x, size_t count, uint64_t n);
/* dst bit (v - lo) set for every value v of offsets[0 .. count) in
 * [lo, hi), the other bits of the ceil((hi - lo) / 64) words cleared.
 * bytes, if not NULL, is scratch of that many words times 64 bytes, used
 * when the offsets are dense there; guess: an index near the first offset
 * >= lo (see parsum__lower_bound_near). Returns the index of the first
 * offset >= hi (or count). */
size_t parsum__mark_offsets(const uint64_t *offsets, size_t count, size_t lo,
                            size_t hi, uint64_t *dst, unsigned char *bytes,
                            size_t guess);

/* The backend slots (internal.h). */
parsum_status parsum__cpu_seg_scan(parsum_context *ctx, const void *in,
                                   void *out, size_t n, parsum_dtype dtype,
                                   parsum_op op,
                                   const parsum_custom_op *custom,
                                   const parsum_segments *seg, unsigned flags);
parsum_status parsum__cpu_seg_reduce(parsum_context *ctx, const void *in,
                                     void *out, const uint64_t *offsets,
                                     size_t num_segments, parsum_dtype dtype,
                                     parsum_op op,
                                     const parsum_custom_op *custom);
parsum_status parsum__cpu_scan_by_key(parsum_context *ctx, const void *keys,
                                      parsum_dtype key_dtype, const void *in,
                                      void *out, size_t n, parsum_dtype dtype,
                                      parsum_op op, unsigned flags);
parsum_status parsum__cpu_reduce_by_key(parsum_context *ctx,
                                        const void *keys_in,
                                        parsum_dtype key_dtype,
                                        const void *values_in, size_t n,
                                        parsum_dtype dtype, parsum_op op,
                                        void *keys_out, void *values_out,
                                        size_t *num_runs);
parsum_status parsum__cpu_offsets_to_flags(parsum_context *ctx,
                                           const uint64_t *offsets,
                                           size_t num_segments, size_t n,
                                           uint32_t *flags);
parsum_status parsum__cpu_flags_to_offsets(parsum_context *ctx,
                                           const parsum_segments *seg,
                                           size_t n, uint64_t *offsets,
                                           size_t *num_segments);

/* ---- selection, partition, unique and run-length encoding (select.c,
 * select_runs.c) ------------------------------------------------------- */

/* Elements per chunk of the selection operations, for elements that touch
 * `bytes` bytes of memory each (keys, values, flags and outputs together):
 * PARSUM__CPU_CHUNK_BYTES worth, a multiple of 64 (whole bit words). */
size_t parsum__select_chunk(size_t bytes);
/* The compress of cpu.h for elements of any size es >= 1 (the kernel for
 * 1, 2, 4, 8 and 16 bytes, a copy per set bit otherwise). */
size_t parsum__compress_any(const parsum__cpu_select_kernels *k,
                            const void *src, const uint64_t *bits,
                            size_t count, void *dst, size_t es);

struct parsum__select_args;
struct parsum__runs_args;
parsum_status parsum__cpu_select(parsum_context *ctx,
                                 const struct parsum__select_args *a);
parsum_status parsum__cpu_runs(parsum_context *ctx,
                               const struct parsum__runs_args *a);
/* Images (src/cpu/image.c). */
struct parsum__integral_args;
struct parsum__box_sums_args;
struct parsum__box_filter_args;
parsum_status parsum__cpu_integral(parsum_context *ctx,
                                   const struct parsum__integral_args *a);
parsum_status parsum__cpu_box_sums(parsum_context *ctx,
                                   const struct parsum__box_sums_args *a);
parsum_status parsum__cpu_box_filter(parsum_context *ctx,
                                     const struct parsum__box_filter_args *a);

/* ---- histograms (histogram.c, kernels_hist.c) ----------------------------
 * Kernels compiled once per instruction set; histogram.c takes the table
 * of the variant isa.c chose.
 *  ids: ids[i] = the bin (hist_bins.h) of the sample samples[i * stride]
 *      of the kernel's dtype under plan p, or p->nbins when it falls in
 *      none, for i < count.
 *  count: h[ids[i]]++ for i < count, sample i into copy i % 4 of the
 *      histogram (copies[k] = h + off[k], off[k] = (k % copies) * cs):
 *      consecutive samples that hit one bin increment different words, so
 *      the increments do not wait for each other's stores. Meanwhile it
 *      prefetches the pf_bytes from pf on (the next block's samples).
 *  shift: ids and count in one pass, for integer dtypes in the SHIFT bin
 *      mode (NULL for F32 / F64): sample samples[i * stride] into copy
 *      i % 4 as count does, the samples in no bin into counter p->nbins.
 *  bytes: the byte values x[0 .. len) counted, byte i into the 256
 *      counters h + (i % copies) * 256; copies is 4 or 6, len any. */
struct parsum__hist_plan;
typedef void (*parsum__hist_ids_fn)(const void *samples, size_t count,
                                    size_t stride,
                                    const struct parsum__hist_plan *p,
                                    uint32_t *ids);
typedef void (*parsum__hist_count_fn)(const uint32_t *ids, size_t count,
                                      uint32_t *h, size_t cs,
                                      unsigned copies, const void *pf,
                                      size_t pf_bytes);
typedef void (*parsum__hist_shift_fn)(const void *samples, size_t count,
                                      size_t stride,
                                      const struct parsum__hist_plan *p,
                                      uint32_t *h, size_t cs,
                                      unsigned copies);
typedef void (*parsum__hist_bytes_fn)(const uint8_t *x, size_t len,
                                      uint32_t *h, unsigned copies);

typedef struct parsum__cpu_hist_kernels {
    const char *isa;
    parsum__hist_ids_fn ids[PARSUM_DTYPE_COUNT];
    parsum__hist_count_fn count;
    parsum__hist_shift_fn shift[PARSUM_DTYPE_COUNT];
    parsum__hist_bytes_fn bytes;
} parsum__cpu_hist_kernels;

/* The histogram kernels of the instruction set in use. */
const parsum__cpu_hist_kernels *parsum__cpu_hist_kernels_get(void);

struct parsum__hist_args;
parsum_status parsum__cpu_histogram(parsum_context *ctx,
                                    const struct parsum__hist_args *a);
parsum_status parsum__cpu_hist_bin_ids(parsum_context *ctx,
                                       const struct parsum__hist_args *a,
                                       int c, uint32_t *ids);
parsum_status parsum__cpu_hist_add_runs(parsum_context *ctx,
                                        const uint32_t *keys,
                                        const uint64_t *lengths, size_t nruns,
                                        uint32_t nbins, void *counts,
                                        parsum_dtype count_dtype,
                                        bool accumulate);
/* Tone mapping (src/cpu/tonemap.c). */
struct parsum__tonemap_args;
parsum_status parsum__cpu_tonemap_lum(parsum_context *ctx,
                                      const struct parsum__tonemap_args *a);
parsum_status parsum__cpu_tonemap_map(parsum_context *ctx,
                                      const struct parsum__tonemap_args *a);
/* Comparison sort (src/cpu/sort_custom.c). */
struct parsum__qsort_args;
parsum_status parsum__cpu_qsort_classify(parsum_context *ctx,
                                         const struct parsum__qsort_args *a);
parsum_status parsum__cpu_qsort_scatter(parsum_context *ctx,
                                        const struct parsum__qsort_args *a);
parsum_status parsum__cpu_qsort_finish(parsum_context *ctx,
                                       const struct parsum__qsort_args *a);

/* ---- radix sort (sort.c, sort_seg.c, sort_kernels.c) ----------------------
 * Kernels compiled once per instruction set, like the histogram's. Keys are
 * read and written as their raw bits; a kernel computes each key's ordered
 * bits (sort/sort_keys.h) on the fly: for integers k ^ flip (flip holds the
 * sign bit of signed types), for floats the float transform, then ^ flip
 * (all ones for a descending sort, else 0). A digit is `bits` bits of the
 * ordered bits from bit `shift` on; bits <= PARSUM__SORT_MAX_BITS. */
#define PARSUM__SORT_MAX_BITS 11
#define PARSUM__SORT_RADIX_MAX (1u << PARSUM__SORT_MAX_BITS)
/* 64-bit keys in digits of 8 bits. */
#define PARSUM__SORT_MAX_DIGITS 8

/* Key kinds: the raw key's width and whether it is a float. */
enum {
    PARSUM__SK_U8,
    PARSUM__SK_U16,
    PARSUM__SK_U32,
    PARSUM__SK_U64,
    PARSUM__SK_F32,
    PARSUM__SK_F64,
    PARSUM__SK_COUNT
};

/* How a scatter moves values:
 *  NONE   keys only;
 *  V4, V8, V16  values of that many bytes;
 *  ANY    values of vs bytes (1 to 16, any);
 *  IDX64  no values in: element i (of the whole source) gets the uint64_t
 *         value base + i, the sorting permutation's first pass;
 *  IDX32  the same as uint32_t, for the passes before the last when the
 *         positions fit (half the bytes to move);
 *  WIDEN  uint32_t values in, uint64_t out (the last pass after IDX32). */
enum {
    PARSUM__SV_NONE,
    PARSUM__SV_4,
    PARSUM__SV_8,
    PARSUM__SV_16,
    PARSUM__SV_ANY,
    PARSUM__SV_IDX64,
    PARSUM__SV_IDX32,
    PARSUM__SV_WIDEN,
    PARSUM__SV_COUNT
};

/* Bytes a value takes in the output of a scatter of mode vm (vs: ANY). */
static inline size_t parsum__sort_vout(int vm, size_t vs)
{
    static const unsigned char b[PARSUM__SV_COUNT] = {0, 4, 8, 16, 0, 8, 4, 8};
    return vm == PARSUM__SV_ANY ? vs : b[vm];
}

/* Elements a write-combining group holds for key bytes kb and value mode
 * vm: a whole 64-byte line of the smaller of the two arrays (keys only, or
 * values of any size: of the keys). */
static inline size_t parsum__sort_group(size_t kb, int vm)
{
    size_t vb = vm == PARSUM__SV_ANY ? 0 : parsum__sort_vout(vm, 0);
    size_t m = vb != 0 && vb < kb ? vb : kb;
    return 64 / m;
}

/* Staging bytes a scatter needs for one digit value: the group's keys and
 * its values, each rounded to whole lines. */
static inline size_t parsum__sort_stage_bytes(size_t kb, int vm, size_t vs)
{
    size_t e = parsum__sort_group(kb, vm);
    size_t v = (e * parsum__sort_vout(vm, vs) + 63) / 64 * 64;
    return e * kb + v;
}

typedef struct parsum__sort_digits {
    unsigned count;
    unsigned shift[PARSUM__SORT_MAX_DIGITS];
    unsigned bits[PARSUM__SORT_MAX_DIGITS];
} parsum__sort_digits;

/* One thread's share of one pass: the elements [lo, hi) of the source go
 * to pos[digit]++ of the destination, in order (stable).
 *  dst_k NULL: the keys are not written (a last pass whose caller wants
 *  only values). src_v is not read in the IDX modes; value i there is
 *  idx_base + i.
 *  stage: parsum__sort_stage_bytes(...) x 2^bits bytes, 64-byte aligned;
 *  start: 2^bits words of scratch. Both only for the write-combining
 *  scatter. */
typedef struct parsum__sort_pass {
    const void *src_k;
    const void *src_v;
    void *dst_k;
    void *dst_v;
    size_t vs;
    size_t lo, hi;
    uint64_t idx_base;
    uint64_t flip;
    unsigned shift, bits;
    size_t *pos;
    size_t *start;
    unsigned char *stage;
} parsum__sort_pass;

/*  hist: h[j * PARSUM__SORT_RADIX_MAX + digit j of key i] += 1 for every
 *      key i < count and digit j < dg->count (h is not cleared first).
 *  scatter_wc: the pass through write-combining buffers: each digit's
 *      elements gather in a line-sized group in the cache, and a full
 *      group goes to memory with non-temporal stores (no read for
 *      ownership of lines that will be wholly overwritten, and one
 *      destination page touched per group instead of per element). For
 *      data that do not fit in the cache. Ends with a store fence.
 *  scatter: the same pass with plain stores, for data in the cache. */
typedef void (*parsum__sort_hist_fn)(const void *keys, size_t count,
                                     uint64_t flip,
                                     const parsum__sort_digits *dg,
                                     size_t *h);
typedef void (*parsum__sort_scatter_fn)(const parsum__sort_pass *p);

typedef struct parsum__cpu_sort_kernels {
    const char *isa;
    parsum__sort_hist_fn hist[PARSUM__SK_COUNT];
    parsum__sort_scatter_fn scatter_wc[PARSUM__SK_COUNT][PARSUM__SV_COUNT];
    parsum__sort_scatter_fn scatter[PARSUM__SK_COUNT][PARSUM__SV_COUNT];
} parsum__cpu_sort_kernels;

/* The sort kernels of the instruction set in use. */
const parsum__cpu_sort_kernels *parsum__cpu_sort_kernels_get(void);

struct parsum__sort_args;
parsum_status parsum__cpu_sort(parsum_context *ctx,
                               const struct parsum__sort_args *a);
parsum_status parsum__cpu_segmented_sort(parsum_context *ctx,
                                         const struct parsum__sort_args *a);

#ifdef __cplusplus
}
#endif

#endif
