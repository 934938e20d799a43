import Trawl

/// A parsed job template: literal text, matrix parameters `{name}` / `{axis.end}` and environment variables
/// `${NAME}`.
///
/// A `{` that is not followed by a name and `}` is literal text, so JSON bodies keep their braces:
/// `{"q":"{org}"}` expands `{org}` only. (Write `{ login }` with spaces for a literal word in braces.) A `{name`
/// running to the end of the text, or a `${` not followed by `NAME}`, is an error.
package struct JobTemplate: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        /// `org`, or `day.end` for an axis's extra binding.
        case parameter(String)
        case environment(String)
    }

    let text: String
    let segments: [Segment]

    init(parsing text: String) throws(JobSpecError) {
        self.text = text
        let scalars = Array(text.unicodeScalars)
        var segments: [Segment] = []
        var literal = String.UnicodeScalarView()
        func flush() {
            if !literal.isEmpty {
                segments.append(.literal(String(literal)))
                literal = String.UnicodeScalarView()
            }
        }
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "$", index + 1 < scalars.count, scalars[index + 1] == "{" {
                let end = Self.identifierEnd(scalars, from: index + 2)
                guard end > index + 2, end < scalars.count, scalars[end] == "}" else {
                    let shown = String(String.UnicodeScalarView(scalars[index..<min(scalars.count, end + 1)]))
                    throw JobSpecError(
                        "'\(shown)' is not an environment variable reference",
                        hint: "write ${NAME} with a name of letters, digits and _, as in ${GITHUB_TOKEN}")
                }
                flush()
                segments.append(.environment(String(String.UnicodeScalarView(scalars[(index + 2)..<end]))))
                index = end + 1
                continue
            }
            if scalar == "{" {
                var end = Self.identifierEnd(scalars, from: index + 1)
                // `{axis.end}`, or a parent item's key path `{users.owner.login}`.
                while end > index + 1, end + 1 < scalars.count, scalars[end] == "." {
                    let fieldEnd = Self.identifierEnd(scalars, from: end + 1)
                    guard fieldEnd > end + 1 else { break }
                    end = fieldEnd
                }
                if end > index + 1 {
                    if end < scalars.count, scalars[end] == "}" {
                        flush()
                        segments.append(.parameter(String(String.UnicodeScalarView(scalars[(index + 1)..<end]))))
                        index = end + 1
                        continue
                    }
                    if end >= scalars.count || (scalars[end] == "." && end + 1 == scalars.count) {
                        let shown = String(String.UnicodeScalarView(scalars[index...]))
                        throw JobSpecError("unclosed '\(shown)'", hint: "close the parameter with '}'")
                    }
                }
            }
            literal.append(scalar)
            index += 1
        }
        flush()
        self.segments = segments
    }

    /// This template with each `{name}` that `known` does not accept turned back into the text it was: the command
    /// line sends a body or a header as given, as curl sends `-d` and `-H`, and expands only its `--matrix` axes.
    func literalizing(unless known: (String) -> Bool) -> JobTemplate {
        JobTemplate(
            text: text,
            segments: segments.map { segment in
                if case .parameter(let name) = segment, !known(name) { return .literal("{\(name)}") }
                return segment
            })
    }

    private init(text: String, segments: [Segment]) {
        self.text = text
        self.segments = segments
    }

    /// The parameter names used, in order of first use.
    var parameters: [String] {
        var seen: Set<String> = []
        return segments.compactMap {
            guard case .parameter(let name) = $0, seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// The environment variable names used, in order of first use.
    var environmentNames: [String] {
        var seen: Set<String> = []
        return segments.compactMap {
            guard case .environment(let name) = $0, seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// The text with every parameter and variable substituted; parameter values are percent-encoded for a URL
    /// component when `encodingParameters` (environment values never are).
    func expand(parameters: [String: String], environment: [String: String], encodingParameters: Bool)
        throws(JobSpecError) -> String
    {
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let text):
                out += text
            case .parameter(let name):
                guard let value = parameters[name] else {
                    throw JobSpecError("'{\(name)}' names no matrix parameter")
                }
                out += encodingParameters ? PercentEncoding.queryComponent(value) : value
            case .environment(let name):
                guard let value = environment[name] else {
                    throw JobSpecError(
                        "environment variable \(name) is not set", hint: "export \(name) before running the job")
                }
                out += value
            }
        }
        return out
    }

    /// Whether a `{` followed by `scalar` may open a template parameter `{name}`.
    package static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
    }

    /// Whether `text` is a name usable as `{name}` or `${NAME}`.
    static func isIdentifier(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        return !scalars.isEmpty && identifierEnd(scalars, from: 0) == scalars.count
    }

    private static func identifierEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        guard start < scalars.count, isIdentifierStart(scalars[start]) else { return start }
        var end = start + 1
        while end < scalars.count, isIdentifierPart(scalars[end]) { end += 1 }
        return end
    }
}

/// FNV-1a, 64 bits: a hash that is the same in every process (unlike `Hasher`).
enum FNV1a {
    static func hash64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func hex64(_ text: String) -> String {
        let digits = String(hash64(text), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
