/// A JSON value for callers without a model type.
///
/// Numbers keep the text they had in the document, so 64-bit ids and huge values survive;
/// convert on demand. Objects are dictionaries: when a key repeats, the last value wins.
///
/// ```swift
/// let value: JSONValue = ["id": 9007199254740993, "tags": ["a", "b"], "next": nil]
/// value["id"]?.int64Value       // 9007199254740993
/// value["tags"]?[1]?.stringValue // "b"
/// value["next"]?.isNull          // true
/// String(decoding: value.json, as: UTF8.self)  // {"id":9007199254740993,"next":null,"tags":["a","b"]}
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as the text it had in the document (e.g. `"1e400"`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` when this is an array (negative counts from the end).
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self else { return nil }
        let position = index < 0 ? elements.count + index : index
        return elements.indices.contains(position) ? elements[position] : nil
    }

    public var isNull: Bool { self == .null }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as an `Int64`, when it is an integer in range (`1e2` counts; `1.5` does not).
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        return Array(text.utf8).withUnsafeBytes { NumberParsing.int64($0) }
    }

    /// The number as a `Double`, when it is finite.
    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Array(text.utf8).withUnsafeBytes { NumberParsing.double($0) }
    }

    /// Compact JSON text; object keys are written in sorted order.
    public var json: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .number(let text): out += text.utf8
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, to out: inout [UInt8]) {
        var buffer = ByteBuffer()
        defer { buffer.release() }
        var copy = text
        copy.withUTF8 { utf8 in
            if let base = utf8.baseAddress {
                JSONEscaping.appendQuoted(base, utf8.count, to: &buffer)
            } else {
                buffer.append(UInt8(ascii: "\""))
                buffer.append(UInt8(ascii: "\""))
            }
        }
        out.append(contentsOf: buffer.bytes(0..<buffer.count))
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(String(value)) }
    public init(floatLiteral value: Double) { self = .number(String(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// Builds the value recorded in `events` (one complete value in the event encoding).
    init(events: UnsafeRawBufferPointer) {
        var reader = EventReader(events)
        self = reader.readValue()
    }
}

/// Reads the compact event encoding written by `ParseState` (see `EventTag`).
struct EventReader {
    let base: UnsafeRawPointer
    let count: Int
    var offset = 0

    init(_ events: UnsafeRawBufferPointer) {
        base = events.baseAddress ?? UnsafeRawPointer(bitPattern: 1).unsafelyUnwrapped
        count = events.count
    }

    @inline(__always)
    func tag(at offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }

    @inline(__always)
    func uint32(at offset: Int) -> Int { Int(base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }

    /// The number of elements or keys of the container whose tag is at `offset`.
    @inline(__always)
    func count(at offset: Int) -> Int { uint32(at: offset + 5) & 0x7FFF_FFFF }

    /// Whether the object at `offset` may hold a key twice (set when the recorder saw two keys
    /// hash alike; a clear flag means every key is distinct).
    @inline(__always)
    func mayRepeatKeys(at offset: Int) -> Bool { uint32(at: offset + 5) & 0x8000_0000 != 0 }

    /// The bytes of a string or number payload whose tag is at `offset`.
    @inline(__always)
    func payload(at offset: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + offset + 5, count: uint32(at: offset + 1))
    }

    /// The offset just after the value whose tag is at `offset`.
    @inline(__always)
    func end(of offset: Int) -> Int {
        switch tag(at: offset) {
        case EventTag.number.rawValue, EventTag.string.rawValue: return offset + 5 + uint32(at: offset + 1)
        case EventTag.object.rawValue, EventTag.array.rawValue:
            return offset + EventTag.containerHeaderSize + uint32(at: offset + 1)
        default: return offset + 1
        }
    }

    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    mutating func readValue() -> JSONValue {
        let start = offset
        switch tag(at: start) {
        case EventTag.null.rawValue:
            offset += 1
            return .null
        case EventTag.false.rawValue:
            offset += 1
            return .bool(false)
        case EventTag.true.rawValue:
            offset += 1
            return .bool(true)
        case EventTag.number.rawValue:
            offset = end(of: start)
            return .number(Self.string(payload(at: start)))
        case EventTag.string.rawValue:
            offset = end(of: start)
            return .string(Self.string(payload(at: start)))
        case EventTag.array.rawValue:
            let n = count(at: start)
            offset = start + EventTag.containerHeaderSize
            var elements: [JSONValue] = []
            elements.reserveCapacity(n)
            for _ in 0..<n { elements.append(readValue()) }
            return .array(elements)
        default:
            let n = count(at: start)
            offset = start + EventTag.containerHeaderSize
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(n)
            for _ in 0..<n {
                let length = uint32(at: offset)
                let key = Self.string(UnsafeRawBufferPointer(start: base + offset + 4, count: length))
                offset += 4 + length
                members[key] = readValue()
            }
            return .object(members)
        }
    }
}
