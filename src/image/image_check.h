/*
 * image_check.h - the check of one parsum_image argument, shared by the
 * public functions that take images (src/image/api_image.c, the tone
 * mapping of src/hist/tonemap.c), so that every rule and its message exist
 * once. Defined in api_image.c.
 */
#ifndef PARSUM_IMAGE_CHECK_H
#define PARSUM_IMAGE_CHECK_H

#include "../core/internal.h"

#include <stdbool.h>
#include <stddef.h>

/* Checks every field of *im (named `what` in messages of function fn):
 * not NULL, known dtype, 1-4 channels, width and height >= 1, known memory
 * space, pitch 0 or at least the row's bytes and a multiple of the sample
 * size, sizes that do not overflow, data not NULL and aligned to its
 * samples. need_ctx_space: the pixels must be in the context's space (a
 * CUDA context's compute functions), else HOST is accepted too; pixels in
 * the context's space must also pass the backend's pointer check. On
 * success *out = *im with the pitch resolved (never 0) and *extent = the
 * bytes from data to the end of the last row. */
parsum_status parsum__check_image(parsum_context *ctx, const char *fn,
                                  const char *what, const parsum_image *im,
                                  bool need_ctx_space, parsum_image *out,
                                  size_t *extent);

#endif
