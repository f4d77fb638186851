/*
 * main.c - the `parsum` command-line tool: dispatch to the subcommands,
 * help texts and `parsum version`.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

void cli_usage_main(void)
{
    fputs(
        "usage: parsum <command> [options]\n"
        "\n"
        "parsum is a library of data-parallel primitives (scan, reduce) for\n"
        "the CPU and NVIDIA GPUs. This tool shows and measures it.\n"
        "\n"
        "commands:\n"
        "  demo [--backend B] [--n N]   a short tour of scan and reduce\n"
        "  bench reduce|scan [options]  time parsum against a serial loop and\n"
        "                               the machine's memory bandwidth\n"
        "  version                      library version and backends built in\n"
        "  help                         this text (also -h, --help)\n"
        "\n"
        "'parsum demo --help' and 'parsum bench --help' describe the options.\n"
        "\n"
        "environment:\n"
        "  OMP_NUM_THREADS   default CPU thread count\n"
        "  PARSUM_CPU_ISA    force the CPU kernels: generic, avx2 or avx512\n"
        "\n"
        "exit status: 0 success, 1 runtime error, 2 usage error\n",
        stdout);
}

void cli_usage_demo(void)
{
    fputs(
        "usage: parsum demo [--backend cpu|cuda|auto] [--n N]\n"
        "\n"
        "A short tour: cutting a sandwich (exclusive scan), balancing a\n"
        "checkbook (inclusive scan), line of sight (max-scan), reduce and\n"
        "scan over N random values with their speed, and a custom operator\n"
        "(the 3-D point farthest from the origin).\n"
        "\n"
        "  --backend B  cpu, cuda or auto (default auto: the GPU when one is\n"
        "               present, else the CPU)\n"
        "  --n N        size of the timed part (default 1e8; forms like\n"
        "               100000000, 2^27 and 1e8 are accepted)\n",
        stdout);
}

void cli_usage_bench(void)
{
    fputs(
        "usage: parsum bench reduce|scan [options]\n"
        "\n"
        "Times parsum against a serial loop, a multi-threaded memcpy (and\n"
        "the same copy with non-temporal stores) and a multi-threaded read on\n"
        "the same data (median of repeated runs after warm-up) and prints\n"
        "times, GB/s and the ratios: scan bandwidth / copy bandwidth (n*size\n"
        "read + n*size written; the faster copy), reduce bandwidth / read\n"
        "bandwidth (n*size read), and the speedup over the serial loop.\n"
        "\n"
        "  --n N        elements: 268435456, 2^28, 1e8 ... (default 2^26), or\n"
        "               'sweep' for a series of sizes\n"
        "  --dtype T    i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 (default i32)\n"
        "  --op OP      sum prod min max and or xor (default sum)\n"
        "  --threads T  CPU threads (default: OMP_NUM_THREADS, else all)\n"
        "  --exclusive  exclusive scan (default inclusive)\n"
        "  --reverse    backward scan, from the last element\n"
        "  --inplace    scan with out == in\n"
        "  --reps R     timed runs (default: about 1.5 s worth, at least 5)\n"
        "  --json       one JSON object per line instead of a table\n"
        "  --backend B  cpu, cuda or auto (default auto: the GPU when one is\n"
        "               present, else the CPU)\n",
        stdout);
}

/* "cpu (2 threads)", then what CUDA says: present, absent, not built. */
static int cli_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return cli_usage_error("version takes no arguments");
    printf("parsum %s (header %d.%d.%d)\n", parsum_version(),
           PARSUM_VERSION_MAJOR, PARSUM_VERSION_MINOR, PARSUM_VERSION_PATCH);
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK)
        return cli_runtime_error("creating a CPU context", st, NULL);
    printf("backend cpu:  built in, %d threads by default\n",
           parsum_context_threads(ctx));
    parsum_context_destroy(ctx);
    ctx = NULL;
    st = parsum_context_create(&ctx, PARSUM_BACKEND_CUDA);
    if (st == PARSUM_OK)
        printf("backend cuda: built in, device present\n");
    else if (st == PARSUM_ERR_UNSUPPORTED)
        printf("backend cuda: not built in\n");
    else if (st == PARSUM_ERR_NO_DEVICE)
        printf("backend cuda: built in, no usable device\n");
    else
        printf("backend cuda: built in, unusable (%s)\n",
               parsum_status_name(st));
    parsum_context_destroy(ctx);
    return CLI_EXIT_OK;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "help") == 0 || strcmp(arg, "--help") == 0 ||
           strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("no command given");
    const char *cmd = argv[1];
    if (is_help(cmd)) {
        cli_usage_main();
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
        return cli_version(argc - 1, argv + 1);
    if (strcmp(cmd, "demo") == 0)
        return cli_demo(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cli_bench(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return cli_usage_error("unknown option '%s'", cmd);
    return cli_usage_error("unknown command '%s'", cmd);
}
