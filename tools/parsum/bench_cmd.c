/* bench_cmd.c - `parsum bench reduce|scan|segscan|segreduce|scanbykey|
 * reducebykey|select|partition|partition_unstable|unique|rle|integral|
 * boxfilter|histogram|sort`: option parsing, then the CPU benchmark (bench/bench_cpu.c,
 * bench_cpu_seg.c, bench_cpu_select.c, bench_cpu_image.c,
 * bench_cpu_hist.c, bench_cpu_sort.c) or, when the backend resolves to
 * CUDA and the CUDA benchmark is built in, bench/bench_cuda.cu and
 * bench_cuda_seg.cu (and bench_cuda_image.cu for the images). */
#include "cli.h"

#include "bench_args.h"
#include "bench_cpu.h"
#include "bench_cpu_hist.h"
#include "bench_cpu_sort.h"
#include "bench_segments.h"
#ifdef PARSUM_HAVE_CUDA
#include "bench_cuda.h"
#endif

#include <stdio.h>
#include <string.h>

#define DEFAULT_N ((size_t)1 << 26)

/* What `parsum bench` measures; the segmented ones share their options
 * (--seg, --seg-kind) and their CPU entry point. */
static const char *const benchmarks[] = {
    "reduce",    "scan",        "segscan", "segreduce", "scanbykey",
    "reducebykey", "select",    "partition", "partition_unstable",
    "unique",    "rle",
    "integral",  "boxfilter",   "histogram", "sort"};
#define NUM_BENCHMARKS (sizeof benchmarks / sizeof benchmarks[0])

static int known_benchmark(const char *what)
{
    for (size_t i = 0; i < NUM_BENCHMARKS; i++)
        if (strcmp(what, benchmarks[i]) == 0)
            return 1;
    return 0;
}

static int selects_elements(const char *what);

/* select, the partitions (take --selectivity, --select-by), unique, rle. */
static int is_selection(const char *what)
{
    return selects_elements(what) || strcmp(what, "unique") == 0 ||
           strcmp(what, "rle") == 0;
}

/* integral, boxfilter: square images of --n pixels. */
static int is_image(const char *what)
{
    return strcmp(what, "integral") == 0 || strcmp(what, "boxfilter") == 0;
}

/* histogram: fixed cases of --n samples (bench_cpu_hist.c). */
static int is_hist(const char *what)
{
    return strcmp(what, "histogram") == 0;
}

/* sort: fixed cases of --n keys (bench_cpu_sort.c on the CPU, against CUB
 * in bench_cuda_sort.cu on a GPU). */
static int is_sort(const char *what)
{
    return strcmp(what, "sort") == 0;
}

static int selects_elements(const char *what)
{
    return strcmp(what, "select") == 0 || strcmp(what, "partition") == 0 ||
           strcmp(what, "partition_unstable") == 0;
}

static int is_segmented(const char *what)
{
    return strcmp(what, "reduce") != 0 && strcmp(what, "scan") != 0 &&
           !is_selection(what) && !is_image(what) && !is_hist(what) &&
           !is_sort(what);
}

/* Takes --seg: the segmented benchmarks, and unique and rle (runs). */
static int takes_seg(const char *what)
{
    return is_segmented(what) || (is_selection(what) &&
                                  !selects_elements(what));
}

/* A scan of some kind (takes --exclusive, --reverse, --inplace,
 * --misalign). */
static int is_scan_like(const char *what)
{
    return strcmp(what, "scan") == 0 || strcmp(what, "segscan") == 0 ||
           strcmp(what, "scanbykey") == 0;
}

/* Flags without a value; returns 1 if argv[i] was one. */
static int parse_flag(const char *arg, parsum_bench_args *a)
{
    if (strcmp(arg, "--exclusive") == 0)
        a->flags |= PARSUM_EXCLUSIVE;
    else if (strcmp(arg, "--reverse") == 0)
        a->flags |= PARSUM_REVERSE;
    else if (strcmp(arg, "--inplace") == 0)
        a->inplace = 1;
    else if (strcmp(arg, "--misalign") == 0)
        a->misalign = 1;
    else if (strcmp(arg, "--json") == 0)
        a->json = 1;
    else
        return 0;
    return 1;
}

/* --seg DIST (or "all") and --seg-kind flags|offsets; as parse_valued. */
static int parse_seg_option(int argc, char **argv, int *i,
                            parsum_bench_args *a)
{
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--seg", &v)) != 0) {
        pb_seg_dist d;
        if (m < 0)
            return -1;
        if (strcmp(v, "all") == 0) {
            a->seg_dist = -1;
            return 1;
        }
        if (pb_seg_dist_parse(v, &d) != 0) {
            cli_usage_error("bench: --seg '%s': expected len1, len1-8, one, "
                            "powerlaw, uniform1000 or all",
                            v);
            return -1;
        }
        a->seg_dist = (int)d;
        return 1;
    }
    if ((m = cli_option_value(argc, argv, i, "--seg-kind", &v)) != 0) {
        if (m < 0)
            return -1;
        if (strcmp(v, "flags") != 0 && strcmp(v, "offsets") != 0) {
            cli_usage_error("bench: --seg-kind '%s': expected flags or "
                            "offsets",
                            v);
            return -1;
        }
        a->seg_offsets = strcmp(v, "offsets") == 0;
        a->seg_kind_set = 1;
        return 1;
    }
    return 0;
}

/* --selectivity P|all and --select-by predicate|bytes|bits; as
 * parse_valued. */
static int parse_select_option(int argc, char **argv, int *i,
                               parsum_bench_args *a)
{
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--selectivity", &v)) != 0) {
        if (m < 0)
            return -1;
        a->selectivity_set = 1;
        if (strcmp(v, "all") == 0) {
            a->selectivity = -1;
            return 1;
        }
        return cli_parse_int("--selectivity", v, 0, 100, &a->selectivity) == 0
                   ? 1
                   : -1;
    }
    if ((m = cli_option_value(argc, argv, i, "--select-by", &v)) != 0) {
        static const char *const names[] = {"predicate", "bytes", "bits"};
        if (m < 0)
            return -1;
        for (int k = 0; k < 3; k++)
            if (strcmp(v, names[k]) == 0) {
                a->select_by = k;
                a->selectivity_set |= 2;
                return 1;
            }
        cli_usage_error("bench: --select-by '%s': expected predicate, bytes "
                        "or bits",
                        v);
        return -1;
    }
    return 0;
}

/* --radius R|all and --border B (boxfilter); as parse_valued. */
static int parse_image_option(int argc, char **argv, int *i,
                              parsum_bench_args *a)
{
    static const char *const borders[] = {"zero", "clamp", "reflect",
                                          "reflect101", "wrap"};
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--radius", &v)) != 0) {
        if (m < 0)
            return -1;
        a->image_set = 1;
        if (strcmp(v, "all") == 0) {
            a->radius = -1;
            return 1;
        }
        return cli_parse_int("--radius", v, 0, 1 << 20, &a->radius) == 0
                   ? 1
                   : -1;
    }
    if ((m = cli_option_value(argc, argv, i, "--border", &v)) != 0) {
        if (m < 0)
            return -1;
        a->image_set = 1;
        for (int k = 0; k < 5; k++)
            if (strcmp(v, borders[k]) == 0) {
                a->border = k;
                return 1;
            }
        cli_usage_error("bench: --border '%s': expected zero, clamp, "
                        "reflect, reflect101 or wrap",
                        v);
        return -1;
    }
    return 0;
}

/* Options with a value; returns 1 if taken, 0 if unknown, -1 on error. */
static int parse_valued(int argc, char **argv, int *i, parsum_bench_args *a,
                        parsum_backend *backend)
{
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--n", &v)) != 0) {
        if (m < 0)
            return -1;
        if (strcmp(v, "sweep") == 0) {
            a->n = 0;
            return 1;
        }
        return cli_parse_count("--n", v, &a->n) == 0 ? 1 : -1;
    }
    if ((m = cli_option_value(argc, argv, i, "--dtype", &v)) != 0)
        return m < 0 ? -1 : (cli_parse_dtype(v, &a->dtype) == 0 ? 1 : -1);
    if ((m = cli_option_value(argc, argv, i, "--op", &v)) != 0)
        return m < 0 ? -1 : (cli_parse_op(v, &a->op) == 0 ? 1 : -1);
    if ((m = cli_option_value(argc, argv, i, "--threads", &v)) != 0)
        return m < 0 ? -1
                     : (cli_parse_int("--threads", v, 1, 4096, &a->threads) == 0
                            ? 1
                            : -1);
    if ((m = cli_option_value(argc, argv, i, "--reps", &v)) != 0)
        return m < 0 ? -1
                     : (cli_parse_int("--reps", v, 1, 1000000, &a->reps) == 0
                            ? 1
                            : -1);
    if ((m = cli_option_value(argc, argv, i, "--backend", &v)) != 0)
        return m < 0 ? -1 : (cli_parse_backend(v, backend) == 0 ? 1 : -1);
    if ((m = parse_seg_option(argc, argv, i, a)) != 0)
        return m;
    if ((m = parse_image_option(argc, argv, i, a)) != 0)
        return m;
    return parse_select_option(argc, argv, i, a);
}

/* The image benchmarks: square images of --n pixels; sample dtypes. */
static int check_image_args(const parsum_bench_args *a)
{
    if (a->op != PARSUM_SUM || a->selectivity_set)
        return cli_usage_error("bench %s: --op, --selectivity and "
                               "--select-by do not apply",
                               a->what);
    if ((int)a->dtype >= 0 && a->dtype != PARSUM_U8 &&
        a->dtype != PARSUM_U16 && a->dtype != PARSUM_I32 &&
        a->dtype != PARSUM_F32 && a->dtype != PARSUM_F64)
        return cli_usage_error("bench %s: images are u8, u16, i32, f32 or "
                               "f64",
                               a->what);
    return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, parsum_bench_args *a,
                      parsum_backend *backend)
{
    for (int i = 2; i < argc; i++) {
        if (parse_flag(argv[i], a))
            continue;
        int m = parse_valued(argc, argv, &i, a, backend);
        if (m < 0)
            return CLI_EXIT_USAGE;
        if (m == 0)
            return cli_usage_error("bench: unknown option '%s'", argv[i]);
    }
    if (!is_scan_like(a->what) && (a->flags != 0 || a->inplace ||
                                   a->misalign))
        return cli_usage_error("bench %s: --exclusive, --reverse, "
                               "--inplace and --misalign apply to scans only",
                               a->what);
    if (a->misalign && *backend == PARSUM_BACKEND_CUDA)
        return cli_usage_error("bench %s: --misalign is for the CPU backend",
                               a->what);
    if (!takes_seg(a->what) && (a->seg_dist >= 0 || a->seg_kind_set))
        return cli_usage_error("bench %s: --seg and --seg-kind apply to the "
                               "segmented benchmarks (--seg also to unique "
                               "and rle) only",
                               a->what);
    if (strcmp(a->what, "boxfilter") != 0 && a->image_set)
        return cli_usage_error("bench %s: --radius and --border apply to "
                               "boxfilter only",
                               a->what);
    if (is_image(a->what))
        return check_image_args(a);
    if (is_sort(a->what))
        return a->selectivity_set || a->n == 0
                   ? cli_usage_error("bench sort: --selectivity, --select-by "
                                     "and --n sweep do not apply")
                   : CLI_EXIT_OK;
    if (is_hist(a->what))
        return a->selectivity_set
                   ? cli_usage_error("bench histogram: --selectivity and "
                                     "--select-by do not apply")
                   : CLI_EXIT_OK;
    if (!selects_elements(a->what) && a->selectivity_set)
        return cli_usage_error("bench %s: --selectivity and --select-by "
                               "apply to select and the partitions only",
                               a->what);
    if (a->seg_kind_set && strcmp(a->what, "segscan") != 0)
        return cli_usage_error("bench %s: --seg-kind applies to segscan "
                               "only",
                               a->what);
    if ((is_segmented(a->what) || is_selection(a->what)) && a->n == 0)
        return cli_usage_error("bench %s: --n sweep is for reduce and scan; "
                               "the others sweep over --seg or "
                               "--selectivity",
                               a->what);
    unsigned char identity[8];
    if (!is_selection(a->what) &&
        parsum_op_identity(a->dtype, a->op, identity) != PARSUM_OK)
        return cli_usage_error("bench: op %s is not defined on dtype %s",
                               parsum_op_name(a->op),
                               parsum_dtype_name(a->dtype));
    return CLI_EXIT_OK;
}

/* The backend that `backend` resolves to on this machine. */
static int resolve_backend(parsum_backend backend, parsum_backend *resolved)
{
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, backend);
    if (st != PARSUM_OK)
        return cli_runtime_error("bench: creating a context", st, NULL);
    *resolved = parsum_context_backend(ctx);
    parsum_context_destroy(ctx);
    return CLI_EXIT_OK;
}

int cli_bench(int argc, char **argv)
{
    parsum_bench_args a;
    parsum_backend backend = PARSUM_BACKEND_AUTO;
    parsum_backend resolved = PARSUM_BACKEND_CPU;
    memset(&a, 0, sizeof a);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
            (i == 1 && strcmp(argv[i], "help") == 0)) {
            cli_usage_bench();
            return CLI_EXIT_OK;
        }
    }
    if (argc < 2)
        return cli_usage_error("bench: say what to measure: reduce, scan, "
                               "segscan, segreduce, scanbykey, reducebykey, "
                               "select, partition, partition_unstable, "
                               "unique, rle, integral, boxfilter, histogram "
                               "or sort");
    if (!known_benchmark(argv[1]))
        return cli_usage_error("bench: unknown benchmark '%s' (expected "
                               "reduce, scan, segscan, segreduce, scanbykey, "
                               "reducebykey, select, partition, "
                               "partition_unstable, unique, rle, integral, "
                               "boxfilter, histogram or sort)",
                               argv[1]);
    a.what = argv[1];
    a.n = DEFAULT_N;
    a.dtype = PARSUM_I32;
    a.op = PARSUM_SUM;
    a.seg_dist = -1;
    a.selectivity = 50;
    a.radius = -1;
    a.border = PARSUM_BORDER_REFLECT_101; /* OpenCV's default */
    if (is_image(a.what))
        a.dtype = (parsum_dtype)-1; /* the default cases */
    int rc = parse_args(argc, argv, &a, &backend);
    if (rc == CLI_EXIT_OK)
        rc = resolve_backend(backend, &resolved);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (is_hist(a.what) && resolved == PARSUM_BACKEND_CPU)
        return parsum_bench_cpu_hist(&a, stdout);
    if (is_sort(a.what) && resolved == PARSUM_BACKEND_CPU)
        return parsum_bench_cpu_sort(&a, stdout);
    if (resolved == PARSUM_BACKEND_CPU && is_image(a.what))
        return parsum_bench_cpu_image(&a, stdout);
    if (resolved == PARSUM_BACKEND_CPU && is_selection(a.what))
        return parsum_bench_cpu_select(&a, stdout);
    if (resolved == PARSUM_BACKEND_CPU)
        return is_segmented(a.what) ? parsum_bench_cpu_segmented(&a, stdout)
                                    : parsum_bench_cpu(&a, stdout);
#ifdef PARSUM_HAVE_CUDA
    if (is_sort(a.what)) /* fixed cases against CUB (bench_cuda_sort.cu) */
        return parsum_bench_cuda_sort(&a);
    if (is_hist(a.what)) /* fixed cases against CUB (bench_cuda_hist.cu) */
        return parsum_bench_cuda_hist(&a);
    if (is_image(a.what)) {
        /* The GPU benchmark has fixed cases (u8 and a few table types;
         * radii 1 to 15, REFLECT_101). */
        if ((int)a.dtype >= 0 || a.image_set)
            return cli_usage_error("bench %s --backend cuda: --dtype, "
                                   "--radius and --border apply to the CPU "
                                   "benchmark only",
                                   a.what);
        return parsum_bench_cuda_image(&a);
    }
    if (is_selection(a.what)) {
        /* The GPU benchmark has one workload per operation (against the
         * same CUB call): 50 % selected by a predicate, runs of 1 to 8. */
        if (a.selectivity_set || a.seg_dist >= 0)
            return cli_usage_error("bench %s --backend cuda: --selectivity, "
                                   "--select-by and --seg apply to the CPU "
                                   "benchmark only",
                                   a.what);
        return parsum_bench_cuda_select(&a);
    }
    if (is_segmented(a.what))
        return parsum_bench_cuda_segmented(&a);
    return parsum_bench_cuda(&a, stdout);
#else
    fprintf(stderr, "parsum: bench: the CUDA benchmark is not built into "
                    "this parsum tool; use --backend cpu\n");
    return CLI_EXIT_RUNTIME;
#endif
}
