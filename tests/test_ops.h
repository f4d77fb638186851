/*
 * test_ops.h - custom operators that more than one test program runs
 * (test_custom.c for parsum_scan_custom / parsum_reduce_custom,
 * test_segmented_reduce.c for the segmented custom variants), kept in one
 * place so both test the same operator, with the same CUDA source, and
 * draw the same kind of input.
 *
 * Both operators are associative but NOT commutative, so any swap of
 * operands (a reverse scan combining in the wrong order, a carry applied
 * on the wrong side) changes the result:
 *   - aff32: composition of affine maps x -> a*x + b over uint32 (8-byte
 *     element), "f then g" = (f.a*g.a, g.a*f.b + g.b), identity (1, 0);
 *   - pt3: the seeds' example, the 3-D point (float x, y, z) farthest from
 *     the origin, ties going to the earlier point, identity the origin
 *     (12-byte element; integer coordinates keep the squared norms exact,
 *     so the CUDA version compiled by NVRTC decides every tie the same
 *     way).
 *
 * Every operator carries its CUDA source (cuda_type, cuda_type_name,
 * cuda_combine) for the CUDA backend.
 */
#ifndef PARSUM_TEST_OPS_H
#define PARSUM_TEST_OPS_H

#include "test_util.h"

#include <stdatomic.h>

typedef struct aff32 {
    uint32_t a, b;
} aff32;

typedef struct pt3 {
    float x, y, z;
} pt3;

/* aff32_op's user is a tag of test_ops.c; its combine sets this flag when
 * it gets any other user pointer, so a backend that does not pass
 * op->user through shows (reset it before a test, read it after). */
extern atomic_int test_ops_bad_user;

extern const parsum_custom_op aff32_op;
extern const parsum_custom_op pt3_op;

/* n random elements into buf: odd multipliers for aff32 (the product never
 * dies out); small integer coordinates (-6..6) for pt3 (many exact ties). */
void aff32_fill(tu_rng *r, void *buf, size_t n);
void pt3_fill(tu_rng *r, void *buf, size_t n);

#endif
