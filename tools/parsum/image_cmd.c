/*
 * image_cmd.c - `parsum image`: summed-area tables and box blur of image
 * files, on the CPU or a GPU.
 *
 *   parsum image integral [options] in.png out.pfm
 *   parsum image boxblur --radius R [options] in.png out.png
 *
 * The input is read into host memory (parsum_image_read); on a CUDA
 * context it is copied to a device image (parsum_image_alloc +
 * parsum_image_copy), the work runs there, and the result comes back the
 * same way. A table is written as PFM, which holds 32-bit floats only, so
 * tables of other types are converted to f32 (rounded to nearest) first.
 */
#include "cli.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cli_usage_image(void)
{
    fputs(
        "usage: parsum image integral [options] IN OUT.pfm\n"
        "       parsum image boxblur --radius R [options] IN OUT\n"
        "\n"
        "integral  the summed-area table (integral image) of IN, per\n"
        "          channel: by default (width+1) x (height+1) entries with a\n"
        "          zero first row and column, T[y][x] = the sum of the\n"
        "          samples above and left of (x, y) (as OpenCV's integral).\n"
        "          OUT must be a .pfm file: PFM holds 32-bit floats only, so\n"
        "          the table is converted to f32 for writing (exact while\n"
        "          the sums stay below 2^24, then rounded to nearest), and\n"
        "          IN must have 1 or 3 channels.\n"
        "  --inclusive   width x height table, T[y][x] = the sum over rows\n"
        "                <= y and columns <= x\n"
        "  --squared     sums of squared samples (for variances)\n"
        "  --table T     the table's type while summing: u32, u64, i64\n"
        "                (integer samples; sums modulo 2^bits), f32 or f64\n"
        "                (default f64: float64 sums, rounded once)\n"
        "\n"
        "boxblur   the mean over a (2 RX + 1) x (2 RY + 1) window around each\n"
        "          pixel, in IN's sample type (integers rounded half up).\n"
        "          OUT's format follows its extension and must hold IN's\n"
        "          sample type and channels.\n"
        "  --radius R    RX = RY = R (0 to 16384)\n"
        "  --rx X, --ry Y  one radius each (override --radius)\n"
        "  --border B    pixels beyond the edge: zero, clamp, reflect,\n"
        "                reflect101 (default, as OpenCV) or wrap\n"
        "\n"
        "both:\n"
        "  --backend B   cpu, cuda or auto (default auto: the GPU when one is\n"
        "                present, else the CPU)\n"
        "\n"
        "Formats read (recognised by content): PNG (8 and 16 bit; a tRNS\n"
        "chunk adds an alpha channel), JPEG, binary PGM/PPM (P5/P6, 8 or 16\n"
        "bit), PFM and Radiance HDR. Formats written (by extension): .png\n"
        "(u8/u16, 1-4 channels), .jpg/.jpeg (u8, quality 95; written as\n"
        "colour), .pgm (u8/u16 grey), .ppm (u8/u16 RGB), .pfm (f32, grey or\n"
        "RGB), .hdr (f32 RGB). PNG, JPEG and HDR need a build with stb.\n"
        "\n"
        "examples:\n"
        "  parsum image integral photo.png sat.pfm\n"
        "  parsum image integral --squared --inclusive scan.pgm sq.pfm\n"
        "  parsum image boxblur --radius 7 --border clamp photo.png soft.png\n"
        "\n"
        "exit status: 0 success, 1 runtime error (unreadable or corrupt\n"
        "file, library error), 2 usage error\n",
        stdout);
}

/* What the options say. */
typedef struct image_args {
    const char *cmd; /* "integral" or "boxblur" */
    const char *in, *out;
    parsum_backend backend;
    unsigned flags;      /* PARSUM_INTEGRAL_* */
    parsum_dtype table;  /* integral */
    int radius, rx, ry;  /* boxblur; -1 = not given */
    parsum_border border;
} image_args;

static int parse_border(const char *s, parsum_border *out)
{
    static const char *const names[] = {"zero", "clamp", "reflect",
                                        "reflect101", "wrap"};
    for (int b = 0; b < 5; b++)
        if (strcmp(s, names[b]) == 0) {
            *out = (parsum_border)b;
            return 0;
        }
    cli_usage_error("--border '%s': expected zero, clamp, reflect, "
                    "reflect101 or wrap",
                    s);
    return -1;
}

static int parse_table(const char *s, parsum_dtype *out)
{
    static const parsum_dtype ok[] = {PARSUM_U32, PARSUM_U64, PARSUM_I64,
                                      PARSUM_F32, PARSUM_F64};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(s, parsum_dtype_name(ok[i])) == 0) {
            *out = ok[i];
            return 0;
        }
    cli_usage_error("--table '%s': expected u32, u64, i64, f32 or f64", s);
    return -1;
}

/* One option with a value at argv[*i]: 1 taken, 0 not this command's,
 * -1 bad (message printed). */
static int parse_valued(int argc, char **argv, int *i, image_args *a)
{
    bool blur = strcmp(a->cmd, "boxblur") == 0;
    const char *v = NULL;
    int m;
    const int lim = 16384; /* parsum_box_filter's largest radius */
    if ((m = cli_option_value(argc, argv, i, "--backend", &v)) != 0)
        return m < 0 || cli_parse_backend(v, &a->backend) ? -1 : 1;
    if (!blur && (m = cli_option_value(argc, argv, i, "--table", &v)) != 0)
        return m < 0 || parse_table(v, &a->table) ? -1 : 1;
    if (!blur)
        return 0;
    if ((m = cli_option_value(argc, argv, i, "--radius", &v)) != 0)
        return m < 0 || cli_parse_int("--radius", v, 0, lim, &a->radius) ? -1
                                                                          : 1;
    if ((m = cli_option_value(argc, argv, i, "--rx", &v)) != 0)
        return m < 0 || cli_parse_int("--rx", v, 0, lim, &a->rx) ? -1 : 1;
    if ((m = cli_option_value(argc, argv, i, "--ry", &v)) != 0)
        return m < 0 || cli_parse_int("--ry", v, 0, lim, &a->ry) ? -1 : 1;
    if ((m = cli_option_value(argc, argv, i, "--border", &v)) != 0)
        return m < 0 || parse_border(v, &a->border) ? -1 : 1;
    return 0;
}

/* The options and the two file names after the subcommand argv[1]. */
static int parse_image_args(int argc, char **argv, image_args *a)
{
    int files = 0;
    bool blur = strcmp(a->cmd, "boxblur") == 0;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        int m;
        if (!blur && strcmp(s, "--inclusive") == 0) {
            a->flags |= PARSUM_INTEGRAL_INCLUSIVE;
        } else if (!blur && strcmp(s, "--squared") == 0) {
            a->flags |= PARSUM_INTEGRAL_SQUARED;
        } else if ((m = parse_valued(argc, argv, &i, a)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (s[0] == '-' && s[1] != '\0') {
            return cli_usage_error("image %s: unknown option '%s'", a->cmd, s);
        } else if (files < 2) {
            *(files++ == 0 ? &a->in : &a->out) = s;
        } else {
            return cli_usage_error("image %s: one input and one output file, "
                                   "not '%s' too",
                                   a->cmd, s);
        }
    }
    if (files < 2)
        return cli_usage_error("image %s: give an input and an output file",
                               a->cmd);
    if (blur) {
        if (a->rx < 0)
            a->rx = a->radius;
        if (a->ry < 0)
            a->ry = a->radius;
        if (a->rx < 0 || a->ry < 0)
            return cli_usage_error("image boxblur: give --radius (or both "
                                   "--rx and --ry)");
    }
    return CLI_EXIT_OK;
}

/* ---- images between the host and the context --------------------------- */

/* A packed host image (malloc) of the given shape, or an error printed. */
static int host_image(parsum_image *img, size_t w, size_t h, int ch,
                      parsum_dtype d)
{
    parsum_image im = {NULL, w, h, 0, ch, d, PARSUM_MEM_HOST};
    im.pitch = w * (size_t)ch * parsum_dtype_size(d);
    im.data = malloc(im.pitch * h > 0 ? im.pitch * h : 1);
    if (im.data == NULL) {
        fprintf(stderr, "parsum: out of host memory for a %zu x %zu image\n",
                w, h);
        return CLI_EXIT_RUNTIME;
    }
    *img = im;
    return CLI_EXIT_OK;
}

/* An image of the context's space: on a CPU context the host image itself
 * (*owned false), else a device copy. */
static parsum_status to_context(parsum_context *ctx, const parsum_image *host,
                                parsum_image *out, bool *owned)
{
    *owned = parsum_context_backend(ctx) != PARSUM_BACKEND_CPU;
    if (!*owned) {
        *out = *host;
        return PARSUM_OK;
    }
    parsum_status st = parsum_image_alloc(ctx, out, host->width, host->height,
                                          host->channels, host->dtype);
    if (st == PARSUM_OK)
        st = parsum_image_copy(ctx, out, host);
    return st;
}

/* ---- integral ----------------------------------------------------------- */

/* The table as f32 for PFM (a new host image; `t` is host memory). */
static int table_to_f32(const parsum_image *t, parsum_image *f)
{
    int rc = host_image(f, t->width, t->height, t->channels, PARSUM_F32);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t n = t->width * (size_t)t->channels;
    for (size_t y = 0; y < t->height; y++) {
        const char *row = (const char *)t->data + y * t->pitch;
        float *o = (float *)f->data + y * n;
        for (size_t i = 0; i < n; i++) {
            switch (t->dtype) {
            case PARSUM_U32: o[i] = (float)((const uint32_t *)row)[i]; break;
            case PARSUM_U64: o[i] = (float)((const uint64_t *)row)[i]; break;
            case PARSUM_I64: o[i] = (float)((const int64_t *)row)[i]; break;
            case PARSUM_F32: o[i] = ((const float *)row)[i]; break;
            default: o[i] = (float)((const double *)row)[i]; break;
            }
        }
    }
    return CLI_EXIT_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Computes the table of src (host) on ctx into a host image *table. */
static parsum_status integral_on(parsum_context *ctx, const image_args *a,
                                 const parsum_image *src, parsum_image *table,
                                 double *ms)
{
    size_t extra = (a->flags & PARSUM_INTEGRAL_INCLUSIVE) ? 0 : 1;
    parsum_image s = {0}, t = {0};
    bool owned = false;
    parsum_status st = to_context(ctx, src, &s, &owned);
    if (st == PARSUM_OK)
        st = parsum_image_alloc(ctx, &t, src->width + extra,
                                src->height + extra, src->channels, a->table);
    double t0 = now_ms();
    if (st == PARSUM_OK)
        st = parsum_integral(ctx, &s, &t, a->flags, NULL);
    if (st == PARSUM_OK)
        st = parsum_synchronize(ctx);
    *ms = now_ms() - t0;
    if (st == PARSUM_OK &&
        host_image(table, t.width, t.height, t.channels, t.dtype) != 0)
        st = PARSUM_ERR_OUT_OF_MEMORY;
    if (st == PARSUM_OK)
        st = parsum_image_copy(ctx, table, &t);
    if (owned)
        parsum_image_free(ctx, &s);
    parsum_image_free(ctx, &t);
    return st;
}

/* Whether path ends in ".pfm", in any case (as parsum_image_write). */
static bool ends_with_pfm(const char *path)
{
    size_t n = strlen(path);
    if (n < 4 || path[n - 4] != '.')
        return false;
    for (int i = 0; i < 3; i++) {
        char c = path[n - 3 + (size_t)i];
        if (c != "pfm"[i] && c != "PFM"[i])
            return false;
    }
    return true;
}

static int run_integral(parsum_context *ctx, const image_args *a,
                        const parsum_image *src)
{
    if (src->channels != 1 && src->channels != 3)
        return cli_usage_error("image integral: %s has %d channels; a PFM "
                               "table holds 1 or 3",
                               a->in, src->channels);
    if (src->dtype == PARSUM_F32 && a->table != PARSUM_F32 &&
        a->table != PARSUM_F64)
        return cli_usage_error("image integral: %s has f32 samples, which "
                               "need --table f32 or f64",
                               a->in);
    parsum_image table = {0}, f = {0};
    double ms = 0;
    parsum_status st = integral_on(ctx, a, src, &table, &ms);
    if (st != PARSUM_OK) {
        free(table.data);
        return cli_runtime_error("image integral", st, ctx);
    }
    int rc = table_to_f32(&table, &f);
    free(table.data);
    if (rc != CLI_EXIT_OK)
        return rc;
    st = parsum_image_write(ctx, a->out, &f);
    free(f.data);
    if (st != PARSUM_OK)
        return cli_runtime_error("image integral: writing the table", st,
                                 ctx);
    printf("%s: %zu x %zu x %d %s -> %s: %zu x %zu %s table as f32 "
           "(%.3f ms on %s)\n",
           a->in, src->width, src->height, src->channels,
           parsum_dtype_name(src->dtype), a->out, f.width, f.height,
           parsum_dtype_name(a->table), ms,
           parsum_backend_name(parsum_context_backend(ctx)));
    return CLI_EXIT_OK;
}

/* ---- box blur ----------------------------------------------------------- */

static int run_boxblur(parsum_context *ctx, const image_args *a,
                       const parsum_image *src)
{
    parsum_image s = {0}, d = {0}, out = {0};
    bool owned = false;
    parsum_status st = to_context(ctx, src, &s, &owned);
    if (st == PARSUM_OK)
        st = parsum_image_alloc(ctx, &d, src->width, src->height,
                                src->channels, src->dtype);
    double t0 = now_ms();
    if (st == PARSUM_OK)
        st = parsum_box_filter(ctx, &s, &d, (size_t)a->rx, (size_t)a->ry,
                               a->border);
    if (st == PARSUM_OK)
        st = parsum_synchronize(ctx);
    double ms = now_ms() - t0;
    if (st == PARSUM_OK && host_image(&out, src->width, src->height,
                                      src->channels, src->dtype) != 0)
        st = PARSUM_ERR_OUT_OF_MEMORY;
    if (st == PARSUM_OK)
        st = parsum_image_copy(ctx, &out, &d);
    if (owned)
        parsum_image_free(ctx, &s);
    parsum_image_free(ctx, &d);
    if (st != PARSUM_OK) {
        free(out.data);
        return cli_runtime_error("image boxblur", st, ctx);
    }
    st = parsum_image_write(ctx, a->out, &out);
    free(out.data);
    if (st == PARSUM_ERR_INVALID_ARGUMENT) /* OUT's format cannot hold it */
        return cli_usage_error("image boxblur: %s", parsum_last_error(ctx));
    if (st != PARSUM_OK)
        return cli_runtime_error("image boxblur: writing the result", st,
                                 ctx);
    printf("%s: %zu x %zu x %d %s, radius %d x %d -> %s (%.3f ms on %s)\n",
           a->in, src->width, src->height, src->channels,
           parsum_dtype_name(src->dtype), a->rx, a->ry, a->out, ms,
           parsum_backend_name(parsum_context_backend(ctx)));
    return CLI_EXIT_OK;
}

int cli_image(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
            (i == 1 && strcmp(argv[i], "help") == 0)) {
            cli_usage_image();
            return CLI_EXIT_OK;
        }
    if (argc < 2 || (strcmp(argv[1], "integral") != 0 &&
                     strcmp(argv[1], "boxblur") != 0))
        return cli_usage_error("image: expected 'integral' or 'boxblur'%s%s",
                               argc < 2 ? "" : ", not ",
                               argc < 2 ? "" : argv[1]);
    image_args a = {argv[1], NULL, NULL, PARSUM_BACKEND_AUTO, 0,
                    PARSUM_F64, -1, -1, -1, PARSUM_BORDER_REFLECT_101};
    int rc = parse_image_args(argc, argv, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (strcmp(a.cmd, "integral") == 0 && !ends_with_pfm(a.out))
        return cli_usage_error("image integral: the table is written as PFM "
                               "(32-bit floats): name the output *.pfm, not "
                               "'%s'",
                               a.out);
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, a.backend);
    if (st != PARSUM_OK)
        return cli_runtime_error("image: creating a context", st, NULL);
    parsum_image src = {0};
    st = parsum_image_read(ctx, a.in, &src);
    if (st != PARSUM_OK)
        rc = cli_runtime_error("image: reading the input", st, ctx);
    else if (strcmp(a.cmd, "integral") == 0)
        rc = run_integral(ctx, &a, &src);
    else
        rc = run_boxblur(ctx, &a, &src);
    parsum_image_free(ctx, &src);
    parsum_context_destroy(ctx);
    return rc;
}
