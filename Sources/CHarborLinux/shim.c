// Harbor — C shim. See include/CHarborLinux.h for why each item exists.
#ifndef _GNU_SOURCE
#error "CHarborLinux must be built with _GNU_SOURCE (Package.swift sets it)"
#endif

#include "CHarborLinux.h"
#include <sys/syscall.h>

int charbor_errno(void) { return errno; }
void charbor_set_errno(int value) { errno = value; }

const int charbor_EFD_CLOEXEC = EFD_CLOEXEC;
const int charbor_EFD_NONBLOCK = EFD_NONBLOCK;
const int charbor_EFD_SEMAPHORE = EFD_SEMAPHORE;
const int charbor_EPOLL_CLOEXEC = EPOLL_CLOEXEC;
const int charbor_TFD_CLOEXEC = TFD_CLOEXEC;
const int charbor_TFD_NONBLOCK = TFD_NONBLOCK;
const int charbor_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;
const int charbor_SFD_CLOEXEC = SFD_CLOEXEC;
const int charbor_SFD_NONBLOCK = SFD_NONBLOCK;
const int charbor_SOCK_CLOEXEC = SOCK_CLOEXEC;
const int charbor_SOCK_NONBLOCK = SOCK_NONBLOCK;
const int charbor_MSG_CMSG_CLOEXEC = MSG_CMSG_CLOEXEC;
const int charbor_MFD_CLOEXEC = MFD_CLOEXEC;
const int charbor_MFD_ALLOW_SEALING = MFD_ALLOW_SEALING;
const int charbor_SCM_RIGHTS = SCM_RIGHTS;
const int charbor_SCM_CREDENTIALS = SCM_CREDENTIALS;

const int charbor_SOCK_SEQPACKET = SOCK_SEQPACKET;
const int charbor_SO_PASSCRED = SO_PASSCRED;
#ifdef SO_PASSPIDFD
const int charbor_SO_PASSPIDFD = SO_PASSPIDFD;
#else
const int charbor_SO_PASSPIDFD = 76;
#endif
#ifdef SCM_PIDFD
const int charbor_SCM_PIDFD = SCM_PIDFD;
#else
const int charbor_SCM_PIDFD = 0x04;
#endif
const int charbor_SO_SNDBUF = SO_SNDBUF;
const int charbor_SO_RCVBUF = SO_RCVBUF;
const int charbor_MSG_NOSIGNAL = MSG_NOSIGNAL;
const int charbor_MSG_DONTWAIT = MSG_DONTWAIT;
const int charbor_MSG_CTRUNC = MSG_CTRUNC;
const int charbor_MSG_TRUNC = MSG_TRUNC;
const int charbor_F_ADD_SEALS = F_ADD_SEALS;
const int charbor_F_GET_SEALS = F_GET_SEALS;
const int charbor_F_SEAL_SEAL = F_SEAL_SEAL;
const int charbor_F_SEAL_SHRINK = F_SEAL_SHRINK;
const int charbor_F_SEAL_GROW = F_SEAL_GROW;
const int charbor_F_SEAL_WRITE = F_SEAL_WRITE;
#ifdef F_SEAL_FUTURE_WRITE
const int charbor_F_SEAL_FUTURE_WRITE = F_SEAL_FUTURE_WRITE;
#else
const int charbor_F_SEAL_FUTURE_WRITE = 0x0010;
#endif

_Static_assert(sizeof(struct charbor_ucred) == sizeof(struct ucred), "ucred layout");

#include <linux/futex.h>
int charbor_futex_wait(int32_t *word, int32_t expected, const struct timespec *timeout) {
    return (int)syscall(SYS_futex, word, FUTEX_WAIT, expected, timeout, NULL, 0);
}
int charbor_futex_wake(int32_t *word, int32_t count) {
    return (int)syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0);
}

extern char **environ;
char **charbor_environ(void) { return environ; }

int charbor_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
#if __GLIBC_PREREQ(2, 34)
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions;
    (void)from;
    return ENOSYS;
#endif
}


int charbor_pidfd_open(pid_t pid, unsigned int flags) { return (int)syscall(SYS_pidfd_open, pid, flags); }
int charbor_pidfd_send_signal(int pidfd, int sig) { return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0); }
pid_t charbor_gettid(void) { return (pid_t)syscall(SYS_gettid); }
int charbor_getresuid(uid_t *real, uid_t *effective, uid_t *saved) { return getresuid(real, effective, saved); }
int charbor_getresgid(gid_t *real, gid_t *effective, gid_t *saved) { return getresgid(real, effective, saved); }
int charbor_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout) {
    return (int)syscall(SYS_epoll_pwait2, epfd, events, maxevents, timeout, NULL, 0);
}
int charbor_name_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }
int charbor_ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout) {
    return ppoll(fds, count, timeout, NULL);
}
int charbor_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }
int charbor_pidfd_wait(int pidfd, int options, pid_t *pid, int *code, int *status) {
    siginfo_t info = {0};
    int result = waitid((idtype_t)3 /* P_PIDFD */, (id_t)pidfd, &info, options);
    *pid = info.si_pid;
    *code = info.si_code;
    *status = info.si_status;
    return result;
}
const int charbor_CLD_EXITED = CLD_EXITED;
const int charbor_CLD_KILLED = CLD_KILLED;
const int charbor_CLD_DUMPED = CLD_DUMPED;
int charbor_memfd_create(const char *name, unsigned int flags) { return (int)syscall(SYS_memfd_create, name, flags); }

// Swift reads epoll_event through the imported struct; on x86_64 the kernel
// packs it to 12 bytes, and the import must agree.
#if defined(__x86_64__)
_Static_assert(sizeof(struct epoll_event) == 12, "epoll_event is packed on x86_64");
#endif

// The lock stripes: default mutexes, initialised statically (a GNU range
// designator), so no code has to run before the first lock.
struct charbor_lock_stripe charbor_lock_stripes[CHARBOR_LOCK_STRIPES] = {
    [0 ... CHARBOR_LOCK_STRIPES - 1] = { .mutex = PTHREAD_MUTEX_INITIALIZER },
};
