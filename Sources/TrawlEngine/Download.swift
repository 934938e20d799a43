import Foundation

/// How `Client.download` writes a response body to disk.
///
/// ```swift
/// var options = DownloadOptions()
/// options.resume = true                                  // continue a partial download
/// options.expectedSHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
/// options.onProgress = { print($0.written, $0.total ?? -1) }
/// let result = try await client.download(Request(url: url), to: "/data/big.iso", options: options)
/// ```
public struct DownloadOptions: Sendable {
    /// Continue from the partial file (`DESTINATION.part`) a failed or killed download left, with `Range` and
    /// `If-Range`; a server that ignores the range, or a resource that changed, restarts the download cleanly.
    public var resume = false
    /// Lowercase or uppercase hex; a mismatch fails the download and leaves the destination untouched.
    public var expectedSHA256: String?
    /// Compute the file's SHA-256 even without an expected value (into `DownloadResult.sha256`).
    public var computeSHA256 = false
    /// Read the body at most this many bytes per second (the transfer pauses, as curl's `--limit-rate`); the
    /// file goes the same way as without it: through the partial file, resumable, checked.
    public var maxBytesPerSecond: Int?
    /// Called as bytes reach the file; `written` counts bytes already in the partial file too.
    public var onProgress: (@Sendable (DownloadProgress) -> Void)?

    public init() {}
}

/// Bytes in the destination so far, and the total when the server said.
public struct DownloadProgress: Sendable, Hashable {
    public var written: Int64
    public var total: Int64?

    public init(written: Int64, total: Int64?) {
        self.written = written
        self.total = total
    }
}

/// A finished download.
public struct DownloadResult: Sendable {
    public var path: String
    public var bytes: Int64
    /// Bytes that were already on disk and were kept (0 for a fresh download).
    public var resumedFrom: Int64
    /// True when a partial file existed but could not be continued (range ignored, resource changed).
    public var restarted: Bool
    /// The file's SHA-256 (hex), when one was expected or `computeSHA256` was set.
    public var sha256: String?
    public var head: ResponseHead
}

extension Client {
    /// Streams `request`'s body into `destination`, through `DESTINATION.part` next to it, moved into place only
    /// when complete (and checked against `expectedSHA256` when given). Memory stays bounded by the stream buffer.
    ///
    /// ```swift
    /// let result = try await client.download(Request(url: "https://example.com/big.iso"), to: "big.iso")
    /// print(result.bytes, result.sha256)
    /// ```
    ///
    /// With `resume`, a partial file is continued: `Range: bytes=N-` with `If-Range` (the strong ETag, else the
    /// Last-Modified date recorded when it started). Only a `206` whose `Content-Range` starts at N and whose
    /// validator is the recorded one is appended; a `200`, another range or another validator restarts from
    /// zero. A transfer failure leaves the partial file (and its validator) for the next attempt; a checksum
    /// mismatch removes both.
    ///
    /// - Throws: `FileError` before anything is sent when `destination` is a directory or its directory does
    ///   not exist; `TrawlError` (`.invalidRequest`) when `expectedSHA256` is not 64 hex digits.
    public func download(_ request: Request, to destination: String, options: DownloadOptions = DownloadOptions())
        async throws -> DownloadResult
    {
        let request = Self.asServed(request)
        let expected = try Self.expectedDigest(options, request: request)
        try DownloadName.checkDestination(destination)
        let partial = destination + ".part"
        let validatorPath = destination + ".part.validator"
        var resumeFrom: Int64 = 0
        var validator = ""
        var hadPartial = false
        if options.resume, let size = Self.fileSize(partial), size > 0 {
            hadPartial = true
            let recorded = (try? DurableFiles.read(validatorPath)).flatMap { $0 }
            validator = recorded.map { String(decoding: $0, as: UTF8.self) } ?? ""
            if !validator.isEmpty { resumeFrom = size }
        }
        var attemptRequest = request
        if resumeFrom > 0 {
            attemptRequest.headers["Range"] = "bytes=\(resumeFrom)-"
            attemptRequest.headers["If-Range"] = validator
        }
        let response = try await stream(attemptRequest)
        var head = response.head
        var body: ResponseBody? = response.body
        var start: Int64 = 0
        var total: Int64?
        var answer = resumeFrom > 0
            ? ResumeAnswer(status: head.status, headers: head.headers, resumeFrom: resumeFrom, validator: validator)
            : .fresh
        if answer == .confirm {
            answer = await Self.confirmWhole(self, request, size: resumeFrom, validator: validator)
        }
        switch answer {
        case .append(let rangeTotal):
            start = resumeFrom
            total = rangeTotal
        case .complete:
            start = resumeFrom
            total = resumeFrom
            body = nil
        case .restart, .confirm:
            // Not appendable (another range, or the resource changed under a server that ignores If-Range).
            let fresh = try await stream(request)
            head = fresh.head
            body = fresh.body
        case .fresh:
            break
        }
        guard head.isSuccess || answer == .complete else {
            throw await Self.statusError(head, body: body, request: request)
        }
        if start == 0 {
            total = head.headers["Content-Length"].flatMap { Int64($0) }
            if head.status == 206, let range = ContentRange(head.headers["Content-Range"]) {
                guard range.first == 0 else {
                    throw TrawlError(
                        code: .invalidBody, message: "the server sent bytes \(range.first)- of the file unasked",
                        method: request.method.rawValue, url: head.url, status: head.status)
                }
                total = range.total
            }
        }
        let file = try Self.openPartial(partial, from: start, validator: ResumeAnswer.validator(of: head.headers))
        defer { file.close() }
        return try await receive(
            body: body, into: file, head: head, start: start, total: total, destination: destination,
            hadPartial: hadPartial, expected: expected, request: request, options: options)
    }

    /// Downloads into `directory` under the name the server gives in `Content-Disposition` (else the URL's last
    /// path component). The name is reduced to a plain file name: no directories, no `..`, no control
    /// characters; a name that would still leave `directory` is refused. Not resumable (the name is only known
    /// from the response).
    ///
    /// ```swift
    /// let result = try await client.download(Request(url: url), intoDirectory: "/data/incoming")
    /// print(result.path)   // "/data/incoming/report.pdf"
    /// ```
    public func download(
        _ request: Request, intoDirectory directory: String, options: DownloadOptions = DownloadOptions()
    ) async throws -> DownloadResult {
        let request = Self.asServed(request)
        let expected = try Self.expectedDigest(options, request: request)
        try DownloadName.checkDirectory(directory)
        let response = try await stream(request)
        let head = response.head
        guard head.isSuccess else { throw await Self.statusError(head, body: response.body, request: request) }
        let name = DownloadName.fileName(contentDisposition: head.headers["Content-Disposition"], url: head.url)
        let destination = try DownloadName.path(for: name, in: directory)
        let file = try Self.openPartial(
            destination + ".part", from: 0, validator: ResumeAnswer.validator(of: head.headers))
        defer { file.close() }
        return try await receive(
            body: response.body, into: file, head: head, start: 0,
            total: head.headers["Content-Length"].flatMap { Int64($0) }, destination: destination, hadPartial: false,
            expected: expected, request: request, options: options)
    }

    /// Opens `PARTIAL` for writing after its first `start` bytes. When starting over, the old bytes are cut
    /// away (and that is on disk) *before* the new validator is recorded: a crash in between must never leave
    /// a new validator vouching for old bytes, or the next resume would append new content to them.
    static func openPartial(_ partial: String, from start: Int64, validator: String) throws -> DurableFile {
        let file = try DurableFile(path: partial, truncatingTo: start)
        guard start == 0 else { return file }
        do {
            try file.sync()
            try DurableFiles.replace(partial + ".validator", with: Array(validator.utf8))
        } catch {
            file.close()
            throw error
        }
        return file
    }

    /// Appends the body to the partial file after `start` bytes, checks length and hash, and moves it into place.
    private func receive(
        body: ResponseBody?, into file: DurableFile, head: ResponseHead, start: Int64, total: Int64?,
        destination: String, hadPartial: Bool, expected: String?, request: Request, options: DownloadOptions
    ) async throws -> DownloadResult {
        let partial = file.path
        let validatorPath = partial + ".validator"
        let hashing = expected != nil || options.computeSHA256
        var hash = SHA256()
        if hashing, start > 0 { try Self.hashPrefix(of: partial, length: start, into: &hash) }
        var written = start
        options.onProgress?(DownloadProgress(written: written, total: total))
        if let body {
            let clock = ContinuousClock()
            let started = clock.now
            let rate = options.maxBytesPerSecond.map { Double(max(1, $0)) }
            for try await chunk in body {
                try file.append(chunk)
                if hashing { hash.update(chunk) }
                written += Int64(chunk.count)
                options.onProgress?(DownloadProgress(written: written, total: total))
                if let rate {
                    let due = started + .milliseconds(Int64(Double(written - start) / rate * 1000))
                    if due > clock.now { try await Task.sleep(until: due, clock: clock) }
                }
            }
        }
        if let total, written != total {
            throw TrawlError(
                code: .truncated, message: "the file ended at \(written) of \(total) bytes",
                hint: "download again with resume to continue from byte \(written)", method: request.method.rawValue,
                url: head.url)
        }
        let digest = hashing ? hash.hexDigest() : nil
        if let expected, let digest, expected != digest {
            // Keeping wrong bytes would only invite a resume that appends nothing and fails the same way.
            file.close()
            try? FileManager.default.removeItem(atPath: validatorPath)
            try? FileManager.default.removeItem(atPath: partial)
            throw TrawlError(
                code: .invalidBody, message: "the file's SHA-256 is \(digest), not the expected \(expected)",
                hint: "the download was deleted; check the expected value, then download again",
                method: request.method.rawValue, url: head.url)
        }
        try file.sync()
        try DurableFiles.move(partial, to: destination)
        try? FileManager.default.removeItem(atPath: validatorPath)
        return DownloadResult(
            path: destination, bytes: written, resumedFrom: start, restarted: hadPartial && start == 0, sha256: digest,
            head: head)
    }

    /// The expected digest in lowercase, or an error before anything is sent when it is not 64 hex digits.
    private static func expectedDigest(_ options: DownloadOptions, request: Request) throws -> String? {
        guard let value = options.expectedSHA256 else { return nil }
        guard SHA256.isHexDigest(value) else {
            throw TrawlError(
                code: .invalidRequest,
                message: "the expected SHA-256 '\(value)' is not 64 hexadecimal digits (\(value.count) characters)",
                hint: "nothing was sent; pass the value sha256sum prints", method: request.method.rawValue,
                url: request.url)
        }
        return value.lowercased()
    }

    /// The request without transparent decoding: the file is the bytes as served, so lengths and ranges agree.
    private static func asServed(_ request: Request) -> Request {
        var request = request
        if !request.headers.contains("Accept-Encoding") { request.headers["Accept-Encoding"] = "identity" }
        return request
    }

    private static func statusError(_ head: ResponseHead, body: ResponseBody?, request: Request) async -> TrawlError {
        let excerpt = (try? await body?.collect(upTo: 4096)) ?? []
        return TrawlError(
            code: .unexpectedStatus, message: "HTTP \(head.status) instead of the file",
            method: request.method.rawValue, url: head.url, status: head.status, headers: head.headers,
            bodyExcerpt: Array(excerpt.prefix(512)))
    }

    static func fileSize(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
    }

    static func hashPrefix(of path: String, length: Int64, into hash: inout SHA256) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw FileError("open", path, reason: "missing") }
        defer { try? handle.close() }
        var remaining = length
        while remaining > 0 {
            guard let data = try handle.read(upToCount: Int(min(remaining, 1 << 20))), !data.isEmpty else {
                throw FileError("read", path, reason: "shorter than \(length) bytes")
            }
            hash.update(data)
            remaining -= Int64(data.count)
        }
    }
}
