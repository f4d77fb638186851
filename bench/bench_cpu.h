/*
 * bench_cpu.h - `parsum bench reduce|scan` on the CPU backend.
 *
 * Measures, in one run and on the same data, parsum's reduce or scan, a
 * plain serial loop doing the same, a multi-threaded memcpy and the same
 * copy with non-temporal stores (bytes read + written), and a
 * multi-threaded read of 64-bit words (bytes read), each as the median of
 * repeated runs after warm-up, and prints times, bandwidths and the ratios:
 *   scan:   parsum bandwidth / the faster copy's bandwidth
 *           (n*size read + n*size written)
 *   reduce: parsum bandwidth / read bandwidth   (n*size read)
 * It also checks that parsum's result equals the serial loop's (integers
 * and float min/max; float sums and products may differ by rounding).
 */
#ifndef PARSUM_BENCH_CPU_H
#define PARSUM_BENCH_CPU_H

#include "bench_args.h"

#include <stdio.h>

/* Runs the benchmark described by args, writing results to out and errors
 * to stderr. Returns the process exit status (see bench_args.h). */
int parsum_bench_cpu(const parsum_bench_args *args, FILE *out);

/* `parsum bench segscan|segreduce|scanbykey|reducebykey` (bench_cpu_seg.c):
 * parsum's segmented operation against the plain scan or reduce of the
 * same n elements (the CPU target: within 15 % of its
 * throughput), a serial loop, the copies and the read, for one segment
 * distribution (args->seg_dist) or each in turn (-1). */
int parsum_bench_cpu_segmented(const parsum_bench_args *args, FILE *out);

/* `parsum bench select|partition|unique|rle` (bench_cpu_select.c):
 * parsum against a serial loop and the copies, for one selectivity
 * (args->selectivity) or a series (-1), or for unique and rle one run
 * distribution (args->seg_dist) or each in turn (-1). */
int parsum_bench_cpu_select(const parsum_bench_args *args, FILE *out);

/* `parsum bench integral|boxfilter` (bench_cpu_image.c): parsum's
 * summed-area table or box filter of square one-channel images of args->n
 * pixels (0: sides 1024 to 8192) against a serial loop and
 * the copies. args->dtype < 0 selects the default cases (integral: u8 ->
 * u32, u8 -> f64 squared, u16 -> u64, f32 -> f64; box filter: u8); the
 * box filter takes args->radius (-1: 1, 3, 7 and 15) and args->border. */
int parsum_bench_cpu_image(const parsum_bench_args *args, FILE *out);

/* Shared by all: the random input of bench_cpu.c (any bits for
 * integers; floats in [0, 1), or within 1e-3 of 1 for PROD), filled on
 * `threads` threads; and the CPU's model name from /proc/cpuinfo. */
void pb_fill_input(void *p, size_t n, parsum_dtype dtype, parsum_op op,
                   int threads);
const char *pb_cpu_model(void);

#endif
