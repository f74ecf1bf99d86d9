# Harbor — the checks of the real-systemd test (sourced by run.sh, which
# provides E (run inside the namespaces), prop UNIT PROPERTY, ok, bad, note,
# ms, $repo and $SD). Every wait is bounded.

# The look-up that activates harbord (of a name nobody holds: `harbor`
# exits 2, "no such name", which only harbord can say), and the test way to
# wedge its loop (SIGUSR1 with --debug-wedge-on-sigusr1, given by a drop-in).
lookup_name=org.harbor.sdtest.nobody
watch_name=org.harbor.sdtest.watched
lookup() {
    local out status
    out=$(E timeout 20 harbor lookup "$lookup_name" 2>&1)
    status=$?
    echo "$out (exit $status)"
}
wedge() { E timeout 10 systemctl kill --kill-who=main --signal=SIGUSR1 harbord.service; }

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS >= deadline)) && return 1
        sleep 0.1
    done
}
is_prop() { [[ $(prop "$1" "$2") == "$3" ]]; }
prop_differs() { local now; now=$(prop "$1" "$2"); [[ -n $now && $now != "$3" ]]; }
# The manager's own debug log about harbord.service, oldest first.
manager_log() { E journalctl -q --no-pager -o cat _PID=1 --grep "^harbord\.(service|socket): " 2>/dev/null; }
# in_order REGEX...: lines of manager_log match each extended regex, in this order.
in_order() {
    local line next=0
    local -a patterns=("$@")
    while IFS= read -r line; do
        if [[ $line =~ ${patterns[next]} ]]; then
            next=$((next + 1))
            ((next == ${#patterns[@]})) && return 0
        fi
    done < <(manager_log)
    return 1
}
# answered OUTPUT: harbord answered the look-up (exit 2: no such name).
answered() { [[ $1 == *"(exit 2)" ]]; }
status_has() { [[ $(prop harbord.service StatusText) == *"$1"* ]]; }
# listed_reloaded: `harbor list` shows the shared name of the reloaded policy.
listed_reloaded() { E timeout 10 harbor list 2>/dev/null | grep -qE "^org\.harbor\.sdtest\.reloaded +shared "; }
journal_says() { E journalctl -q --no-pager -o cat -u harbord.service 2>/dev/null | grep -qF -- "$1"; }
manager_says() { manager_log | grep -qE -- "$1"; }
# name_fields NAME: harbord's journal entries about NAME, with every field.
name_fields() { E journalctl -q --no-pager -o verbose -u harbord.service HARBOR_NAME="$1" 2>/dev/null; }
# name_logged NAME: its check-in entry carries the name's scope, uid and pid as journal fields.
name_logged() {
    local out
    out=$(name_fields "$1")
    [[ $out == *"MESSAGE=checked in $1 "* && $out == *"HARBOR_SCOPE=user:0"* && $out == *"HARBOR_UID=0"* &&
        $out =~ HARBOR_PID=[1-9] ]]
}
notification() { echo "^harbord\.service: Got notification message from PID $1 \(.*$2"; }

run_checks() {
    local pid='' pid2='' status1='' status2='' status3='' w1=0 w2=0 w3=0 out='' mode='' t_socket=0 t_exec=0 t_active=0

    # --- install the shipped units, as an administrator would ---
    local unit shipped=() same=1
    for unit in "$repo"/Scripts/systemd/*; do shipped+=("${unit##*/}"); done
    # A drop-in (the units stay as shipped) gives harbord the hidden test
    # switch that makes SIGUSR1 wedge its loop (Docs/harbord.md, "Signals").
    E sh -c 'cd /usr/local/share/harbor/systemd && install -m 0644 "$@" /etc/systemd/system/ &&
            mkdir -p /etc/systemd/system/harbord.service.d &&
            printf "[Service]\nExecStart=\nExecStart=/usr/local/bin/harbord --debug-wedge-on-sigusr1\n" \
                >/etc/systemd/system/harbord.service.d/test-wedge.conf &&
            systemctl daemon-reload && timeout 20 systemctl enable --now harbord.socket' sh "${shipped[@]}" >/dev/null 2>&1 ||
        same=0
    for unit in "${shipped[@]}"; do
        cmp -s "$repo/Scripts/systemd/$unit" "/proc/$SD/root/etc/systemd/system/$unit" || same=0
    done
    if ((same)); then
        ok "shipped units (${shipped[*]}) installed unmodified in /etc/systemd/system; systemctl enable --now harbord.socket"
    else
        bad "installing and enabling the shipped units failed"
    fi
    # pid 1's debug log records every state change and sd_notify message
    E timeout 10 systemctl log-level debug

    # --- the socket listens before the service starts ---
    mode=$(E stat -c %A /run/harbor/bootstrap.sock 2>&1)
    if is_prop harbord.socket SubState listening &&
        [[ $(prop harbord.socket Listen) == "/run/harbor/bootstrap.sock (SequentialPacket)" && $mode == srw-rw-rw- ]]; then
        ok "harbord.socket listening on /run/harbor/bootstrap.sock (SequentialPacket, $mode)"
    else
        bad "harbord.socket not listening: $(prop harbord.socket SubState) $(prop harbord.socket Listen) $mode"
    fi
    if is_prop harbord.service ActiveState inactive && is_prop harbord.service ExecMainStartTimestampMonotonic 0; then
        ok "harbord.service not started before the first look-up"
    else
        bad "harbord.service started before any look-up: $(prop harbord.service ActiveState)"
    fi

    # --- a look-up activates it ---
    out=$(lookup)
    note "harbor lookup $lookup_name -> $out"
    if wait_until 20 is_prop harbord.service SubState running; then
        pid=$(prop harbord.service MainPID)
        ok "the look-up activated harbord.service: active/running, MainPID $pid, after $(ms) ms"
    else
        pid=$(prop harbord.service MainPID)
        bad "harbord.service did not become active/running after a look-up: $(prop harbord.service ActiveState)/$(prop harbord.service SubState)"
    fi
    if answered "$out" && wait_until 10 manager_says "$(notification "$pid" READY=1)"; then
        ok "the look-up got harbord's answer"
    else
        bad "the look-up got no answer from harbord: $out"
    fi

    # --- it becomes active only after readiness ---
    t_socket=$(prop harbord.socket ActiveEnterTimestampMonotonic)
    t_exec=$(prop harbord.service ExecMainStartTimestampMonotonic)
    t_active=$(prop harbord.service ActiveEnterTimestampMonotonic)
    if ((t_socket > 0 && t_socket < t_exec)); then
        ok "socket listening $(((t_exec - t_socket) / 1000)) ms before harbord was started"
    else
        bad "socket not listening before the service started ($t_socket, $t_exec)"
    fi
    if [[ $(prop harbord.service Type) == notify ]] && ((t_exec > 0 && t_exec < t_active)) &&
        in_order "^harbord\.service: Changed dead -> start$" "$(notification "$pid" READY=1)" \
            "^harbord\.service: Changed start -> running$"; then
        ok "active only after READY=1: start -> READY=1 from PID $pid -> running, $(((t_active - t_exec) / 1000)) ms after exec"
    else
        bad "readiness order not seen in pid 1's log (exec $t_exec, active $t_active)"
    fi

    # --- its status text and watchdog timestamps move ---
    # A name checked in by `harbor watch` and pinged by `harbor ping`: a
    # round trip through the activated harbord that moves its STATUS= text.
    status1=$(prop harbord.service StatusText)
    E timeout 20 harbor watch "$watch_name" --count 1 --idle 15 >"$work/watch.out" 2>&1 &
    local watcher=$!
    wait_until 10 status_has "serving 1 names" && status2=$(prop harbord.service StatusText)
    out=$(E timeout 20 harbor ping "$watch_name" --count 1 2>&1)
    wait "$watcher"
    note "harbor watch: $(tr '\n' '|' <"$work/watch.out")"
    if [[ $out == *"reply from $watch_name: seq"* ]]; then
        ok "harbor ping $watch_name answered by harbor watch through harbord"
    else
        bad "harbor ping $watch_name: $out"
    fi
    # --- every line about a name carries it as journal fields (O11) ---
    if wait_until 10 name_logged "$watch_name"; then
        ok "journalctl HARBOR_NAME=$watch_name finds its check-in, with HARBOR_SCOPE, HARBOR_UID and HARBOR_PID"
    else
        bad "no journal fields for $watch_name: $(name_fields "$watch_name" | grep -E 'MESSAGE=|HARBOR_' | head -8 | tr '\n' '|')"
    fi
    if [[ $status1 == "serving 0 names"* && -n $status2 ]] && wait_until 10 status_has "serving 0 names"; then
        status3=$(prop harbord.service StatusText)
        ok "StatusText moves: \"$status1\" -> \"$status2\" -> \"$status3\""
    else
        bad "StatusText did not move as names came and went: \"$status1\" -> \"$status2\""
    fi
    if [[ $(prop harbord.service WatchdogUSec) == 5s ]]; then
        ok "watchdog on: WatchdogUSec=5s"
    else
        bad "watchdog not on: WatchdogUSec=$(prop harbord.service WatchdogUSec)"
    fi
    w1=$(prop harbord.service WatchdogTimestampMonotonic)
    if ((w1 > 0)) && wait_until 6 prop_differs harbord.service WatchdogTimestampMonotonic "$w1" &&
        w2=$(prop harbord.service WatchdogTimestampMonotonic) &&
        wait_until 6 prop_differs harbord.service WatchdogTimestampMonotonic "$w2"; then
        w3=$(prop harbord.service WatchdogTimestampMonotonic)
        ok "WATCHDOG=1 pings move WatchdogTimestampMonotonic: $w1 -> $w2 -> $w3 (+$(((w2 - w1) / 1000)) ms, +$(((w3 - w2) / 1000)) ms)"
    else
        bad "WatchdogTimestampMonotonic did not move: $w1"
    fi
    if is_prop harbord.service NRestarts 0 && is_prop harbord.service MainPID "$pid"; then
        ok "no restart while harbord pings: NRestarts=0, same MainPID"
    else
        bad "harbord restarted while healthy: NRestarts=$(prop harbord.service NRestarts)"
    fi

    # --- a wedged loop is killed by the watchdog (and restarted) ---
    # Back to info: at debug level pid 1 logs so much between connecting a
    # service's stderr to journald and moving the child into the service's
    # cgroup that journald files the stream under init.scope (a known
    # journald race, systemd issue #2913), and `journalctl -u` misses it.
    E timeout 10 systemctl log-level info
    wedge
    if wait_until 15 manager_says "^harbord\.service: Watchdog timeout \(limit 5s\)!" &&
        wait_until 5 manager_says "^harbord\.service: Failed with result 'watchdog'\.$"; then
        ok "wedged loop: watchdog timeout, harbord killed, Result=watchdog at $(ms) ms"
        manager_log | grep -E "Watchdog timeout|Killing process $pid" | head -2 | sed 's/^/#   /'
    else
        bad "the wedged harbord was not killed by the watchdog"
    fi
    if wait_until 15 is_prop harbord.service NRestarts 1 && wait_until 15 is_prop harbord.service SubState running &&
        pid2=$(prop harbord.service MainPID) && [[ $pid2 != "$pid" ]] && out=$(lookup; true) && answered "$out"; then
        ok "Restart=on-failure: restarted as PID $pid2 (NRestarts=1) and answers again"
    else
        bad "harbord not restarted after the watchdog kill: NRestarts=$(prop harbord.service NRestarts)"
    fi

    pid2=$(prop harbord.service MainPID)

    # --- logs a person can read in the journal ---
    # what `journalctl -u harbord.service` shows of the restarted harbord
    out=$(E journalctl -q --no-pager -o short -u harbord.service 2>&1 | grep -F "harbord[$pid2]: ")
    if [[ -n $out && $out != *"blob data"* ]]; then
        ok "journalctl -u harbord.service shows harbord's stderr as readable lines:"
        printf '%s\n' "$out" | head -6 | sed 's/^[^]]*]: /#   /'
    else
        bad "journalctl -u harbord.service shows no readable lines of harbord[$pid2]"
    fi

    # --- systemctl reload: SIGHUP reads /etc/harbor/policy.conf again ---
    E sh -c 'mkdir -p /etc/harbor && printf "shared org.harbor.sdtest.reloaded owner=0\n" >/etc/harbor/policy.conf &&
            chmod 0644 /etc/harbor/policy.conf'
    E timeout 20 systemctl reload harbord.service
    if wait_until 10 listed_reloaded && is_prop harbord.service MainPID "$pid2"; then
        ok "systemctl reload: the new policy's shared name is listed, same MainPID $pid2"
    else
        bad "systemctl reload did not apply the new policy: $(E timeout 10 harbor list 2>&1 | head -3)"
    fi
    E sh -c 'printf "shared org.harbor.sdtest.bad owner=root\n" >/etc/harbor/policy.conf'
    E timeout 20 systemctl reload harbord.service
    if wait_until 10 journal_says "keeping the running policy" && listed_reloaded &&
        journal_says "/etc/harbor/policy.conf:1: owner= must be a numeric uid"; then
        ok "systemctl reload of a bad policy: harbord keeps the running one and logs why"
    else
        bad "a bad policy on reload was not refused with its reason"
    fi
    E rm -f /etc/harbor/policy.conf

    # --- SIGTERM stops it cleanly ---
    E timeout 10 systemctl log-level debug
    E timeout 20 systemctl stop harbord.service 2>/dev/null
    if is_prop harbord.service ActiveState inactive && is_prop harbord.service Result success &&
        [[ $(prop harbord.service ExecMainCode) == 1 && $(prop harbord.service ExecMainStatus) == 0 ]] &&
        wait_until 10 manager_says "$(notification "$pid2" STOPPING=1)" &&
        ! manager_says "Killing process $pid2 .* with signal SIGKILL"; then
        ok "systemctl stop: SIGTERM -> STOPPING=1 -> exit 0, Result=success, no SIGKILL"
    else
        bad "harbord did not stop cleanly: $(prop harbord.service Result) code=$(prop harbord.service ExecMainCode) status=$(prop harbord.service ExecMainStatus)"
    fi
    if is_prop harbord.socket SubState listening; then
        ok "harbord.socket still listening after the stop (the next look-up starts harbord again)"
    else
        bad "harbord.socket not listening after the stop"
    fi
    completed+=("${FUNCNAME[0]}")
}

# --- harbord at scale, idle, and restarted (issue 13) ---
# The names of `harbor hold` processes started inside the namespaces: each
# writes its pid (in the namespaces) to $work/holders/N.pid and its output
# to $work/holders/N.out; they are stopped by pid.
holders_dir=$work/holders
holder_jobs=()
start_holder() { # start_holder N PREFIX COUNT
    E sh -c 'echo $$ >"/run/.hsd/holder.$1.pid"; exec harbor hold "$2" --count "$3"' sh "$1" "$2" "$3" \
        >"$holders_dir/$1.out" 2>&1 &
    holder_jobs+=($!)
}
holding() { # holding N COUNT: every holder 1..N says it holds COUNT names
    local i
    for i in $(seq 1 "$1"); do grep -q "holding $2 names" "$holders_dir/$i.out" 2>/dev/null || return 1; done
}
stop_holders() {
    local file
    for file in /proc/"$SD"/root/run/.hsd/holder.*.pid; do
        [[ -f $file ]] && E kill -TERM "$(cat "$file")" 2>/dev/null
        rm -f "$file"
    done
    # Only the holders' nsenter jobs: a bare `wait` would wait for the namespace itself.
    ((${#holder_jobs[@]} > 0)) && wait "${holder_jobs[@]}" 2>/dev/null
    holder_jobs=()
}
# active_names PREFIX: how many names starting with PREFIX `harbor list` shows as active.
active_names() { E timeout 60 harbor list 2>/dev/null | grep -c "^$1.* active "; }
names_back() { [[ $(active_names "$1") == "$2" ]]; }
# cpu_ns PID: the time all of PID's threads have run on a CPU, in ns (the
# sum of each task's schedstat: exact, where utime + stime are ticks charged
# by sampling, 10 ms each); 0 where the kernel keeps no schedstat.
cpu_ns() { E sh -c "cat /proc/$1/task/*/schedstat" 2>/dev/null | awk '{ sum += $1 } END { printf "%.0f\n", sum }'; }
# cpu_ticks PID: user + system CPU time of PID (all its threads), in clock
# ticks (/proc/PID/stat fields 14 and 15): the fallback to cpu_ns.
cpu_ticks() { E cat "/proc/$1/stat" 2>/dev/null | sed 's/^.*) //' | awk '{ print $12 + $13 }'; }

run_scale_checks() {
    local pid='' out='' limit='' want='' per=0 total=0 fds='' t0=0 took=0 c0=0 c1=0 i
    mkdir -p "$holders_dir"
    E mkdir -p /run/.hsd

    out=$(lookup)
    if wait_until 20 is_prop harbord.service SubState running; then
        pid=$(prop harbord.service MainPID)
    else
        bad "harbord.service did not start again for the scale checks: $out"
        return
    fi
    # LimitNOFILE=65536, unless the namespace's own hard limit is lower
    # (without CAP_SYS_RESOURCE, as here, systemd cannot raise it).
    limit=$(E cat "/proc/$pid/limits" 2>/dev/null | awk '/^Max open files/ { print $4 "/" $5 }')
    want=$(E cat /proc/1/limits 2>/dev/null | awk '/^Max open files/ { print ($5 < 65536 ? $5 : 65536) }')
    if [[ $limit == "$want/$want" ]]; then
        ok "LimitNOFILE= from the shipped unit: harbord's descriptor limit is $limit" \
            "$( ((want < 65536)) && echo "(65536 asked; the namespace's hard limit is $want)")"
    else
        bad "harbord's descriptor limit is $limit, not $want/$want (LimitNOFILE=65536)"
    fi

    # Names from 50 processes: 200 each (10,000), or fewer where the
    # namespace's hard limit keeps harbord under LimitNOFILE=65536: each
    # name costs harbord two descriptors (the right it answers look-ups
    # with); its reserve and own ports need about a fifth of the limit.
    per=$(( (want * 8 / 10) / 2 / 50 ))
    ((per > 200)) && per=200
    total=$((50 * per))
    t0=$(ms)
    for i in $(seq 1 50); do start_holder "$i" "sd.p$i" "$per"; done
    if wait_until 180 holding 50 "$per"; then
        took=$(($(ms) - t0))
        t0=$(ms)
        out=$(active_names "sd.p")
        fds=$(E sh -c "ls /proc/$pid/fd | wc -l")
        if [[ $out == "$total" ]]; then
            ok "$total names from 50 processes checked in ($took ms) and listed ($(($(ms) - t0)) ms); harbord holds $fds descriptors"
        else
            bad "harbor list showed $out of the $total names"
        fi
    else
        bad "50 processes did not check in $per names each: $(cat "$holders_dir"/*.out | grep -v holding | head -3)"
    fi
    out=$(E timeout 20 harbor send sd.p7.77 "to a name of many" 2>&1)
    if [[ $out == "sent id 1"* ]]; then
        ok "a look-up among $total names reaches its holder: $out"
    else
        bad "a look-up among $total names failed: $out"
    fi

    # Idle after traffic: under 0.1 % of a CPU.
    for i in 1 2 3; do E timeout 60 harbor list >/dev/null 2>&1; done
    for i in $(seq 1 20); do E timeout 20 harbor lookup "sd.p3.$i" >/dev/null 2>&1; done
    # Measured in ns (schedstat): tick-sampled CPU time can charge a whole
    # 10 ms tick to a short wake-up (a watchdog ping) on a loaded machine, and
    # two such ticks in 20 s read as 0.1 %. Where the kernel keeps no
    # schedstat, ticks: "under 0.1 %" is then at most one.
    sleep 0.5
    local unit=ns
    c0=$(cpu_ns "$pid")
    if [[ $c0 == 0 ]]; then unit=ticks; c0=$(cpu_ticks "$pid"); fi
    sleep 20
    if [[ $unit == ns ]]; then c1=$(cpu_ns "$pid"); else c1=$(cpu_ticks "$pid"); fi
    if [[ $unit == ns ]]; then
        out=$(awk -v t=$((c1 - c0)) 'BEGIN { printf "%.4f", t / 1e9 / 20 * 100 }')
        out+=" % of a CPU over 20 s ($(((c1 - c0) / 1000)) µs on a CPU, schedstat)"
    else
        out=$(awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz / 20 * 100 }')
        out+=" % of a CPU over 20 s ($((c1 - c0)) ticks)"
    fi
    if [[ -n $c0 && -n $c1 ]] && { [[ $unit == ns ]] && ((c1 - c0 < 20000000)) || { [[ $unit == ticks ]] && ((c1 - c0 <= 1)); }; }; then
        ok "harbord idle after 3 listings and 20 look-ups: $out"
    else
        bad "harbord idle after traffic uses $out, not under 0.1 %"
    fi

    # A restart (socket kept by systemd): the names come back by themselves.
    t0=$(ms)
    E timeout 60 systemctl restart harbord.service
    if wait_until 120 names_back "sd.p" "$total"; then
        note "restart with $total names held by 50 processes: all back after $(($(ms) - t0)) ms"
    else
        bad "after a restart, only $(active_names "sd.p") of $total names came back"
    fi
    stop_holders

    # The promise: a restarted harbord has its names back within one second.
    for i in $(seq 1 5); do start_holder "$i" "sd.r$i" 20; done
    wait_until 30 holding 5 20
    wait_until 10 names_back "sd.r" 100
    pid=$(prop harbord.service MainPID)
    t0=$(ms)
    E timeout 60 systemctl restart harbord.service
    local restarted=$(($(ms) - t0))
    if wait_until 10 names_back "sd.r" 100; then
        took=$(($(ms) - t0))
        if ((took < 1000)) && [[ $(prop harbord.service MainPID) != "$pid" ]]; then
            ok "systemctl restart harbord (socket kept): 100 names of 5 processes back within one second ($took ms; the restart itself $restarted ms)"
        else
            bad "names back only after $took ms (the restart itself $restarted ms), not within one second"
        fi
    else
        bad "after systemctl restart, only $(active_names "sd.r") of 100 names came back"
    fi
    stop_holders
    completed+=("${FUNCNAME[0]}")
}
