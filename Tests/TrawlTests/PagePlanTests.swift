import Foundation
import Testing
import TrawlTestSupport
@testable import Trawl

/// `PagePlan` on its own: events in, actions out, no sockets and no sleeps.
@Suite("The page plan's state machine", .hangGuard)
struct PagePlanTests {
    let base = Request(url: "https://api.test/items")

    func response(
        _ page: PageRequest, items: Int, captured: [JSONKeyPath: JSONValue] = [:], headers: HTTPHeaders = [:]
    ) -> PageResponse {
        PageResponse(
            request: page.request, position: page.position, itemCount: items, captured: captured,
            head: ResponseHead(status: 200, headers: headers, url: page.request.url))
    }

    /// The page of a `.request` action, or a failed expectation.
    func requested(_ action: PagePlan.Action, sourceLocation: SourceLocation = #_sourceLocation)
        -> (page: PageRequest, index: Int)?
    {
        guard case .request(let page, let index) = action else {
            Issue.record("expected a request, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return (page, index)
    }

    func isWait(_ action: PagePlan.Action) -> Bool { if case .wait = action { true } else { false } }
    func isDone(_ action: PagePlan.Action) -> Bool { if case .done = action { true } else { false } }
    func failure(_ action: PagePlan.Action) -> PaginationError? {
        if case .fail(let error) = action { error } else { nil }
    }

    func cursor(_ value: String?) -> [JSONKeyPath: JSONValue] {
        ["next": value.map(JSONValue.string) ?? .null]
    }

    @Test("the first page is asked for once, then the plan waits for it")
    func firstPage() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(), request: base)
        let first = try #require(requested(plan.next()))
        #expect(first.index == 0)
        #expect(first.page.position == .number(1))
        #expect(first.page.request.queryValue("page") == "1")
        #expect(plan.inFlight == 1)
        #expect(isWait(plan.next()))
        #expect(isWait(plan.next()))
    }

    @Test("a serial chain asks for each next page after the one before, and ends when the strategy says")
    func serialChain() throws {
        var plan = PagePlan(strategy: PaginationStyle.cursor(at: "next", param: "c", hasMore: nil), request: base)
        var page = try #require(requested(plan.next()))
        #expect(plan.completed(response(page.page, items: 3, captured: cursor("b"))) == .cursor("b"))
        page = try #require(requested(plan.next()))
        #expect(page.index == 1)
        #expect(page.page.request.queryValue("c") == "b")
        #expect(isWait(plan.next()))
        #expect(plan.completed(response(page.page, items: 2, captured: cursor(nil))) == nil)
        #expect(isDone(plan.next()))
        #expect(isDone(plan.next()))
        #expect(plan.pagesCompleted == 2)
        #expect(plan.itemsCompleted == 5)
        #expect(!plan.isPlanned)
        #expect(plan.cut == nil)
    }

    @Test("a known total plans the rest: up to `concurrency` in flight, more as each completes, in order")
    func plannedPages() throws {
        var plan = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages", totalItems: "total"), request: base,
            limits: .init(concurrency: 3))
        let first = try #require(requested(plan.next()))
        let next = plan.completed(response(first.page, items: 10, captured: ["pages": .number("6"), "total": .number("55")]))
        #expect(next == .number(2))
        #expect(plan.isPlanned)
        #expect(plan.pageTotal == 6)
        #expect(plan.expectedItems == 55)
        var started: [PageRequest] = []
        for expectedIndex in 1...3 {
            let page = try #require(requested(plan.next()))
            #expect(page.index == expectedIndex)
            started.append(page.page)
        }
        #expect(started.map(\.position) == [.number(2), .number(3), .number(4)])
        #expect(isWait(plan.next()))
        #expect(plan.completed(response(started[0], items: 10)) == .number(3))
        let fifth = try #require(requested(plan.next()))
        #expect(fifth.page.position == .number(5))
        #expect(isWait(plan.next()))
        plan.completed(response(started[1], items: 10))
        let sixth = try #require(requested(plan.next()))
        #expect(sixth.index == 5)
        #expect(isWait(plan.next()))
        plan.completed(response(started[2], items: 10))
        plan.completed(response(fifth.page, items: 10))
        #expect(isWait(plan.next()))
        #expect(plan.completed(response(sixth.page, items: 5)) == nil)
        #expect(isDone(plan.next()))
        #expect(plan.pagesCompleted == 6)
        #expect(plan.itemsCompleted == 55)
    }

    @Test("with one page at a time, a known total is still walked serially")
    func totalButSerial() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(totalPages: "pages"), request: base)
        let first = try #require(requested(plan.next()))
        plan.completed(response(first.page, items: 10, captured: ["pages": .number("2")]))
        #expect(!plan.isPlanned)
        let second = try #require(requested(plan.next()))
        #expect(second.page.position == .number(2))
        #expect(isWait(plan.next()))
        plan.completed(response(second.page, items: 10, captured: ["pages": .number("2")]))
        #expect(isDone(plan.next()))
    }

    @Test("a first page that says there is nothing more ends a planned walk at once")
    func plannedWithNothingMore() throws {
        var plan = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"), request: base, limits: .init(concurrency: 4))
        let first = try #require(requested(plan.next()))
        #expect(plan.completed(response(first.page, items: 3, captured: ["pages": .number("1")])) == nil)
        #expect(plan.isPlanned)
        #expect(isDone(plan.next()))
    }

    @Test("a next page already fetched fails the walk as a pagination loop, naming both pages")
    func loop() throws {
        var plan = PagePlan(strategy: PaginationStyle.cursor(at: "next", param: "c", hasMore: nil), request: base)
        var page = try #require(requested(plan.next()))
        plan.completed(response(page.page, items: 1, captured: cursor("b")))
        page = try #require(requested(plan.next()))
        plan.completed(response(page.page, items: 1, captured: cursor("c")))
        page = try #require(requested(plan.next()))
        // c -> b: page index 1 again.
        #expect(plan.completed(response(page.page, items: 1, captured: cursor("b"))) == .cursor("b"))
        let error = try #require(failure(plan.next()))
        #expect(error.kind == .pagination)
        #expect(error.index == 3)
        #expect(error.position == .cursor("b"))
        #expect(error.trawlError?.message.contains("already fetched as page index 1") == true)
        #expect(isDone(plan.next()))
    }

    @Test("a next URL that points back at the first page is a loop too")
    func loopToFirst() throws {
        var plan = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: base)
        let first = try #require(requested(plan.next()))
        plan.completed(response(first.page, items: 1, captured: ["next": .string("https://api.test/items")]))
        let error = try #require(failure(plan.next()))
        #expect(error.index == 1)
        #expect(error.trawlError?.message.contains("page index 0") == true)
    }

    @Test("max_pages stops a serial walk before the page past it, and says why")
    func maxPagesSerial() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(), request: base, limits: .init(maxPages: 2))
        for _ in 0..<2 {
            let page = try #require(requested(plan.next()))
            plan.completed(response(page.page, items: 10))
        }
        #expect(isDone(plan.next()))
        #expect(plan.cut == .serial(reason: "max_pages 2"))
        #expect(plan.pagesCompleted == 2)
    }

    @Test("max_items stops a serial walk once that many items were read")
    func maxItemsSerial() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(), request: base, limits: .init(maxPages: 9, maxItems: 15))
        for _ in 0..<2 {
            let page = try #require(requested(plan.next()))
            plan.completed(response(page.page, items: 10))
        }
        #expect(isDone(plan.next()))
        #expect(plan.cut == .serial(reason: "max_items 15"))
    }

    @Test("caps cut a planned walk to the pages they need at the first page's size")
    func capsPlanned() throws {
        var plan = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"), request: base,
            limits: .init(concurrency: 8, maxPages: 5, maxItems: 25))
        let first = try #require(requested(plan.next()))
        plan.completed(response(first.page, items: 10, captured: ["pages": .number("100")]))
        #expect(plan.cut == .planned(reason: "max_items 25", allowed: 3, total: 100))
        #expect(plan.pageTotal == 3)
        #expect(try #require(requested(plan.next())).index == 1)
        #expect(try #require(requested(plan.next())).index == 2)
        #expect(isWait(plan.next()))
    }

    @Test("a stop status ends a serial walk cleanly after its first page; anywhere else it fails")
    func stopStatus() throws {
        let limits = PagePlan.Limits(stopStatuses: [404])
        var plan = PagePlan(strategy: PaginationStyle.page(), request: base, limits: limits)
        let first = try #require(requested(plan.next()))
        plan.completed(response(first.page, items: 10))
        let second = try #require(requested(plan.next()))
        plan.failed(statusError(second, 404))
        #expect(isDone(plan.next()))
        #expect(plan.cut == .stopStatus(404))

        var onFirst = PagePlan(strategy: PaginationStyle.page(), request: base, limits: limits)
        let only = try #require(requested(onFirst.next()))
        onFirst.failed(statusError(only, 404))
        #expect(failure(onFirst.next())?.status == 404)

        var other = PagePlan(strategy: PaginationStyle.page(), request: base, limits: limits)
        let page = try #require(requested(other.next()))
        other.completed(response(page.page, items: 10))
        let next = try #require(requested(other.next()))
        other.failed(statusError(next, 500))
        #expect(failure(other.next())?.status == 500)
    }

    @Test("a planned page's stop status is a failure: the total said it exists")
    func stopStatusPlanned() throws {
        var plan = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"), request: base,
            limits: .init(concurrency: 2, stopStatuses: [404]))
        let first = try #require(requested(plan.next()))
        plan.completed(response(first.page, items: 10, captured: ["pages": .number("3")]))
        let second = try #require(requested(plan.next()))
        plan.failed(statusError(second, 404))
        #expect(failure(plan.next())?.index == 1)
    }

    func statusError(_ page: (page: PageRequest, index: Int), _ status: Int) -> PaginationError {
        var error = PaginationError(
            position: page.page.position, index: page.index, url: page.page.request.url,
            underlying: TrawlError(
                code: .unexpectedStatus, message: "HTTP \(status)", method: "GET", url: page.page.request.url,
                status: status))
        error.kind = .status
        return error
    }

    @Test("a planned walk resumes after the pages it had, from its stored first page")
    func resumePlanned() throws {
        let firstPage = PaginationStyle.page(totalPages: "pages").first(base)
        var plan = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"),
            resumingPlanned: response(firstPage, items: 10, captured: ["pages": .number("5")]), pagesDone: 3,
            items: 30, limits: .init(concurrency: 4))
        #expect(plan.pageTotal == 5)
        let fourth = try #require(requested(plan.next()))
        #expect(fourth.index == 3)
        #expect(fourth.page.position == .number(4))
        let fifth = try #require(requested(plan.next()))
        #expect(fifth.index == 4)
        #expect(isWait(plan.next()))
        plan.completed(response(fourth.page, items: 10))
        plan.completed(response(fifth.page, items: 10))
        #expect(isDone(plan.next()))
        #expect(plan.itemsCompleted == 50)
    }

    @Test("a serial walk resumes at its stored next page, or is over when there was none")
    func resumeSerial() throws {
        let style = PaginationStyle.cursor(at: "next", param: "c", hasMore: nil)
        let stored = PageRequest(request: base.settingQuery("c", to: "x"), position: .cursor("x"))
        var plan = PagePlan(
            strategy: style, resumingSerial: stored, pagesDone: 4, items: 40, expectedItems: nil, limits: .init())
        let page = try #require(requested(plan.next()))
        #expect(page.index == 4)
        #expect(page.page.position == .cursor("x"))
        // The page it resumes at is known to the loop guard.
        plan.completed(response(page.page, items: 1, captured: cursor("x")))
        #expect(failure(plan.next())?.kind == .pagination)

        var ended = PagePlan(
            strategy: style, resumingSerial: nil, pagesDone: 4, items: 40, expectedItems: nil, limits: .init())
        #expect(isDone(ended.next()))
    }

    @Test("stop ends the walk; later events change nothing")
    func stop() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(), request: base, limits: .init(concurrency: 2))
        let first = try #require(requested(plan.next()))
        plan.stop()
        #expect(isDone(plan.next()))
        #expect(plan.completed(response(first.page, items: 1)) == nil)
        #expect(isDone(plan.next()))
    }

    @Test("a failed first page fails the walk")
    func failedFirst() throws {
        var plan = PagePlan(strategy: PaginationStyle.link(), request: base)
        let first = try #require(requested(plan.next()))
        plan.failed(PaginationError(
            position: first.page.position, index: 0, url: base.url,
            underlying: TrawlError(code: .timeout, message: "timed out", method: "GET", url: base.url)))
        #expect(failure(plan.next())?.trawlError?.code == .timeout)
        #expect(isDone(plan.next()))
    }
}

@Suite("The page plan's origin rule", .hangGuard)
struct PagePlanOriginTests {
    let helper = PagePlanTests()

    func credentialed(_ url: String) -> Request {
        Request(url: url, headers: [
            "Authorization": "Bearer s3cret", "Cookie": "a=b", "X-Api-Key": "k", "Partner-Token": "t",
            "X-Custom": "c", "Accept": "application/json",
        ])
    }

    @Test("a next URL on another origin is stripped of every credential header; the others stay")
    func stripped() throws {
        var plan = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: credentialed("https://a.test/x"),
                            origins: OriginGuard(sensitiveHeaders: ["X-Custom"]))
        let first = try #require(helper.requested(plan.next()))
        plan.completed(helper.response(first.page, items: 1, captured: ["next": .string("https://b.test:8443/y")]))
        let second = try #require(helper.requested(plan.next()))
        let headers = second.page.request.headers
        for name in ["Authorization", "Cookie", "X-Api-Key", "Partner-Token", "X-Custom"] {
            #expect(headers[name] == nil, "\(name)")
        }
        #expect(headers["Accept"] == "application/json")
        // The next page derives from the stripped one: back on the first origin it stays stripped.
        plan.completed(helper.response(second.page, items: 1, captured: ["next": .string("https://a.test/z")]))
        let third = try #require(helper.requested(plan.next()))
        #expect(third.page.request.headers["Authorization"] == nil)
    }

    /// Found by the second hostile sweep: after A redirected to B, B could name an A page and have it fetched with
    /// A's credentials.
    @Test("a page a redirect took to another origin names pages without credentials, its first origin's too")
    func servedElsewhere() throws {
        var plan = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: credentialed("https://a.test/x"))
        let first = try #require(helper.requested(plan.next()))
        let redirected = PageResponse(
            request: first.page.request, position: first.page.position, itemCount: 1,
            captured: ["next": .string("https://a.test/admin")],
            head: ResponseHead(status: 200, headers: [:], url: "https://b.test/x"))
        plan.completed(redirected)
        let second = try #require(helper.requested(plan.next()))
        #expect(second.page.request.url == "https://a.test/admin")
        for name in ["Authorization", "Cookie", "X-Api-Key", "Partner-Token"] {
            #expect(second.page.request.headers[name] == nil, "\(name)")
        }
    }

    @Test("the same origin (default port spelled out, other case) keeps the credentials; so does a trusted one")
    func kept() throws {
        for (next, trusted) in [("HTTPS://A.test:443/p2", [String]()), ("https://cdn.test/p2", ["https://cdn.test"])] {
            var plan = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: credentialed("https://a.test/x"),
                                origins: OriginGuard(trusted: trusted))
            let first = try #require(helper.requested(plan.next()))
            plan.completed(helper.response(first.page, items: 1, captured: ["next": .string(next)]))
            let second = try #require(helper.requested(plan.next()))
            #expect(second.page.request.headers["Authorization"] == "Bearer s3cret", "\(next)")
        }
    }

    @Test("an https page that names an http page fails the walk; an http page may name https")
    func downgradeRefused() throws {
        var plan = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: credentialed("https://a.test/x"))
        let first = try #require(helper.requested(plan.next()))
        plan.completed(helper.response(first.page, items: 1, captured: ["next": .string("http://a.test/x?page=2")]))
        let error = try #require(helper.failure(plan.next()))
        #expect(error.kind == .pagination)
        #expect(error.trawlError?.message.contains("http://") == true)

        var upgrade = PagePlan(strategy: PaginationStyle.nextURL(at: "next"), request: credentialed("http://a.test/x"))
        let page = try #require(helper.requested(upgrade.next()))
        upgrade.completed(helper.response(page.page, items: 1, captured: ["next": .string("https://a.test/x?p=2")]))
        #expect(helper.requested(upgrade.next()) != nil)
    }

    @Test("planned pages from a Link `last` on another origin are stripped; an http one from https is refused")
    func planned() throws {
        let style = PaginationStyle.link()
        var plan = PagePlan(strategy: style, request: credentialed("https://a.test/x"), limits: .init(concurrency: 2))
        let first = try #require(helper.requested(plan.next()))
        let links: HTTPHeaders = ["Link": #"<https://b.test/x?page=2>; rel="next", <https://b.test/x?page=3>; rel="last""#]
        plan.completed(helper.response(first.page, items: 1, headers: links))
        let second = try #require(helper.requested(plan.next()))
        #expect(second.page.request.url == "https://b.test/x?page=2")
        #expect(second.page.request.headers["Authorization"] == nil)

        var refused = PagePlan(strategy: style, request: credentialed("https://a.test/x"), limits: .init(concurrency: 2))
        let only = try #require(helper.requested(refused.next()))
        let downgrade: HTTPHeaders = ["Link": #"<http://a.test/x?page=2>; rel="next", <http://a.test/x?page=3>; rel="last""#]
        refused.completed(helper.response(only.page, items: 1, headers: downgrade))
        #expect(helper.failure(refused.next())?.kind == .pagination)
    }

    @Test("a resumed serial walk judges its stored next page against the walk's first request")
    func resumed() throws {
        let base = credentialed("https://a.test/x")
        let stored = PageRequest(request: base.with(url: "https://elsewhere.test/x?page=5"), position: .url("p5"))
        var plan = PagePlan(
            strategy: PaginationStyle.link(), resumingSerial: stored, pagesDone: 4, items: 4, expectedItems: nil,
            limits: .init(), base: base)
        let next = try #require(helper.requested(plan.next()))
        #expect(next.page.request.headers["Authorization"] == nil)
    }

    @Test("hostile totals plan nothing up front, and absurd ones fail with a message")
    func hostileTotals() throws {
        for total in ["9223372036854775807", "1000000000000"] {
            var plan = PagePlan(
                strategy: PaginationStyle.page(totalPages: "pages"), request: Request(url: "https://a.test/x"),
                limits: .init(concurrency: 4))
            let first = try #require(helper.requested(plan.next()))
            plan.completed(helper.response(first.page, items: 10, captured: ["pages": .number(total)]))
            let error = try #require(helper.failure(plan.next()))
            #expect(error.trawlError?.message.contains("more than the 10000000 a walk plans") == true)
        }
        // With a cap the same total is fine: only the capped pages are planned.
        var capped = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"), request: Request(url: "https://a.test/x"),
            limits: .init(concurrency: 4, maxPages: 3))
        let first = try #require(helper.requested(capped.next()))
        capped.completed(helper.response(first.page, items: 10, captured: ["pages": .number("9223372036854775807")]))
        #expect(capped.pageTotal == 3)
        // Serially an absurd total is refused too (the walk would ask for empty pages until it), without overflow;
        // with a cap it is walked to the cap.
        var serial = PagePlan(strategy: PaginationStyle.page(totalPages: "pages"), request: Request(url: "https://a.test/x"))
        let page = try #require(helper.requested(serial.next()))
        serial.completed(helper.response(page.page, items: 10, captured: ["pages": .number("9223372036854775807")]))
        #expect(helper.failure(serial.next())?.kind == .pagination)
        var cappedSerial = PagePlan(
            strategy: PaginationStyle.page(totalPages: "pages"), request: Request(url: "https://a.test/x"),
            limits: .init(maxPages: 5))
        let one = try #require(helper.requested(cappedSerial.next()))
        cappedSerial.completed(helper.response(one.page, items: 10, captured: ["pages": .number("9223372036854775807")]))
        #expect(helper.requested(cappedSerial.next())?.page.position == .number(2))
    }

    /// Found by the hostile sweep: an offset walk without a limit never planned, so its total was not checked and it
    /// walked on; `1e400` (no Int) was taken for no total at all.
    @Test("an offset walk without a limit refuses an absurd total too; a total past 64 bits is no count")
    func totalsNotPlanned() throws {
        var offsets = PagePlan(strategy: PaginationStyle.offset(total: "total"), request: Request(url: "https://a.test/x"))
        let first = try #require(helper.requested(offsets.next()))
        offsets.completed(helper.response(first.page, items: 10, captured: ["total": .number("1e18")]))
        let error = try #require(helper.failure(offsets.next()))
        #expect(error.trawlError?.message.contains("more than the 10000000 a walk plans") == true)
        // A real total at the same page size goes on.
        var real = PagePlan(strategy: PaginationStyle.offset(total: "total"), request: Request(url: "https://a.test/x"))
        let start = try #require(helper.requested(real.next()))
        real.completed(helper.response(start.page, items: 10, captured: ["total": .number("95")]))
        #expect(helper.requested(real.next())?.page.position == .offset(10))
        for (style, key) in [(PaginationStyle.page(totalPages: "n"), "n"), (PaginationStyle.offset(total: "n"), "n"),
                             (PaginationStyle.page(totalItems: "n"), "n")] {
            for value in ["1e400", "2.5", "99999999999999999999999"] {
                var plan = PagePlan(strategy: style, request: Request(url: "https://a.test/x"))
                let page = try #require(helper.requested(plan.next()))
                plan.completed(helper.response(page.page, items: 10, captured: [JSONKeyPath(key): .number(value)]))
                let failure = try #require(helper.failure(plan.next()), "\(style) \(value)")
                #expect(failure.trawlError?.message.contains("not a count") == true, "\(style) \(value)")
            }
            // Found by the second sweep: a total that is no number at all was taken for no total.
            for value: JSONValue in [.string("abc"), .string(""), .bool(true), .object([:]), .array([])] {
                var plan = PagePlan(strategy: style, request: Request(url: "https://a.test/x"))
                let page = try #require(helper.requested(plan.next()))
                plan.completed(helper.response(page.page, items: 10, captured: [JSONKeyPath(key): value]))
                let failure = try #require(helper.failure(plan.next()), "\(style) \(value)")
                #expect(failure.trawlError?.message.contains("not a count") == true, "\(style) \(value)")
            }
            // null is no total, "12" and -0 are counts.
            for value: JSONValue in [.null, .string("12"), .number("-0"), .number("1e1")] {
                var plan = PagePlan(strategy: style, request: Request(url: "https://a.test/x"))
                let page = try #require(helper.requested(plan.next()))
                plan.completed(helper.response(page.page, items: 10, captured: [JSONKeyPath(key): value]))
                #expect(helper.failure(plan.next()) == nil, "\(style) \(value)")
            }
        }
    }
}

@Suite("Userinfo and items before a failure", .hangGuard)
struct PipelineEdgeTests {
    let helper = PagePlanTests()

    @Test("userinfo in the start URL becomes the Authorization of every page of its origin")
    func userInfoMoved() throws {
        var plan = PagePlan(strategy: PaginationStyle.page(), request: Request(url: "https://al%40ice:pw@a.test/x"))
        let first = try #require(helper.requested(plan.next()))
        let basic = "Basic " + Data("al@ice:pw".utf8).base64EncodedString()
        #expect(first.page.request.url == "https://a.test/x?page=1")
        #expect(first.page.request.headers["Authorization"] == basic)
        plan.completed(helper.response(first.page, items: 3))
        let second = try #require(helper.requested(plan.next()))
        #expect(second.page.request.headers["Authorization"] == basic)
        // An Authorization header the caller set wins; the userinfo is dropped from the URL all the same.
        var explicit = PagePlan(
            strategy: PaginationStyle.page(),
            request: Request(url: "https://u:p@a.test/x", headers: ["Authorization": "Bearer t"]))
        let page = try #require(helper.requested(explicit.next()))
        #expect(page.page.request.headers["Authorization"] == "Bearer t")
        #expect(!page.page.request.url.contains("u:p"))
    }

    @Test("the items a page completed before its body turned bad are handed out before the error")
    func itemsBeforeFailure() async throws {
        let api = API(baseURL: "http://127.0.0.1:9", client: sharedClient, stubbing: .always)
        // One chunk (a stub): the syntax error comes in the same feed as the two items before it.
        let body = #"{"items":[{"id":1,"name":"item-1"},{"id":2,"name":"item-2"},{"id":3,x]}"#
        var received: [Thing] = []
        do {
            for try await item in try await api.items(
                of: StubbedThings(stub: .json(body)), as: Thing.self, at: "items", style: .page())
            {
                received.append(item)
            }
            Issue.record("expected the bad body to fail")
        } catch let error as PaginationError {
            #expect(error.index == 0)
            #expect(error.jsonError != nil)
        }
        #expect(received == [Thing(id: 1, name: "item-1"), Thing(id: 2, name: "item-2")])
    }
}
