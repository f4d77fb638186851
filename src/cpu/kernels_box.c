/*
 * kernels_box.c - the box filter's row kernels (see image_kernels.h):
 * running column sums and the window differences with their exact means,
 * compiled once per instruction set like kernels_image.c, whose table
 * points to this one. All element-wise: plain loops the compiler
 * vectorizes, and AVX-512 intrinsics where it does not find the
 * instructions (16-bit high multiplies, float and unsigned conversions).
 * Integer results are the same in every variant (exact divisions, see
 * parsum__div); float means are one correctly rounded division each.
 */
#include "kernels_image_util.h"

/* ---- box filter: running column sums -------------------------------------- */

/* V += f(in) - f(out) in the accumulator type T (modulo 2^bits for
 * integers); in or out may be NULL. */
#define VUPD_BODY(T, CONV)                                                  \
    do {                                                                    \
        T *v_ = (T *)V;                                                     \
        if (in != NULL && out != NULL) {                                    \
            for (size_t i_ = 0; i_ < n; i_++)                               \
                v_[i_] = (T)(v_[i_] + CONV(in, i_) - CONV(out, i_));        \
        } else if (in != NULL) {                                            \
            for (size_t i_ = 0; i_ < n; i_++)                               \
                v_[i_] = (T)(v_[i_] + CONV(in, i_));                        \
        } else if (out != NULL) {                                           \
            for (size_t i_ = 0; i_ < n; i_++)                               \
                v_[i_] = (T)(v_[i_] - CONV(out, i_));                       \
        }                                                                   \
    } while (0)

#define VAXPY_BODY(T, CONV, COEF)                                           \
    do {                                                                    \
        T *v_ = (T *)V;                                                     \
        T k_ = (COEF);                                                      \
        if (coef == 1) {                                                    \
            for (size_t i_ = 0; i_ < n; i_++)                               \
                v_[i_] = (T)(v_[i_] + CONV(src, i_));                       \
        } else {                                                            \
            for (size_t i_ = 0; i_ < n; i_++)                               \
                v_[i_] = (T)(v_[i_] + k_ * CONV(src, i_));                  \
        }                                                                   \
    } while (0)

#define CONV_U16(p, i) ((uint16_t)ld_u(p, i, PIX_))
#define CONV_U32(p, i) ((uint32_t)ld_u(p, i, PIX_))
#define CONV_U64(p, i) (ld_u(p, i, PIX_))
#define CONV_F64(p, i) (ld_f(p, i, PIX_))

#define VKERNELS(P, PIX, ACCN, T, CONV, COEF)                               \
    static void vupd_##P##_##ACCN(void *V, const void *in, const void *out, \
                                  size_t n)                                 \
    {                                                                       \
        enum { PIX_ = PIX };                                                \
        VUPD_BODY(T, CONV);                                                 \
    }                                                                       \
    static void vaxpy_##P##_##ACCN(void *V, const void *src, size_t n,      \
                                   int64_t coef)                            \
    {                                                                       \
        enum { PIX_ = PIX };                                                \
        VAXPY_BODY(T, CONV, COEF);                                          \
    }

VKERNELS(u8, U8, u16, uint16_t, CONV_U16, (uint16_t)(uint64_t)coef)
VKERNELS(u8, U8, u32, uint32_t, CONV_U32, (uint32_t)(uint64_t)coef)
VKERNELS(u8, U8, u64, uint64_t, CONV_U64, (uint64_t)coef)
VKERNELS(u16, U16, u32, uint32_t, CONV_U32, (uint32_t)(uint64_t)coef)
VKERNELS(u16, U16, u64, uint64_t, CONV_U64, (uint64_t)coef)
VKERNELS(i32, I32, u64, uint64_t, CONV_U64, (uint64_t)coef)
VKERNELS(f32, F32, f64, double, CONV_F64, (double)coef)
VKERNELS(f64, F64, f64, double, CONV_F64, (double)coef)

/* ---- box filter: window differences and means ----------------------------- */

/* U8 image, U16 sums: q = ((s * m16) >> 16) >> k16 (image_kernels.h). */
static void interior_u8_u16(const void *Qv, void *dstv, size_t count,
                            size_t a, size_t b, const parsum__div *dv)
{
    const uint16_t *Q = (const uint16_t *)Qv;
    uint8_t *dst = (uint8_t *)dstv;
    uint16_t half = (uint16_t)dv->half;
    size_t j = 0;
#ifdef IMG_AVX512
    __m512i vh = _mm512_set1_epi16((short)half);
    __m512i vm = _mm512_set1_epi16((short)dv->m16);
    __m128i sh = _mm_cvtsi32_si128(dv->k16);
    for (; j + 32 <= count; j += 32) {
        __m512i s = _mm512_sub_epi16(
            _mm512_loadu_si512((const void *)(Q + j + a)),
            _mm512_loadu_si512((const void *)(Q + j - b)));
        s = _mm512_add_epi16(s, vh);
        __m512i q = _mm512_srl_epi16(_mm512_mulhi_epu16(s, vm), sh);
        _mm256_storeu_si256((__m256i *)(void *)(dst + j),
                            _mm512_cvtepi16_epi8(q));
    }
#endif
    for (; j < count; j++) {
        uint16_t s = (uint16_t)(Q[j + a] - Q[j - b] + half);
        dst[j] = (uint8_t)parsum__div_u16(dv, s);
    }
}

#ifdef IMG_AVX512
/* 16 quotients of U32 sums (image_kernels.h: trunc(s * inv_up)). */
ALWAYS_INLINE __m512i vdiv_u32(__m512i s, __m512d inv)
{
    __m512d lo = _mm512_cvtepu32_pd(_mm512_castsi512_si256(s));
    __m512d hi = _mm512_cvtepu32_pd(_mm512_extracti64x4_epi64(s, 1));
    __m256i ql = _mm512_cvttpd_epu32(_mm512_mul_pd(lo, inv));
    __m256i qh = _mm512_cvttpd_epu32(_mm512_mul_pd(hi, inv));
    return _mm512_inserti64x4(_mm512_castsi256_si512(ql), qh, 1);
}
#endif

/* U8 or U16 image (T), U32 sums. */
#define INTERIOR_U32(NAME, T, NARROW)                                       \
    static void NAME(const void *Qv, void *dstv, size_t count, size_t a,    \
                     size_t b, const parsum__div *dv)                       \
    {                                                                       \
        const uint32_t *Q = (const uint32_t *)Qv;                           \
        T *dst = (T *)dstv;                                                 \
        uint32_t half = (uint32_t)dv->half;                                 \
        size_t j = 0;                                                       \
        INTERIOR_U32_VEC(NARROW)                                            \
        for (; j < count; j++)                                              \
            dst[j] = (T)parsum__div_u32(dv, Q[j + a] - Q[j - b] + half);    \
    }

#ifdef IMG_AVX512
/* Small sums: float32 (image_kernels.h), 16 lanes at once. */
#define INTERIOR_U32_VEC(NARROW)                                            \
    __m512i vh = _mm512_set1_epi32((int)half);                              \
    __m512d vinv = _mm512_set1_pd(dv->inv_up);                              \
    __m512 vinvf = _mm512_set1_ps(dv->inv_f);                               \
    for (; dv->small && j + 16 <= count; j += 16) {                         \
        __m512i s = _mm512_sub_epi32(                                       \
            _mm512_loadu_si512((const void *)(Q + j + a)),                  \
            _mm512_loadu_si512((const void *)(Q + j - b)));                 \
        __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(s, vh));             \
        NARROW(dst + j, _mm512_cvttps_epi32(_mm512_mul_ps(f, vinvf)));      \
    }                                                                       \
    for (; j + 16 <= count; j += 16) {                                      \
        __m512i s = _mm512_sub_epi32(                                       \
            _mm512_loadu_si512((const void *)(Q + j + a)),                  \
            _mm512_loadu_si512((const void *)(Q + j - b)));                 \
        NARROW(dst + j, vdiv_u32(_mm512_add_epi32(s, vh), vinv));           \
    }
#define NARROW_U8(p, q) _mm_storeu_si128((__m128i *)(void *)(p),            \
                                         _mm512_cvtepi32_epi8(q))
#define NARROW_U16(p, q) _mm256_storeu_si256((__m256i *)(void *)(p),        \
                                             _mm512_cvtepi32_epi16(q))
#else
#define INTERIOR_U32_VEC(NARROW)
#endif

INTERIOR_U32(interior_u8_u32, uint8_t, NARROW_U8)
INTERIOR_U32(interior_u16_u32, uint16_t, NARROW_U16)

static void interior_u8_u64(const void *Qv, void *dstv, size_t count,
                            size_t a, size_t b, const parsum__div *dv)
{
    const uint64_t *Q = (const uint64_t *)Qv;
    uint8_t *dst = (uint8_t *)dstv;
    for (size_t j = 0; j < count; j++)
        dst[j] = (uint8_t)parsum__div_u64(dv, Q[j + a] - Q[j - b] + dv->half);
}

static void interior_u16_u64(const void *Qv, void *dstv, size_t count,
                             size_t a, size_t b, const parsum__div *dv)
{
    const uint64_t *Q = (const uint64_t *)Qv;
    uint16_t *dst = (uint16_t *)dstv;
    for (size_t j = 0; j < count; j++)
        dst[j] =
            (uint16_t)parsum__div_u64(dv, Q[j + a] - Q[j - b] + dv->half);
}

static void interior_i32_u64(const void *Qv, void *dstv, size_t count,
                             size_t a, size_t b, const parsum__div *dv)
{
    const uint64_t *Q = (const uint64_t *)Qv;
    int32_t *dst = (int32_t *)dstv;
    for (size_t j = 0; j < count; j++)
        dst[j] = (int32_t)parsum__div_i64(dv, Q[j + a] - Q[j - b] + dv->half);
}

/* Floats: the window sum divided by the area, rounded once (as the
 * reference), to float for F32 images. */
static void interior_f32_f64(const void *Qv, void *dstv, size_t count,
                             size_t a, size_t b, const parsum__div *dv)
{
    const double *Q = (const double *)Qv;
    float *dst = (float *)dstv;
    double d = (double)dv->d;
    for (size_t j = 0; j < count; j++)
        dst[j] = (float)((Q[j + a] - Q[j - b]) / d);
}

static void interior_f64_f64(const void *Qv, void *dstv, size_t count,
                             size_t a, size_t b, const parsum__div *dv)
{
    const double *Q = (const double *)Qv;
    double *dst = (double *)dstv;
    double d = (double)dv->d;
    for (size_t j = 0; j < count; j++)
        dst[j] = (Q[j + a] - Q[j - b]) / d;
}

/* ---- the table ------------------------------------------------------------ */

const parsum__cpu_box_kernels PARSUM__CAT(parsum__cpu_box_kernels_,
                                          PARSUM_ISA) = {
    {{vupd_u8_u16, vupd_u8_u32, vupd_u8_u64, NULL},
     {NULL, vupd_u16_u32, vupd_u16_u64, NULL},
     {NULL, NULL, vupd_i32_u64, NULL},
     {NULL, NULL, NULL, vupd_f32_f64},
     {NULL, NULL, NULL, vupd_f64_f64}},
    {{vaxpy_u8_u16, vaxpy_u8_u32, vaxpy_u8_u64, NULL},
     {NULL, vaxpy_u16_u32, vaxpy_u16_u64, NULL},
     {NULL, NULL, vaxpy_i32_u64, NULL},
     {NULL, NULL, NULL, vaxpy_f32_f64},
     {NULL, NULL, NULL, vaxpy_f64_f64}},
    {{interior_u8_u16, interior_u8_u32, interior_u8_u64, NULL},
     {NULL, interior_u16_u32, interior_u16_u64, NULL},
     {NULL, NULL, interior_i32_u64, NULL},
     {NULL, NULL, NULL, interior_f32_f64},
     {NULL, NULL, NULL, interior_f64_f64}},
};
