/*
 * test_ops.c - the custom test operators of test_ops.h.
 */
#include "test_ops.h"

#include <string.h>

atomic_int test_ops_bad_user;

/* ---- affine maps over uint32 ------------------------------------------ */
static int aff32_tag;

static void aff32_combine(const void *pa, const void *pb, void *out,
                          void *user)
{
    aff32 f, g, r;
    memcpy(&f, pa, sizeof f);
    memcpy(&g, pb, sizeof g);
    r.a = f.a * g.a;
    r.b = g.a * f.b + g.b;
    memcpy(out, &r, sizeof r);
    if (user != &aff32_tag)
        atomic_store(&test_ops_bad_user, 1);
}

static const aff32 aff32_identity = {1, 0};
const parsum_custom_op aff32_op = {
    sizeof(aff32), &aff32_identity, aff32_combine, &aff32_tag,
    "struct Aff { unsigned int a, b; };", "Aff",
    "Aff r; r.a = a.a * b.a; r.b = b.a * a.b + b.b; return r;"};

void aff32_fill(tu_rng *r, void *buf, size_t n)
{
    aff32 *p = buf;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = tu_next(r);
        p[i].a = (uint32_t)v | 1; /* odd: the product never dies out */
        p[i].b = (uint32_t)(v >> 32);
    }
}

/* ---- farthest 3-D point (12 bytes): the seeds' example ---------------- */
static float mag2(const pt3 *p)
{
    return p->x * p->x + p->y * p->y + p->z * p->z;
}

static void pt3_combine(const void *pa, const void *pb, void *out, void *user)
{
    pt3 a, b;
    (void)user;
    memcpy(&a, pa, sizeof a);
    memcpy(&b, pb, sizeof b);
    memcpy(out, mag2(&b) > mag2(&a) ? &b : &a, sizeof a);
}

static const pt3 pt3_identity = {0, 0, 0};
const parsum_custom_op pt3_op = {
    sizeof(pt3), &pt3_identity, pt3_combine, NULL,
    "struct P3 { float x, y, z; };\n"
    "inline float mag2(const P3 &p) "
    "{ return p.x * p.x + p.y * p.y + p.z * p.z; }\n",
    "P3", "return mag2(b) > mag2(a) ? b : a;"};

void pt3_fill(tu_rng *r, void *buf, size_t n)
{
    pt3 *p = buf;
    for (size_t i = 0; i < n; i++) { /* small integers: many exact ties */
        p[i].x = (float)((int)tu_below(r, 13) - 6);
        p[i].y = (float)((int)tu_below(r, 13) - 6);
        p[i].z = (float)((int)tu_below(r, 13) - 6);
    }
}
