#!/usr/bin/env bash
# Harbor — checks Scripts/install.sh and Scripts/package-deb.sh (O04, O05;
# Docs/Install.md) in throw-away roots: a first install, an upgrade in
# place that keeps an edited policy, a change of prefix, an uninstall that
# leaves nothing behind, binaries that need no Swift toolchain, and a
# Debian package holding the same files.
#
#   bash Scripts/install-test.sh [--binaries DIR]
#
# By default the binaries are built as install.sh builds them (release,
# static Swift runtime, .build-static); --binaries DIR uses those instead
# and skips the check that they need no Swift runtime. Prints one line a
# check ("ok" or "FAILED"); exit 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

binaries=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binaries) binaries="$2"; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "install-test: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

failed=0
check() {  # check TAG DESCRIPTION COMMAND...
    local tag=$1 what=$2
    shift 2
    if "$@"; then echo "install-test: ok     $tag $what"; else echo "install-test: FAILED $tag $what"; failed=1; fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/harbor-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ -z $binaries ]]; then
    echo "install-test: building the static binaries (install.sh's build)"
    # install.sh builds them when --binaries is not given: once, into a root
    # used only for that.
    if ! bash Scripts/install.sh --root "$work/build-root" --no-systemctl >/dev/null; then
        echo "install-test: FAILED: install.sh could not build the binaries" >&2
        exit 1
    fi
    binaries=.build-static/release
    static=1
else
    static=0
fi
install() { bash Scripts/install.sh --no-systemctl --binaries "$binaries" "$@" >"$work/out" 2>&1; }

# O04: a first install places binaries, units and the policy, with the prefix.
root=$work/root
mkdir -p "$root"
check O04 "a first install succeeds" install --root "$root"
# What an install places, sorted: the binaries under $1 (no leading /), the
# units and the policy.
placed() {
    printf '%s\n' etc/harbor/policy.conf etc/systemd/system/harbor-activate.path \
        etc/systemd/system/harbor-activate.service etc/systemd/system/harbord.service \
        etc/systemd/system/harbord.socket etc/systemd/user/harbord.service \
        etc/systemd/user/harbord.socket "$1/bin/harbor" "$1/bin/harbord" | sort
}
check O04 "it places exactly the binaries, the system and user units, the policy and its manifest" \
    test "$(cd "$root" && find . -type f | sed 's|^\./||' | sort)" = \
        "$( (placed usr/local; echo var/lib/harbor/install-manifest; echo var/lib/harbor/install-manifest.dirs) | sort)"
check O04 "the units run the installed binaries" \
    grep -q '^ExecStart=/usr/local/bin/harbord$' "$root/etc/systemd/system/harbord.service"
check O04 "the installed harbord runs (--version)" "$root/usr/local/bin/harbord" --version
check O04 "the installed policy file is valid" "$root/usr/local/bin/harbord" --check-config "$root/etc/harbor/policy.conf"
if [[ $static -eq 1 ]]; then
    check O04 "harbord and harbor need no Swift runtime library (static)" \
        bash -c "! ldd '$root/usr/local/bin/harbord' '$root/usr/local/bin/harbor' | grep -q libswift"
fi

# O04: running it again upgrades in place and keeps an edited policy.
echo "shared  com.example.kept owner=0" >> "$root/etc/harbor/policy.conf"
printf 'old binary\n' > "$root/usr/local/bin/harbor"
check O04 "a second run (an upgrade) succeeds" install --root "$root"
check O04 "the upgrade says it upgraded" grep -q "upgraded" "$work/out"
check O04 "the upgrade replaces the binaries" cmp -s "$binaries/harbor" "$root/usr/local/bin/harbor"
check O04 "the upgrade keeps the edited policy" grep -q "com.example.kept" "$root/etc/harbor/policy.conf"
check O04 "the upgrade leaves no staging file" \
    bash -c "! find '$root' -name '.harbor-install.*' | grep -q ."

# O04: another prefix moves the binaries; nothing stays at the old one.
check O04 "an install with --prefix /usr succeeds" install --root "$root" --prefix /usr
check O04 "the binaries moved to the new prefix" test -x "$root/usr/bin/harbord" -a ! -e "$root/usr/local/bin/harbord"
check O04 "the units follow the prefix" grep -q '^ExecStart=/usr/bin/harbord$' "$root/etc/systemd/system/harbord.service"

# O04: --uninstall removes everything; an edited policy stays and is named.
check O04 "an uninstall succeeds" install --root "$root" --uninstall
check O04 "the uninstall names the edited policy it kept" grep -q "kept .*policy.conf" "$work/out"
check O04 "only the edited policy stays" \
    test "$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')" = "./etc ./etc/harbor ./etc/harbor/policy.conf "
clean=$work/clean
mkdir -p "$clean"
install --root "$clean" && install --root "$clean" --uninstall
check O04 "install then uninstall on a clean root leaves nothing behind" \
    test -z "$(find "$clean" -mindepth 1)"
check O04 "an uninstall with nothing installed fails" bash -c "! bash Scripts/install.sh --root '$clean' --uninstall --no-systemctl 2>/dev/null"
check O04 "a bad argument exits 2" bash -c "bash Scripts/install.sh --bogus 2>/dev/null; test \$? -eq 2"

# O05: the Debian package holds the same files, prefix /usr, the policy a conffile.
if package=$(bash Scripts/package-deb.sh --binaries "$binaries" --output "$work/deb" 2>"$work/deb.err"); then
    check O05 "package-deb.sh builds a package" test -f "$package"
    listed=$(dpkg-deb -c "$package" | awk '{print $6}' | grep -v '/$' | sed 's|^\./||' | sort)
    check O05 "the package holds the binaries in /usr/bin, the units in /usr/lib/systemd and the policy" \
        test "$listed" = "$(placed usr | sed 's|^etc/systemd/|usr/lib/systemd/|' | sort)"
    check O05 "the policy is a conffile" bash -c "dpkg-deb --ctrl-tarfile '$package' | tar -xO ./conffiles | grep -qx /etc/harbor/policy.conf"
    check O05 "it depends on libc6, libstdc++6, libgcc-s1 and libsystemd0" bash -c "dpkg-deb -f '$package' Depends | grep -qx 'libc6, libstdc++6, libgcc-s1, libsystemd0'"
    mkdir -p "$work/unpacked"
    dpkg-deb -x "$package" "$work/unpacked"
    check O05 "its units run /usr/bin/harbord" grep -q '^ExecStart=/usr/bin/harbord$' "$work/unpacked/usr/lib/systemd/system/harbord.service"
else
    check O05 "package-deb.sh builds a package" false
    cat "$work/deb.err" >&2
fi

if [[ $failed -ne 0 ]]; then echo "install-test: FAILED"; exit 1; fi
echo "install-test: all passed"
