/*
 * scalar_ops.h - the meaning of every built-in operator, in one place.
 *
 * Each macro combines a (the earlier operand) with b. T is the element
 * type; W is the type the arithmetic is done in: an unsigned type at least
 * as wide as int for integers, so that wrap-around is defined behaviour
 * (uint16_t * uint16_t would otherwise promote to a signed int and may
 * overflow), and T itself for floats. The conversion back to a signed T
 * wraps on every compiler parsum supports (two's complement, as C23
 * requires).
 *
 * MIN/MAX: "b wins only if strictly better, or if a is NaN". This is the
 * leftmost extreme, ignores NaN operands like fmin/fmax, and is
 * associative for every input, which keeps chunked and serial evaluation
 * equal. For integers a != a is false and compiles away.
 */
#ifndef PARSUM_SCALAR_OPS_H
#define PARSUM_SCALAR_OPS_H

#include "parsum.h"

#define PARSUM__OP_SUM(T, W, a, b) ((T)((W)(a) + (W)(b)))
#define PARSUM__OP_PROD(T, W, a, b) ((T)((W)(a) * (W)(b)))
#define PARSUM__OP_MIN(T, W, a, b) (((b) < (a) || (a) != (a)) ? (b) : (a))
#define PARSUM__OP_MAX(T, W, a, b) (((b) > (a) || (a) != (a)) ? (b) : (a))
#define PARSUM__OP_AND(T, W, a, b) ((T)((a) & (b)))
#define PARSUM__OP_OR(T, W, a, b) ((T)((a) | (b)))
#define PARSUM__OP_XOR(T, W, a, b) ((T)((a) ^ (b)))

/* out = a (+) b for one element of dtype under op, through memcpy, so the
 * pointers need no alignment and out may alias a or b. The caller has
 * validated dtype and op. Slow: for the reference backend and for setup. */
void parsum__combine_scalar(parsum_dtype dtype, parsum_op op, const void *a,
                            const void *b, void *out);

#endif
