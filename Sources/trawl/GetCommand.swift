import ArgumentParser
import Foundation
import Synchronization
import Trawl
import TrawlEngine

/// `trawl get URL`: one request; the body streams to stdout or a file, status and errors to stderr.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one request; the body goes to stdout (or -o FILE), errors to stderr.",
        discussion: """
            Redirects are followed (up to 10), with credentials stripped when the host changes. \
            Exit status: 0 on a 2xx/3xx response, 1 when the request failed or the status is 4xx/5xx.
            """)

    @Argument(help: "The URL (http or https).")
    var url: String

    @Option(name: [.customShort("X"), .customLong("request")], help: "The method (default GET, or POST with a body).")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "The request body.")
    var data: String?

    @Option(name: .customLong("data-file"), help: "Send this file as the body (streamed from disk).")
    var dataFile: String?

    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the body to this file instead of stdout.")
    var output: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Option(name: .customLong("max-time"), help: "Total timeout in seconds.")
    var maxTime: Double?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Skip TLS certificate verification (dangerous).")
    var insecure = false

    @Option(name: .customLong("limit-rate"), help: "Read the body at most this many bytes/s (the transfer pauses).")
    var limitRate: Int?

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: "A multipart field 'name=value', or a file 'name=@path[;type=MIME][;filename=NAME]' (repeatable).")
    var form: [String] = []

    @Flag(
        name: [.customShort("C"), .customLong("continue")],
        help: "With -o: continue a partial download (Range/If-Range); restarts cleanly if the file changed.")
    var resume = false

    @Option(name: .customLong("sha256"), help: "With -o: the expected SHA-256 (hex); a mismatch fails the download.")
    var sha256: String?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar.")
    var silent = false

    func validate() throws {
        if data != nil, dataFile != nil { throw ValidationError("give either --data or --data-file, not both") }
        if !form.isEmpty, data != nil || dataFile != nil { throw ValidationError("give -F or a body (-d/--data-file), not both") }
        if (resume || sha256 != nil), output == nil { throw ValidationError("--continue and --sha256 need -o FILE") }
        if resume, limitRate != nil { throw ValidationError("--continue does not combine with --limit-rate") }
        for field in form where !field.contains("=") {
            throw ValidationError("-F '\(field)' must look like 'name=value' or 'name=@path'")
        }
        for header in headers where !header.contains(":") {
            throw ValidationError("header '\(header)' must look like 'Name: value'")
        }
    }

    func run() async throws {
        var config = Client.Configuration()
        if insecure { config.tls = .insecureSkipVerification }
        let client = Client(configuration: config)

        var request = Request(url: url)
        if let data { request.body = .string(data) }
        if let dataFile { request.body = .file(dataFile) }
        if !form.isEmpty { request.body = try multipartBody() }
        request.method = method.map { HTTPMethod(rawValue: $0) } ?? (request.body == nil ? .get : .post)
        for header in headers {
            let parts = header.split(separator: ":", maxSplits: 1)
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            request.headers.add(String(parts[0]).trimmingCharacters(in: .whitespaces), value)
        }
        if let maxTime { request.timeouts.total = .milliseconds(Int64(maxTime * 1000)) }
        let bar = ProgressBar(enabled: !silent && Terminal.standardErrorIsTerminal)
        if request.body != nil { request.onProgress = { bar.upload($0) } }

        if let output, limitRate == nil, !output.hasPrefix("/dev/") {
            try await download(client: client, request: request, to: output, bar: bar)
            return
        }

        let sink: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) ,
                  let handle = FileHandle(forWritingAtPath: output) else {
                throw CLIFailure("cannot create output file '\(output)'")
            }
            sink = handle
        } else {
            sink = FileHandle.standardOutput
        }

        let status: Int
        do {
            let response = try await client.stream(request)
            status = response.status
            if include {
                var head = "\(response.head.httpVersion.rawValue) \(response.status)\r\n"
                for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
                FileHandle.standardOutput.write(Data((head + "\r\n").utf8))
            }
            var pacer = limitRate.map { RatePacer(bytesPerSecond: $0) }
            for try await chunk in response.body {
                try sink.write(contentsOf: chunk)
                try await pacer?.consumed(chunk.count)
            }
            try? sink.synchronize()
        } catch let error as TrawlError {
            throw CLIFailure("error: \(error)")
        }
        if status >= 400 {
            throw CLIFailure("error: HTTP \(status) from \(url)")
        }
    }
}

extension Get {
    /// `-o FILE`: through `FILE.part`, moved into place when complete; `--continue` resumes it.
    private func download(client: Client, request: Request, to output: String, bar: ProgressBar) async throws {
        var options = DownloadOptions()
        options.resume = resume
        options.expectedSHA256 = sha256
        options.onProgress = { bar.download($0) }
        do {
            let result = try await client.download(request, to: output, options: options)
            bar.finish()
            if include {
                var head = "\(result.head.httpVersion.rawValue) \(result.head.status)\r\n"
                for (name, value) in result.head.headers { head += "\(name): \(value)\r\n" }
                FileHandle.standardOutput.write(Data((head + "\r\n").utf8))
            }
            if result.resumedFrom > 0 {
                FileHandle.standardError.write(Data("resumed at byte \(result.resumedFrom)\n".utf8))
            } else if result.restarted {
                FileHandle.standardError.write(
                    Data("the partial file could not be continued (range ignored or file changed): downloaded again\n".utf8))
            }
        } catch let error as TrawlError {
            bar.finish()
            if error.status != nil { throw CLIFailure("error: \(error)") }
            let partial = output + ".part"
            let kept = FileManager.default.fileExists(atPath: partial)
            throw CLIFailure("error: \(error)" + (kept ? "\nthe partial file \(partial) is kept: rerun with --continue" : ""))
        } catch {
            bar.finish()
            throw CLIFailure("error: \(error)")
        }
    }

    /// `-F name=value` and `-F name=@path;type=…;filename=…`, as curl spells them.
    private func multipartBody() throws -> RequestBody {
        var multipart = MultipartForm()
        for field in form {
            let equals = field.firstIndex(of: "=")!
            let name = String(field[..<equals])
            let value = String(field[field.index(after: equals)...])
            if value.hasPrefix("@") {
                var pieces = value.dropFirst().split(separator: ";").map(String.init)
                let path = pieces.isEmpty ? "" : pieces.removeFirst()
                var type: String?
                var filename: String?
                for piece in pieces {
                    if piece.hasPrefix("type=") { type = String(piece.dropFirst(5)) }
                    if piece.hasPrefix("filename=") { filename = String(piece.dropFirst(9)) }
                }
                guard FileManager.default.isReadableFile(atPath: path) else {
                    throw CLIFailure("error: -F \(name): cannot read '\(path)'")
                }
                multipart.appendFile(name: name, path: path, filename: filename, contentType: type)
            } else {
                multipart.append(name: name, value: value)
            }
        }
        do {
            return try multipart.requestBody()
        } catch {
            throw CLIFailure("error: cannot build the multipart body: \(error)")
        }
    }
}

/// A one-line progress bar on stderr, redrawn at most five times a second.
final class ProgressBar: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var started = ContinuousClock.now
        var drawn = false
    }

    let enabled: Bool
    private let state = Mutex(State())

    init(enabled: Bool) { self.enabled = enabled }

    func download(_ progress: DownloadProgress) { draw("↓", progress.written, progress.total) }

    func upload(_ progress: TransferProgress) { draw("↑", progress.sent, progress.expectedToSend) }

    func finish() {
        guard enabled else { return }
        let drawn = state.withLock { $0.drawn }
        if drawn { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func draw(_ arrow: String, _ done: Int64, _ total: Int64?) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let (due, started) = state.withLock { state -> (Bool, ContinuousClock.Instant) in
            let finished = total.map { done >= $0 } ?? false
            guard finished || state.last.map({ now - $0 >= .milliseconds(200) }) ?? true else { return (false, state.started) }
            state.last = now
            state.drawn = true
            return (true, state.started)
        }
        guard due else { return }
        let seconds = max((now - started).seconds, 0.001)
        let rate = Double(done) / seconds
        var line = "\(arrow) " + String(format: "%.1f", Double(done) / 1e6)
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            line = "\(arrow) [" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
                + String(format: "%3.0f%% %.1f/%.1f", fraction * 100, Double(done) / 1e6, Double(total) / 1e6)
            if rate > 0, done < total { line += String(format: " ETA %.0fs", Double(total - done) / rate) }
        }
        line += String(format: " MB  %.1f MB/s", rate / 1e6)
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + line).utf8))
    }
}

/// Sleeps so that bytes consumed stay under a rate: a deliberately slow consumer.
struct RatePacer {
    let bytesPerSecond: Int
    private let start = ContinuousClock.now
    private var total = 0

    init(bytesPerSecond: Int) { self.bytesPerSecond = max(1, bytesPerSecond) }

    mutating func consumed(_ count: Int) async throws {
        total += count
        let due = start + .milliseconds(Int64(Double(total) / Double(bytesPerSecond) * 1000))
        if due > ContinuousClock.now { try await Task.sleep(until: due) }
    }
}

/// A failure of the work itself: message on stderr, exit status 1.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
