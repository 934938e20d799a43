/// The driver of ``PageSequence`` and ``PaginatedItems`` over a ``PagePlan``: opens the pages the plan asks for
/// through the paginator's ``PageExchange``, the planned ones in tasks of their own (decoding ahead, taken in
/// order), and reports each page read to its end back to the plan.
///
/// Bound: the page being read plus the planned pages started behind it are at most `concurrency`; a page is only
/// started when one has been read to its end.
struct PlanDriver<Item: Decodable & Sendable> {
    let paginator: Paginator<Item>
    private var plan: PagePlan
    private let inFlight = InFlightPages<PageReader<Item>>()
    /// Body bytes a planned page decodes ahead in its own task before it is its turn.
    static var readAheadBudget: Int { 1 << 20 }

    init(paginator: Paginator<Item>) {
        self.paginator = paginator
        plan = PagePlan(
            strategy: paginator.strategy, request: paginator.request,
            limits: PagePlan.Limits(concurrency: paginator.concurrency))
    }

    /// The next page to read, its head accepted (a planned page's first items perhaps decoded already); `nil`
    /// at the end. The page before must have been read to its end and reported with ``completed(_:)``.
    mutating func open() async throws -> PageReader<Item>? {
        do {
            return try await advance()
        } catch {
            stop()
            throw error
        }
    }

    /// Records that the page just opened has been read: decides what follows and returns the next page's position
    /// when there is one.
    mutating func completed(_ page: PageResponse) -> PagePosition? {
        plan.completed(page)
    }

    /// Ends the walk: cancels the pages in flight.
    mutating func stop() {
        plan.stop()
        inFlight.cancelAll()
    }

    private mutating func advance() async throws -> PageReader<Item>? {
        while true {
            switch plan.next() {
            case .request(let page, let index):
                if plan.isPlanned {
                    let paginator = paginator
                    inFlight.append(Task {
                        let reader = try await paginator.open(page, index: index)
                        await reader.readAhead(budget: Self.readAheadBudget)
                        return reader
                    })
                    continue
                }
                let paginator = paginator
                return try await opened { try await paginator.open(page, index: index) }
            case .wait:
                guard let task = inFlight.popFirst() else { return nil }
                let pages = inFlight
                return try await opened {
                    try await withTaskCancellationHandler {
                        try await task.value
                    } onCancel: {
                        task.cancel()
                        pages.cancelAll()
                    }
                }
            case .done:
                return nil
            case .fail(let error):
                throw error
            }
        }
    }

    /// A page the plan is waiting for; its failure is the plan's.
    private mutating func opened(_ open: () async throws -> PageReader<Item>) async throws
        -> PageReader<Item>
    {
        do {
            return try await open()
        } catch let error as PaginationError {
            plan.failed(error)
            throw error
        }
    }
}

/// The pages of a ``Paginator``, in order. Iterate it once.
///
/// ```swift
/// for try await page in paginator.pages { print(page.position, page.items.count) }
/// ```
public struct PageSequence<Item: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Page<Item>
    public typealias Failure = any Error

    let paginator: Paginator<Item>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(paginator: paginator)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private var walk: PlanDriver<Item>

        init(paginator: Paginator<Item>) { walk = PlanDriver(paginator: paginator) }

        public mutating func next() async throws -> Page<Item>? {
            try await next(isolation: nil)
        }

        /// The next page, its items decoded on the caller's actor (no hop per chunk to another thread and back).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Page<Item>? {
            guard let reader = try await walk.open() else { return nil }
            do {
                let (items, response) = try await reader.readAll(isolation: actor)
                var page = walk.paginator.page(items, response, index: reader.stream.index)
                page.next = walk.completed(response)
                return page
            } catch {
                walk.stop()
                throw error
            }
        }
    }
}

/// The items of every page of a ``Paginator``, in order, each handed out as soon as it is decoded (a page's
/// first items arrive while the rest of its body is still on the way). Iterate it once.
///
/// ```swift
/// var names: [String] = []
/// for try await repo in paginator.items { names.append(repo.name) }
/// ```
public struct PaginatedItems<Item: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    public typealias Failure = any Error

    let paginator: Paginator<Item>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(paginator: paginator)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private var walk: PlanDriver<Item>
        private var reader: PageReader<Item>?

        init(paginator: Paginator<Item>) { walk = PlanDriver(paginator: paginator) }

        public mutating func next() async throws -> Item? {
            try await next(isolation: nil)
        }

        /// The next item, read on the caller's actor: a consumer on the main actor (top-level code) does not hop to
        /// another thread and back for every item, only when a page or a chunk has to be awaited.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Item? {
            while true {
                if let reader {
                    if let item = reader.takeDecoded() { return item }
                    do {
                        if let item = try await reader.next(isolation: actor) { return item }
                    } catch {
                        self.reader = nil
                        walk.stop()
                        throw error
                    }
                    if let response = reader.response { _ = walk.completed(response) }
                    self.reader = nil
                }
                reader = try await walk.open()
                if reader == nil { return nil }
            }
        }
    }
}
