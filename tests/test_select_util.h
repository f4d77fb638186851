/*
 * test_select_util.h - inputs and selectors shared by the selection tests
 * (test_select.c, test_partition.c; test_select_util.c).
 */
#ifndef PARSUM_TEST_SELECT_UTIL_H
#define PARSUM_TEST_SELECT_UTIL_H

#include "test_seg_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n keys of ks bytes and optional values of vs bytes (tags: value i = i,
 * when vs == 8), on the host and in the context. */
typedef struct data {
    size_t n, ks, vs;
    unsigned char *keys, *vals;
    void *dkeys, *dvals;
    bool tags;
    char tag[200];
} data;

/* Uploads d's keys and values to the context (dkeys, dvals). */
void tsel_data_upload(data *d);
/* Random keys of ks bytes; values: tags if vs == 8, else random. */
void tsel_data_random(data *d, tu_rng *r, size_t n, size_t ks, size_t vs);
void tsel_data_free(data *d);
/* 0/1 flags of n elements, about pct % set (pct 0 and 100 exactly):
 * independent draws, or alternating runs (clustered). */
unsigned char *tsel_make_flags(tu_rng *r, size_t n, int pct, bool clustered);

/* A selector for the reference (host) and for the call (context). */
typedef struct selc {
    parsum_selector host, dev;
    void *hmem, *dmem;
    char name[64];
} selc;

void tsel_selc_free(selc *s);
/* Flag bytes: any nonzero value selects. */
void tsel_selc_bytes(selc *s, tu_rng *r, const unsigned char *f, size_t n);
/* Packed bits from bit bit_offset on, random bits around them. */
void tsel_selc_bits(selc *s, tu_rng *r, const unsigned char *f, size_t n,
                    size_t bit_offset);
void tsel_selc_pred(selc *s, parsum_dtype d, parsum_pred p, parsum_scalar a,
                    parsum_scalar b);
void tsel_selc_custom(selc *s, const parsum_custom_pred *cp,
                      const char *name);
/* Tags (value = original index) in each group must increase (the second
 * group's decrease when rest_down), and the keys go with them; returns 1
 * (after a message) or 0. */
size_t tsel_check_tags(const data *d, const unsigned char *ko,
                       const uint64_t *tags, size_t k, size_t count,
                       bool rest_down, const char *what);

#endif /* PARSUM_TEST_SELECT_UTIL_H */
