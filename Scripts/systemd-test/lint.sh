#!/usr/bin/env bash
# Harbor — lint of the shipped unit files (Scripts/systemd/*.socket,
# *.path, *.service, the example's Examples/systemd/harbor-clock.service,
# and the per-user units Scripts/systemd-user/*, verified with --user):
# `systemd-analyze verify` must print nothing at all. Its exit
# status is not enough: unknown keys and bad values only warn, with exit 0.
#
#   bash Scripts/systemd-test/lint.sh       (as root; Scripts/test.sh runs it)
#
# verify wants each ExecStart= binary where the unit says
# (/usr/local/bin/harbord) and writes /run/systemd/systemd-units-load, so
# it runs in a private mount namespace: a tmpfs /run and a throw-away
# overlay on /usr/local holding the built harbord and clock-service
# (HARBORD_BIN, CLOCK_SERVICE_BIN, default .build/debug/…). The host is not touched. Skips (exit 0, says why)
# only without systemd-analyze or without mount namespaces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARBORD_BIN=${HARBORD_BIN:-$repo/.build/debug/harbord}
CLOCK_SERVICE_BIN=${CLOCK_SERVICE_BIN:-$repo/.build/debug/clock-service}

command -v systemd-analyze >/dev/null || { echo "unit lint: SKIPPED: no systemd-analyze (install the systemd package)"; exit 0; }
unshare --mount true 2>/dev/null || { echo "unit lint: SKIPPED: cannot create a mount namespace here (needs root)"; exit 0; }
[[ -x $HARBORD_BIN ]] || { echo "unit lint: FAILED: no harbord binary at $HARBORD_BIN (run swift build first)" >&2; exit 1; }
[[ -x $CLOCK_SERVICE_BIN ]] || { echo "unit lint: FAILED: no clock-service binary at $CLOCK_SERVICE_BIN (run swift build first)" >&2; exit 1; }

units=("$repo"/Scripts/systemd/*.socket "$repo"/Scripts/systemd/*.path "$repo"/Scripts/systemd/*.service
    "$repo"/Examples/systemd/*.service)
stage=$(mktemp -d "${TMPDIR:-/tmp}/harbor-lint.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/upper/bin" "$stage/work" "$stage/units" "$stage/user-units" "$stage/runtime"
cp "$HARBORD_BIN" "$stage/upper/bin/harbord"
cp "$CLOCK_SERVICE_BIN" "$stage/upper/bin/clock-service"
cp "${units[@]}" "$stage/units/"
cp "$repo"/Scripts/systemd-user/*.socket "$repo"/Scripts/systemd-user/*.service "$stage/user-units/"

set +e
output=$(HSD_STAGE=$stage unshare --mount -- /bin/sh -c '
    mount -n --make-rprivate / &&
    mount -n -t overlay overlay -o "lowerdir=/usr/local,upperdir=$HSD_STAGE/upper,workdir=$HSD_STAGE/work" /usr/local &&
    mount -n -t tmpfs -o mode=0755 tmpfs /run &&
    cd "$HSD_STAGE/units" && systemd-analyze verify ./* &&
    cd "$HSD_STAGE/user-units" && XDG_RUNTIME_DIR="$HSD_STAGE/runtime" exec systemd-analyze --user verify ./*' 2>&1)
status=$?
set -e
names="$(cd "$stage/units" && echo *) and --user $(cd "$stage/user-units" && echo *)"
if [[ $status -ne 0 || -n $output ]]; then
    printf '%s\n' "$output" >&2
    echo "unit lint: FAILED: systemd-analyze verify $names (exit $status, output above)" >&2
    exit 1
fi
echo "unit lint: systemd-analyze verify $names: no output, exit 0"
