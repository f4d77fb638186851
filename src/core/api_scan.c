/* api_scan.c - argument checking for reduce and scan, then dispatch to the
 * context's backend. Every check here names the argument in the message. */
#include "api_check.h"

#include <stdint.h>

#define SCAN_FLAGS_ALL (PARSUM_EXCLUSIVE | PARSUM_REVERSE)

parsum_status parsum__check_dtype_op(parsum_context *ctx, const char *fn,
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

parsum_status parsum__check_region(parsum_context *ctx, const char *fn,
                                   const char *what, const void *p,
                                   size_t count, const char *count_name,
                                   size_t size, size_t *bytes)
{
    if (!parsum__mul_size(count, size, bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s = %zu elements of %zu bytes (%s) "
                            "overflow size_t",
                            fn, count_name, count, size, what);
    if (count == 0)
        return PARSUM_OK;
    if (p == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s is NULL but %s = %zu", fn, what,
                            count_name, count);
    if ((uintptr_t)-1 - (uintptr_t)p < *bytes - 1)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s, a buffer of %zu bytes, wraps around the "
                            "address space",
                            fn, what, *bytes);
    if (ctx->be->check_pointer != NULL)
        return ctx->be->check_pointer(ctx, p, fn, what);
    return PARSUM_OK;
}

parsum_status parsum__check_disjoint(parsum_context *ctx, const char *fn,
                                     const char *a_what, const void *a,
                                     size_t abytes, const char *b_what,
                                     const void *b, size_t bbytes,
                                     bool allow_equal)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (abytes == 0 || bbytes == 0 || (allow_equal && x == y))
        return PARSUM_OK;
    /* Both ranges were checked not to wrap (parsum__check_region). */
    if (!(x < y + bbytes && y < x + abytes))
        return PARSUM_OK;
    if (allow_equal)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s and %s overlap without being equal (in "
                            "place means %s == %s)",
                            fn, a_what, b_what, b_what, a_what);
    return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                        "%s: %s and %s overlap; they must be disjoint", fn,
                        a_what, b_what);
}

parsum_status parsum__check_buffers(parsum_context *ctx, const char *fn,
                                    const void *in, void *out, size_t n,
                                    size_t size, bool has_out)
{
    size_t bytes = 0;
    PARSUM__CHECK(parsum__check_region(ctx, fn, "in", in, n, "n", size,
                                       &bytes));
    if (!has_out)
        return PARSUM_OK;
    PARSUM__CHECK(parsum__check_region(ctx, fn, "out", out, n, "n", size,
                                       &bytes));
    return parsum__check_disjoint(ctx, fn, "in", in, bytes, "out", out, bytes,
                                  true);
}

parsum_status parsum__check_custom(parsum_context *ctx, const char *fn,
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

parsum_status parsum__check_scan_flags(parsum_context *ctx, const char *fn,
                                       unsigned flags)
{
    if (flags & ~SCAN_FLAGS_ALL)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: flags = 0x%x has unknown bits 0x%x", fn,
                            flags, flags & ~SCAN_FLAGS_ALL);
    return PARSUM_OK;
}

parsum_status parsum__unsupported(parsum_context *ctx, const char *fn)
{
    return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                        "%s: not available on the %s backend", fn,
                        ctx->be->name);
}

parsum_status parsum_reduce(parsum_context *ctx, const void *in, size_t n,
                            parsum_dtype dtype, parsum_op op, void *result)
{
    static const char fn[] = "parsum_reduce";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    PARSUM__CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    if (result == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: result is NULL", fn);
    PARSUM__CHECK(parsum__check_buffers(ctx, fn, in, NULL, n,
                                        parsum_dtype_size(dtype), false));
    if (ctx->be->reduce == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->reduce(ctx, in, n, dtype, op, result);
}

parsum_status parsum_scan(parsum_context *ctx, const void *in, void *out,
                          size_t n, parsum_dtype dtype, parsum_op op,
                          unsigned flags)
{
    static const char fn[] = "parsum_scan";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    PARSUM__CHECK(parsum__check_dtype_op(ctx, fn, dtype, op));
    PARSUM__CHECK(parsum__check_scan_flags(ctx, fn, flags));
    PARSUM__CHECK(parsum__check_buffers(ctx, fn, in, out, n,
                                        parsum_dtype_size(dtype), true));
    if (ctx->be->scan == NULL)
        return parsum__unsupported(ctx, fn);
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
    PARSUM__CHECK(parsum__check_custom(ctx, fn, op));
    if (result == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: result is NULL", fn);
    PARSUM__CHECK(parsum__check_buffers(ctx, fn, in, NULL, n, op->elem_size,
                                        false));
    if (ctx->be->reduce_custom == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->reduce_custom(ctx, in, n, op, result);
}

parsum_status parsum_scan_custom(parsum_context *ctx, const void *in,
                                 void *out, size_t n,
                                 const parsum_custom_op *op, unsigned flags)
{
    static const char fn[] = "parsum_scan_custom";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    PARSUM__CHECK(parsum__check_custom(ctx, fn, op));
    PARSUM__CHECK(parsum__check_scan_flags(ctx, fn, flags));
    PARSUM__CHECK(parsum__check_buffers(ctx, fn, in, out, n, op->elem_size,
                                        true));
    if (ctx->be->scan_custom == NULL)
        return parsum__unsupported(ctx, fn);
    if (n == 0)
        return PARSUM_OK;
    return ctx->be->scan_custom(ctx, in, out, n, op, flags);
}
