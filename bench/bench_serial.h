/*
 * bench_serial.h - the serial loops' building blocks shared by the CPU
 * benchmarks (bench_cpu.c, bench_cpu_seg.c): one macro per operator, and
 * dispatch over every (dtype, op) pair. A LOOP(T, OP) macro written once
 * becomes a typed loop per pair: ALL_DTYPES(LOOP) expands to a switch on
 * the variables `dtype` and `op` in scope.
 */
#ifndef PARSUM_BENCH_SERIAL_H
#define PARSUM_BENCH_SERIAL_H

#include "parsum.h"

/* Integer SUM, PROD and the bitwise ops run on the unsigned type of the
 * same width (two's complement wrapping, as parsum defines them); the
 * `1u *` promotes narrow types to unsigned int instead of int. */
#define OP_ADD(T, acc, v) acc = (T)(1u * (acc) + (v))
#define OP_MUL(T, acc, v) acc = (T)(1u * (acc) * (v))
#define OP_MIN(T, acc, v) acc = ((v) < (acc) ? (v) : (acc))
#define OP_MAX(T, acc, v) acc = ((v) > (acc) ? (v) : (acc))
#define OP_AND(T, acc, v) acc = (T)((acc) & (v))
#define OP_OR(T, acc, v) acc = (T)((acc) | (v))
#define OP_XOR(T, acc, v) acc = (T)((acc) ^ (v))

/* LOOP over every op of an integer type (S signed or not, U unsigned). */
#define INT_OPS(LOOP, S, U)                                                    \
    switch (op) {                                                              \
    case PARSUM_SUM: LOOP(U, OP_ADD); break;                                   \
    case PARSUM_PROD: LOOP(U, OP_MUL); break;                                  \
    case PARSUM_MIN: LOOP(S, OP_MIN); break;                                   \
    case PARSUM_MAX: LOOP(S, OP_MAX); break;                                   \
    case PARSUM_AND: LOOP(U, OP_AND); break;                                   \
    case PARSUM_OR: LOOP(U, OP_OR); break;                                     \
    case PARSUM_XOR: LOOP(U, OP_XOR); break;                                   \
    }

#define FLOAT_OPS(LOOP, T)                                                     \
    switch (op) {                                                              \
    case PARSUM_SUM: LOOP(T, OP_ADD); break;                                   \
    case PARSUM_PROD: LOOP(T, OP_MUL); break;                                  \
    case PARSUM_MIN: LOOP(T, OP_MIN); break;                                   \
    case PARSUM_MAX: LOOP(T, OP_MAX); break;                                   \
    default: break;                                                            \
    }

#define ALL_DTYPES(LOOP)                                                       \
    switch (dtype) {                                                           \
    case PARSUM_I8: INT_OPS(LOOP, int8_t, uint8_t); break;                     \
    case PARSUM_U8: INT_OPS(LOOP, uint8_t, uint8_t); break;                    \
    case PARSUM_I16: INT_OPS(LOOP, int16_t, uint16_t); break;                  \
    case PARSUM_U16: INT_OPS(LOOP, uint16_t, uint16_t); break;                 \
    case PARSUM_I32: INT_OPS(LOOP, int32_t, uint32_t); break;                  \
    case PARSUM_U32: INT_OPS(LOOP, uint32_t, uint32_t); break;                 \
    case PARSUM_I64: INT_OPS(LOOP, int64_t, uint64_t); break;                  \
    case PARSUM_U64: INT_OPS(LOOP, uint64_t, uint64_t); break;                 \
    case PARSUM_F32: FLOAT_OPS(LOOP, float); break;                            \
    case PARSUM_F64: FLOAT_OPS(LOOP, double); break;                           \
    }

#endif
