// harbor-xpc-probe — Refusal (main.swift, `methods`).

/// The error the `methods` listener's `check` throws for a negative number;
/// its description holds an escape character, which tools must not print raw.
struct Refusal: Error, CustomStringConvertible {
    var n: Int
    var description: String { "\u{1B}[31mnegative: \(n)" }
}
