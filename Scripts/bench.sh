#!/usr/bin/env bash
# Harbor — builds harbor-bench in release and runs it several times, unpinned
# and pinned to one CPU, then prints the medians across runs.
#
# Why whole runs are repeated: on this kind of machine the cost of waking a
# thread on the other CPU is decided per process run (about 5 µs in one run,
# 12 µs in the next). harbor-bench interleaves every variant with the floor
# inside one run, so its ratios hold within a run; repeating runs shows how
# far the absolute figures move between runs. Pinned runs (taskset -c 0)
# put both threads on one CPU: no cross-CPU wake-up, only context switches.
#
# Usage: Scripts/bench.sh [--quick] [--runs N] [--skip-deps] [--grpc|--no-grpc] [benchmark...] [-- harbor-bench options]
#   --quick       one short run of each kind (the smoke test)
#   --runs N      process runs per kind (default 5)
#   --skip-deps   do not call Scripts/install-deps.sh
#   --grpc        build Benchmarks/grpc-peer (interface-call's gRPC reference) even with --quick
#   --no-grpc     never build it (interface-call then runs without its gRPC variant)
#   benchmark     names from `harbor-bench list` (default: all)
# grpc-peer is built (in Benchmarks/grpc-peer/.build, at most
# HARBOR_BENCH_GRPC_TIMEOUT seconds, default 7200) only when interface-call
# or all is asked for, and not with --quick unless --grpc says so.
# Environment: HARBOR_BENCH_SCRATCH (SwiftPM scratch path, default .build).
# Results go to bench-results/<UTC time>/ (git-ignored).
set -euo pipefail

cd "$(dirname "$0")/.."
runs=5
quick=0
skip_deps=0
grpc=auto
benchmarks=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; runs=1 ;;
        --runs) runs="${2:?--runs needs a number}"; shift ;;
        --skip-deps) skip_deps=1 ;;
        --grpc) grpc=yes ;;
        --no-grpc) grpc=no ;;
        --) shift; extra+=("$@"); break ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) extra+=("$1") ;;
        *) benchmarks+=("$1") ;;
    esac
    shift
done
[ ${#benchmarks[@]} -eq 0 ] && benchmarks=(all)
[ "$quick" -eq 1 ] && extra+=(--quick)

if [ "$skip_deps" -eq 0 ] && [ -x Scripts/install-deps.sh ]; then
    Scripts/install-deps.sh
fi

scratch="${HARBOR_BENCH_SCRATCH:-.build}"
echo "== building harbor-bench (release, scratch path $scratch)" >&2
swift build -c release --product harbor-bench --scratch-path "$scratch" >&2
# The bootstrap benchmarks start harbord and `harbor watch` from beside harbor-bench.
for product in harbord harbor; do swift build -c release --product "$product" --scratch-path "$scratch" >&2; done
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/harbor-bench"

# interface-call's gRPC reference lives in its own package (grpc-swift stays
# out of the main build); harbor-bench finds it through HARBOR_BENCH_GRPC_PEER.
wants_grpc=0
for name in "${benchmarks[@]}"; do
    case "$name" in all|interface-call) wants_grpc=1 ;; esac
done
[ "$grpc" = yes ] && wants_grpc=1
[ "$grpc" = no ] && wants_grpc=0
[ "$grpc" = auto ] && [ "$quick" -eq 1 ] && wants_grpc=0
if [ "$wants_grpc" -eq 1 ]; then
    echo "== building Benchmarks/grpc-peer (release, at most ${HARBOR_BENCH_GRPC_TIMEOUT:-7200} s)" >&2
    if timeout "${HARBOR_BENCH_GRPC_TIMEOUT:-7200}" swift build -c release --package-path Benchmarks/grpc-peer >&2; then
        HARBOR_BENCH_GRPC_PEER="$(swift build -c release --package-path Benchmarks/grpc-peer --show-bin-path)/grpc-peer"
        export HARBOR_BENCH_GRPC_PEER
    else
        echo "grpc-peer did not build: interface-call runs without its gRPC variant" >&2
    fi
fi

out="bench-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
results="$out/results.txt"
: > "$results"

modes=(unpinned)
if command -v taskset > /dev/null; then
    modes+=(pinned)
else
    echo "taskset not found: skipping the pinned runs" >&2
fi

{
    echo "harbor-bench on $(uname -srm), $(nproc) CPUs online, $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "runs per kind: $runs; benchmarks: ${benchmarks[*]}${extra[*]:+; options: ${extra[*]}}"
} | tee "$out/header.txt"

# Alternate the kinds so both see the same stretch of machine time.
for run in $(seq 1 "$runs"); do
    for mode in "${modes[@]}"; do
        log="$out/$mode-$run.txt"
        echo "-- run $run/$runs, $mode" >&2
        if [ "$mode" = pinned ]; then
            taskset -c 0 "$binary" "${benchmarks[@]}" "${extra[@]}" > "$log"
        else
            "$binary" "${benchmarks[@]}" "${extra[@]}" > "$log"
        fi
        grep -v '^RESULT ' "$log" | sed "s/^/[$mode $run] /"
        grep '^RESULT ' "$log" | sed "s/^RESULT /RESULT mode=$mode run=$run /" >> "$results"
    done
done

# Median, minimum and maximum across runs of each variant's median and ratio.
summarise() {
    awk '
    function field(name,   i, kv) {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
        return ""
    }
    function sortn(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    }
    function stats(list,   a, n, i) {
        n = split(list, a, " "); for (i = 1; i <= n; i++) a[i] += 0
        sortn(a, n)
        return sprintf("%7.2f %7.2f %7.2f", (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), a[1], a[n])
    }
    {
        key = field("mode") SUBSEP field("bench") SUBSEP field("variant")
        if (!(key in seen)) { seen[key] = 1; order[++count] = key }
        medians[key] = medians[key] " " field("median_us")
        ratios[key] = ratios[key] " " field("ratio")
        rounds[key] = rounds[key] " " field("round_ratio")
        cpu[key] = cpu[key] " " field("cpu_us")
        if (field("ref") != "") {
            refname[key] = field("ref")
            refs[key] = refs[key] " " field("ref_ratio")
            refrounds[key] = refrounds[key] " " field("round_ref_ratio")
        }
    }
    END {
        printf "%-9s %-21s %23s %23s %23s %7s\n", "mode", "variant",
            "median µs: med min max", "×floor: med min max", "round ×floor: med min max", "CPU µs"
        for (i = 1; i <= count; i++) {
            split(order[i], k, SUBSEP)
            split(stats(cpu[order[i]]), c, " ")
            if (k[2] != bench || k[1] != lastmode) { bench = k[2]; print "-- " bench }
            lastmode = k[1]
            printf "%-9s %-21s %23s %23s %23s %7s\n", k[1], k[3],
                stats(medians[order[i]]), stats(ratios[order[i]]), stats(rounds[order[i]]), c[1]
        }
        header = 0
        for (i = 1; i <= count; i++) {
            if (!(order[i] in refname)) continue
            if (!header) {
                printf "\n%-9s %-34s %-12s %23s %23s\n", "mode", "variant", "against",
                    "×ref: med min max", "round ×ref: med min max"
                header = 1
            }
            split(order[i], k, SUBSEP)
            printf "%-9s %-34s %-12s %23s %23s\n", k[1], k[2] "/" k[3], refname[order[i]],
                stats(refs[order[i]]), stats(refrounds[order[i]])
        }
    }' "$results"
}

echo
echo "== summary across runs (each run: medians pooled over its interleaved rounds)"
summarise | tee "$out/summary.txt"
echo "(logs: $out)"
