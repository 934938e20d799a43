/// One element of the collection an extractor streams out.
///
/// It holds its bytes by value (a slice of one block shared with the other elements completed in
/// the same `feed` call), so it can be kept, sent to another task, or dropped freely.
///
/// ```swift
/// try extractor.feed(chunk) { element in
///     output.append(contentsOf: element.json)     // compact JSON, ready for a JSONL line
///     output.append(UInt8(ascii: "\n"))
/// }
/// ```
public struct JSONElement: Sendable {
    /// The position of the element in the collection (0-based).
    public let index: Int
    /// Compact JSON, or events (see `EventTag`) when `isEvents`.
    let bytes: ArraySlice<UInt8>
    let isEvents: Bool

    init(index: Int, bytes: ArraySlice<UInt8>, isEvents: Bool) {
        self.index = index
        self.bytes = bytes
        self.isEvents = isEvents
    }

    /// The element as compact JSON: no insignificant whitespace, strings re-escaped minimally,
    /// numbers and duplicate keys exactly as in the document. Valid UTF-8.
    public var json: ArraySlice<UInt8> {
        guard isEvents else { return bytes }
        return bytes.withUnsafeBytes { events in
            var out = ByteBuffer()
            defer { out.release() }
            EventJSONWriter.write(events, to: &out)
            return ArraySlice(out.bytes(0..<out.count))
        }
    }

    /// Decodes the element as `T`, like `JSONDecoder` with the options of `decoder`.
    ///
    /// A failure here concerns this element only (e.g. a number too large for `Int`): the
    /// extraction goes on. Fastest with an extractor whose form is `.values`.
    ///
    /// ```swift
    /// struct Repo: Decodable { let id: Int; let fullName: String }
    /// var decoder = JSONItemDecoder()
    /// decoder.keyDecodingStrategy = .convertFromSnakeCase
    /// let repo = try element.decode(Repo.self, using: decoder)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONItemDecoder = .init()) throws -> T {
        if isEvents {
            return try bytes.withUnsafeBytes { try decoder.decode(type, events: $0) }
        }
        return try decoder.decode(type, from: Array(bytes))
    }

    /// The element as a dynamic value.
    public var value: JSONValue {
        if isEvents {
            return bytes.withUnsafeBytes { JSONValue(events: $0) }
        }
        return (try? JSONItemDecoder().decode(JSONValue.self, from: Array(bytes))) ?? .null
    }
}

/// Writes the event encoding back out as compact JSON.
enum EventJSONWriter {
    static func write(_ events: UnsafeRawBufferPointer, to out: inout ByteBuffer) {
        var reader = EventReader(events)
        writeValue(&reader, to: &out)
    }

    private static func writeValue(_ reader: inout EventReader, to out: inout ByteBuffer) {
        let start = reader.offset
        switch reader.tag(at: start) {
        case EventTag.null.rawValue: appendLiteral("null", to: &out)
        case EventTag.false.rawValue: appendLiteral("false", to: &out)
        case EventTag.true.rawValue: appendLiteral("true", to: &out)
        case EventTag.number.rawValue: out.append(reader.payload(at: start))
        case EventTag.string.rawValue:
            let text = reader.payload(at: start)
            JSONEscaping.appendQuoted(text.baseAddress ?? reader.base, text.count, to: &out)
        case EventTag.array.rawValue:
            let n = reader.count(at: start)
            reader.offset = start + EventTag.containerHeaderSize
            out.append(UInt8(ascii: "["))
            for i in 0..<n {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeValue(&reader, to: &out)
            }
            out.append(UInt8(ascii: "]"))
            return
        default:
            let n = reader.count(at: start)
            reader.offset = start + EventTag.containerHeaderSize
            out.append(UInt8(ascii: "{"))
            for i in 0..<n {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                let length = reader.uint32(at: reader.offset)
                JSONEscaping.appendQuoted(reader.base + reader.offset + 4, length, to: &out)
                out.append(UInt8(ascii: ":"))
                reader.offset += 4 + length
                writeValue(&reader, to: &out)
            }
            out.append(UInt8(ascii: "}"))
            return
        }
        reader.offset = reader.end(of: start)
    }

    private static func appendLiteral(_ literal: StaticString, to out: inout ByteBuffer) {
        out.append(literal.utf8Start, literal.utf8CodeUnitCount)
    }
}
