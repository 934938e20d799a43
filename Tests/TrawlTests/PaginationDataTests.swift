import Testing
import TrawlTestSupport
@testable import Trawl

/// Pagination data a server gets wrong: each is an error naming the page, never a walk that ends early in
/// silence or a guess (socket-free, through the plan).
@Suite("Unusable pagination data fails the walk", .hangGuard)
struct PaginationDataTests {
    let helper = PagePlanTests()
    let base = Request(url: "https://api.test/items")

    /// The plan's action after a first page with `captured` and `items` items.
    func afterFirst(
        _ style: PaginationStyle, _ captured: [JSONKeyPath: JSONValue], items: Int = 10, concurrency: Int = 1
    ) throws -> PagePlan.Action {
        var plan = PagePlan(strategy: style, request: base, limits: .init(concurrency: concurrency))
        let first = try #require(helper.requested(plan.next()))
        plan.completed(helper.response(first.page, items: items, captured: captured))
        return plan.next()
    }

    func message(_ action: PagePlan.Action) -> String? {
        guard let error = helper.failure(action) else { return nil }
        #expect(error.kind == .pagination)
        #expect(error.index == 0)
        return error.trawlError?.message
    }

    let cursor = PaginationStyle.cursor(at: "next", param: "c", hasMore: "has_more")

    @Test("a cursor that is an object, an array or a boolean", arguments: [
        JSONValue.object(["a": .number("1")]), .array([.string("x")]), .bool(true),
    ])
    func cursorOfTheWrongKind(value: JSONValue) throws {
        let text = try #require(message(afterFirst(cursor, ["next": value])))
        #expect(text.contains("the next cursor at 'next' is"))
    }

    @Test("a numeric cursor is sent exactly as written, also past 2^64")
    func numericCursorExact() throws {
        for number in ["18446744073709551617", "42", "1.50"] {
            let action = try afterFirst(cursor, ["next": .number(number), "has_more": .bool(true)])
            let next = try #require(helper.requested(action))
            #expect(next.page.request.queryValue("c") == number)
            #expect(next.page.position == .cursor(number))
        }
    }

    @Test("has_more true with no cursor, an empty one or null; has_more that is not a boolean")
    func hasMoreWithoutCursor() throws {
        for captured: [JSONKeyPath: JSONValue] in [
            ["has_more": .bool(true)], ["has_more": .bool(true), "next": .string("")],
            ["has_more": .bool(true), "next": .null],
        ] {
            let text = try #require(message(afterFirst(cursor, captured)), "\(captured)")
            #expect(text.contains("'has_more' is true but there is no next cursor"))
        }
        let text = try #require(message(afterFirst(cursor, ["has_more": .string("yes"), "next": .string("x")])))
        #expect(text.contains("not true or false"))
        // has_more false with no cursor is the end.
        #expect(helper.isDone(try afterFirst(cursor, ["has_more": .bool(false), "next": .null])))
    }

    @Test("a next URL that is not a string")
    func nextURLNotAString() throws {
        for value in [JSONValue.number("2"), .object([:]), .bool(true)] {
            let action = try afterFirst(.nextURL(at: "next"), ["next": value])
            let text = try #require(message(action))
            #expect(text.contains("the next page's URL at 'next' is"))
        }
        #expect(helper.isDone(try afterFirst(.nextURL(at: "next"), ["next": .null])))
    }

    @Test("a negative total_pages, total_count or total")
    func negativeTotals() throws {
        let page = try #require(message(afterFirst(.page(totalPages: "pages"), ["pages": .number("-3")])))
        #expect(page.contains("'pages' is -3"))
        #expect(message(try afterFirst(.page(totalItems: "count"), ["count": .number("-1")], concurrency: 4)) != nil)
        #expect(message(try afterFirst(.offset(limit: 10, total: "total"), ["total": .number("-10")])) != nil)
    }

    @Test("an empty page in the middle of a collection whose total says there is more does not end the walk")
    func emptyPageWithTotal() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(totalPages: "pages"), request: base)
        var page = try #require(helper.requested(plan.next()))
        plan.completed(helper.response(page.page, items: 10, captured: ["pages": .number("3")]))
        page = try #require(helper.requested(plan.next()))
        plan.completed(helper.response(page.page, items: 0, captured: ["pages": .number("3")]))
        page = try #require(helper.requested(plan.next()))
        #expect(page.page.position == .number(3))

        // Offset: with a limit the walk steps over the empty page; without one it cannot know where the rest is.
        var offset = PagePlan(strategy: PaginationStyle.offset(limit: 10, total: "total"), request: base)
        page = try #require(helper.requested(offset.next()))
        offset.completed(helper.response(page.page, items: 10, captured: ["total": .number("30")]))
        page = try #require(helper.requested(offset.next()))
        offset.completed(helper.response(page.page, items: 0, captured: ["total": .number("30")]))
        page = try #require(helper.requested(offset.next()))
        #expect(page.page.position == .offset(20))
        let unknown = try #require(message(afterFirst(.offset(total: "total"), ["total": .number("30")], items: 0)))
        #expect(unknown.contains("empty"))
        // Without a total an empty page is the end, as before.
        #expect(helper.isDone(try afterFirst(.page(), [:], items: 0)))
    }
}
