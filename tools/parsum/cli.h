/*
 * cli.h - what the files of the `parsum` command-line tool share.
 *
 * Exit statuses: 0 success, 1 runtime error (the library's status name and
 * message go to stderr), 2 usage error (unknown command or option, bad
 * value).
 */
#ifndef PARSUM_CLI_H
#define PARSUM_CLI_H

#include "parsum.h"

#include <stddef.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_USAGE 2

/* Subcommands: argv[0] is the subcommand's name. */
int cli_demo(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_image(int argc, char **argv);
int cli_tonemap(int argc, char **argv);

/* Help texts, printed to stdout. */
void cli_usage_main(void);
void cli_usage_demo(void);
void cli_usage_bench(void);
void cli_usage_image(void); /* in image_cmd.c */
void cli_usage_tonemap(void); /* in tonemap_cmd.c */

/* Prints "parsum: <fmt...>" and a hint to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints "parsum: <what>: STATUS_NAME: <last error of ctx>" to stderr;
 * returns CLI_EXIT_RUNTIME. */
int cli_runtime_error(const char *what, parsum_status st,
                      const parsum_context *ctx);

/* Option matching for "--name value" and "--name=value": if argv[*i] is
 * option `name`, stores its value in *value (advancing *i past a separate
 * value) and returns 1; returns 0 if it is another option, -1 if the value
 * is missing (after printing a usage error). */
int cli_option_value(int argc, char **argv, int *i, const char *name,
                     const char **value);

/* Parsers for option values; each returns 0 or -1 (after printing a usage
 * error naming the option). */
int cli_parse_backend(const char *s, parsum_backend *out);
int cli_parse_dtype(const char *s, parsum_dtype *out);
int cli_parse_op(const char *s, parsum_op *out);
int cli_parse_count(const char *option, const char *s, size_t *out);
int cli_parse_int(const char *option, const char *s, int lo, int hi,
                  int *out);

#endif
