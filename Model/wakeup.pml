/*
 * Harbor — the wake-up path of a port: readiness (Ports/ReadinessSignal.swift,
 * PortCore.dequeue), the shared slot counter (Memory/SharedSlots.swift) and
 * senders in other processes that wait for a slot
 * (Transport/RemoteRoute.swift waitForSlot, Transport/PortTransport+BackPressure.swift
 * slotFreed/signalWaiters, Transport/PortTransport+Pump.swift finish).
 *
 * NP ports (1 by default: ports share nothing on this path, each has its
 * own lock, queue, eventfd and counter, so two ports only multiply the
 * states); port p is received in process p by one receiving thread. Process
 * p also has a local thread that sends one message to p while p is local and
 * then exports a send right (PortCore.ensureTransport). Each port has NS
 * remote senders in the other processes (3 processes: port 0 is sent to by
 * processes 1 and 2, port 1 by 0 and 2), each sending K counted messages once
 * it holds the send right; one message of sender 0 may be one the receiver
 * refuses (a bad packet: it still took a slot). Queue limit LIMIT.
 *
 * A critical section under the port lock is an atomic block. The receiver
 * counts every message handled; it ends when it has handled all of them, so
 * a receiver asleep with a message waiting, or a sender asleep for a slot
 * that never comes, leaves an invalid end state (a lost wake-up).
 *
 * Planted bugs: BUG_NO_RECHECK (the receiver does not look at the transport
 * again after counting itself a sleeper), BUG_SLOT_NOT_RETURNED (a refused
 * packet does not give its slot back).
 */
#ifndef NP
#define NP 1
#endif
#ifndef NS
#define NS 2
#endif
#ifndef K
#define K 2
#endif
#ifndef LIMIT
#define LIMIT 2
#endif
#define TOTAL (NS * K + 1)          /* per port: remote messages + one local */

/* port state (receiver's truth, under the port lock) */
byte q[NP];         /* counted messages queued */
bool tr[NP];        /* has a transport (a send right was exported) */
byte got[NP];       /* messages handed out or refused */
/* ReadinessSignal */
bool efd[NP];       /* the eventfd polls readable */
byte infl[NP];      /* writes announced, not retired */
bool rck[NP];       /* recheck */
byte sl[NP];        /* sleepers on the eventfd alone */
/* sockets: packets waiting to be read by the receiver */
byte sock[NP];      /* counted messages (each holds a slot) */
byte bad[NP];       /* packets the receiver will refuse (each holds a slot) */
byte wpk[NP];       /* wait packets, as a set of senders (bit s) */
/* shared slot counter (the memfd) */
byte fr[NP];        /* free slots */
byte tk[NP];        /* slots taken by senders, not yet queued or given back */
byte waiters[NP];   /* senders' announcement word */
/* the receiver's registered waiter eventfds, bit s; each sender's eventfd */
byte reg[NP];
byte fin[NP];      /* the exporter and senders that are done */
bool wfd[NP * NS];

#define SLOTS_OK(p) (!tr[p] || fr[p] + q[p] + tk[p] == LIMIT)

/* Under the lock, queue empty: ReadinessSignal.clearWhileEmpty */
inline clearWhileEmpty(p) {
    if
    :: infl[p] == 0 -> efd[p] = 0
    :: else -> rck[p] = 1; efd[p] = 0
    fi
}

/* PortCore.clearSpuriousReadiness: lock, clear if the queue is empty */
inline clearSpurious(p) {
    atomic { if :: q[p] == 0 -> clearWhileEmpty(p) :: else -> skip fi }
}

/* signalWaiters, honest senders: a free slot by the counter wakes every
   registered waiter (the grant after suspicionDelay needs a counter that
   disagrees with the receiver's count for 2 ms: not modelled). */
inline signalWaiters(p) {
    atomic {
        if
        :: reg[p] != 0 && fr[p] > 0 ->
            for (i : 0 .. NS - 1) {
                if :: reg[p] & (1 << i) -> wfd[p * NS + i] = 1 :: else -> skip fi
            }
            reg[p] = 0
        :: else -> skip
        fi
    }
}

/* The receiver reads every wait packet waiting (a pump reads on past
   packets that are not messages). */
inline readWaitPackets(p) {
    atomic { reg[p] = reg[p] | wpk[p]; wpk[p] = 0 }
}

/* PortTransport.slotFreed */
inline slotFreed(p) {
    if
    :: waiters[p] > 0 -> readWaitPackets(p); signalWaiters(p)
    :: else -> skip
    fi
}

/* A refused packet gives back its slot (PortTransport+Pump finish,
   Guarded.queueRemote(_:returningSlotTo:gaveBack:)) and wakes waiters. */
inline refuse(p) {
    atomic {
        bad[p]--; tk[p]--;
#ifndef BUG_SLOT_NOT_RETURNED
        fr[p]++;
#endif
        got[p]++;
        assert(SLOTS_OK(p))
    }
    if :: waiters[p] > 0 -> signalWaiters(p) :: else -> skip fi
}

proctype Receiver(byte p) {
    bool t, took, sawEfd; byte i;
    do
    :: got[p] == TOTAL -> break
    :: else ->
        /* dequeueQueued: take from the queue, or learn the transport */
        took = 0;
        atomic {
            if
            :: q[p] > 0 ->
                q[p]--; got[p]++; took = 1;
                if :: q[p] == 0 -> clearWhileEmpty(p) :: else -> skip fi;
                if :: tr[p] -> fr[p]++ :: else -> skip fi;   /* the slot is given back */
                assert(SLOTS_OK(p))
            :: else -> t = tr[p]
            fi
        }
        if
        :: took -> if :: tr[p] -> slotFreed(p) :: else -> skip fi
        :: !took && t ->
            /* sleep in epoll_pwait2 on the readiness set (eventfd + sockets),
               then read what woke us (one packet) */
            (efd[p] || sock[p] > 0 || bad[p] > 0 || wpk[p] != 0);
            sawEfd = efd[p];
            if
            :: sock[p] > 0 ->
                /* takeFirst: handed out at once (passThrough), or read ahead
                   into the queue (queueRemote writes the eventfd under the lock) */
                if
                :: atomic { sock[p]--; tk[p]--; fr[p]++; got[p]++; assert(SLOTS_OK(p)) }
                   slotFreed(p)
                :: atomic { sock[p]--; tk[p]--; q[p]++;
                            if :: q[p] == 1 -> efd[p] = 1 :: else -> skip fi;
                            assert(SLOTS_OK(p)) }
                fi
            :: bad[p] > 0 -> refuse(p)
            :: wpk[p] != 0 -> readWaitPackets(p); signalWaiters(p);
                if :: sawEfd -> clearSpurious(p) :: else -> skip fi
            :: sock[p] == 0 && bad[p] == 0 && wpk[p] == 0 -> clearSpurious(p)
            fi
        :: !took && !t ->
            /* no transport: sleep on the eventfd alone. Counted a sleeper,
               then one more look at the transport (ensureTransport nudges
               only counted sleepers). */
            sl[p]++;
#ifndef BUG_NO_RECHECK
            if
            :: tr[p] -> sl[p]--
            :: else ->
#endif
                efd[p];         /* waitUntilReadable */
                sl[p]--;
                /* tryDequeue, or clear what woke us for nothing */
                atomic {
                    if
                    :: q[p] > 0 ->
                        q[p]--; got[p]++;
                        if :: q[p] == 0 -> clearWhileEmpty(p) :: else -> skip fi;
                        if :: tr[p] -> fr[p]++ :: else -> skip fi;
                        assert(SLOTS_OK(p))
                    :: else -> clearWhileEmpty(p)
                    fi
                }
                if :: tr[p] -> slotFreed(p) :: else -> skip fi
#ifndef BUG_NO_RECHECK
            fi
#endif
        fi
    od;
    /* Nothing in progress: the eventfd polls readable exactly while a
       message waits (Docs/Architecture.md, readiness exactness). */
    fin[p] == NS + 1;
#ifndef STRICT_READINESS
    /* One more look (tryDequeue): a descriptor readable with nothing to take
       is cleared by the first look that finds nothing. Without this look the
       model finds the eventfd left readable with the queue empty: a nudge
       that raced the sleeper's re-check, seen by pumps that each took a
       message and so did not clear (spin -DSTRICT_READINESS). */
    if :: efd[p] -> clearSpurious(p) :: else -> skip fi;
#endif
    assert(q[p] == 0 && !efd[p] && infl[p] == 0)
}

/* Process p's own thread: one local send while the port is local (announce
   under the lock, write after it, retire; recheck), then the first export
   of a send right (ensureTransport), nudging counted sleepers. */
proctype Exporter(byte p) {
    bool wrote, mustClear;
    atomic { q[p]++; wrote = (q[p] == 1); if :: wrote -> infl[p]++ :: else -> skip fi }
    if
    :: wrote ->
        efd[p] = 1;                                   /* counter.signal() */
        atomic { infl[p]--; mustClear = (infl[p] == 0 && rck[p]); if :: mustClear -> rck[p] = 0 :: else -> skip fi }
        if :: mustClear -> clearSpurious(p) :: else -> skip fi
    :: else -> skip
    fi;
    atomic { tr[p] = 1; fr[p] = LIMIT - q[p] }       /* location = .receiving */
    if :: sl[p] > 0 -> efd[p] = 1 :: else -> skip fi  /* hasSleepers: nudge */
    fin[p]++
}

/* A sender in another process (RemoteRoute): take a slot, or announce,
   register (a wait packet), look once more, sleep on its eventfd. */
proctype Sender(byte p; byte s) {
    byte n = 0; bool ok, registered, refused;
    tr[p];                                            /* it holds the send right */
    do
    :: n == K -> break
    :: else ->
        atomic { ok = (fr[p] > 0); if :: ok -> fr[p]--; tk[p]++ :: else -> skip fi }
        if
        :: !ok ->
            waiters[p]++; registered = 0;
            do
            :: !registered -> wpk[p] = wpk[p] | (1 << s); registered = 1
            :: registered ->
                atomic { ok = (fr[p] > 0); if :: ok -> fr[p]--; tk[p]++ :: else -> skip fi }
                if
                :: ok -> break
                :: else ->
                    wfd[p * NS + s];                  /* asleep until woken */
                    wfd[p * NS + s] = 0; registered = 0
                fi
            od;
            waiters[p]--
        :: else -> skip
        fi;
        refused = 0;
        if :: s == 0 && n == 0 -> if :: refused = 1 :: skip fi :: else -> skip fi;
        atomic { if :: refused -> bad[p]++ :: else -> sock[p]++ fi }
        n++
    od;
    fin[p]++
}

init {
    byte p, s;
    atomic {
        for (p : 0 .. NP - 1) {
            run Receiver(p);
            run Exporter(p);
            for (s : 0 .. NS - 1) { run Sender(p, s) }
        }
    }
}
