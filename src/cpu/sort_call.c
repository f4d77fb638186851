/*
 * sort_call.c - what one call of the CPU sorts sets up before sorting
 * (sort_impl.h): the kernels of the instruction set in use, the key format
 * (kind, transform, bit range), the value mode, and the scratch memory,
 * carved from one request: the temporaries of the full length and the
 * areas of the blocks and threads.
 */
#include "sort_impl.h"

#include <stdlib.h>
#include <string.h>

/* Sorts of more bytes (keys and values) than this go through the
 * write-combining scatter: fewer do not leave the cache between passes. */
#define WC_MIN_BYTES ((size_t)1 << 20)

#ifdef PARSUM_ISA_HAVE_generic
extern const parsum__cpu_sort_kernels parsum__cpu_sort_kernels_generic;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
extern const parsum__cpu_sort_kernels parsum__cpu_sort_kernels_avx2;
#endif
#ifdef PARSUM_ISA_HAVE_avx512
extern const parsum__cpu_sort_kernels parsum__cpu_sort_kernels_avx512;
#endif

/* The variant isa.c chose for the other kernels (PARSUM_CPU_ISA applies
 * here too). */
const parsum__cpu_sort_kernels *parsum__cpu_sort_kernels_get(void)
{
    const char *isa = parsum__cpu_kernels_get()->isa;
#ifdef PARSUM_ISA_HAVE_avx512
    if (strcmp(isa, "avx512") == 0)
        return &parsum__cpu_sort_kernels_avx512;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
    if (strcmp(isa, "avx2") == 0)
        return &parsum__cpu_sort_kernels_avx2;
#endif
    (void)isa;
    return &parsum__cpu_sort_kernels_generic;
}

static size_t round64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

static int key_kind(parsum_dtype d)
{
    switch (d) {
    case PARSUM_I8:
    case PARSUM_U8: return PARSUM__SK_U8;
    case PARSUM_I16:
    case PARSUM_U16: return PARSUM__SK_U16;
    case PARSUM_I32:
    case PARSUM_U32: return PARSUM__SK_U32;
    case PARSUM_F32: return PARSUM__SK_F32;
    case PARSUM_F64: return PARSUM__SK_F64;
    default: return PARSUM__SK_U64;
    }
}

static bool is_signed_int(parsum_dtype d)
{
    return d == PARSUM_I8 || d == PARSUM_I16 || d == PARSUM_I32 ||
           d == PARSUM_I64;
}

/* The size in the environment variable name (strtoull's syntax), else
 * dflt; read once and kept in *cached (a benign race: every thread
 * computes the same). */
static size_t env_size_once(const char *name, size_t dflt,
                            volatile size_t *cached, volatile int *known)
{
    if (!*known) {
        const char *env = getenv(name);
        size_t t = dflt;
        if (env != NULL && *env != '\0')
            t = (size_t)strtoull(env, NULL, 0);
        *cached = t;
        *known = 1;
    }
    return *cached;
}

/* Bytes of keys and values above which a sort goes through the
 * write-combining scatter. Env PARSUM_CPU_STREAM_BYTES (as for the scans'
 * streamed stores, cpu.h) sets it, so that the tests take that path on
 * small inputs. */
size_t parsum__sort_wc_threshold(void)
{
    static volatile size_t cached;
    static volatile int known;
    return env_size_once("PARSUM_CPU_STREAM_BYTES", WC_MIN_BYTES, &cached,
                         &known);
}

/* Bytes of a thread's local buffer of the MSD-first sort. Env
 * PARSUM_CPU_SORT_LOCAL_BYTES sets it, so that the tests split buckets
 * (sort.c) on small inputs. */
size_t parsum__sort_local_bytes(void)
{
    static volatile size_t cached;
    static volatile int known;
    return env_size_once("PARSUM_CPU_SORT_LOCAL_BYTES",
                         PARSUM__SORT_LOCAL_BYTES, &cached, &known);
}

/* ---- scratch --------------------------------------------------------------- */

/* Byte offsets in the scratch: the temporaries, the area structs, each
 * area's memory (area_bytes from `mem` on), then the threads' staging and
 * local buffers (from `tmem` on). */
typedef struct layout {
    size_t kt1, kt2, vt, areas, mem, tmem, area_bytes, hist, stage, local,
        total;
} layout;

static bool add_piece(size_t *at, size_t bytes, size_t *where)
{
    *where = *at;
    size_t r = round64(bytes);
    if (r < bytes || *at + r < *at)
        return false;
    *at += r;
    return true;
}

static size_t stage_max(const parsum__sort_call *c)
{
    static const int idx_modes[] = {PARSUM__SV_IDX64, PARSUM__SV_IDX32,
                                    PARSUM__SV_WIDEN, PARSUM__SV_4,
                                    PARSUM__SV_8};
    if (c->vm != PARSUM__SV_IDX64)
        return parsum__sort_stage_bytes(c->kb, c->vm, c->vs);
    size_t m = 0;
    for (size_t i = 0; i < sizeof idx_modes / sizeof *idx_modes; i++) {
        size_t s = parsum__sort_stage_bytes(c->kb, idx_modes[i], 8);
        m = s > m ? s : m;
    }
    return m;
}

int parsum__sort_blocks(int nt)
{
    return nt > 1 ? nt * PARSUM__SORT_BLOCKS_PER_THREAD : nt;
}

static bool plan_layout(const parsum__sort_call *c, int threads, layout *l)
{
    int nareas = parsum__sort_blocks(threads);
    const parsum__sort_args *a = c->a;
    size_t n = a->n, at = 0, tv = parsum__sort_temp_vs(c);
    size_t ndig = (c->end - c->begin + 7) / 8;
    size_t r = PARSUM__SORT_RADIX_MAX, w = sizeof(size_t);
    l->hist = ndig * r * w;
    /* the write-combining staging and the MSD buckets' local buffer only
     * where a sort may leave the cache (the test of parsum__sort_radix) */
    size_t vb = c->vm == PARSUM__SV_NONE ? 0 : c->vs;
    bool big = n * (c->kb + vb) > parsum__sort_wc_threshold();
    l->stage = big ? r * stage_max(c) : 0;
    l->local = big ? round64(parsum__sort_local_bytes()) : 0;
    /* every area: hist, tot, cnt, pos, start; the threads' areas also
     * stage and local, after all the areas */
    l->area_bytes = 2 * round64(l->hist) + 3 * round64(r * w);
    size_t areas, thread_bytes;
    if (!add_piece(&at, n * c->kb, &l->kt1) ||
        !add_piece(&at, a->keys_out == NULL ? n * c->kb : 0, &l->kt2) ||
        !add_piece(&at, c->vm == PARSUM__SV_NONE ? 0 : n * tv, &l->vt) ||
        !add_piece(&at, (size_t)nareas * sizeof(parsum__sort_area),
                   &l->areas) ||
        !parsum__mul_size((size_t)nareas, l->area_bytes, &areas) ||
        !add_piece(&at, areas, &l->mem) ||
        !parsum__mul_size((size_t)threads, l->stage + l->local,
                          &thread_bytes) ||
        !add_piece(&at, thread_bytes, &l->tmem))
        return false;
    l->total = at;
    return true;
}

/* Area i at p; the threads' areas (i < threads) also get staging and a
 * local buffer at t. */
static void carve_area(const parsum__sort_call *c, parsum__sort_area *ar,
                       unsigned char *p, unsigned char *t, bool thread,
                       const layout *l)
{
    size_t r = PARSUM__SORT_RADIX_MAX * sizeof(size_t);
    ar->hist = (size_t *)(void *)p;
    p += round64(l->hist);
    ar->tot = (size_t *)(void *)p;
    p += round64(l->hist);
    ar->cnt = (size_t *)(void *)p;
    p += round64(r);
    ar->pos = (size_t *)(void *)p;
    p += round64(r);
    ar->start = (size_t *)(void *)p;
    ar->stage = thread && l->stage ? t : NULL;
    ar->local = thread && l->local ? t + l->stage : NULL;
    ar->local_cap = thread ? l->local / (c->kb + parsum__sort_temp_vs(c)) : 0;
}

parsum_status parsum__sort_call_init(parsum_context *ctx,
                                     parsum__sort_call *c,
                                     const parsum__sort_args *a, int threads)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->k = parsum__cpu_sort_kernels_get();
    c->kind = key_kind(a->key_dtype);
    c->kb = parsum_dtype_size(a->key_dtype);
    c->begin = a->begin_bit;
    c->end = a->end_bit;
    uint64_t ones = c->kb == 8 ? ~(uint64_t)0
                               : ((uint64_t)1 << (8 * c->kb)) - 1;
    if (is_signed_int(a->key_dtype))
        c->flip = (uint64_t)1 << (8 * c->kb - 1);
    if (a->descending)
        c->flip ^= ones;
    c->vs = a->value_size;
    c->vm = a->indices          ? PARSUM__SV_IDX64
            : a->value_size == 0  ? PARSUM__SV_NONE
            : a->value_size == 4  ? PARSUM__SV_4
            : a->value_size == 8  ? PARSUM__SV_8
            : a->value_size == 16 ? PARSUM__SV_16
                                  : PARSUM__SV_ANY;
    c->idx32 = a->indices && (uint64_t)a->n <= (uint64_t)UINT32_MAX + 1;
    c->threads = threads;
    if (threads == 0)
        return PARSUM_OK;
    layout l;
    if (!plan_layout(c, threads, &l))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: the scratch memory of a sort of %zu "
                            "elements overflows size_t",
                            a->fn, a->n);
    unsigned char *s = parsum__scratch(ctx, l.total, a->fn);
    if (s == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    c->kt1 = s + l.kt1;
    c->kt2 = s + l.kt2;
    c->vt = s + l.vt;
    c->areas = (parsum__sort_area *)(void *)(s + l.areas);
    c->nareas = parsum__sort_blocks(threads);
    for (int i = 0; i < c->nareas; i++)
        carve_area(c, &c->areas[i], s + l.mem + (size_t)i * l.area_bytes,
                   s + l.tmem + (size_t)(i < threads ? i : 0) *
                                    (l.stage + l.local),
                   i < threads, &l);
    return PARSUM_OK;
}

