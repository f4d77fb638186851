/* sched.c - the scheduler functions over OpenMP (see sched.h). */
#include "sched.h"

#include <omp.h>

void parsum__sched_share(size_t len, int t, int nt, size_t *b, size_t *e)
{
    size_t q = len / (size_t)nt, r = len % (size_t)nt, ut = (size_t)t;
    *b = q * ut + (ut < r ? ut : r);
    *e = *b + q + (ut < r);
}

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
