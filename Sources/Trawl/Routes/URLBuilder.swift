/// Joins a base URL, a path and query parameters into one exact URL.
///
/// ```swift
/// URLBuilder.url(base: "https://api.example.com/v1/", path: "/users", query: ["q": "a b"], arrays: .repeated)
/// // "https://api.example.com/v1/users?q=a%20b"
/// ```
public enum URLBuilder {
    /// One slash between base and path whatever each side has; the query keeps the parameters' order and
    /// follows any query the base already holds.
    public static func url(base: String, path: RoutePath, query: QueryParameters, arrays: ArrayEncoding) -> String {
        var (baseText, baseQuery) = split(base)
        var pathText = Substring(path.encoded)
        while pathText.hasPrefix("/") { pathText = pathText.dropFirst() }
        if !pathText.isEmpty {
            while baseText.hasSuffix("/") { baseText.removeLast() }
            baseText += "/" + pathText
        }
        let pairs = query.pairs(arrays: arrays).map {
            PercentEncoding.queryComponent($0.name) + "=" + PercentEncoding.queryComponent($0.value)
        }
        var queryText = baseQuery ?? ""
        if !pairs.isEmpty {
            queryText += (queryText.isEmpty ? "" : "&") + pairs.joined(separator: "&")
        }
        return queryText.isEmpty ? baseText : baseText + "?" + queryText
    }

    /// A form body (`application/x-www-form-urlencoded`) from parameters, in order.
    public static func formBody(_ parameters: QueryParameters, arrays: ArrayEncoding) -> String {
        parameters.pairs(arrays: arrays).map {
            PercentEncoding.formComponent($0.name) + "=" + PercentEncoding.formComponent($0.value)
        }.joined(separator: "&")
    }

    private static func split(_ base: String) -> (String, String?) {
        guard let mark = base.firstIndex(of: "?") else { return (base, nil) }
        return (String(base[..<mark]), String(base[base.index(after: mark)...]))
    }
}
