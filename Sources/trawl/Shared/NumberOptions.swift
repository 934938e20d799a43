import ArgumentParser
import Foundation

/// Parsing of the floating-point flags, before any of them becomes an integer: `nan`, `inf` and `1e300` are usage
/// errors naming the flag (ArgumentParser prefixes "The value '…' is invalid for '--flag'"), never a trap when
/// seconds turn into milliseconds.
enum NumberOption {
    /// The longest span of time a flag may give: about 31 years, past any timeout or pause that makes sense, and
    /// far below what an `Int64` of nanoseconds holds.
    static let longestSeconds: Double = 1_000_000_000

    /// A number of seconds from 0 (or just above it) to ``longestSeconds``.
    static func seconds(_ text: String, positive: Bool = false) throws -> Double {
        try number(text, unit: "seconds", positive: positive, upTo: longestSeconds)
    }

    /// A rate per second: above 0, from one per ``longestSeconds`` to a billion.
    static func rate(_ text: String) throws -> Double {
        let value = try number(text, unit: "per second", positive: true, upTo: 1_000_000_000)
        guard value >= 1 / longestSeconds else {
            throw ValidationError("give at least \(1 / longestSeconds) per second")
        }
        return value
    }

    /// A finite number in `0...limit` (above 0 when `positive`).
    static func number(_ text: String, unit: String, positive: Bool, upTo limit: Double) throws -> Double {
        let shown = "a number \(positive ? "above 0" : "from 0") to \(Int(limit)) (\(unit))"
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite,
            positive ? value > 0 : value >= 0, value <= limit
        else {
            throw ValidationError("give \(shown)")
        }
        return value
    }
}
