import NIOCore
import NIOHTTP1
import NIOPosix
import TrawlJobs

/// `--metrics-listen`: a small HTTP/1 server that answers `GET /metrics` with the job's metrics in Prometheus
/// text format, while the job runs. It answers nothing else (404), reads no request body, and is closed with the
/// run.
final class MetricsServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The port bound (the one asked for, or the system's choice for port 0).
    let port: Int

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, port: Int) {
        self.group = group
        self.channel = channel
        self.port = port
    }

    /// Listens on `address`; `text` is read for every scrape.
    static func start(_ address: MetricsAddress, text: @escaping @Sendable () -> [UInt8]) async throws
        -> MetricsServer
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 16)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(MetricsHandler(text: text))
                    }
                }
                .bind(host: address.host, port: address.port)
                .get()
            return MetricsServer(group: group, channel: channel, port: channel.localAddress?.port ?? address.port)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Answers each request on one connection: `GET /metrics` (or `HEAD`) with the text, anything else 404 or 405.
private final class MetricsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let text: @Sendable () -> [UInt8]
    private var head: HTTPRequestHead?

    init(text: @escaping @Sendable () -> [UInt8]) { self.text = text }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request): head = request
        case .body: break
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        let status: HTTPResponseStatus
        var body: [UInt8]
        var contentType = "text/plain; charset=utf-8"
        if path != "/metrics" {
            (status, body) = (.notFound, Array("not found: the metrics are at /metrics\n".utf8))
        } else if request.method != .GET && request.method != .HEAD {
            (status, body) = (.methodNotAllowed, Array("GET /metrics\n".utf8))
        } else {
            (status, body) = (.ok, text())
            contentType = "text/plain; version=0.0.4; charset=utf-8"
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        if request.method == .HEAD { body = [] }
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))),
                          promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
