/// An ordered list of HTTP header fields. Repeated names are kept, in the order they arrived.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add("X-Tag", "a")
/// headers.add("X-Tag", "b")
/// headers["x-tag"]            // "a, b" (the lines combined, case-insensitive)
/// headers.values(for: "X-Tag") // ["a", "b"]
/// ```
///
/// Response headers stay as the bytes received until a field is read: a response whose headers
/// nobody looks at never pays for turning them into strings.
public struct HTTPHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence, CustomStringConvertible {
    public typealias Field = (name: String, value: String)

    private var storage: [HeaderField]
    /// When set, the fields are these received bytes (and `storage` is empty).
    private var received: ReceivedHeaders?

    private struct HeaderField: Sendable, Hashable {
        var name: String
        var value: String
    }

    public init() { storage = [] }

    public init(_ fields: [(String, String)]) {
        storage = fields.map { HeaderField(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    init(received: ReceivedHeaders) {
        storage = []
        self.received = received
    }

    /// Number of fields, repeats included.
    public var count: Int { received?.count ?? storage.count }
    public var isEmpty: Bool { count == 0 }

    private var fields: [HeaderField] {
        guard let received else { return storage }
        return (0..<received.count).map { HeaderField(name: received.name(at: $0), value: received.value(at: $0)) }
    }

    /// Turns received bytes into editable fields before a change.
    private mutating func materialize() {
        guard received != nil else { return }
        storage = fields
        received = nil
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool { lhs.fields == rhs.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// Appends a field, keeping any existing ones with the same name.
    public mutating func add(_ name: String, _ value: String) {
        materialize()
        storage.append(HeaderField(name: name, value: value))
    }

    /// Replaces every field named `name` (case-insensitive) with one field.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field named `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        materialize()
        storage.removeAll { Self.equalNames($0.name, name) }
    }

    /// Removes every field whose name is in `names` (compared case-insensitively).
    public mutating func remove(names: Set<String>) {
        guard !names.isEmpty, !isEmpty else { return }
        materialize()
        storage.removeAll { names.contains($0.name.lowercased()) }
    }

    /// The field value for `name` (case-insensitive): repeated lines combined in order with `", "`, as RFC 9110
    /// §5.3 reads them (`Cache-Control: max-age=600` and `Cache-Control: no-store` on two lines are one field),
    /// except `Set-Cookie`, which cannot be combined and gives its first line. Setting replaces all values.
    public subscript(name: String) -> String? {
        get {
            // A single line (the usual case) is returned as it is, with no joined copy.
            let combines = !Self.equalNames(name, "set-cookie")
            if let received {
                guard let first = received.firstIndex(of: name) else { return nil }
                guard combines, received.firstIndex(of: name, after: first) != nil else {
                    return received.value(at: first)
                }
                return received.indices(of: name).map(received.value(at:)).joined(separator: ", ")
            }
            let values = storage.lazy.filter { Self.equalNames($0.name, name) }.map(\.value)
            guard let first = values.first else { return nil }
            return combines ? values.joined(separator: ", ") : first
        }
        set {
            if let newValue { replaceOrAdd(name, newValue) } else { remove(name) }
        }
    }

    /// Every value for `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        if let received { return received.indices(of: name).map { received.value(at: $0) } }
        return storage.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        if let received { return received.firstIndex(of: name) != nil }
        return storage.contains { Self.equalNames($0.name, name) }
    }

    public func makeIterator() -> AnyIterator<Field> {
        var index = 0
        let fields = self.fields
        return AnyIterator {
            guard index < fields.count else { return nil }
            defer { index += 1 }
            return (fields[index].name, fields[index].value)
        }
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison without allocating (header names are ASCII tokens).
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a != b, a | 0x20 != b | 0x20 || !((a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) { return false }
            default: return false
            }
        }
    }
}
