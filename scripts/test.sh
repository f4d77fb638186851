#!/usr/bin/env bash
# Builds parsum with its tests (Release) into build/ and runs every test,
# the > 2^31-element one included, through CTest. Installs the Debian
# packages it needs first when any is missing. Exits non-zero when a test
# fails. Tests of a backend that is not present (CUDA without a GPU)
# report "skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# libstb-dev: PNG, JPEG and HDR files; python3-opencv: the image tests'
# outside oracle (they skip without it).
ensure_packages cmake make gcc g++ libc6-dev pkg-config libcmocka-dev \
    libstb-dev python3-opencv

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPARSUM_BUILD_TESTS=ON
cmake --build build -j"$(njobs)"
ctest --test-dir build --output-on-failure -j"$(njobs)"
