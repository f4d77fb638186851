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

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A build-time knob for tuning runs; changing it changes float rounding. */
#ifndef PARSUM__CPU_CHUNK_BYTES
#define PARSUM__CPU_CHUNK_BYTES ((size_t)128 * 1024)
#endif

/* Output bytes above which an out-of-place scan streams its stores past
 * the caches: a quarter of the last-level cache (sysconf), 8 MiB if
 * unknown. */
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

typedef struct parsum__cpu_kernels {
    const char *isa;
    parsum__reduce_run_fn reduce_run[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
    parsum__scan_chunk_fn scan_chunk[PARSUM_DTYPE_COUNT][PARSUM_OP_COUNT];
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

#ifdef __cplusplus
}
#endif

#endif
