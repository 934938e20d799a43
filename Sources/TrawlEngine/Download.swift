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
    /// With `resume`, a partial file is continued: `Range: bytes=N-` with `If-Range` (the ETag, else the
    /// Last-Modified date recorded when it started). Only a `206` whose `Content-Range` starts at N is appended;
    /// a `200`, a mismatched range or a changed validator restarts from zero. A failure leaves the partial file
    /// (and its validator) for the next attempt.
    public func download(_ request: Request, to destination: String, options: DownloadOptions = DownloadOptions())
        async throws -> DownloadResult
    {
        let request = Self.asServed(request)
        let partial = destination + ".part"
        let validatorPath = destination + ".part.validator"
        var resumeFrom: Int64 = 0
        var validator: String?
        var hadPartial = false
        if options.resume, let size = Self.fileSize(partial), size > 0 {
            hadPartial = true
            validator = (try? DurableFiles.read(validatorPath)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
            if validator?.isEmpty == false { resumeFrom = size }
        }
        var attemptRequest = request
        if resumeFrom > 0, let validator {
            attemptRequest.headers["Range"] = "bytes=\(resumeFrom)-"
            attemptRequest.headers["If-Range"] = validator
        }
        let response = try await stream(attemptRequest)
        var head = response.head
        var body: ResponseBody? = response.body
        var start: Int64 = 0
        var total: Int64?
        if resumeFrom > 0, head.status == 206, let range = ContentRange(head.headers["Content-Range"]),
            range.first == resumeFrom
        {
            start = resumeFrom
            total = range.total
        } else if resumeFrom > 0, head.status == 416, let range = ContentRange(head.headers["Content-Range"]),
            range.total == resumeFrom
        {
            // Everything was already there.
            start = resumeFrom
            total = resumeFrom
            body = nil
        } else if resumeFrom > 0, head.status == 206 || head.status == 416 {
            // A range we did not ask for: start over without one.
            let fresh = try await stream(request)
            head = fresh.head
            body = fresh.body
        }
        guard head.isSuccess || (start > 0 && head.status == 416) else {
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
            try DurableFiles.replace(validatorPath, with: Array(Self.validator(of: head).utf8))
        }
        return try await receive(
            body: body, head: head, start: start, total: total, destination: destination, hadPartial: hadPartial,
            request: request, options: options)
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
        let response = try await stream(request)
        let head = response.head
        guard head.isSuccess else { throw await Self.statusError(head, body: response.body, request: request) }
        let name = DownloadName.fileName(contentDisposition: head.headers["Content-Disposition"], url: head.url)
        let destination = try DownloadName.path(for: name, in: directory)
        let validatorPath = destination + ".part.validator"
        try DurableFiles.replace(validatorPath, with: Array(Self.validator(of: head).utf8))
        return try await receive(
            body: response.body, head: head, start: 0, total: head.headers["Content-Length"].flatMap { Int64($0) },
            destination: destination, hadPartial: false, request: request, options: options)
    }

    /// Appends the body to `DESTINATION.part` after `start` bytes, checks length and hash, and moves it into place.
    private func receive(
        body: ResponseBody?, head: ResponseHead, start: Int64, total: Int64?, destination: String, hadPartial: Bool,
        request: Request, options: DownloadOptions
    ) async throws -> DownloadResult {
        let partial = destination + ".part"
        let validatorPath = destination + ".part.validator"
        let file = try DurableFile(path: partial, truncatingTo: start)
        defer { file.close() }
        let hashing = options.expectedSHA256 != nil || options.computeSHA256
        var hash = SHA256()
        if hashing, start > 0 { try Self.hashPrefix(of: partial, length: start, into: &hash) }
        var written = start
        let total = total
        options.onProgress?(DownloadProgress(written: written, total: total))
        if let body {
            for try await chunk in body {
                try file.append(chunk)
                if hashing { hash.update(chunk) }
                written += Int64(chunk.count)
                options.onProgress?(DownloadProgress(written: written, total: total))
            }
        }
        if let total, written != total {
            throw TrawlError(
                code: .truncated, message: "the file ended at \(written) of \(total) bytes",
                hint: "download again with resume to continue from byte \(written)", method: request.method.rawValue,
                url: head.url)
        }
        let digest = hashing ? hash.hexDigest() : nil
        if let expected = options.expectedSHA256, let digest, expected.lowercased() != digest {
            throw TrawlError(
                code: .invalidBody, message: "the file's SHA-256 is \(digest), not \(expected.lowercased())",
                hint: "the partial file is kept as \(partial); remove it to download again from scratch",
                method: request.method.rawValue, url: head.url)
        }
        try file.sync()
        try DurableFiles.move(partial, to: destination)
        try? FileManager.default.removeItem(atPath: validatorPath)
        return DownloadResult(
            path: destination, bytes: written, resumedFrom: start, restarted: hadPartial && start == 0, sha256: digest,
            head: head)
    }

    /// The request without transparent decoding: the file is the bytes as served, so lengths and ranges agree.
    private static func asServed(_ request: Request) -> Request {
        var request = request
        if !request.headers.contains("Accept-Encoding") { request.headers["Accept-Encoding"] = "identity" }
        return request
    }

    /// What `If-Range` will send on resume: a strong ETag, else the Last-Modified date, else nothing.
    private static func validator(of head: ResponseHead) -> String {
        head.headers["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? head.headers["Last-Modified"] ?? ""
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

/// `Content-Range: bytes FIRST-LAST/TOTAL` (or `bytes */TOTAL`).
struct ContentRange {
    var first: Int64
    var last: Int64?
    var total: Int64?

    init?(_ header: String?) {
        guard var text = header?.trimmingCharacters(in: .whitespaces), text.hasPrefix("bytes ") else { return nil }
        text.removeFirst(6)
        let parts = text.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        total = Int64(parts[1])
        if parts[0] == "*" {
            first = -1
            last = nil
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]) else { return nil }
        self.first = first
        self.last = last
    }
}

/// Turning a server-given file name into a safe path.
enum DownloadName {
    /// The name from `filename*=UTF-8''…` (RFC 6266/5987), else `filename="…"`, else the URL's last path
    /// component, reduced to a plain file name.
    static func fileName(contentDisposition: String?, url: String) -> String {
        var candidates: [String] = []
        if let header = contentDisposition {
            var plain: String?
            var extended: String?
            for parameter in parameters(header) {
                if parameter.name == "filename*" {
                    let value = parameter.value
                    if let quote = value.range(of: "''") {
                        extended = String(value[quote.upperBound...]).removingPercentEncoding
                    }
                } else if parameter.name == "filename" {
                    plain = parameter.value
                }
            }
            candidates += [extended, plain].compactMap { $0 }
        }
        if let path = URL(string: url)?.path, !path.isEmpty { candidates.append(path) }
        for candidate in candidates {
            if let name = sanitized(candidate) { return name }
        }
        return "download"
    }

    /// The last component after `/` or `\`, without control characters; `nil` when nothing usable is left.
    static func sanitized(_ raw: String) -> String? {
        let last = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let cleaned = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        guard !cleaned.isEmpty, cleaned != ".", cleaned != "..", cleaned.utf8.count <= 255 else { return nil }
        return cleaned
    }

    /// `directory/name`, refusing anything that would resolve outside `directory`.
    static func path(for name: String, in directory: String) throws -> String {
        let base = URL(fileURLWithPath: directory).standardizedFileURL.path
        let candidate = URL(fileURLWithPath: base).appendingPathComponent(name).standardizedFileURL.path
        guard candidate.hasPrefix(base.hasSuffix("/") ? base : base + "/"), !name.contains("/") else {
            throw FileError("write", candidate, reason: "the server's file name would leave \(base)")
        }
        return candidate
    }

    /// `name=value` parameters of a header like `attachment; filename="a b.txt"; filename*=UTF-8''a%20b.txt`.
    static func parameters(_ header: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var index = header.startIndex
        func skipSpaces() { while index < header.endIndex, header[index] == " " || header[index] == "\t" { index = header.index(after: index) } }
        // Skip the disposition type.
        while index < header.endIndex, header[index] != ";" { index = header.index(after: index) }
        while index < header.endIndex {
            index = header.index(after: index)  // past ';'
            skipSpaces()
            var name = ""
            while index < header.endIndex, header[index] != "=", header[index] != ";" {
                name.append(header[index])
                index = header.index(after: index)
            }
            guard index < header.endIndex, header[index] == "=" else { continue }
            index = header.index(after: index)
            skipSpaces()
            var value = ""
            if index < header.endIndex, header[index] == "\"" {
                index = header.index(after: index)
                while index < header.endIndex, header[index] != "\"" {
                    if header[index] == "\\", header.index(after: index) < header.endIndex {
                        index = header.index(after: index)
                    }
                    value.append(header[index])
                    index = header.index(after: index)
                }
                if index < header.endIndex { index = header.index(after: index) }
                while index < header.endIndex, header[index] != ";" { index = header.index(after: index) }
            } else {
                while index < header.endIndex, header[index] != ";" {
                    value.append(header[index])
                    index = header.index(after: index)
                }
            }
            result.append((name.trimmingCharacters(in: .whitespaces).lowercased(), value.trimmingCharacters(in: .whitespaces)))
        }
        return result
    }
}

