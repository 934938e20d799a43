/// The order a paginator's pages are opened in: the first page, then either the planned rest (fetched
/// concurrently, taken in order) or the serial chain, each next page decided once the page before it has been
/// read. Shared by ``PageSequence`` and ``PaginatedItems``.
///
/// Bound: the page being read plus the planned pages started behind it are at most `concurrency`; a page is only
/// started when one has been read to its end.
struct PageWalk<Item: Decodable & Sendable> {
    private enum State {
        case start
        case readingFirst
        case serial(next: PageRequest?)
        case readingSerial
        case planned
        case failed(PaginationError)
        case done
    }

    let paginator: Paginator<Item>
    private var state = State.start
    /// Pages opened so far (the index of the next one).
    private var opened = 0
    private var plan: [PageRequest] = []
    /// Planned pages started, and taken out of the reorder buffer.
    private var started = 0
    private var taken = 0
    private var readingPlanned = false
    private let inFlight = InFlightPages<PageReader<Item>>()
    /// Body bytes a planned page decodes ahead in its own task before it is its turn.
    static var readAheadBudget: Int { 1 << 20 }
    private var pagesSeen = PageLoopGuard()

    init(paginator: Paginator<Item>) { self.paginator = paginator }

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
        switch state {
        case .readingFirst:
            if paginator.concurrency > 1, let rest = paginator.strategy.remaining(after: page) {
                plan = rest
                state = .planned
                fill()
                return rest.first?.position
            }
            return chain(after: page)
        case .readingSerial:
            return chain(after: page)
        case .planned:
            readingPlanned = false
            fill()
            return taken < plan.count ? plan[taken].position : nil
        case .start, .serial, .failed, .done:
            return nil
        }
    }

    /// Ends the walk: cancels the pages in flight.
    mutating func stop() {
        state = .done
        inFlight.cancelAll()
    }

    private mutating func advance() async throws -> PageReader<Item>? {
        switch state {
        case .done, .readingFirst, .readingSerial:
            return nil
        case .failed(let error):
            state = .done
            throw error
        case .start:
            let first = paginator.strategy.first(paginator.request)
            pagesSeen.visit(first, index: 0)
            let page = try await PageReader(paginator: paginator, page: paginator.open(first, index: 0))
            opened = 1
            state = .readingFirst
            return page
        case .serial(let next):
            guard let next else {
                state = .done
                return nil
            }
            let page = try await PageReader(paginator: paginator, page: paginator.open(next, index: opened))
            opened += 1
            state = .readingSerial
            return page
        case .planned:
            fill()
            guard let task = inFlight.popFirst() else {
                state = .done
                return nil
            }
            taken += 1
            readingPlanned = true
            let pages = inFlight
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
                pages.cancelAll()
            }
        }
    }

    /// The serial state after a page; a strategy that points back at any page of this walk fails the next
    /// step instead of looping forever.
    private mutating func chain(after page: PageResponse) -> PagePosition? {
        guard let next = paginator.strategy.next(after: page) else {
            state = .serial(next: nil)
            return nil
        }
        if let earlier = pagesSeen.visit(next, index: opened) {
            state = .failed(PageLoopGuard.loopError(next: next, index: opened, after: page.position, earlier: earlier))
        } else {
            state = .serial(next: next)
        }
        return next.position
    }

    /// Starts planned pages until the page being read and those waiting behind it number `concurrency`.
    private mutating func fill() {
        while started < plan.count, inFlight.count + (readingPlanned ? 1 : 0) < paginator.concurrency {
            let request = plan[started]
            let paginator = paginator
            let index = opened
            inFlight.append(Task {
                let reader = try await PageReader(paginator: paginator, page: paginator.open(request, index: index))
                await reader.readAhead(budget: Self.readAheadBudget)
                return reader
            })
            started += 1
            opened += 1
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
        private var walk: PageWalk<Item>

        init(paginator: Paginator<Item>) { walk = PageWalk(paginator: paginator) }

        public mutating func next() async throws -> Page<Item>? {
            try await next(isolation: nil)
        }

        /// The next page, its items decoded on the caller's actor (no hop per chunk to another thread and back).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Page<Item>? {
            guard let reader = try await walk.open() else { return nil }
            do {
                var (page, response) = try await reader.readAll(isolation: actor)
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
        private var walk: PageWalk<Item>
        private var reader: PageReader<Item>?

        init(paginator: Paginator<Item>) { walk = PageWalk(paginator: paginator) }

        public mutating func next() async throws -> Item? {
            try await next(isolation: nil)
        }

        /// The next item, read on the caller's actor: a consumer on the main actor (top-level code) does not hop to
        /// another thread and back for every item, only when a page or a chunk has to be awaited.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Item? {
            while true {
                if let reader {
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
