extension API {
    /// A paginator over `route`'s collection: the items at `path` of each page, decoded as `Item`.
    ///
    /// ```swift
    /// let search = try await api.paginator(SearchRepos(query: "swift"), of: Repo.self, at: "items",
    ///                            style: .page(sizeParam: "per_page", size: 100, totalItems: "total_count"))
    /// for try await repo in search.items { print(repo.fullName) }
    /// ```
    ///
    /// Pages are sent and checked as `send` does: the route's request goes through the adapter chain
    /// (credentials, static headers) and the route's `adjust` hook once, and every page request is derived from
    /// it; the route's `isAcceptable` judges each page's status; items decode with the route's decoder, else the
    /// API's (so `convertFromSnakeCase` on the API's decoder applies to items too). A failed page ends the walk
    /// with a ``PaginationError`` whose `underlying` is the route's `APIError<ErrorModel>`, carrying the decoded
    /// error model when a rejected page's body parses. Observers see every page request (`didReceive` once the
    /// body has ended, with an empty `body` and its size in `bodySize`: the items were decoded as it streamed).
    /// The API's retrier is asked about a rejected page (for example a 401 after a token expired); when it says
    /// retry, the request is prepared again (the adapters, the route's `adjust` and its authentication check) for
    /// that page's URL and sent once more. The API's `retryPolicy` tries a page whose head failed in a way that may
    /// pass (no response, 408, 429, 5xx) again the same way, after its backoff. Stubs apply to every
    /// page request as they do to `send` (a ``Stub/perRequest(_:)`` stub can answer each page differently).
    /// `maxConcurrentPages` defaults to the API's ``PaginationSettings``; when the API's `pagination.serial` is
    /// set, pages are fetched one at a time whatever `serial` says.
    public func paginator<R: Route, Item: Decodable & Sendable>(
        _ route: R, of type: Item.Type, at path: JSONKeyPath, style: some PaginationStrategy,
        capture: [JSONKeyPath] = [], maxConcurrentPages: Int? = nil, serial: Bool? = nil
    ) async throws -> Paginator<Item> {
        var paginator = Paginator(
            type, client: client, request: try await prepare(route, attempt: 0), items: path, style: style,
            capture: capture, maxConcurrentPages: pagination.maxConcurrentPages(maxConcurrentPages),
            serial: pagination.serial(serial))
        let decoding = route.decoder ?? decoder
        paginator.payloadDecoder = decoding
        paginator.isAcceptable = { route.isAcceptable(status: $0) }
        paginator.makeError = { kind, request, response, error in
            switch kind {
            case .transport, .pagination:
                APIError<R.ErrorModel>(kind: .transport, request: request, response: response, underlying: error)
            case .status:
                APIError<R.ErrorModel>(
                    kind: .status, request: request, response: response,
                    errorModel: response.flatMap { try? decoding.decode(R.ErrorModel.self, from: $0.body, at: nil) })
            case .body, .decoding:
                APIError<R.ErrorModel>(kind: .decoding, request: request, response: response, underlying: error)
            case .adapter:
                APIError<R.ErrorModel>(kind: .adapter, request: request, response: response, underlying: error)
            case .invalid:
                APIError<R.ErrorModel>(kind: .invalidRoute, request: request, response: response, underlying: error)
            }
        }
        paginator.observers = observers
        if let retrier {
            paginator.shouldRefresh = { request, response in try await retrier.shouldRetry(request, response: response) }
        }
        let api = self
        let base = paginator.request
        paginator.prepare = { request, attempt in
            // The whole preparation again (fresh credentials, `adjust`, the authentication check), for this page.
            let again = try await api.prepare(route, attempt: attempt)
            return QueryEditing.page(request, of: base, on: again)
        }
        paginator.retryPolicy = retryPolicy
        paginator.cache = cache
        let behavior = route.stubbing ?? stubbing
        if behavior != .never {
            let routeStub = route.stub
            paginator.stub = { request in
                guard let stub = routeStub?.resolved(for: request) else {
                    if behavior == .whenAvailable { return nil }
                    throw TrawlError(
                        code: .invalidRequest, message: "stubbing is on and the route has no stub",
                        method: request.method.rawValue, url: request.url)
                }
                if let delay = stub.delay { try await Task.sleep(for: delay) }
                if let error = stub.error { throw error }
                return RawResponse(
                    status: stub.status, headers: stub.headers, url: request.url, body: stub.body, isStub: true)
            }
        }
        return paginator
    }

    /// The pages of `route`'s collection, in order
    /// (see ``paginator(_:of:at:style:capture:maxConcurrentPages:serial:)``).
    ///
    /// ```swift
    /// for try await page in try await api.pages(of: ListCharges(), as: Charge.self, at: "data",
    ///                                     style: .cursor(at: "data.-1.id", param: "starting_after")) {
    ///     print(page.position, page.items.count)
    /// }
    /// ```
    public func pages<Item: Decodable & Sendable>(
        of route: some Route, as type: Item.Type, at path: JSONKeyPath, style: some PaginationStrategy,
        maxConcurrentPages: Int? = nil, serial: Bool? = nil
    ) async throws -> PageSequence<Item> {
        try await paginator(
            route, of: type, at: path, style: style, maxConcurrentPages: maxConcurrentPages, serial: serial
        ).pages
    }

    /// The items of every page of `route`'s collection, in order.
    ///
    /// ```swift
    /// for try await charge in try await api.items(of: ListCharges(), as: Charge.self, at: "data",
    ///                                       style: .cursor(at: "data.-1.id", param: "starting_after")) {
    ///     print(charge.id)
    /// }
    /// ```
    public func items<Item: Decodable & Sendable>(
        of route: some Route, as type: Item.Type, at path: JSONKeyPath, style: some PaginationStrategy,
        maxConcurrentPages: Int? = nil, serial: Bool? = nil
    ) async throws -> PaginatedItems<Item> {
        try await paginator(
            route, of: type, at: path, style: style, maxConcurrentPages: maxConcurrentPages, serial: serial
        ).items
    }
}
