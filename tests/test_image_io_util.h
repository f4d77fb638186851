/*
 * test_image_io_util.h - what the two image file tests (test_image_io.c,
 * test_image_io_errors.c) share: a private temporary directory, whole-file
 * reads and writes, and test images.
 */
#ifndef PARSUM_TEST_IMAGE_IO_UTIL_H
#define PARSUM_TEST_IMAGE_IO_UTIL_H

#include "test_image_util.h"

/* tu_init on a CPU context (file I/O is host-only: the backend does not
 * matter, so one run covers it), and a fresh directory under TMPDIR or
 * /tmp for the program's files. */
void tio_init(const char *program);
/* Removes the directory (which fails, and says so, if a test left a file
 * behind) and ends as tu_finish. */
int tio_finish(int rc);

#define TIO_PATH_LEN 512
/* "<directory>/name" in buf (TIO_PATH_LEN bytes); returns buf. */
const char *tio_path(const char *name, char *buf);
/* Writes n bytes as the whole file (fails the test on error). */
void tio_put(const char *path, const void *data, size_t n);
/* The whole file, malloc'd (one spare byte); its length in *n. */
unsigned char *tio_get(const char *path, size_t *n);
/* Writes n bytes to <directory>/name, reads that with parsum_image_read
 * into *img, removes the file and returns the status. */
parsum_status tio_read_bytes(const char *name, const void *data, size_t n,
                             parsum_image *img);

/* A host image (ti_host: `pad` bytes of poisoned padding per row) with
 * random samples over the dtype's whole range (floats in [-1000, 1000)),
 * or, smooth, slow ramps (what JPEG is made for, and what makes the PNG
 * filters differ). */
parsum_image tio_image(size_t w, size_t h, int ch, parsum_dtype d, size_t pad,
                       bool smooth, uint64_t seed);
/* Asserts the shape of an image parsum_image_read returned: packed, host. */
void tio_check_shape(const parsum_image *got, size_t w, size_t h, int ch,
                     parsum_dtype d);

#endif
