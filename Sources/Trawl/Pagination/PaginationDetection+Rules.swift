import Foundation
import TrawlEngine
import TrawlJSON

/// The pagination rules of ``PaginationDetection``, in their order.
extension PaginationDetection {
    /// Key paths known to hold the next page's URL.
    static let nextURLPaths: [[String]] = [
        ["next"], ["links", "next"], ["pagination", "next"], ["paging", "next"], ["_links", "next", "href"],
        ["links", "next", "href"], ["@odata.nextLink"], ["odata.nextLink"], ["next_page"], ["nextLink"],
        ["next_page_url"], ["nextPageUrl"], ["next_url"], ["meta", "next"], ["meta", "links", "next"],
        ["pagination", "next_url"], ["pagination", "next_page_url"], ["nextPage"],
        ["meta", "pagination", "links", "next"],  // PHP's Fractal, Laravel transformers
    ]

    /// Key paths known to hold a cursor, and the request parameter each convention sends it as (`nil`: decided
    /// by the body, see ``cursorParameter(_:_:)``).
    static let cursorPaths: [(path: [String], param: String?)] = [
        (["nextPageToken"], "pageToken"),  // Google APIs
        (["next_page_token"], "page_token"),
        (["response_metadata", "next_cursor"], "cursor"),  // Slack
        (["next_cursor"], nil),  // Notion (with has_more): start_cursor; otherwise cursor
        (["meta", "next_token"], "pagination_token"),  // X / Twitter API v2
        (["meta", "next_cursor"], "cursor"),
        (["pagination", "next_cursor"], "cursor"),
        (["nextCursor"], "cursor"),
        (["pagination", "nextCursor"], "cursor"),
        (["paging", "cursors", "after"], "after"),  // Facebook Graph
        (["cursor"], "cursor"),  // Bluesky
        (["after"], "after"),
        (["data", "after"], "after"),  // Reddit
        (["next_page"], "cursor"),  // fastapi-pagination's CursorPage (a string; a number is a page number)
    ]

    static let pageTotalKeys = [
        "total_pages", "totalPages", "last_page", "lastPage", "pages", "page_count",
        "pageCount", "num_pages",
    ]
    static let itemTotalKeys = [
        "total", "total_count", "totalCount", "total_items", "totalItems", "total_results",
        "totalResults", "count",
    ]
    static let pageSizeKeys = ["per_page", "perPage", "page_size", "pageSize", "size"]
    /// Offset conventions: the offset key, the limit key (both also the request parameters).
    static let offsetKeys: [(offset: String, limit: String)] = [
        ("startAt", "maxResults"), ("offset", "limit"), ("start", "count"), ("start", "limit"), ("skip", "limit"),
    ]
    /// Keys that never name the next page, though they hold a URL to the same path.
    static let notNext: Set<String> = ["self", "prev", "previous", "first", "last", "current", "canonical", "related"]

    static func detectPagination(
        _ body: JSONValue, items: JSONKeyPath, elements: [JSONValue], headers: HTTPHeaders, url: String
    ) -> PaginationDetection {
        func plan(
            _ style: PaginationStyle, _ spec: String, _ options: [(String, String)] = [], reads: JSONKeyPath? = nil
        )
            -> PaginationDetection
        {
            var style = style
            style.expectedPath = reads
            return PaginationDetection(
                style: style, items: items, isSinglePage: false,
                settings: [Setting(name: "paginate", value: spec)] + options.map { Setting(name: $0.0, value: $0.1) },
                readsPath: reads, firstPageItems: elements.count)
        }
        // A total the body announces where no page or offset rule reads it (Fractal's meta.pagination.total):
        // a next-URL, cursor or Link walk checks its item count against it.
        let checked = checkedTotal(body, items: items)
        func checking(_ style: PaginationStyle) -> PaginationStyle { style.checkingTotal(at: checked) }
        let totalOption = checked.map { [("total", $0.description)] } ?? []
        if LinkHeader(headers: headers, baseURL: url).next != nil {
            return plan(checking(.link()), "link", totalOption)
        }
        guard case .object = body else {
            if let paged = headerPlan(headers, url: url, pageItems: elements.count, plan: plan) { return paged }
            var single = plan(.link(), "link")
            single.isSinglePage = true
            return single
        }
        if let path = nextURLPath(body, items: items, url: url) {
            let keyPath = keyPath(path)
            return plan(checking(.nextURL(at: keyPath)), "next:\(keyPath)", totalOption, reads: keyPath)
        }
        for (path, known) in cursorPaths {
            guard let value = value(body, path), isCursorLike(value) else { continue }
            if path == ["next_page"], case .number = value { continue }
            let keyPath = keyPath(path)
            let param = known ?? (body["has_more"] != nil ? "start_cursor" : "cursor")
            return plan(
                checking(.cursor(at: keyPath, param: param)), "cursor:\(keyPath)",
                [("cursor_param", param)] + totalOption, reads: keyPath)
        }
        if let hasMore = body["has_more"], hasMore.boolValue != nil, let last = elements.last, last["id"] != nil {
            let idPath = JSONKeyPath(components: items.components + [.index(-1), .key("id")])
            return plan(
                .cursor(at: idPath, param: "starting_after"), "cursor:\(idPath)", [("cursor_param", "starting_after")])
        }
        let offset = offsetConvention(body, items: items, url: url, pageItems: elements.count)
        if offset == nil, let paged = pagePlan(body, items: items, url: url, plan: plan) { return paged }
        if let (offsetKey, limitKey, limit, total) = offset {
            var options = [("param", offsetKey), ("limit_param", limitKey)]
            if let limit { options.append(("limit", String(limit))) }
            if let total { options.append(("total", total.description)) }
            return plan(
                .offset(param: offsetKey, limitParam: limitKey, limit: limit, total: total), "offset", options)
        }
        if let paged = requestPlan(body, items: items, url: url, plan: plan) { return paged }
        if let paged = headerPlan(headers, url: url, pageItems: elements.count, plan: plan) { return paged }
        // A next-URL key present but null: the first page is the last one of a next-URL walk.
        if let path = nextURLPaths.first(where: { value(body, $0) == .null }) {
            let keyPath = keyPath(path)
            var single = plan(.nextURL(at: keyPath), "next:\(keyPath)", reads: keyPath)
            single.isSinglePage = true
            return single
        }
        var single = plan(.link(), "link")
        single.isSinglePage = true
        return single
    }

    /// A string or number that a cursor may be (an empty string or null is the end of a cursor walk).
    static func isCursorLike(_ value: JSONValue) -> Bool {
        switch value {
        case .string, .number, .null: true
        default: false
        }
    }

    /// The key path of the next page's URL: a known one holding a URL, else any key path whose string is a URL
    /// to the same path as the page's and whose key does not name another relation (`self`, `prev`, …).
    static func nextURLPath(_ body: JSONValue, items: JSONKeyPath, url: String) -> [String]? {
        for path in nextURLPaths {
            if case .string(let text)? = value(body, path), looksLikeURL(text),
                let resolved = PaginationStyle.resolve(text, against: url), looksLikeURL(resolved)
            {
                return path
            }
        }
        let pagePath = URLComponents(string: url)?.path
        for (path, value) in scalarPaths(body, items: items) {
            guard case .string(let text) = value, looksLikeURL(text),
                !path.contains(where: { notNext.contains($0) || $0.lowercased().hasPrefix("prev") })
            else { continue }
            guard let resolved = PaginationStyle.resolve(text, against: url), resolved != url,
                let components = URLComponents(string: resolved), components.path == pagePath,
                components.query != nil
            else { continue }
            return path
        }
        return nil
    }

    /// Whether `text` is an absolute http(s) URL or a relative reference with a query (`/things?page=2`,
    /// `?page=2`, python-eve's `items?page=2`, `../items?page=2`), which resolves against the page's URL as a
    /// browser resolves it (RFC 3986). A cursor (base64, an id) has no `?`, so it is never taken for one.
    static func looksLikeURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") || lower.hasPrefix("http://") { return true }
        guard !text.contains(where: { $0 == " " || $0.isNewline }), let question = text.firstIndex(of: "?") else {
            return false
        }
        let path = text[..<question]
        // A scheme (`mailto:`, `javascript:`) or an authority (`//host`) is no relative page reference.
        if path.contains(":") || path.hasPrefix("//") { return false }
        return text[question...].contains("=")
    }

    /// The number at `key`, at the top level or one object down (not inside the items).
    static func number(_ body: JSONValue, _ keys: [String], items: JSONKeyPath) -> (JSONKeyPath, Int)? {
        for key in keys {
            if let value = body[key]?.int64Value { return (keyPath([key]), Int(clamping: value)) }
        }
        guard case .object(let members) = body else { return nil }
        for outer in members.keys.sorted() where keyPath([outer]) != items {
            guard case .object = members[outer] else { continue }
            for key in keys {
                if let value = members[outer]?[key]?.int64Value {
                    return (keyPath([outer, key]), Int(clamping: value))
                }
            }
        }
        return nil
    }

    /// An offset convention the body follows: the offset and limit keys (the request parameters), the limit
    /// and the key path of the item total.
    /// A body that gives its offset and the item total but not the limit (`{"items":[…],"offset":0,"total":95}`)
    /// takes the limit from the request URL's size parameter, or else the first page's item count.
    static func offsetConvention(_ body: JSONValue, items: JSONKeyPath, url: String = "", pageItems: Int = 0)
        -> (String, String, Int?, JSONKeyPath?)?
    {
        for (offsetKey, limitKey) in offsetKeys {
            guard let (offsetPath, _) = number(body, [offsetKey], items: items),
                let (limitPath, limit) = number(body, [limitKey], items: items),
                offsetPath.components.count == limitPath.components.count
            else { continue }
            let total = number(body, itemTotalKeys.filter { $0 != limitKey }, items: items)?.0
            return (offsetKey, limitKey, limit > 0 ? limit : nil, total)
        }
        for (offsetKey, limitKey) in offsetKeys {
            guard number(body, [offsetKey], items: items) != nil,
                let (total, _) = number(body, itemTotalKeys, items: items)
            else { continue }
            let sizeParams = [limitKey, "limit", "per_page", "perPage", "page_size", "pageSize", "size", "count"]
            let param = sizeParams.first { QueryEditing.value($0, in: url) != nil }
            let limit = param.flatMap { QueryEditing.int($0, in: url) } ?? pageItems
            return (offsetKey, param ?? limitKey, limit > 0 ? limit : nil, total)
        }
        return nil
    }

    /// The item total a first page announces beyond what it holds, when nothing in it points at another page:
    /// taking it for a single page would lose the rest. (A page total always makes a `page` plan.)
    static func unreachedTotal(_ body: JSONValue, items: JSONKeyPath, pageItems: Int) -> (JSONKeyPath, Int)? {
        guard let (path, total) = number(body, itemTotalKeys, items: items), total > pageItems else { return nil }
        return (path, total)
    }

    /// Page numbers: a total of pages, or of items with a page size; the page parameter from the request URL.
    static func pagePlan(
        _ body: JSONValue, items: JSONKeyPath, url: String,
        plan: (PaginationStyle, String, [(String, String)], JSONKeyPath?) -> PaginationDetection
    ) -> PaginationDetection? {
        let param = ["page", "p"].first { QueryEditing.value($0, in: url) != nil } ?? "page"
        let start = QueryEditing.int(param, in: url) ?? 1
        var options: [(String, String)] = param == "page" ? [] : [("param", param)]
        if start != 1 { options.append(("start", String(start))) }
        if let (path, _) = number(body, pageTotalKeys, items: items) {
            return plan(
                .page(param: param, start: start, totalPages: path), "page",
                options + [("total_pages", path.description)], nil)
        }
        if number(body, pageSizeKeys, items: items) != nil, let (path, _) = number(body, itemTotalKeys, items: items) {
            return plan(
                .page(param: param, start: start, totalItems: path), "page", options + [("total", path.description)],
                nil)
        }
        return nil
    }

    /// The item total the body announces anywhere in its first three levels (Fractal: `meta.pagination.total`),
    /// by the first of ``itemTotalKeys`` found (so `total` wins over Fractal's per-page `count`).
    static func checkedTotal(_ body: JSONValue, items: JSONKeyPath) -> JSONKeyPath? {
        let scalars = scalarPaths(body, items: items)
        for key in itemTotalKeys {
            for (path, value) in scalars where path.last == key {
                if value.int64Value.map({ $0 >= 0 }) == true { return keyPath(path) }
            }
        }
        return nil
    }

    /// A body with an item total and nothing else (django-ninja's `{"items": […], "count": 1234}`) whose request
    /// URL says how it pages: `page` with a page size (`page_size`, `per_page`, `size`) makes a page walk whose
    /// total the count gives; `offset` (or `skip`) with `limit` an offset walk.
    static func requestPlan(
        _ body: JSONValue, items: JSONKeyPath, url: String,
        plan: (PaginationStyle, String, [(String, String)], JSONKeyPath?) -> PaginationDetection
    ) -> PaginationDetection? {
        guard let (total, _) = number(body, itemTotalKeys, items: items) else { return nil }
        for (offsetKey, limitKey) in [("offset", "limit"), ("skip", "limit"), ("offset", "page_size")] {
            guard QueryEditing.int(offsetKey, in: url) != nil, let limit = QueryEditing.int(limitKey, in: url),
                limit > 0
            else { continue }
            return plan(
                .offset(param: offsetKey, limitParam: limitKey, limit: limit, total: total), "offset",
                [
                    ("param", offsetKey), ("limit_param", limitKey), ("limit", String(limit)),
                    ("total", total.description),
                ],
                nil)
        }
        guard let param = ["page", "p"].first(where: { QueryEditing.int($0, in: url) != nil }),
            ["page_size", "per_page", "pageSize", "perPage", "size", "limit"].contains(where: {
                QueryEditing.int($0, in: url).map { $0 > 0 } == true
            })
        else { return nil }
        let start = QueryEditing.int(param, in: url) ?? 1
        var options: [(String, String)] = param == "page" ? [] : [("param", param)]
        if start != 1 { options.append(("start", String(start))) }
        return plan(
            .page(param: param, start: start, totalItems: total), "page", options + [("total", total.description)], nil)
    }

    /// A page whose headers announce more than it holds (``HeaderTotals``: flask-smorest's `X-Pagination`, GitLab's
    /// `X-Total-Pages` and `X-Next-Page`, `X-Total-Count`, WordPress's `X-WP-Total`, `Content-Range`): an offset
    /// walk when the request URL has an offset, else a page walk; either reads the headers' totals on its own.
    static func headerPlan(
        _ headers: HTTPHeaders, url: String, pageItems: Int,
        plan: (PaginationStyle, String, [(String, String)], JSONKeyPath?) -> PaginationDetection
    ) -> PaginationDetection? {
        let totals = HeaderTotals(headers)
        let more =
            (totals.pages.map { $0 > 1 } ?? false) || (totals.items.map { $0 > pageItems } ?? false)
            || totals.nextPage != nil
        guard more, pageItems > 0 else { return nil }
        for (offsetKey, limitKey) in [("offset", "limit"), ("skip", "limit"), ("start", "limit")] {
            guard QueryEditing.int(offsetKey, in: url) != nil else { continue }
            let limit = QueryEditing.int(limitKey, in: url) ?? pageItems
            return plan(
                .offset(param: offsetKey, limitParam: limitKey, limit: limit), "offset",
                [("param", offsetKey), ("limit_param", limitKey), ("limit", String(limit))], nil)
        }
        let param = ["page", "p", "_page"].first { QueryEditing.value($0, in: url) != nil } ?? "page"
        let start = QueryEditing.int(param, in: url) ?? totals.page ?? 1
        var options: [(String, String)] = param == "page" ? [] : [("param", param)]
        if start != 1 { options.append(("start", String(start))) }
        return plan(.page(param: param, start: start), "page", options, nil)
    }

    /// A key at the top level or one object down whose name says cursor or token and whose value is a non-empty
    /// string or a number, not one of the known conventions.
    static func unknownCursor(_ body: JSONValue, items: JSONKeyPath) -> JSONKeyPath? {
        let words = ["cursor", "token", "marker", "continuation", "next"]
        for (path, value) in scalarPaths(body, items: items, depth: 2) {
            guard let key = path.last?.lowercased(), words.contains(where: key.contains),
                !key.hasPrefix("prev"), !key.hasPrefix("has")
            else { continue }
            switch value {
            case .string(let text) where !text.trimmingCharacters(in: .whitespaces).isEmpty: return keyPath(path)
            case .number: return keyPath(path)
            default: continue
            }
        }
        return nil
    }
}
