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
    }

    struct Part: Sendable {
        var header: [UInt8]
        var content: Content
    }

    public init(boundary: String = "trawl-" + UUID().uuidString.lowercased()) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value, with the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Appends a text field.
    public mutating func append(name: String, value: String) {
        let header = header(name: name, filename: nil, contentType: nil)
        parts.append(Part(header: header, content: .bytes(Array(value.utf8))))
    }

    /// Appends bytes, optionally as a file with a name and type.
    public mutating func append(name: String, bytes: [UInt8], filename: String? = nil, contentType: String? = nil) {
        let header = header(name: name, filename: filename, contentType: contentType)
        parts.append(Part(header: header, content: .bytes(bytes)))
    }

    /// Appends a file streamed from `path`; the file name defaults to the last path component.
    public mutating func appendFile(
        name: String, path: String, filename: String? = nil, contentType: String = "application/octet-stream"
    ) {
        let shownName = filename ?? (path.split(separator: "/").last.map(String.init) ?? path)
        let header = header(name: name, filename: shownName, contentType: contentType)
        parts.append(Part(header: header, content: .file(path)))
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

    /// The body as an engine stream with its exact length.
    ///
    /// - Throws: `CocoaError` when a file cannot be inspected.
    public func requestBody() throws -> RequestBody {
        var length: Int64 = 0
        var pieces: [Content] = []
        for part in parts {
            let opening = Array("--\(boundary)\r\n".utf8) + part.header
            pieces.append(.bytes(opening))
            pieces.append(part.content)
            pieces.append(.bytes(Array("\r\n".utf8)))
            length += Int64(opening.count + 2)
            switch part.content {
            case .bytes(let bytes): length += Int64(bytes.count)
            case .file(let path):
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                length += (attributes[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        let closing = Array("--\(boundary)--\r\n".utf8)
        pieces.append(.bytes(closing))
        length += Int64(closing.count)
        return .stream(MultipartStream(pieces: pieces), length: length, contentType: contentType)
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

        mutating func next() async throws -> [UInt8]? {
            while true {
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
                }
            }
        }
    }
}
