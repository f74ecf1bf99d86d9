#!/usr/bin/env bash
# Harbor — installs what building and testing Harbor needs on a fresh Debian
# machine: libsystemd's headers (HarborSystemd, the sd-bus benchmark) and
# pkg-config (SwiftPM finds libsystemd through it), spin (the model
# checker Scripts/model.sh runs: Docs/Model.md), tshark (the capture
# tests read their pcapng files with it and Tools/wireshark/harbor.lua:
# Docs/Capture.md), and curl (the package test scrapes harbord's metrics
# socket with it). Safe to run again: it
# does nothing when everything is there. Runs as root with no prompt.
set -euo pipefail

needed=()
for package in libsystemd-dev pkg-config spin tshark curl; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || needed+=("$package")
done
if ((${#needed[@]} == 0)); then
    echo "install-deps: libsystemd-dev, pkg-config, spin, tshark and curl are present"
    exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "install-deps: need root to install ${needed[*]} (run as root, or install them yourself)" >&2
        exit 1
    fi
fi

echo "install-deps: installing ${needed[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt (unattended upgrades at boot, a second install) may hold
# dpkg's lock: wait for it up to 10 minutes rather than fail.
lock=(-o DPkg::Lock::Timeout=600)
"${as_root[@]}" apt-get "${lock[@]}" update -qq
"${as_root[@]}" apt-get "${lock[@]}" install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
echo "install-deps: done"
