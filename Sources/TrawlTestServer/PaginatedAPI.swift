/// `/paged/STYLE`: a synthetic API of `n` items `{"id":i,"name":"item-i"}` (i in 0..<n) in every pagination style.
///
/// Common query parameters: `n` (items, default 100), `per_page` or `limit` (page size, default 10),
/// `total=0` (leave totals out), `delay=MS` (wait before answering), `jitter=MS` (a random extra wait per page),
/// `fail_page=K` (page K, counted from 1 in request order, answers 500); `token=T` answers 401 to any
/// page without `Authorization: Bearer T`.
///
/// - `page?page=P`: `{"items":[...],"page":P,"total_count":N,"total_pages":T}`
/// - `offset?offset=O&limit=L`: `{"items":[...],"offset":O,"total":N}`
/// - `cursor?limit=L&starting_after=ID`: `{"data":[...],"has_more":B}` (Stripe-like)
/// - `next?page=P`: `{"results":[...],"next":"http://host/paged/next?page=P+1..."|null,"count":N}`
/// - `link?page=P`: a bare array with GitHub-like `Link` headers (`first`, `prev`, `next`, `last`);
///   `relative=1` sends relative targets; `total=0` leaves `last` out.
enum PaginatedAPI {
    static func response(for request: InboundRequest, style: Substring) -> Response {
        let target = request.target
        let count = max(0, target.int("n") ?? 100)
        let size = max(1, target.int("per_page") ?? target.int("limit") ?? 10)
        let pageCount = (count + size - 1) / size
        let start: Int
        switch style {
        case "page", "next", "link": start = (max(1, target.int("page") ?? 1) - 1) * size
        case "offset": start = max(0, target.int("offset") ?? 0)
        case "cursor": start = target.int("starting_after").map { $0 + 1 } ?? 0
        default: return .error(404, "unknown pagination style", [("style", JSONText.string(String(style)))])
        }
        let end = min(count, start + size)
        let ids = start < end ? Array(start..<end) : []
        let pageNumber = start / size + 1
        var response = body(style, target, ids: ids, page: pageNumber, pages: pageCount, count: count, request: request)
        if let failing = target.int("fail_page"), failing == pageNumber {
            response = .error(500, "page \(pageNumber) failed on purpose", [("page", String(pageNumber))])
        }
        if let token = target.value("token"), request.head.headers["Authorization"].first != "Bearer " + token {
            response = .error(401, "bad credentials", [("page", String(pageNumber))])
        }
        let jitter = max(0, target.int("jitter") ?? 0)
        let wait = max(0, target.int("delay") ?? 0) + (jitter > 0 ? Int.random(in: 0...jitter) : 0)
        if wait > 0 { response.delay = .milliseconds(Int64(wait)) }
        return response
    }

    private static func body(
        _ style: Substring, _ target: RequestTarget, ids: [Int], page: Int, pages: Int, count: Int,
        request: InboundRequest
    ) -> Response {
        let withTotal = target.value("total") != "0"
        let items = "[" + ids.map { JSONText.object([("id", String($0)), ("name", JSONText.string("item-\($0)"))]) }
            .joined(separator: ",") + "]"
        let last = ids.last.map { $0 + 1 } ?? 0
        switch style {
        case "page":
            var members = [("items", items), ("page", String(page))]
            if withTotal { members += [("total_count", String(count)), ("total_pages", String(pages))] }
            return .json(200, JSONText.object(members))
        case "offset":
            var members = [("items", items), ("offset", String(target.int("offset") ?? 0))]
            if withTotal { members.append(("total", String(count))) }
            return .json(200, JSONText.object(members))
        case "cursor":
            return .json(200, JSONText.object([("data", items), ("has_more", last < count ? "true" : "false")]))
        case "next":
            let prefix = "http://" + (request.head.headers["Host"].first ?? "127.0.0.1")
            let next = page < pages ? JSONText.string(prefix + link(target, page: page + 1)) : "null"
            var members = [("results", items), ("next", next)]
            if withTotal { members.append(("count", String(count))) }
            return .json(200, JSONText.object(members))
        default:
            let relative = target.flag("relative")
            let prefix = relative ? "" : "http://" + (request.head.headers["Host"].first ?? "127.0.0.1")
            var links: [String] = []
            func add(_ number: Int, _ rel: String) {
                links.append("<" + prefix + link(target, page: number, relative: relative) + ">; rel=\"\(rel)\"")
            }
            if page > 1 { add(1, "first"); add(page - 1, "prev") }
            if page < pages { add(page + 1, "next") }
            if withTotal, page < pages { add(pages, "last") }
            return .json(200, items, headers: links.isEmpty ? [] : [("Link", links.joined(separator: ", "))])
        }
    }

    /// The same request with `page` replaced, as a path (or, when `relative`, as a bare `?query`).
    private static func link(_ target: RequestTarget, page: Int, relative: Bool = false) -> String {
        let pairs = target.rawQuery.split(separator: "&").filter { !$0.hasPrefix("page=") && $0 != "page" }
        let query = (["page=\(page)"] + pairs.map(String.init)).joined(separator: "&")
        return (relative ? "" : target.path) + "?" + query
    }
}
