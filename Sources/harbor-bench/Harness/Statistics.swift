// Harbor — median and tail of a set of samples.

/// Order statistics of samples in nanoseconds.
struct Statistics {
    let count: Int
    let median: Int64
    let p99: Int64
    let minimum: Int64
    let maximum: Int64

    init(_ samples: [Int64]) {
        let sorted = samples.sorted()
        count = sorted.count
        guard !sorted.isEmpty else {
            median = 0; p99 = 0; minimum = 0; maximum = 0
            return
        }
        median = Statistics.quantile(sorted, 0.5)
        p99 = Statistics.quantile(sorted, 0.99)
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
    }

    /// Nearest-rank quantile of an already sorted array.
    static func quantile(_ sorted: [Int64], _ q: Double) -> Int64 {
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

extension Int64 {
    /// Nanoseconds as microseconds with two decimals, e.g. `5.81`.
    var microseconds: String { formatFixed(Double(self) / 1000, decimals: 2) }
}

/// `value` with a fixed number of decimals, without Foundation's `String(format:)`.
func formatFixed(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int64((value * scale).rounded())
    let whole = scaled / Int64(scale)
    var fraction = String(abs(scaled % Int64(scale)))
    while fraction.count < decimals { fraction = "0" + fraction }
    let sign = scaled < 0 && whole == 0 ? "-" : ""
    return decimals == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
}

/// Left- or right-aligns `text` in `width` columns.
func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}
