/*
 * tonemap_cmd.c - `parsum tonemap`: an HDR image file to a displayable one
 * by histogram equalisation of its log luminance (parsum_tonemap),
 * optionally with Ward's histogram adjustment, on the CPU or a GPU.
 *
 *   parsum tonemap [--ward] [--bins N] [--contrast C] [--backend B] IN OUT
 *
 * The input is read into host memory (parsum_image_read); on a CUDA
 * context it is copied to a device image, tone-mapped there, and the
 * result copied back. OUT's extension picks the output: .pfm and .hdr get
 * linear f32 values in [0, 1], every other format sRGB-encoded u8.
 */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_usage_tonemap(void)
{
    fputs(
        "usage: parsum tonemap [options] IN OUT\n"
        "\n"
        "Maps the high-dynamic-range image IN (Radiance .hdr, PFM, or an\n"
        "8/16-bit PNG, JPEG, PGM/PPM taken as linear light) to display\n"
        "values by histogram equalisation of its log luminance, and writes\n"
        "OUT: sRGB-encoded 8-bit samples for .png, .jpg, .pgm and .ppm,\n"
        "linear 32-bit floats in [0, 1] for .pfm and .hdr. Alpha (2 or 4\n"
        "channels) is copied. NaN or infinite samples are an error;\n"
        "negative samples count as 0.\n"
        "\n"
        "options:\n"
        "  --ward          Ward's histogram adjustment (Ward Larson,\n"
        "                  Rushmeier and Piatko 1997): contrast is never\n"
        "                  exaggerated beyond the scene's, for a display of\n"
        "                  the --contrast ratio\n"
        "  --bins N        histogram bins, 1 to 1048576 (default 1024)\n"
        "  --contrast C    the display's contrast ratio for --ward, > 1\n"
        "                  (default 100)\n"
        "  --backend B     cpu, cuda or auto (default auto: the GPU when one\n"
        "                  is present, else the CPU)\n"
        "\n"
        "examples:\n"
        "  parsum tonemap memorial.hdr memorial.png\n"
        "  parsum tonemap --ward --contrast 300 scene.pfm scene.png\n"
        "\n"
        "exit status: 0 success, 1 runtime error (unreadable or corrupt\n"
        "file, NaN pixels, library error), 2 usage error\n",
        stdout);
}

typedef struct tonemap_args {
    const char *in, *out;
    parsum_backend backend;
    parsum_tonemap_params p;
} tonemap_args;

/* Whether path ends in .ext (case-insensitive, ext lower case). */
static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    if (n < e + 1 || path[n - e - 1] != '.')
        return false;
    for (size_t i = 0; i < e; i++) {
        char c = path[n - e + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != ext[i])
            return false;
    }
    return true;
}

static int parse_contrast(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 1.0) || v > 1e300) {
        cli_usage_error("--contrast '%s': expected a number above 1", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_tonemap_args(int argc, char **argv, tonemap_args *a)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = NULL;
        int m, bins;
        if (strcmp(s, "--ward") == 0) {
            a->p.flags |= PARSUM_TONEMAP_WARD;
        } else if ((m = cli_option_value(argc, argv, &i, "--backend", &v))) {
            if (m < 0 || cli_parse_backend(v, &a->backend))
                return CLI_EXIT_USAGE;
        } else if ((m = cli_option_value(argc, argv, &i, "--bins", &v))) {
            if (m < 0 || cli_parse_int("--bins", v, 1, 1 << 20, &bins))
                return CLI_EXIT_USAGE;
            a->p.nbins = (size_t)bins;
        } else if ((m = cli_option_value(argc, argv, &i, "--contrast", &v))) {
            if (m < 0 || parse_contrast(v, &a->p.display_contrast))
                return CLI_EXIT_USAGE;
        } else if (s[0] == '-' && s[1] != '\0') {
            return cli_usage_error("tonemap: unknown option '%s'", s);
        } else if (files < 2) {
            *(files++ == 0 ? &a->in : &a->out) = s;
        } else {
            return cli_usage_error("tonemap: one input and one output file, "
                                   "not '%s' too",
                                   s);
        }
    }
    if (files < 2)
        return cli_usage_error("tonemap: give an input and an output file");
    return CLI_EXIT_OK;
}

/* Tone-maps host image src on ctx into host image out (allocated here,
 * free with parsum_image_free). */
static parsum_status tonemap_on(parsum_context *ctx, const tonemap_args *a,
                                const parsum_image *src, parsum_dtype dt,
                                parsum_image *out)
{
    bool device = parsum_context_backend(ctx) != PARSUM_BACKEND_CPU;
    parsum_context *host_ctx = NULL;
    parsum_image s = *src, d = {0};
    parsum_status st = PARSUM_OK;
    if (device) {
        st = parsum_image_alloc(ctx, &s, src->width, src->height,
                                src->channels, src->dtype);
        if (st == PARSUM_OK)
            st = parsum_image_copy(ctx, &s, src);
    }
    if (st == PARSUM_OK)
        st = parsum_image_alloc(ctx, &d, src->width, src->height,
                                src->channels, dt);
    if (st == PARSUM_OK)
        st = parsum_tonemap(ctx, &s, &d, &a->p);
    if (st == PARSUM_OK && !device) {
        *out = d; /* host memory already */
        d.data = NULL;
    } else if (st == PARSUM_OK) {
        /* A host image from a CPU context, so that parsum_image_free
         * releases it like one from parsum_image_read. */
        st = parsum_context_create(&host_ctx, PARSUM_BACKEND_CPU);
        if (st == PARSUM_OK)
            st = parsum_image_alloc(host_ctx, out, src->width, src->height,
                                    src->channels, dt);
        if (st == PARSUM_OK)
            st = parsum_image_copy(ctx, out, &d);
    }
    if (device)
        parsum_image_free(ctx, &s);
    parsum_image_free(ctx, &d);
    parsum_context_destroy(host_ctx);
    return st;
}

int cli_tonemap(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
            (i == 1 && strcmp(argv[i], "help") == 0)) {
            cli_usage_tonemap();
            return CLI_EXIT_OK;
        }
    tonemap_args a = {NULL, NULL, PARSUM_BACKEND_AUTO, {0, 0, 0.0, 0.0}};
    int rc = parse_tonemap_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool flt = has_ext(a.out, "pfm") || has_ext(a.out, "hdr");
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, a.backend);
    if (st != PARSUM_OK)
        return cli_runtime_error("tonemap: creating a context", st, NULL);
    parsum_image src = {0}, out = {0};
    st = parsum_image_read(ctx, a.in, &src);
    if (st != PARSUM_OK) {
        rc = cli_runtime_error("tonemap: reading the input", st, ctx);
    } else if ((st = tonemap_on(ctx, &a, &src, flt ? PARSUM_F32 : PARSUM_U8,
                                &out)) != PARSUM_OK) {
        rc = cli_runtime_error("tonemap", st, ctx);
    } else if ((st = parsum_image_write(ctx, a.out, &out)) != PARSUM_OK) {
        rc = st == PARSUM_ERR_INVALID_ARGUMENT /* OUT cannot hold it */
                 ? cli_usage_error("tonemap: %s", parsum_last_error(ctx))
                 : cli_runtime_error("tonemap: writing the result", st, ctx);
    } else {
        printf("%s: %zu x %zu x %d %s -> %s (%s, %zu bins, on %s)\n", a.in,
               src.width, src.height, src.channels,
               parsum_dtype_name(src.dtype), a.out,
               (a.p.flags & PARSUM_TONEMAP_WARD) ? "ward" : "equalised",
               a.p.nbins ? a.p.nbins : (size_t)1024,
               parsum_backend_name(parsum_context_backend(ctx)));
    }
    parsum_image_free(ctx, &out);
    parsum_image_free(ctx, &src);
    parsum_context_destroy(ctx);
    return rc;
}
