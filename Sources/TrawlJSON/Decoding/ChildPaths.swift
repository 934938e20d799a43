/// The coding paths of values nested under a key, kept from one item to the next: every item's `owner` has the
/// path `[owner]`, and building it anew cost a node allocation (and a `CodingKey` copy) per nested value.
///
/// An entry is found by the identity of its parent path node and the bits of its key's string (equal bits are the
/// same string); the entry's path holds both alive, so neither address can be reused while the entry exists.
struct ChildPaths {
    private var entries: [(parent: UInt, key: (UInt64, UInt64), intValue: Int?, path: CodingPath)] = []
    private var next = 0
    private static let capacity = 8
    /// Identity by bits needs the path to be one reference (an indirect enum); otherwise nothing is kept.
    private static let pathIsReference = MemoryLayout<CodingPath>.size == MemoryLayout<UInt>.size

    /// `parent` with `key` appended.
    mutating func path(_ parent: CodingPath, _ key: some CodingKey) -> CodingPath {
        guard Self.pathIsReference else { return parent.appending(key) }
        let parentBits = unsafeBitCast(parent, to: UInt.self)
        let name = key.stringValue
        let nameBits = unsafeBitCast(name, to: (UInt64, UInt64).self)
        let intValue = key.intValue
        for entry in entries
        where entry.parent == parentBits && entry.key == nameBits && entry.intValue == intValue {
            return entry.path
        }
        var codingKey = AnyCodingKey(stringValue: name)
        codingKey.intValue = intValue
        let path = CodingPath.key(codingKey, parent)
        if entries.count < Self.capacity {
            entries.append((parentBits, nameBits, intValue, path))
        } else {
            entries[next] = (parentBits, nameBits, intValue, path)
            next = (next + 1) % Self.capacity
        }
        return path
    }
}
