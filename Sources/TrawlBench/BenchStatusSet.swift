/// The response statuses that count as a successful request (`--expect-status`); any other status is a failed
/// request, counted among the errors by its class (`http_4xx`, `http_5xx`), as k6 counts `http_req_failed`.
///
/// ```swift
/// BenchStatusSet.success.contains(404)                          // false: 2xx and 3xx by default
/// BenchStatusSet(parsing: "200,204,404")?.contains(404)          // true
/// BenchStatusSet(parsing: "200-299,404")?.contains(201)          // true
/// ```
package struct BenchStatusSet: Sendable, Equatable, CustomStringConvertible {
    package let ranges: [ClosedRange<Int>]

    /// 2xx and 3xx.
    package static let success = BenchStatusSet(ranges: [200...399])

    init(ranges: [ClosedRange<Int>]) { self.ranges = ranges }

    /// `200,204,404`, `200-299`, or both mixed; nil when a part is not a status (100-599) or a range of them.
    package init?(parsing text: String) {
        var ranges: [ClosedRange<Int>] = []
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !text.isEmpty, parts.count <= 100 else { return nil }
        for part in parts {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count) else { return nil }
            let numbers = ends.compactMap { $0.count == 3 ? Int($0) : nil }
            guard numbers.count == ends.count, numbers.allSatisfy({ (100...599).contains($0) }),
                let low = numbers.first, let high = numbers.last, low <= high
            else { return nil }
            ranges.append(low...high)
        }
        self.ranges = ranges
    }

    package func contains(_ status: Int) -> Bool { ranges.contains { $0.contains(status) } }

    /// The error kind of a response whose status is not expected: `http_4xx`, `http_5xx`, …
    static func errorKind(_ status: Int) -> String { "http_\(status / 100)xx" }

    package var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }
}
