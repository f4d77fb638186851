/*
 * bench_cpu_util.h - small pieces shared by the CPU benchmarks (the
 * `parsum bench` command and the TBB peer program): a monotonic clock,
 * medians, size parsing, deterministic random data, and the multi-threaded
 * memcpy and read loops whose bandwidth parsum is compared with.
 *
 * The copy and read loops use OpenMP with an explicit thread count so that
 * they run on exactly as many threads as the parsum call they are compared
 * with.
 */
#ifndef PARSUM_BENCH_CPU_UTIL_H
#define PARSUM_BENCH_CPU_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <parsum.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on CLOCK_MONOTONIC. */
double pb_now(void);

/* Median of v[0..count) (sorts v in place); 0 for count == 0. */
double pb_median(double *v, int count);

/* Parses an element count: "268435456", "2^28", "1e8", "1.5e6". The value
 * must be a whole number from 1 to 2^62. Returns 0 on success, -1 on a
 * malformed or out-of-range string. */
int pb_parse_count(const char *s, size_t *out);

/* Writes "2^26" when n is a power of two, else the decimal value, into
 * buf (at least 24 bytes). Returns buf. */
const char *pb_format_count(size_t n, char *buf, size_t len);

/* A 64-bit mix of x (splitmix64's finalizer): deterministic, well spread
 * pseudo-random bits for element i of a data set. */
uint64_t pb_hash64(uint64_t x);

/* Timed runs to make for one measurement whose four parts take
 * per_round seconds together: about 1.5 s in all, at least 5 and at most
 * 10000. */
int pb_auto_reps(double per_round);

/* memcpy(dst, src, bytes) on `threads` threads: an OpenMP parallel for
 * over 1 MiB chunks, each copied with memcpy. */
void pb_copy(void *dst, const void *src, size_t bytes, int threads);

/* The same copy with non-temporal (streaming) stores of the widest
 * vectors the processor has (x86; elsewhere plain memcpy). For data larger
 * than the cache this is usually faster than memcpy's cached stores, and it
 * is what a scan that streams its output achieves at best. */
void pb_copy_stream(void *dst, const void *src, size_t bytes, int threads);
/* 1 if pb_copy_stream really uses non-temporal stores here. */
int pb_have_stream_copy(void);

/* Where a large malloc block starts in glibc (16 bytes past a page): the
 * offset of the values with `parsum bench --misalign`. */
#define PB_MISALIGN 16
/* parsum_alloc of bytes, returned `shift` bytes past its start (shift <
 * 64); pb_free_shifted takes the same shift back. */
parsum_status pb_alloc_shifted(parsum_context *ctx, void **p, size_t bytes,
                               size_t shift);
void pb_free_shifted(parsum_context *ctx, void *p, size_t shift);

/* Reads every 64-bit word of src (bytes rounded down to 8) on `threads`
 * threads (1 MiB chunks) and returns their wrapping sum, so the loads
 * cannot be optimized away. */
uint64_t pb_read(const void *src, size_t bytes, int threads);

/* Cache scrubbing. A buffer that is not much larger than the last-level
 * cache would be measured partly from the cache, and the state one
 * contestant leaves behind (dirty lines still to be written back, or the
 * input still cached) would favour or burden the next. So when the working
 * set is at least 1/8 of the last-level cache, each timed run is preceded
 * by an untimed read of a buffer larger than that cache. */
typedef struct pb_scrub {
    void *buf;
    size_t bytes; /* 0: no scrubbing needed (or possible) */
    uint64_t sink;
} pb_scrub;

/* Prepares scrubbing for a working set of `working_set` bytes. Never
 * fails: without memory the scrub is skipped. */
void pb_scrub_init(pb_scrub *s, size_t working_set, int threads);
/* Evicts the cache (a no-op when s->bytes is 0). */
void pb_scrub_run(pb_scrub *s, int threads);
void pb_scrub_free(pb_scrub *s);

/* An order-independent checksum of bytes of p (a multiple of 8 or not):
 * equal buffers give equal checksums. Multi-threaded. */
uint64_t pb_checksum(const void *p, size_t bytes, int threads);

#ifdef __cplusplus
}
#endif

#endif
