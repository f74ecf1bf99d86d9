#!/usr/bin/env bash
# Harbor — the whole test suite, from a fresh clone on a fresh machine:
# installs what is missing, builds warning-free, checks what the compiler
# does not (Scripts/soundness.sh), model-checks the port protocol
# (Scripts/model.sh, Docs/Model.md), runs every test, builds
# the DocC documentation as one site, warning-free (Scripts/docs.sh), then
# checks the shipped systemd units (lint, and harbord under a real systemd
# booted in private namespaces: Docs/Systemd.md), and installing on a
# server (Scripts/install-test.sh: the static release build, install.sh,
# the .deb). The systemd steps skip, saying why, only on a machine without
# systemd or without namespaces.
#
# Tests run one at a time (--no-parallel): several of them count this
# process's open descriptors, which parallel tests would disturb. Each test
# ends by its own deadline (HarborTestSupport's TestDeadline); the run as a
# whole is stopped, with its process tree printed, when its log has not
# grown for 12 minutes (Scripts/watchdog.sh), rather than hanging CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every step has its own deadline (timeout, on the step's process group):
# the tests' is the watchdog's, below; the others' are generous multiples
# of what they take on a fresh two-CPU machine.
timeout 900 bash Scripts/install-deps.sh
timeout 3000 bash Scripts/build.sh debug
echo "test: soundness: libc only in System, @unchecked Sendable justified, one type per file, root test suites with deadlines (Scripts/soundness.sh)"
timeout 300 bash Scripts/soundness.sh
echo "test: model checking, the port protocol in Promela (Scripts/model.sh)"
bash Scripts/model.sh

echo "test: swift test --no-parallel"
set +e
bash Scripts/watchdog.sh --watch .build/test.log -- swift test --skip-build --no-parallel 2>&1 \
    | tee .build/test.log | grep -v -E "^◇ .* started\.$"
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
    echo "test: FAILED (exit $status); the full log is .build/test.log" >&2
    exit "$status"
fi
echo "test: swift tests passed"

echo "test: DocC, one site of every library, warning-free and linked across modules (Scripts/docs.sh)"
timeout 1500 bash Scripts/docs.sh

echo "test: fuzzing, 20 s a target over its corpus (Scripts/fuzz.sh --bounded)"
bash Scripts/fuzz.sh --bounded
echo "test: systemd unit lint (Scripts/systemd-test/lint.sh)"
timeout 300 bash Scripts/systemd-test/lint.sh
echo "test: harbord under a real systemd (Scripts/systemd-test/run.sh)"
bash Scripts/systemd-test/run.sh
echo "test: installing on a server, the static build, the .deb (Scripts/install-test.sh)"
HARBOR_INSTALL_BUILD_TIMEOUT=1800 timeout 2400 bash Scripts/install-test.sh
echo "test: the .deb of those static binaries under a real systemd (Scripts/systemd-test/run.sh, HSD_ONLY=deb)"
HSD_ONLY=deb HSD_DEB_BINARIES=.build-static/release timeout 600 bash Scripts/systemd-test/run.sh
echo "test: all passed"
