/*
 * bench_cpu_hist.h - `parsum bench histogram` on the CPU backend
 * (bench_cpu_hist.c).
 */
#ifndef PARSUM_BENCH_CPU_HIST_H
#define PARSUM_BENCH_CPU_HIST_H

#include "bench_args.h"

#include <stdio.h>

/* Runs the histogram cases (bench_cpu_hist.c) on args->n samples (0: 2^28)
 * with every strategy, a serial loop and the read bandwidth, writing the
 * table (or JSON lines) to out. Returns the process exit status. */
int parsum_bench_cpu_hist(const parsum_bench_args *args, FILE *out);

#endif
