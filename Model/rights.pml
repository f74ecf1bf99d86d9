/*
 * Harbor — the right lifecycle across processes, and who a message is from.
 * 3 processes, 2 ports, queue limit 2 (Ports/PortStateMachine.swift,
 * HarborTransport/Transport/PortCore+Remote.swift, InboundPacket.swift;
 * Docs/CrossProcess.md "Connections and rights", Docs/Security.md).
 *
 * Each process acts in turn, nondeterministically, at most ACTS times:
 * make a send right, send a plain message, send a copy of a send right,
 * move a send right, move a receive right (its queue and requests go with
 * it), use or pass on a send-once right, receive, destroy a send right,
 * drop a send-once right, destroy a receive right, die (SIGKILL: everything
 * it holds is closed by the kernel). Each action is atomic: it happens
 * under a port lock, or is one packet.
 *
 * The mechanism is what the code counts: the receiver's count of send
 * rights (local rights + connections, whose closings the kernel reports as
 * EOF) in cnt[]. The properties are stated on ghost state: which process
 * holds what, and what sits in which queue.
 *
 * Process 0 is the name server, the one relay a receiver trusts by
 * kernel-checked identity. Planted bug: BUG_TRUST_RELAY (any relay's claim
 * about the original sender is believed).
 */
#define NPROC 3
#define NPORT 2
#define LIMIT 2
#ifndef ACTS
#define ACTS 2
#endif
#define NAMESERVER 0
#define NONE 255

/* message kinds */
#define PLAIN 0
#define SEND  1       /* carries a send right to port arg */
#define ONCE  2       /* carries the send-once right to port arg */
#define RECV  3       /* carries the receive right of port arg */
#define REPLY 4       /* sent on a send-once right */

typedef Msg { byte kind; byte arg; byte deliv; byte claim; byte path };
typedef Port { Msg m[LIMIT]; byte n; byte rcv; bool dead; byte cnt; bool ns; byte dn };
Port port[NPORT];

/* ghost: send rights held by each process to each port */
byte hold[NPORT * NPROC];
#define H(p, x) hold[(p) * NPROC + (x)]
/* ghost: send-once right to port p: 0 none, 1 held, 2 in a queue, 3 used, 4 notified */
byte soSt[NPORT]; byte soBy[NPORT];
bool deadProc[NPROC];

/* ghost: send rights to port p inside queued messages, anywhere */
inline inTransit(p, t) {
    t = 0;
    for (ti : 0 .. NPORT - 1) {
        for (tj : 0 .. port[ti].n - 1) {
            if :: port[ti].n > 0 && port[ti].m[tj].kind == SEND && port[ti].m[tj].arg == p -> t++ :: else -> skip fi
        }
    }
}
inline total(p, t) {
    inTransit(p, t);
    for (ti : 0 .. NPROC - 1) { t = t + H(p, ti) }
}

/* the receiver's count dropped: no-senders is EOF on the last connection
   with no local right left (sendRightReleased) */
inline released(rp) {
    port[rp].cnt--;
    if
    :: port[rp].cnt == 0 && !port[rp].dead && !port[rp].ns ->
        /* the request (made at start, moving with the receive right) is
           used up by firing, as in Mach */
        total(rp, t);
        assert(t == 0);            /* no-senders only when no send right is left */
        port[rp].ns = 1
    :: else -> skip
    fi
}

inline enqueue(ep, ekd, ea, efrom) {
    port[ep].m[port[ep].n].kind = ekd; port[ep].m[port[ep].n].arg = ea;
    port[ep].m[port[ep].n].deliv = efrom; port[ep].m[port[ep].n].claim = NONE;
    port[ep].m[port[ep].n].path = 1 << efrom;
    port[ep].n++
}

/* A port dies (its receive right destroyed, or dropped with a queue, or its
   process killed): dead-name to every holder of a send right; its queue is
   dropped with the rights in it. Recursion through RECV is bounded: a
   receive right in a queue is never in its own. */
/* a vacated queue slot is zeroed (keeps the state space to what matters) */
inline clearSlot(cp, ci) {
    port[cp].m[ci].kind = 0; port[cp].m[ci].arg = 0; port[cp].m[ci].deliv = 0;
    port[cp].m[ci].claim = 0; port[cp].m[ci].path = 0
}
inline dieOne(kp) {
    port[kp].dead = 1; port[kp].rcv = NONE;
    for (k : 0 .. NPROC - 1) {
        if :: H(kp, k) > 0 -> port[kp].dn = port[kp].dn | (1 << k) :: else -> skip fi
    }
}
inline killPort(kp) {
    dieOne(kp);
    dq = port[kp].n; port[kp].n = 0;
    for (j : 0 .. dq - 1) {
        if
        :: dq > 0 ->
            c = port[kp].m[j].arg;
            if
            :: port[kp].m[j].kind == SEND -> released(c)
            :: port[kp].m[j].kind == ONCE -> assert(soSt[c] == 2); soSt[c] = 4
            :: port[kp].m[j].kind == RECV ->
                /* a receive right dropped with a queue: that port dies too
                   (its own queue is then dropped: one level is enough with
                   two ports, as a receive right is never in its own queue) */
                dieOne(c); dq2 = port[c].n; port[c].n = 0;
                for (i : 0 .. dq2 - 1) {
                    if
                    :: dq2 > 0 && port[c].m[i].kind == SEND -> released(port[c].m[i].arg)
                    :: dq2 > 0 && port[c].m[i].kind == ONCE -> assert(soSt[port[c].m[i].arg] == 2); soSt[port[c].m[i].arg] = 4
                    :: else -> skip
                    fi;
                    if :: dq2 > 0 -> clearSlot(c, i) :: else -> skip fi
                }
            :: else -> skip
            fi;
            clearSlot(kp, j)
        :: else -> skip
        fi
    }
}

proctype Process(byte x) {
    byte acts = 0, p, d, t, i, j, k, dq, dq2, c, e, ti, tj;
    Msg msg;
end:
    do
    :: acts < ACTS && !deadProc[x] -> atomic {
        acts++;
        select(p : 0 .. NPORT - 1);
        select(d : 0 .. NPORT - 1);
        if
        /* make a send right (the receiver) */
        :: port[p].rcv == x -> H(p, x)++; port[p].cnt++
        /* a plain message */
        :: H(p, x) > 0 && !port[p].dead && port[p].n < LIMIT -> enqueue(p, PLAIN, 0, x)
        /* copy a send right to p into a message on d (a new connection, or the same one forwarded: one more descriptor) */
        :: H(p, x) > 0 && H(d, x) > 0 && !port[d].dead && port[d].n < LIMIT ->
            enqueue(d, SEND, p, x); port[p].cnt++
        /* move it: the message holds it, the process does not */
        :: H(p, x) > 0 && H(d, x) > 0 && (p != d || H(p, x) > 1) && !port[d].dead && port[d].n < LIMIT ->
            enqueue(d, SEND, p, x); H(p, x)--
        /* move the receive right of p, with its queue, onto d */
        :: port[p].rcv == x && p != d && H(d, x) > 0 && !port[d].dead && port[d].n < LIMIT ->
            enqueue(d, RECV, p, x); port[p].rcv = NONE
        /* use the send-once right to p: one message */
        :: soSt[p] == 1 && soBy[p] == x && !port[p].dead && port[p].n < LIMIT ->
            enqueue(p, REPLY, 0, x); soSt[p] = 3
        /* pass the send-once right on in a message on d */
        :: soSt[p] == 1 && soBy[p] == x && H(d, x) > 0 && !port[d].dead && port[d].n < LIMIT ->
            enqueue(d, ONCE, p, x); soSt[p] = 2
        /* drop it unused: a send-once notification (EOF without a message) */
        :: soSt[p] == 1 && soBy[p] == x -> soSt[p] = 4
        /* destroy a send right */
        :: H(p, x) > 0 -> H(p, x)--; released(p)
        /* destroy the receive right */
        :: port[p].rcv == x -> killPort(p)
        /* receive */
        :: port[p].rcv == x && port[p].n > 0 ->
            msg.kind = port[p].m[0].kind; msg.arg = port[p].m[0].arg; msg.deliv = port[p].m[0].deliv;
            msg.claim = port[p].m[0].claim; msg.path = port[p].m[0].path;
            for (j : 1 .. port[p].n - 1) {
                port[p].m[j - 1].kind = port[p].m[j].kind; port[p].m[j - 1].arg = port[p].m[j].arg;
                port[p].m[j - 1].deliv = port[p].m[j].deliv; port[p].m[j - 1].claim = port[p].m[j].claim;
                port[p].m[j - 1].path = port[p].m[j].path
            }
            port[p].n--;
            clearSlot(p, port[p].n);
            /* who the message is from: the kernel's deliverer, or the claim of
               a relay the receiver trusts by kernel-checked identity */
            if
#ifdef BUG_TRUST_RELAY
            :: msg.claim != NONE -> assert(msg.path & (1 << msg.claim))
#else
            :: msg.claim != NONE && msg.deliv == NAMESERVER -> assert(msg.path & (1 << msg.claim))
#endif
            :: else -> assert(msg.path & (1 << msg.deliv))
            fi;
            if
            :: msg.kind == SEND ->
                H(msg.arg, x)++;
                /* a dead-name request on a dead port fires at once */
                if :: port[msg.arg].dead -> port[msg.arg].dn = port[msg.arg].dn | (1 << x) :: else -> skip fi
            :: msg.kind == ONCE -> assert(soSt[msg.arg] == 2); soSt[msg.arg] = 1; soBy[msg.arg] = x
            :: msg.kind == RECV ->
                /* the port arrives with its queue: each queued message was
                   delivered by the process it came from, which says who
                   first sent it: the name server passes its own kernel's
                   word; another relay may say anything */
                c = msg.arg; port[c].rcv = x;
                for (j : 0 .. port[c].n - 1) {
                    if
                    :: port[c].n > 0 ->
                        if
                        :: msg.deliv == NAMESERVER -> port[c].m[j].claim = port[c].m[j].deliv
                        :: else -> select(t : 0 .. NPROC - 1); port[c].m[j].claim = t
                        fi;
                        port[c].m[j].deliv = msg.deliv;
                        port[c].m[j].path = port[c].m[j].path | (1 << msg.deliv)
                    :: else -> skip
                    fi
                }
            :: else -> skip
            fi
        /* SIGKILL: the kernel closes everything the process holds */
        :: x != NAMESERVER ->
            deadProc[x] = 1;
            for (e : 0 .. NPORT - 1) {
                do :: H(e, x) > 0 -> H(e, x)--; released(e) :: else -> break od;
                if :: soSt[e] == 1 && soBy[e] == x -> soSt[e] = 4 :: else -> skip fi;
                if :: port[e].rcv == x -> killPort(e) :: else -> skip fi
            }
        :: else -> skip          /* nothing it can do with these two ports */
        fi;
        p = 0; d = 0; t = 0; i = 0; j = 0; k = 0; dq = 0; dq2 = 0; c = 0; e = 0; ti = 0; tj = 0;
        msg.kind = 0; msg.arg = 0; msg.deliv = 0; msg.claim = 0; msg.path = 0
       }
    :: else -> break
    od;
end2:
    skip
}

/* at the end: no-senders fired exactly for the live ports with no send
   right left; dead-name for every holder of a right to a dead port; every
   send-once right used, notified, or still held */
proctype Check() {
    byte p, t, k, ti, tj;
    timeout ->
    for (p : 0 .. NPORT - 1) {
        total(p, t);
        assert(port[p].dead || port[p].cnt == t);   /* the count is the rights */
        if :: !port[p].dead && port[p].rcv != NONE -> assert(t != 0 || port[p].ns)   /* fired when the last one went */ :: else -> skip fi;
        for (k : 0 .. NPROC - 1) {
            /* dead-name only for a dead port, and to every live holder */
            assert(!((port[p].dn >> k) & 1) || port[p].dead);
            assert(!(port[p].dead && H(p, k) > 0) || ((port[p].dn >> k) & 1))
        }
    }
}

init {
    atomic {
        port[0].rcv = 0; port[1].rcv = 1;
        /* bootstrap: 1 and 2 hold send rights to the name server's port 0;
           0 and 2 to port 1; 2 holds a send-once right to port 1 */
        H(0, 1) = 1; H(0, 2) = 1; port[0].cnt = 2;
        H(1, 0) = 1; H(1, 2) = 1; port[1].cnt = 2;
        soSt[1] = 1; soBy[1] = 2;
        run Process(0); run Process(1); run Process(2); run Check()
    }
}
