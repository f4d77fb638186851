/*
 * test_misaligned.h - what the two files of the test_misaligned program
 * share (the program is described at the top of test_misaligned.c, which
 * defines all of this but the two tests of test_misaligned_select.c):
 * arrays at shifted addresses in the context's memory and their checks,
 * random inputs, and the keys and values of a keyed call. Every name
 * starts with tmis_, apart from the types, so that nothing clashes with
 * the other programs linked into parsum_tests.
 */
#ifndef PARSUM_TEST_MISALIGNED_H
#define PARSUM_TEST_MISALIGNED_H

#include "test_seg_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- shifted arrays ----------------------------------------------------- */

/* The shift of an array of es-byte elements in round `round`; arrays of
 * one call pass different roles (0 inputs, 1 outputs, ...) to differ. */
size_t tmis_shift_of(size_t es, size_t round, size_t role);
/* Rounds that give every array of elements of size a or b each shift. */
size_t tmis_rounds_for(size_t a, size_t b);
/* The two sizes of a call whose smallest element has es bytes. */
void tmis_sizes_for(size_t es, size_t sizes[2]);

/* An array of cap elements of dtype d in context memory at a shifted
 * address; host: its contents for an input (NULL for an output). */
typedef struct arr {
    tu_shifted s;
    parsum_dtype d;
    size_t es, cap;
    const void *host;
    const char *name;
} arr;

/* An output (poisoned), and an input holding host's n elements. */
arr tmis_arr_out(const char *name, size_t cap, parsum_dtype d, size_t shift);
arr tmis_arr_in(const char *name, const void *host, size_t n, parsum_dtype d,
                size_t shift);
/* The array as uint64_t (indices, lengths, offsets, permutations). */
uint64_t *tmis_u64p(const arr *a);
void tmis_arr_free(arr *a);

/* The checks: each reports what went wrong under `what` and counts it in
 * *failures. Guards intact; an input unchanged, guards intact; an output's
 * first k elements equal want, with rest_poison the rest of its room still
 * poison, guards intact. */
void tmis_check_guards(const arr *a, const char *what, size_t *failures);
void tmis_check_in(const arr *a, const char *what, size_t *failures);
void tmis_check_out(const arr *a, const void *want, size_t k,
                    bool rest_poison, const char *what, size_t *failures);
/* The call returned PARSUM_OK; a count (`name`) is the expected one. */
bool tmis_call_ok(parsum_status st, const char *what, size_t *failures);
bool tmis_count_ok(size_t got, size_t want, const char *name,
                   const char *what, size_t *failures);

/* ---- inputs ------------------------------------------------------------- */

/* n random elements of d (TU_DATA_EXACT for SUM). */
void *tmis_random_data(tu_rng *r, parsum_dtype d, size_t n);
/* n keys of d in runs drawn from dist; each run's key is the previous
 * one with one random bit flipped (so consecutive runs always differ). */
void *tmis_run_keys(tu_rng *r, parsum_dtype d, size_t n, tseg_dist dist);
/* The unsigned dtype of es-byte elements (moved, never combined). */
parsum_dtype tmis_raw_dtype(size_t es);

/* ---- rounds ------------------------------------------------------------- */

/* Calls fn(n, round, arg) for both sizes of a call whose elements have a
 * and b bytes (tmis_sizes_for of the smaller), and every round
 * (tmis_rounds_for(a, b)). */
void tmis_each_round(size_t a, size_t b,
                     void (*fn)(size_t n, size_t round, void *arg),
                     void *arg);

/* ---- keyed calls -------------------------------------------------------- */

/* Keys (runs of 1..8) and values of a keyed call, on the host and at
 * shifted addresses in the context. */
typedef struct keyed {
    parsum_dtype kd, vd;
    size_t n, ks, vs, round;
    void *keys, *vals;
    arr K, V;
    char tag[200];
} keyed;

/* n keys of kd and values of vd for round `round`, and k->tag naming them
 * (and the backend and seed) in messages. */
void tmis_keyed_make(keyed *k, parsum_dtype kd, parsum_dtype vd, size_t n,
                     size_t round);
void tmis_keyed_free(keyed *k);

/* ---- the tests of test_misaligned_select.c ------------------------------ */

/* Selections and partitions (test_select_partition). */
void tmis_test_select_partition(void **state);
/* unique, unique_by_key and the run-length encodings (test_unique_rle). */
void tmis_test_unique_rle(void **state);

#endif /* PARSUM_TEST_MISALIGNED_H */
