/* sched.c - the scheduler functions over OpenMP (see sched.h). */
#include "sched.h"

#include <omp.h>

int parsum__sched_workers(void)
{
    return omp_get_max_threads();
}

void parsum__sched_parallel_for(int nthreads, size_t n,
                                void (*body)(void *arg, size_t i), void *arg)
{
    if (nthreads <= 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            body(arg, i);
        return;
    }
    long long count = (long long)n;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (long long i = 0; i < count; i++)
        body(arg, (size_t)i);
}

void parsum__sched_spmd(int nthreads, void (*body)(void *arg, int tid, int nt),
                        void *arg)
{
    if (nthreads <= 1) {
        body(arg, 0, 1);
        return;
    }
#pragma omp parallel num_threads(nthreads)
    body(arg, omp_get_thread_num(), omp_get_num_threads());
}
