#!/usr/bin/env bash
# bench/gpu_tune.sh - builds the CUDA scan with several tuning policies side
# by side and times each against CUB at 2^28 elements, on a machine with an
# NVIDIA GPU. A policy is a set of -D overrides of the defaults at the top
# of src/cuda/kernel_common.cuh and kernels_inst.cuh (PARSUM_K_ROWS4, PARSUM_K_ROWS8,
# PARSUM_K_LOOKBACK: 0 none (timing only), 1 groups, 2 classic, 3 classic
# folded from the left). Usage:
#   bench/gpu_tune.sh "NAME=-DFLAG=V -DFLAG=V" ...
# Prints one block of `parsum bench scan` rows per policy and dtype.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-16}
names=()
for spec in "$@"; do
    name=${spec%%=*}
    flags=${spec#*=}
    names+=("$name")
    (cmake -S . -B "build-tune-$name" -DCMAKE_BUILD_TYPE=Release -DPARSUM_CUDA=ON \
        -DPARSUM_BUILD_TESTS=OFF -DPARSUM_BUILD_EXAMPLES=OFF \
        -DCMAKE_CUDA_FLAGS="$flags" >"build-tune-$name.log" 2>&1 &&
        cmake --build "build-tune-$name" -j"$JOBS" --target parsum_cli \
            >>"build-tune-$name.log" 2>&1) || echo "build $name FAILED" &
done
wait
for name in "${names[@]}"; do
    for dt in ${DTYPES:-i32 f32 f64}; do
        echo "== $name $dt"
        "build-tune-$name/tools/parsum/parsum" bench scan --backend cuda \
            --n 2^28 --dtype "$dt" 2>&1 | grep -E '^ +268435456'
    done
done
