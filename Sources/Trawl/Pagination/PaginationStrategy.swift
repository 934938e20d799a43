import Foundation

/// How a paginated endpoint is walked: the first request, the request after a page, and (when the total is
/// knowable) every remaining request at once so they can be fetched concurrently.
///
/// The built-in strategies are the ``PaginationStyle`` values; conform to add your own:
///
/// ```swift
/// struct EveryOtherPage: PaginationStrategy {
///     func first(_ request: Request) -> PageRequest {
///         PageRequest(request: request.settingQuery("p", to: "0"), position: .number(0))
///     }
///     func next(after page: PageResponse) -> PageRequest? {
///         guard page.itemCount > 0, case .number(let n) = page.position else { return nil }
///         return PageRequest(request: page.request.settingQuery("p", to: String(n + 2)), position: .number(n + 2))
///     }
/// }
/// ```
public protocol PaginationStrategy: Sendable {
    /// Side fields the strategy reads from each page's body (totals, cursors, next URLs).
    var capturePaths: [JSONKeyPath] { get }
    /// The request for the first page, derived from the caller's request.
    func first(_ request: Request) -> PageRequest
    /// The request for the page after `page`, or `nil` when `page` is the last.
    func next(after page: PageResponse) -> PageRequest?
    /// Every request after the first page when the first page tells how many there are; `nil` when it
    /// doesn't (the chain is then followed serially with ``next(after:)``).
    func remaining(after first: PageResponse) -> [PageRequest]?
    /// The same pages as ``remaining(after:)``, as a count and a way to make each one when it is due, so that a
    /// walk plans a million pages without holding a million requests (and a hostile total costs nothing). The
    /// default wraps `remaining(after:)`.
    func plannedPages(after first: PageResponse) -> PlannedPages?
    /// The total number of items, when the page says.
    func total(in page: PageResponse) -> Int?
    /// Where ``total(in:)`` read it, for messages (`'total' in the body`, `the X-Total-Count header`).
    func totalSource(in page: PageResponse) -> String?
    /// What is wrong with a page's pagination data, when something is (a cursor that is an object, `has_more`
    /// true with no cursor, a negative total): the walk fails there with this message rather than ending early
    /// or guessing. `nil` (the default) when the data is usable.
    func problem(in page: PageResponse) -> String?
    /// What makes a page itself unusable, so that none of its items may be kept (a GraphQL answer with
    /// `errors`): the walk fails at that page, which counts as not read. `nil` (the default) for a usable page.
    func rejection(of page: PageResponse) -> String?
    /// Whether the elements at `itemsPath` are GraphQL edges, each item being the edge's `node` (a
    /// ``PaginationStyle/graphQL(connection:cursorVariable:)`` walk read at its connection's `edges`). `false` (the
    /// default) for any other.
    func itemsAreEdges(at itemsPath: JSONKeyPath) -> Bool
}

extension PaginationStrategy {
    public var capturePaths: [JSONKeyPath] { [] }
    public func remaining(after first: PageResponse) -> [PageRequest]? { nil }
    public func plannedPages(after first: PageResponse) -> PlannedPages? { remaining(after: first).map(PlannedPages.init) }
    public func total(in page: PageResponse) -> Int? { nil }
    public func totalSource(in page: PageResponse) -> String? { total(in: page).map { _ in "the first page" } }
    public func problem(in page: PageResponse) -> String? { nil }
    public func rejection(of page: PageResponse) -> String? { nil }
    public func itemsAreEdges(at itemsPath: JSONKeyPath) -> Bool { false }
}

/// The pages after the first when the first tells how many there are: their number and each page made when it
/// is asked for.
///
/// ```swift
/// let pages = PlannedPages(count: 999) { index in
///     PageRequest(request: base.settingQuery("page", to: String(index + 2)), position: .number(index + 2))
/// }
/// pages[0].position   // page 2
/// ```
public struct PlannedPages: Sendable {
    public let count: Int
    private let make: @Sendable (Int) -> PageRequest
    /// A page's position without making its request (its URL), when the style knows it from the index alone.
    private let locate: (@Sendable (Int) -> PagePosition)?

    /// `count` pages, the one at `index` (from 0) made by `page`.
    public init(count: Int, page: @escaping @Sendable (Int) -> PageRequest) {
        self.init(count: count, position: nil, page: page)
    }

    /// `count` pages whose positions `position` gives, when given, without building their requests.
    init(
        count: Int, position: (@Sendable (Int) -> PagePosition)?, page: @escaping @Sendable (Int) -> PageRequest
    ) {
        self.count = max(0, count)
        self.make = page
        locate = position
    }

    /// The position of the page at `index`: what a plan compares once the page is done (the request is made
    /// only when the style cannot say it otherwise).
    public func position(at index: Int) -> PagePosition { locate?(index) ?? make(index).position }

    public init(_ pages: [PageRequest]) {
        self.init(count: pages.count) { pages[$0] }
    }

    /// The most pages ``all`` makes (and `PaginationStyle.remaining(after:)` returns): a larger plan is walked
    /// through the subscript, page by page, or refused as a hostile total.
    public static let eagerLimit = 1_000_000

    public subscript(index: Int) -> PageRequest { make(index) }

    /// The first `count` of these pages.
    public func prefix(_ count: Int) -> PlannedPages {
        PlannedPages(count: min(self.count, count), position: locate, page: make)
    }

    /// Every page, made now.
    public var all: [PageRequest] { (0..<count).map(make) }
}

/// Where a page sits in its collection: a page number, an offset, a cursor or a URL.
///
/// ```swift
/// PagePosition.number(3).description        // "page 3"
/// PagePosition.cursor("ch_42").description  // "cursor ch_42"
/// ```
public enum PagePosition: Sendable, Hashable, CustomStringConvertible {
    case number(Int)
    case offset(Int)
    /// The cursor the page was requested with; `nil` for the first page.
    case cursor(String?)
    case url(String)

    public var description: String {
        switch self {
        case .number(let number): "page \(number)"
        case .offset(let offset): "offset \(offset)"
        case .cursor(let cursor): cursor.map { "cursor \($0)" } ?? "first page (no cursor)"
        case .url(let url): "page at \(url)"
        }
    }
}

/// One page's request and its position.
///
/// ```swift
/// PageRequest(request: Request(url: "https://api.example.com/items?page=2"), position: .number(2))
/// ```
public struct PageRequest: Sendable {
    public var request: Request
    public var position: PagePosition

    public init(request: Request, position: PagePosition) {
        self.request = request
        self.position = position
    }
}

/// What a strategy sees of a fetched page: its request and position, how many items it held, the captured
/// side fields and the response head.
///
/// ```swift
/// page.captured["has_more"]?.boolValue   // Optional(true)
/// ```
public struct PageResponse: Sendable {
    public var request: Request
    public var position: PagePosition
    public var itemCount: Int
    public var captured: [JSONKeyPath: JSONValue]
    public var head: ResponseHead
    /// The page holds an item older than an incremental walk's mark, newest first: no page after it is asked for.
    package var pastMark = false

    public init(
        request: Request, position: PagePosition, itemCount: Int, captured: [JSONKeyPath: JSONValue],
        head: ResponseHead
    ) {
        self.request = request
        self.position = position
        self.itemCount = itemCount
        self.captured = captured
        self.head = head
    }

    /// The integer at `path`, when captured (numbers or numeric strings).
    public func int(at path: JSONKeyPath?) -> Int? {
        guard let path, let value = captured[path] else { return nil }
        if let number = value.int64Value { return Int(exactly: number) }
        return value.stringValue.flatMap { Int($0) }
    }
}

extension Request {
    /// This request with the query parameter `name` set to `value` (replacing every earlier value, else
    /// appended); the value is percent-encoded.
    ///
    /// ```swift
    /// Request(url: "https://x.test/items?page=1&q=a").settingQuery("page", to: "2").url
    /// // "https://x.test/items?page=2&q=a"
    /// ```
    public func settingQuery(_ name: String, to value: String) -> Request {
        var copy = self
        copy.url = QueryEditing.url(url, setting: name, to: value)
        return copy
    }

    /// The value of the first query parameter `name` in the URL, percent-decoded; `nil` when absent.
    ///
    /// ```swift
    /// Request(url: "https://x.test/items?page=2&q=a%20b").queryValue("q")   // "a b"
    /// ```
    public func queryValue(_ name: String) -> String? {
        QueryEditing.value(name, in: url)
    }

    /// This request with another URL.
    func with(url: String) -> Request {
        var copy = self
        copy.url = url
        return copy
    }
}

enum QueryEditing {
    /// `page` (derived from `base` by a strategy) carried over to `fresh`, `base` prepared again: when the page
    /// only changed query parameters (page number, offset, cursor), `fresh` with those parameters, so a credential
    /// an adapter puts in the query is the fresh one; a page at another path (a next link) as it is, on `fresh`'s
    /// method, headers and body (the page's own body when a walk in the body changed it).
    static func page(_ page: Request, of base: Request, on fresh: Request) -> Request {
        var result = fresh
        result.url = page.url
        // A walk paged in the body (GraphQL, `inBody()`) changed the body: its position travels with it.
        if let pageBody = page.body?.bytes, pageBody != base.body?.bytes { result.body = page.body }
        let pagePath = page.url.prefix { $0 != "?" && $0 != "#" }
        guard pagePath == base.url.prefix(while: { $0 != "?" && $0 != "#" }),
            fresh.url.prefix(while: { $0 != "?" && $0 != "#" }) == pagePath
        else { return result }
        let baseQuery = pairs(base.url)
        result.url = fresh.url
        for (name, value) in pairs(page.url) where baseQuery[name] != value {
            result.url = url(result.url, setting: name, to: value)
        }
        return result
    }

    /// The first value of each query parameter of `url`, percent-decoded.
    private static func pairs(_ url: String) -> [String: String] {
        guard let mark = url.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in url[url.index(after: mark)...].prefix(while: { $0 != "#" }).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let raw = parts.count == 2 ? String(parts[1]) : ""
            if result[name] == nil { result[name] = raw.removingPercentEncoding ?? raw }
        }
        return result
    }

    /// `url` with the query parameter `name` set to `value`: its first occurrence replaced (matched encoded or
    /// decoded), later ones dropped, appended when absent; the fragment kept. Works on the UTF-8 bytes: a walk
    /// makes one URL per page, and walking Characters costs microseconds per URL.
    static func url(_ url: String, setting name: String, to value: String) -> String {
        let utf8 = url.utf8
        let hash = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        let mark = utf8[..<hash].firstIndex(of: UInt8(ascii: "?"))
        let encodedName = PercentEncoding.queryComponent(name)
        let encodedValue = PercentEncoding.queryComponent(value)
        var result = String(url[..<(mark ?? hash)])
        result.reserveCapacity(utf8.count + encodedName.utf8.count + encodedValue.utf8.count + 2)
        result += "?"
        var placed = false
        var separator = false
        func appendPair() {
            if separator { result += "&" }
            result += encodedName
            result += "="
            result += encodedValue
            separator = true
        }
        if let mark {
            var start = utf8.index(after: mark)
            while start < hash {
                let end = utf8[start..<hash].firstIndex(of: UInt8(ascii: "&")) ?? hash
                if start < end {
                    let existing = url[start..<end]
                    // As `split(separator: "=", maxSplits: 1).first` had it: leading `=`s are skipped.
                    let keyStart = existing.utf8.firstIndex { $0 != UInt8(ascii: "=") } ?? end
                    let keyEnd = existing.utf8[keyStart...].firstIndex(of: UInt8(ascii: "=")) ?? end
                    let key = url[keyStart..<keyEnd]
                    if key == encodedName || (key.contains("%") ? key.removingPercentEncoding == name : key == name) {
                        if !placed { appendPair() }
                        placed = true
                    } else {
                        if separator { result += "&" }
                        result += existing
                        separator = true
                    }
                }
                start = end < hash ? utf8.index(after: end) : hash
            }
        }
        if !placed { appendPair() }
        result += url[hash...]
        return result
    }

    /// The integer value of the first query parameter `name` in `url`.
    static func int(_ name: String, in url: String) -> Int? {
        value(name, in: url).flatMap { Int($0) }
    }

    /// The percent-decoded value of the first query parameter `name` in `url` (`""` for `name` alone).
    static func value(_ name: String, in url: String) -> String? {
        guard let mark = url.firstIndex(of: "?") else { return nil }
        let query = url[url.index(after: mark)...].prefix { $0 != "#" }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard String(parts[0]).removingPercentEncoding == name else { continue }
            let raw = parts.count == 2 ? String(parts[1]) : ""
            return raw.removingPercentEncoding ?? raw
        }
        return nil
    }
}
