import Foundation

/// The links of RFC 8288 `Link` headers, as GitHub and many other APIs send them for pagination.
///
/// ```swift
/// let links = LinkHeader(
///     #"<https://api.github.com/repos?page=3>; rel="next", </repos?page=9>; rel="last""#,
///     baseURL: "https://api.github.com/repos?page=2")
/// links.next   // "https://api.github.com/repos?page=3"
/// links.last   // "https://api.github.com/repos?page=9"  (resolved against the base)
/// ```
///
/// Parsing is forgiving: commas and semicolons inside `<...>` and quoted strings are kept, quoted
/// values are unescaped, relation types are matched case-insensitively and a `rel` may list several
/// (`rel="next last"`); a malformed link (a target with a control character too) is skipped without
/// affecting the others.
public struct LinkHeader: Sendable, Hashable {
    /// The links, in the order they appeared.
    public var links: [Link]

    /// One link: a target and its parameters.
    public struct Link: Sendable, Hashable {
        /// The target URL, resolved against the base URL when relative (and a base was given).
        public var target: String
        /// The relation types, lowercased (`rel="Next Last"` gives `["next", "last"]`).
        public var relations: [String]
        /// Every parameter in order, names lowercased, values unquoted; the first `rel` only.
        public var parameters: [Parameter]

        /// The value of the first parameter named `name` (case-insensitive); `""` for one without a value.
        public func parameter(_ name: String) -> String? {
            let lowered = name.lowercased()
            return parameters.first { $0.name == lowered }?.value
        }
    }

    /// A link parameter.
    public struct Parameter: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    /// Parses one header value (or several joined with commas).
    public init(_ value: String, baseURL: String? = nil) {
        var scanner = LinkScanner(Array(value.unicodeScalars))
        links = scanner.links().map { Self.resolve($0, against: baseURL) }
    }

    /// Parses every `Link` field of `headers`, in order.
    public init(headers: HTTPHeaders, baseURL: String? = nil) {
        self.init(headers.values(for: "Link").joined(separator: ", "), baseURL: baseURL)
    }

    /// The target of the first link with relation `relation` (case-insensitive).
    public func target(rel relation: String) -> String? {
        let lowered = relation.lowercased()
        return links.first { $0.relations.contains(lowered) }?.target
    }

    /// Whether some `rel` parameter in `value` lists `relation` (lowercase), whether or not its link parses: tells
    /// a next link that was skipped as malformed from no next link at all.
    static func names(relation: String, in value: String) -> Bool {
        let text = Array(value.lowercased().utf8)
        let wanted = Array(relation.utf8)
        var index = 0
        while index + 3 <= text.count {
            defer { index += 1 }
            if text[index] == UInt8(ascii: "<") {
                // A target's text (`<…?rel=next>`) is no parameter.
                while index + 1 < text.count, text[index + 1] != UInt8(ascii: ">") { index += 1 }
                continue
            }
            guard text[index] == UInt8(ascii: "r"), text[index + 1] == UInt8(ascii: "e"), text[index + 2] == UInt8(ascii: "l")
            else { continue }
            var at = index + 3
            while at < text.count, text[at] == 0x20 || text[at] == 0x09 { at += 1 }
            guard at < text.count, text[at] == UInt8(ascii: "=") else { continue }
            at += 1
            while at < text.count, text[at] == 0x20 || text[at] == 0x09 { at += 1 }
            let quoted = at < text.count && text[at] == UInt8(ascii: "\"")
            if quoted { at += 1 }
            var end = at
            while end < text.count {
                let byte = text[end]
                if quoted ? byte == UInt8(ascii: "\"") : (byte == UInt8(ascii: ";") || byte == UInt8(ascii: ",")) { break }
                end += 1
            }
            let words = text[at..<end].split { $0 == 0x20 || $0 == 0x09 }
            if words.contains(where: { Array($0) == wanted }) { return true }
        }
        return false
    }

    public var next: String? { target(rel: "next") }
    public var previous: String? { target(rel: "prev") ?? target(rel: "previous") }
    public var first: String? { target(rel: "first") }
    public var last: String? { target(rel: "last") }

    private static func resolve(_ link: Link, against baseURL: String?) -> Link {
        // Absolute targets (GitHub's, most APIs') need no resolution; Foundation's URL is slow on Linux.
        if isAbsoluteHTTP(link.target) { return link }
        guard let baseURL, let base = URL(string: baseURL),
            let resolved = URL(string: link.target, relativeTo: base)?.absoluteString
        else { return link }
        var link = link
        link.target = resolved
        return link
    }
}

/// A single-pass scanner over the header text.
extension LinkHeader {
    /// `http://…` or `https://…` (any case), with an authority.
    static func isAbsoluteHTTP(_ target: String) -> Bool {
        var utf8 = target.utf8[...]
        for expected in "http".utf8 {
            guard let byte = utf8.first, byte | 0x20 == expected else { return false }
            utf8 = utf8.dropFirst()
        }
        if let byte = utf8.first, byte | 0x20 == UInt8(ascii: "s") { utf8 = utf8.dropFirst() }
        return utf8.starts(with: "://".utf8) && utf8.count > 3
    }
}

extension Unicode.Scalar {
    /// Optional whitespace in HTTP header values: space and horizontal tab.
    fileprivate var isHeaderSpace: Bool { self == " " || self == "\t" }
}

struct LinkScanner {
    private let text: [Unicode.Scalar]
    private var index = 0

    init(_ text: [Unicode.Scalar]) {
        self.text = text
    }

    mutating func links() -> [LinkHeader.Link] {
        var result: [LinkHeader.Link] = []
        while true {
            skip { $0 == "," || $0.isHeaderSpace }
            guard index < text.count else { return result }
            if let link = link() { result.append(link) }
            skipToNextLink()
        }
    }

    /// `<target>` then `; name[=value]` pairs, stopping before the comma that ends the link.
    private mutating func link() -> LinkHeader.Link? {
        guard text[index] == "<" else { return nil }
        index += 1
        let start = index
        while index < text.count, text[index] != ">" { index += 1 }
        guard index < text.count else { return nil }
        let target = String(String.UnicodeScalarView(text[start..<index])).trimmingCharacters(in: .whitespaces)
        index += 1
        // A target becomes a request URL: one with a control character (CR, LF, NUL, ...) is malformed.
        if target.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return nil }
        var parameters: [LinkHeader.Parameter] = []
        while true {
            skip { $0.isHeaderSpace }
            guard index < text.count, text[index] == ";" else { break }
            index += 1
            skip { $0.isHeaderSpace }
            let name = token().lowercased()
            skip { $0.isHeaderSpace }
            var value = ""
            if index < text.count, text[index] == "=" {
                index += 1
                skip { $0.isHeaderSpace }
                value = index < text.count && text[index] == "\"" ? quoted() : token()
            }
            guard !name.isEmpty else { continue }
            if name == "rel", parameters.contains(where: { $0.name == "rel" }) { continue }
            parameters.append(LinkHeader.Parameter(name: name, value: value))
        }
        let rel = parameters.first { $0.name == "rel" }?.value ?? ""
        // Split by scalars: a blank after a prepended mark (U+0605) is one Character with it, and a Character
        // split kept the blank inside a relation (found by the link-header fuzz target).
        let relations = rel.lowercased().unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" })
            .map { String(String.UnicodeScalarView($0)) }
        return LinkHeader.Link(target: target, relations: relations, parameters: parameters)
    }

    private mutating func token() -> String {
        let start = index
        while index < text.count {
            switch text[index] {
            case ";", ",", "=", "\"", " ", "\t": break
            default:
                index += 1
                continue
            }
            break
        }
        return String(String.UnicodeScalarView(text[start..<index]))
    }

    private mutating func quoted() -> String {
        index += 1
        var value = String.UnicodeScalarView()
        while index < text.count, text[index] != "\"" {
            if text[index] == "\\", index + 1 < text.count { index += 1 }
            value.append(text[index])
            index += 1
        }
        if index < text.count { index += 1 }
        return String(value)
    }

    /// Skips the rest of a malformed link: up to a comma outside quotes and angle brackets.
    private mutating func skipToNextLink() {
        var inQuotes = false
        var inBrackets = false
        while index < text.count {
            let scalar = text[index]
            if inQuotes {
                if scalar == "\\" { index += 1 } else if scalar == "\"" { inQuotes = false }
            } else if inBrackets {
                if scalar == ">" { inBrackets = false }
            } else if scalar == "\"" {
                inQuotes = true
            } else if scalar == "<" {
                inBrackets = true
            } else if scalar == "," {
                return
            }
            index += 1
        }
    }

    private mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
        while index < text.count, predicate(text[index]) { index += 1 }
    }
}
