/// The keyed container over one recorded object. Keys are found by a linear scan that keeps the
/// last match (so a repeated key's last value wins); large objects get a dictionary instead.
///
/// Every stored property is trivial (the decoder is held `unowned(unsafe)`, the coding path and key index live
/// in the decoder, by slot): the standard library's container box copies the container for each
/// `decode(_:forKey:)`, and with references inside that cost three retain/release pairs per field. The decoder
/// outlives its containers, as the event bytes they read do: a container is only valid inside the `init(from:)`
/// it was made for.
struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    unowned(unsafe) let decoder: EventDecoder
    /// The decoder's core, which the hot paths read instead of the decoder (see ``DecoderCore``).
    private let core: UnsafeMutablePointer<DecoderCore>
    /// This container's slot in its decoder, which keeps its object, coding path and key index; the decoder
    /// reuses the container (its box) for the same slot and key type in the next value it decodes.
    private let slot: Int

    private var state: UnsafeMutablePointer<KeyedState> { core.pointee.keyedStates + slot }
    private var reader: EventReader { core.pointee.reader }
    /// The object's offset in the events, and its entry count.
    var start: Int { state.pointee.start }
    var count: Int { state.pointee.count }
    var path: CodingPath { state.pointee.path }
    /// Keys are compared as they are, whatever the key strategy.
    private var keepKeys: Bool { state.pointee.keepKeys }
    /// The entry's `KeyLookup`, if it has one (keys as a custom key strategy turns them, or an index for
    /// objects too large to scan).
    private var lookup: KeyLookup? { state.pointee.hasLookup ? state.pointee.lookup : nil }

    init(decoder: EventDecoder, slot: Int) {
        self.decoder = decoder
        self.core = decoder.core
        self.slot = slot
    }

    var codingPath: [any CodingKey] { path.keys }

    var allKeys: [Key] {
        var keys: [Key] = []
        var i = 0
        let snakeCase = !keepKeys && core.pointee.keyMode == .snakeCase
        KeyedEntries.forEach(reader, start) { key, _ in
            let text = lookup?.converted?[i] ?? (snakeCase ? SnakeCase.toCamelCase(key) : EventReader.string(key))
            if let key = Key(stringValue: text) { keys.append(key) }
            i += 1
        }
        return keys
    }

    /// The offset of the value for `key`, if present (the last one if the key repeats).
    @inline(__always)
    func find(_ key: Key) -> Int? {
        if state.pointee.hasLookup, let lookup { return lookup.index[key.stringValue] }
        var wanted = key.stringValue
        let core = self.core
        let snakeCase = !keepKeys && core.pointee.keyMode == .snakeCase
        let reader = core.pointee.reader
        let start = self.start
        let count = self.count
        let first = start + EventTag.containerHeaderSize
        return wanted.withUTF8 { utf8 in
            guard !reader.mayRepeatKeys(at: start) else {
                var found: Int?
                var position = first
                for _ in 0..<count {
                    let length = reader.uint32(at: position)
                    let value = position + 4 + length
                    if Self.keyMatches(reader.base + position + 4, length, utf8, snakeCase) { found = value }
                    position = reader.end(of: value)
                }
                return found
            }
            // Distinct keys: the first match is the only one, and it is usually the entry after
            // the previous match.
            var position = first
            var index = 0
            if core.pointee.hintObject == start && core.pointee.hintIndex < count {
                position = core.pointee.hintPosition
                index = core.pointee.hintIndex
            }
            for _ in 0..<count {
                if index == count {
                    position = first
                    index = 0
                }
                let length = reader.uint32(at: position)
                let value = position + 4 + length
                let next = reader.end(of: value)
                if Self.keyMatches(reader.base + position + 4, length, utf8, snakeCase) {
                    core.pointee.hintObject = start
                    core.pointee.hintPosition = next
                    core.pointee.hintIndex = index + 1
                    return value
                }
                position = next
                index += 1
            }
            return nil
        }
    }

    @inline(__always)
    private static func keyMatches(
        _ key: UnsafeRawPointer, _ length: Int, _ wanted: UnsafeBufferPointer<UInt8>, _ snakeCase: Bool
    ) -> Bool {
        if length == wanted.count {
            // Equal bytes match unless the conversion would change the key.
            guard memoryEqual(wanted.baseAddress, key, length) else { return false }
            return !snakeCase || !SnakeCase.hasUnderscore(key, length)
                || SnakeCase.matches(key, length, camelCase: wanted)
        }
        // The conversion only removes underscores, so a converted key is never longer.
        return snakeCase && length > wanted.count && SnakeCase.mayMatch(key, length, camelCase: wanted)
            && SnakeCase.hasUnderscore(key, length) && SnakeCase.matches(key, length, camelCase: wanted)
    }

    /// A number, or a string that a non-conforming float strategy accepts (the decoder's, rarely).
    @inline(__always)
    private func double(at offset: Int) -> Double? {
        if let value = reader.numberAsDouble(at: offset) { return value }
        return decoder.doubleIfValid(at: offset)
    }

    @inline(__always)
    func value(_ key: Key) throws -> Int {
        guard let offset = find(key) else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: path.keys,
                debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return offset
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        reader.tag(at: try value(key)) == EventTag.null.rawValue
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let offset = try value(key)
        if let value = reader.boolIfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let offset = try value(key)
        if let value = reader.stringIfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let offset = try value(key)
        if let value = double(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let offset = try value(key)
        if let value = decoder.floatIfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        let offset = try value(key)
        if let value = reader.int64IfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let offset = try value(key)
        if let value: T = reader.integerIfValid(at: offset) { return value }
        throw decoder.failure(T.self, at: offset, path: path.appending(key))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let offset = try value(key)
        // `[String]` is common in items; the general path builds a coding path first.
        if ObjectIdentifier(T.self) == EventReader.stringArrayType, let strings = reader.stringsIfValid(at: offset) {
            return unsafeBitCast(strings, to: T.self)
        }
        return try decoder.unwrap(type, at: offset, path: core.pointee.childPaths.path(path, key))
    }

    /// Present and not null, or nil: one lookup instead of the default three.
    @inline(__always)
    private func present(_ key: Key) -> Int? {
        guard let offset = find(key), reader.tag(at: offset) != EventTag.null.rawValue else { return nil }
        return offset
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let offset = present(key) else { return nil }
        if let value = reader.stringIfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(key) }

    private func integerIfPresent<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        guard let offset = present(key) else { return nil }
        if let value: T = reader.integerIfValid(at: offset) { return value }
        throw decoder.failure(T.self, at: offset, path: path.appending(key))
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let offset = present(key) else { return nil }
        if let value = double(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let offset = present(key) else { return nil }
        if let value = reader.boolIfValid(at: offset) { return value }
        throw decoder.failure(type, at: offset, path: path.appending(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let offset = present(key) else { return nil }
        return try decoder.unwrap(type, at: offset, path: core.pointee.childPaths.path(path, key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let offset = try value(key)
        let nestedPath = path.appending(key)
        guard reader.tag(at: offset) == EventTag.object.rawValue else {
            throw decoder.mismatch([String: Any].self, at: offset, path: nestedPath)
        }
        return decoder.keyedContainer(NestedKey.self, start: offset, path: nestedPath)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let offset = try value(key)
        let nestedPath = path.appending(key)
        guard reader.tag(at: offset) == EventTag.array.rawValue else {
            throw decoder.mismatch([Any].self, at: offset, path: nestedPath)
        }
        return UnkeyedContainer(decoder: decoder, start: offset, path: nestedPath)
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(at: find(AnyCodingKey.superKey.stringValue), key: AnyCodingKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(at: find(key), key: AnyCodingKey(key))
    }

    private func find(_ text: String) -> Int? {
        guard let key = Key(stringValue: text) else { return nil }
        return find(key)
    }

    /// A decoder of its own for the value (a null one when the key is absent, as in `JSONDecoder`).
    private func superDecoder(at offset: Int?, key: AnyCodingKey) throws -> any Decoder {
        let nestedPath = CodingPath.key(key, path)
        guard let offset else {
            return EventDecoder(base: NullEvent.pointer, offset: 0, path: nestedPath, options: decoder.options)
        }
        return EventDecoder(base: reader.base, offset: offset, path: nestedPath, options: decoder.options)
    }
}

/// A recorded `null`, for decoders of absent values.
enum NullEvent {
    nonisolated(unsafe) static let pointer: UnsafeRawPointer = {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        pointer.storeBytes(of: EventTag.null.rawValue, as: UInt8.self)
        return UnsafeRawPointer(pointer)
    }()
}
