import TrawlEngine
import TrawlJSON

/// The one path a page takes from its request to its items: sent (or served by a stub), its status checked (a
/// rejected page may be sent once more after a credentials refresh), then its body streamed through a
/// ``JSONExtractor`` into whatever the driver does with each element, ending in the ``PageResponse`` the
/// pagination strategy reads. Every failure on the way is one ``PaginationError`` naming the page.
///
/// The library's sequences, ``PaginatedList``, single responses (`Client.items`), the job runner and
/// `trawl bench` all exchange their pages here; they differ only in what they do with the elements (decode
/// them, write them as JSON Lines, count them) and in what they do about a failure (retry it, record it).
///
/// ```swift
/// let exchange = PageExchange(client: client, itemsPath: "items", capture: ["next"], form: .json)
/// let page = try await exchange.open(PageRequest(request: request, position: .number(1)), index: 0)
/// while try await page.step({ element in out.append(contentsOf: element.json) }) {}
/// print(page.response?.itemCount ?? 0)
/// ```
package struct PageExchange: Sendable {
    package var client: Client
    /// Where the items are in each body (`.root` for a bare array).
    package var itemsPath: JSONKeyPath
    /// Side fields read from each body (the strategy's and the caller's).
    package var capture: [JSONKeyPath]
    /// How the extractor records elements: as JSON text, parser events, or not at all (count only).
    package var form: JSONExtractor.Form
    /// Whether a status counts as success (default: 2xx).
    package var isAcceptable: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
    /// Told about every request; a page reaches `didReceive` once its body has ended, with an empty `body` and
    /// its size in `bodySize`.
    package var observers: [any RequestObserver] = []
    /// The stubbed response for a request, or `nil` for the network.
    package var stub: (@Sendable (Request) async throws -> RawResponse?)?
    /// Given a rejected page's request and response, whether to refresh the credentials and send the page again
    /// (at once, prepared again). Asked once per page.
    package var shouldRefresh: (@Sendable (Request, RawResponse) async throws -> Bool)?
    /// Prepares a page's request again for another attempt (from 1): an ``API`` runs its whole preparation (the
    /// route's request, adapters, `adjust`, the authentication check) and keeps the page's URL. Without it the
    /// request is sent as it was.
    package var prepare: (@Sendable (Request, Int) async throws -> Request)?
    /// How often a page whose head failed in a way that may pass (no response, 408, 429, 5xx) is tried.
    package var retryPolicy = RetryPolicy.never
    /// Turns a page's failure into the error its caller expects (an ``API`` makes its route's `APIError`, with
    /// the decoded error model); without it the failure's `TrawlError` is kept.
    package var makeError: (@Sendable (PaginationError.Kind, Request, RawResponse?, (any Error)?) -> any Error)?
    /// What a body is called in messages: "page", or "body" for a single response.
    package var noun = "page"
    /// The items' type, named when one does not decode.
    package var itemType = ""
    /// Whether the items path must name an array: a scalar, an object or null there fails the page instead of
    /// being its one item (the job runner's pages).
    package var requiresArray = false
    /// The most bytes of a rejected page's body kept for its error.
    package var errorBodyLimit = 64 << 10
    /// Conditional requests: a page stored with a validator is asked for with `If-None-Match` /
    /// `If-Modified-Since`, and a `304` reads the stored body (see ``ResponseCache``).
    package var cache: (any ResponseCache)?
    /// Who the `Authorization` header's renewable token authenticates, for the cache key (see `ResponseCacheKey`).
    package var cachePrincipal: String?

    package init(client: Client, itemsPath: JSONKeyPath, capture: [JSONKeyPath] = [], form: JSONExtractor.Form) {
        self.client = client
        self.itemsPath = itemsPath
        self.capture = capture
        self.form = form
    }

    /// Sends a page's request (or serves its stub) and returns once a head with an acceptable status has
    /// arrived; the body is left to the returned ``PageStream``.
    package func open(_ page: PageRequest, index: Int) async throws(PaginationError) -> PageStream {
        var request = page.request
        var attempts = Attempts(policy: retryPolicy)
        var revalidate = cache != nil
        while true {
            for observer in observers { observer.willSend(request) }
            let start = ContinuousClock.now
            var head: ResponseHead
            var body: PageStream.Body
            var isStub = false
            let cached = revalidate ? CacheExchange(cache, request, principal: cachePrincipal) : nil
            do {
                if let stub, let response = try await stub(request) {
                    head = ResponseHead(status: response.status, headers: response.headers, url: response.url)
                    body = .bytes(response.body)
                    isStub = true
                } else {
                    let response = try await client.stream(cached?.request ?? request)
                    head = response.head
                    body = .stream(response.body)
                }
            } catch {
                var failed = failure(.transport, page: page, request: request, index: index, error: error)
                failed.attempts = attempts.made
                let next = attempts.failed(retryable: retryPolicy.isRetryable(error))
                guard let retried = try await again(page, request, index: index, next, attempt: attempts.current)
                else { throw failed }
                request = retried
                continue
            }
            let sent = PageRequest(request: request, position: page.position)
            var notModified = false
            if let cached {
                // nil: the stored body is gone or changed; ask again without validators.
                guard let served = cached.notModified(&head, &body) else {
                    revalidate = false
                    continue
                }
                notModified = served
            }
            if isAcceptable(head.status) {
                let stream = try PageStream(
                    exchange: self, page: sent, index: index, head: head, body: body, start: start, isStub: isStub)
                stream.notModified = notModified
                stream.cacheWriter = notModified ? nil : cached?.writer(head)
                return stream
            }
            let rejected = await Self.excerpt(of: body, head: head, limit: errorBodyLimit, isStub: isStub)
            for observer in observers { observer.didReceive(rejected, for: request, duration: .now - start) }
            if attempts.mayRefresh, let shouldRefresh {
                let refresh: Bool
                do {
                    refresh = try await shouldRefresh(request, rejected)
                } catch {
                    throw failure(.adapter, page: page, request: request, index: index, response: rejected, error: error)
                }
                if refresh, let refreshed = try await again(
                    page, request, index: index, attempts.refreshing(), attempt: attempts.current)
                {
                    request = refreshed
                    continue
                }
            }
            var failed = failure(.status, page: page, request: request, index: index, response: rejected)
            failed.attempts = attempts.made
            let next = attempts.failed(retryable: RetryPolicy.isRetryable(status: head.status))
            guard let retried = try await again(page, request, index: index, next, attempt: attempts.current) else {
                throw failed
            }
            request = retried
        }
    }

    /// The request for attempt `attempt` at `page` as `next` says (after its backoff); nil when `next` gives up.
    private func again(
        _ page: PageRequest, _ request: Request, index: Int, _ next: Attempts.Next, attempt: Int
    ) async throws(PaginationError) -> Request? {
        do {
            switch next {
            case .fail: return nil
            case .retry(let delay): try await Task.sleep(for: delay)
            case .refresh: break
            }
            return try await prepare?(request, attempt) ?? request
        } catch {
            let kind: PaginationError.Kind = error is CancellationError ? .transport : .adapter
            throw failure(kind, page: page, request: request, index: index, error: error)
        }
    }

    /// The error a page fails with; observers are told.
    package func failure(
        _ kind: PaginationError.Kind, page: PageRequest, request: Request, index: Int, response: RawResponse? = nil,
        head: ResponseHead? = nil, error: (any Error)? = nil
    ) -> PaginationError {
        let underlying: any Error
        if let makeError {
            underlying = makeError(kind, request, response, error)
        } else if kind == .status, let response {
            let source = response.isStub ? " (stub)" : ""
            underlying = TrawlError(
                code: .unexpectedStatus,
                message: "HTTP \(response.status)\(source) instead of the JSON collection at '\(itemsPath)'",
                hint: response.status == 429 || response.status >= 500 ? "retry later" : nil,
                method: request.method.rawValue, url: response.url, status: response.status,
                headers: response.headers, bodyExcerpt: Array(response.body.prefix(512)))
        } else {
            underlying = error ?? TrawlError(
                code: .invalidBody, message: "the \(noun) failed", method: request.method.rawValue, url: request.url)
        }
        for observer in observers { observer.didFail(underlying, for: request) }
        var failure = PaginationError(position: page.position, index: index, request: request, underlying: underlying)
        failure.kind = kind
        failure.head = head ?? response.map { ResponseHead(status: $0.status, headers: $0.headers, url: $0.url) }
        return failure
    }

    /// A rejected response with at most `limit` bytes of its body, for its error.
    private static func excerpt(
        of body: PageStream.Body, head: ResponseHead, limit: Int, isStub: Bool
    ) async -> RawResponse {
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

/// One page whose head was accepted: its body streams through the extractor one chunk per ``step(_:)``, each
/// step handing the elements it completed to the driver; once the body has ended, ``response`` is the page as
/// the strategy sees it and observers have heard of it.
///
/// Used by one task at a time (a planned page reads ahead in its own task, then hands the stream over when
/// the task completes), hence `@unchecked Sendable`.
package final class PageStream: @unchecked Sendable {
    package enum Body: Sendable {
        /// From the network, with the engine's back-pressure: unread bytes pause the transfer.
        case stream(ResponseBody)
        /// From a stub.
        case bytes([UInt8])
    }

    package let exchange: PageExchange
    /// The request as finally sent (after a credentials refresh) and the page's position.
    package let page: PageRequest
    package let index: Int
    package let head: ResponseHead
    package let start: ContinuousClock.Instant
    package let isStub: Bool
    /// The page as the strategy sees it, once the body has ended.
    package private(set) var response: PageResponse?
    /// What the whole body held, once it has ended.
    package private(set) var summary: JSONExtractor.Summary?
    /// The server answered `304`: the body is the stored one.
    package var notModified = false
    /// Stores the body as it streams, committed when the page ends whole.
    var cacheWriter: (any ResponseCacheWriter)?
    private var chunks: ResponseBody.AsyncIterator?
    private var stubBody: [UInt8]?
    private let extractor: JSONExtractor
    private var failure: PaginationError?

    init(
        exchange: PageExchange, page: PageRequest, index: Int, head: ResponseHead, body: Body,
        start: ContinuousClock.Instant, isStub: Bool
    ) throws(PaginationError) {
        self.exchange = exchange
        self.page = page
        self.index = index
        self.head = head
        self.start = start
        self.isStub = isStub
        switch body {
        case .stream(let body): chunks = body.makeAsyncIterator()
        case .bytes(let bytes): stubBody = bytes
        }
        do {
            extractor = try JSONExtractor(path: exchange.itemsPath, capture: exchange.capture, form: exchange.form)
        } catch {
            let request = page.request
            let invalid = TrawlError(
                code: .invalidRequest, message: "the items or capture key path cannot be streamed: \(error)",
                method: request.method.rawValue, url: request.url, underlying: error)
            throw exchange.failure(.invalid, page: page, request: request, index: index, head: head, error: invalid)
        }
    }

    /// Body bytes parsed so far.
    package var byteCount: Int { extractor.byteCount }

    /// Whether the body has ended (``response`` is set) or failed.
    package var isFinished: Bool { response != nil || failure != nil }

    /// Reads one more chunk and hands the elements it completes to `onElement`; at the end of the body, finishes
    /// the page. Returns `false` once the page has ended. A failure (the body broke off, is not the expected
    /// JSON, or `onElement` threw) is thrown after the elements completed before it were handed out, and again
    /// by every later step.
    @discardableResult
    package func step(
        isolation actor: isolated (any Actor)? = #isolation, _ onElement: (JSONElement) throws -> Void
    ) async throws(PaginationError) -> Bool {
        let extractor = extractor
        return try await advance(
            isolation: actor,
            feed: { chunk in try extractor.feed(chunk, onElement: onElement) },
            finish: { try extractor.finish(onElement: onElement) })
    }

    /// As ``step(_:)``, but the elements the chunk completes are appended to `lines` as compact JSON, one per line,
    /// in one copy per chunk (the JSON Lines path: no element value per item). More than `limit` bytes in `lines`
    /// fails the page as too large, with `hint`.
    @discardableResult
    package func stepLines(
        isolation actor: isolated (any Actor)? = #isolation, into lines: inout [UInt8], limit: Int, hint: String
    ) async throws(PaginationError) -> Bool {
        let extractor = extractor
        let request = page.request
        func checkSize(_ lines: [UInt8]) throws {
            guard lines.count > limit else { return }
            throw TrawlError(
                code: .tooLarge, message: "the \(exchange.noun)'s items exceed \(limit) bytes", hint: hint,
                method: request.method.rawValue, url: request.url)
        }
        return try await advance(
            isolation: actor,
            feed: { chunk in
                try extractor.feed(chunk, appendingLinesTo: &lines)
                try checkSize(lines)
            },
            finish: {
                let summary = try extractor.finish(appendingLinesTo: &lines)
                try checkSize(lines)
                return summary
            })
    }

    /// One chunk through `feed`, or the end of the body through `finish`; failures recorded and thrown.
    private func advance(
        isolation actor: isolated (any Actor)?, feed: ([UInt8]) throws -> Void,
        finish: () throws -> JSONExtractor.Summary
    ) async throws(PaginationError) -> Bool {
        if let failure { throw failure }
        if response != nil { return false }
        let request = page.request
        let chunk: [UInt8]?
        do {
            chunk = try await nextChunk(isolation: actor)
        } catch {
            throw fail(.transport, error)
        }
        do {
            if let chunk {
                try feed(chunk)
                return true
            }
            let summary = try finish()
            if summary.collection == .missing {
                self.summary = summary
                throw TrawlError(
                    code: .invalidBody, message: "the \(exchange.noun) has no value at '\(exchange.itemsPath)'",
                    hint: "check the items key path against the response", method: request.method.rawValue,
                    url: head.url)
            }
            if exchange.requiresArray, summary.collection == .value {
                self.summary = summary
                throw TrawlError(
                    code: .invalidBody, message: "the value at '\(exchange.itemsPath)' is not an array",
                    hint: "the items key path must name the page's array of items; check it against the response",
                    method: request.method.rawValue, url: head.url)
            }
            self.finish(summary)
            return false
        } catch let error as DecodingError {
            throw fail(.decoding, error)
        } catch {
            throw fail(.body, error)
        }
    }

    /// Reads the body to its end, handing every element to `onElement`; returns the page.
    package func readToEnd(
        isolation actor: isolated (any Actor)? = #isolation, _ onElement: (JSONElement) throws -> Void
    ) async throws(PaginationError) -> PageResponse {
        while try await step(isolation: actor, onElement) {}
        guard let response else {
            throw fail(.body, TrawlError(
                code: .invalidBody, message: "the \(exchange.noun) ended without a response",
                method: page.request.method.rawValue, url: page.request.url))
        }
        return response
    }

    /// The page as observers and errors see it: no body (its items were handed out), its size so far.
    package var rawResponse: RawResponse {
        RawResponse(
            status: head.status, headers: head.headers, url: head.url, body: [], bodySize: extractor.byteCount,
            timings: isStub ? nil : head.timings, isStub: isStub)
    }

    private func nextChunk(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
        if let body = stubBody {
            stubBody = nil
            return body.isEmpty ? nil : body
        }
        let chunk = try await chunks?.next(isolation: actor)
        if let chunk { cacheWriter?.append(chunk) }
        return chunk
    }

    deinit { cacheWriter?.discard() }

    private func finish(_ summary: JSONExtractor.Summary) {
        chunks = nil
        cacheWriter?.commit()
        self.summary = summary
        response = PageResponse(
            request: page.request, position: page.position, itemCount: summary.elementCount,
            captured: summary.captured, head: head)
        let duration = ContinuousClock.now - start
        for observer in exchange.observers {
            observer.didReceive(rawResponse, for: page.request, duration: duration)
        }
    }

    /// Records and returns the page's failure: parser and decoder errors as the `TrawlError` a bad body is
    /// reported with.
    private func fail(_ kind: PaginationError.Kind, _ error: any Error) -> PaginationError {
        chunks = nil
        cacheWriter?.discard()
        let request = page.request
        let source = isStub ? "stubbed " : ""
        let reported: any Error
        switch error {
        case let error as JSONError where error.code == .truncated:
            // The body ended cleanly but its JSON did not (a short Content-Length, a proxy that cut it): a
            // truncated transfer, worth another attempt, not a body that is wrong.
            reported = TrawlError(
                code: .truncated,
                message: "the \(source)\(exchange.noun) ended before its JSON was complete: \(error)",
                hint: "the body was cut short; it is retried like a dropped connection",
                method: request.method.rawValue, url: head.url, underlying: error)
        case let error as JSONError:
            reported = TrawlError(
                code: .invalidBody, message: "the \(source)\(exchange.noun) is not the expected JSON: \(error)",
                method: request.method.rawValue, url: head.url, underlying: error)
        case let error as DecodingError:
            reported = TrawlError(
                code: .invalidBody,
                message: "an item of the \(source)\(exchange.noun) at '\(exchange.itemsPath)' does not decode"
                    + (exchange.itemType.isEmpty ? "" : " as \(exchange.itemType)"),
                hint: "\(error)", method: request.method.rawValue, url: head.url, underlying: error)
        default:
            reported = error
        }
        var failure = exchange.failure(
            kind, page: page, request: request, index: index, response: kind == .transport ? nil : rawResponse,
            head: head, error: reported)
        failure.captured = summary?.captured ?? [:]
        self.failure = failure
        return failure
    }
}
