import Foundation
import TrawlEngine
import TrawlJSON

/// The totals and page numbers a response announces in its headers, as many frameworks send them instead of
/// (or beside) the body's.
///
/// ```swift
/// // flask-smorest: X-Pagination: {"total": 1234, "total_pages": 25, "page": 1, "next_page": 2}
/// let totals = HeaderTotals(head.headers)
/// totals.items          // 1234
/// totals.pages          // 25
/// totals.itemsSource    // "the X-Pagination header"
/// ```
///
/// Read, in order: `X-Total-Count` (json-server, many REST kits), `X-Total` and `X-Total-Pages` (GitLab),
/// `X-WP-Total` and `X-WP-TotalPages` (WordPress), `X-Pagination` (a JSON object: flask-smorest's `total`,
/// `total_pages`, `page`, `next_page`; also `page_size`), `Content-Range: items 0-49/1234` (an unknown
/// total, `*`, is none), and GitLab's `X-Page`, `X-Per-Page`, `X-Next-Page`. A value that is not a whole number
/// of at most 64 bits, or is negative, is no total.
public struct HeaderTotals: Sendable, Hashable {
    /// The number of items in the collection.
    public var items: Int?
    /// Which header said ``items`` (for messages).
    public var itemsSource: String?
    /// The number of pages.
    public var pages: Int?
    public var pagesSource: String?
    /// This page's number, when a header says it.
    public var page: Int?
    /// The page size, when a header says it.
    public var perPage: Int?
    /// The next page's number, when a header says it (`X-Next-Page`, `next_page`); an empty value on the last
    /// page reads as `nil`.
    public var nextPage: Int?

    /// Whether any header announced a total or a next page.
    public var isEmpty: Bool { items == nil && pages == nil && nextPage == nil }

    public init(_ headers: HTTPHeaders) {
        func count(_ text: String?) -> Int? {
            guard let text = text?.trimmingCharacters(in: .whitespaces), let value = Int(text), value >= 0 else {
                return nil
            }
            return value
        }
        func take(items value: Int?, from source: String) {
            guard items == nil, let value else { return }
            items = value
            itemsSource = source
        }
        func take(pages value: Int?, from source: String) {
            guard pages == nil, let value else { return }
            pages = value
            pagesSource = source
        }
        for name in ["X-Total-Count", "X-Total", "X-WP-Total"] {
            take(items: count(headers[name]), from: "the \(name) header")
        }
        for name in ["X-Total-Pages", "X-WP-TotalPages"] {
            take(pages: count(headers[name]), from: "the \(name) header")
        }
        if let text = headers["X-Pagination"], text.utf8.count <= 64 << 10,
            let value = try? JSONItemDecoder().decode(JSONValue.self, from: Array(text.utf8)),
            case .object = value
        {
            func number(_ key: String) -> Int? {
                switch value[key] {
                case .number(let text)?: count(text)
                case .string(let text)?: count(text)
                default: nil
                }
            }
            take(items: number("total") ?? number("total_count") ?? number("count"), from: "the X-Pagination header")
            take(
                pages: number("total_pages") ?? number("pages") ?? number("last_page"), from: "the X-Pagination header")
            page = number("page") ?? number("current_page")
            perPage = number("page_size") ?? number("per_page")
            nextPage = number("next_page")
        }
        if let range = headers["Content-Range"], let slash = range.lastIndex(of: "/"),
            !range.lowercased().hasPrefix("bytes")
        {
            take(items: count(String(range[range.index(after: slash)...])), from: "the Content-Range header")
        }
        page = page ?? count(headers["X-Page"])
        perPage = perPage ?? count(headers["X-Per-Page"])
        nextPage = nextPage ?? count(headers["X-Next-Page"])
    }
}

extension PageResponse {
    /// The totals this page's headers announce.
    public var headerTotals: HeaderTotals { HeaderTotals(head.headers) }
}
