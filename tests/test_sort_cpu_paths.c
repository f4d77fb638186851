/*
 * test_sort_cpu_paths.c - the CPU backend's own paths of the radix sorts
 * (src/cpu/sort.c, sort_seg.c, sort_small.c, sort_kernels.c) against the
 * serial reference (src/ref/ref_sort.c):
 *   - sizes around the small sorts' limits (16, 256, 512), the switch to
 *     11-bit digits (4096) and to several threads (2^16), and larger;
 *   - every key dtype, ascending and descending, bit ranges, keys only,
 *     values of 1, 3, 4, 8, 12 and 16 bytes, the sorting permutation, in
 *     place, values without keys_out;
 *   - inputs that skip passes (all equal, one byte varying), sorted and
 *     reversed ones, few distinct keys (stability), special floats (+-0,
 *     +-inf, NaNs of both signs and several payloads, denormals);
 *   - segmented sorts with tiny, empty, medium and big segments;
 * each with 1, 2, 3 and 7 threads, whose results must be the same bits
 * (the reference's). CTest also runs this program with
 * PARSUM_CPU_STREAM_BYTES=0 (the write-combining scatter for every size),
 * the same with PARSUM_CPU_SORT_LOCAL_BYTES=256 (local buffers so small
 * that the MSD-first sort splits its buckets, and their parts again) and
 * on each forced instruction set.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int thread_counts[] = {1, 2, 3, 7};
#define N_THREADS (sizeof thread_counts / sizeof thread_counts[0])

static const parsum_dtype dtypes[] = {
    PARSUM_I8,  PARSUM_U8,  PARSUM_I16, PARSUM_U16, PARSUM_I32,
    PARSUM_U32, PARSUM_I64, PARSUM_U64, PARSUM_F32, PARSUM_F64};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

/* Value sizes; -1 is parsum_sort_indices. */
static const int value_modes[] = {0, 1, 3, 4, 8, 12, 16, -1};
#define N_VMODES (sizeof value_modes / sizeof value_modes[0])

enum {
    PAT_RANDOM,   /* any bits */
    PAT_FEW,      /* 16 distinct keys: long runs of equal keys */
    PAT_EQUAL,    /* every pass skipped */
    PAT_SORTED,   /* ascending raw bits */
    PAT_REVERSE,  /* descending raw bits */
    PAT_SPECIAL,  /* special floats; sparse bits for integers */
    PAT_TOP_BYTE, /* only the top byte varies: the low passes skipped */
    PAT_COUNT
};

static const uint32_t special_f32[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
    0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fc00001u, 0x00000001u,
    0x80000001u, 0x007fffffu, 0x807fffffu, 0x3f800000u, 0xbf800000u};
static const uint64_t special_f64[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull,
    0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000000ull,
    0x7ff0000000000001ull, 0xfff0000000000001ull, 0x0000000000000001ull,
    0x8000000000000001ull, 0x3ff0000000000000ull, 0xbff0000000000000ull};

static void fill_keys(unsigned char *k, size_t n, parsum_dtype dt, int pat,
                      tu_rng *r)
{
    size_t ks = parsum_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = tu_next(r);
        switch (pat) {
        case PAT_FEW: v %= 16; break;
        case PAT_EQUAL: v = 42; break;
        case PAT_SORTED: v = i; break;
        case PAT_REVERSE: v = n - i; break;
        case PAT_SPECIAL:
            if (dt == PARSUM_F32 && v % 3 != 0)
                v = special_f32[(v >> 8) % (sizeof special_f32 / 4)];
            else if (dt == PARSUM_F64 && v % 3 != 0)
                v = special_f64[(v >> 8) % (sizeof special_f64 / 8)];
            else if (dt != PARSUM_F32 && dt != PARSUM_F64)
                v &= 0xff00000000000fffull;
            break;
        case PAT_TOP_BYTE: v = (v & 0xff) << (8 * (ks - 1)); break;
        default: break;
        }
        memcpy(k + i * ks, &v, ks);
    }
}

typedef struct sort_case {
    size_t n;
    parsum_dtype dtype;
    int pat;
    unsigned flags, begin, end;
    int vmode;   /* value size, or -1 for the permutation */
    int inplace; /* keys_out = keys_in, values_out = values_in */
    int nokeys;  /* keys_out NULL (values only) */
    const uint64_t *offsets;
    size_t nseg;
} sort_case;

static void describe(const sort_case *c, int threads, char *buf, size_t len)
{
    snprintf(buf, len,
             "n=%zu %s pattern %d flags %u bits [%u, %u) values %d in "
             "place %d no keys_out %d segments %zu threads %d seed 0x%llx",
             c->n, parsum_dtype_name(c->dtype), c->pat, c->flags, c->begin,
             c->end, c->vmode, c->inplace, c->nokeys, c->nseg, threads,
             (unsigned long long)tu_seed);
}

/* Runs case c on the CPU context with each thread count against the
 * reference; every output byte must match. */
static void check_case(const sort_case *c, tu_rng *r)
{
    size_t n = c->n, ks = parsum_dtype_size(c->dtype);
    size_t vs = c->vmode > 0 ? (size_t)c->vmode : 0, m = n ? n : 1;
    unsigned char *keys = tu_malloc(m * ks), *kref = tu_malloc(m * ks);
    unsigned char *vals = tu_malloc(m * 16), *vref = tu_malloc(m * 16);
    unsigned char *kbuf = tu_malloc(m * ks), *vbuf = tu_malloc(m * 16);
    uint64_t *perm = tu_malloc(m * 8), *pref = tu_malloc(m * 8);
    fill_keys(keys, n, c->dtype, c->pat, r);
    for (size_t i = 0; i < n * 16; i++)
        vals[i] = (unsigned char)tu_next(r);
    parsum_sort_desc d = {c->dtype, c->vmode < 0 ? 0 : vs, c->flags,
                          c->begin, c->end};
    assert_int_equal(parsum__ref_sort(keys, vs ? vals : NULL, kref,
                                      vs ? vref : NULL, pref, n, &d,
                                      c->offsets, c->nseg),
                     PARSUM_OK);
    for (size_t t = 0; t < N_THREADS; t++) {
        assert_int_equal(parsum_context_set_threads(tu_ctx, thread_counts[t]),
                         PARSUM_OK);
        /* in place: the outputs start as copies of the inputs */
        memcpy(kbuf, keys, n * ks);
        memcpy(vbuf, vals, n * 16);
        if (!c->inplace) {
            memset(kbuf, TU_POISON, m * ks);
            memset(vbuf, TU_POISON, m * 16);
        }
        memset(perm, TU_POISON, m * 8);
        const void *kin = c->inplace ? kbuf : keys;
        const void *vin = c->inplace ? vbuf : vals;
        void *kout = c->nokeys ? NULL : kbuf;
        parsum_status st;
        if (c->vmode < 0)
            st = parsum_sort_indices(tu_ctx, kin, kout, perm, n, &d);
        else if (c->offsets != NULL)
            st = parsum_segmented_sort(tu_ctx, kin, vs ? vin : NULL, kout,
                                       vs ? vbuf : NULL, n, c->offsets,
                                       c->nseg, &d);
        else
            st = parsum_sort(tu_ctx, kin, vs ? vin : NULL, kout,
                             vs ? vbuf : NULL, n, &d);
        char what[256];
        describe(c, thread_counts[t], what, sizeof what);
        if (st != PARSUM_OK)
            fail_msg("%s: %s (%s)", what, parsum_status_name(st),
                     parsum_last_error(tu_ctx));
        if (kout != NULL && memcmp(kbuf, kref, n * ks) != 0)
            fail_msg("%s: keys differ from the reference", what);
        if (vs && memcmp(vbuf, vref, n * vs) != 0)
            fail_msg("%s: values differ from the reference", what);
        if (c->vmode < 0 && memcmp(perm, pref, n * 8) != 0)
            fail_msg("%s: permutation differs from the reference", what);
    }
    free(keys);
    free(kref);
    free(vals);
    free(vref);
    free(kbuf);
    free(vbuf);
    free(perm);
    free(pref);
}

/* A random case of n elements: dtype, order, bit range, values, in place. */
static sort_case random_case(size_t n, tu_rng *r)
{
    sort_case c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.dtype = dtypes[tu_below(r, N_DTYPES)];
    c.pat = (int)tu_below(r, PAT_COUNT);
    c.flags = tu_below(r, 2) ? PARSUM_DESCENDING : 0;
    unsigned kbits = 8 * (unsigned)parsum_dtype_size(c.dtype);
    if (tu_below(r, 3) == 0) {
        c.begin = (unsigned)tu_below(r, kbits);
        c.end = c.begin + 1 + (unsigned)tu_below(r, kbits - c.begin);
    }
    c.vmode = value_modes[tu_below(r, N_VMODES)];
    c.inplace = tu_below(r, 3) == 0;
    c.nokeys = c.vmode != 0 && tu_below(r, 4) == 0;
    return c;
}

static void test_sorts(void **state)
{
    (void)state;
    static const size_t sizes[] = {0,    1,    2,     15,    16,    17,
                                   31,   33,   255,   256,   257,   511,
                                   512,  513,  1000,  4095,  4096,  5000,
                                   65535, 65536, 100003, 1000003};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        if (tu_quick && n > 200000)
            continue;
        int cases = n <= 5000 ? 40 : n <= 100003 ? 12 : 4;
        for (int k = 0; k < cases; k++) {
            tu_rng r = tu_rng_for(1, n, (uint64_t)k, 0);
            sort_case c = random_case(n, &r);
            check_case(&c, &r);
        }
    }
}

/* Every dtype, both orders, on the inputs that skip passes or hold
 * special floats, with keys only and with the permutation. */
static void test_patterns(void **state)
{
    (void)state;
    size_t n = 20000;
    for (size_t di = 0; di < N_DTYPES; di++)
        for (int pat = 0; pat < PAT_COUNT; pat++)
            for (int desc = 0; desc < 2; desc++)
                for (int vm = -1; vm <= 0; vm++) {
                    tu_rng r = tu_rng_for(2, di, (uint64_t)pat,
                                          (uint64_t)(desc * 2 + vm + 1));
                    sort_case c;
                    memset(&c, 0, sizeof c);
                    c.n = n;
                    c.dtype = dtypes[di];
                    c.pat = pat;
                    c.flags = desc ? PARSUM_DESCENDING : 0;
                    c.vmode = vm;
                    check_case(&c, &r);
                }
}

/* Offsets of segments of n elements: tiny (1 to 8), with empty ones,
 * medium (up to 3000) or a few big ones. */
static uint64_t *make_offsets(size_t n, int kind, tu_rng *r, size_t *nseg)
{
    uint64_t *o = tu_malloc(sizeof(uint64_t) * (3 * n + 8));
    size_t s = 0;
    uint64_t at = 0;
    o[s++] = 0;
    while (at < n) {
        uint64_t len = kind == 0   ? 1 + tu_below(r, 8)
                       : kind == 1 ? (tu_below(r, 4) == 0 ? 0 : 1 + tu_below(r, 40))
                       : kind == 2 ? 1 + tu_below(r, 3000)
                                   : n / 3 + 1;
        if (len > n - at)
            len = n - at;
        at += len;
        o[s++] = at;
        if (kind == 1 && tu_below(r, 7) == 0)
            o[s++] = at; /* an empty segment after it */
    }
    if (kind == 1)
        o[s++] = n; /* and one at the end */
    *nseg = s - 1;
    return o;
}

static void test_segmented(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 17, 1000, 70001, 300007};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int kind = 0; kind < 4; kind++)
            for (int k = 0; k < 6; k++) {
                size_t n = sizes[s];
                tu_rng r = tu_rng_for(3, n, (uint64_t)kind, (uint64_t)k);
                sort_case c = random_case(n, &r);
                if (c.vmode < 0)
                    c.vmode = 8; /* no segmented permutation */
                uint64_t *off = make_offsets(n, kind, &r, &c.nseg);
                c.offsets = off;
                check_case(&c, &r);
                free(off);
            }
}

PARSUM_TEST_MAIN(test_sort_cpu_paths)
{
    tu_init("test_sort_cpu_paths");
    if (tu_backend != PARSUM_BACKEND_CPU)
        return tu_finish(TU_SKIP_EXIT); /* CPU internals only */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorts),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_segmented),
    };
    return tu_finish(TU_RUN("test_sort_cpu_paths", tests));
}
