import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback stand-in for a Prometheus Pushgateway: records each request (method, target, body) and answers
/// `status`.
final class FakePushgateway: Sendable {
    struct Received: Sendable {
        var method: String
        var target: String
        var body: String
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let book: NIOLockedValueBox<[Received]>
    let port: Int

    var received: [Received] { book.withLockedValue { $0 } }
    var url: String { "http://127.0.0.1:\(port)" }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, book: NIOLockedValueBox<[Received]>) {
        self.group = group
        self.channel = channel
        self.book = book
        port = channel.localAddress?.port ?? 0
    }

    static func start(status: HTTPResponseStatus = .ok) async throws -> FakePushgateway {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let book = NIOLockedValueBox<[Received]>([])
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Recorder(book: book, status: status))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return FakePushgateway(group: group, channel: channel, book: book)
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private final class Recorder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let book: NIOLockedValueBox<[Received]>
        let status: HTTPResponseStatus
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(book: NIOLockedValueBox<[Received]>, status: HTTPResponseStatus) {
            self.book = book
            self.status = status
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request): (head, body) = (request, [])
            case .body(let buffer): body += buffer.readableBytesView
            case .end:
                guard let head else { return }
                book.withLockedValue {
                    $0.append(Received(method: head.method.rawValue, target: head.uri,
                                       body: String(decoding: body, as: UTF8.self)))
                }
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "0")
                headers.add(name: "Connection", value: "close")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status,
                                                                     headers: headers))), promise: nil)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
