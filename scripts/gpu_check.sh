#!/usr/bin/env bash
# scripts/gpu_check.sh - everything the CUDA backend needs checked on a
# machine with an NVIDIA GPU, in one run from the repository root:
#
#   1. build      Release, -DPARSUM_CUDA=ON, sm_90, into build-gpu/
#   2. tests      ctest: the CUDA tests (*_cuda) but the huge one, and the
#                 examples (on the GPU, the automatic backend there)
#   3. bench      parsum bench scan/reduce --backend cuda: size sweeps for
#                 i32 f32 f64 u8 against CUB and cudaMemcpy, scan variants
#                 at 2^28, then the CPU scaling benchmark at 2^28
#      imgbench   summed-area table and box filter (8192 x 8192) on the GPU
#                 and on the 16-core CPU
#      histbench  histograms against CUB at 2^28 samples, and on the
#                 16-core CPU; tone mapping of a generated HDR image
#      sortbench  radix sort, segmented sort against CUB at 2^28 / 2^24
#                 keys, the comparison sort, and the sorts on the 16-core CPU
#      selbench   select, partition, unique, run-length encoding against CUB
#                 at 2^28, and on the 16-core CPU at 2^26
#      segbench   the segmented and keyed benchmarks against CUB at 2^26
#                 (every segment distribution), and on the 16-core CPU
#   4. sanitize   compute-sanitizer memcheck and racecheck on reduced test
#                 runs (PARSUM_TEST_QUICK=1)
#   5. tests      the > 2^31-element test on the GPU, then the CPU tests
#   6. summary    a short table, printed last
# The most telling steps come first: when the budget runs out, the rest is
# skipped (rerun with e.g. STEPS="sanitize tests"; build-gpu/ is reused).
#
# Environment:
#   OUT          if set, a folder that receives logs.tgz (every log of
#                build-gpu/gpu_check) and summary_full.txt at the end
#   CMOCKA_ROOT  a prefix where the Debian packages libcmocka0,
#                libcmocka-dev (and, if the machine has no pkg-config,
#                pkgconf, pkgconf-bin, libpkgconf3) were unpacked with
#                `dpkg -x`; used when the system has no cmocka. Unset, and
#                with no cmocka on the system, the .deb files in .debs/ are
#                unpacked into build-gpu/debs-root and used
#   STEPS        steps to run (default "build tests sanitize segbench
#                bench"); the
#                summary always runs
#   BUDGET       seconds the whole run may take (default 470); a step that
#                would start too late is skipped and says so
#   JOBS         build jobs (default 16)
#   TARGETS      build only these targets (space-separated; default all),
#                e.g. "parsum_cli test_integral" for a quick check
#   RACECHECK    0 skips the racecheck runs of step 4 (memcheck still runs)
#
# Exit status: 0 when every step that ran passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

START=$(date +%s)
BUDGET=${BUDGET:-470}
JOBS=${JOBS:-16}
STEPS=${STEPS:-"build tests sanitize segbench bench"}
BUILD=build-gpu
LOG=$BUILD/gpu_check
rm -rf "$LOG"
mkdir -p "$LOG"
SUMMARY="$LOG/summary.txt"
: >"$SUMMARY"
FAILED=0

elapsed() { echo $(($(date +%s) - START)); }
left() { echo $((BUDGET - $(elapsed))); }
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
note() { printf '%-34s %-8s %s\n' "$1" "$2" "${3:-}" | tee -a "$SUMMARY"; }

# run NAME MIN_SECONDS MAX_SECONDS CMD... : runs CMD with a time limit of
# MAX_SECONDS (or what is left of the budget), logging to $LOG/NAME.log,
# unless fewer than MIN_SECONDS are left.
run() {
    local name=$1 min=$2 max=$3
    shift 3
    local l
    l=$(left)
    if [ "$l" -lt "$min" ]; then
        note "$name" SKIPPED "(${l}s of the budget left)"
        return 2
    fi
    [ "$max" -gt "$l" ] && max=$l
    local t0 rc
    t0=$(date +%s)
    timeout --kill-after=10 "$max" "$@" >"$LOG/$name.log" 2>&1
    rc=$?
    local dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        note "$name" ok "${dt}s"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        note "$name" TIMEOUT "after ${dt}s (log: $name.log)"
        FAILED=1
    else
        note "$name" FAILED "rc=$rc, ${dt}s (log: $name.log)"
        FAILED=1
    fi
    return $rc
}

# ---- environment ------------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "host: $(uname -a)"
    nvidia-smi -L 2>&1 || true
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
        --format=csv 2>&1 || true
    nvcc --version 2>&1 | tail -n 2 || true
    nproc
} >"$LOG/env.log" 2>&1
note "device" info "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"

# cmocka from unpacked Debian packages (the GPU image has none). Without
# CMOCKA_ROOT, the packages in .debs/ (if carried) are unpacked here.
CMAKE_EXTRA=()
if [ -z "${CMOCKA_ROOT:-}" ] && ! pkg-config --exists cmocka 2>/dev/null &&
    [ -d .debs ] && command -v dpkg >/dev/null 2>&1; then
    CMOCKA_ROOT=$BUILD/debs-root
    mkdir -p "$CMOCKA_ROOT"
    for d in .debs/*.deb; do dpkg -x "$d" "$CMOCKA_ROOT"; done
fi
if [ -n "${CMOCKA_ROOT:-}" ]; then
    R=$(cd "$CMOCKA_ROOT" && pwd)
    LIBDIR=$(dirname "$(find "$R" -name 'libcmocka.so*' -print -quit)")
    PCDIR=$(dirname "$(find "$R" -name 'cmocka.pc' -print -quit)")
    export PKG_CONFIG_PATH="$PCDIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export PKG_CONFIG_SYSROOT_DIR="$R"
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if ! command -v pkg-config >/dev/null 2>&1; then
        if [ -x "$R/usr/bin/pkgconf" ]; then
            CMAKE_EXTRA+=("-DPKG_CONFIG_EXECUTABLE=$R/usr/bin/pkgconf")
        else
            # No pkg-config at all: a stand-in that knows cmocka only.
            SHIM="$BUILD/pkg-config-cmocka"
            mkdir -p "$BUILD"
            cat >"$SHIM" <<EOF
#!/bin/sh
mod=""; for a in "\$@"; do case "\$a" in --version) echo 0.29.2; exit 0;; -*) ;; *) mod="\$a";; esac; done
[ "\$mod" = cmocka ] || exit 1
for a in "\$@"; do case "\$a" in
  --modversion) echo 1.1.5;;
  --cflags|--cflags-only-I) echo "-I$R/usr/include";;
  --libs) echo "-L$LIBDIR -lcmocka";;
  --libs-only-L) echo "-L$LIBDIR";;
  --libs-only-l) echo "-lcmocka";;
  --variable=prefix) echo "$R/usr";;
  --variable=includedir) echo "$R/usr/include";;
  --variable=libdir) echo "$LIBDIR";;
  --cflags-only-other|--libs-only-other|--variable=*) echo "";;
esac; done
exit 0
EOF
            chmod +x "$SHIM"
            CMAKE_EXTRA+=("-DPKG_CONFIG_EXECUTABLE=$(pwd)/$SHIM")
        fi
    fi
fi

# ---- 1. build ---------------------------------------------------------------
PARSUM=$BUILD/tools/parsum/parsum
if want build; then
    GEN=()
    command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD/Makefile" ] && GEN=(-G Ninja)
    run configure 30 120 cmake -S . -B "$BUILD" "${GEN[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DPARSUM_CUDA=ON \
        -DPARSUM_CUDA_ARCHITECTURES=90 -DPARSUM_BUILD_TESTS=ON \
        "${CMAKE_EXTRA[@]}"
    # shellcheck disable=SC2086
    run build 60 300 cmake --build "$BUILD" -j"$JOBS" \
        ${TARGETS:+--target $TARGETS}
    if [ ! -x "$PARSUM" ]; then
        note "build" FAILED "no $PARSUM: nothing else can run"
        cat "$SUMMARY"
        exit 1
    fi
fi

# ---- 2. tests ---------------------------------------------------------------
if want tests; then
    # The examples run on the automatic backend: the GPU here.
    run ctest_cuda 60 240 ctest --test-dir "$BUILD" -L 'cuda|examples' \
        -LE huge --output-on-failure -j3
    # Look-back state tagged with the call: through the re-zeroing of the
    # tags' range, and the zeroing path it replaces.
    run tags_rezero 30 120 env PARSUM_TEST_BACKEND=cuda PARSUM_TEST_QUICK=1 \
        PARSUM_CUDA_TAG_FIRST=1073741800 "$BUILD/tests/parsum_tests" test_scan
    run tags_off 30 120 env PARSUM_TEST_BACKEND=cuda PARSUM_TEST_QUICK=1 \
        PARSUM_CUDA_SCAN_TAGS=0 "$BUILD/tests/parsum_tests" test_scan
fi

# ---- 3. benchmarks ----------------------------------------------------------
if want imgbench; then
    run bench_integral 20 90 "$PARSUM" bench integral --backend cuda --n 2^26
    run bench_boxfilter 20 90 "$PARSUM" bench boxfilter --backend cuda --n 2^26
    run bench_cpu_integral 20 90 "$PARSUM" bench integral --backend cpu \
        --n 2^26 --threads 16
    run bench_cpu_boxfilter 20 90 "$PARSUM" bench boxfilter --backend cpu \
        --n 2^26 --threads 16
fi
if want histbench; then
    run bench_histogram 20 120 "$PARSUM" bench histogram --backend cuda \
        --n 2^28
    run bench_cpu_histogram 20 120 "$PARSUM" bench histogram --backend cpu \
        --n 2^28 --threads 16
fi
if want sortbench; then
    run bench_sort 30 240 "$PARSUM" bench sort --backend cuda --n 2^28
    run bench_cpu_sort 30 180 "$PARSUM" bench sort --backend cpu --n 2^26 \
        --threads 16
    run bench_cpu_sort_2e28 30 180 "$PARSUM" bench sort --backend cpu \
        --n 2^28 --threads 16
fi
if want selbench; then
    for w in select partition partition_unstable unique rle; do
        run "bench_$w" 20 90 "$PARSUM" bench "$w" --backend cuda --n 2^28
        run "bench_cpu_$w" 20 90 "$PARSUM" bench "$w" --backend cpu \
            --n 2^26 --threads 16
    done
fi
if want segbench; then
    for w in segscan segreduce scanbykey reducebykey; do
        for dt in i32 f64; do
            run "bench_${w}_$dt" 20 90 "$PARSUM" bench "$w" --backend cuda \
                --n 2^26 --dtype "$dt"
        done
    done
    run bench_segscan_i32_offsets 20 90 "$PARSUM" bench segscan \
        --backend cuda --n 2^26 --dtype i32 --seg-kind offsets
    run bench_cpu_segscan_i32 20 120 "$PARSUM" bench segscan --backend cpu \
        --n 2^26 --threads 16
    run bench_cpu_segreduce_i32 20 120 "$PARSUM" bench segreduce \
        --backend cpu --n 2^26 --threads 16
fi
if want bench; then
    J="$LOG/bench.jsonl"
    : >"$J"
    for dt in i32 f32 f64 u8; do
        run "bench_scan_$dt" 25 120 "$PARSUM" bench scan --backend cuda \
            --n sweep --dtype "$dt"
        run "bench_reduce_$dt" 25 120 "$PARSUM" bench reduce --backend cuda \
            --n sweep --dtype "$dt"
    done
    for v in "--exclusive" "--reverse" "--inplace" "--exclusive --reverse"; do
        tag=$(echo "$v" | tr -d '-' | tr ' ' '_')
        # shellcheck disable=SC2086 # $v holds one or two flags
        run "bench_scan_i32_$tag" 15 60 "$PARSUM" bench scan --backend cuda \
            --n 2^28 --dtype i32 $v
    done
    run bench_scan_f32_max 15 60 "$PARSUM" bench scan --backend cuda \
        --n 2^28 --dtype f32 --op max
    run bench_reduce_f32_max 15 60 "$PARSUM" bench reduce --backend cuda \
        --n 2^28 --dtype f32 --op max
    # Machine-readable: the 2^28 points of the main cases.
    for w in scan reduce; do
        for dt in i32 f32 f64 u8; do
            [ "$(left)" -gt 15 ] || break
            timeout 60 "$PARSUM" bench "$w" --backend cuda --n 2^28 \
                --dtype "$dt" --json >>"$J" 2>>"$LOG/bench_json.err"
        done
    done
    # CPU scaling at 2^28 (16 threads).
    run bench_cpu_scan_i32 15 60 "$PARSUM" bench scan --backend cpu \
        --n 2^28 --threads 16
    run bench_cpu_reduce_i32 15 60 "$PARSUM" bench reduce --backend cpu \
        --n 2^28 --threads 16
    run bench_cpu_scan_f64 15 60 "$PARSUM" bench scan --backend cpu \
        --n 2^28 --threads 16 --dtype f64
fi

# ---- 4. compute-sanitizer ---------------------------------------------------
if want sanitize; then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    san() { # NAME TOOL TEST MAXSECONDS
        local name=$1 tool=$2 prog=$3 secs=$4
        shift 4
        run "$name" 30 "$secs" env PARSUM_TEST_BACKEND=cuda PARSUM_TEST_QUICK=1 \
            "$CS" --tool "$tool" --error-exitcode 99 --print-limit 20 "$@" \
            "$BUILD/tests/$prog"
    }
    san memcheck_scan memcheck test_scan 100
    san memcheck_custom memcheck test_custom 60
    # test_errors provokes failing CUDA calls on purpose (out of memory):
    # memcheck must not count those API errors.
    san memcheck_errors memcheck test_errors 40 --report-api-errors no
    san memcheck_segmented memcheck test_segmented 90
    san memcheck_select memcheck test_select 60
    san memcheck_partition memcheck test_partition 60
    san memcheck_unique memcheck test_unique 60
    san memcheck_integral memcheck test_integral 90
    san memcheck_box_filter memcheck test_box_filter 90
    san memcheck_histogram memcheck test_histogram 120
    san memcheck_tonemap memcheck test_tonemap 90
    san memcheck_sort memcheck test_sort 150
    san memcheck_sort_errors memcheck test_sort_errors 40
    # The table kernels share block scans through shared memory; the
    # histogram kernels count in it.
    san racecheck_integral racecheck test_integral 150
    san racecheck_histogram racecheck test_histogram 150
    # The radix sort ranks keys and scans digit counts in shared memory
    # (test_sizes and test_segmented: every kernel, a fraction of the
    # cases).
    PARSUM_TEST_FILTER="test_s*" san racecheck_sort racecheck test_sort 200
    if [ "${RACECHECK:-1}" != 0 ]; then
        # racecheck runs test_scan about 30x slower than plain: ~250 s.
        san racecheck_scan racecheck test_scan 300
        san racecheck_custom racecheck test_custom 40
        san racecheck_segmented racecheck test_segmented 150
    fi
    for f in "$LOG"/memcheck_*.log "$LOG"/racecheck_*.log; do
        [ -f "$f" ] && grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|Hazard" "$f" |
            tail -n 2 | sed "s|^|  $(basename "$f" .log): |" | tee -a "$SUMMARY"
    done
fi

# ---- 5. the > 2^31-element test on the GPU, then the CPU tests ------------
if want tests; then
    run ctest_huge_cuda 60 150 ctest --test-dir "$BUILD" -R '^huge_cuda$' \
        --output-on-failure
    run ctest_cpu 30 150 ctest --test-dir "$BUILD" -L cpu -LE huge \
        --output-on-failure -j"$JOBS"
fi

# ---- summary ----------------------------------------------------------------
{
    echo
    echo "==== gpu_check summary ($(elapsed)s; logs in $LOG)"
    cat "$SUMMARY"
    for f in "$LOG"/ctest_*.log; do
        [ -f "$f" ] && echo "  $(basename "$f" .log): $(grep -E 'tests passed|tests failed' "$f" | tail -n 1)$(grep -c '(Skipped)' "$f" | sed 's/^0$//; s/^[1-9].*/ (& skipped)/')"
    done
    if [ -s "${J:-/nonexistent}" ] && command -v python3 >/dev/null 2>&1; then
        echo
        echo "2^28 elements (GB/s = bytes read + written / time; bound = memcpy for scan, read kernel for reduce)"
        python3 - "$J" <<'EOF'
import json, sys
print(f"{'what':7} {'dtype':5} {'parsum GB/s':>11} {'CUB GB/s':>9} {'vs CUB':>7} {'bound GB/s':>10} {'%bound':>7}  check")
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    bound = r["copy_gbs"] if r["what"] == "scan" else r["read_gbs"]
    cub = r.get("cub_gbs")
    sp = r.get("speedup_vs_cub")
    print(f"{r['what']:7} {r['dtype']:5} {r['parsum_gbs']:11.1f} "
          f"{(f'{cub:.1f}' if cub else 'n/a'):>9} {(f'{sp:.3f}' if sp else 'n/a'):>7} "
          f"{bound:10.1f} {100 * r['ratio_to_bound']:6.1f}%  {r['check']}")
EOF
    fi
    echo
    echo "latency, n = 2^16 .. 2^20 (ms; from the sweeps):"
    for f in "$LOG"/bench_scan_i32.log "$LOG"/bench_reduce_i32.log "$LOG"/bench_scan_f32.log; do
        [ -f "$f" ] && grep -E '^ +(65536|262144|1048576)\*? ' "$f" |
            awk -v t="$(basename "$f" .log)" '{printf "  %-18s n=%-9s parsum %s ms  cub %s ms  cub/ours %s\n", t, $1, $2, $4, $6}'
    done
    echo
    [ $FAILED -eq 0 ] && echo "gpu_check: all steps passed" || echo "gpu_check: SOME STEPS FAILED (see above)"
} | tee -a "$LOG/summary_full.txt"
if [ -n "${OUT:-}" ]; then
    # One archive: a results folder may hand back only a few files.
    tar -czf "$OUT/logs.tgz" -C "$LOG" . && cp "$LOG/summary_full.txt" "$OUT/"
fi
exit $FAILED
