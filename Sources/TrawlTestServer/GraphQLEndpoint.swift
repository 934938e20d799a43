import Foundation
import NIOCore

/// Pagination in the request body, for GraphQL and JSON-body walks (`POST` only; the body is read as JSON).
///
/// - `POST /graphql?n=N[&per_page=K][&errors_at=P][&error=TEXT][&null_cursor_at=P][&remaining=R][&delay=MS]`:
///   a Relay connection of N items `{"id":I,"name":"item-I"}` under `data.items`. No GraphQL parser: the body's
///   `variables.after` (or the variable `?cursor_variable=` names) is the cursor and `variables.first` the page
///   size (default K, 10); the answer has `nodes` and/or `edges{cursor node}` as the query text names them,
///   `pageInfo{hasNextPage endCursor}` and, when the query names `rateLimit`, `rateLimit{remaining resetAt}`
///   (R less one per page; `reset_in=S` resets it S seconds from now). Page P (from 1) answers `errors` beside its data (`errors_at`, message `error`,
///   `huge` for 100 KB nested with control characters), or `hasNextPage: true` with a null cursor
///   (`null_cursor_at`); with `errors_times=T` only the first T requests of page P do. `cost=C[&bucket=B]
///   [&restore=R]` adds Shopify's `extensions.cost` (the bucket holds B - C * page); `throttled_at=P
///   [&throttled_times=T]` refuses page P with a `THROTTLED` error the first T (1) times.
/// - `POST /bodypaged?n=N`: items `{"id":I}` by the body's `page.cursor` (an opaque `cN`), `page.number` (from 1)
///   or `offset`, `page.size`/`limit` per page (default 10): `{"items":[…],"meta":{"next":"c…"|null,"total":N}}`.
///   A body that is not a JSON object answers 400.
enum GraphQLEndpoint {
    static let paths = ["/graphql", "/bodypaged"]

    static func response(for request: InboundRequest, book: RequestBook) -> Response {
        guard request.head.method == .POST else {
            return .error(405, "use POST with a JSON body", [], headers: [("Allow", "POST")])
        }
        let bytes = Data(request.body.readableBytesView)
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            return .error(400, "the body is not a JSON object")
        }
        var response =
            request.target.path == "/graphql"
            ? graphQL(request.target, object, book: book) : bodyPaged(request.target, object)
        if let delay = request.target.int("delay") { response.delay = .milliseconds(Int64(delay)) }
        return response
    }

    private static func item(_ id: Int) -> String {
        JSONText.object([("id", String(id)), ("name", JSONText.string("item-\(id)"))])
    }

    private static func graphQL(_ target: RequestTarget, _ body: [String: Any], book: RequestBook) -> Response {
        let total = max(0, target.int("n") ?? 25)
        let query = body["query"] as? String ?? ""
        let variables = body["variables"] as? [String: Any] ?? [:]
        let cursor = variables[target.value("cursor_variable") ?? "after"] as? String
        let size = max(1, (variables["first"] as? Int) ?? target.int("per_page") ?? 10)
        var start = 0
        if let cursor {
            guard cursor.hasPrefix("c"), let last = Int(cursor.dropFirst()), last >= 0 else {
                return .json(200, JSONText.object([
                    ("data", "null"),
                    ("errors", "[" + JSONText.object([("message", JSONText.string("bad cursor \(cursor)"))]) + "]"),
                ]))
            }
            start = last + 1
        }
        let page = start / size + 1
        let ids = Array(stride(from: start + 1, through: min(total, start + size), by: 1))
        var hasNext = start + size < total
        var endCursor = ids.isEmpty ? "null" : JSONText.string("c\(start + ids.count - 1)")
        if target.int("null_cursor_at") == page {
            hasNext = true
            endCursor = "null"
        }
        var connection: [(String, String)] = []
        let edges = query.contains("edges")
        if query.contains("nodes") || !edges { connection.append(("nodes", "[" + ids.map(item).joined(separator: ",") + "]")) }
        if edges {
            let list = ids.map { id in
                JSONText.object([("cursor", JSONText.string("c\(id - 1)")), ("node", item(id))])
            }
            connection.append(("edges", "[" + list.joined(separator: ",") + "]"))
        }
        connection.append(("pageInfo", JSONText.object([("hasNextPage", hasNext ? "true" : "false"), ("endCursor", endCursor)])))
        connection.append(("totalCount", String(total)))
        var data: [(String, String)] = [("items", JSONText.object(connection))]
        if query.contains("rateLimit") {
            let remaining = (target.int("remaining") ?? 5000) - page
            // `reset_in=S`: the limit resets S seconds from now (else in 2030).
            let resetAt = target.int("reset_in").map {
                ISO8601DateFormatter().string(from: Date(timeIntervalSinceNow: Double($0)))
            } ?? "2030-01-01T00:00:00Z"
            data.append(("rateLimit", JSONText.object([
                ("remaining", String(remaining)), ("resetAt", JSONText.string(resetAt)),
            ])))
        }
        var answer: [(String, String)] = [("data", JSONText.object(data))]
        // `cost=C`: Shopify's `extensions.cost`, each page costing C from a bucket of `bucket=B` (default 1000)
        // restored at `restore=R` a second (default 50): the bucket holds B - C * page (at least 0) after page.
        var extensions: [(String, String)] = []
        if let cost = target.int("cost") {
            let bucket = target.int("bucket") ?? 1000
            let restore = target.value("restore") ?? "50.0"
            extensions.append(("cost", JSONText.object([
                ("requestedQueryCost", String(cost)), ("actualQueryCost", String(cost)),
                ("throttleStatus", JSONText.object([
                    ("maximumAvailable", String(bucket)), ("currentlyAvailable", String(max(0, bucket - cost * page))),
                    ("restoreRate", restore),
                ])),
            ])))
            answer.append(("extensions", JSONText.object(extensions)))
        }
        // `throttled_at=P`: page P is refused as Shopify refuses a query its bucket cannot pay for, the first
        // `throttled_times=T` (default 1) times it is asked.
        if target.int("throttled_at") == page,
            book.nextAttempt(for: "graphql throttled \(target.rawQuery)") <= (target.int("throttled_times") ?? 1)
        {
            let error = JSONText.object([
                ("message", JSONText.string("Throttled")),
                ("extensions", JSONText.object([("code", JSONText.string("THROTTLED"))])),
            ])
            var refused: [(String, String)] = [("data", "null"), ("errors", "[" + error + "]")]
            if !extensions.isEmpty { refused.append(("extensions", JSONText.object(extensions))) }
            return .json(200, JSONText.object(refused))
        }
        // `errors_times=K`: only the first K requests of that page answer errors (a resumed run then gets it whole).
        if target.int("errors_at") == page,
            target.int("errors_times").map({ book.nextAttempt(for: "graphql errors \(target.rawQuery)") <= $0 }) ?? true
        {
            let message: String
            if target.flag("huge") {
                message = String(repeating: "boom\u{1B}[31m\n", count: 10_000)
            } else {
                message = target.value("error") ?? "Something went wrong on page \(page)"
            }
            var nested = "{}"
            for _ in 0..<(target.flag("huge") ? 200 : 1) { nested = "{\"a\":" + nested + "}" }
            let error = JSONText.object([("message", JSONText.string(message)), ("extensions", nested)])
            answer.append(("errors", "[" + error + "]"))
        }
        return .json(200, JSONText.object(answer))
    }

    private static func bodyPaged(_ target: RequestTarget, _ body: [String: Any]) -> Response {
        let total = max(0, target.int("n") ?? 25)
        let page = body["page"] as? [String: Any] ?? [:]
        let size = max(1, (page["size"] as? Int) ?? (body["limit"] as? Int) ?? 10)
        var start = 0
        if let cursor = page["cursor"] as? String {
            guard cursor.hasPrefix("c"), let at = Int(cursor.dropFirst()), at >= 0 else {
                return .error(400, "bad cursor \(cursor)")
            }
            start = at
        } else if let number = page["number"] as? Int {
            start = max(0, number - 1) * size
        } else if let offset = body["offset"] as? Int {
            start = max(0, offset)
        }
        let ids = Array(stride(from: start + 1, through: min(total, start + size), by: 1))
        let next = start + size < total ? JSONText.string("c\(start + size)") : "null"
        return .json(200, JSONText.object([
            ("items", "[" + ids.map { JSONText.object([("id", String($0))]) }.joined(separator: ",") + "]"),
            ("meta", JSONText.object([("next", next), ("total", String(total))])),
        ]))
    }
}
