#!/usr/bin/env bash
# Harbor — PID 1 of fresh pid, mount, uts, ipc and net namespaces: builds a
# private world on top of the host's read-only file system, then execs a
# real systemd as PID 1 in a new cgroup namespace (Docs/Systemd.md,
# "harbord under a real systemd").
#
# Started by Scripts/systemd-test/run.sh as
#   script … unshare --pid --fork --kill-child --mount --uts --ipc --net --mount-proc ns-init.sh
# Environment:
#   HSD_DIR   work directory on the host: usr-local/ (copied into /usr/local:
#             the binaries and the shipped unit files), units/ (copied to
#             /run/systemd/system, the runtime unit directory)
#   HSD_CG    a host cgroup2 directory to root systemd's cgroup namespace at
#   HSD_GOAL  the boot goal (default harbor-sdtest.target)
#   HSD_OVERLAY_USR=1  /usr an overlay too (the package test's dpkg writes it)
#
# Every write systemd and its units make lands in tmpfs: /run, /tmp, /var/tmp
# and /dev are private; /etc, /var, /root and /usr/local are overlays with a
# tmpfs upper layer; / itself is read-only. Each step below exists because
# leaving it out touched the host (see SYSTEMD-TESTING notes in Docs/Systemd.md).
set -euo pipefail
D=${HSD_DIR:?HSD_DIR is not set}

# No mount event may reach the host; -n: libmount must not write the host's /run/mount.
mount -n --make-rprivate /
CONSOLE=$(tty 2>/dev/null || true)    # the pty `script` gave us
mount -n -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run

# A private minimal /dev: journald's /dev/log symlink and the console stay in here.
mkdir /run/.dev
mount -t tmpfs -o mode=0755,nosuid tmpfs /run/.dev
for node in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
    set -- $node
    mknod -m 666 "/run/.dev/$1" c "$2" "$3"
done
mkdir /run/.dev/pts /run/.dev/shm /run/.dev/mqueue
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,nosuid,noexec devpts /run/.dev/pts
ln -s pts/ptmx /run/.dev/ptmx
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /run/.dev/shm
ln -s /proc/self/fd /run/.dev/fd
ln -s /proc/self/fd/0 /run/.dev/stdin
ln -s /proc/self/fd/1 /run/.dev/stdout
ln -s /proc/self/fd/2 /run/.dev/stderr
# systemd as PID 1 of a container logs to /dev/console and insists on a tty:
# a regular file bound there stays empty, the pty of `script` works.
if [[ -n $CONSOLE ]]; then
    touch /run/.dev/console
    mount --bind "$CONSOLE" /run/.dev/console
fi
mount --move /run/.dev /dev
rmdir /run/.dev 2>/dev/null || true

# Runtime units and the journald drop-in (the host's /var/log/journal exists:
# keep the journal in memory).
mkdir -p /run/systemd/system /run/lock /run/systemd/journald.conf.d /run/.hsd
cp -r "$D/units/." /run/systemd/system/
printf '[Journal]\nStorage=volatile\n' >/run/systemd/journald.conf.d/volatile.conf
# The payload must be copied before /tmp is hidden (the work dir may live there).
cp -r "$D/usr-local" /run/.hsd/usr-local

# The host root read-only; throw-away overlays where booted units write
# (tmpfiles, sysusers, utmp/wtmp, state) and where the test installs files.
mount -o remount,bind,ro /
overlays=(etc var root usr/local)
# The package test installs a .deb with dpkg, which writes /usr.
[[ ${HSD_OVERLAY_USR:-} == 1 ]] && overlays=(etc var root usr usr/local)
for dir in "${overlays[@]}"; do
    key=${dir//\//_}
    mkdir -p "/run/.ovl/$key/upper" "/run/.ovl/$key/work"
    mount -t overlay overlay \
        -o "lowerdir=/$dir,upperdir=/run/.ovl/$key/upper,workdir=/run/.ovl/$key/work" "/$dir"
done
cp -r /run/.hsd/usr-local/. /usr/local/
rm -rf /run/.hsd
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp

# Units that touch the kernel or make no sense here are masked (in the
# private /run). A getty on the console pty would vhangup() it and kill `script`.
for unit in systemd-modules-load.service modprobe@.service kmod-static-nodes.service \
            systemd-remount-fs.service systemd-sysctl.service systemd-binfmt.service \
            systemd-udevd.service systemd-udev-trigger.service systemd-random-seed.service \
            systemd-hwdb-update.service ldconfig.service swap.target \
            console-getty.service getty@.service serial-getty@.service container-getty@.service; do
    ln -sf /dev/null "/run/systemd/system/$unit"
done

# cgroup2 only, rooted at HSD_CG/payload: only this process moves there, so
# the new cgroup namespace holds just systemd and what it starts.
if [[ -n ${HSD_CG:-} ]]; then
    mkdir -p "$HSD_CG/payload"
    echo $$ >"$HSD_CG/payload/cgroup.procs"
fi
umount -R /sys/fs/cgroup
# Read-only /sys and /proc/sys: udev, sysctl and binfmt skip themselves.
mount -o remount,bind,ro /sys
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys

export container=unshare HSD_GOAL=${HSD_GOAL:-harbor-sdtest.target} HSD_LOGLEVEL=${HSD_LOGLEVEL:-info}
# No kernel-global capabilities (modules, clock, raw I/O, syslog); a new
# cgroup namespace with cgroup2 mounted from inside it.
exec setpriv --bounding-set -sys_module,-sys_time,-sys_rawio,-syslog,-wake_alarm,-block_suspend \
    unshare --cgroup -- /bin/sh -c 'mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup &&
    exec /usr/bin/systemd --system --unit="$HSD_GOAL" --log-level="$HSD_LOGLEVEL"'
