/// Walks a paginated collection: `pages` yields each ``Page`` in order, `items` flattens them.
///
/// ```swift
/// let paginator = Paginator(
///     Repo.self, client: client, request: Request(url: "https://api.github.com/orgs/apple/repos"),
///     items: .root, style: .link())
/// for try await repo in paginator.items { print(repo.name) }
/// ```
///
/// Items are decoded while each body streams in; no page is held as a JSON tree, and `items` hands out each item
/// as soon as it is decoded, so a huge page never sits in memory whole. When the first page tells how many pages
/// there are, up to `maxConcurrentPages` pages are fetched at once (never more than the client's per-host
/// connection limit) and still yielded in order: the page being read and the pages waiting behind it number at
/// most `maxConcurrentPages`, and a waiting page's body is held back by the engine's back-pressure. Cursor and
/// next-URL chains are followed serially, and `serial` forces it for any style. A failed page ends the sequence
/// with a ``PaginationError`` naming it; everything before it has been yielded.
public struct Paginator<Item: Decodable & Sendable>: Sendable {
    public var client: Client
    /// The request for the collection; the strategy adds the page parameters.
    public var request: Request
    /// Where the items are in each page's body (`.root` for a bare array).
    public var itemsPath: JSONKeyPath
    public var strategy: any PaginationStrategy
    /// Side fields to capture from each page, on top of those the strategy reads.
    public var capture: [JSONKeyPath]
    /// Decodes the items unless `payloadDecoder` is set.
    public var decoder: JSONItemDecoder
    /// Decodes the items instead of `decoder`; ``API`` sets it to the route's or the API's decoder, so pages
    /// decode exactly as `send` does.
    public var payloadDecoder: (any PayloadDecoding)?
    /// Whether a page's status counts as success (default: 2xx); ``API`` sets the route's `isAcceptable`.
    public var isAcceptable: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
    /// The most pages fetched at once when the total is known.
    public var maxConcurrentPages: Int
    /// Fetch one page at a time even when the total is known.
    public var serial: Bool
    /// Told about every page request; set by ``API``. A page reaches `didReceive` once its body has ended, with
    /// an empty `body` (the items were decoded as it streamed) and its size in `bodySize`.
    var observers: [any RequestObserver] = []
    /// Set by ``API`` when it has a retrier: given a page request and its rejected response, the request to
    /// send instead (credentials refreshed and the adapters run again), or `nil` to fail. Used once per page.
    var refresh: (@Sendable (Request, RawResponse) async throws -> Request?)?
    /// Set by ``API`` when stubbing applies to the route: the stubbed response for a page request, or `nil`
    /// for the network.
    var stub: (@Sendable (Request) async throws -> RawResponse?)?
    /// Set by ``API``: turns a page's failure into the error its routes throw (`APIError<ErrorModel>`, with the
    /// decoded error model for a rejected status). Without it a rejected status is a `TrawlError` and other
    /// failures are passed on as they are.
    var makeError: (@Sendable (PageFailure, Request, (any Error)?) -> any Error)?

    /// The most bytes of a rejected page's body kept to decode its error model.
    static var errorBodyLimit: Int { 64 << 10 }

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

    /// The items of every page, in order, each as soon as it is decoded.
    public var items: PaginatedItems<Item> { PaginatedItems(paginator: self) }

    /// How many pages are fetched at once when the total is known.
    var concurrency: Int {
        if serial { return 1 }
        let limit = client.configuration.maxConnectionsPerHost ?? client.configuration.maxConcurrentTransfers
        return max(1, min(maxConcurrentPages, limit))
    }

    /// The decoder items go through.
    var itemDecoding: any PayloadDecoding { payloadDecoder ?? StreamingPayloadDecoder(decoder) }

    /// The side fields read from every page: the strategy's and the caller's.
    var capturePaths: [JSONKeyPath] {
        var paths = strategy.capturePaths
        for path in capture where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// Fetches one page whole (for ``PaginatedList``): opened, then every item read.
    func fetch(_ pageRequest: PageRequest, index: Int) async throws -> (page: Page<Item>, response: PageResponse) {
        let reader = try await PageReader(paginator: self, page: open(pageRequest, index: index))
        return try await reader.readAll()
    }

    /// Sends a page's request (or serves its stub) and returns once a head with an acceptable status has
    /// arrived; the body is left to a ``PageReader``. On a rejected page the API's retrier may refresh the
    /// credentials and the page is asked for once more.
    func open(_ pageRequest: PageRequest, index: Int) async throws -> OpenedPage {
        var request = pageRequest.request
        var refreshed = false
        while true {
            for observer in observers { observer.willSend(request) }
            let start = ContinuousClock.now
            let head: ResponseHead
            let body: OpenedPage.Body
            var isStub = false
            do {
                if let stub, let response = try await stub(request) {
                    head = ResponseHead(status: response.status, headers: response.headers, url: response.url)
                    body = .bytes(response.body)
                    isStub = true
                } else {
                    let response = try await client.stream(request)
                    head = response.head
                    body = .stream(response.body)
                }
            } catch {
                throw failure(.transport, request: request, page: pageRequest, index: index, error)
            }
            let sent = PageRequest(request: request, position: pageRequest.position)
            let opened = OpenedPage(request: sent, index: index, head: head, body: body, start: start, isStub: isStub)
            if isAcceptable(head.status) { return opened }

            let rejected = await opened.errorResponse(limit: Self.errorBodyLimit)
            for observer in observers { observer.didReceive(rejected, for: request, duration: .now - start) }
            if !refreshed, let refresh {
                do {
                    if let again = try await refresh(request, rejected) {
                        request = again
                        refreshed = true
                        continue
                    }
                } catch {
                    throw failure(.adapter(rejected), request: request, page: pageRequest, index: index, error)
                }
            }
            throw failure(.status(rejected), request: request, page: pageRequest, index: index, nil)
        }
    }

    /// The error a failed page ends the walk with; observers are told.
    func failure(
        _ kind: PageFailure, request: Request, page: PageRequest, index: Int, _ error: (any Error)?
    ) -> PaginationError {
        let underlying: any Error
        if let makeError {
            underlying = makeError(kind, request, error)
        } else if case .status(let response) = kind {
            let source = response.isStub ? " (stub)" : ""
            underlying = TrawlError(
                code: .unexpectedStatus,
                message: "HTTP \(response.status)\(source) instead of the JSON collection at '\(itemsPath)'",
                hint: response.status == 429 || response.status >= 500 ? "retry later" : nil,
                method: request.method.rawValue, url: response.url, status: response.status,
                headers: response.headers, bodyExcerpt: Array(response.body.prefix(512)))
        } else {
            underlying = error ?? TrawlError(
                code: .invalidBody, message: "the page failed", method: request.method.rawValue, url: request.url)
        }
        for observer in observers { observer.didFail(underlying, for: request) }
        return PaginationError(position: page.position, index: index, request: request, underlying: underlying)
    }
}

/// What went wrong with a page, for ``API`` to turn into its `APIError`.
enum PageFailure: Sendable {
    /// No response arrived, or its body broke off.
    case transport
    /// The route's status check rejected the response (its body is an excerpt, for the error model).
    case status(RawResponse)
    /// The body is not the expected JSON, or an item did not decode.
    case decoding(RawResponse)
    /// The retrier, or the adapters it ran again, failed.
    case adapter(RawResponse)
}
