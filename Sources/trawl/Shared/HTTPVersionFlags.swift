import ArgumentParser
import TrawlEngine

/// `--http1.1`, `--http2`, `--http2-prior-knowledge`, as curl spells them (for `get` and `fetch`). Without one,
/// HTTP/2 is offered over https (ALPN) and plain http speaks HTTP/1.1, as curl does.
struct HTTPVersionFlags: ParsableArguments {
    @Flag(name: .customLong("http1.1"), help: "Speak HTTP/1.1 only.")
    var http1_1 = false

    @Flag(name: .customLong("http2"), help: "Offer HTTP/2 over https (ALPN; the default); plain http stays HTTP/1.1.")
    var http2 = false

    @Flag(
        name: .customLong("http2-prior-knowledge"),
        help: "Speak HTTP/2 from the first byte, also over plain http (for servers known to support it).")
    var priorKnowledge = false

    func validate() throws {
        if [http1_1, http2, priorKnowledge].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --http1.1, --http2 and --http2-prior-knowledge")
        }
    }

    /// The version asked for, `nil` when no flag was given.
    var preference: Client.HTTPVersionPreference? {
        if http1_1 { return .http1_1 }
        if priorKnowledge { return .http2PriorKnowledge }
        return http2 ? .http2 : nil
    }
}

/// Seconds given on the command line, checked before they become milliseconds (a huge, infinite or NaN value
/// would trap in the conversion).
enum SecondsOption {
    static let maximum: Double = 30 * 86_400

    static func validate(_ value: Double?, flag: String) throws {
        guard let value else { return }
        guard value.isFinite, value > 0, value <= maximum else {
            throw ValidationError("\(flag) must be above 0 and at most \(Int(maximum)) seconds, not \(value)")
        }
    }
}
