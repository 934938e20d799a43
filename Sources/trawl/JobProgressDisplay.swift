import Foundation
import Synchronization
import Trawl
import TrawlEngine

/// Shows a running job's progress on stderr: a line redrawn four times a second on a terminal, a plain line
/// every five seconds otherwise, nothing with `--quiet`.
final class JobProgressDisplay: Sendable {
    enum Mode: Sendable {
        case live, plain, quiet
    }

    let mode: Mode
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(quiet: Bool) {
        mode = quiet ? .quiet : Terminal.standardErrorIsTerminal ? .live : .plain
    }

    func start(_ read: @escaping @Sendable () -> JobProgress) {
        guard mode != .quiet else { return }
        let mode = self.mode
        let interval: Duration = mode == .live ? .milliseconds(250) : .seconds(5)
        task.withLock {
            $0 = Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { break }
                    Self.write(Self.line(read()), live: mode == .live)
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
        guard mode != .quiet else { return }
        Self.write(Self.line(final), live: mode == .live)
        if mode == .live { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private static func write(_ line: String, live: Bool) {
        let text = live ? "\r\u{1B}[2K" + line : line + "\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func line(_ progress: JobProgress) -> String {
        let seconds = max(progress.elapsed.seconds, 0.001)
        var parts: [String] = []
        parts.append("units \(progress.unitsDone + progress.unitsFailed)/\(progress.unitsTotal)")
        let known = progress.unitsOpenEnded == 0 && progress.pagesPlanned > 0
        parts.append("pages \(progress.pagesDone)" + (known ? "/\(max(progress.pagesPlanned, progress.pagesDone))" : ""))
        parts.append("items \(progress.items)")
        parts.append(String(format: "%.1f MB", Double(progress.bytes) / 1e6))
        parts.append(String(format: "%.0f req/s", Double(progress.requests) / seconds))
        if progress.retries > 0 { parts.append("retries \(progress.retries)") }
        if progress.errors > 0 { parts.append("errors \(progress.errors)") }
        if progress.waits > 0 { parts.append("waits \(progress.waits)") }
        if let eta = eta(progress, seconds: seconds) { parts.append("ETA \(eta)") }
        parts.append(String(format: "%.1fs", seconds))
        return parts.joined(separator: "  ")
    }

    /// From units done, or from pages when the job is one unit whose page count is known.
    static func eta(_ progress: JobProgress, seconds: Double) -> String? {
        var fraction = Double(progress.unitsDone + progress.unitsFailed) / Double(max(progress.unitsTotal, 1))
        if progress.unitsTotal == 1, progress.unitsOpenEnded == 0, progress.pagesPlanned > 0 {
            fraction = Double(progress.pagesDone) / Double(progress.pagesPlanned)
        }
        guard fraction > 0.02, fraction < 1 else { return nil }
        let remaining = seconds / fraction * (1 - fraction)
        return remaining < 90 ? String(format: "%.0fs", remaining) : String(format: "%.0fm", remaining / 60)
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
