#!/usr/bin/env bash
# Harbor — the real-systemd test of harbord (S04): boots a real systemd as
# PID 1 in private namespaces, installs the shipped, unmodified unit files
# from Scripts/systemd/ there, and drives harbord through systemctl
# (checks.sh). Ends with "N passed, N failed"; exits 1 if any check failed.
#
#   bash Scripts/systemd-test/run.sh        (as root; Scripts/test.sh runs it)
#
# Environment: HARBORD_BIN, HARBOR_BIN, CLOCK_SERVICE_BIN, CLOCK_CLIENT_BIN
# (default .build/debug/harbord, harbor, clock-service, clock-client),
# HSD_ONLY=clock runs only the clock example's checks (clock-checks.sh),
# HSD_ONLY=deb only the Debian package's (deb-checks.sh: a .deb made by
# Scripts/package-deb.sh from HSD_DEB_BINARIES, default the directory of
# HARBORD_BIN, which must hold harbor too, installed with dpkg),
# HSD_MAX_SECS (hard limit on the namespace, 300),
# HSD_KEEP=1 keeps the work directory (console and namespace logs).
# Skips (exit 0, says why) only when this machine has no systemd binary or
# cannot create namespaces; any other problem is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
HARBORD_BIN=${HARBORD_BIN:-$repo/.build/debug/harbord}
HARBOR_BIN=${HARBOR_BIN:-$repo/.build/debug/harbor}
CLOCK_SERVICE_BIN=${CLOCK_SERVICE_BIN:-$repo/.build/debug/clock-service}
CLOCK_CLIENT_BIN=${CLOCK_CLIENT_BIN:-$repo/.build/debug/clock-client}

skip() { echo "systemd-test: SKIPPED: $*"; exit 0; }
die() { echo "systemd-test: FAILED: $*" >&2; exit 1; }

# --- can this machine do it at all? ---
[[ -x /usr/bin/systemd || -x /lib/systemd/systemd ]] && command -v systemctl >/dev/null \
    || skip "no systemd binary on this machine (install the systemd package)"
unshare --pid --fork --kill-child --mount --uts --ipc --net --mount-proc true 2>/dev/null \
    || skip "cannot create pid/mount/uts/ipc/net namespaces here (needs root, or a container that allows unshare)"
unshare --cgroup true 2>/dev/null || skip "cannot create a cgroup namespace here"
for tool in script nsenter setpriv timeout; do
    command -v "$tool" >/dev/null || die "$tool is missing (util-linux, bsdutils, coreutils)"
done
[[ -x $HARBORD_BIN ]] || die "no harbord binary at $HARBORD_BIN (run swift build first)"
[[ -x $HARBOR_BIN ]] || die "no harbor binary at $HARBOR_BIN (run swift build first)"
[[ -x $CLOCK_SERVICE_BIN && -x $CLOCK_CLIENT_BIN ]] || die "no clock-service or clock-client at $CLOCK_SERVICE_BIN, $CLOCK_CLIENT_BIN (run swift build first)"
if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then
    cgroot=/sys/fs/cgroup
elif [[ $(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs ]]; then
    cgroot=/sys/fs/cgroup/unified # hybrid host
else
    die "no cgroup2 hierarchy mounted"
fi
# Empty cgroups left by a driver that was SIGKILLed (its pid is gone).
for stale in "$cgroot"/harbor-sdtest-*; do
    [[ -d $stale ]] || continue
    kill -0 "${stale##*-}" 2>/dev/null || find "$stale" -depth -type d -exec rmdir {} \; 2>/dev/null
done

# --- checks bookkeeping ---
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
note() { echo "# $*"; }
T0=$(date +%s%N)
ms() { echo $((($(date +%s%N) - T0) / 1000000)); }

# --- the work directory: what ns-init copies in before /tmp is hidden ---
work=$(mktemp -d "${TMPDIR:-/tmp}/harbor-sdtest.XXXXXX")
mkdir -p "$work/units" "$work/usr-local/bin" "$work/usr-local/share/harbor/systemd" "$work/usr-local/share/harbor/examples"
cp "$HARBORD_BIN" "$work/usr-local/bin/harbord"
cp "$HARBOR_BIN" "$work/usr-local/bin/harbor"
cp "$CLOCK_SERVICE_BIN" "$work/usr-local/bin/clock-service"
cp "$CLOCK_CLIENT_BIN" "$work/usr-local/bin/clock-client"
cp "$repo"/Scripts/systemd/* "$work/usr-local/share/harbor/systemd/"
cp "$repo"/Examples/systemd/* "$work/usr-local/share/harbor/examples/"
cp "$here/units/"* "$work/units/"
if [[ ${HSD_ONLY:-} == deb ]]; then
    command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (dpkg)"
    deb=$(bash "$repo/Scripts/package-deb.sh" --binaries "${HSD_DEB_BINARIES:-$(dirname "$HARBORD_BIN")}" \
        --output "$work/deb") || die "Scripts/package-deb.sh could not build the package"
    cp "$deb" "$work/usr-local/share/harbor/harbor.deb"
    export HSD_OVERLAY_USR=1    # dpkg writes /usr: an overlay in the container
fi
# Host paths a leaking boot would write; checked again at the end.
touch "$work/marker"
host_watch=(/run/systemd /run/harbor /run/mount /dev/log /var/log/wtmp /var/log/btmp /var/log/lastlog
    /var/log/journal /var/lib/systemd /etc/machine-id /etc/systemd/system)
host_absent_before=()
for path in /run/systemd/system /run/harbor /dev/log; do
    [[ -e $path || -L $path ]] || host_absent_before+=("$path")
done

cg=$cgroot/harbor-sdtest-$$
mkdir -p "$cg"
(
    echo "$BASHPID" >"$cg/cgroup.procs"
    export HSD_DIR=$work HSD_CG=$cg
    exec script -qfec "exec timeout -k 5 ${HSD_MAX_SECS:-300} unshare --pid --fork --kill-child --mount --uts --ipc --net --mount-proc $here/ns-init.sh" "$work/console.log"
) </dev/null >"$work/ns.log" 2>&1 &
launcher=$!

descendants() {
    local child
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}
SD=
for _ in $(seq 1 200); do
    for pid in $(descendants "$launcher"); do
        [[ $(cat /proc/"$pid"/comm 2>/dev/null) == systemd ]] && { SD=$pid; break; }
    done
    [[ -n $SD ]] && break
    sleep 0.05
done

teardown() {
    if [[ -n $SD ]] && kill -0 "$SD" 2>/dev/null; then
        kill -s SIGRTMIN+4 "$SD" # orderly poweroff of a container's systemd, no D-Bus needed
        for _ in $(seq 1 100); do kill -0 "$SD" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$SD" 2>/dev/null && kill -KILL "$SD"
    fi
    kill -0 "$launcher" 2>/dev/null && { sleep 1; kill -KILL "$launcher" 2>/dev/null; }
    wait "$launcher" 2>/dev/null
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
}
cleanup() {
    teardown
    if [[ ${HSD_KEEP:-0} == 1 ]]; then echo "# logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z $SD ]]; then
    cat "$work/ns.log" "$work/console.log" 2>/dev/null | tail -30
    die "systemd did not start in the namespaces"
fi

# Run a command inside every namespace of the container, clean environment.
E() { nsenter -t "$SD" -m -p -u -i -n -C -- env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb "$@"; }
prop() { E timeout 10 systemctl show -P "$2" "$1"; }

for _ in $(seq 1 200); do [[ -S /proc/$SD/root/run/systemd/private ]] && break; sleep 0.05; done
state=$(E timeout 30 systemctl is-system-running --wait 2>&1)
case $state in
    running | degraded) ok "systemd 252 booted as PID 1 in private namespaces: $state after $(ms) ms" ;;
    *)
        bad "systemd state after boot: $state"
        E systemctl --failed --no-legend 2>&1 | sed 's/^/# /'
        ;;
esac
[[ $state == degraded ]] && E systemctl --failed --no-legend --plain 2>&1 | sed 's/^/# failed unit: /'

. "$here/checks.sh"
. "$here/activation-checks.sh"
. "$here/clock-checks.sh"
. "$here/deb-checks.sh"
# Each run_* function adds itself to `completed` as its last step: a script
# error that ends one early (bash drops the rest of the block) fails the run.
completed=()
case ${HSD_ONLY:-} in
    clock) expected=(run_clock_checks) ;;
    deb) expected=(run_deb_checks) ;;
    *) expected=(run_checks run_activation_checks run_clock_checks run_scale_checks) ;;
esac
for step in "${expected[@]}"; do "$step"; done
for step in "${expected[@]}"; do
    [[ " ${completed[*]} " == *" $step "* ]] || bad "$step stopped before its end (a script error above)"
done

E journalctl -q --no-pager -o short-monotonic -u harbord.service -u harbord.socket -u harbor-activate.service -u harbor-clock.service \
    >"$work/harbord.journal" 2>&1
E journalctl -q --no-pager -o short-monotonic >"$work/all.journal" 2>&1
teardown
trap - EXIT
note "teardown done at $(ms) ms"

# --- the host is untouched ---
leaks=$(find "${host_watch[@]}" -xdev -newer "$work/marker" 2>/dev/null | head -5)
for path in "${host_absent_before[@]}"; do
    [[ -e $path || -L $path ]] && leaks+=" $path"
done
ls -d "$cg" 2>/dev/null && leaks+=" $cg"
if [[ -z ${leaks// /} ]]; then
    ok "host untouched: nothing new under /run/systemd, /run/harbor, /dev/log, wtmp, journal, /etc; cgroup removed"
else
    bad "host touched: $leaks"
fi

if ((fail > 0)); then
    note "harbord's journal:"
    sed 's/^/#   /' "$work/harbord.journal" | tail -40
fi
if [[ ${HSD_KEEP:-0} == 1 ]]; then echo "# logs kept in $work"; else rm -rf "$work"; fi
echo "$pass passed, $fail failed"
((fail == 0))
