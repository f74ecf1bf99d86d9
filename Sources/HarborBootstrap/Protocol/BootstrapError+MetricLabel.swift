// Harbor — a bootstrap error code as a metric label value (Docs/harbord.md, "Metrics").

extension BootstrapError.Code {
    /// The code as a label value: `not_found`, `name_in_use`, `already_active`,
    /// `not_permitted`, `invalid_name`, `bad_request`, `over_quota`, `busy`,
    /// `unreachable`, `timed_out`, `bad_reply`, else `other` (a fixed set, so
    /// a peer cannot add label values).
    package var metricLabel: String {
        switch rawValue {
        case 1: "not_found"
        case 2: "name_in_use"
        case 3: "already_active"
        case 4: "not_permitted"
        case 5: "invalid_name"
        case 6: "bad_request"
        case 7: "over_quota"
        case 8: "busy"
        case 100: "unreachable"
        case 101: "timed_out"
        case 102: "bad_reply"
        default: "other"
        }
    }
}
