import Foundation

/// Hides credentials in URLs and headers before they are logged or printed.
///
/// ```swift
/// Redaction.url("https://x.io/a?api_key=s3cret&q=1", names: Redaction.defaultQueryNames)
/// // "https://x.io/a?api_key=REDACTED&q=1"
/// ```
public enum Redaction {
    public static let placeholder = "REDACTED"

    /// Header names (lowercased) whose values are hidden by default.
    public static let defaultHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
    ]

    /// Query parameter names (lowercased) whose values are hidden by default.
    public static let defaultQueryNames: Set<String> = [
        "api_key", "apikey", "key", "token", "access_token", "refresh_token", "id_token", "client_secret",
        "password", "secret", "signature", "sig", "auth", "session_id", "sessionid", "auth_token", "private_token",
        "session_token",
        // Signed URLs (S3's and Google Cloud Storage's query signing).
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    ]

    /// The URL with the values of the named query parameters (compared case-insensitively) replaced,
    /// and any `user:password@` hidden.
    public static func url(_ url: String, names: Set<String>) -> String {
        var text = Substring(url)
        var fragment = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = String(text[hash...])
            text = text[..<hash]
        }
        var base = String(text)
        var query: Substring?
        if let mark = text.firstIndex(of: "?") {
            base = String(text[..<mark])
            query = text[text.index(after: mark)...]
        }
        base = hideUserInfo(base)
        guard let query else { return base + fragment }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals].removingPercentEncoding ?? String(pair[..<equals])
            guard names.contains(name.lowercased()) || names.contains(name.lowercased().replacing("[]", with: "")),
                // A `${NAME}` placeholder (a job's redacted environment secret) is not a secret itself.
                !pair[pair.index(after: equals)...].hasPrefix("${")
            else { return String(pair) }
            return pair[..<equals] + "=" + placeholder
        }
        return base + "?" + pairs.joined(separator: "&") + fragment
    }

    /// The query parameter names hidden for `request`: the defaults and those it marks sensitive (lowercased).
    ///
    /// ```swift
    /// var request = Request(url: "https://x.io/a?apiToken=s3cret")
    /// request.sensitiveQueryParameters = ["apiToken"]
    /// Redaction.url(request.url, names: Redaction.queryNames(for: request))   // "https://x.io/a?apiToken=REDACTED"
    /// ```
    public static func queryNames(for request: Request) -> Set<String> {
        defaultQueryNames.union(request.sensitiveQueryParameters.map { $0.lowercased() })
    }

    /// Free text (an error's description, a log message) with every URL in it redacted as ``url(_:names:)``
    /// does. A URL runs from its scheme to the next space or quote; closing punctuation after it is kept.
    ///
    /// ```swift
    /// Redaction.text("GET https://x.io/a?token=s3cret: timed out", names: Redaction.defaultQueryNames)
    /// // "GET https://x.io/a?token=REDACTED: timed out"
    /// ```
    public static func text(_ text: String, names: Set<String>) -> String {
        guard text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let marker = rest.range(of: "://") {
            var start = marker.lowerBound
            while start > rest.startIndex {
                let before = rest.index(before: start)
                let character = rest[before]
                guard character.isLetter || character.isNumber || "+-.".contains(character) else { break }
                start = before
            }
            var end = marker.upperBound
            while end < rest.endIndex, !rest[end].isWhitespace, !"\"'<>`".contains(rest[end]) {
                end = rest.index(after: end)
            }
            var urlEnd = end
            while urlEnd > marker.upperBound, ".,;:)]}".contains(rest[rest.index(before: urlEnd)]) {
                urlEnd = rest.index(before: urlEnd)
            }
            out += rest[..<start]
            out += url(String(rest[start..<urlEnd]), names: names)
            out += rest[urlEnd..<end]
            rest = rest[end...]
        }
        return out + rest
    }

    /// The headers with the values of the named ones (compared case-insensitively) replaced.
    public static func headers(_ headers: HTTPHeaders, names: Set<String>) -> HTTPHeaders {
        HTTPHeaders(headers.map { field in
            (field.name, names.contains(field.name.lowercased()) ? placeholder : field.value)
        })
    }

    private static func hideUserInfo(_ base: String) -> String {
        guard let schemeEnd = base.range(of: "://") else { return base }
        let rest = base[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return base }
        return base[..<schemeEnd.upperBound] + placeholder + rest[at...]
    }
}
