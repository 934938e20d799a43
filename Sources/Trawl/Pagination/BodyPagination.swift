import Foundation
import TrawlEngine
import TrawlJSON

/// Pagination in the JSON request body, and GraphQL's Relay connections built on it.
///
/// ```swift
/// // POST {"query": "...", "variables": {"first": 50}}; the cursor goes to variables.after
/// let issues = PaginationStyle.graphQL(connection: "data.repository.issues")
/// // POST {"filter": {...}, "page": {"size": 100, "cursor": "…"}}
/// let search = PaginationStyle.cursor(at: "meta.next", param: "page.cursor", hasMore: nil).inBody()
/// ```
extension PaginationStyle {
    /// The most bytes one value (a cursor) may add to a request body, and the largest body a walk in the body
    /// sends: a server whose cursors grow page after page is refused, not followed.
    public static let maxBodyValueBytes = 65_536
    public static let maxPagedBodyBytes = 1 << 20

    /// A GraphQL walk: `POST` the query with its variables; the items are the connection's `nodes`, or its
    /// `edges` (each item decoded from the edge's `node`, ``itemsAreEdges(at:)``); `pageInfo.endCursor` goes to the variable `cursorVariable` while
    /// `pageInfo.hasNextPage` is true. An answer with `errors` fails its page (``rejection(of:)``), and
    /// `hasNextPage: true` without a cursor fails the walk.
    ///
    /// ```swift
    /// let style = PaginationStyle.graphQL(connection: "data.repository.issues", cursorVariable: "after")
    /// ```
    public static func graphQL(connection: JSONKeyPath, cursorVariable: String = "after") -> PaginationStyle {
        let info = connection.components + [.key("pageInfo")]
        var style = PaginationStyle.cursor(
            at: JSONKeyPath(components: info + [.key("endCursor")]),
            param: JSONKeyPath(components: [.key("variables"), .key(cursorVariable)]).description,
            hasMore: JSONKeyPath(components: info + [.key("hasNextPage")])
        ).inBody()
        style.graphQLConnection = connection
        return style
    }

    /// `request` with the style's parameter `param` set to `value`: in the query, or at the key path `param` of
    /// the JSON body (a number as a JSON number, a cursor as a string).
    func placing(_ param: String, _ value: String, number: Bool, in request: Request) -> Request {
        guard inBody else { return request.settingQuery(param, to: value) }
        let json: JSONValue = number ? .number(value) : .string(value)
        return request.settingBody(JSONKeyPath(param), to: json) ?? request
    }

    /// The request of the page at `position` made from `base` again (a resumed walk keeps the URL and the position,
    /// not the body): for a walk in the body, `base`'s body with the position (and page size) set; else `base`.
    package func request(_ base: Request, at position: PagePosition) -> Request {
        guard inBody else { return base }
        switch (kind, position) {
        case (.page(let param, _, let sizeParam, let size, _, _, _), .number(let number)):
            var request = placing(param, String(number), number: true, in: base)
            if let sizeParam, let size { request = placing(sizeParam, String(size), number: true, in: request) }
            return request
        case (.offset(let param, let limitParam, let limit, _), .offset(let offset)):
            var request = placing(param, String(offset), number: true, in: base)
            if let limit { request = placing(limitParam, String(limit), number: true, in: request) }
            return request
        case (.cursor(_, let param, _), .cursor(let cursor?)):
            return placing(param, cursor, number: false, in: base)
        default:
            return base
        }
    }

    /// A GraphQL walk read at its connection's `edges` (`data.repository.issues.edges`): each item is the edge's
    /// `node`. (Read at `nodes`, or any other path, the elements are the items.)
    public func itemsAreEdges(at itemsPath: JSONKeyPath) -> Bool {
        guard let connection = graphQLConnection else { return false }
        return itemsPath.components == connection.components + [.key("edges")]
    }

    /// What makes the page itself unusable, so that none of its items may be written: a GraphQL answer with
    /// `errors` (partial data is not the page), or one without the connection. `nil` for any other style.
    public func rejection(of page: PageResponse) -> String? {
        guard let connection = graphQLConnection else { return nil }
        if let errors = GraphQLAnswer.errors(in: page.captured) { return errors }
        guard case .cursor(_, _, let hasMore?) = kind else { return nil }
        if page.captured[hasMore] == nil || page.captured[hasMore] == .null {
            return "the GraphQL answer has no connection at '\(connection)' (no pageInfo.hasNextPage there)"
        }
        return nil
    }
}

/// What trawl reads of a GraphQL answer beside the connection: its first error, the rate limit as GitHub
/// reports it (`data.rateLimit { remaining resetAt }`, when the query asks for it), and the query cost as Shopify
/// reports it (`extensions.cost { requestedQueryCost throttleStatus { currentlyAvailable restoreRate } }`).
public enum GraphQLAnswer {
    static let firstError: JSONKeyPath = "errors.0"
    public static let rateLimitRemaining: JSONKeyPath = "data.rateLimit.remaining"
    public static let rateLimitResetAt: JSONKeyPath = "data.rateLimit.resetAt"
    public static let costRequested: JSONKeyPath = "extensions.cost.requestedQueryCost"
    public static let costAvailable: JSONKeyPath = "extensions.cost.throttleStatus.currentlyAvailable"
    public static let costRestoreRate: JSONKeyPath = "extensions.cost.throttleStatus.restoreRate"
    static let capturePaths: [JSONKeyPath] = [
        firstError, rateLimitRemaining, rateLimitResetAt, costRequested, costAvailable, costRestoreRate,
    ]

    /// What fails the page of an answer with `errors` (its first error's message, bounded and escaped), or `nil`
    /// when the answer (as `captured` from it) has none.
    public static func errors(in captured: [JSONKeyPath: JSONValue]) -> String? {
        guard let error = captured[firstError], error != .null else { return nil }
        return "the GraphQL answer holds errors: " + message(of: error)
    }

    /// Whether the answer's first error says `THROTTLED` (`errors[0].extensions.code`, as Shopify refuses a query
    /// its cost bucket cannot pay for): the page is to be asked again once the bucket refills, not failed.
    ///
    /// ```swift
    /// GraphQLAnswer.isThrottled(["errors.0": .object(["extensions": .object(["code": .string("THROTTLED")])])])
    /// ```
    public static func isThrottled(_ captured: [JSONKeyPath: JSONValue]) -> Bool {
        captured[firstError]?["extensions"]?["code"]?.stringValue == "THROTTLED"
    }
    /// The longest error message kept (the server's text is hostile: long, nested, with control characters).
    static let messageLimit = 300

    /// The first error's `message` (else the error itself as JSON), control characters escaped, at most
    /// ``messageLimit`` characters.
    static func message(of error: JSONValue) -> String {
        let text = error["message"]?.stringValue ?? String(decoding: error.json.prefix(4 * messageLimit), as: UTF8.self)
        var shown = ""
        for scalar in text.unicodeScalars {
            if shown.unicodeScalars.count >= messageLimit {
                shown += "…"
                break
            }
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                shown += "\\u" + String(format: "%04X", scalar.value)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return "\"" + shown + "\""
    }
}

extension Request {
    /// This request with the value at `path` of its JSON object body set to `value` (objects made on the way);
    /// `nil` when the body is not a JSON object held in memory, or the result would pass
    /// `PaginationStyle.maxPagedBodyBytes`.
    ///
    /// ```swift
    /// let first = Request(url: url, method: .post, body: .string(#"{"q":"x"}"#, contentType: "application/json"))
    /// first.settingBody("page.cursor", to: .string("abc"))?.body   // {"page":{"cursor":"abc"},"q":"x"}
    /// ```
    public func settingBody(_ path: JSONKeyPath, to value: JSONValue) -> Request? {
        guard !path.components.isEmpty, let bytes = body?.bytes,
            case .object(let members)? = try? JSONItemDecoder().decode(JSONValue.self, from: bytes)
        else { return nil }
        func set(_ object: [String: JSONValue], _ rest: ArraySlice<JSONKeyPath.Component>) -> [String: JSONValue] {
            guard let first = rest.first else { return object }
            let key: String
            switch first {
            case .key(let text): key = text
            case .index(let index): key = String(index)
            }
            var object = object
            if rest.count == 1 {
                object[key] = value
            } else {
                var inner: [String: JSONValue] = [:]
                if case .object(let existing)? = object[key] { inner = existing }
                object[key] = .object(set(inner, rest.dropFirst()))
            }
            return object
        }
        let edited = JSONValue.object(set(members, path.components[...])).json
        guard edited.count <= PaginationStyle.maxPagedBodyBytes else { return nil }
        var copy = self
        copy.body = .bytes(edited, contentType: body?.contentType ?? "application/json")
        return copy
    }

    /// Whether the body is a JSON object held in memory (what a walk in the body needs).
    public var hasJSONObjectBody: Bool {
        guard let bytes = body?.bytes, case .object? = try? JSONItemDecoder().decode(JSONValue.self, from: bytes)
        else { return false }
        return true
    }
}

/// Lets `.graphQL(connection:)` be written where any strategy is expected.
extension PaginationStrategy where Self == PaginationStyle {
    public static func graphQL(connection: JSONKeyPath, cursorVariable: String = "after") -> PaginationStyle {
        PaginationStyle.graphQL(connection: connection, cursorVariable: cursorVariable)
    }
}

extension PaginationDetection {
    /// A GraphQL answer's Relay connection: an object under `data` (at most four keys deep) with
    /// `pageInfo.hasNextPage` a boolean and `nodes` or `edges` an array. Walked as ``PaginationStyle/graphQL``,
    /// its items the `nodes` (else the `edges`, whose `node` the caller unwraps).
    static func relayConnection(_ body: JSONValue) -> PaginationDetection? {
        guard case .object(let root) = body, case .object? = root["data"] else { return nil }
        func find(_ value: JSONValue, _ path: [String], depth: Int) -> [String]? {
            guard case .object(let members) = value, depth <= 4 else { return nil }
            if case .bool? = members["pageInfo"]?["hasNextPage"] {
                if case .array? = members["nodes"] { return path }
                if case .array? = members["edges"] { return path }
            }
            for key in members.keys.sorted() {
                if let found = find(members[key] ?? .null, path + [key], depth: depth + 1) { return found }
            }
            return nil
        }
        guard let path = find(root["data"] ?? .null, ["data"], depth: 1) else { return nil }
        let connection = keyPath(path)
        let list: String
        if case .array? = value(body, path + ["nodes"]) { list = "nodes" } else { list = "edges" }
        let items = keyPath(path + [list])
        var style = PaginationStyle.graphQL(connection: connection)
        let endCursor = keyPath(path + ["pageInfo", "endCursor"])
        style.expectedPath = endCursor
        var count = 0
        if case .array(let elements)? = value(body, path + [list]) { count = elements.count }
        return PaginationDetection(
            style: style, items: items, isSinglePage: false,
            settings: [Setting(name: "graphql_connection", value: connection.description)], readsPath: endCursor,
            firstPageItems: count)
    }
}
