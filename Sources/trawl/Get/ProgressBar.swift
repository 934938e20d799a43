import Foundation
import Synchronization
import TrawlEngine

/// A one-line progress bar on stderr, redrawn at most five times a second: first the upload (`↑`), if there is
/// a body, then the download to a file (`↓`) on a line of its own.
///
/// libcurl keeps reporting the finished upload while the response arrives; once the upload reached its total
/// (or the download began) those reports are ignored, and after `finish()` nothing is drawn at all, so the bar
/// never runs into a response body printed on the same terminal.
final class ProgressBar: Sendable {
    private struct State {
        var arrow: String?
        /// Bytes already done when this transfer's line began (a resumed download's offset).
        var baseline: Int64 = 0
        var started = ContinuousClock.now
        var last: ContinuousClock.Instant?
        /// A line is on screen and not yet ended with a newline.
        var drawn = false
        var uploadDone = false
        var closed = false
    }

    let enabled: Bool
    private let state = Mutex(State())

    init(enabled: Bool) { self.enabled = enabled }

    func download(_ progress: DownloadProgress) { draw("↓", progress.written, progress.total) }

    func upload(_ progress: TransferProgress) { draw("↑", progress.sent, progress.expectedToSend) }

    /// Ends the line (when one was drawn) and stops drawing. Safe to call more than once.
    func finish() {
        guard enabled else { return }
        state.withLock { state in
            if state.drawn { FileHandle.standardError.write(Data("\n".utf8)) }
            state.drawn = false
            state.closed = true
        }
    }

    private func draw(_ arrow: String, _ done: Int64, _ total: Int64?) {
        guard enabled else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.closed, !(arrow == "↑" && state.uploadDone) else { return }
            var prefix = ""
            if state.arrow != arrow {
                if state.arrow == "↑" { state.uploadDone = true }
                if state.drawn { prefix = "\n" }
                state.arrow = arrow
                state.baseline = done
                state.started = now
                state.last = nil
            }
            let finished = total.map { done >= $0 } ?? false
            if arrow == "↑", finished { state.uploadDone = true }
            guard finished || state.last.map({ now - $0 >= .milliseconds(200) }) ?? true else { return }
            state.last = now
            state.drawn = true
            let elapsed = now - state.started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let line = ProgressLine.text(
                arrow: arrow, done: done, total: total, baseline: state.baseline, elapsed: seconds)
            FileHandle.standardError.write(Data((prefix + "\r\u{1B}[2K" + line).utf8))
        }
    }
}

/// The text of one progress line, from counts and time alone (no terminal, no clock): testable.
enum ProgressLine {
    static let width = 24

    /// `↓ [######                  ]  25% 0.5/2.0 MB ETA 3s  0.2 MB/s`, or `↓ 0.5 MB  0.2 MB/s` without a total.
    ///
    /// The speed counts only the bytes of this transfer (`done - baseline`, where `baseline` is what a resumed
    /// download already had on disk) over `elapsed` seconds, and so does the ETA.
    static func text(arrow: String, done: Int64, total: Int64?, baseline: Int64, elapsed: Double) -> String {
        let rate = Double(max(0, done - baseline)) / max(elapsed, 0.001)
        let speed = String(format: "  %.1f MB/s", rate / 1e6)
        guard let total, total > 0 else {
            return "\(arrow) " + String(format: "%.1f MB", Double(done) / 1e6) + speed
        }
        let fraction = min(1, Double(done) / Double(total))
        let filled = Int(fraction * Double(width))
        var line = "\(arrow) [" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            + "] " + String(format: "%3.0f%% %.1f/%.1f MB", fraction * 100, Double(done) / 1e6, Double(total) / 1e6)
        if rate > 0, done < total { line += " ETA " + duration(Double(total - done) / rate) }
        return line + speed
    }

    /// `42s`, `3m05s`, `2h07m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(min(seconds, 360_000).rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}
