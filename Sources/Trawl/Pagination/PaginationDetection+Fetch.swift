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

    /// The probe requests detection made to settle the plan (page 2 of each candidate, in order) and what each
    /// showed: `--detect` lists them.
    public var probes: [DetectionProbe] = []

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

/// One candidate plan tried on page 2 during detection.
public struct DetectionProbe: Sendable, Hashable {
    /// The flags of the candidate plan (`--paginate cursor:next_page --cursor-param cursor`).
    public var plan: [PaginationDetection.Setting]
    /// The page-2 URL asked for.
    public var url: String
    /// What it showed: `10 new items of the same shape` or why the plan does not fit.
    public var outcome: String
    public var accepted: Bool
}

extension PaginationDetection {
    /// The most page-2 requests detection makes to settle a plan the first page leaves open.
    public static let maxProbes = 4

    /// Reads a whole page (at most `maxBytes` of compact JSON) through `exchange`.
    static func readWhole(_ request: PageRequest, exchange: PageExchange, index: Int, maxBytes: Int) async throws
        -> (body: [UInt8], head: ResponseHead, request: Request)
    {
        let page = try await exchange.open(request, index: index)
        var parts: [ArraySlice<UInt8>] = []
        var size = 0
        while try await page.step({ element in
            size += element.json.count + 1
            guard size <= maxBytes else {
                throw TrawlError(
                    code: .tooLarge, message: "a page fetched for detection exceeds \(maxBytes) bytes",
                    hint: "raise --max-page-bytes or ask for smaller pages", method: request.request.method.rawValue,
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
        return (body, page.head, page.page.request)
    }

    /// The plans to try when the first page leaves the way on open: a cursor with no known request parameter (the
    /// names derived from its key, then the common ones), or an item total with no page size (page numbers, then
    /// offsets stepping by the first page's item count).
    static func candidates(
        for error: PaginationDetectionError, body: JSONValue, items: JSONKeyPath?, url: String
    ) -> [PaginationDetection] {
        guard let items = items ?? (try? detectItems(body).0), let elements = elementsOf(value(body, at: items)),
            !elements.isEmpty
        else { return [] }
        func made(_ style: PaginationStyle, _ settings: [(String, String)], reads: JSONKeyPath? = nil)
            -> PaginationDetection
        {
            var style = style
            style.expectedPath = reads
            return PaginationDetection(
                style: style, items: items, isSinglePage: false,
                settings: settings.map { Setting(name: $0.0, value: $0.1) }, readsPath: reads,
                firstPageItems: elements.count)
        }
        switch error.kind {
        case .unknownCursorParameter:
            guard let path = error.cursorPath, case .key(let key)? = path.components.last else { return [] }
            var names: [String] = []
            let lower = key.lowercased()
            var stem = key
            for prefix in ["next_", "next", "Next"] where stem.hasPrefix(prefix) && stem.count > prefix.count {
                stem = String(stem.dropFirst(prefix.count))
                break
            }
            if stem != key { names.append(stem.prefix(1).lowercased() + stem.dropFirst()) }
            if lower.contains("page") { names.append("cursor") }
            names += ["cursor", "page_token", "after", "token", "marker"]
            var seen: Set<String> = []
            let params = names.filter { !$0.isEmpty && seen.insert($0).inserted }
            return params.prefix(maxProbes).map { param in
                made(
                    .cursor(at: path, param: param), [("paginate", "cursor:\(path)"), ("cursor_param", param)],
                    reads: path)
            }
        case .unknownShape:
            guard let (total, count) = number(body, itemTotalKeys, items: items), count > elements.count else {
                return []
            }
            let size = elements.count
            return [
                made(.page(param: "page", totalItems: total), [("paginate", "page"), ("total", total.description)]),
                made(
                    .offset(param: "offset", limitParam: "limit", limit: size, total: total),
                    [("paginate", "offset"), ("param", "offset"), ("limit_param", "limit"), ("limit", String(size)),
                     ("total", total.description)]),
            ]
        case .ambiguousItems:
            return []
        }
    }

    /// Tries `candidates` on page 2, in order, until one's page 2 holds new items of the first page's shape.
    static func probe(
        _ candidates: [PaginationDetection], first: PageResponse, firstBody: JSONValue, exchange: PageExchange,
        maxBytes: Int
    ) async -> (PaginationDetection?, [DetectionProbe]) {
        var probes: [DetectionProbe] = []
        for candidate in candidates.prefix(maxProbes) {
            // Page 1 as this plan would have asked for it (a page number, an offset, no cursor).
            var page1 = first
            page1.position = candidate.style.first(first.request).position
            guard let next = candidate.style.next(after: page1) else { continue }
            let outcome: String
            var accepted = false
            do {
                let (bytes, _, _) = try await readWhole(next, exchange: exchange, index: 1, maxBytes: maxBytes)
                let body = try JSONItemDecoder().decode(JSONValue.self, from: bytes)
                outcome = verdict(page2: body, page1: firstBody, items: candidate.items)
                accepted = outcome.hasSuffix("of the same shape")
            } catch let error as PaginationError {
                outcome = "failed: \(error.underlying)"
            } catch {
                outcome = "failed: \(error)"
            }
            probes.append(
                DetectionProbe(plan: candidate.settings, url: next.request.url, outcome: outcome, accepted: accepted))
            if accepted { return (candidate, probes) }
        }
        return (nil, probes)
    }

    /// Whether page 2 holds new items of page 1's shape: objects at the same key path, none of them on page 1,
    /// with the keys of page 1's first item.
    static func verdict(page2: JSONValue, page1: JSONValue, items: JSONKeyPath) -> String {
        guard let second = elementsOf(value(page2, at: items)) else { return "no items at '\(items)'" }
        guard let first = elementsOf(value(page1, at: items)), let model = first.first else { return "no first page" }
        guard !second.isEmpty else { return "no items" }
        func keys(_ value: JSONValue) -> Set<String>? {
            if case .object(let members) = value { return Set(members.keys) }
            return nil
        }
        guard let shape = keys(model), second.allSatisfy({ keys($0) == shape }) else {
            return "\(second.count) items of another shape"
        }
        let seen = Set(first.map(\.json))
        let repeated = second.filter { seen.contains($0.json) }.count
        if repeated > 0 { return "\(repeated) of its \(second.count) items repeat page 1 (the parameter is ignored)" }
        return "\(second.count) new items of the same shape"
    }

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
        let (body, head, sent) = try await readWhole(first, exchange: exchange, index: 0, maxBytes: maxBytes)
        let value = try JSONItemDecoder().decode(JSONValue.self, from: body)
        let response = RawResponse(status: head.status, headers: head.headers, url: head.url, body: body, isStub: true)
        do {
            let detection = try detect(
                body: value, headers: head.headers, url: head.url, items: items, cursorParam: cursorParam)
            return DetectedFirstPage(detection: detection, response: response, request: sent)
        } catch {
            // The first page leaves the way on open: try the candidate plans on page 2 rather than refuse.
            let candidates = candidates(for: error, body: value, items: items, url: head.url)
            guard !candidates.isEmpty else { throw error }
            var capture = exchange
            capture.itemsPath = .root
            let page1 = PageResponse(
                request: sent, position: .url(head.url), itemCount: candidates[0].firstPageItems,
                captured: Self.captured(value, paths: candidates.flatMap(\.style.capturePaths)), head: head)
            let (found, probes) = await probe(
                candidates, first: page1, firstBody: value, exchange: capture, maxBytes: maxBytes)
            guard let found else {
                var refusal = error
                refusal.probes = probes
                throw refusal
            }
            var page = DetectedFirstPage(detection: found, response: response, request: sent)
            page.probes = probes
            return page
        }
    }
}

extension PaginationDetection {
    static func elementsOf(_ value: JSONValue?) -> [JSONValue]? {
        if case .array(let elements)? = value { return elements }
        return nil
    }

    /// The values at `paths` in a parsed body, as a page's captured side fields.
    static func captured(_ body: JSONValue, paths: [JSONKeyPath]) -> [JSONKeyPath: JSONValue] {
        var result: [JSONKeyPath: JSONValue] = [:]
        for path in paths { if let found = value(body, at: path) { result[path] = found } }
        return result
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
