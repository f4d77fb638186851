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

#endif
