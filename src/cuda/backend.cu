/*
 * backend.cu - the CUDA backend's table and its plumbing: context state
 * (device, stream, small device buffers), memory of the device, pointer
 * checks, errors with their call site, and the public CUDA setters of
 * parsum.h. The kernels are in the *_kernels.cuh headers, launchers in
 * launch.cu, custom operators in custom.cu.
 *
 * Every CUDA call is checked (PARSUM_CUDA_TRY); a failure becomes a
 * parsum_status and a message naming the public function, the CUDA error,
 * the failed call and its place in this source.
 */
#include "cuda_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of the per-context device buffer: the reduce's block counter, then
 * a staging slot for one result element of any size. */
#define PARSUM__CUDA_MISC_COUNTER_BYTES 256
#define PARSUM__CUDA_MISC_BYTES \
    (PARSUM__CUDA_MISC_COUNTER_BYTES + PARSUM_CUSTOM_MAX_ELEM_SIZE)

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

const char *parsum__cuda_short_file(const char *file)
{
    const char *p = strstr(file, "src/cuda/");
    return p != NULL ? p : file;
}

parsum_status parsum__cuda_error(parsum_context *ctx, cudaError_t err,
                                 const char *call, const char *file, int line,
                                 const char *func)
{
    /* Clear the error unless it is sticky (then it stays and every later
     * call reports it, which is what the user needs to see). */
    (void)cudaGetLastError();
    parsum_status st = PARSUM_ERR_CUDA;
    if (err == cudaErrorMemoryAllocation)
        st = PARSUM_ERR_OUT_OF_MEMORY;
    else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        st = PARSUM_ERR_NO_DEVICE;
    const parsum__cuda_state *cs =
        ctx != NULL ? static_cast<const parsum__cuda_state *>(ctx->backend_state)
                    : NULL;
    const char *api = cs != NULL && cs->api != NULL ? cs->api : "parsum";
    return parsum__fail(ctx, st, "%s: CUDA error %s (%s) from %s at %s:%d in %s",
                        api, cudaGetErrorName(err), cudaGetErrorString(err),
                        call, parsum__cuda_short_file(file), line, func);
}

/* ------------------------------------------------------------------------ */
/* Device scope                                                              */
/* ------------------------------------------------------------------------ */

parsum_status parsum__cuda_scope::enter(parsum_context *ctx, const char *api)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (st_ == NULL) {
        st_ = st;
        api_ = st->api;
    }
    st->api = api;
    int cur = -1;
    PARSUM_CUDA_TRY(ctx, cudaGetDevice(&cur));
    if (cur != st->device) {
        PARSUM_CUDA_TRY(ctx, cudaSetDevice(st->device));
        prev_ = cur;
    }
    return PARSUM_OK;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

static parsum_status cuda_mem_alloc(parsum_context *ctx, void **ptr,
                                    size_t bytes)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_alloc");
    if (s != PARSUM_OK)
        return s;
    *ptr = NULL;
    cudaError_t e = cudaMalloc(ptr, bytes != 0 ? bytes : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        (void)cudaGetLastError();
        if (e == cudaErrorMemoryAllocation)
            return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                                "parsum_alloc: cudaMalloc of %zu bytes on "
                                "device %d failed: out of device memory",
                                bytes, parsum__cuda_st(ctx)->device);
        return parsum__cuda_error(ctx, e, "cudaMalloc(ptr, bytes)", __FILE__,
                                  __LINE__, __func__);
    }
    return PARSUM_OK;
}

static void cuda_mem_free(parsum_context *ctx, void *ptr)
{
    parsum__cuda_scope scope;
    if (scope.enter(ctx, "parsum_free") != PARSUM_OK)
        return;
    /* cudaFree waits for the device, so in-flight kernels that use ptr
     * finish first. An error here has nowhere to go but the message. */
    cudaError_t e = cudaFree(ptr);
    if (e != cudaSuccess)
        (void)parsum__cuda_error(ctx, e, "cudaFree(ptr)", __FILE__, __LINE__,
                                 __func__);
}

static parsum_status cuda_mem_copy(parsum_context *ctx, void *dst,
                                   const void *src, size_t bytes,
                                   parsum_copy_kind kind)
{
    if (kind == PARSUM_COPY_HOST_TO_HOST) {
        memmove(dst, src, bytes);
        return PARSUM_OK;
    }
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_copy");
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaMemcpyKind k = kind == PARSUM_COPY_HOST_TO_CONTEXT ? cudaMemcpyHostToDevice
                       : kind == PARSUM_COPY_CONTEXT_TO_HOST
                           ? cudaMemcpyDeviceToHost
                           : cudaMemcpyDeviceToDevice;
    PARSUM_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, k, st->stream));
    /* Host memory is the caller's again when we return: wait for the copy.
     * A device-to-device copy stays asynchronous, like a kernel. */
    if (k != cudaMemcpyDeviceToDevice)
        PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    return PARSUM_OK;
}

static parsum_status cuda_mem_copy2d(parsum_context *ctx, void *dst,
                                     size_t dst_pitch, const void *src,
                                     size_t src_pitch, size_t row_bytes,
                                     size_t rows, parsum_copy_kind kind)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_image_copy");
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaMemcpyKind k = kind == PARSUM_COPY_HOST_TO_CONTEXT ? cudaMemcpyHostToDevice
                       : kind == PARSUM_COPY_CONTEXT_TO_HOST ? cudaMemcpyDeviceToHost
                       : kind == PARSUM_COPY_CONTEXT_TO_CONTEXT
                           ? cudaMemcpyDeviceToDevice
                           : cudaMemcpyHostToHost;
    PARSUM_CUDA_TRY(ctx, cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch,
                                           row_bytes, rows, k, st->stream));
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    return PARSUM_OK;
}

static parsum_status cuda_synchronize(parsum_context *ctx)
{
    parsum__cuda_scope scope;
    parsum_status s = scope.enter(ctx, "parsum_synchronize");
    if (s != PARSUM_OK)
        return s;
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(parsum__cuda_st(ctx)->stream));
    return PARSUM_OK;
}

/* Device memory of the context's device, managed memory, and pinned host
 * memory mapped into the device's address space are usable by kernels;
 * plain host memory and other devices' memory are not. */
static parsum_status cuda_check_pointer(parsum_context *ctx, const void *p,
                                        const char *fn, const char *what)
{
    if (p == NULL)
        return PARSUM_OK;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaPointerAttributes attr;
    cudaError_t e = cudaPointerGetAttributes(&attr, p);
    if (e != cudaSuccess) {
        st->api = fn;
        return parsum__cuda_error(ctx, e, "cudaPointerGetAttributes(&attr, p)",
                                  __FILE__, __LINE__, __func__);
    }
    switch (attr.type) {
    case cudaMemoryTypeManaged:
        return PARSUM_OK;
    case cudaMemoryTypeDevice:
        if (attr.device == st->device)
            return PARSUM_OK;
        return parsum__fail(ctx, PARSUM_ERR_WRONG_MEMORY_SPACE,
                            "%s: %s = %p is memory of CUDA device %d, but the "
                            "context works on device %d",
                            fn, what, p, attr.device, st->device);
    case cudaMemoryTypeHost:
        if (attr.devicePointer == p)
            return PARSUM_OK;
        return parsum__fail(ctx, PARSUM_ERR_WRONG_MEMORY_SPACE,
                            "%s: %s = %p is pinned host memory that is not "
                            "mapped at the same address on the device",
                            fn, what, p);
    default:
        return parsum__fail(ctx, PARSUM_ERR_WRONG_MEMORY_SPACE,
                            "%s: %s = %p is host memory; a CUDA context needs "
                            "device or managed memory (parsum_alloc, "
                            "cudaMalloc, cudaMallocManaged)",
                            fn, what, p);
    }
}

/* ------------------------------------------------------------------------ */
/* Context state                                                             */
/* ------------------------------------------------------------------------ */

/* Reads the device's properties and allocates the small device buffers.
 * The device must be current. */
static parsum_status state_attach_device(parsum_context *ctx)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    PARSUM_CUDA_TRY(ctx, cudaDeviceGetAttribute(
                             &st->sm_count, cudaDevAttrMultiProcessorCount,
                             st->device));
    PARSUM_CUDA_TRY(ctx, cudaDeviceGetAttribute(
                             &st->cc_major, cudaDevAttrComputeCapabilityMajor,
                             st->device));
    PARSUM_CUDA_TRY(ctx, cudaDeviceGetAttribute(
                             &st->cc_minor, cudaDevAttrComputeCapabilityMinor,
                             st->device));
    void *misc = NULL;
    PARSUM_CUDA_TRY(ctx, cudaMalloc(&misc, PARSUM__CUDA_MISC_BYTES));
    st->dev_counter = static_cast<unsigned *>(misc);
    st->dev_result =
        static_cast<unsigned char *>(misc) + PARSUM__CUDA_MISC_COUNTER_BYTES;
    PARSUM_CUDA_TRY(ctx, cudaMemset(misc, 0, PARSUM__CUDA_MISC_BYTES));
    memset(st->reduce_grid, 0, sizeof st->reduce_grid);
    memset(st->pipe_blocks, 0, sizeof st->pipe_blocks);
    const long v =
        parsum__cuda_env_int("PARSUM_CUDA_SCAN_BLOCKS", 1, LONG_MAX);
    st->scan_blocks_cap = v > 0 ? (size_t)v : 0;
    return PARSUM_OK;
}

/* Frees what belongs to the current device: custom modules and the small
 * buffers. Waits for the stream first. The device must be current. */
static void state_detach_device(parsum_context *ctx)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    (void)cudaStreamSynchronize(st->stream);
    parsum__cuda_modules_free(st);
    if (st->dev_counter != NULL)
        (void)cudaFree(st->dev_counter);
    st->dev_counter = NULL;
    st->dev_result = NULL;
    for (int i = 0; i < PARSUM__TAGGED_COUNT; ++i) {
        parsum__cuda_tagged *t = &st->tagged[i];
        if (t->buf != NULL)
            (void)cudaFree(t->buf);
        t->buf = NULL;
        t->bytes = 0;
        t->call = 0;
    }
    for (int i = 0; i < st->side_count; ++i) {
        (void)cudaStreamSynchronize(st->side[i]);
        (void)cudaStreamDestroy(st->side[i]);
        (void)cudaEventDestroy(st->side_done[i]);
    }
    if (st->side_count > 0)
        (void)cudaEventDestroy(st->fork_event);
    st->side_count = 0;
    if (st->pinned != NULL) {
        (void)cudaFreeHost(st->pinned);
        (void)cudaEventDestroy(st->pinned_ready);
    }
    st->pinned = NULL;
    st->pinned_bytes = 0;
    (void)cudaGetLastError();
}

parsum_status parsum__cuda_pinned(parsum_context *ctx, size_t bytes, void **p)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (st->pinned != NULL && st->pinned_bytes >= bytes) {
        *p = st->pinned;
        return PARSUM_OK;
    }
    if (st->pinned != NULL) {
        /* A copy of an earlier call may still be landing in it. */
        PARSUM_CUDA_TRY(ctx, cudaEventSynchronize(st->pinned_ready));
        PARSUM_CUDA_TRY(ctx, cudaFreeHost(st->pinned));
        st->pinned = NULL;
        st->pinned_bytes = 0;
    } else {
        PARSUM_CUDA_TRY(ctx, cudaEventCreateWithFlags(&st->pinned_ready,
                                                      cudaEventDisableTiming));
    }
    void *h = NULL;
    cudaError_t e = cudaMallocHost(&h, bytes);
    if (e != cudaSuccess) {
        (void)cudaEventDestroy(st->pinned_ready);
        PARSUM_CUDA_TRY(ctx, e);
    }
    st->pinned = h;
    st->pinned_bytes = bytes;
    *p = h;
    return PARSUM_OK;
}

/* Creates the side streams and events on the current device (all or
 * none). */
static parsum_status side_create(parsum_context *ctx)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaError_t e = cudaEventCreateWithFlags(&st->fork_event,
                                             cudaEventDisableTiming);
    int made = 0;
    while (e == cudaSuccess && made < PARSUM__CUDA_SIDE_MAX) {
        e = cudaStreamCreateWithFlags(&st->side[made], cudaStreamNonBlocking);
        if (e != cudaSuccess)
            break;
        e = cudaEventCreateWithFlags(&st->side_done[made],
                                     cudaEventDisableTiming);
        if (e != cudaSuccess) {
            (void)cudaStreamDestroy(st->side[made]);
            break;
        }
        made++;
    }
    if (e == cudaSuccess) {
        st->side_count = made;
        return PARSUM_OK;
    }
    for (int i = 0; i < made; ++i) {
        (void)cudaStreamDestroy(st->side[i]);
        (void)cudaEventDestroy(st->side_done[i]);
    }
    (void)cudaEventDestroy(st->fork_event);
    PARSUM_CUDA_TRY(ctx, e);
    return PARSUM_OK;
}

parsum_status parsum__cuda_fork(parsum_context *ctx, int n,
                                cudaStream_t *side)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (n < 1 || n > PARSUM__CUDA_SIDE_MAX)
        return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                            "%s: %d side streams asked, %d kept", st->api, n,
                            PARSUM__CUDA_SIDE_MAX);
    if (st->side_count == 0) {
        parsum_status s = side_create(ctx);
        if (s != PARSUM_OK)
            return s;
    }
    PARSUM_CUDA_TRY(ctx, cudaEventRecord(st->fork_event, st->stream));
    for (int i = 0; i < n; ++i) {
        PARSUM_CUDA_TRY(ctx, cudaStreamWaitEvent(st->side[i], st->fork_event, 0));
        side[i] = st->side[i];
    }
    return PARSUM_OK;
}

parsum_status parsum__cuda_join(parsum_context *ctx, int n)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    /* Every side stream is joined even when one step fails, so that none
     * is left outside a capture or ahead of the context's stream. */
    cudaError_t first = cudaSuccess;
    for (int i = 0; i < n && i < st->side_count; ++i) {
        cudaError_t e = cudaEventRecord(st->side_done[i], st->side[i]);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(st->stream, st->side_done[i], 0);
        if (e != cudaSuccess && first == cudaSuccess)
            first = e;
    }
    PARSUM_CUDA_TRY(ctx, first);
    return PARSUM_OK;
}

/* The last call number a tag holds (30 bits, shifted left by 2). */
static const unsigned TAG_LAST = (1u << 30) - 1;

/* The call number the tags start from after the buffer is zeroed: 0, or
 * PARSUM_CUDA_TAG_FIRST (a test knob: near TAG_LAST, the tests run through
 * the buffer's periodic zeroing). */
static unsigned tagged_first(void)
{
    const long v = parsum__cuda_env_int("PARSUM_CUDA_TAG_FIRST", 0,
                                        (long)TAG_LAST - 1);
    return v > 0 ? (unsigned)v : 0;
}

parsum_status parsum__cuda_tagged_status(parsum_context *ctx, int which,
                                         size_t bytes, unsigned claims,
                                         void **buf, unsigned *tag,
                                         unsigned *tile_base)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    parsum__cuda_tagged *t = &st->tagged[which];
    if (bytes > t->bytes) {
        if (t->buf != NULL) {
            /* Earlier calls may still read the old buffer. */
            PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
            (void)cudaFree(t->buf);
            t->buf = NULL;
            t->bytes = 0;
        }
        const size_t want = bytes < 4096 ? 4096 : bytes;
        PARSUM_CUDA_TRY(ctx, cudaMalloc(&t->buf, want));
        t->bytes = want;
        t->call = 0;
    }
    /* The tag is 30 bits wide; 0 is never used, so a zeroed word reads as
     * unpublished in every call. */
    if (t->call == 0 || t->call >= TAG_LAST) {
        PARSUM_CUDA_TRY(ctx, cudaMemsetAsync(t->buf, 0, t->bytes, st->stream));
        t->call = tagged_first();
        t->claimed = 0;
    }
    t->call++;
    *buf = t->buf;
    *tag = t->call << 2;
    *tile_base = t->claimed;
    t->claimed += claims; /* wraps as the device's counter does */
    return PARSUM_OK;
}

void parsum__cuda_tagged_reset(parsum_context *ctx, int which)
{
    parsum__cuda_st(ctx)->tagged[which].call = 0;
}

bool parsum__cuda_env_on(const char *name)
{
    const char *e = getenv(name);
    return e == NULL || strcmp(e, "0") != 0;
}

long parsum__cuda_env_int(const char *name, long lo, long hi)
{
    const char *e = getenv(name);
    if (e == NULL || *e == '\0')
        return -1;
    char *end = NULL;
    const long x = strtol(e, &end, 10);
    return *end == '\0' && x >= lo && x <= hi ? x : -1;
}

bool parsum__cuda_capturing(parsum_context *ctx)
{
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(parsum__cuda_st(ctx)->stream, &cs) !=
        cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky; zeroing is the safe side */
        return true;
    }
    return cs != cudaStreamCaptureStatusNone;
}

bool parsum__cuda_available(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return n > 0;
}

parsum_status parsum__cuda_init(parsum_context *ctx)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
        (void)cudaGetLastError();
        return PARSUM_ERR_NO_DEVICE;
    }
    parsum__cuda_state *st =
        static_cast<parsum__cuda_state *>(calloc(1, sizeof *st));
    if (st == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    ctx->backend_state = st;
    st->api = "parsum_context_create";
    st->stream = 0;
    /* The calling thread's current device (0 unless it chose another). */
    parsum_status s = PARSUM_OK;
    if (cudaGetDevice(&st->device) != cudaSuccess) {
        (void)cudaGetLastError();
        st->device = 0;
    }
    {
        parsum__cuda_scope scope;
        s = scope.enter(ctx, "parsum_context_create");
        if (s == PARSUM_OK)
            s = state_attach_device(ctx);
        if (s != PARSUM_OK)
            state_detach_device(ctx);
    }
    if (s != PARSUM_OK) {
        free(st);
        ctx->backend_state = NULL;
        return s;
    }
    return PARSUM_OK;
}

static void cuda_destroy(parsum_context *ctx)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    if (st == NULL)
        return;
    {
        parsum__cuda_scope scope;
        if (scope.enter(ctx, "parsum_context_destroy") == PARSUM_OK)
            state_detach_device(ctx);
    }
    free(st);
    ctx->backend_state = NULL;
}

/* Designated initializers (in the slots' order, as C++20 requires and
 * nvcc's host compilers accept in C++17): a slot left out is NULL. */
extern "C" const parsum__backend parsum__cuda_backend = {
    .name = "cuda",
    .reduce = parsum__cuda_reduce,
    .scan = parsum__cuda_scan,
    .reduce_custom = parsum__cuda_reduce_custom,
    .scan_custom = parsum__cuda_scan_custom,
    .seg_scan = parsum__cuda_seg_scan,
    .seg_reduce = parsum__cuda_seg_reduce,
    .scan_by_key = parsum__cuda_scan_by_key,
    .reduce_by_key = parsum__cuda_reduce_by_key,
    .offsets_to_flags = parsum__cuda_offsets_to_flags,
    .flags_to_offsets = parsum__cuda_flags_to_offsets,
    .select = parsum__cuda_select,
    .runs = parsum__cuda_runs,
    .integral = parsum__cuda_integral,
    .box_sums = parsum__cuda_box_sums,
    .box_filter = parsum__cuda_box_filter,
    .histogram = parsum__cuda_histogram,
    .hist_bin_ids = parsum__cuda_hist_bin_ids,
    .hist_add_runs = parsum__cuda_hist_add_runs,
    .tonemap_lum = parsum__cuda_tonemap_lum,
    .tonemap_map = parsum__cuda_tonemap_map,
    .sort = parsum__cuda_sort,
    .segmented_sort = parsum__cuda_segmented_sort,
    .qsort_classify = parsum__cuda_qsort_classify,
    .qsort_scatter = parsum__cuda_qsort_scatter,
    .qsort_finish = parsum__cuda_qsort_finish,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_copy = cuda_mem_copy,
    .mem_copy2d = cuda_mem_copy2d,
    .synchronize = cuda_synchronize,
    .check_pointer = cuda_check_pointer,
    .destroy = cuda_destroy,
};

/* ------------------------------------------------------------------------ */
/* Public CUDA settings (parsum.h, "CUDA backend")                           */
/* ------------------------------------------------------------------------ */

static parsum_status need_cuda(parsum_context *ctx, const char *fn)
{
    if (ctx->kind != PARSUM_BACKEND_CUDA || ctx->backend_state == NULL)
        return parsum__fail(ctx, PARSUM_ERR_UNSUPPORTED,
                            "%s: the context's backend is %s, not cuda", fn,
                            parsum_backend_name(ctx->kind));
    return PARSUM_OK;
}

extern "C" parsum_status parsum_context_set_cuda_device(parsum_context *ctx,
                                                        int device)
{
    static const char fn[] = "parsum_context_set_cuda_device";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum_status s = need_cuda(ctx, fn);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    st->api = fn;
    int count = 0;
    PARSUM_CUDA_TRY(ctx, cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: device = %d, but the devices are 0..%d", fn,
                            device, count - 1);
    if (device == st->device)
        return PARSUM_OK;
    {
        /* Everything of the old device goes: scratch arena, modules,
         * buffers. A caller's workspace lives there too: detach it. */
        parsum__cuda_scope scope;
        s = scope.enter(ctx, fn);
        if (s != PARSUM_OK)
            return s;
        state_detach_device(ctx);
        if (ctx->arena != NULL)
            (void)cudaFree(ctx->arena);
        (void)cudaGetLastError();
        ctx->arena = NULL;
        ctx->arena_bytes = 0;
        ctx->user_ws = NULL;
        ctx->user_ws_bytes = 0;
    }
    st->device = device;
    st->stream = 0;
    parsum__cuda_scope scope;
    s = scope.enter(ctx, fn);
    if (s == PARSUM_OK)
        s = state_attach_device(ctx);
    return s;
}

extern "C" parsum_status parsum_context_cuda_device(const parsum_context *ctx,
                                                    int *device)
{
    if (ctx == NULL || device == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum_context *c = const_cast<parsum_context *>(ctx);
    parsum_status s = need_cuda(c, "parsum_context_cuda_device");
    if (s != PARSUM_OK)
        return s;
    *device = parsum__cuda_st(c)->device;
    return PARSUM_OK;
}

extern "C" parsum_status parsum_context_set_cuda_stream(parsum_context *ctx,
                                                        void *stream)
{
    static const char fn[] = "parsum_context_set_cuda_stream";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum_status s = need_cuda(ctx, fn);
    if (s != PARSUM_OK)
        return s;
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    cudaStream_t ns = static_cast<cudaStream_t>(stream);
    if (ns == st->stream)
        return PARSUM_OK;
    parsum__cuda_scope scope;
    s = scope.enter(ctx, fn);
    if (s != PARSUM_OK)
        return s;
    if (ns != 0 && ns != cudaStreamLegacy && ns != cudaStreamPerThread) {
        int dev = -1;
        PARSUM_CUDA_TRY(ctx, cudaStreamGetDevice(ns, &dev));
        if (dev != st->device)
            return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                                "%s: the stream belongs to CUDA device %d, "
                                "but the context works on device %d",
                                fn, dev, st->device);
    }
    /* The scratch arena and the reduce counter are reused by the next
     * call: work still queued on the old stream must not overlap it. */
    PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    st->stream = ns;
    return PARSUM_OK;
}

extern "C" parsum_status parsum_context_cuda_stream(const parsum_context *ctx,
                                                    void **stream)
{
    if (ctx == NULL || stream == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum_context *c = const_cast<parsum_context *>(ctx);
    parsum_status s = need_cuda(c, "parsum_context_cuda_stream");
    if (s != PARSUM_OK)
        return s;
    *stream = static_cast<void *>(parsum__cuda_st(c)->stream);
    return PARSUM_OK;
}
