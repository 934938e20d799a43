import Synchronization
import TrawlEngine
import TrawlJSON

/// A first page read whole for detection, with what was detected from it; its response is replayed as page 1 of
/// the walk so that it is not fetched twice.
public struct DetectedFirstPage: Sendable {
    public var detection: PaginationDetection
    /// The first page (its body as compact JSON), as a stubbed response.
    public var response: RawResponse
    /// The request it answered (after the origin rule moved userinfo to its header).
    public var request: Request

    /// A stub that answers the first request for this page's URL with it, once; every other request (and a
    /// retry of that one) goes to the network.
    public var replay: @Sendable (Request) async throws -> RawResponse? {
        let pending = Mutex<RawResponse?>(response)
        let url = request.url
        return { request in
            guard request.url == url else { return nil }
            return pending.withLock { page in
                defer { page = nil }
                return page
            }
        }
    }
}

extension PaginationDetection {
    /// Fetches the first page of `request` through `exchange` (its status rules, retries and observers), reads
    /// it whole (at most `maxBytes` of compact JSON) and detects its plan.
    package static func fetchFirstPage(
        _ request: Request, exchange: PageExchange, items: JSONKeyPath? = nil, cursorParam: String? = nil,
        maxBytes: Int = 64 << 20
    ) async throws -> DetectedFirstPage {
        var exchange = exchange
        exchange.itemsPath = .root
        exchange.capture = []
        exchange.form = .json
        exchange.requiresArray = false
        let first = PageRequest(request: OriginGuard.movingUserInfoToHeader(request), position: .url(request.url))
        let page = try await exchange.open(first, index: 0)
        var parts: [ArraySlice<UInt8>] = []
        var size = 0
        while try await page.step({ element in
            size += element.json.count + 1
            guard size <= maxBytes else {
                throw TrawlError(
                    code: .tooLarge, message: "the first page exceeds \(maxBytes) bytes",
                    hint: "raise --max-page-bytes or ask for smaller pages", method: first.request.method.rawValue,
                    url: page.head.url)
            }
            parts.append(element.json)
        }) {}
        var body: [UInt8] = []
        body.reserveCapacity(size + 2)
        if page.summary?.collection == .array {
            body.append(UInt8(ascii: "["))
            for (index, part) in parts.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body += part
            }
            body.append(UInt8(ascii: "]"))
        } else {
            for part in parts { body += part }
        }
        let value = try JSONItemDecoder().decode(JSONValue.self, from: body)
        let detection = try detect(
            body: value, headers: page.head.headers, url: page.head.url, items: items, cursorParam: cursorParam)
        let response = RawResponse(
            status: page.head.status, headers: page.head.headers, url: page.head.url, body: body, isStub: true)
        return DetectedFirstPage(detection: detection, response: response, request: page.page.request)
    }
}

extension Paginator {
    /// A paginator for `request` whose pagination and items are detected from its first page (see
    /// ``PaginationDetection``); that page is page 1 of the walk, not fetched again.
    ///
    /// ```swift
    /// let (paginator, detected) = try await Paginator<Thing>.detecting(client: client, request: request)
    /// print(detected.settings)            // [paginate: next:links.next]
    /// for try await thing in paginator.items { … }
    /// ```
    ///
    /// Throws a ``PaginationError`` when the first page fails, a ``PaginationDetectionError`` when its shape is
    /// ambiguous or unknown.
    public static func detecting(
        _ type: Item.Type = Item.self, client: Client, request: Request, maxConcurrentPages: Int = 4,
        serial: Bool = false
    ) async throws -> (paginator: Paginator, detection: PaginationDetection) {
        let exchange = PageExchange(client: client, itemsPath: .root, form: .json)
        let first = try await PaginationDetection.fetchFirstPage(request, exchange: exchange)
        let detection = first.detection
        var paginator = Paginator(
            client: client, request: first.request, items: detection.items, style: detection.style,
            maxConcurrentPages: maxConcurrentPages, serial: serial)
        paginator.stub = first.replay
        return (paginator, detection)
    }
}
