#!/usr/bin/env bash
# Harbor — the main job, from a fresh clone on a fresh machine: installs what
# is missing, builds, starts the name server (harbord), checks a demo service
# in by name in one process, looks it up and talks to it from another, and
# prints what happened. Then the in-process demo (threads and a run loop).
set -euo pipefail
cd "$(dirname "$0")/.."

bash Scripts/install-deps.sh
echo "demo: building harbord, harbor and harbor-demo (release)"
mkdir -p .build
for product in harbord harbor harbor-demo; do
    if ! swift build -c release --product "$product" >>.build/demo-build.log 2>&1; then
        grep -E "error:" -A3 .build/demo-build.log >&2 || tail -30 .build/demo-build.log >&2
        echo "demo: build FAILED" >&2
        exit 1
    fi
done
bin="$(swift build -c release --show-bin-path)"
scratch="$(mktemp -d)"
harbord_pid=""
cleanup() {
    if [[ -n "$harbord_pid" ]] && kill -0 "$harbord_pid" 2>/dev/null; then kill -TERM "$harbord_pid"; wait "$harbord_pid" || true; fi
    rm -rf "$scratch"
}
trap cleanup EXIT

# 1. The name server. If one already serves the default socket (systemd's
#    harbord.socket), use it; otherwise run our own in the foreground there.
if "$bin/harbor" list --timeout 1 >/dev/null 2>&1; then
    echo "demo: a harbord already serves the default socket; using it"
else
    printf 'declare demo.echo user=%s\n' "$(id -u)" >"$scratch/policy.conf"
    echo "demo: no harbord running; starting one in the foreground (policy: declare demo.echo user=$(id -u))"
    "$bin/harbord" --foreground --policy "$scratch/policy.conf" 2> >(sed -u 's/^[^ ]* /  harbord | /' >&2) &
    harbord_pid=$!
    for _ in $(seq 1 100); do
        "$bin/harbor" list --timeout 1 >/dev/null 2>&1 && break
        sleep 0.05
    done
fi
echo "demo: harbor list"
"$bin/harbor" list | sed 's/^/  /'

# 2. A message sent before the service exists waits for it (launchd-style check-in).
echo "demo: harbor send demo.echo … (before the service has started)"
"$bin/harbor" send demo.echo "sent before the service started" | sed 's/^/  /' || true

# 3. The service checks in by name in one process …
"$bin/harbor-demo" service demo.echo &
service_pid=$!
# … and a client in another looks it up and talks to it.
for _ in $(seq 1 100); do
    "$bin/harbor" lookup demo.echo --timeout 1 2>/dev/null | grep -q active && break
    sleep 0.05
done
"$bin/harbor-demo" client demo.echo
echo "demo: harbor ping demo.echo (round trips through the CLI)"
"$bin/harbor" ping demo.echo --count 3 | sed 's/^/  /'
echo "demo: harbor lookup demo.echo"
"$bin/harbor" lookup demo.echo | sed 's/^/  /'
"$bin/harbor" send demo.echo --id 0 bye >/dev/null
wait "$service_pid"
echo "demo: after the service exited, harbor lookup demo.echo"
"$bin/harbor" lookup demo.echo | sed 's/^/  /' || true

# 4. The in-process demo: two threads, two ports, and a run loop.
"$bin/harbor-demo" threads

if [[ -n "$harbord_pid" ]]; then
    kill -TERM "$harbord_pid"
    status=0
    wait "$harbord_pid" || status=$?
    harbord_pid=""
    echo "demo: harbord stopped on SIGTERM with exit status $status"
fi
