import Foundation

extension QueryParameters {
    /// The stored properties of an `Encodable` value as parameters, in declaration order (the order
    /// synthesized `Codable` encodes them). `nil` properties are left out; arrays of scalars become lists (sent
    /// as the route's `ArrayEncoding` says); nested objects become `parent[child]`; dates are ISO 8601.
    ///
    /// ```swift
    /// struct Search: Encodable { let q: String; let perPage: Int; let labels: [String]; let since: Date? }
    /// let params = try QueryParameters(encoding: Search(q: "swift", perPage: 100, labels: ["bug"], since: nil))
    /// params.pairs(arrays: .repeated)   // [("q", "swift"), ("perPage", "100"), ("labels", "bug")]
    /// ```
    ///
    /// - Throws: `EncodingError.invalidValue` when the value is not an object at the top level.
    public init(encoding value: some Encodable) throws {
        let root = QueryNode.Box()
        try value.encode(to: QueryNodeEncoder(box: root, codingPath: []))
        guard case .object(let members) = root.node else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "query parameters come from an object (a struct)"))
        }
        var entries: [Entry] = []
        for (name, node) in members { QueryNode.flatten(node, name: name, into: &entries) }
        self.init(entries)
    }
}

/// The ordered tree an `Encodable` value is encoded into before it is flattened to parameters.
enum QueryNode {
    case empty
    case value(QueryValue)
    case list([Box])
    case object([(String, Box)])

    final class Box {
        var node: QueryNode = .empty
    }

    static func flatten(_ box: Box, name: String, into entries: inout [QueryParameters.Entry]) {
        switch box.node {
        case .empty, .value(.null): return
        case .value(let value): entries.append(.init(name: name, value: value))
        case .object(let members):
            for (key, member) in members { flatten(member, name: "\(name)[\(key)]", into: &entries) }
        case .list(let elements):
            var scalars: [QueryValue] = []
            var allScalars = true
            for element in elements {
                if case .value(let value) = element.node { scalars.append(value) } else { allScalars = false }
            }
            if allScalars {
                entries.append(.init(name: name, value: .list(scalars)))
            } else {
                for (index, element) in elements.enumerated() { flatten(element, name: "\(name)[\(index)]", into: &entries) }
            }
        }
    }
}

private struct QueryNodeEncoder: Encoder {
    let box: QueryNode.Box
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = box.node {} else { box.node = .object([]) }
        return KeyedEncodingContainer(KeyedQueryContainer<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .list = box.node {} else { box.node = .list([]) }
        return UnkeyedQueryContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleQueryContainer(box: box, codingPath: codingPath)
    }

    /// Scalars become values directly; dates, URLs and decimals get their text forms; the rest encode
    /// themselves into a child box.
    static func encode(_ value: some Encodable, into box: QueryNode.Box, codingPath: [any CodingKey]) throws {
        switch value {
        case let date as Date:
            box.node = .value(.string(date.formatted(.iso8601)))
        case let url as URL:
            box.node = .value(.string(url.absoluteString))
        case let decimal as Decimal:
            box.node = .value(.string("\(decimal)"))
        default:
            try value.encode(to: QueryNodeEncoder(box: box, codingPath: codingPath))
        }
    }
}

private struct KeyedQueryContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: QueryNode.Box
    var codingPath: [any CodingKey]

    private func child(_ key: Key) -> QueryNode.Box {
        let child = QueryNode.Box()
        if case .object(var members) = box.node {
            members.removeAll { $0.0 == key.stringValue }
            members.append((key.stringValue, child))
            box.node = .object(members)
        }
        return child
    }

    mutating func encodeNil(forKey key: Key) throws { child(key).node = .value(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).node = .value(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { child(key).node = .value(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { child(key).node = .value(.double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { child(key).node = .value(.double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { child(key).node = .value(.int(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { child(key).node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { child(key).node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { child(key).node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { child(key).node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { child(key).node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { child(key).node = .value(.int(Int(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { child(key).node = .value(.int(Int(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { child(key).node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { child(key).node = .value(.string(String(value))) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try QueryNodeEncoder.encode(value, into: child(key), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        QueryNodeEncoder(box: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        QueryNodeEncoder(box: child(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        QueryNodeEncoder(box: box, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        QueryNodeEncoder(box: child(key), codingPath: codingPath + [key])
    }
}

private struct UnkeyedQueryContainer: UnkeyedEncodingContainer {
    let box: QueryNode.Box
    var codingPath: [any CodingKey]
    var count: Int {
        if case .list(let elements) = box.node { return elements.count }
        return 0
    }

    private func next() -> QueryNode.Box {
        let child = QueryNode.Box()
        if case .list(var elements) = box.node {
            elements.append(child)
            box.node = .list(elements)
        }
        return child
    }

    mutating func encodeNil() throws { next().node = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try QueryNodeEncoder.encode(value, into: next(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        QueryNodeEncoder(box: next(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        QueryNodeEncoder(box: next(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { QueryNodeEncoder(box: next(), codingPath: codingPath) }
}

private struct SingleQueryContainer: SingleValueEncodingContainer {
    let box: QueryNode.Box
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.node = .value(.null) }
    mutating func encode(_ value: Bool) throws { box.node = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { box.node = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { box.node = .value(.double(value)) }
    mutating func encode(_ value: Float) throws { box.node = .value(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { box.node = .value(.int(value)) }
    mutating func encode(_ value: Int8) throws { box.node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int16) throws { box.node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int32) throws { box.node = .value(.int(Int(value))) }
    mutating func encode(_ value: Int64) throws { box.node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt) throws { box.node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt8) throws { box.node = .value(.int(Int(value))) }
    mutating func encode(_ value: UInt16) throws { box.node = .value(.int(Int(value))) }
    mutating func encode(_ value: UInt32) throws { box.node = .value(.string(String(value))) }
    mutating func encode(_ value: UInt64) throws { box.node = .value(.string(String(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try QueryNodeEncoder.encode(value, into: box, codingPath: codingPath)
    }
}
