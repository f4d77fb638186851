/*
 * tonemap.cu - the CUDA backend's tone-mapping slots (parsum__tonemap_args
 * in src/core/internal.h; the pipeline is src/hist/tonemap.c): the log
 * luminance of every pixel, and the mapping of every pixel through the
 * display-luminance table. Each is one grid-stride kernel with one thread
 * per pixel; the per-pixel formulas are src/hist/tonemap_px.h, shared with
 * the CPU backend. The first pixel with a NaN or infinite sample is found
 * with an atomicMin on one device word, then copied to the host.
 */
#include "cuda_internal.h"
#include "hist/tonemap_px.h"

#include <cstdint>
#include <type_traits>

using parsum_cu::aux_grid;

namespace {

typedef unsigned long long u64;
constexpr int TM_THREADS = 256;

/* What both kernels read, by value. */
struct tm_view {
    const char *src;
    size_t src_pitch;
    char *dst;
    size_t dst_pitch;
    u64 width, n; /* n = width * height */
    int channels;
    double src_max, dst_max; /* 255, 65535 or 1 */
    float *loglum;
    const double *ld_edges;
    size_t nbins;
    double lmin, scale, min_luminance;
    u64 *first_bad;
};

double max_of(parsum_dtype d)
{
    return d == PARSUM_U8 ? 255.0 : d == PARSUM_U16 ? 65535.0 : 1.0;
}

template <class S>
__global__ void __launch_bounds__(TM_THREADS)
tm_lum_kernel(tm_view v, bool check)
{
    const int ch = v.channels, nc = parsum__tm_colours(ch);
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < v.n;
         p += (u64)gridDim.x * blockDim.x) {
        u64 y = p / v.width, x = p - y * v.width;
        const S *px = reinterpret_cast<const S *>(v.src + y * v.src_pitch) +
                      x * (u64)ch;
        double c[3] = {0.0, 0.0, 0.0};
        bool ok = true;
        for (int k = 0; k < ch; k++) {
            double s = (double)px[k];
            if (check && !isfinite(s))
                ok = false;
            if (k < nc)
                c[k] = s;
        }
        if (!ok)
            atomicMin(v.first_bad, p);
        for (int k = 0; k < nc; k++)
            c[k] = parsum__tm_colour(ok ? c[k] : 0.0, v.src_max);
        v.loglum[p] = parsum__tm_loglum(parsum__tm_luminance(c, nc),
                                        v.min_luminance);
    }
}

template <class D>
__device__ __forceinline__ void tm_store(D *out, double v, bool alpha,
                                         double dst_max)
{
    if constexpr (std::is_floating_point<D>::value)
        *out = (D)v;
    else
        *out = (D)parsum__tm_quantize(alpha ? v : parsum__tm_srgb(v),
                                      dst_max);
}

template <class S, class D>
__global__ void __launch_bounds__(TM_THREADS) tm_map_kernel(tm_view v)
{
    const int ch = v.channels, nc = parsum__tm_colours(ch);
    const bool has_alpha = parsum__tm_has_alpha(ch) != 0;
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < v.n;
         p += (u64)gridDim.x * blockDim.x) {
        u64 y = p / v.width, x = p - y * v.width;
        const S *px = reinterpret_cast<const S *>(v.src + y * v.src_pitch) +
                      x * (u64)ch;
        D *out = reinterpret_cast<D *>(v.dst + y * v.dst_pitch) + x * (u64)ch;
        double c[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < nc; k++)
            c[k] = parsum__tm_colour((double)px[k], v.src_max);
        double lum = parsum__tm_luminance(c, nc);
        float l = v.loglum[p];
        double ld = isnan(l) ? 0.0
                             : parsum__tm_ld(l, v.ld_edges, v.nbins, v.lmin,
                                             v.scale);
        for (int k = 0; k < nc; k++)
            tm_store(out + k, parsum__tm_scale(c[k], lum, ld), false,
                     v.dst_max);
        if (has_alpha)
            tm_store(out + nc, parsum__tm_alpha((double)px[nc], v.src_max),
                     true, v.dst_max);
    }
}

tm_view view_of(const parsum__tonemap_args *a)
{
    tm_view v;
    v.src = static_cast<const char *>(a->src.data);
    v.src_pitch = a->src.pitch;
    v.dst = static_cast<char *>(a->dst.data);
    v.dst_pitch = a->dst.pitch;
    v.width = a->src.width;
    v.n = (u64)a->src.width * a->src.height;
    v.channels = a->src.channels;
    v.src_max = max_of(a->src.dtype);
    v.dst_max = max_of(a->dst.dtype);
    v.loglum = a->loglum;
    v.ld_edges = a->ld_edges;
    v.nbins = a->nbins;
    v.lmin = a->lmin;
    v.scale = a->scale;
    v.min_luminance = a->min_luminance;
    v.first_bad = NULL;
    return v;
}

template <class S>
void launch_map(const tm_view &v, parsum_dtype dst, unsigned grid,
                cudaStream_t s)
{
    switch (dst) {
    case PARSUM_U8: tm_map_kernel<S, uint8_t><<<grid, TM_THREADS, 0, s>>>(v); break;
    case PARSUM_U16: tm_map_kernel<S, uint16_t><<<grid, TM_THREADS, 0, s>>>(v); break;
    default: tm_map_kernel<S, float><<<grid, TM_THREADS, 0, s>>>(v); break;
    }
}

} /* namespace */

parsum_status parsum__cuda_tonemap_lum(parsum_context *ctx,
                                       const parsum__tonemap_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    cudaStream_t stream = parsum__cuda_st(ctx)->stream;
    tm_view v = view_of(a);
    v.first_bad = static_cast<u64 *>(parsum__scratch(ctx, sizeof(u64), a->fn));
    if (v.first_bad == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    /* All ones: UINT64_MAX, "no bad pixel". */
    PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(v.first_bad, 0xFF, sizeof(u64),
                                         stream));
    unsigned grid = aux_grid(ctx, v.n, TM_THREADS);
    switch (a->src.dtype) {
    case PARSUM_U8: tm_lum_kernel<uint8_t><<<grid, TM_THREADS, 0, stream>>>(v, false); break;
    case PARSUM_U16: tm_lum_kernel<uint16_t><<<grid, TM_THREADS, 0, stream>>>(v, false); break;
    case PARSUM_F32: tm_lum_kernel<float><<<grid, TM_THREADS, 0, stream>>>(v, true); break;
    default: tm_lum_kernel<double><<<grid, TM_THREADS, 0, stream>>>(v, true); break;
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    u64 bad = 0;
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, v.first_bad, sizeof bad,
                                         cudaMemcpyDeviceToHost, stream));
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    *a->first_bad = bad;
    return PARSUM_OK;
}

parsum_status parsum__cuda_tonemap_map(parsum_context *ctx,
                                       const parsum__tonemap_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    cudaStream_t stream = parsum__cuda_st(ctx)->stream;
    tm_view v = view_of(a);
    unsigned grid = aux_grid(ctx, v.n, TM_THREADS);
    switch (a->src.dtype) {
    case PARSUM_U8: launch_map<uint8_t>(v, a->dst.dtype, grid, stream); break;
    case PARSUM_U16: launch_map<uint16_t>(v, a->dst.dtype, grid, stream); break;
    case PARSUM_F32: launch_map<float>(v, a->dst.dtype, grid, stream); break;
    default: launch_map<double>(v, a->dst.dtype, grid, stream); break;
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}
