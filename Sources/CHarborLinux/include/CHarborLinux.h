// Harbor — C shim for the Linux calls Swift's Glibc module does not surface.
//
// No logic lives here: only the headers Swift cannot reach through Glibc,
// wrappers for macros (CMSG_*), constants defined as macros of macros, and
// raw syscall() entry points glibc 2.36 does not wrap. Everything is prefixed
// `charbor_` so a reader knows at a glance which calls cross into C.
#ifndef CHARBOR_LINUX_H
#define CHARBOR_LINUX_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
// Socket diagnostics (sock_diag(7)): the request and answer records.
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

// errno is a macro over a thread-local; reading it through a function keeps
// Swift from caching it across calls.
int charbor_errno(void);
void charbor_set_errno(int value);

// The Swift runtime's strong retain that fails once an object's count has
// reached zero: `HeapObject *swift_tryRetain(HeapObject *)`, exported by
// libswiftCore (what a `weak` load calls), returning the object retained or
// NULL. Declared here so Swift calls it by the C convention it is exported
// with, under this file's prefix. UnretainedReference.swift.
void *charbor_swift_try_retain(void *object) __asm__("swift_tryRetain");

// Flags that are macros of macros and do not import as Swift constants.
extern const int charbor_EFD_CLOEXEC;
extern const int charbor_EFD_NONBLOCK;
extern const int charbor_EFD_SEMAPHORE;
extern const int charbor_EPOLL_CLOEXEC;
extern const int charbor_TFD_CLOEXEC;
extern const int charbor_TFD_NONBLOCK;
extern const int charbor_TFD_TIMER_ABSTIME;
extern const int charbor_SFD_CLOEXEC;
extern const int charbor_SFD_NONBLOCK;
extern const int charbor_SOCK_CLOEXEC;
extern const int charbor_SOCK_NONBLOCK;
extern const int charbor_MSG_CMSG_CLOEXEC;
extern const int charbor_MFD_CLOEXEC;
extern const int charbor_MFD_ALLOW_SEALING;
extern const int charbor_SCM_RIGHTS;
extern const int charbor_SCM_CREDENTIALS;

// Socket, memfd-sealing and message flags (enum values or _GNU_SOURCE-only).
extern const int charbor_SOCK_SEQPACKET;
extern const int charbor_SO_PASSCRED;
// Linux 6.5 (asm-generic/socket.h); older headers lack them.
extern const int charbor_SO_PASSPIDFD;
extern const int charbor_SCM_PIDFD;
extern const int charbor_SO_SNDBUF;
extern const int charbor_SO_RCVBUF;
extern const int charbor_MSG_NOSIGNAL;
extern const int charbor_MSG_DONTWAIT;
extern const int charbor_MSG_CTRUNC;
extern const int charbor_MSG_TRUNC;
extern const int charbor_F_ADD_SEALS;
extern const int charbor_F_GET_SEALS;
extern const int charbor_F_SEAL_SEAL;
extern const int charbor_F_SEAL_SHRINK;
extern const int charbor_F_SEAL_GROW;
extern const int charbor_F_SEAL_WRITE;
extern const int charbor_F_SEAL_FUTURE_WRITE;

// struct ucred is _GNU_SOURCE-only; this has the same layout (SCM_CREDENTIALS payload).
struct charbor_ucred { int32_t pid; uint32_t uid; uint32_t gid; };

// Sequentially consistent atomics on memory shared between processes (a
// mapped memfd), which Swift's Synchronization cannot address. Inline, so a
// send pays the instruction and not a call.
static inline int32_t charbor_atomic_load_i32(int32_t *pointer) { return __atomic_load_n(pointer, __ATOMIC_SEQ_CST); }
static inline int32_t charbor_atomic_fetch_add_i32(int32_t *pointer, int32_t value) {
    return __atomic_fetch_add(pointer, value, __ATOMIC_SEQ_CST);
}
static inline bool charbor_atomic_compare_exchange_i32(int32_t *pointer, int32_t *expected, int32_t desired) {
    return __atomic_compare_exchange_n(pointer, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
// A relaxed store: for a hint that any value the word ever held keeps valid.
static inline void charbor_atomic_store_relaxed_i32(int32_t *pointer, int32_t value) {
    __atomic_store_n(pointer, value, __ATOMIC_RELAXED);
}

// Asks for the cache line at `address` ahead of use, for writing. A hint:
// never faults, and unlike a load it is not held up by the lock-prefixed
// instructions (retains, mutexes) between here and the use, so a cache miss
// it starts overlaps with the work in between.
static inline void charbor_prefetch_for_writing(const void *address) { __builtin_prefetch(address, 1, 3); }

// A process-wide table of mutexes for objects too many to own one each
// (HarborPorts' StripedLocks; the run loop's timers): statically initialised,
// one per cache line. A C global needs no lazy initialisation, where a Swift
// global pays a swift_once call on every access.
#define CHARBOR_LOCK_STRIPES 256
struct charbor_lock_stripe {
    pthread_mutex_t mutex;
    char padding[64 - sizeof(pthread_mutex_t) % 64];
};
extern struct charbor_lock_stripe charbor_lock_stripes[CHARBOR_LOCK_STRIPES];
static inline pthread_mutex_t *charbor_lock_stripe(unsigned index) {
    return &charbor_lock_stripes[index % CHARBOR_LOCK_STRIPES].mutex;
}

// Futex wait/wake on a shared (not private) word: cross-process sleeping.
int charbor_futex_wait(int32_t *word, int32_t expected, const struct timespec *timeout);
int charbor_futex_wake(int32_t *word, int32_t count);

// The process environment, for posix_spawn.
char **charbor_environ(void);
// Has a spawned child close every descriptor from `from` up (after the
// actions added before this one), so it inherits only what its parent
// passed on purpose. posix_spawn_file_actions_addclosefrom_np is a GNU
// extension (glibc 2.34); ENOSYS without it.
int charbor_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

// Control-message macros (cmsg(3)).
// Inline: every received packet walks its control messages with these.
static inline struct cmsghdr *charbor_CMSG_FIRSTHDR(const struct msghdr *msg) { return CMSG_FIRSTHDR(msg); }
static inline struct cmsghdr *charbor_CMSG_NXTHDR(const struct msghdr *msg, const struct cmsghdr *cmsg) {
    return CMSG_NXTHDR((struct msghdr *)msg, (struct cmsghdr *)cmsg);
}
static inline unsigned char *charbor_CMSG_DATA(const struct cmsghdr *cmsg) { return CMSG_DATA((struct cmsghdr *)cmsg); }
static inline size_t charbor_CMSG_SPACE(size_t length) { return CMSG_SPACE(length); }
static inline size_t charbor_CMSG_LEN(size_t length) { return CMSG_LEN(length); }

// GNU extensions Glibc's module does not export (declared only under _GNU_SOURCE).
int charbor_getresuid(uid_t *real, uid_t *effective, uid_t *saved);
int charbor_getresgid(gid_t *real, gid_t *effective, gid_t *saved);

// Calls glibc 2.36 lacks wrappers for.
int charbor_pidfd_open(pid_t pid, unsigned int flags);
int charbor_pidfd_send_signal(int pidfd, int sig);
int charbor_memfd_create(const char *name, unsigned int flags);
// The raw system call, sigmask NULL: -1 with ENOSYS where the kernel (before
// 5.11) or a tool (valgrind 3.19) lacks it.
int charbor_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout);
// The kernel's id of the calling thread (equal to getpid() on the main thread).
pid_t charbor_gettid(void);


// _GNU_SOURCE-only declarations Swift's importer does not see.
int charbor_ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout);
// pthread_setname_np is _GNU_SOURCE-only: names the calling thread (at most
// 15 bytes and a zero; longer fails with ERANGE). Returns its result.
int charbor_name_thread(const char *name);
// accept4 is _GNU_SOURCE-only: a connection accepted with its flags set at
// once (SOCK_CLOEXEC | SOCK_NONBLOCK), so no spawn can race a later fcntl.
int charbor_accept4(int fd, int flags);

// waitid(P_PIDFD, pidfd, …): glibc 2.36 lacks P_PIDFD, and siginfo_t's
// si_pid/si_code/si_status are macros over unions Swift cannot reach.
// Returns waitid's result; on success *pid is 0 if the child has not exited.
int charbor_pidfd_wait(int pidfd, int options, pid_t *pid, int *code, int *status);
// CLD_EXITED, CLD_KILLED, CLD_DUMPED (si_code values).
extern const int charbor_CLD_EXITED;
extern const int charbor_CLD_KILLED;
extern const int charbor_CLD_DUMPED;

#endif
