#!/usr/bin/env bash
# Harbor — builds everything (libraries, tools, tests) and fails on any
# compiler warning in Harbor's own sources: the project builds warning-free.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=${1:-debug}
mkdir -p .build
log=.build/build-$configuration.log
echo "build: swift build -c $configuration --build-tests (log: $log)"
set +e
swift build -c "$configuration" --build-tests >"$log" 2>&1
status=$?
set -e
if [[ $status -ne 0 ]]; then
    grep -E "error:" -A3 "$log" | head -80 >&2 || tail -40 "$log" >&2
    echo "build: FAILED (exit $status)" >&2
    exit "$status"
fi
warnings=$(grep -E "^$PWD/(Sources|Tests|Examples)/.*warning:" "$log" | sort -u || true)
if [[ -n $warnings ]]; then
    echo "$warnings" >&2
    echo "build: FAILED: $(echo "$warnings" | wc -l) warning(s) in Harbor's sources" >&2
    exit 1
fi
echo "build: $(grep -E "Build complete" "$log" | tail -1), no warnings"
