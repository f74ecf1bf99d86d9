# Harbor — the Debian package under a real systemd (O05, O07, O08, O10, O06;
# Docs/Install.md): sourced by run.sh when HSD_ONLY=deb. The .deb run.sh
# built (Scripts/package-deb.sh) is installed with dpkg into the container's
# root (its /usr an overlay for that), its maintainer script enables
# harbord.socket, the clock example runs against it, and an operator's
# commands are checked there: harbor print, ports, list --all, monitor (each
# --json line against its schema's required keys), a Prometheus scrape
# through the documented metrics drop-in, SIGUSR1 to the production binary;
# then dpkg -r removes it.

deb_path=/usr/local/share/harbor/harbor.deb
deb_name=com.example.clock

# json_ok COMMAND LINE: LINE is a JSON object holding every key COMMAND's
# schema requires (Docs/schemas/harbor-COMMAND.schema.json).
json_ok() {
    local key required
    [[ $2 == "{"*"}" ]] || return 1
    required=$(tr -d '\n' <"$repo/Docs/schemas/harbor-$1.schema.json" |
        sed -n 's/^[^[]*"required": *\[\([^]]*\)\].*$/\1/p' | tr -d ' "' | tr ',' ' ')
    [[ -n $required ]] || return 1
    for key in $required; do [[ $2 == *"\"$key\":"* ]] || return 1; done
}
# json_lines_ok COMMAND TEXT: every line of TEXT passes json_ok, and there is one.
json_lines_ok() {
    local line seen=0
    while IFS= read -r line; do
        json_ok "$1" "$line" || return 1
        seen=1
    done <<<"$2"
    ((seen))
}
clock_active() { E timeout 10 harbor print "$deb_name" 2>/dev/null | grep -qE "^state +active$"; }

run_deb_checks() {
    local out='' pid='' scrape='' monitor=''

    # --- dpkg -i: files under /usr, the socket enabled by postinst ---
    out=$(E sh -c "dpkg -i $deb_path 2>&1")
    if [[ $? -eq 0 ]] && E test -x /usr/bin/harbord -a -x /usr/bin/harbor -a -f /usr/lib/systemd/system/harbord.socket \
        -a ! -e /etc/systemd/system/harbord.socket &&
        is_prop harbord.socket SubState listening && [[ $(E systemctl is-enabled harbord.socket 2>&1) == enabled ]]; then
        ok "deb: dpkg -i installed /usr/bin/harbord, /usr/bin/harbor and the units in /usr/lib/systemd; postinst enabled and started harbord.socket"
    else
        bad "deb: dpkg -i: $(tr '\n' '|' <<<"$out" | tail -c 600); socket $(prop harbord.socket SubState)"
    fi
    if [[ $(prop harbord.service ExecStart) == *"path=/usr/bin/harbord"* ]]; then
        ok "deb: harbord.service runs /usr/bin/harbord"
    else
        bad "deb: harbord.service ExecStart: $(prop harbord.service ExecStart)"
    fi

    # --- the documented metrics drop-in, a policy, the clock example ---
    E sh -c 'mkdir -p /etc/systemd/system/harbord.service.d /etc/harbor &&
             printf "[Service]\nExecStart=\nExecStart=/usr/bin/harbord --metrics-socket /run/harbor/metrics/metrics.sock\nRuntimeDirectory=harbor/activate harbor/metrics\n" \
                 >/etc/systemd/system/harbord.service.d/metrics.conf &&
             printf "shared com.example.clock owner=0\n" >/etc/harbor/policy.conf &&
             install -m 0644 /usr/local/share/harbor/examples/harbor-clock.service /etc/systemd/system/ &&
             systemctl daemon-reload && timeout 30 systemctl start harbor-clock.service' >/dev/null 2>&1
    if wait_until 20 clock_active; then
        ok "deb: the clock example checked $deb_name in with the packaged harbord (socket-activated)"
    else
        bad "deb: the clock example is not active: $(E timeout 10 harbor print "$deb_name" 2>&1 | tr '\n' '|')"
    fi

    # --- harbor print, ports, list --all: JSON by the schemas ---
    out=$(E timeout 10 harbor print "$deb_name" --json 2>&1)
    pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' <<<"$out")
    if json_ok print "$out" && [[ $out == *'"state":"active"'* && -n $pid && $pid == "$(prop harbor-clock.service MainPID)" ]]; then
        ok "deb: harbor print --json: active, held by the clock service's pid $pid"
    else
        bad "deb: harbor print --json: $out"
    fi
    out=$(E timeout 10 harbor ports "$pid" --json 2>&1)
    if json_lines_ok ports "$out" && [[ $out == *'"kind":"receive"'* ]]; then
        ok "deb: harbor ports $pid --json: $(wc -l <<<"$out") ports, receive rights among them, answered by the service itself"
    else
        bad "deb: harbor ports $pid --json: $(head -c 400 <<<"$out")"
    fi
    out=$(E timeout 10 harbor list --all --json 2>&1)
    if json_lines_ok list "$out" && [[ $out == *"\"name\":\"$deb_name\""* ]]; then
        ok "deb: harbor list --all --json lists $deb_name"
    else
        bad "deb: harbor list --all --json: $(head -c 400 <<<"$out")"
    fi

    # --- harbor monitor: a client's call seen at the service's port ---
    : >"$work/monitor.out"  # there before the first grep: the background job's redirect may come later
    E timeout 30 harbor monitor "$deb_name" --count 1 --json >"$work/monitor.out" 2>&1 &
    monitor=$!
    wait_until 10 grep -q '"event":"monitoring"' "$work/monitor.out"
    E timeout 20 clock-client now >/dev/null 2>&1
    wait "$monitor"
    out=$(cat "$work/monitor.out")
    if json_lines_ok monitor "$out" && [[ $out == *'"event":"message"'* ]]; then
        ok "deb: harbor monitor --json saw a clock-client call reach $deb_name"
    else
        bad "deb: harbor monitor: $(head -c 400 <<<"$out")"
    fi

    # --- a Prometheus scrape through the drop-in ---
    scrape=$(E timeout 10 curl -sS --unix-socket /run/harbor/metrics/metrics.sock http://localhost/metrics 2>&1)
    if [[ $scrape == *"# HELP harbor_bootstrap_requests_total "* && $scrape == *'harbor_bootstrap_requests_total{request="print"}'* &&
        $scrape =~ harbor_bootstrap_names\ [1-9] ]]; then
        ok "deb: curl scraped harbord's metrics at /run/harbor/metrics/metrics.sock ($(grep -c '^# TYPE' <<<"$scrape") series)"
    else
        bad "deb: the metrics scrape: $(head -c 400 <<<"$scrape")"
    fi

    # --- SIGUSR1 to the packaged (production) harbord: a status line, still serving ---
    pid=$(prop harbord.service MainPID)
    E timeout 10 systemctl kill --kill-who=main --signal=SIGUSR1 harbord.service
    if wait_until 10 journal_says "SIGUSR1: serving" && clock_active && is_prop harbord.service MainPID "$pid"; then
        ok "deb: SIGUSR1 logs harbord's status and it keeps serving (same MainPID $pid)"
    else
        bad "deb: after SIGUSR1: MainPID $(prop harbord.service MainPID) (was $pid); $(E timeout 10 harbor print "$deb_name" 2>&1 | head -2 | tr '\n' '|')"
    fi

    # --- dpkg -r: the package and its units go ---
    E timeout 30 systemctl stop harbor-clock.service >/dev/null 2>&1
    out=$(E sh -c 'dpkg -r harbor 2>&1')
    if [[ $? -eq 0 ]] && ! E test -e /usr/bin/harbord && ! E test -e /usr/lib/systemd/system/harbord.socket &&
        ! is_prop harbord.socket ActiveState active; then
        ok "deb: dpkg -r removed the binaries and units; harbord.socket stopped"
    else
        bad "deb: dpkg -r: $(tr '\n' '|' <<<"$out" | tail -c 400); socket $(prop harbord.socket ActiveState)"
    fi
    completed+=("${FUNCNAME[0]}")
}
