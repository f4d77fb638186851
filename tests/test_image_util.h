/*
 * test_image_util.h - images for the image tests: host images with any
 * pitch filled with random samples, their copies in the context's memory
 * (any pitch there too, poisoned padding), and the way back.
 */
#ifndef PARSUM_TEST_IMAGE_UTIL_H
#define PARSUM_TEST_IMAGE_UTIL_H

#include "test_util.h"

/* A host image of w x h pixels, `pad` bytes of padding after each row
 * (pitch = row bytes + pad; pad a multiple of the sample size), poisoned. */
parsum_image ti_host(size_t w, size_t h, int ch, parsum_dtype d, size_t pad);
void ti_host_free(parsum_image *im);
/* Random samples: integers uniform in [lo, hi] (as integers), floats
 * uniform in [lo, hi). */
void ti_fill(tu_rng *r, const parsum_image *im, double lo, double hi);
/* A context image shaped like `like` (pixels not copied) with its own
 * padding pad, fully poisoned. */
parsum_image ti_ctx_like(const parsum_image *like, size_t pad);
/* A context copy of host image h, padding pad (poisoned). */
parsum_image ti_to_ctx(const parsum_image *h, size_t pad);
/* Copies the pixels of context image d into host image h (same shape). */
void ti_from_ctx(const parsum_image *h, const parsum_image *d);
void ti_ctx_free(parsum_image *im);
/* Pointer to sample c of pixel (x, y). */
void *ti_at(const parsum_image *im, size_t x, size_t y, int c);
/* Compares the samples (not the padding) of two host images of one shape:
 * exact (bits; NaN equals NaN) when bound is NULL, else |got - want| <=
 * bound(x, y, c) computed by the callback. Reports up to TU_MAX_REPORTS
 * mismatches with `what`, returns the mismatch count. */
typedef double (*ti_bound_fn)(const void *user, size_t x, size_t y, int c);
size_t ti_compare(const parsum_image *want, const parsum_image *got,
                  ti_bound_fn bound, const void *user, const char *what);
/* True when the padding bytes of host image h still hold TU_POISON. */
bool ti_padding_intact(const parsum_image *h);

/* Row padding that makes a row of b bytes a multiple of a bytes, plus
 * extra: for pitches with a given alignment (or, with extra, without). */
size_t ti_pad_to(size_t b, size_t a, size_t extra);

/* The sample range the image tests draw from: the full range of U8, U16
 * and I32, [-1, 1) for floats. */
void ti_range(parsum_dtype d, double *lo, double *hi);

/* Asserts that call returns the status want, printing the context's last
 * error otherwise. */
#define TI_EXPECT(want, call)                                                 \
    do {                                                                     \
        parsum_status st_ = (call);                                          \
        if (st_ != (want)) {                                                 \
            print_error("%s:%d: %s returned %s, want %s (%s)\n", __FILE__,   \
                        __LINE__, #call, parsum_status_name(st_),            \
                        parsum_status_name(want), parsum_last_error(tu_ctx)); \
            fail();                                                          \
        }                                                                    \
    } while (0)

#endif

/* Runs Python code with Debian's /usr/bin/python3 and OpenCV (cv2), the
 * oracle of the image tests. The code sees sys.argv[1:] = args. Returns 0
 * on success, 77 when python3 or cv2 is missing (the test then skips),
 * else the script's failure status. */
int ti_python_cv2(const char *code, const char *const *args, int nargs);
/* A temporary file name (mkstemp under TMPDIR or /tmp), created empty. */
void ti_tmpname(char *buf, size_t len, const char *stem);
