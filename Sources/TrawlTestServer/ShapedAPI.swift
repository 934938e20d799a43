/// `/shapes/NAME`: `n` items `{"id":i,"name":"item-i"}` (default 25, `per` a page, default 10) in the shapes of
/// well-known APIs, for zero-configuration detection (`/paged/link`, `/paged/next` and `/paged/cursor` are GitHub,
/// DRF and Stripe).
///
/// - `google?pageToken=tK`: `{"kind":"things#list","items":[…],"nextPageToken":"tK"}`, the token left out of the
///   last page.
/// - `slack?cursor=C`: `{"ok":true,"members":[…],"response_metadata":{"next_cursor":"C"}}` (`""` on the last page).
/// - `notion?start_cursor=C`: `{"object":"list","results":[…],"next_cursor":C|null,"has_more":B}`.
/// - `odata?$skip=K`: `{"@odata.context":…,"value":[…],"@odata.nextLink":URL}`, the link left out of the last page.
/// - `jsonapi?page=P`: `{"data":[…],"links":{"self","first","last","next"|null},"meta":{"total":N}}`.
/// - `hal?page=P`: `{"_embedded":{"orders":[…]},"_links":{"self":{"href"},"next":{"href"}},"total":N}`.
/// - `jira?startAt=S&maxResults=M`: `{"startAt":S,"maxResults":M,"total":N,"issues":[…]}` (M default `per`).
/// - `offset?offset=O&limit=L`: `{"results":[…],"offset":O,"limit":L,"total":N}`.
/// - `single`: `{"data":[…every item…]}`.
/// - `ambiguous`: `{"users":[10 items],"groups":[8 items]}`.
/// - `marker?marker=M`: `{"records":[…],"nextMarker":"mK"}` (a cursor with no known request parameter; with
///   `param=NAME` the cursor is read from `NAME` instead, a name no rule derives).
/// - `flip?page=P`: as `jsonapi`, but from page 2 on `links.next` holds a bare token instead of a URL.
enum ShapedAPI {
    static func response(for request: InboundRequest, shape: Substring) -> Response {
        let target = request.target
        let count = max(0, target.int("n") ?? 25)
        let size = max(1, target.int("per") ?? 10)
        let origin = "http://" + (request.head.headers["Host"].first ?? "127.0.0.1")
        let base = origin + target.path
        func slice(_ start: Int, _ length: Int = size) -> (String, next: Int?) {
            let start = max(0, start)
            let end = min(count, start + max(1, length))
            let ids = start < end ? Array(start..<end) : []
            return (SyntheticItems.page(ids, tag: nil), end < count ? end : nil)
        }
        let page = max(1, target.int("page") ?? 1)
        let pages = (count + size - 1) / size
        func link(_ number: Int) -> String { JSONText.string(base + "?page=\(number)&n=\(count)&per=\(size)") }
        let more = "&n=\(count)&per=\(size)"
        switch shape {
        case "google":
            let (items, next) = slice(Int(target.value("pageToken")?.dropFirst() ?? "") ?? 0)
            var members = [("kind", JSONText.string("things#list")), ("items", items)]
            if let next { members.append(("nextPageToken", JSONText.string("t\(next)"))) }
            return .json(200, JSONText.object(members))
        case "slack":
            let (items, next) = slice(Int(target.value("cursor")?.dropFirst() ?? "") ?? 0)
            let cursor = JSONText.string(next.map { "u\($0)" } ?? "")
            return .json(
                200,
                JSONText.object([
                    ("ok", "true"), ("members", items),
                    ("response_metadata", JSONText.object([("next_cursor", cursor)])),
                ]))
        case "notion":
            let (items, next) = slice(Int(target.value("start_cursor")?.dropFirst() ?? "") ?? 0)
            return .json(
                200,
                JSONText.object([
                    ("object", JSONText.string("list")), ("results", items),
                    ("next_cursor", next.map { JSONText.string("n\($0)") } ?? "null"),
                    ("has_more", next == nil ? "false" : "true"), ("type", JSONText.string("page_or_database")),
                ]))
        case "odata":
            let (items, next) = slice(target.int("$skip") ?? 0)
            var members = [("@odata.context", JSONText.string(origin + "/$metadata#Things")), ("value", items)]
            if let next { members.append(("@odata.nextLink", JSONText.string(base + "?$skip=\(next)" + more))) }
            return .json(200, JSONText.object(members))
        case "jsonapi", "flip":
            let (items, _) = slice((page - 1) * size)
            var next = page < pages ? link(page + 1) : "null"
            if shape == "flip", page >= 2, page < pages { next = JSONText.string("token\(page + 1)") }
            return .json(
                200,
                JSONText.object([
                    ("data", items),
                    (
                        "links",
                        JSONText.object([
                            ("self", link(page)), ("first", link(1)), ("last", link(max(1, pages))), ("next", next),
                        ])
                    ),
                    ("meta", JSONText.object([("total", String(count))])),
                ]))
        case "hal":
            let (items, _) = slice((page - 1) * size)
            var links = [("self", JSONText.object([("href", link(page))]))]
            if page < pages { links.append(("next", JSONText.object([("href", link(page + 1))]))) }
            return .json(
                200,
                JSONText.object([
                    ("_embedded", JSONText.object([("orders", items)])), ("_links", JSONText.object(links)),
                    ("total", String(count)),
                ]))
        case "jira":
            let startAt = max(0, target.int("startAt") ?? 0)
            let maxResults = max(1, target.int("maxResults") ?? size)
            return .json(
                200,
                JSONText.object([
                    ("expand", JSONText.string("schema,names")), ("startAt", String(startAt)),
                    ("maxResults", String(maxResults)), ("total", String(count)),
                    ("issues", slice(startAt, maxResults).0),
                ]))
        case "offset":
            let offset = max(0, target.int("offset") ?? 0)
            let limit = max(1, target.int("limit") ?? size)
            return .json(
                200,
                JSONText.object([
                    ("results", slice(offset, limit).0), ("offset", String(offset)), ("limit", String(limit)),
                    ("total", String(count)),
                ]))
        case "single":
            return .json(200, JSONText.object([("data", slice(0, max(1, count)).0)]))
        case "ambiguous":
            return .json(
                200,
                JSONText.object([
                    ("users", SyntheticItems.page(Array(0..<10), tag: nil)),
                    ("groups", SyntheticItems.page(Array(0..<8), tag: nil)),
                ]))
        case "marker":
            let (items, next) = slice(Int(target.value(target.value("param") ?? "marker")?.dropFirst() ?? "") ?? 0)
            return .json(
                200,
                JSONText.object([
                    ("records", items), ("nextMarker", next.map { JSONText.string("m\($0)") } ?? "null"),
                ]))
        default:
            return .error(404, "unknown shape", [("shape", JSONText.string(String(shape)))])
        }
    }
}
