/// A filter a ``PaginatedRoute`` sends as query parameters (Opera's `FilterType`).
///
/// ```swift
/// struct RepoFilter: PaginationFilter {
///     var language: String
///     var parameters: QueryParameters { ["language": .string(language)] }
/// }
/// ```
public protocol PaginationFilter: Sendable, Hashable {
    /// The query parameters this filter adds to each page request.
    var parameters: QueryParameters { get }
}

/// Plain query parameters work as a filter.
extension QueryParameters: PaginationFilter {
    public var parameters: QueryParameters { self }
}

/// A route to a paginated collection, with a page, a search query and a filter, from which a route for another
/// page, query or filter is derived (Opera's `routeWithPage/Query/Filter`).
///
/// ```swift
/// struct SearchRepos: PaginatedRoute, GetRoute {
///     typealias Output = EmptyResponse
///     var page: Int?
///     var search: String?
///     var filter: QueryParameters?
///     var path: RoutePath { "search/repositories" }
///     var keyPath: JSONKeyPath? { "items" }
/// }
///
/// let swift = SearchRepos(search: "swift")                // GET /search/repositories?q=swift
/// let third = swift.withPage(3)                           // …?q=swift&page=3
/// let recent = swift.withFilter(["sort": "updated"])      // …?q=swift&sort=updated
/// for try await repo in try await api.items(of: swift, as: Repo.self) { print(repo.name) }
/// ```
///
/// By default the page goes in `page` (first page 1) and the search query in `q`, as in Opera. The default
/// `query` is ``paginationQuery``; a route with its own `query` merges ``paginationQuery`` into it.
public protocol PaginatedRoute: Route {
    associatedtype Filter: PaginationFilter = QueryParameters

    /// The page to fetch; `nil` leaves the page parameter out (the server's first page).
    var page: Int? { get set }
    /// The search query; `nil` or empty leaves it out.
    var search: String? { get set }
    var filter: Filter? { get set }

    /// The page parameter's name; `page` by default.
    var pageParam: String { get }
    /// The search query parameter's name; `q` by default.
    var searchParam: String { get }
    /// The number of the first page; `1` by default.
    var firstPage: Int { get }
    /// How `api.items(of:as:)` and `api.pages(of:as:)` walk the pages: by default page numbers in
    /// ``pageParam``, starting at ``page`` or ``firstPage``, until an empty page.
    var paginationStyle: PaginationStyle { get }
}

extension PaginatedRoute {
    public var pageParam: String { "page" }
    public var searchParam: String { "q" }
    public var firstPage: Int { 1 }
    public var paginationStyle: PaginationStyle { .page(param: pageParam, start: page ?? firstPage) }
    public var query: QueryParameters { paginationQuery }

    /// The search query, the filter's parameters and the page, in that order.
    public var paginationQuery: QueryParameters {
        var query = QueryParameters()
        if let search, !search.isEmpty { query.append(searchParam, .string(search)) }
        if let filter { query = query.merging(filter.parameters) }
        if let page { query.append(pageParam, .int(page)) }
        return query
    }

    /// The same route for another page.
    public func withPage(_ page: Int?) -> Self {
        var route = self
        route.page = page
        return route
    }

    /// The same route for another search query, from the first page.
    public func withSearch(_ search: String?) -> Self {
        var route = self
        route.search = search
        route.page = nil
        return route
    }

    /// The same route with another filter, from the first page.
    public func withFilter(_ filter: Filter?) -> Self {
        var route = self
        route.filter = filter
        route.page = nil
        return route
    }
}
