import Testing
import TrawlTestSupport
@testable import Trawl
import TrawlEngine
import TrawlJSON

/// Totals in headers (issue 35) and the detection rules that read them, without sockets.
@Suite("Header totals and relative next references", .hangGuard)
struct HeaderTotalsTests {
    @Test("each framework's total headers are read, with the header named")
    func frameworks() {
        let smorest = HeaderTotals(
            HTTPHeaders([("X-Pagination", #"{"total": 1234, "total_pages": 25, "page": 1, "next_page": 2}"#)]))
        #expect(smorest.items == 1234 && smorest.pages == 25 && smorest.page == 1 && smorest.nextPage == 2)
        #expect(smorest.itemsSource == "the X-Pagination header")
        let gitlab = HeaderTotals(HTTPHeaders([
            ("X-Total", "1234"), ("X-Total-Pages", "25"), ("X-Page", "1"), ("X-Per-Page", "50"), ("X-Next-Page", "2"),
        ]))
        #expect(gitlab.items == 1234 && gitlab.pages == 25 && gitlab.perPage == 50 && gitlab.nextPage == 2)
        #expect(HeaderTotals(HTTPHeaders([("x-total-count", "77")])).items == 77)
        let wordpress = HeaderTotals(HTTPHeaders([("X-WP-Total", "90"), ("X-WP-TotalPages", "9")]))
        #expect(wordpress.items == 90 && wordpress.pagesSource == "the X-WP-TotalPages header")
        #expect(HeaderTotals(HTTPHeaders([("Content-Range", "items 0-49/1234")])).items == 1234)
        #expect(HeaderTotals(HTTPHeaders([("Content-Range", "0-49/1234")])).items == 1234)
    }

    @Test("values that are no count are no total: negative, fractions, unknown, bytes ranges, broken JSON")
    func noTotals() {
        for headers in [
            [("X-Total-Count", "-5")], [("X-Total-Count", "1.5")], [("X-Total-Count", "1e400")],
            [("Content-Range", "items 0-49/*")], [("Content-Range", "bytes 0-99/1000")],
            [("X-Pagination", "{total: 5")], [("X-Pagination", "[1,2]")], [("X-Next-Page", "")],
        ] {
            #expect(HeaderTotals(HTTPHeaders(headers)).isEmpty, "\(headers)")
        }
    }

    @Test("a bare array whose headers announce more is a page walk; one whose headers say nothing a single page")
    func headerPlans() throws {
        let body: JSONValue = .array([["id": 1], ["id": 2]])
        let url = "https://api.example.com/things?page=1&page_size=2"
        let paged = try PaginationDetection.detect(
            body: body, headers: HTTPHeaders([("X-Pagination", #"{"total": 5, "total_pages": 3}"#)]), url: url)
        #expect(!paged.isSinglePage)
        #expect(paged.settings.map { "\($0.name)=\($0.value)" } == ["paginate=page"])
        let offset = try PaginationDetection.detect(
            body: body, headers: HTTPHeaders([("Content-Range", "items 0-1/9")]),
            url: "https://api.example.com/things?offset=0&limit=2")
        #expect(offset.settings.map { "\($0.name)=\($0.value)" }
            == ["paginate=offset", "param=offset", "limit_param=limit", "limit=2"])
        let whole = try PaginationDetection.detect(
            body: body, headers: HTTPHeaders([("X-Total-Count", "2")]), url: url)
        #expect(whole.isSinglePage)
    }

    @Test("python-eve's relative href resolves against the page's URL; a cursor is never taken for a URL")
    func relativeNext() throws {
        let body: JSONValue = [
            "_items": .array([["id": 1]]),
            "_links": ["next": ["href": "items?page=2", "title": "next page"], "parent": ["href": "/"]],
            "_meta": ["total": 9, "page": 1],
        ]
        let detected = try PaginationDetection.detect(
            body: body, headers: HTTPHeaders(), url: "https://a.example/api/items")
        #expect(detected.settings.map { "\($0.name)=\($0.value)" }
            == ["paginate=next:_links.next.href", "total=_meta.total"])
        #expect(PaginationStyle.resolve("items?page=2", against: "https://a.example/api/items?page=1")
            == "https://a.example/api/items?page=2")
        #expect(PaginationStyle.resolve("?page=2", against: "https://a.example/api/items?page=1")
            == "https://a.example/api/items?page=2")
        #expect(PaginationStyle.resolve("../v2/items?page=2", against: "https://a.example/api/items")
            == "https://a.example/v2/items?page=2")
        for cursor in ["bzoxMA==", "YWJj/ZA==", "12345", "javascript:alert(1)?a=b", "//evil.example/x?page=2"] {
            #expect(!PaginationDetection.looksLikeURL(cursor), "\(cursor)")
        }
    }
}
