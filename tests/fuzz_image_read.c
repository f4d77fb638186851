/*
 * fuzz_image_read.c - the image reader under a fuzzer: a libFuzzer target
 * (LLVMFuzzerTestOneInput decodes the input through
 * parsum__image_read_mem, the parser parsum_image_read runs on files) and
 * a replay driver that runs without libFuzzer over saved inputs, so that
 * every build (sanitized ones too) re-checks the corpus through CTest.
 *
 * Each input must give PARSUM_OK with a sane image whose every byte can be
 * read, or PARSUM_ERR_BAD_FILE (PARSUM_ERR_UNSUPPORTED for PNG, JPEG and
 * HDR in a build without stb; PARSUM_ERR_OUT_OF_MEMORY when libFuzzer's
 * malloc limit refuses a big image) with a message naming the function.
 * Anything else aborts, which the fuzzer records as a crash.
 *
 * The replay driver (an entry of parsum_tests, test_main.h) takes files and directories; a file named ok_* must
 * decode and one named bad_* must be refused with BAD_FILE (the seeds of
 * tests/corpus/image_read, made by image_read_seeds.py); other names
 * (fuzzer finds, crashers) only have to pass the checks above.
 *
 * Fuzzing (needs clang; libFuzzer comes with Debian's libclang-rt-14-dev;
 * the target is built with AddressSanitizer and UndefinedBehaviorSanitizer,
 * see tests/CMakeLists.txt):
 *   cmake -S . -B build-fuzz -DPARSUM_FUZZ=ON -DPARSUM_CUDA=OFF
 *   cmake --build build-fuzz -j2 --target fuzz_image_read
 *   mkdir -p fuzz-work && build-fuzz/tests/fuzz_image_read -max_len=65536 \
 *       -timeout=10 -rss_limit_mb=4096 fuzz-work tests/corpus/image_read
 * New findings go to fuzz-work (crashes to ./crash-*); a crasher, once
 * fixed, belongs in tests/corpus/image_read.
 */
#define _POSIX_C_SOURCE 200809L
#include "io/image_io.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static parsum_context *fuzz_ctx;
/* What the replay driver expects of the current input: -1 anything
 * allowed, else a status (set from the file name). */
static int expect = -1;

/* Aborts with a message: the fuzzer keeps the input as a crash. */
static void die(const char *what, parsum_status st)
{
    fprintf(stderr, "fuzz_image_read: %s (%s: %s)\n", what,
            parsum_status_name(st), parsum_last_error(fuzz_ctx));
    abort();
}

/* Reads every byte of a decoded image (so that a short allocation shows
 * under AddressSanitizer) and checks its descriptor. */
static void check_image(const parsum_image *img)
{
    size_t row = img->width * (size_t)img->channels *
                 parsum_dtype_size(img->dtype);
    if (img->data == NULL || img->where != PARSUM_MEM_HOST ||
        img->channels < 1 || img->channels > 4 || img->width == 0 ||
        img->height == 0 ||
        img->width > PARSUM__IMAGE_MAX_PIXELS / img->height ||
        img->pitch != row ||
        (img->dtype != PARSUM_U8 && img->dtype != PARSUM_U16 &&
         img->dtype != PARSUM_F32))
        die("bad descriptor", PARSUM_OK);
    const volatile unsigned char *p = img->data;
    unsigned sum = 0;
    for (size_t i = 0; i < row * img->height; i++)
        sum += p[i];
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_ctx == NULL &&
        parsum_context_create(&fuzz_ctx, PARSUM_BACKEND_CPU) != PARSUM_OK)
        abort();
    parsum_image img;
    /* A non-NULL pointer even for empty inputs (libFuzzer may pass NULL). */
    parsum_status st =
        parsum__image_read_mem(fuzz_ctx, size ? data : (const uint8_t *)"",
                               size, &img);
    if (st == PARSUM_OK) {
        check_image(&img);
        parsum_image_free(fuzz_ctx, &img);
    } else {
        bool allowed = st == PARSUM_ERR_BAD_FILE ||
                       st == PARSUM_ERR_OUT_OF_MEMORY;
#ifndef PARSUM_HAVE_STB
        allowed = allowed || st == PARSUM_ERR_UNSUPPORTED;
#endif
        if (!allowed)
            die("unexpected status", st);
        if (strncmp(parsum_last_error(fuzz_ctx), "parsum_image_read: ", 19))
            die("message without the function's name", st);
        if (img.data != NULL)
            die("image data left after a failure", st);
    }
    if (expect >= 0 && st != (parsum_status)expect) {
#ifndef PARSUM_HAVE_STB
        if (st == PARSUM_ERR_UNSUPPORTED)
            return 0;
#endif
        die("not the status the file name promises", st);
    }
    return 0;
}

#ifndef PARSUM_LIBFUZZER
#include "test_main.h"

/* Replays one file; returns 1 if it was a regular file, else 0. */
static int replay_file(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    size_t n = (size_t)sb.st_size;
    unsigned char *buf = malloc(n + 1);
    if (buf == NULL || fread(buf, 1, n, f) != n) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(f);
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    expect = strncmp(base, "ok_", 3) == 0    ? PARSUM_OK
             : strncmp(base, "bad_", 4) == 0 ? PARSUM_ERR_BAD_FILE
                                             : -1;
    fprintf(stderr, "%s\n", path); /* names the input before a crash */
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

/* Replays a file, or every file of a directory (not recursive). */
static size_t replay(const char *path)
{
    DIR *dir = opendir(path);
    if (dir == NULL)
        return (size_t)replay_file(path);
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char child[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        count += (size_t)replay_file(child);
    }
    closedir(dir);
    return count;
}

PARSUM_TEST_MAIN(fuzz_image_read_replay)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++)
        count += replay(argv[i]);
    parsum_context_destroy(fuzz_ctx);
    if (count == 0) {
        fprintf(stderr, "fuzz_image_read: no input files given\n");
        return 1;
    }
    printf("fuzz_image_read: %zu inputs replayed\n", count);
    return 0;
}
#endif
