import TrawlJSON

extension QueryParameters {
    /// A compact JSON object with the keys in the parameters' order (a repeated name keeps its last
    /// value, at its last position). `JSONEncoder` would reorder them.
    ///
    /// ```swift
    /// let params: QueryParameters = ["q": "swift", "page": 2]
    /// String(decoding: params.orderedJSON, as: UTF8.self)   // {"q":"swift","page":2}
    /// ```
    public var orderedJSON: [UInt8] {
        var seen = Set<String>()
        var kept: [Entry] = []
        for entry in entries.reversed() where seen.insert(entry.name).inserted {
            kept.append(entry)
        }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, entry) in kept.reversed().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += JSONValue.string(entry.name).json
            out.append(UInt8(ascii: ":"))
            out += entry.value.jsonValue.json
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension QueryValue {
    /// The value as dynamic JSON; non-finite doubles become `null`.
    public var jsonValue: JSONValue {
        switch self {
        case .string(let value): return .string(value)
        case .int(let value): return .number(String(value))
        case .double(let value): return value.isFinite ? .number(String(value)) : .null
        case .bool(let value): return .bool(value)
        case .list(let values): return .array(values.map(\.jsonValue))
        case .null: return .null
        }
    }
}
