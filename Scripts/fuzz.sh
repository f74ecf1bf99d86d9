#!/usr/bin/env bash
# Harbor — coverage-guided fuzzing of everything a peer can send (Docs/Fuzzing.md).
#
#   bash Scripts/fuzz.sh [--bounded] [--seconds N] [--minimize] [--seed] [target...]
#
# Builds the libFuzzer driver (.build-fuzz, release, with AddressSanitizer)
# and runs each target (all thirteen by default) over its committed corpus,
# Fuzz/Corpus/<target>/, printing executions and coverage (libFuzzer's
# `cov:` and `ft:`) per target. Any crash, trap, sanitizer report, leaked
# descriptor or unanswered request fails the run and keeps the input in
# .build-fuzz/artifacts/ (reproduce: HARBOR_FUZZ_TARGET=<target>
# .build-fuzz/release/harbor-fuzz <file>).
#
#   --bounded    the test command's mode: 20 s a target (or --seconds), the
#                corpus left as it is.
#   (default)    long runs, 600 s a target (or --seconds); new inputs that
#                reach new coverage are merged into the corpus (-merge=1).
#   --minimize   rewrites each corpus as a small set with the same coverage
#                (-set_cover_merge=1 over edges alone, -use_counters=0: a few
#                hundred KB for all six, where -merge keeps several MB).
#   --seed       adds the seed programs (built from Harbor's encoder) to each corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

targets_all=(packet transfer fragments regions bootstrap policy decode reassembly ledger admission coding actors xpc)
bounded=0
seconds=""
minimize=0
seed=0
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bounded) bounded=1 ;;
        --seconds) seconds="$2"; shift ;;
        --minimize) minimize=1 ;;
        --seed) seed=1 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1") ;;
    esac
    shift
done
[[ ${#targets[@]} -eq 0 ]] && targets=("${targets_all[@]}")
if [[ -z "$seconds" ]]; then
    if [[ $bounded -eq 1 ]]; then seconds=20; else seconds=600; fi
fi

scratch=.build-fuzz
started=$(date +%s)
echo "fuzz: building the driver ($scratch, release, -sanitize=fuzzer,address)"
# HARBOR_FUZZ=1 makes Package.swift declare the fuzz targets; libFuzzer
# supplies the entry points the driver calls. lld: gold cannot link
# libFuzzer's own `main` beside SwiftPM's renamed one. -sanitize-coverage=
# replaces -sanitize=fuzzer's set: the same edge counters, indirect calls
# and stack depth, without comparison tracing, which Package.swift turns
# back on for the modules that decode a peer's bytes (Docs/Fuzzing.md).
set +e
HARBOR_FUZZ=1 swift build --scratch-path "$scratch" -c release --product harbor-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,indirect-calls \
    -Xswiftc -Xllvm -Xswiftc -sanitizer-coverage-stack-depth \
    -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld 2>&1 | grep -v -E "^\[[0-9]+/[0-9]+\]"
status=${PIPESTATUS[0]}
set -e
binary="$scratch/release/harbor-fuzz"
if [[ $status -ne 0 || ! -x "$binary" ]]; then
    echo "fuzz: the build failed (exit $status)" >&2
    exit 1
fi
echo "fuzz: built in $(( $(date +%s) - started )) s"

export SWIFT_BACKTRACE=enable=no            # libFuzzer reports crashes itself
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1}
mkdir -p "$scratch/artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/harbor-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=()
for target in "${targets[@]}"; do
    corpus="Fuzz/Corpus/$target"
    mkdir -p "$corpus"
    if [[ $seed -eq 1 ]]; then
        HARBOR_FUZZ_TARGET=$target HARBOR_FUZZ_SEEDS="$corpus" "$binary"
    fi
    fresh="$work/$target"
    mkdir -p "$fresh"
    log="$scratch/artifacts/$target.log"
    dictionary=()
    [[ -f "Fuzz/Dictionaries/$target.dict" ]] && dictionary=(-dict="Fuzz/Dictionaries/$target.dict")
    set +e
    HARBOR_FUZZ_TARGET=$target "$binary" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$scratch/artifacts/$target-" "${dictionary[@]}" \
        "$fresh" "$corpus" >"$log" 2>&1
    status=$?
    set -e
    done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 || true)
    [[ -z "$done_line" ]] && done_line=$(grep -E "^#[0-9]+[[:space:]]" "$log" | grep -v NEW_FUNC | tail -1 || true)
    runs=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}' || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
    speed=$(sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p' <<<"$done_line")
    echo "fuzz: $target: ${runs:-?} executions in $seconds s (${speed:-?}/s), cov: ${cov:-?} ft: ${ft:-?}," \
        "corpus $(find "$corpus" -type f | wc -l) + $(find "$fresh" -type f | wc -l) new"
    if [[ $status -ne 0 ]]; then
        echo "fuzz: $target FAILED (exit $status); log: $log" >&2
        grep -E "harbor-fuzz:|ERROR:|SUMMARY:|Fatal error|Test unit written" "$log" | head -20 >&2 || true
        failed+=("$target")
        continue
    fi
    if [[ $bounded -eq 0 ]]; then
        # Keep only what reaches new coverage.
        HARBOR_FUZZ_TARGET=$target "$binary" -merge=1 -timeout=60 -rss_limit_mb=4096 "$corpus" "$fresh" \
            >>"$log" 2>&1 || { echo "fuzz: $target: merge failed; log: $log" >&2; failed+=("$target"); continue; }
    fi
    if [[ $minimize -eq 1 ]]; then
        minimal="$work/$target.minimal"
        mkdir -p "$minimal"
        HARBOR_FUZZ_TARGET=$target "$binary" -set_cover_merge=1 -use_counters=0 -timeout=60 -rss_limit_mb=4096 "$minimal" "$corpus" \
            >>"$log" 2>&1 || { echo "fuzz: $target: minimizing failed; log: $log" >&2; failed+=("$target"); continue; }
        rm -f "$corpus"/*
        cp "$minimal"/* "$corpus"/
        echo "fuzz: $target: corpus minimized to $(find "$corpus" -type f | wc -l) inputs, $(cat "$corpus"/* | wc -c) bytes"
    fi
done

echo "fuzz: $(( $(date +%s) - started )) s in all"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: every target ran without a crash"
