// Harbor — what an epoll event's 64-bit data says woke the loop.
import HarborPorts
import HarborSystem

/// The token stored in each epoll registration: kind (8 bits), slot (24 bits)
/// and generation (32 bits).
///
/// A slot is reused after its item leaves the loop, with the next
/// generation; an event still queued for the old item then carries a stale
/// generation and is dropped (NIO's registration ids do the same). Every
/// source with a descriptor of its own (port, descriptor, process, signal:
/// ``WaitsetSource``) carries the one kind ``Kind/source``; the others name
/// the loop's own descriptors.
struct WaitToken: Hashable {
    enum Kind: UInt8 {
        /// The loop's wake-up eventfd.
        case wakeUp = 1
        /// The mode's timerfd.
        case timer = 2
        /// A ``WaitsetSource``: its slot in the loop's `waitSlots`.
        case source = 3
        /// libdispatch's main-queue eventfd (main loop only).
        case mainQueue = 5
    }

    var kind: Kind
    var slot: UInt32
    var generation: UInt32

    static let wakeUp = WaitToken(kind: .wakeUp, slot: 0, generation: 0)
    static let timer = WaitToken(kind: .timer, slot: 0, generation: 0)
    static let mainQueue = WaitToken(kind: .mainQueue, slot: 0, generation: 0)

    var rawValue: UInt64 {
        UInt64(kind.rawValue) << 56 | UInt64(slot & 0xFF_FFFF) << 32 | UInt64(generation)
    }

    init(kind: Kind, slot: UInt32, generation: UInt32) {
        self.kind = kind
        self.slot = slot
        self.generation = generation
    }

    /// Decodes `rawValue`; `nil` for a kind this build does not know.
    init?(rawValue: UInt64) {
        guard let kind = Kind(rawValue: UInt8(truncatingIfNeeded: rawValue >> 56)) else { return nil }
        self.kind = kind
        slot = UInt32(truncatingIfNeeded: rawValue >> 32) & 0xFF_FFFF
        generation = UInt32(truncatingIfNeeded: rawValue)
    }
}

/// Slots for items registered in the loop's epoll sets, with generations.
///
/// Generic over the element for its unit tests; the loop keeps one, of
/// ``WaitsetSource``s. Pure value type: no kernel involved.
struct SlotTable<Element> {
    private var slots: [(generation: UInt32, element: Element?)] = []
    private var free: [UInt32] = []

    /// Stores `element` and returns the token that will find it.
    mutating func insert(_ element: Element, kind: WaitToken.Kind) -> WaitToken {
        if let slot = free.popLast() {
            slots[Int(slot)].element = element
            return WaitToken(kind: kind, slot: slot, generation: slots[Int(slot)].generation)
        }
        slots.append((generation: 0, element: element))
        return WaitToken(kind: kind, slot: UInt32(slots.count - 1), generation: 0)
    }

    /// The element `token` was issued for, or `nil` if it has left since.
    func lookup(_ token: WaitToken) -> Element? {
        let index = Int(token.slot)
        guard index < slots.count, slots[index].generation == token.generation else { return nil }
        return slots[index].element
    }

    /// Frees `token`'s slot; later events carrying it are stale.
    mutating func remove(_ token: WaitToken) {
        let index = Int(token.slot)
        guard index < slots.count, slots[index].generation == token.generation else { return }
        slots[index].element = nil
        slots[index].generation &+= 1
        free.append(token.slot)
    }

    var occupiedCount: Int { slots.count - free.count }
}
