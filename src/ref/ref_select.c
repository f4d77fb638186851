/* ref_select.c - serial selection, partition, unique and run-length
 * encoding (see ref.h): one element at a time, in input order, written
 * straight from the definitions in parsum.h. */
#include "ref.h"

#include <string.h>

/* C's comparisons on the typed value v with the constants A and B. */
#define HOLDS(p, v, A, B)                                                   \
    ((p) == PARSUM_PRED_LT         ? (v) < (A)                              \
     : (p) == PARSUM_PRED_LE       ? (v) <= (A)                             \
     : (p) == PARSUM_PRED_GT       ? (v) > (A)                              \
     : (p) == PARSUM_PRED_GE       ? (v) >= (A)                             \
     : (p) == PARSUM_PRED_EQ       ? (v) == (A)                             \
     : (p) == PARSUM_PRED_NE       ? (v) != (A)                             \
     : (p) == PARSUM_PRED_NONZERO  ? (v) != 0                               \
     : (p) == PARSUM_PRED_IN_RANGE ? ((A) <= (v) && (v) < (B))              \
                                   : 0)

#define TYPED(T, member)                                                    \
    do {                                                                    \
        T v;                                                                \
        memcpy(&v, x, sizeof v);                                            \
        return HOLDS(p, v, a->member, b->member);                           \
    } while (0)

bool parsum__ref_pred(parsum_dtype d, parsum_pred p, const void *x,
                      const parsum_scalar *a, const parsum_scalar *b)
{
    if (p == PARSUM_PRED_BIT_SET || p == PARSUM_PRED_BIT_CLEAR) {
        uint64_t raw = 0; /* the representation, zero-extended */
        switch (parsum_dtype_size(d)) {
        case 1: { uint8_t r; memcpy(&r, x, 1); raw = r; break; }
        case 2: { uint16_t r; memcpy(&r, x, 2); raw = r; break; }
        case 4: { uint32_t r; memcpy(&r, x, 4); raw = r; break; }
        default: memcpy(&raw, x, 8); break;
        }
        bool set = (raw >> a->u32 & 1) != 0;
        return p == PARSUM_PRED_BIT_SET ? set : !set;
    }
    switch (d) {
    case PARSUM_I8: TYPED(int8_t, i8);
    case PARSUM_U8: TYPED(uint8_t, u8);
    case PARSUM_I16: TYPED(int16_t, i16);
    case PARSUM_U16: TYPED(uint16_t, u16);
    case PARSUM_I32: TYPED(int32_t, i32);
    case PARSUM_U32: TYPED(uint32_t, u32);
    case PARSUM_I64: TYPED(int64_t, i64);
    case PARSUM_U64: TYPED(uint64_t, u64);
    case PARSUM_F32: TYPED(float, f32);
    case PARSUM_F64: TYPED(double, f64);
    }
    return false;
}

bool parsum__ref_selected(const parsum_selector *sel, const void *keys,
                          size_t key_size, size_t i)
{
    const unsigned char *x = (const unsigned char *)keys + i * key_size;
    switch (sel->kind) {
    case PARSUM_SELECT_BYTES:
        return sel->bytes[i] != 0;
    case PARSUM_SELECT_BITS: {
        size_t b = sel->bit_offset + i;
        return (sel->bits[b / 32] >> (b % 32) & 1u) != 0;
    }
    case PARSUM_SELECT_PREDICATE:
        return parsum__ref_pred(sel->dtype, sel->pred, x, &sel->a, &sel->b);
    case PARSUM_SELECT_CUSTOM:
        return sel->custom->pred(x, sel->custom->user) != 0;
    }
    return false;
}

/* Element i of src (size bytes each) to position at of dst, if dst. */
static void put(void *dst, size_t at, const void *src, size_t i, size_t size)
{
    if (dst != NULL)
        memcpy((unsigned char *)dst + at * size,
               (const unsigned char *)src + i * size, size);
}

/* The elements for which `want` is sel's verdict, from position at on. */
static size_t append(const parsum_selector *sel, bool want,
                     const parsum__ref_buffers *b, size_t at)
{
    for (size_t i = 0; i < b->n; i++) {
        if (parsum__ref_selected(sel, b->keys, b->key_size, i) != want)
            continue;
        put(b->keys_out, at, b->keys, i, b->key_size);
        put(b->values_out, at, b->values, i, b->value_size);
        if (b->indices_out != NULL)
            b->indices_out[at] = i;
        at++;
    }
    return at;
}

size_t parsum__ref_select(const parsum_selector *sel,
                          const parsum__ref_buffers *b)
{
    return append(sel, true, b, 0);
}

size_t parsum__ref_partition(const parsum_selector *sel,
                             const parsum__ref_buffers *b)
{
    size_t k = append(sel, true, b, 0);
    (void)append(sel, false, b, k);
    return k;
}

size_t parsum__ref_partition_unstable(const parsum_selector *sel,
                                      const parsum__ref_buffers *b)
{
    size_t k = append(sel, true, b, 0);
    /* the rejected ones from the end down, in input order */
    size_t at = b->n;
    for (size_t i = 0; i < b->n; i++)
        if (!parsum__ref_selected(sel, b->keys, b->key_size, i)) {
            at--;
            put(b->keys_out, at, b->keys, i, b->key_size);
            put(b->values_out, at, b->values, i, b->value_size);
        }
    return k;
}

void parsum__ref_partition3(const parsum_selector *first,
                            const parsum_selector *second,
                            const parsum__ref_buffers *b, size_t counts[2])
{
    size_t at = 0;
    for (int group = 0; group < 3; group++) {
        size_t start = at;
        for (size_t i = 0; i < b->n; i++) {
            bool f = parsum__ref_selected(first, b->keys, b->key_size, i);
            bool s = !f && parsum__ref_selected(second, b->keys, b->key_size,
                                                i);
            if ((group == 0 && f) || (group == 1 && s) ||
                (group == 2 && !f && !s)) {
                put(b->keys_out, at, b->keys, i, b->key_size);
                put(b->values_out, at, b->values, i, b->value_size);
                at++;
            }
        }
        if (group < 2)
            counts[group] = at - start;
    }
}

size_t parsum__ref_runs(const parsum__ref_buffers *b, bool nontrivial,
                        uint64_t *lengths, uint64_t *offsets)
{
    const unsigned char *k = b->keys;
    size_t ks = b->key_size, r = 0;
    for (size_t h = 0; h < b->n;) {
        size_t e = h + 1;
        while (e < b->n && memcmp(k + e * ks, k + h * ks, ks) == 0)
            e++;
        if (!nontrivial || e - h >= 2) {
            put(b->keys_out, r, b->keys, h, ks);
            put(b->values_out, r, b->values, h, b->value_size);
            if (lengths != NULL)
                lengths[r] = e - h;
            if (offsets != NULL)
                offsets[r] = h;
            r++;
        }
        h = e;
    }
    return r;
}
