/// The unkeyed container over one recorded array, read front to back.
struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: EventDecoder
    let path: CodingPath
    let count: Int?
    private(set) var currentIndex = 0
    private var position: Int

    init(decoder: EventDecoder, start: Int, path: CodingPath) {
        self.decoder = decoder
        self.path = path
        self.count = decoder.reader.count(at: start)
        self.position = start + EventTag.containerHeaderSize
    }

    var codingPath: [any CodingKey] { path.keys }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    private var elementPath: CodingPath { .index(currentIndex, path) }

    /// The offset of the next element, which the caller then consumes with `advance`.
    @inline(__always)
    private func next(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(
                codingPath: path.keys + [AnyCodingKey(intValue: currentIndex)],
                debugDescription: "Unkeyed container is at end."))
        }
        return position
    }

    @inline(__always)
    private mutating func advance(past offset: Int) {
        position = decoder.reader.end(of: offset)
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        let offset = try next(Never.self)
        guard decoder.reader.tag(at: offset) == EventTag.null.rawValue else { return false }
        advance(past: offset)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let offset = try next(type)
        let value = try decoder.bool(at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let offset = try next(type)
        let value = try decoder.string(at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let offset = try next(type)
        let value = try decoder.double(at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let offset = try next(type)
        let value = try decoder.float(at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        let offset = try next(T.self)
        let value: T = try decoder.integer(at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let offset = try next(type)
        let value = try decoder.unwrap(type, at: offset, path: elementPath)
        advance(past: offset)
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let offset = try next(KeyedDecodingContainer<NestedKey>.self)
        guard decoder.reader.tag(at: offset) == EventTag.object.rawValue else {
            throw decoder.mismatch([String: Any].self, at: offset, path: elementPath)
        }
        let container = decoder.keyedContainer(NestedKey.self, start: offset, path: elementPath)
        advance(past: offset)
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let offset = try next((any UnkeyedDecodingContainer).self)
        guard decoder.reader.tag(at: offset) == EventTag.array.rawValue else {
            throw decoder.mismatch([Any].self, at: offset, path: elementPath)
        }
        let container = UnkeyedContainer(decoder: decoder, start: offset, path: elementPath)
        advance(past: offset)
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let offset = try next((any Decoder).self)
        let nested = EventDecoder(
            base: decoder.reader.base, offset: offset, path: elementPath, options: decoder.options)
        advance(past: offset)
        return nested
    }
}

/// Finds the coding key type `Dictionary` uses for its keys, by asking it to decode from a
/// decoder that records the type and stops, so that containers for `[String: Value]` can be
/// recognised with one comparison.
enum DictionaryKeyProbe {
    static let keyType: ObjectIdentifier? = {
        let probe = Probe()
        _ = try? [String: Int](from: probe)
        return probe.keyType
    }()

    private final class Probe: Decoder {
        var keyType: ObjectIdentifier?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        struct Stop: Error {}

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            keyType = ObjectIdentifier(type)
            throw Stop()
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Stop() }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Stop() }
    }
}
