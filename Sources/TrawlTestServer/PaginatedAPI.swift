/// `/paged/STYLE`: a synthetic API of `n` items `{"id":i,"name":"item-i"}` (i in 0..<n) in every pagination style.
///
/// Common query parameters: `n` (items, default 100), `per_page` or `limit` (page size, default 10),
/// `total=0` (leave totals out), `delay=MS` (wait before answering; with `delay_page=P1,P2,...` only those
/// pages wait), `jitter=MS` (a random extra wait per page),
/// `fail_page=K` (page K, counted from 1, answers 500 every time); `token=T` answers 401 to any
/// page without `Authorization: Bearer T`.
///
/// - `page?page=P`: `{"items":[...],"page":P,"total_count":N,"total_pages":T}`
/// - `offset?offset=O&limit=L`: `{"items":[...],"offset":O,"total":N}`
/// - `cursor?limit=L&starting_after=ID`: `{"data":[...],"has_more":B}` (Stripe-like)
/// - `next?page=P`: `{"results":[...],"next":"http://host/paged/next?page=P+1..."|null,"count":N}`;
///   `relative=1` sends `/paged/next?page=P+1...` (a URL relative to the page's).
/// - `token?cursor=C`: `{"items":[...],"next_cursor":"cS"}` where `S` is the next page's first id; the last
///   page's `next_cursor` is `""` (`end=null` sends `null`), and a missing or unknown cursor is the first page.
///   `loop_to=P` makes the last page point back at page P's cursor (a broken server's cursor cycle).
/// - `link?page=P`: a bare array with GitHub-like `Link` headers (`first`, `prev`, `next`, `last`);
///   `relative=1` sends relative targets; `total=0` leaves `last` out.
/// - `link` with `page_sig=1`: every link carries the server's own per-page value in a parameter named like a
///   secret, `sig=sP` for page P (a signed URL); a request for page P > 1 without it gets an empty page `[]` with
///   no links (a server that answers an unknown signature with nothing).
/// - `next` and `link`: `next_origin=SCHEME://HOST:PORT` names that origin in the links instead of this server's
///   (a server that sends the walk elsewhere); `next_origin_from=P` only from page P on; `back_origin=ORIGIN` with
///   `back_from=P` names that origin from page P on instead (a walk that leaves and comes back).
///
/// Realistic items: with `tag=X` every item is
/// `{"id":I,"name":"item-I","tag":"X","score":S,"created_at":"2024-...Z","active":B}`, the values a pure
/// function of `(X, I)`: ``SyntheticItems/json(id:tag:)`` computes the exact bytes without a server.
///
/// Transient faults. The server counts the requests of every request target (the raw path and query,
/// so each page of each listing counts on its own; per server instance; requests answered by `token`
/// or `fail_page` are not counted). A faulty page misbehaves on its first `fault_times` requests (default 1), then answers
/// normally. Page numbers `P` are counted from 1 (for `offset` and `cursor`: `start / size + 1`).
/// - `max_in_flight=K`: 429 (no `Retry-After`) to a request that finds more than K requests in flight at the
///   server, itself included: a host that only takes so many at once.
/// - `fault_429=P1,P2,...`: 429 with `Retry-After: S` (`retry_after=S`, default 1; `retry_after_date=1`
///   sends the IMF-fixdate of now + S instead) and a JSON error body.
/// - `fault_5xx=P1,...`: 503 with a JSON error body.
/// - `fault_reset=P1,...`: the full head (`Content-Length` of the whole body), about half the body, then a TCP RST.
/// - `fault_trunc=P1,...`: the same, then a clean close (FIN): a truncated body.
/// - `fault_hold=P1,...`: the same, then silence with the connection open (the client's stall timeout ends it).
/// - `fault_drip=P1,...`: the correct response, its body in about ten pieces over `drip_ms` (default 500).
/// - `fault_short=P1,...`: a complete response whose `Content-Length` (and body) is about half the JSON.
/// - `fault_404=P1,...`: 404 with a JSON error body (not retried by clients: the page fails until asked again).
/// - `rate_429=R`, `rate_5xx=R`, `rate_reset=R`, `rate_trunc=R` (R in 0...1): a page is faulty when a
///   hash (FNV-1a) of its whole request target, mapped to `0 ..< 1`, falls in the kind's share; the rates
///   split the interval in that order, so the kinds never overlap and the same target always gets the same
///   answer. Page lists win over rates.
/// - `ratelimit_page=P`: page P answers normally but with `X-RateLimit-Remaining: 0` and
///   `X-RateLimit-Reset: <Unix seconds now + retry_after>`, or with `ratelimit_style=ietf`
///   `RateLimit-Remaining: 0` and `RateLimit-Reset: <retry_after>` (delta seconds), or with
///   `ratelimit_style=combined` `RateLimit: limit=100, remaining=0, reset=<retry_after>`.
///
/// Search-API behaviour (GitHub's): `result_cap=N` answers 422 to every page that starts at item N or later
/// (the totals still count all `n`); `incomplete=P1,...` adds `"incomplete_results"` to `page` bodies, true
/// on the pages listed and false on the others.
///
/// ```text
/// GET /paged/page?page=2&fault_429=2&retry_after=2   -> 429, Retry-After: 2
/// GET /paged/page?page=2&fault_429=2&retry_after=2   -> 200 (same target, second request)
/// GET /paged/link?page=5&rate_5xx=0.05&tag=books     -> 503 for about one page in twenty, the first time
/// ```
enum PaginatedAPI {
    static func response(
        for request: InboundRequest, style: Substring, book: RequestBook, defaultCount: Int = 100
    ) -> Response {
        let target = request.target
        let count = max(0, target.int("n") ?? defaultCount)
        let size = max(1, target.int("per_page") ?? target.int("limit") ?? 10)
        let pageCount = (count + size - 1) / size
        let start: Int
        switch style {
        case "page", "next", "link": start = (max(1, target.int("page") ?? 1) - 1) * size
        case "offset": start = max(0, target.int("offset") ?? 0)
        case "cursor": start = target.int("starting_after").map { $0 + 1 } ?? 0
        case "token": start = target.value("cursor").flatMap { $0.first == "c" ? Int($0.dropFirst()) : nil } ?? 0
        default: return .error(404, "unknown pagination style", [("style", JSONText.string(String(style)))])
        }
        let end = min(count, start + size)
        let ids = start < end ? Array(start..<end) : []
        let pageNumber = start / size + 1
        var response = body(
            style, target, ids: ids, page: pageNumber, size: size, pages: pageCount, count: count, request: request)
        if let token = target.value("token"), request.head.headers["Authorization"].first != "Bearer " + token {
            response = .error(401, "bad credentials", [("page", String(pageNumber))])
        } else if let limit = target.int("max_in_flight"), request.inFlight > limit {
            response = .error(429, "more than \(limit) requests in flight", [("page", String(pageNumber))])
        } else if let failing = target.int("fail_page"), failing == pageNumber {
            response = .error(500, "page \(pageNumber) failed on purpose", [("page", String(pageNumber))])
        } else if let cap = target.int("result_cap"), start >= cap {
            response = .error(422, "Only the first \(cap) search results are available", [("page", String(pageNumber))])
        } else if book.nextAttempt(for: request.head.uri) <= max(0, target.int("fault_times") ?? 1) {
            if let kind = PagedFault.Kind.chosen(page: pageNumber, target: target, rawTarget: request.head.uri) {
                response = PagedFault.response(kind, normal: response, page: pageNumber, target: target)
            } else if target.int("ratelimit_page") == pageNumber {
                response = PagedFault.rateLimited(response, target: target)
            }
        }
        if style == "link", target.flag("page_sig"), pageNumber > 1, target.value("sig") != "s\(pageNumber)" {
            response = .json(200, "[]")
        }
        let jitter = max(0, target.int("jitter") ?? 0)
        let delayed = target.value("delay_page").map { PagedFault.pages($0).contains(pageNumber) } ?? true
        let delay = delayed ? max(0, target.int("delay") ?? 0) : 0
        let wait = delay + (jitter > 0 ? Int.random(in: 0...jitter) : 0)
        if wait > 0 { response.delay = .milliseconds(Int64(wait)) }
        return response
    }

    /// `/search/repositories?q=Q&per_page=K&page=P`: the README's GitHub-like search, the `page` style over
    /// 250 items by default (`{"items":[…],"page":P,"total_count":250,"total_pages":…}`); `q` is ignored.
    static func gitHubSearch(for request: InboundRequest, book: RequestBook) -> Response {
        response(for: request, style: "page", book: book, defaultCount: 250)
    }

    private static func body(
        _ style: Substring, _ target: RequestTarget, ids: [Int], page: Int, size: Int, pages: Int, count: Int,
        request: InboundRequest
    ) -> Response {
        let withTotal = target.value("total") != "0"
        let tag = target.value("tag")
        let items = SyntheticItems.page(ids, tag: tag)
        let last = ids.last.map { $0 + 1 } ?? 0
        switch style {
        case "page":
            var members = [("items", items), ("page", String(page))]
            if withTotal { members += [("total_count", String(count)), ("total_pages", String(pages))] }
            if let incomplete = target.value("incomplete") {
                let listed = incomplete.split(separator: ",").contains { Int($0) == page }
                members.append(("incomplete_results", listed ? "true" : "false"))
            }
            return .json(200, JSONText.object(members))
        case "offset":
            var members = [("items", items), ("offset", String(target.int("offset") ?? 0))]
            if withTotal { members.append(("total", String(count))) }
            return .json(200, JSONText.object(members))
        case "cursor":
            return .json(200, JSONText.object([("data", items), ("has_more", last < count ? "true" : "false")]))
        case "token":
            let next: String
            if let following = ids.last.map({ $0 + 1 }), following < count {
                next = JSONText.string("c\(following)")
            } else if let loop = target.int("loop_to"), loop >= 1 {
                next = JSONText.string("c\((loop - 1) * size)")
            } else {
                next = target.value("end") == "null" ? "null" : JSONText.string("")
            }
            return .json(200, JSONText.object([("items", items), ("next_cursor", next)]))
        case "next":
            let host = origin(target, page: page, request: request)
            let prefix = target.flag("relative") ? "" : host
            let next = page < pages ? JSONText.string(prefix + link(target, page: page + 1)) : "null"
            var members = [("results", items), ("next", next)]
            if withTotal { members.append(("count", String(count))) }
            return .json(200, JSONText.object(members))
        default:
            let relative = target.flag("relative")
            let prefix = relative ? "" : origin(target, page: page, request: request)
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

    /// The origin the links of `page` name: this server's, or `next_origin` (from page `next_origin_from` on).
    private static func origin(_ target: RequestTarget, page: Int, request: InboundRequest) -> String {
        if let back = target.value("back_origin"), page >= (target.int("back_from") ?? 1) { return String(back) }
        if let other = target.value("next_origin"), page >= (target.int("next_origin_from") ?? 1) {
            return String(other)
        }
        return "http://" + (request.head.headers["Host"].first ?? "127.0.0.1")
    }

    /// The same request with `page` replaced, as a path (or, when `relative`, as a bare `?query`).
    private static func link(_ target: RequestTarget, page: Int, relative: Bool = false) -> String {
        let signed = target.flag("page_sig")
        let pairs = target.rawQuery.split(separator: "&").filter {
            !$0.hasPrefix("page=") && $0 != "page" && !(signed && $0.hasPrefix("sig="))
        }
        let query = (["page=\(page)"] + pairs.map(String.init) + (signed ? ["sig=s\(page)"] : [])).joined(separator: "&")
        return (relative ? "" : target.path) + "?" + query
    }
}
