#if canImport(Glibc)
import Glibc
#endif

/// Response header fields as the bytes libcurl delivered, with the ranges of each name and value.
/// Filled by one transfer on the loop thread, then only read (shared by the `HTTPHeaders` values).
final class ReceivedHeaders: @unchecked Sendable {
    private let bytes: [UInt8]
    private let fields: [HeaderLines.Field]

    init(_ lines: HeaderLines) {
        bytes = lines.bytes
        fields = lines.fields
    }

    var count: Int { fields.count }

    func name(at index: Int) -> String { string(fields[index].nameStart, fields[index].nameEnd) }
    func value(at index: Int) -> String { string(fields[index].valueStart, fields[index].valueEnd) }

    func firstIndex(of name: String) -> Int? {
        fields.indices.first { matches(name, $0) }
    }

    func firstIndex(of name: String, after index: Int) -> Int? {
        fields.indices[(index + 1)...].first { matches(name, $0) }
    }

    func indices(of name: String) -> [Int] {
        fields.indices.filter { matches(name, $0) }
    }

    private func matches(_ name: String, _ index: Int) -> Bool {
        let field = fields[index]
        guard name.utf8.count == Int(field.nameEnd - field.nameStart) else { return false }
        var position = Int(field.nameStart)
        for byte in name.utf8 {
            let stored = bytes[position]
            if stored != byte, stored | 0x20 != byte | 0x20 || !((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) {
                return false
            }
            position += 1
        }
        return true
    }

    private func string(_ start: Int32, _ end: Int32) -> String {
        bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[Int(start)..<Int(end)]), as: UTF8.self)
        }
    }
}

/// The header lines of the response head being received, filled on the loop thread one line at a time
/// and frozen into `ReceivedHeaders` when read. A value type, so that filling it costs one exclusive
/// access per line; it also notes `Content-Length` and `Location` as they pass.
struct HeaderLines {
    struct Field {
        var nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32
    }

    fileprivate(set) var bytes: [UInt8] = []
    fileprivate(set) var fields: [Field] = []
    /// The first `Content-Length` value, when it is a plain decimal number.
    private(set) var contentLength: Int?
    private(set) var hasLocation = false
    /// A `Location` field was sent with nothing in it.
    private(set) var hasEmptyLocation = false
    /// Why the `Content-Length` cannot be trusted: not a plain decimal (`5abc`, `+5`, `-5`), past 63 bits, or
    /// two fields that disagree. libcurl reads `5abc` as 5 and a number past 63 bits as "until the close", so the
    /// body would end short or long without an error.
    private(set) var contentLengthProblem: String?
    /// The `Content-Encoding` value, when the head has one.
    private(set) var contentEncoding: String?

    var count: Int { fields.count }

    /// Adds a field from a header line without its CR LF: the name before the first colon, the value after,
    /// both trimmed. A line with no colon is ignored.
    mutating func append(_ line: UnsafeRawBufferPointer) {
        guard let base = line.baseAddress, let colonAt = memchr(base, 58, line.count) else { return }
        let colon = base.distance(to: UnsafeRawPointer(colonAt))
        let name = Self.trimmed(line, 0, colon)
        let value = Self.trimmed(line, colon + 1, line.count)
        if bytes.isEmpty {
            bytes.reserveCapacity(512)
            fields.reserveCapacity(12)
        }
        let offset = Int32(bytes.count)
        bytes.append(contentsOf: line)
        fields.append(Field(
            nameStart: offset + Int32(name.lowerBound), nameEnd: offset + Int32(name.upperBound),
            valueStart: offset + Int32(value.lowerBound), valueEnd: offset + Int32(value.upperBound)))
        if name.count == 14, Self.equalsLowercase(line, name, "content-length") {
            let parsed = Self.decimal(line, value)
            if parsed == nil {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[value]).prefix(40), as: UTF8.self)
                contentLengthProblem = "the Content-Length '\(text)' is not a plain decimal number of 63 bits"
            } else if let earlier = contentLength, earlier != parsed {
                contentLengthProblem = "two Content-Length fields disagree (\(earlier) and \(parsed ?? 0))"
            }
            if contentLength == nil { contentLength = parsed }
        } else if name.count == 16, Self.equalsLowercase(line, name, "content-encoding") {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[value]), as: UTF8.self)
            contentEncoding = contentEncoding.map { "\($0), \(text)" } ?? text
        } else if name.count == 8, Self.equalsLowercase(line, name, "location") {
            if value.isEmpty { hasEmptyLocation = true } else { hasLocation = true }
        }
    }

    /// An obs-fold continuation line: appended to the last value after one space.
    mutating func appendContinuation(_ line: UnsafeRawBufferPointer) {
        guard var last = fields.popLast() else { return }
        let value = Array(bytes[Int(last.valueStart)..<Int(last.valueEnd)])
        let start = bytes.count
        bytes.append(contentsOf: value)
        bytes.append(32)
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[Self.trimmed(line, 0, line.count)]))
        last.valueStart = Int32(start)
        last.valueEnd = Int32(bytes.count)
        fields.append(last)
    }

    private static func trimmed(_ line: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Range<Int> {
        var start = start, end = end
        while start < end, line[start] == 32 || line[start] == 9 { start += 1 }
        while end > start, line[end - 1] == 32 || line[end - 1] == 9 { end -= 1 }
        return start..<end
    }

    /// ASCII case-insensitive comparison with a lowercase name of the same length.
    private static func equalsLowercase(_ line: UnsafeRawBufferPointer, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in 0..<expected.count {
            var byte = line[range.lowerBound + index]
            if byte >= 0x41, byte <= 0x5A { byte |= 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }

    /// 1*DIGIT that fits 63 bits, else `nil`.
    private static func decimal(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 19 else { return nil }
        var value = 0
        for index in range {
            let byte = line[index]
            guard byte >= 48, byte <= 57 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}
