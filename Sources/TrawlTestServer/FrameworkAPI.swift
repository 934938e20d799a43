import Foundation

/// `/frameworks/NAME`: `n` items `{"id":i,"name":"item-i"}` (default 123) as the stock pagination classes of real
/// frameworks serve them, on the wire byte for byte where it matters (header names, key names, relative links, the
/// last page's nulls), for zero-configuration detection and completeness checks. Page size: the framework's own
/// request parameter, default 10. `lie=K` announces K more items than there are (a total that lies). `shift=K`:
/// each page starts K items before where the one before it ended (a collection into which K items were inserted
/// per page read): items repeat and the last ones are never served, while the pages hold as many lines as the
/// total announces.
///
/// - `smorest?page=P&page_size=S` (flask-smorest): a bare array; `X-Pagination: {"total": N, "total_pages": T,
///   "first_page": 1, "last_page": T, "page": P, "previous_page": P-1, "next_page": P+1}` (no previous/next at
///   the ends).
/// - `fractal?page=P` (PHP's Fractal, Laravel transformers): `{"data": […], "meta": {"pagination": {"total": N,
///   "count": C, "per_page": S, "current_page": P, "total_pages": T, "links": {"previous": URL, "next": URL}}}}`.
/// - `eve?page=P&max_results=S` (python-eve): `{"_items": […], "_links": {"self": {"title", "href":
///   "eve?page=P"}, "parent": {"title": "home", "href": "/"}, "next": {"title": "next page", "href":
///   "eve?page=P+1"}, "last": {…}}, "_meta": {"page": P, "max_results": S, "total": N}}`: hrefs relative, no `/`.
/// - `ninja?page=P&page_size=S` or `ninja?limit=L&offset=O` (django-ninja's PageNumberPagination and
///   LimitOffsetPagination): `{"items": […], "count": N}`.
/// - `fastapi-cursor?cursor=C&size=S` (fastapi-pagination's CursorPage): `{"items": […], "total": null,
///   "current_page": C, "current_page_backwards": B, "previous_page": C|null, "next_page": C|null}`, cursors
///   opaque base64.
/// - `json-server?_page=P&_limit=S`: a bare array and `X-Total-Count: N`.
/// - `gitlab?page=P&per_page=S`: a bare array; `X-Total`, `X-Total-Pages`, `X-Page`, `X-Per-Page`,
///   `X-Next-Page`, `X-Prev-Page` (empty at the ends).
/// - `wordpress?page=P&per_page=S`: a bare array; `X-WP-Total`, `X-WP-TotalPages`.
/// - `range?offset=O&limit=L`: a bare array and `Content-Range: items O-E/N`.
enum FrameworkAPI {
    static func response(for request: InboundRequest, framework: Substring) -> Response {
        let target = request.target
        let count = max(0, target.int("n") ?? 123)
        let announced = count + max(0, target.int("lie") ?? 0)
        let origin = "http://" + (request.head.headers["Host"].first ?? "127.0.0.1")
        let shift = max(0, target.int("shift") ?? 0)
        func items(_ start: Int, _ size: Int) -> (String, shown: Int) {
            let start = max(0, start - start / max(1, size) * shift)
            let end = min(count, start + max(1, size))
            let ids = start < end ? Array(start..<end) : []
            return (SyntheticItems.page(ids, tag: nil), ids.count)
        }
        func pages(_ size: Int) -> Int { max(1, (announced + size - 1) / size) }
        switch framework {
        case "smorest":
            let page = max(1, target.int("page") ?? 1)
            let size = max(1, target.int("page_size") ?? 10)
            let last = pages(size)
            var members = [
                ("total", String(announced)), ("total_pages", String(last)), ("first_page", "1"),
                ("last_page", String(last)), ("page", String(page)),
            ]
            if page > 1 { members.append(("previous_page", String(page - 1))) }
            if page < last { members.append(("next_page", String(page + 1))) }
            return .json(200, items((page - 1) * size, size).0, headers: [("X-Pagination", JSONText.object(members))])
        case "fractal":
            let page = max(1, target.int("page") ?? 1)
            let size = 10
            let last = pages(size)
            let (body, shown) = items((page - 1) * size, size)
            var links: [(String, String)] = []
            let base = origin + target.path + "?page="
            if page > 1 { links.append(("previous", JSONText.string(base + String(page - 1)))) }
            if page < last { links.append(("next", JSONText.string(base + String(page + 1)))) }
            let pagination = JSONText.object([
                ("total", String(announced)), ("count", String(shown)), ("per_page", String(size)),
                ("current_page", String(page)), ("total_pages", String(last)), ("links", JSONText.object(links)),
            ])
            let meta = JSONText.object([("pagination", pagination)])
            return .json(200, JSONText.object([("data", body), ("meta", meta)]))
        case "eve":
            let page = max(1, target.int("page") ?? 1)
            let size = max(1, target.int("max_results") ?? 10)
            let last = pages(size)
            func link(_ title: String, _ number: Int) -> String {
                JSONText.object([("title", JSONText.string(title)), ("href", JSONText.string("eve?page=\(number)"))])
            }
            var links = [
                ("self", link("eve", page)),
                ("parent", JSONText.object([("title", JSONText.string("home")), ("href", JSONText.string("/"))])),
            ]
            if page < last { links += [("next", link("next page", page + 1)), ("last", link("last page", last))] }
            if page > 1 { links.append(("prev", link("previous page", page - 1))) }
            return .json(
                200,
                JSONText.object([
                    ("_items", items((page - 1) * size, size).0), ("_links", JSONText.object(links)),
                    (
                        "_meta",
                        JSONText.object([
                            ("page", String(page)), ("max_results", String(size)), ("total", String(announced)),
                        ])
                    ),
                ]))
        case "ninja":
            let start: Int
            let size: Int
            if let limit = target.int("limit") {
                size = max(1, limit)
                start = max(0, target.int("offset") ?? 0)
            } else {
                size = max(1, target.int("page_size") ?? 100)
                start = (max(1, target.int("page") ?? 1) - 1) * size
            }
            return .json(200, JSONText.object([("items", items(start, size).0), ("count", String(announced))]))
        case "fastapi-cursor":
            let size = max(1, target.int("size") ?? 10)
            let start = target.value("cursor").flatMap(decodeCursor) ?? 0
            let (body, shown) = items(start, size)
            let next = start + shown < count ? JSONText.string(encodeCursor(start + shown)) : "null"
            let previous = start > 0 ? JSONText.string(encodeCursor(max(0, start - size))) : "null"
            return .json(
                200,
                JSONText.object([
                    ("items", body), ("total", "null"), ("current_page", JSONText.string(encodeCursor(start))),
                    ("current_page_backwards", JSONText.string(encodeCursor(start) + "-")),
                    ("previous_page", previous), ("next_page", next),
                ]))
        case "json-server":
            let page = max(1, target.int("_page") ?? 1)
            let size = max(1, target.int("_limit") ?? 10)
            return .json(200, items((page - 1) * size, size).0, headers: [("X-Total-Count", String(announced))])
        case "gitlab":
            let page = max(1, target.int("page") ?? 1)
            let size = max(1, target.int("per_page") ?? 10)
            let last = pages(size)
            return .json(
                200, items((page - 1) * size, size).0,
                headers: [
                    ("X-Total", String(announced)), ("X-Total-Pages", String(last)), ("X-Page", String(page)),
                    ("X-Per-Page", String(size)), ("X-Next-Page", page < last ? String(page + 1) : ""),
                    ("X-Prev-Page", page > 1 ? String(page - 1) : ""),
                ])
        case "wordpress":
            let page = max(1, target.int("page") ?? 1)
            let size = max(1, target.int("per_page") ?? 10)
            return .json(
                200, items((page - 1) * size, size).0,
                headers: [("X-WP-Total", String(announced)), ("X-WP-TotalPages", String(pages(size)))])
        case "range":
            let offset = max(0, target.int("offset") ?? 0)
            let limit = max(1, target.int("limit") ?? 10)
            let (body, shown) = items(offset, limit)
            let range = shown > 0 ? "\(offset)-\(offset + shown - 1)" : "*"
            return .json(200, body, headers: [("Content-Range", "items \(range)/\(announced)")])
        default:
            return .error(404, "unknown framework", [("framework", JSONText.string(String(framework)))])
        }
    }

    /// fastapi-pagination's cursors are opaque base64 text; these are base64 of `"o:OFFSET"`.
    static func encodeCursor(_ offset: Int) -> String { Data("o:\(offset)".utf8).base64EncodedString() }

    static func decodeCursor(_ text: String) -> Int? {
        guard let data = Data(base64Encoded: text) else { return nil }
        let decoded = String(decoding: data, as: UTF8.self)
        guard decoded.hasPrefix("o:") else { return nil }
        return Int(decoded.dropFirst(2))
    }
}
