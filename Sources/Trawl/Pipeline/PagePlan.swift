/// The order of a walk's pages, as a value: which page to ask for next, when to wait for pages in flight, when
/// the walk is over and why it failed. It sends nothing and sleeps on nothing: a driver (the library's
/// sequences, ``PaginatedList``, the job runner, `trawl bench`) feeds it events and does what its actions say,
/// so every rule about pages (the loop guard, caps, totals, stop statuses, resuming) lives here once.
///
/// The walk asks for the first page; when the strategy can list every remaining page after it and the plan may
/// have more than one page in flight, those pages are planned and started up to `concurrency` at a time
/// (completed in order); otherwise the chain is followed serially, each next page decided by the page before.
///
/// ```swift
/// var plan = PagePlan(strategy: .page(totalPages: "pages"), request: request, limits: .init(concurrency: 4))
/// loop: while true {
///     switch plan.next() {
///     case .request(let page, let index): start(page, index)            // then ask again
///     case .wait: plan.completed(try await oldestInFlight())            // pages complete in order
///     case .done: break loop
///     case .fail(let error): throw error
///     }
/// }
/// ```
package struct PagePlan: Sendable {
    /// How far a walk may go.
    package struct Limits: Sendable, Hashable {
        /// Pages in flight at once when the remaining pages are known after the first (1: serial).
        package var concurrency: Int
        /// The most pages, the first included.
        package var maxPages: Int?
        /// Stop once this many items have been read (a planned walk plans the pages they need at the first
        /// page's size).
        package var maxItems: Int?
        /// Statuses that end a serial walk cleanly after its first page (an API that answers 404 past the last
        /// page).
        package var stopStatuses: Set<Int>
        /// The most pages a walk plans from an announced total: more is taken for a hostile or broken total and
        /// fails the walk (unless `maxPages` or `maxItems` cut it first).
        package var maxPlannedPages: Int

        package init(
            concurrency: Int = 1, maxPages: Int? = nil, maxItems: Int? = nil, stopStatuses: Set<Int> = [],
            maxPlannedPages: Int = 10_000_000
        ) {
            self.concurrency = max(1, concurrency)
            self.maxPages = maxPages
            self.maxItems = maxItems
            self.stopStatuses = stopStatuses
            self.maxPlannedPages = maxPlannedPages
        }
    }

    /// What the driver does next.
    package enum Action: Sendable {
        /// Start this page (its place in the walk, from 0), then ask again.
        case request(PageRequest, index: Int)
        /// Pages are in flight: report the oldest with ``completed(_:)`` (or ``failed(_:)``), then ask again.
        case wait
        /// The walk is over.
        case done
        /// The walk failed; pages before this one were complete.
        case fail(PaginationError)
    }

    /// Why a walk ended before its collection did.
    package enum Cut: Sendable, Hashable {
        /// `maxPages` or `maxItems` cut a planned walk at `allowed` of `total` pages.
        case planned(reason: String, allowed: Int, total: Int)
        /// `maxPages` or `maxItems` stopped a serial walk before its next page.
        case serial(reason: String)
        /// A serial page answered one of the stop statuses: the walk ended there.
        case stopStatus(Int)
        /// A page of a newest-first incremental walk held an item older than the mark: the walk ended there.
        case pastMark
    }

    private enum State: Sendable {
        case start(PageRequest)
        case awaitingFirst
        case serial(next: PageRequest?)
        case awaitingSerial(PageRequest)
        case planned
        case failed(PaginationError)
        case done
    }

    package let strategy: any PaginationStrategy
    package let limits: Limits
    /// Where the walk's credentials may go.
    package let origins: OriginGuard
    private var state: State
    private var loopGuard = PageLoopGuard()
    private var plan = PlannedPages([])
    /// The request of the page the plan was made from (planned pages are judged against its origin).
    private var planSource: Request?
    /// The URL the plan's first page came from (after redirects).
    private var planServedFrom: String?
    /// Planned pages started (indices into `plan`).
    private var started = 0
    /// Pages asked for and not yet completed.
    package private(set) var inFlight = 0
    /// Pages completed, the first included (so also the index of the next serial page).
    package private(set) var pagesCompleted = 0
    /// Items in the pages completed.
    package private(set) var itemsCompleted = 0
    /// The total number of items the first page announced.
    package private(set) var expectedItems: Int?
    /// Where the first page announced it (`the X-Total-Count header`, `'total' in the body`).
    package private(set) var expectedItemsSource: String?
    /// The number of pages of a planned walk (the first included), once planned.
    package private(set) var pageTotal: Int?
    /// Why the walk ended early, when it did.
    package private(set) var cut: Cut?

    /// A walk from its first page. Userinfo in the request's URL becomes its `Authorization` header, so that it
    /// goes with every page of that origin and with none of another.
    package init(
        strategy: any PaginationStrategy, request: Request, limits: Limits = Limits(), origins: OriginGuard = OriginGuard()
    ) {
        self.strategy = strategy
        self.limits = limits
        self.origins = origins
        let first = strategy.first(OriginGuard.movingUserInfoToHeader(request))
        loopGuard.visit(first, index: 0)
        state = .start(first)
    }

    /// A planned walk resumed after `pagesDone` pages (the first included) whose `items` items were kept: the
    /// rest is planned again from the stored first page.
    package init(
        strategy: any PaginationStrategy, resumingPlanned first: PageResponse, pagesDone: Int, items: Int,
        limits: Limits, origins: OriginGuard = OriginGuard()
    ) {
        self.strategy = strategy
        self.limits = limits
        self.origins = origins
        state = .planned
        expectedItems = strategy.total(in: first)
        expectedItemsSource = strategy.totalSource(in: first)
        planSource = first.request
        planServedFrom = first.head.url
        plan = cap(strategy.plannedPages(after: first) ?? PlannedPages([]), firstItems: first.itemCount)
        pageTotal = plan.count + 1
        if let refusal = tooMany(first, remaining: plan.count) { state = .failed(refusal) }
        pagesCompleted = max(1, pagesDone)
        itemsCompleted = items
        started = min(plan.count, pagesCompleted - 1)
    }

    /// A serial walk resumed at `next` (`nil`: it had ended) after `pagesDone` pages holding `items` items. The
    /// loop guard knows only the page it resumes at; `next` is judged by the origin rule against `base`, the
    /// walk's first request.
    package init(
        strategy: any PaginationStrategy, resumingSerial next: PageRequest?, pagesDone: Int, items: Int,
        expectedItems: Int?, limits: Limits, origins: OriginGuard = OriginGuard(), base: Request? = nil
    ) {
        self.strategy = strategy
        self.limits = limits
        self.origins = origins
        pagesCompleted = pagesDone
        itemsCompleted = items
        self.expectedItems = expectedItems
        var next = next
        if let stored = next, let base {
            // What crossed an origin before the stop is not stored: judged again against the walk's base.
            switch origins.judge(stored, from: base) {
            case .keep(let kept), .stripped(let kept): next = kept
            case .refused(let reason):
                state = .failed(Self.refusal(stored, index: pagesDone, reason: reason))
                return
            }
        }
        if let next { loopGuard.visit(next, index: pagesDone) }
        state = .serial(next: next)
    }

    /// The page a serial walk asks for next, once the page before it has completed.
    package var nextSerial: PageRequest? {
        if case .serial(let next) = state { return next }
        if case .failed = state { return refusedNext }
        return nil
    }

    /// The failure the walk will end with at the next step, when it has failed.
    package var failure: PaginationError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// The next page of a serial walk, refused when the page before it named it (`https` to `http`): the page that
    /// named it is whole and kept (its items are read), the walk fails at the refused one, and a resume, which
    /// judges the stored next page again, refuses it again instead of ending the walk there.
    private var refusedNext: PageRequest?

    /// Whether ``failure`` is about the page after the one just completed, which is kept.
    package var failureConcernsNextPage: Bool { failure != nil && refusedNext != nil }

    /// Set when the page just completed was read whole but its pagination data cannot go on (a cursor that is an
    /// object, `has_more` without a cursor, a next page already fetched, an absurd total).
    private var failedAfterPage = false

    /// Whether the page just completed is whole and its items are kept although the walk fails after it: its next
    /// page is refused, or its pagination data is unusable (the walk fails naming the page).
    package var failureKeepsCompletedPage: Bool { failure != nil && (refusedNext != nil || failedAfterPage) }

    /// Whether the walk fetches its pages from a plan (several at once) rather than serially.
    package var isPlanned: Bool {
        if case .planned = state { return true }
        return false
    }

    /// The next thing to do.
    package mutating func next() -> Action {
        switch state {
        case .start(let first):
            state = .awaitingFirst
            inFlight = 1
            return .request(first, index: 0)
        case .awaitingFirst, .awaitingSerial:
            return .wait
        case .serial(let next):
            guard let next else {
                state = .done
                return .done
            }
            if let reason = capReached() {
                cut = .serial(reason: reason)
                state = .done
                return .done
            }
            state = .awaitingSerial(next)
            inFlight = 1
            return .request(next, index: pagesCompleted)
        case .planned:
            if started < plan.count, inFlight < limits.concurrency {
                var page = plan[started]
                started += 1
                if let source = planSource {
                    switch origins.judge(page, from: source, servedFrom: planServedFrom) {
                    case .keep(let kept), .stripped(let kept):
                        page = kept
                    case .refused(let reason):
                        return refuse(page, index: started, reason: reason)
                    }
                }
                inFlight += 1
                return .request(page, index: started)
            }
            if inFlight > 0 { return .wait }
            state = .done
            return .done
        case .failed(let error):
            state = .done
            return .fail(error)
        case .done:
            return .done
        }
    }

    /// Records that the oldest page in flight has been read to its end; returns the position of the page after
    /// it, when one follows.
    @discardableResult
    package mutating func completed(_ page: PageResponse) -> PagePosition? {
        if let rejection = strategy.rejection(of: page) {
            switch state {
            case .awaitingFirst, .awaitingSerial, .planned:
                var error = Self.failure(
                    page.request, page.position, index: pagesCompleted, url: page.head.url, rejection,
                    hint: "the page was not kept; the pages before it were read, and a resume asks for it again")
                error.head = page.head
                state = .failed(error)
                return nil
            case .start, .serial, .failed, .done:
                return nil
            }
        }
        if let problem = strategy.problem(in: page) {
            switch state {
            case .awaitingFirst, .awaitingSerial, .planned:
                count(page)
                state = .failed(Self.unusable(page, index: pagesCompleted - 1, problem: problem))
                failedAfterPage = true
                return nil
            case .start, .serial, .failed, .done:
                return nil
            }
        }
        defer { if page.pastMark { stopAtMark() } }
        switch state {
        case .awaitingFirst:
            count(page)
            expectedItems = strategy.total(in: page)
            expectedItemsSource = strategy.totalSource(in: page)
            if limits.concurrency > 1, let rest = strategy.plannedPages(after: page) {
                plan = cap(rest, firstItems: page.itemCount)
                pageTotal = plan.count + 1
                planSource = page.request
                planServedFrom = page.head.url
                state = .planned
                if let refusal = tooMany(page, remaining: plan.count) {
                    state = .failed(refusal)
                    failedAfterPage = true
                    return nil
                }
                return plan.count > 0 ? plan.position(at: 0) : nil
            }
            // Serially too: an absurd total would have the walk ask for empty pages until it is reached. Without
            // planned pages (offsets without a limit), the first page's item count tells how many pages it means.
            if limits.maxPages == nil, limits.maxItems == nil,
                let remaining = strategy.plannedPages(after: page)?.count ?? Self.pagesLeft(after: page, of: expectedItems),
                let refusal = tooMany(page, remaining: remaining)
            {
                state = .failed(refusal)
                failedAfterPage = true
                return nil
            }
            return chain(after: page)
        case .awaitingSerial:
            count(page)
            return chain(after: page)
        case .planned:
            count(page)
            let next = pagesCompleted - 1
            return next >= 0 && next < plan.count ? plan.position(at: next) : nil
        case .start, .serial, .failed, .done:
            return nil
        }
    }

    /// Records that the oldest page in flight failed: the walk fails with `error`, unless it is a serial page
    /// after the first whose status is one of the stop statuses (then the walk is over, cleanly).
    package mutating func failed(_ error: PaginationError) {
        inFlight = max(0, inFlight - 1)
        if case .awaitingSerial = state, let status = error.status, error.kind == .status,
            limits.stopStatuses.contains(status)
        {
            cut = .stopStatus(status)
            state = .done
            return
        }
        state = .failed(error)
    }

    /// Asks for no page after the one just completed (a newest-first walk past its mark); pages in flight end.
    private mutating func stopAtMark() {
        switch state {
        case .serial(.some):
            state = .serial(next: nil)
            cut = .pastMark
        case .planned where started < plan.count:
            plan = plan.prefix(started)
            pageTotal = started + 1
            cut = .pastMark
        default:
            break
        }
    }

    /// Ends the walk: nothing more is asked for.
    package mutating func stop() {
        state = .done
        inFlight = 0
    }

    private mutating func count(_ page: PageResponse) {
        inFlight = max(0, inFlight - 1)
        pagesCompleted += 1
        itemsCompleted += page.itemCount
    }

    /// The serial state after a page; a strategy that points back at any page of this walk fails the next step
    /// instead of looping forever.
    private mutating func chain(after page: PageResponse) -> PagePosition? {
        guard var next = strategy.next(after: page) else {
            state = .serial(next: nil)
            return nil
        }
        switch origins.judge(next, from: page.request, servedFrom: page.head.url) {
        case .keep(let kept), .stripped(let kept):
            next = kept
        case .refused(let reason):
            refusedNext = next
            state = .failed(Self.refusal(next, index: pagesCompleted, reason: reason))
            return next.position
        }
        if let earlier = loopGuard.visit(next, index: pagesCompleted) {
            state = .failed(
                PageLoopGuard.loopError(next: next, index: pagesCompleted, after: page.position, earlier: earlier))
            failedAfterPage = true
        } else {
            state = .serial(next: next)
        }
        return next.position
    }

    /// Whether a serial walk must stop before its next page because of `maxPages` or `maxItems`: the reason.
    private func capReached() -> String? {
        if let maxItems = limits.maxItems, itemsCompleted >= maxItems { return "max_items \(maxItems)" }
        if let maxPages = limits.maxPages, pagesCompleted >= maxPages { return "max_pages \(maxPages)" }
        return nil
    }

    /// `rest` (every page after the first) cut to `maxPages` and to the pages `maxItems` needs at the first
    /// page's size; a cut is kept in `cut`.
    private mutating func cap(_ rest: PlannedPages, firstItems: Int) -> PlannedPages {
        let total = rest.count + 1
        var allowed = total
        var reason = ""
        if let maxPages = limits.maxPages, maxPages < allowed {
            allowed = maxPages
            reason = "max_pages \(maxPages)"
        }
        if let maxItems = limits.maxItems, firstItems > 0 {
            let pages = maxItems / firstItems + (maxItems % firstItems == 0 ? 0 : 1)
            if pages < allowed {
                allowed = pages
                reason = "max_items \(maxItems)"
            }
        }
        allowed = max(1, allowed)
        guard allowed < total else { return rest }
        cut = .planned(reason: reason, allowed: allowed, total: total)
        return rest.prefix(allowed - 1)
    }

    /// The pages after `first` that `total` items mean at `first`'s item count (nil when either is unknown).
    private static func pagesLeft(after first: PageResponse, of total: Int?) -> Int? {
        guard let total, first.itemCount > 0 else { return nil }
        let left = Swift.max(0, total - first.itemCount)
        return left / first.itemCount + (left % first.itemCount == 0 ? 0 : 1)
    }

    /// The failure of a walk whose first page announces `remaining` more pages, `maxPlannedPages` or more (after
    /// the caps when planned): a total no real collection has.
    private func tooMany(_ first: PageResponse, remaining: Int) -> PaginationError? {
        guard remaining >= limits.maxPlannedPages else { return nil }
        let announced = expectedItems.map { ", \($0) items" } ?? ""
        return Self.failure(
            first.request, first.position, index: 0, url: first.head.url,
            "the first page announces \(remaining + 1) pages\(announced): more than the "
                + "\(limits.maxPlannedPages) a walk plans",
            hint: "check the total key path against the response, or cap the walk (max_pages, max_items)")
    }

    /// The failure of a page whose pagination data the strategy cannot use.
    private static func unusable(_ page: PageResponse, index: Int, problem: String) -> PaginationError {
        var error = failure(
            page.request, page.position, index: index, url: page.head.url, problem,
            hint: "check the pagination key paths against the response; the pages before it were read")
        error.head = page.head
        return error
    }

    /// The failure of a page the origin rule refuses.
    private static func refusal(_ page: PageRequest, index: Int, reason: String) -> PaginationError {
        failure(
            page.request, page.position, index: index, url: page.request.url, reason,
            hint: "the server's pagination links leave https; ask its operator, or walk it over http on purpose")
    }

    /// A walk's failure of kind `.pagination`: what the pages say cannot be walked.
    private static func failure(
        _ request: Request, _ position: PagePosition, index: Int, url: String, _ message: String, hint: String
    ) -> PaginationError {
        let underlying = TrawlError(
            code: .invalidBody, message: message, hint: hint, method: request.method.rawValue, url: url)
        var error = PaginationError(position: position, index: index, request: request, underlying: underlying)
        error.kind = .pagination
        return error
    }

    /// Fails the walk at a refused planned page.
    private mutating func refuse(_ page: PageRequest, index: Int, reason: String) -> Action {
        state = .done
        return .fail(Self.refusal(page, index: index, reason: reason))
    }
}
