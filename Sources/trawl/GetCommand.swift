import ArgumentParser
import Foundation
import TrawlEngine

/// `trawl get URL`: one request; the body streams to stdout or a file, status and errors to stderr.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one request; the body goes to stdout (or -o FILE), errors to stderr.",
        discussion: """
            Redirects are followed (up to 10), with credentials stripped when the host changes.
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

    func validate() throws {
        if data != nil, dataFile != nil { throw ValidationError("give either --data or --data-file, not both") }
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
        request.method = method.map { HTTPMethod(rawValue: $0) } ?? (request.body == nil ? .get : .post)
        for header in headers {
            let parts = header.split(separator: ":", maxSplits: 1)
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            request.headers.add(String(parts[0]).trimmingCharacters(in: .whitespaces), value)
        }
        if let maxTime { request.timeouts.total = .milliseconds(Int64(maxTime * 1000)) }

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
