/// A UI-free list that loads a paginated collection one page at a time: refresh, load the next page,
/// change the query or filter (cancelling what is in flight), with the accumulated items and the loading and
/// empty states, observable as snapshots.
///
/// ```swift
/// let list = PaginatedList(paginator)
/// Task { for await snapshot in await list.snapshots() { render(snapshot.items, spinner: snapshot.isLoading) } }
/// await list.refresh()                       // first page
/// await list.loadNextPage()                  // when the user scrolls to the end
/// await list.setQuery("q", to: "swift")      // new search: cancels, clears, loads the first page
/// ```
///
/// For a ``PaginatedRoute``, `api.list(of:as:)` makes a ``PaginatedRouteList``, which changes the search and
/// the filter through the route, with their types.
public actor PaginatedList<Item: Decodable & Sendable> {
    /// What the list holds at one moment.
    public struct Snapshot: Sendable {
        /// Every item loaded so far, in order.
        public var items: [Item]
        /// A page is being loaded.
        public var isLoading: Bool
        /// More pages may follow (true before the first load).
        public var hasMore: Bool
        public var pagesLoaded: Int
        /// The error of the last load, cleared by the next successful one.
        public var error: PaginationError?
        /// Everything has been loaded and there is nothing.
        public var isEmpty: Bool { !isLoading && !hasMore && items.isEmpty && error == nil }
    }

    public private(set) var paginator: Paginator<Item>
    private var items: [Item] = []
    /// The walk's plan (one page at a time) and the page it asks for next, kept until that page loads: a
    /// failed load leaves it there, to be asked for again.
    private var plan: PagePlan
    private var pending: (page: PageRequest, index: Int)?
    private var pagesLoaded = 0
    private var isLoading = false
    private var error: PaginationError?
    private var generation = 0
    private var loading: Task<Void, Never>?
    private var observers: [Int: AsyncStream<Snapshot>.Continuation] = [:]
    private var nextObserver = 0

    public init(_ paginator: Paginator<Item>) {
        self.paginator = paginator
        var plan = Self.plan(for: paginator)
        self.pending = Self.following(&plan).page
        self.plan = plan
    }

    /// The current state.
    public var snapshot: Snapshot {
        Snapshot(items: items, isLoading: isLoading, hasMore: pending != nil, pagesLoaded: pagesLoaded, error: error)
    }

    /// Every change of state, starting with the current one. A slow observer sees the latest snapshot, not
    /// every intermediate one.
    public func snapshots() -> AsyncStream<Snapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextObserver
        nextObserver += 1
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        continuation.yield(snapshot)
        return stream
    }

    /// Loads the page after those loaded; waits for a load already under way instead of starting another.
    /// Does nothing when there are no more pages. A failure is kept in ``Snapshot/error``; calling again
    /// retries the same page.
    public func loadNextPage() async {
        if let loading {
            await loading.value
            return
        }
        guard let (request, index) = pending else { return }
        let generation = generation
        let paginator = paginator
        isLoading = true
        publish()
        let task = Task {
            let result: Result<(page: Page<Item>, response: PageResponse), PaginationError>
            do throws(PaginationError) {
                result = .success(try await paginator.fetch(request, index: index))
            } catch {
                result = .failure(error)
            }
            self.finish(result, generation: generation)
        }
        loading = task
        await task.value
    }

    /// Clears the items, cancels a load in flight and loads the first page again.
    public func refresh() async {
        reset()
        await loadNextPage()
    }

    /// Changes the request (a query or a filter), then refreshes.
    public func changeRequest(_ change: @Sendable (inout Request) -> Void) async {
        change(&paginator.request)
        await refresh()
    }

    /// Sets the query parameter `name` to `value` (a new search term or filter), then refreshes.
    public func setQuery(_ name: String, to value: String) async {
        paginator.request = paginator.request.settingQuery(name, to: value)
        await refresh()
    }

    /// Walks another paginator from now on (a new route, query or filter): cancels what is in flight, clears
    /// the items and loads the first page.
    public func replace(_ paginator: Paginator<Item>) async {
        self.paginator = paginator
        await refresh()
    }

    private func reset() {
        loading?.cancel()
        loading = nil
        generation += 1
        items = []
        pagesLoaded = 0
        error = nil
        isLoading = false
        plan = Self.plan(for: paginator)
        pending = Self.following(&plan).page
    }

    private static func plan(for paginator: Paginator<Item>) -> PagePlan {
        PagePlan(strategy: paginator.strategy, request: paginator.request, limits: PagePlan.Limits(concurrency: 1))
    }

    /// The page the plan asks for next, or the error it ended with.
    private static func following(_ plan: inout PagePlan) -> (page: (PageRequest, Int)?, error: PaginationError?) {
        switch plan.next() {
        case .request(let page, let index): (page: (page, index), error: nil)
        case .fail(let error): (page: nil, error: error)
        case .wait, .done: (page: nil, error: nil)
        }
    }

    private func finish(
        _ result: Result<(page: Page<Item>, response: PageResponse), PaginationError>, generation: Int
    ) {
        guard generation == self.generation else { return }
        loading = nil
        isLoading = false
        switch result {
        case .success(let fetched):
            items += fetched.page.items
            pagesLoaded += 1
            plan.completed(fetched.response)
            (pending, error) = Self.following(&plan)
        case .failure(let failure):
            error = failure
        }
        publish()
    }

    private func publish() {
        let current = snapshot
        for continuation in observers.values { continuation.yield(current) }
    }

    private func removeObserver(_ id: Int) {
        observers[id] = nil
    }
}
