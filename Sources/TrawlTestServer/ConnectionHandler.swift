import NIOCore
import NIOHTTP1

/// Serves the requests of one connection, one at a time, writing raw response bytes.
///
/// Inbound it receives parts from `HTTPRequestDecoder`; outbound it writes `ByteBuffer`s straight
/// to the socket, so fault endpoints control every byte. Streamed bodies are pulled from a
/// ``BodySource`` only while the channel is writable, so a slow reader holds the server back
/// instead of making it buffer. Parts of a pipelined request that arrive while a response is
/// being sent are queued, and reading pauses until they have been handled.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        /// Waiting for a request head.
        case idle
        /// Reading a request's body.
        case receiving
        /// A response is delayed or being sent.
        case responding
        /// The response is complete and the connection is kept open, unused, until the peer closes.
        case holding
        /// Closing after the last response.
        case closing
        case closed
    }

    /// Time spent producing a body in one go before yielding the event loop to other connections.
    private static let timeSlice = TimeAmount.milliseconds(5)
    /// How far ahead the next slice is scheduled. NIO runs every task that is due before it polls
    /// for I/O again, so an immediate task (or one due before the loop gets round to polling) would
    /// not yield at all; the delay must outlast the rest of the loop's current batch of tasks.
    private static let yieldDelay = TimeAmount.microseconds(200)

    private let stats: StatsBox
    private let book: RequestBook
    private var phase = Phase.idle
    private var request: InboundRequest?
    private var requestInFlight = false
    private var source: (any BodySource)?
    private var ending = ResponseEnding.keepAlive
    private var timer: Scheduled<Void>?
    private var pumping = false
    private var waitingForWritable = false
    private var queued = CircularBuffer<HTTPServerRequestPart>()
    private var readPending = false

    init(stats: StatsBox, book: RequestBook) {
        self.stats = stats
        self.book = book
    }

    // MARK: - Channel events

    func channelActive(context: ChannelHandlerContext) {
        self.stats.connectionAccepted()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.phase = .closed
        self.timer?.cancel()
        self.timer = nil
        self.source = nil
        self.queued.removeAll()
        self.endRequest()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        switch self.phase {
        case .idle, .receiving:
            if self.queued.isEmpty {
                self.handle(part, context: context)
            } else {
                self.queued.append(part)
            }
        case .responding:
            self.queued.append(part)
        case .holding, .closing, .closed:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, self.waitingForWritable, !self.pumping {
            // Resume on the next tick: when a failed write made room, the close comes first.
            self.waitingForWritable = false
            context.eventLoop.assumeIsolated().execute { self.pump(context: context) }
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let canAnswer = context.channel.isActive && (self.phase == .idle || self.phase == .receiving)
        self.phase = .closing
        guard canAnswer, error is HTTPParserError else {
            context.close(promise: nil)
            return
        }
        var response = Response.error(400, "malformed request: \(error)")
        response.ending = .close
        var bytes = response.head(extraHeaders: [("Connection", "close")], allocator: context.channel.allocator)
        if case .buffer(let body) = response.body {
            bytes.writeImmutableBuffer(body)
        }
        self.write(bytes, context: context)
        self.closeAfterFlush(context: context, reset: false)
    }

    /// Withholds reads while parts of a pipelined request wait in the queue.
    func read(context: ChannelHandlerContext) {
        if self.queued.isEmpty {
            context.read()
        } else {
            self.readPending = true
        }
    }

    // MARK: - Requests

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            self.phase = .receiving
            self.request = InboundRequest(head: head)
            self.requestInFlight = true
            self.stats.requestStarted()
            if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                self.write(context.channel.allocator.buffer(string: "HTTP/1.1 100 Continue\r\n\r\n"), context: context)
                context.flush()
            }
        case .body(let buffer):
            self.request?.receive(buffer)
        case .end:
            guard var request = self.request else { return }
            request.inFlight = self.stats.snapshot.inFlight
            self.phase = .responding
            let response = Router.response(for: request, book: self.book)
            self.book.record(
                LoggedRequest(
                    target: request.head.uri,
                    method: request.head.method.rawValue,
                    receivedAt: request.receivedAt,
                    status: response.status,
                    headers: Dictionary(
                        request.head.headers.map { name, value in (name.lowercased(), value) },
                        uniquingKeysWith: { _, last in last })
                )
            )
            if let delay = response.delay {
                self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.timer = nil
                    self.start(response, for: request, context: context)
                }
            } else {
                self.start(response, for: request, context: context)
            }
        }
    }

    private func start(_ response: Response, for request: InboundRequest, context: ChannelHandlerContext) {
        guard self.phase == .responding else { return }
        let isHead = request.head.method == .HEAD
        var ending = response.ending
        if isHead, ending == .reset || ending == .hold {
            ending = .close
        }
        if ending == .keepAlive, !request.head.isKeepAlive {
            ending = .close
        }
        var extraHeaders: [(String, String)] = []
        if ending == .close, !response.isFault {
            extraHeaders.append(("Connection", "close"))
        } else if ending == .keepAlive, request.head.version.minor == 0 {
            extraHeaders.append(("Connection", "keep-alive"))
        }
        var bytes = response.head(extraHeaders: extraHeaders, allocator: context.channel.allocator)
        self.ending = ending
        switch response.body {
        case .buffer(let body) where !isHead:
            bytes.writeImmutableBuffer(body)
        case .stream(let source) where !isHead:
            self.write(bytes, context: context)
            self.source = source
            self.pump(context: context)
            return
        case .empty, .buffer, .stream:
            break
        }
        self.write(bytes, context: context)
        self.finish(context: context)
    }

    /// Writes body steps while the channel is writable; see the type's documentation.
    private func pump(context: ChannelHandlerContext) {
        guard self.phase == .responding, !self.pumping, let source = self.source else { return }
        self.pumping = true
        let (written, ended) = self.writeSteps(from: source, context: context)
        self.pumping = false
        self.stats.bytesWritten(written)
        if ended {
            self.finish(context: context)
        }
    }

    /// Returns the body bytes written and whether the source has ended.
    private func writeSteps(from source: any BodySource, context: ChannelHandlerContext) -> (Int, Bool) {
        var written = 0
        let deadline = NIODeadline.now() + Self.timeSlice
        while self.phase == .responding, context.channel.isActive {
            if !context.channel.isWritable {
                context.flush()
                if !context.channel.isWritable {
                    self.waitingForWritable = true
                    return (written, false)
                }
            }
            if NIODeadline.now() > deadline {
                context.flush()
                self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.yieldDelay) {
                    self.timer = nil
                    self.pump(context: context)
                }
                return (written, false)
            }
            let step: BodyStep
            do {
                step = try source.next(allocator: context.channel.allocator)
            } catch {
                self.phase = .closing
                context.close(promise: nil)
                return (written, false)
            }
            switch step {
            case .data(let buffer):
                written += buffer.readableBytes
                context.write(self.wrapOutboundOut(buffer), promise: nil)
                if source.isComplete {
                    return (written, true)
                }
            case .progress:
                continue
            case .pause(let delay):
                context.flush()
                self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.timer = nil
                    self.pump(context: context)
                }
                return (written, false)
            case .end:
                return (written, true)
            }
        }
        return (written, false)
    }

    /// The response's bytes have all been written (not necessarily flushed): end it as planned.
    private func finish(context: ChannelHandlerContext) {
        self.source = nil
        self.request = nil
        switch self.ending {
        case .keepAlive:
            self.endRequest()
            context.flush()
            self.phase = .idle
            while !self.queued.isEmpty, self.phase == .idle || self.phase == .receiving {
                self.handle(self.queued.removeFirst(), context: context)
            }
            if self.queued.isEmpty, self.readPending {
                self.readPending = false
                context.read()
            }
        case .close, .reset:
            self.endRequest()
            self.phase = .closing
            self.closeAfterFlush(context: context, reset: self.ending == .reset)
        case .hold:
            // The request stays in flight until the peer closes; keep reading to notice that.
            context.flush()
            self.phase = .holding
            self.queued.removeAll()
            if self.readPending {
                self.readPending = false
                context.read()
            }
        }
    }

    private func closeAfterFlush(context: ChannelHandlerContext, reset: Bool) {
        let flushed = context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
        flushed.assumeIsolated().whenComplete { _ in
            guard reset, let socket = context.channel as? SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            socket.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    private func write(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        self.stats.bytesWritten(buffer.readableBytes)
        context.write(self.wrapOutboundOut(buffer), promise: nil)
    }

    private func endRequest() {
        if self.requestInFlight {
            self.requestInFlight = false
            self.stats.requestEnded()
        }
    }
}
