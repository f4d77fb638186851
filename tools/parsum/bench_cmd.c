/* bench_cmd.c - `parsum bench reduce|scan`: option parsing, then the CPU
 * benchmark (bench/bench_cpu.c) or, when the backend resolves to CUDA and
 * the CUDA benchmark is built in, bench/bench_cuda.cu. */
#include "cli.h"

#include "bench_args.h"
#include "bench_cpu.h"
#ifdef PARSUM_HAVE_CUDA
#include "bench_cuda.h"
#endif

#include <stdio.h>
#include <string.h>

#define DEFAULT_N ((size_t)1 << 26)

/* Flags without a value; returns 1 if argv[i] was one. */
static int parse_flag(const char *arg, parsum_bench_args *a)
{
    if (strcmp(arg, "--exclusive") == 0)
        a->flags |= PARSUM_EXCLUSIVE;
    else if (strcmp(arg, "--reverse") == 0)
        a->flags |= PARSUM_REVERSE;
    else if (strcmp(arg, "--inplace") == 0)
        a->inplace = 1;
    else if (strcmp(arg, "--json") == 0)
        a->json = 1;
    else
        return 0;
    return 1;
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
    return 0;
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
    if (strcmp(a->what, "reduce") == 0 && (a->flags != 0 || a->inplace))
        return cli_usage_error("bench reduce: --exclusive, --reverse and "
                               "--inplace apply to scan only");
    unsigned char identity[8];
    if (parsum_op_identity(a->dtype, a->op, identity) != PARSUM_OK)
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
        return cli_usage_error("bench: say what to measure: reduce or scan");
    if (strcmp(argv[1], "reduce") != 0 && strcmp(argv[1], "scan") != 0)
        return cli_usage_error("bench: unknown benchmark '%s' (expected "
                               "reduce or scan)",
                               argv[1]);
    a.what = argv[1];
    a.n = DEFAULT_N;
    a.dtype = PARSUM_I32;
    a.op = PARSUM_SUM;
    int rc = parse_args(argc, argv, &a, &backend);
    if (rc == CLI_EXIT_OK)
        rc = resolve_backend(backend, &resolved);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (resolved == PARSUM_BACKEND_CPU)
        return parsum_bench_cpu(&a, stdout);
#ifdef PARSUM_HAVE_CUDA
    return parsum_bench_cuda(&a, stdout);
#else
    fprintf(stderr, "parsum: bench: the CUDA benchmark is not built into "
                    "this parsum tool; use --backend cpu\n");
    return CLI_EXIT_RUNTIME;
#endif
}
