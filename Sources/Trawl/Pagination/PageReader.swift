/// A page whose response head was accepted; its body is still to be read.
struct OpenedPage: Sendable {
    enum Body: Sendable {
        /// From the network, with the engine's back-pressure: unread bytes pause the transfer.
        case stream(ResponseBody)
        /// From a stub.
        case bytes([UInt8])
    }

    /// The request as finally sent (after a credentials refresh) and the page's position.
    var request: PageRequest
    var index: Int
    var head: ResponseHead
    var body: Body
    var start: ContinuousClock.Instant
    var isStub: Bool

    /// The response with at most `limit` bytes of its body, for a rejected page's error.
    func errorResponse(limit: Int) async -> RawResponse {
        var excerpt: [UInt8] = []
        switch body {
        case .bytes(let bytes):
            excerpt = Array(bytes.prefix(limit))
        case .stream(let stream):
            do {
                for try await chunk in stream {
                    excerpt += chunk.prefix(limit - excerpt.count)
                    if excerpt.count >= limit { break }
                }
            } catch {
                // The excerpt is what arrived before the body broke off; the status is the error.
            }
        }
        return RawResponse(
            status: head.status, headers: head.headers, url: head.url, body: excerpt,
            timings: isStub ? nil : head.timings, isStub: isStub)
    }
}

/// Reads one opened page: hands out its items as the body arrives and, once the body has ended, the
/// ``PageResponse`` the strategy needs for the next page. Observers hear about the page at its end.
///
/// Used by one task at a time: a planned page's task reads ahead (``readAhead(budget:)``), then hands the reader
/// to the consumer when the task completes (hence `@unchecked Sendable`).
final class PageReader<Item: Decodable & Sendable>: @unchecked Sendable {
    let paginator: Paginator<Item>
    let page: OpenedPage
    /// The page as the strategy sees it, once the body has ended.
    private(set) var response: PageResponse?
    private var chunks: ResponseBody.AsyncIterator?
    private var stubBody: [UInt8]?
    private let extractor: JSONExtractor
    private let decoding: any PayloadDecoding
    private var pending: [Item] = []
    private var nextIndex = 0
    private var itemCount = 0
    private var failure: PaginationError?

    init(paginator: Paginator<Item>, page: OpenedPage) throws {
        self.paginator = paginator
        self.page = page
        decoding = paginator.itemDecoding
        switch page.body {
        case .stream(let body): chunks = body.makeAsyncIterator()
        case .bytes(let bytes): stubBody = bytes
        }
        do {
            extractor = try JSONExtractor(
                path: paginator.itemsPath, capture: paginator.capturePaths, form: decoding.elementForm)
        } catch {
            let request = page.request.request
            let invalid = TrawlError(
                code: .invalidRequest, message: "the items or capture key path cannot be streamed: \(error)",
                method: request.method.rawValue, url: request.url, underlying: error)
            throw paginator.failure(.transport, request: request, page: page.request, index: page.index, invalid)
        }
    }

    /// The next item of the page, `nil` once the body has ended; read on the caller's actor (no hop per item).
    func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> Item? {
        while true {
            if nextIndex < pending.count {
                defer { nextIndex += 1 }
                return pending[nextIndex]
            }
            pending.removeAll(keepingCapacity: true)
            nextIndex = 0
            if let failure { throw failure }
            if response != nil { return nil }
            await refill(isolation: actor)
        }
    }

    /// Reads and decodes the body until it ends or `budget` bytes of it have been parsed, keeping the items for
    /// `next()`: planned pages decode in their own tasks, on every core, while the consumer takes the pages
    /// before them; a page larger than the budget holds at most that much and streams the rest to the consumer.
    func readAhead(budget: Int, isolation actor: isolated (any Actor)? = #isolation) async {
        while response == nil, failure == nil, extractor.byteCount < budget, !Task.isCancelled {
            await refill(isolation: actor)
        }
    }

    /// Every item of the page and the page as the strategy sees it.
    func readAll(isolation actor: isolated (any Actor)? = #isolation) async throws
        -> (page: Page<Item>, response: PageResponse)
    {
        var items: [Item] = []
        while let item = try await next(isolation: actor) { items.append(item) }
        guard let response else {
            throw paginator.failure(
                .transport, request: page.request.request, page: page.request, index: page.index,
                TrawlError(
                    code: .invalidBody, message: "the page ended without a response",
                    method: page.request.request.method.rawValue, url: page.request.request.url))
        }
        let built = Page(
            items: items, position: page.request.position, index: page.index,
            total: paginator.strategy.total(in: response), captured: response.captured, head: page.head)
        return (built, response)
    }

    /// Reads one more chunk and decodes the items it completes; at the end of the body, finishes the page.
    /// A failure is kept in `failure`, thrown once the items decoded before it have been handed out.
    private func refill(isolation actor: isolated (any Actor)?) async {
        let request = page.request.request
        let chunk: [UInt8]?
        do {
            chunk = try await nextChunk(isolation: actor)
        } catch {
            failure = paginator.failure(.transport, request: request, page: page.request, index: page.index, error)
            return
        }
        do {
            if let chunk {
                try extractor.feed(chunk) { pending.append(try decode($0)) }
            } else {
                let summary = try extractor.finish { pending.append(try decode($0)) }
                if summary.collection == .missing {
                    throw TrawlError(
                        code: .invalidBody, message: "the page has no value at '\(paginator.itemsPath)'",
                        hint: "check the items key path against the response", method: request.method.rawValue,
                        url: page.head.url)
                }
                finish(summary)
            }
        } catch {
            let raw = rawResponse()
            failure = paginator.failure(
                .decoding(raw), request: request, page: page.request, index: page.index, bodyError(error))
        }
    }

    private func nextChunk(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
        if let body = stubBody {
            stubBody = nil
            return body.isEmpty ? nil : body
        }
        return try await chunks?.next(isolation: actor)
    }

    private func decode(_ element: JSONElement) throws -> Item {
        defer { itemCount += 1 }
        return try decoding.decode(Item.self, element: element)
    }

    private func finish(_ summary: JSONExtractor.Summary) {
        chunks = nil
        response = PageResponse(
            request: page.request.request, position: page.request.position, itemCount: itemCount,
            captured: summary.captured, head: page.head)
        let duration = ContinuousClock.now - page.start
        for observer in paginator.observers {
            observer.didReceive(rawResponse(), for: page.request.request, duration: duration)
        }
    }

    /// The page as observers and errors see it: no body (its items were decoded), its size so far.
    private func rawResponse() -> RawResponse {
        RawResponse(
            status: page.head.status, headers: page.head.headers, url: page.head.url, body: [],
            bodySize: extractor.byteCount, timings: page.isStub ? nil : page.head.timings, isStub: page.isStub)
    }

    /// Parser and decoder errors as the `TrawlError` a page's bad body is reported with.
    private func bodyError(_ error: any Error) -> any Error {
        let request = page.request.request
        let source = page.isStub ? "stubbed " : ""
        switch error {
        case let error as JSONError:
            return TrawlError(
                code: .invalidBody, message: "the \(source)page is not the expected JSON: \(error)",
                method: request.method.rawValue, url: page.head.url, underlying: error)
        case let error as DecodingError:
            return TrawlError(
                code: .invalidBody,
                message: "an item of the \(source)page at '\(paginator.itemsPath)' does not decode as \(Item.self)",
                hint: "\(error)", method: request.method.rawValue, url: page.head.url, underlying: error)
        default:
            return error
        }
    }
}
