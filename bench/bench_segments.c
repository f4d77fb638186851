/* bench_segments.c - segment-length distributions (see bench_segments.h). */
#include "bench_segments.h"

#include <math.h>
#include <string.h>

static const char *const names[PB_SEG_DIST_COUNT] = {
    "len1", "len1-8", "one", "powerlaw", "uniform1000"};

const char *pb_seg_dist_name(pb_seg_dist d)
{
    return (unsigned)d < PB_SEG_DIST_COUNT ? names[d] : NULL;
}

int pb_seg_dist_parse(const char *name, pb_seg_dist *out)
{
    for (int d = 0; d < PB_SEG_DIST_COUNT; d++)
        if (strcmp(name, names[d]) == 0) {
            *out = (pb_seg_dist)d;
            return 0;
        }
    return -1;
}

/* splitmix64: a fast, well-mixed stream from any seed. */
static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A length >= 1 of distribution d (before the cap at what is left). */
static uint64_t draw(pb_seg_dist d, uint64_t *state, uint64_t n)
{
    switch (d) {
    case PB_SEG_LEN1:
        return 1;
    case PB_SEG_LEN1_8:
        return 1 + next(state) % 8;
    case PB_SEG_ONE:
        return n;
    case PB_SEG_POWERLAW: {
        /* inverse CDF of the Pareto law; u in (0, 1] */
        double u = ((double)(next(state) >> 11) + 1.0) * 0x1.0p-53;
        double x = floor(pow(u, -1.0 / 1.2));
        return x >= (double)n ? n : (uint64_t)x;
    }
    case PB_SEG_UNIFORM1000:
    default:
        return 1 + next(state) % 1999;
    }
}

size_t pb_seg_offsets(pb_seg_dist d, size_t n, uint64_t seed,
                      uint64_t *offsets)
{
    uint64_t state = seed ^ ((uint64_t)d << 56), pos = 0;
    size_t k = 0;
    offsets[0] = 0;
    while (pos < n) {
        uint64_t len = draw(d, &state, n);
        pos += len < n - pos ? len : n - pos;
        offsets[++k] = pos;
    }
    return k;
}

void pb_seg_flags(const uint64_t *offsets, size_t nseg, size_t n,
                  uint32_t *flags)
{
    memset(flags, 0, (n + 31) / 32 * sizeof *flags);
    for (size_t s = 0; s < nseg; s++)
        if (offsets[s] < n)
            flags[offsets[s] / 32] |= 1u << (offsets[s] % 32);
}

void pb_seg_keys(const uint64_t *offsets, size_t nseg, size_t key_size,
                 void *keys)
{
    unsigned char *k = (unsigned char *)keys;
    for (size_t s = 0; s < nseg; s++) {
        uint64_t v = (uint64_t)s;
        unsigned char b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(v >> (8 * i));
        for (uint64_t i = offsets[s]; i < offsets[s + 1]; i++)
            memcpy(k + i * key_size, b, key_size);
    }
}
