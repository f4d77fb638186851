/* api_select.c - argument checking for selection, partition, unique and
 * run-length encoding (parsum.h, "Selection, partition, unique and
 * run-length encoding"), then dispatch to the context's backend: one
 * select slot for the select and partition family, one runs slot for
 * unique and the run-length encodings (internal.h).
 *
 * Each public function checks its own data buffers and records them in a
 * list; the shared tail checks the selectors, the count output and that
 * no output shares a byte with any other buffer, then dispatches. The
 * rules shared with the other areas (regions, overlap, messages) come
 * from api_check.h. */
#include "api_check.h"

#include <stdio.h>
#include <string.h>

#define CHECK PARSUM__CHECK

/* ---- the buffers of a call ----------------------------------------------- */

#define MAX_REGIONS 10

typedef struct region {
    char what[40];
    const void *p;
    size_t bytes;
    bool out;
} region;

typedef struct regions {
    region r[MAX_REGIONS];
    int count;
} regions;

static void add_region(regions *rs, const char *what, const void *p,
                       size_t bytes, bool out)
{
    region *r = &rs->r[rs->count++];
    snprintf(r->what, sizeof r->what, "%s", what);
    r->p = p;
    r->bytes = bytes;
    r->out = out;
}

/* An element size: 1 .. PARSUM_CUSTOM_MAX_ELEM_SIZE (on either backend:
 * elements are only moved, word by word). */
static parsum_status check_size(parsum_context *ctx, const char *fn,
                                const char *what, size_t size)
{
    if (size == 0 || size > PARSUM_CUSTOM_MAX_ELEM_SIZE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s = %zu is outside 1..%d", fn, what, size,
                            PARSUM_CUSTOM_MAX_ELEM_SIZE);
    return PARSUM_OK;
}

/* A data buffer of count elements of size bytes (NULL allowed only for
 * count == 0), added to the list. */
static parsum_status data(parsum_context *ctx, const char *fn, regions *rs,
                          const char *what, const void *p, size_t count,
                          const char *count_name, size_t size, bool out)
{
    size_t bytes = 0;
    CHECK(parsum__check_region(ctx, fn, what, p, count, count_name, size,
                               &bytes));
    add_region(rs, what, p, bytes, out);
    return PARSUM_OK;
}

/* Every output apart from every other buffer. */
static parsum_status check_overlaps(parsum_context *ctx, const char *fn,
                                    const regions *rs)
{
    for (int i = 0; i < rs->count; i++)
        for (int k = 0; k < rs->count; k++) {
            const region *a = &rs->r[k], *b = &rs->r[i];
            if (!b->out || (a->out && k >= i))
                continue; /* b is the output; each pair of outputs once */
            CHECK(parsum__check_disjoint(ctx, fn, a->what, a->p, a->bytes,
                                         b->what, b->p, b->bytes, false));
        }
    return PARSUM_OK;
}

/* A count output: one or two size_t in host memory, or on a CUDA context
 * in device memory as well (not checked: either is allowed). */
static parsum_status count_out(parsum_context *ctx, const char *fn,
                               regions *rs, const char *what, size_t *p,
                               size_t values)
{
    if (p == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: %s is NULL",
                            fn, what);
    add_region(rs, what, p, values * sizeof(size_t), true);
    return PARSUM_OK;
}

/* ---- selectors ----------------------------------------------------------- */

/* Packed selection bits of n elements: the words read start at word
 * bit_offset / 32, so the backend gets bits advanced to it and a bit
 * offset below 32 (internal.h). */
static parsum_status check_bits(parsum_context *ctx, const char *fn,
                                const char *name, const parsum_selector *sel,
                                size_t n, parsum_selector *norm, regions *rs)
{
    char what[40];
    snprintf(what, sizeof what, "%s->bits", name);
    norm->bit_offset = sel->bit_offset % 32;
    if (n == 0)
        return PARSUM_OK; /* nothing is read: bits may be NULL */
    if (sel->bits == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s is NULL but n = %zu", fn, what, n);
    size_t skip = sel->bit_offset / 32, bit = norm->bit_offset;
    /* ceil((bit + n) / 32) without overflowing bit + n. */
    size_t words = (n - 1) / 32 + (bit + (n - 1) % 32) / 32 + 1;
    if (skip > ((uintptr_t)-1 - (uintptr_t)sel->bits) / sizeof(uint32_t))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s->bit_offset = %zu points past the end of "
                            "the address space",
                            fn, name, sel->bit_offset);
    norm->bits = sel->bits + skip;
    return data(ctx, fn, rs, what, norm->bits, words, "the bit word count",
                sizeof(uint32_t), false);
}

static parsum_status check_predicate(parsum_context *ctx, const char *fn,
                                     const char *name,
                                     const parsum_selector *sel,
                                     size_t key_size, const char *size_name)
{
    if (!parsum__dtype_valid(sel->dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: %s->dtype = %d is not a parsum_dtype", fn,
                            name, (int)sel->dtype);
    size_t ds = parsum_dtype_size(sel->dtype);
    if (ds != key_size)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->dtype = %s has %zu bytes, but %s = %zu",
                            fn, name, parsum_dtype_name(sel->dtype), ds,
                            size_name, key_size);
    if ((unsigned)sel->pred > (unsigned)PARSUM_PRED_BIT_CLEAR)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->pred = %d is not a parsum_pred", fn,
                            name, (int)sel->pred);
    if ((sel->pred == PARSUM_PRED_BIT_SET ||
         sel->pred == PARSUM_PRED_BIT_CLEAR) &&
        sel->a.u32 >= 8 * ds)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->a.u32 = %u is not a bit of %s (0..%zu)",
                            fn, name, (unsigned)sel->a.u32,
                            parsum_dtype_name(sel->dtype), 8 * ds - 1);
    return PARSUM_OK;
}

static parsum_status check_custom_pred(parsum_context *ctx, const char *fn,
                                       const char *name,
                                       const parsum_custom_pred *cp)
{
    if (cp == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s->custom is NULL", fn, name);
    if (ctx->kind == PARSUM_BACKEND_CPU && cp->pred == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s->custom->pred is NULL (the CPU backend "
                            "needs the C callback)",
                            fn, name);
    if (ctx->kind == PARSUM_BACKEND_CUDA &&
        (cp->cuda_pred == NULL || cp->cuda_type_name == NULL))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->custom->%s is NULL; a CUDA context "
                            "needs the predicate as CUDA source (cuda_type, "
                            "cuda_type_name, cuda_pred)",
                            fn, name,
                            cp->cuda_pred == NULL ? "cuda_pred"
                                                  : "cuda_type_name");
    return PARSUM_OK;
}

/* Selector `name` ("sel", "first", "second") of n elements whose keys
 * have key_size bytes (size_name: the argument that gives it). norm is
 * what the backend gets; the flag memory it reads joins the list. */
static parsum_status check_selector(parsum_context *ctx, const char *fn,
                                    const char *name,
                                    const parsum_selector *sel, size_t n,
                                    size_t key_size, const char *size_name,
                                    parsum_selector *norm, regions *rs)
{
    if (sel == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: %s is NULL",
                            fn, name);
    *norm = *sel;
    char what[40];
    switch (sel->kind) {
    case PARSUM_SELECT_BYTES:
        snprintf(what, sizeof what, "%s->bytes", name);
        return data(ctx, fn, rs, what, sel->bytes, n, "n", 1, false);
    case PARSUM_SELECT_BITS:
        return check_bits(ctx, fn, name, sel, n, norm, rs);
    case PARSUM_SELECT_PREDICATE:
        return check_predicate(ctx, fn, name, sel, key_size, size_name);
    case PARSUM_SELECT_CUSTOM:
        return check_custom_pred(ctx, fn, name, sel->custom);
    }
    return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                        "%s: %s->kind = %d is not a parsum_select_kind", fn,
                        name, (int)sel->kind);
}

static bool reads_keys(const parsum_selector *sel)
{
    return sel != NULL && (sel->kind == PARSUM_SELECT_PREDICATE ||
                           sel->kind == PARSUM_SELECT_CUSTOM);
}

/* ---- the select family --------------------------------------------------- */

/* What a select-family function has checked, for the shared tail. */
typedef struct sel_call {
    const char *fn;
    parsum__select_args a; /* sel, sel2: the caller's */
    const char *size_name; /* the argument giving a.key_size */
    const char *count_name;
    regions rs;
} sel_call;

static parsum_status finish_select(parsum_context *ctx, sel_call *c)
{
    parsum_selector n1, n2;
    const char *fn = c->fn;
    bool three = c->a.sel2 != NULL;
    CHECK(check_selector(ctx, fn, three ? "first" : "sel", c->a.sel, c->a.n,
                         c->a.key_size, c->size_name, &n1, &c->rs));
    if (three)
        CHECK(check_selector(ctx, fn, "second", c->a.sel2, c->a.n,
                             c->a.key_size, c->size_name, &n2, &c->rs));
    CHECK(count_out(ctx, fn, &c->rs, c->count_name, c->a.counts,
                    three ? 2 : 1));
    CHECK(check_overlaps(ctx, fn, &c->rs));
    c->a.sel = &n1;
    c->a.sel2 = three ? &n2 : NULL;
    c->a.fn = fn;
    if (ctx->be->select == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->select(ctx, &c->a);
}

static void sel_call_init(sel_call *c, const char *fn, size_t n,
                          const parsum_selector *sel, size_t *counts)
{
    memset(c, 0, sizeof *c);
    c->fn = fn;
    c->a.n = n;
    c->a.sel = sel;
    c->a.counts = counts;
    c->size_name = "elem_size";
    c->count_name = "num_selected";
}

/* in -> out, n elements of elem_size bytes: select, partition(3). */
static parsum_status plain_select(parsum_context *ctx, sel_call *c,
                                  const void *in, void *out,
                                  size_t elem_size)
{
    const char *fn = c->fn;
    CHECK(check_size(ctx, fn, "elem_size", elem_size));
    CHECK(data(ctx, fn, &c->rs, "in", in, c->a.n, "n", elem_size, false));
    CHECK(data(ctx, fn, &c->rs, "out", out, c->a.n, "n", elem_size, true));
    c->a.keys = in;
    c->a.key_size = elem_size;
    c->a.keys_out = out;
    return finish_select(ctx, c);
}

/* Keys with values: select_by_key, partition_by_key (keys_out may be
 * NULL), split_by_bit (values optional: value_size 0). */
static parsum_status keyed_select(parsum_context *ctx, sel_call *c,
                                  const void *keys_in, const void *values_in,
                                  void *keys_out, void *values_out,
                                  size_t key_size, size_t value_size)
{
    const char *fn = c->fn;
    size_t n = c->a.n;
    CHECK(check_size(ctx, fn, "key_size", key_size));
    if (value_size > 0)
        CHECK(check_size(ctx, fn, "value_size", value_size));
    CHECK(data(ctx, fn, &c->rs, "keys_in", keys_in, n, "n", key_size, false));
    if (value_size > 0) {
        CHECK(data(ctx, fn, &c->rs, "values_in", values_in, n, "n",
                   value_size, false));
        CHECK(data(ctx, fn, &c->rs, "values_out", values_out, n, "n",
                   value_size, true));
    }
    if (keys_out != NULL || value_size == 0)
        CHECK(data(ctx, fn, &c->rs, "keys_out", keys_out, n, "n", key_size,
                   true));
    c->a.keys = keys_in;
    c->a.key_size = key_size;
    c->a.keys_out = keys_out;
    c->a.values = value_size > 0 ? values_in : NULL;
    c->a.value_size = value_size;
    c->a.values_out = value_size > 0 ? values_out : NULL;
    c->size_name = "key_size";
    return finish_select(ctx, c);
}

parsum_status parsum_select(parsum_context *ctx, const void *in, void *out,
                            size_t n, size_t elem_size,
                            const parsum_selector *sel, size_t *num_selected)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    sel_call c;
    sel_call_init(&c, "parsum_select", n, sel, num_selected);
    return plain_select(ctx, &c, in, out, elem_size);
}

parsum_status parsum_select_by_key(parsum_context *ctx, const void *keys_in,
                                   const void *values_in, void *keys_out,
                                   void *values_out, size_t n,
                                   size_t key_size, size_t value_size,
                                   const parsum_selector *sel,
                                   size_t *num_selected)
{
    static const char fn[] = "parsum_select_by_key";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    sel_call c;
    sel_call_init(&c, fn, n, sel, num_selected);
    /* value_size 0 would mean "no values" to keyed_select. */
    CHECK(check_size(ctx, fn, "value_size", value_size));
    return keyed_select(ctx, &c, keys_in, values_in, keys_out, values_out,
                        key_size, value_size);
}

parsum_status parsum_select_indices(parsum_context *ctx, const void *in,
                                    size_t n, size_t elem_size,
                                    const parsum_selector *sel,
                                    uint64_t *indices, size_t *num_selected)
{
    static const char fn[] = "parsum_select_indices";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    sel_call c;
    sel_call_init(&c, fn, n, sel, num_selected);
    if (reads_keys(sel)) { /* else in and elem_size are not used */
        CHECK(check_size(ctx, fn, "elem_size", elem_size));
        CHECK(data(ctx, fn, &c.rs, "in", in, n, "n", elem_size, false));
        c.a.keys = in;
        c.a.key_size = elem_size;
    }
    CHECK(data(ctx, fn, &c.rs, "indices", indices, n, "n", sizeof(uint64_t),
               true));
    c.a.indices_out = indices;
    return finish_select(ctx, &c);
}

/* The two-way partitions, stable or with the rest reversed
 * (parsum_partition_unstable). */
static parsum_status partition_plain(parsum_context *ctx, const char *fn,
                                     bool reverse_rest, const void *in,
                                     void *out, size_t n, size_t elem_size,
                                     const parsum_selector *sel,
                                     size_t *num_selected)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    sel_call c;
    sel_call_init(&c, fn, n, sel, num_selected);
    c.a.partition = true;
    c.a.reverse_rest = reverse_rest;
    return plain_select(ctx, &c, in, out, elem_size);
}

static parsum_status partition_keyed(parsum_context *ctx, const char *fn,
                                     bool reverse_rest, const void *keys_in,
                                     const void *values_in, void *keys_out,
                                     void *values_out, size_t n,
                                     size_t key_size, size_t value_size,
                                     const parsum_selector *sel,
                                     size_t *num_selected)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    sel_call c;
    sel_call_init(&c, fn, n, sel, num_selected);
    c.a.partition = true;
    c.a.reverse_rest = reverse_rest;
    CHECK(check_size(ctx, fn, "value_size", value_size));
    return keyed_select(ctx, &c, keys_in, values_in, keys_out, values_out,
                        key_size, value_size);
}

parsum_status parsum_partition(parsum_context *ctx, const void *in,
                               void *out, size_t n, size_t elem_size,
                               const parsum_selector *sel,
                               size_t *num_selected)
{
    return partition_plain(ctx, "parsum_partition", false, in, out, n,
                           elem_size, sel, num_selected);
}

parsum_status parsum_partition_by_key(parsum_context *ctx,
                                      const void *keys_in,
                                      const void *values_in, void *keys_out,
                                      void *values_out, size_t n,
                                      size_t key_size, size_t value_size,
                                      const parsum_selector *sel,
                                      size_t *num_selected)
{
    return partition_keyed(ctx, "parsum_partition_by_key", false, keys_in,
                           values_in, keys_out, values_out, n, key_size,
                           value_size, sel, num_selected);
}

parsum_status parsum_partition_unstable(parsum_context *ctx, const void *in,
                                        void *out, size_t n, size_t elem_size,
                                        const parsum_selector *sel,
                                        size_t *num_selected)
{
    return partition_plain(ctx, "parsum_partition_unstable", true, in, out,
                           n, elem_size, sel, num_selected);
}

parsum_status parsum_partition_unstable_by_key(
    parsum_context *ctx, const void *keys_in, const void *values_in,
    void *keys_out, void *values_out, size_t n, size_t key_size,
    size_t value_size, const parsum_selector *sel, size_t *num_selected)
{
    return partition_keyed(ctx, "parsum_partition_unstable_by_key", true,
                           keys_in, values_in, keys_out, values_out, n,
                           key_size, value_size, sel, num_selected);
}

parsum_status parsum_partition3(parsum_context *ctx, const void *in,
                                void *out, size_t n, size_t elem_size,
                                const parsum_selector *first,
                                const parsum_selector *second,
                                size_t *counts)
{
    static const char fn[] = "parsum_partition3";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (second == NULL) /* finish_select tells partition3 by it */
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: second is NULL", fn);
    sel_call c;
    sel_call_init(&c, fn, n, first, counts);
    c.a.sel2 = second;
    c.a.partition = true;
    c.count_name = "counts";
    return plain_select(ctx, &c, in, out, elem_size);
}

parsum_status parsum_split_by_bit(parsum_context *ctx, const void *keys_in,
                                  const void *values_in, void *keys_out,
                                  void *values_out, size_t n,
                                  parsum_dtype key_dtype, size_t value_size,
                                  unsigned bit, size_t *num_zeros)
{
    static const char fn[] = "parsum_split_by_bit";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (!parsum__dtype_valid(key_dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: key_dtype = %d is not a parsum_dtype", fn,
                            (int)key_dtype);
    size_t ks = parsum_dtype_size(key_dtype);
    if (bit >= 8 * ks)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: bit = %u is not a bit of %s (0..%zu)", fn,
                            bit, parsum_dtype_name(key_dtype), 8 * ks - 1);
    /* The zeros are the selected group of a partition. */
    parsum_selector zero;
    memset(&zero, 0, sizeof zero);
    zero.kind = PARSUM_SELECT_PREDICATE;
    zero.dtype = key_dtype;
    zero.pred = PARSUM_PRED_BIT_CLEAR;
    zero.a.u32 = bit;
    sel_call c;
    sel_call_init(&c, fn, n, &zero, num_zeros);
    c.a.partition = true;
    c.count_name = "num_zeros";
    return keyed_select(ctx, &c, keys_in, values_in, keys_out, values_out,
                        ks, value_size);
}

/* ---- unique and run-length encoding -------------------------------------- */

/* in: n elements of elem_size bytes, checked and listed. */
static parsum_status runs_input(parsum_context *ctx, const char *fn,
                                regions *rs, parsum__runs_args *a,
                                const char *what, const void *in, size_t n,
                                const char *size_name, size_t elem_size)
{
    CHECK(check_size(ctx, fn, size_name, elem_size));
    CHECK(data(ctx, fn, rs, what, in, n, "n", elem_size, false));
    a->keys = in;
    a->key_size = elem_size;
    a->n = n;
    return PARSUM_OK;
}

static parsum_status finish_runs(parsum_context *ctx, const char *fn,
                                 regions *rs, parsum__runs_args *a,
                                 const char *count_name, size_t *count)
{
    CHECK(count_out(ctx, fn, rs, count_name, count, 1));
    CHECK(check_overlaps(ctx, fn, rs));
    a->num_runs = count;
    a->fn = fn;
    if (ctx->be->runs == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->runs(ctx, a);
}

parsum_status parsum_unique(parsum_context *ctx, const void *in, void *out,
                            size_t n, size_t elem_size, size_t *num_unique)
{
    static const char fn[] = "parsum_unique";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    regions rs = {.count = 0};
    parsum__runs_args a;
    memset(&a, 0, sizeof a);
    CHECK(runs_input(ctx, fn, &rs, &a, "in", in, n, "elem_size", elem_size));
    CHECK(data(ctx, fn, &rs, "out", out, n, "n", elem_size, true));
    a.keys_out = out;
    return finish_runs(ctx, fn, &rs, &a, "num_unique", num_unique);
}

parsum_status parsum_unique_by_key(parsum_context *ctx, const void *keys_in,
                                   const void *values_in, void *keys_out,
                                   void *values_out, size_t n,
                                   size_t key_size, size_t value_size,
                                   size_t *num_unique)
{
    static const char fn[] = "parsum_unique_by_key";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    regions rs = {.count = 0};
    parsum__runs_args a;
    memset(&a, 0, sizeof a);
    CHECK(runs_input(ctx, fn, &rs, &a, "keys_in", keys_in, n, "key_size",
                     key_size));
    CHECK(check_size(ctx, fn, "value_size", value_size));
    CHECK(data(ctx, fn, &rs, "values_in", values_in, n, "n", value_size,
               false));
    CHECK(data(ctx, fn, &rs, "values_out", values_out, n, "n", value_size,
               true));
    if (keys_out != NULL)
        CHECK(data(ctx, fn, &rs, "keys_out", keys_out, n, "n", key_size,
                   true));
    a.values = values_in;
    a.value_size = value_size;
    a.keys_out = keys_out;
    a.values_out = values_out;
    return finish_runs(ctx, fn, &rs, &a, "num_unique", num_unique);
}

parsum_status parsum_run_length_encode(parsum_context *ctx, const void *in,
                                       size_t n, size_t elem_size,
                                       void *unique_out, uint64_t *lengths,
                                       size_t *num_runs)
{
    static const char fn[] = "parsum_run_length_encode";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    regions rs = {.count = 0};
    parsum__runs_args a;
    memset(&a, 0, sizeof a);
    CHECK(runs_input(ctx, fn, &rs, &a, "in", in, n, "elem_size", elem_size));
    if (unique_out != NULL)
        CHECK(data(ctx, fn, &rs, "unique_out", unique_out, n, "n", elem_size,
                   true));
    CHECK(data(ctx, fn, &rs, "lengths", lengths, n, "n", sizeof(uint64_t),
               true));
    a.keys_out = unique_out;
    a.lengths = lengths;
    return finish_runs(ctx, fn, &rs, &a, "num_runs", num_runs);
}

parsum_status parsum_run_length_nontrivial(parsum_context *ctx,
                                           const void *in, size_t n,
                                           size_t elem_size,
                                           uint64_t *offsets,
                                           uint64_t *lengths,
                                           size_t *num_runs)
{
    static const char fn[] = "parsum_run_length_nontrivial";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    regions rs = {.count = 0};
    parsum__runs_args a;
    memset(&a, 0, sizeof a);
    CHECK(runs_input(ctx, fn, &rs, &a, "in", in, n, "elem_size", elem_size));
    /* At most n / 2 runs of two or more elements. */
    CHECK(data(ctx, fn, &rs, "offsets", offsets, n / 2, "n / 2",
               sizeof(uint64_t), true));
    CHECK(data(ctx, fn, &rs, "lengths", lengths, n / 2, "n / 2",
               sizeof(uint64_t), true));
    a.offsets = offsets;
    a.lengths = lengths;
    a.nontrivial = true;
    return finish_runs(ctx, fn, &rs, &a, "num_runs", num_runs);
}
