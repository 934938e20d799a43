import NIOCore
import NIOHTTP1

/// What happens to the connection once a response's bytes have been written.
enum ResponseEnding {
    /// Ready for the next request (or closed with `Connection: close` if the request asked for it).
    case keepAlive
    /// Flush, then close normally (FIN).
    case close
    /// Flush, then close with `SO_LINGER {1, 0}` so the peer sees a TCP RST.
    case reset
    /// Send nothing more and leave the connection open until the peer closes it.
    case hold
}

/// A response body.
enum ResponseBody {
    case empty
    /// Bytes sent right after the head, in the same write.
    case buffer(ByteBuffer)
    /// Bytes generated lazily, with back-pressure (already framed for the wire).
    case stream(any BodySource)
}

/// A response plan built by ``Router`` and carried out by ``ConnectionHandler``.
struct Response {
    var status: Int
    var headers: [(String, String)]
    var body: ResponseBody = .empty
    var ending: ResponseEnding = .keepAlive
    /// Wait this long before sending anything.
    var delay: TimeAmount?
    /// A deliberately broken response: no `Connection: close` is announced even if the connection is closed.
    var isFault = false

    /// A JSON response with `Content-Length`.
    static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> Response {
        Response(
            status: status,
            headers: [("Content-Type", "application/json"), ("Content-Length", String(text.utf8.count))] + headers,
            body: .buffer(ByteBuffer(string: text))
        )
    }

    /// A JSON error body: `{"error": message, ...}`.
    static func error(
        _ status: Int,
        _ message: String,
        _ extra: [(String, String)] = [],
        headers: [(String, String)] = []
    ) -> Response {
        json(status, JSONText.error(message, extra), headers: headers)
    }

    /// Whether the status forbids a body (1xx, 204, 304).
    static func statusForbidsBody(_ status: Int) -> Bool {
        (100..<200).contains(status) || status == 204 || status == 304
    }

    /// Serializes the status line and headers, plus any connection header the handler needs.
    func head(extraHeaders: [(String, String)], allocator: ByteBufferAllocator) -> ByteBuffer {
        let reason = HTTPResponseStatus(statusCode: self.status).reasonPhrase
        var text = "HTTP/1.1 \(self.status) \(reason.isEmpty ? "Status" : reason)\r\n"
        for (name, value) in self.headers + extraHeaders {
            text += name + ": " + value + "\r\n"
        }
        text += "\r\n"
        return allocator.buffer(string: text)
    }
}
