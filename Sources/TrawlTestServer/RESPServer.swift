import NIOCore
import NIOPosix

/// A loopback "Redis" that answers each RESP command with whatever bytes `answer` returns for it: for the stores a
/// real Redis never is (a reply nested 200,000 deep, a pause of 1e300 seconds).
///
/// ```swift
/// try await RESPServer.with({ command in
///     command.first == "SCRIPT" ? RESPServer.bulk("sha") : Array(String(repeating: "*1\r\n", count: 200_000).utf8)
/// }) { server in
///     // --rate-store redis://127.0.0.1:\(server.port)
/// }
/// ```
public final class RESPServer: Sendable {
    /// The OS-chosen port on 127.0.0.1.
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.group = group
        self.channel = channel
    }

    /// `redis://127.0.0.1:PORT/0`.
    public var url: String { "redis://127.0.0.1:\(port)/0" }

    /// Runs `body` with a server answering each command (its arguments as text) with `answer(command)`.
    public static func with<T>(
        _ answer: @escaping @Sendable ([String]) -> [UInt8], _ body: (RESPServer) async throws -> T
    ) async throws -> T {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server: RESPServer
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RESPHandler(answer: answer))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw TestServerError.noLocalAddress }
            server = RESPServer(port: port, group: group, channel: channel)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        do {
            let result = try await body(server)
            try? await server.channel.close()
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await server.channel.close()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// A RESP bulk string.
    public static func bulk(_ text: String) -> [UInt8] { Array("$\(text.utf8.count)\r\n\(text)\r\n".utf8) }

    /// A RESP array of bulk strings.
    public static func array(_ texts: [String]) -> [UInt8] {
        Array("*\(texts.count)\r\n".utf8) + texts.flatMap(bulk)
    }
}

/// Splits what arrives into RESP commands (arrays of bulk strings) and writes each one's answer.
final class RESPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answer: @Sendable ([String]) -> [UInt8]
    private var received: [UInt8] = []

    init(answer: @escaping @Sendable ([String]) -> [UInt8]) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let (command, used) = Self.command(in: received) {
            received.removeFirst(used)
            let reply = context.channel.allocator.buffer(bytes: answer(command))
            context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
        }
    }

    /// The first whole command in `bytes` and the bytes it takes, or `nil` until it is whole.
    static func command(in bytes: [UInt8]) -> ([String], Int)? {
        var position = 0
        func line() -> String? {
            var index = position
            while index + 1 < bytes.count {
                if bytes[index] == 13, bytes[index + 1] == 10 {
                    let text = String(decoding: bytes[position..<index], as: UTF8.self)
                    position = index + 2
                    return text
                }
                index += 1
            }
            return nil
        }
        guard let head = line(), head.first == "*", let count = Int(head.dropFirst()) else { return nil }
        var arguments: [String] = []
        for _ in 0..<max(0, count) {
            guard let size = line(), size.first == "$", let length = Int(size.dropFirst()), length >= 0,
                position + length + 2 <= bytes.count
            else { return nil }
            arguments.append(String(decoding: bytes[position..<(position + length)], as: UTF8.self))
            position += length + 2
        }
        return (arguments, position)
    }
}
