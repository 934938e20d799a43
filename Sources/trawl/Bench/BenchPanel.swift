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
    static let lineCount = 2

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
            let lines = Self.lines(recorder.snapshot(at: now), plan: plan)
            write((drawn ? Self.erase : "") + lines.joined(separator: "\n") + "\n")
            drawn = true
        }
        if drawn { write(Self.erase) }
    }

    /// Moves up over the panel and clears to the end of the screen.
    static let erase = "\u{1B}[\(lineCount)A\r\u{1B}[J"

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
