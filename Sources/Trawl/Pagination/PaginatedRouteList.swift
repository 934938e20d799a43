/// A ``PaginatedList`` over a ``PaginatedRoute``: keeps the route and the API, so the search and the filter
/// change through the route with their own types (Opera's `routeWithQuery/Filter`), each change rebuilding the
/// request through the API's adapters, cancelling the page in flight and loading the first page again.
///
/// ```swift
/// let repos = try await api.list(of: SearchRepos(search: "swift"), as: Repo.self)
/// Task { for await snapshot in await repos.snapshots() { render(snapshot.items) } }
/// await repos.refresh()
/// try await repos.setSearch("swift nio")                          // typed: String?
/// try await repos.setFilter(RepoFilter(language: "swift"))        // typed: SearchRepos.Filter?
/// ```
public actor PaginatedRouteList<Route: PaginatedRoute, Item: Decodable & Sendable> {
    public let api: API
    /// The route whose collection is shown (its page is the first page; later pages come from its style).
    public private(set) var route: Route
    /// Where the items are in each page (`nil`: the route's `keyPath`, else the body itself).
    public let itemsPath: JSONKeyPath?
    /// The list itself: its snapshots, loading and refreshing.
    public nonisolated let list: PaginatedList<Item>
    private var generation = 0

    init(api: API, route: Route, itemsPath: JSONKeyPath?, list: PaginatedList<Item>) {
        self.api = api
        self.route = route
        self.itemsPath = itemsPath
        self.list = list
    }

    /// The current state.
    public var snapshot: PaginatedList<Item>.Snapshot {
        get async { await list.snapshot }
    }

    /// Every change of state, starting with the current one (see ``PaginatedList/snapshots()``).
    public func snapshots() async -> AsyncStream<PaginatedList<Item>.Snapshot> {
        await list.snapshots()
    }

    /// Loads the page after those loaded (see ``PaginatedList/loadNextPage()``).
    public func loadNextPage() async {
        await list.loadNextPage()
    }

    /// Clears the items, cancels a load in flight and loads the first page again.
    public func refresh() async {
        await list.refresh()
    }

    /// Searches for `search` (`nil` or empty: no search) from the first page.
    ///
    /// - Throws: the route's `APIError` when its request cannot be built (an adapter failed); the list is
    ///   unchanged then.
    public func setSearch(_ search: String?) async throws {
        try await setRoute(route.withSearch(search))
    }

    /// Filters with `filter` (`nil`: no filter) from the first page.
    ///
    /// - Throws: the route's `APIError` when its request cannot be built; the list is unchanged then.
    public func setFilter(_ filter: Route.Filter?) async throws {
        try await setRoute(route.withFilter(filter))
    }

    /// Shows another route's collection: cancels the page in flight, clears the items, loads the first page.
    /// When changes overlap, the last one asked for wins.
    ///
    /// - Throws: the route's `APIError` when its request cannot be built; the list is unchanged then.
    public func setRoute(_ route: Route) async throws {
        generation += 1
        let mine = generation
        let paginator = try await api.paginator(for: route, of: Item.self, at: itemsPath)
        guard mine == generation else { return }
        self.route = route
        await list.replace(paginator)
    }
}

extension API {
    /// A paginated list over a ``PaginatedRoute``'s collection, walked with its `paginationStyle`; the items are
    /// at `path`, by default the route's `keyPath` (the body itself when it has none). Nothing is loaded until
    /// `refresh()` or `loadNextPage()`.
    ///
    /// ```swift
    /// let list = try await api.list(of: SearchRepos(search: "swift"), as: Repo.self)
    /// await list.refresh()
    /// try await list.setFilter(["language": "swift"])
    /// ```
    public func list<R: PaginatedRoute, Item: Decodable & Sendable>(
        of route: R, as type: Item.Type, at path: JSONKeyPath? = nil
    ) async throws -> PaginatedRouteList<R, Item> {
        let paginator = try await paginator(for: route, of: type, at: path)
        return PaginatedRouteList(api: self, route: route, itemsPath: path, list: PaginatedList(paginator))
    }

    /// The paginator of a ``PaginatedRoute``: its style, and its items at `path` or its key path.
    func paginator<R: PaginatedRoute, Item: Decodable & Sendable>(
        for route: R, of type: Item.Type, at path: JSONKeyPath?, maxConcurrentPages: Int? = nil, serial: Bool? = nil
    ) async throws -> Paginator<Item> {
        try await paginator(
            route, of: type, at: path ?? route.keyPath ?? .root, style: route.paginationStyle,
            maxConcurrentPages: maxConcurrentPages, serial: serial)
    }
}
