/// One page of a paginated collection: its items, where it sits, what comes next and what the body said.
///
/// ```swift
/// for try await page in paginator.pages {
///     print(page.position, page.items.count, page.total ?? -1)
/// }
/// ```
public struct Page<Item: Sendable>: Sendable {
    /// The items, decoded as the body streamed in.
    public var items: [Item]
    /// The page number, offset, cursor or URL it was requested with.
    public var position: PagePosition
    /// The page's place in the sequence, from 0.
    public var index: Int
    /// The position of the page after this one, when there is one and it is known.
    public var next: PagePosition?
    /// The total number of items, when the body says.
    public var total: Int?
    /// The side fields captured from the body (the strategy's and the caller's).
    public var captured: [JSONKeyPath: JSONValue]
    /// The status, headers and final URL of the response.
    public var head: ResponseHead

    public init(
        items: [Item], position: PagePosition, index: Int, next: PagePosition? = nil, total: Int? = nil,
        captured: [JSONKeyPath: JSONValue] = [:], head: ResponseHead
    ) {
        self.items = items
        self.position = position
        self.index = index
        self.next = next
        self.total = total
        self.captured = captured
        self.head = head
    }
}

/// A page that could not be fetched or decoded: which page, and why. Pages and items before it were delivered.
///
/// ```swift
/// do {
///     for try await item in paginator.items { use(item) }
/// } catch let error as PaginationError {
///     print("\(error.position) failed: \(error.underlying)")   // "page 3 failed: HTTP 500 ..."
/// }
/// ```
public struct PaginationError: Error, Sendable, CustomStringConvertible {
    /// The stage at which the page failed.
    public enum Kind: Sendable, Hashable {
        /// No response arrived, or its body broke off.
        case transport
        /// The status was not acceptable (the route's `isAcceptable`, else 2xx).
        case status
        /// The body is not the expected JSON, has nothing at the items path, or is too large.
        case body
        /// An item did not decode as the item type.
        case decoding
        /// The retrier, or the adapters it ran again, failed.
        case adapter
        /// The items or capture key paths cannot be streamed.
        case invalid
        /// The page after it is one this walk already fetched, or the pagination data is unusable.
        case pagination
    }

    /// The page number, offset, cursor or URL of the failed page.
    public var position: PagePosition
    /// The failed page's place in the sequence, from 0.
    public var index: Int
    /// The URL requested.
    public var url: String
    /// What went wrong (usually a `TrawlError`, or the route's `APIError` for a paginator made by an ``API``).
    public var underlying: any Error
    /// The stage that failed.
    public var kind = Kind.transport
    /// The head of the failed page's response, when one arrived.
    public var head: ResponseHead?
    /// The attempts made at the page (more than 1 when a retry policy tried it again).
    public var attempts = 1
    /// The side fields read from the failed page's body when it was read to its end (a GraphQL answer without
    /// data: its `errors`, its `extensions.cost`); empty otherwise.
    public var captured: [JSONKeyPath: JSONValue] = [:]

    /// Query parameter names hidden in `description` on top of `Redaction`'s defaults (lowercased): the failed
    /// request's `sensitiveQueryParameters`.
    var sensitiveQueryParameters: Set<String> = []

    public init(position: PagePosition, index: Int, url: String, underlying: any Error) {
        self.position = position
        self.index = index
        self.url = url
        self.underlying = underlying
    }

    /// The failure of `request`'s page, whose sensitive query parameters `description` hides.
    init(position: PagePosition, index: Int, request: Request, underlying: any Error) {
        self.init(position: position, index: index, url: request.url, underlying: underlying)
        sensitiveQueryParameters = Set(request.sensitiveQueryParameters.map { $0.lowercased() })
    }

    /// Which page failed, its URL and why, with credentials hidden: the values of sensitive query parameters
    /// (the defaults of `Redaction` and the request's `sensitiveQueryParameters`) in every URL of the text.
    public var description: String {
        Redaction.text(
            "\(position) (page index \(index), \(url)) failed: \(underlying)",
            names: Redaction.defaultQueryNames.union(sensitiveQueryParameters))
    }

    /// The HTTP status of the failed page, when a response arrived (from the `APIError` or `TrawlError` inside).
    public var status: Int? { (underlying as? any HTTPStatusCarrying)?.httpStatus ?? head?.status }

    /// The `TrawlError` that says what went wrong, wherever it sits: `underlying` itself, or inside the
    /// route's `APIError`.
    ///
    /// ```swift
    /// catch let error as PaginationError {
    ///     print(error.trawlError?.code ?? .transport, error.jsonError?.byteOffset ?? -1)
    /// }
    /// ```
    public var trawlError: TrawlError? {
        var error: (any Error)? = underlying
        while let current = error {
            if let found = current as? TrawlError { return found }
            error = (current as? any UnderlyingErrorCarrying)?.underlyingError
        }
        return nil
    }

    /// The `JSONError` (what, byte offset, line, key path) when the page's body was not the expected JSON.
    public var jsonError: JSONError? {
        var error: (any Error)? = underlying
        while let current = error {
            if let found = current as? JSONError { return found }
            error = (current as? any UnderlyingErrorCarrying)?.underlyingError
        }
        return nil
    }

    /// The failed page's decoded error body, when the paginator came from an ``API`` whose route names
    /// `Model` as its `ErrorModel` and the body parsed.
    ///
    /// ```swift
    /// catch let error as PaginationError {
    ///     print(error.status ?? 0, error.errorModel(GitHubError.self)?.message ?? "")
    /// }
    /// ```
    public func errorModel<Model: Decodable & Sendable>(_ type: Model.Type) -> Model? {
        (underlying as? APIError<Model>)?.errorModel
    }

    /// The route's error inside, when the paginator came from an ``API`` whose route names `Model` as its
    /// `ErrorModel`.
    public func apiError<Model: Decodable & Sendable>(_ type: Model.Type) -> APIError<Model>? {
        underlying as? APIError<Model>
    }
}

/// The errors that wrap another, whatever their generic parameters.
protocol UnderlyingErrorCarrying {
    var underlyingError: (any Error)? { get }
}

extension TrawlError: UnderlyingErrorCarrying {
    var underlyingError: (any Error)? { underlying }
}

extension APIError: UnderlyingErrorCarrying {
    var underlyingError: (any Error)? { underlying }
}

/// The errors that may carry an HTTP status, whatever their generic parameters.
protocol HTTPStatusCarrying {
    var httpStatus: Int? { get }
}

extension TrawlError: HTTPStatusCarrying {
    var httpStatus: Int? { status }
}

extension APIError: HTTPStatusCarrying {
    var httpStatus: Int? { status }
}
