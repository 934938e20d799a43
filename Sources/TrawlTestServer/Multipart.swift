import NIOCore
import TrawlEngine

/// A streaming `multipart/form-data` parser (RFC 7578 / RFC 2046) for `POST /multipart`.
///
/// Body bytes are fed as they arrive. Part content is never kept: it is counted, hashed with
/// SHA-256, and its first 1 KiB kept for the `value` of small fields. Memory stays bounded by the
/// part headers (at most ``headerLimit``) and a carry-over shorter than the delimiter, so a 1 GB
/// upload costs no more than a small one.
///
/// ```swift
/// var parser = MultipartParser(contentType: "multipart/form-data; boundary=X")
/// parser.feed(ByteBuffer(string: "--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhi\r\n--X--\r\n"))
/// parser.finish()   // parser.parts[0].name == "a", parser.error == nil
/// ```
struct MultipartParser {
    /// The most bytes of part headers (for one part) the parser accepts.
    static let headerLimit = 16 * 1024
    /// The most parts the parser records.
    static let partLimit = 10_000
    /// Fields up to this size report their `value`.
    static let valueLimit = 1024

    /// What was received of one part.
    struct Part {
        var name: String?
        var filename: String?
        var contentType: String?
        var size = 0
        var hasher = SHA256()
        /// The first bytes of the content, up to ``valueLimit`` + 1.
        var prefix: [UInt8] = []
        var digest: [UInt8] = []

        /// `{"name": ..., "filename": ..., "content_type": ..., "size": ..., "sha256": ..., "value": ...}`.
        var json: String {
            var members: [(String, String)] = [
                ("name", self.name.map(JSONText.string) ?? "null"),
                ("filename", self.filename.map(JSONText.string) ?? "null"),
                ("content_type", self.contentType.map(JSONText.string) ?? "null"),
                ("size", String(self.size)),
                ("sha256", JSONText.string(Hex.string(self.digest))),
            ]
            if self.filename == nil, self.size <= MultipartParser.valueLimit {
                members.append(("value", JSONText.string(String(decoding: self.prefix, as: UTF8.self))))
            }
            return JSONText.object(members)
        }
    }

    private enum State {
        /// Before the first delimiter (a preamble is skipped).
        case preamble
        /// Right after a delimiter: `--` (closing), or optional whitespace and CRLF.
        case afterDelimiter
        /// Collecting one part's header lines.
        case headers
        /// Streaming one part's content.
        case content
        /// After the closing delimiter (an epilogue is ignored).
        case epilogue
        case failed
    }

    /// The boundary from the `Content-Type` header, if it named one.
    let boundary: String?
    /// Finished parts, in order.
    private(set) var parts: [Part] = []
    /// Why the body is not acceptable multipart, once known.
    private(set) var error: String?

    /// `CRLF--boundary`: every delimiter, the first included (the body is treated as if it began
    /// with a CRLF, so a delimiter on the very first line is found too).
    private let delimiter: [UInt8]
    private var state = State.preamble
    /// Bytes received but not consumed yet: a possible delimiter start, or incomplete headers.
    private var carry: [UInt8]
    private var current = Part()

    /// A parser for a request with this `Content-Type` (nil when the request had none).
    init(contentType: String?) {
        let boundary = contentType.flatMap(Self.boundary(inContentType:))
        self.boundary = boundary
        self.delimiter = Array(("\r\n--" + (boundary ?? "")).utf8)
        self.carry = [13, 10]
        guard let contentType else {
            self.fail("missing Content-Type: expected multipart/form-data with a boundary")
            return
        }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces().lowercased() }
        if mediaType != "multipart/form-data" {
            self.fail("Content-Type must be multipart/form-data, not \(contentType)")
        } else if boundary == nil {
            self.fail("missing boundary parameter in Content-Type")
        }
    }

    /// The `boundary` parameter of a `Content-Type` value, unquoted; `nil` when absent, empty or
    /// longer than the 70 characters RFC 2046 allows.
    static func boundary(inContentType value: String) -> String? {
        let parameters = HeaderParameters.parse(value)
        guard let boundary = parameters.first(where: { $0.name == "boundary" })?.value,
            !boundary.isEmpty, boundary.utf8.count <= 70
        else { return nil }
        return boundary
    }

    /// Consumes the next piece of the body.
    mutating func feed(_ buffer: ByteBuffer) {
        guard self.state != .failed, self.state != .epilogue else { return }
        var data = self.carry
        data.append(contentsOf: buffer.readableBytesView)
        self.carry = []
        let consumed = data.withUnsafeBytes { self.process($0) }
        if consumed < data.count {
            self.carry = Array(data[consumed...])
        }
    }

    /// The body is complete: checks that the closing delimiter was seen.
    mutating func finish() {
        switch self.state {
        case .epilogue, .failed:
            return
        case .preamble:
            self.fail("no multipart delimiter found (--\(self.boundary ?? ""))")
        case .afterDelimiter, .headers:
            self.fail("body ended inside part headers (part \(self.parts.count + 1)): truncated")
        case .content:
            self.fail("body ended inside part \(self.parts.count + 1) without a closing delimiter: truncated")
        }
    }

    private mutating func fail(_ message: String) {
        if self.error == nil {
            self.error = message
        }
        self.state = .failed
        self.carry = []
    }

    /// Runs the state machine over `bytes`; returns how many were consumed (the rest is carried).
    private mutating func process(_ bytes: UnsafeRawBufferPointer) -> Int {
        var index = 0
        while index < bytes.count {
            switch self.state {
            case .preamble, .content:
                let (found, safeEnd) = self.findDelimiter(in: bytes, from: index)
                if self.state == .content, safeEnd > index {
                    self.receiveContent(UnsafeRawBufferPointer(rebasing: bytes[index..<safeEnd]))
                }
                guard let found else { return safeEnd }
                if self.state == .content {
                    self.endPart()
                    if self.state == .failed { return bytes.count }
                }
                index = found + self.delimiter.count
                self.state = .afterDelimiter
            case .afterDelimiter:
                // `--` closes; else transport padding (spaces, tabs) up to the CRLF.
                guard bytes.count - index >= 2 else { return index }
                if bytes[index] == UInt8(ascii: "-"), bytes[index + 1] == UInt8(ascii: "-") {
                    self.state = .epilogue
                    return bytes.count
                }
                var cursor = index
                while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") || bytes[cursor] == UInt8(ascii: "\t") {
                    cursor += 1
                }
                guard bytes.count - cursor >= 2 else {
                    if cursor - index > 256 { self.fail("malformed delimiter line: too much padding") }
                    return index
                }
                guard bytes[cursor] == 13, bytes[cursor + 1] == 10 else {
                    self.fail("malformed delimiter line: expected CRLF after --\(self.boundary ?? "")")
                    return bytes.count
                }
                // Keep the CRLF: the header block then ends at the first CRLF CRLF, even when empty.
                index = cursor
                self.state = .headers
                self.current = Part()
            case .headers:
                guard let end = Self.find([13, 10, 13, 10], in: bytes, from: index) else {
                    if bytes.count - index > Self.headerLimit {
                        self.fail("part headers longer than \(Self.headerLimit) bytes")
                        return bytes.count
                    }
                    return index
                }
                let block = String(
                    decoding: UnsafeRawBufferPointer(rebasing: bytes[(index + 2)..<(end + 2)]),
                    as: UTF8.self
                )
                guard self.parseHeaders(block) else { return bytes.count }
                index = end + 4
                self.state = .content
            case .epilogue, .failed:
                return bytes.count
            }
        }
        return index
    }

    /// The start of the first complete delimiter at or after `start`, and the end of the bytes that
    /// can no longer be part of a delimiter (a possible partial delimiter at the end is held back).
    private func findDelimiter(in bytes: UnsafeRawBufferPointer, from start: Int) -> (Int?, Int) {
        let delimiter = self.delimiter
        return delimiter.withUnsafeBytes { pattern in
            var cursor = start
            while cursor < bytes.count {
                // Find the next CR quickly, then compare the rest.
                guard let base = bytes.baseAddress,
                    let hit = firstIndex(of: 13, in: base + cursor, count: bytes.count - cursor).map({ $0 + cursor })
                else { return (nil, bytes.count) }
                let available = min(pattern.count, bytes.count - hit)
                if (0..<available).allSatisfy({ bytes[hit + $0] == pattern[$0] }) {
                    if available == pattern.count { return (hit, hit) }
                    return (nil, hit)
                }
                cursor = hit + 1
            }
            return (nil, bytes.count)
        }
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard bytes.count - start >= needle.count else { return nil }
        for position in start...(bytes.count - needle.count) {
            var matches = true
            for offset in 0..<needle.count where bytes[position + offset] != needle[offset] {
                matches = false
                break
            }
            if matches { return position }
        }
        return nil
    }

    private mutating func receiveContent(_ bytes: UnsafeRawBufferPointer) {
        self.current.size += bytes.count
        self.current.hasher.update(bytes)
        let room = Self.valueLimit + 1 - self.current.prefix.count
        if room > 0 {
            self.current.prefix.append(contentsOf: bytes.prefix(room))
        }
    }

    private mutating func endPart() {
        guard self.parts.count < Self.partLimit else {
            self.fail("more than \(Self.partLimit) parts")
            return
        }
        self.current.digest = self.current.hasher.digest()
        self.current.hasher = SHA256()
        if self.current.filename != nil || self.current.size > Self.valueLimit {
            self.current.prefix = []
        }
        self.parts.append(self.current)
        self.current = Part()
    }

    /// Reads `Content-Disposition` and `Content-Type` from a header block (lines ending in CRLF).
    private mutating func parseHeaders(_ block: String) -> Bool {
        var disposition: String?
        for line in block.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else {
                self.fail("malformed part header line (no colon): \(line.prefix(100))")
                return false
            }
            let name = line[..<colon].trimmingSpaces().lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            switch name {
            case "content-disposition": disposition = value
            case "content-type": self.current.contentType = value
            default: break
            }
        }
        guard let disposition else {
            self.fail("part \(self.parts.count + 1) has no Content-Disposition header")
            return false
        }
        let parsed = ContentDisposition(disposition)
        guard parsed.type.lowercased() == "form-data" else {
            self.fail("part \(self.parts.count + 1): Content-Disposition must be form-data, not \(parsed.type)")
            return false
        }
        self.current.name = parsed.name
        self.current.filename = parsed.filename
        return true
    }
}

/// The index of the first `byte` in the `count` bytes at `start`.
private func firstIndex(of byte: UInt8, in start: UnsafeRawPointer, count: Int) -> Int? {
    var index = 0
    let bytes = start.assumingMemoryBound(to: UInt8.self)
    while index < count {
        if bytes[index] == byte { return index }
        index += 1
    }
    return nil
}

/// The parameters of a header value like `form-data; name="a"; filename*=UTF-8''%C3%A9.txt`.
enum HeaderParameters {
    /// The value before the first `;` and the `name=value` pairs after it (names lowercased, quoted
    /// strings unquoted with `\"` and `\\` unescaped), in order.
    ///
    /// ```swift
    /// HeaderParameters.parse(#"form-data; name="a \"b\"""#)   // [("name", #"a "b""#)]
    /// ```
    static func parse(_ value: String) -> [(name: String, value: String)] {
        parseWithType(value).parameters
    }

    static func parseWithType(_ value: String) -> (type: String, parameters: [(name: String, value: String)]) {
        let scalars = Array(value.unicodeScalars)
        var index = 0
        var type = ""
        while index < scalars.count, scalars[index] != ";" {
            type.unicodeScalars.append(scalars[index])
            index += 1
        }
        var parameters: [(name: String, value: String)] = []
        while index < scalars.count {
            index += 1  // the ';'
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
            var name = ""
            while index < scalars.count, scalars[index] != "=", scalars[index] != ";" {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count, scalars[index] == "=" else { continue }
            index += 1
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
            var parameterValue = ""
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < scalars.count {
                        index += 1
                    }
                    parameterValue.unicodeScalars.append(scalars[index])
                    index += 1
                }
                index += 1  // the closing quote
                while index < scalars.count, scalars[index] != ";" { index += 1 }
            } else {
                while index < scalars.count, scalars[index] != ";" {
                    parameterValue.unicodeScalars.append(scalars[index])
                    index += 1
                }
                parameterValue = parameterValue.trimmingSpaces()
            }
            parameters.append((name.trimmingSpaces().lowercased(), parameterValue))
        }
        return (type.trimmingSpaces(), parameters)
    }
}

/// A decoded `Content-Disposition` of a form-data part.
///
/// Browsers send names and filenames as raw UTF-8 in quoted strings, with `"`, CR and LF
/// percent-encoded (`%22`, `%0D`, `%0A`, per the HTML standard); other clients backslash-escape
/// quotes. `filename*` / `name*` (RFC 5987 / 8187 `charset'lang'pct-encoded`) win when present.
///
/// ```swift
/// let cd = ContentDisposition(#"form-data; name="f"; filename*=UTF-8''%C3%A9t%C3%A9.txt"#)
/// // cd.filename == "été.txt"
/// ```
struct ContentDisposition {
    var type: String
    var name: String?
    var filename: String?

    init(_ value: String) {
        let (type, parameters) = HeaderParameters.parseWithType(value)
        self.type = type
        func plain(_ key: String) -> String? {
            parameters.first { $0.name == key }.map { Self.decodeBrowserEscapes($0.value) }
        }
        func extended(_ key: String) -> String? {
            parameters.first { $0.name == key + "*" }.flatMap { Self.decodeExtendedValue($0.value) }
        }
        self.name = extended("name") ?? plain("name")
        self.filename = extended("filename") ?? plain("filename")
    }

    /// Undoes the HTML standard's form-data escapes: `%22` -> `"`, `%0D` -> CR, `%0A` -> LF (any
    /// other `%` is literal: browsers do not escape `%` itself).
    static func decodeBrowserEscapes(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var out = ""
        var rest = Substring(text)
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            let code = rest[percent...].dropFirst().prefix(2).uppercased()
            switch code {
            case "22": out += "\""
            case "0D": out += "\r"
            case "0A": out += "\n"
            default:
                out += "%"
                rest = rest[rest.index(after: percent)...]
                continue
            }
            rest = rest[rest.index(percent, offsetBy: 3)...]
        }
        return out + rest
    }

    /// Decodes an RFC 8187 ext-value `charset'language'percent-encoded` (UTF-8 or ISO-8859-1);
    /// `nil` when malformed or in another charset.
    static func decodeExtendedValue(_ text: String) -> String? {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        var bytes: [UInt8] = []
        let encoded = Array(pieces[2].utf8)
        var index = 0
        while index < encoded.count {
            if encoded[index] == UInt8(ascii: "%") {
                guard index + 2 < encoded.count,
                    let byte = UInt8(String(decoding: encoded[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(byte)
                index += 3
            } else {
                bytes.append(encoded[index])
                index += 1
            }
        }
        switch charset {
        case "utf-8":
            return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }
}

/// Lowercase hex of bytes.
public enum Hex {
    public static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }
}
