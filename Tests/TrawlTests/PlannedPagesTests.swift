import Testing
import TrawlTestSupport

@testable import Trawl

/// Totals a server sends are numbers from outside: `Int64.max` must neither trap nor become a plan of billions of
/// page requests (issue 22).
@Suite("planned pages: huge totals neither trap nor plan billions of pages", .hangGuard)
struct PlannedPagesTests {
    func first(_ captured: [JSONKeyPath: JSONValue], position: PagePosition = .number(1)) -> PageResponse {
        PageResponse(
            request: Request(url: "https://x.test/items?page=1"), position: position, itemCount: 10,
            captured: captured, head: ResponseHead(status: 200, url: "https://x.test/items?page=1"))
    }

    @Test("total pages or items at Int64.max: no plan, the next page still follows, no overflow")
    func hugeTotals() {
        let max = JSONValue.number(String(Int64.max))
        let byPages = PaginationStyle.page(totalPages: "total_pages")
        #expect(byPages.remaining(after: first(["total_pages": max])) == nil)
        #expect(byPages.next(after: first(["total_pages": max]))?.position == .number(2))
        let byItems = PaginationStyle.page(sizeParam: "per_page", size: 10, totalItems: "total")
        #expect(byItems.remaining(after: first(["total": max])) == nil)
        #expect(byItems.next(after: first(["total": max]))?.position == .number(2))
        let offsets = PaginationStyle.offset(limit: 10, total: "total")
        #expect(offsets.remaining(after: first(["total": max], position: .offset(0))) == nil)
        // A plan that fits is still made, to the page.
        #expect(byPages.remaining(after: first(["total_pages": .number("4")]))?.count == 3)
        #expect(byItems.remaining(after: first(["total": .number("31")]))?.count == 3)
    }

    @Test("a Link header whose last page is Int64.max is walked page by page")
    func hugeLastLink() {
        let link = "<https://x.test/items?page=2>; rel=\"next\", <https://x.test/items?page=\(Int64.max)>; rel=\"last\""
        let response = PageResponse(
            request: Request(url: "https://x.test/items?page=1"), position: .url("https://x.test/items?page=1"),
            itemCount: 10, captured: [:],
            head: ResponseHead(status: 200, headers: ["Link": link], url: "https://x.test/items?page=1"))
        #expect(PaginationStyle.link(pageParam: "page").remaining(after: response) == nil)
    }

    @Test("a plan's positions, said without building the pages' URLs, are those of its pages")
    func positionsWithoutRequests() throws {
        let link = "<https://x.test/items?page=2>; rel=\"next\", <https://x.test/items?page=9>; rel=\"last\""
        let plans: [PlannedPages?] = [
            PaginationStyle.page(totalPages: "total_pages").plannedPages(after: first(["total_pages": .number("9")])),
            PaginationStyle.page(sizeParam: "per_page", size: 10, totalItems: "total")
                .plannedPages(after: first(["total": .number("95")], position: .number(3))),
            PaginationStyle.offset(limit: 10, total: "total")
                .plannedPages(after: first(["total": .number("95")], position: .offset(0))),
            PaginationStyle.link(pageParam: "page").plannedPages(after: PageResponse(
                request: Request(url: "https://x.test/items?page=1"), position: .url("https://x.test/items?page=1"),
                itemCount: 10, captured: [:],
                head: ResponseHead(status: 200, headers: ["Link": link], url: "https://x.test/items?page=1"))),
        ]
        for case let plan? in plans {
            #expect(plan.count > 3)
            for index in 0..<plan.count { #expect(plan.position(at: index) == plan[index].position) }
            let cut = plan.prefix(2)
            #expect(cut.count == 2 && cut.position(at: 1) == plan[1].position)
        }
        #expect(plans.allSatisfy { $0 != nil })
    }
}
