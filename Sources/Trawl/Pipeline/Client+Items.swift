import Synchronization
import TrawlEngine
import TrawlJSON

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
        private var reader: PageReader<Item>?
        private var finished = false

        init(stream: JSONItemStream) { self.stream = stream }

        public mutating func next() async throws -> Item? {
            try await next(isolation: nil)
        }

        /// The next item, read on the caller's actor: a consumer on the main actor (top-level code, a UI) does not
        /// hop to another thread and back for every item, only when a chunk has to be awaited.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Item? {
            if finished { return nil }
            do throws(PaginationError) {
                if reader == nil {
                    let page = PageRequest(request: stream.request, position: .url(stream.request.url))
                    let opened = try await stream.exchange.open(page, index: 0)
                    stream.outcome.state.withLock { $0.head = opened.head }
                    reader = PageReader(opened, decoding: StreamingPayloadDecoder(stream.decoder))
                }
                guard let reader else { return nil }
                if let item = reader.takeDecoded() { return item }
                if let item = try await reader.next(isolation: actor) { return item }
                finished = true
                stream.outcome.state.withLock { $0.summary = reader.stream.summary }
                return nil
            } catch {
                // A single response reports what went wrong itself, not as a page of a walk.
                finished = true
                if error.kind == .status, let head = error.head { stream.outcome.state.withLock { $0.head = head } }
                if let summary = reader?.stream.summary { stream.outcome.state.withLock { $0.summary = summary } }
                throw error.underlying
            }
        }
    }

    /// The exchange of the one response: its status checked, the items at `path` streamed out of its body.
    var exchange: PageExchange {
        var exchange = PageExchange(client: client, itemsPath: path, capture: capture, form: .values)
        exchange.noun = "body"
        exchange.itemType = "\(Item.self)"
        return exchange
    }
}
