/* api_scan.c - argument checking for reduce and scan, then dispatch to the
 * context's backend. Every check here names the argument in the message. */
#include "internal.h"

#include <stdint.h>

#define SCAN_FLAGS_ALL (PARSUM_EXCLUSIVE | PARSUM_REVERSE)

static parsum_status check_dtype_op(parsum_context *ctx, const char *fn,
                                    parsum_dtype dtype, parsum_op op)
{
    if (!parsum__dtype_valid(dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: dtype = %d is not a parsum_dtype", fn,
                            (int)dtype);
    if (!parsum__op_valid(op))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_OP,
                            "%s: op = %d is not a parsum_op", fn, (int)op);
    if (parsum__dtype_is_float(dtype) && op >= PARSUM_AND)
        return parsum__fail(ctx, PARSUM_ERR_DTYPE_OP_MISMATCH,
                            "%s: op = %s is a bitwise operator, which is not "
                            "defined on dtype = %s",
                            fn, parsum_op_name(op), parsum_dtype_name(dtype));
    return PARSUM_OK;
}

/* in, out: n elements of size bytes each. Checks NULLs, the byte count and
 * that the buffers are either identical or disjoint. */
static parsum_status check_buffers(parsum_context *ctx, const char *fn,
                                   const void *in, void *out, size_t n,
                                   size_t size, bool has_out)
{
    size_t bytes;
    if (!parsum__mul_size(n, size, &bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: n = %zu elements of %zu bytes overflow "
                            "size_t",
                            fn, n, size);
    if (n == 0)
        return PARSUM_OK;
    if (in == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: in is NULL but n = %zu", fn, n);
    if (has_out && out == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: out is NULL but n = %zu", fn, n);
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    if ((uintptr_t)-1 - a < bytes - 1 ||
        (has_out && (uintptr_t)-1 - b < bytes - 1))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: a buffer of %zu bytes wraps around the "
                            "address space",
                            fn, bytes);
    if (has_out && a != b && a < b + bytes && b < a + bytes)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: in and out overlap without being equal "
                            "(in place means out == in)",
                            fn);
    if (ctx->be->check_pointer != NULL) {
        parsum_status st = ctx->be->check_pointer(ctx, in, fn, "in");
        if (st == PARSUM_OK && has_out)
            st = ctx->be->check_pointer(ctx, out, fn, "out");
        if (st != PARSUM_OK)
            return st;
    }
    return PARSUM_OK;
}

static parsum_status check_custom(parsum_context *ctx, const char *fn,
                                  const parsum_custom_op *op)
{
    if (op == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: op is NULL",
                            fn);
    if (op->elem_size == 0 || op->elem_size > PARSUM_CUSTOM_MAX_ELEM_SIZE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: op->elem_size = %zu is outside 1..%d", fn,
                            op->elem_size, PARSUM_CUSTOM_MAX_ELEM_SIZE);
    if (op->identity == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: op->identity is NULL", fn);
    if (ctx->kind == PARSUM_BACKEND_CPU && op->combine == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: op->combine is NULL (the CPU backend needs "
                            "the C callback)",
                            fn);
    return PARSUM_OK;
}

static parsum_status check_flags(parsum_context *ctx, const char *fn,
                                 unsigned flags)
{
    if (flags & ~SCAN_FLAGS_ALL)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: flags = 0x%x has unknown bits 0x%x", fn,
                            flags, flags & ~SCAN_FLAGS_ALL);
    return PARSUM_OK;
}

static parsum_status unsupported(parsum_context *ctx, const char *fn)
{
    return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                        "%s: not available on the %s backend", fn,
                        ctx->be->name);
}

#define CHECK(expr)                         \
    do {                                    \
        parsum_status st_ = (expr);         \
        if (st_ != PARSUM_OK)               \
            return st_;                     \
    } while (0)

parsum_status parsum_reduce(parsum_context *ctx, const void *in, size_t n,
                            parsum_dtype dtype, parsum_op op, void *result)
{
    static const char fn[] = "parsum_reduce";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_dtype_op(ctx, fn, dtype, op));
    if (result == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: result is NULL", fn);
    CHECK(check_buffers(ctx, fn, in, NULL, n, parsum_dtype_size(dtype),
                        false));
    if (ctx->be->reduce == NULL)
        return unsupported(ctx, fn);
    return ctx->be->reduce(ctx, in, n, dtype, op, result);
}

parsum_status parsum_scan(parsum_context *ctx, const void *in, void *out,
                          size_t n, parsum_dtype dtype, parsum_op op,
                          unsigned flags)
{
    static const char fn[] = "parsum_scan";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_dtype_op(ctx, fn, dtype, op));
    CHECK(check_flags(ctx, fn, flags));
    CHECK(check_buffers(ctx, fn, in, out, n, parsum_dtype_size(dtype), true));
    if (ctx->be->scan == NULL)
        return unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->scan(ctx, in, out, n, dtype, op, flags);
}

parsum_status parsum_reduce_custom(parsum_context *ctx, const void *in,
                                   size_t n, const parsum_custom_op *op,
                                   void *result)
{
    static const char fn[] = "parsum_reduce_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_custom(ctx, fn, op));
    if (result == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: result is NULL", fn);
    CHECK(check_buffers(ctx, fn, in, NULL, n, op->elem_size, false));
    if (ctx->be->reduce_custom == NULL)
        return unsupported(ctx, fn);
    return ctx->be->reduce_custom(ctx, in, n, op, result);
}

parsum_status parsum_scan_custom(parsum_context *ctx, const void *in,
                                 void *out, size_t n,
                                 const parsum_custom_op *op, unsigned flags)
{
    static const char fn[] = "parsum_scan_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    CHECK(check_custom(ctx, fn, op));
    CHECK(check_flags(ctx, fn, flags));
    CHECK(check_buffers(ctx, fn, in, out, n, op->elem_size, true));
    if (ctx->be->scan_custom == NULL)
        return unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->scan_custom(ctx, in, out, n, op, flags);
}
