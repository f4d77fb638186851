/*
 * api_image.c - the public image functions (parsum.h, "Images"): checks of
 * every descriptor field, then dispatch to the backend's image slots.
 *
 * Summed-area tables and the box filter have dedicated backend kernels
 * rather than a composition of row scans and transposes (the notes' method,
 * seed 003): the composition moves each pixel through memory four times,
 * and the table must be built at the speed of one read and one write.
 */
#include "../core/api_check.h"
#include "../core/internal.h"
#include "image_check.h"

#include <string.h>

#define BOX_MAX_RADIUS ((size_t)1 << 14)

static size_t row_bytes(const parsum_image *im)
{
    return im->width * (size_t)im->channels * parsum_dtype_size(im->dtype);
}

/* Checks the fields of *im (`what` in messages) other than data; stores
 * the resolved pitch in *pitch and the bytes from data to the end of the
 * last row in *extent. */
static parsum_status check_desc(parsum_context *ctx, const char *fn,
                                const char *what, const parsum_image *im,
                                size_t *pitch, size_t *extent)
{
    if (im == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: %s is NULL",
                            fn, what);
    if (!parsum__dtype_valid(im->dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: %s->dtype = %d is not a parsum_dtype", fn,
                            what, (int)im->dtype);
    if (im->channels < 1 || im->channels > 4)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->channels = %d; 1 to 4 are supported", fn,
                            what, im->channels);
    if (im->width == 0 || im->height == 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s is %zu x %zu; width and height must be "
                            "at least 1",
                            fn, what, im->width, im->height);
    if (im->where != PARSUM_MEM_HOST && im->where != PARSUM_MEM_DEVICE)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->where = %d is not a parsum_memspace", fn,
                            what, (int)im->where);
    size_t ss = parsum_dtype_size(im->dtype), rb;
    if (!parsum__mul_size(im->width, (size_t)im->channels * ss, &rb))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s's row of %zu pixels overflows size_t", fn,
                            what, im->width);
    *pitch = im->pitch == 0 ? rb : im->pitch;
    if (*pitch < rb || *pitch % ss != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->pitch = %zu; it must be 0 or at least "
                            "the row's %zu bytes, and a multiple of the %zu-"
                            "byte sample",
                            fn, what, im->pitch, rb, ss);
    if (!parsum__mul_size(*pitch, im->height - 1, extent) ||
        *extent > (size_t)-1 - rb)
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %s: pitch %zu x height %zu overflows size_t",
                            fn, what, *pitch, im->height);
    *extent += rb;
    return PARSUM_OK;
}

/* See image_check.h. */
parsum_status parsum__check_image(parsum_context *ctx, const char *fn,
                                  const char *what, const parsum_image *im,
                                  bool need_ctx_space, parsum_image *out,
                                  size_t *extent)
{
    size_t pitch = 0, ss;
    PARSUM__CHECK(check_desc(ctx, fn, what, im, &pitch, extent));
    ss = parsum_dtype_size(im->dtype);
    if (im->data == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: %s->data is NULL", fn, what);
    if ((uintptr_t)im->data % ss != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: %s->data is not aligned to its %zu-byte "
                            "samples",
                            fn, what, ss);
    parsum_memspace ctx_space = ctx->kind == PARSUM_BACKEND_CUDA
                                    ? PARSUM_MEM_DEVICE
                                    : PARSUM_MEM_HOST;
    if (im->where != ctx_space && (need_ctx_space || im->where != PARSUM_MEM_HOST))
        return parsum__fail(ctx, PARSUM_ERR_WRONG_MEMORY_SPACE,
                            "%s: %s->where is %s but the context's backend "
                            "is %s",
                            fn, what,
                            im->where == PARSUM_MEM_HOST ? "HOST" : "DEVICE",
                            parsum_backend_name(ctx->kind));
    size_t bytes;
    if (im->where == ctx_space)
        PARSUM__CHECK(parsum__check_region(ctx, fn, what, im->data, *extent,
                                           "its extent", 1, &bytes));
    *out = *im;
    out->pitch = pitch;
    return PARSUM_OK;
}

static parsum_status check_disjoint_images(parsum_context *ctx,
                                           const char *fn, const char *a_what,
                                           const parsum_image *a,
                                           size_t a_ext, const char *b_what,
                                           const parsum_image *b, size_t b_ext)
{
    return parsum__check_disjoint(ctx, fn, a_what, a->data, a_ext, b_what,
                                  b->data, b_ext, false);
}

parsum_status parsum_image_alloc(parsum_context *ctx, parsum_image *img,
                                 size_t width, size_t height, int channels,
                                 parsum_dtype dtype)
{
    static const char fn[] = "parsum_image_alloc";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    if (img == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER, "%s: img is NULL",
                            fn);
    memset(img, 0, sizeof *img);
    parsum_image ok = {NULL, width, height, 0, channels, dtype,
                       ctx->kind == PARSUM_BACKEND_CUDA ? PARSUM_MEM_DEVICE
                                                        : PARSUM_MEM_HOST};
    size_t pitch = 0, extent = 0, bytes;
    PARSUM__CHECK(check_desc(ctx, fn, "img", &ok, &pitch, &extent));
    size_t packed = pitch;
    if (ctx->kind == PARSUM_BACKEND_CUDA)
        pitch = (pitch + 255) / 256 * 256; /* coalesced rows */
    if (pitch < packed || !parsum__mul_size(pitch, height, &bytes))
        return parsum__fail(ctx, PARSUM_ERR_OVERFLOW,
                            "%s: %zu x %zu image overflows size_t", fn, width,
                            height);
    void *p = NULL;
    PARSUM__CHECK(parsum_alloc(ctx, &p, bytes));
    ok.data = p;
    ok.pitch = pitch;
    *img = ok;
    return PARSUM_OK;
}

void parsum_image_free(parsum_context *ctx, parsum_image *img)
{
    if (img == NULL)
        return;
    if (img->data != NULL) {
        if (img->where == PARSUM_MEM_HOST)
            parsum__host_free(img->data);
        else if (ctx != NULL)
            parsum_free(ctx, img->data);
    }
    memset(img, 0, sizeof *img);
}

parsum_status parsum_image_copy(parsum_context *ctx, const parsum_image *dst,
                                const parsum_image *src)
{
    static const char fn[] = "parsum_image_copy";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum_image d = {0}, s = {0};
    size_t de = 0, se = 0;
    PARSUM__CHECK(parsum__check_image(ctx, fn, "src", src, false, &s, &se));
    PARSUM__CHECK(parsum__check_image(ctx, fn, "dst", dst, false, &d, &de));
    if (d.width != s.width || d.height != s.height ||
        d.channels != s.channels || d.dtype != s.dtype)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: dst (%zu x %zu, %d channels, %s) and src "
                            "(%zu x %zu, %d channels, %s) differ",
                            fn, d.width, d.height, d.channels,
                            parsum_dtype_name(d.dtype), s.width, s.height,
                            s.channels, parsum_dtype_name(s.dtype));
    if (d.data == s.data && d.pitch == s.pitch && d.where == s.where)
        return PARSUM_OK;
    if (d.where == s.where)
        PARSUM__CHECK(check_disjoint_images(ctx, fn, "src", &s, se, "dst", &d,
                                            de));
    parsum_copy_kind kind =
        s.where == PARSUM_MEM_HOST
            ? (d.where == PARSUM_MEM_HOST ? PARSUM_COPY_HOST_TO_HOST
                                          : PARSUM_COPY_HOST_TO_CONTEXT)
            : (d.where == PARSUM_MEM_HOST ? PARSUM_COPY_CONTEXT_TO_HOST
                                          : PARSUM_COPY_CONTEXT_TO_CONTEXT);
    return ctx->be->mem_copy2d(ctx, d.data, d.pitch, s.data, s.pitch,
                               row_bytes(&s), s.height, kind);
}

static bool is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

static bool table_dtype_ok(parsum_dtype d)
{
    return d == PARSUM_U32 || d == PARSUM_U64 || d == PARSUM_I64 ||
           is_float(d);
}

static bool pixel_dtype_ok(parsum_dtype d)
{
    return d == PARSUM_U8 || d == PARSUM_U16 || d == PARSUM_I32 ||
           is_float(d);
}

#define INTEGRAL_FLAGS                                                      \
    (PARSUM_INTEGRAL_INCLUSIVE | PARSUM_INTEGRAL_SQUARED |                  \
     PARSUM_INTEGRAL_OFFSET_MEAN)

static parsum_status check_table(parsum_context *ctx, const char *fn,
                                 const parsum_image *t, unsigned flags,
                                 const double *offset, bool offset_given)
{
    if (!table_dtype_ok(t->dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: table->dtype is %s; tables are u32, u64, "
                            "i64, f32 or f64",
                            fn, parsum_dtype_name(t->dtype));
    if (offset_given && offset != NULL && !is_float(t->dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: an offset needs a float table (f32 or f64), "
                            "not %s",
                            fn, parsum_dtype_name(t->dtype));
    if (!(flags & PARSUM_INTEGRAL_INCLUSIVE) &&
        (t->width < 2 || t->height < 2))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: table is %zu x %zu; the default layout has "
                            "a zero first row and column, so at least 2 x 2",
                            fn, t->width, t->height);
    return PARSUM_OK;
}

parsum_status parsum_integral(parsum_context *ctx, const parsum_image *src,
                              const parsum_image *table, unsigned flags,
                              double *offset)
{
    static const char fn[] = "parsum_integral";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__integral_args a = {.fn = fn};
    size_t se = 0, te = 0;
    PARSUM__CHECK(parsum__check_image(ctx, fn, "src", src, true, &a.src, &se));
    PARSUM__CHECK(parsum__check_image(ctx, fn, "table", table, true, &a.table, &te));
    if (flags & ~INTEGRAL_FLAGS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: unknown flags 0x%x", fn,
                            flags & ~INTEGRAL_FLAGS);
    if (!pixel_dtype_ok(a.src.dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: src->dtype is %s; images are u8, u16, i32, "
                            "f32 or f64",
                            fn, parsum_dtype_name(a.src.dtype));
    PARSUM__CHECK(check_table(ctx, fn, &a.table, flags, offset, true));
    if (is_float(a.src.dtype) && !is_float(a.table.dtype))
        return parsum__fail(ctx, PARSUM_ERR_DTYPE_OP_MISMATCH,
                            "%s: a %s image needs a float table (f32 or f64), "
                            "not %s",
                            fn, parsum_dtype_name(a.src.dtype),
                            parsum_dtype_name(a.table.dtype));
    if ((flags & PARSUM_INTEGRAL_OFFSET_MEAN) && offset == NULL)
        return parsum__fail(ctx, PARSUM_ERR_NULL_POINTER,
                            "%s: PARSUM_INTEGRAL_OFFSET_MEAN needs offset "
                            "(src->channels doubles) to store the means",
                            fn);
    a.inclusive = (flags & PARSUM_INTEGRAL_INCLUSIVE) != 0;
    a.squared = (flags & PARSUM_INTEGRAL_SQUARED) != 0;
    a.offset = offset;
    a.offset_mean = (flags & PARSUM_INTEGRAL_OFFSET_MEAN) != 0;
    size_t pad = a.inclusive ? 0 : 1;
    if (a.table.channels != a.src.channels ||
        a.table.width != a.src.width + pad ||
        a.table.height != a.src.height + pad)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: table is %zu x %zu with %d channels; a %zu x "
                            "%zu image with %d channels needs %zu x %zu (%s "
                            "layout)",
                            fn, a.table.width, a.table.height,
                            a.table.channels, a.src.width, a.src.height,
                            a.src.channels, a.src.width + pad,
                            a.src.height + pad,
                            a.inclusive ? "inclusive" : "default");
    PARSUM__CHECK(check_disjoint_images(ctx, fn, "src", &a.src, se, "table",
                                        &a.table, te));
    if (ctx->be->integral == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->integral(ctx, &a);
}

static parsum_status box_sums(parsum_context *ctx, const char *fn,
                              const parsum_image *table, unsigned flags,
                              const double *offset, const parsum_rect *rects,
                              size_t nrect, void *out, bool means)
{
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__box_sums_args a = {.fn = fn};
    size_t te = 0, bytes;
    PARSUM__CHECK(parsum__check_image(ctx, fn, "table", table, true, &a.table, &te));
    if (flags & ~INTEGRAL_FLAGS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: unknown flags 0x%x", fn,
                            flags & ~INTEGRAL_FLAGS);
    PARSUM__CHECK(check_table(ctx, fn, &a.table, flags, offset, true));
    PARSUM__CHECK(parsum__check_region(ctx, fn, "rects", rects, nrect,
                                       "nrect", sizeof *rects, &bytes));
    size_t osize = means || is_float(a.table.dtype)
                       ? sizeof(double)
                       : parsum_dtype_size(a.table.dtype);
    size_t per_rect = (size_t)a.table.channels * osize, obytes;
    PARSUM__CHECK(parsum__check_region(ctx, fn, "out", out, nrect, "nrect",
                                       per_rect, &obytes));
    PARSUM__CHECK(parsum__check_disjoint(ctx, fn, "rects", rects, bytes,
                                         "out", out, obytes, false));
    a.inclusive = (flags & PARSUM_INTEGRAL_INCLUSIVE) != 0;
    a.squared = (flags & PARSUM_INTEGRAL_SQUARED) != 0;
    a.means = means;
    a.offset = offset;
    a.rects = rects;
    a.nrect = nrect;
    a.out = out;
    if (nrect == 0)
        return PARSUM_OK;
    if (ctx->be->box_sums == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->box_sums(ctx, &a);
}

parsum_status parsum_integral_box_sums(parsum_context *ctx,
                                       const parsum_image *table,
                                       unsigned flags, const double *offset,
                                       const parsum_rect *rects, size_t nrect,
                                       void *out)
{
    return box_sums(ctx, "parsum_integral_box_sums", table, flags, offset,
                    rects, nrect, out, false);
}

parsum_status parsum_integral_box_means(parsum_context *ctx,
                                        const parsum_image *table,
                                        unsigned flags, const double *offset,
                                        const parsum_rect *rects,
                                        size_t nrect, double *out)
{
    return box_sums(ctx, "parsum_integral_box_means", table, flags, offset,
                    rects, nrect, out, true);
}

parsum_status parsum_box_filter(parsum_context *ctx, const parsum_image *src,
                                const parsum_image *dst, size_t rx, size_t ry,
                                parsum_border border)
{
    static const char fn[] = "parsum_box_filter";
    if (ctx == NULL)
        return PARSUM_ERR_NULL_POINTER;
    parsum__box_filter_args a = {.fn = fn};
    size_t se = 0, de = 0;
    PARSUM__CHECK(parsum__check_image(ctx, fn, "src", src, true, &a.src, &se));
    PARSUM__CHECK(parsum__check_image(ctx, fn, "dst", dst, true, &a.dst, &de));
    if (!pixel_dtype_ok(a.src.dtype))
        return parsum__fail(ctx, PARSUM_ERR_INVALID_DTYPE,
                            "%s: src->dtype is %s; images are u8, u16, i32, "
                            "f32 or f64",
                            fn, parsum_dtype_name(a.src.dtype));
    if (a.dst.width != a.src.width || a.dst.height != a.src.height ||
        a.dst.channels != a.src.channels || a.dst.dtype != a.src.dtype)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: dst must have src's width, height, channels "
                            "and dtype",
                            fn);
    if ((unsigned)border > PARSUM_BORDER_WRAP)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: border = %d is not a parsum_border", fn,
                            (int)border);
    if (rx > BOX_MAX_RADIUS || ry > BOX_MAX_RADIUS)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: radius %zu x %zu; at most 16384", fn, rx, ry);
    PARSUM__CHECK(check_disjoint_images(ctx, fn, "src", &a.src, se, "dst",
                                        &a.dst, de));
    a.rx = rx;
    a.ry = ry;
    a.border = border;
    if (ctx->be->box_filter == NULL)
        return parsum__unsupported(ctx, fn);
    return ctx->be->box_filter(ctx, &a);
}
