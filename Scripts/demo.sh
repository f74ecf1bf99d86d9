#!/usr/bin/env bash
# Harbor — the main job, from a fresh clone on a fresh machine: installs what
# is missing, builds, and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

bash Scripts/install-deps.sh
echo "demo: building harbor-demo (release)"
mkdir -p .build
if ! swift build -c release --product harbor-demo >.build/demo-build.log 2>&1; then
    grep -E "error:" -A3 .build/demo-build.log >&2 || tail -30 .build/demo-build.log >&2
    echo "demo: build FAILED" >&2
    exit 1
fi
exec "$(swift build -c release --show-bin-path)/harbor-demo" "$@"
