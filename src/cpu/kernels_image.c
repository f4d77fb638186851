/*
 * kernels_image.c - the row kernels of the summed-area table and the row
 * prefix sums the box filter shares (see image_kernels.h; the box filter's
 * own kernels are in kernels_box.c), compiled once per instruction set
 * like kernels.c (CMake builds this file with PARSUM_ISA=generic, avx2,
 * avx512).
 *
 * Vertical work (column sums) is element-wise: plain loops the compiler
 * vectorizes. The one horizontal step, a prefix sum along a row with the channel count C as
 * stride, is done in registers on AVX-512 (Hillis and Steele, "Data
 * parallel algorithms", CACM 1986): a vector of L samples adds itself
 * shifted by C, 2C, 4C ... lanes (a permute with zeroing), then the carry
 * of the previous vector, whose lanes L - C .. L - 1 hold the running sums
 * of the C channels (one more permute spreads them to every lane of their
 * channel). Integer sums are exact modulo 2^bits in any grouping, so every
 * variant gives the same bits. Float accumulators are always summed
 * sequentially per channel, in scalar code, so their rounding does not
 * depend on the instruction set either (FMA contraction is off).
 */
#include "kernels_image_util.h"

/* ---- column sums of a band ---------------------------------------------- */

/* tmp[i] = the sum of bytes i of rows r0 .. r1 - 1 (at most 257 rows, so
 * 255 * 257 fits in 16 bits). */
ALWAYS_INLINE void u8_rows_sum16(const char *src, size_t pitch, size_t r0,
                                 size_t r1, size_t n, uint16_t *tmp)
{
    memset(tmp, 0, n * sizeof *tmp);
    for (size_t r = r0; r < r1; r++) {
        const uint8_t *b = (const uint8_t *)(src + r * pitch);
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint16_t)(tmp[i] + b[i]);
    }
}

/* acc[i] += f(src[r][i]) over the band's rows. Bytes (not squared) are
 * first summed in 16 bits, 257 rows at a time (255 * 257 < 2^16): a
 * quarter of the widening work, the expensive part of these adds. */
ALWAYS_INLINE void colsum_u32(const char *src, size_t pitch, size_t rows,
                              uint32_t *acc, size_t n, int pix, int sq,
                              uint16_t *tmp)
{
    if (pix == U8 && !sq) {
        for (size_t r0 = 0; r0 < rows; r0 += 257) {
            size_t r1 = rows - r0 < 257 ? rows : r0 + 257;
            u8_rows_sum16(src, pitch, r0, r1, n, tmp);
            for (size_t i = 0; i < n; i++)
                acc[i] += tmp[i];
        }
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        const char *row = src + r * pitch;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)ld_u(row, i, pix);
            acc[i] += sq ? v * v : v;
        }
    }
}

ALWAYS_INLINE void colsum_u64(const char *src, size_t pitch, size_t rows,
                              uint64_t *acc, size_t n, int pix, int sq,
                              uint16_t *tmp)
{
    if (pix == U8 && !sq) {
        for (size_t r0 = 0; r0 < rows; r0 += 257) {
            size_t r1 = rows - r0 < 257 ? rows : r0 + 257;
            u8_rows_sum16(src, pitch, r0, r1, n, tmp);
            for (size_t i = 0; i < n; i++)
                acc[i] += tmp[i];
        }
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        const char *row = src + r * pitch;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = ld_u(row, i, pix);
            acc[i] += sq ? v * v : v;
        }
    }
}

/* The float accumulators' f(v): the reference's order of operations. */
ALWAYS_INLINE double fval(const void *src, size_t i, int pix, int sq,
                          const double *off)
{
    double v = ld_f(src, i, pix);
    if (off != NULL)
        v -= off[i];
    return sq ? v * v : v;
}

ALWAYS_INLINE void colsum_f64(const char *src, size_t pitch, size_t rows,
                              double *acc, size_t n, int pix, int sq,
                              const double *off)
{
    for (size_t r = 0; r < rows; r++) {
        const char *row = src + r * pitch;
        if (off == NULL) {
            for (size_t i = 0; i < n; i++)
                acc[i] += fval(row, i, pix, sq, NULL);
        } else {
            for (size_t i = 0; i < n; i++)
                acc[i] += fval(row, i, pix, sq, off);
        }
    }
}

/* ---- row prefix sums: scalar ---------------------------------------------- */

/* acc[i] += the stride-C prefix of f(src) (scalar, any C from 1 to 4). The
 * row holds whole pixels, so sample i belongs to channel i % C. */
#define SCALAR_ROWSCAN(T, LOAD)                                             \
    do {                                                                    \
        T r_[4] = {0, 0, 0, 0};                                             \
        size_t w_ = n / (size_t)C;                                          \
        for (size_t x_ = 0; x_ < w_; x_++)                                  \
            for (int c_ = 0; c_ < C; c_++) {                                \
                size_t i_ = x_ * (size_t)C + (size_t)c_;                    \
                r_[c_] += LOAD;                                             \
                acc[i_] += r_[c_];                                          \
            }                                                               \
    } while (0)

ALWAYS_INLINE void rowscan_u32_c(const void *src, uint32_t *acc, size_t n,
                                 int pix, int sq, const int C)
{
    SCALAR_ROWSCAN(uint32_t, (sq ? (uint32_t)ld_u(src, i_, pix) *
                                       (uint32_t)ld_u(src, i_, pix)
                                 : (uint32_t)ld_u(src, i_, pix)));
}

ALWAYS_INLINE void rowscan_u64_c(const void *src, uint64_t *acc, size_t n,
                                 int pix, int sq, const int C)
{
    SCALAR_ROWSCAN(uint64_t, (sq ? ld_u(src, i_, pix) * ld_u(src, i_, pix)
                                 : ld_u(src, i_, pix)));
}

ALWAYS_INLINE void rowscan_f64_c(const void *src, double *acc, size_t n,
                                 int pix, int sq, const double *off,
                                 const int C)
{
    SCALAR_ROWSCAN(double, fval(src, i_, pix, sq, off));
}

/* Two rows at once (two independent chains of float adds): mid = acc +
 * the prefix of row 0, then acc = mid + the prefix of row 1, the same
 * operations in the same order as two calls of rowscan_f64_c. */
ALWAYS_INLINE void rowscan2_f64_c(const void *s0, const void *s1,
                                  double *acc, double *mid, size_t n,
                                  int pix, int sq, const double *off,
                                  const int C)
{
    double r0[4] = {0, 0, 0, 0}, r1[4] = {0, 0, 0, 0};
    size_t w = n / (size_t)C;
    for (size_t x = 0; x < w; x++)
        for (int c = 0; c < C; c++) {
            size_t i = x * (size_t)C + (size_t)c;
            r0[c] += fval(s0, i, pix, sq, off);
            r1[c] += fval(s1, i, pix, sq, off);
            double m = acc[i] + r0[c];
            mid[i] = m;
            acc[i] = m + r1[c];
        }
}

/* out[i] = in[i] + in[i - C] + ...; in == out allowed. */
#define SCALAR_PREFIX(T)                                                    \
    do {                                                                    \
        const T *in_ = (const T *)in;                                       \
        T *out_ = (T *)out;                                                 \
        T r_[4] = {0, 0, 0, 0};                                             \
        size_t w_ = n / (size_t)C;                                          \
        for (size_t x_ = 0; x_ < w_; x_++)                                  \
            for (int c_ = 0; c_ < C; c_++) {                                \
                size_t i_ = x_ * (size_t)C + (size_t)c_;                    \
                r_[c_] = (T)(r_[c_] + in_[i_]);                             \
                out_[i_] = r_[c_];                                          \
            }                                                               \
    } while (0)

ALWAYS_INLINE void prefix_u16_c(const void *in, void *out, size_t n,
                                const int C)
{
    SCALAR_PREFIX(uint16_t);
}
ALWAYS_INLINE void prefix_u32_c(const void *in, void *out, size_t n,
                                const int C)
{
    SCALAR_PREFIX(uint32_t);
}
ALWAYS_INLINE void prefix_u64_c(const void *in, void *out, size_t n,
                                const int C)
{
    SCALAR_PREFIX(uint64_t);
}
/* Floats: a sequential sum is a chain of dependent adds (four cycles
 * each). Rows of PREFIX_F64_SPLIT pixels or more are cut into four
 * segments (at pixels w / 4, w / 2, 3w / 4: fixed by the row length) summed
 * as four interleaved chains; then each segment gets the total of those
 * before it added. The grouping depends on n and C only. */
#define PREFIX_F64_SPLIT 256

ALWAYS_INLINE void prefix_f64_c(const void *in, void *out, size_t n,
                                const int C)
{
    const double *a = (const double *)in;
    double *o = (double *)out;
    size_t w = n / (size_t)C, q = w / 4;
    if (w < PREFIX_F64_SPLIT) {
        SCALAR_PREFIX(double);
        return;
    }
    double r[4][4] = {{0}};
    size_t seg[4] = {0, q * (size_t)C, 2 * q * (size_t)C, 3 * q * (size_t)C};
    for (size_t x = 0; x < q; x++)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < 4; k++) {
                size_t i = seg[k] + x * (size_t)C + (size_t)c;
                r[k][c] += a[i];
                o[i] = r[k][c];
            }
    for (size_t i = 4 * q * (size_t)C; i < n; i++) { /* the last pixels */
        size_t c = i % (size_t)C;
        r[3][c] += a[i];
        o[i] = r[3][c];
    }
    for (int k = 1; k < 4; k++) {
        double t[4];
        for (int c = 0; c < C; c++)
            t[c] = o[seg[k] - (size_t)C + (size_t)c];
        size_t end = k == 3 ? n : seg[k + 1];
        for (size_t i = seg[k]; i < end; i += (size_t)C)
            for (int c = 0; c < C; c++)
                o[i + (size_t)c] += t[c];
    }
}

/* Calls body(..., C) with C a constant 1..4, so that the channel loop of
 * the scalar kernels unrolls and keeps the running sums in registers. */
#define BY_CHANNELS(C, call)                                                \
    do {                                                                    \
        switch (C) {                                                        \
        case 1: { const int C_ = 1; call; } break;                          \
        case 2: { const int C_ = 2; call; } break;                          \
        case 3: { const int C_ = 3; call; } break;                          \
        default: { const int C_ = 4; call; } break;                         \
        }                                                                   \
    } while (0)

/* ---- row prefix sums: AVX-512 --------------------------------------------- */

#ifdef IMG_AVX512
/* The permutes of one stride C for vectors of L lanes: step s moves lane
 * i - s to lane i (lanes below s zeroed by the mask), for s = C, 2C, 4C
 * ... < L; carry_idx spreads the last C lanes (the channels' running sums)
 * to every lane of their channel: lane i takes lane L - C + i % C. C is a
 * constant wherever these are inlined, so the index vectors are too. */
typedef int16_t v32hi __attribute__((vector_size(64)));
typedef int32_t v16si __attribute__((vector_size(64)));
typedef int64_t v8di __attribute__((vector_size(64)));

ALWAYS_INLINE __m512i shift_idx(int L, int s)
{
    if (L == 8) {
        const v8di i = {0, 1, 2, 3, 4, 5, 6, 7};
        return (__m512i)((i - s) & 7);
    }
    if (L == 16) {
        const v16si i = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        return (__m512i)((i - s) & 15);
    }
    const v32hi i = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                     11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                     22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    return (__m512i)((i - (short)s) & 31);
}

ALWAYS_INLINE __m512i carry_idx(int L, int C)
{
    if (L == 8) {
        const v8di i = {0, 1, 2, 3, 4, 5, 6, 7};
        return (__m512i)(i % C + (L - C));
    }
    if (L == 16) {
        const v16si i = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        return (__m512i)(i % C + (L - C));
    }
    const v32hi i = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                     11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                     22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    return (__m512i)(i % (short)C + (short)(L - C));
}

/* The carry for the next vector when L is not a multiple of C: its lanes
 * belong to other channels there (lane i: channel (i + base) % C, the
 * base moving by L), so it is spread again like the vector's totals; for
 * C dividing L it is already in place and this is a no-op. */
#define RESPREAD(L, C, PERM, cidx, carry)                                   \
    ((L) % (C) != 0 ? PERM(cidx, carry) : (carry))

/* Lanes s .. L - 1. */
ALWAYS_INLINE uint64_t above(int L, int s)
{
    return (L == 64 ? ~0ull : ((1ull << L) - 1)) & ~((1ull << s) - 1);
}

/* Inclusive stride-C prefix inside one vector. */
ALWAYS_INLINE __m512i vpre32(__m512i x, const int C)
{
    for (int s = C; s < 16; s *= 2)
        x = _mm512_add_epi32(x, _mm512_maskz_permutexvar_epi32(
                                    (__mmask16)above(16, s),
                                    shift_idx(16, s), x));
    return x;
}

ALWAYS_INLINE __m512i vpre64(__m512i x, const int C)
{
    for (int s = C; s < 8; s *= 2)
        x = _mm512_add_epi64(x, _mm512_maskz_permutexvar_epi64(
                                    (__mmask8)above(8, s), shift_idx(8, s),
                                    x));
    return x;
}

ALWAYS_INLINE __m512i vpre16(__m512i x, const int C)
{
    for (int s = C; s < 32; s *= 2)
        x = _mm512_add_epi16(x, _mm512_maskz_permutexvar_epi16(
                                    (__mmask32)above(32, s),
                                    shift_idx(32, s), x));
    return x;
}

/* 16 samples from i as u32 lanes (I32 as its bits), squared if asked. */
ALWAYS_INLINE __m512i load16_u32(const void *src, size_t i, int pix, int sq)
{
    __m512i v;
    if (pix == U8)
        v = _mm512_cvtepu8_epi32(
            _mm_loadu_si128((const __m128i *)((const uint8_t *)src + i)));
    else if (pix == U16)
        v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(
            (const __m256i *)((const uint16_t *)src + i)));
    else
        v = _mm512_loadu_si512((const void *)((const int32_t *)src + i));
    return sq ? _mm512_mullo_epi32(v, v) : v;
}

/* 8 samples from i as u64 lanes (I32 sign-extended), squared if asked. */
ALWAYS_INLINE __m512i load8_u64(const void *src, size_t i, int pix, int sq)
{
    __m512i v;
    if (pix == U8)
        v = _mm512_cvtepu8_epi64(
            _mm_loadl_epi64((const __m128i *)((const uint8_t *)src + i)));
    else if (pix == U16)
        v = _mm512_cvtepu16_epi64(
            _mm_loadu_si128((const __m128i *)((const uint16_t *)src + i)));
    else
        v = _mm512_cvtepi32_epi64(_mm256_loadu_si256(
            (const __m256i *)((const int32_t *)src + i)));
    return sq ? _mm512_mullo_epi64(v, v) : v;
}

/* The scalar tail after the vectors: the running sums of the C channels
 * are the first C lanes of the carry vector (lane j holds the sum for the
 * samples at j, j + C ...). */
#define TAIL_ROWSCAN(T, LANES, carry, LOAD)                                 \
    do {                                                                    \
        T cv_[LANES], r_[4];                                                \
        _mm512_storeu_si512((void *)cv_, carry);                            \
        for (int c_ = 0; c_ < C; c_++)                                      \
            r_[c_] = cv_[c_];                                               \
        for (size_t j_ = 0; i < n; i++, j_++) {                             \
            size_t i_ = i, c_ = j_ % (size_t)C;                             \
            r_[c_] = (T)(r_[c_] + (LOAD));                                  \
            acc[i_] = (T)(acc[i_] + r_[c_]);                                \
        }                                                                   \
    } while (0)

/* The fused table row: out[i] = acc[i] after the update. mode 1: plain
 * stores; mode 2: non-temporal stores of whole 64-byte lines. out is
 * aligned to its element only, so in mode 2 each line is put together
 * from the previous vector and this one (k = out's misalignment in
 * elements; lane j of the line takes prev[L - k + j] or cur[j - k]); the
 * partial lines at the row's two ends get plain stores from acc, so rows
 * written by other threads next to them are never touched. */
#define ROWSCAN_V(T, L, LOADV, PRE, ADD, PERM, PERM2, SET1, TAIL_LOAD)      \
    do {                                                                    \
        const __m512i cidx = carry_idx(L, C);                               \
        size_t k = mode == 2 ? ((uintptr_t)out / sizeof(T)) % L : 0;        \
        const __m512i ridx = ADD(shift_idx(L, 0), SET1((L) - k));           \
        __m512i carry = _mm512_setzero_si512(), prev = carry;               \
        size_t i = 0;                                                       \
        for (; i + (L) <= n; i += (L)) {                                    \
            __m512i v = PRE(LOADV(src, i, pix, sq), C);                     \
            __m512i t = PERM(cidx, v); /* off the carry chain */            \
            v = ADD(v, carry);                                              \
            carry = ADD(RESPREAD(L, C, PERM, cidx, carry), t);             \
            v = ADD(v, _mm512_loadu_si512((const void *)(acc + i)));        \
            _mm512_storeu_si512((void *)(acc + i), v);                      \
            if (mode == 1)                                                  \
                _mm512_storeu_si512((void *)(out + i), v);                  \
            else if (mode == 2 && k == 0)                                   \
                _mm512_stream_si512((void *)(out + i), v);                  \
            else if (mode == 2 && i >= (L))                                 \
                _mm512_stream_si512((void *)(out + i - k),                  \
                                    PERM2(prev, ridx, v));                  \
            prev = v;                                                       \
        }                                                                   \
        size_t done = i;                                                    \
        TAIL_ROWSCAN(T, L, carry, TAIL_LOAD);                               \
        if (mode == 1) {                                                    \
            for (size_t j = done; j < n; j++)                               \
                out[j] = acc[j];                                            \
        } else if (mode == 2) {                                             \
            size_t c0 = k == 0 ? 0 : (L) - k;                               \
            size_t c1 = k == 0 ? done : (done >= 2 * (L) ? done - k : c0);  \
            for (size_t j = 0; j < c0 && j < n; j++)                        \
                out[j] = acc[j];                                            \
            for (size_t j = c1 > c0 ? c1 : c0; j < n; j++)                  \
                out[j] = acc[j];                                            \
        }                                                                   \
    } while (0)

#define SET1_32(x) _mm512_set1_epi32((int)(x))
#define SET1_64(x) _mm512_set1_epi64((long long)(x))

ALWAYS_INLINE void rowscan_u32_v(const void *src, uint32_t *acc, size_t n,
                                 int pix, int sq, const int C,
                                 uint32_t *out, const int mode)
{
    ROWSCAN_V(uint32_t, 16, load16_u32, vpre32, _mm512_add_epi32,
              _mm512_permutexvar_epi32, _mm512_permutex2var_epi32, SET1_32,
              (sq ? (uint32_t)ld_u(src, i_, pix) * (uint32_t)ld_u(src, i_, pix)
                  : (uint32_t)ld_u(src, i_, pix)));
}

ALWAYS_INLINE void rowscan_u64_v(const void *src, uint64_t *acc, size_t n,
                                 int pix, int sq, const int C,
                                 uint64_t *out, const int mode)
{
    ROWSCAN_V(uint64_t, 8, load8_u64, vpre64, _mm512_add_epi64,
              _mm512_permutexvar_epi64, _mm512_permutex2var_epi64, SET1_64,
              (sq ? ld_u(src, i_, pix) * ld_u(src, i_, pix)
                  : ld_u(src, i_, pix)));
}

/* out = prefix(in) for integer lanes of lane_bytes 2, 4 or 8. */
ALWAYS_INLINE void prefix_int_v(const void *in, void *out, size_t n,
                                int lane_bytes, const int C)
{
    const int L = 64 / lane_bytes;
    const __m512i cidx = carry_idx(L, C);
    const char *a = (const char *)in;
    char *o = (char *)out;
    __m512i carry = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + (size_t)L <= n; i += (size_t)L) {
        __m512i v = _mm512_loadu_si512((const void *)(a + i * lane_bytes));
        /* The block's totals are spread before the carry is added, so the
         * chain from block to block is one add. */
        if (lane_bytes == 2) {
            v = vpre16(v, C);
            __m512i t = _mm512_permutexvar_epi16(cidx, v);
            v = _mm512_add_epi16(v, carry);
            carry = _mm512_add_epi16(
                RESPREAD(L, C, _mm512_permutexvar_epi16, cidx, carry), t);
        } else if (lane_bytes == 4) {
            v = vpre32(v, C);
            __m512i t = _mm512_permutexvar_epi32(cidx, v);
            v = _mm512_add_epi32(v, carry);
            carry = _mm512_add_epi32(
                RESPREAD(L, C, _mm512_permutexvar_epi32, cidx, carry), t);
        } else {
            v = vpre64(v, C);
            __m512i t = _mm512_permutexvar_epi64(cidx, v);
            v = _mm512_add_epi64(v, carry);
            carry = _mm512_add_epi64(
                RESPREAD(L, C, _mm512_permutexvar_epi64, cidx, carry), t);
        }
        _mm512_storeu_si512((void *)(o + i * lane_bytes), v);
    }
    unsigned char cv[64];
    _mm512_storeu_si512((void *)cv, carry);
    uint64_t r[4] = {0, 0, 0, 0};
    for (int c = 0; c < C; c++) {
        uint64_t x = 0;
        memcpy(&x, cv + c * lane_bytes, (size_t)lane_bytes);
        r[c] = x;
    }
    for (size_t j = 0; i < n; i++, j++) {
        uint64_t x = 0;
        size_t c = j % (size_t)C;
        memcpy(&x, a + i * lane_bytes, (size_t)lane_bytes);
        r[c] += x;
        memcpy(o + i * lane_bytes, &r[c], (size_t)lane_bytes);
    }
}
#endif /* IMG_AVX512 */

/* ---- the rowscan and prefix entry points ---------------------------------- */

/* The rowscan entry points return 1 when they wrote the table row out
 * too (AVX-512: fused, see ROWSCAN_V), 0 when the caller must. */
#define BY_MODE(mode, call)                                                 \
    do {                                                                    \
        if ((mode) == 0) {                                                  \
            const int M_ = 0;                                               \
            call;                                                           \
        } else if ((mode) == 1) {                                           \
            const int M_ = 1;                                               \
            call;                                                           \
        } else {                                                            \
            const int M_ = 2;                                               \
            call;                                                           \
        }                                                                   \
    } while (0)

ALWAYS_INLINE int rowscan_u32(const void *src, void *acc, size_t n, int C,
                              int pix, int sq, void *out, int stream)
{
#ifdef IMG_AVX512
    int mode = out == NULL ? 0 : stream ? 2 : 1;
    BY_MODE(mode, BY_CHANNELS(C, rowscan_u32_v(src, (uint32_t *)acc, n, pix,
                                               sq, C_, (uint32_t *)out,
                                               M_)));
    return 1;
#else
    (void)out;
    (void)stream;
    BY_CHANNELS(C, rowscan_u32_c(src, (uint32_t *)acc, n, pix, sq, C_));
    return 0;
#endif
}

ALWAYS_INLINE int rowscan_u64(const void *src, void *acc, size_t n, int C,
                              int pix, int sq, void *out, int stream)
{
#ifdef IMG_AVX512
    int mode = out == NULL ? 0 : stream ? 2 : 1;
    BY_MODE(mode, BY_CHANNELS(C, rowscan_u64_v(src, (uint64_t *)acc, n, pix,
                                               sq, C_, (uint64_t *)out,
                                               M_)));
    return 1;
#else
    (void)out;
    (void)stream;
    BY_CHANNELS(C, rowscan_u64_c(src, (uint64_t *)acc, n, pix, sq, C_));
    return 0;
#endif
}

#define INT_KERNELS(P, PIX, SQ, SFX)                                        \
    static void colsum_##P##_u32##SFX(const void *s, size_t pitch,          \
                                      size_t rows, void *a, size_t n,       \
                                      const double *o, void *tmp)           \
    {                                                                       \
        (void)o;                                                            \
        colsum_u32((const char *)s, pitch, rows, (uint32_t *)a, n, PIX, SQ, \
                   (uint16_t *)tmp);                                        \
    }                                                                       \
    static void colsum_##P##_u64##SFX(const void *s, size_t pitch,          \
                                      size_t rows, void *a, size_t n,       \
                                      const double *o, void *tmp)           \
    {                                                                       \
        (void)o;                                                            \
        colsum_u64((const char *)s, pitch, rows, (uint64_t *)a, n, PIX, SQ, \
                   (uint16_t *)tmp);                                        \
    }                                                                       \
    static int rowscan_##P##_u32##SFX(const void *s, void *a, size_t n,     \
                                      int C, const double *o, void *out,    \
                                      int stream)                           \
    {                                                                       \
        (void)o;                                                            \
        return rowscan_u32(s, a, n, C, PIX, SQ, out, stream);               \
    }                                                                       \
    static int rowscan_##P##_u64##SFX(const void *s, void *a, size_t n,     \
                                      int C, const double *o, void *out,    \
                                      int stream)                           \
    {                                                                       \
        (void)o;                                                            \
        return rowscan_u64(s, a, n, C, PIX, SQ, out, stream);               \
    }

INT_KERNELS(u8, U8, 0, )
INT_KERNELS(u8, U8, 1, _sq)
INT_KERNELS(u16, U16, 0, )
INT_KERNELS(u16, U16, 1, _sq)
INT_KERNELS(i32, I32, 0, )
INT_KERNELS(i32, I32, 1, _sq)

/* Float accumulators: the caller writes the table row (0). */
#define FLT_KERNELS(P, PIX, SQ, SFX)                                        \
    static void colsum_##P##_f64##SFX(const void *s, size_t pitch,          \
                                      size_t rows, void *a, size_t n,       \
                                      const double *o, void *tmp)           \
    {                                                                       \
        (void)tmp;                                                          \
        colsum_f64((const char *)s, pitch, rows, (double *)a, n, PIX, SQ,   \
                   o);                                                      \
    }                                                                       \
    static int rowscan_##P##_f64##SFX(const void *s, void *a, size_t n,     \
                                      int C, const double *o, void *out,    \
                                      int stream)                           \
    {                                                                       \
        (void)out;                                                          \
        (void)stream;                                                       \
        if (o == NULL)                                                      \
            BY_CHANNELS(C, rowscan_f64_c(s, (double *)a, n, PIX, SQ, NULL,  \
                                         C_));                              \
        else                                                                \
            BY_CHANNELS(C, rowscan_f64_c(s, (double *)a, n, PIX, SQ, o,     \
                                         C_));                              \
        return 0;                                                           \
    }

#define FLT_KERNELS2(P, PIX, SQ, SFX)                                       \
    static void rowscan2_##P##SFX(const void *s0, const void *s1,           \
                                  double *a, double *mid, size_t n, int C,  \
                                  const double *o)                          \
    {                                                                       \
        if (o == NULL)                                                      \
            BY_CHANNELS(C, rowscan2_f64_c(s0, s1, a, mid, n, PIX, SQ, NULL, \
                                          C_));                             \
        else                                                                \
            BY_CHANNELS(C, rowscan2_f64_c(s0, s1, a, mid, n, PIX, SQ, o,    \
                                          C_));                             \
    }
FLT_KERNELS2(u8, U8, 0, )
FLT_KERNELS2(u8, U8, 1, _sq)
FLT_KERNELS2(u16, U16, 0, )
FLT_KERNELS2(u16, U16, 1, _sq)
FLT_KERNELS2(i32, I32, 0, )
FLT_KERNELS2(i32, I32, 1, _sq)
FLT_KERNELS2(f32, F32, 0, )
FLT_KERNELS2(f32, F32, 1, _sq)
FLT_KERNELS2(f64, F64, 0, )
FLT_KERNELS2(f64, F64, 1, _sq)

FLT_KERNELS(u8, U8, 0, )
FLT_KERNELS(u8, U8, 1, _sq)
FLT_KERNELS(u16, U16, 0, )
FLT_KERNELS(u16, U16, 1, _sq)
FLT_KERNELS(i32, I32, 0, )
FLT_KERNELS(i32, I32, 1, _sq)
FLT_KERNELS(f32, F32, 0, )
FLT_KERNELS(f32, F32, 1, _sq)
FLT_KERNELS(f64, F64, 0, )
FLT_KERNELS(f64, F64, 1, _sq)

static void prefix_u16(const void *in, void *out, size_t n, int C)
{
#ifdef IMG_AVX512
    BY_CHANNELS(C, prefix_int_v(in, out, n, 2, C_));
#else
    BY_CHANNELS(C, prefix_u16_c(in, out, n, C_));
#endif
}

static void prefix_u32(const void *in, void *out, size_t n, int C)
{
#ifdef IMG_AVX512
    BY_CHANNELS(C, prefix_int_v(in, out, n, 4, C_));
#else
    BY_CHANNELS(C, prefix_u32_c(in, out, n, C_));
#endif
}

static void prefix_u64(const void *in, void *out, size_t n, int C)
{
#ifdef IMG_AVX512
    BY_CHANNELS(C, prefix_int_v(in, out, n, 8, C_));
#else
    BY_CHANNELS(C, prefix_u64_c(in, out, n, C_));
#endif
}

static void prefix_f64(const void *in, void *out, size_t n, int C)
{
    BY_CHANNELS(C, prefix_f64_c(in, out, n, C_));
}

/* ---- the table ------------------------------------------------------------ */

/* The box filter's kernels of the same instruction set (kernels_box.c). */
extern const parsum__cpu_box_kernels PARSUM__CAT(parsum__cpu_box_kernels_,
                                                 PARSUM_ISA);

#define INT_ROW(P, K)                                                       \
    {{NULL, NULL},                                                          \
     {K##_##P##_u32, K##_##P##_u32_sq},                                     \
     {K##_##P##_u64, K##_##P##_u64_sq},                                     \
     {K##_##P##_f64, K##_##P##_f64_sq}}
#define FLT_ROW(P, K)                                                       \
    {{NULL, NULL}, {NULL, NULL}, {NULL, NULL},                              \
     {K##_##P##_f64, K##_##P##_f64_sq}}

const parsum__cpu_image_kernels PARSUM__CAT(parsum__cpu_image_kernels_,
                                            PARSUM_ISA) = {
    PARSUM__STR(PARSUM_ISA),
    {INT_ROW(u8, colsum), INT_ROW(u16, colsum), INT_ROW(i32, colsum),
     FLT_ROW(f32, colsum), FLT_ROW(f64, colsum)},
    {INT_ROW(u8, rowscan), INT_ROW(u16, rowscan), INT_ROW(i32, rowscan),
     FLT_ROW(f32, rowscan), FLT_ROW(f64, rowscan)},
    {{rowscan2_u8, rowscan2_u8_sq}, {rowscan2_u16, rowscan2_u16_sq},
     {rowscan2_i32, rowscan2_i32_sq}, {rowscan2_f32, rowscan2_f32_sq},
     {rowscan2_f64, rowscan2_f64_sq}},
    {prefix_u16, prefix_u32, prefix_u64, prefix_f64},
    &PARSUM__CAT(parsum__cpu_box_kernels_, PARSUM_ISA),
};
