/* bench_cpu_util.c - clock, medians, size parsing and the multi-threaded
 * memory loops (copy, read) that measure the bandwidth the CPU benchmarks
 * compare parsum with. See bench_cpu_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PB_MAX_COUNT ((uint64_t)1 << 62)

double pb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pb_median(double *v, int count)
{
    if (count <= 0)
        return 0.0;
    qsort(v, (size_t)count, sizeof *v, cmp_double);
    if (count % 2 == 1)
        return v[count / 2];
    return 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* Digits only, no sign or blank, value <= PB_MAX_COUNT. */
static int parse_digits(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (!isdigit((unsigned char)*s))
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > PB_MAX_COUNT)
            return -1;
    }
    *out = v;
    return 0;
}

static int parse_power(const char *s, const char *caret, uint64_t *out)
{
    uint64_t base, exp, v = 1;
    if (parse_digits(s, caret, &base) != 0 ||
        parse_digits(caret + 1, caret + strlen(caret), &exp) != 0)
        return -1;
    for (uint64_t i = 0; i < exp; i++) {
        if (base != 0 && v > PB_MAX_COUNT / base)
            return -1;
        v *= base;
    }
    *out = v;
    return 0;
}

static int parse_scientific(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (!isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    long double v = strtold(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0L) ||
        v > (long double)PB_MAX_COUNT || floorl(v) != v)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int pb_parse_count(const char *s, size_t *out)
{
    uint64_t v = 0;
    int rc;
    if (s == NULL || *s == '\0')
        return -1;
    const char *caret = strchr(s, '^');
    if (caret != NULL)
        rc = parse_power(s, caret, &v);
    else if (strpbrk(s, "eE.") != NULL)
        rc = parse_scientific(s, &v);
    else
        rc = parse_digits(s, s + strlen(s), &v);
    if (rc != 0 || v == 0 || v > (uint64_t)SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

const char *pb_format_count(size_t n, char *buf, size_t len)
{
    if (n != 0 && (n & (n - 1)) == 0 && n >= 1024) {
        int k = 0;
        while (((size_t)1 << k) != n)
            k++;
        snprintf(buf, len, "2^%d", k);
    } else {
        snprintf(buf, len, "%zu", n);
    }
    return buf;
}

uint64_t pb_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int pb_auto_reps(double per_round)
{
    if (!(per_round > 0.0))
        return 10000;
    double r = ceil(1.5 / per_round);
    if (r < 5.0)
        return 5;
    if (r > 10000.0)
        return 10000;
    return (int)r;
}

/* The copy and read loops walk the buffer in chunks of this many bytes,
 * handed out to the threads dynamically: a thread that the OS delays does
 * not hold up the others. A chunk is far below glibc's threshold for
 * non-temporal stores, so memcpy uses ordinary cached stores, as a scan
 * does. */
#define PB_CHUNK ((size_t)1 << 20)

/* Threads for `chunks` chunks: no more than there are chunks, so small
 * data are not split into a parallel region that costs more than the
 * work. */
static int team(size_t chunks, int threads)
{
    return chunks < (size_t)threads ? (int)(chunks > 0 ? chunks : 1)
                                    : threads;
}

void pb_copy(void *dst, const void *src, size_t bytes, int threads)
{
    size_t chunks = (bytes + PB_CHUNK - 1) / PB_CHUNK;
    if (chunks <= 1) { /* no parallel region for small data */
        memcpy(dst, src, bytes);
        return;
    }
#pragma omp parallel for num_threads(team(chunks, threads)) schedule(dynamic)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * PB_CHUNK;
        size_t len = bytes - lo < PB_CHUNK ? bytes - lo : PB_CHUNK;
        memcpy((char *)dst + lo, (const char *)src + lo, len);
    }
}

/* A copy with non-temporal stores: large copies skip reading the
 * destination into the cache first (no read-for-ownership), which is what
 * a fast scan does too, so it is the copy bound for data that do not fit
 * in the cache. Per chunk: memcpy up to the first aligned destination
 * byte, streaming stores of whole vectors, memcpy of the rest. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"))) static void
stream_chunk_avx512(char *dst, const char *src, size_t len)
{
    size_t head = (64 - ((uintptr_t)dst & 63)) & 63, i;
    head = head < len ? head : len;
    memcpy(dst, src, head);
    for (i = head; i + 64 <= len; i += 64)
        _mm512_stream_si512((void *)(dst + i),
                            _mm512_loadu_si512((const void *)(src + i)));
    memcpy(dst + i, src + i, len - i);
    _mm_sfence();
}

__attribute__((target("avx2"))) static void
stream_chunk_avx2(char *dst, const char *src, size_t len)
{
    size_t head = (32 - ((uintptr_t)dst & 31)) & 31, i;
    head = head < len ? head : len;
    memcpy(dst, src, head);
    for (i = head; i + 32 <= len; i += 32)
        _mm256_stream_si256((__m256i *)(dst + i),
                            _mm256_loadu_si256((const __m256i *)(src + i)));
    memcpy(dst + i, src + i, len - i);
    _mm_sfence();
}

static void stream_chunk_sse2(char *dst, const char *src, size_t len)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15, i;
    head = head < len ? head : len;
    memcpy(dst, src, head);
    for (i = head; i + 16 <= len; i += 16)
        _mm_stream_si128((__m128i *)(dst + i),
                         _mm_loadu_si128((const __m128i *)(src + i)));
    memcpy(dst + i, src + i, len - i);
    _mm_sfence();
}

typedef void (*stream_chunk_fn)(char *, const char *, size_t);

static stream_chunk_fn pick_stream_chunk(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return stream_chunk_avx512;
    if (__builtin_cpu_supports("avx2"))
        return stream_chunk_avx2;
    return stream_chunk_sse2;
}

int pb_have_stream_copy(void)
{
    return 1;
}
#else
typedef void (*stream_chunk_fn)(char *, const char *, size_t);

static void stream_chunk_memcpy(char *dst, const char *src, size_t len)
{
    memcpy(dst, src, len);
}

static stream_chunk_fn pick_stream_chunk(void)
{
    return stream_chunk_memcpy;
}

int pb_have_stream_copy(void)
{
    return 0;
}
#endif

void pb_copy_stream(void *dst, const void *src, size_t bytes, int threads)
{
    size_t chunks = (bytes + PB_CHUNK - 1) / PB_CHUNK;
    stream_chunk_fn chunk = pick_stream_chunk();
    if (chunks <= 1) {
        chunk((char *)dst, (const char *)src, bytes);
        return;
    }
#pragma omp parallel for num_threads(team(chunks, threads)) schedule(dynamic)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * PB_CHUNK;
        chunk((char *)dst + lo, (const char *)src + lo,
              bytes - lo < PB_CHUNK ? bytes - lo : PB_CHUNK);
    }
}

/* Sum of words [0, count) with four independent chains. */
static uint64_t sum_words_generic(const uint64_t *p, size_t count)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < count; i++)
        s0 += p[i];
    return s0 + s1 + s2 + s3;
}

/* The read bound must not be held back by narrow loads while parsum uses
 * AVX2 or AVX-512 (a core keeps only so many loads in flight): x86 gets
 * variants for the widest vectors the processor has. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static uint64_t
sum_words_avx2(const uint64_t *p, size_t count)
{
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    size_t i = 0;
    const __m256i *v = (const __m256i *)p;
    for (; i + 16 <= count; i += 16, v += 4) {
        a = _mm256_add_epi64(a, _mm256_loadu_si256(v));
        b = _mm256_add_epi64(b, _mm256_loadu_si256(v + 1));
        c = _mm256_add_epi64(c, _mm256_loadu_si256(v + 2));
        d = _mm256_add_epi64(d, _mm256_loadu_si256(v + 3));
    }
    uint64_t lanes[4];
    a = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
    _mm256_storeu_si256((__m256i *)lanes, a);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] +
           sum_words_generic(p + i, count - i);
}

__attribute__((target("avx512f"))) static uint64_t
sum_words_avx512(const uint64_t *p, size_t count)
{
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        a = _mm512_add_epi64(a, _mm512_loadu_si512((const void *)(p + i)));
        b = _mm512_add_epi64(b, _mm512_loadu_si512((const void *)(p + i + 8)));
        c = _mm512_add_epi64(c, _mm512_loadu_si512((const void *)(p + i + 16)));
        d = _mm512_add_epi64(d, _mm512_loadu_si512((const void *)(p + i + 24)));
    }
    /* Not _mm512_reduce_add_epi64: gcc's version adds as signed. */
    uint64_t lanes[8];
    a = _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d));
    _mm512_storeu_si512((void *)lanes, a);
    return sum_words_generic(lanes, 8) + sum_words_generic(p + i, count - i);
}

typedef uint64_t (*sum_words_fn)(const uint64_t *, size_t);

static sum_words_fn pick_sum_words(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return sum_words_avx512;
    if (__builtin_cpu_supports("avx2"))
        return sum_words_avx2;
    return sum_words_generic;
}
#else
typedef uint64_t (*sum_words_fn)(const uint64_t *, size_t);

static sum_words_fn pick_sum_words(void)
{
    return sum_words_generic;
}
#endif

uint64_t pb_read(const void *src, size_t bytes, int threads)
{
    const uint64_t *words = (const uint64_t *)src;
    size_t count = bytes / 8, per = PB_CHUNK / 8;
    size_t chunks = (count + per - 1) / per;
    uint64_t total = 0;
    sum_words_fn sum_words = pick_sum_words();
    if (chunks <= 1)
        return sum_words(words, count);
#pragma omp parallel for num_threads(team(chunks, threads)) schedule(dynamic) \
    reduction(+ : total)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * per;
        total += sum_words(words + lo, count - lo < per ? count - lo : per);
    }
    return total;
}

static size_t llc_bytes(void)
{
    long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return l3 > 0 ? (size_t)l3 : (size_t)32 << 20;
}

void pb_scrub_init(pb_scrub *s, size_t working_set, int threads)
{
    size_t llc = llc_bytes();
    memset(s, 0, sizeof *s);
    if (working_set < llc / 8)
        return;
    size_t bytes = llc + llc / 4;
    if (bytes > (size_t)1 << 30)
        bytes = (size_t)1 << 30;
    s->buf = malloc(bytes);
    if (s->buf == NULL)
        return;
    s->bytes = bytes;
    size_t chunks = (bytes + PB_CHUNK - 1) / PB_CHUNK;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * PB_CHUNK;
        memset((char *)s->buf + lo, (int)(c & 0xff),
               bytes - lo < PB_CHUNK ? bytes - lo : PB_CHUNK);
    }
}

void pb_scrub_run(pb_scrub *s, int threads)
{
    if (s->bytes != 0)
        s->sink += pb_read(s->buf, s->bytes, threads);
}

void pb_scrub_free(pb_scrub *s)
{
    free(s->buf);
    memset(s, 0, sizeof *s);
}

uint64_t pb_checksum(const void *p, size_t bytes, int threads)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t count = bytes / 8;
    uint64_t total = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(+ : total)
    for (size_t i = 0; i < count; i++) {
        uint64_t w;
        memcpy(&w, b + 8 * i, 8);
        total += pb_hash64(w ^ (i * 0x2545f4914f6cdd1dull));
    }
    for (size_t i = count * 8; i < bytes; i++)
        total += pb_hash64((uint64_t)b[i] ^ ((uint64_t)i << 8));
    return total;
}

parsum_status pb_alloc_shifted(parsum_context *ctx, void **p, size_t bytes,
                               size_t shift)
{
    void *base = NULL;
    parsum_status st = parsum_alloc(ctx, &base, bytes + (shift ? 64 : 0));
    *p = st == PARSUM_OK ? (char *)base + shift : NULL;
    return st;
}

void pb_free_shifted(parsum_context *ctx, void *p, size_t shift)
{
    parsum_free(ctx, p != NULL ? (char *)p - shift : NULL);
}
