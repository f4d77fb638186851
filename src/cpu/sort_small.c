/*
 * sort_small.c - the sorts of small arrays (and of small segments) on the
 * CPU: no scratch, no threads. Each key's selected ordered bits
 * (sort/sort_keys.h) go into an item with the key's position; the items
 * are sorted stably, in runs of 8 by a sorting network (on key and
 * position, so the network's order is the stable one) and then by a
 * bottom-up merge sort whose merges take the left run's item on ties; the
 * keys and values are then gathered by position. Below a few hundred
 * elements this beats the radix sort, whose every pass clears and sums
 * 256 counters.
 * When the selected bits leave room, an item is one 64-bit word, the bits
 * above the position (a segment of 2^20 segments of 2^26 keys sorts in
 * half the instructions of the two-word items): the words are distinct,
 * so any correct sort of them is the stable sort of the keys.
 */
#include "sort_impl.h"

#include "../sort/sort_keys.h"

#include <string.h>

/* Bits of a position in a packed item. */
#define POS_BITS 9
#define POS_MASK ((1u << POS_BITS) - 1)

typedef struct item {
    uint64_t key;
    uint32_t pos;
} item;

size_t parsum__sort_small_max(const parsum__sort_call *c)
{
    /* the radix sort's cost grows with its digits, the merge sort's not */
    size_t digits = (c->end - c->begin + 7) / 8, m = 64 * digits;
    return m < PARSUM__SORT_SMALL_MAX ? m : PARSUM__SORT_SMALL_MAX;
}

/* The selected ordered bits of the m raw keys at k, shifted left by
 * `up` and or-ed with their positions (up 0: the bits alone); the switch
 * on the key kind is outside the loops. */
#define SEL_LOOP(T, ORD)                                                    \
    for (size_t i = 0; i < m; i++) {                                        \
        T x;                                                                \
        memcpy(&x, k + i * sizeof(T), sizeof(T));                           \
        uint64_t o = (uint64_t)(T)(ORD) >> c->begin;                        \
        out[i] = (o & mask) << up | (up ? i : 0);                           \
    }

static void sel_keys(const parsum__sort_call *c, const unsigned char *k,
                     size_t m, unsigned up, uint64_t *out)
{
    unsigned w = c->end - c->begin;
    uint64_t mask = w < 64 ? ((uint64_t)1 << w) - 1 : ~(uint64_t)0;
    uint64_t f = c->flip;
    switch (c->kind) {
    case PARSUM__SK_U8: SEL_LOOP(uint8_t, x ^ f) break;
    case PARSUM__SK_U16: SEL_LOOP(uint16_t, x ^ f) break;
    case PARSUM__SK_U32: SEL_LOOP(uint32_t, x ^ f) break;
    case PARSUM__SK_F32: SEL_LOOP(uint32_t, parsum__ord_f32(x) ^ f) break;
    case PARSUM__SK_F64: SEL_LOOP(uint64_t, parsum__ord_f64(x) ^ f) break;
    default: SEL_LOOP(uint64_t, x ^ f) break;
    }
}

/* Stable insertion sort of a[0 .. m). */
static void insertion(item *a, size_t m)
{
    for (size_t i = 1; i < m; i++) {
        item x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].key > x.key; j--) /* strict: stable */
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* a[0 .. h) and a[h .. m), each sorted, into out[0 .. m); ties from the
 * left. The choice is a select, not a branch: which run wins is random. */
static void merge(const item *a, size_t h, size_t m, item *out)
{
    size_t i = 0, j = h, o = 0;
    while (i < h && j < m) {
        int right = a[j].key < a[i].key;
        out[o++] = right ? a[j] : a[i];
        j += (size_t)right;
        i += (size_t)!right;
    }
    while (i < h)
        out[o++] = a[i++];
    while (j < m)
        out[o++] = a[j++];
}

/* Sorts a[0 .. m) stably; returns a or tmp, whichever holds the result. */
/* The network of network8 (below) on 8 items, ordered by key and then by
 * position: all distinct, so the network's result is the stable order. */
#define CEI(x, y)                                                          \
    do {                                                                   \
        int sw_ = k[y] < k[x] || (k[y] == k[x] && q[y] < q[x]);            \
        uint64_t kx_ = sw_ ? k[y] : k[x], ky_ = sw_ ? k[x] : k[y];         \
        uint32_t qx_ = sw_ ? q[y] : q[x], qy_ = sw_ ? q[x] : q[y];         \
        k[x] = kx_;                                                        \
        k[y] = ky_;                                                        \
        q[x] = qx_;                                                        \
        q[y] = qy_;                                                        \
    } while (0)

static void network8_items(item *a)
{
    uint64_t k[8];
    uint32_t q[8];
    for (int i = 0; i < 8; i++) {
        k[i] = a[i].key;
        q[i] = a[i].pos;
    }
    CEI(0, 2);
    CEI(1, 3);
    CEI(4, 6);
    CEI(5, 7);
    CEI(0, 4);
    CEI(1, 5);
    CEI(2, 6);
    CEI(3, 7);
    CEI(0, 1);
    CEI(2, 3);
    CEI(4, 5);
    CEI(6, 7);
    CEI(2, 4);
    CEI(3, 5);
    CEI(1, 4);
    CEI(3, 6);
    CEI(1, 2);
    CEI(3, 4);
    CEI(5, 6);
    for (int i = 0; i < 8; i++) {
        a[i].key = k[i];
        a[i].pos = q[i];
    }
}

#undef CEI

static item *sort_items(item *a, item *tmp, size_t m)
{
    size_t r = 0;
    for (; r + 8 <= m; r += 8)
        network8_items(a + r);
    insertion(a + r, m - r);
    for (size_t w = 8; w < m; w *= 2) {
        for (size_t lo = 0; lo < m; lo += 2 * w) {
            size_t h = m - lo < w ? m - lo : w;
            size_t len = m - lo < 2 * w ? m - lo : 2 * w;
            merge(a + lo, h, len, tmp + lo);
        }
        item *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* The same for packed items (one word each, all distinct). */
static void insertion_w(uint64_t *a, size_t m)
{
    for (size_t i = 1; i < m; i++) {
        uint64_t x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

static void merge_w(const uint64_t *a, size_t h, size_t m, uint64_t *out)
{
    size_t i = 0, j = h, o = 0;
    while (i < h && j < m) {
        uint64_t x = a[i], y = a[j];
        int right = y < x;
        out[o++] = right ? y : x;
        j += (size_t)right;
        i += (size_t)!right;
    }
    while (i < h)
        out[o++] = a[i++];
    while (j < m)
        out[o++] = a[j++];
}

/* The 19-comparator network for 8 inputs, as selects: insertion sort's
 * branches mispredict about once per element on random keys, and that
 * was most of the small sorts' time. */
#define CE(x, y)                                                           \
    do {                                                                   \
        uint64_t lo_ = x < y ? x : y, hi_ = x < y ? y : x;                 \
        x = lo_;                                                           \
        y = hi_;                                                           \
    } while (0)

static void network8(uint64_t *a)
{
    uint64_t x0 = a[0], x1 = a[1], x2 = a[2], x3 = a[3], x4 = a[4],
             x5 = a[5], x6 = a[6], x7 = a[7];
    CE(x0, x2);
    CE(x1, x3);
    CE(x4, x6);
    CE(x5, x7);
    CE(x0, x4);
    CE(x1, x5);
    CE(x2, x6);
    CE(x3, x7);
    CE(x0, x1);
    CE(x2, x3);
    CE(x4, x5);
    CE(x6, x7);
    CE(x2, x4);
    CE(x3, x5);
    CE(x1, x4);
    CE(x3, x6);
    CE(x1, x2);
    CE(x3, x4);
    CE(x5, x6);
    a[0] = x0;
    a[1] = x1;
    a[2] = x2;
    a[3] = x3;
    a[4] = x4;
    a[5] = x5;
    a[6] = x6;
    a[7] = x7;
}

#undef CE

/* Runs of 8 by the network (the last, shorter one by insertion), then
 * the merges. */
static uint64_t *sort_words(uint64_t *a, uint64_t *tmp, size_t m)
{
    size_t r = 0;
    for (; r + 8 <= m; r += 8)
        network8(a + r);
    insertion_w(a + r, m - r);
    for (size_t w = 8; w < m; w *= 2) {
        for (size_t lo = 0; lo < m; lo += 2 * w) {
            size_t h = m - lo < w ? m - lo : w;
            size_t len = m - lo < 2 * w ? m - lo : 2 * w;
            merge_w(a + lo, h, len, tmp + lo);
        }
        uint64_t *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* n elements of `size` bytes, element j from src[pos j], pos j the low
 * POS_BITS of order[j]; a switch per call, so that each size is a
 * fixed-size copy. */
#define GATHER_LOOP(size)                                                   \
    for (size_t j = 0; j < n; j++)                                          \
        memcpy(dst + (size) * j, src + (size) * (order[j] & POS_MASK), (size))

static void gather(unsigned char *dst, const unsigned char *src,
                   const uint64_t *order, size_t n, size_t size)
{
    switch (size) {
    case 1: GATHER_LOOP(1); break;
    case 2: GATHER_LOOP(2); break;
    case 4: GATHER_LOOP(4); break;
    case 8: GATHER_LOOP(8); break;
    case 16: GATHER_LOOP(16); break;
    default: GATHER_LOOP(size); break;
    }
}

void parsum__sort_small(const parsum__sort_call *c, size_t off, size_t m)
{
    item a[PARSUM__SORT_SMALL_MAX], tmp[PARSUM__SORT_SMALL_MAX];
    /* copies of inputs that are also outputs (in place) */
    unsigned char kcopy[PARSUM__SORT_SMALL_MAX * 8];
    unsigned char vcopy[PARSUM__SORT_SMALL_MAX * PARSUM_SORT_MAX_VALUE_SIZE];
    const parsum__sort_args *s = c->a;
    size_t kb = c->kb, vs = c->vs;
    const unsigned char *kin = (const unsigned char *)s->keys_in + off * kb;
    unsigned char *kout =
        s->keys_out ? (unsigned char *)s->keys_out + off * kb : NULL;
    const uint64_t *order;
    /* words: in the items' memory, positions in their low bits */
    uint64_t *w = (uint64_t *)(void *)a, *wt = (uint64_t *)(void *)tmp;
    if (c->end - c->begin <= 64 - POS_BITS) {
        sel_keys(c, kin, m, POS_BITS, w);
        order = sort_words(w, wt, m);
    } else {
        sel_keys(c, kin, m, 0, wt);
        for (size_t i = 0; i < m; i++) {
            a[i].key = wt[i];
            a[i].pos = (uint32_t)i;
        }
        const item *sorted = sort_items(a, tmp, m);
        /* the positions as words, in the array the result is not in */
        uint64_t *pw = sorted == a ? wt : w;
        for (size_t j = 0; j < m; j++)
            pw[j] = sorted[j].pos;
        order = pw;
    }
    if (kout != NULL) {
        if (kout == kin) {
            memcpy(kcopy, kin, m * kb);
            kin = kcopy;
        }
        gather(kout, kin, order, m, kb);
    }
    if (c->vm == PARSUM__SV_IDX64) {
        uint64_t *perm = (uint64_t *)s->values_out + off;
        for (size_t j = 0; j < m; j++)
            perm[j] = off + (order[j] & POS_MASK);
    } else if (c->vm != PARSUM__SV_NONE) {
        const unsigned char *vin =
            (const unsigned char *)s->values_in + off * vs;
        unsigned char *vout = (unsigned char *)s->values_out + off * vs;
        if (vout == vin) {
            memcpy(vcopy, vin, m * vs);
            vin = vcopy;
        }
        gather(vout, vin, order, m, vs);
    }
}
