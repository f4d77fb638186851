/*
 * tonemap_px.h - what the tone-mapping slots compute per pixel (parsum.h,
 * parsum_tonemap; the pipeline is src/hist/tonemap.c), in one place for the
 * CPU backend (src/cpu/tonemap.c) and the CUDA backend
 * (src/cuda/tonemap.cu), so that both run the same float64 formulas in the
 * same order. The only differences left are those of the math library:
 * log10 and pow may differ by an ulp between host and device, which moves
 * an output by at most one U8 / U16 step (and a log luminance by one float
 * ulp, which can move a pixel across a bin edge of the histogram).
 *
 * Samples are first made "linear values": integer samples divided by their
 * largest value (255 or 65535), float samples as they are; colour samples
 * below 0 count as 0. The serial reference (src/ref/ref_tonemap.c) is
 * written separately on purpose, from parsum.h's description.
 */
#ifndef PARSUM_TONEMAP_PX_H
#define PARSUM_TONEMAP_PX_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PARSUM__TM_HD __host__ __device__ __forceinline__
#else
#define PARSUM__TM_HD static inline
#endif

/* The colour channels among `channels` samples: 1 (grey, grey + alpha) or
 * 3 (RGB, RGBA); alpha, when present, is the last sample. */
PARSUM__TM_HD int parsum__tm_colours(int channels)
{
    return channels >= 3 ? 3 : 1;
}

PARSUM__TM_HD int parsum__tm_has_alpha(int channels)
{
    return channels == 2 || channels == 4;
}

/* A colour sample (raw value of a sample whose type's largest value is
 * maxval: 255, 65535, or 1 for floats) as a linear value >= 0. */
PARSUM__TM_HD double parsum__tm_colour(double raw, double maxval)
{
    double v = raw / maxval;
    return v > 0.0 ? v : 0.0;
}

/* An alpha sample as a value in [0, 1]. */
PARSUM__TM_HD double parsum__tm_alpha(double raw, double maxval)
{
    double v = raw / maxval;
    return v > 0.0 ? (v < 1.0 ? v : 1.0) : 0.0;
}

/* Luminance of the linear colour values c[0..colours-1] (Rec. 709 / sRGB
 * primaries), capped at DBL_MAX (three huge float64 samples may overflow
 * the sum). */
PARSUM__TM_HD double parsum__tm_luminance(const double *c, int colours)
{
    double l = colours == 3 ? 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
                            : c[0];
    return l < DBL_MAX ? l : DBL_MAX;
}

/* The log luminance stored for a pixel: NaN for a black one. */
PARSUM__TM_HD float parsum__tm_loglum(double lum, double min_luminance)
{
    return lum > min_luminance ? (float)log10(lum) : (float)NAN;
}

/* Display luminance of a non-black pixel with log luminance l: the table
 * ld_edges (nbins + 1 values at the bin edges), interpolated linearly
 * within bin floor(t), t = (l - lmin) * scale clamped to [0, nbins]. */
PARSUM__TM_HD double parsum__tm_ld(float l, const double *ld_edges,
                                   size_t nbins, double lmin, double scale)
{
    double t = ((double)l - lmin) * scale;
    if (!(t > 0.0))
        t = 0.0;
    if (t > (double)nbins)
        t = (double)nbins;
    size_t i = (size_t)t;
    if (i >= nbins)
        i = nbins - 1;
    double e0 = ld_edges[i], e1 = ld_edges[i + 1];
    return e0 + (e1 - e0) * (t - (double)i);
}

/* A colour value of the output: the linear value c of luminance lum
 * scaled to display luminance ld, clipped to [0, 1]. */
PARSUM__TM_HD double parsum__tm_scale(double c, double lum, double ld)
{
    if (!(lum > 0.0))
        return 0.0;
    double v = c * ld / lum;
    return v > 0.0 ? (v < 1.0 ? v : 1.0) : 0.0;
}

/* The standard sRGB transfer function (IEC 61966-2-1) of v in [0, 1]. */
PARSUM__TM_HD double parsum__tm_srgb(double v)
{
    return v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1.0 / 2.4) - 0.055;
}

/* v in [0, 1] to an integer sample of largest value maxval, rounded to
 * nearest (halves up). */
PARSUM__TM_HD uint32_t parsum__tm_quantize(double v, double maxval)
{
    double q = floor(v * maxval + 0.5);
    return (uint32_t)(q < 0.0 ? 0.0 : q > maxval ? maxval : q);
}

#endif
