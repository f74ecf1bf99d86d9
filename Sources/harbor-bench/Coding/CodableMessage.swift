// Harbor — benchmark: a small Codable request encoded into a message and decoded back.
import Harbor
import HarborCoding

/// Encoding a typical small request into a message and decoding it back,
/// in one thread: HarborCoding beside a body written and read by hand (the
/// floor) and Foundation's JSON and binary property-list coders (the
/// nearest peers a Swift developer would reach for).
struct CodableMessage: Benchmark {
    let name = "codable-message"
    let summary = "a small Codable request: encode into a message + decode back"
    let unit = "encode + decode"
    let iterations = (full: 2000, quick: 300)

    var notes: [String] {
        let sizes = (try? [
            MessageEncoder().encode(ClockRequest.sample(events: nil), id: 3).body.count,
            HandCodedRequest.encode(ClockRequest.sample(events: nil)).body.count,
        ]) ?? []
        return [
            "the request: { method: \"subscribe\", sequence: 42, intervalMilliseconds: 1000, wantsAck: true, "
                + "topics: [\"clock.tick\", \"clock.drift\"] } (+right: and events: a SendRight).",
            "body bytes: harbor-coding \(sizes.first.map(String.init) ?? "?"), hand \(sizes.last.map(String.init) ?? "?").",
            "each sample is 16 encode+decode pairs, divided by 16; each variant checks what came back.",
            "hand: fixed-width numbers and one-byte lengths, every length checked when reading (the floor).",
            "foundation-*: coders made once; Data to and from the message's body counted in.",
            "harbor-coding-echo: interface-call's EchoCall { sequence: Int, data: [UInt8] } (64 bytes) instead.",
        ]
    }

    func makeVariants() throws -> [any BenchmarkVariant] {
        [
            HandCodedRequest(withRight: false),
            HarborCodedRequest(withRight: false),
            FoundationCodedRequest(.json),
            FoundationCodedRequest(.propertyList),
            HandCodedRequest(withRight: true),
            HarborCodedRequest(withRight: true),
            HarborCodedEcho(),
        ]
    }
}
