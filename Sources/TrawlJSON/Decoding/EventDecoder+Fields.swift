/// How a type decoded through an ``EventDecoder`` reads itself: through ``JSONFieldsDecodable`` (an object,
/// or an array of them), or through `Decodable`.
enum FieldsConformance {
    case object(any JSONFieldsDecodable.Type)
    case array(any FieldsArray.Type)
}

/// Arrays whose elements are `JSONFieldsDecodable`.
protocol FieldsArray {
    static func objects(_ decoder: EventDecoder, at offset: Int, parentPath: CodingPath, key: StaticString?) throws
        -> Self
}

extension Array: FieldsArray where Element: JSONFieldsDecodable {
    static func objects(_ decoder: EventDecoder, at offset: Int, parentPath: CodingPath, key: StaticString?) throws
        -> [Element]
    {
        try decoder.objects(Element.self, at: offset, parentPath: parentPath, key: key)
    }
}

/// The conformance lookups (dynamic casts, tens of nanoseconds each) done once per type, and kept for the last
/// few types seen (an item and the values nested in it).
struct FieldsConformances {
    private var types: (ObjectIdentifier?, ObjectIdentifier?, ObjectIdentifier?, ObjectIdentifier?) =
        (nil, nil, nil, nil)
    private var found: (FieldsConformance?, FieldsConformance?, FieldsConformance?, FieldsConformance?) =
        (nil, nil, nil, nil)
    private var next = 0

    @inline(__always)
    mutating func lookup<T>(_ type: T.Type) -> FieldsConformance? {
        let id = ObjectIdentifier(T.self)
        if types.0 == id { return found.0 }
        if types.1 == id { return found.1 }
        if types.2 == id { return found.2 }
        if types.3 == id { return found.3 }
        let conformance: FieldsConformance? =
            if let object = T.self as? any JSONFieldsDecodable.Type { .object(object) }
            else if let array = T.self as? any FieldsArray.Type { .array(array) }
            else { nil }
        switch next {
        case 0: (types.0, found.0) = (id, conformance)
        case 1: (types.1, found.1) = (id, conformance)
        case 2: (types.2, found.2) = (id, conformance)
        default: (types.3, found.3) = (id, conformance)
        }
        next = (next + 1) & 3
        return conformance
    }
}

extension EventDecoder {
    /// The value at `offset` (an object) as `T`, through `T`'s `JSONFieldsDecodable` conformance `fieldsType`.
    func decodeFields<T>(
        _ fieldsType: any JSONFieldsDecodable.Type, as type: T.Type, at offset: Int, parentPath: CodingPath,
        key: StaticString?
    ) throws -> T {
        let slot = scratch.push(MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { scratch.pop() }
        func read<F: JSONFieldsDecodable>(_ type: F.Type) throws {
            slot.initializeMemory(as: F.self, to: try fields(F.self, at: offset, parentPath: parentPath, key: key))
        }
        try read(fieldsType)
        return slot.assumingMemoryBound(to: T.self).move()
    }

    /// The value at `offset` (an array) as `T`, an array of `JSONFieldsDecodable` objects.
    func decodeObjects<T>(
        _ arrayType: any FieldsArray.Type, as type: T.Type, at offset: Int, parentPath: CodingPath,
        key: StaticString?
    ) throws -> T {
        let slot = scratch.push(MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { scratch.pop() }
        func read<A: FieldsArray>(_ type: A.Type) throws {
            slot.initializeMemory(as: A.self, to: try A.objects(self, at: offset, parentPath: parentPath, key: key))
        }
        try read(arrayType)
        return slot.assumingMemoryBound(to: T.self).move()
    }

    /// How `T` reads itself (see ``FieldsConformances``).
    @inline(__always)
    func fieldsConformance<T>(_ type: T.Type) -> FieldsConformance? { fieldsConformances.lookup(T.self) }

    /// `unwrap`'s route for types that read themselves through `JSONFieldsDecodable` (returning `T`, not `T?`,
    /// whose metadata would be looked up for every value).
    @inline(__always)
    func unwrapFields<T>(
        _ conformance: FieldsConformance, as type: T.Type, at offset: Int, path: CodingPath
    ) throws -> T {
        switch conformance {
        case .object(let fieldsType):
            guard reader.tag(at: offset) == EventTag.object.rawValue else {
                throw mismatch([String: Any].self, at: offset, path: path)
            }
            return try decodeFields(fieldsType, as: T.self, at: offset, parentPath: path, key: nil)
        case .array(let arrayType):
            guard reader.tag(at: offset) == EventTag.array.rawValue else {
                throw mismatch([Any].self, at: offset, path: path)
            }
            return try decodeObjects(arrayType, as: T.self, at: offset, parentPath: path, key: nil)
        }
    }
}

/// Memory where a value whose type was found by a dynamic lookup (`F`, which is `T` though the compiler cannot
/// see it) is built and then moved out as `T`: a cast would copy it (a retain and a release per reference
/// inside), a temporary allocation would look up generic metadata. One slot per nesting depth, kept by the
/// decoder and grown as needed.
struct ValueScratch {
    private var slots: [(pointer: UnsafeMutableRawPointer, size: Int)] = []
    private var depth = 0

    /// The slot for the next depth, with room for `size` bytes aligned to `alignment`.
    mutating func push(_ size: Int, alignment: Int) -> UnsafeMutableRawPointer {
        defer { depth += 1 }
        let size = max(size, 1)
        if depth < slots.count {
            if slots[depth].size >= size && alignment <= ValueScratch.alignment { return slots[depth].pointer }
            slots[depth].pointer.deallocate()
        }
        let capacity = max(size, 64)
        let pointer = UnsafeMutableRawPointer.allocate(
            byteCount: capacity, alignment: max(alignment, ValueScratch.alignment))
        if depth < slots.count { slots[depth] = (pointer, capacity) } else { slots.append((pointer, capacity)) }
        return pointer
    }

    mutating func pop() { depth -= 1 }

    func release() {
        for slot in slots { slot.pointer.deallocate() }
    }

    private static let alignment = 16
}
