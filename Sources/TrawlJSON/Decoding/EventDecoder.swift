#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` over one recorded value. One instance serves a whole element: descending into a
/// nested value moves `offset` and `path` and restores them afterwards, as `JSONDecoder` does.
final class EventDecoder: Decoder, SingleValueDecodingContainer {
    let reader: EventReader
    var offset: Int
    var path: CodingPath
    let options: JSONItemDecoder
    /// Copied out of `options` so that key lookups do not touch the whole struct.
    let keyMode: KeyMode

    enum KeyMode { case asIs, snakeCase, custom }

    /// Where the last key lookup ended, so that the next one, usually for the following key,
    /// starts there: the object, the entry after the match, and its index.
    var hintObject = -1
    var hintPosition = 0
    var hintIndex = 0
    /// The coding paths and key indexes of the keyed containers made so far (see ``KeyedContainer``), by slot.
    /// The first four live in the decoder itself: a decoder is made per item, and an array here cost a malloc
    /// per item even for a flat one. Items with more keyed containers than that spill into `moreKeyedStates`.
    private var keyedState0 = KeyedState.unused
    private var keyedState1 = KeyedState.unused
    private var keyedState2 = KeyedState.unused
    private var keyedState3 = KeyedState.unused
    private var moreKeyedStates: [KeyedState] = []
    private var keyedStateCount = 0

    init(base: UnsafeRawPointer, offset: Int, path: CodingPath, options: JSONItemDecoder) {
        self.reader = EventReader(UnsafeRawBufferPointer(start: base, count: Int.max / 2))
        self.offset = offset
        self.path = path
        self.options = options
        switch options.keyDecodingStrategy {
        case .useDefaultKeys: keyMode = .asIs
        case .convertFromSnakeCase: keyMode = .snakeCase
        default: keyMode = .custom
        }
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard reader.tag(at: offset) == EventTag.object.rawValue else {
            throw mismatch([String: Any].self, at: offset, path: path)
        }
        // `[String: Value]` keeps its keys as they are whatever the key strategy, as in `JSONDecoder`.
        let keepKeys = keyMode != .asIs && ObjectIdentifier(Key.self) == DictionaryKeyProbe.keyType
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, start: offset, path: path, keepKeys: keepKeys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard reader.tag(at: offset) == EventTag.array.rawValue else {
            throw mismatch([Any].self, at: offset, path: path)
        }
        return UnkeyedContainer(decoder: self, start: offset, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Records a keyed container's state and returns its slot.
    func addKeyedState(_ state: KeyedState) -> Int {
        let slot = keyedStateCount
        switch slot {
        case 0: keyedState0 = state
        case 1: keyedState1 = state
        case 2: keyedState2 = state
        case 3: keyedState3 = state
        default:
            // An item with a few more nested objects would otherwise grow the array twice.
            if moreKeyedStates.capacity == 0 { moreKeyedStates.reserveCapacity(4) }
            moreKeyedStates.append(state)
        }
        keyedStateCount = slot + 1
        return slot
    }

    /// The coding path of the keyed container in `slot`.
    @inline(__always)
    func keyedPath(_ slot: Int) -> CodingPath {
        switch slot {
        case 0: keyedState0.path
        case 1: keyedState1.path
        case 2: keyedState2.path
        case 3: keyedState3.path
        default: moreKeyedStates[slot - 4].path
        }
    }

    /// The key index of the keyed container in `slot`, if it has one.
    @inline(__always)
    func keyedLookup(_ slot: Int) -> KeyLookup? {
        switch slot {
        case 0: keyedState0.lookup
        case 1: keyedState1.lookup
        case 2: keyedState2.lookup
        case 3: keyedState3.lookup
        default: moreKeyedStates[slot - 4].lookup
        }
    }

    // MARK: - Nested values

    /// Decodes the value at `offset` as `T`, with the types `JSONDecoder` treats specially.
    func unwrap<T: Decodable>(_ type: T.Type, at offset: Int, path: CodingPath) throws -> T {
        if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
            || T.self == JSONValue.self
        {
            return try unwrapSpecial(type, at: offset, path: path)
        }
        if T.self == [String].self {
            return try cast(strings(at: offset, path: path), path: path)
        }
        return try descend(offset, path) { try T(from: self) }
    }

    private func unwrapSpecial<T: Decodable>(_ type: T.Type, at offset: Int, path: CodingPath) throws -> T {
        if T.self == Date.self { return try cast(date(at: offset, path: path), path: path) }
        if T.self == Data.self { return try cast(data(at: offset, path: path), path: path) }
        if T.self == URL.self {
            let text = try string(at: offset, path: path)
            guard let url = URL(string: text) else { throw corrupted("Invalid URL string.", path: path) }
            return try cast(url, path: path)
        }
        if T.self == Decimal.self {
            guard reader.tag(at: offset) == EventTag.number.rawValue else {
                throw mismatch(Decimal.self, at: offset, path: path)
            }
            let text = EventReader.string(reader.payload(at: offset))
            guard let decimal = Decimal(string: text) else {
                throw corrupted("Number \(text) is not representable as Decimal.", path: path)
            }
            return try cast(decimal, path: path)
        }
        var valueReader = reader
        valueReader.offset = offset
        return try cast(valueReader.readValue(), path: path)
    }

    /// The array of strings at `offset`, or nil if it is something else.
    func stringsIfValid(at offset: Int) -> [String]? {
        guard reader.tag(at: offset) == EventTag.array.rawValue else { return nil }
        let count = reader.count(at: offset)
        var result: [String] = []
        result.reserveCapacity(count)
        var position = offset + EventTag.containerHeaderSize
        for _ in 0..<count {
            guard let string = stringIfValid(at: position) else { return nil }
            result.append(string)
            position = reader.end(of: position)
        }
        return result
    }

    /// `[String]` is common enough in items to skip the generic path.
    private func strings(at offset: Int, path: CodingPath) throws -> [String] {
        guard reader.tag(at: offset) == EventTag.array.rawValue else {
            throw mismatch([String].self, at: offset, path: path)
        }
        let count = reader.count(at: offset)
        var result: [String] = []
        result.reserveCapacity(count)
        var position = offset + EventTag.containerHeaderSize
        for index in 0..<count {
            result.append(try string(at: position, path: .index(index, path)))
            position = reader.end(of: position)
        }
        return result
    }

    /// Runs `body` with the decoder positioned at `offset`.
    @inline(__always)
    func descend<R>(_ offset: Int, _ path: CodingPath, _ body: () throws -> R) throws -> R {
        let savedOffset = self.offset
        let savedPath = self.path
        self.offset = offset
        self.path = path
        defer {
            self.offset = savedOffset
            self.path = savedPath
        }
        return try body()
    }

    /// `value` as `R`, which the caller has checked is its type (a bit cast, not a dynamic cast).
    private func cast<T, R>(_ value: T, path: CodingPath) throws -> R {
        guard T.self == R.self else {
            throw corrupted("Internal error: \(T.self) is not \(R.self).", path: path)
        }
        return unsafeBitCast(value, to: R.self)
    }

    private func date(at offset: Int, path: CodingPath) throws -> Date {
        switch options.dateDecodingStrategy {
        case .deferredToDate:
            return try descend(offset, path) { try Date(from: self) }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try double(at: offset, path: path))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try double(at: offset, path: path) / 1000)
        case .iso8601:
            let text = try string(at: offset, path: path)
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw corrupted("Expected date string to be ISO8601-formatted.", path: path)
            }
            return date
        case .custom(let read):
            return try descend(offset, path) { try read(self) }
        @unknown default:
            throw corrupted("Unsupported date decoding strategy.", path: path)
        }
    }

    private func data(at offset: Int, path: CodingPath) throws -> Data {
        switch options.dataDecodingStrategy {
        case .deferredToData:
            return try descend(offset, path) { try Data(from: self) }
        case .base64:
            let text = try string(at: offset, path: path)
            guard let data = Data(base64Encoded: text) else {
                throw corrupted("Encountered Data is not valid Base64.", path: path)
            }
            return data
        case .custom(let read):
            return try descend(offset, path) { try read(self) }
        @unknown default:
            throw corrupted("Unsupported data decoding strategy.", path: path)
        }
    }

    // MARK: - Single value container

    func decodeNil() -> Bool { reader.tag(at: offset) == EventTag.null.rawValue }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(at: offset, path: path) }
    func decode(_ type: String.Type) throws -> String { try string(at: offset, path: path) }
    func decode(_ type: Double.Type) throws -> Double { try double(at: offset, path: path) }
    func decode(_ type: Float.Type) throws -> Float { try float(at: offset, path: path) }
    func decode(_ type: Int.Type) throws -> Int { try integer(at: offset, path: path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(at: offset, path: path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(at: offset, path: path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(at: offset, path: path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(at: offset, path: path) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(at: offset, path: path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(at: offset, path: path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(at: offset, path: path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(at: offset, path: path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(at: offset, path: path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(type, at: offset, path: path) }
}
