// Harbor — UnretainedReference: its object while it lives, nil once its deinit has begun, never a count of its own.
import HarborSystem
import HarborTestSupport
import Testing

@Suite(.deadline) struct UnretainedReferenceTests {
    /// A table entry's object, which looks itself up in its own `deinit`
    /// (as a port's prune runs while another thread may read its record).
    final class Tracked {
        var reference: UnretainedReference<Tracked>?
        let report: (Bool) -> Void

        init(report: @escaping (Bool) -> Void) { self.report = report }

        deinit {
            let seen = reference?.retainedIfLive()
            report(seen != nil)
        }
    }

    /// P11: `PortRegistry` finds a port again through such a reference: it
    /// must give the object, retained, while the object lives, add no count
    /// of its own (the object still goes when its last owner lets go), and
    /// give nil once the object's deinit has begun.
    @Test func P11_anUnretainedReferenceGivesItsObjectOnlyWhileItLives() {
        var seenInDeinit: Bool?
        var object: Tracked? = Tracked { seenInDeinit = $0 }
        let reference = UnretainedReference(object!)
        object!.reference = reference
        #expect(reference.points(to: object!))
        #expect(!reference.points(to: Tracked { _ in }))
        do {
            // One owner more while it is held; dropping it leaves the object alive.
            let found = reference.retainedIfLive()
            #expect(found === object)
        }
        #expect(seenInDeinit == nil)
        object = nil
        #expect(seenInDeinit == false)
    }
}
