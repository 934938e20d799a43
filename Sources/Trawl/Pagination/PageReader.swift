/// Decodes one opened page's items as its body arrives: hands them out one at a time and, once the body has
/// ended, the ``PageResponse`` the strategy needs for the next page. The driver of the library's sequences,
/// ``PaginatedList`` and `Client.items` over a ``PageStream``.
///
/// Used by one task at a time: a planned page's task reads ahead (``readAhead(budget:)``), then hands the reader
/// to the consumer when the task completes (hence `@unchecked Sendable`).
final class PageReader<Item: Decodable & Sendable>: @unchecked Sendable {
    let stream: PageStream
    private let decoding: any PayloadDecoding
    /// Decoded, not yet handed out (each item is moved out when it is: no copy).
    private let pending = ItemQueue<Item>(capacity: 64)

    init(_ stream: PageStream, decoding: any PayloadDecoding) {
        self.stream = stream
        self.decoding = decoding
    }

    /// The page as the strategy sees it, once the body has ended.
    var response: PageResponse? { stream.response }

    /// An item already decoded, if there is one: what `next()` hands out first, without an `await` (the
    /// iterators take it before calling `next()`, which saves an async call per item).
    @inline(__always)
    func takeDecoded() -> Item? { pending.take() }

    /// The next item of the page, `nil` once the body has ended; read on the caller's actor (no hop per item).
    /// A failure is thrown once the items decoded before it have been handed out.
    func next(isolation actor: isolated (any Actor)? = #isolation) async throws(PaginationError) -> Item? {
        while true {
            if let item = takeDecoded() { return item }
            if stream.response != nil { return nil }
            let decoding = decoding
            do {
                try await stream.step(isolation: actor) { pending.append(try decoding.decode(Item.self, element: $0)) }
            } catch {
                // The items decoded before the failure go first; the stream throws it again at the next step.
                if pending.isEmpty { throw error }
            }
        }
    }

    /// Reads and decodes the body until it ends or `budget` bytes of it have been parsed, keeping the items for
    /// `next()`: planned pages decode in their own tasks, on every core, while the consumer takes the pages
    /// before them; a page larger than the budget holds at most that much and streams the rest to the consumer.
    /// A failure is kept for `next()`.
    func readAhead(budget: Int, isolation actor: isolated (any Actor)? = #isolation) async {
        let decoding = decoding
        while !stream.isFinished, stream.byteCount < budget, !Task.isCancelled {
            do {
                try await stream.step(isolation: actor) { pending.append(try decoding.decode(Item.self, element: $0)) }
            } catch {
                return
            }
        }
    }

    /// Every item of the page and the page as the strategy sees it.
    func readAll(isolation actor: isolated (any Actor)? = #isolation) async throws(PaginationError)
        -> (items: [Item], response: PageResponse)
    {
        var items: [Item] = []
        while let item = try await next(isolation: actor) { items.append(item) }
        // `next` returned nil: the body has ended, so this only hands back the page.
        return (items, try await stream.readToEnd(isolation: actor) { _ in })
    }
}
