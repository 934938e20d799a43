import TrawlEngine

/// 128 bits of the SHA-256 of what identifies an item (its primary key's compact JSON): how a unit remembers the
/// keys it has seen, for the completeness count (``DistinctItems``) and drift detection (``DriftCheck``) alike.
///
/// ```swift
/// let digest = KeyDigest { $0.update(Array("42".utf8)) }
/// ```
struct KeyDigest: Hashable {
    var high: UInt64
    var low: UInt64

    /// The digest of what `fill` gives the hasher.
    init(_ fill: (inout SHA256) -> Void) {
        var hasher = SHA256()
        fill(&hasher)
        let bytes = hasher.digest()
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
