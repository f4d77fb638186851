/*
 * test_select_util.c - inputs and selectors shared by the selection tests
 * (test_select.c, test_partition.c): random keys with tag values, flag
 * patterns, selectors for the reference and for the call, the stability
 * check by tags.
 */
#include "test_select_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- inputs ------------------------------------------------------------- */

void tsel_data_upload(data *d)
{
    d->dkeys = tu_dev_alloc(d->n * d->ks);
    tu_upload(d->dkeys, d->keys, d->n * d->ks);
    d->dvals = NULL;
    if (d->vs > 0) {
        d->dvals = tu_dev_alloc(d->n * d->vs);
        tu_upload(d->dvals, d->vals, d->n * d->vs);
    }
}

/* Random keys of ks bytes; values: tags if vs == 8, else random. */
void tsel_data_random(data *d, tu_rng *r, size_t n, size_t ks, size_t vs)
{
    d->n = n;
    d->ks = ks;
    d->vs = vs;
    d->keys = tu_malloc(n * ks);
    d->vals = vs > 0 ? tu_malloc(n * vs) : NULL;
    for (size_t i = 0; i < n * ks; i++)
        d->keys[i] = (unsigned char)tu_next(r);
    d->tags = vs == 8;
    for (size_t i = 0; i < n && vs > 0; i++) {
        if (d->tags) {
            uint64_t t = i;
            memcpy(d->vals + 8 * i, &t, 8);
        } else {
            for (size_t b = 0; b < vs; b++)
                d->vals[i * vs + b] = (unsigned char)tu_next(r);
        }
    }
    d->tag[0] = '\0';
    tsel_data_upload(d);
}

void tsel_data_free(data *d)
{
    free(d->keys);
    free(d->vals);
    tu_dev_free(d->dkeys);
    tu_dev_free(d->dvals);
}

/* 0/1 flags of n elements, about pct % set (pct 0 and 100 exactly):
 * independent draws, or alternating runs (clustered) whose mean lengths
 * give the same share. */
unsigned char *tsel_make_flags(tu_rng *r, size_t n, int pct, bool clustered)
{
    unsigned char *f = tu_malloc(n);
    if (!clustered || pct == 0 || pct == 100) {
        for (size_t i = 0; i < n; i++)
            f[i] = pct == 100 || (pct > 0 && tu_below(r, 100) < (uint64_t)pct);
        return f;
    }
    double mean_on = pct <= 50 ? 200.0 : 200.0 * pct / (100 - pct);
    double mean_off = pct <= 50 ? 200.0 * (100 - pct) / pct : 200.0;
    bool on = tu_below(r, 2) != 0;
    for (size_t i = 0; i < n;) {
        double mean = on ? mean_on : mean_off;
        size_t len = 1 + (size_t)(2.0 * tu_uniform(r) * mean);
        for (size_t k = 0; k < len && i < n; k++)
            f[i++] = on;
        on = !on;
    }
    return f;
}

/* ---- selectors ---------------------------------------------------------- */

void tsel_selc_free(selc *s)
{
    free(s->hmem);
    tu_dev_free(s->dmem);
    s->hmem = s->dmem = NULL;
}

/* Flag bytes: any nonzero value selects. */
void tsel_selc_bytes(selc *s, tu_rng *r, const unsigned char *f, size_t n)
{
    memset(s, 0, sizeof *s);
    unsigned char *b = tu_malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = f[i] ? (unsigned char)(1 + tu_below(r, 255)) : 0;
    s->hmem = b;
    s->dmem = tu_dev_alloc(n);
    tu_upload(s->dmem, b, n);
    s->host.kind = s->dev.kind = PARSUM_SELECT_BYTES;
    s->host.bytes = b;
    s->dev.bytes = s->dmem;
    snprintf(s->name, sizeof s->name, "bytes");
}

/* Packed bits from bit bit_offset on, random bits around them. */
void tsel_selc_bits(selc *s, tu_rng *r, const unsigned char *f, size_t n,
                      size_t bit_offset)
{
    memset(s, 0, sizeof *s);
    size_t words = (bit_offset + n + 31) / 32 + 1;
    uint32_t *w = tu_malloc(words * 4);
    for (size_t i = 0; i < words; i++)
        w[i] = (uint32_t)tu_next(r);
    for (size_t i = 0; i < n; i++) {
        size_t b = bit_offset + i;
        uint32_t m = 1u << (b % 32);
        w[b / 32] = (w[b / 32] & ~m) | (f[i] ? m : 0);
    }
    s->hmem = w;
    s->dmem = tu_dev_alloc(words * 4);
    tu_upload(s->dmem, w, words * 4);
    s->host.kind = s->dev.kind = PARSUM_SELECT_BITS;
    s->host.bits = w;
    s->dev.bits = s->dmem;
    s->host.bit_offset = s->dev.bit_offset = bit_offset;
    snprintf(s->name, sizeof s->name, "bits@%zu", bit_offset);
}

void tsel_selc_pred(selc *s, parsum_dtype d, parsum_pred p,
                      parsum_scalar a, parsum_scalar b)
{
    memset(s, 0, sizeof *s);
    s->host.kind = PARSUM_SELECT_PREDICATE;
    s->host.dtype = d;
    s->host.pred = p;
    s->host.a = a;
    s->host.b = b;
    s->dev = s->host;
    static const char *const names[] = {"lt", "le", "gt", "ge", "eq",
                                        "ne", "nonzero", "in_range",
                                        "bit_set", "bit_clear"};
    char ba[64], bb[64];
    snprintf(s->name, sizeof s->name, "%s %s a=%s b=%s",
             parsum_dtype_name(d), names[p], tu_format(d, &a, ba),
             tu_format(d, &b, bb));
}

/* Tags (value = original index) in each group must increase (the
 * second group's decrease when rest_down: parsum_partition_unstable), and
 * the keys go with them. */
size_t tsel_check_tags(const data *d, const unsigned char *ko,
                         const uint64_t *tags, size_t k, size_t count,
                         bool rest_down, const char *what)
{
    for (size_t r = 0; r < count; r++) {
        bool group_start = r == 0 || r == k;
        bool down = rest_down && r > k;
        if ((!group_start && !down && tags[r] <= tags[r - 1]) ||
            (down && tags[r] >= tags[r - 1]) || tags[r] >= d->n ||
            (ko != NULL &&
             memcmp(ko + r * d->ks, d->keys + tags[r] * d->ks, d->ks) != 0)) {
            print_error("  %s: output %zu has tag %llu after %llu: not "
                        "stable, or the key does not go with it\n", what, r,
                        (unsigned long long)tags[r],
                        (unsigned long long)(r > 0 ? tags[r - 1] : 0));
            return 1;
        }
    }
    return 0;
}

void tsel_selc_custom(selc *s, const parsum_custom_pred *cp,
                        const char *name)
{
    memset(s, 0, sizeof *s);
    s->host.kind = s->dev.kind = PARSUM_SELECT_CUSTOM;
    s->host.custom = s->dev.custom = cp;
    snprintf(s->name, sizeof s->name, "custom %s", name);
}
