#!/usr/bin/env bash
# Harbor — model checking: the port protocol in Promela (Model/, Docs/Model.md),
# checked exhaustively by spin. Each model must pass; each planted bug must
# make its model fail, or this script fails (a property that cannot fail is
# worthless). Installs nothing (Scripts/install-deps.sh installs spin).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v spin >/dev/null || { echo "model: spin is missing (Scripts/install-deps.sh installs it)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "model: gcc is missing" >&2; exit 1; }

build=.build-model
rm -rf "$build"
mkdir -p "$build"
status=0

# run NAME MODEL EXPECT [spin -D flags...]: EXPECT is pass or fail.
run() {
    local name=$1 model=$2 expect=$3
    shift 3
    local dir="$build/$name"
    mkdir -p "$dir"
    cp "Model/$model" "$dir/"
    (cd "$dir" && timeout 60 spin -a "$@" "$model" >spin.log 2>&1) || {
        echo "model: $name: spin -a failed (see $dir/spin.log)" >&2; status=1; return; }
    # -DSAFETY: safety properties (assertions, invalid end states); -DCOLLAPSE:
    # exhaustive, compressed state storage (no bitstate hashing).
    (cd "$dir" && timeout 120 gcc -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM=3072 -o pan pan.c >gcc.log 2>&1) || {
        echo "model: $name: gcc failed (see $dir/gcc.log)" >&2; status=1; return; }
    local started=$SECONDS
    (cd "$dir" && timeout 300 nice ./pan -m100000 >pan.log 2>&1) || true
    local elapsed=$((SECONDS - started))
    local log="$dir/pan.log"
    local states
    states=$(awk '/states, stored/ {print $1; exit}' "$log")
    if grep -q "depth too small\|max search depth too small" "$log"; then
        echo "model: $name: search truncated (depth too small; see $log)" >&2; status=1; return
    fi
    if grep -q "out of memory" "$log"; then
        echo "model: $name: pan ran out of memory (see $log)" >&2; status=1; return
    fi
    local found
    if grep -q "errors: 0" "$log"; then found=pass; else found=fail; fi
    if [[ $found == pass ]] && ! grep -q "Full statespace search" "$log"; then
        echo "model: $name: the search did not finish (see $log)" >&2; status=1; return
    fi
    local what
    what=$(grep -m1 -E "^pan:1: " "$log" | sed 's/^pan:1: //' || true)
    if [[ $found == "$expect" ]]; then
        if [[ $expect == pass ]]; then
            echo "model: $name: passed, exhaustive: ${states:-?} states stored, ${elapsed} s"
        else
            echo "model: $name: caught as it must be (${what:-error}), ${states:-?} states stored, ${elapsed} s"
        fi
    else
        if [[ $expect == pass ]]; then
            echo "model: $name: FAILED: ${what:-error} (trail: cd $dir && spin -t -p $* $model)" >&2
        else
            echo "model: $name: NOT CAUGHT: the planted bug passes the model (see $log)" >&2
        fi
        status=1
    fi
}

run wakeup wakeup.pml pass
run wakeup-BUG_NO_RECHECK wakeup.pml fail -DBUG_NO_RECHECK
run wakeup-BUG_SLOT_NOT_RETURNED wakeup.pml fail -DBUG_SLOT_NOT_RETURNED
run rights rights.pml pass
run rights-BUG_TRUST_RELAY rights.pml fail -DBUG_TRUST_RELAY

if [[ $status -ne 0 ]]; then
    echo "model: FAILED" >&2
    exit 1
fi
echo "model: all models passed and every planted bug was caught"
