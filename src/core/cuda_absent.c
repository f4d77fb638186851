/* cuda_absent.c - the public CUDA settings of parsum.h in a build without the
 * CUDA backend (compiled only when PARSUM_HAVE_CUDA is not defined): they
 * exist, so that programs link everywhere, and answer
 * PARSUM_ERR_UNSUPPORTED. The real ones are in src/cuda/backend.cu. */
#include "internal.h"

static parsum_status no_cuda(const parsum_context *ctx, const char *fn)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    return parsum__fail((parsum_context *)ctx, PARSUM_ERR_UNSUPPORTED,
                        "%s: this build of parsum has no CUDA backend", fn);
}

parsum_status parsum_context_set_cuda_device(parsum_context *ctx, int device)
{
    (void)device;
    return no_cuda(ctx, "parsum_context_set_cuda_device");
}

parsum_status parsum_context_cuda_device(const parsum_context *ctx,
                                         int *device)
{
    if (device != NULL)
        *device = -1;
    return no_cuda(ctx, "parsum_context_cuda_device");
}

parsum_status parsum_context_set_cuda_stream(parsum_context *ctx,
                                             void *stream)
{
    (void)stream;
    return no_cuda(ctx, "parsum_context_set_cuda_stream");
}

parsum_status parsum_context_cuda_stream(const parsum_context *ctx,
                                         void **stream)
{
    if (stream != NULL)
        *stream = NULL;
    return no_cuda(ctx, "parsum_context_cuda_stream");
}
