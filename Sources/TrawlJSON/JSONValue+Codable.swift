/// `JSONValue` reads from and writes to any coder. From `JSONItemDecoder` numbers keep their
/// exact text; other decoders give numbers as `Int64`, `UInt64` or `Double`. Encoding writes a
/// number as `Int64`, `UInt64` or `Double`, whichever holds it first.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let events = decoder as? EventDecoder {
            var reader = events.reader
            reader.offset = events.offset
            self = reader.readValue()
            return
        }
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() {
                self = .null
                return
            }
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
                return
            }
            if let value = try? container.decode(Int64.self) {
                self = .number(String(value))
                return
            }
            if let value = try? container.decode(UInt64.self) {
                self = .number(String(value))
                return
            }
            if let value = try? container.decode(Double.self) {
                self = .number(String(value))
                return
            }
            if let value = try? container.decode(String.self) {
                self = .string(value)
                return
            }
        }
        if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !container.isAtEnd { elements.append(try container.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var members: [String: JSONValue] = [:]
        for key in container.allKeys { members[key.stringValue] = try container.decode(JSONValue.self, forKey: key) }
        self = .object(members)
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let text):
            var container = encoder.singleValueContainer()
            if let value = Int64(text) {
                try container.encode(value)
            } else if let value = UInt64(text) {
                try container.encode(value)
            } else {
                try container.encode(Double(text) ?? .nan)
            }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in members { try container.encode(value, forKey: AnyCodingKey(stringValue: key)) }
        }
    }
}
