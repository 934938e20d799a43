import Trawl

extension Job {
    /// A stable hex digest (FNV-1a, 64 bits) of everything that changes the job's output: each source's name,
    /// method, URL, header and body templates (unexpanded, so never a secret), pagination, items, side fields,
    /// matrix and caps. Settings (concurrency, rates, retries, timeouts) are left out. The same job gives the same
    /// fingerprint in every process; a checkpoint made for another fingerprint is not resumed.
    ///
    /// ```swift
    /// job.fingerprint   // "3f9c0a1d5e7b2c48"
    /// ```
    public var fingerprint: String {
        FNV1a.hex64(canonicalDescription)
    }

    /// One line per field, with fields separated by a unit separator so no template text can imitate another.
    var canonicalDescription: String {
        var lines = ["trawl-job v1"]
        func field(_ name: String, _ value: String) {
            lines.append("\(name)\u{1F}\(value.utf8.count)\u{1F}\(value)")
        }
        for source in sources {
            field("source", source.name)
            field("method", source.method.rawValue)
            field("url", source.url)
            for header in source.headers {
                field("header", header.name)
                field("value", header.value)
            }
            if let body = source.body { field("body", body) }
            field("paginate", source.pagination.canonicalDescription)
            field("items", source.items.description)
            for side in source.side { field("side", side.description) }
            // Only when set, so that the fingerprints of jobs without caps stay as they were.
            if let maxItems = source.maxItems { field("max_items", String(maxItems)) }
            if let maxPages = source.maxPages { field("max_pages", String(maxPages)) }
            if let incremental = source.incremental { field("incremental", incremental.canonicalDescription) }
            if let primaryKey = source.primaryKey { field("primary_key", primaryKey.description) }
            if let parent = source.parent { field("parent", parent) }
            for path in source.includeFromParent { field("include_from_parent", path.description) }
            for axis in source.matrix {
                field("axis", axis.name)
                for value in axis.values {
                    field("v", value.value)
                    for extra in value.extra { field("x", "\(extra.name)=\(extra.value)") }
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Every environment variable the templates use (`${NAME}`), in order of first use.
    ///
    /// ```swift
    /// job.secretNames   // ["GITHUB_TOKEN"]
    /// ```
    public var secretNames: [String] {
        var seen: Set<String> = []
        var names: [String] = []
        let texts = sources.flatMap { [$0.url] + $0.headers.map(\.value) + ($0.body.map { [$0] } ?? []) }
        for text in texts + authTemplateTexts {
            guard let template = try? JobTemplate(parsing: text) else { continue }
            for name in template.environmentNames where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// A redactor for the values the templates take from `environment`.
    ///
    /// ```swift
    /// let redactor = job.redactor(environment: ["GITHUB_TOKEN": "ghp_abc"])
    /// redactor.redact("Bearer ghp_abc")   // "Bearer ${GITHUB_TOKEN}"
    /// ```
    public func redactor(environment: [String: String]) -> Redactor {
        // An OAuth2 client id or scope is an identifier, not a secret: not hidden (unless a secret uses it too).
        let identifiers = Set(identifierTemplateNames).subtracting(secretTemplateNames)
        return Redactor(
            secrets: secretNames.filter { !identifiers.contains($0) }.compactMap { name in
                environment[name].map { (name, $0) }
            })
    }

    /// The `${NAME}`s of `auth:`'s `client_id` and `scope`.
    private var identifierTemplateNames: [String] {
        ([settings.auth] + sources.map(\.auth)).compactMap { $0 }.flatMap { auth in
            auth.templates.filter { $0.key == "client_id" || $0.key == "scope" }.flatMap { template in
                (try? JobTemplate(parsing: template.text))?.environmentNames ?? []
            }
        }
    }

    /// The `${NAME}`s of every other template (URLs, headers, bodies, the token URL and client secret).
    private var secretTemplateNames: [String] {
        let auth = ([settings.auth] + sources.map(\.auth)).compactMap { $0 }.flatMap { auth in
            auth.templates.filter { $0.key != "client_id" && $0.key != "scope" }.map(\.text)
        }
        let texts = sources.flatMap { [$0.url] + $0.headers.map(\.value) + ($0.body.map { [$0] } ?? []) } + auth
        return texts.flatMap { (try? JobTemplate(parsing: $0))?.environmentNames ?? [] }
    }
}

/// Replaces secret values with `${NAME}` in text that is about to be persisted (next-page URLs from servers,
/// error messages), and puts them back when the text is used again.
///
/// A value's percent-encoded form (as it appears in a URL, when that differs from the value) becomes
/// `${NAME:url}` so that `unredact` restores the encoded form and the URL stays valid. Empty values are never
/// redacted.
///
/// ```swift
/// let redactor = Redactor(secrets: [("API_KEY", "k/1+2")])
/// let saved = redactor.redact("https://x.test/items?key=k%2F1%2B2&page=3")
/// // "https://x.test/items?key=${API_KEY:url}&page=3"
/// redactor.unredact(saved)   // "https://x.test/items?key=k%2F1%2B2&page=3"
/// ```
public struct Redactor: Sendable {
    private struct Replacement: Sendable {
        var secret: String
        var placeholder: String
    }

    /// Longest secrets first, so a value that contains another is replaced whole.
    private let replacements: [Replacement]
    private let restorations: [Replacement]

    /// `secrets` are `(NAME, value)` pairs.
    public init(secrets: [(String, String)]) {
        var replacements: [Replacement] = []
        var restorations: [Replacement] = []
        for (name, value) in secrets where !value.isEmpty {
            replacements.append(Replacement(secret: value, placeholder: "${\(name)}"))
            restorations.append(Replacement(secret: value, placeholder: "${\(name)}"))
            let encoded = PercentEncoding.queryComponent(value)
            guard encoded != value else { continue }
            let placeholder = "${\(name):url}"
            restorations.append(Replacement(secret: encoded, placeholder: placeholder))
            var variants = [encoded, Self.lowercasingEscapes(encoded), PercentEncoding.formComponent(value)]
            variants = variants.enumerated().filter { variants.firstIndex(of: $0.element) == $0.offset }.map(\.element)
            for variant in variants where variant != value {
                replacements.append(Replacement(secret: variant, placeholder: placeholder))
            }
        }
        self.replacements = replacements.sorted { $0.secret.utf8.count > $1.secret.utf8.count }
        self.restorations = restorations
    }

    /// Whether there is anything to redact.
    public var isEmpty: Bool { replacements.isEmpty }

    /// Values shorter than this are replaced only where they stand whole (a query value, a header value, a
    /// path segment), never inside other text: `a` is no reason to garble `page` into `p${ID}ge`, and doing so
    /// would show the value to anyone who compares the two.
    public static let minimumInnerLength = 8

    /// `text` with every secret value replaced by its placeholder.
    public func redact(_ text: String) -> String {
        var text = text
        for replacement in replacements where text.contains(replacement.secret) {
            if replacement.secret.count >= Self.minimumInnerLength {
                text = text.replacing(replacement.secret, with: replacement.placeholder)
            } else {
                text = Self.replacingWhole(replacement.secret, with: replacement.placeholder, in: text)
            }
        }
        return text
    }

    /// Characters that continue a word around a short value (letters, digits and those a token or host holds).
    private static func continuesWord(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || "-_.~%+${}".contains(character)
    }

    /// `text` with each occurrence of `value` that no word character touches on either side replaced.
    static func replacingWhole(_ value: String, with placeholder: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: value) {
            let before = range.lowerBound == rest.startIndex ? result.last : rest[rest.index(before: range.lowerBound)]
            let after = range.upperBound == rest.endIndex ? nil : rest[range.upperBound]
            let whole = !(before.map(continuesWord) ?? false) && !(after.map(continuesWord) ?? false)
            result += rest[..<range.lowerBound]
            result += whole ? placeholder : String(rest[range])
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    /// `text` with every placeholder replaced by its secret value (the reverse of `redact`).
    public func unredact(_ text: String) -> String {
        guard text.contains("${") else { return text }
        var text = text
        for restoration in restorations where text.contains(restoration.placeholder) {
            text = text.replacing(restoration.placeholder, with: restoration.secret)
        }
        return text
    }

    private static func lowercasingEscapes(_ encoded: String) -> String {
        var out = ""
        var remaining = 0
        for character in encoded {
            if character == "%" {
                remaining = 2
                out.append(character)
            } else if remaining > 0 {
                remaining -= 1
                out += character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}

extension Redactor {
    /// `text` (a stored URL, a `Link` value, a captured JSON value) with each `NAME=REDACTED` query parameter that
    /// `baseURL` (the unit's own URL, from the job) carries given its value there again: literal secrets are
    /// never stored, and a resumed walk takes them from the job it is given.
    ///
    /// ```swift
    /// Redactor.restoringLiterals("https://x.io/a?api_key=REDACTED&page=4", from: "https://x.io/a?api_key=k1")
    /// // "https://x.io/a?api_key=k1&page=4"
    /// ```
    static func restoringLiterals(_ text: String, from baseURL: String) -> String {
        let marker = "=" + Redaction.placeholder
        guard text.contains(marker), let mark = baseURL.firstIndex(of: "?") else { return text }
        var result = text
        let query = baseURL[baseURL.index(after: mark)...].prefix { $0 != "#" }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1] != Redaction.placeholder else { continue }
            for separator in ["?", "&"] {
                result = result.replacingOccurrences(
                    of: separator + parts[0] + marker, with: separator + parts[0] + "=" + parts[1])
            }
        }
        return result
    }
}
