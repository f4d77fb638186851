#define _POSIX_C_SOURCE 200809L
/* context.c - creation of contexts, thread count, the scratch arena and the
 * memory helpers. Every argument is checked here; backends trust them. */
#include "internal.h"
#include "../cpu/sched.h"

#include <stdlib.h>
#include <string.h>

void *parsum__host_alloc(size_t bytes)
{
    void *p = NULL;
    /* Round up: aligned_alloc wants a multiple of the alignment. */
    size_t rounded = (bytes + PARSUM__ALIGN - 1) & ~(size_t)(PARSUM__ALIGN - 1);
    if (rounded < bytes)
        return NULL;
    if (rounded == 0)
        rounded = PARSUM__ALIGN;
    if (posix_memalign(&p, PARSUM__ALIGN, rounded) != 0)
        return NULL;
    return p;
}

void parsum__host_free(void *p)
{
    free(p);
}

int parsum__default_threads(void)
{
    /* The scheduler's default already honours OMP_NUM_THREADS. */
    int n = parsum__sched_workers();
    return n > 0 ? n : 1;
}

const char *parsum_backend_name(parsum_backend backend)
{
    switch (backend) {
    case PARSUM_BACKEND_AUTO: return "auto";
    case PARSUM_BACKEND_CPU: return "cpu";
    case PARSUM_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

parsum_status parsum_context_create(parsum_context **out,
                                    parsum_backend backend)
{
    if (out == NULL)
        return PARSUM_ERR_NULL_POINTER;
    *out = NULL;
    if ((unsigned)backend > PARSUM_BACKEND_CUDA)
        return PARSUM_ERR_INVALID_ARGUMENT;

    parsum_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    ctx->threads = parsum__default_threads();

    parsum_backend kind = backend;
    if (kind == PARSUM_BACKEND_AUTO) {
#ifdef PARSUM_HAVE_CUDA
        kind = parsum__cuda_available() ? PARSUM_BACKEND_CUDA
                                        : PARSUM_BACKEND_CPU;
#else
        kind = PARSUM_BACKEND_CPU;
#endif
    }
    ctx->kind = kind;
    if (kind == PARSUM_BACKEND_CPU) {
        ctx->be = &parsum__cpu_backend;
    } else {
#ifdef PARSUM_HAVE_CUDA
        ctx->be = &parsum__cuda_backend;
        parsum_status st = parsum__cuda_init(ctx);
        if (st != PARSUM_OK) {
            free(ctx);
            return st;
        }
#else
        free(ctx);
        return PARSUM_ERR_UNSUPPORTED;
#endif
    }
    *out = ctx;
    return PARSUM_OK;
}

void parsum_context_destroy(parsum_context *ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->arena != NULL)
        ctx->be->mem_free(ctx, ctx->arena);
    if (ctx->be->destroy != NULL)
        ctx->be->destroy(ctx);
    free(ctx);
}

parsum_backend parsum_context_backend(const parsum_context *ctx)
{
    return ctx != NULL ? ctx->kind : PARSUM_BACKEND_AUTO;
}

parsum_status parsum_context_set_threads(parsum_context *ctx, int threads)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (threads < 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "parsum_context_set_threads: threads = %d is "
                            "negative (0 restores the default)",
                            threads);
    ctx->threads_asked = threads;
    ctx->threads = threads > 0 ? threads : parsum__default_threads();
    return PARSUM_OK;
}

int parsum_context_threads(const parsum_context *ctx)
{
    return ctx != NULL ? ctx->threads : 0;
}

void *parsum__scratch(parsum_context *ctx, size_t bytes, const char *fn)
{
    if (bytes == 0)
        bytes = 1;
    if (ctx->user_ws != NULL && ctx->user_ws_bytes >= bytes)
        return ctx->user_ws;
    if (ctx->arena_bytes >= bytes)
        return ctx->arena;
    /* Grow geometrically so a sequence of growing calls reallocates
     * O(log n) times. */
    size_t want = ctx->arena_bytes * 2;
    if (want < bytes)
        want = bytes;
    if (ctx->arena != NULL) {
        ctx->be->mem_free(ctx, ctx->arena);
        ctx->arena = NULL;
        ctx->arena_bytes = 0;
    }
    void *p = NULL;
    if (ctx->be->mem_alloc(ctx, &p, want) != PARSUM_OK) {
        want = bytes; /* the doubling may be what failed */
        if (ctx->be->mem_alloc(ctx, &p, want) != PARSUM_OK) {
            parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                         "%s: could not allocate %zu bytes of scratch memory",
                         fn, bytes);
            return NULL;
        }
    }
    ctx->arena = p;
    ctx->arena_bytes = want;
    return p;
}

parsum_status parsum_context_reserve(parsum_context *ctx, size_t bytes)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (ctx->arena_bytes >= bytes)
        return PARSUM_OK;
    void *p = NULL;
    if (ctx->be->mem_alloc(ctx, &p, bytes) != PARSUM_OK)
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "parsum_context_reserve: could not allocate %zu "
                            "bytes",
                            bytes);
    if (ctx->arena != NULL)
        ctx->be->mem_free(ctx, ctx->arena);
    ctx->arena = p;
    ctx->arena_bytes = bytes;
    return PARSUM_OK;
}

parsum_status parsum_context_set_workspace(parsum_context *ctx,
                                           void *workspace, size_t bytes)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (workspace == NULL && bytes != 0)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "parsum_context_set_workspace: workspace is NULL "
                            "but bytes = %zu",
                            bytes);
    if (workspace != NULL && ((uintptr_t)workspace % PARSUM__ALIGN) != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "parsum_context_set_workspace: workspace %p is "
                            "not 64-byte aligned",
                            workspace);
    if (workspace != NULL && ctx->be->check_pointer != NULL) {
        parsum_status st = ctx->be->check_pointer(
            ctx, workspace, "parsum_context_set_workspace", "workspace");
        if (st != PARSUM_OK)
            return st;
    }
    ctx->user_ws = workspace;
    ctx->user_ws_bytes = workspace != NULL ? bytes : 0;
    return PARSUM_OK;
}

size_t parsum_context_scratch_size(const parsum_context *ctx)
{
    if (ctx == NULL)
        return 0;
    return ctx->arena_bytes > ctx->user_ws_bytes ? ctx->arena_bytes
                                                 : ctx->user_ws_bytes;
}

parsum_status parsum_alloc(parsum_context *ctx, void **ptr, size_t bytes)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (ptr == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "parsum_alloc: ptr is NULL");
    *ptr = NULL;
    /* The backend's mem_alloc records its own message on failure. */
    return ctx->be->mem_alloc(ctx, ptr, bytes);
}

void parsum_free(parsum_context *ctx, void *ptr)
{
    if (ctx == NULL || ptr == NULL)
        return;
    ctx->be->mem_free(ctx, ptr);
}

parsum_status parsum_copy(parsum_context *ctx, void *dst, const void *src,
                          size_t bytes, parsum_copy_kind kind)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if ((unsigned)kind > PARSUM_COPY_HOST_TO_HOST)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "parsum_copy: unknown copy kind %d", (int)kind);
    if (bytes == 0)
        return PARSUM_OK;
    if (dst == NULL || src == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "parsum_copy: %s is NULL but bytes = %zu",
                            dst == NULL ? "dst" : "src", bytes);
    return ctx->be->mem_copy(ctx, dst, src, bytes, kind);
}

parsum_status parsum_synchronize(parsum_context *ctx)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    return ctx->be->synchronize != NULL ? ctx->be->synchronize(ctx)
                                        : PARSUM_OK;
}
