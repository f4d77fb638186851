/*
 * sort_keys.h - the "ordered bits" of a sort key (parsum.h, "Sorting"): an
 * unsigned integer of the key's width that compares as the keys must be
 * ordered, in one place for the CPU and CUDA radix sorts and the
 * reference, so that all of them order exactly alike.
 *
 *   unsigned  the key itself
 *   signed    sign bit flipped (two's complement -> offset binary)
 *   float     non-negative: sign bit set; negative: every bit flipped
 *             (-0.0 then lands just below +0.0). NaNs first lose their
 *             sign, so every NaN lands above +inf, ordered by payload.
 *
 * Descending order flips every ordered bit (a stable sort of the flipped
 * keys is the stable descending sort). The transform is not invertible
 * for NaNs (their sign is dropped), so the sorts move the original key
 * bits and compute the ordered bits on the fly in every pass.
 */
#ifndef PARSUM_SORT_KEYS_H
#define PARSUM_SORT_KEYS_H

#include <stdint.h>

#ifndef PARSUM__HD
#ifdef __CUDACC__
#define PARSUM__HD __host__ __device__ __forceinline__
#else
#define PARSUM__HD static inline
#endif
#endif

PARSUM__HD uint8_t parsum__ord_i8(uint8_t b) { return (uint8_t)(b ^ 0x80u); }
PARSUM__HD uint16_t parsum__ord_i16(uint16_t b)
{
    return (uint16_t)(b ^ 0x8000u);
}
PARSUM__HD uint32_t parsum__ord_i32(uint32_t b) { return b ^ 0x80000000u; }
PARSUM__HD uint64_t parsum__ord_i64(uint64_t b)
{
    return b ^ 0x8000000000000000ull;
}

/* b: the raw bits of a float. */
PARSUM__HD uint32_t parsum__ord_f32(uint32_t b)
{
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: drop the sign */
        b &= 0x7FFFFFFFu;
    uint32_t mask = (uint32_t)(-(int32_t)(b >> 31)) | 0x80000000u;
    return b ^ mask;
}

PARSUM__HD uint64_t parsum__ord_f64(uint64_t b)
{
    if ((b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull)
        b &= 0x7FFFFFFFFFFFFFFFull;
    uint64_t mask = (uint64_t)(-(int64_t)(b >> 63)) | 0x8000000000000000ull;
    return b ^ mask;
}

#endif
