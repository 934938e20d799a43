import Synchronization
import TrawlEngine

extension Client {
    /// Sends `request` and streams the elements of the collection at `path`, decoded as `Item`, while the
    /// body arrives: no tree is built and memory stays bounded by the stream buffer plus one chunk's items.
    /// Side fields named in `capture` are in `summary` once iteration ends.
    ///
    /// ```swift
    /// let repos = client.items(Repo.self, at: "items", in: Request(url: searchURL), capture: ["total_count"])
    /// for try await repo in repos { print(repo.fullName) }
    /// print(repos.summary?.captured["total_count"] ?? .null)
    /// ```
    ///
    /// A non-2xx status fails with `TrawlError.Code.unexpectedStatus` (with the body's first bytes);
    /// malformed JSON fails with `.invalidBody` whose `underlying` is the `JSONError` (byte offset, line,
    /// key path). Items decoded before an error have already been delivered.
    public func items<Item: Decodable & Sendable>(
        _ type: Item.Type, at path: JSONKeyPath, in request: Request, capture: [JSONKeyPath] = [],
        decoder: JSONItemDecoder = JSONItemDecoder()
    ) -> JSONItemStream<Item> {
        JSONItemStream(client: self, request: request, path: path, capture: capture, decoder: decoder)
    }
}

/// The items of one response, decoded as they stream in. Iterate it once.
public struct JSONItemStream<Item: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    public typealias Failure = any Error

    let client: Client
    let request: Request
    let path: JSONKeyPath
    let capture: [JSONKeyPath]
    let decoder: JSONItemDecoder
    private let outcome = Outcome()

    init(client: Client, request: Request, path: JSONKeyPath, capture: [JSONKeyPath], decoder: JSONItemDecoder) {
        self.client = client
        self.request = request
        self.path = path
        self.capture = capture
        self.decoder = decoder
    }

    /// The response head, once the first item (or the end) has been requested.
    public var head: ResponseHead? { outcome.state.withLock { $0.head } }
    /// Element count, collection kind and captured side fields, once the body has ended.
    public var summary: JSONExtractor.Summary? { outcome.state.withLock { $0.summary } }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    final class Outcome: Sendable {
        struct State {
            var head: ResponseHead?
            var summary: JSONExtractor.Summary?
        }
        let state = Mutex(State())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private let stream: JSONItemStream
        private var body: ResponseBody.AsyncIterator?
        private var extractor: JSONExtractor?
        private var pending: [Item] = []
        private var nextIndex = 0
        private var finished = false

        init(stream: JSONItemStream) { self.stream = stream }

        public mutating func next() async throws -> Item? {
            try await next(isolation: nil)
        }

        /// The next item, read on the caller's actor: a consumer on the main actor (top-level code, a UI) does not
        /// hop to another thread and back for every item, only when a chunk has to be awaited.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Item? {
            while true {
                if nextIndex < pending.count {
                    defer { nextIndex += 1 }
                    return pending[nextIndex]
                }
                pending.removeAll(keepingCapacity: true)
                nextIndex = 0
                if finished { return nil }
                try await refill(isolation: actor)
            }
        }

        /// Reads one more chunk (starting the request on first use) and decodes the items it completes.
        private mutating func refill(isolation actor: isolated (any Actor)?) async throws {
            if body == nil { try await start(isolation: actor) }
            guard let extractor else { return }
            let request = stream.request
            do {
                var decoded: [Item] = []
                let decoder = stream.decoder
                if let chunk = try await body?.next(isolation: actor) {
                    try extractor.feed(chunk) { decoded.append(try $0.decode(Item.self, using: decoder)) }
                } else {
                    let summary = try extractor.finish { decoded.append(try $0.decode(Item.self, using: decoder)) }
                    stream.outcome.state.withLock { $0.summary = summary }
                    finished = true
                    if summary.collection == .missing {
                        pending = decoded
                        throw TrawlError(
                            code: .invalidBody, message: "the body has no value at '\(stream.path)'",
                            hint: "check the key path against the response", method: request.method.rawValue,
                            url: request.url)
                    }
                }
                pending = decoded
            } catch let error as JSONError {
                finished = true
                throw TrawlError(
                    code: .invalidBody, message: "the body is not the expected JSON: \(error)",
                    method: request.method.rawValue, url: request.url, underlying: error)
            } catch let error as DecodingError {
                finished = true
                throw TrawlError(
                    code: .invalidBody, message: "an item at '\(stream.path)' does not decode as \(Item.self)",
                    hint: "\(error)", method: request.method.rawValue, url: request.url, underlying: error)
            }
        }

        private mutating func start(isolation actor: isolated (any Actor)?) async throws {
            let response = try await stream.client.stream(stream.request)
            stream.outcome.state.withLock { $0.head = response.head }
            guard response.head.isSuccess else {
                let excerpt = (try? await response.body.collect(upTo: 64 << 10)) ?? []
                finished = true
                throw TrawlError(
                    code: .unexpectedStatus,
                    message: "HTTP \(response.status) instead of the JSON collection at '\(stream.path)'",
                    hint: response.status == 429 || response.status >= 500 ? "retry later" : nil,
                    method: stream.request.method.rawValue, url: response.head.url, status: response.status,
                    headers: response.headers, bodyExcerpt: Array(excerpt.prefix(512)))
            }
            extractor = try JSONExtractor(path: stream.path, capture: stream.capture, form: .values)
            body = response.body.makeAsyncIterator()
        }
    }
}
