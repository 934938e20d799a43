/// A type that reads itself from a JSON object's fields directly: Trawl's fastest typed path.
///
/// Conform a `Decodable` type and write its initializer with the document's keys: every way Trawl decodes
/// (`JSONElement.decode`, `JSONItemDecoder`, the items of a route or a request, nested values of other types)
/// then takes it instead of `init(from:)`, which stays the fallback for other decoders.
///
/// ```swift
/// struct Repo: Decodable, JSONFieldsDecodable {
///     let id: Int
///     let fullName: String
///     let topics: [String]
///     let owner: Owner            // also JSONFieldsDecodable, or any Decodable
///     let pushedAt: Date?         // Decodable values follow the decoder's date, data and key strategies
///
///     init(fields: inout JSONFields) throws {
///         id = try fields.decode("id")
///         fullName = try fields.decode("full_name")
///         topics = try fields.decode("topics")
///         owner = try fields.decode("owner")
///         pushedAt = try fields.decodeIfPresent("pushed_at")
///     }
/// }
/// ```
///
/// Keys are the document's keys as written (no key decoding strategy applies to them). Values, errors and
/// coding paths are those of the `Decodable` path with the same keys: a missing key throws
/// `DecodingError.keyNotFound`, a null where a value is required `valueNotFound`, a value of the wrong kind
/// `typeMismatch`, and a repeated key's last value wins.
public protocol JSONFieldsDecodable: Decodable {
    /// Reads the value from the fields of one JSON object.
    init(fields: inout JSONFields) throws
}

/// The fields of one JSON object, read by key while a ``JSONFieldsDecodable`` value initializes itself.
///
/// It is valid only inside that initializer (it cannot be copied out). Looking keys up in the order the
/// document has them is fastest, but any order works.
public struct JSONFields: ~Copyable {
    let reader: EventReader
    unowned(unsafe) let decoder: EventDecoder
    /// The object's offset in the events and its entry count.
    let start: Int
    let count: Int
    let mayRepeatKeys: Bool
    /// Where the next lookup starts: the entry after the last match, and its index.
    var hintPosition: Int
    var hintIndex = 0
    /// The coding path, kept in parts so that a nested object costs no path node until an error or a
    /// nested object of its own needs it: the path of the parent, then this object's key and its index in an
    /// array, when it has them.
    let parentPath: CodingPath
    let key: StaticString?
    let index: Int?

    init(decoder: EventDecoder, start: Int, parentPath: CodingPath, key: StaticString? = nil, index: Int? = nil) {
        let reader = decoder.reader
        self.reader = reader
        self.decoder = decoder
        self.start = start
        count = reader.count(at: start)
        mayRepeatKeys = reader.mayRepeatKeys(at: start)
        hintPosition = start + EventTag.containerHeaderSize
        self.parentPath = parentPath
        self.key = key
        self.index = index
    }

    /// The coding path of this object, as `Decoder.codingPath` gives it.
    public var codingPath: [any CodingKey] { path.keys }

    /// Whether the object has `key` (with any value, null included).
    public mutating func contains(_ key: StaticString) -> Bool { find(key) != nil }

    /// Whether the decoder converts the document's keys before matching them (a `keyDecodingStrategy` other than
    /// `.useDefaultKeys`). The keys given to `decode` are matched as written, so an initializer whose keys
    /// stand for `Decodable`'s coding keys (as `@JSONFieldsDecodable`'s do) reads the object through
    /// ``decodeThroughDecodable(_:)`` when this is true.
    public var convertsKeys: Bool { decoder.keyMode != .asIs }

    /// This object read through `T.init(from:)`, the `Decodable` path, with the decoder's options: what the
    /// decoder would return for `T` if it were not `JSONFieldsDecodable`.
    public func decodeThroughDecodable<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let decoder = decoder
        return try decoder.descend(start, path) { try T(from: decoder) }
    }

    var path: CodingPath {
        var path = parentPath
        if let key { path = .key(AnyCodingKey(stringValue: key.description), path) }
        if let index { path = .index(index, path) }
        return path
    }

    func path(_ key: StaticString) -> CodingPath { .key(AnyCodingKey(stringValue: key.description), path) }

    // MARK: - Lookup

    /// The offset of the value for `key`, if present (the last one if the key repeats).
    @inline(__always)
    mutating func find(_ key: StaticString) -> Int? {
        if key.hasPointerRepresentation {
            return find(UnsafeRawPointer(key.utf8Start), key.utf8CodeUnitCount)
        }
        return key.withUTF8Buffer { find(UnsafeRawPointer($0.baseAddress ?? key.utf8Start), $0.count) }
    }

    @inline(__always)
    private mutating func find(_ wanted: UnsafeRawPointer, _ length: Int) -> Int? {
        let base = reader.base
        guard !mayRepeatKeys else {
            var found: Int?
            var position = start + EventTag.containerHeaderSize
            for _ in 0..<count {
                let keyLength = reader.uint32(at: position)
                let value = position + 4 + keyLength
                if keyLength == length && memoryEqual(base + position + 4, wanted, length) { found = value }
                position = reader.end(of: value)
            }
            return found
        }
        // Distinct keys: the first match is the only one, and it is usually the entry after the previous match.
        var position = hintPosition
        var index = hintIndex
        for _ in 0..<count {
            if index == count {
                position = start + EventTag.containerHeaderSize
                index = 0
            }
            let keyLength = reader.uint32(at: position)
            let value = position + 4 + keyLength
            let next = reader.end(of: value)
            if keyLength == length && memoryEqual(base + position + 4, wanted, length) {
                hintPosition = next
                hintIndex = index + 1
                return value
            }
            position = next
            index += 1
        }
        return nil
    }

    /// The value's offset, or `keyNotFound` as the `Decodable` path throws it.
    @inline(__always)
    mutating func value(_ key: StaticString) throws -> Int {
        if let offset = find(key) { return offset }
        throw keyNotFound(key)
    }

    /// The value's offset when it is present and not null.
    @inline(__always)
    mutating func present(_ key: StaticString) -> Int? {
        guard let offset = find(key), reader.tag(at: offset) != EventTag.null.rawValue else { return nil }
        return offset
    }

    func keyNotFound(_ key: StaticString) -> DecodingError {
        let codingKey = AnyCodingKey(stringValue: key.description)
        return DecodingError.keyNotFound(codingKey, .init(
            codingPath: path.keys,
            debugDescription: "No value associated with key \(codingKey) (\"\(codingKey.stringValue)\")."))
    }

    func failure(_ type: Any.Type, _ key: StaticString, at offset: Int) -> DecodingError {
        decoder.failure(type, at: offset, path: path(key))
    }
}
