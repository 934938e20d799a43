/// Walks a paginated collection: `pages` yields each ``Page`` in order, `items` flattens them.
///
/// ```swift
/// let paginator = Paginator(
///     Repo.self, client: client, request: Request(url: "https://api.github.com/orgs/apple/repos"),
///     items: .root, style: .link())
/// for try await repo in paginator.items { print(repo.name) }
/// ```
///
/// Items are decoded while each body streams in; no page is held as a JSON tree. When the first page tells
/// how many pages there are, up to `maxConcurrentPages` pages are fetched at once (never more than the client's
/// per-host connection limit) and still yielded in order: at most that many pages wait in the reorder buffer.
/// Cursor and next-URL chains are followed serially, and `serial` forces it for any style. A failed page ends
/// the sequence with a ``PaginationError`` naming it; everything before it has been yielded.
public struct Paginator<Item: Decodable & Sendable>: Sendable {
    public var client: Client
    /// The request for the collection; the strategy adds the page parameters.
    public var request: Request
    /// Where the items are in each page's body (`.root` for a bare array).
    public var itemsPath: JSONKeyPath
    public var strategy: any PaginationStrategy
    /// Side fields to capture from each page, on top of those the strategy reads.
    public var capture: [JSONKeyPath]
    public var decoder: JSONItemDecoder
    /// The most pages fetched at once when the total is known.
    public var maxConcurrentPages: Int
    /// Fetch one page at a time even when the total is known.
    public var serial: Bool
    /// Told about every page request; set by ``API``. Page responses reach `didReceive` with an empty body,
    /// since the items were decoded as the body streamed.
    var observers: [any RequestObserver] = []
    /// Set by ``API`` when it has a retrier: given a page request and its rejected response, the request to
    /// send instead (credentials refreshed and the adapters run again), or `nil` to fail. Used once per page.
    var refresh: (@Sendable (Request, RawResponse) async throws -> Request?)?
    /// Set by ``API`` when stubbing applies to the route: the stubbed response for a page request, or `nil`
    /// for the network.
    var stub: (@Sendable (Request) async throws -> RawResponse?)?

    public init(
        _ type: Item.Type = Item.self, client: Client, request: Request, items path: JSONKeyPath,
        style strategy: some PaginationStrategy, capture: [JSONKeyPath] = [], decoder: JSONItemDecoder = .init(),
        maxConcurrentPages: Int = 4, serial: Bool = false
    ) {
        self.client = client
        self.request = request
        self.itemsPath = path
        self.strategy = strategy
        self.capture = capture
        self.decoder = decoder
        self.maxConcurrentPages = maxConcurrentPages
        self.serial = serial
    }

    /// The pages, in order.
    public var pages: PageSequence<Item> { PageSequence(paginator: self) }

    /// The items of every page, in order.
    public var items: PaginatedItems<Item> { PaginatedItems(pages: pages) }

    /// How many pages are fetched at once when the total is known.
    var concurrency: Int {
        if serial { return 1 }
        let limit = client.configuration.maxConnectionsPerHost ?? client.configuration.maxConcurrentTransfers
        return max(1, min(maxConcurrentPages, limit))
    }

    /// Fetches one page, streaming and decoding its items; on a rejected page the API's retrier may refresh
    /// the credentials and the page is asked for once more.
    func fetch(_ pageRequest: PageRequest, index: Int) async throws -> (page: Page<Item>, response: PageResponse) {
        var request = pageRequest.request
        var refreshed = false
        while true {
            for observer in observers { observer.willSend(request) }
            let start = ContinuousClock.now
            do {
                let (items, captured, head) = try await fetchOnce(request)
                let response = PageResponse(
                    request: request, position: pageRequest.position, itemCount: items.count, captured: captured,
                    head: head)
                let page = Page(
                    items: items, position: pageRequest.position, index: index, total: strategy.total(in: response),
                    captured: captured, head: head)
                if !observers.isEmpty {
                    let raw = RawResponse(status: head.status, headers: head.headers, url: head.url, body: [])
                    let duration = ContinuousClock.now - start
                    for observer in observers { observer.didReceive(raw, for: request, duration: duration) }
                }
                return (page, response)
            } catch {
                if !refreshed, let refresh, let rejected = error as? TrawlError, rejected.code == .unexpectedStatus,
                    let status = rejected.status
                {
                    let raw = RawResponse(
                        status: status, headers: rejected.headers ?? [:], url: rejected.url, body: rejected.bodyExcerpt)
                    for observer in observers { observer.didReceive(raw, for: request, duration: ContinuousClock.now - start) }
                    do {
                        if let again = try await refresh(request, raw) {
                            request = again
                            refreshed = true
                            continue
                        }
                    } catch {
                        for observer in observers { observer.didFail(error, for: request) }
                        throw PaginationError(
                            position: pageRequest.position, index: index, url: request.url, underlying: error)
                    }
                }
                for observer in observers { observer.didFail(error, for: request) }
                throw PaginationError(position: pageRequest.position, index: index, url: request.url, underlying: error)
            }
        }
    }

    /// One attempt at a page: from the stub when stubbing applies, else from the network.
    private func fetchOnce(_ request: Request) async throws
        -> (items: [Item], captured: [JSONKeyPath: JSONValue], head: ResponseHead)
    {
        var paths = strategy.capturePaths
        for path in capture where !paths.contains(path) { paths.append(path) }
        if let stub, let response = try await stub(request) {
            return try decodeStub(response, request: request, paths: paths)
        }
        let stream = client.items(Item.self, at: itemsPath, in: request, capture: paths, decoder: decoder)
        var items: [Item] = []
        for try await item in stream { items.append(item) }
        guard let head = stream.head else {
            throw TrawlError(
                code: .invalidBody, message: "the page ended without a response",
                method: request.method.rawValue, url: request.url)
        }
        return (items, stream.summary?.captured ?? [:], head)
    }

    /// A stubbed page goes through the same status check, extraction and decoding as a real one.
    private func decodeStub(_ response: RawResponse, request: Request, paths: [JSONKeyPath]) throws
        -> (items: [Item], captured: [JSONKeyPath: JSONValue], head: ResponseHead)
    {
        let head = ResponseHead(status: response.status, headers: response.headers, url: response.url)
        guard head.isSuccess else {
            throw TrawlError(
                code: .unexpectedStatus,
                message: "HTTP \(response.status) (stub) instead of the JSON collection at '\(itemsPath)'",
                method: request.method.rawValue, url: request.url, status: response.status, headers: response.headers,
                bodyExcerpt: Array(response.body.prefix(512)))
        }
        let extractor = try JSONExtractor(path: itemsPath, capture: paths, form: .values)
        var items: [Item] = []
        do {
            try extractor.feed(response.body) { items.append(try $0.decode(Item.self, using: decoder)) }
            let summary = try extractor.finish { items.append(try $0.decode(Item.self, using: decoder)) }
            if summary.collection == .missing {
                throw TrawlError(
                    code: .invalidBody, message: "the stubbed page has no value at '\(itemsPath)'",
                    method: request.method.rawValue, url: request.url)
            }
            return (items, summary.captured, head)
        } catch let error as JSONError {
            throw TrawlError(
                code: .invalidBody, message: "the stubbed page is not the expected JSON: \(error)",
                method: request.method.rawValue, url: request.url, underlying: error)
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
        private enum State {
            case start
            case serial(next: PageRequest?)
            case planned
            case failed(PaginationError)
            case done
        }

        private let paginator: Paginator<Item>
        private var state = State.start
        private var index = 0
        private var plan: [PageRequest] = []
        private var planned = 0
        private let inFlight = InFlightPages<Item>()
        private var pagesSeen = PageLoopGuard()

        init(paginator: Paginator<Item>) { self.paginator = paginator }

        public mutating func next() async throws -> Page<Item>? {
            do {
                return try await advance()
            } catch {
                state = .done
                inFlight.cancelAll()
                throw error
            }
        }

        private mutating func advance() async throws -> Page<Item>? {
            let strategy = paginator.strategy
            switch state {
            case .done:
                return nil
            case .failed(let error):
                throw error
            case .start:
                let first = strategy.first(paginator.request)
                pagesSeen.visit(first, index: 0)
                var (page, response) = try await paginator.fetch(first, index: 0)
                index = 1
                if paginator.concurrency > 1, let rest = strategy.remaining(after: response) {
                    plan = rest
                    state = .planned
                    page.next = rest.first?.position
                    fill()
                } else {
                    let next = strategy.next(after: response)
                    state = chain(after: response, next: next)
                    page.next = next?.position
                }
                return page
            case .serial(let next):
                guard let next else {
                    state = .done
                    return nil
                }
                var (page, response) = try await paginator.fetch(next, index: index)
                index += 1
                let following = strategy.next(after: response)
                state = chain(after: response, next: following)
                page.next = following?.position
                return page
            case .planned:
                fill()
                guard let task = inFlight.popFirst() else {
                    state = .done
                    return nil
                }
                let pages = inFlight
                let page = try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: {
                    task.cancel()
                    pages.cancelAll()
                }
                fill()
                return page
            }
        }

        /// The serial state after a page; a strategy that points back at any page of this walk fails the next
        /// step instead of looping forever.
        private mutating func chain(after page: PageResponse, next: PageRequest?) -> State {
            guard let next else { return .serial(next: nil) }
            guard let earlier = pagesSeen.visit(next, index: index) else { return .serial(next: next) }
            return .failed(PageLoopGuard.loopError(next: next, index: index, after: page.position, earlier: earlier))
        }

        /// Starts planned pages until `concurrency` are in flight or waiting in order.
        private mutating func fill() {
            while planned < plan.count, inFlight.count < paginator.concurrency {
                let request = plan[planned]
                let next = planned + 1 < plan.count ? plan[planned + 1].position : nil
                let paginator = paginator
                let index = index
                inFlight.append(Task {
                    var page = try await paginator.fetch(request, index: index).page
                    page.next = next
                    return page
                })
                planned += 1
                self.index += 1
            }
        }
    }
}

/// The items of every page of a ``Paginator``, in order. Iterate it once.
///
/// ```swift
/// var names: [String] = []
/// for try await repo in paginator.items { names.append(repo.name) }
/// ```
public struct PaginatedItems<Item: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    public typealias Failure = any Error

    let pages: PageSequence<Item>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: pages.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private var pages: PageSequence<Item>.AsyncIterator
        private var current: [Item] = []
        private var position = 0

        init(pages: PageSequence<Item>.AsyncIterator) { self.pages = pages }

        public mutating func next() async throws -> Item? {
            while position == current.count {
                guard let page = try await pages.next() else { return nil }
                current = page.items
                position = 0
            }
            defer { position += 1 }
            return current[position]
        }
    }
}
