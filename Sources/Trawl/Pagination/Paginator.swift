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
    /// Set by ``API`` when it has a retrier: given a page request and its rejected response, whether to refresh
    /// the credentials and send the page again. Asked once per page.
    var shouldRefresh: (@Sendable (Request, RawResponse) async throws -> Bool)?
    /// Set by ``API``: prepares a page's request again for another attempt (adapters, `adjust`, the
    /// authentication check), keeping the page's URL.
    var prepare: (@Sendable (Request, Int) async throws -> Request)?
    /// How often a page whose head failed in a way that may pass is tried; ``API`` sets its `retryPolicy`.
    public var retryPolicy = RetryPolicy.never
    /// Conditional requests for every page (an ``API``'s `cache`).
    public var cache: (any ResponseCache)?
    /// Set by ``API`` when stubbing applies to the route: the stubbed response for a page request, or `nil`
    /// for the network.
    var stub: (@Sendable (Request) async throws -> RawResponse?)?
    /// Set by ``API``: turns a page's failure into the error its routes throw (`APIError<ErrorModel>`, with the
    /// decoded error model for a rejected status). Without it a rejected status is a `TrawlError` and other
    /// failures are passed on as they are.
    var makeError: (@Sendable (PaginationError.Kind, Request, RawResponse?, (any Error)?) -> any Error)?

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

    /// The decoder items go through: at a GraphQL connection's `edges`, each item is its edge's `node`.
    var itemDecoding: any PayloadDecoding {
        let decoding = payloadDecoder ?? StreamingPayloadDecoder(decoder)
        return strategy.itemsAreEdges(at: itemsPath) ? EdgeNodeDecoding(base: decoding) : decoding
    }

    /// The side fields read from every page: the strategy's and the caller's.
    var capturePaths: [JSONKeyPath] {
        var paths = strategy.capturePaths
        for path in capture where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// The exchange every page of this paginator goes through.
    var exchange: PageExchange {
        let decoding = itemDecoding
        var exchange = PageExchange(client: client, itemsPath: itemsPath, capture: capturePaths, form: decoding.elementForm)
        exchange.isAcceptable = isAcceptable
        exchange.observers = observers
        exchange.stub = stub
        exchange.shouldRefresh = shouldRefresh
        exchange.prepare = prepare
        exchange.retryPolicy = retryPolicy
        exchange.cache = cache
        exchange.makeError = makeError
        exchange.itemType = "\(Item.self)"
        exchange.errorBodyLimit = Self.errorBodyLimit
        return exchange
    }

    /// Sends a page's request (or serves its stub) and returns its reader once a head with an acceptable status
    /// has arrived.
    func open(_ page: PageRequest, index: Int) async throws(PaginationError) -> PageReader<Item> {
        PageReader(try await exchange.open(page, index: index), decoding: itemDecoding)
    }

    /// Fetches one page whole (for ``PaginatedList``): opened, then every item read.
    func fetch(_ pageRequest: PageRequest, index: Int) async throws(PaginationError)
        -> (page: Page<Item>, response: PageResponse)
    {
        let (items, response) = try await open(pageRequest, index: index).readAll()
        return (page(items, response, index: index), response)
    }

    /// The ``Page`` of `items` read from `response`.
    func page(_ items: [Item], _ response: PageResponse, index: Int) -> Page<Item> {
        Page(
            items: items, position: response.position, index: index, total: strategy.total(in: response),
            captured: response.captured, head: response.head)
    }
}
