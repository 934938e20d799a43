import Foundation

/// A span of time as `trawl bench` flags take it: plain seconds (`2`, `0.5`) as before, or a number with a unit
/// (`500ms`, `2s`, `1.5m`, `1h`, `250us`), or several such parts as Go and oha write them (`1m30s`).
///
/// ```swift
/// BenchDurationText.seconds("500ms")  // 0.5
/// BenchDurationText.seconds("1m30s")  // 90
/// BenchDurationText.seconds("2")      // 2
/// BenchDurationText.seconds("2 sec")  // nil
/// ```
package enum BenchDurationText {
    /// The longest span a flag may give (about 31 years), far inside what a `Duration` of nanoseconds holds.
    package static let longestSeconds: Double = 1_000_000_000

    private static let units: [(suffix: String, seconds: Double)] = [
        ("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("s", 1), ("m", 60), ("h", 3600),
    ]

    /// The seconds `text` stands for, or nil when it is not a finite, non-negative span up to ``longestSeconds``.
    package static func seconds(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 64 else { return nil }
        if let plain = Double(trimmed) { return checked(plain) }
        var rest = Substring(trimmed)
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }) else { return nil }
            rest = rest.dropFirst(unit.suffix.count)
            total += value * unit.seconds
        }
        return checked(total)
    }

    /// `seconds` as a `Duration` (nanoseconds).
    package static func duration(seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    private static func checked(_ value: Double) -> Double? {
        value.isFinite && value >= 0 && value <= longestSeconds ? value : nil
    }
}
