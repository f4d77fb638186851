/*
 * bench_cuda_image.cu - `parsum bench integral|boxfilter --backend cuda`:
 * parsum's summed-area table and box filter on device images, with
 * cudaMemcpy device to device as the bandwidth bound, in the same run.
 *
 *   integral   W x W images (W = 2048, 4096, 8192, or sqrt(n)): u8 -> u32
 *              (1 and 4 channels), f32 -> f64; GB/s counts one read of the
 *              image and one write of the table (5 bytes per pixel for
 *              u8 -> u32), copy GB/s counts the bytes read and written by
 *              the copy; the ratio is the fraction of copy bandwidth.
 *   boxfilter  u8 W x W, radius 1, 3, 7, 15, border REFLECT_101: time,
 *              GB/s (2 bytes per pixel) and the time relative to the u8 ->
 *              u32 table of the same image.
 * This toolkit ships no image library to compare with (NPP is a separate
 * download), so the bound is the copy. Median of the runs after warm-up,
 * device time (median_device_ms: L2 flushed where the data exceed it, the
 * host's part of the call hidden).
 */
#include "bench_args.h"
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"

#include <cmath>

namespace {

using namespace pbc;

struct dev_image {
    parsum_image im;
    explicit dev_image(parsum_context *ctx, size_t w, size_t h, int ch,
                       parsum_dtype dt)
    {
        PS(ctx, parsum_image_alloc(ctx, &im, w, h, ch, dt));
    }
};

/* Device-to-device copy of `bytes`: GB/s counting read + write. */
double copy_gbs(size_t bytes, int reps)
{
    void *x, *y;
    BC(cudaMalloc(&x, bytes));
    BC(cudaMalloc(&y, bytes));
    BC(cudaMemset(x, 1, bytes));
    const l2_flush fl;
    double ms = median_device_ms(reps, fl.active(2 * bytes), [&] {
        BC(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice));
    });
    BC(cudaFree(x));
    BC(cudaFree(y));
    return 2.0 * bytes / ms / 1e6;
}

void fill(const parsum_image &im)
{
    size_t n = im.pitch * im.height / parsum_dtype_size(im.dtype);
    unsigned g = 1024;
    switch (im.dtype) {
    case PARSUM_U8: fill_kernel<uint8_t><<<g, 256>>>((uint8_t *)im.data, n, 7, FILL_BITS); break;
    case PARSUM_F32: fill_kernel<float><<<g, 256>>>((float *)im.data, n, 7, FILL_SIGNED); break;
    default: break;
    }
    BC(cudaGetLastError());
}

struct sat_case {
    int ch;
    parsum_dtype src, tab;
};

double time_integral(parsum_context *ctx, size_t w, const sat_case &c,
                     int reps, size_t *bytes)
{
    dev_image s(ctx, w, w, c.ch, c.src), t(ctx, w + 1, w + 1, c.ch, c.tab);
    fill(s.im);
    *bytes = w * w * c.ch * (parsum_dtype_size(c.src) + parsum_dtype_size(c.tab));
    const l2_flush fl;
    double ms = median_device_ms(reps, fl.active(*bytes), [&] {
        PS(ctx, parsum_integral(ctx, &s.im, &t.im, 0, NULL));
    });
    parsum_image_free(ctx, &s.im);
    parsum_image_free(ctx, &t.im);
    return ms;
}

int run(const parsum_bench_args *args)
{
    parsum_context *ctx = NULL;
    if (parsum_context_create(&ctx, PARSUM_BACKEND_CUDA) != PARSUM_OK) {
        fprintf(stderr, "parsum bench: no CUDA context\n");
        return 1;
    }
    int reps = args->reps > 0 ? args->reps : 20;
    std::vector<size_t> widths = {2048, 4096, 8192};
    if (args->n > 0)
        widths = {(size_t)std::sqrt((double)args->n)};
    cudaDeviceProp p;
    BC(cudaGetDeviceProperties(&p, 0));
    printf("# parsum bench %s --backend cuda on %s; median of %d runs\n",
           args->what, p.name, reps);
    if (strcmp(args->what, "integral") == 0) {
        static const sat_case cases[] = {{1, PARSUM_U8, PARSUM_U32},
                                         {4, PARSUM_U8, PARSUM_U32},
                                         {1, PARSUM_F32, PARSUM_F64}};
        printf("%-6s %-12s %10s %10s %10s %8s\n", "W", "case", "ms", "GB/s",
               "copy GB/s", "of copy");
        for (size_t w : widths)
            for (const sat_case &c : cases) {
                size_t bytes;
                double ms = time_integral(ctx, w, c, reps, &bytes);
                double cp = copy_gbs(bytes / 2, reps);
                double gbs = bytes / ms / 1e6;
                char name[32];
                snprintf(name, sizeof name, "%s%s->%s", c.ch == 4 ? "4x" : "",
                         parsum_dtype_name(c.src), parsum_dtype_name(c.tab));
                printf("%-6zu %-12s %10.4f %10.1f %10.1f %7.1f%%\n", w, name,
                       ms, gbs, cp, 100 * gbs / cp);
            }
    } else {
        printf("%-6s %-6s %10s %10s %10s %12s\n", "W", "radius", "ms", "GB/s",
               "copy GB/s", "x table time");
        for (size_t w : widths) {
            size_t tb;
            double tms = time_integral(ctx, w, {1, PARSUM_U8, PARSUM_U32},
                                       reps, &tb);
            dev_image s(ctx, w, w, 1, PARSUM_U8), d(ctx, w, w, 1, PARSUM_U8);
            fill(s.im);
            double cp = copy_gbs(w * w, reps);
            const bool cold = l2_flush().active(2 * w * w);
            for (size_t r : {1, 3, 7, 15}) {
                double ms = median_device_ms(reps, cold, [&] {
                    PS(ctx, parsum_box_filter(ctx, &s.im, &d.im, r, r,
                                              PARSUM_BORDER_REFLECT_101));
                });
                double gbs = 2.0 * w * w / ms / 1e6;
                printf("%-6zu %-6zu %10.4f %10.1f %10.1f %12.2f\n", w, r, ms,
                       gbs, cp, ms / tms);
            }
            parsum_image_free(ctx, &s.im);
            parsum_image_free(ctx, &d.im);
        }
    }
    parsum_context_destroy(ctx);
    return 0;
}

} /* namespace */

extern "C" int parsum_bench_cuda_image(const parsum_bench_args *args)
{
    try {
        return run(args);
    } catch (const bench_error &) {
        return 1;
    }
}
