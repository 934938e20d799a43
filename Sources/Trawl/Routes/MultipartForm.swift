import Foundation

/// A `multipart/form-data` body. Files are read from disk in chunks while the body is sent, never whole.
///
/// ```swift
/// var form = MultipartForm()
/// form.append(name: "title", value: "Report \"Q3\"")
/// form.appendFile(name: "attachment", path: "/tmp/report.pdf", contentType: "application/pdf")
/// var body: RouteBody { .multipart(form) }
/// ```
///
/// Names and file names are written as browsers write them: UTF-8, with `"`, CR and LF escaped as
/// `%22`, `%0D` and `%0A`.
public struct MultipartForm: Sendable {
    /// The boundary between parts; random unless set.
    public var boundary: String
    var parts: [Part] = []

    enum Content: Sendable {
        case bytes([UInt8])
        case file(String)
        case stream(ChunkSource, length: Int64?)
    }

    struct Part: Sendable {
        var name: String
        var header: [UInt8]
        var content: Content
        var contentType: String?
    }

    /// A part that cannot be sent as given: which, and why.
    ///
    /// ```swift
    /// form.append(name: "f", bytes: data, contentType: "text/plain\r\nX-Injected: 1")
    /// try form.requestBody()   // throws: part 'f': its content type contains CR, LF or another control character
    /// ```
    public struct InvalidPart: Error, CustomStringConvertible, Sendable {
        public var name: String
        public var reason: String
        public var description: String { "part '\(name)': \(reason)" }
    }

    public init(boundary: String = "trawl-" + UUID().uuidString.lowercased()) {
        self.boundary = boundary
    }

    /// Whether the form can be sent again (for a retry after a 401): `false` when a part streams from an async
    /// sequence, which can be read only once. Fields, bytes and files are read afresh each time.
    public var isReplayable: Bool {
        !parts.contains { part in
            if case .stream = part.content { return true }
            return false
        }
    }

    /// The `Content-Type` header value, with the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Appends a text field.
    public mutating func append(name: String, value: String) {
        let header = header(name: name, filename: nil, contentType: nil)
        parts.append(Part(name: name, header: header, content: .bytes(Array(value.utf8))))
    }

    /// Appends bytes, optionally as a file with a name and type.
    public mutating func append(name: String, bytes: [UInt8], filename: String? = nil, contentType: String? = nil) {
        let header = header(name: name, filename: filename, contentType: contentType)
        parts.append(Part(name: name, header: header, content: .bytes(bytes), contentType: contentType))
    }

    /// Appends a file streamed from `path`; the file name defaults to the last path component and the type is
    /// guessed from its extension when not given (`application/octet-stream` when unknown).
    public mutating func appendFile(
        name: String, path: String, filename: String? = nil, contentType: String? = nil
    ) {
        let shownName = filename ?? (path.split(separator: "/").last.map(String.init) ?? path)
        let type = contentType ?? MediaTypes.guess(forFileName: shownName)
        let header = header(name: name, filename: shownName, contentType: type)
        parts.append(Part(name: name, header: header, content: .file(path), contentType: type))
    }

    /// Appends a part whose content comes from an async sequence of chunks (read while the body is sent).
    /// Without `length` the whole body's length is unknown and it is sent chunked.
    ///
    /// ```swift
    /// form.append(name: "log", stream: lines.map { Array($0.utf8) }, length: nil, filename: "app.log")
    /// ```
    public mutating func append<S: AsyncSequence & Sendable>(
        name: String, stream: S, length: Int64?, filename: String? = nil, contentType: String? = nil
    ) where S.Element == [UInt8] {
        let type = contentType ?? filename.map { MediaTypes.guess(forFileName: $0) }
        let header = header(name: name, filename: filename, contentType: type)
        parts.append(
            Part(name: name, header: header, content: .stream(ChunkSource(stream), length: length), contentType: type))
    }

    /// Escapes a name or file name for a quoted `Content-Disposition` parameter.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private func header(name: String, filename: String?, contentType: String?) -> [UInt8] {
        var text = "Content-Disposition: form-data; name=\"\(Self.escape(name))\""
        if let filename { text += "; filename=\"\(Self.escape(filename))\"" }
        text += "\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The body as an engine stream with its exact length. Every file part is checked first, so a missing,
    /// unreadable or directory path fails here, before anything is sent.
    ///
    /// - Throws: `FileError` for a file part that is not a readable regular file; `InvalidPart` for a content
    ///   type with CR, LF or another control character (it would inject header lines into the part).
    public func requestBody() throws -> RequestBody {
        var length: Int64? = 0
        var pieces: [Content] = []
        for part in parts {
            let isControl = { (scalar: Unicode.Scalar) in scalar.value < 0x20 || scalar.value == 0x7f }
            if let type = part.contentType, type.unicodeScalars.contains(where: isControl) {
                throw InvalidPart(
                    name: part.name, reason: "its content type contains CR, LF or another control character")
            }
            if case .file(let path) = part.content { try Self.checkReadableFile(path) }
            let opening = Array("--\(boundary)\r\n".utf8) + part.header
            pieces.append(.bytes(opening))
            pieces.append(part.content)
            pieces.append(.bytes(Array("\r\n".utf8)))
            length = length.map { $0 + Int64(opening.count + 2) }
            switch part.content {
            case .bytes(let bytes): length = length.map { $0 + Int64(bytes.count) }
            case .file(let path):
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
                length = length.map { $0 + size }
            case .stream(_, let partLength):
                if let partLength { length = length.map { $0 + partLength } } else { length = nil }
            }
        }
        let closing = Array("--\(boundary)--\r\n".utf8)
        pieces.append(.bytes(closing))
        length = length.map { $0 + Int64(closing.count) }
        return .stream(MultipartStream(pieces: pieces), length: length, contentType: contentType)
    }

    private static func checkReadableFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FileError("read", path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw FileError("read", path, reason: "it is a directory, not a file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw FileError("read", path, reason: "permission denied")
        }
    }
}

/// The pieces of a multipart body as chunks, reading files as it goes.
struct MultipartStream: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    static let chunkSize = 64 * 1024
    let pieces: [MultipartForm.Content]

    func makeAsyncIterator() -> Iterator {
        Iterator(pieces: pieces)
    }

    struct Iterator: AsyncIteratorProtocol {
        var pieces: [MultipartForm.Content]
        var index = 0
        var file: FileHandle?
        var stream: ChunkSource.Iterator?

        mutating func next() async throws -> [UInt8]? {
            while true {
                if let source = stream {
                    if let chunk = try await source.next() {
                        if chunk.isEmpty { continue }
                        return chunk
                    }
                    stream = nil
                    index += 1
                    continue
                }
                if let handle = file {
                    if let data = try handle.read(upToCount: MultipartStream.chunkSize), !data.isEmpty {
                        return [UInt8](data)
                    }
                    try handle.close()
                    file = nil
                    index += 1
                    continue
                }
                guard index < pieces.count else { return nil }
                switch pieces[index] {
                case .bytes(let bytes):
                    index += 1
                    if !bytes.isEmpty { return bytes }
                case .file(let path):
                    guard let handle = FileHandle(forReadingAtPath: path) else {
                        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
                    }
                    file = handle
                case .stream(let source, _):
                    stream = source.makeIterator()
                }
            }
        }
    }
}

/// A type-erased async sequence of chunks, for streamed parts.
struct ChunkSource: Sendable {
    private let make: @Sendable () -> Iterator

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == [UInt8] {
        make = {
            var iterator = sequence.makeAsyncIterator()
            return Iterator { try await iterator.next() }
        }
    }

    func makeIterator() -> Iterator { make() }

    struct Iterator {
        let nextChunk: () async throws -> [UInt8]?
        func next() async throws -> [UInt8]? { try await nextChunk() }
    }
}

/// Media types for common file extensions, for multipart parts without an explicit type.
public enum MediaTypes {
    static let byExtension: [String: String] = [
        "txt": "text/plain", "log": "text/plain", "csv": "text/csv", "html": "text/html", "htm": "text/html", "css": "text/css",
        "md": "text/markdown", "xml": "application/xml", "json": "application/json", "jsonl": "application/jsonl",
        "ndjson": "application/x-ndjson", "js": "text/javascript", "pdf": "application/pdf",
        "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar", "zst": "application/zstd",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "heic": "image/heic", "mp3": "audio/mpeg", "wav": "audio/wav", "mp4": "video/mp4",
        "mov": "video/quicktime", "webm": "video/webm", "wasm": "application/wasm", "yaml": "application/yaml",
        "yml": "application/yaml", "parquet": "application/vnd.apache.parquet",
    ]

    /// The media type for a file name's extension (case-insensitive), else `application/octet-stream`.
    ///
    /// ```swift
    /// MediaTypes.guess(forFileName: "photo.JPG")   // "image/jpeg"
    /// ```
    public static func guess(forFileName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
