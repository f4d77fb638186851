#!/usr/bin/env bash
# bench/sort_tune.sh - compares the onesweep variants of the CUDA radix sort
# (os_variant_of in src/cuda/sort_base.cuh) from one build: each is
# forced with PARSUM_SORT_VARIANT, timed against CUB at 2^28 and 2^24 keys
# (`parsum bench sort`, which also times 2^20 keys and the segmented
# cases) and checked (`parsum_sort_check --quick`). "default" is the
# shipped choice (variant 0, or 4 below 2^22 keys). Usage:
#   bench/sort_tune.sh [BUILD_DIR]        (default: build)
# Environment: VARIANTS="default 0 1 2 3 4 5" to pick, NS="2^28 2^24".
# Prints one row per variant, case and n: parsum ms, CUB ms, x = CUB time /
# parsum time; then the check's summary per variant.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
CLI=$BUILD/tools/parsum/parsum
CHECK=$BUILD/bench/parsum_sort_check
VARIANTS=${VARIANTS:-default 0 1 2 3 4 5}
NS=${NS:-2^28 2^24}
for f in "$CLI" "$CHECK"; do
    [ -x "$f" ] || { echo "missing $f (build parsum_cli parsum_sort_check)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run_env() { # variant command...
    local v=$1
    shift
    if [ "$v" = default ]; then
        env -u PARSUM_SORT_VARIANT "$@"
    else
        PARSUM_SORT_VARIANT=$v "$@"
    fi
}
for v in $VARIANTS; do
    for n in $NS; do
        run_env "$v" "$CLI" bench sort --backend cuda --n "$n" \
            >"$tmp/bench-$v-$n.txt" 2>&1 || echo "variant $v n $n: bench FAILED (see below)"
    done
    run_env "$v" "$CHECK" --quick >"$tmp/check-$v.txt" 2>&1
    echo "rc $?" >>"$tmp/check-$v.txt"
done
printf '%-8s %-24s %11s %10s %10s %6s\n' variant case n parsum_ms cub_ms x
for v in $VARIANTS; do
    for n in $NS; do
        sed -nE 's/^(.{24}) n +([0-9]+) +parsum +([0-9.]+) ms.* cub +([0-9.]+) ms.* x *([0-9.]+).*/\1|\2|\3|\4|\5/p' \
            "$tmp/bench-$v-$n.txt" |
            while IFS='|' read -r name nn pm cm x; do
                # The 2^20 and segmented rows repeat in every run: once.
                if [ "$n" != "${NS%% *}" ] && [ "$nn" -le $((1 << 24)) ] &&
                    [[ "$name" == *2^2* ]]; then
                    continue
                fi
                printf '%-8s %-24s %11s %10s %10s %6s\n' "$v" "$name" "$nn" "$pm" "$cm" "$x"
            done
        grep -hE 'DIFFERS|error|FAILED' "$tmp/bench-$v-$n.txt" | sed "s/^/$v n $n: /" | head -5
    done
done
echo
for v in $VARIANTS; do
    printf '%-8s ' "$v"
    grep -hE 'sort_check:|^rc ' "$tmp/check-$v.txt" | tr '\n' ' '
    echo
    grep -h 'FAIL' "$tmp/check-$v.txt" | head -3 | sed "s/^/    /"
done
