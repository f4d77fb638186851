/* types.c - the dtype and operator tables: sizes, names, identities. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const size_t dtype_sizes[PARSUM_DTYPE_COUNT] = {1, 1, 2, 2, 4,
                                                       4, 8, 8, 4, 8};
static const char *const dtype_names[PARSUM_DTYPE_COUNT] = {
    "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"};
static const char *const op_names[PARSUM_OP_COUNT] = {
    "sum", "prod", "min", "max", "and", "or", "xor"};

bool parsum__dtype_valid(parsum_dtype d)
{
    return (unsigned)d < PARSUM_DTYPE_COUNT;
}

bool parsum__dtype_is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

bool parsum__op_valid(parsum_op op)
{
    return (unsigned)op < PARSUM_OP_COUNT;
}

size_t parsum_dtype_size(parsum_dtype dtype)
{
    return parsum__dtype_valid(dtype) ? dtype_sizes[dtype] : 0;
}

const char *parsum_dtype_name(parsum_dtype dtype)
{
    return parsum__dtype_valid(dtype) ? dtype_names[dtype] : NULL;
}

const char *parsum_op_name(parsum_op op)
{
    return parsum__op_valid(op) ? op_names[op] : NULL;
}

/* Identity of MIN is the type's largest value, of MAX its smallest. */
static void extreme(parsum_dtype d, bool largest, void *out)
{
    switch (d) {
    case PARSUM_I8: { int8_t v = largest ? INT8_MAX : INT8_MIN; memcpy(out, &v, 1); break; }
    case PARSUM_U8: { uint8_t v = largest ? UINT8_MAX : 0; memcpy(out, &v, 1); break; }
    case PARSUM_I16: { int16_t v = largest ? INT16_MAX : INT16_MIN; memcpy(out, &v, 2); break; }
    case PARSUM_U16: { uint16_t v = largest ? UINT16_MAX : 0; memcpy(out, &v, 2); break; }
    case PARSUM_I32: { int32_t v = largest ? INT32_MAX : INT32_MIN; memcpy(out, &v, 4); break; }
    case PARSUM_U32: { uint32_t v = largest ? UINT32_MAX : 0; memcpy(out, &v, 4); break; }
    case PARSUM_I64: { int64_t v = largest ? INT64_MAX : INT64_MIN; memcpy(out, &v, 8); break; }
    case PARSUM_U64: { uint64_t v = largest ? UINT64_MAX : 0; memcpy(out, &v, 8); break; }
    case PARSUM_F32: { float v = largest ? INFINITY : -INFINITY; memcpy(out, &v, 4); break; }
    case PARSUM_F64: { double v = largest ? INFINITY : -INFINITY; memcpy(out, &v, 8); break; }
    }
}

parsum_status parsum_op_identity(parsum_dtype dtype, parsum_op op,
                                 void *identity)
{
    if (identity == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (!parsum__dtype_valid(dtype))
        return PARSUM_ERR_INVALID_DTYPE;
    if (!parsum__op_valid(op))
        return PARSUM_ERR_INVALID_OP;
    bool is_float = parsum__dtype_is_float(dtype);
    if (is_float && op >= PARSUM_AND)
        return PARSUM_ERR_DTYPE_OP_MISMATCH;
    size_t size = dtype_sizes[dtype];
    switch (op) {
    case PARSUM_SUM:
    case PARSUM_OR:
    case PARSUM_XOR:
        memset(identity, 0, size); /* +0.0 is all zero bits too */
        break;
    case PARSUM_AND:
        memset(identity, 0xff, size);
        break;
    case PARSUM_PROD:
        if (dtype == PARSUM_F32) {
            float one = 1.0f;
            memcpy(identity, &one, 4);
        } else if (dtype == PARSUM_F64) {
            double one = 1.0;
            memcpy(identity, &one, 8);
        } else {
            /* Little- or big-endian, an integer 1 is the value 1. */
            uint64_t one = 1;
            switch (size) {
            case 1: { uint8_t v = 1; memcpy(identity, &v, 1); break; }
            case 2: { uint16_t v = 1; memcpy(identity, &v, 2); break; }
            case 4: { uint32_t v = 1; memcpy(identity, &v, 4); break; }
            default: memcpy(identity, &one, 8); break;
            }
        }
        break;
    case PARSUM_MIN:
        extreme(dtype, true, identity);
        break;
    case PARSUM_MAX:
        extreme(dtype, false, identity);
        break;
    }
    return PARSUM_OK;
}
