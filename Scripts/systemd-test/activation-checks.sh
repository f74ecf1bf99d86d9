# Harbor — the real-systemd checks of issue 21, "whoever relays is seen"
# (sourced by run.sh after checks.sh, whose helpers it uses): harbord runs
# as its dynamic user, not root; a look-up of a declared name starts the
# name's unit through a request file, harbor-activate.path and the root
# harbor-activate.service; a request naming an undeclared unit is refused.

activate_name=org.harbor.sdtest.lazy
activate_unit=harbor-sdtest-lazy.service
undeclared_unit=harbor-sdtest-undeclared.service
activator_log() { E journalctl -q --no-pager -o cat -u harbor-activate.service 2>/dev/null; }
activator_says() { activator_log | grep -qF -- "$1"; }
lazy_log() { E journalctl -q --no-pager -o cat -u "$activate_unit" 2>/dev/null; }
lazy_got() { lazy_log | grep -qF -- "$1"; }
request_gone() { ! E test -e "/run/harbor/activate/$1"; }

run_activation_checks() {
    local pid='' uid='' out='' dir='' text='woken through harbor-activate'
    E timeout 10 systemctl log-level info
    # The policy an administrator writes: readable by every user (harbord's
    # dynamic user reads it), one declared name with its unit.
    E sh -c "mkdir -p /etc/harbor && printf 'declare $activate_name user=0 unit=$activate_unit\n' >/etc/harbor/policy.conf &&
        chmod 0644 /etc/harbor/policy.conf"
    out=$(lookup)
    if ! wait_until 20 is_prop harbord.service SubState running; then
        bad "harbord.service did not start for the activation checks: $out"
        return
    fi
    pid=$(prop harbord.service MainPID)

    # --- not root ---
    uid=$(E awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" 2>&1)
    local -a ids
    read -ra ids <<<"$uid"
    if [[ ${#ids[@]} == 4 && ${ids[0]} =~ ^[1-9][0-9]*$ && ${ids[1]} == "${ids[0]}" && ${ids[2]} == "${ids[0]}" &&
        ${ids[3]} == "${ids[0]}" ]]; then
        ok "harbord (MainPID $pid) runs as uid ${uid%% *} (real, effective, saved, fs), not root: DynamicUser=yes"
    else
        bad "harbord (MainPID $pid) runs as uids \"$uid\" (Uid: line of /proc/$pid/status), want one non-zero uid"
    fi
    dir=$(E stat -c '%a %u' /run/harbor/activate 2>&1)
    if [[ $dir == "700 ${uid%% *}" ]] &&
        E journalctl -q --no-pager -o cat -u harbord.service _PID="$pid" | grep -qF "request files in /run/harbor/activate"; then
        ok "harbord writes activation requests to /run/harbor/activate (mode 700, its own uid), as it logs"
    else
        bad "request directory: \"$dir\"; harbord's log: $(E journalctl -q --no-pager -o cat -u harbord.service _PID="$pid" | grep -F listening)"
    fi

    # --- a declared name's unit starts through the activator ---
    out=$(E timeout 20 harbor send "$activate_name" "$text" 2>&1)
    note "harbor send $activate_name -> $out"
    if wait_until 30 lazy_got "\"$text\"" && activator_says "started $activate_unit"; then
        ok "a message to $activate_name started $activate_unit through harbor-activate.service; it got the message"
    else
        bad "$activate_unit not started through the activator: $(activator_log | tail -3 | tr '\n' '|') / $(lazy_log | tail -3 | tr '\n' '|')"
    fi
    out=$(lazy_log | grep -F "\"$text\"")
    note "$activate_unit printed: $out"
    if [[ $out == *"from pid "*" uid 0: \"$text\" (relayed by pid $pid uid ${uid%% *})"* ]]; then
        ok "the waiting message keeps its sender (uid 0) and shows harbord as relay with uid ${uid%% *}, not 0"
    else
        bad "the relayed message shows: $out"
    fi
    if wait_until 10 request_gone "$activate_unit"; then
        ok "the activator removed the request"
    else
        bad "the request $activate_unit is still in /run/harbor/activate"
    fi

    # --- a request naming an undeclared unit is refused ---
    E touch "/run/harbor/activate/$undeclared_unit"
    if wait_until 20 request_gone "$undeclared_unit" &&
        wait_until 10 activator_says "refused \"$undeclared_unit\": no declaration of the policy file names this unit" &&
        is_prop "$undeclared_unit" ExecMainStartTimestampMonotonic 0 && is_prop "$undeclared_unit" ActiveState inactive; then
        ok "a request for the undeclared $undeclared_unit was refused and removed; the unit never ran"
    else
        bad "the undeclared request: $(activator_log | tail -3 | tr '\n' '|'); $undeclared_unit $(prop "$undeclared_unit" ActiveState)"
    fi

    # Back to no policy for the scale checks.
    E rm -f /etc/harbor/policy.conf
    E timeout 20 systemctl stop harbord.service 2>/dev/null
    completed+=("${FUNCNAME[0]}")
}
