/*
 * custom_op_points.c - a custom operator: of many 3-D points, find the one
 * farthest from the origin ("max by magnitude").
 *
 * The operator is a monoid: combine(a, b) keeps the farther point (the
 * earlier one on a tie), and the origin is its identity. For the CPU it is
 * a C callback; for a GPU the same operator is given as CUDA source, which
 * parsum compiles at run time. The data go through parsum_alloc and
 * parsum_copy, so the program runs on either backend:
 *
 *   custom_op_points          CPU
 *   custom_op_points auto     the GPU when one is present, else the CPU
 *   custom_op_points cuda     the GPU
 */
#include <parsum.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct point3 {
    float x, y, z;
} point3;

static float mag2(const point3 *p)
{
    return p->x * p->x + p->y * p->y + p->z * p->z;
}

/* out = the operand farther from the origin; out may alias a or b. */
static void farther(const void *a, const void *b, void *out, void *user)
{
    point3 pa, pb;
    (void)user;
    memcpy(&pa, a, sizeof pa);
    memcpy(&pb, b, sizeof pb);
    memcpy(out, mag2(&pa) >= mag2(&pb) ? &pa : &pb, sizeof pa);
}

static const point3 origin = {0.0f, 0.0f, 0.0f};

static const parsum_custom_op farthest = {
    .elem_size = sizeof(point3),
    .identity = &origin,
    .combine = farther,
    .user = NULL,
    .cuda_type = "struct P { float x, y, z; };\n"
                 "__device__ inline float mag2(const P &p)\n"
                 "{ return p.x * p.x + p.y * p.y + p.z * p.z; }\n",
    .cuda_type_name = "P",
    .cuda_combine = "return mag2(a) >= mag2(b) ? a : b;",
};

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "custom_op_points: %s: %s\n", parsum_status_name(st),
            parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    parsum_backend backend = PARSUM_BACKEND_CPU;
    if (argc > 1)
        backend = strcmp(argv[1], "cuda") == 0   ? PARSUM_BACKEND_CUDA
                  : strcmp(argv[1], "auto") == 0 ? PARSUM_BACKEND_AUTO
                                                 : PARSUM_BACKEND_CPU;
    enum { N = 100000 };
    point3 *pts = malloc(N * sizeof *pts);
    if (pts == NULL)
        return 1;
    unsigned seed = 12345;
    for (int i = 0; i < N; i++) { /* a small LCG: values in [-100, 100) */
        float c[3];
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            c[k] = (float)((seed >> 8) % 20000u) / 100.0f - 100.0f;
        }
        pts[i] = (point3){c[0], c[1], c[2]};
    }
    parsum_context *ctx = NULL;
    void *buf = NULL;
    point3 best;
    parsum_status st = parsum_context_create(&ctx, backend);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &buf, N * sizeof *pts);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, buf, pts, N * sizeof *pts,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_reduce_custom(ctx, buf, N, &farthest, &best);
    parsum_free(ctx, buf);
    free(pts);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("farthest of %d points on the %s backend: (%.2f, %.2f, %.2f), "
           "distance %.3f\n",
           N, parsum_backend_name(parsum_context_backend(ctx)), best.x,
           best.y, best.z, sqrt(mag2(&best)));
    parsum_context_destroy(ctx);
    return 0;
}
