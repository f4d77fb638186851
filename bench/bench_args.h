/*
 * bench_args.h - what `parsum bench` was asked to measure, shared by the
 * CPU benchmark (bench_cpu.c) and the CUDA benchmark (bench_cuda.cu).
 *
 * The command line fills the struct; every field already holds a valid
 * value (the dtype/op pair may still be one the library rejects, which the
 * benchmark reports as a runtime error).
 */
#ifndef PARSUM_BENCH_ARGS_H
#define PARSUM_BENCH_ARGS_H

#include "parsum.h"

#include <stddef.h>

typedef struct parsum_bench_args {
    const char *what;   /* "reduce", "scan", a segmented benchmark
                           ("segscan", "segreduce", "scanbykey",
                           "reducebykey") or a selection benchmark
                           ("select", "partition", "partition_unstable",
                           "unique", "rle") or
                           an image benchmark ("integral", "boxfilter") */
    size_t n;           /* elements; 0 = a sweep over several sizes */
    parsum_dtype dtype;
    parsum_op op;
    unsigned flags;     /* PARSUM_EXCLUSIVE | PARSUM_REVERSE (scan only) */
    int inplace;        /* scan with out == in */
    int misalign;       /* CPU scans: values in and out at PB_MISALIGN
                           bytes past a 64-byte boundary */
    int reps;           /* timed runs per measurement; 0 = choose (>= 5) */
    int threads;        /* CPU threads; 0 = the library's default */
    int json;           /* 1: one JSON object per line instead of a table */
    int seg_dist;       /* segmented: a pb_seg_dist (bench_segments.h), or
                           -1 for each in turn */
    int seg_offsets;    /* segscan: segments as offsets, not packed flags */
    int seg_kind_set;   /* --seg-kind was given */
    int selectivity;    /* select, partition: percent selected (0..100),
                           or -1 for a series */
    int select_by;      /* select, partition: 0 predicate, 1 flag bytes,
                           2 packed flag bits */
    int selectivity_set; /* --selectivity or --select-by was given */
    int radius;         /* boxfilter: rx = ry, or -1 for 1, 3, 7, 15 */
    int border;         /* boxfilter: a parsum_border */
    int image_set;      /* --radius or --border was given */
} parsum_bench_args;

/* A benchmark entry point returns the process exit status it wants:
 * 0 on success, 1 on a runtime error (message already on stderr), 2 on
 * a request it cannot serve (e.g. an unsupported option). */

#endif
