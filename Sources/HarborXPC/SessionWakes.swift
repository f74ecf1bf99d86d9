// Harbor — SessionWakes: a piece of an XPC session (XPCSession+Calls.swift).
import HarborPorts
import HarborSystem

/// What a session owes its calls once its lock is released: callers to
/// wake (a sync caller parked on its call) and completions to run (a call
/// no thread waits for: ``XPCSession/send(_:replyHandler:)`` and the
/// async `send`), each with its outcome.
///
/// Collected under the session's lock, performed after it: a completion
/// runs the caller's code (a reply handler, a continuation's resumption),
/// which may call into the session again.
struct SessionWakes {
    var parkers: [Parker] = []
    var completions: [(XPCSession.CallCompletion, Result<MessageContent, XPCRichError>)] = []

    /// Fails every call `which` picks that has no outcome yet: a waiting
    /// caller's call keeps its outcome for the caller (who is woken); a
    /// call with a completion leaves the table, its completion to run.
    mutating func fail(_ state: inout XPCSession.SessionState, with error: XPCRichError,
                       which: (XPCSession.PendingCall) -> Bool) {
        for (number, call) in state.calls where call.outcome == nil && which(call) {
            if let completion = call.completion {
                state.calls[number] = nil
                state.waitingCompletions -= 1
                completions.append((completion, .failure(error)))
            } else {
                state.calls[number]?.outcome = .failure(error)
                if let parker = call.parker { parkers.append(parker) }
            }
        }
    }

    /// Wakes the callers, then runs the completions, in the order collected.
    func perform() {
        for parker in parkers { parker.unpark() }
        for (completion, outcome) in completions { completion(outcome) }
    }
}
