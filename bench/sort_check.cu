/*
 * sort_check.cu - a stress check of the CUDA radix sorts against a plain
 * host reference (std::stable_sort of the positions by the selected
 * ordered bits of src/sort/sort_keys.h): every key dtype, keys only,
 * values of 1 to 16 bytes, indices, descending, bit ranges, in place,
 * keys_out NULL, special floats (NaNs of both signs, zeros, infinities),
 * few distinct keys (skipped passes), sizes from 0 to 2^24, and segmented
 * sorts with empty, tiny, medium and huge segments and invalid offsets.
 * Outputs are poisoned before each call.
 *
 *   parsum_sort_check [--quick] [--max-n N] [--seed S]
 *
 * Prints one line per failing case (and a summary); exit status 0 when
 * everything matched, 1 otherwise, 2 without a CUDA device.
 */
#include "parsum.h"
#include "sort/sort_keys.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

struct fatal {};

void ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "sort_check: %s: %s\n", what, cudaGetErrorString(e));
        throw fatal();
    }
}

uint64_t ord_bits(const unsigned char *p, parsum_dtype dt)
{
    switch (dt) {
    case PARSUM_U8: return p[0];
    case PARSUM_I8: return parsum__ord_i8(p[0]);
    case PARSUM_U16:
    case PARSUM_I16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return dt == PARSUM_I16 ? parsum__ord_i16(v) : v;
    }
    case PARSUM_U32:
    case PARSUM_I32:
    case PARSUM_F32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return dt == PARSUM_I32   ? parsum__ord_i32(v)
               : dt == PARSUM_F32 ? parsum__ord_f32(v)
                                  : v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return dt == PARSUM_I64   ? parsum__ord_i64(v)
               : dt == PARSUM_F64 ? parsum__ord_f64(v)
                                  : v;
    }
    }
}

struct config {
    parsum_dtype dt;
    size_t vs;       /* value bytes (0: keys only) */
    bool indices;
    bool desc;
    unsigned begin, end; /* 0, 0: all bits */
    bool inplace;
    bool no_keys_out;
    int dist; /* 0 random bits, 1 specials mixed in, 2 few distinct, 3 all equal */
};

std::string describe(const config &c, size_t n, const char *what)
{
    char buf[256];
    snprintf(buf, sizeof buf,
             "%s n=%zu %s vs=%zu%s%s bits=[%u,%u)%s%s dist=%d", what, n,
             parsum_dtype_name(c.dt), c.vs, c.indices ? " indices" : "",
             c.desc ? " desc" : "", c.begin, c.end,
             c.inplace ? " inplace" : "", c.no_keys_out ? " no-keys-out" : "",
             c.dist);
    return buf;
}

void make_keys(std::vector<unsigned char> &k, size_t n, size_t ks, int dist,
               parsum_dtype dt, std::mt19937_64 &rng)
{
    k.resize(n * ks);
    uint64_t few[5];
    for (uint64_t &f : few)
        f = rng();
    for (size_t i = 0; i < n; i++) {
        uint64_t v = rng();
        if (dist == 2)
            v = few[v % 5];
        else if (dist == 3)
            v = few[0];
        memcpy(&k[i * ks], &v, ks);
    }
    if (dist == 1 && (dt == PARSUM_F32 || dt == PARSUM_F64)) {
        for (size_t i = 0; i < n; i += 3) {
            const int pick = (int)(rng() % 8);
            if (dt == PARSUM_F32) {
                const uint32_t sp[8] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                                        0x80000000u, 0x00000000u, 0x7F800000u,
                                        0xFF800000u, 0xFFFFFFFFu};
                memcpy(&k[i * 4], &sp[pick], 4);
            } else {
                const uint64_t sp[8] = {
                    0x7FF8000000000000ull, 0xFFF8000000000000ull,
                    0x7FF0000000000001ull, 0x8000000000000000ull, 0,
                    0x7FF0000000000000ull, 0xFFF0000000000000ull,
                    0xFFFFFFFFFFFFFFFFull};
                memcpy(&k[i * 8], &sp[pick], 8);
            }
        }
    } else if (dist == 1) {
        for (size_t i = 0; i < n; i += 3) {
            const uint64_t sp[4] = {0, ~0ull, 1ull << (8 * ks - 1),
                                    (1ull << (8 * ks - 1)) - 1};
            memcpy(&k[i * ks], &sp[rng() % 4], ks);
        }
    }
}

/* The reference permutation of [b, e) by the selected ordered bits. */
void ref_perm(const std::vector<unsigned char> &k, size_t ks, parsum_dtype dt,
              unsigned begin, unsigned end, bool desc, size_t b, size_t e,
              std::vector<uint64_t> &perm)
{
    const unsigned bits = end - begin;
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    std::vector<uint64_t> sel(e - b);
    for (size_t i = b; i < e; i++) {
        uint64_t o = (ord_bits(&k[i * ks], dt) >> begin) & mask;
        sel[i - b] = desc ? o ^ mask : o;
    }
    std::vector<uint64_t> p(e - b);
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](uint64_t x, uint64_t y) {
        return sel[x] < sel[y];
    });
    for (size_t j = 0; j < p.size(); j++)
        perm[b + j] = b + p[j];
}

struct device_buf {
    void *p = nullptr;
    explicit device_buf(size_t bytes) { ck(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc"); }
    ~device_buf() { cudaFree(p); }
    device_buf(const device_buf &) = delete;
    device_buf &operator=(const device_buf &) = delete;
};

int failures = 0, cases = 0;

void fail(const std::string &what, const char *detail)
{
    failures++;
    if (failures <= 50)
        printf("FAIL %s: %s\n", what.c_str(), detail);
}

/* One sort (segments: offsets, else one range), checked. */
void run(parsum_context *ctx, const config &c, size_t n,
         const std::vector<uint64_t> *offsets, bool expect_bad,
         std::mt19937_64 &rng)
{
    cases++;
    const size_t ks = parsum_dtype_size(c.dt);
    const size_t vs = c.indices ? 8 : c.vs;
    const unsigned kbits = (unsigned)(8 * ks);
    const unsigned begin = c.begin, end = c.end ? c.end : kbits;
    const std::string what =
        describe(c, n, offsets ? "segmented" : "sort");
    std::vector<unsigned char> keys, vals(n * vs);
    make_keys(keys, n, ks, c.dist, c.dt, rng);
    for (auto &x : vals)
        x = (unsigned char)rng();

    device_buf dk(n * ks), dv(n * vs), dko(n * ks), dvo(n * vs),
        doff(offsets ? offsets->size() * 8 : 8);
    ck(cudaMemcpy(dk.p, keys.data(), n * ks, cudaMemcpyHostToDevice), "copy");
    if (!c.indices && vs > 0)
        ck(cudaMemcpy(dv.p, vals.data(), n * vs, cudaMemcpyHostToDevice),
           "copy");
    ck(cudaMemset(dko.p, 0xAB, (n * ks) > 0 ? n * ks : 1), "memset");
    ck(cudaMemset(dvo.p, 0xCD, (n * vs) > 0 ? n * vs : 1), "memset");
    void *kin = dk.p, *kout = dko.p, *vin = dv.p, *vout = dvo.p;
    if (c.inplace) {
        kout = kin;
        if (!c.indices && vs > 0)
            vout = vin;
    }
    if (c.no_keys_out)
        kout = nullptr;
    parsum_sort_desc d;
    d.key_dtype = c.dt;
    d.value_size = c.indices ? 0 : c.vs;
    d.flags = c.desc ? PARSUM_DESCENDING : 0u;
    d.begin_bit = c.begin;
    d.end_bit = c.end;
    parsum_status s;
    if (offsets) {
        ck(cudaMemcpy(doff.p, offsets->data(), offsets->size() * 8,
                      cudaMemcpyHostToDevice),
           "copy");
        s = parsum_segmented_sort(ctx, kin, vs ? vin : nullptr, kout,
                                  vs ? vout : nullptr, n,
                                  static_cast<const uint64_t *>(doff.p),
                                  offsets->size() - 1, &d);
    } else if (c.indices) {
        s = parsum_sort_indices(ctx, kin, kout, static_cast<uint64_t *>(vout),
                                n, &d);
    } else {
        s = parsum_sort(ctx, kin, vs ? vin : nullptr, kout,
                        vs ? vout : nullptr, n, &d);
    }
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess) {
        fail(what, cudaGetErrorString(ce));
        throw fatal(); /* the CUDA context is gone */
    }
    if (expect_bad) {
        if (s != PARSUM_ERR_INVALID_ARGUMENT)
            fail(what, "invalid offsets not reported");
        return;
    }
    if (s != PARSUM_OK) {
        fail(what, parsum_last_error(ctx));
        return;
    }
    std::vector<uint64_t> perm(n);
    if (offsets) {
        for (size_t g = 0; g + 1 < offsets->size(); g++)
            ref_perm(keys, ks, c.dt, begin, end, c.desc, (*offsets)[g],
                     (*offsets)[g + 1], perm);
    } else {
        ref_perm(keys, ks, c.dt, begin, end, c.desc, 0, n, perm);
    }
    if (kout != nullptr) {
        std::vector<unsigned char> got(n * ks);
        ck(cudaMemcpy(got.data(), kout, n * ks, cudaMemcpyDeviceToHost),
           "copy");
        for (size_t j = 0; j < n; j++)
            if (memcmp(&got[j * ks], &keys[perm[j] * ks], ks) != 0) {
                char m[96];
                snprintf(m, sizeof m, "key %zu differs (expected input %llu)",
                         j, (unsigned long long)perm[j]);
                fail(what, m);
                return;
            }
    }
    if (vs > 0) {
        std::vector<unsigned char> got(n * vs);
        ck(cudaMemcpy(got.data(), vout, n * vs, cudaMemcpyDeviceToHost),
           "copy");
        for (size_t j = 0; j < n; j++) {
            bool ok;
            if (c.indices) {
                uint64_t v;
                memcpy(&v, &got[j * 8], 8);
                ok = v == perm[j];
            } else {
                ok = memcmp(&got[j * vs], &vals[perm[j] * vs], vs) == 0;
            }
            if (!ok) {
                char m[96];
                snprintf(m, sizeof m, "value %zu differs (expected input %llu)",
                         j, (unsigned long long)perm[j]);
                fail(what, m);
                return;
            }
        }
    }
}

/* Offsets with empty, tiny, medium and (when n allows) huge segments. */
std::vector<uint64_t> make_offsets(size_t n, int kind, std::mt19937_64 &rng)
{
    std::vector<uint64_t> off = {0};
    size_t at = 0;
    while (at < n) {
        size_t len;
        const uint64_t r = rng() % 100;
        if (kind == 0) /* mostly short, some empty */
            len = r < 10 ? 0 : r < 60 ? rng() % 9 : r < 90 ? rng() % 33
                                                          : rng() % 300;
        else if (kind == 1) /* every class */
            len = r < 5 ? 0 : r < 30 ? rng() % 33 : r < 60 ? rng() % 600
                        : r < 90 ? rng() % 5000 : 4097 + rng() % 70000;
        else /* few huge */
            len = n / 3 + 1;
        len = std::min(len, n - at);
        at += len;
        off.push_back(at);
    }
    if (kind != 2)
        off.push_back(n); /* a trailing empty segment */
    return off;
}

} /* namespace */

int main(int argc, char **argv)
{
    bool quick = false;
    size_t max_n = (size_t)1 << 24;
    uint64_t seed = 12345;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
            max_n = strtoull(argv[++i], nullptr, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], nullptr, 0);
        else {
            fprintf(stderr, "usage: %s [--quick] [--max-n N] [--seed S]\n",
                    argv[0]);
            return 2;
        }
    }
    parsum_context *ctx = nullptr;
    if (parsum_context_create(&ctx, PARSUM_BACKEND_CUDA) != PARSUM_OK) {
        fprintf(stderr, "sort_check: no CUDA context\n");
        return 2;
    }
    std::mt19937_64 rng(seed);
    const parsum_dtype dts[] = {PARSUM_I8,  PARSUM_U8,  PARSUM_I16, PARSUM_U16,
                                PARSUM_I32, PARSUM_U32, PARSUM_I64, PARSUM_U64,
                                PARSUM_F32, PARSUM_F64};
    const size_t small_ns[] = {0, 1, 2, 31, 32, 33, 511, 512, 513, 4095,
                               4096, 4097, 8063, 8064, 8065, 100003};
    try {
        /* Every dtype x value layout x order at small and medium sizes. */
        for (parsum_dtype dt : dts) {
            const unsigned kb = (unsigned)(8 * parsum_dtype_size(dt));
            for (size_t n : small_ns) {
                if (quick && n > 5000 && n != 100003)
                    continue;
                for (int v = 0; v < 7; v++) {
                    const size_t vsz[] = {0, 1, 3, 4, 8, 12, 16};
                    config c = {dt, vsz[v], false, false, 0, 0, false, false,
                                (int)(rng() % 4)};
                    c.desc = rng() % 2;
                    run(ctx, c, n, nullptr, false, rng);
                }
                config c = {dt, 0, true, rng() % 2 != 0, 0, 0, false, false, 1};
                run(ctx, c, n, nullptr, false, rng);
                /* a bit range */
                unsigned b0 = (unsigned)(rng() % kb);
                unsigned e0 = b0 + 1 + (unsigned)(rng() % (kb - b0));
                c = {dt, 4, false, rng() % 2 != 0, b0, e0, false, false, 0};
                run(ctx, c, n, nullptr, false, rng);
                /* in place, keys_out NULL */
                c = {dt, 8, false, false, 0, 0, true, false, (int)(rng() % 4)};
                run(ctx, c, n, nullptr, false, rng);
                c = {dt, 0, false, true, 0, 0, true, false, 1};
                run(ctx, c, n, nullptr, false, rng);
                c = {dt, 12, false, false, 0, 0, false, true, 0};
                run(ctx, c, n, nullptr, false, rng);
                /* segmented */
                if (n > 0) {
                    for (int kind = 0; kind < 3; kind++) {
                        std::vector<uint64_t> off = make_offsets(n, kind, rng);
                        c = {dt, (size_t)(kind == 1 ? 4 : kind == 2 ? 3 : 0),
                             false, rng() % 2 != 0, 0, 0, kind == 2, false,
                             (int)(rng() % 3)};
                        run(ctx, c, n, &off, false, rng);
                    }
                }
            }
        }
        /* Large sizes: the onesweep path, several tiles and portions of
         * the look-back, odd and even pass counts in place. */
        const size_t big[] = {(size_t)1 << 20, ((size_t)1 << 22) + 12345,
                              (size_t)1 << 24};
        for (size_t n : big) {
            if (n > max_n || (quick && n > ((size_t)1 << 22)))
                continue;
            const config cs[] = {
                {PARSUM_U32, 0, false, false, 0, 0, false, false, 0},
                {PARSUM_U32, 4, false, false, 0, 0, false, false, 0},
                {PARSUM_U64, 0, false, true, 0, 0, false, false, 0},
                {PARSUM_U64, 8, false, false, 0, 0, true, false, 0},
                {PARSUM_F32, 0, false, false, 0, 0, false, false, 1},
                {PARSUM_F64, 16, false, true, 0, 0, false, false, 1},
                {PARSUM_I32, 0, true, false, 0, 0, false, false, 0},
                {PARSUM_U32, 4, false, false, 3, 27, true, false, 0},
                {PARSUM_U32, 0, false, false, 0, 0, true, false, 2},
                {PARSUM_I16, 3, false, false, 0, 0, false, true, 0},
                {PARSUM_U8, 0, false, false, 0, 0, false, false, 3},
            };
            for (const config &c : cs)
                run(ctx, c, n, nullptr, false, rng);
            for (int kind = 0; kind < 3; kind++) {
                std::vector<uint64_t> off = make_offsets(n, kind, rng);
                config c = {PARSUM_U32, kind == 1 ? (size_t)4 : 0, false,
                            kind == 2, 0, 0, false, false, 0};
                run(ctx, c, n, &off, false, rng);
            }
        }
        /* Invalid offsets: reported, nothing outside the arrays touched
         * (compute-sanitizer shows the latter). */
        {
            const size_t n = 10000;
            std::vector<uint64_t> off = {0, 50, 20, 9000, 12000, 10000};
            config c = {PARSUM_U32, 4, false, false, 0, 0, false, false, 0};
            run(ctx, c, n, &off, true, rng);
            off = {5, 100, 10000};
            run(ctx, c, n, &off, true, rng);
            off = {0, 100, 9999};
            run(ctx, c, n, &off, true, rng);
            off = {0, ~0ull, 10000};
            run(ctx, c, n, &off, true, rng);
        }
    } catch (const fatal &) {
        printf("stopped after a CUDA error\n");
        failures++;
    }
    printf("sort_check: %d cases, %d failures\n", cases, failures);
    parsum_context_destroy(ctx);
    return failures ? 1 : 0;
}
