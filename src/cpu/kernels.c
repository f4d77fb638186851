/*
 * kernels.c - the CPU backend's inner loops for every dtype x op, written
 * once in plain C and compiled once per instruction set (CMake builds this
 * file with PARSUM_ISA=generic, avx2, avx512 and the matching -m flags).
 * Integer results are the same in every variant. Float reductions use a
 * fixed lane count (same bits everywhere); float scans use the variant's
 * vector width as block width, so they are bit-identical for any thread
 * count within a variant (FMA contraction is off for the whole build).
 *
 * kernels_type.inc holds the loops, written for one element type T; it is
 * included once per dtype below. Each loop takes the operator as a
 * compile-time constant (always-inline helpers called from a switch), so
 * the compiler emits one specialised loop per (dtype, op).
 */
#include "cpu.h"

#include "../core/scalar_ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef PARSUM_ISA
#error "compile kernels.c with -DPARSUM_ISA=<variant>"
#endif

#define PARSUM__CAT2(a, b) a##b
#define PARSUM__CAT(a, b) PARSUM__CAT2(a, b)
#define PARSUM__STR2(a) #a
#define PARSUM__STR(a) PARSUM__STR2(a)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Vector width of this variant, in bytes (see kernels_type.inc). */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define PARSUM__VEC_BYTES 64
#elif defined(__AVX2__)
#define PARSUM__VEC_BYTES 32
#else
#define PARSUM__VEC_BYTES 16
#endif

/* Bytes of independent accumulators in a reduction (the lane count fixes
 * float rounding, so it is the same in every variant). */
#ifndef PARSUM__REDUCE_LANE_BYTES
#define PARSUM__REDUCE_LANE_BYTES 128
#endif

/* Scans prefetch the thread's next chunk: this many cache lines per line
 * written (0 turns it off; 1, 2 and off measured in bench/RESULTS.md). */
#ifndef PARSUM__PREFETCH
#define PARSUM__PREFETCH 1
#endif

/* Non-temporal stores of one vector (x86 only; elsewhere plain stores). */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARSUM__HAVE_STREAM 1
#if PARSUM__VEC_BYTES == 64
#define PARSUM__STREAM(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#elif PARSUM__VEC_BYTES == 32
#define PARSUM__STREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (__m256i)(v))
#else
#define PARSUM__STREAM(p, v) _mm_stream_si128((__m128i *)(void *)(p), (__m128i)(v))
#endif
#define PARSUM__STREAM_FENCE() _mm_sfence()
#endif


/* One include per dtype: T is the element, W the scalar arithmetic type,
 * VT the vector lane type (unsigned for integers: defined wrap-around),
 * MT the signed integer of T's width (masks, shuffle indices), TMIN/TMAX
 * the identities of MAX/MIN, SFX the name suffix. */
#define T int8_t
#define VT uint8_t
#define MT int8_t
#define W uint32_t
#define TMIN INT8_MIN
#define TMAX INT8_MAX
#define SFX i8
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint8_t
#define VT uint8_t
#define MT int8_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT8_MAX
#define SFX u8
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int16_t
#define VT uint16_t
#define MT int16_t
#define W uint32_t
#define TMIN INT16_MIN
#define TMAX INT16_MAX
#define SFX i16
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint16_t
#define VT uint16_t
#define MT int16_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT16_MAX
#define SFX u16
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int32_t
#define VT uint32_t
#define MT int32_t
#define W uint32_t
#define TMIN INT32_MIN
#define TMAX INT32_MAX
#define SFX i32
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint32_t
#define VT uint32_t
#define MT int32_t
#define W uint32_t
#define TMIN 0
#define TMAX UINT32_MAX
#define SFX u32
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T int64_t
#define VT uint64_t
#define MT int64_t
#define W uint64_t
#define TMIN INT64_MIN
#define TMAX INT64_MAX
#define SFX i64
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T uint64_t
#define VT uint64_t
#define MT int64_t
#define W uint64_t
#define TMIN 0
#define TMAX UINT64_MAX
#define SFX u64
#define IS_FLOAT 0
#include "kernels_type.inc"

#define T float
#define VT float
#define MT int32_t
#define W float
#define TMIN (-INFINITY)
#define TMAX INFINITY
#define SFX f32
#define IS_FLOAT 1
#include "kernels_type.inc"

#define T double
#define VT double
#define MT int64_t
#define W double
#define TMIN (-(double)INFINITY)
#define TMAX ((double)INFINITY)
#define SFX f64
#define IS_FLOAT 1
#include "kernels_type.inc"

/* The table: rows in parsum_dtype order, columns in parsum_op order;
 * floats have no bitwise slots. */
#define ROW_INT(kind, sfx)                                                  \
    {kind##_##sfx##_sum, kind##_##sfx##_prod, kind##_##sfx##_min,            \
     kind##_##sfx##_max, kind##_##sfx##_and,  kind##_##sfx##_or,             \
     kind##_##sfx##_xor}
#define ROW_FLT(kind, sfx)                                                  \
    {kind##_##sfx##_sum, kind##_##sfx##_prod, kind##_##sfx##_min,            \
     kind##_##sfx##_max, NULL, NULL, NULL}
#define TABLE(kind)                                                         \
    {ROW_INT(kind, i8),  ROW_INT(kind, u8),  ROW_INT(kind, i16),             \
     ROW_INT(kind, u16), ROW_INT(kind, i32), ROW_INT(kind, u32),             \
     ROW_INT(kind, i64), ROW_INT(kind, u64), ROW_FLT(kind, f32),             \
     ROW_FLT(kind, f64)}

const parsum__cpu_kernels PARSUM__CAT(parsum__cpu_kernels_, PARSUM_ISA) = {
    PARSUM__STR(PARSUM_ISA),
    TABLE(reduce_run),
    TABLE(scan_chunk),
};
