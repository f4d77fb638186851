/*
 * bench_cpu_sort.h - `parsum bench sort` on the CPU backend
 * (bench_cpu_sort.c).
 */
#ifndef PARSUM_BENCH_CPU_SORT_H
#define PARSUM_BENCH_CPU_SORT_H

#include "bench_args.h"

#include <stdio.h>

/* Runs the sort cases (bench_cpu_sort.c) on a->n keys (0: 2^26): parsum's
 * radix sort against glibc's qsort (on at most 2^24 keys), a memcpy and a
 * streaming copy of the same bytes, and the copy-bandwidth floor of the
 * passes the sort makes; writes the table (or JSON lines) to out. Every
 * case checks parsum's output. Returns the process exit status. */
int parsum_bench_cpu_sort(const parsum_bench_args *a, FILE *out);

#endif
