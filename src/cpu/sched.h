/*
 * sched.h - the CPU backend's scheduler: three functions, ParlayLib
 * style, implemented over OpenMP in sched.c, and the split of a range
 * into parts that goes with them. Nothing else in parsum touches
 * OpenMP, so another runtime (a pthread pool, TBB) can replace it here.
 */
#ifndef PARSUM_CPU_SCHED_H
#define PARSUM_CPU_SCHED_H

#include <stddef.h>

/* Part t of nt of [0, len): [*b, *e), sizes differing by at most one. */
void parsum__sched_share(size_t len, int t, int nt, size_t *b, size_t *e);
/* Threads a parallel region gets by default: OMP_NUM_THREADS if set,
 * else the online processors. */
int parsum__sched_workers(void);
/* body(arg, i) for every i in [0, n), statically split over nthreads. */
void parsum__sched_parallel_for(int nthreads, size_t n,
                                void (*body)(void *arg, size_t i),
                                void *arg);
/* Fork-join: body(arg, tid, nt) on nt <= nthreads threads running at the
 * same time; returns when all are done. nt is the count actually started. */
void parsum__sched_spmd(int nthreads,
                        void (*body)(void *arg, int tid, int nt), void *arg);

#endif
