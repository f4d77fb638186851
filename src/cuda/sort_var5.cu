/*
 * sort_var5.cu - onesweep variant 5 (os_variant_of in sort_kernels.cuh),
 * compiled on its own so that the variants build in parallel.
 */
#include "sort_os.cuh"

namespace parsum_sortos {
template parsum_status os_passes_var<5>(parsum_context *, int, int,
                                        const os_args &, const os_layout &,
                                        u64);
} /* namespace parsum_sortos */
