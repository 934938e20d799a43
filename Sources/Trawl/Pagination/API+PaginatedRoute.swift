extension API {
    /// The pages of a ``PaginatedRoute``'s collection, walked with the route's `paginationStyle`; the items are
    /// at `path`, by default the route's `keyPath` (the body itself when it has none).
    ///
    /// ```swift
    /// for try await page in try await api.pages(of: SearchRepos(search: "swift"), as: Repo.self) {
    ///     print(page.position, page.items.count)
    /// }
    /// ```
    public func pages<R: PaginatedRoute, Item: Decodable & Sendable>(
        of route: R, as type: Item.Type, at path: JSONKeyPath? = nil, maxConcurrentPages: Int? = nil,
        serial: Bool? = nil
    ) async throws -> PageSequence<Item> {
        try await paginator(for: route, of: type, at: path, maxConcurrentPages: maxConcurrentPages, serial: serial)
            .pages
    }

    /// The items of every page of a ``PaginatedRoute``'s collection, in order
    /// (see ``pages(of:as:at:maxConcurrentPages:serial:)``).
    ///
    /// ```swift
    /// for try await repo in try await api.items(of: SearchRepos(search: "swift"), as: Repo.self) {
    ///     print(repo.name)
    /// }
    /// ```
    public func items<R: PaginatedRoute, Item: Decodable & Sendable>(
        of route: R, as type: Item.Type, at path: JSONKeyPath? = nil, maxConcurrentPages: Int? = nil,
        serial: Bool? = nil
    ) async throws -> PaginatedItems<Item> {
        try await paginator(for: route, of: type, at: path, maxConcurrentPages: maxConcurrentPages, serial: serial)
            .items
    }
}
