/// A dot-separated path to a value inside a JSON document.
///
/// Components are object keys and array indices; a negative index counts from the end of its
/// array, and `""` (or `"$"`) names the document root:
///
/// ```swift
/// let items: JSONKeyPath = "data.results"   // {"data": {"results": [...]}}
/// let lastID: JSONKeyPath = "data.-1.id"     // the id of the last element of data
/// let root: JSONKeyPath = ""                 // a document that is itself an array
/// ```
///
/// A numeric component such as `0` matches the element at that index when the container is an
/// array and the key `"0"` when it is an object. Write `\.` for a dot inside a key and `\\` for
/// a backslash. A leading `$.` is accepted and ignored, so `"$.items"` equals `"items"`.
public struct JSONKeyPath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One step of a key path.
    public enum Component: Sendable, Hashable {
        /// An object key.
        case key(String)
        /// An array index (negative counts from the end); also matches the object key of the same text.
        case index(Int)

        /// The text an object key must have to match this component.
        var keyText: String {
            switch self {
            case .key(let key): return key
            case .index(let index): return String(index)
            }
        }
    }

    /// The components, outermost first; empty for the root.
    public var components: [Component]

    /// The root of the document.
    public static let root = JSONKeyPath(components: [])

    /// Creates a key path from its components.
    public init(components: [Component]) {
        self.components = components
    }

    /// Parses the dot-separated form: `"items"`, `"data.results"`, `"data.-1.id"`, `""` or `"$"`.
    public init(_ text: String) {
        var body = Substring(text)
        if body == "$" {
            body = ""
        } else if body.hasPrefix("$.") {
            body = body.dropFirst(2)
        }
        guard !body.isEmpty else {
            self.components = []
            return
        }
        var components: [Component] = []
        var current = ""
        var escaped = false
        var wasEscaped = false
        for character in body {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
                wasEscaped = true
            } else if character == "." {
                components.append(Self.component(current, literal: wasEscaped))
                current = ""
                wasEscaped = false
            } else {
                current.append(character)
            }
        }
        if escaped { current.append("\\") }
        components.append(Self.component(current, literal: wasEscaped))
        self.components = components
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The dot-separated form; `$` for the root.
    public var description: String {
        guard !components.isEmpty else { return "$" }
        return components.map { component in
            switch component {
            case .index(let index): return String(index)
            case .key(let key):
                var escaped = ""
                for character in key {
                    if character == "." || character == "\\" { escaped.append("\\") }
                    escaped.append(character)
                }
                return escaped
            }
        }.joined(separator: ".")
    }

    private static func component(_ text: String, literal: Bool) -> Component {
        if !literal, let index = Int(text), String(index) == text {
            return .index(index)
        }
        return .key(text)
    }
}
