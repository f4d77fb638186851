/* test_seg_util.c - segment distributions, offsets, packed flags and
 * their context copies for the segmented-operation tests (see
 * test_seg_util.h). */
#include "test_seg_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tseg_grid_caps[TSEG_GRID_CAPS] = {"", "1", "3"};

const char *tseg_dist_name(tseg_dist dist)
{
    static const char *const names[TSEG_DIST_COUNT] = {"len1", "rand8", "one",
                                                       "power", "empty"};
    return (unsigned)dist < TSEG_DIST_COUNT ? names[dist] : "?";
}

/* The length of the next segment, at most `left` (> 0 unless empties are
 * allowed). */
static size_t next_length(tu_rng *r, tseg_dist dist, size_t left)
{
    size_t len = 1;
    switch (dist) {
    case TSEG_LEN1: len = 1; break;
    case TSEG_RAND8: len = 1 + (size_t)tu_below(r, 8); break;
    case TSEG_ONE: len = left; break;
    case TSEG_POWER: {
        double u = 1.0 - tu_uniform(r); /* (0, 1] */
        double l = 1.0 / (u * u);
        len = l >= (double)left ? left : (size_t)l;
        break;
    }
    case TSEG_EMPTY:
        len = tu_below(r, 3) == 0 ? 0 : 1 + (size_t)tu_below(r, 16);
        break;
    default: break;
    }
    return len < left ? len : left;
}

size_t tseg_offsets(tu_rng *r, tseg_dist dist, size_t n, uint64_t **offsets)
{
    /* At most n segments, plus the empties of TSEG_EMPTY: one at the start
     * and two at the end, and zero-length draws (a third of all). */
    size_t cap = dist == TSEG_EMPTY ? 3 * n + 8 : n + 2;
    uint64_t *o = tu_malloc((cap + 1) * sizeof *o);
    size_t k = 0, pos = 0;
    o[0] = 0;
    if (dist == TSEG_EMPTY)
        o[++k] = 0;
    if (dist == TSEG_ONE) {
        o[++k] = n;
    } else {
        while (pos < n && k + 3 < cap) {
            pos += next_length(r, dist, n - pos);
            o[++k] = pos;
        }
        if (pos < n) /* never for the caps above; keeps o valid anyway */
            o[++k] = pos = n;
    }
    if (dist == TSEG_EMPTY) {
        o[++k] = n;
        o[++k] = n;
    }
    *offsets = o;
    return k;
}

uint32_t *tseg_flags(tu_rng *r, const uint64_t *offsets, size_t nseg,
                     size_t n, size_t bit_offset, size_t *nwords)
{
    size_t words = (bit_offset + n + 31) / 32 + 1; /* one garbage word more */
    uint32_t *f = tu_malloc(words * sizeof *f);
    for (size_t w = 0; w < words; w++)
        f[w] = (uint32_t)tu_next(r);
    /* Clear the flags of elements 1 .. n-1, then set the heads. */
    for (size_t i = 1; i < n; i++) {
        size_t b = bit_offset + i;
        f[b / 32] &= ~(1u << (b % 32));
    }
    for (size_t s = 0; s < nseg; s++) {
        if (offsets[s] == 0 || offsets[s] >= n)
            continue;
        size_t b = bit_offset + (size_t)offsets[s];
        f[b / 32] |= 1u << (b % 32);
    }
    *nwords = words;
    return f;
}

static void desc_upload(tseg_desc *d, const void *host, size_t bytes)
{
    d->host_mem = tu_malloc(bytes);
    memcpy(d->host_mem, host, bytes);
    d->dev_mem = tu_dev_alloc(bytes);
    tu_upload(d->dev_mem, host, bytes);
}

void tseg_desc_offsets(tseg_desc *d, const uint64_t *offsets, size_t nseg)
{
    memset(d, 0, sizeof *d);
    desc_upload(d, offsets, (nseg + 1) * sizeof *offsets);
    d->host.kind = d->dev.kind = PARSUM_SEG_OFFSETS;
    d->host.num_segments = d->dev.num_segments = nseg;
    d->host.offsets = d->host_mem;
    d->dev.offsets = d->dev_mem;
    snprintf(d->name, sizeof d->name, "offsets");
}

void tseg_desc_flags(tseg_desc *d, const uint32_t *flags, size_t nwords,
                     size_t bit_offset)
{
    memset(d, 0, sizeof *d);
    desc_upload(d, flags, nwords * sizeof *flags);
    d->host.kind = d->dev.kind = PARSUM_SEG_FLAGS;
    d->host.flags_bit_offset = d->dev.flags_bit_offset = bit_offset;
    d->host.flags = d->host_mem;
    d->dev.flags = d->dev_mem;
    snprintf(d->name, sizeof d->name, "flags@%zu", bit_offset);
}

void tseg_desc_free(tseg_desc *d)
{
    free(d->host_mem);
    tu_dev_free(d->dev_mem);
    d->host_mem = d->dev_mem = NULL;
}

size_t tseg_compare_bytes(const void *want, const void *got, size_t n,
                          size_t es, const char *what)
{
    const unsigned char *w = want, *g = got;
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(w + i * es, g + i * es, es) != 0) {
            if (bad++ == 0)
                first = i;
        }
    }
    if (bad == 0)
        return 0;
    char hw[40], hg[40];
    size_t k = es < 16 ? es : 16;
    for (size_t b = 0; b < k; b++) {
        sprintf(hw + 2 * b, "%02x", w[first * es + b]);
        sprintf(hg + 2 * b, "%02x", g[first * es + b]);
    }
    print_error("  MISMATCH %s: first at index %zu of %zu (%zu in all): "
                "expected bytes %s%s, got %s%s\n",
                what, first, n, bad, hw, k < es ? "..." : "", hg,
                k < es ? "..." : "");
    return bad;
}

void *tseg_download_copy(const void *dev, size_t bytes)
{
    void *h = tu_malloc(bytes);
    tu_download(h, dev, bytes);
    return h;
}
