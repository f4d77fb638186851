/*
 * stb_read.c - PNG, JPEG and Radiance HDR decoding through stb_image
 * (github.com/nothings/stb; Debian's libstb-dev).
 *
 * The header-only implementation is compiled into this file rather than
 * linked from libstb: its functions become static (nothing clashes with a
 * user's own copy of stb, and users of libparsum.a need no extra library),
 * only the PNG, JPEG and HDR decoders are built (so a GIF or BMP file can
 * never reach stb), and sanitizer and fuzzer builds instrument the decoder
 * too, which is the code most exposed to hostile files.
 *
 * Before stb decodes a file, precheck.c walks its structure (complete
 * files, the 2^28-pixel cap, enough compressed data), and stb is asked for
 * exactly the channel count the walk found, so that the layout of what it
 * returns never depends on stb's own conventions.
 */
#include "io/image_io.h"

#include <string.h>

/* stb_image 2.27 declares functions it never defines (with STB_IMAGE_STATIC:
 * static prototypes without bodies), which GCC reports at the end of the
 * file, outside any push/pop: so this file goes without the warning. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_HDR
#define STBI_NO_STDIO
/* Our own pixel cap (checked first) is the binding limit, not stb's. */
#define STBI_MAX_DIMENSIONS (1 << 28)
/* After an invalid Huffman code in corrupt JPEG data, stb 2.27's bit
 * reader lets its bit count go negative and shifts by more than 31 bits:
 * undefined behaviour that only puts garbage bits in its bit buffer (the
 * data are garbage anyway; no memory is touched). Sanitized builds skip
 * that check in stb's code: through this pragma with clang (the fuzz
 * target), through -fno-sanitize=shift on this file with GCC (which does
 * not take shift-exponent alone; src/CMakeLists.txt). Found by fuzzing. */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("shift-exponent"))), \
                             apply_to = function)
#endif
#include <stb_image.h>
#if defined(__clang__)
#pragma clang attribute pop
#endif

parsum_status parsum__stb_read(const parsum__io_job *job,
                               parsum__stb_format format,
                               const unsigned char *data, size_t size,
                               parsum_image *img)
{
    int len = (int)size; /* the caller keeps size <= INT_MAX */
    parsum__shape shape;
    if (format == PARSUM__STB_PNG)
        PARSUM__CHECK(parsum__png_check(job, data, size, &shape));
    else if (format == PARSUM__STB_JPEG)
        PARSUM__CHECK(parsum__jpeg_check(job, data, size, &shape));
    else
        PARSUM__CHECK(parsum__hdr_check(job, data, size, &shape));
    int channels = shape.channels;
    parsum_dtype dtype = shape.dtype;
    int w = 0, h = 0, comp = 0;
    void *pixels;
    if (dtype == PARSUM_F32)
        pixels = stbi_loadf_from_memory(data, len, &w, &h, &comp, channels);
    else if (dtype == PARSUM_U16)
        pixels = stbi_load_16_from_memory(data, len, &w, &h, &comp,
                                          channels);
    else
        pixels = stbi_load_from_memory(data, len, &w, &h, &comp, channels);
    if (pixels == NULL) {
        const char *why = stbi_failure_reason();
        bool oom = why != NULL && strcmp(why, "outofmem") == 0;
        return parsum__io_fail(job,
                               oom ? PARSUM_ERR_OUT_OF_MEMORY
                                   : PARSUM_ERR_BAD_FILE,
                               "decoding failed: %s",
                               why != NULL ? why : "(no reason given)");
    }
    parsum_image out;
    parsum_status st = PARSUM_OK;
    if ((size_t)w != shape.width || (size_t)h != shape.height)
        st = parsum__io_fail(job, PARSUM_ERR_INTERNAL,
                             "stb decoded %d x %d pixels, the header says "
                             "%zu x %zu",
                             w, h, shape.width, shape.height);
    if (st == PARSUM_OK)
        st = parsum__io_alloc_image(job, &out, (size_t)w, (size_t)h, channels,
                                    dtype);
    if (st == PARSUM_OK) {
        memcpy(out.data, pixels, out.pitch * out.height);
        *img = out;
    }
    stbi_image_free(pixels);
    return st;
}
