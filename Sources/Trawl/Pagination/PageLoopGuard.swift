/// Remembers every page a serial walk has asked for, so that a server whose cursors or next links cycle
/// (`A -> B -> A`) ends the walk with an error instead of looping forever.
///
/// Each page is kept as two hashes (of its position and of its method and URL) with the index it was
/// fetched at: a few dozen bytes per page however long the URLs, so a walk of millions of pages stays small.
///
/// ```swift
/// var pagesSeen = PageLoopGuard()
/// pagesSeen.visit(first, index: 0)                       // nil: new
/// if let earlier = pagesSeen.visit(next, index: 1) { … }  // the index the same page was fetched at
/// ```
package struct PageLoopGuard: Sendable {
    private var seen: [Int: Int] = [:]

    package init() {}

    /// Records `page` as fetched at `index`; returns the index of an earlier page with the same position or
    /// URL, or `nil` when the page is new.
    @discardableResult
    package mutating func visit(_ page: PageRequest, index: Int) -> Int? {
        // Two keys written out rather than an array of generic keys: that form crashed the Swift 6.3.1 optimizer
        // (a SIL verification error in release builds).
        var positionHasher = Hasher()
        positionHasher.combine(0)
        positionHasher.combine(page.position)
        let positionKey = positionHasher.finalize()
        var urlHasher = Hasher()
        urlHasher.combine(1)
        urlHasher.combine(page.request.method.rawValue)
        urlHasher.combine(page.request.url)
        // A walk paged in its request body (GraphQL, `in: body`) asks every page at one URL: the body tells them apart.
        if let body = page.request.body?.bytes { urlHasher.combine(body) }
        let urlKey = urlHasher.finalize()
        if let earlier = seen[positionKey] ?? seen[urlKey] { return earlier }
        seen[positionKey] = index
        seen[urlKey] = index
        return nil
    }

    /// The error for `next`, which repeats the page fetched at `earlier`, found after the page `after`.
    static func loopError(next: PageRequest, index: Int, after: PagePosition, earlier: Int) -> PaginationError {
        let loop = TrawlError(
            code: .invalidBody,
            message: "the page after \(after) is \(next.position), already fetched as page index \(earlier): "
                + "a pagination loop",
            hint: "the server repeats a cursor or next link; check the cursor or next-page key path",
            method: next.request.method.rawValue, url: next.request.url)
        var error = PaginationError(position: next.position, index: index, request: next.request, underlying: loop)
        error.kind = .pagination
        return error
    }
}
