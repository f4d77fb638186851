/*
 * parsum.h - the public interface of parsum, a library of data-parallel
 * primitives (scan, reduce, ...) for the CPU and, where present, NVIDIA GPUs.
 *
 * Conventions shared by every function below:
 *  - Every function that can fail returns a parsum_status. PARSUM_OK is 0.
 *    On failure, parsum_last_error(ctx) gives a sentence naming the bad
 *    argument (or the failed system call); the context stays usable.
 *  - Data are raw pointers in the context's memory space (host memory for
 *    a CPU context) plus an element count of type size_t: counts above 2^31
 *    are supported everywhere.
 *  - A context is not thread-safe: use one context per thread, or guard it.
 *  - Results are deterministic: the same input on the same backend gives
 *    the same bits, whatever the thread count (see parsum_scan).
 */
#ifndef PARSUM_H
#define PARSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(PARSUM_SHARED_BUILD)
#define PARSUM_API __declspec(dllexport)
#elif defined(__GNUC__)
#define PARSUM_API __attribute__((visibility("default")))
#else
#define PARSUM_API
#endif

#define PARSUM_VERSION_MAJOR 0
#define PARSUM_VERSION_MINOR 1
#define PARSUM_VERSION_PATCH 0

/* "0.1.0" for this header; compare with the library actually linked. */
PARSUM_API const char *parsum_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* One table generates the enum, parsum_status_name() and
 * parsum_status_string(), so codes, names and messages cannot drift apart.
 * Values are stable: new codes are only ever appended. */
#define PARSUM_STATUS_TABLE(X)                                                 \
    X(PARSUM_OK, 0, "success")                                                 \
    X(PARSUM_ERR_INVALID_ARGUMENT, 1, "invalid argument")                      \
    X(PARSUM_ERR_NULL_POINTER, 2, "NULL pointer where data are required")      \
    X(PARSUM_ERR_INVALID_DTYPE, 3, "unknown data type")                        \
    X(PARSUM_ERR_INVALID_OP, 4, "unknown operator")                            \
    X(PARSUM_ERR_DTYPE_OP_MISMATCH, 5,                                         \
      "operator not defined for this data type")                              \
    X(PARSUM_ERR_OVERFLOW, 6, "size computation overflows")                    \
    X(PARSUM_ERR_OUT_OF_MEMORY, 7, "out of memory")                            \
    X(PARSUM_ERR_UNSUPPORTED, 8, "not supported by this backend or build")     \
    X(PARSUM_ERR_NO_DEVICE, 9, "no usable CUDA device")                        \
    X(PARSUM_ERR_CUDA, 10, "CUDA runtime error")                               \
    X(PARSUM_ERR_COMPILE, 11,                                                  \
      "run-time compilation of CUDA source (operator, predicate, order) failed") \
    X(PARSUM_ERR_WRONG_MEMORY_SPACE, 12,                                       \
      "pointer is not in the context's memory space")                         \
    X(PARSUM_ERR_INTERNAL, 13, "internal error (please report)")              \
    X(PARSUM_ERR_IO, 14, "a file could not be opened, read or written")      \
    X(PARSUM_ERR_BAD_FILE, 15, "malformed, truncated or unsupported file")

typedef enum parsum_status {
#define PARSUM_X_ENUM(name, value, msg) name = value,
    PARSUM_STATUS_TABLE(PARSUM_X_ENUM)
#undef PARSUM_X_ENUM
} parsum_status;

/* "PARSUM_ERR_OVERFLOW" for PARSUM_ERR_OVERFLOW; "PARSUM_UNKNOWN_STATUS"
 * for a value outside the table. Never NULL. */
PARSUM_API const char *parsum_status_name(parsum_status status);
/* A short description of the status ("size computation overflows"). */
PARSUM_API const char *parsum_status_string(parsum_status status);

/* ------------------------------------------------------------------------ */
/* Data types and operators                                                  */
/* ------------------------------------------------------------------------ */

typedef enum parsum_dtype {
    PARSUM_I8 = 0,
    PARSUM_U8 = 1,
    PARSUM_I16 = 2,
    PARSUM_U16 = 3,
    PARSUM_I32 = 4,
    PARSUM_U32 = 5,
    PARSUM_I64 = 6,
    PARSUM_U64 = 7,
    PARSUM_F32 = 8,
    PARSUM_F64 = 9
} parsum_dtype;
#define PARSUM_DTYPE_COUNT 10

/* Built-in operators, each a monoid with an identity:
 *   SUM  a + b          identity 0 (+0.0 for floats)
 *   PROD a * b          identity 1
 *   MIN  smaller        identity: the type's maximum (+inf for floats)
 *   MAX  larger         identity: the type's minimum (-inf for floats)
 *   AND  a & b          identity all bits set   (integers only)
 *   OR   a | b          identity 0              (integers only)
 *   XOR  a ^ b          identity 0              (integers only)
 * Integer SUM and PROD wrap modulo 2^bits, signed types included (two's
 * complement; never undefined behaviour).
 * Float MIN/MAX ignore NaN (a NaN operand yields the other operand, as C's
 * fmin/fmax; the result is NaN only if all operands are NaN). Values that
 * compare equal (-0.0 and +0.0) may be returned as either; which NaN
 * payload survives is unspecified. Bitwise operators on F32/F64 are an
 * error (PARSUM_ERR_DTYPE_OP_MISMATCH). */
typedef enum parsum_op {
    PARSUM_SUM = 0,
    PARSUM_PROD = 1,
    PARSUM_MIN = 2,
    PARSUM_MAX = 3,
    PARSUM_AND = 4,
    PARSUM_OR = 5,
    PARSUM_XOR = 6
} parsum_op;
#define PARSUM_OP_COUNT 7

/* Size in bytes of one element of dtype; 0 for an unknown dtype. */
PARSUM_API size_t parsum_dtype_size(parsum_dtype dtype);
/* "i8", "u8", ..., "f64"; NULL for an unknown dtype. */
PARSUM_API const char *parsum_dtype_name(parsum_dtype dtype);
/* "sum", "prod", "min", "max", "and", "or", "xor"; NULL if unknown. */
PARSUM_API const char *parsum_op_name(parsum_op op);
/* Writes the identity of op on dtype (parsum_dtype_size(dtype) bytes) to
 * *identity. Errors: NULL pointer, unknown enum, bitwise op on a float. */
PARSUM_API parsum_status parsum_op_identity(parsum_dtype dtype, parsum_op op,
                                            void *identity);

/* Custom operators: a monoid over elements of any trivially copyable type.
 *
 * combine(a, b, out, user) must store a (+) b into *out, where a is the
 * operand that comes first in scan order. It must be associative; it need
 * not be commutative (parsum never swaps operands). out may alias a or b.
 * identity points to elem_size bytes with identity (+) x == x (+) identity
 * == x for every x. Elements are copied with memcpy, so any layout works;
 * parsum aligns its temporaries to 64 bytes. elem_size may be 1 to
 * PARSUM_CUSTOM_MAX_ELEM_SIZE bytes.
 *
 * On a CPU context the callback is called from several threads at once;
 * it must be safe for that (a pure function is). */
#define PARSUM_CUSTOM_MAX_ELEM_SIZE 1024
typedef void (*parsum_combine_fn)(const void *a, const void *b, void *out,
                                  void *user);

typedef struct parsum_custom_op {
    size_t elem_size;          /* bytes per element, 1..PARSUM_CUSTOM_MAX_ELEM_SIZE */
    const void *identity;      /* elem_size bytes of host memory */
    parsum_combine_fn combine; /* host callback, used by the CPU backend */
    void *user;                /* passed unchanged to combine */
    /* The same operator for the CUDA backend, as CUDA C source compiled at
     * run time (NVRTC) and cached in the context. NULL on CPU-only use.
     *   cuda_type:    definition of the element type, e.g.
     *                 "struct P { float x, y, z; };" (may be "" for a
     *                 built-in type such as double)
     *   cuda_type_name: its name, e.g. "P"
     *   cuda_combine: body of a device function
     *                 "T combine(const T &a, const T &b)", e.g.
     *                 "return mag(a) >= mag(b) ? a : b;" (helper functions
     *                 may be defined in cuda_type). */
    const char *cuda_type;
    const char *cuda_type_name;
    const char *cuda_combine;
} parsum_custom_op;

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum parsum_backend {
    PARSUM_BACKEND_AUTO = 0, /* CUDA when a device is present, else CPU */
    PARSUM_BACKEND_CPU = 1,
    PARSUM_BACKEND_CUDA = 2
} parsum_backend;

typedef struct parsum_context parsum_context;

/* Creates a context on the given backend and stores it in *ctx.
 * AUTO resolves to the best backend present (in this release: CUDA if the
 * library was built with CUDA and a device is visible, else CPU).
 * Errors: PARSUM_ERR_NULL_POINTER (ctx NULL), PARSUM_ERR_INVALID_ARGUMENT
 * (unknown backend), PARSUM_ERR_UNSUPPORTED (CUDA asked for but not built
 * in), PARSUM_ERR_NO_DEVICE, PARSUM_ERR_OUT_OF_MEMORY. On failure *ctx is
 * set to NULL; the reason is not recorded anywhere else, so check the
 * status. */
PARSUM_API parsum_status parsum_context_create(parsum_context **ctx,
                                               parsum_backend backend);
/* Frees the context and its scratch memory. NULL is a no-op. */
PARSUM_API void parsum_context_destroy(parsum_context *ctx);
/* The resolved backend (never AUTO). */
PARSUM_API parsum_backend parsum_context_backend(const parsum_context *ctx);
/* "cpu" or "cuda". */
PARSUM_API const char *parsum_backend_name(parsum_backend backend);

/* The detailed message of the last failed call on ctx ("parsum_scan: in is
 * NULL but n = 10"), or "" if none failed yet. The pointer is valid until
 * the next call on ctx. ctx NULL gives a fixed message. */
PARSUM_API const char *parsum_last_error(const parsum_context *ctx);

/* Number of CPU threads the context uses (CPU backend). 0 restores the
 * default: OMP_NUM_THREADS if set, else the number of online processors.
 * Results do not depend on it. Errors: negative count. */
PARSUM_API parsum_status parsum_context_set_threads(parsum_context *ctx,
                                                    int threads);
PARSUM_API int parsum_context_threads(const parsum_context *ctx);

/* Scratch memory. parsum grows the context's own arena as calls need it;
 * the user never sizes temporary storage. reserve() grows it ahead of
 * latency-critical calls (bytes in the context's memory space).
 * set_workspace() hands the context caller-owned memory (host memory for
 * CPU, device memory for CUDA) that calls use instead of allocating while
 * it is large enough; the caller keeps ownership and must keep it alive
 * until the context is destroyed or the workspace is replaced (NULL, 0
 * detaches it). scratch_size() reports the bytes currently held. On the
 * GPU the context also keeps, outside the arena and the workspace, the
 * look-back state of the plain scan and of the u8 summed-area table, which
 * calls tag with their number instead of zeroing it (a few bytes per tile:
 * 16 per 8192 4-byte elements of the largest scan so far); it grows on
 * the first call that needs more and is freed with the context. */
PARSUM_API parsum_status parsum_context_reserve(parsum_context *ctx,
                                                size_t bytes);
PARSUM_API parsum_status parsum_context_set_workspace(parsum_context *ctx,
                                                      void *workspace,
                                                      size_t bytes);
PARSUM_API size_t parsum_context_scratch_size(const parsum_context *ctx);

/* Memory in the context's space: host memory (64-byte aligned) for CPU,
 * device memory for CUDA. parsum_free(ctx, NULL) is a no-op.
 * parsum_copy copies bytes; kind says which side each pointer is on. */
typedef enum parsum_copy_kind {
    PARSUM_COPY_HOST_TO_CONTEXT = 0,
    PARSUM_COPY_CONTEXT_TO_HOST = 1,
    PARSUM_COPY_CONTEXT_TO_CONTEXT = 2,
    PARSUM_COPY_HOST_TO_HOST = 3
} parsum_copy_kind;
PARSUM_API parsum_status parsum_alloc(parsum_context *ctx, void **ptr,
                                      size_t bytes);
PARSUM_API void parsum_free(parsum_context *ctx, void *ptr);
PARSUM_API parsum_status parsum_copy(parsum_context *ctx, void *dst,
                                     const void *src, size_t bytes,
                                     parsum_copy_kind kind);
/* Waits until all work enqueued on ctx has finished (a no-op on the CPU,
 * whose calls return when done). */
PARSUM_API parsum_status parsum_synchronize(parsum_context *ctx);

/* ------------------------------------------------------------------------ */
/* Reduce and scan                                                           */
/* ------------------------------------------------------------------------ */

/* Flags for parsum_scan (bit set; unknown bits are an error). */
#define PARSUM_INCLUSIVE 0u
#define PARSUM_EXCLUSIVE 1u /* out[i] excludes in[i]; out[first] = identity */
#define PARSUM_REVERSE 2u   /* backward scan, from the last element */

/* parsum_reduce: *result = in[0] (+) in[1] (+) ... (+) in[n-1], or the
 * identity of op for n == 0. result points to one element of dtype (host
 * memory on a CPU context).
 * dtypes x ops: every dtype with SUM PROD MIN MAX; integer dtypes also
 * with AND OR XOR.
 * For n > 0 the identity is never mixed in (an all-NaN MIN is NaN, a sum
 * of -0.0 is -0.0).
 * Complexity: O(n) work, O(n / threads + chunks) time. Floats are combined
 * in a fixed order: on the CPU one that depends on n only (32 or more
 * independent lanes within fixed-size chunks, then chunks in order), so
 * the result is bit-identical for any thread count and CPU; on CUDA one
 * that depends on n and the device's multiprocessor count (bit-identical
 * run to run on one device). Either differs from a serial loop only by
 * rounding, within the usual bound n * eps * sum|x|. A device result
 * pointer on a CUDA context leaves the call asynchronous.
 * Errors: NULL ctx/result, in NULL with n > 0, unknown dtype/op, bitwise op
 * on a float, n * size overflowing. */
PARSUM_API parsum_status parsum_reduce(parsum_context *ctx, const void *in,
                                       size_t n, parsum_dtype dtype,
                                       parsum_op op, void *result);

/* parsum_scan: prefix "sums" of in under op, written to out.
 *   inclusive:          out[i] = in[0] (+) ... (+) in[i]
 *   exclusive:          out[0] = identity, out[i] = in[0] (+) ... (+) in[i-1]
 *   reverse inclusive:  out[i] = in[n-1] (+) in[n-2] (+) ... (+) in[i]
 *   reverse exclusive:  out[n-1] = identity, out[i] = in[n-1] (+) ... (+) in[i+1]
 * A reverse scan equals reversing in, scanning, and reversing the result;
 * the running value is always the left operand.
 * In place (out == in) is allowed; other overlaps of in and out are an
 * error (PARSUM_ERR_INVALID_ARGUMENT).
 * dtypes x ops as parsum_reduce. Complexity: O(n) work, one pass over
 * memory (each element read once and written once); the input is cut into
 * fixed-size chunks whose prefixes are chained in order, so results are
 * bit-identical for any thread count, floats included. Integer results
 * are exact (wrapping). Float results follow a fixed blocked order; on
 * the CPU the block is one vector register of the instruction set in use
 * (PARSUM_CPU_ISA), so two CPUs of different vector width may differ in
 * the last bits; each output is within (i + 1) * eps * sum|x| of the
 * exact prefix sum. The first element of an inclusive scan is in[first]
 * exactly (never combined with the identity). On the CPU an exclusive
 * scan is bit for bit the inclusive one shifted by one, identity first; on
 * CUDA that holds for integers and MIN/MAX, while float SUM/PROD agree
 * within the rounding bound (a tile's prefix is combined in another fixed
 * order than the previous tile's last output).
 * Errors: as parsum_reduce, plus out NULL with n > 0, unknown flag bits,
 * partially overlapping buffers. */
PARSUM_API parsum_status parsum_scan(parsum_context *ctx, const void *in,
                                     void *out, size_t n, parsum_dtype dtype,
                                     parsum_op op, unsigned flags);

/* The same with a custom operator (see parsum_custom_op): in and out hold
 * n elements of op->elem_size bytes; result one element. The operator is
 * applied in sequence order within fixed-size chunks and chunk results in
 * chunk order, so any associative combine gives the serial loop's result
 * exactly (up to its own rounding) for any thread count. On a CUDA
 * context the operator's CUDA source fields are compiled at the first use
 * and cached (see parsum_custom_op and PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE).
 * Errors: as above, plus op NULL, op->combine or op->identity NULL,
 * elem_size 0 or above PARSUM_CUSTOM_MAX_ELEM_SIZE, n * elem_size
 * overflowing. */
PARSUM_API parsum_status parsum_reduce_custom(parsum_context *ctx,
                                              const void *in, size_t n,
                                              const parsum_custom_op *op,
                                              void *result);
PARSUM_API parsum_status parsum_scan_custom(parsum_context *ctx,
                                            const void *in, void *out,
                                            size_t n,
                                            const parsum_custom_op *op,
                                            unsigned flags);

/* ------------------------------------------------------------------------ */
/* Segmented and keyed operations                                            */
/* ------------------------------------------------------------------------ */

/* Segments cut the n elements of a scan into consecutive runs; every
 * segment is scanned on its own, as if it were a separate array.
 *
 * Packed head flags (PARSUM_SEG_FLAGS): one bit per element, 32 per
 * uint32_t word, least significant bit first: the flag of element i is bit
 * (b % 32) of word flags[b / 32] with b = flags_bit_offset + i. A set bit
 * marks the first element of a segment (a "head"); element 0 always starts
 * one, whatever its bit. On a little-endian machine this is the same
 * memory as LSB-first bytes or 64-bit words, so flags made 8 or 64 bits
 * at a time can be passed as they are. The words read are
 * flags[0 .. (flags_bit_offset + n - 1) / 32]; bits outside the n flags
 * are ignored. flags_bit_offset may be any value (a flag array of a
 * longer sequence can be passed with the offset of the part to scan).
 *
 * Segment offsets (PARSUM_SEG_OFFSETS, CSR style): num_segments + 1
 * non-decreasing uint64_t values with offsets[0] == 0 and
 * offsets[num_segments] == n; segment s is [offsets[s], offsets[s + 1]).
 * Empty segments are allowed and produce no output.
 *
 * flags and offsets live in the context's memory space, like the data. */
typedef enum parsum_seg_kind {
    PARSUM_SEG_FLAGS = 0,
    PARSUM_SEG_OFFSETS = 1
} parsum_seg_kind;

typedef struct parsum_segments {
    parsum_seg_kind kind;
    const uint32_t *flags;   /* PARSUM_SEG_FLAGS: packed head flags */
    size_t flags_bit_offset; /* PARSUM_SEG_FLAGS: bit of element 0 */
    const uint64_t *offsets; /* PARSUM_SEG_OFFSETS: num_segments + 1 values */
    size_t num_segments;     /* PARSUM_SEG_OFFSETS */
} parsum_segments;

/* parsum_segmented_scan: parsum_scan applied to every segment separately.
 * With flags as for parsum_scan:
 *   inclusive:  out[i] = in[h] (+) ... (+) in[i], h the head of i's segment
 *   exclusive:  out[h] = identity, out[i] = in[h] (+) ... (+) in[i-1]
 *   REVERSE:    each segment is scanned from its last element back to its
 *               head (the segment boundaries are the same).
 * Example (the notes' flag array, SUM, inclusive):
 *   in    3 1 4 1 5 2 1 3 4 0 2 6 1 0 3 4
 *   heads 1 0 0 1 0 0 0 0 0 1 0 1 1 0 0 0
 *   out   3 4 8 1 6 8 9 12 16 0 2 6 1 1 4 8
 * dtypes x ops, in-place rule and overlap errors as parsum_scan. Results are
 * deterministic and integer results exact; a float result within a
 * segment is within the bound parsum_scan states for a scan of that
 * segment's length. Complexity: O(n) work, one pass over in and out plus
 * n / 8 bytes of flags (or the offsets), whatever the segment lengths.
 * Offsets that are not as described above give PARSUM_ERR_INVALID_ARGUMENT
 * on the CPU; a CUDA context does not read device memory to check them
 * and its result is then unspecified (but memory safe within in/out).
 * Errors: as parsum_scan, plus seg NULL, unknown seg->kind, flags or
 * offsets NULL with n > 0 (offsets is always read: it may not be NULL),
 * out overlapping the flag words read or the offsets. */
PARSUM_API parsum_status parsum_segmented_scan(parsum_context *ctx,
                                               const void *in, void *out,
                                               size_t n, parsum_dtype dtype,
                                               parsum_op op,
                                               const parsum_segments *seg,
                                               unsigned flags);
/* The same with a custom operator (see parsum_scan_custom). */
PARSUM_API parsum_status parsum_segmented_scan_custom(
    parsum_context *ctx, const void *in, void *out, size_t n,
    const parsum_custom_op *op, const parsum_segments *seg, unsigned flags);

/* parsum_segmented_reduce: out[s] = fold of in[offsets[s] .. offsets[s+1])
 * under op for s = 0 .. num_segments - 1, the identity for an empty
 * segment. offsets as PARSUM_SEG_OFFSETS above (num_segments + 1 values,
 * non-decreasing, offsets[0] == 0); n = offsets[num_segments] elements of
 * in are read. out holds num_segments elements and may not overlap in.
 * Float results follow a fixed order per segment (deterministic, within
 * the bound of parsum_reduce for the segment's length). Complexity: O(n +
 * num_segments) work, balanced over threads / blocks by elements, not by
 * segments, so one huge segment and millions of tiny ones are both fast.
 * On a CUDA context the call handles at most 2^32 - 1 segments
 * (PARSUM_ERR_UNSUPPORTED beyond); with a built-in operator it does not
 * wait for the device (the kernel reads n = offsets[num_segments]
 * itself), while parsum_segmented_reduce_custom reads offsets[num_segments]
 * back to the host to size its grid (it synchronizes the context's
 * stream).
 * Errors: as parsum_reduce, plus offsets NULL, out NULL with num_segments
 * > 0, out overlapping in or offsets, offsets decreasing or not starting
 * at 0 (CPU; see above for CUDA); on a CUDA context, in NULL with
 * num_segments > 0, even if all segments are empty. */
PARSUM_API parsum_status parsum_segmented_reduce(parsum_context *ctx,
                                                 const void *in, void *out,
                                                 const uint64_t *offsets,
                                                 size_t num_segments,
                                                 parsum_dtype dtype,
                                                 parsum_op op);
PARSUM_API parsum_status parsum_segmented_reduce_custom(
    parsum_context *ctx, const void *in, void *out, const uint64_t *offsets,
    size_t num_segments, const parsum_custom_op *op);

/* parsum_scan_by_key: a segmented scan whose segments are the runs of
 * equal consecutive keys: element i starts a segment when i == 0 or
 * keys[i] != keys[i-1]. keys: n elements of key_dtype, an integer dtype
 * (I8 .. U64; PARSUM_ERR_INVALID_DTYPE otherwise), compared bit for bit.
 * Values, flags, in-place rule and guarantees as parsum_segmented_scan;
 * keys may not overlap out. */
PARSUM_API parsum_status parsum_scan_by_key(parsum_context *ctx,
                                            const void *keys,
                                            parsum_dtype key_dtype,
                                            const void *in, void *out,
                                            size_t n, parsum_dtype dtype,
                                            parsum_op op, unsigned flags);

/* parsum_reduce_by_key: for each run of equal consecutive keys (as in
 * parsum_scan_by_key), writes the run's key to keys_out[r] and the fold of
 * its values to values_out[r], r = 0 .. runs - 1 in input order, and the
 * number of runs to *num_runs (host memory, or device memory on a CUDA
 * context: then the call does not wait). keys_out and values_out must
 * have room for n elements (the worst case) and may not overlap the
 * inputs or each other. For n == 0, *num_runs = 0. Float folds are
 * deterministic. Complexity: O(n) work; on a CUDA context one pass over
 * keys and values for 4- and 8-byte values with 4- and 8-byte keys
 * (other sizes: a pass over the keys to head flags first).
 * On a CUDA context n must be below 2^32 (PARSUM_ERR_UNSUPPORTED beyond),
 * and keys_in and keys_out must be aligned to the key type
 * (PARSUM_ERR_INVALID_ARGUMENT otherwise).
 * Errors: as parsum_scan_by_key, plus num_runs NULL. */
PARSUM_API parsum_status parsum_reduce_by_key(
    parsum_context *ctx, const void *keys_in, parsum_dtype key_dtype,
    const void *values_in, size_t n, parsum_dtype dtype, parsum_op op,
    void *keys_out, void *values_out, size_t *num_runs);

/* Conversions between the two segment descriptions.
 * parsum_offsets_to_flags: writes the packed head flags of the segments
 * given by offsets (as above, offsets[num_segments] == n) into flags,
 * ceil(n / 32) words with bit 0 of word 0 for element 0 (bits past n are
 * cleared). Bit 0 is set even if the first segments are empty (element 0
 * always starts a segment); an element where several segments start (empty
 * ones before it) has one set bit.
 * parsum_flags_to_offsets: the converse for packed flags (seg as above,
 * kind PARSUM_SEG_FLAGS): writes offsets[0 .. k] where k is the number of
 * segments (1 + the set bits of elements 1 .. n-1; 0 for n == 0),
 * offsets[0] = 0 and offsets[k] = n; offsets must have room for n + 1
 * values; *num_segments = k (host or, on a CUDA context, device memory).
 * Errors: NULL pointers, offsets as above (CPU), n * sizes overflowing,
 * the output overlapping the input. */
PARSUM_API parsum_status parsum_offsets_to_flags(parsum_context *ctx,
                                                 const uint64_t *offsets,
                                                 size_t num_segments,
                                                 size_t n, uint32_t *flags);
PARSUM_API parsum_status parsum_flags_to_offsets(parsum_context *ctx,
                                                 const parsum_segments *seg,
                                                 size_t n, uint64_t *offsets,
                                                 size_t *num_segments);

/* ------------------------------------------------------------------------ */
/* Selection, partition, unique and run-length encoding                      */
/* ------------------------------------------------------------------------ */

/* These functions move elements; they never combine them. An element is
 * elem_size opaque bytes (1 .. PARSUM_CUSTOM_MAX_ELEM_SIZE on either
 * backend), copied as they are, so any trivially copyable type works;
 * only a built-in predicate reads an element as a dtype. Optional values travel with their keys
 * (the *_by_key forms): value_size bytes each, same limits.
 *
 * Counts (num_selected, num_unique, num_runs ...) are written to host
 * memory or, on a CUDA context, to device/managed memory: then the call
 * returns without waiting, like a kernel launch. Outputs may not overlap
 * any input or each other, the counts included (no in-place operation);
 * output arrays must have room for the worst case (n elements). Results
 * are deterministic; every function is stable (the elements kept appear
 * in input order) except parsum_partition_unstable, whose rejected
 * elements come in reverse order.
 *
 * Errors (every function, besides those it lists): PARSUM_ERR_NULL_POINTER
 * for a NULL ctx, selector, count or required array (arrays may be NULL
 * when n == 0); PARSUM_ERR_INVALID_ARGUMENT for an element size of 0 or
 * above PARSUM_CUSTOM_MAX_ELEM_SIZE, an unknown selector kind or
 * predicate, overlapping buffers; PARSUM_ERR_INVALID_DTYPE for an unknown
 * dtype; PARSUM_ERR_OVERFLOW when n times an element size, or a
 * bit_offset, passes the end of size_t or of the address space; for a
 * custom predicate on a CUDA context, see parsum_custom_pred.
 *
 * Complexity: O(n) work. Select, select_indices, unique and the run-length
 * encodings read their input once; a partition reads the selector's input
 * (flags, or the keys for a predicate) twice: once to count the selected
 * elements (the rejected ones are written after all selected ones, in
 * input order, so their place depends on the total) and once to move them;
 * parsum_partition_unstable reads it once.
 * A custom predicate on a CUDA context adds one pass that reads the keys
 * and writes n / 8 bytes of selection bits, which then serve as a
 * PARSUM_SELECT_BITS selector (see parsum_custom_pred). */

/* What selects an element (parsum_selector.kind). */
typedef enum parsum_select_kind {
    PARSUM_SELECT_BYTES = 0,     /* bytes[i] != 0 selects element i */
    PARSUM_SELECT_BITS = 1,      /* packed bits, as PARSUM_SEG_FLAGS: bit
                                    (bit_offset + i) selects element i */
    PARSUM_SELECT_PREDICATE = 2, /* a built-in predicate on the key */
    PARSUM_SELECT_CUSTOM = 3     /* a custom predicate on the key */
} parsum_select_kind;

/* Built-in predicates on a key x of dtype parsum_selector.dtype, with the
 * constants a and b (parsum_selector.a/.b, read as that dtype):
 *   LT x < a   LE x <= a   GT x > a   GE x >= a   EQ x == a   NE x != a
 *   NONZERO   x != 0
 *   IN_RANGE  a <= x && x < b
 *   BIT_SET / BIT_CLEAR  bit a.u32 (0 = least significant) of x's
 *             representation is 1 / 0; a.u32 below the dtype's bit count.
 * Floats compare as C does: every comparison with a NaN is false except
 * NE (true), so NaN is NONZERO and never IN_RANGE; -0.0 == +0.0. BIT_SET
 * and BIT_CLEAR look at the raw bits (the sign is bit 31 of an F32). */
typedef enum parsum_pred {
    PARSUM_PRED_LT = 0,
    PARSUM_PRED_LE = 1,
    PARSUM_PRED_GT = 2,
    PARSUM_PRED_GE = 3,
    PARSUM_PRED_EQ = 4,
    PARSUM_PRED_NE = 5,
    PARSUM_PRED_NONZERO = 6,
    PARSUM_PRED_IN_RANGE = 7,
    PARSUM_PRED_BIT_SET = 8,
    PARSUM_PRED_BIT_CLEAR = 9
} parsum_pred;

/* One value of any dtype; set the member of the selector's dtype. */
typedef union parsum_scalar {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} parsum_scalar;

/* A custom predicate: pred(x, user) returns nonzero to select the key x
 * (elem_size bytes, the size the call gives for keys). On a CPU context it
 * is called from several threads at once. x points to the key in the
 * input array (aligned as the array is); pred must give the same answer
 * for the same key every time (a partition asks twice).
 * A CUDA context uses the predicate's CUDA source instead, in the form
 * custom operators use (parsum_custom_op); pred and user are then not
 * needed:
 *   cuda_type       definition of the key type ("" or NULL for a built-in
 *                   type); functions defined here need no __device__
 *   cuda_type_name  its name T (sizeof(T) must equal the key size)
 *   cuda_pred       body of "bool pred(const T &x)", e.g.
 *                   "return x.z > 0.0f;"
 * It is compiled by NVRTC for the device at its first use in the context
 * (with n == 0 too) and kept there, the 32 most recently used predicates
 * (per source text and key size); later calls do not compile. The compiled
 * kernel evaluates the predicate once per key into packed selection bits
 * in scratch memory, and the call then proceeds as with PARSUM_SELECT_BITS:
 * one extra read of the keys and n / 8 bytes written (and read back by the
 * selection, twice by a partition; two arrays for a partition3 with two
 * custom selectors). Keys may have any size the call allows.
 * Errors on a CUDA context: cuda_pred or cuda_type_name NULL, sizeof(T)
 * other than the key size (the message names cuda_type_name), keys not
 * aligned to alignof(T) (PARSUM_ERR_INVALID_ARGUMENT); source that does
 * not compile (PARSUM_ERR_COMPILE; parsum_last_error holds NVRTC's log,
 * which names "cuda_type" or "cuda_pred" and the line in that text). */
typedef int (*parsum_pred_fn)(const void *x, void *user);

typedef struct parsum_custom_pred {
    parsum_pred_fn pred;
    void *user;
    const char *cuda_type;
    const char *cuda_type_name;
    const char *cuda_pred;
} parsum_custom_pred;

/* The selection rule. Set kind and the fields it names; the others are
 * ignored. Flag arrays (bytes, bits) hold n entries and live in the
 * context's memory space, like the data; the constants and the custom
 * predicate are host values. */
typedef struct parsum_selector {
    parsum_select_kind kind;
    const uint8_t *bytes;   /* SELECT_BYTES: n bytes */
    const uint32_t *bits;   /* SELECT_BITS: packed, LSB first */
    size_t bit_offset;      /* SELECT_BITS: bit of element 0 */
    parsum_dtype dtype;     /* SELECT_PREDICATE: the key's dtype; its size
                               must equal the key size of the call */
    parsum_pred pred;       /* SELECT_PREDICATE */
    parsum_scalar a, b;     /* SELECT_PREDICATE: the constants */
    const parsum_custom_pred *custom; /* SELECT_CUSTOM */
} parsum_selector;

/* parsum_select (stream compaction, copy_if): copies the selected elements
 * of in, in order, to out[0 .. k) and writes k to *num_selected.
 * Errors: NULL ctx/sel/num_selected, in or out NULL with n > 0, elem_size
 * 0 or too large, n * elem_size overflowing, unknown kind/pred/dtype, a
 * predicate dtype whose size is not elem_size, BIT_SET/CLEAR bit out of
 * range (PARSUM_ERR_INVALID_ARGUMENT), a flag array NULL with n > 0,
 * sel->custom NULL, custom->pred NULL (CPU) or its cuda_pred or
 * cuda_type_name NULL (CUDA: PARSUM_ERR_INVALID_ARGUMENT; the other CUDA
 * errors of a custom predicate are listed at parsum_custom_pred),
 * overlapping buffers. */
PARSUM_API parsum_status parsum_select(parsum_context *ctx, const void *in,
                                       void *out, size_t n, size_t elem_size,
                                       const parsum_selector *sel,
                                       size_t *num_selected);

/* parsum_select_by_key: the selector looks at keys_in (key_size bytes per
 * element); the selected keys go to keys_out (may be NULL when only the
 * values are wanted) and their values (value_size bytes each) to
 * values_out, both in order. Errors: as parsum_select, for both arrays. */
PARSUM_API parsum_status parsum_select_by_key(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, size_t key_size,
    size_t value_size, const parsum_selector *sel, size_t *num_selected);

/* parsum_select_indices: writes the positions i of the selected elements,
 * ascending, to indices[0 .. k) (uint64_t, room for n) and k to
 * *num_selected. in (elem_size bytes per element) is read only by a
 * predicate or custom selector: with BYTES or BITS it may be NULL and
 * elem_size is ignored. */
PARSUM_API parsum_status parsum_select_indices(parsum_context *ctx,
                                               const void *in, size_t n,
                                               size_t elem_size,
                                               const parsum_selector *sel,
                                               uint64_t *indices,
                                               size_t *num_selected);

/* parsum_partition: stable partition. out[0 .. k) receives the selected
 * elements and out[k .. n) the rejected ones, both in input order;
 * *num_selected = k. (CUB's DevicePartition writes the rejected ones in
 * reverse order; parsum keeps them in order.) Errors: as parsum_select. */
PARSUM_API parsum_status parsum_partition(parsum_context *ctx,
                                          const void *in, void *out, size_t n,
                                          size_t elem_size,
                                          const parsum_selector *sel,
                                          size_t *num_selected);
/* The same for keys with values: keys_out and values_out are both
 * partitioned (keys_out may be NULL). */
PARSUM_API parsum_status parsum_partition_by_key(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, size_t key_size,
    size_t value_size, const parsum_selector *sel, size_t *num_selected);

/* parsum_partition_unstable: partition in one pass, CUB's
 * DevicePartition::If order. out[0 .. k) receives the selected elements
 * in input order, out[k .. n) the rejected ones in REVERSE input order
 * (the first rejected element at out[n - 1]); *num_selected = k. The
 * result is deterministic; only the rejected part's order differs from
 * parsum_partition. Each rejected element's place depends only on the
 * rejected elements before it, not on k, so the input is read once: about
 * 2n elements move against parsum_partition's 3n (the cheaper choice when
 * the order of the rejected part does not matter, e.g. a quicksort step).
 * Errors: as parsum_select. */
PARSUM_API parsum_status parsum_partition_unstable(
    parsum_context *ctx, const void *in, void *out, size_t n,
    size_t elem_size, const parsum_selector *sel, size_t *num_selected);
/* The same for keys with values (keys_out may be NULL), in the order of
 * parsum_partition_unstable. */
PARSUM_API parsum_status parsum_partition_unstable_by_key(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, size_t key_size,
    size_t value_size, const parsum_selector *sel, size_t *num_selected);

/* parsum_partition3: three-way stable partition. out receives first the
 * elements that `first` selects, then those that `second` selects among
 * the rest, then the remaining ones, each group in input order;
 * counts[0] and counts[1] (two size_t, host or device memory) receive the
 * sizes of the first two groups. Errors: as parsum_partition, for both
 * selectors. */
PARSUM_API parsum_status parsum_partition3(parsum_context *ctx,
                                           const void *in, void *out,
                                           size_t n, size_t elem_size,
                                           const parsum_selector *first,
                                           const parsum_selector *second,
                                           size_t *counts);

/* parsum_split_by_bit: the stable 0/1 split of radix sort. Keys whose bit
 * `bit` (0 = least significant, of the raw representation) is 0 come
 * first, then those where it is 1, each in input order; *num_zeros gets
 * the count of the first group. key_dtype: any dtype (floats by their raw
 * bits). values_in/values_out may be NULL with value_size 0 (keys only;
 * they are then ignored); with values, keys_out may be NULL (values only),
 * as in parsum_partition_by_key.
 * Errors: as parsum_partition_by_key, plus bit >= the dtype's bit count
 * (PARSUM_ERR_INVALID_ARGUMENT), key_dtype unknown. */
PARSUM_API parsum_status parsum_split_by_bit(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, parsum_dtype key_dtype,
    size_t value_size, unsigned bit, size_t *num_zeros);

/* parsum_unique: copies the first element of every run of equal
 * consecutive elements to out, in order, and the number of runs to
 * *num_unique (0 for n == 0). Elements are compared bit for bit (memcmp of
 * elem_size bytes): for floats -0.0 and +0.0 differ and NaNs with the same
 * bits are equal; padding bytes of a struct count. */
PARSUM_API parsum_status parsum_unique(parsum_context *ctx, const void *in,
                                       void *out, size_t n, size_t elem_size,
                                       size_t *num_unique);
/* parsum_unique_by_key: runs of equal consecutive keys; the first key of
 * each run and its value are kept (keys_out may be NULL). */
PARSUM_API parsum_status parsum_unique_by_key(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, size_t key_size,
    size_t value_size, size_t *num_unique);

/* parsum_run_length_encode: for every run r of equal consecutive elements
 * (compared as in parsum_unique): unique_out[r] = its element, lengths[r]
 * = its length (uint64_t); *num_runs = the number of runs. unique_out may
 * be NULL (lengths only). */
PARSUM_API parsum_status parsum_run_length_encode(parsum_context *ctx,
                                                  const void *in, size_t n,
                                                  size_t elem_size,
                                                  void *unique_out,
                                                  uint64_t *lengths,
                                                  size_t *num_runs);
/* parsum_run_length_nontrivial: the runs of length 2 or more only (CUB's
 * NonTrivialRuns): offsets[r] = the position of its first element,
 * lengths[r] = its length, in order; *num_runs = their number. offsets
 * and lengths have room for n / 2 values. */
PARSUM_API parsum_status parsum_run_length_nontrivial(parsum_context *ctx,
                                                      const void *in, size_t n,
                                                      size_t elem_size,
                                                      uint64_t *offsets,
                                                      uint64_t *lengths,
                                                      size_t *num_runs);

/* ------------------------------------------------------------------------ */
/* Images: descriptor, summed-area tables, box filter, file I/O             */
/* ------------------------------------------------------------------------ */

/* Where an image's pixels live. HOST images go with CPU contexts (and are
 * what parsum_image_read returns); DEVICE images (device, managed or
 * mapped pinned memory of the context's device) with CUDA contexts.
 * parsum_image_copy moves pixels between the two. */
typedef enum parsum_memspace {
    PARSUM_MEM_HOST = 0,
    PARSUM_MEM_DEVICE = 1
} parsum_memspace;

/* An image: height rows of width pixels, each pixel `channels` interleaved
 * samples of type dtype (RGBA = 4 channels). Row y starts at
 * (char *)data + y * pitch; pitch >= width * channels * dtype size, and a
 * multiple of the sample size (pitched memory from cudaMallocPitch or with
 * padding bytes works; the padding is never read or written). pitch 0 means
 * "packed" (width * channels * dtype size). Every call checks every field:
 * width, height >= 1, channels 1..4, dtype known, data not NULL and
 * aligned to the sample size, where matching the context
 * (PARSUM_ERR_WRONG_MEMORY_SPACE), pitch * height without overflow. */
typedef struct parsum_image {
    void *data;
    size_t width;
    size_t height;
    size_t pitch;          /* bytes between rows; 0 = packed */
    int channels;          /* 1 to 4 */
    parsum_dtype dtype;    /* sample type */
    parsum_memspace where; /* where data points */
} parsum_image;

/* Fills *img with a packed image of the context's space (HOST on a CPU
 * context, DEVICE on a CUDA one), rows padded to a multiple of 256 bytes on
 * a CUDA context, and allocates its pixels (contents undefined). Free with
 * parsum_image_free. Errors: as parsum_alloc, bad sizes, channels, dtype. */
PARSUM_API parsum_status parsum_image_alloc(parsum_context *ctx,
                                            parsum_image *img, size_t width,
                                            size_t height, int channels,
                                            parsum_dtype dtype);
/* Frees pixels from parsum_image_alloc (ctx's space) or parsum_image_read
 * (host; any context) and zeroes *img. NULL img or data: nothing. */
PARSUM_API void parsum_image_free(parsum_context *ctx, parsum_image *img);
/* Copies the pixels of src into dst: same width, height, channels and
 * dtype; any pitches; each side HOST or the context's DEVICE space. The
 * call returns when the copy is done. Errors: mismatched descriptors. */
PARSUM_API parsum_status parsum_image_copy(parsum_context *ctx,
                                           const parsum_image *dst,
                                           const parsum_image *src);

/* Summed-area table (integral image) flags. Default layout: the table is
 * (width + 1) x (height + 1) with a zero first row and column, T[y][x] =
 * the sum of src over rows < y and columns < x (NPP, OpenCV). INCLUSIVE:
 * width x height, T[y][x] = the sum over rows <= y and columns <= x.
 * SQUARED: sums of squared samples (for variances). */
#define PARSUM_INTEGRAL_INCLUSIVE 1u
#define PARSUM_INTEGRAL_SQUARED 2u

/* parsum_integral: the summed-area table of src into table, per channel
 * (table->channels == src->channels).
 *
 * dtypes: src U8, U16, I32, F32 or F64; table U32, U64, I64, F32 or F64.
 * Integer src with an integer table: sums modulo 2^bits of the table (two's
 * complement for I64), so a U32 table still gives exact box sums whenever
 * the box's true sum is below 2^32 (the wrap-around cancels in the
 * differences). Integer src with a float table: each entry is the exact sum
 * converted once (F32 entries exact up to 2^24, then rounded to nearest).
 * Float tables: samples are converted to float64 (squares too) and summed
 * in float64, and each entry is rounded once to the table's type; so for
 * integer samples the entries are exact while the sums stay below 2^53
 * (F32 entries: exact to 2^24, then correctly rounded). Float src needs a
 * float table. The float64 grouping depends on the image size only (not on
 * the thread count), so results are deterministic on a backend; CPU and
 * CUDA agree exactly for integer samples and within rounding for floats.
 * offset is host memory.
 *
 * offset: NULL, or `channels` doubles (float tables only, else
 * PARSUM_ERR_INVALID_ARGUMENT): the table then sums (sample - offset[c])
 * (squared: (sample - offset[c])^2), the signed-offset representation of
 * the notes, which keeps float entries small and their rounding error low.
 * With PARSUM_INTEGRAL_OFFSET_MEAN in flags, parsum first computes each
 * channel's mean (float64) and stores it in offset[c]; without it the
 * given values are used. parsum_integral_box_sums adds offset * area back.
 *
 * table: width and height as the layout says; host or device as src; must
 * not overlap src. Complexity O(width * height): table written once, src
 * read from memory once (CUDA: integer tables in one pass that keeps each
 * tile's pixels on chip where they fit, e.g. one-channel U8; other
 * images read a tile a second time, mostly from the L2 cache; float
 * tables take three steps that read src twice; one-channel U8 into U32
 * keeps its look-back words, about 0.08 bytes per pixel, in the context
 * between calls, so that no call has to clear them). Errors: descriptors (see
 * parsum_image), dtype pairs not listed, unknown flags, table size
 * mismatch, overlap. */
#define PARSUM_INTEGRAL_OFFSET_MEAN 4u
PARSUM_API parsum_status parsum_integral(parsum_context *ctx,
                                         const parsum_image *src,
                                         const parsum_image *table,
                                         unsigned flags, double *offset);

/* A rectangle of pixels: columns x .. x + width - 1, rows y .. y + height
 * - 1. Parts outside the image are clipped away. */
typedef struct parsum_rect {
    uint64_t x, y, width, height;
} parsum_rect;

/* parsum_integral_box_sums: O(1) box sums from a table made by
 * parsum_integral with the same flags and offset (offset NULL when the
 * table has none). For each of the nrect rectangles (context's space) and
 * each channel c, out[r * channels + c] = the sum of the source samples
 * over the rectangle clipped to the image (0 for an empty one), from four
 * table entries (two for a rectangle on the table's first row or column in
 * the INCLUSIVE layout). out is in the table's dtype for integer tables
 * (modulo 2^bits as the table) and float64 for float tables.
 * parsum_integral_box_means: out (float64) = that sum divided by the
 * clipped area (NaN for an empty rectangle). With an offset, plain tables
 * get offset * area added back; SQUARED tables give the centred sums of
 * (sample - offset)^2 as stored. Errors: descriptors, unknown flags, NULL
 * rects or out with nrect > 0. */
PARSUM_API parsum_status parsum_integral_box_sums(
    parsum_context *ctx, const parsum_image *table, unsigned flags,
    const double *offset, const parsum_rect *rects, size_t nrect, void *out);
PARSUM_API parsum_status parsum_integral_box_means(
    parsum_context *ctx, const parsum_image *table, unsigned flags,
    const double *offset, const parsum_rect *rects, size_t nrect,
    double *out);

/* How pixels beyond the image edge are made up (image "abcdef", width 6):
 *   ZERO         000000|abcdef|000000  (zeros; the mean still divides by
 *                                       the full window area, as OpenCV)
 *   CLAMP        aaaaaa|abcdef|ffffff  (replicate the edge pixel)
 *   REFLECT      fedcba|abcdef|fedcba  (mirror, edge pixel repeated)
 *   REFLECT_101  fedcb|abcdef|edcba    (mirror about the edge pixel)
 *   WRAP         abcdef|abcdef|abcdef  (periodic)
 * Windows wider than the image keep applying the rule (REFLECT_101 of a
 * one-pixel row repeats that pixel). */
typedef enum parsum_border {
    PARSUM_BORDER_ZERO = 0,
    PARSUM_BORDER_CLAMP = 1,
    PARSUM_BORDER_REFLECT = 2,
    PARSUM_BORDER_REFLECT_101 = 3,
    PARSUM_BORDER_WRAP = 4
} parsum_border;

/* parsum_box_filter: mean blur. dst(x, y, c) = the mean of src over the
 * (2 rx + 1) x (2 ry + 1) window centred on (x, y), pixels outside the
 * image made up by `border`. Built on summed-area differences: running
 * column sums and row prefix sums, so the cost per pixel does not depend on
 * the radius and the full table is never stored (on a CUDA context,
 * horizontal radii above 127 evaluate a table held in scratch memory). dst: same width, height,
 * channels and dtype as src, and must not overlap it.
 * dtypes: U8, U16, I32, F32, F64. Integer means are rounded half up
 * (floor((sum + area / 2) / area), sums exact in 64 bits); float sums run
 * in float64 and the mean is rounded once. Radii up to 16384 (so that
 * every window sum fits in 64 bits).
 * Errors: descriptors, dtype, unknown border, radius too large, overlap. */
PARSUM_API parsum_status parsum_box_filter(parsum_context *ctx,
                                           const parsum_image *src,
                                           const parsum_image *dst,
                                           size_t rx, size_t ry,
                                           parsum_border border);

/* parsum_image_read: decodes an image file into host memory (free with
 * parsum_image_free). The format is recognised by its content: PNG (8 and
 * 16 bit -> U8 / U16; a tRNS chunk adds an alpha channel), JPEG (U8),
 * PGM/PPM binary P5/P6 (U8, U16 for maxval > 255; samples as stored, not
 * rescaled; a sample above maxval is an error), PFM (F32, rows stored
 * bottom-up are returned top-down), Radiance HDR (F32, 3 channels). PNG,
 * JPEG and HDR files must be complete up to their end marker. Errors:
 * PARSUM_ERR_IO (cannot open or read), PARSUM_ERR_BAD_FILE (unknown format,
 * corrupt or truncated data, image larger than 2^28 pixels),
 * PARSUM_ERR_UNSUPPORTED (PNG, JPEG or HDR in a build without stb), with
 * the reason in parsum_last_error; *img is zeroed on failure. Any context
 * works; only its error message is used. */
PARSUM_API parsum_status parsum_image_read(parsum_context *ctx,
                                           const char *path,
                                           parsum_image *img);
/* parsum_image_write: encodes a host image by the file name's extension:
 * .png (U8 or U16, 1-4 channels), .jpg/.jpeg (U8, 1-4 channels, quality
 * 95; always stored as colour: grey reads back as 3 equal channels, alpha
 * is dropped), .pgm (U8/U16, 1 channel), .ppm (U8/U16, 3 channels), .pfm
 * (F32, 1 or 3 channels), .hdr (F32, 3 channels; negative and NaN samples
 * are stored as 0, infinity as 1.7e38, the largest RGBE value). Errors:
 * PARSUM_ERR_INVALID_ARGUMENT for an unknown extension or a dtype/channel
 * count the format cannot hold, PARSUM_ERR_IO when writing fails, and the
 * descriptor errors of parsum_image (NULL_POINTER, INVALID_DTYPE,
 * WRONG_MEMORY_SPACE for a DEVICE image, OVERFLOW); UNSUPPORTED for PNG,
 * JPEG and HDR in a build without stb. */
PARSUM_API parsum_status parsum_image_write(parsum_context *ctx,
                                            const char *path,
                                            const parsum_image *img);

/* ------------------------------------------------------------------------ */
/* Histograms and tone mapping                                               */
/* ------------------------------------------------------------------------ */

/* How parsum_histogram counts (parsum_histogram_desc.strategy). All give
 * the same counts; they differ in speed and scratch memory:
 *   ATOMIC_GLOBAL      every sample increments its bin in the output with
 *                      an atomic add (no scratch; slow when many samples
 *                      fall into few bins).
 *   PRIVATIZED         private histograms (one per thread on the CPU, one
 *                      per block in shared memory on the GPU, or a few
 *                      copies in device memory when the bins do not fit
 *                      there), then summed into the output.
 *   SORT_REDUCE_BY_KEY each sample's bin index, sorted, then the lengths
 *                      of the runs of equal indices added to the output
 *                      (scratch: 8 bytes per pixel).
 *   AUTO               the fastest for the bin count, sample count, dtype
 *                      and backend, by measurement (never SORT_REDUCE_BY_KEY,
 *                      which is never the fastest); the rule is in
 *                      src/hist/README.md. */
typedef enum parsum_hist_strategy {
    PARSUM_HIST_AUTO = 0,
    PARSUM_HIST_ATOMIC_GLOBAL = 1,
    PARSUM_HIST_PRIVATIZED = 2,
    PARSUM_HIST_SORT_REDUCE_BY_KEY = 3
} parsum_hist_strategy;

/* The bins of one channel: nbins >= 1 (at most 2^31).
 * Even bins (levels NULL): bin i covers [lo + i w, lo + (i + 1) w),
 *   w = (hi - lo) / nbins, lo < hi. lo and hi are read as the widest type
 *   of the sample's kind: .i64 for I8..U32 and I64 samples, .u64 for U64,
 *   .f64 for F32/F64 (so [0, 256) works for U8 and [0, 2^32) for U32).
 *   Integer samples: bin = floor((x - lo) nbins / (hi - lo)) computed
 *   exactly. Float samples: bin = floor((x - lo) * s) in float64 with
 *   s = nbins / (hi - lo) rounded to float64 once; a result of nbins (from
 *   rounding, for x just below hi) counts in the last bin. With (hi - lo) /
 *   nbins a power of two every edge lo + i w lands exactly in bin i.
 * Range bins (levels not NULL): nbins + 1 strictly ascending boundaries in
 *   host memory, of the same widened type (int64_t, uint64_t or double);
 *   bin i covers [levels[i], levels[i + 1]).
 * Samples outside [lo, hi) (or [levels[0], levels[nbins])) and NaN are not
 * counted. */
typedef struct parsum_hist_bins {
    size_t nbins;
    parsum_scalar lo, hi;
    const void *levels;
} parsum_hist_bins;

/* PARSUM_HIST_ACCUMULATE: add to the counts already in the output instead
 * of overwriting them. */
#define PARSUM_HIST_ACCUMULATE 1u

typedef struct parsum_histogram_desc {
    parsum_dtype sample_dtype;     /* any dtype */
    int channels;                  /* 1..4 interleaved samples per pixel */
    parsum_dtype count_dtype;      /* PARSUM_U32 or PARSUM_U64 */
    parsum_hist_strategy strategy; /* PARSUM_HIST_AUTO unless testing */
    unsigned flags;                /* 0 or PARSUM_HIST_ACCUMULATE */
    parsum_hist_bins bins[4];      /* bins[c] for channel c */
} parsum_histogram_desc;

/* parsum_histogram: counts[c][i] = the number of pixels p < n whose
 * channel-c sample samples[p * channels + c] falls into bin i of
 * d->bins[c] (with ACCUMULATE: counts[c][i] += that number). counts[c] may
 * be NULL to skip channel c (RGBA with only RGB histograms). samples and
 * the count arrays live in the context's memory space (device memory on a
 * CUDA context), levels in host memory. U32 counts wrap modulo 2^32 (use
 * U64 when a bin may reach 2^32; n may exceed 2^32 with either). Counts are
 * exact integers, so every strategy gives bit-identical results.
 * Work O(n channels + nbins) (range bins: O(n channels log nbins)); the
 * call returns when the counts are written (CPU) or enqueued (CUDA).
 * Scratch: PRIVATIZED on the CPU threads x nbins counts per channel, on
 * the GPU at most 256 MiB beyond the output; SORT_REDUCE_BY_KEY about
 * 8 n bytes plus 12 (nbins + 1).
 * Errors: NULL ctx or d, samples NULL with n > 0, every counts[c] NULL, a
 * count array overlapping another or the samples, n * channels overflowing
 * (PARSUM_ERR_NULL_POINTER / INVALID_ARGUMENT / OVERFLOW); unknown dtype
 * (INVALID_DTYPE), count dtype not U32/U64, channels outside 1..4, unknown
 * strategy or flags, nbins 0 or above 2^31, lo >= hi (or NaN), levels not
 * strictly ascending or NaN (INVALID_ARGUMENT); misaligned or wrong-space
 * pointers as for scan. */
PARSUM_API parsum_status parsum_histogram(parsum_context *ctx,
                                          const void *samples, size_t n,
                                          const parsum_histogram_desc *d,
                                          void *const counts[]);

/* Tone mapping: parsum_tonemap maps a high-dynamic-range image to display
 * values by histogram equalisation of its log luminance (the notes'
 * reduce + histogram + scan pipeline). Samples are first taken as linear
 * values: F32/F64 as they are, U8/U16 divided by 255 / 65535 (LDR images);
 * negative colour samples count as 0.
 *   1. luminance L = 0.2126 R + 0.7152 G + 0.0722 B of each pixel (the
 *      sample itself for 1 channel, the first sample for 2; alpha, the
 *      last channel of 2- and 4-channel images, is not part of it);
 *      pixels with L <= min_luminance are black and left out of the steps
 *      below; l = log10 L, stored as float;
 *   2. lmin, lmax of l by reduce;
 *   3. histogram of l in nbins even bins over [lmin, hi), hi the next
 *      float64 above lmax (so that lmax is counted, in the last bin); the
 *      bin width is dl = (hi - lmin) / nbins;
 *   4. optionally Ward's histogram adjustment (Ward Larson, Rushmeier and
 *      Piatko 1997, "A Visibility Matching Tone Reproduction Operator for
 *      High Dynamic Range Scenes"), the paper's ceiling procedure: with
 *      tolerance = 2.5 % of N (N the non-black pixel count), repeat
 *      { T = the current total of the counts; if T < tolerance, stop and
 *      map linearly (below); cut every bin above T dl / log10(C) to that
 *      ceiling (C = display_contrast = ldmax / ldmin) } until the counts
 *      cut in a round add up to at most the tolerance. The linear fallback
 *      happens when the scene's luminance range is small next to the
 *      display's (every round then cuts most of what is left): then
 *      Ld = L / Lmax, Lmax the image's largest luminance;
 *   5. exclusive scan of the (adjusted) counts h to the cumulative counts
 *      S, and at bin edge i the fraction P_i = S_i / S_nbins (P_nbins = 1);
 *   6. display luminance at the edges: Ld_i = P_i (plain equalisation) or,
 *      with Ward, ldmin^(1-P_i) ldmax^P_i / ldmax = C^(P_i - 1) (or the
 *      linear fallback's 10^(l_i - log10 Lmax) at the edge's l_i); a pixel
 *      in bin i at fraction f of its width gets Ld = Ld_i + (Ld_(i+1) -
 *      Ld_i) f (for plain equalisation exactly (S_i + h_i f) / S_nbins);
 *      each colour sample c becomes c Ld / L, clipped to [0, 1]; black
 *      pixels get 0.
 * dst: same size and channels as src, dtype U8 or U16 (sRGB-encoded with
 * the standard piecewise transfer function, rounded to nearest) or F32
 * (linear, in [0, 1]); alpha is copied, clipped to [0, 1] and scaled to
 * dst's range for U8/U16 (not sRGB-encoded). src: F32, F64, U8 or U16.
 * Both in the context's space, any pitches, not overlapping.
 * Special images: all pixels black: every colour sample 0; all non-black
 * pixels of one luminance: those get Ld = 1 (colours c / L, clipped).
 * NaN and infinite samples (alpha included) are an error,
 * PARSUM_ERR_INVALID_ARGUMENT, and the message names the first such pixel
 * in row order as "(x X, y Y)"; dst is then left unwritten.
 * Deterministic (same input, backend and device: same bits). Against the
 * float64 reference of the same steps, and CPU against CUDA: within one U8
 * step (one U8 step = 257 U16 steps; F32 within 1e-4) -- the log
 * luminance is stored as float and host and device math libraries may
 * differ by an ulp.
 * Work: two passes over the image and four over the log luminance, plus
 * O(nbins) (O(40 nbins) for Ward); memory: 4 bytes per
 * pixel and 32 bytes per bin of the context's space, besides the scratch
 * of reduce, scan and histogram. On a CUDA context the call waits for the
 * GPU (min/max and the counts come back to the host).
 * Errors: as parsum_image for src and dst (NULL, dtype, channels, sizes,
 * pitch, alignment, memory space), dtypes outside the lists
 * (INVALID_DTYPE), mismatched sizes or channels, src and dst overlapping,
 * nbins above 2^20, min_luminance < 0 or not finite, display_contrast <= 1
 * or not finite, unknown flags (INVALID_ARGUMENT); out of memory. */
#define PARSUM_TONEMAP_WARD 1u

typedef struct parsum_tonemap_params {
    size_t nbins;            /* histogram bins; 0 = 1024 */
    unsigned flags;          /* 0 or PARSUM_TONEMAP_WARD */
    double min_luminance;    /* L at or below it is black; 0 = 1e-9 */
    double display_contrast; /* ldmax / ldmin (C) for Ward; 0 = 100 */
} parsum_tonemap_params;

/* p NULL = all defaults. */
PARSUM_API parsum_status parsum_tonemap(parsum_context *ctx,
                                        const parsum_image *src,
                                        const parsum_image *dst,
                                        const parsum_tonemap_params *p);

/* ------------------------------------------------------------------------ */
/* Sorting                                                                   */
/* ------------------------------------------------------------------------ */

/* Key order of the radix sorts (parsum_sort, parsum_sort_indices,
 * parsum_segmented_sort): every key dtype by value, ascending unless
 * PARSUM_DESCENDING. Floats: -inf < negatives < -0.0 < +0.0 < positives <
 * +inf < NaN; NaNs of either sign sort after +inf, among themselves by
 * their payload bits, so a NaN and the same NaN with the other sign are
 * equal keys. Descending is exactly the reverse order (NaNs first). Every
 * sort is stable: equal keys keep their input order, descending too.
 *
 * The sort works on each key's "ordered bits": an unsigned integer of the
 * key's width that orders as the keys do (unsigned keys as they are,
 * signed ones with the sign bit flipped, floats by the usual sign-magnitude
 * transform with NaNs moved past +inf). begin_bit and end_bit select which
 * of those bits take part (bit 0 the least significant); keys equal in
 * those bits are equal keys. 0 and 0 mean all bits. */
#define PARSUM_DESCENDING 4u

typedef struct parsum_sort_desc {
    parsum_dtype key_dtype; /* any dtype */
    size_t value_size;      /* bytes per value, 0 (keys only) to 16 */
    unsigned flags;         /* 0 or PARSUM_DESCENDING */
    unsigned begin_bit;     /* 0 <= begin_bit < end_bit <= key bits, or */
    unsigned end_bit;       /* both 0 for all bits */
} parsum_sort_desc;

/* Largest value_size of parsum_sort_desc. */
#define PARSUM_SORT_MAX_VALUE_SIZE 16

/* parsum_sort: stable radix sort of n keys (desc->key_dtype) with, when
 * desc->value_size > 0, a value of value_size bytes each (any bytes: the
 * value moves with its key). keys_out[0 .. n) receives the keys in order,
 * values_out the values in the same order.
 *   - In place is allowed (keys_out == keys_in, values_out == values_in);
 *     other overlaps are not.
 *   - value_size 0: values_in and values_out are ignored (may be NULL).
 *     With values, keys_out may be NULL (only the values are wanted).
 * Memory: the context's space; scratch of about n * (key size + value
 * size) bytes (a second buffer for the passes).
 * Complexity: O(n) work per pass, one pass per 8 of the selected ordered
 * bits (src/sort/README.md gives each backend's digit widths); a pass
 * whose digit is the same for every key is skipped. n above 2^31 works.
 * Errors: ctx or desc NULL, keys_in NULL with n > 0, keys_out NULL when
 * there are no values, values_in / values_out NULL with values
 * (PARSUM_ERR_NULL_POINTER); unknown key_dtype (PARSUM_ERR_INVALID_DTYPE);
 * value_size above 16, unknown flags, a bad bit range, partial overlaps
 * (PARSUM_ERR_INVALID_ARGUMENT); n * size overflowing (PARSUM_ERR_OVERFLOW);
 * pointers outside the context's space (PARSUM_ERR_WRONG_MEMORY_SPACE). */
PARSUM_API parsum_status parsum_sort(parsum_context *ctx, const void *keys_in,
                                     const void *values_in, void *keys_out,
                                     void *values_out, size_t n,
                                     const parsum_sort_desc *desc);

/* parsum_sort_indices: the sorting permutation. perm[j] = the input
 * position of the j-th key in sorted order (uint64_t; stable, so equal
 * keys give ascending positions); keys_out, when not NULL, receives the
 * sorted keys (it may be keys_in: in place). desc->value_size must be 0.
 * Errors: as parsum_sort, plus perm NULL with n > 0, value_size not 0. */
PARSUM_API parsum_status parsum_sort_indices(parsum_context *ctx,
                                             const void *keys_in,
                                             void *keys_out, uint64_t *perm,
                                             size_t n,
                                             const parsum_sort_desc *desc);

/* parsum_segmented_sort: sorts each segment [offsets[s], offsets[s + 1])
 * on its own, as parsum_sort sorts an array (stable, same key order,
 * values optional, in place allowed). offsets as PARSUM_SEG_OFFSETS:
 * num_segments + 1 non-decreasing uint64_t values, offsets[0] == 0,
 * offsets[num_segments] == n, in the context's space; empty segments are
 * allowed. Fast for many tiny segments and for a few huge ones alike.
 * On a CUDA context the call waits only for the segments' classification
 * by length (it reads back how many are longer than one block's tile, and
 * launches their sorts itself), then returns with the sorts in flight on
 * the context's stream; because of that read-back it cannot be captured
 * into a CUDA graph.
 * Errors: as parsum_sort, plus offsets NULL, offsets not starting at 0,
 * decreasing, or not ending at n (on a CUDA context these are checked on
 * the device and reported as PARSUM_ERR_INVALID_ARGUMENT after the work
 * has been waited for). */
PARSUM_API parsum_status parsum_segmented_sort(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, const uint64_t *offsets,
    size_t num_segments, const parsum_sort_desc *desc);

/* A strict weak order for parsum_sort_custom: less(a, b, user) returns
 * nonzero when a must come before b. On a CPU context it is called from
 * several threads at once and must answer the same for the same pair every
 * time. For a CUDA context the same order as CUDA C source, compiled at the
 * first use with NVRTC and cached in the context (as custom operators):
 *   cuda_type       definition of the element type ("" for a built-in one)
 *   cuda_type_name  its name T (sizeof(T) must equal elem_size)
 *   cuda_less       body of "bool less(const T &a, const T &b,
 *                   const void *user)", e.g. "return a.key < b.key;"
 *   cuda_user       passed as `user` (device memory the order may read,
 *                   such as a string table when sorting strings by index). */
typedef int (*parsum_less_fn)(const void *a, const void *b, void *user);

typedef struct parsum_comparator {
    size_t elem_size; /* bytes per element, 1 to PARSUM_CUSTOM_MAX_ELEM_SIZE */
    parsum_less_fn less;
    void *user;
    const char *cuda_type;
    const char *cuda_type_name;
    const char *cuda_less;
    const void *cuda_user;
} parsum_comparator;

/* parsum_sort_custom: stable comparison sort of n elements by cmp, for
 * keys radix sort cannot order (structs, strings by index). The iterative
 * quicksort of the notes: every round splits all unfinished partitions at
 * once, each around its own pivot (the median of three elements drawn at
 * random from a fixed seed), into the elements less than it and the rest
 * by segmented scans (a stable split, which makes the sort stable); when
 * nothing is less, the next round takes the elements equal to that pivot
 * out as finished (one comparison per element and round either way).
 * Parts of at most 32 elements are finished by a stable binary insertion
 * sort. out may be in (in place). Expected O(n log n) comparisons (about
 * 1.1 n log2 n for distinct keys) and O(log n) rounds whatever the input
 * order (all equal: two rounds); the pivots, and so the result and its
 * cost, are the same every run (an input crafted against the fixed seed
 * can still make the rounds linear).
 * Memory: the context's space; scratch of n * elem_size + 8 n bytes
 * (16 n while a partition holds 2^32 elements or more). On a CUDA context
 * each round reads its partition sizes back to the host, so the call
 * returns when the sort is done. in and out must be aligned to the CUDA
 * type (alignof(T)) there.
 * Errors: ctx, cmp NULL, in or out NULL with n > 0
 * (PARSUM_ERR_NULL_POINTER); elem_size 0 or too large, cmp->less NULL on a
 * CPU context, cuda_type_name or cuda_less NULL on a CUDA context
 * (cuda_type NULL reads as ""), sizeof(T) != elem_size or in / out
 * misaligned for T (CUDA), in and out partially overlapping, an order
 * under which an element is less than itself (found when it is a pivot;
 * out is then unspecified) (PARSUM_ERR_INVALID_ARGUMENT); n * elem_size
 * overflowing (PARSUM_ERR_OVERFLOW); elem_size above
 * PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE on a CUDA context
 * (PARSUM_ERR_UNSUPPORTED); PARSUM_ERR_COMPILE for CUDA source that does
 * not compile (the log, naming "cuda_type" or "cuda_less" and the line, is
 * in parsum_last_error). */
PARSUM_API parsum_status parsum_sort_custom(parsum_context *ctx,
                                            const void *in, void *out,
                                            size_t n,
                                            const parsum_comparator *cmp);

/* ------------------------------------------------------------------------ */
/* CUDA backend                                                              */
/* ------------------------------------------------------------------------ */

/* A CUDA context works on one device and enqueues all its work on one
 * stream. At creation these are the calling thread's current device (0
 * unless it chose another) and the legacy default stream (0). parsum
 * makes its device current only while it works, and gives the calling
 * thread its own current device back before returning.
 *
 * Memory: in, out and workspaces must be device memory of the context's
 * device, managed memory, or pinned host memory mapped at the same address
 * (else PARSUM_ERR_WRONG_MEMORY_SPACE); element pointers must be aligned
 * to their element type (4 bytes for I32), else PARSUM_ERR_INVALID_ARGUMENT.
 * 16-byte aligned buffers (all of parsum_alloc's and cudaMalloc's) take
 * the fastest path. A reduce result may be host memory (the call then
 * waits for it) or device/managed memory (the call returns at once, like a
 * kernel launch; synchronize before reading managed memory on the host).
 * Scans return at once.
 *
 * Determinism: results are bit-identical from run to run on the same device
 * for the same n, whatever the timing; the grouping of float sums depends
 * on n (scan) and on n and the device's multiprocessor count (reduce).
 *
 * Custom operators: cuda_combine and cuda_type_name are required (else
 * PARSUM_ERR_INVALID_ARGUMENT); the operator is compiled by NVRTC for the
 * device on first use (PARSUM_ERR_COMPILE with the compiler's message on
 * error; it names "cuda_type" or "cuda_combine" and the line in that text)
 * and kept in the context (the 32 most recently used). The type must be
 * trivially copyable and default-constructible, with sizeof equal to
 * elem_size (else PARSUM_ERR_INVALID_ARGUMENT). Functions defined in
 * cuda_type need no __device__. elem_size may be at most
 * PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE (128) bytes on a CUDA context (larger
 * elements: PARSUM_ERR_UNSUPPORTED); above about 64 bytes they no longer
 * fit in registers and throughput falls. The combine function sees
 * const T &a, const T &b and the type's name T; a is the earlier operand.
 *
 * The four functions below apply to CUDA contexts only; on another context,
 * or in a build without CUDA, they return PARSUM_ERR_UNSUPPORTED. */

#define PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE 128

/* Moves the context to CUDA device `device` (an ordinal of the CUDA
 * runtime). Work queued on the old device is waited for; the scratch arena
 * and compiled custom operators are freed, a workspace set with
 * parsum_context_set_workspace is detached (it belongs to the old device),
 * and the stream becomes the new device's legacy default stream. Memory
 * from parsum_alloc stays valid on the old device: free it with a context
 * on that device. Errors: device out of range (PARSUM_ERR_INVALID_ARGUMENT). */
PARSUM_API parsum_status parsum_context_set_cuda_device(parsum_context *ctx,
                                                        int device);
PARSUM_API parsum_status parsum_context_cuda_device(const parsum_context *ctx,
                                                    int *device);

/* Sets the stream (a cudaStream_t, passed as void *) on which the context
 * enqueues its work; NULL is the legacy default stream. The caller keeps
 * ownership and must keep the stream alive while the context uses it. Work
 * already queued on the previous stream is waited for first (the scratch
 * arena is reused by the next call). While the stream is capturing
 * (cudaStreamBeginCapture), calls zero their look-back state in the
 * captured work instead of tagging it with the call, so that every replay
 * of the graph starts from clean state. A call that waits for the device
 * before it returns cannot be captured: one that writes a count or total
 * to host memory (give it device memory instead), and parsum_segmented_sort,
 * which reads its segments' classification back. Errors: a stream of
 * another device (PARSUM_ERR_INVALID_ARGUMENT). */
PARSUM_API parsum_status parsum_context_set_cuda_stream(parsum_context *ctx,
                                                        void *stream);
PARSUM_API parsum_status parsum_context_cuda_stream(const parsum_context *ctx,
                                                    void **stream);

#ifdef __cplusplus
}
#endif

#endif /* PARSUM_H */
