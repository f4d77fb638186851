/*
 * bench_cuda.h - `parsum bench ... --backend cuda`: parsum's scan or reduce
 * on a CUDA context against CUB on the same device buffers in the same run,
 * with cudaMemcpy device-to-device (and, for reduce, a plain read kernel)
 * as the bandwidth bound. Compiled into the parsum tool when the CUDA
 * backend is built (bench/bench_cuda.cu; CUB is linked there only, never
 * into libparsum).
 */
#ifndef PARSUM_BENCH_CUDA_H
#define PARSUM_BENCH_CUDA_H

#include "bench_args.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the benchmark that args describes and prints a table (or one JSON
 * object per line with args->json) to out. args->n == 0 sweeps n = 2^16,
 * 2^18, ..., 2^30 (sizes that do not fit in device memory are skipped).
 * Returns the process exit status: 0 success, 1 runtime error (message on
 * stderr; also when a result disagrees with CUB or two runs differ), 2 a
 * request it cannot serve. */
int parsum_bench_cuda(const parsum_bench_args *args, FILE *out);

/* `parsum bench segscan|segreduce|scanbykey|reducebykey --backend cuda`
 * (bench_cuda_seg.cu): parsum against CUB's segmented and by-key
 * algorithms for each segment distribution of bench_segments.h (or the
 * one in args->seg_dist), n = args->n (2^26 if 0), op SUM; prints to
 * stdout. Exit status as parsum_bench_cuda. */
int parsum_bench_cuda_segmented(const parsum_bench_args *args);

/* `parsum bench select|partition|partition_unstable|unique|rle --backend
 * cuda` (bench_cuda_select.cu): parsum against CUB's DeviceSelect::If,
 * DevicePartition::If, DeviceSelect::Unique and DeviceRunLengthEncode::
 * Encode, n = args->n (2^16 .. 2^28 if 0); prints to stdout. Exit status
 * as parsum_bench_cuda. */
int parsum_bench_cuda_select(const parsum_bench_args *args);

/* `parsum bench histogram --backend cuda` (bench_cuda_hist.cu): parsum's
 * histogram strategies against CUB's DeviceHistogram (fixed cases). */
int parsum_bench_cuda_hist(const parsum_bench_args *args);

/* `parsum bench integral|boxfilter --backend cuda` (bench_cuda_image.cu):
 * summed-area tables and the box filter on W x W device images against the
 * device-to-device copy bandwidth; W = sqrt(args->n), or 2048, 4096 and
 * 8192 if n is 0. Exit status as parsum_bench_cuda. */
int parsum_bench_cuda_image(const parsum_bench_args *args);

/* `parsum bench sort --backend cuda` (bench_cuda_sort.cu): parsum's radix
 * sort and segmented sort against CUB's DeviceRadixSort and
 * DeviceSegmentedSort (fixed cases, n = args->n or 2^28 for the large
 * ones); prints to stdout. Exit status as parsum_bench_cuda. */
int parsum_bench_cuda_sort(const parsum_bench_args *args);

#ifdef __cplusplus
}
#endif

#endif
