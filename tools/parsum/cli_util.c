/* cli_util.c - error reporting and option parsing for the parsum tool. */
#include "cli.h"

#include "bench_cpu_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("parsum: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(run 'parsum --help' for usage)\n", stderr);
    return CLI_EXIT_USAGE;
}

int cli_runtime_error(const char *what, parsum_status st,
                      const parsum_context *ctx)
{
    const char *detail = ctx != NULL ? parsum_last_error(ctx) : "";
    if (detail[0] == '\0')
        detail = parsum_status_string(st);
    fprintf(stderr, "parsum: %s: %s: %s\n", what, parsum_status_name(st),
            detail);
    return CLI_EXIT_RUNTIME;
}

int cli_option_value(int argc, char **argv, int *i, const char *name,
                     const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_usage_error("option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_backend(const char *s, parsum_backend *out)
{
    static const parsum_backend all[] = {PARSUM_BACKEND_AUTO,
                                         PARSUM_BACKEND_CPU,
                                         PARSUM_BACKEND_CUDA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, parsum_backend_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    cli_usage_error("--backend '%s': expected cpu, cuda or auto", s);
    return -1;
}

int cli_parse_dtype(const char *s, parsum_dtype *out)
{
    for (int d = 0; d < PARSUM_DTYPE_COUNT; d++) {
        const char *name = parsum_dtype_name((parsum_dtype)d);
        if (name != NULL && strcmp(s, name) == 0) {
            *out = (parsum_dtype)d;
            return 0;
        }
    }
    cli_usage_error("--dtype '%s': expected one of i8 u8 i16 u16 i32 u32 "
                    "i64 u64 f32 f64",
                    s);
    return -1;
}

int cli_parse_op(const char *s, parsum_op *out)
{
    for (int o = 0; o < PARSUM_OP_COUNT; o++) {
        const char *name = parsum_op_name((parsum_op)o);
        if (name != NULL && strcmp(s, name) == 0) {
            *out = (parsum_op)o;
            return 0;
        }
    }
    cli_usage_error("--op '%s': expected one of sum prod min max and or xor",
                    s);
    return -1;
}

int cli_parse_count(const char *option, const char *s, size_t *out)
{
    if (pb_parse_count(s, out) == 0)
        return 0;
    cli_usage_error("%s '%s': expected a positive whole number such as "
                    "268435456, 2^28 or 1e8",
                    option, s);
    return -1;
}

int cli_parse_int(const char *option, const char *s, int lo, int hi,
                  int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        cli_usage_error("%s '%s': expected a whole number from %d to %d",
                        option, s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}
