#!/usr/bin/env bash
# Builds parsum (Release) into build/ and runs `parsum demo`; arguments go
# to the demo (e.g. --backend cpu). Installs the Debian packages it needs
# first when any is missing. Safe to run again: it rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# libstb-dev: `parsum image` reads and writes PNG, JPEG and HDR with it.
ensure_packages cmake make gcc g++ libc6-dev libstb-dev

# A fresh build/ gets no tests (they need cmocka); an existing one keeps
# its settings, e.g. the tests that scripts/test.sh turned on.
opts=(-DCMAKE_BUILD_TYPE=Release)
[ -f build/CMakeCache.txt ] || opts+=(-DPARSUM_BUILD_TESTS=OFF)
cmake -S . -B build "${opts[@]}" >/dev/null
cmake --build build -j"$(njobs)" --target parsum_cli
echo
exec ./build/tools/parsum/parsum demo "$@"
