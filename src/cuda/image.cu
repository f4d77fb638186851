/*
 * image.cu - the CUDA backend's image slots: summed-area tables, box sums
 * and the box filter (kernels and their idea in image_kernels.cuh).
 */
#include "cuda_internal.h"
#include "image_box_u8.cuh"
#include "image_sat_u8.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace parsum_img;
using parsum_cu::aux_grid;
using parsum_cu::carve;
using parsum_cu::round_up;

namespace {

constexpr unsigned SUM_BLOCKS = 128; /* image_sum_kernel: fixed grouping */

img_in in_of(const parsum_image &im)
{
    return {static_cast<const char *>(im.data), im.pitch, im.width,
            im.height};
}

/* Tiles of about 1024 in all, 4 to 64 rows high: a function of the image
 * size only, so the float grouping is too. */
sat_geom geom_for(u64 w, u64 h)
{
    sat_geom g;
    g.strips = (w + STRIP - 1) / STRIP;
    u64 rows = (h * g.strips + 1023) / 1024;
    g.band_rows = rows < 4 ? 4 : rows > MAX_BAND ? MAX_BAND : rows;
    g.bands = (h + g.band_rows - 1) / g.band_rows;
    return g;
}

/* The one-pass table serves integer accumulators; the environment
 * variable PARSUM_CUDA_SAT_ONEPASS=0 sends them through the three steps
 * instead (for measurements: both in one process). */
bool sat_onepass_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_SAT_ONEPASS");
}

/* PARSUM_CUDA_SAT_CACHE=0 keeps the one-pass kernel from caching a tile's
 * pixels in shared memory (for measurements and tests of both paths). */
bool sat_cache_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_SAT_CACHE");
}

/* PARSUM_CUDA_SAT_U8=0 sends one-channel u8 images to the general
 * one-pass kernel instead of sat_u8_kernel (measurements, tests). */
bool sat_u8_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_SAT_U8");
}

/* sat_u8_kernel's status words are tagged with the call (no memset before
 * it); PARSUM_CUDA_SAT_TAGS=0 zeroes them instead (measurements, tests). */
bool sat_tags_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_SAT_TAGS");
}

/* PARSUM_CUDA_BOX_U8=0 sends one-channel u8 images to the general box
 * filter instead of box_u8_kernel (measurements, tests). */
bool box_u8_on()
{
    return parsum__cuda_env_on("PARSUM_CUDA_BOX_U8");
}

/* Bytes of the one-pass look-back state (sat_lb): status words, the tile
 * counter and sat_u8_kernel's packed words first (zeroed per call), then
 * the value arrays. */
size_t sat_lb_status_bytes(const sat_geom &g)
{
    const u64 tiles = g.bands * g.strips;
    return round_up((2 * tiles + 2) * sizeof(u32) + tiles * sizeof(u64), 256);
}

/* Bytes of sat_u8_kernel's tagged words (sat_lb::hwt, vwt), which follow
 * the status words: 1 KB of row words and 4 KB of column words a tile. */
size_t sat_u8_tw_bytes(const sat_geom &g)
{
    const u64 tiles = g.bands * g.strips;
    return round_up(tiles * (U8_HW + U8_VW) * 8, 256);
}

size_t sat_lb_bytes(const sat_geom &g, int ch, size_t acc)
{
    const u64 tiles = g.bands * g.strips;
    return sat_lb_status_bytes(g) +
           2 * round_up(tiles * MAX_BAND * ch * acc, 256) +
           2 * round_up(tiles * STRIP * ch * acc, 256) +
           2 * round_up(tiles * ch * acc, 256);
}

/* The tiles of sat_u8_kernel: 1024 columns by 64 rows (16 per warp),
 * never more tiles than the general geometry's, whose look-back state the
 * scratch holds (sat_scratch_bytes). The general geometry's thinner bands
 * for smaller images (4 rows at 2048^2, 16 at 4096^2) made long chains of
 * look-backs down their few strips: with 64-row bands, on an H200, 1024^2
 * takes 0.019 ms instead of 0.038, 2048^2 0.025 instead of 0.080, 4096^2
 * 0.044 instead of 0.071 (32-row bands: 0.019, 0.024, 0.055). */
sat_geom geom_u8(u64 w, u64 h)
{
    sat_geom g = geom_for(w, h);
    g.band_rows = MAX_BAND;
    g.bands = (h + g.band_rows - 1) / g.band_rows;
    return g;
}

/* Scratch bytes of one table computation with accumulators of acc bytes
 * (the largest of the methods' needs). */
size_t sat_scratch_bytes(const parsum_image &src, size_t acc)
{
    sat_geom g = geom_for(src.width, src.height);
    size_t three = round_up(g.bands * src.width * src.channels * acc, 256) +
                   round_up(src.height * g.strips * src.channels * acc, 256);
    size_t need = std::max(three, sat_lb_bytes(g, src.channels, acc));
    if (src.dtype == PARSUM_U8 && src.channels == 1) {
        const sat_geom gu = geom_u8(src.width, src.height);
        need = std::max(need, sat_lb_bytes(gu, 1, sizeof(u32)) + sat_u8_tw_bytes(gu));
    }
    return need + 256;
}

/* Steps 1-3 of the table (image_kernels.cuh) of src into tab. */
/* 16 or 4 when data and pitch are multiples of it (vector loads), else 0. */
int load_align(const parsum_image &im)
{
    uintptr_t a = reinterpret_cast<uintptr_t>(im.data) | im.pitch;
    return a % 16 == 0 ? 16 : a % 4 == 0 ? 4 : 0;
}

/* Dynamic shared memory of the caching one-pass kernel: a tile's raw
 * pixels. */
template <class Src, int CH>
size_t sat_cache_bytes(const sat_geom &g)
{
    return (size_t)g.band_rows * THREADS * chunk<Src, CH>::BYTES;
}

template <class Acc>
using sat_onepass_fn = void (*)(img_in, img_out, int, sat_geom, term_args,
                                sat_lb<Acc>);

/* Whether the one-pass kernel kern may keep the tile's pixels in shared
 * memory (bytes of it), into *fits: only where the cache costs no
 * resident block (the kernel is compiled for sat_onepass_blocks per
 * multiprocessor), else the second pass reads them again from L2. The
 * attribute is set every call, as it is per device. */
template <class Acc, int CH>
parsum_status sat_cache_fits(parsum_context *ctx, sat_onepass_fn<Acc> kern,
                             size_t bytes, bool *fits)
{
    *fits = false;
    if (!sat_cache_on())
        return PARSUM_OK;
    int optin = 0;
    PARSUM_CUDA_TRY(ctx, cudaDeviceGetAttribute(
                             &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             parsum__cuda_st(ctx)->device));
    if (bytes > (size_t)optin)
        return PARSUM_OK;
    PARSUM_CUDA_TRY(ctx, cudaFuncSetAttribute(
                             kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)bytes));
    int blocks = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &blocks, kern, THREADS, bytes));
    *fits = blocks >= sat_onepass_blocks<Acc, CH, true>();
    return PARSUM_OK;
}

/* The look-back state of the one-pass kernels for geometry g, carved from
 * the scratch (sat_lb_bytes for a geometry with as many tiles or more),
 * its status words and tile counter zeroed on the stream; or, TAGGED, the
 * status words and counter in the context's tagged buffer (the counter
 * first, then hst, vst, wpk), to be tagged with lb->tag. TW (sat_u8_kernel):
 * its tagged value words (hwt, vwt) follow the status words, in the same
 * buffer or carve and zeroed with them. */
template <class Acc, int CH>
parsum_status sat_lb_take(parsum_context *ctx, const sat_geom &g, carve &cv,
                          sat_lb<Acc> *lb, bool tagged = false, bool tw = false)
{
    const u64 tiles = g.bands * g.strips;
    unsigned char *status = NULL;
    const size_t sb = sat_lb_status_bytes(g), twb = tw ? sat_u8_tw_bytes(g) : 0;
    lb->tag = lb->tile_base = 0;
    lb->hwt = lb->vwt = NULL;
    if (tagged) {
        void *buf = NULL;
        parsum_status s = parsum__cuda_tagged_status(
            ctx, PARSUM__TAGGED_SAT, sb + twb, (unsigned)tiles,
            &buf, &lb->tag, &lb->tile_base);
        if (s != PARSUM_OK)
            return s;
        lb->counter = static_cast<u32 *>(buf);
        lb->hst = lb->counter + 2;
        lb->vst = lb->hst + tiles;
        lb->wpk = reinterpret_cast<u64 *>(lb->vst + tiles);
        status = static_cast<unsigned char *>(buf);
    } else {
        status = static_cast<unsigned char *>(cv.take(sb + twb));
        lb->hst = reinterpret_cast<u32 *>(status);
        lb->vst = lb->hst + tiles;
        lb->counter = lb->vst + tiles;
        lb->wpk = reinterpret_cast<u64 *>(lb->hst + 2 * tiles + 2);
    }
    lb->hagg = static_cast<Acc *>(cv.take(tiles * MAX_BAND * CH * sizeof(Acc)));
    lb->hinc = static_cast<Acc *>(cv.take(tiles * MAX_BAND * CH * sizeof(Acc)));
    lb->vagg = static_cast<Acc *>(cv.take(tiles * STRIP * CH * sizeof(Acc)));
    lb->vinc = static_cast<Acc *>(cv.take(tiles * STRIP * CH * sizeof(Acc)));
    lb->wagg = static_cast<Acc *>(cv.take(tiles * CH * sizeof(Acc)));
    lb->winc = static_cast<Acc *>(cv.take(tiles * CH * sizeof(Acc)));
    if (tw) {
        lb->hwt = reinterpret_cast<unsigned long long *>(status + sb);
        lb->vwt = lb->hwt + tiles * U8_HW;
    }
    if (!tagged)
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(status, 0, sb + twb,
                                             parsum__cuda_st(ctx)->stream));
    return PARSUM_OK;
}

/* The table of a one-channel u8 image into U32, on the tiles of geom_u8,
 * by sat_u8_kernel (image_sat_u8.cuh). (Three kernels without look-backs,
 * taken up to two waves of tiles until 2026-11-27, lost to it at every size
 * once its look-backs used tagged words: NOTES section 10.) */
parsum_status sat_u8(parsum_context *ctx, const parsum_image &src, img_out tab,
                     int pad, carve &cv)
{
    const sat_geom g = geom_u8(src.width, src.height);
    sat_lb<u32> lb;
    const bool tagged = sat_tags_on() && !parsum__cuda_capturing(ctx);
    parsum_status s = sat_lb_take<u32, 1>(ctx, g, cv, &lb, tagged, true);
    if (s != PARSUM_OK)
        return s;
    void (*kern)(img_in, img_out, sat_geom, sat_lb<u32>) =
        pad ? sat_u8_kernel<true> : sat_u8_kernel<false>;
    const size_t bytes = g.band_rows * STRIP;
    cudaError_t e = cudaFuncSetAttribute(
        kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess) {
        kern<<<(unsigned)(g.bands * g.strips), THREADS, bytes,
               parsum__cuda_st(ctx)->stream>>>(in_of(src), tab, g, lb);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess && tagged)
        parsum__cuda_tagged_reset(ctx, PARSUM__TAGGED_SAT); /* counter unmoved */
    PARSUM_CUDA_TRY(ctx, e);
    return PARSUM_OK;
}

/* The one-pass table (image_sat.cuh) of src into tab. */
template <class Src, class Acc, class Tab, int CH>
parsum_status sat_onepass(parsum_context *ctx, const parsum_image &src,
                          img_out tab, int pad, const term_args &ta,
                          const sat_geom &g, carve &cv)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    const u64 tiles = g.bands * g.strips;
    sat_lb<Acc> lb;
    parsum_status s = sat_lb_take<Acc, CH>(ctx, g, cv, &lb);
    if (s != PARSUM_OK)
        return s;
    const size_t bytes = sat_cache_bytes<Src, CH>(g);
    const sat_onepass_fn<Acc> cached = sat_onepass_kernel<Src, Acc, Tab, CH, true>;
    bool fits = false;
    s = sat_cache_fits<Acc, CH>(ctx, cached, bytes, &fits);
    if (s != PARSUM_OK)
        return s;
    if (fits) {
        cached<<<(unsigned)tiles, THREADS, bytes, st->stream>>>(in_of(src), tab,
                                                               pad, g, ta, lb);
    } else {
        sat_onepass_kernel<Src, Acc, Tab, CH, false>
            <<<(unsigned)tiles, THREADS, 0, st->stream>>>(in_of(src), tab, pad,
                                                           g, ta, lb);
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class Src, class Acc, class Tab, int CH>
parsum_status sat_run(parsum_context *ctx, const parsum_image &src,
                      img_out tab, int pad, term_args ta, carve &cv)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    ta.align = load_align(src);
    ta.store_vec = ((reinterpret_cast<uintptr_t>(tab.data) | tab.pitch) % 16) == 0;
    const sat_geom g = geom_for(src.width, src.height);
    if constexpr (std::is_same<Src, uint8_t>::value &&
                  std::is_same<Tab, u32>::value && CH == 1) {
        if (sat_onepass_on() && sat_u8_on() && !ta.sq && ta.align >= 4 &&
            ta.store_vec)
            return sat_u8(ctx, src, tab, pad, cv);
    }
    if constexpr (std::is_integral<Acc>::value) {
        if (sat_onepass_on())
            return sat_onepass<Src, Acc, Tab, CH>(ctx, src, tab, pad, ta, g, cv);
    }
    Acc *colsum = static_cast<Acc *>(
        cv.take(g.bands * src.width * CH * sizeof(Acc)));
    Acc *rowtot = static_cast<Acc *>(
        cv.take(src.height * g.strips * CH * sizeof(Acc)));
    dim3 grid((unsigned)g.strips, (unsigned)g.bands);
    sat_band_kernel<Src, Acc, CH><<<grid, THREADS, 0, st->stream>>>(
        in_of(src), g, ta, colsum, rowtot);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    const u64 samples = src.width * CH;
    sat_carry_down_kernel<Acc><<<aux_grid(ctx, samples, THREADS), THREADS, 0,
                                 st->stream>>>(colsum, samples, g.bands);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    sat_carry_strips_kernel<Acc><<<aux_grid(ctx, src.height * CH, THREADS),
                                   THREADS, 0, st->stream>>>(
        rowtot, src.height, g.strips, CH);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    sat_carry_rows_kernel<Acc, CH>
        <<<(unsigned)g.bands, THREADS, 0, st->stream>>>(colsum, src.width);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    sat_final_kernel<Src, Acc, Tab, CH><<<grid, THREADS, 0, st->stream>>>(
        in_of(src), tab, pad, g, ta, colsum, rowtot);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class Src, class Acc, class Tab>
parsum_status sat_channels(parsum_context *ctx, const parsum_image &src,
                           img_out tab, int pad, const term_args &ta,
                           carve &cv)
{
    switch (src.channels) {
    case 1: return sat_run<Src, Acc, Tab, 1>(ctx, src, tab, pad, ta, cv);
    case 2: return sat_run<Src, Acc, Tab, 2>(ctx, src, tab, pad, ta, cv);
    case 3: return sat_run<Src, Acc, Tab, 3>(ctx, src, tab, pad, ta, cv);
    default: return sat_run<Src, Acc, Tab, 4>(ctx, src, tab, pad, ta, cv);
    }
}

/* The table kinds: U32 (uint32 sums), U64 and I64 (uint64 sums, the same
 * bits), F32 and F64 (float64 sums). Float images only get float tables
 * (the core checks). */
template <class Src>
parsum_status sat_table(parsum_context *ctx, const parsum_image &src,
                        parsum_dtype tdt, img_out tab, int pad,
                        const term_args &ta, carve &cv)
{
    if constexpr (std::is_integral<Src>::value) {
        if (tdt == PARSUM_U32)
            return sat_channels<Src, u32, u32>(ctx, src, tab, pad, ta, cv);
        if (tdt == PARSUM_U64 || tdt == PARSUM_I64)
            return sat_channels<Src, u64, u64>(ctx, src, tab, pad, ta, cv);
    }
    if (tdt == PARSUM_F32)
        return sat_channels<Src, double, float>(ctx, src, tab, pad, ta, cv);
    return sat_channels<Src, double, double>(ctx, src, tab, pad, ta, cv);
}

parsum_status sat_dispatch(parsum_context *ctx, const parsum_image &src,
                           parsum_dtype tdt, img_out tab, int pad,
                           const term_args &ta, carve &cv)
{
    switch (src.dtype) {
    case PARSUM_U8: return sat_table<uint8_t>(ctx, src, tdt, tab, pad, ta, cv);
    case PARSUM_U16: return sat_table<uint16_t>(ctx, src, tdt, tab, pad, ta, cv);
    case PARSUM_I32: return sat_table<int32_t>(ctx, src, tdt, tab, pad, ta, cv);
    case PARSUM_F32: return sat_table<float>(ctx, src, tdt, tab, pad, ta, cv);
    default: return sat_table<double>(ctx, src, tdt, tab, pad, ta, cv);
    }
}

template <class Src>
void launch_sum(parsum_context *ctx, const parsum_image &src, double *part)
{
    cudaStream_t s = parsum__cuda_st(ctx)->stream;
    switch (src.channels) {
    case 1: image_sum_kernel<Src, 1><<<SUM_BLOCKS, THREADS, 0, s>>>(in_of(src), part); break;
    case 2: image_sum_kernel<Src, 2><<<SUM_BLOCKS, THREADS, 0, s>>>(in_of(src), part); break;
    case 3: image_sum_kernel<Src, 3><<<SUM_BLOCKS, THREADS, 0, s>>>(in_of(src), part); break;
    default: image_sum_kernel<Src, 4><<<SUM_BLOCKS, THREADS, 0, s>>>(in_of(src), part); break;
    }
}

/* Each channel's float64 mean into mean[] (host): fixed per-block sums,
 * added on the host in block order. Waits for the device. */
parsum_status image_mean(parsum_context *ctx, const parsum_image &src,
                         double *dev_part, double *mean)
{
    switch (src.dtype) {
    case PARSUM_U8: launch_sum<uint8_t>(ctx, src, dev_part); break;
    case PARSUM_U16: launch_sum<uint16_t>(ctx, src, dev_part); break;
    case PARSUM_I32: launch_sum<int32_t>(ctx, src, dev_part); break;
    case PARSUM_F32: launch_sum<float>(ctx, src, dev_part); break;
    default: launch_sum<double>(ctx, src, dev_part); break;
    }
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    double part[SUM_BLOCKS * 4];
    const int ch = src.channels;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(part, dev_part,
                                         SUM_BLOCKS * ch * sizeof(double),
                                         cudaMemcpyDeviceToHost, st->stream));
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    for (int c = 0; c < ch; c++) {
        double s = 0;
        for (unsigned b = 0; b < SUM_BLOCKS; b++)
            s += part[b * ch + c];
        mean[c] = s / ((double)src.width * (double)src.height);
    }
    return PARSUM_OK;
}

bool is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

} /* namespace */

parsum_status parsum__cuda_integral(parsum_context *ctx,
                                    const parsum__integral_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    size_t acc = a->table.dtype == PARSUM_U32 ? 4 : 8;
    size_t bytes = sat_scratch_bytes(a->src, acc) +
                   SUM_BLOCKS * 4 * sizeof(double) + 256;
    carve cv = {static_cast<unsigned char *>(parsum__scratch(ctx, bytes, a->fn)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    double *part = static_cast<double *>(cv.take(SUM_BLOCKS * 4 * sizeof(double)));
    if (a->offset_mean) {
        s = image_mean(ctx, a->src, part, a->offset);
        if (s != PARSUM_OK)
            return s;
    }
    term_args ta;
    ta.sq = a->squared;
    for (int c = 0; c < 4; c++)
        ta.off[c] = a->offset != NULL && c < a->src.channels &&
                            is_float(a->table.dtype)
                        ? a->offset[c]
                        : 0.0;
    img_out tab = {static_cast<char *>(a->table.data), a->table.pitch};
    return sat_dispatch(ctx, a->src, a->table.dtype, tab, a->inclusive ? 0 : 1,
                        ta, cv);
}

namespace {

template <class Tab, class Acc>
parsum_status launch_box_sums(parsum_context *ctx,
                              const parsum__box_sums_args *a)
{
    table_view<Tab> t = {static_cast<const char *>(a->table.data),
                         a->table.pitch, a->table.channels,
                         a->inclusive ? 0 : 1};
    u64 w = a->table.width - t.pad, h = a->table.height - t.pad;
    term_args ta;
    ta.sq = a->squared;
    for (int c = 0; c < 4; c++)
        ta.off[c] = a->offset != NULL && c < a->table.channels ? a->offset[c]
                                                               : 0.0;
    box_sums_kernel<Tab, Acc>
        <<<aux_grid(ctx, a->nrect, THREADS), THREADS, 0,
           parsum__cuda_st(ctx)->stream>>>(
            t, w, h, reinterpret_cast<const rect64 *>(a->rects), a->nrect,
            a->means, a->offset != NULL && !a->squared, ta,
            a->table.dtype == PARSUM_I64, a->out);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

} /* namespace */

parsum_status parsum__cuda_box_sums(parsum_context *ctx,
                                    const parsum__box_sums_args *a)
{
    static_assert(sizeof(parsum_rect) == sizeof(rect64), "rect layout");
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    switch (a->table.dtype) {
    case PARSUM_U32: return launch_box_sums<u32, u64>(ctx, a);
    case PARSUM_F32: return launch_box_sums<float, double>(ctx, a);
    case PARSUM_F64: return launch_box_sums<double, double>(ctx, a);
    default: return launch_box_sums<u64, u64>(ctx, a);
    }
}

namespace {

/* Rows per block of box_stream_kernel (kern) over h rows of strips
 * strips, into *band: the bands of a column of blocks are sized so that the grid
 * fills whole waves of resident blocks (a last wave a fraction full would
 * leave most multiprocessors idle), as few waves as bands of at most
 * BOX_STREAM_BAND rows allow: every band first sums its 2 ry + 1 window
 * rows, so long bands waste least (8192^2, radius 15: one wave of
 * 187-row bands 0.256 ms, two of 94 rows 0.266 ms, three of 63 rows
 * 0.274 ms on an H200), and at least 32 rows. */
parsum_status box_band_rows(parsum_context *ctx,
                            void (*kern)(img_in, img_out, box_geom, u64),
                            u64 h, u64 strips, u64 *band)
{
    int per_sm = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, kern, THREADS, 0));
    if (per_sm < 1)
        per_sm = 1;
    const u64 slots = (u64)per_sm * (u64)parsum__cuda_st(ctx)->sm_count;
    const u64 wave = std::max<u64>(1, slots / strips); /* bands per wave */
    u64 bands = wave;
    while ((h + bands - 1) / bands > BOX_STREAM_BAND)
        bands += wave;
    *band = std::max<u64>(32, (h + bands - 1) / bands);
    /* The grid's y dimension holds at most 65535 bands. */
    *band = std::max<u64>(*band, (h + 65534) / 65535);
    return PARSUM_OK;
}

/* The window and the division rule of a box filter of Dst samples. */
template <class Dst>
box_geom box_geom_for(const parsum__box_filter_args *a)
{
    box_geom g = {};
    g.width = a->src.width;
    g.height = a->src.height;
    g.rx = (i64)a->rx;
    g.ry = (i64)a->ry;
    g.border = (int)a->border;
    g.area = (i64)(2 * a->rx + 1) * (i64)(2 * a->ry + 1);
    g.inv_area = 1.0 / (double)g.area;
    g.inv_area_f = 1.0f / (float)g.area;
    if constexpr (std::is_same<Dst, uint8_t>::value ||
                  std::is_same<Dst, uint16_t>::value) {
        /* Window sums of samples up to max, plus the rounding half. */
        const double max = (double)std::numeric_limits<Dst>::max();
        g.small = max * (double)g.area + (double)(g.area / 2) < 16777216.0;
    }
    return g;
}

/* box_u8_kernel serves one-channel u8 images at least BU8_MIN_WIDTH wide
 * with radii up to 127 whose rows (source and destination) are 4-byte
 * aligned. */
bool box_u8_fits(const parsum__box_filter_args *a)
{
    return a->rx <= (size_t)BU8_MAX_R && a->ry <= (size_t)BU8_MAX_R &&
           a->src.width >= (size_t)BU8_MIN_WIDTH &&
           a->src.width < (1u << 30) && a->src.height < (1u << 30) &&
           load_align(a->src) != 0 && load_align(a->dst) != 0 && box_u8_on();
}

/* Strips of BU8_STRIP loaded columns, a warp per strip and band; the bands
 * are as many as fill one wave of resident warps. The mean's multiplier:
 * with l = ceil(log2 area), m = ceil(2^(24 + l) / area) gives floor(n /
 * area) = (n m) >> (24 + l) for every n < 2^24 (Granlund and Montgomery
 * 1994, theorem 4.2), and the rounded sums stay below 2^24: at most 255
 * area + area / 2 with area <= 255^2. */
parsum_status box_u8_run(parsum_context *ctx, const parsum__box_filter_args *a)
{
    box_u8_geom g = {};
    g.width = (int)a->src.width;
    g.height = (int)a->src.height;
    g.rx = (int)a->rx;
    g.ry = (int)a->ry;
    g.border = (int)a->border;
    g.s = (g.rx + 4) & ~3;
    g.ow = (BU8_STRIP - g.s - g.rx) & ~3;
    g.strips = (g.width + g.ow - 1) / g.ow;
    const u64 area = (u64)(2 * g.rx + 1) * (u64)(2 * g.ry + 1);
    int l = 0;
    while ((1ull << l) < area)
        l++;
    const u64 m = ((1ull << (24 + l)) + area - 1) / area;
    g.mul = (u32)m;
    g.addend = (area / 2) * m;
    g.shift = 24 + l;
    int per_sm = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, box_u8_kernel, 32 * BU8_WARPS, 0));
    const u64 slots = (u64)std::max(per_sm, 1) * BU8_WARPS *
                      (u64)parsum__cuda_st(ctx)->sm_count;
    const u64 bands = std::max<u64>(1, slots / (u64)g.strips);
    g.band_rows = (int)std::max<u64>(8, (a->src.height + bands - 1) / bands);
    const u64 items = (u64)g.strips *
                      ((a->src.height + g.band_rows - 1) / g.band_rows);
    img_out d = {static_cast<char *>(a->dst.data), a->dst.pitch};
    box_u8_kernel<<<(unsigned)((items + BU8_WARPS - 1) / BU8_WARPS),
                    32 * BU8_WARPS, 0, parsum__cuda_st(ctx)->stream>>>(
        in_of(a->src), d, g, (int)items);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class Dst, class Tab, class Acc, int CH>
parsum_status box_run(parsum_context *ctx, const parsum__box_filter_args *a,
                      const parsum_image &tab, carve &cv)
{
    if constexpr (std::is_same<Dst, uint8_t>::value && CH == 1)
        if (box_u8_fits(a))
            return box_u8_run(ctx, a);
    if (a->rx <= (size_t)BOX_STREAM_MAX_RX) {
        const box_geom g = box_geom_for<Dst>(a);
        const u64 ow = STRIP - 2 * a->rx - 1;
        const u64 strips = (a->src.width + ow - 1) / ow;
        u64 band = 0;
        parsum_status s = box_band_rows(ctx, box_stream_kernel<Dst, Acc, CH>,
                                        a->src.height, strips, &band);
        if (s != PARSUM_OK)
            return s;
        dim3 grid((unsigned)strips,
                  (unsigned)((a->src.height + band - 1) / band));
        img_out d = {static_cast<char *>(a->dst.data), a->dst.pitch};
        box_stream_kernel<Dst, Acc, CH>
            <<<grid, THREADS, 0, parsum__cuda_st(ctx)->stream>>>(
                in_of(a->src), d, g, band);
        PARSUM_CUDA_TRY(ctx, cudaGetLastError());
        return PARSUM_OK;
    }
    term_args ta = {};
    img_out to = {static_cast<char *>(tab.data), tab.pitch};
    parsum_status s = sat_run<Dst, Acc, Tab, CH>(ctx, a->src, to, 1, ta, cv);
    if (s != PARSUM_OK)
        return s;
    table_view<Tab> t = {static_cast<const char *>(tab.data), tab.pitch, CH,
                         1};
    const box_geom g = box_geom_for<Dst>(a);
    img_out d = {static_cast<char *>(a->dst.data), a->dst.pitch};
    /* Blocks across a row, rows spread over the rest of the grid. */
    unsigned gx = (unsigned)((a->src.width + THREADS - 1) / THREADS);
    unsigned gy = (unsigned)std::min<u64>(a->src.height,
                                          std::max<u64>(1, 65536 / gx));
    gy = std::min(gy, 65535u);
    box_eval_kernel<Dst, Tab, Acc, CH>
        <<<dim3(gx, gy), THREADS, 0, parsum__cuda_st(ctx)->stream>>>(t, g, d);
    PARSUM_CUDA_TRY(ctx, cudaGetLastError());
    return PARSUM_OK;
}

template <class Dst, class Tab, class Acc>
parsum_status box_channels(parsum_context *ctx,
                           const parsum__box_filter_args *a,
                           const parsum_image &tab, carve &cv)
{
    switch (a->src.channels) {
    case 1: return box_run<Dst, Tab, Acc, 1>(ctx, a, tab, cv);
    case 2: return box_run<Dst, Tab, Acc, 2>(ctx, a, tab, cv);
    case 3: return box_run<Dst, Tab, Acc, 3>(ctx, a, tab, cv);
    default: return box_run<Dst, Tab, Acc, 4>(ctx, a, tab, cv);
    }
}

} /* namespace */

/* The table of the image (default layout) in scratch memory, then the
 * border-aware four-corner evaluation. Unsigned images whose window sums
 * stay below 2^32 use a U32 table (half the bytes); other integers a
 * 64-bit one (their window sums fit in int64: radius <= 2^14); floats a
 * float64 one. */
parsum_status parsum__cuda_box_filter(parsum_context *ctx,
                                      const parsum__box_filter_args *a)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, a->fn);
    if (s != PARSUM_OK)
        return s;
    const double area = (double)(2 * a->rx + 1) * (double)(2 * a->ry + 1);
    const parsum_dtype dt = a->src.dtype;
    const bool narrow = (dt == PARSUM_U8 && 255.0 * area < 4294967296.0) ||
                        (dt == PARSUM_U16 && 65535.0 * area < 4294967296.0);
    const size_t tsz = narrow ? 4 : 8;
    parsum_image tab = a->src;
    tab.width = a->src.width + 1;
    tab.height = a->src.height + 1;
    tab.pitch = round_up(tab.width * a->src.channels * tsz, 256);
    size_t bytes = a->rx <= (size_t)BOX_STREAM_MAX_RX
                       ? 256
                       : tab.pitch * tab.height + sat_scratch_bytes(a->src, tsz) + 256;
    carve cv = {static_cast<unsigned char *>(parsum__scratch(ctx, bytes, a->fn)),
                0};
    if (cv.base == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    if (a->rx > (size_t)BOX_STREAM_MAX_RX)
        tab.data = cv.take(tab.pitch * tab.height);
    switch (dt) {
    case PARSUM_U8:
        return narrow ? box_channels<uint8_t, u32, u32>(ctx, a, tab, cv)
                      : box_channels<uint8_t, u64, u64>(ctx, a, tab, cv);
    case PARSUM_U16:
        return narrow ? box_channels<uint16_t, u32, u32>(ctx, a, tab, cv)
                      : box_channels<uint16_t, u64, u64>(ctx, a, tab, cv);
    case PARSUM_I32: return box_channels<int32_t, u64, u64>(ctx, a, tab, cv);
    case PARSUM_F32: return box_channels<float, double, double>(ctx, a, tab, cv);
    default: return box_channels<double, double, double>(ctx, a, tab, cv);
    }
}
