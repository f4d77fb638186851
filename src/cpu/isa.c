/* isa.c - picks the kernel table for this processor at first use
 * (BLIS/zstd style). PARSUM_CPU_ISA=generic|avx2|avx512 forces a variant,
 * so the tests can run every path on one machine; an unknown or
 * unsupported name falls back to the automatic choice. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#ifdef PARSUM_ISA_HAVE_generic
extern const parsum__cpu_kernels parsum__cpu_kernels_generic;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
extern const parsum__cpu_kernels parsum__cpu_kernels_avx2;
#endif
#ifdef PARSUM_ISA_HAVE_avx512
extern const parsum__cpu_kernels parsum__cpu_kernels_avx512;
#endif

static const parsum__cpu_kernels *const all_variants[] = {
#ifdef PARSUM_ISA_HAVE_avx512
    &parsum__cpu_kernels_avx512,
#endif
#ifdef PARSUM_ISA_HAVE_avx2
    &parsum__cpu_kernels_avx2,
#endif
    &parsum__cpu_kernels_generic,
    NULL,
};

static int supported(const parsum__cpu_kernels *k)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (strcmp(k->isa, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
    if (strcmp(k->isa, "avx2") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("bmi2");
#endif
    return strcmp(k->isa, "generic") == 0;
}

static const parsum__cpu_kernels *choose(void)
{
    const char *want = getenv("PARSUM_CPU_ISA");
    if (want != NULL && *want != '\0') {
        for (int i = 0; all_variants[i] != NULL; i++)
            if (strcmp(all_variants[i]->isa, want) == 0 &&
                supported(all_variants[i]))
                return all_variants[i];
    }
    for (int i = 0; all_variants[i] != NULL; i++)
        if (supported(all_variants[i]))
            return all_variants[i];
    return &parsum__cpu_kernels_generic;
}

const parsum__cpu_kernels *parsum__cpu_kernels_get(void)
{
    /* Benign race: every thread computes the same pointer. */
    static const parsum__cpu_kernels *volatile chosen;
    const parsum__cpu_kernels *k = chosen;
    if (k == NULL) {
        k = choose();
        chosen = k;
    }
    return k;
}
