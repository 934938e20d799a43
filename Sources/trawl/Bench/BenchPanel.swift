import Foundation
import TrawlBench

/// While a bench runs: closes the recorder's intervals on time and, on a terminal, redraws a live panel on
/// stderr about 4 times a second. Its work is per tick, never per request.
struct BenchPanel: Sendable {
    /// What the run plans: a duration in seconds or a number of requests.
    enum Plan: Sendable {
        case seconds(Double)
        case requests(Int)
    }

    let recorder: BenchRecorder
    let plan: Plan
    /// Draw the panel (stderr is a terminal, no --json, no --quiet).
    let draws: Bool
    /// `--tui`: the full live view (histogram, percentiles and statuses so far, rate over time) instead of two lines.
    var full = false
    static let lineCount = 2
    /// Lines of the full live view (always this many, so that each redraw covers the last).
    static let fullLineCount = 18

    /// Whether the panel is drawn: only on a terminal and only for the table.
    static func shouldDraw(json: Bool, quiet: Bool, stderrIsTerminal: Bool = isatty(2) == 1) -> Bool {
        stderrIsTerminal && !json && !quiet
    }

    /// Ticks until cancelled; then clears the panel.
    func run() async {
        let clock = ContinuousClock()
        var drawn = false
        while !Task.isCancelled {
            try? await clock.sleep(for: .milliseconds(250), tolerance: .milliseconds(20))
            let now = clock.now
            recorder.tick(at: now)
            guard draws, !Task.isCancelled else { continue }
            var lines = Self.lines(recorder.snapshot(at: now), plan: plan)
            if full { lines += Self.liveLines(recorder.live()) }
            write((drawn ? Self.erase(lines.count) : "") + lines.joined(separator: "\n") + "\n")
            drawn = true
        }
        if drawn { write(Self.erase(full ? Self.fullLineCount : Self.lineCount)) }
    }

    /// Moves up over the panel and clears to the end of the screen.
    static let erase = erase(lineCount)
    static func erase(_ lines: Int) -> String { "\u{1B}[\(lines)A\r\u{1B}[J" }

    /// The full live view's lines after the two of the panel (``fullLineCount`` in all): percentiles and statuses
    /// of the complete intervals so far, requests/s of the last 60 intervals as a sparkline, and the histogram so
    /// far in 1-2-5 log buckets (at most 12 bars).
    static func liveLines(_ live: BenchRecorder.Live) -> [String] {
        var lines: [String] = []
        if let total = live.latencies, total.totalCount > 0 {
            let points = [("p50", 50.0), ("p90", 90), ("p99", 99), ("p99.9", 99.9)].map { name, level in
                String(format: "%@ %.2f", name, Double(total.valueAtPercentile(level)) / 1000)
            }
            lines.append("  so far ms   " + points.joined(separator: "  ")
                + String(format: "  max %.2f", Double(total.maxRecorded) / 1000))
        } else {
            lines.append("  so far ms   waiting for the first interval")
        }
        let names = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        let statuses = zip(names, live.statusClasses).filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }
        lines.append("  statuses    " + (statuses.isEmpty ? "-" : statuses.joined(separator: "  ")))
        let rates = live.rows.map { Double($0.requests) / max($0.end - $0.start, 1e-9) }
        let top = rates.max() ?? 0
        let blocks = Array("▁▂▃▄▅▆▇█")
        let spark = rates.map { top > 0 ? blocks[min(7, Int($0 / top * 7.999))] : blocks[0] }
        lines.append("  req/s       " + String(spark) + (top > 0 ? String(format: "  (top %.0f)", top) : ""))
        lines.append("  histogram so far (ms):")
        var bars: [String] = []
        if let total = live.latencies, total.totalCount > 0 {
            let edges = BenchReport.logEdges(low: max(1, total.min), high: max(1, total.maxRecorded))
            var counts = [UInt64](repeating: 0, count: max(1, edges.count - 1))
            for value in total.recordedValues() {
                let micros = min(total.highestEquivalentForValue(value.value), total.maxRecorded)
                let index = (edges.firstIndex { micros <= $0 } ?? edges.count - 1) - 1
                counts[max(0, min(counts.count - 1, index))] += value.count
            }
            let largest = max(1, counts.max() ?? 1)
            for (index, count) in counts.enumerated().suffix(12) {
                let edge = Double(edges[min(index + 1, edges.count - 1)]) / 1000
                let bar = String(repeating: "■", count: Int((Double(count) / Double(largest) * 40).rounded()))
                bars.append(String(format: "  %10.3f [%8llu] |", edge, count) + bar)
            }
        }
        lines += bars
        while lines.count < fullLineCount - lineCount { lines.append("") }
        return Array(lines.prefix(fullLineCount - lineCount))
    }

    static func lines(_ snapshot: BenchRecorder.Snapshot, plan: Plan) -> [String] {
        let progress: String = switch plan {
        case .seconds(let seconds): String(format: "%.1f s / %g s", snapshot.elapsed, seconds)
        case .requests(let count):
            String(format: "%.1f s, %d / %d requests", snapshot.elapsed, snapshot.done + snapshot.errors, count)
        }
        var second = "  waiting for the first interval"
        if let last = snapshot.last {
            let span = max(last.end - last.start, 1e-9)
            second = String(
                format: "  last %gs: %.0f req/s  p50 %.2f ms  p99 %.2f ms", span, Double(last.requests) / span,
                Double(last.p50) / 1000, Double(last.p99) / 1000)
        }
        return [
            "trawl bench  \(progress)  done \(snapshot.done)  errors \(snapshot.errors)  in flight \(snapshot.inFlight)"
                + "  late starts \(snapshot.lateStarts)",
            second,
        ]
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
