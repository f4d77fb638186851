/*
 * select_custom.cu - custom predicates (PARSUM_SELECT_CUSTOM) on the GPU.
 * The caller gives the predicate as CUDA source (parsum_custom_pred:
 * cuda_type, cuda_type_name, cuda_pred); it is compiled at run time with
 * NVRTC (custom.cu's parsum__cuda_nvrtc_load) together with one small
 * kernel that evaluates it over the keys and writes packed selection bits,
 * and cached in the context beside the custom operators and comparators:
 * one compilation per distinct predicate, key size and context, the 32
 * most recently used kept.
 *
 * The select slot (select.cu) then runs its PARSUM_SELECT_BITS path on
 * those bits. Compiling the user's code into select_kernel itself would
 * mean embedding select_kernels.cuh and compiling its group counts for
 * every predicate: a much larger program for the first call to wait for.
 * The bits cost one extra read of the keys and n / 8 bytes written (and
 * read back by the pass, twice for a partition), and the predicate runs
 * exactly once per key, also for a partition, whose count pass would
 * otherwise evaluate it a second time.
 *
 * The program NVRTC sees:
 *   <pred_bits_kernel below>
 *   #line 1 "cuda_type"       <cp->cuda_type>
 *   typedef <cuda_type_name> parsum_user_T;
 *   struct parsum_user_pred {
 *       bool operator()(const parsum_user_T &x) const {
 *   #line 1 "cuda_pred"       <cp->cuda_pred> } };
 *   sizeof/alignof of the type, as device globals
 * so compiler messages name "cuda_type" or "cuda_pred" and the line in the
 * user's own text. sizeof(T) must equal the key size (checked once, when
 * the program is built); the keys must be aligned to alignof(T) (checked
 * at every call).
 */
#include "cuda_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARSUM__CUDA_MAX_PRED_MODULES 32

namespace {

/* The kernel's text, first in every program (no includes: NVRTC gets no
 * headers). One warp per 32-key word: lane l's verdict is bit l of the
 * warp's ballot, so each word is written whole by one store, with no
 * atomics and no read of the bit array; UNROLL words per warp and
 * iteration keep several key loads in flight per thread. */
const char kernel_src[] =
    "namespace parsum_ps {\n"
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "constexpr int UNROLL = 4;\n"
    "template <class T, class P>\n"
    "__global__ void __launch_bounds__(256)\n"
    "pred_bits_kernel(const T *keys, u64 n, u32 *bits)\n"
    "{\n"
    "  P pred;\n"
    "  const u64 words = (n + 31) / 32;\n"
    "  const u32 lane = threadIdx.x & 31u;\n"
    "  const u64 warps = (u64)gridDim.x * (blockDim.x / 32);\n"
    "  for (u64 w0 = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32 *\n"
    "                UNROLL;\n"
    "       w0 < words; w0 += warps * UNROLL) {\n"
    "    bool f[UNROLL];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < UNROLL; ++u) {\n"
    "      const u64 i = (w0 + u) * 32 + lane;\n"
    "      f[u] = i < n && pred(keys[i]);\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < UNROLL; ++u) {\n"
    "      const u32 b = __ballot_sync(0xffffffffu, f[u]);\n"
    "      if (lane == 0 && w0 + u < words)\n"
    "        bits[w0 + u] = b;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "} /* namespace parsum_ps */\n";

const char *const kernel_exprs[1] = {
    "&parsum_ps::pred_bits_kernel<parsum_user_T, parsum_user_pred>"};

const unsigned BLOCK = 256;
const unsigned UNROLL = 4; /* as in kernel_src */

} /* namespace */

struct parsum__cuda_pred_module {
    parsum__cuda_pred_module *next;
    char *type_src;
    char *type_name;
    char *pred_src;
    size_t key_size;
    size_t key_align;
    cudaLibrary_t lib;
    cudaKernel_t bits;
};

namespace {

void pred_module_free(parsum__cuda_pred_module *m)
{
    if (m == NULL)
        return;
    if (m->lib != NULL)
        (void)cudaLibraryUnload(m->lib);
    free(m->type_src);
    free(m->type_name);
    free(m->pred_src);
    free(m);
}

/* The program text; NULL if out of memory. */
char *build_source(const parsum_custom_pred *cp)
{
    static const char wrapper_fmt[] =
        "\n#line 1 \"cuda_type\"\n"
        "%s\n"
        "#line 1 \"parsum_pred_wrapper\"\n"
        "typedef %s parsum_user_T;\n"
        "struct parsum_user_pred {\n"
        "  __device__ __forceinline__ bool operator()(const parsum_user_T &x)"
        " const {\n"
        "#line 1 \"cuda_pred\"\n"
        "%s\n"
        "#line 5 \"parsum_pred_wrapper\"\n"
        "  }\n"
        "};\n"
        "extern \"C\" __device__ unsigned long long parsum_sizeof_T = "
        "sizeof(parsum_user_T);\n"
        "extern \"C\" __device__ unsigned long long parsum_alignof_T = "
        "alignof(parsum_user_T);\n";
    const char *type = cp->cuda_type != NULL ? cp->cuda_type : "";
    const size_t head = sizeof kernel_src - 1;
    size_t len = head + sizeof wrapper_fmt + strlen(type) +
                 strlen(cp->cuda_type_name) + strlen(cp->cuda_pred) + 1;
    char *src = static_cast<char *>(malloc(len));
    if (src == NULL)
        return NULL;
    memcpy(src, kernel_src, head);
    snprintf(src + head, len - head, wrapper_fmt, type, cp->cuda_type_name,
             cp->cuda_pred);
    return src;
}

/* Compiles and loads cp for keys of key_size bytes into a new module (not
 * yet in the cache). */
parsum_status build_module(parsum_context *ctx, const parsum_custom_pred *cp,
                           size_t key_size, parsum__cuda_pred_module **out)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    *out = NULL;
    parsum__cuda_pred_module *m =
        static_cast<parsum__cuda_pred_module *>(calloc(1, sizeof *m));
    char *src = build_source(cp);
    if (m != NULL) {
        m->type_src = parsum__cuda_strdup(cp->cuda_type != NULL ? cp->cuda_type : "");
        m->type_name = parsum__cuda_strdup(cp->cuda_type_name);
        m->pred_src = parsum__cuda_strdup(cp->cuda_pred);
        m->key_size = key_size;
    }
    if (m == NULL || m->type_src == NULL || m->type_name == NULL ||
        m->pred_src == NULL || src == NULL) {
        free(src);
        pred_module_free(m);
        return parsum__fail(ctx, PARSUM_ERR_OUT_OF_MEMORY,
                            "%s: out of host memory", st->api);
    }
    parsum_status s = parsum__cuda_nvrtc_load(ctx, src,
                                              "the custom predicate",
                                              kernel_exprs, 1, &m->lib,
                                              &m->bits);
    free(src);
    unsigned long long size = 0, align = 0;
    if (s == PARSUM_OK)
        s = parsum__cuda_library_u64(ctx, m->lib, "parsum_sizeof_T", &size);
    if (s == PARSUM_OK)
        s = parsum__cuda_library_u64(ctx, m->lib, "parsum_alignof_T", &align);
    if (s == PARSUM_OK && size != key_size)
        s = parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                         "%s: the keys have %zu bytes, but sizeof(%s) = %llu "
                         "(custom->cuda_type_name) in the CUDA source",
                         st->api, key_size, m->type_name, size);
    if (s != PARSUM_OK) {
        pred_module_free(m);
        return s;
    }
    m->key_align = (size_t)align;
    *out = m;
    return PARSUM_OK;
}

bool same_pred(const parsum__cuda_pred_module *m, const parsum_custom_pred *cp,
               size_t key_size)
{
    const char *type = cp->cuda_type != NULL ? cp->cuda_type : "";
    return m->key_size == key_size && strcmp(m->pred_src, cp->cuda_pred) == 0 &&
           strcmp(m->type_name, cp->cuda_type_name) == 0 &&
           strcmp(m->type_src, type) == 0;
}

/* The cached module for (cp, key_size), compiling it on first use. */
parsum_status get_module(parsum_context *ctx, const parsum_custom_pred *cp,
                         size_t key_size, parsum__cuda_pred_module **out)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    parsum__cuda_pred_module **link = &st->pred_modules;
    for (parsum__cuda_pred_module *m = st->pred_modules; m != NULL;
         link = &m->next, m = m->next) {
        if (same_pred(m, cp, key_size)) {
            if (m != st->pred_modules) { /* move to the front */
                *link = m->next;
                m->next = st->pred_modules;
                st->pred_modules = m;
            }
            *out = m;
            return PARSUM_OK;
        }
    }
    parsum__cuda_pred_module *m = NULL;
    parsum_status s = build_module(ctx, cp, key_size, &m);
    if (s != PARSUM_OK)
        return s;
    if (st->pred_module_count >= PARSUM__CUDA_MAX_PRED_MODULES) {
        /* Unload the least recently used; its kernel may still be queued. */
        PARSUM_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
        parsum__cuda_pred_module **last = &st->pred_modules;
        while ((*last)->next != NULL)
            last = &(*last)->next;
        pred_module_free(*last);
        *last = NULL;
        st->pred_module_count--;
    }
    m->next = st->pred_modules;
    st->pred_modules = m;
    st->pred_module_count++;
    *out = m;
    return PARSUM_OK;
}

} /* namespace */

void parsum__cuda_pred_modules_free(parsum__cuda_state *st)
{
    parsum__cuda_pred_module *m = st->pred_modules;
    while (m != NULL) {
        parsum__cuda_pred_module *next = m->next;
        pred_module_free(m);
        m = next;
    }
    st->pred_modules = NULL;
    st->pred_module_count = 0;
}

parsum_status parsum__cuda_pred_bits(parsum_context *ctx,
                                     const parsum_custom_pred *cp,
                                     const void *keys, size_t n,
                                     size_t key_size, uint32_t *bits)
{
    parsum__cuda_state *st = parsum__cuda_st(ctx);
    parsum__cuda_pred_module *m = NULL;
    parsum_status s = get_module(ctx, cp, key_size, &m);
    if (s != PARSUM_OK)
        return s;
    if ((uintptr_t)keys % m->key_align != 0)
        return parsum__fail(ctx, PARSUM_ERR_INVALID_ARGUMENT,
                            "%s: the keys (%p) are not aligned to alignof(%s) "
                            "= %zu, which the custom predicate's CUDA source "
                            "reads them as",
                            st->api, keys, m->type_name, m->key_align);
    if (n == 0)
        return PARSUM_OK;
    unsigned long long nn = n;
    void *params[] = {&keys, &nn, &bits};
    const unsigned long long words = (nn + 31) / 32;
    const unsigned grid =
        parsum_cu::aux_grid(ctx, words, (BLOCK / 32) * UNROLL);
    PARSUM_CUDA_TRY(ctx, cudaLaunchKernel(reinterpret_cast<const void *>(
                                              m->bits),
                                          dim3(grid), dim3(BLOCK), params, 0,
                                          st->stream));
    return PARSUM_OK;
}
