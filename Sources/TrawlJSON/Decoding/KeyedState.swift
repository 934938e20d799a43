/// What a keyed container keeps in its decoder: see ``KeyedContainer``.
struct KeyedState {
    var path: CodingPath
    var lookup: KeyLookup?
    var start: Int
    var count: Int
    var keepKeys: Bool
    var hasLookup: Bool
}

/// What a keyed container needs beyond a linear scan.
final class KeyLookup {
    static let indexThreshold = 24
    let converted: [String]?
    let index: [String: Int]

    init(converted: [String]?, index: [String: Int]) {
        self.converted = converted
        self.index = index
    }
}

/// Walking an object's entries.
enum KeyedEntries {
    /// Calls `body` with each key's bytes and its value's offset, in document order.
    @inline(__always)
    static func forEach(
        _ reader: EventReader, _ start: Int, _ body: (UnsafeRawBufferPointer, Int) -> Void
    ) {
        let n = reader.count(at: start)
        var position = start + EventTag.containerHeaderSize
        for _ in 0..<n {
            let length = reader.uint32(at: position)
            let key = UnsafeRawBufferPointer(start: reader.base + position + 4, count: length)
            let value = position + 4 + length
            body(key, value)
            position = reader.end(of: value)
        }
    }
}

extension EventDecoder {
    /// What a keyed container over the object at `start` keeps in its slot (not generic: no metadata lookups).
    func keyedState(start: Int, path: CodingPath, keepKeys: Bool) -> KeyedState {
        let count = reader.count(at: start)
        let keepKeys = keepKeys || keyMode == .asIs
        var converted: [String]?
        if !keepKeys, keyMode == .custom, case .custom(let convert) = options.keyDecodingStrategy {
            var keys: [String] = []
            let base = path.keys
            KeyedEntries.forEach(reader, start) { key, _ in
                keys.append(convert(base + [AnyCodingKey(stringValue: EventReader.string(key))]).stringValue)
            }
            converted = keys
        }
        var lookup: KeyLookup?
        if count > KeyLookup.indexThreshold || converted != nil {
            var index: [String: Int] = [:]
            var i = 0
            let snakeCase = !keepKeys && keyMode == .snakeCase
            KeyedEntries.forEach(reader, start) { key, value in
                index[converted?[i] ?? (snakeCase ? SnakeCase.toCamelCase(key) : EventReader.string(key))] = value
                i += 1
            }
            lookup = KeyLookup(converted: converted, index: index)
        }
        return KeyedState(
            path: path, lookup: lookup, start: start, count: count, keepKeys: keepKeys, hasLookup: lookup != nil)
    }
}
