/* status.c - names and messages of parsum_status, generated from the one
 * X-macro table in parsum.h so they cannot drift from the enum. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

const char *parsum_status_name(parsum_status status)
{
    switch (status) {
#define PARSUM_X_NAME(name, value, msg) \
    case name:                          \
        return #name;
        PARSUM_STATUS_TABLE(PARSUM_X_NAME)
#undef PARSUM_X_NAME
    }
    return "PARSUM_UNKNOWN_STATUS";
}

const char *parsum_status_string(parsum_status status)
{
    switch (status) {
#define PARSUM_X_MSG(name, value, msg) \
    case name:                         \
        return msg;
        PARSUM_STATUS_TABLE(PARSUM_X_MSG)
#undef PARSUM_X_MSG
    }
    return "unknown status code";
}

parsum_status parsum__fail(parsum_context *ctx, parsum_status status,
                           const char *fmt, ...)
{
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *parsum_last_error(const parsum_context *ctx)
{
    if (ctx == NULL)
        return "no context (parsum_last_error was given NULL)";
    return ctx->errmsg;
}

const char *parsum_version(void)
{
    return "0.1.0";
}
