#!/usr/bin/env bash
# Harbor — installs harbord and harbor on a server, upgrades them in place,
# or removes them (Docs/Install.md).
#
#   sudo bash Scripts/install.sh [--root DIR] [--prefix DIR] [--binaries DIR] [--no-systemctl]
#   sudo bash Scripts/install.sh --uninstall [--root DIR] [--no-systemctl]
#
# Installs, under DIR (default /):
#   PREFIX/bin/harbord, PREFIX/bin/harbor   (PREFIX default /usr/local), built
#       in release with a static Swift runtime (.build-static; they need the
#       system's libc, libstdc++, libgcc_s and libsystemd, not the Swift
#       toolchain), or copied from --binaries DIR
#   /etc/systemd/system/harbord.{socket,service}, harbor-activate.{path,service}
#   /etc/systemd/user/harbord.{socket,service}      (a harbord per user)
#   /etc/harbor/policy.conf                          (commented; never replaced)
#   /var/lib/harbor/install-manifest                 (what --uninstall removes)
# Running it again upgrades: binaries and units are replaced (each written
# beside its place, then renamed over it), an edited policy file is kept.
# On the running system (DIR /, systemd running, no --no-systemctl) it then
# reloads systemd, enables harbord.socket on a first install and restarts a
# running harbord on an upgrade. --uninstall stops and disables the units,
# removes every file of the manifest and the directories it made; the
# policy file goes only if it is as shipped (an edited one stays, and the
# script says so). Exit status: 0 done, 1 failed, 2 bad command line.
set -euo pipefail
cd "$(dirname "$0")/.."

root=/
prefix=/usr/local
binaries=""
uninstall=0
systemctl_allowed=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --root) root="$2"; shift ;;
        --prefix) prefix="$2"; shift ;;
        --binaries) binaries="$2"; shift ;;
        --uninstall) uninstall=1 ;;
        --no-systemctl) systemctl_allowed=0 ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "install: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[[ $prefix == /* ]] || { echo "install: --prefix must be absolute" >&2; exit 2; }
root=${root%/}
manifest=$root/var/lib/harbor/install-manifest
shipped_policy=Scripts/policy.conf

# systemctl only on the running system, where systemd runs.
live_systemd() {
    [[ $systemctl_allowed -eq 1 && -z $root && -d /run/systemd/system ]] && command -v systemctl >/dev/null
}

if [[ $uninstall -eq 1 ]]; then
    if [[ ! -f $manifest ]]; then
        echo "install: nothing to remove: no $manifest" >&2
        exit 1
    fi
    if live_systemd; then
        systemctl disable --now harbord.socket harbord.service harbor-activate.path >/dev/null 2>&1 || true
    fi
    removed=0
    while IFS= read -r file; do
        [[ -n $file ]] || continue
        rm -f -- "$root$file"
        removed=$((removed + 1))
    done < <(sed -n 's/^file //p' "$manifest")
    policy=$root/etc/harbor/policy.conf
    if [[ -f $policy ]]; then
        if cmp -s "$policy" "$shipped_policy"; then
            rm -f -- "$policy"
        else
            echo "install: kept $policy: it was edited (remove it by hand if it is no longer wanted)"
        fi
    fi
    # The directories this script made, deepest first, if empty now.
    dirs=()
    if [[ -f $manifest.dirs ]]; then mapfile -t dirs < <(sed -n 's/^dir //p' "$manifest.dirs" | sort -r); fi
    rm -f -- "$manifest" "$manifest.dirs"
    for dir in "${dirs[@]+"${dirs[@]}"}"; do rmdir -- "$root$dir" 2>/dev/null || true; done
    if live_systemd; then systemctl daemon-reload; fi
    echo "install: removed $removed files"
    exit 0
fi

# The binaries: a static Swift runtime, so they run without the toolchain.
if [[ -z $binaries ]]; then
    echo "install: building harbord and harbor (release, static Swift runtime, .build-static)"
    for product in harbord harbor; do
        if ! timeout "${HARBOR_INSTALL_BUILD_TIMEOUT:-3600}" swift build -c release --static-swift-stdlib \
                --scratch-path .build-static --product "$product" 2>&1 | grep -v -E "^\[[0-9]+/[0-9]+\]"; then
            echo "install: the build of $product failed or took too long" >&2
            exit 1
        fi
    done
    binaries=.build-static/release
fi
for product in harbord harbor; do
    [[ -x $binaries/$product ]] || { echo "install: no $binaries/$product" >&2; exit 1; }
done

[[ -z $root ]] || mkdir -p -- "$root"
upgrade=0
previous=()
if [[ -f $manifest ]]; then
    upgrade=1
    mapfile -t previous < <(sed -n 's/^file //p' "$manifest")
fi
made_dirs=()
# Makes a directory (and its parents), remembering the ones it made.
make_dir() {
    local dir=$1 path=""
    local IFS=/
    for part in ${dir#/}; do
        path=$path/$part
        if [[ ! -d $root$path ]]; then
            mkdir -m 0755 -- "$root$path"
            made_dirs+=("$path")
        fi
    done
}
installed=()
# Writes $1 (a source file) to $2 (a path under the root) with mode $3,
# beside its place first and then renamed over it: a running binary or a
# unit being read never sees half a file.
place() {
    local source=$1 target=$2 mode=$3
    make_dir "$(dirname "$target")"
    local staged
    staged=$(mktemp "$root$(dirname "$target")/.harbor-install.XXXXXX")
    cat -- "$source" > "$staged"
    chmod "$mode" "$staged"
    mv -f -- "$staged" "$root$target"
    installed+=("$target")
}
# A unit with its binaries' paths set to the prefix.
unit() {
    local source=$1 target=$2 rendered
    rendered=$(mktemp)
    sed "s|/usr/local/bin/|$prefix/bin/|g" "$source" > "$rendered"
    place "$rendered" "$target" 0644
    rm -f -- "$rendered"
}

place "$binaries/harbord" "$prefix/bin/harbord" 0755
place "$binaries/harbor" "$prefix/bin/harbor" 0755
for name in harbord.socket harbord.service harbor-activate.path harbor-activate.service; do
    unit "Scripts/systemd/$name" "/etc/systemd/system/$name"
done
for name in harbord.socket harbord.service; do
    unit "Scripts/systemd-user/$name" "/etc/systemd/user/$name"
done
make_dir /etc/harbor
if [[ ! -e $root/etc/harbor/policy.conf ]]; then
    cp -- "$shipped_policy" "$root/etc/harbor/policy.conf"
    chmod 0644 "$root/etc/harbor/policy.conf"
elif ! cmp -s "$root/etc/harbor/policy.conf" "$shipped_policy"; then
    echo "install: kept the edited $root/etc/harbor/policy.conf"
fi
make_dir /var/lib/harbor

# The manifest: every file placed, and (in its own list) the directories
# this and earlier runs made, for --uninstall.
{
    echo "# Harbor install manifest: written by Scripts/install.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), prefix $prefix"
    for file in "${installed[@]}"; do echo "file $file"; done
} > "$manifest.new"
mv -f -- "$manifest.new" "$manifest"
# What an earlier install placed and this one did not (another --prefix).
for file in "${previous[@]+"${previous[@]}"}"; do
    kept=0
    for placed in "${installed[@]}"; do [[ $placed == "$file" ]] && kept=1 && break; done
    [[ $kept -eq 1 ]] || rm -f -- "$root$file"
done
{
    [[ -f $manifest.dirs ]] && cat -- "$manifest.dirs"
    for dir in "${made_dirs[@]+"${made_dirs[@]}"}"; do echo "dir $dir"; done
} | sort -u > "$manifest.dirs.new"
mv -f -- "$manifest.dirs.new" "$manifest.dirs"

if live_systemd; then
    systemctl daemon-reload
    if [[ $upgrade -eq 0 ]]; then
        systemctl enable --now harbord.socket
    else
        systemctl try-restart harbord.service
    fi
fi
version=$("$root$prefix/bin/harbord" --version 2>/dev/null || echo "?")
if [[ $upgrade -eq 1 ]]; then verb=upgraded; else verb=installed; fi
echo "install: $verb harbord $version and harbor in $root$prefix/bin, ${#installed[@]} files (manifest $manifest)"
