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
        "  demo [--backend B] [--n N]   a short tour of scan, reduce and\n"
        "                               selection\n"
        "  bench WHAT [options]         time parsum (reduce, scan, segscan,\n"
        "                               select, unique ...) against a serial\n"
        "                               loop and the machine's memory\n"
        "                               bandwidth\n"
        "  image integral|boxblur ...   summed-area table or box blur of an\n"
        "                               image file (PNG, JPEG, PGM/PPM, PFM,\n"
        "                               HDR)\n"
        "  tonemap [--ward] IN OUT      HDR image (.hdr, .pfm) to a PNG by\n"
        "                               histogram equalisation of its log\n"
        "                               luminance\n"
        "  version                      library version and backends built in\n"
        "  help                         this text (also -h, --help)\n"
        "\n"
        "'parsum demo --help', 'parsum bench --help', 'parsum image --help'\n"
        "and 'parsum tonemap --help' describe the options.\n"
        "\n"
        "environment:\n"
        "  OMP_NUM_THREADS   default CPU thread count\n"
        "  PARSUM_CPU_ISA    force the CPU kernels: generic, avx2 or avx512\n"
        "  PARSUM_CPU_STREAM_BYTES  output bytes from which CPU scans and\n"
        "                    selections write past the caches (default: a\n"
        "                    quarter of the last-level cache)\n"
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
        "scan over N random values with their speed, a custom operator\n"
        "(the 3-D point farthest from the origin), stream compaction (the\n"
        "nonzero values), string separation (upper case first, a stable\n"
        "partition) and a radix sort of up to 2^25 of the N values against\n"
        "qsort.\n"
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
        "usage: parsum bench WHAT [options]\n"
        "\n"
        "WHAT is one of\n"
        "  reduce, scan                  plain reduce and scan\n"
        "  segscan, segreduce            segmented scan and reduce\n"
        "  scanbykey, reducebykey        scan and reduce by key (u32 keys)\n"
        "  select, partition             stream compaction and stable\n"
        "                                partition (x < t, or flags)\n"
        "  partition_unstable            partition with the rejected part\n"
        "                                reversed (one pass)\n"
        "  unique, rle                   unique and run-length encoding\n"
        "  integral, boxfilter           summed-area table and box filter of\n"
        "                                square images\n"
        "  histogram                     histograms (fixed cases: u8 256 bins,\n"
        "                                RGBA u8, u32 256 to 2^24 bins, one\n"
        "                                hot bin, f32), every strategy\n"
        "  sort                          radix sort (fixed cases: u32, u32/u32\n"
        "                                pairs, u64 and f32 keys, u32 keys in\n"
        "                                2^20 and in 16 segments; CPU only)\n"
        "\n"
        "Times parsum against a serial loop, a multi-threaded memcpy (and\n"
        "the same copy with non-temporal stores) and, for the reductions, a\n"
        "multi-threaded read on the same data (median of repeated runs\n"
        "after warm-up) and prints times, GB/s and the ratios: bandwidth /\n"
        "copy bandwidth (n*size read + n*size written; the faster copy) for\n"
        "scans and selections, bandwidth / read bandwidth (n*size read) for\n"
        "reductions, and the speedup over the serial loop. The segmented\n"
        "benchmarks also time the plain scan or reduce of the same n.\n"
        "Selections count the bytes they must move: select reads n*size and\n"
        "writes k*size (6 bytes per 4-byte element at 50 %), partition\n"
        "n*size both ways, unique and rle the runs' elements (and lengths).\n"
        "With --backend cuda the peer is CUB (DeviceScan, DeviceReduce,\n"
        "their segmented and by-key forms, DeviceSelect::If/Unique,\n"
        "DevicePartition::If, DeviceRunLengthEncode::Encode) on the same\n"
        "device buffers, and the bound cudaMemcpy; the GPU selections\n"
        "measure one workload each (50 % by x < t; runs of 1 to 8).\n"
        "The image benchmarks count the pixels' bytes read and written (5\n"
        "per pixel for a u8 -> u32 table, 2 for a u8 box filter); their\n"
        "OpenCV peer is the separate program parsum_bench_opencv.\n"
        "Histograms count the samples' bytes read, against a read of the\n"
        "same bytes; on the GPU against CUB's DeviceHistogram as well.\n"
        "Sorts print Mkeys/s against glibc's qsort (on at most 2^24 keys)\n"
        "and the floor of an LSD radix sort: its passes times one copy of\n"
        "the keys and values at the faster copy's bandwidth.\n"
        "\n"
        "  --n N        elements: 268435456, 2^28, 1e8 ... (default 2^26), or\n"
        "               'sweep' for a series of sizes (reduce and scan)\n"
        "  --dtype T    i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 (default i32)\n"
        "  --op OP      sum prod min max and or xor (default sum; reduce,\n"
        "               scan and the segmented benchmarks)\n"
        "  --threads T  CPU threads (default: OMP_NUM_THREADS, else all)\n"
        "  --reps R     timed runs (default: about 1.5 s worth, at least 5)\n"
        "  --json       one JSON object per line instead of a table\n"
        "  --backend B  cpu, cuda or auto (default auto: the GPU when one is\n"
        "               present, else the CPU)\n",
        stdout);
    /* Two strings: one would pass the 4095 characters C99 promises. */
    fputs(
        "integral and boxfilter (--n: pixels of a square image, 2^26 =\n"
        "  8192 x 8192 by default; sweep: sides 1024 to 8192 on the CPU, 2048\n"
        "  to 8192 on a GPU; the options below are the CPU benchmark's):\n"
        "  --dtype T    u8 u16 i32 f32 f64: that sample type only (integral:\n"
        "               into u32, u64, i64 or f64); default: integral u8 ->\n"
        "               u32, u8 -> f64 squared, u16 -> u64, f32 -> f64; box\n"
        "               filter u8\n"
        "  --radius R   boxfilter: rx = ry = R, or all for 1, 3, 7 and 15\n"
        "               (default all)\n"
        "  --border B   boxfilter: zero, clamp, reflect, reflect101 (the\n"
        "               default, as OpenCV's) or wrap\n"
        "scans (scan, segscan, scanbykey):\n"
        "  --exclusive  exclusive scan (default inclusive)\n"
        "  --reverse    backward scan, from the last element\n"
        "  --inplace    scan with out == in\n"
        "  --misalign   CPU: values in and out 16 bytes past a 64-byte\n"
        "               boundary, where malloc puts large blocks\n"
        "segmented benchmarks, unique and rle:\n"
        "  --seg D      segment (run) lengths: len1, len1-8, one, powerlaw,\n"
        "               uniform1000, or all (default: each in turn)\n"
        "  --seg-kind K segscan only: segments as packed head 'flags'\n"
        "               (default) or CSR 'offsets'\n"
        "select, partition, partition_unstable:\n"
        "  --selectivity P  percent of the elements selected, 0..100\n"
        "               (default 50), or all for 1, 10, 50, 90 and 99\n"
        "  --select-by S    predicate (x < t, the default), bytes (a flag\n"
        "               byte per element) or bits (packed flag bits)\n",
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
    if (strcmp(cmd, "image") == 0)
        return cli_image(argc - 1, argv + 1);
    if (strcmp(cmd, "tonemap") == 0)
        return cli_tonemap(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return cli_usage_error("unknown option '%s'", cmd);
    return cli_usage_error("unknown command '%s'", cmd);
}
