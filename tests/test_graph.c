/*
 * test_graph.c - parsum calls captured into a CUDA graph and replayed.
 *
 * Why: the plain scan and the one-pass u8 summed-area table tag their
 * look-back state with the call's number instead of zeroing it, and the
 * tile counter is never reset (src/cuda/NOTES.md section 2). A graph
 * replays the captured launch with the captured number and counter base,
 * so a call on a capturing stream must zero its state inside the graph
 * (parsum__cuda_capturing). Each replay here gets new input, and every
 * output is checked against the serial reference; a replay that reused
 * the first one's state would find its counter past the last tile and
 * write nothing (outputs are poisoned first), or read stale prefixes.
 * CUDA only (skipped on the CPU backend).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "ref/ref.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU_OK(call)                                                          \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess)                                               \
            fail_msg("%s: %s", #call, cudaGetErrorString(e_));               \
    } while (0)

/* The captured work of one call, replayed: capture(arg) enqueues it on
 * the context's stream. */
typedef struct graph {
    cudaGraph_t g;
    cudaGraphExec_t exec;
} graph;

static graph capture(cudaStream_t s, void (*enqueue)(void *), void *arg)
{
    graph gr;
    CU_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue(arg);
    CU_OK(cudaStreamEndCapture(s, &gr.g));
    CU_OK(cudaGraphInstantiate(&gr.exec, gr.g, 0));
    return gr;
}

static void graph_free(graph *gr)
{
    (void)cudaGraphExecDestroy(gr->exec);
    (void)cudaGraphDestroy(gr->g);
}

/* A new stream for the context, with `reserve` bytes of scratch set up
 * ahead (nothing may be allocated while a stream captures); drop_stream
 * gives the context the legacy stream back. */
static cudaStream_t use_new_stream(size_t reserve)
{
    cudaStream_t s;
    CU_OK(cudaStreamCreate(&s));
    TU_OK(parsum_context_set_cuda_stream(tu_ctx, s));
    TU_OK(parsum_context_reserve(tu_ctx, reserve));
    return s;
}

static void drop_stream(cudaStream_t s)
{
    TU_OK(parsum_context_set_cuda_stream(tu_ctx, NULL));
    CU_OK(cudaStreamDestroy(s));
}

typedef struct scan_call {
    void *din, *dout;
    size_t n;
    parsum_dtype d;
    parsum_op op;
} scan_call;

static void enqueue_scan(void *arg)
{
    const scan_call *c = arg;
    TU_OK(parsum_scan(tu_ctx, c->din, c->dout, c->n, c->d, c->op,
                      PARSUM_INCLUSIVE));
}

/* An i32 and an f32 scan of several pipelined tiles, each captured once
 * (after an uncaptured call, so that nothing is first allocated or set
 * up inside the capture) and replayed three times with new data. */
static void test_scan_replay(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CUDA)
        skip();
    static const parsum_dtype dts[] = {PARSUM_I32, PARSUM_F32};
    const size_t n = ((size_t)1 << 20) + 3;
    size_t failures = 0;
    cudaStream_t s = use_new_stream((size_t)1 << 22);
    for (size_t k = 0; k < 2; k++) {
        const size_t bytes = n * parsum_dtype_size(dts[k]);
        unsigned char *in = tu_malloc(bytes), *want = tu_malloc(bytes),
                      *got = tu_malloc(bytes);
        scan_call c = {tu_dev_alloc(bytes), tu_dev_alloc(bytes), n, dts[k],
                       PARSUM_SUM};
        tu_dev_poison(c.din, bytes);
        enqueue_scan(&c); /* set-up outside the capture */
        CU_OK(cudaStreamSynchronize(s));
        graph gr = capture(s, enqueue_scan, &c);
        for (int rep = 0; rep < 3; rep++) {
            tu_rng r = tu_rng_for(dts[k], PARSUM_SUM, n, 77 + rep);
            tu_fill(&r, dts[k], PARSUM_SUM, TU_DATA_EXACT, in, n);
            parsum__ref_scan(in, want, n, dts[k], PARSUM_SUM,
                             PARSUM_INCLUSIVE);
            tu_upload(c.din, in, bytes);
            tu_dev_poison(c.dout, bytes);
            CU_OK(cudaGraphLaunch(gr.exec, s));
            CU_OK(cudaStreamSynchronize(s));
            tu_download(got, c.dout, bytes);
            char what[160];
            snprintf(what, sizeof what, "scan %s SUM n=%zu, replay %d of a "
                     "captured graph", parsum_dtype_name(dts[k]), n, rep);
            if (tu_compare_op(dts[k], PARSUM_SUM, want, got, n, what) != 0)
                failures++;
        }
        graph_free(&gr);
        tu_dev_free(c.din);
        tu_dev_free(c.dout);
        free(in);
        free(want);
        free(got);
    }
    drop_stream(s);
    assert_int_equal(failures, 0);
}

typedef struct sat_call {
    parsum_image src, tab;
} sat_call;

static void enqueue_sat(void *arg)
{
    const sat_call *c = arg;
    TU_OK(parsum_integral(tu_ctx, &c->src, &c->tab, PARSUM_INTEGRAL_INCLUSIVE,
                          NULL));
}

/* The one-pass u8 -> U32 table, captured and replayed (under capture its
 * look-back words are zeroed by a memset node instead of tagged). */
static void test_integral_replay(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CUDA)
        skip();
    const size_t w = 1031, h = 517;
    size_t failures = 0;
    cudaStream_t s = use_new_stream((size_t)1 << 24);
    sat_call c;
    TU_OK(parsum_image_alloc(tu_ctx, &c.src, w, h, 1, PARSUM_U8));
    TU_OK(parsum_image_alloc(tu_ctx, &c.tab, w, h, 1, PARSUM_U32));
    unsigned char *px = tu_malloc(w * h);
    uint32_t *want = tu_malloc(w * h * 4), *got = tu_malloc(w * h * 4);
    memset(px, 1, w * h);
    parsum_image host = {px, w, h, w, 1, PARSUM_U8, PARSUM_MEM_HOST};
    TU_OK(parsum_image_copy(tu_ctx, &c.src, &host));
    enqueue_sat(&c); /* set-up outside the capture */
    CU_OK(cudaStreamSynchronize(s));
    graph gr = capture(s, enqueue_sat, &c);
    parsum_image htab = {got, w, h, w * 4, 1, PARSUM_U32, PARSUM_MEM_HOST};
    for (int rep = 0; rep < 3; rep++) {
        tu_rng r = tu_rng_for(PARSUM_U8, PARSUM_SUM, w * h, 91 + rep);
        for (size_t i = 0; i < w * h; i++)
            px[i] = (unsigned char)(tu_next(&r) >> 56);
        for (size_t y = 0; y < h; y++) {
            uint32_t row = 0;
            for (size_t x = 0; x < w; x++) {
                row += px[y * w + x];
                want[y * w + x] = row + (y > 0 ? want[(y - 1) * w + x] : 0u);
            }
        }
        TU_OK(parsum_image_copy(tu_ctx, &c.src, &host));
        memset(got, TU_POISON, w * h * 4);
        TU_OK(parsum_image_copy(tu_ctx, &c.tab, &htab)); /* poison */
        CU_OK(cudaGraphLaunch(gr.exec, s));
        CU_OK(cudaStreamSynchronize(s));
        TU_OK(parsum_image_copy(tu_ctx, &htab, &c.tab));
        size_t bad = 0;
        for (size_t i = 0; i < w * h; i++)
            bad += want[i] != got[i];
        if (bad != 0)
            tu_report(&failures, "  integral u8 -> u32 %zux%zu, replay %d of a "
                      "captured graph: %zu wrong entries\n", w, h, rep, bad);
    }
    graph_free(&gr);
    parsum_image_free(tu_ctx, &c.src);
    parsum_image_free(tu_ctx, &c.tab);
    free(px);
    free(want);
    free(got);
    drop_stream(s);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scan_replay),
    cmocka_unit_test(test_integral_replay),
};

PARSUM_TEST_MAIN(test_graph)
{
    tu_init("test_graph");
    return tu_finish(TU_RUN("test_graph", tests));
}
