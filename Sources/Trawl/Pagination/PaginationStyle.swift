import Foundation

/// The built-in pagination styles: page number, offset/limit, cursor in the body, next URL in the body and
/// RFC 8288 `Link` headers.
///
/// ```swift
/// let byPage = PaginationStyle.page(sizeParam: "per_page", size: 50, totalPages: "total_pages")
/// let byOffset = PaginationStyle.offset(limit: 100, total: "total")
/// let stripe = PaginationStyle.cursor(at: "data.-1.id", param: "starting_after")   // stops on has_more == false
/// let nextURL = PaginationStyle.nextURL(at: "next")
/// let github = PaginationStyle.link()
/// ```
///
/// When the first page tells how many pages there are (total pages or items in the body, a `last` link whose
/// URL carries the page number, or an explicit `pages` range), the remaining pages can be fetched concurrently.
public struct PaginationStyle: PaginationStrategy, Hashable {
    package enum Kind: Hashable {
        case page(param: String, start: Int, sizeParam: String?, size: Int?, totalPages: JSONKeyPath?,
            totalItems: JSONKeyPath?, pages: ClosedRange<Int>?)
        case offset(param: String, limitParam: String, limit: Int?, total: JSONKeyPath?)
        case cursor(path: JSONKeyPath, param: String, hasMore: JSONKeyPath?)
        case nextURL(path: JSONKeyPath)
        case link(pageParam: String)
    }

    package let kind: Kind
    /// Set by detection: a page without the value at this key path contradicts the detected plan.
    package var expectedPath: JSONKeyPath?
    /// Where the body announces the item total when the style itself reads none (a next URL or a cursor walk with
    /// Fractal's `meta.pagination.total`): read as a completeness check only (``total(in:)``).
    public var totalPath: JSONKeyPath?
    /// The position travels in the JSON request body: every parameter the style sets (`param`, `sizeParam`,
    /// `limitParam`, the cursor's `param`) is a key path into the body's object instead of a query parameter
    /// (see ``inBody()``).
    public internal(set) var inBody = false
    /// Set for a GraphQL walk (``graphQL(connection:cursorVariable:)``): the key path of its Relay connection.
    public internal(set) var graphQLConnection: JSONKeyPath?

    /// This style with its position (and page size) set at key paths of the JSON request body instead of the
    /// query: `.cursor(at: "meta.next", param: "page.cursor").inBody()` sends `{"page":{"cursor":"…"},…}`.
    /// The request's body must be a JSON object held in memory; a value that would take the body past
    /// ``maxBodyValueBytes`` fails the walk.
    public func inBody(_ on: Bool = true) -> PaginationStyle {
        var style = self
        style.inBody = on
        return style
    }

    /// This style also reading the item total at `path` (`--total` with `next:`, `cursor:` or `link`).
    public func checkingTotal(at path: JSONKeyPath?) -> PaginationStyle {
        var style = self
        style.totalPath = path
        return style
    }

    /// `param=start, start+1, …`; stops at the total pages when known (`totalPages`, or `totalItems` with a
    /// page size), else at the first empty page. `pages` fetches exactly that range of pages.
    public static func page(
        param: String = "page", start: Int = 1, sizeParam: String? = nil, size: Int? = nil,
        totalPages: JSONKeyPath? = nil, totalItems: JSONKeyPath? = nil, pages: ClosedRange<Int>? = nil
    ) -> PaginationStyle {
        PaginationStyle(kind: .page(
            param: param, start: pages?.lowerBound ?? start, sizeParam: sizeParam, size: size,
            totalPages: totalPages, totalItems: totalItems, pages: pages))
    }

    /// `param=0, n, 2n, …` stepping by the items received; stops at the total when known, else at a short or
    /// empty page. With a `limit`, `limitParam=limit` is sent and a known total allows concurrent pages.
    public static func offset(
        param: String = "offset", limitParam: String = "limit", limit: Int? = nil, total: JSONKeyPath? = nil
    ) -> PaginationStyle {
        PaginationStyle(kind: .offset(param: param, limitParam: limitParam, limit: limit, total: total))
    }

    /// The next cursor is the value at `path` in the body, sent as `param`; stops when it is null, missing or
    /// empty (`""`), or when the value at `hasMore` is `false`.
    public static func cursor(
        at path: JSONKeyPath, param: String, hasMore: JSONKeyPath? = "has_more"
    ) -> PaginationStyle {
        PaginationStyle(kind: .cursor(path: path, param: param, hasMore: hasMore))
    }

    /// The body holds the next page's URL at `path` (relative URLs resolve against the page's URL); stops on
    /// null, missing or empty.
    public static func nextURL(at path: JSONKeyPath) -> PaginationStyle {
        PaginationStyle(kind: .nextURL(path: path))
    }

    /// Follows `Link: <…>; rel="next"`. When a `last` link and the `next` link carry `pageParam`, the pages
    /// between are known and can be fetched concurrently.
    public static func link(pageParam: String = "page") -> PaginationStyle {
        PaginationStyle(kind: .link(pageParam: pageParam))
    }

    public var capturePaths: [JSONKeyPath] {
        let paths: [JSONKeyPath] =
            switch kind {
        case .page(_, _, _, _, let totalPages, let totalItems, _): [totalPages, totalItems].compactMap { $0 }
        case .offset(_, _, _, let total): [total].compactMap { $0 }
        case .cursor(let path, _, let hasMore): [path] + [hasMore].compactMap { $0 }
        case .nextURL(let path): [path]
        case .link: []
        }
        let extra = [totalPath].compactMap { $0 } + (graphQLConnection == nil ? [] : GraphQLAnswer.capturePaths)
        return paths + extra.filter { !paths.contains($0) }
    }

    public func first(_ request: Request) -> PageRequest {
        switch kind {
        case .page(let param, let start, let sizeParam, let size, _, _, _):
            return PageRequest(request: pageRequest(request, param, start, sizeParam, size), position: .number(start))
        case .offset(let param, let limitParam, let limit, _):
            var request = placing(param, "0", number: true, in: request)
            if let limit { request = placing(limitParam, String(limit), number: true, in: request) }
            return PageRequest(request: request, position: .offset(0))
        case .cursor:
            return PageRequest(request: request, position: .cursor(nil))
        case .nextURL, .link:
            return PageRequest(request: request, position: .url(request.url))
        }
    }

    public func next(after page: PageResponse) -> PageRequest? {
        switch kind {
        case .page(let param, _, let sizeParam, let size, _, _, let pages):
            guard case .number(let number) = page.position else { return nil }
            if let pages, number >= pages.upperBound { return nil }
            let known = pageCount(page)
            if let known, number - firstNumber + 1 >= known { return nil }
            // An empty page ends a walk without a total; with one, the total decides (an empty page in the middle
            // of a collection that says it has more is not its end).
            guard page.itemCount > 0 || known != nil || pages != nil else { return nil }
            return PageRequest(
                request: pageRequest(page.request, param, number + 1, sizeParam, size), position: .number(number + 1))
        case .offset(let param, _, let limit, _):
            guard case .offset(let offset) = page.position else { return nil }
            let total = total(in: page)
            // An empty page ends a walk unless a total says there is more and a limit says where it is.
            let step = page.itemCount > 0 ? page.itemCount : (total != nil ? limit ?? 0 : 0)
            guard step > 0 else { return nil }
            let (next, overflow) = offset.addingReportingOverflow(step)
            guard !overflow else { return nil }
            if let total, next >= total { return nil }
            if let limit, page.itemCount > 0, page.itemCount < limit, total == nil { return nil }
            return PageRequest(
                request: placing(param, String(next), number: true, in: page.request), position: .offset(next))
        case .cursor(let path, let param, let hasMore):
            if let hasMore, page.captured[hasMore]?.boolValue == false { return nil }
            // An empty cursor is the end: sent as `param=` it would ask for the first page again.
            guard let cursor = Self.cursorText(page.captured[path]), !cursor.trimmingCharacters(in: .whitespaces).isEmpty
            else { return nil }
            return PageRequest(request: placing(param, cursor, number: false, in: page.request), position: .cursor(cursor))
        case .nextURL(let path):
            guard let next = page.captured[path]?.stringValue, !next.trimmingCharacters(in: .whitespaces).isEmpty,
                let url = Self.resolve(next, against: page.head.url)
            else { return nil }
            return PageRequest(request: page.request.with(url: url), position: .url(url))
        case .link:
            guard let next = LinkHeader(headers: page.head.headers, baseURL: page.head.url).next else { return nil }
            return PageRequest(request: page.request.with(url: next), position: .url(next))
        }
    }

    /// Every page after the first, made now; `nil` beyond ``PlannedPages/eagerLimit`` pages (a walk plans those
    /// lazily through ``plannedPages(after:)``, and refuses absurd totals).
    public func remaining(after first: PageResponse) -> [PageRequest]? {
        guard let planned = plannedPages(after: first), planned.count <= PlannedPages.eagerLimit else { return nil }
        return planned.all
    }

    public func plannedPages(after first: PageResponse) -> PlannedPages? {
        switch kind {
        case .page(let param, _, let sizeParam, let size, _, _, let pages):
            guard case .number(let number) = first.position else { return nil }
            // The pages after `number`: their count, without overflow whatever total the server announced.
            let count: Int
            if let pages {
                count = pages.upperBound > number ? pages.upperBound - number : 0
            } else if let known = pageCount(first) {
                let done = number - firstNumber + 1
                count = known > done ? known - done : 0
            } else {
                return nil
            }
            let request = first.request
            return PlannedPages(count: count, position: { .number(number + 1 + $0) }) { index in
                let page = number + 1 + index
                return PageRequest(request: pageRequest(request, param, page, sizeParam, size), position: .number(page))
            }
        case .offset(let param, _, let limit, _):
            guard let limit, limit > 0, let total = total(in: first) else { return nil }
            let count = total > limit ? (total - limit) / limit + ((total - limit) % limit == 0 ? 0 : 1) : 0
            let request = first.request
            return PlannedPages(count: count, position: { .offset(limit * ($0 + 1)) }) { index in
                let offset = limit * (index + 1)
                return PageRequest(
                    request: placing(param, String(offset), number: true, in: request), position: .offset(offset))
            }
        case .link(let pageParam):
            let links = LinkHeader(headers: first.head.headers, baseURL: first.head.url)
            guard let next = links.next else { return PlannedPages([]) }
            guard let last = links.last, let from = QueryEditing.int(pageParam, in: next),
                let through = QueryEditing.int(pageParam, in: last), from <= through, from > Int.min + 1
            else { return nil }
            let request = first.request
            let (span, overflow) = through.subtractingReportingOverflow(from)
            guard !overflow, span < Int.max else { return nil }
            return PlannedPages(count: span + 1) { index in
                let url = QueryEditing.url(next, setting: pageParam, to: String(from + index))
                return PageRequest(request: request.with(url: url), position: .url(url))
            }
        case .cursor, .nextURL:
            return nil
        }
    }

    public func problem(in page: PageResponse) -> String? {
        if let contradiction = contradiction(in: page) { return contradiction }
        switch kind {
        case .page(_, _, _, _, let totalPages, let totalItems, _):
            return negative(page, totalPages) ?? negative(page, totalItems) ?? notACount(page, totalPages)
                ?? notACount(page, totalItems)
        case .offset(_, _, let limit, let total):
            if let problem = negative(page, total) ?? notACount(page, total) { return problem }
            if page.itemCount == 0, let known = self.total(in: page), limit == nil,
                case .offset(let offset) = page.position, offset < known
            {
                return "the page at offset \(offset) is empty but '\(total?.description ?? "total")' says \(known) items; "
                    + "without a limit the next offset is unknown"
            }
            return nil
        case .cursor(let path, _, let hasMore):
            let value = page.captured[path]
            if inBody, let text = Self.cursorText(value), text.utf8.count > Self.maxBodyValueBytes {
                return "the next cursor at '\(path)' is \(text.utf8.count) bytes, over the \(Self.maxBodyValueBytes) "
                    + "bytes a cursor may add to the request body"
            }
            switch value {
            case .object?, .array?, .bool?:
                return "the next cursor at '\(path)' is \(Self.kindName(value)), not a string or a number"
            default:
                break
            }
            if let hasMore, page.captured[hasMore]?.boolValue == true,
                (Self.cursorText(value) ?? "").trimmingCharacters(in: .whitespaces).isEmpty
            {
                return "'\(hasMore)' is true but there is no next cursor at '\(path)'"
            }
            if let hasMore, let flag = page.captured[hasMore], flag != .null, flag.boolValue == nil {
                return "'\(hasMore)' is \(Self.kindName(flag)), not true or false"
            }
            return nil
        case .nextURL(let path):
            switch page.captured[path] {
            case nil, .null?, .string?: return nil
            case let value?: return "the next page's URL at '\(path)' is \(Self.kindName(value)), not a string"
            }
        case .link:
            // A next link the parser skipped (a control character in its target, no <…>) must not read as the end.
            let fields = page.head.headers.values(for: "Link")
            guard fields.contains(where: { LinkHeader.names(relation: "next", in: $0) }),
                LinkHeader(headers: page.head.headers, baseURL: page.head.url).next == nil
            else { return nil }
            return "the Link header names a next page but its target cannot be read (a control character, a space or "
                + "no <…> around it)"
        }
    }

    /// A cursor's text: a string as it is, a number exactly as written (never through a 64-bit integer).
    static func cursorText(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .number(let text)?: text
        default: nil
        }
    }

    private static func kindName(_ value: JSONValue?) -> String {
        switch value {
        case .object?: "an object"
        case .array?: "an array"
        case .bool?: "a boolean"
        case .number?: "a number"
        case .string?: "a string"
        case .null?, nil: "null"
        }
    }

    /// The problem with a negative count at `path`.
    private func negative(_ page: PageResponse, _ path: JSONKeyPath?) -> String? {
        guard let path, let value = page.captured[path] else { return nil }
        if let count = page.int(at: path), count < 0 { return "'\(path)' is \(count): a count cannot be negative" }
        if case .number(let text) = value, text.hasPrefix("-"), page.int(at: path) == nil {
            return "'\(path)' is \(text): a count cannot be negative"
        }
        return nil
    }

    /// The problem with a number at `path` that is no count: a fraction, or past 64 bits (`1e400`, which a walk
    /// would otherwise take for no total at all and go on until the server stops).
    private func notACount(_ page: PageResponse, _ path: JSONKeyPath?) -> String? {
        guard let path, let value = page.captured[path], page.int(at: path) == nil else { return nil }
        func shown(_ text: String) -> Substring { text.count > 40 ? text.prefix(40) + "…" : Substring(text) }
        switch value {
        case .null:
            return nil  // no total announced
        case .number(let text):
            return "'\(path)' is \(shown(text)): not a count (a whole number that fits in 64 bits)"
        case .string(let text):
            return "'\(path)' is the string \"\(shown(text))\": not a count (a whole number that fits in 64 bits)"
        default:
            return "'\(path)' is \(Self.kindName(value)), not a count"
        }
    }

    /// The item total: the body's (at the style's total path, else at ``totalPath``), else the headers' (see
    /// ``HeaderTotals``).
    public func total(in page: PageResponse) -> Int? {
        if let (path, _) = bodyTotalPath(page) { return page.int(at: path) }
        return page.headerTotals.items
    }

    /// Where ``total(in:)`` read the total: `'meta.pagination.total' in the body`, `the X-Total-Count header`.
    public func totalSource(in page: PageResponse) -> String? {
        if let (path, _) = bodyTotalPath(page) { return "'\(path)' in the body" }
        return page.headerTotals.itemsSource
    }

    /// The key path of the body's item total, when the page holds a count there.
    private func bodyTotalPath(_ page: PageResponse) -> (JSONKeyPath, Int)? {
        let own: JSONKeyPath? =
            switch kind {
            case .page(_, _, _, _, _, let totalItems, _): totalItems
            case .offset(_, _, _, let total): total
            default: nil
            }
        for path in [own, totalPath].compactMap({ $0 }) {
            if let count = page.int(at: path) { return (path, count) }
        }
        return nil
    }

    private var firstNumber: Int {
        if case .page(_, let start, _, _, _, _, _) = kind { return start }
        return 0
    }

    /// The number of pages, from total pages in the body, or total items and the page size.
    private func pageCount(_ page: PageResponse) -> Int? {
        guard case .page(_, _, _, let size, let totalPages, let totalItems, _) = kind else { return nil }
        if let pages = page.int(at: totalPages) { return pages }
        // The body's counts first; the headers' (X-Total-Pages, X-Pagination, …) when the body has none.
        let headers = page.headerTotals
        if page.int(at: totalItems) == nil, let pages = headers.pages { return pages }
        guard let items = page.int(at: totalItems) ?? headers.items else { return nil }
        let perPage = size ?? headers.perPage ?? (page.position == .number(firstNumber) ? page.itemCount : 0)
        guard perPage > 0 else { return items == 0 ? 0 : nil }
        return items / perPage + (items % perPage == 0 ? 0 : 1)
    }

    private func pageRequest(_ request: Request, _ param: String, _ number: Int, _ sizeParam: String?, _ size: Int?)
        -> Request
    {
        var request = placing(param, String(number), number: true, in: request)
        if let sizeParam, let size { request = placing(sizeParam, String(size), number: true, in: request) }
        return request
    }

    static func resolve(_ target: String, against base: String) -> String? {
        guard let baseURL = URL(string: base) else { return URL(string: target)?.absoluteString }
        return URL(string: target, relativeTo: baseURL)?.absoluteString
    }
}

/// Lets `.page(...)`, `.cursor(...)` and the others be written where any strategy is expected.
extension PaginationStrategy where Self == PaginationStyle {
    public static func page(
        param: String = "page", start: Int = 1, sizeParam: String? = nil, size: Int? = nil,
        totalPages: JSONKeyPath? = nil, totalItems: JSONKeyPath? = nil, pages: ClosedRange<Int>? = nil
    ) -> PaginationStyle {
        PaginationStyle.page(
            param: param, start: start, sizeParam: sizeParam, size: size, totalPages: totalPages,
            totalItems: totalItems, pages: pages)
    }

    public static func offset(
        param: String = "offset", limitParam: String = "limit", limit: Int? = nil, total: JSONKeyPath? = nil
    ) -> PaginationStyle {
        PaginationStyle.offset(param: param, limitParam: limitParam, limit: limit, total: total)
    }

    public static func cursor(at path: JSONKeyPath, param: String, hasMore: JSONKeyPath? = "has_more")
        -> PaginationStyle
    {
        PaginationStyle.cursor(at: path, param: param, hasMore: hasMore)
    }

    public static func nextURL(at path: JSONKeyPath) -> PaginationStyle { PaginationStyle.nextURL(at: path) }

    public static func link(pageParam: String = "page") -> PaginationStyle {
        PaginationStyle.link(pageParam: pageParam)
    }
}
