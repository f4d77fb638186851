/* scalar_ops.c - one-element combine for any dtype and op (see
 * scalar_ops.h). The reference backend is built on it. */
#include "scalar_ops.h"

#include <stdint.h>
#include <string.h>

/* Load a and b as T, apply op in W, store. A template body included once
 * per dtype below keeps each case's code in one readable place. */
#define COMBINE_CASE(T, W, IS_FLOAT)                                       \
    {                                                                      \
        T x, y, r;                                                         \
        memcpy(&x, a, sizeof x);                                           \
        memcpy(&y, b, sizeof y);                                           \
        r = combine_##T(op, x, y);                                         \
        memcpy(out, &r, sizeof r);                                         \
        return;                                                            \
    }

#define DEFINE_COMBINE_INT(T, W)                                           \
    static T combine_##T(parsum_op op, T x, T y)                           \
    {                                                                      \
        switch (op) {                                                      \
        case PARSUM_SUM: return PARSUM__OP_SUM(T, W, x, y);                \
        case PARSUM_PROD: return PARSUM__OP_PROD(T, W, x, y);              \
        case PARSUM_MIN: return PARSUM__OP_MIN(T, W, x, y);                \
        case PARSUM_MAX: return PARSUM__OP_MAX(T, W, x, y);                \
        case PARSUM_AND: return PARSUM__OP_AND(T, W, x, y);                \
        case PARSUM_OR: return PARSUM__OP_OR(T, W, x, y);                  \
        case PARSUM_XOR: return PARSUM__OP_XOR(T, W, x, y);                \
        }                                                                  \
        return x;                                                          \
    }
#define DEFINE_COMBINE_FLOAT(T)                                            \
    static T combine_##T(parsum_op op, T x, T y)                           \
    {                                                                      \
        switch (op) {                                                      \
        case PARSUM_SUM: return PARSUM__OP_SUM(T, T, x, y);                \
        case PARSUM_PROD: return PARSUM__OP_PROD(T, T, x, y);              \
        case PARSUM_MIN: return PARSUM__OP_MIN(T, T, x, y);                \
        case PARSUM_MAX: return PARSUM__OP_MAX(T, T, x, y);                \
        default: return x;                                                 \
        }                                                                  \
    }

DEFINE_COMBINE_INT(int8_t, uint32_t)
DEFINE_COMBINE_INT(uint8_t, uint32_t)
DEFINE_COMBINE_INT(int16_t, uint32_t)
DEFINE_COMBINE_INT(uint16_t, uint32_t)
DEFINE_COMBINE_INT(int32_t, uint32_t)
DEFINE_COMBINE_INT(uint32_t, uint32_t)
DEFINE_COMBINE_INT(int64_t, uint64_t)
DEFINE_COMBINE_INT(uint64_t, uint64_t)
typedef float float_t_;
typedef double double_t_;
DEFINE_COMBINE_FLOAT(float_t_)
DEFINE_COMBINE_FLOAT(double_t_)

void parsum__combine_scalar(parsum_dtype dtype, parsum_op op, const void *a,
                            const void *b, void *out)
{
    switch (dtype) {
    case PARSUM_I8: COMBINE_CASE(int8_t, uint32_t, 0)
    case PARSUM_U8: COMBINE_CASE(uint8_t, uint32_t, 0)
    case PARSUM_I16: COMBINE_CASE(int16_t, uint32_t, 0)
    case PARSUM_U16: COMBINE_CASE(uint16_t, uint32_t, 0)
    case PARSUM_I32: COMBINE_CASE(int32_t, uint32_t, 0)
    case PARSUM_U32: COMBINE_CASE(uint32_t, uint32_t, 0)
    case PARSUM_I64: COMBINE_CASE(int64_t, uint64_t, 0)
    case PARSUM_U64: COMBINE_CASE(uint64_t, uint64_t, 0)
    case PARSUM_F32: COMBINE_CASE(float_t_, float, 1)
    case PARSUM_F64: COMBINE_CASE(double_t_, double, 1)
    }
}
