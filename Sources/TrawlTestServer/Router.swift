import NIOCore
import NIOHTTP1

/// A request as received: head, parsed target and what the endpoint kept of the body.
struct InboundRequest {
    /// The most `/echo` keeps of a request body.
    static let echoLimit = 8 * 1024 * 1024

    let head: HTTPRequestHead
    let target: RequestTarget
    /// Whether the body is kept (for `/echo`) or only counted.
    let keepsBody: Bool
    /// When the head arrived.
    let receivedAt = ContinuousClock.now
    /// Requests in flight at the server when this one was complete, itself included (for `max_in_flight`).
    var inFlight = 1
    var bodyLength = 0
    var body = ByteBuffer()
    /// For `/multipart`: the streaming parser the body is fed to.
    var multipart: MultipartParser?

    init(head: HTTPRequestHead) {
        self.head = head
        self.target = RequestTarget(head.uri)
        self.keepsBody = (["/echo", "/said", "/oauth/token", "/shop/token"] + GraphQLEndpoint.paths).contains(
            self.target.path)
        if self.target.path == "/multipart", head.method == .POST {
            self.multipart = MultipartParser(contentType: head.headers["Content-Type"].first)
        }
    }

    mutating func receive(_ part: ByteBuffer) {
        self.bodyLength += part.readableBytes
        self.multipart?.feed(part)
        if self.keepsBody, self.bodyLength <= Self.echoLimit {
            var part = part
            self.body.writeBuffer(&part)
        }
    }
}

/// Maps a complete request to a ``Response``. No I/O; the only state is the server's ``RequestBook``
/// (per-target request counts, which `/paged` faults use).
enum Router {
    static let defaultChunkSize = 64 * 1024

    static func response(for request: InboundRequest, book: RequestBook) -> Response {
        let target = request.target
        let segments = target.segments
        switch (segments.first ?? "", segments.count) {
        case ("", 1): return .json(200, JSONText.object([("endpoints", JSONText.string(TestServer.endpointHelp))]))
        case ("bytes", 2): return bytes(segments[1], target, gzip: target.flag("gzip"))
        case ("gzip", 2): return bytes(segments[1], target, gzip: true)
        case ("json", 2) where segments[1] == "small": return .json(200, Fixtures.smallJSON)
        case ("echo", 1): return echo(request)
        case ("said", 1): return said(request)
        case ("upload", 1): return .json(200, JSONText.object([("bytes", String(request.bodyLength))]))
        case ("multipart", 1): return multipart(request)
        case ("download", 2): return DownloadEndpoint.response(segments[1], request: request, book: book)
        case ("status", 2): return status(segments[1])
        case ("delay", 2): return delay(segments[1])
        case ("drip", 1): return drip(target)
        case ("stall", 1): return stall(target)
        case ("reset", 2): return truncated(segments[1], ending: .reset)
        case ("short", 2): return truncated(segments[1], ending: .close)
        case ("badchunk", 1): return badChunk()
        case ("redirect", 1): return redirect(target)
        case ("redirect", 2): return redirectChain(segments[1], target)
        case ("loop", 1): return redirect(to: "/loop", target)
        case ("loop-a", 1): return redirect(to: "/loop-b", target)
        case ("loop-b", 1): return redirect(to: "/loop-a", target)
        case ("headers", 1): return headers(target)
        case ("protected", 1): return ProtectedEndpoint.response(for: request)
        case ("oauth", 2): return OAuthEndpoint.response(for: request, book: book)
        case ("feed", 2): return FeedEndpoint.response(for: request, name: segments[1], book: book)
        case ("drifting", 2): return DriftingListing.response(for: request, name: segments[1], book: book)
        case ("shop", _): return ShopEndpoint.response(for: request, book: book)
        case ("family", _): return FamilyEndpoint.response(for: request)
        case ("paged", 2): return PaginatedAPI.response(for: request, style: segments[1], book: book)
        case ("shapes", 2): return ShapedAPI.response(for: request, shape: segments[1])
        case ("graphql", 1), ("bodypaged", 1): return GraphQLEndpoint.response(for: request, book: book)
        case ("frameworks", 2): return FrameworkAPI.response(for: request, framework: segments[1])
        case ("search", 2) where segments[1] == "repositories":
            return PaginatedAPI.gitHubSearch(for: request, book: book)
        case ("close", 1):
            var response = Response.json(200, "{}")
            response.ending = .close
            return response
        default:
            return .error(404, "not found", [("path", JSONText.string(target.path))])
        }
    }

    private static func count(_ text: Substring) -> Int? {
        guard let value = Int(text), value >= 0 else { return nil }
        return value
    }

    private static func bytes(_ text: Substring, _ target: RequestTarget, gzip: Bool) -> Response {
        guard let total = count(text) else { return .error(400, "byte count must be a non-negative integer") }
        let chunkSize = max(1, target.int("chunk") ?? defaultChunkSize)
        if gzip {
            do {
                let source = try GzipPatternSource(total: total, chunkSize: chunkSize)
                return Response(
                    status: 200,
                    headers: [
                        ("Content-Type", "application/octet-stream"),
                        ("Content-Encoding", "gzip"),
                        ("Transfer-Encoding", "chunked"),
                    ],
                    body: .stream(source)
                )
            } catch {
                return .error(500, "cannot start gzip stream: \(error)")
            }
        }
        let chunked = target.flag("chunked")
        let framing = chunked ? ("Transfer-Encoding", "chunked") : ("Content-Length", String(total))
        return Response(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), framing],
            body: .stream(PatternSource(total: total, chunked: chunked, chunkSize: chunkSize))
        )
    }

    private static func echo(_ request: InboundRequest) -> Response {
        guard request.bodyLength <= InboundRequest.echoLimit else {
            return .error(413, "body too large", [("limit", String(InboundRequest.echoLimit))])
        }
        let headers = request.head.headers.map { name, value in
            "[" + JSONText.string(name) + "," + JSONText.string(value) + "]"
        }
        let body = String(decoding: request.body.readableBytesView, as: UTF8.self)
        return .json(
            200,
            JSONText.object([
                ("method", JSONText.string(request.head.method.rawValue)),
                ("path", JSONText.string(request.target.path)),
                ("query", JSONText.string(request.target.rawQuery)),
                ("headers", "[" + headers.joined(separator: ",") + "]"),
                ("bodyLength", String(request.bodyLength)),
                ("body", JSONText.string(body)),
            ])
        )
    }

    /// `/said?h=NAME,NAME`: like `/echo`, but only the headers named (any case), so that two clients that send
    /// different defaults (User-Agent, Accept-Encoding) get the same bytes back for the same request.
    private static func said(_ request: InboundRequest) -> Response {
        guard request.bodyLength <= InboundRequest.echoLimit else { return .error(413, "body too large") }
        let names = Set((request.target.value("h") ?? "").lowercased().split(separator: ",").map(String.init))
        let headers = request.head.headers.filter { names.contains($0.name.lowercased()) }.map { name, value in
            "[" + JSONText.string(name.lowercased()) + "," + JSONText.string(value) + "]"
        }
        let body = String(decoding: request.body.readableBytesView, as: UTF8.self)
        return .json(
            200,
            JSONText.object([
                ("method", JSONText.string(request.head.method.rawValue)),
                ("query", JSONText.string(request.target.rawQuery)),
                ("headers", "[" + headers.joined(separator: ",") + "]"),
                ("body", JSONText.string(body)),
            ])
        )
    }

    /// `POST /multipart`: what the streaming parser found, or 400 with what was wrong.
    private static func multipart(_ request: InboundRequest) -> Response {
        guard var parser = request.multipart else {
            return .error(405, "use POST with a multipart/form-data body", [], headers: [("Allow", "POST")])
        }
        parser.finish()
        if let error = parser.error {
            return .error(400, "malformed multipart body: " + error, [("bytes", String(request.bodyLength))])
        }
        return .json(
            200,
            JSONText.object([
                ("parts", "[" + parser.parts.map(\.json).joined(separator: ",") + "]"),
                ("boundary", parser.boundary.map(JSONText.string) ?? "null"),
            ])
        )
    }

    private static func status(_ text: Substring) -> Response {
        guard let code = Int(text), (100...599).contains(code) else {
            return .error(400, "status must be an integer in 100...599")
        }
        guard Response.statusForbidsBody(code) else {
            return .json(code, JSONText.object([("status", String(code))]))
        }
        // An interim (1xx) response is never followed by a final one here: close so clients don't wait.
        let interim = code < 200
        return Response(status: code, headers: [], ending: interim ? .close : .keepAlive, isFault: interim)
    }

    private static func delay(_ text: Substring) -> Response {
        guard let milliseconds = count(text) else { return .error(400, "delay must be a non-negative integer") }
        var response = Response.json(200, JSONText.object([("delayed", String(milliseconds))]))
        response.delay = .milliseconds(Int64(milliseconds))
        return response
    }

    private static func drip(_ target: RequestTarget) -> Response {
        let total = max(0, target.int("bytes") ?? 10)
        let interval = max(0, target.int("interval") ?? 100)
        return Response(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(total))],
            body: .stream(DripSource(total: total, interval: .milliseconds(Int64(interval))))
        )
    }

    private static func stall(_ target: RequestTarget) -> Response {
        let sent = max(0, target.int("after") ?? 0)
        return Response(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(sent + 1000))],
            body: .stream(PatternSource(total: sent, chunked: false, chunkSize: defaultChunkSize)),
            ending: .hold,
            isFault: true
        )
    }

    /// `/reset/N` and `/short/N`: announces more than it sends, then resets or closes.
    private static func truncated(_ text: Substring, ending: ResponseEnding) -> Response {
        guard let sent = count(text) else { return .error(400, "byte count must be a non-negative integer") }
        let announced = ending == .reset ? (sent == 0 ? 100 : sent * 2) : sent + 100
        return Response(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(announced))],
            body: .stream(PatternSource(total: sent, chunked: false, chunkSize: defaultChunkSize)),
            ending: ending,
            isFault: true
        )
    }

    private static func badChunk() -> Response {
        var body = ByteBuffer(string: "10\r\n")
        body.writeImmutableBuffer(Pattern.slice(offset: 0, length: 16))
        body.writeString("\r\nzz\r\nnot a chunk\r\n")
        return Response(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")],
            body: .buffer(body),
            ending: .close,
            isFault: true
        )
    }

    private static func redirect(_ target: RequestTarget) -> Response {
        guard let location = target.value("to"), !location.isEmpty else {
            return .error(400, "missing query parameter 'to'")
        }
        return redirect(to: location, target)
    }

    private static func redirectChain(_ text: Substring, _ target: RequestTarget) -> Response {
        guard let remaining = count(text) else { return .error(400, "redirect count must be a non-negative integer") }
        guard remaining > 0 else { return redirect(to: "/echo", target) }
        let query = target.value("status").map { "?status=" + $0 } ?? ""
        return redirect(to: "/redirect/\(remaining - 1)" + query, target)
    }

    private static func redirect(to location: String, _ target: RequestTarget) -> Response {
        guard !location.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            return .error(400, "location must not contain CR or LF")
        }
        let code = target.int("status") ?? 302
        guard (300...399).contains(code) else { return .error(400, "status must be an integer in 300...399") }
        guard !Response.statusForbidsBody(code) else {
            return Response(status: code, headers: [("Location", location)])
        }
        let body = JSONText.object([("location", JSONText.string(location))])
        return .json(code, body, headers: [("Location", location)])
    }

    private static func headers(_ target: RequestTarget) -> Response {
        let invalid = target.query.contains { pair in
            pair.name.isEmpty || pair.name.contains { $0 == ":" || $0.isWhitespace }
                || pair.value.contains { $0 == "\r" || $0 == "\n" }
        }
        guard !invalid else { return .error(400, "header names must be tokens and values must not contain CR or LF") }
        let given = Set(target.query.map { $0.name.lowercased() })
        var headers: [(String, String)] = []
        if !given.contains("content-type") { headers.append(("Content-Type", "application/json")) }
        if !given.contains("content-length") { headers.append(("Content-Length", "2")) }
        headers += target.query.map { ($0.name, $0.value) }
        return Response(status: 200, headers: headers, body: .buffer(ByteBuffer(string: "{}")))
    }
}
