/*
 * image_io.h - what the files of the image reader and writer share (never
 * seen by users): a byte source that is a file or a memory block, so that
 * one parser serves parsum_image_read and the fuzz target; a byte sink with
 * sticky errors; the message helper; and the per-format entry points.
 *
 *   image_io.c   public functions, format detection, descriptor checks
 *   pnm.c        PGM / PPM (P5, P6) and PFM (Pf, PF), read and write
 *   png_write.c  PNG encoder (8 and 16 bit; deflate from stb_image_write)
 *   precheck.c   PNG, JPEG and HDR structure checks before stb decodes
 *   stb_read.c   stb_image compiled in: PNG, JPEG and Radiance HDR decoding
 *   stb_write.c  stb_image_write compiled in: JPEG and HDR encoding, and
 *                the deflate of the PNG encoder
 *
 * Readers get the source positioned after the two magic bytes that chose
 * them and fill a packed host image (pixels from parsum__host_alloc); on
 * failure they free what they allocated and leave *img untouched.
 */
#ifndef PARSUM_IMAGE_IO_H
#define PARSUM_IMAGE_IO_H

#include "core/api_check.h"
#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Largest image parsum reads (width * height), parsum.h. */
#define PARSUM__IMAGE_MAX_PIXELS ((size_t)1 << 28)

/* Who asks, for messages: "<fn>: <name>: <reason>". */
typedef struct parsum__io_job {
    parsum_context *ctx;
    const char *fn;   /* the public function */
    const char *name; /* the path, or "<memory>" */
} parsum__io_job;

/* Records "<fn>: '<name>': <reason>" on the job's context; returns st. */
parsum_status parsum__io_fail(const parsum__io_job *job, parsum_status st,
                              const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A byte source: an open file (file != NULL) or size bytes at mem. */
typedef struct parsum__io_src {
    FILE *file;
    const unsigned char *mem;
    size_t size;
    size_t pos;      /* bytes consumed so far (both kinds) */
    bool read_error; /* the file reported an error (not end of file) */
} parsum__io_src;

/* Reads up to n bytes into dst; returns how many were read (fewer only at
 * the end of the data or on a read error, which sets read_error). */
size_t parsum__io_read(parsum__io_src *src, void *dst, size_t n);
/* Stores in *left how many bytes remain (a memory source, or a file that
 * can seek) and returns true; false when that cannot be known. */
bool parsum__io_remaining(parsum__io_src *src, size_t *left);
/* The next byte, or -1 at the end of the data or on a read error. */
int parsum__io_getc(parsum__io_src *src);
/* The status for a source that ended before `what` was complete:
 * PARSUM_ERR_IO after a read error, else PARSUM_ERR_BAD_FILE (truncated),
 * with the message recorded. */
parsum_status parsum__io_short(const parsum__io_job *job,
                               const parsum__io_src *src, const char *what);

/* A file being written. Write errors are sticky: the first one is kept in
 * err (an errno value) and later writes are skipped. */
typedef struct parsum__io_sink {
    FILE *file;
    int err; /* 0 while everything went well */
} parsum__io_sink;

/* Writes n bytes (nothing after an earlier error). */
void parsum__io_write(parsum__io_sink *sink, const void *p, size_t n);

/* Validated description of an image to write: the public descriptor with
 * pitch resolved, and its packed row size. */
typedef struct parsum__io_image {
    const unsigned char *data;
    size_t width, height, pitch, row_bytes;
    int channels;
    parsum_dtype dtype;
} parsum__io_image;

/* PARSUM_ERR_BAD_FILE (message naming `what`) unless the image has 1 to
 * PARSUM__IMAGE_MAX_PIXELS pixels. */
parsum_status parsum__io_check_size(const parsum__io_job *job,
                                    const char *what, size_t width,
                                    size_t height);
/* Checks the size as parsum__io_check_size and allocates a packed host
 * image of that shape into *img (PARSUM_ERR_OUT_OF_MEMORY with the message
 * recorded when that fails). */
parsum_status parsum__io_alloc_image(const parsum__io_job *job,
                                     parsum_image *img, size_t width,
                                     size_t height, int channels,
                                     parsum_dtype dtype);

/* Netpbm family (pnm.c). `kind` is the second magic byte: '5' (PGM), '6'
 * (PPM), 'f' (grey PFM) or 'F' (colour PFM). */
parsum_status parsum__pnm_read(const parsum__io_job *job, parsum__io_src *src,
                               int kind, parsum_image *img);
/* Writes P5 (1 channel) or P6 (3 channels), maxval 255 for U8 and 65535
 * for U16 (big-endian samples); the caller has checked the format. */
parsum_status parsum__pnm_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink);
/* Writes a little-endian PFM (scale -1.0), rows bottom-up. */
parsum_status parsum__pfm_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink);

/* An image's shape as a file header declares it. */
typedef struct parsum__shape {
    size_t width, height;
    int channels;
    parsum_dtype dtype;
} parsum__shape;

/* Structure walks of whole files in memory before stb decodes them
 * (precheck.c): complete up to the end marker, at most 2^28 pixels, and
 * for PNG enough compressed data; *shape is what stb will return. The
 * JPEG data start with SOI (0xFF 0xD8). */
parsum_status parsum__png_check(const parsum__io_job *job,
                                const unsigned char *d, size_t size,
                                parsum__shape *shape);
parsum_status parsum__jpeg_check(const parsum__io_job *job,
                                 const unsigned char *d, size_t size,
                                 parsum__shape *shape);
parsum_status parsum__hdr_check(const parsum__io_job *job,
                                const unsigned char *d, size_t size,
                                parsum__shape *shape);

#ifdef PARSUM_HAVE_STB
/* The formats that stb decodes. */
typedef enum parsum__stb_format {
    PARSUM__STB_PNG,
    PARSUM__STB_JPEG,
    PARSUM__STB_HDR
} parsum__stb_format;

/* Decodes a whole file held in memory (stb_read.c). */
parsum_status parsum__stb_read(const parsum__io_job *job,
                               parsum__stb_format format,
                               const unsigned char *data, size_t size,
                               parsum_image *img);
/* JPEG (U8, quality 95) and Radiance HDR (F32, 3 channels) encoders
 * (stb_write.c); the caller has checked dtype and channels. */
parsum_status parsum__jpeg_write(const parsum__io_job *job,
                                 const parsum__io_image *im,
                                 parsum__io_sink *sink);
parsum_status parsum__hdr_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink);
/* zlib-wrapped deflate of n bytes (stb_image_write's compressor); returns
 * a malloc'd stream (free with free) and its length, or NULL when out of
 * memory or n exceeds INT_MAX. */
unsigned char *parsum__stb_deflate(const unsigned char *data, size_t n,
                                   size_t *out_len);
/* PNG encoder (png_write.c): U8 or U16, 1 to 4 channels. */
parsum_status parsum__png_write(const parsum__io_job *job,
                                const parsum__io_image *im,
                                parsum__io_sink *sink);
#endif

/* Entry point of the fuzz target and of the memory tests: decodes `size`
 * bytes at data as parsum_image_read decodes a file (messages name the
 * source "<memory>"). */
parsum_status parsum__image_read_mem(parsum_context *ctx, const void *data,
                                     size_t size, parsum_image *img);

#endif
