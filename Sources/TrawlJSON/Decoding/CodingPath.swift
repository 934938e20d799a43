/// A coding path built as a linked list, so that descending into a value costs one small node
/// and the array form is made only when someone asks (mostly for errors).
indirect enum CodingPath: Sendable {
    case root
    case key(AnyCodingKey, CodingPath)
    case index(Int, CodingPath)

    var keys: [any CodingKey] {
        var result: [any CodingKey] = []
        var node = self
        while true {
            switch node {
            case .root: return result.reversed()
            case let .key(key, parent):
                result.append(key)
                node = parent
            case let .index(index, parent):
                result.append(AnyCodingKey(intValue: index))
                node = parent
            }
        }
    }

    func appending(_ key: some CodingKey) -> CodingPath {
        .key(AnyCodingKey(key), self)
    }
}

/// A coding key of any kind, for paths and for dictionary keys.
struct AnyCodingKey: CodingKey, Sendable {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }

    static let superKey = AnyCodingKey(stringValue: "super")
}
