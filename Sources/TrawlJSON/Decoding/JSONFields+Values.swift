/// The values a ``JSONFields`` reads: the common scalars without any protocol in between, nested
/// ``JSONFieldsDecodable`` values and arrays of them, and any other `Decodable` through the decoder's options.
extension JSONFields {
    // MARK: - Required

    public mutating func decode(_ key: StaticString) throws -> String {
        let offset = try value(key)
        if let value = reader.stringIfValid(at: offset) { return value }
        throw failure(String.self, key, at: offset)
    }

    public mutating func decode(_ key: StaticString) throws -> Bool {
        let offset = try value(key)
        if let value = reader.boolIfValid(at: offset) { return value }
        throw failure(Bool.self, key, at: offset)
    }

    public mutating func decode(_ key: StaticString) throws -> Int {
        let offset = try value(key)
        if let value = reader.int64IfValid(at: offset) { return Int(value) }
        throw failure(Int.self, key, at: offset)
    }

    public mutating func decode(_ key: StaticString) throws -> Int64 {
        let offset = try value(key)
        if let value = reader.int64IfValid(at: offset) { return value }
        throw failure(Int64.self, key, at: offset)
    }

    public mutating func decode(_ key: StaticString) throws -> Int32 { try integer(key) }
    public mutating func decode(_ key: StaticString) throws -> UInt64 { try integer(key) }

    public mutating func decode(_ key: StaticString) throws -> Double {
        let offset = try value(key)
        if let value = double(at: offset) { return value }
        throw failure(Double.self, key, at: offset)
    }

    public mutating func decode(_ key: StaticString) throws -> [String] {
        let offset = try value(key)
        if let value = reader.stringsIfValid(at: offset) { return value }
        return try decoder.unwrap([String].self, at: offset, path: path(key))
    }

    /// Any other value: nested `JSONFieldsDecodable` objects and arrays of them, and any `Decodable` (dates, URLs,
    /// enums, arrays of numbers, ...) as the `Decodable` path reads it, with the decoder's options.
    ///
    /// Disfavored, so that a type known to be `JSONFieldsDecodable` where it is read takes the overloads that go
    /// straight to its initializer (this one still reads such types, found by a cached conformance lookup, when
    /// they are only known as `Decodable`, as in generic code).
    @_disfavoredOverload
    public mutating func decode<T: Decodable>(_ key: StaticString) throws -> T {
        try nested(T.self, at: value(key), key: key)
    }

    /// A nested object that reads itself through `JSONFieldsDecodable`: straight to its initializer, without
    /// the conformance lookup the `Decodable` overload makes.
    public mutating func decode<T: JSONFieldsDecodable>(_ key: StaticString) throws -> T {
        try object(T.self, at: value(key), key: key)
    }

    /// An array of objects that read themselves through `JSONFieldsDecodable`.
    public mutating func decode<T: JSONFieldsDecodable>(_ key: StaticString) throws -> [T] {
        try objects(T.self, at: value(key), key: key)
    }

    // MARK: - Optional: nil when the key is missing or null

    public mutating func decodeIfPresent(_ key: StaticString) throws -> String? {
        guard let offset = present(key) else { return nil }
        if let value = reader.stringIfValid(at: offset) { return value }
        throw failure(String.self, key, at: offset)
    }

    public mutating func decodeIfPresent(_ key: StaticString) throws -> Bool? {
        guard let offset = present(key) else { return nil }
        if let value = reader.boolIfValid(at: offset) { return value }
        throw failure(Bool.self, key, at: offset)
    }

    public mutating func decodeIfPresent(_ key: StaticString) throws -> Int? {
        guard let offset = present(key) else { return nil }
        if let value = reader.int64IfValid(at: offset) { return Int(value) }
        throw failure(Int.self, key, at: offset)
    }

    public mutating func decodeIfPresent(_ key: StaticString) throws -> Int64? {
        guard let offset = present(key) else { return nil }
        if let value = reader.int64IfValid(at: offset) { return value }
        throw failure(Int64.self, key, at: offset)
    }

    public mutating func decodeIfPresent(_ key: StaticString) throws -> Double? {
        guard let offset = present(key) else { return nil }
        if let value = double(at: offset) { return value }
        throw failure(Double.self, key, at: offset)
    }

    @_disfavoredOverload
    public mutating func decodeIfPresent<T: Decodable>(_ key: StaticString) throws -> T? {
        guard let offset = present(key) else { return nil }
        return try nested(T.self, at: offset, key: key)
    }

    public mutating func decodeIfPresent<T: JSONFieldsDecodable>(_ key: StaticString) throws -> T? {
        guard let offset = present(key) else { return nil }
        return try object(T.self, at: offset, key: key)
    }

    public mutating func decodeIfPresent<T: JSONFieldsDecodable>(_ key: StaticString) throws -> [T]? {
        guard let offset = present(key) else { return nil }
        return try objects(T.self, at: offset, key: key)
    }

    // MARK: - Helpers

    @inline(__always)
    private mutating func integer<T: FixedWidthInteger>(_ key: StaticString) throws -> T {
        let offset = try value(key)
        if let value: T = reader.integerIfValid(at: offset) { return value }
        throw failure(T.self, key, at: offset)
    }

    /// A number, or a string that a non-conforming float strategy accepts.
    @inline(__always)
    private func double(at offset: Int) -> Double? {
        if let value = reader.numberAsDouble(at: offset) { return value }
        return decoder.doubleIfValid(at: offset)
    }

    /// The path a nested value's own path starts from: this object's path when it has a key or an index of its
    /// own (a nested object's nested object), else its parent's (the key is added by the nested value).
    private var nestedParentPath: CodingPath { key != nil || index != nil ? path : parentPath }

    /// Throws the `Decodable` path's type mismatch unless the value at `offset` (for `key`) is an object.
    private func requireObject(at offset: Int, key: StaticString) throws {
        guard reader.tag(at: offset) == EventTag.object.rawValue else {
            throw decoder.mismatch([String: Any].self, at: offset, path: path(key))
        }
    }

    /// Throws the `Decodable` path's type mismatch unless the value at `offset` (for `key`) is an array.
    private func requireArray(at offset: Int, key: StaticString) throws {
        guard reader.tag(at: offset) == EventTag.array.rawValue else {
            throw decoder.mismatch([Any].self, at: offset, path: path(key))
        }
    }

    /// The object at `offset` as `T`, read through its `JSONFieldsDecodable` initializer.
    private func object<T: JSONFieldsDecodable>(_ type: T.Type, at offset: Int, key: StaticString) throws -> T {
        try requireObject(at: offset, key: key)
        return try decoder.fields(T.self, at: offset, parentPath: nestedParentPath, key: key)
    }

    /// The array of objects at `offset` as `[T]`, each read through its `JSONFieldsDecodable` initializer.
    private func objects<T: JSONFieldsDecodable>(_ type: T.Type, at offset: Int, key: StaticString) throws -> [T] {
        try requireArray(at: offset, key: key)
        return try decoder.objects(T.self, at: offset, parentPath: nestedParentPath, key: key)
    }

    /// A value that is not one of the scalars above: through `JSONFieldsDecodable` when its type (or its element
    /// type, for an array) conforms, with the coding path still in parts; otherwise through `Decodable`.
    private func nested<T: Decodable>(_ type: T.Type, at offset: Int, key: StaticString) throws -> T {
        switch decoder.fieldsConformance(T.self) {
        case .object(let fieldsType):
            try requireObject(at: offset, key: key)
            return try decoder.decodeFields(
                fieldsType, as: T.self, at: offset, parentPath: nestedParentPath, key: key)
        case .array(let arrayType):
            try requireArray(at: offset, key: key)
            return try decoder.decodeObjects(
                arrayType, as: T.self, at: offset, parentPath: nestedParentPath, key: key)
        case nil:
            return try decoder.unwrap(T.self, at: offset, path: path(key))
        }
    }
}

extension EventDecoder {
    /// The array of objects at `offset` (an array), each read through its `JSONFieldsDecodable` conformance.
    func objects<T: JSONFieldsDecodable>(
        _ type: T.Type, at offset: Int, parentPath: CodingPath, key: StaticString?
    ) throws -> [T] {
        let count = reader.count(at: offset)
        var result: [T] = []
        result.reserveCapacity(count)
        var position = offset + EventTag.containerHeaderSize
        for index in 0..<count {
            guard reader.tag(at: position) == EventTag.object.rawValue else {
                let arrayPath = key.map { CodingPath.key(AnyCodingKey(stringValue: $0.description), parentPath) }
                throw mismatch([String: Any].self, at: position, path: .index(index, arrayPath ?? parentPath))
            }
            var fields = JSONFields(decoder: self, start: position, parentPath: parentPath, key: key, index: index)
            result.append(try T(fields: &fields))
            position = reader.end(of: position)
        }
        return result
    }

    /// `T` read through its `JSONFieldsDecodable` conformance from the object at `offset`.
    func fields<T: JSONFieldsDecodable>(
        _ type: T.Type, at offset: Int, parentPath: CodingPath, key: StaticString?
    ) throws -> T {
        var fields = JSONFields(decoder: self, start: offset, parentPath: parentPath, key: key)
        return try T(fields: &fields)
    }
}
