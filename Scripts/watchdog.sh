#!/usr/bin/env bash
# Harbor — runs a command and fails it fast when it stops making progress.
#
#   bash Scripts/watchdog.sh --watch FILE [--stall SECONDS] [--limit SECONDS] -- COMMAND...
#
# Runs COMMAND (its output goes where this script's goes) and watches FILE,
# the log the command's output reaches. When FILE has not grown for
# --stall seconds (default 720), or COMMAND has run --limit seconds (default:
# no limit), it prints why, the tests the log shows started and not
# finished, and the whole process tree below COMMAND (pid, state, elapsed and
# CPU time, command line), then kills that tree — every descendant, found by
# parent pid, since `swift test` starts the test runner in a process group of
# its own, which `timeout` does not reach — and exits 124. Otherwise it exits
# with COMMAND's status.
#
# Each test under HarborTestSupport's TestDeadline ends by its own deadline
# (at most 10 minutes, and 60 s of grace after it); the default stall is
# longer than that, so this catches what no test deadline covers: a run
# that hangs after its last test (a child holding swift-test's output pipe),
# a build, or a test without a deadline.
set -uo pipefail

watch="" stall=720 limit=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --watch) watch=$2; shift 2 ;;
        --stall) stall=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "watchdog: unknown option '$1'" >&2; exit 2 ;;
    esac
done
if [[ -z $watch || $# -eq 0 ]]; then
    echo "usage: watchdog.sh --watch FILE [--stall SECONDS] [--limit SECONDS] -- COMMAND..." >&2
    exit 2
fi

"$@" &
command_pid=$!

# Every process below $1, parents first.
descendants() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}

kill_tree() {
    local pids
    pids=$(echo "$command_pid" $(descendants "$command_pid"))
    kill -TERM $pids 2>/dev/null
    for _ in $(seq 1 20); do
        kill -0 "$command_pid" 2>/dev/null || break
        sleep 0.5
    done
    # Whatever is left, and anything started meanwhile.
    pids=$(echo "$pids" $(descendants "$command_pid"))
    kill -KILL $pids 2>/dev/null
}

trap 'kill_tree; exit 130' INT TERM

# The tests the log shows started and not passed, failed or skipped.
unfinished_tests() {
    [[ -f $watch ]] || return 0
    awk '
        /^◇ Test .* started\.$/ {
            name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); open[name] = NR
        }
        /^[✔✘] Test .* (passed|failed) after / {
            name = $0; sub(/^[✔✘] Test /, "", name); sub(/ (passed|failed) after .*/, "", name); delete open[name]
        }
        END { for (name in open) print "  " name }
    ' "$watch"
}

give_up() {
    {
        echo "watchdog: $1: stopping it"
        echo "watchdog: tests started and not finished:"
        unfinished_tests
        echo "watchdog: the process tree below it:"
        ps -o pid,ppid,stat,etime,time,args --forest \
            -p "$(echo "$command_pid" $(descendants "$command_pid") | tr ' ' ',')" 2>/dev/null
    } >&2
    kill_tree
    wait "$command_pid" 2>/dev/null
    exit 124
}

start=$SECONDS
last_size=-1
last_change=$SECONDS
while kill -0 "$command_pid" 2>/dev/null; do
    sleep 2
    size=$(stat -c %s "$watch" 2>/dev/null || echo 0)
    if [[ $size != "$last_size" ]]; then
        last_size=$size
        last_change=$SECONDS
    fi
    if (( SECONDS - last_change >= stall )); then
        give_up "no progress: $watch has not grown for $stall s"
    fi
    if (( limit > 0 && SECONDS - start >= limit )); then
        give_up "still running after its limit of $limit s"
    fi
done
wait "$command_pid"
