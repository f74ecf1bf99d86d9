#!/usr/bin/env bash
# Harbor — builds a Debian package of harbord and harbor (Docs/Install.md).
#
#   bash Scripts/package-deb.sh [--binaries DIR] [--output DIR]
#
# The package holds what Scripts/install.sh installs, with the prefix /usr:
# the two binaries (a static Swift runtime: built like install.sh does,
# unless --binaries names them), the system and per-user units (in
# /usr/lib/systemd/system and /usr/lib/systemd/user), and the
# commented /etc/harbor/policy.conf as a conffile (kept when edited, as
# dpkg keeps conffiles). Its maintainer scripts, on a system where systemd
# runs: postinst reloads systemd and enables and starts harbord.socket
# (restarts a running harbord on an upgrade); prerm stops and disables the
# units on removal; postrm reloads systemd. It depends on libc6,
# libstdc++6, libgcc-s1 and libsystemd0 (what the static Swift runtime
# leaves to the system). Writes OUTPUT/harbor_VERSION_ARCH.deb (default .build-deb)
# and prints its path. Exit status: 0 built, 1 failed, 2 bad command line.
set -euo pipefail
cd "$(dirname "$0")/.."

binaries=""
output=.build-deb
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binaries) binaries="$2"; shift ;;
        --output) output="$2"; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "package-deb: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/harbor-deb.XXXXXX")
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
# The files, placed by the installer itself (no systemctl, no manifest kept).
bash Scripts/install.sh --root "$stage" --prefix /usr --no-systemctl ${binaries:+--binaries "$binaries"} >/dev/null
rm -rf "$stage/var/lib/harbor"
rmdir "$stage/var/lib" "$stage/var" 2>/dev/null || true
# A package's units go where the distribution's do (/usr/lib/systemd); the
# administrator's /etc/systemd stays theirs, to override them.
for kind in system user; do
    mkdir -p "$stage/usr/lib/systemd/$kind"
    mv "$stage/etc/systemd/$kind/"* "$stage/usr/lib/systemd/$kind/"
    rmdir "$stage/etc/systemd/$kind"
done
rmdir "$stage/etc/systemd"

version=$("$stage/usr/bin/harbord" --version)
arch=$(dpkg --print-architecture)
mkdir -p "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: harbor
Version: $version
Architecture: $arch
Maintainer: Harbor developers <harbor@localhost>
Depends: libc6, libstdc++6, libgcc-s1, libsystemd0
Section: admin
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Description: Mach-style message ports and a bootstrap name server for Linux
 harbord maps service names to Harbor ports (socket-activated by systemd);
 harbor looks names up, sends, lists, watches, introspects and calls.
CONTROL
echo /etc/harbor/policy.conf > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    if [ -z "$2" ]; then
        systemctl enable --now harbord.socket
    else
        systemctl try-restart harbord.service
    fi
fi
SCRIPT
cat > "$stage/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl disable --now harbord.socket harbord.service harbor-activate.path >/dev/null 2>&1 || true
fi
SCRIPT
cat > "$stage/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
SCRIPT
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"
mkdir -p "$output"
package="$output/harbor_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage" "$package" >/dev/null
echo "$package"
