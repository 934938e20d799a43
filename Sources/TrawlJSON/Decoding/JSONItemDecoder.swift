import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes `Decodable` values straight from the parser's events, with the options of
/// `JSONDecoder` that users rely on, and no intermediate tree.
///
/// ```swift
/// struct Event: Decodable { let id: Int64; let createdAt: Date; let payload: Data? }
/// var decoder = JSONItemDecoder()
/// decoder.keyDecodingStrategy = .convertFromSnakeCase
/// decoder.dateDecodingStrategy = .iso8601
/// let extractor = try JSONExtractor(path: "events", form: .values)
/// try extractor.feed(chunk) { element in
///     let event = try element.decode(Event.self, using: decoder)
/// }
/// // or, for a whole document in memory:
/// let events = try decoder.decode([Event].self, from: bytes)
/// ```
///
/// Numbers are converted when a property asks for them, so a value too large for its type fails
/// that element only. When an object repeats a key, the last value wins (`JSONDecoder` keeps the
/// first). Dates, `Data`, `URL` and `Decimal` are handled as `JSONDecoder` handles them.
public struct JSONItemDecoder: Sendable {
    /// How JSON object keys map to coding keys (as `JSONDecoder.keyDecodingStrategy`).
    public var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys
    /// How dates are read (as `JSONDecoder.dateDecodingStrategy`).
    public var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate
    /// How `Data` is read (as `JSONDecoder.dataDecodingStrategy`); base64 by default.
    public var dataDecodingStrategy: JSONDecoder.DataDecodingStrategy = .base64
    /// How strings stand for infinite and NaN floats (as in `JSONDecoder`); rejected by default.
    public var nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy = .throw
    /// Values handed to `Decodable` implementations through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Limits applied by `decode(_:from:)` while parsing.
    public var limits = JSONLimits()

    public init() {}

    /// Decodes a whole JSON document held in memory.
    ///
    /// - Throws: `JSONError` if the bytes are not JSON, `DecodingError` if they do not fit `T`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from json: [UInt8]) throws -> T {
        let extractor = try JSONExtractor(path: .root, capture: [], form: .values, limits: limits, wholeValue: true)
        var decoded: T?
        try extractor.feed(json) { decoded = try $0.decode(type, using: self) }
        _ = try extractor.finish { decoded = try $0.decode(type, using: self) }
        guard let decoded else {
            throw JSONError(code: .empty, message: "empty document: no JSON value", byteOffset: 0)
        }
        return decoded
    }

    /// Decodes the value at `path` of a JSON document held in memory, in one pass: the parser skips to the
    /// path and the decoder reads its events, without first copying the value out.
    ///
    /// ```swift
    /// let repos = try JSONItemDecoder().decode([Repo].self, from: body, at: "data.items")
    /// ```
    ///
    /// - Throws: `JSONError` if the bytes are not JSON, `DecodingError.valueNotFound` when nothing is at
    ///   `path`, `DecodingError` if the value does not fit `T`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from json: [UInt8], at path: JSONKeyPath) throws -> T {
        if path.components.isEmpty { return try decode(type, from: json) }
        let extractor = try JSONExtractor(path: path, capture: [], form: .values, limits: limits, wholeValue: true)
        var decoded: T?
        try extractor.feed(json) { decoded = try $0.decode(type, using: self) }
        let summary = try extractor.finish { decoded = try $0.decode(type, using: self) }
        guard let decoded, summary.collection != .missing else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: [], debugDescription: "no value at key path \(path)"))
        }
        return decoded
    }

    /// Decodes one value recorded in the event encoding.
    func decode<T: Decodable>(_ type: T.Type, events: UnsafeRawBufferPointer) throws -> T {
        guard let base = events.baseAddress, !events.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "No value."))
        }
        let decoder = DecoderPool.take()
        decoder.reuse(base: base, options: self)
        defer { DecoderPool.put(decoder) }
        return try decoder.unwrap(type, at: 0, path: .root)
    }
}

/// Event decoders kept between the values decoded, so that an item costs no decoder and its objects no new
/// container boxes (see `EventDecoder.keyedContainer`): a few slots, each holding one idle decoder, taken
/// and given back with one atomic exchange. A value decoded while every slot is empty (several threads
/// decoding, or a `Decodable` decoding another value inside its own `init(from:)`) gets a new decoder, which
/// joins the pool afterwards if there is room.
enum DecoderPool {
    private static let slot0 = Atomic<UInt>(0)
    private static let slot1 = Atomic<UInt>(0)
    private static let slot2 = Atomic<UInt>(0)
    private static let slot3 = Atomic<UInt>(0)

    static func take() -> EventDecoder {
        for slot in 0..<4 {
            let bits = exchange(slot, 0)
            if bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) {
                return Unmanaged<EventDecoder>.fromOpaque(pointer).takeRetainedValue()
            }
        }
        return EventDecoder(base: NullEvent.pointer, offset: 0, path: .root, options: JSONItemDecoder())
    }

    static func put(_ decoder: EventDecoder) {
        let bits = UInt(bitPattern: Unmanaged.passRetained(decoder).toOpaque())
        for slot in 0..<4 where compareExchange(slot, bits) { return }
        Unmanaged<EventDecoder>.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped).release()
    }

    @inline(__always)
    private static func exchange(_ slot: Int, _ value: UInt) -> UInt {
        switch slot {
        case 0: slot0.exchange(value, ordering: .acquiring)
        case 1: slot1.exchange(value, ordering: .acquiring)
        case 2: slot2.exchange(value, ordering: .acquiring)
        default: slot3.exchange(value, ordering: .acquiring)
        }
    }

    /// Puts `value` in the slot if it is empty.
    @inline(__always)
    private static func compareExchange(_ slot: Int, _ value: UInt) -> Bool {
        switch slot {
        case 0: slot0.compareExchange(expected: 0, desired: value, ordering: .releasing).exchanged
        case 1: slot1.compareExchange(expected: 0, desired: value, ordering: .releasing).exchanged
        case 2: slot2.compareExchange(expected: 0, desired: value, ordering: .releasing).exchanged
        default: slot3.compareExchange(expected: 0, desired: value, ordering: .releasing).exchanged
        }
    }
}
