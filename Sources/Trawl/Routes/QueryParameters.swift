/// One value of a query or form parameter: a scalar, a list, or `null` (left out of URLs and forms).
///
/// Literals make it read like a dictionary entry:
///
/// ```swift
/// let params: QueryParameters = ["q": "swift", "page": 2, "draft": false, "tags": ["a", "b"], "since": nil]
/// ```
public enum QueryValue: Sendable, Hashable, Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case list([QueryValue])
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: QueryValue...) { self = .list(elements) }
    public init(nilLiteral: ()) { self = .null }

    /// The text of a scalar as it appears in a URL; `nil` for lists and `null`.
    public var text: String? {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .list, .null: return nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .list(let values): try container.encode(values)
        case .null: try container.encodeNil()
        }
    }
}

/// How a list parameter is written into a query string or a form.
///
/// ```swift
/// // tags=a&tags=b            tags[]=a&tags[]=b            tags=a,b
/// ArrayEncoding.repeated      ArrayEncoding.bracketed      ArrayEncoding.commaSeparated
/// ```
public enum ArrayEncoding: Sendable, Hashable {
    /// The name repeated for each element: `tags=a&tags=b`.
    case repeated
    /// The name with `[]` for each element: `tags[]=a&tags[]=b`.
    case bracketed
    /// One parameter with the elements joined by commas: `tags=a,b`.
    case commaSeparated
}

/// Named parameters in a fixed order (the order written), repeats allowed. Encodes to a JSON object too.
///
/// ```swift
/// var params: QueryParameters = ["q": "swift"]
/// params.append("page", 2)
/// params.pairs(arrays: .bracketed)   // [("q", "swift"), ("page", "2")]
/// ```
public struct QueryParameters: Sendable, Hashable, Encodable, ExpressibleByDictionaryLiteral {
    /// The parameters, in order.
    public var entries: [Entry]

    /// One named parameter.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var value: QueryValue

        public init(name: String, value: QueryValue) {
            self.name = name
            self.value = value
        }
    }

    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    public init(dictionaryLiteral elements: (String, QueryValue)...) {
        entries = elements.map { Entry(name: $0.0, value: $0.1) }
    }

    public var isEmpty: Bool { entries.isEmpty }

    public mutating func append(_ name: String, _ value: QueryValue) {
        entries.append(Entry(name: name, value: value))
    }

    /// These parameters followed by `other`'s.
    public func merging(_ other: QueryParameters) -> QueryParameters {
        QueryParameters(entries + other.entries)
    }

    /// Flattens to name/value text pairs in order; `null` values (and `null` list elements) are left out.
    public func pairs(arrays: ArrayEncoding) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        for entry in entries {
            switch entry.value {
            case .null: continue
            case .list(let values):
                let texts = values.compactMap(\.text)
                switch arrays {
                case .repeated: result += texts.map { (entry.name, $0) }
                case .bracketed: result += texts.map { (entry.name + "[]", $0) }
                case .commaSeparated: result.append((entry.name, texts.joined(separator: ",")))
                }
            default:
                if let text = entry.value.text { result.append((entry.name, text)) }
            }
        }
        return result
    }

    /// Encodes as a JSON object in order; a repeated name keeps its last value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: NameKey.self)
        for entry in entries {
            try container.encode(entry.value, forKey: NameKey(stringValue: entry.name))
        }
    }

    private struct NameKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
