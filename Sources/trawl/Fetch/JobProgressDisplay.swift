import Foundation
import Synchronization
import Trawl
import TrawlJobs
import TrawlEngine

/// Shows a running job's progress on stderr: a line redrawn four times a second on a terminal, a plain line
/// every five seconds otherwise, nothing with `--quiet`.
final class JobProgressDisplay: Sendable {
    enum Mode: Sendable {
        case live, plain, quiet
    }

    let mode: Mode
    private let task = Mutex<Task<Void, Never>?>(nil)

    convenience init(quiet: Bool) {
        self.init(mode: quiet ? .quiet : Terminal.standardErrorIsTerminal ? .live : .plain)
    }

    init(mode: Mode) {
        self.mode = mode
    }

    /// How often the line is drawn: four times a second on a terminal, every five seconds otherwise.
    var interval: Duration? {
        switch mode {
        case .live: .milliseconds(250)
        case .plain: .seconds(5)
        case .quiet: nil
        }
    }

    func start(_ read: @escaping @Sendable () -> JobProgress) {
        guard let interval else { return }
        let mode = self.mode
        task.withLock {
            $0 = Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { break }
                    Self.write(Self.render(read(), mode: mode, final: false))
                }
            }
        }
    }

    /// Stops redrawing and leaves the last state on its own line.
    func stop(_ final: JobProgress) {
        task.withLock {
            $0?.cancel()
            $0 = nil
        }
        Self.write(Self.render(final, mode: mode, final: true))
    }

    private static func write(_ text: String?) {
        guard let text else { return }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// The exact text written to stderr for one update: on a terminal the line redrawn in place (carriage
    /// return, erase line; the final update ends the line), otherwise the line on its own line, and nothing when
    /// quiet.
    static func render(_ progress: JobProgress, mode: Mode, final: Bool) -> String? {
        switch mode {
        case .live: "\r\u{1B}[2K" + line(progress) + (final ? "\n" : "")
        case .plain: line(progress) + "\n"
        case .quiet: nil
        }
    }

    static func line(_ progress: JobProgress) -> String {
        let seconds = max(progress.elapsed.seconds, 0.001)
        var parts: [String] = []
        parts.append("units \(progress.unitsDone + progress.unitsFailed)/\(progress.unitsTotal)")
        // A total only once every unit's page count is known: before, it would count only the units planned so
        // far and read as the job's total.
        // Pages and items as they are read; the committed count (what a resume keeps) lags and says so.
        let fetched = max(progress.pagesFetched, progress.pagesDone)
        parts.append("pages \(fetched)" + (progress.pagesTotal.map { "/\($0)" } ?? ""))
        parts.append("items \(max(progress.itemsFetched, progress.items))")
        if fetched > progress.pagesDone { parts.append("committed \(progress.pagesDone) pages") }
        parts.append(String(format: "%.1f MB", Double(progress.bytes) / 1e6))
        parts.append(String(format: "%.0f req/s", Double(progress.requests) / seconds))
        if progress.retries > 0 { parts.append("retries \(progress.retries)") }
        if progress.errors > 0 { parts.append("errors \(progress.errors)") }
        if progress.waits > 0 { parts.append("waits \(progress.waits)") }
        if let eta = eta(progress, seconds: seconds) { parts.append("ETA \(eta)") }
        parts.append(String(format: "%.1fs", seconds))
        return parts.joined(separator: "  ")
    }

    /// From pages when their total is known, else from the units of this run finished.
    static func eta(_ progress: JobProgress, seconds: Double) -> String? {
        let units = progress.unitsTotal - progress.unitsSkipped
        var fraction = Double(progress.unitsDone + progress.unitsFailed - progress.unitsSkipped) / Double(max(units, 1))
        if let total = progress.pagesTotal, total > 0 {
            fraction = Double(max(progress.pagesFetched, progress.pagesDone)) / Double(total)
        }
        guard fraction > 0.02, fraction < 1 else { return nil }
        let remaining = seconds / fraction * (1 - fraction)
        return remaining < 90 ? String(format: "%.0fs", remaining) : String(format: "%.0fm", remaining / 60)
    }
}
