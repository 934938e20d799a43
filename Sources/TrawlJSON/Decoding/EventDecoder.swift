#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` over one recorded value. One instance serves a whole element: descending into a
/// nested value moves `offset` and `path` and restores them afterwards, as `JSONDecoder` does.
final class EventDecoder: Decoder, SingleValueDecodingContainer {
    /// What keyed containers read for every field, at a fixed address (see ``DecoderCore``).
    let core: UnsafeMutablePointer<DecoderCore>
    var offset: Int
    var path: CodingPath
    private(set) var options: JSONItemDecoder

    enum KeyMode { case asIs, snakeCase, custom }

    var reader: EventReader { core.pointee.reader }
    /// Copied out of `options` so that key lookups do not touch the whole struct.
    var keyMode: KeyMode { core.pointee.keyMode }
    private var keyedCapacity = 4
    private var keyedStateCount = 0
    /// The keyed containers made for the first slots, with their key type, kept for the next value decoded:
    /// a container holds only this decoder and its slot, so the standard library's box around it (an
    /// allocation and a generic metadata lookup per object) is made once per slot and key type.
    private var boxes: UnsafeMutablePointer<(key: ObjectIdentifier?, box: Unmanaged<AnyObject>?)>
    static let boxSlots = 8
    /// The types seen that read themselves through `JSONFieldsDecodable`.
    var fieldsConformances = FieldsConformances()
    var scratch = ValueScratch()
    /// Whether a `KeyedDecodingContainer` is just its box reference, so that a box can be reused by a bit cast
    /// (the same for every key type; checked once rather than looking up each key type's metadata).
    private static let containerIsReference =
        MemoryLayout<KeyedDecodingContainer<AnyCodingKey>>.size == MemoryLayout<AnyObject>.size

    init(base: UnsafeRawPointer, offset: Int, path: CodingPath, options: JSONItemDecoder) {
        self.offset = offset
        self.path = path
        self.options = options
        core = .allocate(capacity: 1)
        core.initialize(to: DecoderCore(
            reader: EventReader(UnsafeRawBufferPointer(start: base, count: Int.max / 2)),
            keyMode: Self.keyMode(options), keyedStates: .allocate(capacity: 4)))
        boxes = .allocate(capacity: Self.boxSlots)
        boxes.initialize(repeating: (nil, nil), count: Self.boxSlots)
    }

    deinit {
        core.pointee.keyedStates.deinitialize(count: keyedStateCount)
        core.pointee.keyedStates.deallocate()
        core.deinitialize(count: 1)
        core.deallocate()
        for slot in 0..<Self.boxSlots { boxes[slot].box?.release() }
        boxes.deinitialize(count: Self.boxSlots)
        boxes.deallocate()
        scratch.release()
    }

    private static func keyMode(_ options: JSONItemDecoder) -> KeyMode {
        switch options.keyDecodingStrategy {
        case .useDefaultKeys: .asIs
        case .convertFromSnakeCase: .snakeCase
        default: .custom
        }
    }

    /// Readies a decoder used before for a new value, keeping its containers' boxes.
    func reuse(base: UnsafeRawPointer, options: JSONItemDecoder) {
        offset = 0
        path = .root
        self.options = options
        core.pointee.reader = EventReader(UnsafeRawBufferPointer(start: base, count: Int.max / 2))
        core.pointee.keyMode = Self.keyMode(options)
        core.pointee.hintObject = -1  // the previous value's hint points into other events
        core.pointee.hintPosition = 0
        core.pointee.hintIndex = 0
        core.pointee.keyedStates.deinitialize(count: keyedStateCount)
        keyedStateCount = 0
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard reader.tag(at: offset) == EventTag.object.rawValue else {
            throw mismatch([String: Any].self, at: offset, path: path)
        }
        // `[String: Value]` keeps its keys as they are whatever the key strategy, as in `JSONDecoder`.
        let keepKeys = keyMode != .asIs && ObjectIdentifier(Key.self) == DictionaryKeyProbe.keyType
        return keyedContainer(Key.self, start: offset, path: path, keepKeys: keepKeys)
    }

    /// A keyed container over the object at `start`, in the box made for its slot before when there is one.
    func keyedContainer<Key: CodingKey>(
        _ type: Key.Type, start: Int, path: CodingPath, keepKeys: Bool = false
    ) -> KeyedDecodingContainer<Key> {
        let slot = addKeyedState(keyedState(start: start, path: path, keepKeys: keepKeys))
        // The box is reused by a bit cast, for which the container must be just its reference.
        guard slot < Self.boxSlots, Self.containerIsReference else {
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, slot: slot))
        }
        let cached = boxes[slot]
        if cached.key == ObjectIdentifier(Key.self), let box = cached.box {
            return unsafeBitCast(box.takeUnretainedValue(), to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, slot: slot))
        cached.box?.release()
        boxes[slot] = (ObjectIdentifier(Key.self), Unmanaged.passRetained(unsafeBitCast(container, to: AnyObject.self)))
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard reader.tag(at: offset) == EventTag.array.rawValue else {
            throw mismatch([Any].self, at: offset, path: path)
        }
        return UnkeyedContainer(decoder: self, start: offset, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Records a keyed container's state and returns its slot.
    private func addKeyedState(_ state: KeyedState) -> Int {
        let slot = keyedStateCount
        if slot == keyedCapacity {
            let grown = UnsafeMutablePointer<KeyedState>.allocate(capacity: keyedCapacity * 2)
            grown.moveInitialize(from: core.pointee.keyedStates, count: slot)
            core.pointee.keyedStates.deallocate()
            core.pointee.keyedStates = grown
            keyedCapacity *= 2
        }
        (core.pointee.keyedStates + slot).initialize(to: state)
        keyedStateCount = slot + 1
        return slot
    }

    // MARK: - Nested values

    /// Decodes the value at `offset` as `T`, with the types `JSONDecoder` treats specially.
    func unwrap<T: Decodable>(_ type: T.Type, at offset: Int, path: CodingPath) throws -> T {
        if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
            || T.self == JSONValue.self
        {
            return try unwrapSpecial(type, at: offset, path: path)
        }
        if ObjectIdentifier(T.self) == EventReader.stringArrayType {
            return try cast(strings(at: offset, path: path), path: path)
        }
        if let conformance = fieldsConformances.lookup(T.self) {
            return try unwrapFields(conformance, as: T.self, at: offset, path: path)
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
