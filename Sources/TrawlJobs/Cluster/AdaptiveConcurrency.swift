/// Per-host concurrency that follows what the host takes (AIMD, as TCP does with its window): it starts at the
/// job's `per_host`, halves on a 429 or 503 or a rate-limit pause, and grows by one after a window without them (as
/// many answers as requests it allows). Answers to requests sent before a halving do not halve it again.
///
/// ```swift
/// var adaptive = AdaptiveConcurrency(ceiling: 8)
/// adaptive.answered("https://api.example.com:443", limited: true)   // limit 4
/// adaptive.limit("https://api.example.com:443")                      // 4
/// ```
struct AdaptiveConcurrency: Sendable {
    struct Host: Sendable {
        var limit: Int
        var lowest: Int
        var highest: Int
        /// Answers without a signal since the last change.
        var calm = 0
        /// Answers still expected to requests sent before the last halving.
        var stale = 0
    }

    let ceiling: Int
    private(set) var hosts: [String: Host] = [:]

    init(ceiling: Int) {
        self.ceiling = max(1, ceiling)
    }

    func limit(_ host: String) -> Int { hosts[host]?.limit ?? ceiling }

    /// An answer from `host`; `limited` when it was a 429 or 503.
    mutating func answered(_ host: String, limited: Bool) {
        var state = hosts[host] ?? Host(limit: ceiling, lowest: ceiling, highest: ceiling)
        defer { hosts[host] = state }
        if state.stale > 0 {
            state.stale -= 1
            return
        }
        if limited {
            halve(&state)
            return
        }
        state.calm += 1
        if state.calm >= state.limit, state.limit < ceiling {
            state.limit += 1
            state.calm = 0
            state.highest = max(state.highest, state.limit)
        }
    }

    /// A rate-limit pause imposed on `host`.
    mutating func paused(_ host: String) {
        var state = hosts[host] ?? Host(limit: ceiling, lowest: ceiling, highest: ceiling)
        if state.stale == 0 { halve(&state) }
        hosts[host] = state
    }

    private func halve(_ state: inout Host) {
        state.stale = state.limit
        state.limit = max(1, state.limit / 2)
        state.calm = 0
        state.lowest = min(state.lowest, state.limit)
    }

    /// Each host's lowest, highest and final limit, for the report.
    var report: [String: JobReport.ConcurrencyRange] {
        hosts.mapValues { JobReport.ConcurrencyRange(min: $0.lowest, max: $0.highest, final: $0.limit) }
    }
}

extension JobReport {
    /// The concurrency `--adaptive` allowed a host over the run.
    public struct ConcurrencyRange: Sendable, Codable, Equatable {
        public var min: Int
        public var max: Int
        public var final: Int
    }
}
