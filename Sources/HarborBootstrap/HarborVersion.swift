// Harbor — the release version, one string for every executable (`harbor --version`, `harbord --version`).

/// The version of this Harbor build, as `harbor --version` and
/// `harbord --version` print it.
public enum HarborVersion {
    /// The release version (semantic versioning).
    public static let string = "0.1.0"
}
