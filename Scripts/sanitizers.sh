#!/usr/bin/env bash
# Harbor — the whole test suite under ThreadSanitizer and under
# AddressSanitizer (with LeakSanitizer), harbord and every other spawned
# executable built with the same sanitizer. Fails on a failed test or on any
# sanitizer report, from the test process or from any child.
#
#   bash Scripts/sanitizers.sh [thread|address]...   (default: both)
#
# Each sanitizer builds in its own scratch folder (.build-tsan, .build-asan).
# Every process writes its reports to report.<pid> files (log_path; kept in
# <scratch>/sanitizer-logs; the tests hand *SAN_OPTIONS to the children they
# spawn), so a report from harbord counts even when a test swallowed its
# stderr. The
# fuzz and systemd steps of Scripts/test.sh are not repeated here: fuzzing
# already runs with AddressSanitizer, and the systemd step tests the units.
#
# Suppressions (Scripts/sanitizers/*.supp) name only code outside Harbor,
# each with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests skipped under a sanitizer: each checks a time budget (or counts
# wake-ups) that instrumented code on a busy machine misses for no fault of
# Harbor's; everything else they run is covered by other tests. Measured
# failures, not guesses: a skipped test failed on its budget in a full run.
skip_both=(
    P10_aRestartedNameServerHasItsNamesBackWithinOneSecond  # 1 s to re-register
    P10_harborListShowsTenThousandNames                     # 60 s for 10,000 names
    P08_aRegionFarBeyondTheSocketLimitReachesAnotherProcess # 64 MiB checksummed a byte at a time
    P09_aFuzzedReceiverStaysUpAndLeaksNothing               # 2 min of fuzzing (Scripts/fuzz.sh runs it under ASan)
)
skip_thread=(
    "${skip_both[@]}"
    P12_harbordSleepsAfterTraffic   # counts every thread's wake-ups: TSan's own thread wakes each 100 ms
    P12_unfinishedFragmentedMessagesHoldBoundedMemory  # the honest client's echo deadline, during a siege
    P12_aSenderThatDiesMidMessageLeavesNothingBehind   # the same
)
skip_address=(
    "${skip_both[@]}"
    # Resident memory back to its baseline after a siege: ASan's allocator
    # keeps freed memory (its quarantine is how it catches use after free).
    P12_freshIdentitiesDoNotGrowTheVictim
    P12_hoardedNamesLockNoOneOut
    P12_repliesNobodyReadsBlockNoOne
)

sanitizers=("$@")
[[ ${#sanitizers[@]} -eq 0 ]] && sanitizers=(thread address)
supp="$PWD/Scripts/sanitizers"
failed=0

for sanitizer in "${sanitizers[@]}"; do
    case $sanitizer in
        thread) scratch=.build-tsan ;;
        address) scratch=.build-asan ;;
        *) echo "sanitizers: unknown sanitizer '$sanitizer' (thread, address)" >&2; exit 2 ;;
    esac
    # Tests run some children as nobody, who may not reach the checkout:
    # reports go to a world-writable folder under /tmp, copied back at the end.
    logs=$(mktemp -d /tmp/harbor-sanitizer.XXXXXX)
    chmod 1777 "$logs"
    start=$SECONDS

    mkdir -p "$scratch"  # a fresh clone has none; the build log goes there
    echo "sanitizers: swift build --sanitize=$sanitizer --build-tests ($scratch)"
    # The build's deadline: about three times what it takes from scratch here.
    if ! timeout 1800 swift build --sanitize="$sanitizer" --build-tests --scratch-path "$scratch" >"$scratch/build.log" 2>&1; then
        grep -E "error:" -A3 "$scratch/build.log" | head -60 >&2 || tail -40 "$scratch/build.log" >&2
        echo "sanitizers: $sanitizer build FAILED" >&2
        exit 1
    fi

    common="log_path=$logs/report"
    export TSAN_OPTIONS="$common halt_on_error=0 second_deadlock_stack=1 suppressions=$supp/tsan.supp"
    # A quarantine of 64 MiB instead of 256: the siege tests bound a victim's
    # resident memory (512 MiB under a sanitizer), and a flood's freed replies
    # sitting in a 256 MiB quarantine came within 2 MiB of it.
    export ASAN_OPTIONS="$common detect_leaks=1 detect_stack_use_after_return=0 quarantine_size_mb=64"
    export LSAN_OPTIONS="$common suppressions=$supp/lsan.supp"

    skips=()
    if [[ $sanitizer == thread ]]; then list=("${skip_thread[@]}"); else list=("${skip_address[@]}"); fi
    for name in "${list[@]}"; do skips+=(--skip "$name"); done
    echo "sanitizers: swift test --sanitize=$sanitizer --no-parallel (skipping ${#list[@]} time-bound tests)"
    set +e
    # Each test ends by its own deadline (HarborTestSupport's TestDeadline:
    # its children killed, then the test process ended, naming the test).
    # Scripts/watchdog.sh stops the run, printing the tests left unfinished
    # and the process tree, when its log has not grown for 12 minutes or
    # after 40 (a child holding swift-test's output pipe open after the
    # run, say), and kills every process below swift-test, which `timeout`
    # did not reach: the test runner has a process group of its own.
    bash Scripts/watchdog.sh --watch "$scratch/test.log" --limit 2400 -- \
        swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel "${skips[@]}" \
        >"$scratch/test.log" 2>&1
    status=$?
    set -e
    unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS
    rm -rf "$scratch/sanitizer-logs"
    cp -r "$logs" "$scratch/sanitizer-logs"
    rm -rf "$logs"
    logs="$scratch/sanitizer-logs"
    grep -E "✘|Test run with|error:|watchdog:" "$scratch/test.log" | tail -30 || true

    reports=$(grep -l -E "WARNING: ThreadSanitizer|ERROR: (AddressSanitizer|LeakSanitizer)|SUMMARY: (Thread|Address|Leak|UndefinedBehavior)Sanitizer" \
        "$logs"/report.* "$scratch/test.log" 2>/dev/null || true)
    echo "sanitizers: $sanitizer: exit $status, $(echo -n "$reports" | grep -c . || true) file(s) with reports, $((SECONDS - start)) s"
    if [[ -n $reports ]]; then
        for file in $reports; do
            echo "---- $file" >&2
            grep -E "^(WARNING|ERROR|SUMMARY|    #[0-9]+ )" "$file" | head -60 >&2
        done
        failed=1
    fi
    [[ $status -ne 0 ]] && failed=1
done

if [[ $failed -ne 0 ]]; then
    echo "sanitizers: FAILED (logs: .build-tsan/, .build-asan/)" >&2
    exit 1
fi
echo "sanitizers: no reports, all tests passed"
