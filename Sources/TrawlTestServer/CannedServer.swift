import NIOCore
import NIOPosix
import Synchronization

/// A loopback server that answers each request with bytes exactly as given, then closes the connection: for the
/// responses a well-behaved server never sends (a head cut short, `Content-Length: 5abc`, an unrequested `101`, a
/// gzip stream without its trailer, a `Retry-After: 1e400`).
///
/// ```swift
/// try await CannedServer.with(["/cut": Array("HTTP/1.1 200 OK\r\nContent-Ty".utf8)]) { server in
///     // GET server.url("/cut") sees the connection close inside the head
/// }
/// ```
///
/// Requests are matched on their path without the query; a path with no canned answer gets a 404. Each
/// path can also hold a list of answers, served in turn (the last one repeats).
public final class CannedServer: Sendable {
    /// The OS-chosen port on 127.0.0.1.
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let book: CannedBook

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, book: CannedBook) {
        self.port = port
        self.group = group
        self.channel = channel
        self.book = book
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// How many requests for `path` (without the query) have arrived.
    public func requests(_ path: String) -> Int { book.count(path) }

    /// Starts a server answering `path` with `responses[path]` in turn.
    public static func start(_ responses: [String: [[UInt8]]]) async throws -> CannedServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let book = CannedBook(responses)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(CannedHandler(book: book))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw TestServerError.noLocalAddress }
            return CannedServer(port: port, group: group, channel: channel, book: book)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Runs `body` with a server answering each path with one response, stopped afterwards.
    public static func with<T>(_ responses: [String: [UInt8]], _ body: (CannedServer) async throws -> T)
        async throws -> T
    {
        try await with(sequences: responses.mapValues { [$0] }, body)
    }

    /// Runs `body` with a server answering each path with its responses in turn, stopped afterwards.
    public static func with<T>(sequences: [String: [[UInt8]]], _ body: (CannedServer) async throws -> T)
        async throws -> T
    {
        let server = try await start(sequences)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    public func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// A response head and body as bytes: `"HTTP/1.1 200 OK"`, the header lines, a blank line, then `body`.
    public static func response(_ statusLine: String, _ headers: [String], body: [UInt8] = []) -> [UInt8] {
        Array((([statusLine] + headers).joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    /// A `200` JSON response with a correct `Content-Length`, plus `headers`.
    public static func json(_ text: String, status: String = "200 OK", headers: [String] = []) -> [UInt8] {
        let body = Array(text.utf8)
        return response(
            "HTTP/1.1 \(status)", ["Content-Type: application/json", "Content-Length: \(body.count)"] + headers,
            body: body)
    }
}

/// The canned answers and the per-path request counts.
final class CannedBook: Sendable {
    private let responses: [String: [[UInt8]]]
    private let counts = Mutex([String: Int]())

    init(_ responses: [String: [[UInt8]]]) { self.responses = responses }

    func count(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }

    /// The answer for this request's target, counted.
    func answer(target: String) -> [UInt8] {
        let path = String(target.prefix { $0 != "?" })
        let index = counts.withLock { counts in
            defer { counts[path, default: 0] += 1 }
            return counts[path] ?? 0
        }
        guard let list = responses[path], let last = list.last else {
            return CannedServer.json("{\"error\":\"not found\"}", status: "404 Not Found")
        }
        return index < list.count ? list[index] : last
    }
}

/// Reads a request head, writes the canned bytes, closes.
final class CannedHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let book: CannedBook
    private var received: [UInt8] = []
    private var answered = false

    init(book: CannedBook) { self.book = book }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard let end = Self.headEnd(received) else { return }
        answered = true
        let requestLine = String(decoding: received[..<end].prefix { $0 != 0x0D }, as: UTF8.self)
        let parts = requestLine.split(separator: " ")
        let answer = book.answer(target: parts.count > 1 ? String(parts[1]) : "/")
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: answer))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first {
            bytes[$0] == 0x0D && bytes[$0 + 1] == 0x0A && bytes[$0 + 2] == 0x0D && bytes[$0 + 3] == 0x0A
        }
    }
}
