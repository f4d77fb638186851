#define _POSIX_C_SOURCE 200809L
/*
 * histogram.c - parsum_histogram on the CPU: the backend's histogram slot
 * (AUTO, ATOMIC_GLOBAL, PRIVATIZED) and the two slots from which the core
 * composes SORT_REDUCE_BY_KEY (hist_bin_ids, hist_add_runs). The inner
 * loops are in kernels_hist.c; the rule AUTO follows, and the measurements
 * behind it, are in src/hist/README.md.
 *
 * ATOMIC_GLOBAL gives every thread a contiguous share of the pixels and
 * works through it in blocks: the bin indices of a block's samples of one
 * channel into a small buffer, then the increments. PRIVATIZED hands out
 * chunks from a shared counter and counts integer samples with SHIFT bins
 * in one fused pass (kernels_hist.c), the other bin modes as blocks.
 *
 * ATOMIC_GLOBAL: the increments are relaxed atomic adds on the output
 * (zeroed first unless ACCUMULATE). No scratch, and it scales to any bin
 * count, but every increment is a locked read-modify-write, and threads
 * that hit the same bins take the cache line from each other.
 *
 * PRIVATIZED (the notes' local histograms combined by a reduction): each
 * thread counts into its own histogram of 32-bit counters (up to four
 * copies of it, kernels_hist.c says why), then the threads add them all
 * into the output, each thread a share of the bins. At most 2^31 pixels
 * are counted between two such sums (a "round"), so a private counter
 * never wraps; only the output's U32 counters wrap, as documented.
 * Byte samples (U8, I8) are counted by value into 256 counters per copy,
 * folded into 64-bit totals every 2^20 pixels, and mapped to bins through
 * a table once at the end: the bins' arithmetic (even or range, any mode)
 * costs nothing per sample, and the scratch does not grow with nbins.
 *
 * The results are exact integers and do not depend on the thread count or
 * the strategy.
 */
#include "../core/internal.h"
#include "cpu.h"
#include "sched.h"

#include <stdlib.h>
#include <string.h>

/* Pixels per block: the ids of one channel, 8 KiB, stay in the L1 cache
 * between the two loops. */
#define BLK 2048
/* A thread is worth starting for this many samples. */
#define MIN_SAMPLES_PER_THREAD ((size_t)1 << 15)
/* Pixels a thread counts into 32-bit private counters between sums (any
 * value below 2^32 is safe); env PARSUM_CPU_HIST_ROUND lowers it, so that
 * the tests take the multi-round path on small inputs. */
#define ROUND_PIXELS ((size_t)1 << 31)
/* Byte path: pixels per chunk, each folded from the 32-bit copies into
 * 64-bit totals (1024 to 1536 adds, next to nothing). */
#define BYTE_FOLD_PIXELS ((size_t)1 << 20)
/* AUTO (src/hist/README.md): private histograms up to this many bins, and
 * only when there are at least PRIV_MIN_RATIO samples per private counter
 * to zero and add up. */
#define AUTO_PRIV_MAX_BINS ((size_t)1 << 16)
#define AUTO_PRIV_MIN_RATIO 4
/* Private copies: as many (4, 2, 1) as fit this many bytes together. */
#define COPIES_BYTES ((size_t)32 * 1024)

#ifdef PARSUM_ISA_HAVE_generic
extern const parsum__cpu_hist_kernels parsum__cpu_hist_kernels_generic;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
extern const parsum__cpu_hist_kernels parsum__cpu_hist_kernels_avx2;
#endif
#ifdef PARSUM_ISA_HAVE_avx512
extern const parsum__cpu_hist_kernels parsum__cpu_hist_kernels_avx512;
#endif

/* The variant isa.c chose for the other kernels (PARSUM_CPU_ISA applies
 * here too). */
const parsum__cpu_hist_kernels *parsum__cpu_hist_kernels_get(void)
{
    const char *isa = parsum__cpu_kernels_get()->isa;
#ifdef PARSUM_ISA_HAVE_avx512
    if (strcmp(isa, "avx512") == 0)
        return &parsum__cpu_hist_kernels_avx512;
#endif
#ifdef PARSUM_ISA_HAVE_avx2
    if (strcmp(isa, "avx2") == 0)
        return &parsum__cpu_hist_kernels_avx2;
#endif
    (void)isa;
    return &parsum__cpu_hist_kernels_generic;
}

static size_t round_pixels(void)
{
    const char *env = getenv("PARSUM_CPU_HIST_ROUND");
    if (env != NULL && *env != '\0') {
        size_t r = (size_t)strtoull(env, NULL, 0);
        if (r >= 1 && r < ROUND_PIXELS)
            return r;
    }
    return ROUND_PIXELS;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

typedef enum { PATH_ATOMIC, PATH_PRIV, PATH_BYTES } path;

typedef struct hjob {
    const parsum__hist_args *a;
    const parsum__cpu_hist_kernels *k;
    size_t ss, ch;
    path how;
    int nt, ran; /* threads asked for, threads that counted */
    size_t p0, p1; /* the round's pixels */
    size_t next;   /* PATH_PRIV: the round's next chunk (atomic) */
    bool acc;      /* this round adds to the output */
    int chan;      /* hist_bin_ids: the channel, and where its ids go */
    uint32_t *ids_out;
    /* PATH_PRIV: thread t's copy s of channel c's histogram (nbins + 1
     * counters, the last for samples in no bin) at
     * priv + t * thread_words + off[c] + s * cs[c]. PATH_BYTES: thread t's
     * copies x 256 counters at priv + t * thread_words, and its totals at
     * tot + t * copies * 256. */
    uint32_t *priv;
    size_t thread_words, off[4], cs[4];
    unsigned copies[4];
    uint64_t *tot;
    /* 8-bit samples: the bin of each byte value, nbins for none. */
    uint32_t lut[4][256];
} hjob;

static bool is_byte(parsum_dtype d)
{
    return d == PARSUM_U8 || d == PARSUM_I8;
}

static void make_lut(hjob *j)
{
    const parsum__hist_args *a = j->a;
    for (int c = 0; c < a->channels; c++) {
        if (a->counts[c] == NULL)
            continue;
        const parsum__hist_plan *p = &a->plan[c];
        for (int v = 0; v < 256; v++) {
            int64_t x = a->dtype == PARSUM_U8 ? (int64_t)v
                                              : (int64_t)(int8_t)(uint8_t)v;
            uint32_t b = parsum__bin_i64(p, x);
            j->lut[c][v] = b == PARSUM__BIN_NONE ? p->nbins : b;
        }
    }
}

/* The ids of `count` pixels' channel-c samples from pixel p on. */
static void block_ids(const hjob *j, int c, size_t p, size_t count,
                      uint32_t *ids)
{
    const unsigned char *s = (const unsigned char *)j->a->samples
                             + (p * j->ch + (size_t)c) * j->ss;
    if (is_byte(j->a->dtype)) {
        const uint32_t *lut = j->lut[c];
        for (size_t i = 0; i < count; i++)
            ids[i] = lut[s[i * j->ch]];
        return;
    }
    j->k->ids[j->a->dtype](s, count, j->ch, &j->a->plan[c], ids);
}

/* ---- output zeroing ------------------------------------------------------ */

static void zero_worker(void *arg, int tid, int nt)
{
    const hjob *j = arg;
    size_t cs = parsum_dtype_size(j->a->count_dtype);
    for (int c = 0; c < j->a->channels; c++) {
        if (j->a->counts[c] == NULL)
            continue;
        size_t b, e;
        parsum__sched_share(j->a->plan[c].nbins, tid, nt, &b, &e);
        memset((char *)j->a->counts[c] + b * cs, 0, (e - b) * cs);
    }
}

static void zero_counts(hjob *j)
{
    size_t total = 0;
    for (int c = 0; c < j->a->channels; c++)
        if (j->a->counts[c] != NULL)
            total += j->a->plan[c].nbins;
    int nt = total >= ((size_t)1 << 18) ? j->nt : 1;
    parsum__sched_spmd(nt, zero_worker, j);
}

/* ---- ATOMIC_GLOBAL ---------------------------------------------------------- */

static void atomic_add_ids(const uint32_t *ids, size_t count, uint32_t nbins,
                           void *out, parsum_dtype cd)
{
    if (cd == PARSUM_U32) {
        uint32_t *o = out;
        for (size_t i = 0; i < count; i++)
            if (ids[i] < nbins)
                __atomic_fetch_add(&o[ids[i]], 1u, __ATOMIC_RELAXED);
        return;
    }
    uint64_t *o = out;
    for (size_t i = 0; i < count; i++)
        if (ids[i] < nbins)
            __atomic_fetch_add(&o[ids[i]], (uint64_t)1, __ATOMIC_RELAXED);
}

static void atomic_worker(void *arg, int tid, int nt)
{
    const hjob *j = arg;
    const parsum__hist_args *a = j->a;
    uint32_t ids[BLK];
    size_t q0, q1;
    parsum__sched_share(a->n, tid, nt, &q0, &q1);
    for (size_t p = q0; p < q1; p += BLK) {
        size_t len = min_size(BLK, q1 - p);
        for (int c = 0; c < a->channels; c++) {
            if (a->counts[c] == NULL)
                continue;
            block_ids(j, c, p, len, ids);
            atomic_add_ids(ids, len, a->plan[c].nbins, a->counts[c],
                           a->count_dtype);
        }
    }
}

/* ---- PRIVATIZED, bin indices ------------------------------------------------ */

/* Channel c of pixels [p, e) into this thread's copies `mine`. */
static void priv_count(const hjob *j, uint32_t *mine, int c, size_t p,
                       size_t e, uint32_t *ids)
{
    const parsum__hist_args *a = j->a;
    const parsum__hist_plan *pl = &a->plan[c];
    uint32_t *h = mine + j->off[c];
    const unsigned char *s = (const unsigned char *)a->samples
                             + (p * j->ch + (size_t)c) * j->ss;
    parsum__hist_shift_fn fused = j->k->shift[a->dtype];
    if (pl->mode == PARSUM__BINS_SHIFT && fused != NULL) {
        fused(s, e - p, j->ch, pl, h, j->cs[c], j->copies[c]);
        return;
    }
    /* other bin modes: ids, then increments that prefetch the next
     * block's samples */
    for (; p < e; p += BLK) {
        size_t len = min_size(BLK, e - p);
        block_ids(j, c, p, len, ids);
        size_t nxt = p + len < e ? min_size(BLK, e - p - len) : 0;
        j->k->count(ids, len, h, j->cs[c], j->copies[c],
                    (const unsigned char *)a->samples + (p + len) * j->ch * j->ss,
                    nxt * j->ch * j->ss);
    }
}

/* Threads take chunks of CHUNK pixels from a shared counter, not a fixed
 * share each: on a machine shared with other work one thread may get less
 * of its core, and a static split would then wait for it. */
#define CHUNK ((size_t)1 << 16)

static void priv_worker(void *arg, int tid, int nt)
{
    hjob *j = arg;
    const parsum__hist_args *a = j->a;
    if (tid == 0)
        j->ran = nt;
    uint32_t *mine = j->priv + (size_t)tid * j->thread_words;
    memset(mine, 0, j->thread_words * sizeof *mine);
    uint32_t ids[BLK];
    for (;;) {
        size_t p = __atomic_fetch_add(&j->next, CHUNK, __ATOMIC_RELAXED);
        if (p >= j->p1)
            break;
        size_t e = min_size(CHUNK, j->p1 - p) + p;
        if (a->channels == 1) {
            priv_count(j, mine, 0, p, e, ids);
            continue;
        }
        /* several channels: a block at a time, so that the later
         * channels' passes find the block's pixels in the cache */
        for (size_t b = p; b < e; b += BLK)
            for (int c = 0; c < a->channels; c++)
                if (a->counts[c] != NULL)
                    priv_count(j, mine, c, b, min_size(BLK, e - b) + b, ids);
    }
}

/* Bins per step of the sums: 4 KiB of 64-bit sums on the stack. */
#define SUM_STEP 512

/* out[i] (+)= the sum of every thread's copies of counter i, for this
 * thread's share of each channel's bins. */
static void sum_worker(void *arg, int tid, int nt)
{
    const hjob *j = arg;
    const parsum__hist_args *a = j->a;
    bool u32 = a->count_dtype == PARSUM_U32;
    uint64_t acc[SUM_STEP];
    for (int c = 0; c < a->channels; c++) {
        if (a->counts[c] == NULL)
            continue;
        size_t b0, b1;
        parsum__sched_share(a->plan[c].nbins, tid, nt, &b0, &b1);
        for (size_t i0 = b0; i0 < b1; i0 += SUM_STEP) {
            size_t m = min_size(SUM_STEP, b1 - i0);
            for (size_t i = 0; i < m; i++)
                acc[i] = !j->acc ? 0
                         : u32   ? ((const uint32_t *)a->counts[c])[i0 + i]
                                 : ((const uint64_t *)a->counts[c])[i0 + i];
            for (int t = 0; t < j->ran; t++)
                for (unsigned s = 0; s < j->copies[c]; s++) {
                    const uint32_t *h = j->priv + (size_t)t * j->thread_words
                                        + j->off[c] + s * j->cs[c] + i0;
                    for (size_t i = 0; i < m; i++)
                        acc[i] += h[i];
                }
            if (u32)
                for (size_t i = 0; i < m; i++)
                    ((uint32_t *)a->counts[c])[i0 + i] = (uint32_t)acc[i];
            else
                memcpy((uint64_t *)a->counts[c] + i0, acc, m * 8);
        }
    }
}

/* The private histograms' layout; false if its size overflows. */
static bool priv_layout(hjob *j)
{
    const parsum__hist_args *a = j->a;
    size_t words = 0;
    for (int c = 0; c < a->channels; c++) {
        if (a->counts[c] == NULL)
            continue;
        size_t nb = (size_t)a->plan[c].nbins + 1;
        j->cs[c] = (nb + 15) & ~(size_t)15; /* whole cache lines */
        j->copies[c] = 4 * nb * 4 <= COPIES_BYTES   ? 4
                       : 2 * nb * 4 <= COPIES_BYTES ? 2
                                                    : 1;
        j->off[c] = words;
        words += j->copies[c] * j->cs[c];
    }
    j->thread_words = words;
    size_t bytes;
    return parsum__mul_size(words, (size_t)j->nt * 4, &bytes);
}

static parsum_status run_priv(parsum_context *ctx, hjob *j)
{
    const parsum__hist_args *a = j->a;
    if (!priv_layout(j))
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: private histograms of %d threads overflow "
                            "size_t", a->fn, j->nt);
    j->priv = parsum__scratch(ctx, j->thread_words * (size_t)j->nt * 4, a->fn);
    if (j->priv == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    /* one thread may count a whole round (priv_worker's chunks) */
    size_t round = round_pixels();
    for (size_t p0 = 0; p0 < a->n; p0 += round) {
        j->p0 = p0;
        j->next = p0;
        j->p1 = p0 + min_size(round, a->n - p0);
        j->acc = a->accumulate || p0 > 0;
        parsum__sched_spmd(j->nt, priv_worker, j);
        parsum__sched_spmd(j->nt, sum_worker, j);
    }
    return PARSUM_OK;
}

/* ---- PRIVATIZED, byte values ---------------------------------------------- */

static void bytes_worker(void *arg, int tid, int nt)
{
    hjob *j = arg;
    if (tid == 0)
        j->ran = nt;
    unsigned cp = j->copies[0];
    uint32_t *h = j->priv + (size_t)tid * j->thread_words;
    uint64_t *tot = j->tot + (size_t)tid * cp * 256;
    memset(h, 0, (size_t)cp * 256 * sizeof *h);
    memset(tot, 0, (size_t)cp * 256 * sizeof *tot);
    const uint8_t *x = j->a->samples;
    size_t fold = min_size(BYTE_FOLD_PIXELS, round_pixels());
    /* chunks from a shared counter, as in priv_worker; each is folded */
    for (;;) {
        size_t p = __atomic_fetch_add(&j->next, fold, __ATOMIC_RELAXED);
        if (p >= j->a->n)
            break;
        size_t len = min_size(fold, j->a->n - p);
        j->k->bytes(x + p * j->ch, len * j->ch, h, cp);
        for (size_t i = 0; i < (size_t)cp * 256; i++) {
            tot[i] += h[i];
            h[i] = 0;
        }
    }
}

/* Byte value totals to bins: copy s holds channel s % channels. */
static void bytes_finish(hjob *j)
{
    const parsum__hist_args *a = j->a;
    unsigned cp = j->copies[0];
    for (int c = 0; c < a->channels; c++) {
        if (a->counts[c] == NULL)
            continue;
        for (int v = 0; v < 256; v++) {
            uint32_t b = j->lut[c][v];
            if (b >= a->plan[c].nbins)
                continue;
            uint64_t sum = 0;
            for (int t = 0; t < j->ran; t++)
                for (unsigned s = (unsigned)c; s < cp; s += j->ch)
                    sum += j->tot[((size_t)t * cp + s) * 256 + (size_t)v];
            if (a->count_dtype == PARSUM_U32)
                ((uint32_t *)a->counts[c])[b] += (uint32_t)sum;
            else
                ((uint64_t *)a->counts[c])[b] += sum;
        }
    }
}

static parsum_status run_bytes(parsum_context *ctx, hjob *j)
{
    unsigned cp = j->ch == 3 ? 6 : 4; /* a multiple of the channels */
    j->copies[0] = cp;
    j->thread_words = (size_t)cp * 256;
    size_t bytes = (size_t)j->nt * cp * 256 * (4 + 8);
    unsigned char *s = parsum__scratch(ctx, bytes, j->a->fn);
    if (s == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    j->tot = (uint64_t *)(void *)s;
    j->priv = (uint32_t *)(void *)(s + (size_t)j->nt * cp * 256 * 8);
    if (!j->a->accumulate)
        zero_counts(j);
    parsum__sched_spmd(j->nt, bytes_worker, j);
    bytes_finish(j);
    return PARSUM_OK;
}

/* ---- the slots ------------------------------------------------------------ */

static void job_init(hjob *j, parsum_context *ctx, const parsum__hist_args *a)
{
    memset(j, 0, sizeof *j);
    j->a = a;
    j->k = parsum__cpu_hist_kernels_get();
    j->ss = parsum_dtype_size(a->dtype);
    j->ch = (size_t)a->channels;
    size_t samples = a->n * j->ch, want = samples / MIN_SAMPLES_PER_THREAD;
    j->nt = ctx->threads;
    if (want < (size_t)j->nt)
        j->nt = want > 1 ? (int)want : 1;
    if (is_byte(a->dtype))
        make_lut(j);
}

/* AUTO's choice (src/hist/README.md). */
static path auto_path(const hjob *j)
{
    const parsum__hist_args *a = j->a;
    if (is_byte(a->dtype))
        return PATH_BYTES;
    size_t maxbins = 0;
    for (int c = 0; c < a->channels; c++)
        if (a->counts[c] != NULL && a->plan[c].nbins > maxbins)
            maxbins = a->plan[c].nbins;
    if (maxbins <= AUTO_PRIV_MAX_BINS
        && a->n >= AUTO_PRIV_MIN_RATIO * maxbins * (size_t)j->nt)
        return PATH_PRIV;
    return PATH_ATOMIC;
}

parsum_status parsum__cpu_histogram(parsum_context *ctx,
                                    const parsum__hist_args *a)
{
    hjob j;
    job_init(&j, ctx, a);
    if (a->n == 0) {
        if (!a->accumulate)
            zero_counts(&j);
        return PARSUM_OK;
    }
    if (a->strategy == PARSUM_HIST_ATOMIC_GLOBAL)
        j.how = PATH_ATOMIC;
    else if (a->strategy == PARSUM_HIST_PRIVATIZED)
        j.how = is_byte(a->dtype) ? PATH_BYTES : PATH_PRIV;
    else
        j.how = auto_path(&j);
    if (j.how == PATH_BYTES)
        return run_bytes(ctx, &j);
    if (j.how == PATH_PRIV)
        return run_priv(ctx, &j);
    if (!a->accumulate)
        zero_counts(&j);
    parsum__sched_spmd(j.nt, atomic_worker, &j);
    return PARSUM_OK;
}

static void ids_worker(void *arg, int tid, int nt)
{
    const hjob *j = arg;
    size_t q0, q1;
    parsum__sched_share(j->a->n, tid, nt, &q0, &q1);
    for (size_t p = q0; p < q1; p += BLK)
        block_ids(j, j->chan, p, min_size(BLK, q1 - p), j->ids_out + p);
}

parsum_status parsum__cpu_hist_bin_ids(parsum_context *ctx,
                                       const parsum__hist_args *a, int c,
                                       uint32_t *ids)
{
    hjob j;
    job_init(&j, ctx, a);
    j.ids_out = ids;
    j.chan = c;
    parsum__sched_spmd(j.nt, ids_worker, &j);
    return PARSUM_OK;
}

typedef struct runs_job {
    const uint32_t *keys;
    const uint64_t *lengths;
    size_t nruns;
    uint32_t nbins;
    void *counts;
    bool u32, accumulate;
} runs_job;

static void runs_zero_worker(void *arg, int tid, int nt)
{
    const runs_job *r = arg;
    size_t b, e;
    if (!r->accumulate) {
        size_t cs = r->u32 ? 4 : 8;
        parsum__sched_share(r->nbins, tid, nt, &b, &e);
        memset((char *)r->counts + b * cs, 0, (e - b) * cs);
    }
}

/* Keys are distinct, so the runs' adds never meet: a plain loop, after
 * the zeroing (a separate parallel step: a run's bin may be in another
 * thread's share). */
static void runs_add_worker(void *arg, int tid, int nt)
{
    const runs_job *r = arg;
    size_t b, e;
    parsum__sched_share(r->nruns, tid, nt, &b, &e);
    for (size_t i = b; i < e; i++) {
        uint32_t k = r->keys[i];
        if (k >= r->nbins)
            continue;
        if (r->u32)
            ((uint32_t *)r->counts)[k] += (uint32_t)r->lengths[i];
        else
            ((uint64_t *)r->counts)[k] += r->lengths[i];
    }
}

parsum_status parsum__cpu_hist_add_runs(parsum_context *ctx,
                                        const uint32_t *keys,
                                        const uint64_t *lengths, size_t nruns,
                                        uint32_t nbins, void *counts,
                                        parsum_dtype count_dtype,
                                        bool accumulate)
{
    runs_job r = {keys, lengths, nruns, nbins, counts,
                  count_dtype == PARSUM_U32, accumulate};
    size_t work = (size_t)nbins + nruns;
    int nt = work >= ((size_t)1 << 18) ? ctx->threads : 1;
    parsum__sched_spmd(nt, runs_zero_worker, &r);
    parsum__sched_spmd(nt, runs_add_worker, &r);
    return PARSUM_OK;
}
