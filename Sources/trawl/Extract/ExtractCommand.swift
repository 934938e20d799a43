import ArgumentParser
import Foundation
import TrawlEngine
import TrawlJSON

/// `trawl extract --path KEYPATH [FILE|-|URL]`: the elements at a key path as JSON Lines on stdout.
struct Extract: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream the elements at a key path out of a JSON document as JSON Lines.",
        discussion: """
            Key paths are dot-separated keys and array indices; a negative index counts from the end \
            ('data.-1.id'); '' or '$' is the root. The document streams: memory stays bounded by the \
            largest element. On bad input the elements completed before the error are written, the \
            error goes to stderr, and the exit status is 1. An http(s) URL is fetched with the engine and \
            parsed as its body arrives (redirects followed, a non-2xx status is an error), so nothing is \
            buffered whole.
            """)

    @Option(name: [.customShort("p"), .long], help: "The key path of the collection (e.g. items, data.results, $).")
    var path: String

    @Option(name: .long, help: "A side field to report on stderr at the end, e.g. next_cursor (repeatable).")
    var side: [String] = []

    @Flag(name: .long, help: "Print only the number of elements, on the last line of stdout.")
    var count = false

    @Option(name: [.customShort("H"), .long], help: "A request header for a URL source, 'Name: value' (repeatable).")
    var header: [String] = []

    @Option(
        name: .customLong("sensitive-header"),
        help: "A header that carries a credential (repeatable): removed when a redirect leaves the origin, like Authorization.")
    var sensitiveHeaders: [String] = []

    @Option(name: .customLong("connect-timeout"), help: "For a URL: longest wait for the connection, in seconds.")
    var connectTimeout: Double?

    @OptionGroup(title: "TLS (for a URL)") var tls: TLSFlags

    @Argument(help: "The JSON file, - for stdin, or an http:// or https:// URL.")
    var file: String = "-"

    private var isURL: Bool {
        let lowered = file.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    func validate() throws {
        try HeaderOption.validate(header)
        try HeaderOption.validateSensitive(sensitiveHeaders)
        if isURL { try RequestOption.checkURL(file) }
        try RequestOption.checkHeaderCharacters(header)
        try SecondsOption.validate(connectTimeout, flag: "--connect-timeout")
    }

    func run() async throws {
        let input: FileHandle?
        if isURL {
            input = nil
        } else {
            input = file == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: file)
            guard input != nil else { throw CLIFailure("error: cannot open '\(file)'") }
        }
        let sides = side.map { JSONKeyPath($0) }
        let extractor: JSONExtractor
        do {
            extractor = try JSONExtractor(path: JSONKeyPath(path), capture: sides, form: count ? .countOnly : .json)
        } catch {
            throw ValidationError("\(error)")
        }
        var output = OutputBuffer()
        let summary: JSONExtractor.Summary
        do {
            if let input {
                var chunk = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let n = chunk.withUnsafeMutableBytes { read(input.fileDescriptor, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else {
                        if n < 0 {
                            throw CLIFailure("error: cannot read '\(file)': \(String(cString: strerror(errno)))")
                        }
                        break
                    }
                    try output.feed(chunk[0..<n], to: extractor)
                    try output.flushIfFull()
                }
            } else {
                try await streamURL { chunk in
                    try output.feed(chunk, to: extractor)
                    try output.flushIfFull()
                }
            }
            summary = try output.finish(extractor)
        } catch let failure as OutputWriteFailure {
            throw failure
        } catch {
            // A body cut short by the transport: the bytes that did arrive may still hold completed elements the
            // extractor had not parsed yet (it coalesces input after a long token); finishing hands them out (its
            // own "truncated" error is not the news: the transport's is).
            if isURL, !(error is JSONError) { _ = try? output.finish(extractor) }
            try output.flush()  // the elements completed before a failure are kept, whatever failed
            if let error = error as? JSONError {
                throw CLIFailure("error: \(file == "-" ? "stdin" : file): \(error)")
            }
            throw error
        }
        if count { output.appendLine(ArraySlice(String(summary.elementCount).utf8)) }
        try output.flush()
        for sidePath in sides {
            let value = summary.captured[sidePath].map { String(decoding: $0.json, as: UTF8.self) } ?? "(missing)"
            FileHandle.standardError.write(Data(TerminalText.safe("\(sidePath): \(value)\n").utf8))
        }
        if summary.collection == .missing {
            throw CLIFailure("error: \(JSONKeyPath(path)) is not in the document")
        }
    }
}

extension Extract {
    /// Streams the body of `file` (a URL) to `consume`, chunk by chunk, with the engine's back-pressure.
    private func streamURL(_ consume: ([UInt8]) throws -> Void) async throws {
        var request = Request(url: file)
        if let connectTimeout { request.timeouts.connect = .milliseconds(Int64(connectTimeout * 1000)) }
        HeaderOption.apply(header, to: &request)
        HeaderOption.markSensitive(sensitiveHeaders, in: &request)
        do {
            var configuration = Client.Configuration()
            tls.apply(to: &configuration, environment: ProcessInfo.processInfo.environment)
            let response = try await Client(configuration: configuration).stream(request)
            guard (200..<300).contains(response.status) else {
                var excerpt: [UInt8] = []
                for try await chunk in response.body {
                    excerpt.append(contentsOf: chunk.prefix(512 - excerpt.count))
                    if excerpt.count >= 512 { break }
                }
                let text = String(decoding: excerpt, as: UTF8.self)
                throw CLIFailure("error: HTTP \(response.status) from \(file)" + (text.isEmpty ? "" : ": \(text)"))
            }
            for try await chunk in response.body { try consume(chunk) }
        } catch let error as TrawlError {
            throw CLIFailure("error: \(error)")
        }
    }
}

/// Lines collected in memory and written to stdout in large blocks.
private struct OutputBuffer {
    private var bytes: [UInt8] = []

    /// Feeds `chunk` to `extractor`, appending the elements it completes as lines (none with --count).
    mutating func feed<Bytes: Sequence<UInt8>>(_ chunk: Bytes, to extractor: JSONExtractor) throws {
        if extractor.form == .json {
            try extractor.feed(chunk, appendingLinesTo: &bytes)
        } else {
            try extractor.feed(chunk)
        }
    }

    mutating func finish(_ extractor: JSONExtractor) throws -> JSONExtractor.Summary {
        extractor.form == .json ? try extractor.finish(appendingLinesTo: &bytes) : try extractor.finish()
    }

    mutating func appendLine(_ line: ArraySlice<UInt8>) {
        bytes.append(contentsOf: line)
        bytes.append(UInt8(ascii: "\n"))
    }

    mutating func flushIfFull() throws(OutputWriteFailure) {
        if bytes.count >= 64 << 10 { try flush() }
    }

    mutating func flush() throws(OutputWriteFailure) {
        try OutputWriting.write(bytes, to: STDOUT_FILENO, name: "the output")
        bytes.removeAll(keepingCapacity: true)
    }
}
